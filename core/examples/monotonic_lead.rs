//! How far a monotonic generator runs ahead of the wall clock, measured: the figures behind
//! `DEFAULT_MAX_LEAD_MS` (BENCHMARKS.md, "The monotonic lead"). Each row mints with no lead limit
//! on the system clock and reports the lead reached: one thread flat out for a few seconds (per
//! clock source), two threads, the largest batch one call may ask for, and a burst of batches.
//!
//! `cargo run --release -p polyflake --example monotonic_lead`

use polyflake::{ClockSource, Generator, Layout, Mode, MAX_BATCH};
use std::time::{Duration, Instant};

fn generator(node: u32, layout: Layout, source: ClockSource) -> Generator {
    Generator::builder(node)
        .mode(Mode::Monotonic)
        .layout(layout)
        .max_lead_ms(None)
        .clock_source(source)
        .restart_guard(polyflake::RestartGuardOptions {
            mode: Some(polyflake::RestartGuard::Off),
            ..Default::default()
        })
        .host_scope(format!("lead-{}", std::process::id()))
        .build()
        .unwrap()
}

fn flat_out(g: &Generator, threads: usize, secs: u64) -> (f64, i64) {
    let until = Instant::now() + Duration::from_secs(secs);
    let t = Instant::now();
    let n: u64 = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|_| {
                s.spawn(|| {
                    let mut n = 0u64;
                    while Instant::now() < until {
                        for _ in 0..4096 {
                            g.next_id().unwrap();
                        }
                        n += 4096;
                    }
                    n
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).sum()
    });
    let rate = n as f64 / t.elapsed().as_secs_f64();
    (rate, g.health().lead_ms)
}

fn main() {
    let secs = 5;
    println!("| case | IDs/s | lead after | lead per second |");
    println!("|---|---|---|---|");
    for (i, source) in [ClockSource::Precise, ClockSource::Coarse]
        .into_iter()
        .enumerate()
    {
        let g = generator(980 + i as u32, Layout::DEFAULT, source);
        let (rate, lead) = flat_out(&g, 1, secs);
        println!(
            "| one thread flat out, {}, 41/10/12 | {:.1} M | {lead} ms after {secs} s | {:.1} ms |",
            source.name(),
            rate / 1e6,
            lead as f64 / secs as f64
        );
    }
    let g = generator(982, Layout::DEFAULT, ClockSource::Coarse);
    let (rate, lead) = flat_out(&g, 2, secs);
    println!(
        "| two threads flat out, coarse, 41/10/12 | {:.1} M | {lead} ms after {secs} s | {:.1} ms |",
        rate / 1e6,
        lead as f64 / secs as f64
    );
    for layout in [
        Layout::DEFAULT,
        Layout::new(42, 8, 13).unwrap(),
        Layout::new(41, 12, 10).unwrap(),
    ] {
        let g = generator(200, layout, ClockSource::Precise);
        let mut buf = vec![0u64; MAX_BATCH];
        g.next_ids(&mut buf).unwrap();
        println!(
            "| one batch of MAX_BATCH ({MAX_BATCH}), {layout} | - | {} ms | - |",
            g.health().lead_ms
        );
    }
    let g = generator(984, Layout::DEFAULT, ClockSource::Precise);
    let mut buf = vec![0u64; 100_000];
    for _ in 0..100 {
        g.next_ids(&mut buf).unwrap();
    }
    println!(
        "| 100 batches of 100,000 back to back, 41/10/12 | - | {} ms | - |",
        g.health().lead_ms
    );
}
