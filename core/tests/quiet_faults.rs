//! The quiet faults, each reproduced as an adversarial user would meet it: slot files
//! deleted under a live holder, records that do not parse, forward clock steps, a second ID space
//! on one store, and the small ones. Fork faults have their own binary (`fork_faults.rs`).

mod lease_support;

use lease_support::*;
use polyflake::{
    decode, inspect_file_lease, Builder, Clock, ClockError, ErrorKind, FileLeaseOptions, Generator,
    HealthStatus, Layout, ManualClock, Mode, NodeSource, DEFAULT_EPOCH_MS, MAX_ID,
};
use std::collections::HashSet;
use std::path::Path;
use std::time::Duration;

/// Not a test: the entry point of the child processes the tests below start.
#[test]
fn child_process_entry() {
    if let Some(mode) = child_mode() {
        child_main(&mode);
    }
}

const YEAR_MS: i64 = 31_536_000_000;

/// A distinct epoch per test keeps side-by-side tests apart in the process-wide node-id table.
fn lease(o: FileLeaseOptions, test: i64) -> Builder {
    Generator::builder_from(NodeSource::FileLease(o))
        .epoch_ms(DEFAULT_EPOCH_MS + test)
        .host_scope(lease_support::test_scope(test))
}

fn opts(dir: &Path, slots: u32, reserve_ms: u64) -> FileLeaseOptions {
    let mut o = FileLeaseOptions::new(dir);
    o.common.slots = Some(slots);
    o.common.reserve_ms = reserve_ms;
    o
}

/// A slot record as polyflake's previous version wrote it (no checksum), padded to 256 bytes:
/// a complete record saying R = `hwm`.
fn old_record(slot: u32, owner: &str, hwm: &str) -> Vec<u8> {
    let mut t = format!("polyflake-slot v1\nslot={slot}\nowner={owner}\nhigh_water_ms={hwm}\n");
    while t.len() < 255 {
        t.push(' ');
    }
    t.push('\n');
    t.into_bytes()
}

fn record_r(dir: &Path, slot: u32) -> i64 {
    let text = std::fs::read_to_string(dir.join(format!("slot-{slot:04}"))).unwrap();
    text.lines()
        .find_map(|l| l.strip_prefix("high_water_ms="))
        .unwrap()
        .parse()
        .unwrap()
}

/// Two processes on one slot, the first one's slot file taken away from under it by `remove`
/// while it issues at full speed: the second takes the slot afresh. Zero duplicates; the first
/// reports `lease_lost`.
fn holder_and_successor_after(remove: impl FnOnce(&Path)) {
    let dir = TempDir::new("deleted");
    let store = dir.path().join("leases");
    let env = |out: &str, ms: &str| {
        vec![
            ("LEASE", "file".to_string()),
            ("DIR", store.display().to_string()),
            ("SLOTS", "1".to_string()),
            ("RESERVE_MS", "500".to_string()),
            ("OUT", dir.path().join(out).display().to_string()),
            ("MS", ms.to_string()),
        ]
    };
    let mut a = spawn_child("child_process_entry", "stream", &env("a.bin", "4000"));
    let mut a_out = lines(&mut a);
    assert_eq!(a_out.next().as_deref(), Some("NODE 0"));
    std::thread::sleep(Duration::from_millis(300));
    remove(&store);
    let mut b = spawn_child("child_process_entry", "stream", &env("b.bin", "1500"));
    let mut b_out = lines(&mut b);
    assert_eq!(
        b_out.next().as_deref(),
        Some("NODE 0"),
        "the successor took slot 0"
    );
    let b_end = b_out.next().unwrap();
    let a_end = a_out.next().unwrap();
    assert!(a.wait().unwrap().success() && b.wait().unwrap().success());
    let (ids_a, ids_b) = (
        read_ids(&dir.path().join("a.bin")),
        read_ids(&dir.path().join("b.bin")),
    );
    assert!(
        ids_a.len() > 100_000 && ids_b.len() > 100_000,
        "both issued"
    );
    let a_set: HashSet<u64> = ids_a.iter().copied().collect();
    let dups = ids_b.iter().filter(|id| a_set.contains(id)).count();
    assert_eq!(dups, 0, "{dups} IDs issued by both holders of slot 0");
    assert_eq!(
        a_end, "END LEASE_LOST lease_lost",
        "the first holder stopped"
    );
    assert_eq!(b_end, "END OK ok");
    // The successor's first ID is past everything the first holder issued.
    let a_max = ids_a.iter().max().unwrap();
    assert!(ids_b.iter().min().unwrap() > a_max);
    eprintln!(
        "first holder {} IDs, successor {} IDs, 0 shared",
        ids_a.len(),
        ids_b.len()
    );
}

