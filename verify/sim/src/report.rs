//! The figures of a run, the table and the markdown report.

use crate::clock::{US_PER_MS, US_PER_S};
use crate::scenario::Scenario;
use crate::stats::{Counts, Coverage, RunStats, ZOOM_BIN_US};
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt::Write;

/// A time series of one run, for the pictures.
#[derive(Debug, Serialize)]
pub struct Series {
    /// Start of each bin: seconds into the run (run series) or ms from the leap (zoom).
    pub t: Vec<f64>,
    /// Share of present node-time able to issue (not refusing, frozen or down).
    pub availability: Vec<f64>,
    /// Share of present node-time whose generator refuses.
    pub refusing: Vec<f64>,
    /// IDs issued.
    pub ids: Vec<u64>,
    /// Calls refused.
    pub refused: Vec<u64>,
    /// Requests with no running generator.
    pub unserved: Vec<u64>,
    /// Largest lead of an ID over its node's wall clock, ms.
    pub lead_max: Vec<i64>,
    /// Mean lead, ms.
    pub lead_mean: Vec<f64>,
    /// Nodes present (mean over the bin).
    pub nodes: Vec<f64>,
    /// Lease slots held (the most in the bin; run series only).
    pub slots: Vec<u64>,
}

fn series(
    t: Vec<f64>,
    width_us: i64,
    present: &[i64],
    cov: [&[i64]; 3],
    counts: &Counts,
    slots: Vec<u64>,
) -> Series {
    let n = t.len();
    let mut s = Series {
        t,
        availability: Vec::with_capacity(n),
        refusing: Vec::with_capacity(n),
        ids: counts.ids.clone(),
        refused: counts.refused.clone(),
        unserved: counts.unserved.clone(),
        lead_max: counts.lead_max.clone(),
        lead_mean: Vec::with_capacity(n),
        nodes: Vec::with_capacity(n),
        slots,
    };
    for k in 0..n {
        let p = present[k] as f64;
        let [refusing, frozen, down] = cov;
        let bad = (refusing[k] + frozen[k] + down[k]) as f64;
        s.availability
            .push(if p > 0.0 { 1.0 - bad / p } else { 1.0 });
        s.refusing
            .push(if p > 0.0 { refusing[k] as f64 / p } else { 0.0 });
        s.lead_mean.push(if counts.ids[k] > 0 {
            counts.lead_sum[k] as f64 / counts.ids[k] as f64
        } else {
            0.0
        });
        s.nodes.push(p / width_us as f64);
    }
    s
}

