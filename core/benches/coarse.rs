//! The coarse clock source against the clock reads and the Rust peers, in one process
//! (`cargo bench -p polyflake --bench coarse`).
//!
//! Per-call figures on the layout 41/1/21 (2,097,152 IDs per ms, which a loop cannot spend, so
//! the sequence never forces a precise read), as in `benches/generator.rs`; the peers run their
//! own defaults (12 sequence bits): each call of theirs is what a user gets.
//!
//! Before the timings it prints the timestamp lag each source costs: IDs minted one every
//! ~100 µs (a rate at which every call can take a fresh millisecond), each ID's timestamp
//! compared with a precise reading taken right after the call returned.

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use polyflake::{ClockSource, Generator, Layout, Mode, SystemClock};
use std::time::SystemTime;

fn wide() -> Layout {
    Layout::new(41, 1, 21).unwrap()
}

fn per_call(c: &mut Criterion) {
    let mut group = c.benchmark_group("coarse");
    group.throughput(Throughput::Elements(1));
    group.bench_function("SystemTime::now (reference)", |b| {
        b.iter(|| black_box(SystemTime::now()))
    });
    group.bench_function("profile: SystemClock::read_ms", |b| {
        b.iter(|| black_box(SystemClock::read_ms()))
    });
    group.bench_function("profile: SystemClock::read_coarse_ms", |b| {
        b.iter(|| black_box(SystemClock::read_coarse_ms()))
    });
    let precise = Generator::builder(0).layout(wide()).build().unwrap();
    group.bench_function("polyflake strict precise 41/1/21", |b| {
        b.iter(|| black_box(precise.next_id().unwrap()))
    });
    let coarse = Generator::builder(1)
        .layout(wide())
        .clock_source(ClockSource::Coarse)
        .build()
        .unwrap();
    assert_eq!(
        coarse.clock_source(),
        ClockSource::Coarse,
        "{}",
        coarse.health().clock_note
    );
    group.bench_function("polyflake strict coarse 41/1/21", |b| {
        b.iter(|| black_box(coarse.next_id().unwrap()))
    });
    // Nodes 0 and 1 are all 41/1/21 has: a scope of its own keeps this one apart on purpose
    // (its IDs are never compared with the others').
    let mono = Generator::builder(0)
        .layout(wide())
        .host_scope("bench-coarse-monotonic")
        .mode(Mode::Monotonic)
        .clock_source(ClockSource::Coarse)
        .build()
        .unwrap();
    group.bench_function("polyflake monotonic coarse 41/1/21", |b| {
        b.iter(|| black_box(mono.next_id().unwrap()))
    });
    let mut sf = snowflaked::Generator::new(1);
    group.bench_function("peer: snowflaked::Generator::generate (&mut)", |b| {
        b.iter(|| black_box(sf.generate::<u64>()))
    });
    let sfs = snowflaked::sync::Generator::new(2);
    group.bench_function("peer: snowflaked::sync::Generator::generate", |b| {
        b.iter(|| black_box(sfs.generate::<u64>()))
    });
    let mut rs = snowflake::SnowflakeIdGenerator::new(1, 1);
    group.bench_function("peer: rs-snowflake real_time_generate", |b| {
        b.iter(|| black_box(rs.real_time_generate()))
    });
    let mut rs2 = snowflake::SnowflakeIdGenerator::new(1, 2);
    group.bench_function("peer: rs-snowflake generate", |b| {
        b.iter(|| black_box(rs2.generate()))
    });
    group.finish();
}

/// Lag of an ID's timestamp behind the precise clock at its call, in ms: mean, p99 and max over
/// `n` IDs spaced ~100 µs apart.
fn lag(g: &Generator, n: usize) -> (f64, i64, i64) {
    let mut lags: Vec<i64> = (0..n)
        .map(|_| {
            let id = g.next_id().unwrap();
            let now = SystemClock::read_ms();
            let t = g.decode(id).unwrap().timestamp_ms;
            let until = std::time::Instant::now() + std::time::Duration::from_micros(100);
            while std::time::Instant::now() < until {
                std::hint::spin_loop();
            }
            now - t
        })
        .collect();
    lags.sort_unstable();
    let mean = lags.iter().sum::<i64>() as f64 / n as f64;
    (mean, lags[n * 99 / 100], lags[n - 1])
}

fn timestamp_lag(_: &mut Criterion) {
    let epoch = polyflake::DEFAULT_EPOCH_MS + 2;
    for source in ClockSource::ALL {
        let g = Generator::builder(0)
            .layout(wide())
            .epoch_ms(epoch)
            .clock_source(source)
            .build()
            .unwrap();
        let (mean, p99, max) = lag(&g, 20_000);
        println!(
            "timestamp lag, {} source (tick {} ns): mean {mean:.2} ms, p99 {p99} ms, max {max} ms",
            source.name(),
            g.health().clock_tick_ns
        );
    }
}

criterion_group!(benches, timestamp_lag, per_call);
criterion_main!(benches);