#[test]
fn a_slot_file_deleted_under_a_live_holder_loses_the_lease_and_repeats_nothing() {
    holder_and_successor_after(|store| std::fs::remove_file(store.join("slot-0000")).unwrap());
}

#[test]
fn a_lease_directory_removed_under_a_live_holder_is_the_same() {
    holder_and_successor_after(|store| std::fs::remove_dir_all(store).unwrap());
}

/// The model's `no-cap` counterexample (verify/model/trails/no-cap.txt), replayed on test clocks: a
/// NEW slot's first R is two reserves ahead (its guard is one), its file is deleted before its
/// first renewal, and a successor takes the new file guarded one reserve past its clock. The
/// holder must not issue in the successor's window: its limit is one reserve past its take's
/// check (R_CAP), and the renewal a capped call makes finds the slot gone. A 20 s reserve keeps
/// both renewal threads (every 4 s) out of the way.
#[test]
fn a_new_slot_deleted_before_its_first_renewal_issues_nothing_in_its_successors_window() {
    let dir = TempDir::new("no-cap");
    let store = dir.path().join("leases");
    let t0 = now_ms();
    let (clock_a, clock_b) = (ManualClock::new(t0), ManualClock::new(t0));
    let a = lease(opts(&store, 1, 20_000), 30)
        .clock(clock_a.clone())
        .build()
        .unwrap();
    let r_a = record_r(&store, 0);
    assert_eq!(r_a, t0 + 40_000, "a new slot's first R: guard + reserve");
    std::fs::remove_file(store.join("slot-0000")).unwrap();
    let b = lease(opts(&store, 1, 20_000), 30)
        .clock(clock_b.clone())
        .build()
        .unwrap();
    assert_eq!(b.node_id(), 0);
    // Both clocks past the successor's guard (t0 + 20 s), well inside the first holder's R.
    clock_a.set(t0 + 20_001);
    clock_b.set(t0 + 20_001);
    let theirs: Vec<u64> = (0..3).map(|_| b.next_id().unwrap()).collect();
    assert_eq!(b.decode(theirs[0]).unwrap().timestamp_ms, t0 + 20_001);
    let refused = a.next_id().unwrap_err();
    assert_eq!(refused.kind(), ErrorKind::LeaseLost, "{refused}");
    assert_eq!(a.health().status, HealthStatus::LeaseLost);
    // The successor's own first call was capped too: it renewed in the caller's thread (the
    // slot still its own), writing R = now + reserve.
    assert_eq!(
        record_r(&store, 0),
        t0 + 40_001,
        "the caller's renewal wrote R"
    );
}

#[test]
fn an_overwritten_record_loses_the_lease_at_the_next_renewal() {
    let dir = TempDir::new("overwritten");
    let g = lease(opts(dir.path(), 1, 100), 1).build().unwrap();
    g.wait_ready(Duration::from_secs(5)).unwrap();
    g.next_id().unwrap();
    // Same file, same inode: only the record changes (an operator's echo, a buggy tool).
    std::fs::write(
        dir.path().join("slot-0000"),
        old_record(0, "someone-else", "1"),
    )
    .unwrap();
    assert!(wait_until(Duration::from_secs(5), || g.health().status
        == HealthStatus::LeaseLost));
    assert_eq!(g.next_id().unwrap_err().kind(), ErrorKind::LeaseLost);
    let reason = g.health().lease.unwrap().last_error;
    assert!(reason.contains("no longer names this holder"), "{reason}");
}