/// Every figure of one run of one scenario in one mode.
#[derive(Debug, Serialize)]
pub struct RunResult {
    /// Scenario name.
    pub scenario: String,
    /// What it shows.
    pub about: String,
    /// `strict` or `monotonic`.
    pub mode: String,
    /// Nodes (lanes of load); a blue-green deploy has twice as many instances for a while.
    pub nodes: u32,
    /// The layout, `41/10/12`.
    pub layout: String,
    /// Node ids the layout has.
    pub node_ids: u64,
    /// Simulated hours.
    pub hours: f64,
    /// Simulated node-hours (instances present x time).
    pub node_hours: f64,
    /// Wall seconds the run took (simulation and uniqueness check).
    pub wall_s: f64,
    /// IDs issued, all kept and checked.
    pub ids: u64,
    /// IDs issued more than once (must be 0).
    pub duplicates: u64,
    /// Requests that arrived.
    pub requests: u64,
    /// Calls refused by a generator, and by error code.
    pub refused: u64,
    /// See `refused`.
    pub refused_by: BTreeMap<&'static str, u64>,
    /// Requests that found no running generator (frozen VM, crashed or not yet started).
    pub unserved: u64,
    /// Share of node-time whose generator refused, fleet-wide.
    pub refusing_share: f64,
    /// The largest share of its own time one node spent refusing.
    pub refusing_share_worst_node: f64,
    /// Nodes that refused at some point.
    pub nodes_refusing: u64,
    /// Share of node-time frozen, and down (crashed, restarting or without a slot).
    pub frozen_share: f64,
    /// See `frozen_share`.
    pub down_share: f64,
    /// Fleet availability (share of present node-time able to issue) in the worst run bin.
    pub availability_min: f64,
    /// The same in the worst 10 ms around the leap second (leap scenarios).
    pub availability_min_leap: Option<f64>,
    /// Milliseconds around the leap second during which fewer than half the nodes could issue.
    pub leap_outage_ms: Option<f64>,
    /// Requests that waited (strict) and the longest wait, ms.
    pub waited: u64,
    /// See `waited`.
    pub wait_max_ms: f64,
    /// The largest lead of an ID over its node's wall clock, and the mean, ms.
    pub lead_max_ms: i64,
    /// See `lead_max_ms`.
    pub lead_mean_ms: f64,
    /// IDs smaller than one issued earlier by another node; of them, a millisecond or more
    /// smaller; the largest such gap.
    pub inversions: u64,
    /// See `inversions`.
    pub inversions_ms: u64,
    /// See `inversions`.
    pub inversion_worst_ms: u64,
    /// Inversions of 10 ms or more, and of 100 ms or more.
    pub inversions_10ms: u64,
    /// See `inversions_10ms`.
    pub inversions_100ms: u64,
    /// Lease slots held at the peak.
    pub slots_peak: u64,
    /// Fault and lease counts.
    pub bursts: u64,
    /// See `bursts`.
    pub ntp_steps: u64,
    /// See `bursts`.
    pub ntp_step_max_ms: i64,
    /// See `bursts`.
    pub freezes: u64,
    /// See `bursts`.
    pub crashes: u64,
    /// See `bursts`.
    pub lease_starts: u64,
    /// Generators that could not be built, by error code.
    pub start_failures: BTreeMap<&'static str, u64>,
    /// Restarts that found a predecessor's R ahead of the clock, and the longest wait, ms.
    pub guard_waits: u64,
    /// See `guard_waits`.
    pub guard_wait_max_ms: u64,
    /// Renewals of R.
    pub renewals: u64,
    /// See `renewals`.
    pub renew_failures: u64,
    /// Green instances ready at the cutover.
    pub cutover_ready: u64,
    /// The run's time series (720 bins).
    pub series: Series,
    /// 10 ms bins from 2 s before to 4 s after the leap second (leap scenarios).
    pub leap_series: Option<Series>,
}

fn share(a: i64, b: i64) -> f64 {
    if b > 0 {
        a as f64 / b as f64
    } else {
        0.0
    }
}

