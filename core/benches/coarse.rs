//! The coarse clock source against the clock reads and the Rust peers, in one process
//! (`cargo bench -p polyflake --bench coarse`).
//!
//! Per-call figures on the layout 41/1/21 (2,097,152 IDs per ms, which a loop cannot spend, so
//! the sequence never forces a precise read), as in `benches/generator.rs`; the peers run their
//! own defaults (12 sequence bits): each call of theirs is what a user gets.

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
    // Nodes 0 and 1 are all 41/1/21 has: another epoch is another ID space.
    let mono = Generator::builder(0)
        .layout(wide())
        .epoch_ms(polyflake::DEFAULT_EPOCH_MS + 1)
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

criterion_group!(benches, per_call);
criterion_main!(benches);