#[test]
fn records_that_do_not_parse_give_a_full_reserve_never_a_small_r() {
    let reserve = 800;
    let cases: Vec<(&str, Vec<u8>)> = vec![
        ("bad UTF-8", {
            let mut b = old_record(0, "h", "17");
            b[20] = 0xff;
            b
        }),
        (
            "truncated",
            b"polyflake-slot v1\nslot=0\nowner=h\nhigh_water_ms=17".to_vec(),
        ),
        ("NUL bytes", vec![0u8; 256]),
        ("duplicated key", {
            let mut t = "polyflake-slot v1\nslot=0\nowner=h\nhigh_water_ms=17\nhigh_water_ms=18\n"
                .to_string();
            while t.len() < 255 {
                t.push(' ');
            }
            t.push('\n');
            t.into_bytes()
        }),
        (
            "overflowing number",
            old_record(0, "h", "9223372036854775808"),
        ),
        ("empty", Vec::new()),
    ];
    for (what, bytes) in cases {
        let dir = TempDir::new("records");
        std::fs::write(dir.path().join("slot-0000"), &bytes).unwrap();
        let before = now_ms();
        let g = lease(opts(dir.path(), 1, reserve), 2).build().unwrap();
        let guard = g.health().lease.unwrap().guard_until_ms.unwrap();
        assert!(
            guard >= before + reserve as i64 && guard <= now_ms() + reserve as i64,
            "{what}: guard {guard} is not a full reserve past now"
        );
        assert_eq!(
            g.next_id().unwrap_err().kind(),
            ErrorKind::LeaseNotReady,
            "{what}"
        );
    }
    // One unreadable record never fails the whole directory: 15 other slots are free.
    let dir = TempDir::new("records-dir");
    std::fs::write(dir.path().join("slot-0000"), [0xffu8, 0xfe, 0x00]).unwrap();
    let g = lease(opts(dir.path(), 16, reserve), 2).build().unwrap();
    g.wait_ready(Duration::from_secs(5)).unwrap();
    g.next_id().unwrap();
}

#[test]
fn a_mark_past_the_layouts_window_leaves_that_slot_unused_and_is_never_wrapped() {
    let dir = TempDir::new("past-window");
    std::fs::write(
        dir.path().join("slot-0000"),
        old_record(0, "h", "9223372036854775807"),
    )
    .unwrap();
    let e = lease(opts(dir.path(), 1, 100), 3).build().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::NoFreeSlot, "{e}");
    let g = lease(opts(dir.path(), 2, 100), 3).build().unwrap();
    assert_eq!(g.node_id(), 1, "slot 0 is refused, slot 1 is used");
    let report = inspect_file_lease(&opts(dir.path(), 2, 100)).unwrap();
    let s0 = report.slots.iter().find(|s| s.slot == 0).unwrap();
    assert!(s0.poisoned && !s0.held);
}

/// A strict generator on a manual clock (boot clock frozen unless time `elapse`s).
fn strict_on(clock: &ManualClock, node: u32) -> Generator {
    Generator::builder(node)
        .clock(clock.clone())
        .build()
        .unwrap()
}

#[test]
fn a_forward_step_is_refused_and_nothing_is_issued_from_it_when_the_clock_comes_back() {
    let clock = ManualClock::new(DEFAULT_EPOCH_MS + 1_000_000);
    let g = strict_on(&clock, 1);
    let before = g.next_id().unwrap();
    clock.advance(YEAR_MS); // a bad NTP server
    let e = g.next_id().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::ClockJumpedAhead, "{e}");
    let h = g.health();
    assert_eq!(h.status, HealthStatus::ClockAhead);
    assert!(!h.ok);
    assert!(
        h.clock_ahead_ms >= YEAR_MS && h.clock_ahead_ms < YEAR_MS + 1000,
        "{h:?}"
    );
    assert!(h.forward_refused >= 1);
    clock.elapse(30_000); // half a minute later the clock is corrected
    clock.advance(-YEAR_MS);
    let after = g.next_id().unwrap();
    assert!(after > before);
    assert!(g.decode(after).unwrap().timestamp_ms < DEFAULT_EPOCH_MS + 1_000_000 + 60_000);
    assert!(g.health().ok);
    // A step within the bound is a step like any other.
    clock.advance(59_000);
    g.next_id().unwrap();
}

