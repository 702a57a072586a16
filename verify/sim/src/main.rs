//! `polyflake-sim`: a fleet of real polyflake generators (default 1,024) on simulated clocks,
//! through NTP steps, a leap second (stepped, smeared, mixed), VM freezes, crashes and restarts
//! through the file lease's restart guard, and a blue-green deploy; in simulated time, so an
//! hour of a thousand nodes takes seconds. Every ID is kept and checked for duplicates; the run
//! fails if there is one.
//!
//! Writes `results.json` (every figure and the time series) and `report.md` (the table) into
//! `--out`; `verify/sim/plot.py` draws the pictures from `results.json`.

#![deny(missing_docs)]

mod clock;
mod fleet;
mod queue;
mod report;
mod rng;
mod scenario;
mod stats;

use clap::Parser;
use polyflake::Mode;
use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Instant;

/// Simulate a fleet of polyflake generators on simulated clocks through clock faults, crashes
/// and a blue-green deploy; report IDs, duplicates, refusals, availability, lead, ordering
/// inversions and lease slots per scenario and mode.
#[derive(Parser, Debug, Clone)]
#[command(name = "polyflake-sim", version)]
pub struct Args {
    /// Nodes in the fleet (a blue-green deploy runs twice as many for a while).
    #[arg(long, default_value_t = 1024, value_parser = clap::value_parser!(u32).range(1..=4096))]
    pub nodes: u32,
    /// Simulated hours per scenario (the 24 h smear scenario always spans 26 h).
    #[arg(long, default_value_t = 1.0, value_parser = parse_hours)]
    pub hours: f64,
    /// Seed of every random choice: the same seed gives the same run.
    #[arg(long, default_value_t = 19)]
    pub seed: u64,
    /// Mean requests per second per node (Poisson).
    #[arg(long, default_value_t = 5.0, value_parser = parse_rate)]
    pub rate: f64,
    /// Mean bursts per node per hour (1-3 ms at 4,097-8,192 requests per ms).
    #[arg(long, default_value_t = 0.2, value_parser = parse_per_hour)]
    pub bursts_per_hour: f64,
    /// Mean clock excursions per node per hour (1-500 ms ahead, stepped back at the next NTP
    /// poll).
    #[arg(long, default_value_t = 0.25, value_parser = parse_per_hour)]
    pub steps_per_hour: f64,
    /// Mean VM freezes per node per hour (0.1-30 s).
    #[arg(long, default_value_t = 0.25, value_parser = parse_per_hour)]
    pub freezes_per_hour: f64,
    /// Mean crashes per node per hour (crash-restart scenario).
    #[arg(long, default_value_t = 0.5, value_parser = parse_per_hour)]
    pub crashes_per_hour: f64,
    /// Scenarios to run (default: all): ntp, leap-step, leap-smear, leap-mixed, smear-24h,
    /// crash-restart, blue-green, blue-green-4096.
    #[arg(long, value_delimiter = ',')]
    pub scenarios: Vec<String>,
    /// Modes to run.
    #[arg(long, value_delimiter = ',', default_value = "strict,monotonic", value_parser = ["strict", "monotonic"])]
    pub modes: Vec<String>,
    /// Runs at once (each is single-threaded).
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u32).range(1..=64))]
    pub threads: u32,
    /// Where the lease directories go (default: /dev/shm if present, so fsync costs nothing).
    #[arg(long)]
    pub lease_root: Option<PathBuf>,
    /// Output directory for results.json and report.md.
    #[arg(long, default_value = "target/sim")]
    pub out: PathBuf,
    /// The command to quote in the report.
    #[arg(long, default_value = "make simulate")]
    pub command: String,
}

fn parse_positive(s: &str, max: f64, what: &str) -> Result<f64, String> {
    let v: f64 = s.parse().map_err(|_| format!("not a number: {s}"))?;
    if !(v.is_finite() && v > 0.0 && v <= max) {
        return Err(format!("{what} must be above 0 and at most {max}"));
    }
    Ok(v)
}

fn parse_hours(s: &str) -> Result<f64, String> {
    parse_positive(s, 48.0, "hours")
}

fn parse_rate(s: &str) -> Result<f64, String> {
    parse_positive(s, 10_000.0, "rate")
}

