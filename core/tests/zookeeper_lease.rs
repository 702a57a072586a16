//! ZooKeeper leases against a REAL ZooKeeper (Debian's zookeeper 3.8, run on its Java main on
//! 127.0.0.1 with free ports and a temporary data dir, stopped afterwards; `make deps-apt`
//! installs it). No mock: a plain ZooKeeper client looks at and tampers with the store as an
//! operator or an intruder would. The lease suite (`lease_support/suite.rs`) on ZooKeeper, then
//! what only ZooKeeper has: an outage, an expired session, a frozen holder, deleted znodes,
//! option errors, digest auth and ACLs, TLS.

mod lease_support;

use lease_support::*;
use polyflake::{
    Builder, ErrorKind, Generator, HealthStatus, NodeSource, ZooKeeperLeaseOptions,
    DEFAULT_EPOCH_MS,
};
use std::collections::HashSet;
use std::time::{Duration, Instant};

lease_suite!(ZkStore);

/// Not a test: the entry point of the child processes the tests below start.
#[test]
fn child_process_entry() {
    if let Some(mode) = child_mode() {
        child_main(&mode);
    }
}

fn opts(zk: &ZooKeeper, prefix: &str, slots: u32) -> ZooKeeperLeaseOptions {
    let mut o = ZooKeeperLeaseOptions::new(vec![zk.ensemble()]);
    o.store.prefix = prefix.into();
    o.common.slots = Some(slots);
    o.common.reserve_ms = 500;
    o.session_timeout_ms = 2000;
    o.store.connect_timeout_ms = 3000;
    o
}

/// A distinct epoch per test keeps this binary's side-by-side tests out of each other's way in
/// the process-wide node-id guard.
fn lease(o: ZooKeeperLeaseOptions, test: i64) -> Builder {
    Generator::builder_from(NodeSource::ZooKeeper(o))
        .epoch_ms(DEFAULT_EPOCH_MS + test)
        .host_scope(lease_support::test_scope(test))
}

fn ms(g: &Generator, id: u64) -> i64 {
    g.decode(id).unwrap().timestamp_ms
}

fn zk_env(zk: &ZooKeeper, prefix: &str, slots: u32) -> Vec<(&'static str, String)> {
    vec![
        ("LEASE", "zookeeper".to_string()),
        ("ENSEMBLE", zk.ensemble()),
        ("PREFIX", prefix.to_string()),
        ("SLOTS", slots.to_string()),
        ("RESERVE_MS", "500".to_string()),
        ("SESSION_MS", "2000".to_string()),
    ]
}

#[test]
fn zookeeper_stopped_issues_up_to_r_then_refuses_and_recovers_when_back() {
    let mut zk = ZooKeeper::start();
    let mut o = opts(&zk, "/pf-stop", 4);
    // The session outlives the outage (the restart takes a few seconds).
    o.session_timeout_ms = 15_000;
    let g = lease(o, 2).build().unwrap();
    g.wait_ready(Duration::from_secs(5)).unwrap();
    assert!(wait_until(Duration::from_secs(10), || g
        .health()
        .lease_renewals
        >= 2));
    zk.stop();
    let start = Instant::now();
    let mut last_ok_ms = 0;
    let mut refusal = None;
    while start.elapsed() < Duration::from_secs(15) {
        match g.next_id() {
            Ok(id) => last_ok_ms = ms(&g, id),
            Err(e) => {
                refusal = Some(e);
                break;
            }
        }
        std::thread::sleep(Duration::from_micros(200));
    }
    let e = refusal.expect("refused once R was reached");
    assert_eq!(e.kind(), ErrorKind::LeaseExpired, "{e}");
    let h = g.health();
    let r = h.lease.as_ref().unwrap().high_water_ms;
    assert!(last_ok_ms <= r, "issued {last_ok_ms} past R {r}");
    assert!(!h.ok);
    assert_eq!(h.status, HealthStatus::LeaseExpired);
    // The outage is counted once the client gives up on a call or sees the connection go: that
    // can come after R passes (a call to a server that stopped waits out its timeout).
    assert!(
        wait_until(Duration::from_secs(10), || g.health().lease_failures > 0),
        "{:?}",
        g.health()
    );
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(g.next_id().unwrap_err().kind(), ErrorKind::LeaseExpired);

    zk.restart();
    let back = wait_until(Duration::from_secs(30), || g.next_id().is_ok());
    assert!(back, "no recovery: {:?}", g.health());
    assert!(g.health().ok, "{:?}", g.health());
    eprintln!("recovered {:?} after the stop", start.elapsed());
}

