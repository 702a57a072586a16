//! UUIDv7 and ULID per call, beside the references in the same run
//! (`cargo bench -p polyflake --bench formats`): `uuid::Uuid::now_v7()` and the `ulid` crate's
//! monotonic `Generator::generate`.

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use polyflake::{format_ulid, format_uuid, ClockSource, TimeIdBuilder};

fn per_call(c: &mut Criterion) {
    let mut group = c.benchmark_group("formats");
    group.throughput(Throughput::Elements(1));
    group.bench_function("reference: uuid::Uuid::now_v7", |b| {
        b.iter(|| black_box(uuid::Uuid::now_v7()))
    });
    let u = TimeIdBuilder::new().build_uuid7().unwrap();
    group.bench_function("polyflake UUIDv7 strict (u128)", |b| {
        b.iter(|| black_box(u.next_uuid().unwrap()))
    });
    let uc = TimeIdBuilder::new()
        .clock_source(ClockSource::Coarse)
        .build_uuid7()
        .unwrap();
    group.bench_function("polyflake UUIDv7 strict coarse (u128)", |b| {
        b.iter(|| black_box(uc.next_uuid().unwrap()))
    });
    group.bench_function("reference: uuid now_v7 + to_string", |b| {
        b.iter(|| black_box(uuid::Uuid::now_v7().to_string()))
    });
    group.bench_function("polyflake UUIDv7 + format_uuid", |b| {
        b.iter(|| black_box(format_uuid(u.next_uuid().unwrap())))
    });
    let mut ug = ulid::Generator::new();
    group.bench_function("reference: ulid::Generator::generate", |b| {
        b.iter(|| black_box(ug.generate().unwrap()))
    });
    let l = TimeIdBuilder::new().build_ulid().unwrap();
    group.bench_function("polyflake ULID strict (u128)", |b| {
        b.iter(|| black_box(l.next_ulid().unwrap()))
    });
    group.bench_function("polyflake ULID + format_ulid", |b| {
        b.iter(|| black_box(format_ulid(l.next_ulid().unwrap())))
    });
    group.finish();
}

criterion_group!(benches, per_call);
criterion_main!(benches);
