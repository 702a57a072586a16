//! The Rust rows of `make bench-check`: each of the core's per-call paths as a ratio to a
//! reference measured in the same run, interleaved with it round by round (so a machine whose
//! load changes moves both), the median of the rounds. Prints one JSON object per row:
//! `{"row": ..., "ns": ..., "reference": ..., "reference_ns": ..., "ratio": ...}`.
//!
//! `cargo bench -p polyflake --bench check` (`-- --quick` for fewer rounds)

use polyflake::{
    ClockSource, Generator, Layout, Mode, RestartGuard, RestartGuardOptions, TimeIdBuilder,
};
use std::hint::black_box;
use std::time::{Instant, SystemTime};

/// Time `n` calls of `f`, in ns per call (generic: the call inlines into the loop, so neither
/// the reference nor the row pays an indirect call the other does not).
#[inline(never)]
fn per_call<F: FnMut()>(n: u64, f: &mut F) -> f64 {
    let t = Instant::now();
    for _ in 0..n {
        f();
    }
    t.elapsed().as_nanos() as f64 / n as f64
}

/// How many calls of `f` take about `ms` milliseconds.
fn calibrate<F: FnMut()>(f: &mut F, ms: f64) -> u64 {
    let mut n = 1_000u64;
    loop {
        let ns = per_call(n, f);
        if ns * n as f64 > 5e6 || n > 1 << 30 {
            return ((ms * 1e6 / ns) as u64).max(1_000);
        }
        n *= 4;
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

struct Row<'a> {
    row: &'a str,
    reference: &'a str,
    per_item: u64,
}

/// `rounds` rounds of (reference, subject), each about 20 ms; the median ns of each and the
/// median of the rounds' ratios. `per_item` divides the subject's time (a batch's IDs).
fn measure<R: FnMut(), S: FnMut()>(row: Row, rounds: usize, reference: &mut R, subject: &mut S) {
    let nr = calibrate(reference, 20.0);
    let ns = calibrate(subject, 20.0);
    // Warm both.
    per_call(nr, reference);
    per_call(ns, subject);
    let (mut r_ns, mut s_ns, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..rounds {
        let r = per_call(nr, reference);
        let s = per_call(ns, subject) / row.per_item as f64;
        r_ns.push(r);
        s_ns.push(s);
        ratios.push(s / r);
    }
    println!(
        "{{\"row\": \"{}\", \"ns\": {:.3}, \"reference\": \"{}\", \"reference_ns\": {:.3}, \"ratio\": {:.4}}}",
        row.row,
        median(s_ns),
        row.reference,
        median(r_ns),
        median(ratios)
    );
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let rounds = if quick { 5 } else { 11 };
    let wide = Layout::new(41, 1, 21).unwrap();
    let now = || {
        black_box(SystemTime::now());
    };
    let scope = format!("bench-check-{}", std::process::id());
    // No mark on the host: a mark's R (one reserve ahead) bounds a monotonic lead too, and a loop
    // flat out runs past it within a second. The hot path is the same with or without one.
    let no_mark = || RestartGuardOptions {
        mode: Some(RestartGuard::Off),
        ..RestartGuardOptions::default()
    };
    // The single-ID paths, on 41/1/21 (2,097,152 IDs a millisecond: a strict loop never waits
    // for the next millisecond) and, for monotonic mode, the default layout without a lead
    // limit (the call, not a sustainable rate).
    for (row, mode, source, layout, node) in [
        (
            "rust strict precise next_id",
            Mode::Strict,
            ClockSource::Precise,
            wide,
            0,
        ),
        (
            "rust strict coarse next_id",
            Mode::Strict,
            ClockSource::Coarse,
            wide,
            1,
        ),
        (
            "rust monotonic precise next_id",
            Mode::Monotonic,
            ClockSource::Precise,
            Layout::DEFAULT,
            2,
        ),
        (
            "rust monotonic coarse next_id",
            Mode::Monotonic,
            ClockSource::Coarse,
            Layout::DEFAULT,
            3,
        ),
    ] {
        let g = Generator::builder(node)
            .mode(mode)
            .layout(layout)
            .clock_source(source)
            .max_lead_ms(None)
            .restart_guard(no_mark())
            .host_scope(scope.clone())
            .build()
            .unwrap();
        measure(
            Row {
                row,
                reference: "SystemTime::now",
                per_item: 1,
            },
            rounds,
            &mut now.clone(),
            &mut || {
                black_box(g.next_id().unwrap());
            },
        );
    }
    // A batch per ID (monotonic, default layout) against one clock read.
    let g = Generator::builder(4)
        .mode(Mode::Monotonic)
        .max_lead_ms(None)
        .restart_guard(no_mark())
        .host_scope(scope.clone())
        .build()
        .unwrap();
    let mut buf = vec![0u64; 4096];
    measure(
        Row {
            row: "rust monotonic next_ids(4096) per ID",
            reference: "SystemTime::now",
            per_item: 4096,
        },
        rounds,
        &mut now.clone(),
        &mut || g.next_ids(black_box(&mut buf)).unwrap(),
    );
    // The 128-bit formats against their crates' own.
    let u = TimeIdBuilder::new().build_uuid7().unwrap();
    measure(
        Row {
            row: "rust uuid7 next_uuid",
            reference: "uuid::Uuid::now_v7",
            per_item: 1,
        },
        rounds,
        &mut || {
            black_box(uuid::Uuid::now_v7());
        },
        &mut || {
            black_box(u.next_uuid().unwrap());
        },
    );
    let l = TimeIdBuilder::new().build_ulid().unwrap();
    let mut reference = ulid::Generator::new();
    measure(
        Row {
            row: "rust ulid next_ulid",
            reference: "ulid::Generator::generate",
            per_item: 1,
        },
        rounds,
        &mut || {
            black_box(reference.generate().unwrap());
        },
        &mut || {
            black_box(l.next_ulid().unwrap());
        },
    );
}
