//! Property tests: random clocks (rewinds, freezes, jumps, bursts) and random call patterns, in
//! both modes. Whatever the clock does, a generator's IDs strictly increase and never repeat, and
//! in strict mode no ID's timestamp is ahead of the clock reading that issued it.

use polyflake::{Clock, ClockError, ClockSource, ErrorKind, Generator, Mode, DEFAULT_EPOCH_MS};
use proptest::prelude::*;
use std::collections::HashSet;
use std::sync::atomic::{AtomicI64, AtomicUsize, Ordering};
use std::sync::Arc;

/// A scripted clock that remembers its last reading, so the test knows which reading issued an ID.
struct Recording {
    values: Vec<i64>,
    next: AtomicUsize,
    last: AtomicI64,
}

impl Clock for Recording {
    fn now_ms(&self) -> Result<i64, ClockError> {
        let i = self.next.fetch_add(1, Ordering::SeqCst);
        let v = match self.values.get(i) {
            Some(v) => *v,
            None => self.last.load(Ordering::SeqCst) + 1,
        };
        self.last.store(v, Ordering::SeqCst);
        Ok(v)
    }
    // The coarse reading takes the next value too, rounded down to a 4 ms tick: never above the
    // reading it stands for (recorded as `last`, the reading that decided the ID).
    fn coarse_ms(&self) -> Result<i64, ClockError> {
        self.now_ms().map(|v| v - v.rem_euclid(4))
    }
    fn coarse_is_precise(&self) -> bool {
        false
    }
    // Each reading is a millisecond of elapsed time (like ScriptedClock), so a jump is a step.
    fn boot_ms(&self) -> i64 {
        self.next.load(Ordering::SeqCst) as i64
    }
    fn is_test_clock(&self) -> bool {
        true
    }
}

#[derive(Debug, Clone)]
enum Move {
    Tick(i64),     // forward 0..3 ms
    Freeze(usize), // same reading repeated
    Rewind(i64),   // back 1..700 ms
    Jump(i64),     // forward a lot
}

fn moves() -> impl Strategy<Value = Vec<Move>> {
    let one = prop_oneof![
        6 => (0i64..3).prop_map(Move::Tick),
        2 => (1usize..6000).prop_map(Move::Freeze),
        2 => (1i64..700).prop_map(Move::Rewind),
        1 => (10i64..100_000).prop_map(Move::Jump),
    ];
    prop::collection::vec(one, 1..40)
}

fn readings(moves: &[Move]) -> Vec<i64> {
    let mut t = DEFAULT_EPOCH_MS + 1_000_000;
    let mut out = vec![t];
    for m in moves {
        match m {
            Move::Tick(d) => {
                t += d;
                out.push(t)
            }
            Move::Freeze(n) => out.extend(std::iter::repeat(t).take(*n)),
            Move::Rewind(d) => {
                t -= d;
                out.push(t)
            }
            Move::Jump(d) => {
                t += d;
                out.push(t)
            }
        }
    }
    out
}

/// Calls: single IDs or batches of 1..5000.
fn calls() -> impl Strategy<Value = Vec<usize>> {
    prop::collection::vec(prop_oneof![4 => Just(1usize), 1 => 1usize..5000], 1..60)
}

