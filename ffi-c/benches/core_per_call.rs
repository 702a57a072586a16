//! The Rust core's per-call cost of `next_id`, measured the same way as `tests/c/bench.c`
//! measures `polyflake_next_id` through the C ABI, so `make bench-c` can report the ratio.
//!
//! Two setups that cannot hit the strict 2^sequence_bits-per-ms cap (which would measure sleeps,
//! not calls): strict on layout 41/1/21 (2,097,152 IDs per ms), and monotonic on the default
//! layout. Both on the system clock, each on the precise and on the coarse clock source; without
//! a lead limit and without a restart-guard mark (a flat-out monotonic loop passes the default
//! 5,000 ms lead, and a mark's R, within a second), in a host scope of this process's own, as
//! tests/c/bench.c makes its generators.

use polyflake_core::{
    Builder, ClockSource, Generator, Layout, Mode, RestartGuard, RestartGuardOptions,
};
use std::hint::black_box;
use std::time::Instant;

const CALLS: u64 = 5_000_000;
const ROUNDS: usize = 15;

fn per_call(g: &Generator) -> f64 {
    // Best of a few rounds: the least disturbed by other work on the machine.
    (0..ROUNDS)
        .map(|_| {
            let t = Instant::now();
            for _ in 0..CALLS {
                black_box(g.next_id().unwrap());
            }
            t.elapsed().as_secs_f64() * 1e9 / CALLS as f64
        })
        .fold(f64::INFINITY, f64::min)
}

fn builder(scope: &str) -> Builder {
    Generator::builder(1)
        .max_lead_ms(None)
        .restart_guard(RestartGuardOptions {
            mode: Some(RestartGuard::Off),
            ..RestartGuardOptions::default()
        })
        .host_scope(scope)
}

fn main() {
    let wide = Layout::new(41, 1, 21).unwrap();
    let scope = format!("bench-core-per-call-{}", std::process::id());
    for source in ClockSource::ALL {
        let strict = builder(&scope)
            .layout(wide)
            .clock_source(source)
            .build()
            .unwrap();
        println!(
            "rust core strict 41/1/21 {:7} next_id: {:.2} ns/call",
            strict.clock_source().name(),
            per_call(&strict)
        );
        drop(strict);
        let mono = builder(&scope)
            .mode(Mode::Monotonic)
            .clock_source(source)
            .build()
            .unwrap();
        println!(
            "rust core monotonic 41/10/12 {:7} next_id: {:.2} ns/call",
            mono.clock_source().name(),
            per_call(&mono)
        );
    }
}