impl RunResult {
    /// Collect the figures of a finished run.
    pub fn new(
        sc: &Scenario,
        mode: &str,
        nodes: u32,
        ids: u64,
        duplicates: u64,
        st: &RunStats,
        wall_s: f64,
    ) -> RunResult {
        let bin = st.bin_us();
        let run_t: Vec<f64> = (0..st.present.bins.len())
            .map(|k| (k as i64 * bin) as f64 / US_PER_S as f64)
            .collect();
        let cov = |c: &Coverage, zoom: bool| -> Vec<i64> {
            if zoom {
                c.zoom.clone()
            } else {
                c.bins.clone()
            }
        };
        let make = |zoom: bool, t: Vec<f64>, width: i64, counts: &Counts, slots: Vec<u64>| {
            series(
                t,
                width,
                &cov(&st.present, zoom),
                [
                    &cov(&st.refusing, zoom),
                    &cov(&st.frozen, zoom),
                    &cov(&st.down, zoom),
                ],
                counts,
                slots,
            )
        };
        let run_series = make(false, run_t, bin, &st.counts, st.slots_series.clone());
        let leap_series = (!st.present.zoom.is_empty()).then(|| {
            let t = (0..st.present.zoom.len())
                .map(|k| (-2 * US_PER_S + k as i64 * ZOOM_BIN_US) as f64 / US_PER_MS as f64)
                .collect();
            make(true, t, ZOOM_BIN_US, &st.zoom_counts, Vec::new())
        });
        let availability_min = run_series
            .availability
            .iter()
            .zip(&run_series.nodes)
            .filter(|(_, n)| **n > 0.0)
            .map(|(a, _)| *a)
            .fold(1.0, f64::min);
        let availability_min_leap = leap_series
            .as_ref()
            .map(|s| s.availability.iter().copied().fold(1.0, f64::min));
        let leap_outage_ms = leap_series.as_ref().map(|s| {
            s.availability.iter().filter(|a| **a < 0.5).count() as f64 * ZOOM_BIN_US as f64
                / US_PER_MS as f64
        });
        let layout = sc.layout;
        RunResult {
            scenario: sc.name.to_string(),
            about: sc.about.to_string(),
            mode: mode.to_string(),
            nodes,
            layout: format!(
                "{}/{}/{}",
                layout.timestamp_bits(),
                layout.node_bits(),
                layout.sequence_bits()
            ),
            node_ids: layout.max_node_id() + 1,
            hours: sc.length_us as f64 / 3_600e6,
            node_hours: st.present.total as f64 / 3_600e6,
            wall_s,
            ids,
            duplicates,
            requests: st.requests,
            refused: st.refused_total(),
            refused_by: st.refused_by.clone(),
            unserved: st.unserved_total,
            refusing_share: share(st.refusing.total, st.present.total),
            refusing_share_worst_node: st.node_refusing_share.iter().copied().fold(0.0, f64::max),
            nodes_refusing: st.node_refusing_share.iter().filter(|s| **s > 0.0).count() as u64,
            frozen_share: share(st.frozen.total, st.present.total),
            down_share: share(st.down.total, st.present.total),
            availability_min,
            availability_min_leap,
            leap_outage_ms,
            waited: st.waited_n,
            wait_max_ms: st.waited_max_us as f64 / US_PER_MS as f64,
            lead_max_ms: st.lead_max_ms,
            lead_mean_ms: if ids > 0 {
                st.lead_sum_ms as f64 / ids as f64
            } else {
                0.0
            },
            inversions: st.inversions,
            inversions_ms: st.inversions_ms,
            inversion_worst_ms: st.inversion_worst_ms,
            inversions_10ms: st.inversions_10ms,
            inversions_100ms: st.inversions_100ms,
            slots_peak: st.slots_peak,
            bursts: st.bursts,
            ntp_steps: st.ntp_steps,
            ntp_step_max_ms: st.ntp_step_max_ms,
            freezes: st.freezes,
            crashes: st.crashes,
            lease_starts: st.starts,
            start_failures: st.start_failures.clone(),
            guard_waits: st.guard_waits,
            guard_wait_max_ms: st.guard_wait_max_ms,
            renewals: st.renewals,
            renew_failures: st.renew_failures,
            cutover_ready: st.cutover_ready,
            series: run_series,
            leap_series,
        }
    }
}

/// The whole invocation.
#[derive(Debug, Serialize)]
pub struct Summary {
    /// The command to quote.
    pub command: String,
    /// Parameters.
    pub nodes: u32,
    /// See `nodes`.
    pub hours: f64,
    /// See `nodes`.
    pub seed: u64,
    /// See `nodes`.
    pub rate: f64,
    /// See `nodes`.
    pub bursts_per_hour: f64,
    /// See `nodes`.
    pub steps_per_hour: f64,
    /// See `nodes`.
    pub freezes_per_hour: f64,
    /// See `nodes`.
    pub crashes_per_hour: f64,
    /// Wall seconds for everything, node-hours simulated, and their ratio.
    pub wall_s: f64,
    /// See `wall_s`.
    pub node_hours: f64,
    /// See `wall_s`.
    pub node_hours_per_s: f64,
    /// CPU seconds used (user + system, every thread) and node-hours per CPU-second.
    pub cpu_s: f64,
    /// See `cpu_s`.
    pub node_hours_per_cpu_s: f64,
    /// Runs at once.
    pub threads: u32,
    /// Every run, scenario by scenario, strict first.
    pub runs: Vec<RunResult>,
}