#[test]
fn a_forward_step_that_holds_for_the_confirmation_time_is_believed() {
    let clock = ManualClock::new(DEFAULT_EPOCH_MS + 1_000_000);
    let g = Generator::builder(2)
        .clock(clock.clone())
        .max_forward_step_ms(Some(1_000))
        .forward_confirm_ms(10_000)
        .build()
        .unwrap();
    g.next_id().unwrap();
    clock.advance(3_600_000); // a real correction of an hour
    assert_eq!(g.next_id().unwrap_err().kind(), ErrorKind::ClockJumpedAhead);
    clock.elapse(9_999);
    match g.next_id().unwrap_err() {
        polyflake::Error::ClockJumpedAhead {
            confirm_remaining_ms,
            ..
        } => assert_eq!(confirm_remaining_ms, 1),
        e => panic!("{e}"),
    }
    clock.elapse(1);
    let id = g.next_id().unwrap();
    assert_eq!(g.decode(id).unwrap().timestamp_ms, clock.get());
    assert!(g.health().ok);
}

#[test]
fn a_suspend_is_elapsed_time_not_a_step() {
    // CLOCK_BOOTTIME counts a suspend: wall and boot clock move together.
    let clock = ManualClock::new(DEFAULT_EPOCH_MS + 1_000_000);
    let g = strict_on(&clock, 3);
    g.next_id().unwrap();
    clock.elapse(8 * 3_600_000);
    let id = g.next_id().unwrap();
    assert_eq!(g.decode(id).unwrap().timestamp_ms, clock.get());
    // Turning the check off trusts any step.
    let off = Generator::builder(4)
        .clock(clock.clone())
        .max_forward_step_ms(None)
        .build()
        .unwrap();
    off.next_id().unwrap();
    clock.advance(YEAR_MS);
    off.next_id().unwrap();
}

#[test]
fn monotonic_mode_does_not_move_its_floor_up_to_a_forward_step() {
    let t = DEFAULT_EPOCH_MS + 1_000_000;
    let clock = ManualClock::new(t);
    let g = Generator::builder(5)
        .mode(Mode::Monotonic)
        .clock(clock.clone())
        .build()
        .unwrap();
    g.next_id().unwrap();
    clock.advance(YEAR_MS);
    let mut buf = vec![0u64; 10_000];
    g.next_ids(&mut buf).unwrap();
    let last = g.decode(buf[9_999]).unwrap().timestamp_ms;
    assert!(last < t + 10, "monotonic followed the step to {last}");
    let h = g.health();
    assert!(h.ok, "monotonic keeps issuing: {h:?}");
    assert!(h.clock_ahead_ms >= YEAR_MS);
}

#[test]
fn a_lease_does_not_move_r_to_a_forward_step_and_its_successor_is_not_poisoned() {
    // The issue's reproduction: file lease, one slot, reserve 1 s, a manual clock stepped a
    // year ahead, the renewal running, then the clock corrected.
    let dir = TempDir::new("forward-lease");
    let t = now_ms();
    let clock = ManualClock::new(t);
    let g = Generator::builder_from(NodeSource::FileLease(opts(dir.path(), 1, 1000)))
        .clock(clock.clone())
        .build()
        .unwrap();
    clock.elapse(1001); // past the new slot's guard
    g.next_id().unwrap();
    let renewals = g.health().lease_renewals;
    clock.advance(YEAR_MS);
    g.renew_lease().unwrap();
    // And the background renewals: wait until two more have run (up to 10 s) rather than sleep
    // 450 ms, which a loaded machine can pass with none of them run.
    assert!(
        wait_until(Duration::from_secs(10), || g.health().lease_renewals
            >= renewals + 3),
        "the renewal thread stopped: {:?}",
        g.health()
    );
    let r = g.health().lease.unwrap().high_water_ms;
    assert!(r < t + 10_000, "R followed the step: {}", r - t);
    assert_eq!(record_r(dir.path(), 0), r);
    assert_eq!(g.next_id().unwrap_err().kind(), ErrorKind::ClockJumpedAhead);
    clock.advance(-YEAR_MS);
    let last = g.next_id().unwrap();
    drop(g);
    // The successor on the slot waits only past what was really issued.
    let succ = Generator::builder_from(NodeSource::FileLease(opts(dir.path(), 1, 1000)))
        .clock(clock.clone())
        .build()
        .unwrap();
    let guard = succ.health().lease.unwrap().guard_until_ms.unwrap();
    assert_eq!(guard, decode(last).unwrap().timestamp_ms);
    clock.elapse(1);
    assert!(succ.next_id().unwrap() > last);
}

