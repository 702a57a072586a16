//! Every lease refusal names its true cause, and health says the same: a monotonic generator
//! running ahead past R is told to raise `reserve_ms` (not that the store is unreachable); a
//! clock stepped back under the generator's own slot is told so (not blamed on a previous
//! holder); R not renewed quotes the store's last answer.

mod lease_support;

use lease_support::*;
use polyflake::{
    Error, ErrorKind, FileLeaseOptions, Generator, HealthStatus, Layout, ManualClock, Mode,
    NodeSource,
};

fn opts(dir: &TempDir) -> FileLeaseOptions {
    let mut o = FileLeaseOptions::new(dir.path());
    o.common.slots = Some(1);
    o.common.reserve_ms = 1_000;
    o
}

#[test]
fn a_monotonic_generator_ahead_past_r_is_told_to_raise_the_reserve() {
    let dir = TempDir::new("cause-ahead");
    let clock = ManualClock::new(now_ms());
    // 4 IDs a millisecond: 4,000 IDs on a frozen clock run a second ahead, past R.
    let g = Generator::builder_from(NodeSource::FileLease(opts(&dir)))
        .layout(Layout::new(41, 20, 2).unwrap())
        .mode(Mode::Monotonic)
        .clock(clock.clone())
        .build()
        .unwrap();
    clock.advance(1_500); // past a fresh slot's guard of one reserve
    g.renew_lease().unwrap(); // R = clock + reserve
    let mut err = None;
    for _ in 0..10_000 {
        if let Err(e) = g.next_id() {
            err = Some(e);
            break;
        }
    }
    let err = err.expect("a generator a second ahead with a 1 s reserve is refused");
    assert_eq!(err.kind(), ErrorKind::LeaseExpired);
    let text = err.to_string();
    assert!(text.contains("ahead of its clock"), "{text}");
    assert!(text.contains("reserve_ms"), "{text}");
    assert!(!text.contains("unreachable"), "{text}");
    let h = g.health();
    assert_eq!(h.status, HealthStatus::LeaseExpired, "{}", h.reason);
    assert!(h.reason.contains("ahead of its clock"), "{}", h.reason);
    // The clock catching up (and a renewal) lets it issue again.
    clock.advance(2_000);
    g.renew_lease().unwrap();
    assert!(g.next_id().is_ok());
}

#[test]
fn a_clock_stepped_back_under_its_own_slot_is_not_blamed_on_a_previous_holder() {
    let dir = TempDir::new("cause-back");
    let clock = ManualClock::new(now_ms());
    let g = Generator::builder_from(NodeSource::FileLease(opts(&dir)))
        .clock(clock.clone())
        .build()
        .unwrap();
    let guard = g.health().lease.unwrap().guard_until_ms.unwrap();
    clock.set(guard + 10);
    g.renew_lease().unwrap();
    g.next_id().unwrap();
    clock.set(guard - 3_000); // a 3 s step back
    let err = g.next_id().unwrap_err();
    assert_eq!(err.kind(), ErrorKind::LeaseNotReady);
    let text = err.to_string();
    assert!(
        text.contains("stepped back under the slot this generator holds"),
        "{text}"
    );
    assert!(!text.contains("previous holder may have issued"), "{text}");
    match err {
        Error::LeaseNotReady { remaining_ms, .. } => assert_eq!(remaining_ms, 3_001),
        other => panic!("{other:?}"),
    }
    let h = g.health();
    assert_eq!(h.status, HealthStatus::RestartGuard);
    assert!(h.reason.contains("stepped back"), "{}", h.reason);
}

#[test]
fn a_fresh_holder_under_a_previous_holders_guard_is_told_so() {
    let dir = TempDir::new("cause-guard");
    let clock = ManualClock::new(now_ms());
    let g = Generator::builder_from(NodeSource::FileLease(opts(&dir)))
        .clock(clock.clone())
        .build()
        .unwrap();
    let err = g.next_id().unwrap_err();
    assert_eq!(err.kind(), ErrorKind::LeaseNotReady);
    assert!(
        err.to_string().contains("previous holder may have issued"),
        "{err}"
    );
}

/// A rewind the wait budget covers, on a clock that never catches up (frozen): health says
/// `clock_behind` at once (not `ok`), and the refusal says the clock did not catch up within the
/// budget (not merely "moved backwards by 3 ms (wait budget 50 ms)", which reads as a
/// contradiction). A rewind past the budget is refused at once, and health says so.
#[test]
fn a_small_rewind_on_a_frozen_clock_is_reported_as_such() {
    let clock = ManualClock::new(1_735_689_600_000);
    let g = Generator::builder(9)
        .clock(clock.clone())
        .max_wait_ms(50.0)
        .build()
        .unwrap();
    g.next_id().unwrap();
    assert!(g.health().ok);
    clock.advance(-3);
    let h = g.health();
    assert_eq!(h.status, HealthStatus::ClockBehind, "{}", h.reason);
    assert!(!h.ok);
    assert!(
        h.reason.contains("3 ms behind") && h.reason.contains("calls wait"),
        "{}",
        h.reason
    );
    let t = std::time::Instant::now();
    let e = g.next_id().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::ClockMovedBackwards);
    assert!(
        t.elapsed() >= std::time::Duration::from_millis(50),
        "{:?}",
        t.elapsed()
    );
    assert!(
        e.to_string()
            .contains("by 3 ms on node 9 and did not catch up within the wait budget (50 ms)"),
        "{e}"
    );
    clock.advance(-100);
    let h = g.health();
    assert!(
        h.status == HealthStatus::ClockBehind && h.reason.contains("more than the wait budget"),
        "{}",
        h.reason
    );
    let e = g.next_id().unwrap_err();
    assert!(
        e.to_string()
            .contains("by 103 ms on node 9 (wait budget 50 ms)"),
        "{e}"
    );
    clock.advance(104);
    assert!(g.next_id().is_ok() && g.health().ok);
}
