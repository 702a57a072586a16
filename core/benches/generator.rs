//! Criterion benchmarks of the core (`cargo bench -p polyflake --bench generator`).
//!
//! Strict mode on the default layout is capped at 4,096 IDs per millisecond (244 ns per ID), so a
//! tight loop measures the cap, not the call. The per-call cost is therefore measured on the
//! layout 41/1/21 (2,097,152 IDs per ms, which a loop cannot spend), beside the clock read it
//! contains; the cap itself is measured by `benches/tight_loop.rs`.

use criterion::{black_box, criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use polyflake::{Generator, Layout, Mode, SystemClock};
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

fn wide() -> Layout {
    Layout::new(41, 1, 21).unwrap()
}

fn single(c: &mut Criterion) {
    let mut group = c.benchmark_group("next_id");
    group.throughput(Throughput::Elements(1));
    group.bench_function("SystemTime::now (reference)", |b| {
        b.iter(|| black_box(SystemTime::now()))
    });
    // The profile of strict next_id: the clock read it makes, then that read followed by one
    // compare-and-swap on a private atomic (the floor for any design with a CAS per ID).
    group.bench_function("profile: SystemClock::read_ms", |b| {
        b.iter(|| black_box(SystemClock::read_ms()))
    });
    let word = AtomicI64::new(0);
    group.bench_function("profile: read_ms + one CAS", |b| {
        b.iter(|| {
            let p = word.load(Ordering::Acquire);
            let next = (p + 1).max(SystemClock::read_ms() << 21);
            black_box(word.compare_exchange_weak(p, next, Ordering::AcqRel, Ordering::Relaxed))
        })
    });
    let strict = Generator::builder(0).layout(wide()).build().unwrap();
    group.bench_function("strict 41/1/21", |b| {
        b.iter(|| black_box(strict.next_id().unwrap()))
    });
    let mono = Generator::builder(1)
        .layout(wide())
        .mode(Mode::Monotonic)
        .build()
        .unwrap();
    group.bench_function("monotonic 41/1/21", |b| {
        b.iter(|| black_box(mono.next_id().unwrap()))
    });
    // No lead limit: a loop that mints flat out runs seconds ahead within a second (the
    // benchmark measures the call, not a rate the layout can hold).
    let mono_default = Generator::builder(1)
        .mode(Mode::Monotonic)
        .max_lead_ms(None)
        .restart_guard(polyflake::RestartGuardOptions {
            mode: Some(polyflake::RestartGuard::Off),
            ..Default::default()
        })
        .build()
        .unwrap();
    group.bench_function("monotonic 41/10/12", |b| {
        b.iter(|| black_box(mono_default.next_id().unwrap()))
    });
    group.finish();
}

fn batches(c: &mut Criterion) {
    let mut group = c.benchmark_group("next_ids");
    for n in [4_096usize, 1_000_000] {
        group.throughput(Throughput::Elements(n as u64));
        let mono = Generator::builder(2)
            .mode(Mode::Monotonic)
            .max_lead_ms(None)
            .restart_guard(polyflake::RestartGuardOptions {
                mode: Some(polyflake::RestartGuard::Off),
                ..Default::default()
            })
            .build()
            .unwrap();
        let mut buf = vec![0u64; n];
        group.bench_with_input(BenchmarkId::new("monotonic", n), &n, |b, _| {
            b.iter(|| mono.next_ids(black_box(&mut buf)).unwrap())
        });
    }
    // Strict batches wait into each next millisecond: 4,096 IDs fill at most one ms.
    let strict = Generator::strict(3).unwrap();
    let mut buf = vec![0u64; 4_096];
    group.throughput(Throughput::Elements(4_096));
    group.bench_function("strict/4096 (waits for the next ms)", |b| {
        b.iter(|| strict.next_ids(black_box(&mut buf)).unwrap())
    });
    group.finish();
}

fn two_threads(c: &mut Criterion) {
    let mut group = c.benchmark_group("two threads, one generator");
    group.throughput(Throughput::Elements(1));
    for (name, g) in [
        (
            "strict 41/1/21",
            Generator::builder(1).layout(wide()).build().unwrap(),
        ),
        (
            "monotonic 41/10/12",
            Generator::builder(4)
                .mode(Mode::Monotonic)
                .max_lead_ms(None)
                .restart_guard(polyflake::RestartGuardOptions {
                    mode: Some(polyflake::RestartGuard::Off),
                    ..Default::default()
                })
                .build()
                .unwrap(),
        ),
    ] {
        let g = Arc::new(g);
        group.bench_function(name, |b| {
            b.iter_custom(|iters| {
                let per = iters / 2 + 1;
                let start = Instant::now();
                let hs: Vec<_> = (0..2)
                    .map(|_| {
                        let g = g.clone();
                        std::thread::spawn(move || {
                            for _ in 0..per {
                                black_box(g.next_id().unwrap());
                            }
                        })
                    })
                    .collect();
                for h in hs {
                    h.join().unwrap();
                }
                // Wall time per ID issued by the pair.
                start.elapsed().mul_f64(iters as f64 / (2 * per) as f64)
            })
        });
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().measurement_time(Duration::from_secs(3)).warm_up_time(Duration::from_secs(1));
    targets = single, batches, two_threads
}
criterion_main!(benches);