#[test]
fn a_poisoned_slot_is_skipped_while_others_are_free_and_health_says_why_when_taken() {
    let dir = TempDir::new("poisoned");
    let future = (now_ms() + YEAR_MS).to_string();
    std::fs::write(dir.path().join("slot-0000"), old_record(0, "h", &future)).unwrap();
    let g = lease(opts(dir.path(), 2, 100), 4).build().unwrap();
    assert_eq!(
        g.node_id(),
        1,
        "the free slot with a short guard comes first"
    );
    drop(g);
    // With slot 1 held, the poisoned slot 0 is the only one left: taken, and health says why.
    let other = lease(opts(dir.path(), 2, 100), 4).build().unwrap();
    assert_eq!(other.node_id(), 1);
    let g = lease(opts(dir.path(), 2, 100), 4).build().unwrap();
    assert_eq!(g.node_id(), 0);
    let h = g.health();
    assert_eq!(h.status, HealthStatus::RestartGuard);
    let note = h.lease.unwrap().guard_note;
    assert!(note.contains("max_guard_wait_ms"), "{note}");
    assert!(h.reason.contains("max_guard_wait_ms"), "{}", h.reason);
}

#[test]
fn a_store_serves_one_id_space() {
    let dir = TempDir::new("space");
    let a = lease(opts(dir.path(), 4, 100), 5).build().unwrap();
    let e = lease(opts(dir.path(), 4, 100), 5)
        .layout(Layout::BIG_FLEET)
        .build()
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::IdSpaceMismatch, "{e}");
    let text = e.to_string();
    assert!(
        text.contains("41/10/12") && text.contains("41/12/10"),
        "{text}"
    );
    assert!(text.contains(&dir.path().display().to_string()), "{text}");
    let e = lease(opts(dir.path(), 4, 100), 6).build().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::IdSpaceMismatch, "another epoch: {e}");
    drop(a);
    // The record stays: the store keeps its space when nobody holds it.
    assert_eq!(
        lease(opts(dir.path(), 4, 100), 6)
            .build()
            .unwrap_err()
            .kind(),
        ErrorKind::IdSpaceMismatch
    );
    let space = std::fs::read_to_string(dir.path().join("polyflake-space")).unwrap();
    assert!(space.contains("layout=41/10/12"), "{space}");
}

#[test]
fn closing_with_nothing_issued_leaves_r_at_the_guard_not_a_reserve_ahead() {
    let dir = TempDir::new("close-empty");
    let past = (now_ms() - 10_000).to_string();
    std::fs::write(dir.path().join("slot-0000"), old_record(0, "h", &past)).unwrap();
    let g = lease(opts(dir.path(), 1, 5_000), 7).build().unwrap();
    assert!(
        record_r(dir.path(), 0) > now_ms() + 4_000,
        "R runs ahead while held"
    );
    drop(g);
    let r = record_r(dir.path(), 0);
    assert!(
        r <= now_ms(),
        "R {} ms ahead after a close that issued nothing",
        r - now_ms()
    );
    let g = lease(opts(dir.path(), 1, 5_000), 7).build().unwrap();
    g.next_id().unwrap();
}

/// A user's own time source (not a test clock).
struct Wrapped;
impl Clock for Wrapped {
    fn now_ms(&self) -> Result<i64, ClockError> {
        Ok(now_ms())
    }
}

