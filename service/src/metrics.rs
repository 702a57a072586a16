//! `GET /metrics`: the Prometheus text exposition format (version 0.0.4), encoded by the
//! `prometheus-client` crate.
//!
//! The generator's counters and gauges are the core's table ([`polyflake::HEALTH_METRICS`]:
//! names, kinds, help texts, label names) filled from one `health()` snapshot per scrape by
//! [`polyflake::health_samples`], so every value in one answer comes from the same instant and
//! the names are the ones the Python and Node collectors export. The service's own counters
//! (refusals, blocking-pool calls, responses by status, connections closed by reason) are
//! `prometheus-client` metrics the handlers move, written after the core's.
//!
//! ## Decisions
//!
//! - **Never a hand list**: the core's table filled by a `Collector` from one snapshot, so the
//!   service exports exactly what the Python and Node collectors do. The service's own:
//!   `polyflake_ids_refused_total`, `polyflake_blocking_calls_total`,
//!   `polyflake_http_responses_total{code}`, `polyflake_http_connections` and
//!   `polyflake_http_connections_closed_total{reason}` (`header_timeout`, `idle_timeout`,
//!   `evicted`, `refused`). Whole values are written as integers (`3`, not `3.0`).

use polyflake::{health_samples, MetricKind, Sample, HEALTH_METRICS};
use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeMetric, MetricEncoder};
use prometheus_client::metrics::counter::{ConstCounter, Counter};
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::{ConstGauge, Gauge};
use prometheus_client::metrics::MetricType;
use prometheus_client::registry::Registry;
use std::fmt;
use std::sync::Arc;

/// The Content-Type of the answer.
pub(crate) const CONTENT_TYPE: &str = prometheus_client::encoding::prometheus_text::CONTENT_TYPE;

/// One label, `name="value"`.
type Label = [(&'static str, String); 1];

/// The service's own metrics, which the handlers move (clones share the values), and the
/// generator whose health is encoded before them.
#[derive(Debug, Clone)]
pub(crate) struct Metrics {
    gen: Arc<polyflake::Generator>,
    /// `POST /v1/ids` calls the generator refused.
    pub ids_refused: Counter,
    /// Generator calls moved to the blocking pool because they might sleep.
    pub blocking_calls: Counter,
    /// Responses by status code.
    responses: Family<Label, Counter>,
    /// Connections open now.
    pub connections_open: Gauge,
    /// Connections the service closed, by reason.
    connections_closed: Family<Label, Counter>,
}

impl Metrics {
    /// The metrics of this generator's service.
    pub fn new(gen: Arc<polyflake::Generator>) -> Metrics {
        let (responses, connections_closed) = (Family::default(), Family::default());
        let (ids_refused, blocking_calls) = (Counter::default(), Counter::default());
        let connections_open = Gauge::default();
        Metrics {
            gen,
            ids_refused,
            blocking_calls,
            responses,
            connections_open,
            connections_closed,
        }
    }

    /// Count one response with this status code.
    pub fn count_response(&self, code: u16) {
        self.responses
            .get_or_create(&[("code", code.to_string())])
            .inc();
    }

    /// Count one connection closed by the service (`header_timeout`, `idle_timeout`, `evicted`,
    /// `refused`).
    pub fn count_closed(&self, reason: &'static str) {
        self.connections_closed
            .get_or_create(&[("reason", reason.to_string())])
            .inc();
    }

    /// The exposition text: a registry with these metrics as its one collector.
    pub fn text(&self) -> Result<String, fmt::Error> {
        let mut registry = Registry::default();
        registry.register_collector(Box::new(self.clone()));
        let mut out = String::with_capacity(4096);
        prometheus_client::encoding::prometheus_text::encode(&mut out, &registry)?;
        Ok(out)
    }
}

/// The Prometheus type of a core metric kind.
fn metric_type(kind: MetricKind) -> MetricType {
    match kind {
        MetricKind::Counter => MetricType::Counter,
        MetricKind::Gauge => MetricType::Gauge,
    }
}

/// One sample's value into `m`: whole numbers (every value the core gives today) as integers,
/// so `3` is written `3` and not `3.0`; anything else as a float.
fn encode_value(kind: MetricKind, value: f64, m: MetricEncoder) -> fmt::Result {
    let whole = value.fract() == 0.0 && value.abs() < 9.0e15;
    match (kind, whole) {
        (MetricKind::Counter, true) if value >= 0.0 => ConstCounter::new(value as u64).encode(m),
        (MetricKind::Counter, _) => ConstCounter::new(value).encode(m),
        (MetricKind::Gauge, true) => ConstGauge::new(value as i64).encode(m),
        (MetricKind::Gauge, false) => ConstGauge::new(value).encode(m),
    }
}

/// Every metric of the core's table that has samples: its descriptor (name, help, type) once,
/// then each sample with its labels.
fn encode_health(enc: &mut DescriptorEncoder, samples: &[Sample]) -> fmt::Result {
    for metric in &HEALTH_METRICS {
        let mine: Vec<&Sample> = samples
            .iter()
            .filter(|s| s.metric.name == metric.name)
            .collect();
        if mine.is_empty() {
            continue;
        }
        let mut m =
            enc.encode_descriptor(metric.name, metric.help, None, metric_type(metric.kind))?;
        if metric.labels.is_empty() {
            // One value without labels (the core gives an unlabelled metric once).
            encode_value(metric.kind, mine[0].value, m)?;
            continue;
        }
        for s in mine {
            let labels: Vec<(&str, &str)> = metric
                .labels
                .iter()
                .copied()
                .zip(s.labels.iter().map(String::as_str))
                .collect();
            encode_value(metric.kind, s.value, m.encode_family(&labels)?)?;
        }
    }
    Ok(())
}

/// A counter of the service's own.
fn counter(enc: &mut DescriptorEncoder, name: &str, help: &str, value: u64) -> fmt::Result {
    let m = enc.encode_descriptor(name, help, None, MetricType::Counter)?;
    ConstCounter::new(value).encode(m)
}

/// The core's health metrics from one snapshot, then the service's own.
impl Collector for Metrics {
    fn encode(&self, mut enc: DescriptorEncoder) -> fmt::Result {
        let e = &mut enc;
        encode_health(e, &health_samples(&self.gen.health()))?;
        let c = self;
        counter(e, "polyflake_ids_refused", "POST /v1/ids requests the generator refused (clock behind or stuck, lead limit, lease).", c.ids_refused.get())?;
        counter(
            e,
            "polyflake_blocking_calls",
            "Generator calls run on the blocking pool because they might sleep.",
            c.blocking_calls.get(),
        )?;
        c.responses.encode(e.encode_descriptor(
            "polyflake_http_responses",
            "HTTP responses by status code.",
            None,
            MetricType::Counter,
        )?)?;
        c.connections_open.encode(e.encode_descriptor(
            "polyflake_http_connections",
            "HTTP connections open now.",
            None,
            MetricType::Gauge,
        )?)?;
        c.connections_closed.encode(e.encode_descriptor("polyflake_http_connections_closed", "HTTP connections the service closed: header_timeout, idle_timeout, evicted (quietest idle one, to make room at the cap) or refused (at the cap, every connection busy).", None, MetricType::Counter)?)?;
        Ok(())
    }
}
