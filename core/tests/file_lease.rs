//! File leases with real processes: 50 processes race for 16 slots; a holder killed with SIGKILL
//! and a successor on a clock behind its high-water mark; two processes with clocks 3 s apart on
//! one slot; slot reuse, identity preference, health.

mod lease_support;

use lease_support::*;
use polyflake::{
    Builder, ErrorKind, FileLeaseOptions, Generator, HealthStatus, LeaseKind, ManualClock,
    NodeSource, NodeSourceKind, DEFAULT_EPOCH_MS,
};
use std::collections::HashSet;
use std::time::Duration;

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
fn fifty_processes_race_for_sixteen_slots() {
    let dir = TempDir::new("race");
    let mut children: Vec<_> = (0..50)
        .map(|_| spawn_child("child_process_entry", "race", &file_env(&dir, 16)))
        .collect();
    // Every child answers while the winners still hold their slots (they wait for stdin).
    let mut won = Vec::new();
    let mut refused = Vec::new();
    let mut outputs: Vec<_> = children.iter_mut().map(lines).collect();
    for out in outputs.iter_mut() {
        let line = out.next().expect("child answered");
        if let Some(n) = line.strip_prefix("WON ") {
            won.push(n.parse::<u32>().unwrap());
        } else {
            refused.push(line);
        }
    }
    for c in children.iter_mut() {
        drop(c.stdin.take());
    }
    for (mut c, out) in children.into_iter().zip(outputs) {
        assert_eq!(out.count(), 0, "nothing more to say");
        assert!(c.wait().unwrap().success());
    }
    assert_eq!(won.len(), 16, "exactly 16 winners: {won:?}");
    let distinct: HashSet<_> = won.iter().collect();
    assert_eq!(distinct.len(), 16, "winners hold distinct slots: {won:?}");
    assert!(won.iter().all(|&n| n < 16));
    assert_eq!(refused.len(), 34);
    let dir_text = dir.path().display().to_string();
    for r in &refused {
        assert!(r.starts_with("ERR NO_FREE_SLOT "), "{r}");
        assert!(r.contains(&dir_text) && r.contains("16 slots"), "{r}");
    }
}

#[test]
fn sigkilled_holder_and_a_successor_behind_its_high_water_mark() {
    let dir = TempDir::new("kill");
    // Let a few renewals happen, then kill it mid-stream.
    let (node, holder_max_ms) = kill_holder_mid_stream(&file_env(&dir, 1));

    // The kernel freed the lock; the successor gets the slot and finds the holder's R.
    let clock = ManualClock::new(now_ms());
    let g = Generator::builder_from(NodeSource::FileLease(opts(&dir, 1)))
        .clock(clock.clone())
        .build()
        .unwrap();
    assert_eq!(g.node_id(), node);
    let r = g
        .health()
        .lease
        .unwrap()
        .guard_until_ms
        .expect("the holder's R");
    assert!(
        r >= holder_max_ms,
        "R {r} covers every issued ms {holder_max_ms}"
    );

    clock.set(r - 2000);
    let h = g.health();
    assert_eq!(h.status, HealthStatus::RestartGuard);
    assert!(!h.ok);
    let lease = h.lease.unwrap();
    assert!(lease.guard_waiting);
    assert_eq!(lease.guard_remaining_ms, 2001);
    for step in [0, 1000, 1999, 2000] {
        clock.set(r - 2000 + step);
        let e = g.next_id().unwrap_err();
        assert_eq!(e.kind(), ErrorKind::LeaseNotReady, "{e}");
        let mut buf = [0u64; 8];
        assert_eq!(
            g.next_ids(&mut buf).unwrap_err().kind(),
            ErrorKind::LeaseNotReady
        );
    }
    clock.set(r + 1);
    let first = g.next_id().unwrap();
    let d = g.decode(first).unwrap();
    assert_eq!(d.node_id, node);
    assert!(d.timestamp_ms > r && d.timestamp_ms > holder_max_ms);
    assert!(g.health().ok, "{:?}", g.health());
    // And it continues with larger timestamps.
    clock.advance(5);
    assert!(g.next_id().unwrap() > first);
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
fn slots_in_one_process_are_distinct_and_freed_on_close() {
    let dir = TempDir::new("inproc");
    let build = || lease(opts(&dir, 2), 1).build();
    let a = build().unwrap();
    // New slot files: a guard of a full reserve each. Checked before b is built, so that b's
    // build on a loaded machine does not eat into a's 500 ms.
    assert_eq!(a.next_id().unwrap_err().kind(), ErrorKind::LeaseNotReady);
    assert_eq!(a.health().status, HealthStatus::RestartGuard);
    let b = build().unwrap();
    assert_ne!(a.node_id(), b.node_id());
    a.wait_ready(Duration::from_secs(5)).unwrap();
    b.wait_ready(Duration::from_secs(5)).unwrap();
    let e = build().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::NoFreeSlot);
    assert!(e.to_string().contains(&dir.path().display().to_string()));
    assert!(e.to_string().contains("2 slots"));
    // Unique IDs across the two slots, and a healthy lease.
    let mut seen = HashSet::new();
    for _ in 0..5000 {
        assert!(seen.insert(a.next_id().unwrap()));
        assert!(seen.insert(b.next_id().unwrap()));
    }
    let h = a.health();
    assert!(h.ok, "{h:?}");
    assert_eq!(h.source, NodeSourceKind::FileLease);
    let lease = h.lease.unwrap();
    assert_eq!(lease.kind, LeaseKind::File);
    assert_eq!(lease.slot, a.node_id());
    assert!(lease.high_water_ms > now_ms());
    // R is renewed in the background every reserve / 5.
    assert!(wait_until(Duration::from_secs(10), || a
        .health()
        .lease_renewals
        >= 3));
    let freed = a.node_id();
    let last_ms = g_last_ms(&a);
    drop(a);
    // Closing freed the slot and left R = the last issued ms (never less).
    let text = std::fs::read_to_string(dir.path().join(format!("slot-{freed:04}"))).unwrap();
    let r: i64 = text
        .lines()
        .find_map(|l| l.strip_prefix("high_water_ms="))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(r >= last_ms, "R {r} < last issued {last_ms}");
    let c = build().unwrap();
    assert_eq!(c.node_id(), freed);
    // R is the last issued ms, so the successor's guard lasts until the clock passes it: at
    // most a millisecond or two from here (a call within it is LEASE_NOT_READY, as it must be).
    c.wait_ready(Duration::from_secs(5)).unwrap();
    let first = c.next_id().unwrap();
    assert!(c.decode(first).unwrap().timestamp_ms > r);
}

fn g_last_ms(g: &Generator) -> i64 {
    g.health().last_issued_ms.unwrap()
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
