//! The CLI and the service on ZooKeeper leases, and on etcd and ZooKeeper with TLS and
//! authentication: real servers (the core's lease test support starts them), passwords from a
//! file or the environment, never from the command line.

mod common;
#[path = "../../core/tests/lease_support/mod.rs"]
mod lease_support;

use common::{fields_default, run, run_env, temp_dir, Server};
use lease_support::{free_port, Certs, Etcd, ZkClient, ZooKeeper};
use serde_json::Value;
use std::time::{Duration, Instant};

fn json(r: &common::Run) -> Value {
    assert!(r.status.success(), "{}", r.stderr);
    serde_json::from_str(&r.stdout).unwrap_or_else(|e| panic!("{e}: {}", r.stdout))
}

fn fails_with(r: &common::Run, code: &str, want: &str) {
    assert!(!r.status.success(), "{}", r.stdout);
    let line = r.stderr.trim_end();
    assert!(
        line.starts_with("polyflake: error: ") && line.ends_with(&format!("[{code}]")),
        "{line}"
    );
    assert!(line.contains(want), "{want}: {line}");
    assert_eq!(line.lines().count(), 1, "{line}");
}

#[test]
fn next_serve_and_inspect_on_a_zookeeper_lease() {
    let zk = ZooKeeper::start();
    let e = zk.ensemble();
    let lease = [
        "--zookeeper",
        e.as_str(),
        "--zookeeper-prefix",
        "/cli",
        "--zookeeper-session-timeout-ms",
        "4000",
        // Generous: the first session of a just-started ZooKeeper on a loaded machine can take
        // longer than the default 2 s; this test is not about the connect timeout.
        "--zookeeper-connect-timeout-ms",
        "15000",
        "--slots",
        "4",
        "--lease-reserve-ms",
        "300",
    ];
    let mut args = vec!["next", "-n", "3", "--format", "json"];
    args.extend(lease);
    let v = json(&run(&args));
    let node = v["node_id"].as_u64().unwrap();
    assert!(node < 4);
    assert_eq!(v["ids"].as_array().unwrap().len(), 3);

    let server = Server::start(&lease);
    assert!(
        server.banner.contains("zookeeper lease"),
        "{}",
        server.banner
    );
    let h = server.wait_health(200, Duration::from_secs(15));
    assert_eq!(h.status, 200, "{}", h.text());
    let v = h.json();
    assert_eq!(v["source"], "zookeeper");
    assert_eq!(v["lease"]["kind"], "zookeeper");
    let slot = v["lease"]["slot"].as_u64().unwrap();
    let r = server.post_json("/v1/ids", "{\"count\": 5}");
    assert_eq!(r.status, 200, "{}", r.text());
    for id in r.json()["ids"].as_array().unwrap() {
        assert_eq!(
            fields_default(id.as_str().unwrap().parse().unwrap()).1,
            slot
        );
    }

    let v = json(&run(&[
        "lease",
        "inspect",
        "--zookeeper",
        &e,
        "--zookeeper-prefix",
        "/cli",
        "--format",
        "json",
    ]));
    assert_eq!(v["kind"], "zookeeper");
    assert_eq!(v["space"]["layout"], "41/10/12");
    let slots = v["slots"].as_array().unwrap();
    let held = slots.iter().find(|s| s["slot"] == slot).unwrap();
    assert_eq!(held["held"], true, "{held}");
    assert!(held["guard_ms"].as_i64().unwrap() > 0, "{held}");
    // The store's identity and the highest zxid seen (a restore shows as a lower one).
    assert!(
        v["store_identity"]
            .as_str()
            .is_some_and(|s| s.starts_with("ZooKeeper database epoch "))
            && v["revision"].as_i64().is_some_and(|z| z > 0),
        "{v}"
    );
    let r = run(&[
        "lease",
        "inspect",
        "--zookeeper",
        &e,
        "--zookeeper-prefix",
        "/cli",
    ]);
    assert!(r.status.success(), "{}", r.stderr);
    assert!(
        r.stdout.starts_with("zookeeper store zookeeper 127.0.0.1:")
            && r.stdout
                .lines()
                .next()
                .unwrap()
                .contains("highest revision seen: "),
        "{}",
        r.stdout
    );
    drop(server);
}

