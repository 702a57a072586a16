//! One claim per node id on a host: while `polyflake serve --node-id 5` runs, `polyflake next`
//! and a second `serve` asking for node 5 with the same layout (any epoch) are refused with the
//! core's `NODE_ID_IN_USE`, naming the holder's pid, exit code 1 (a conflict); every static
//! source counts (a flag, an environment variable, a hostname); a file lease skips the slot a
//! static holder has; another layout or `POLYFLAKE_HOST_SCOPE` is another space; the holder's
//! death (even SIGKILL) frees the id with no cleanup, and its successor starts above its mark.
//! Each test runs its processes in a host scope of its own (`common::test_scope`), so these
//! collisions are the test's own.

mod common;

use common::{run, run_env, Run, Server};
use std::time::Duration;

/// The refusal of a second holder of `node` while `holder` runs: one line, exit 1, the core's
/// code and the holder's pid.
fn assert_refused(r: &Run, node: u32, holder: u32) {
    assert_eq!(r.status.code(), Some(1), "{}", r.stderr);
    assert_eq!(r.stderr.lines().count(), 1, "{}", r.stderr);
    assert!(r.stderr.starts_with("polyflake: error: "), "{}", r.stderr);
    assert!(r.stderr.contains("[NODE_ID_IN_USE]"), "{}", r.stderr);
    let held = format!("node id {node} is already held by process {holder} (");
    assert!(r.stderr.contains(&held), "{}", r.stderr);
    assert!(r.stderr.contains("on this host"), "{}", r.stderr);
    assert!(r.stdout.is_empty(), "{}", r.stdout);
}

#[test]
fn a_second_process_is_refused_a_static_id_a_service_holds() {
    let mut server = Server::start(&["--node-id", "5"]);
    let pid = server.child.id();
    // `next` with the id as a flag, from the environment and from a hostname.
    assert_refused(&run(&["next", "--node-id", "5"]), 5, pid);
    let env = run_env(
        &["next", "--node-id-env", "POLYFLAKE_TEST_NODE"],
        &[("POLYFLAKE_TEST_NODE", "5")],
    );
    assert_refused(&env, 5, pid);
    assert_refused(&run(&["next", "--node-id-from-hostname=ids-5"]), 5, pid);
    // A second service, same node id.
    let second = Server::try_start(&["--node-id", "5"]).err();
    let e = second.expect("a second serve --node-id 5 started");
    assert!(
        e.contains("[NODE_ID_IN_USE]") && e.contains(&format!("process {pid} (")),
        "{e}"
    );
    // The service keeps issuing on node 5.
    assert_eq!(server.post_json("/v1/ids", "{}").status, 200);

    // Another epoch is the same bits: refused too.
    assert_refused(
        &run(&["next", "--node-id", "5", "--epoch-ms", "1600000000000"]),
        5,
        pid,
    );
    // Other ID spaces: another node id or layout, or another host scope.
    for args in [
        &["next", "--node-id", "6"][..],
        &["next", "--node-id", "5", "--layout", "long_lived"],
        // UUIDv7 and ULID have no node id.
        &["next", "--format", "uuidv7"],
    ] {
        let r = run(args);
        assert!(r.status.success(), "{args:?}: {}", r.stderr);
    }
    let scoped = run_env(
        &["next", "--node-id", "5"],
        &[("POLYFLAKE_HOST_SCOPE", "another-scope-of-this-test")],
    );
    assert!(scoped.status.success(), "{}", scoped.stderr);

    // The service's hidden test clock is a test clock: exempt, like the core's own.
    let beside = Server::start(&["--node-id", "5", "--test-clock"]);
    drop(beside);

    // SIGTERM frees the id.
    let status = server.stop_with(libc::SIGTERM, Duration::from_secs(15));
    assert!(status.is_some_and(|s| s.success()), "{}", server.stderr());
    let r = run(&["next", "--node-id", "5"]);
    assert!(r.status.success(), "{}", r.stderr);
}

#[test]
fn a_file_lease_skips_the_slot_a_static_service_holds() {
    // The realistic form: `serve --node-id 0` and an operator's `next`, whose default source is
    // a file lease: the lease takes another slot, never node 0.
    let mut server = Server::start(&["--node-id", "0"]);
    let dir = std::env::temp_dir().join(format!("pf-cli-skip-{}", std::process::id()));
    let r = run(&[
        "next",
        "--lease-dir",
        dir.to_str().unwrap(),
        "--slots",
        "2",
        "--lease-reserve-ms",
        "50",
        "--format",
        "json",
    ]);
    assert!(r.status.success(), "{}", r.stderr);
    assert!(r.stdout.contains("\"node_id\":1"), "{}", r.stdout);
    let one = run(&["next", "--lease-dir", dir.to_str().unwrap(), "--slots", "1"]);
    assert_ne!(one.status.code(), Some(0), "{}", one.stdout);
    let _ = std::fs::remove_dir_all(&dir);
    server.stop_with(libc::SIGTERM, Duration::from_secs(15));
}

#[test]
fn the_holders_death_frees_the_id_with_no_cleanup() {
    let mut server = Server::start(&["--node-id", "7", "--monotonic"]);
    let pid = server.child.id();
    // A second service is refused too (and the first's banner named node 7).
    assert!(server.banner.contains("node 7 "), "{}", server.banner);
    assert_refused(&run(&["next", "--node-id", "7", "--monotonic"]), 7, pid);
    // Strict and monotonic mint the same IDs: one space, whatever the mode.
    assert_refused(&run(&["next", "--node-id", "7"]), 7, pid);
    server.child.kill().unwrap(); // SIGKILL: no handler, no cleanup
    server.child.wait().unwrap();
    let r = run(&["next", "--node-id", "7", "-n", "3"]);
    assert!(r.status.success(), "{}", r.stderr);
    assert_eq!(r.stdout.lines().count(), 3);
}