fn run(
    mode: Mode,
    values: Vec<i64>,
    calls: &[usize],
    max_wait_ms: f64,
    source: ClockSource,
) -> Result<(), TestCaseError> {
    let clock = Arc::new(Recording {
        values,
        next: AtomicUsize::new(0),
        last: AtomicI64::new(0),
    });
    // These properties are about rewinds, freezes and bursts: forward jumps are taken as they
    // come (the forward-step guard has properties of its own below).
    let g = Generator::builder(513)
        .mode(mode)
        .max_wait_ms(max_wait_ms)
        .max_forward_step_ms(None)
        .clock_source(source)
        .shared_clock(clock.clone())
        .build()
        .unwrap();
    let mut seen = HashSet::new();
    let mut prev = None;
    let mut failed_batches = 0;
    for &n in calls {
        let mut buf = vec![0u64; n];
        let result = if n == 1 {
            g.next_id().map(|id| buf[0] = id)
        } else {
            g.next_ids(&mut buf)
        };
        match result {
            Ok(()) => {
                let reading = clock.last.load(Ordering::SeqCst);
                for id in &buf {
                    prop_assert!(prev.map_or(true, |p| *id > p), "not increasing");
                    prop_assert!(seen.insert(*id), "duplicate {}", id);
                    prev = Some(*id);
                    let d = g.decode(*id).unwrap();
                    prop_assert_eq!(d.node_id, 513);
                    if mode == Mode::Strict && n == 1 {
                        // Strict mode issues exactly at the reading that decided it.
                        prop_assert!(
                            d.timestamp_ms <= reading,
                            "{} ahead of {}",
                            d.timestamp_ms,
                            reading
                        );
                    }
                    if mode == Mode::Monotonic && n == 1 && source == ClockSource::Precise {
                        // The wall clock floors the logical clock (a coarse reading floors it
                        // at the tick, up to 3 ms below the precise one).
                        prop_assert!(d.timestamp_ms >= reading);
                    }
                    if mode == Mode::Monotonic && n == 1 && source == ClockSource::Coarse {
                        prop_assert!(d.timestamp_ms >= reading - 3);
                    }
                }
                if mode == Mode::Strict {
                    // A batch's last ID comes from the last reading, never ahead of it.
                    let last = g.decode(*buf.last().unwrap()).unwrap();
                    prop_assert!(last.timestamp_ms <= reading);
                }
            }
            Err(e) => {
                failed_batches += usize::from(n > 1);
                prop_assert_eq!(
                    mode,
                    Mode::Strict,
                    "monotonic mode never refuses here: {}",
                    e
                );
                prop_assert_eq!(e.kind(), ErrorKind::ClockMovedBackwards);
            }
        }
    }
    // A strict batch that fails part-way has reserved (and discarded) some IDs: they count as
    // issued, never as returned.
    let h = g.health();
    if failed_batches == 0 {
        prop_assert_eq!(h.ids_issued, seen.len() as u64, "ids_issued counter");
    } else {
        prop_assert!(h.ids_issued >= seen.len() as u64, "ids_issued counter");
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, failure_persistence: None, .. ProptestConfig::default() })]

    #[test]
    fn strict_ids_increase_never_repeat_never_lead(m in moves(), c in calls()) {
        // A zero budget refuses every rewind at once, and exhaustion waits at most 1 ms: fast.
        run(Mode::Strict, readings(&m), &c, 0.0, ClockSource::Precise)?;
    }

    #[test]
    fn strict_with_a_wait_budget(m in moves(), c in calls()) {
        run(Mode::Strict, readings(&m), &c, 2.0, ClockSource::Precise)?;
    }

    #[test]
    fn monotonic_ids_increase_never_repeat(m in moves(), c in calls()) {
        run(Mode::Monotonic, readings(&m), &c, 5.0, ClockSource::Precise)?;
    }

    // The same properties on the coarse source: strict never ahead of the reading
    // that decided an ID, never a repeat, every refusal a rewind's.
    #[test]
    fn coarse_strict_ids_increase_never_repeat_never_lead(m in moves(), c in calls()) {
        run(Mode::Strict, readings(&m), &c, 0.0, ClockSource::Coarse)?;
    }

    #[test]
    fn coarse_strict_with_a_wait_budget(m in moves(), c in calls()) {
        run(Mode::Strict, readings(&m), &c, 2.0, ClockSource::Coarse)?;
    }

    #[test]
    fn coarse_monotonic_ids_increase_never_repeat(m in moves(), c in calls()) {
        run(Mode::Monotonic, readings(&m), &c, 5.0, ClockSource::Coarse)?;
    }
}
