//! File leases with real processes: the lease suite (`lease_support/suite.rs`: exclusive slots
//! freed on close, a SIGKILLed holder and a successor behind its R, 50 processes racing for 16
//! slots, one ID space, a wide layout) on a lease directory; then what only a directory has: two
//! processes with clocks 3 s apart on one slot, identity preference, option errors, a static
//! generator beside a lease.

mod lease_support;

use lease_support::*;
use polyflake::{Builder, ErrorKind, FileLeaseOptions, Generator, NodeSource, DEFAULT_EPOCH_MS};
use std::collections::HashSet;

lease_suite!(FileStore);

/// Not a test: the entry point of the child processes the tests below start.
#[test]
fn child_process_entry() {
    if let Some(mode) = child_mode() {
        child_main(&mode);
    }
}

fn file_env(dir: &TempDir, slots: u32) -> Vec<(&'static str, String)> {
    vec![
        ("LEASE", "file".into()),
        ("DIR", dir.path().display().to_string()),
        ("SLOTS", slots.to_string()),
        ("RESERVE_MS", "500".into()),
    ]
}

/// Tests in this binary run side by side in one process, where two system-clock generators with
/// one node id, epoch and layout are refused (a lease skips such a slot). A distinct epoch per
/// test keeps them independent.
fn lease(o: FileLeaseOptions, test: i64) -> Builder {
    Generator::builder_from(NodeSource::FileLease(o))
        .epoch_ms(DEFAULT_EPOCH_MS + test)
        .host_scope(lease_support::test_scope(test))
}

fn opts(dir: &TempDir, slots: u32) -> FileLeaseOptions {
    let mut o = FileLeaseOptions::new(dir.path());
    o.common.slots = Some(slots);
    o.common.reserve_ms = 500;
    o
}

#[test]
fn two_processes_three_seconds_apart_on_one_slot_issue_disjoint_ranges() {
    let dir = TempDir::new("skew");
    let t = now_ms();
    let run = |start: i64| {
        let mut env = file_env(&dir, 1);
        env.push(("START", start.to_string()));
        env.push(("COUNT", "300".into()));
        let mut c = spawn_child("child_process_entry", "seq", &env);
        let out: Vec<String> = lines(&mut c).collect();
        assert!(c.wait().unwrap().success());
        assert_eq!(out.last().map(String::as_str), Some("CLOSED"));
        let refusals: u64 = out[0]
            .strip_prefix("REFUSALS ")
            .unwrap_or_else(|| panic!("child said {out:?}"))
            .parse()
            .unwrap();
        let ids: Vec<u64> = out
            .iter()
            .filter_map(|l| l.strip_prefix("ID ")?.parse().ok())
            .collect();
        assert_eq!(ids.len(), 300);
        (refusals, ids)
    };
    // First a process whose clock is 3 s ahead, then one 3 s behind it on the same slot.
    let (ahead_refusals, ahead) = run(t + 3000);
    let (behind_refusals, behind) = run(t);
    // The first took a new slot file: a guard of one reserve (500 ms, 10 ms per refusal).
    assert!((45..=55).contains(&ahead_refusals), "{ahead_refusals}");
    // The second waited past the first's last ID, 3 s ahead of its clock.
    assert!(
        behind_refusals > 300,
        "the second holder waited out the guard: {behind_refusals}"
    );
    let ms = |ids: &[u64]| -> Vec<i64> {
        ids.iter()
            .map(|&id| polyflake::decode(id).unwrap().timestamp_ms)
            .collect()
    };
    let (a, b) = (ms(&ahead), ms(&behind));
    assert!(
        a.iter().max().unwrap() < b.iter().min().unwrap(),
        "ranges overlap: first [{}, {}], second [{}, {}]",
        a.iter().min().unwrap(),
        a.iter().max().unwrap(),
        b.iter().min().unwrap(),
        b.iter().max().unwrap()
    );
    let all: HashSet<u64> = ahead.iter().chain(&behind).copied().collect();
    assert_eq!(all.len(), 600);
}

#[test]
fn a_stable_identity_gets_its_slot_back() {
    let dir = TempDir::new("identity");
    let with = |who: &str| {
        let mut o = opts(&dir, 8);
        o.common.identity = Some(who.into());
        lease(o, 2).build().unwrap()
    };
    let a = with("alpha");
    let b = with("beta");
    let (na, nb) = (a.node_id(), b.node_id());
    drop(a);
    drop(b);
    // Reversed order: each identity still gets the slot it held.
    let b2 = with("beta");
    let a2 = with("alpha");
    assert_eq!((a2.node_id(), b2.node_id()), (na, nb));
}

#[test]
fn bad_lease_options_are_clear_errors() {
    let dir = TempDir::new("bad");
    let mut o = opts(&dir, 0);
    let e = Generator::builder_from(NodeSource::FileLease(o.clone()))
        .build()
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidNodeSource);
    assert!(e.to_string().contains("slots = 0"), "{e}");
    o.common.slots = Some(1025);
    let e = Generator::builder_from(NodeSource::FileLease(o.clone()))
        .build()
        .unwrap_err();
    assert!(e.to_string().contains("1 to 1024"), "{e}");
    o.common.slots = Some(4);
    o.common.reserve_ms = 0;
    let e = Generator::builder_from(NodeSource::FileLease(o.clone()))
        .build()
        .unwrap_err();
    assert!(e.to_string().contains("reserve_ms"), "{e}");
    // A directory that cannot be created.
    let blocker = dir.path().join("file");
    std::fs::write(&blocker, b"x").unwrap();
    let o = FileLeaseOptions::new(blocker.join("sub"));
    let e = Generator::builder_from(NodeSource::FileLease(o))
        .build()
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::LeaseStore, "{e}");
}

#[test]
fn a_static_generator_and_a_lease_never_share_a_node_id_in_one_process() {
    // A system-clock generator holds node 0 with the default epoch and layout; a lease over
    // two slots then skips slot 0.
    let dir = TempDir::new("mixed");
    let fixed = Generator::builder(0)
        .epoch_ms(DEFAULT_EPOCH_MS + 3)
        .host_scope(lease_support::test_scope(3))
        .build()
        .unwrap();
    let g = lease(opts(&dir, 2), 3).build().unwrap();
    assert_eq!(g.node_id(), 1);
    // Without the static one, slot 0 is taken again by the next lease.
    drop(fixed);
    let h = lease(opts(&dir, 2), 3).build().unwrap();
    assert_eq!(h.node_id(), 0);
}