#[test]
fn only_the_test_clocks_are_exempt_from_one_generator_per_node_id() {
    let a = Generator::builder(800).clock(Wrapped).build().unwrap();
    let e = Generator::builder(800).clock(Wrapped).build().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::NodeIdInUse);
    let clock = ManualClock::new(now_ms());
    let _t1 = strict_on(&clock, 800);
    let _t2 = strict_on(&clock, 800);
    drop(a);
}

#[test]
fn a_successor_in_the_same_millisecond_continues_after_its_predecessor() {
    for _ in 0..50 {
        let a = Generator::strict(801).unwrap();
        let last = (0..100).map(|_| a.next_id().unwrap()).last().unwrap();
        drop(a);
        let b = Generator::strict(801).unwrap();
        let first = b.next_id().unwrap();
        assert!(first > last, "{first} repeats or precedes {last}");
        assert_eq!(b.health().ids_issued, 1);
    }
}

#[test]
fn health_tells_the_truth_at_the_windows_end() {
    // A 31-bit timestamp on a clock at the window's last millisecond; 4 sequence bits give 16
    // IDs a millisecond (node and sequence fields are at most 32 bits, so the timestamp cannot
    // be made tiny).
    let epoch = DEFAULT_EPOCH_MS;
    let clock = ManualClock::new(epoch + (1 << 31) - 1);
    let g = Generator::builder(1)
        .layout(Layout::new(31, 28, 4).unwrap())
        .mode(Mode::Monotonic)
        .clock(clock.clone())
        .epoch_ms(epoch)
        .build()
        .unwrap();
    let mut ids = vec![0u64; 16];
    g.next_ids(&mut ids).unwrap(); // the last millisecond's 16 sequence values
    assert_eq!(
        g.next_id().unwrap_err().kind(),
        ErrorKind::TimestampOverflow
    );
    let h = g.health();
    assert!(!h.ok, "{h:?}");
    assert_eq!(h.status, HealthStatus::ClockOutsideWindow);
    assert!(h.reason.contains("window is spent"), "{}", h.reason);
}

#[test]
fn decode_refuses_what_it_cannot_represent() {
    let e = Layout::DEFAULT.decode(MAX_ID, i64::MAX - 1).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
    assert!(Layout::DEFAULT.decode(MAX_ID, DEFAULT_EPOCH_MS).is_ok());
}

#[test]
fn inspect_shows_holders_guards_records_and_the_space() {
    let dir = TempDir::new("inspect");
    let g = lease(opts(dir.path(), 4, 100), 8).build().unwrap();
    std::fs::write(dir.path().join("slot-0003"), b"garbage").unwrap();
    let future = (now_ms() + YEAR_MS).to_string();
    std::fs::write(dir.path().join("slot-0002"), old_record(2, "x", &future)).unwrap();
    let report = inspect_file_lease(&opts(dir.path(), 4, 100)).unwrap();
    assert_eq!(report.space.unwrap().layout, Layout::DEFAULT);
    let slot = |n: u32| report.slots.iter().find(|s| s.slot == n).unwrap().clone();
    let held = slot(g.node_id());
    assert!(held.held && !held.poisoned && held.record == "complete");
    assert!(held
        .holder
        .unwrap()
        .starts_with(&format!("{}/", std::process::id())));
    let poisoned = slot(2);
    assert!(poisoned.poisoned && !poisoned.held);
    assert!(poisoned.guard_ms.unwrap() > YEAR_MS - 10_000);
    let garbage = slot(3);
    assert!(garbage.record.starts_with("incomplete"), "{garbage:?}");
    assert!(!garbage.poisoned);
}

#[test]
fn a_strict_batch_that_fails_leaves_the_callers_buffer_untouched() {
    // A frozen clock: 4,096 IDs, then a refusal part-way through a batch of 5,000.
    let g = Generator::builder(6)
        .clock(ManualClock::new(DEFAULT_EPOCH_MS + 5))
        .max_wait_ms(0.0)
        .build()
        .unwrap();
    let mut buf = vec![7u64; 5_000];
    assert_eq!(
        g.next_ids(&mut buf).unwrap_err().kind(),
        ErrorKind::ClockMovedBackwards
    );
    assert!(
        buf.iter().all(|&v| v == 7),
        "a failed batch wrote into the buffer"
    );
}