fn pct(x: f64) -> String {
    if x == 0.0 {
        "0".to_string()
    } else if x >= 0.001 {
        format!("{:.2}%", 100.0 * x)
    } else {
        format!("{:.4}%", 100.0 * x)
    }
}

fn thousands(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// The main table, in markdown.
pub fn table(s: &Summary) -> String {
    let mut t = String::new();
    t.push_str("| scenario | mode | node-h | IDs | dup | refused calls | refusing time: fleet / worst node | lowest fleet availability (5 s bin; 10 ms at the leap) | worst lead | inversions >= 1 ms / >= 100 ms (share of IDs); worst | slots peak / node ids |\n");
    t.push_str("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n");
    for r in &s.runs {
        let refused = if r.refused == 0 {
            "0".to_string()
        } else {
            let kinds: Vec<String> = r
                .refused_by
                .iter()
                .map(|(k, v)| format!("{} {}", thousands(*v), k))
                .collect();
            format!(
                "{} ({})",
                pct(r.refused as f64 / r.requests.max(1) as f64),
                kinds.join(", ")
            )
        };
        let leap = match r.availability_min_leap {
            Some(a) => format!("{}; {}", pct(r.availability_min), pct(a)),
            None => pct(r.availability_min),
        };
        let slots = if r.lease_starts > 0 {
            format!("{} / {}", thousands(r.slots_peak), thousands(r.node_ids))
        } else {
            format!("static / {}", thousands(r.node_ids))
        };
        let _ = writeln!(
            t,
            "| {} | {} | {} | {} | {} | {} | {} / {} | {} | {} ms | {} / {}; {} ms | {} |",
            r.scenario,
            r.mode,
            thousands(r.node_hours.round() as u64),
            thousands(r.ids),
            r.duplicates,
            refused,
            pct(r.refusing_share),
            pct(r.refusing_share_worst_node),
            leap,
            r.lead_max_ms,
            pct(r.inversions_ms as f64 / r.ids.max(1) as f64),
            pct(r.inversions_100ms as f64 / r.ids.max(1) as f64),
            r.inversion_worst_ms,
            slots
        );
    }
    t
}

fn find<'a>(s: &'a Summary, scenario: &str, mode: &str) -> Option<&'a RunResult> {
    s.runs
        .iter()
        .find(|r| r.scenario == scenario && r.mode == mode)
}

fn verdict(ok: bool) -> &'static str {
    if ok {
        "**confirmed**"
    } else {
        "**contradicted**"
    }
}

