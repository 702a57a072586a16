//! Model check of the compare-and-swap step with loom: every interleaving of 2 to 3 threads on
//! one generator. Run with `RUSTFLAGS="--cfg loom" cargo test -p polyflake-loom --test loom --release`
//! (`make loom`); without `--cfg loom` this file is empty.
#![cfg(loom)]

use loom::sync::Arc;
use loom::thread;
use polyflake::{Generator, Layout, ManualClock, Mode, DEFAULT_EPOCH_MS};
use std::collections::HashSet;

/// Run `per_thread` calls on each of `threads` threads; return each thread's results.
fn race<F>(threads: usize, per_thread: usize, g: Arc<Generator>, call: F) -> Vec<Vec<Option<u64>>>
where
    F: Fn(&Generator) -> Option<u64> + Send + Sync + Copy + 'static,
{
    let handles: Vec<_> = (0..threads)
        .map(|_| {
            let g = g.clone();
            thread::spawn(move || (0..per_thread).map(|_| call(&g)).collect::<Vec<_>>())
        })
        .collect();
    handles.into_iter().map(|h| h.join().unwrap()).collect()
}

fn check_unique_and_per_thread_increasing(results: &[Vec<Option<u64>>]) -> usize {
    let mut all = HashSet::new();
    for per in results {
        let ids: Vec<u64> = per.iter().flatten().copied().collect();
        assert!(ids.windows(2).all(|w| w[0] < w[1]), "per-thread order");
        for id in ids {
            assert!(all.insert(id), "duplicate {id}");
        }
    }
    all.len()
}

#[test]
fn monotonic_two_threads_carry_across_milliseconds() {
    loom::model(|| {
        // One sequence bit: two IDs per millisecond, so four calls must carry into the next ms.
        let layout = Layout::new(41, 21, 1).unwrap();
        let g = Arc::new(
            Generator::builder(5)
                .mode(Mode::Monotonic)
                .layout(layout)
                .clock(ManualClock::new(DEFAULT_EPOCH_MS + 10))
                .build()
                .unwrap(),
        );
        let results = race(2, 2, g.clone(), |g| Some(g.next_id().unwrap()));
        assert_eq!(check_unique_and_per_thread_increasing(&results), 4);
        assert_eq!(g.health().ids_issued, 4);
    });
}

#[test]
fn monotonic_three_threads() {
    loom::model(|| {
        let layout = Layout::new(41, 21, 1).unwrap();
        let g = Arc::new(
            Generator::builder(6)
                .mode(Mode::Monotonic)
                .layout(layout)
                .clock(ManualClock::new(DEFAULT_EPOCH_MS + 10))
                .build()
                .unwrap(),
        );
        let results = race(3, 1, g, |g| Some(g.next_id().unwrap()));
        assert_eq!(check_unique_and_per_thread_increasing(&results), 3);
    });
}

#[test]
fn strict_never_over_issues_a_frozen_millisecond() {
    loom::model(|| {
        // Two sequence bits: exactly four IDs fit the frozen millisecond. Six attempts from three
        // threads: four IDs, two "would wait", never a fifth ID and never a duplicate.
        let layout = Layout::new(41, 20, 2).unwrap();
        let g = Arc::new(
            Generator::builder(7)
                .layout(layout)
                .clock(ManualClock::new(DEFAULT_EPOCH_MS + 10))
                .build()
                .unwrap(),
        );
        let results = race(3, 2, g.clone(), |g| g.try_next_id().unwrap());
        assert_eq!(check_unique_and_per_thread_increasing(&results), 4);
        for id in results.iter().flatten().flatten() {
            assert_eq!(g.decode(*id).unwrap().timestamp_ms, DEFAULT_EPOCH_MS + 10);
        }
    });
}

#[test]
fn monotonic_batch_and_single_interleave() {
    loom::model(|| {
        let layout = Layout::new(41, 20, 2).unwrap();
        let g = Arc::new(
            Generator::builder(8)
                .mode(Mode::Monotonic)
                .layout(layout)
                .clock(ManualClock::new(DEFAULT_EPOCH_MS + 10))
                .build()
                .unwrap(),
        );
        let g2 = g.clone();
        let batch = thread::spawn(move || {
            let mut buf = [0u64; 3];
            g2.next_ids(&mut buf).unwrap();
            buf
        });
        let single = g.next_id().unwrap();
        let buf = batch.join().unwrap();
        assert!(buf.windows(2).all(|w| w[1] == w[0] + 1 || w[1] > w[0]));
        assert!(!buf.contains(&single));
    });
}