#[test]
fn an_expired_session_stops_the_generator_at_once_and_for_good() {
    let zk = ZooKeeper::start();
    // The generator reaches ZooKeeper through a relay that can go silent: its session then
    // expires on the server (nothing arrives) while ZooKeeper itself stays up.
    let relay = Relay::start(zk.port);
    let mut o = opts(&zk, "/pf-expire", 1);
    o.ensemble = vec![format!("127.0.0.1:{}", relay.port)];
    let g = lease(o, 3).build().unwrap();
    g.wait_ready(Duration::from_secs(5)).unwrap();
    let r_before = g.health().lease.unwrap().high_water_ms;
    assert!(r_before > 0);
    let c = ZkClient::connect(&zk.ensemble(), None);
    let slot = "/pf-expire/slot/0000";
    assert!(c.get(slot).is_some());
    relay.silence(true);
    // The server expires the session and deletes the ephemeral slot znode.
    assert!(
        wait_until(Duration::from_secs(15), || c.get(slot).is_none()),
        "the session never expired"
    );
    let expired = Instant::now();
    relay.silence(false);
    assert!(
        wait_until(Duration::from_secs(5), || g.health().status
            == HealthStatus::LeaseLost),
        "{:?}",
        g.health()
    );
    eprintln!(
        "lease lost {:?} after the server expired the session",
        expired.elapsed()
    );
    let h = g.health();
    assert!(!h.ok && h.lease.as_ref().unwrap().lost, "{h:?}");
    assert!(
        h.lease.unwrap().last_error.contains("expired"),
        "{:?}",
        g.health()
    );
    // For good: the relay is back, but nothing is issued again.
    std::thread::sleep(Duration::from_millis(1500));
    for _ in 0..100 {
        assert_eq!(g.next_id().unwrap_err().kind(), ErrorKind::LeaseLost);
    }
    // The slot went back to the pool: another holder takes it, behind the old R (once this
    // process's lost generator is closed: it still counts as node 0's holder here).
    let node = g.node_id();
    drop(g);
    let s = lease(opts(&zk, "/pf-expire", 1), 3).build().unwrap();
    assert_eq!(s.node_id(), node);
    assert!(s.health().lease.unwrap().guard_until_ms.unwrap() >= r_before);
}