fn parse_per_hour(s: &str) -> Result<f64, String> {
    if s.trim() == "0" {
        return Ok(0.0);
    }
    parse_positive(s, 3_600.0, "a rate per hour")
}

/// A lease directory for one run, removed when dropped.
struct LeaseDir(PathBuf);

impl LeaseDir {
    fn new(root: &Path, name: &str) -> std::io::Result<LeaseDir> {
        let dir = root.join(format!("polyflake-sim-{}-{name}", std::process::id()));
        if dir.exists() {
            std::fs::remove_dir_all(&dir)?;
        }
        std::fs::create_dir_all(&dir)?;
        Ok(LeaseDir(dir))
    }
}

impl Drop for LeaseDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// CPU seconds (user + system) this process has used so far: the machine is shared, so the
/// report gives the rate per CPU-second beside the rate per wall-second.
fn cpu_seconds() -> f64 {
    // SAFETY: getrusage writes into the zeroed struct we pass; RUSAGE_SELF always exists.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut u) } != 0 {
        return 0.0;
    }
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    tv(u.ru_utime) + tv(u.ru_stime)
}

fn mode_name(m: Mode) -> &'static str {
    match m {
        Mode::Strict => "strict",
        Mode::Monotonic => "monotonic",
    }
}

fn main() {
    let args = Args::parse();
    std::process::exit(match run(&args) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("polyflake-sim: {e}");
            2
        }
    });
}