/// The claims about clock faults beside this run's numbers (those whose scenarios ran).
pub fn claims(s: &Summary) -> Vec<(String, String, String)> {
    let mut out = Vec::new();
    if let (Some(st), Some(sm)) = (
        find(s, "leap-step", "strict"),
        find(s, "leap-smear", "strict"),
    ) {
        let outage = st.leap_outage_ms.unwrap_or(0.0);
        let low = st.availability_min_leap.unwrap_or(1.0);
        out.push((
            "\"1 s leap second -> 1 s of errors from every node at once\" (strict, stepped)".into(),
            format!(
                "fleet availability fell to {} (10 ms bins); under half the fleet could issue for {:.0} ms; {} of {} nodes refused",
                pct(low),
                outage,
                st.nodes_refusing,
                st.nodes
            ),
            verdict(low < 0.1 && (700.0..=1_100.0).contains(&outage)).into(),
        ));
        let smear_low = sm.availability_min_leap.unwrap_or(1.0);
        out.push((
            "\"a smeared one is a non-event\" (strict, smeared)".into(),
            format!(
                "{} refused calls, lowest availability {} around midnight, worst inversion {} ms",
                thousands(sm.refused),
                pct(smear_low),
                sm.inversion_worst_ms
            ),
            verdict(sm.refused == 0 && smear_low >= 0.999).into(),
        ));
    }
    if let Some(sm24) = find(s, "smear-24h", "strict") {
        out.push((
            "a fully smeared fleet cannot have a leap-second rewind at all (the whole 24 h)".into(),
            format!(
                "{} IDs over {} node-hours, {} refused calls, {} waits",
                thousands(sm24.ids),
                thousands(sm24.node_hours.round() as u64),
                thousands(sm24.refused),
                thousands(sm24.waited)
            ),
            verdict(sm24.refused == 0).into(),
        ));
    }
    if let (Some(ms), Some(mm)) = (
        find(s, "leap-step", "monotonic"),
        find(s, "leap-smear", "monotonic"),
    ) {
        out.push((
            "monotonic mode rides through either by running ahead".into(),
            format!(
                "stepped: {} refused, worst lead {} ms; smeared: {} refused, worst lead {} ms",
                thousands(ms.refused),
                ms.lead_max_ms,
                thousands(mm.refused),
                mm.lead_max_ms
            ),
            verdict(ms.refused == 0 && mm.refused == 0 && ms.lead_max_ms >= 900).into(),
        ));
    }
    if let (Some(mx), Some(sm), Some(st)) = (
        find(s, "leap-mixed", "monotonic"),
        find(s, "leap-smear", "monotonic"),
        find(s, "leap-step", "monotonic"),
    ) {
        let share = |r: &RunResult| r.inversions_100ms as f64 / r.ids.max(1) as f64;
        out.push((
            "\"never mix smeared and unsmeared NTP sources\": up to 0.5 s apart, harmless for uniqueness, terrible for comparing timestamps across nodes".into(),
            format!(
                "mixed fleet: {} duplicates, {} of its IDs sort 100 ms or more before an ID issued earlier (all smeared: {}; all stepped: {}, only at the step)",
                mx.duplicates,
                pct(share(mx)),
                pct(share(sm)),
                pct(share(st))
            ),
            verdict(mx.duplicates == 0 && share(mx) > 0.1 && share(sm) < 0.001).into(),
        ));
    }
    if let Some(n) = find(s, "ntp", "strict") {
        out.push((
            "\"300 ms NTP step -> 300 ms of errors from that node\": uncorrelated, so the fleet degrades gracefully".into(),
            format!(
                "{} steps back (largest {} ms) and {} freezes; fleet refusing time {}, worst node {}; the worst 5 s of the fleet still had {} available",
                n.ntp_steps,
                n.ntp_step_max_ms,
                n.freezes,
                pct(n.refusing_share),
                pct(n.refusing_share_worst_node),
                pct(n.availability_min)
            ),
            verdict(n.availability_min > 0.9).into(),
        ));
    }
    for mode in ["strict", "monotonic"] {
        if let Some(c) = find(s, "crash-restart", mode) {
            out.push((
                format!("the restart guard keeps a crashed holder's successor unique ({mode})"),
                format!(
                    "{} crashes, {} lease starts, {} of them behind the predecessor's R (longest wait {} ms); {} duplicates",
                    c.crashes, c.lease_starts, c.guard_waits, c.guard_wait_max_ms, c.duplicates
                ),
                verdict(c.duplicates == 0).into(),
            ));
        }
    }
    if let (Some(b), Some(b4)) = (
        find(s, "blue-green", "strict"),
        find(s, "blue-green-4096", "strict"),
    ) {
        let failed: u64 = b.start_failures.values().sum();
        out.push((
            "the blue-green ceiling (docs/node-ids.md): each colour needs its own node ids, at most 1,024 / 2 = 512 pods per colour on 10 bits".into(),
            format!(
                "{} nodes per colour: 41/10/12 peaked at {} of {} slots with {} failed green starts ({} green ready at the cutover); 41/12/10 peaked at {} of {}",
                b.nodes,
                thousands(b.slots_peak),
                thousands(b.node_ids),
                thousands(failed),
                thousands(b.cutover_ready),
                thousands(b4.slots_peak),
                thousands(b4.node_ids)
            ),
            verdict(if 2 * b.nodes as u64 > b.node_ids {
                failed > 0 && b.slots_peak == b.node_ids
            } else {
                failed == 0
            })
            .into(),
        ));
    }
    out
}