#[test]
fn zookeeper_passwords_come_from_a_file_or_the_environment() {
    let zk = ZooKeeper::start();
    let e = zk.ensemble();
    let dir = temp_dir("zk-auth");
    let pw = dir.join("password");
    std::fs::write(&pw, "s3cret\n").unwrap();
    let base = [
        "next",
        "--zookeeper",
        e.as_str(),
        "--zookeeper-prefix",
        "/auth",
        "--slots",
        "2",
    ];
    let mut args = base.to_vec();
    args.extend(["--zookeeper-username", "ids", "--zookeeper-password-file"]);
    args.push(pw.to_str().unwrap());
    let r = run(&args);
    assert!(r.status.success(), "{}", r.stderr);
    let acl = ZkClient::connect(&e, None).acl("/auth/space");
    assert!(acl.iter().any(|a| a.starts_with("digest:ids:")), "{acl:?}");
    // The same user from the environment.
    let mut args = base.to_vec();
    args.extend(["--zookeeper-username", "ids"]);
    let r = run_env(&args, &[("POLYFLAKE_ZOOKEEPER_PASSWORD", "s3cret")]);
    assert!(r.status.success(), "{}", r.stderr);
    // A user without a password says where one comes from.
    fails_with(
        &run(&args),
        "INVALID_NODE_SOURCE",
        "POLYFLAKE_ZOOKEEPER_PASSWORD",
    );
    // The wrong one is refused by the ACL.
    let r = run_env(&args, &[("POLYFLAKE_ZOOKEEPER_PASSWORD", "wrong")]);
    fails_with(&r, "LEASE_STORE", "not authorized");
    // There is no flag that takes a password itself.
    let mut args = base.to_vec();
    args.extend(["--zookeeper-password", "s3cret"]);
    assert_eq!(run(&args).status.code(), Some(2));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bad_zookeeper_input_is_one_clear_line() {
    fails_with(
        &run(&["next", "--zookeeper", ""]),
        "INVALID_NODE_SOURCE",
        "at least one server",
    );
    let dead = format!("127.0.0.1:{}", free_port());
    let start = Instant::now();
    fails_with(
        &run(&["next", "--zookeeper", &dead]),
        "LEASE_STORE",
        "cannot reach ZooKeeper",
    );
    assert!(
        start.elapsed() < Duration::from_secs(5),
        "{:?}",
        start.elapsed()
    );
    fails_with(
        &run(&[
            "next",
            "--zookeeper",
            &dead,
            "--zookeeper-prefix",
            "polyflake",
        ]),
        "INVALID_NODE_SOURCE",
        "must start with '/'",
    );
    fails_with(
        &run(&[
            "next",
            "--zookeeper",
            &dead,
            "--zookeeper-ca-file",
            "/nonexistent/ca.pem",
        ]),
        "INVALID_NODE_SOURCE",
        "/nonexistent/ca.pem: cannot read it",
    );
    // ZooKeeper options without --zookeeper, and two stores at once: usage errors.
    assert_eq!(
        run(&["next", "--zookeeper-prefix", "/x"]).status.code(),
        Some(2)
    );
    let both = run(&["next", "--zookeeper", &dead, "--etcd", "http://127.0.0.1:1"]);
    assert_eq!(both.status.code(), Some(2));
}

#[test]
fn etcd_over_tls_with_a_client_certificate_and_a_password_file() {
    let certs = Certs::generate();
    let etcd = Etcd::start_secure(certs.clone(), "root-pw");
    let dir = temp_dir("etcd-tls");
    let (good, bad) = (dir.join("good"), dir.join("bad"));
    std::fs::write(&good, "root-pw\n").unwrap();
    std::fs::write(&bad, "nope\n").unwrap();
    let tls = |password_file: &std::path::Path| -> Vec<String> {
        [
            "--etcd",
            &etcd.client_url,
            "--etcd-prefix",
            "/cli-tls",
            "--etcd-ca-file",
            certs.ca.to_str().unwrap(),
            "--etcd-cert-file",
            certs.client_cert.to_str().unwrap(),
            "--etcd-key-file",
            certs.client_key.to_str().unwrap(),
            "--etcd-username",
            "root",
            "--etcd-password-file",
            password_file.to_str().unwrap(),
        ]
        .map(str::to_string)
        .to_vec()
    };
    let mut args: Vec<String> = [
        "next",
        "-n",
        "2",
        "--slots",
        "4",
        "--lease-reserve-ms",
        "200",
    ]
    .map(str::to_string)
    .to_vec();
    args.extend(tls(&good));
    let argv: Vec<&str> = args.iter().map(String::as_str).collect();
    let r = run(&argv);
    assert!(r.status.success(), "{}", r.stderr);
    assert_eq!(r.stdout.lines().count(), 2);
    let mut inspect: Vec<String> = ["lease", "inspect", "--format", "json"]
        .map(str::to_string)
        .to_vec();
    inspect.extend(tls(&good));
    let argv: Vec<&str> = inspect.iter().map(String::as_str).collect();
    let v = json(&run(&argv));
    assert_eq!(v["kind"], "etcd");
    assert_eq!(v["slots"].as_array().unwrap().len(), 1);
    assert!(
        v["store_identity"]
            .as_str()
            .is_some_and(|s| s.starts_with("etcd cluster "))
            && v["revision"].as_i64().is_some_and(|r| r > 0),
        "{v}"
    );
    let mut args: Vec<String> = vec!["next".into()];
    args.extend(tls(&bad));
    let argv: Vec<&str> = args.iter().map(String::as_str).collect();
    fails_with(
        &run(&argv),
        "LEASE_STORE",
        "the user name or password was refused",
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A TCP listener that never answers: connections are accepted by the kernel (backlog) and then
/// hear nothing, so a client can only give up by its own timeout.
fn silent_listener() -> (std::net::TcpListener, String) {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap().to_string();
    (l, addr)
}

#[test]
fn store_flags_bad_input_and_the_connect_timeout() {
    // An ensemble of only separators is empty, for next and serve alike.
    for cmd in ["next", "serve"] {
        let r = run(&[cmd, "--zookeeper", " , ,"]);
        fails_with(&r, "INVALID_NODE_SOURCE", "at least one server");
        assert_eq!(r.status.code(), Some(2));
    }
    // A prefix without its leading slash, and one that is only a slash.
    let dead = format!("127.0.0.1:{}", free_port());
    for prefix in ["ids/polyflake", ""] {
        let r = run(&["serve", "--zookeeper", &dead, "--zookeeper-prefix", prefix]);
        assert!(!r.status.success(), "{prefix:?}");
        assert!(
            r.stderr.contains("INVALID_NODE_SOURCE"),
            "{prefix:?}: {}",
            r.stderr
        );
    }
    // A server that accepts and never answers: refused within --zookeeper-connect-timeout-ms
    // (500 ms here; the default is 2 s), with the store's error, for next and serve.
    let (_zk, zk_addr) = silent_listener();
    for cmd in ["next", "serve"] {
        let start = Instant::now();
        let r = run(&[
            cmd,
            "--zookeeper",
            &zk_addr,
            "--zookeeper-connect-timeout-ms",
            "500",
        ]);
        fails_with(&r, "LEASE_STORE", &zk_addr);
        assert_eq!(r.status.code(), Some(1));
        assert!(
            start.elapsed() < Duration::from_secs(4),
            "{cmd}: {:?}",
            start.elapsed()
        );
    }
    // The same for etcd.
    let (_etcd, etcd_addr) = silent_listener();
    let start = Instant::now();
    let url = format!("http://{etcd_addr}");
    let r = run(&["next", "--etcd", &url, "--etcd-connect-timeout-ms", "500"]);
    fails_with(&r, "LEASE_STORE", "etcd");
    assert!(
        start.elapsed() < Duration::from_secs(4),
        "{:?}",
        start.elapsed()
    );
    // The timeouts belong to their store.
    assert_eq!(
        run(&["next", "--zookeeper-connect-timeout-ms", "500"])
            .status
            .code(),
        Some(2)
    );
    assert_eq!(
        run(&["next", "--etcd-connect-timeout-ms", "500"])
            .status
            .code(),
        Some(2)
    );
    // Passwords: never a flag of their own; a password file that is missing or empty is a
    // usage error naming the flag and the file.
    for flag in ["--etcd-password", "--zookeeper-password"] {
        let r = run(&["next", flag, "s3cret"]);
        assert_eq!(r.status.code(), Some(2), "{flag}");
        assert!(
            r.stderr.contains("unexpected argument"),
            "{flag}: {}",
            r.stderr
        );
    }
    let dir = temp_dir("password-files");
    let empty = dir.join("empty");
    std::fs::write(&empty, "\n").unwrap();
    let missing = dir.join("missing");
    for (store, value, flag) in [
        ("--zookeeper", dead.as_str(), "--zookeeper-password-file"),
        ("--etcd", "http://127.0.0.1:1", "--etcd-password-file"),
    ] {
        for (file, why) in [(&empty, "the file is empty"), (&missing, "cannot read it")] {
            let r = run(&["next", store, value, flag, file.to_str().unwrap()]);
            assert_eq!(r.status.code(), Some(2), "{flag} {why}");
            let line = r.stderr.trim_end();
            assert!(line.contains(flag) && line.contains(why), "{line}");
            assert_eq!(line.lines().count(), 1);
        }
        // A password file without its store is a usage error too.
        let r = run(&["next", flag, empty.to_str().unwrap()]);
        assert_eq!(r.status.code(), Some(2), "{flag} alone");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