#[test]
fn a_frozen_holder_and_its_successor_issue_disjoint_ids() {
    let zk = ZooKeeper::start();
    let dir = TempDir::new("zk-freeze");
    let mut env = zk_env(&zk, "/pf-freeze", 1);
    let holder_out = dir.path().join("holder.bin");
    env.push(("OUT", holder_out.display().to_string()));
    env.push(("MS", "30000".to_string()));
    let mut holder = spawn_child("child_process_entry", "until_lost", &env);
    let mut holder_lines = lines(&mut holder);
    let node = holder_lines.next().unwrap();
    assert!(node.starts_with("NODE "), "{node}");
    std::thread::sleep(Duration::from_millis(700));
    let pid = holder.id() as i32;
    // Freeze it past its session timeout (2 s): the server expires the session.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGSTOP) }, 0);
    let c = ZkClient::connect(&zk.ensemble(), None);
    assert!(
        wait_until(Duration::from_secs(15), || c
            .get("/pf-freeze/slot/0000")
            .is_none()),
        "the frozen holder's session never expired"
    );
    // A successor takes the slot and streams while the holder is thawed.
    let successor_out = dir.path().join("successor.bin");
    let mut env2 = zk_env(&zk, "/pf-freeze", 1);
    env2.push(("OUT", successor_out.display().to_string()));
    env2.push(("MS", "1500".to_string()));
    let mut successor = spawn_child("child_process_entry", "stream", &env2);
    let mut successor_lines = lines(&mut successor);
    assert_eq!(successor_lines.next().unwrap(), node, "the same slot");
    assert_eq!(unsafe { libc::kill(pid, libc::SIGCONT) }, 0);
    let holder_end = holder_lines.next().unwrap();
    let successor_end = successor_lines.next().unwrap();
    assert!(holder.wait().unwrap().success());
    assert!(successor.wait().unwrap().success());
    assert!(
        holder_end.starts_with("END LEASE_LOST lease_lost"),
        "{holder_end}"
    );
    assert!(successor_end.starts_with("END OK"), "{successor_end}");
    let a = read_ids(&holder_out);
    let b = read_ids(&successor_out);
    assert!(a.len() > 1000 && b.len() > 1000, "{} {}", a.len(), b.len());
    let stamp = |id: &u64| polyflake::decode(*id).unwrap().timestamp_ms;
    let a_max = a.iter().map(stamp).max().unwrap();
    let b_min = b.iter().map(stamp).min().unwrap();
    assert!(
        a_max < b_min,
        "holder up to {a_max}, successor from {b_min}"
    );
    let all: HashSet<u64> = a.iter().chain(&b).copied().collect();
    assert_eq!(all.len(), a.len() + b.len(), "no ID of the two overlaps");
    eprintln!("holder {} IDs, successor {} IDs", a.len(), b.len());
}

#[test]
fn a_deleted_slot_znode_or_an_edited_mark_loses_the_lease() {
    let zk = ZooKeeper::start();
    let c = ZkClient::connect(&zk.ensemble(), None);
    let g = lease(opts(&zk, "/pf-del", 2), 4).build().unwrap();
    g.wait_ready(Duration::from_secs(5)).unwrap();
    g.next_id().unwrap();
    c.delete(&format!("/pf-del/slot/{:04}", g.node_id()))
        .unwrap();
    let deleted = Instant::now();
    assert!(
        wait_until(Duration::from_secs(5), || g
            .next_id()
            .is_err_and(|e| e.kind() == ErrorKind::LeaseLost)),
        "still issuing after the delete"
    );
    eprintln!("delete seen after {:?}", deleted.elapsed());
    assert!(g.health().lease.unwrap().last_error.contains("deleted"));

    let h = lease(opts(&zk, "/pf-del", 2), 4).build().unwrap();
    h.wait_ready(Duration::from_secs(5)).unwrap();
    let hwm = format!("/pf-del/hwm/{:04}", h.node_id());
    let r1: i64 = c.get_text(&hwm).unwrap().parse().unwrap();
    assert!(wait_until(Duration::from_secs(5), || c
        .get_text(&hwm)
        .unwrap()
        .parse::<i64>()
        .unwrap()
        > r1));
    // Someone lowers the mark: the holder's next versioned write fails, and it stops.
    c.set(&hwm, b"1").unwrap();
    assert!(
        wait_until(Duration::from_secs(5), || h.health().status
            == HealthStatus::LeaseLost),
        "{:?}",
        h.health()
    );
    let slot = h.node_id();
    drop(h);
    drop(g);
    // A damaged mark is read as a full reserve.
    c.set(&hwm, b"garbage").unwrap();
    let before = now_ms();
    let mut o = opts(&zk, "/pf-del", 2);
    o.common.identity = Some("someone".into());
    let s = lease(o.clone(), 4).build().unwrap();
    let t = lease(o, 4).build().unwrap();
    let on_slot = if s.node_id() == slot { &s } else { &t };
    let guard = on_slot.health().lease.unwrap().guard_until_ms.unwrap();
    assert!(guard >= before + 500, "{}", guard - before);
}

