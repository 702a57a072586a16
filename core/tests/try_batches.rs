//! `try_next_ids` (and the 128-bit formats' `try_next_uuids` / `try_next_ulids`): a batch is
//! issued on the caller's thread only if no wait is needed, otherwise nothing is issued and the
//! buffer is untouched; refusals are the same errors as `next_ids`. An event-loop binding
//! (Node's `nextIdsAsync`) hands only the `false` case to a worker thread.

use polyflake::{ErrorKind, Generator, ManualClock, Mode, TimeIdBuilder};

const T0: i64 = 1_704_067_201_000;

#[test]
fn strict_fills_only_what_the_current_millisecond_still_holds() {
    let clock = ManualClock::new(T0);
    let g = Generator::builder(1).clock(clock.clone()).build().unwrap();
    let mut a = vec![0u64; 4_000];
    assert!(g.try_next_ids(&mut a).unwrap());
    assert!(a.windows(2).all(|w| w[1] == w[0] + 1));
    // 96 IDs are left in the frozen millisecond: 97 would need a wait.
    let mut b = vec![0u64; 97];
    assert!(!g.try_next_ids(&mut b).unwrap());
    assert!(
        b.iter().all(|&id| id == 0),
        "untouched when it needs a wait"
    );
    assert!(g.try_next_ids(&mut b[..96]).unwrap());
    assert_eq!(b[0], a[3_999] + 1, "nothing was issued by the refused try");
    assert_eq!(g.health().ids_issued, 4_096);
    // A new millisecond: the whole batch fits again.
    clock.elapse(1);
    assert!(g.try_next_ids(&mut b).unwrap());
    assert_eq!(g.decode(b[0]).unwrap().timestamp_ms, T0 + 1);
    // Empty is trivially done.
    assert!(g.try_next_ids(&mut []).unwrap());
}

#[test]
fn strict_rewinds_wait_or_refuse_as_in_next_ids() {
    let clock = ManualClock::new(T0);
    let g = Generator::builder(2).clock(clock.clone()).build().unwrap();
    let mut ids = vec![0u64; 10];
    assert!(g.try_next_ids(&mut ids).unwrap());
    clock.advance(-2); // within max_wait_ms (5): next_ids would wait it out
    assert!(!g.try_next_ids(&mut ids).unwrap());
    clock.advance(-598); // 600 ms behind: refused at once, as next_ids does
    let e = g.try_next_ids(&mut ids).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::ClockMovedBackwards);
    assert_eq!(g.health().rewinds_refused, 1);
}

#[test]
fn monotonic_never_waits_so_it_always_fills() {
    let g = Generator::builder(3)
        .mode(Mode::Monotonic)
        .clock(ManualClock::new(T0))
        .build()
        .unwrap();
    let mut ids = vec![0u64; 100_000]; // borrows ahead: more than one millisecond holds
    assert!(g.try_next_ids(&mut ids).unwrap());
    assert!(ids.windows(2).all(|w| w[1] > w[0]));
}

#[test]
fn the_formats_try_the_same_way() {
    let clock = ManualClock::new(T0);
    let u = TimeIdBuilder::new()
        .clock(clock.clone())
        .build_uuid7()
        .unwrap();
    // At most 32,768 per millisecond (a UUIDv7's counter starts at a random point in it).
    let mut a = vec![0u128; 32_000];
    assert!(u.try_next_uuids(&mut a).unwrap());
    assert!(a.windows(2).all(|w| w[1] > w[0]));
    let mut b = vec![0u128; 1_000];
    assert!(!u.try_next_uuids(&mut b).unwrap(), "fewer than 1,000 left");
    assert!(b.iter().all(|&x| x == 0));
    let l = TimeIdBuilder::new()
        .clock(clock.clone())
        .build_ulid()
        .unwrap();
    assert!(l.try_next_ulids(&mut a[..10]).unwrap());
    assert!(a[..10].windows(2).all(|w| w[1] == w[0] + 1));
}