fn run(args: &Args) -> Result<i32, String> {
    let all = scenario::all(args.hours);
    for s in &args.scenarios {
        if !all.iter().any(|sc| sc.name == s) {
            let names: Vec<_> = all.iter().map(|sc| sc.name).collect();
            return Err(format!(
                "unknown scenario {s:?} (one of {})",
                names.join(", ")
            ));
        }
    }
    let modes: Vec<Mode> = args
        .modes
        .iter()
        .map(|m| {
            if m == "strict" {
                Mode::Strict
            } else {
                Mode::Monotonic
            }
        })
        .collect();
    let lease_root = args.lease_root.clone().unwrap_or_else(|| {
        let shm = PathBuf::from("/dev/shm");
        if shm.is_dir() {
            shm
        } else {
            std::env::temp_dir()
        }
    });
    let load = fleet::Load {
        rate_per_s: args.rate,
        bursts_per_h: args.bursts_per_hour,
        burst_ms: (1, 3),
        burst_per_ms: (4_097, 8_192),
        steps_per_h: args.steps_per_hour,
        freezes_per_h: args.freezes_per_hour,
        crashes_per_h: args.crashes_per_hour,
    };
    // The lease runs first: they cost the most (real file I/O), so two workers finish together.
    let mut jobs: Vec<(usize, Mode)> = all
        .iter()
        .enumerate()
        .filter(|(_, sc)| args.scenarios.is_empty() || args.scenarios.iter().any(|s| s == sc.name))
        .flat_map(|(i, _)| modes.iter().map(move |m| (i, *m)))
        .collect();
    jobs.sort_by_key(|(i, _)| (!all[*i].leases, std::cmp::Reverse(all[*i].blue_green)));
    let jobs: VecDeque<(usize, Mode)> = jobs.into();
    let total_jobs = jobs.len();
    println!(
        "polyflake-sim: {} runs ({} nodes, {} h each, seed {}, {} requests/s per node), {} at a time; lease directories under {}",
        total_jobs,
        args.nodes,
        args.hours,
        args.seed,
        args.rate,
        args.threads,
        lease_root.display()
    );
    let queue = Mutex::new(jobs);
    let results = Mutex::new(Vec::new());
    let started = Instant::now();
    std::thread::scope(|s| {
        for _ in 0..args.threads.min(total_jobs.max(1) as u32) {
            s.spawn(|| loop {
                let job = queue.lock().unwrap_or_else(|p| p.into_inner()).pop_front();
                let Some((idx, mode)) = job else { break };
                let sc = &all[idx];
                let r = run_one(sc, idx, mode, args, &load, &lease_root);
                match &r {
                    Ok(r) => println!(
                        "  {:<16} {:<9} {:>9.0} node-h in {:>5.1} s: {:>11} IDs, {} duplicates, {} refused",
                        r.scenario,
                        r.mode,
                        r.node_hours,
                        r.wall_s,
                        r.ids,
                        r.duplicates,
                        r.refused
                    ),
                    Err(e) => println!("  {} {}: {e}", sc.name, mode_name(mode)),
                }
                results.lock().unwrap_or_else(|p| p.into_inner()).push((idx, mode_name(mode), r));
            });
        }
    });
    let wall = started.elapsed().as_secs_f64();
    let cpu = cpu_seconds();
    let mut results = results.into_inner().unwrap_or_else(|p| p.into_inner());
    results.sort_by_key(|(i, m, _)| (*i, *m != "strict"));
    let mut ok = Vec::new();
    for (_, _, r) in results {
        ok.push(r?);
    }
    let node_hours: f64 = ok.iter().map(|r| r.node_hours).sum();
    let summary = report::Summary {
        command: args.command.clone(),
        nodes: args.nodes,
        hours: args.hours,
        seed: args.seed,
        rate: args.rate,
        bursts_per_hour: args.bursts_per_hour,
        steps_per_hour: args.steps_per_hour,
        freezes_per_hour: args.freezes_per_hour,
        crashes_per_hour: args.crashes_per_hour,
        wall_s: wall,
        node_hours,
        node_hours_per_s: node_hours / wall,
        cpu_s: cpu,
        node_hours_per_cpu_s: node_hours / cpu.max(1e-9),
        threads: args.threads,
        runs: ok,
    };
    std::fs::create_dir_all(&args.out).map_err(|e| format!("{}: {e}", args.out.display()))?;
    let json = serde_json::to_string(&summary).map_err(|e| e.to_string())?;
    let json_path = args.out.join("results.json");
    std::fs::write(&json_path, json).map_err(|e| format!("{}: {e}", json_path.display()))?;
    let md = report::markdown(&summary);
    let md_path = args.out.join("report.md");
    std::fs::write(&md_path, &md).map_err(|e| format!("{}: {e}", md_path.display()))?;
    println!();
    println!("{}", report::table(&summary));
    println!(
        "simulated {:.0} node-hours in {:.1} s of wall time: {:.0} simulated node-hours per second ({} runs, {} at a time; {:.1} CPU-s, {:.0} node-hours per CPU-second)",
        node_hours,
        wall,
        summary.node_hours_per_s,
        total_jobs,
        args.threads,
        cpu,
        summary.node_hours_per_cpu_s
    );
    println!("wrote {} and {}", json_path.display(), md_path.display());
    let dups: u64 = summary.runs.iter().map(|r| r.duplicates).sum();
    if dups > 0 {
        eprintln!("FAILED: {dups} duplicate IDs");
        return Ok(1);
    }
    if summary.runs.iter().any(|r| r.ids == 0) {
        eprintln!("FAILED: a run issued no ID");
        return Ok(1);
    }
    println!("duplicates: 0 in every run");
    Ok(0)
}

fn run_one(
    sc: &scenario::Scenario,
    idx: usize,
    mode: Mode,
    args: &Args,
    load: &fleet::Load,
    lease_root: &Path,
) -> Result<report::RunResult, String> {
    let t0 = Instant::now();
    let dir = if sc.leases {
        Some(
            LeaseDir::new(lease_root, &format!("{}-{}", sc.name, mode_name(mode)))
                .map_err(|e| format!("cannot make a lease directory: {e}"))?,
        )
    } else {
        None
    };
    let mut run = fleet::Run::new(
        sc,
        mode,
        args.nodes as usize,
        load.clone(),
        args.seed,
        idx as u64,
        dir.as_ref().map(|d| d.0.as_path()),
    );
    run.run();
    let mut stats = run.stats;
    let ids = stats.ids.len() as u64;
    let duplicates = stats::duplicates(&mut stats.ids);
    stats.ids = Vec::new();
    drop(dir);
    Ok(report::RunResult::new(
        sc,
        mode_name(mode),
        args.nodes,
        ids,
        duplicates,
        &stats,
        t0.elapsed().as_secs_f64(),
    ))
}
