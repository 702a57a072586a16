//! The metrics a generator's health gives, as one table: the service's `/metrics` and the
//! Python and Node collectors all export these names and help texts, so a dashboard built on
//! one works on every other.

use crate::generator::Health;

/// How a metric behaves over time (Prometheus's types). A counter's exposed name gains
/// `_total` (OpenMetrics), as every Prometheus client library writes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MetricKind {
    /// Only ever grows.
    Counter,
    /// Any value.
    Gauge,
}

impl MetricKind {
    /// `"counter"` or `"gauge"`.
    pub const fn name(self) -> &'static str {
        match self {
            MetricKind::Counter => "counter",
            MetricKind::Gauge => "gauge",
        }
    }
}

/// One metric: its name (without a counter's `_total`), kind, help text and label names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Metric {
    /// The metric's name.
    pub name: &'static str,
    /// Counter or gauge.
    pub kind: MetricKind,
    /// The help text.
    pub help: &'static str,
    /// The names of its labels (empty for most).
    pub labels: &'static [&'static str],
}

const fn counter(name: &'static str, help: &'static str) -> Metric {
    Metric {
        name,
        kind: MetricKind::Counter,
        help,
        labels: &[],
    }
}

const fn gauge(name: &'static str, help: &'static str) -> Metric {
    Metric {
        name,
        kind: MetricKind::Gauge,
        help,
        labels: &[],
    }
}

const fn labelled(
    name: &'static str,
    help: &'static str,
    labels: &'static [&'static str],
) -> Metric {
    Metric {
        name,
        kind: MetricKind::Gauge,
        help,
        labels,
    }
}

/// Every metric a health snapshot gives, in the order [`health_samples`] gives them.
pub const HEALTH_METRICS: [Metric; 23] = [
    counter("polyflake_ids_issued", "IDs issued by the generator."),
    counter("polyflake_rewinds_waited", "Calls that waited out a small clock rewind."),
    counter(
        "polyflake_rewinds_refused",
        "Calls refused because the clock was behind or stuck past the wait budget.",
    ),
    counter(
        "polyflake_sequence_exhaustions",
        "Times a millisecond's sequence was spent and a strict call waited.",
    ),
    counter(
        "polyflake_wait_sleeps",
        "Sleeps taken while waiting (strict mode never spins).",
    ),
    counter(
        "polyflake_ms_borrowed",
        "Milliseconds a monotonic generator moved ahead of the wall clock.",
    ),
    counter("polyflake_lead_refused", "Monotonic calls refused by max_lead_ms."),
    counter(
        "polyflake_forward_refused",
        "Strict calls refused because the wall clock had stepped ahead of elapsed time.",
    ),
    counter("polyflake_lease_renewals", "Lease renewals (0 without a lease)."),
    counter(
        "polyflake_lease_failures",
        "Failed lease renewals (0 without a lease).",
    ),
    gauge(
        "polyflake_lead_ms",
        "How far the last issued millisecond is ahead of the wall clock.",
    ),
    gauge(
        "polyflake_clock_ahead_ms",
        "How far the wall clock reads ahead of what elapsed time vouches for, while not yet believed (0 otherwise).",
    ),
    gauge(
        "polyflake_last_issued_ms",
        "Unix ms of the last issued ID (0 before the first).",
    ),
    gauge("polyflake_node_id", "The generator's node id."),
    gauge(
        "polyflake_healthy",
        "1 when the generator can issue now (a health check answers 200), else 0.",
    ),
    labelled(
        "polyflake_health_status",
        "The generator's health status (1 for the current one).",
        &["status"],
    ),
    labelled(
        "polyflake_lease_info",
        "The leased slot (1 while a lease is held or last held).",
        &["kind", "store", "slot"],
    ),
    labelled(
        "polyflake_lease_state",
        "The lease's state: held, restart_guard, expired or lost (1 for the current one).",
        &["state"],
    ),
    gauge(
        "polyflake_lease_high_water_ms",
        "The lease's high-water mark R (Unix ms): no ID is issued past it.",
    ),
    gauge(
        "polyflake_lease_guard_remaining_ms",
        "How long the restart guard still waits (0 when it does not).",
    ),
    counter(
        "polyflake_restart_waits",
        "Calls that waited for a fixed node id's restart guard.",
    ),
    gauge(
        "polyflake_clock_synchronized",
        "1 when the kernel says a time daemon keeps the system clock synchronized, else 0.",
    ),
    gauge(
        "polyflake_clock_max_error_seconds",
        "The kernel's maximum error of the system clock, in seconds (-1 when it cannot be read).",
    ),
];

/// One value of one metric.
#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    /// Which metric (an entry of [`HEALTH_METRICS`]).
    pub metric: &'static Metric,
    /// The label values, in the order of `metric.labels`.
    pub labels: Vec<String>,
    /// The value.
    pub value: f64,
}

/// The samples of a health snapshot: every metric of [`HEALTH_METRICS`] once, except the
/// lease metrics when the node id is not leased (a fixed node id's mark on the host counts as
/// a lease of kind `host`).
///
/// ```
/// use polyflake::{health_samples, Generator, ManualClock};
/// let g = Generator::builder(7).clock(ManualClock::new(1_704_067_201_000)).build().unwrap();
/// g.next_id().unwrap();
/// let samples = health_samples(&g.health());
/// let issued = samples.iter().find(|s| s.metric.name == "polyflake_ids_issued").unwrap();
/// assert_eq!(issued.value, 1.0);
/// assert!(samples.iter().all(|s| s.metric.name != "polyflake_lease_info")); // no lease
/// ```
pub fn health_samples(h: &Health) -> Vec<Sample> {
    let m = |i: usize| &HEALTH_METRICS[i];
    let plain = |i: usize, v: f64| Sample {
        metric: m(i),
        labels: Vec::new(),
        value: v,
    };
    let mut out = vec![
        plain(0, h.ids_issued as f64),
        plain(1, h.rewinds_waited as f64),
        plain(2, h.rewinds_refused as f64),
        plain(3, h.sequence_exhaustions as f64),
        plain(4, h.wait_sleeps as f64),
        plain(5, h.ms_borrowed as f64),
        plain(6, h.lead_refused as f64),
        plain(7, h.forward_refused as f64),
        plain(8, h.lease_renewals as f64),
        plain(9, h.lease_failures as f64),
        plain(10, h.lead_ms as f64),
        plain(11, h.clock_ahead_ms as f64),
        plain(12, h.last_issued_ms.unwrap_or(0) as f64),
        plain(13, f64::from(h.node_id)),
        plain(14, if h.ok { 1.0 } else { 0.0 }),
        Sample {
            metric: m(15),
            labels: vec![h.status.name().to_string()],
            value: 1.0,
        },
        plain(20, h.restart_waits as f64),
        plain(21, if h.clock_sync.synchronized { 1.0 } else { 0.0 }),
        plain(
            22,
            match h.clock_sync.max_error_us {
                e if e < 0 => -1.0,
                e => e as f64 / 1e6,
            },
        ),
    ];
    if let Some(l) = &h.lease {
        out.push(Sample {
            metric: m(16),
            labels: vec![
                l.kind.name().to_string(),
                l.store.clone(),
                l.slot.to_string(),
            ],
            value: 1.0,
        });
        out.push(Sample {
            metric: m(17),
            labels: vec![l.phase().name().to_string()],
            value: 1.0,
        });
        out.push(plain(18, l.high_water_ms as f64));
        out.push(plain(19, l.guard_remaining_ms as f64));
    }
    out
}