/// Every write of R checks the holder's own claim znode (a name only it creates): the claim
/// deleted under a live holder (a restore from a backup made before its take does the same)
/// loses the lease at the next renewal, although its slot znode is still there.
#[test]
fn a_deleted_claim_znode_loses_the_lease_at_the_next_write() {
    let zk = ZooKeeper::start();
    let c = ZkClient::connect(&zk.ensemble(), None);
    let g = lease(opts(&zk, "/pf-claim", 2), 5).build().unwrap();
    g.wait_ready(Duration::from_secs(5)).unwrap();
    g.next_id().unwrap();
    let mine = format!("{:04}-", g.node_id());
    let claim = c
        .children("/pf-claim/held")
        .into_iter()
        .find(|n| n.starts_with(&mine))
        .expect("the holder's claim");
    c.delete(&format!("/pf-claim/held/{claim}")).unwrap();
    assert!(
        wait_until(Duration::from_secs(5), || g
            .next_id()
            .is_err_and(|e| e.kind() == ErrorKind::LeaseLost)),
        "still issuing after its claim was deleted"
    );
    let why = g.health().lease.unwrap().last_error;
    assert!(why.contains(&claim), "{why}");
    // The slot znode was still there: the claim alone stopped it.
    assert!(c
        .get_text(&format!("/pf-claim/slot/{:04}", g.node_id()))
        .is_some());
}

#[test]
fn bad_zookeeper_options_and_an_unreachable_ensemble_are_clear_errors() {
    let dir = TempDir::new("zk-bad");
    let mut o = ZooKeeperLeaseOptions::new(vec![format!("127.0.0.1:{}", free_port())]);
    o.store.connect_timeout_ms = 500;
    o.common.slots = Some(2);
    let start = Instant::now();
    let e = lease(o.clone(), 7).build().unwrap_err();
    assert!(
        start.elapsed() < Duration::from_millis(2500),
        "{:?}",
        start.elapsed()
    );
    assert_eq!(e.kind(), ErrorKind::LeaseStore, "{e}");
    assert!(e.to_string().contains("cannot reach ZooKeeper"), "{e}");
    let invalid = |o: &ZooKeeperLeaseOptions, want: &str| {
        let e = lease(o.clone(), 7).build().unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidNodeSource, "{e}");
        assert!(e.to_string().contains(want), "{want}: {e}");
    };
    invalid(
        &ZooKeeperLeaseOptions::from_ensemble(""),
        "at least one server",
    );
    invalid(
        &ZooKeeperLeaseOptions::from_ensemble(" , "),
        "at least one server",
    );
    let mut p = o.clone();
    p.store.prefix = "polyflake".into();
    invalid(&p, "must start with '/'");
    let mut p = o.clone();
    p.ensemble = vec!["zk1".into()];
    invalid(&p, "is not host:port");
    let mut p = o.clone();
    p.session_timeout_ms = 0;
    invalid(&p, "session_timeout_ms");
    let mut p = o.clone();
    p.store.credentials.ca_file = Some(dir.path().join("missing-ca.pem"));
    invalid(&p, "missing-ca.pem: cannot read it");
    let garbage = dir.path().join("garbage.pem");
    std::fs::write(
        &garbage,
        "-----BEGIN CERTIFICATE-----\nbm90IGEgY2VydGlmaWNhdGU=\n-----END CERTIFICATE-----\n",
    )
    .unwrap();
    let mut p = o.clone();
    p.store.credentials.ca_file = Some(garbage.clone());
    invalid(&p, "does not parse");
    std::fs::write(dir.path().join("empty.pem"), "nothing here\n").unwrap();
    p.store.credentials.ca_file = Some(dir.path().join("empty.pem"));
    invalid(&p, "no PEM CERTIFICATE");
    let mut p = o.clone();
    p.store.credentials.cert_file = Some(garbage);
    invalid(&p, "needs key_file");
    let mut p = o.clone();
    p.store.credentials.username = Some("ids".into());
    invalid(&p, "has no password");
    let mut p = o;
    p.store.credentials.password = Some("x".into());
    invalid(&p, "without a user name");
}

