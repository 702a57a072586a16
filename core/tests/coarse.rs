//! The coarse clock source on injected clocks that model both readings: a manual
//! clock whose coarse reading is the wall reading rounded down to a tick (as
//! `CLOCK_REALTIME_COARSE` is the time of the last tick): it lags, steps back and freezes with
//! the precise reading. Strict mode must never issue a timestamp above the precise reading of its
//! call, must not take the tick's lag for a rewind, and must keep every refusal rule.

use polyflake::{
    ClockSource, ErrorKind, Generator, HealthStatus, ManualClock, Mode, SystemClock,
    DEFAULT_EPOCH_MS,
};
use std::collections::HashSet;

const T: i64 = DEFAULT_EPOCH_MS + 1_000_000; // a multiple of 4

fn coarse(clock: &ManualClock, node: u32) -> Generator {
    Generator::builder(node)
        .clock(clock.clone())
        .clock_source(ClockSource::Coarse)
        .build()
        .unwrap()
}

fn ms(g: &Generator, id: u64) -> i64 {
    g.decode(id).unwrap().timestamp_ms
}

#[test]
fn issues_at_the_last_tick_never_above_the_precise_reading() {
    let clock = ManualClock::new(T + 3);
    clock.set_tick_ms(4);
    let g = coarse(&clock, 1);
    assert_eq!(g.clock_source(), ClockSource::Coarse);
    let id = g.next_id().unwrap();
    assert_eq!(ms(&g, id), T, "the coarse reading: the tick, 3 ms behind");
    for _ in 0..1000 {
        let id = g.next_id().unwrap();
        assert!(ms(&g, id) <= clock.get());
    }
    let h = g.health();
    assert!(h.ok && h.clock_source == ClockSource::Coarse, "{h:?}");
}

#[test]
fn a_coarse_reading_behind_the_last_issued_ms_is_lag_not_a_rewind() {
    let clock = ManualClock::new(T + 3);
    clock.set_tick_ms(4);
    let g = Generator::builder(2)
        .clock(clock.clone())
        .clock_source(ClockSource::Coarse)
        .max_wait_ms(0.0)
        .build()
        .unwrap();
    // Spend the coarse millisecond T: the precise reading (T + 3) says the clock has passed
    // T + 1, and the state goes on there (it never jumps to the precise reading, which would
    // keep it ahead of the coarse clock for good and make every call read both).
    let mut buf = vec![0u64; 4096];
    for slot in buf.iter_mut() {
        *slot = g.next_id().unwrap();
    }
    assert_eq!(ms(&g, buf[4095]), T);
    let next = g.next_id().unwrap();
    assert_eq!(ms(&g, next), T + 1);
    // Now the coarse reading (T) is behind the last issued ms: not a rewind, even with a zero
    // wait budget; the precise reading says the clock has passed it.
    for _ in 0..100 {
        let id = g.next_id().unwrap();
        assert_eq!(ms(&g, id), T + 1);
    }
    let h = g.health();
    assert_eq!((h.rewinds_refused, h.rewinds_waited), (0, 0));
    assert!(h.ok);
}

#[test]
fn a_real_rewind_is_still_refused_above_the_budget() {
    let clock = ManualClock::new(T + 2);
    clock.set_tick_ms(4);
    let g = coarse(&clock, 3);
    g.next_id().unwrap();
    clock.advance(-600); // the coarse reading follows a step at once
    let e = g.next_id().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::ClockMovedBackwards, "{e}");
    assert_eq!(g.health().status, HealthStatus::ClockBehind);
    clock.advance(600);
    g.next_id().unwrap();
}

#[test]
fn a_frozen_clock_refuses_after_its_milliseconds_are_spent_and_sleeps_not_spins() {
    // On a tick boundary the coarse and precise readings agree: exactly 2^12 IDs.
    let aligned = ManualClock::new(T);
    aligned.set_tick_ms(4);
    let g = coarse(&aligned, 4);
    for _ in 0..4096 {
        g.next_id().unwrap();
    }
    let e = g.next_id().unwrap_err();
    assert!(
        matches!(e, polyflake::Error::ClockMovedBackwards { stuck: true, .. }),
        "{e}"
    );
    let h = g.health();
    assert!(h.wait_sleeps >= 1 && h.sequence_exhaustions == 1, "{h:?}");
    // Between ticks the coarse ms (T) is behind the precise one (T + 2): every millisecond from
    // the one to the other gives its 4,096, then the frozen clock refuses.
    let off = ManualClock::new(T + 2);
    off.set_tick_ms(4);
    let g = coarse(&off, 5);
    let mut seen = HashSet::new();
    let mut n = 0;
    while let Ok(id) = g.next_id() {
        assert!(seen.insert(id));
        assert!(ms(&g, id) <= T + 2);
        n += 1;
    }
    assert_eq!(n, 3 * 4096);
}

#[test]
fn monotonic_mode_floors_at_the_tick_and_decides_its_lead_on_the_precise_reading() {
    let clock = ManualClock::new(T + 3);
    clock.set_tick_ms(4);
    let g = Generator::builder(6)
        .mode(Mode::Monotonic)
        .max_lead_ms(Some(0))
        .clock(clock.clone())
        .clock_source(ClockSource::Coarse)
        .build()
        .unwrap();
    // Precise T+3, coarse T: IDs at T, T+1, ... are behind the wall clock, never refused.
    let mut buf = [0u64; 3];
    for slot in buf.iter_mut() {
        *slot = g.next_id().unwrap();
    }
    assert_eq!(ms(&g, buf[0]), T);
    // 4 ms of IDs: the fourth ms is T+3 = the precise reading, a lead of 0.
    for _ in 0..(4096 * 4 - 3) {
        g.next_id().unwrap();
    }
    assert_eq!(
        g.next_id().unwrap_err().kind(),
        ErrorKind::LeadLimitExceeded,
        "the fifth ms would lead the precise clock"
    );
}

#[test]
fn the_system_coarse_clock_is_used_when_its_tick_is_fine_and_never_leads() {
    let g = Generator::builder(7)
        .clock_source(ClockSource::Coarse)
        .build()
        .unwrap();
    let h = g.health();
    match SystemClock::coarse_resolution_ns() {
        Some(tick) if tick <= polyflake::MAX_COARSE_TICK_NS => {
            assert_eq!(h.clock_source, ClockSource::Coarse);
            assert_eq!(h.clock_tick_ns, tick);
            assert!(h.clock_note.is_empty());
        }
        _ => {
            assert_eq!(h.clock_source, ClockSource::Precise);
            assert!(!h.clock_note.is_empty());
        }
    }
    for _ in 0..100_000 {
        let id = g.next_id().unwrap();
        let now = SystemClock::read_ms();
        assert!(ms(&g, id) <= now, "an ID ahead of the precise clock");
    }
    let p = Generator::builder(8).build().unwrap();
    assert_eq!(p.health().clock_source, ClockSource::Precise);
}
