//! The quiet faults through the CLI and the service: the same bad node-source inputs as every
//! binding, `polyflake lease inspect`, two services whose lease directory is removed between
//! their starts, and a forward step of the service's test clock.

mod common;

use common::{fields_default, repo_root, run, temp_dir, Server};
use serde_json::Value;
use std::collections::HashSet;
use std::time::{Duration, Instant};

fn ids_of(r: &common::Resp) -> Vec<u64> {
    assert_eq!(r.status, 200, "{}", r.text());
    r.json()["ids"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().parse().unwrap())
        .collect()
}

#[test]
fn bad_node_sources_give_the_cores_code_and_message() {
    let text =
        std::fs::read_to_string(repo_root().join("tests/vectors/bad_node_sources.json")).unwrap();
    let doc: Value = serde_json::from_str(&text).unwrap();
    let root = temp_dir("bad-sources");
    let dir = root.join("leases");
    let d = dir.to_str().unwrap().to_string();
    for case in doc["cases"].as_array().unwrap() {
        let src = &case["source"];
        let mut args: Vec<String> = vec!["next".into()];
        match src["kind"].as_str().unwrap() {
            "ipv4" => args.extend([
                "--node-id-from-ipv4".into(),
                format!("{}/{}", src["address"].as_str().unwrap(), src["prefix_len"]),
            ]),
            "file_lease" => {
                args.extend(["--lease-dir".into(), d.clone()]);
                for (key, flag) in [
                    ("reserve_ms", "--lease-reserve-ms"),
                    ("identity", "--lease-identity"),
                    ("slots", "--slots"),
                ] {
                    if let Some(v) = src.get(key) {
                        let v = v.as_str().map_or(v.to_string(), str::to_string);
                        args.extend([flag.to_string(), v]);
                    }
                }
            }
            k => panic!("unknown kind {k}"),
        }
        let argv: Vec<&str> = args.iter().map(String::as_str).collect();
        let r = run(&argv);
        assert!(!r.status.success(), "{argv:?}");
        let want = format!(
            "polyflake: error: {} [{}]",
            case["message"].as_str().unwrap(),
            case["error"].as_str().unwrap()
        );
        assert_eq!(r.stderr.trim_end(), want, "{}", case["name"]);
    }
    assert!(!dir.exists(), "a bad option touched the lease directory");
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn lease_inspect_shows_the_holder_the_guard_and_the_space() {
    let dir = temp_dir("inspect");
    let d = dir.to_str().unwrap();
    let server = Server::start(&[
        "--lease-dir",
        d,
        "--slots",
        "4",
        "--lease-reserve-ms",
        "200",
    ]);
    assert_eq!(server.wait_health(200, Duration::from_secs(10)).status, 200);
    let slot = server.get("/v1/health").json()["lease"]["slot"]
        .as_u64()
        .unwrap();
    // A slot whose previous holder issued a year ahead (a clock that stepped forward).
    let year_ahead = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64
        + 31_536_000_000;
    let other = (slot + 1) % 4;
    let mut rec =
        format!("polyflake-slot v1\nslot={other}\nowner=old-host\nhigh_water_ms={year_ahead}\n");
    while rec.len() < 255 {
        rec.push(' ');
    }
    rec.push('\n');
    std::fs::write(dir.join(format!("slot-{other:04}")), rec).unwrap();

    let r = run(&["lease", "inspect", "--lease-dir", d, "--format", "json"]);
    assert!(r.status.success(), "{}", r.stderr);
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(v["kind"], "file");
    assert_eq!(v["space"]["layout"], "41/10/12");
    let slots = v["slots"].as_array().unwrap();
    let find = |n: u64| slots.iter().find(|s| s["slot"] == n).unwrap();
    let held = find(slot);
    assert_eq!(
        (held["held"].as_bool(), held["poisoned"].as_bool()),
        (Some(true), Some(false))
    );
    assert!(
        held["guard_ms"].as_i64().unwrap() > 0,
        "R runs ahead of now: {held}"
    );
    let poisoned = find(other);
    assert_eq!(poisoned["poisoned"], true);
    assert_eq!(poisoned["identity"], "old-host");

    let r = run(&["lease", "inspect", "--lease-dir", d]);
    assert!(r.status.success(), "{}", r.stderr);
    assert!(
        r.stdout.contains("ID space: layout 41/10/12"),
        "{}",
        r.stdout
    );
    let line = r
        .stdout
        .lines()
        .find(|l| l.starts_with(&format!("{other:04}")))
        .unwrap();
    assert!(
        line.contains("old-host") && line.contains(" yes "),
        "{line}"
    );
    drop(server);
    // Bad input: a directory that is not there, and two stores at once.
    let r = run(&["lease", "inspect", "--lease-dir", "/nonexistent/polyflake"]);
    assert!(
        !r.status.success() && r.stderr.contains("LEASE_STORE"),
        "{}",
        r.stderr
    );
    let r = run(&[
        "lease",
        "inspect",
        "--lease-dir",
        d,
        "--etcd",
        "http://127.0.0.1:1",
    ]);
    assert_eq!(r.status.code(), Some(2), "{}", r.stderr);
    let _ = std::fs::remove_dir_all(&dir);
}

/// The report: two services with an `rm -rf` of their lease directory between the two
/// starts both served node 0 and handed out the same IDs. Now the first sees its slot file gone
/// and stops (503, `lease_lost`), and the second waits a full reserve before its first ID.
#[test]
fn removing_the_lease_directory_between_two_services_repeats_nothing() {
    let dir = temp_dir("rmrf");
    let d = dir.to_str().unwrap();
    let args = [
        "--lease-dir",
        d,
        "--slots",
        "1",
        "--lease-reserve-ms",
        "500",
    ];
    let first = Server::start(&args);
    assert_eq!(first.wait_health(200, Duration::from_secs(10)).status, 200);
    let mut a_ids = ids_of(&first.post_json("/v1/ids", "{\"count\": 1000}"));
    std::fs::remove_dir_all(&dir).unwrap();
    // On one host the first service's claim on node 0 would keep the second out while it lives
    // (a lease skips a node id a live holder has): in a scope of its own, the second stands for
    // a process that cannot see that claim (another host sharing the directory), which only the
    // file's own guard keeps apart.
    let scope = std::ffi::OsString::from(format!("{}-other", common::test_scope()));
    let second = Server::try_start_env(&args, &[("POLYFLAKE_HOST_SCOPE", scope.as_os_str())])
        .unwrap_or_else(|e| panic!("serve {args:?} did not start: {e}"));
    // The first keeps answering until it notices (its next renewal, every 100 ms); collect what
    // it still hands out. Up to a 20 s deadline, not a fixed 200 requests (about a second), which
    // a loaded machine can get through before the renewal thread has run.
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while std::time::Instant::now() < deadline {
        let r = first.post_json("/v1/ids", "{\"count\": 100}");
        if r.status != 200 {
            assert_eq!(r.status, 503, "{}", r.text());
            assert_eq!(r.error_code(), "LEASE_LOST");
            break;
        }
        a_ids.extend(ids_of(&r));
        std::thread::sleep(Duration::from_millis(5));
    }
    let h = first.get("/v1/health");
    assert_eq!(
        (h.status, h.json()["status"].as_str()),
        (503, Some("lease_lost"))
    );
    assert_eq!(second.wait_health(200, Duration::from_secs(10)).status, 200);
    let b_ids = ids_of(&second.post_json("/v1/ids", "{\"count\": 1000}"));
    assert!(b_ids.iter().all(|id| fields_default(*id).1 == 0));
    let a: HashSet<u64> = a_ids.iter().copied().collect();
    assert!(b_ids.iter().all(|id| !a.contains(id)), "IDs served twice");
    assert!(b_ids.iter().min() > a_ids.iter().max());
    drop((first, second));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_forward_step_of_the_clock_is_503_until_it_comes_back() {
    let server = Server::start(&["--node-id", "40", "--test-clock"]);
    ids_of(&server.post_json("/v1/ids", "{}"));
    let r = server.post_json("/v1/admin/clock", "{\"offset_ms\": 120000}");
    assert_eq!(r.status, 200, "{}", r.text());
    let r = server.post_json("/v1/ids", "{}");
    assert_eq!(
        (r.status, r.error_code().as_str()),
        (503, "CLOCK_JUMPED_AHEAD")
    );
    let h = server.get("/v1/health");
    assert_eq!(h.status, 503);
    assert_eq!(h.json()["status"], "clock_ahead");
    server.post_json("/v1/admin/clock", "{\"offset_ms\": 0}");
    assert_eq!(server.wait_health(200, Duration::from_secs(5)).status, 200);
    ids_of(&server.post_json("/v1/ids", "{}"));
    // With the check off, the same step is issued from at once.
    let off = Server::start(&[
        "--node-id",
        "41",
        "--test-clock",
        "--max-forward-step-ms",
        "off",
    ]);
    off.post_json("/v1/admin/clock", "{\"offset_ms\": 120000}");
    ids_of(&off.post_json("/v1/ids", "{}"));
    let r = run(&["next", "--node-id", "42", "--max-forward-step-ms", "soon"]);
    assert_eq!(r.status.code(), Some(2), "{}", r.stderr);
}

/// `polyflake lease fence`: after a restore, the operator raises the store's fence;
/// `lease inspect` shows it, a new holder is refused until its clock passes it (the refusal
/// says the fence is why), a fence only rises, and a bad margin is refused echoing it.
#[test]
fn lease_fence_raises_a_floor_that_inspect_shows_and_takers_honour() {
    let dir = temp_dir("fence");
    let d = dir.to_str().unwrap();
    let r = run(&["lease", "fence", "--lease-dir", d, "--output", "json"]);
    assert!(r.status.success(), "{}", r.stderr);
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    let fence = v["fence_ms"].as_i64().unwrap();
    assert_eq!(
        v["margin_ms"], 65_000,
        "the default: 60 s of skew plus the reserve"
    );
    assert!(v["previous_ms"].is_null());
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64;
    assert!((fence - now - 65_000).abs() < 30_000, "{fence} vs {now}");

    // A smaller margin never lowers it.
    let r = run(&[
        "lease",
        "fence",
        "--lease-dir",
        d,
        "--margin-ms",
        "10",
        "--output",
        "json",
    ]);
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(
        (v["fence_ms"].as_i64(), v["previous_ms"].as_i64()),
        (Some(fence), Some(fence))
    );

    let r = run(&["lease", "inspect", "--lease-dir", d, "--output", "json"]);
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(v["fence_ms"], fence);
    let r = run(&["lease", "inspect", "--lease-dir", d]);
    assert!(
        r.stdout.contains("fence: ") && r.stdout.contains(&fence.to_string()),
        "{}",
        r.stdout
    );

    // A new holder waits for the fence, and says so.
    let t = std::time::Instant::now();
    let r = run(&["next", "--lease-dir", d]);
    // Refused at once: the fence is further off than `next` would wait (30 s).
    assert!(t.elapsed() < Duration::from_secs(20), "{:?}", t.elapsed());
    assert!(!r.status.success());
    assert!(r.stderr.contains("LEASE_NOT_READY"), "{}", r.stderr);
    assert!(r.stderr.contains("fence"), "{}", r.stderr);

    let r = run(&[
        "lease",
        "fence",
        "--lease-dir",
        d,
        "--margin-ms",
        "99999999999999999999",
    ]);
    assert_eq!(r.status.code(), Some(2));
    assert!(r.stderr.contains("99999999999999999999"), "{}", r.stderr);
    let r = run(&[
        "lease",
        "fence",
        "--lease-dir",
        d,
        "--margin-ms",
        "40000000000",
    ]);
    assert!(!r.status.success());
    assert!(r.stderr.contains("40000000000"), "{}", r.stderr);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The number of ms in a restart-guard notice: the digits after `prefix`.
fn notice_ms(line: &str, prefix: &str) -> u64 {
    let at = line.find(prefix).unwrap_or_else(|| panic!("{line}")) + prefix.len();
    let digits: String = line[at..]
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    digits.parse().unwrap_or_else(|_| panic!("{line}"))
}

/// A wait a person notices says so. `next` on a fresh lease directory (a new
/// machine's first run) waits one reserve, 5 s by default: one line on stderr says how long,
/// why and how to avoid it. A second run on the same directory, a static node id and a wait of
/// at most half a second say nothing.
#[test]
fn next_says_when_the_restart_guard_makes_it_wait() {
    let dir = temp_dir("guard-notice");
    let d = dir.to_str().unwrap();
    let t = Instant::now();
    let r = run(&["next", "--lease-dir", d]);
    let took = t.elapsed();
    assert!(r.status.success(), "{}", r.stderr);
    assert_eq!(r.stdout.lines().count(), 1, "{}", r.stdout);
    let lines: Vec<&str> = r.stderr.lines().collect();
    assert_eq!(lines.len(), 1, "one line, once: {}", r.stderr);
    let line = lines[0];
    assert!(line.starts_with("polyflake next: waiting "), "{line}");
    let ms = notice_ms(line, "waiting ");
    // One reserve (5,000 ms) less the moments since the slot was taken; the wait runs until the
    // clock PASSES the guard, so it can be reserve + 1 ms.
    assert!((4_000..=5_001).contains(&ms), "{line}");
    assert!(took >= Duration::from_millis(ms), "{took:?} {line}");
    for words in [
        "restart guard on node 0",
        &format!("issuing again in {ms} ms"),
        "one whole reserve (--lease-reserve-ms 5000)",
        "a new slot",
        &format!("keep the lease directory ({d}) between runs"),
        "--node-id N",
        "lower --lease-reserve-ms",
    ] {
        assert!(line.contains(words), "{words:?} not in {line}");
    }

    // The same directory again: the slot the first run released is taken at once, silently.
    let t = Instant::now();
    let r = run(&["next", "--lease-dir", d]);
    assert!(r.status.success(), "{}", r.stderr);
    assert_eq!(r.stderr, "", "no wait, no line");
    assert!(t.elapsed() < Duration::from_secs(3), "{:?}", t.elapsed());

    // A static node id has no guard.
    let r = run(&["next", "--node-id", "3"]);
    assert!(r.status.success(), "{}", r.stderr);
    assert_eq!(r.stderr, "");

    // Half a second or less is not worth a line (a new slot with a 400 ms reserve).
    let small = temp_dir("guard-notice-small");
    let r = run(&[
        "next",
        "--lease-dir",
        small.to_str().unwrap(),
        "--lease-reserve-ms",
        "400",
    ]);
    assert!(r.status.success(), "{}", r.stderr);
    assert_eq!(r.stderr, "");
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_dir_all(&small);
}

/// The service says so too, once per wait: the new slot's guard at start, and again when its
/// (test) clock steps back under the slot; a static node id says nothing.
#[test]
fn serve_says_when_the_restart_guard_makes_it_answer_503() {
    let dir = temp_dir("guard-notice-serve");
    let d = dir.to_str().unwrap();
    let server = Server::start(&[
        "--lease-dir",
        d,
        "--lease-reserve-ms",
        "3000",
        "--test-clock",
    ]);
    assert_eq!(server.get("/v1/health").status, 503);
    assert_eq!(server.wait_health(200, Duration::from_secs(15)).status, 200);
    assert_eq!(server.post_json("/v1/ids", "{}").status, 200);
    let notices = |text: &str| -> Vec<String> {
        text.lines()
            .filter(|l| l.contains("answer 503 (restart_guard) for"))
            .map(str::to_string)
            .collect()
    };
    let seen = notices(&server.stderr());
    assert_eq!(seen.len(), 1, "once: {}", server.stderr());
    let first = &seen[0];
    assert!(first.starts_with("polyflake serve: "), "{first}");
    assert!(
        (1_000..=3_001).contains(&notice_ms(first, "for ")),
        "{first}"
    );
    for words in [
        "one whole reserve (--lease-reserve-ms 3000)",
        "--node-id N",
        "lower --lease-reserve-ms",
    ] {
        assert!(first.contains(words), "{words:?} not in {first}");
    }

    // The clock steps back 2.5 s under the slot: a second wait, said once more.
    let r = server.post_json("/v1/admin/clock", "{\"advance_ms\": -2500}");
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(server.get("/v1/health").status, 503);
    assert_eq!(server.wait_health(200, Duration::from_secs(15)).status, 200);
    std::thread::sleep(Duration::from_millis(600)); // a few more of the service's looks
    let seen = notices(&server.stderr());
    assert_eq!(seen.len(), 2, "once per wait: {}", server.stderr());
    assert!(
        seen[1].contains("stepped back under the slot"),
        "{}",
        seen[1]
    );
    assert!(notice_ms(&seen[1], "for ") > 500, "{}", seen[1]);
    drop(server);

    let server = Server::start(&["--node-id", "43"]);
    assert_eq!(server.wait_health(200, Duration::from_secs(10)).status, 200);
    std::thread::sleep(Duration::from_millis(600));
    assert!(notices(&server.stderr()).is_empty(), "{}", server.stderr());
    drop(server);
    let _ = std::fs::remove_dir_all(&dir);
}
