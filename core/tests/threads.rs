//! Many threads hammering one generator on the system clock: no duplicate, and each thread's
//! IDs strictly increase.

use polyflake::{Generator, Layout, Mode};
use std::collections::HashSet;
use std::sync::Arc;

fn hammer(g: Arc<Generator>, threads: usize, per_thread: usize, batch: usize) {
    let before = g.health().ids_issued;
    let handles: Vec<_> = (0..threads)
        .map(|_| {
            let g = g.clone();
            std::thread::spawn(move || {
                let mut out = Vec::with_capacity(per_thread);
                let mut buf = vec![0u64; batch.max(1)];
                while out.len() < per_thread {
                    if batch <= 1 {
                        out.push(g.next_id().unwrap());
                    } else {
                        g.next_ids(&mut buf).unwrap();
                        out.extend_from_slice(&buf);
                    }
                }
                out
            })
        })
        .collect();
    let mut all = HashSet::new();
    for h in handles {
        let ids = h.join().unwrap();
        assert!(
            ids.windows(2).all(|w| w[0] < w[1]),
            "a thread's IDs went backwards"
        );
        for id in ids {
            assert!(all.insert(id), "duplicate {id}");
        }
    }
    assert_eq!(all.len(), threads * per_thread);
    assert_eq!(
        g.health().ids_issued - before,
        (threads * per_thread) as u64
    );
}

#[test]
fn eight_threads_strict_no_duplicates() {
    let g = Arc::new(Generator::strict(801).unwrap());
    hammer(g, 8, 100_000, 1);
}

#[test]
fn eight_threads_monotonic_no_duplicates() {
    let g = Arc::new(Generator::monotonic(802).unwrap());
    hammer(g, 8, 100_000, 1);
}

#[test]
fn eight_threads_mixing_batches_no_duplicates() {
    let g = Arc::new(
        Generator::builder(3)
            .layout(Layout::BIG_FLEET)
            .mode(Mode::Strict)
            .build()
            .unwrap(),
    );
    hammer(g.clone(), 4, 50_000, 1);
    hammer(g, 4, 50_000, 1000);
}

#[test]
fn process_guard_refuses_a_second_live_generator_with_the_same_node_id() {
    let first = Generator::strict(803).unwrap();
    let err = Generator::strict(803).unwrap_err();
    assert_eq!(err.kind(), polyflake::ErrorKind::NodeIdInUse);
    assert!(err.to_string().contains("share"));
    // A different layout or epoch is a different ID space.
    let _other = Generator::builder(803)
        .layout(Layout::BIG_FLEET)
        .build()
        .unwrap();
    // Injected clocks are independent of the rule.
    let _sim = Generator::builder(803)
        .clock(polyflake::ManualClock::new(1_704_067_200_000))
        .build()
        .unwrap();
    drop(first);
    // Dropping the first frees the node id.
    let _again = Generator::strict(803).unwrap();
}
