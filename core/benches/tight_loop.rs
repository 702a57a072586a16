//! One second of strict `next_id` in a tight loop on the default layout, on the system clock:
//! IDs per second against the layout's ceiling (4,096,000/s) and CPU seconds spent per wall
//! second. Strict mode sleeps to the next millisecond when one is spent, so it should reach the
//! ceiling without spinning a core. (`cargo bench -p polyflake --bench tight_loop`)

use polyflake::{Generator, Layout, Mode};
use std::time::{Duration, Instant};

fn cpu_seconds() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: valid out-pointer; CLOCK_PROCESS_CPUTIME_ID exists on Linux.
    unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut ts) };
    ts.tv_sec as f64 + ts.tv_nsec as f64 / 1e9
}

/// A peer's loop at the same layout's ceiling (4,096 a millisecond: the peers below use
/// 41/10/12 too): its IDs per second and CPU seconds per wall second.
fn run_peer(name: &str, seconds: f64, mut next: impl FnMut() -> u64) {
    let wall = Instant::now();
    let cpu = cpu_seconds();
    let mut n: u64 = 0;
    let limit = Duration::from_secs_f64(seconds);
    while wall.elapsed() < limit {
        for _ in 0..1024 {
            std::hint::black_box(next());
        }
        n += 1024;
    }
    let secs = wall.elapsed().as_secs_f64();
    println!(
        "{name}: {:.0} IDs/s, {:.3} CPU-s per wall-s",
        n as f64 / secs,
        (cpu_seconds() - cpu) / secs
    );
}

fn run(name: &str, g: &Generator, seconds: f64) {
    let ceiling = g.layout().ids_per_ms() as f64 * 1000.0;
    let wall = Instant::now();
    let cpu = cpu_seconds();
    let mut n: u64 = 0;
    let mut last = 0u64;
    let limit = Duration::from_secs_f64(seconds);
    while wall.elapsed() < limit {
        // Check the clock of the loop every 1,024 IDs only.
        for _ in 0..1024 {
            let id = g.next_id().expect("next_id");
            assert!(id > last, "out of order");
            last = id;
        }
        n += 1024;
    }
    let secs = wall.elapsed().as_secs_f64();
    let cpu = cpu_seconds() - cpu;
    let h = g.health();
    println!(
        "{name}: {:.0} IDs/s = {:.2}% of the {:.0}/s ceiling, {:.3} CPU-s per wall-s, {} exhaustion waits, {} sleeps, lead {} ms",
        n as f64 / secs,
        100.0 * n as f64 / secs / ceiling,
        ceiling,
        cpu / secs,
        h.sequence_exhaustions,
        h.wait_sleeps,
        h.lead_ms,
    );
}

fn main() {
    // `cargo bench` passes --bench; `cargo test --benches` passes nothing: run briefly then.
    let full = std::env::args().any(|a| a == "--bench");
    let secs = if full { 1.0 } else { 0.05 };
    run("strict 41/10/12", &Generator::strict(11).unwrap(), secs);
    run(
        "strict 41/10/12 on the coarse clock",
        &Generator::builder(13)
            .clock_source(polyflake::ClockSource::Coarse)
            .build()
            .unwrap(),
        secs,
    );
    // The peers at the same ceiling: how they wait for the next millisecond shows as CPU.
    let mut sf = snowflaked::Generator::new(1);
    run_peer("peer snowflaked::Generator (41/10/12)", secs, || {
        sf.generate::<u64>()
    });
    let mut rs = snowflake::SnowflakeIdGenerator::new(1, 1);
    run_peer(
        "peer rs-snowflake real_time_generate (41/5/5/12)",
        secs,
        || rs.real_time_generate() as u64,
    );
    run(
        "monotonic 41/10/12 (may run ahead)",
        &Generator::builder(12)
            .mode(Mode::Monotonic)
            .layout(Layout::DEFAULT)
            .max_lead_ms(None)
            .restart_guard(polyflake::RestartGuardOptions {
                mode: Some(polyflake::RestartGuard::Off),
                ..Default::default()
            })
            .build()
            .unwrap(),
        secs,
    );
}