#[test]
fn digest_auth_and_acls_keep_other_clients_out() {
    let zk = ZooKeeper::start();
    let mut o = opts(&zk, "/pf-acl", 2);
    o.store.credentials.username = Some("ids".into());
    o.store.credentials.password = Some("right-password".into());
    let g = lease(o.clone(), 8).build().unwrap();
    g.wait_ready(Duration::from_secs(5)).unwrap();
    g.next_id().unwrap();
    let slot = format!("/pf-acl/slot/{:04}", g.node_id());
    let hwm = format!("/pf-acl/hwm/{:04}", g.node_id());
    let anyone = ZkClient::connect(&zk.ensemble(), None);
    for path in [
        "/pf-acl",
        "/pf-acl/slot",
        "/pf-acl/space",
        slot.as_str(),
        hwm.as_str(),
    ] {
        let acl = anyone.acl(path);
        assert!(
            acl.iter()
                .any(|a| a.starts_with("digest:ids:") && a.ends_with(":ALL"))
                && acl.contains(&"world:anyone:READ".to_string())
                && acl.len() == 2,
            "{path}: {acl:?}"
        );
    }
    // An unauthenticated client can read, but cannot delete the slot, move R or take a slot.
    assert!(anyone.get(&hwm).is_some());
    let e = anyone.delete(&slot).unwrap_err();
    assert!(e.contains("not authorized"), "{e}");
    let e = anyone.set(&hwm, b"1").unwrap_err();
    assert!(e.contains("not authorized"), "{e}");
    let e = anyone.create("/pf-acl/slot/0001", b"squatter").unwrap_err();
    assert!(e.contains("not authorized"), "{e}");
    let e = anyone.delete("/pf-acl/space").unwrap_err();
    assert!(e.contains("not authorized"), "{e}");
    // Nor can a client with the wrong password.
    let wrong = ZkClient::connect(&zk.ensemble(), Some(("ids", "wrong")));
    assert!(wrong.set(&hwm, b"1").is_err());
    std::thread::sleep(Duration::from_millis(300));
    assert!(g.health().ok, "{:?}", g.health());
    g.next_id().unwrap();
    // A generator with the wrong password: a clear LEASE_STORE error, quickly.
    let mut bad = o.clone();
    bad.store.credentials.password = Some("wrong".into());
    let start = Instant::now();
    let e = lease(bad, 8).build().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::LeaseStore, "{e}");
    assert!(
        e.to_string().contains("not authorized") && e.to_string().contains("password"),
        "{e}"
    );
    assert!(start.elapsed() < Duration::from_secs(4));
    // Without credentials at all: the same refusal, saying to set them.
    let mut none = o;
    none.store.credentials.username = None;
    none.store.credentials.password = None;
    let e = lease(none, 8).build().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::LeaseStore, "{e}");
    assert!(e.to_string().contains("username and password"), "{e}");
}

#[test]
fn tls_with_client_certificates() {
    let certs = Certs::generate();
    let zk = ZooKeeper::start_tls(certs.clone());
    let mut o = opts(&zk, "/pf-tls", 2);
    o.ensemble = vec![zk.secure_ensemble()];
    o.store.credentials.ca_file = Some(certs.ca.clone());
    o.store.credentials.cert_file = Some(certs.client_cert.clone());
    o.store.credentials.key_file = Some(certs.client_key.clone());
    let g = lease(o.clone(), 9).build().unwrap();
    g.wait_ready(Duration::from_secs(5)).unwrap();
    g.next_id().unwrap();
    assert!(wait_until(Duration::from_secs(5), || g
        .health()
        .lease_renewals
        >= 2));
    let refused = |o: ZooKeeperLeaseOptions, want: &str| {
        let start = Instant::now();
        let e = lease(o, 9).build().unwrap_err();
        assert_eq!(e.kind(), ErrorKind::LeaseStore, "{e}");
        assert!(e.to_string().contains(want), "{want}: {e}");
        assert!(
            start.elapsed() < Duration::from_secs(8),
            "{:?}",
            start.elapsed()
        );
    };
    let mut wrong_ca = o.clone();
    wrong_ca.store.credentials.ca_file = Some(certs.other_ca.clone());
    refused(wrong_ca, "not signed by ca_file");
    let mut no_cert = o.clone();
    no_cert.store.credentials.cert_file = None;
    no_cert.store.credentials.key_file = None;
    refused(no_cert, "requires a client certificate");
    drop(g);
}