/// The report: parameters, the table, the claims, notes and the pictures.
pub fn markdown(s: &Summary) -> String {
    let mut m = String::new();
    let _ = writeln!(m, "# Fleet simulation\n");
    let _ = writeln!(
        m,
        "Command: `{}` ({} nodes, {} simulated h per scenario, seed {}). Load: Poisson, {} requests/s per node, {} bursts per node-hour of 1-3 ms at 4,097-8,192 requests/ms. Faults per node-hour: {} clock excursions (1-500 ms ahead, log-uniform, stepped back at the next NTP poll), {} VM freezes (0.1-30 s, log-uniform), {} crashes (crash-restart). Every ID of every run is kept and sorted: duplicates must be 0.\n",
        s.command, s.nodes, s.hours, s.seed, s.rate, s.bursts_per_hour, s.steps_per_hour, s.freezes_per_hour, s.crashes_per_hour
    );
    let _ = writeln!(
        m,
        "Simulated {} node-hours in {:.1} s of wall time ({} runs at a time): **{:.0} simulated node-hours per second**; {:.1} CPU-seconds, {:.0} node-hours per CPU-second (the machine is shared, so the second figure is the steadier one).\n",
        thousands(s.node_hours.round() as u64),
        s.wall_s,
        s.threads,
        s.node_hours_per_s,
        s.cpu_s,
        s.node_hours_per_cpu_s
    );
    m.push_str("## Scenarios\n\n");
    for r in s.runs.iter().filter(|r| r.mode == "strict") {
        let _ = writeln!(m, "- `{}` ({}): {}", r.scenario, r.layout, r.about);
    }
    m.push_str("\n## Results\n\n");
    m.push_str(&table(s));
    m.push_str(
        "\nRefused calls: share of requests, by error code. Refusing time: node-time whose generator refused (fleet-wide, and the worst node's share of its own time); availability also counts frozen and down (crashed, restarting, no slot) node-time. Inversions: IDs whose timestamp is a millisecond (or 100 ms) or more below that of an ID another node issued earlier in simulated time (within one millisecond IDs sort by node id, not by time: not counted); with node clocks a few ms apart, most IDs of a busy fleet are 1 ms inversions, so the 100 ms column and the worst case tell more. Worst lead: how far an ID's timestamp ran ahead of its node's wall clock (strict never leads).\n\n",
    );
    m.push_str("| scenario | mode | requests | unserved | waited (strict; longest) | NTP steps back (largest) | freezes | crashes | lease starts / behind a guard (longest) | failed starts |\n");
    m.push_str("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n");
    for r in &s.runs {
        let failed: Vec<String> = r
            .start_failures
            .iter()
            .map(|(k, v)| format!("{} {}", thousands(*v), k))
            .collect();
        let _ = writeln!(
            m,
            "| {} | {} | {} | {} | {} ({:.1} ms) | {} ({} ms) | {} | {} | {} / {} ({} ms) | {} |",
            r.scenario,
            r.mode,
            thousands(r.requests),
            thousands(r.unserved),
            thousands(r.waited),
            r.wait_max_ms,
            r.ntp_steps,
            r.ntp_step_max_ms,
            r.freezes,
            r.crashes,
            thousands(r.lease_starts),
            r.guard_waits,
            r.guard_wait_max_ms,
            if failed.is_empty() {
                "0".to_string()
            } else {
                failed.join(", ")
            }
        );
    }
    let cl = claims(s);
    if !cl.is_empty() {
        m.push_str(
            "\n## Claims about clock faults, against this run\n\n| claim | this run | verdict |\n| --- | --- | --- |\n",
        );
        for (c, r, v) in cl {
            let _ = writeln!(m, "| {c} | {r} | {v} |");
        }
    }
    m.push_str("\n## Pictures\n\n");
    m.push_str("![availability and lead through the leap second](leap.png)\n\n");
    m.push_str("![lease slots through the blue-green deploy](blue-green.png)\n\n");
    m.push_str("![availability over the run, every scenario](availability.png)\n");
    m
}
