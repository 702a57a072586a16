//! `GET /metrics`: the Prometheus text exposition format (version 0.0.4), encoded by the
//! `prometheus-client` crate.
//!
//! The service's own counters (refusals, blocking-pool calls, responses by status, connections
//! closed by reason) are `prometheus-client` counters the handlers increment. The generator's
//! counters and gauges are read from one `health()` snapshot per scrape by a [`Collector`], so
//! every value in one answer comes from the same instant. The names, types and help texts are
//! the ones the service has always exposed (`polyflake_ids_issued_total`, ...).

use polyflake::Generator;
use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeMetric};
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

/// The service's metrics: handles the handlers increment, and the registry that encodes them.
pub(crate) struct Metrics {
    registry: Registry,
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

impl fmt::Debug for Metrics {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Metrics").finish_non_exhaustive()
    }
}

impl Metrics {
    /// The registry for this generator's service.
    pub fn new(gen: Arc<Generator>) -> Metrics {
        let ids_refused = Counter::default();
        let blocking_calls = Counter::default();
        let responses = Family::<Label, Counter>::default();
        let connections_open = Gauge::default();
        let connections_closed = Family::<Label, Counter>::default();
        let mut registry = Registry::default();
        registry.register_collector(Box::new(ServiceCollector {
            gen,
            ids_refused: ids_refused.clone(),
            blocking_calls: blocking_calls.clone(),
            responses: responses.clone(),
            connections_open: connections_open.clone(),
            connections_closed: connections_closed.clone(),
        }));
        Metrics {
            registry,
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

    /// The exposition text.
    pub fn encode(&self) -> Result<String, fmt::Error> {
        let mut out = String::with_capacity(4096);
        prometheus_client::encoding::prometheus_text::encode(&mut out, &self.registry)?;
        Ok(out)
    }
}

/// Encodes everything, in the service's traditional order, from one health snapshot.
struct ServiceCollector {
    gen: Arc<Generator>,
    ids_refused: Counter,
    blocking_calls: Counter,
    responses: Family<Label, Counter>,
    connections_open: Gauge,
    connections_closed: Family<Label, Counter>,
}

impl fmt::Debug for ServiceCollector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ServiceCollector").finish_non_exhaustive()
    }
}

/// A counter from a snapshot value; `name` without the `_total` the encoder appends.
fn counter(enc: &mut DescriptorEncoder, name: &str, help: &str, value: u64) -> fmt::Result {
    let m = enc.encode_descriptor(name, help, None, MetricType::Counter)?;
    ConstCounter::new(value).encode(m)
}

/// A gauge from a snapshot value.
fn gauge(enc: &mut DescriptorEncoder, name: &str, help: &str, value: i64) -> fmt::Result {
    let m = enc.encode_descriptor(name, help, None, MetricType::Gauge)?;
    ConstGauge::new(value).encode(m)
}

/// A gauge of 1 with these labels (the `info`/state style).
fn labelled_one<const N: usize>(
    enc: &mut DescriptorEncoder,
    name: &str,
    help: &str,
    labels: [(&'static str, String); N],
) -> fmt::Result {
    let mut m = enc.encode_descriptor(name, help, None, MetricType::Gauge)?;
    ConstGauge::new(1i64).encode(m.encode_family(&labels)?)
}

impl Collector for ServiceCollector {
    fn encode(&self, mut enc: DescriptorEncoder) -> fmt::Result {
        let h = self.gen.health();
        let e = &mut enc;
        counter(
            e,
            "polyflake_ids_issued",
            "IDs issued by this service's generator.",
            h.ids_issued,
        )?;
        counter(e, "polyflake_ids_refused", "POST /v1/ids requests the generator refused (clock behind or stuck, lead limit, lease).", self.ids_refused.get())?;
        counter(
            e,
            "polyflake_rewinds_waited",
            "Calls that waited out a small clock rewind.",
            h.rewinds_waited,
        )?;
        counter(
            e,
            "polyflake_rewinds_refused",
            "Calls refused because the clock was behind or stuck past the wait budget.",
            h.rewinds_refused,
        )?;
        counter(
            e,
            "polyflake_sequence_exhaustions",
            "Times a millisecond's sequence was spent and a strict call waited.",
            h.sequence_exhaustions,
        )?;
        counter(
            e,
            "polyflake_wait_sleeps",
            "Sleeps taken while waiting (strict mode never spins).",
            h.wait_sleeps,
        )?;
        counter(
            e,
            "polyflake_ms_borrowed",
            "Milliseconds a monotonic generator moved ahead of the wall clock.",
            h.ms_borrowed,
        )?;
        counter(
            e,
            "polyflake_lead_refused",
            "Monotonic calls refused by max_lead_ms.",
            h.lead_refused,
        )?;
        counter(
            e,
            "polyflake_lease_renewals",
            "Lease renewals (0 without a lease).",
            h.lease_renewals,
        )?;
        counter(
            e,
            "polyflake_lease_failures",
            "Failed lease renewals (0 without a lease).",
            h.lease_failures,
        )?;
        counter(
            e,
            "polyflake_blocking_calls",
            "Generator calls run on the blocking pool because they might sleep.",
            self.blocking_calls.get(),
        )?;
        gauge(
            e,
            "polyflake_lead_ms",
            "How far the last issued millisecond is ahead of the wall clock.",
            h.lead_ms,
        )?;
        gauge(
            e,
            "polyflake_last_issued_ms",
            "Unix ms of the last issued ID (0 before the first).",
            h.last_issued_ms.unwrap_or(0),
        )?;
        gauge(
            e,
            "polyflake_node_id",
            "This service's node id.",
            i64::from(h.node_id),
        )?;
        gauge(
            e,
            "polyflake_healthy",
            "1 when the generator can issue now (GET /v1/health answers 200), else 0.",
            i64::from(h.ok),
        )?;
        labelled_one(
            e,
            "polyflake_health_status",
            "The generator's health status (1 for the current one).",
            [("status", h.status.name().to_string())],
        )?;
        if let Some(l) = &h.lease {
            labelled_one(
                e,
                "polyflake_lease_info",
                "The leased slot (1 while a lease is held or last held).",
                [
                    ("kind", l.kind.name().to_string()),
                    ("store", l.store.clone()),
                    ("slot", l.slot.to_string()),
                ],
            )?;
            labelled_one(
                e,
                "polyflake_lease_state",
                "The lease's state: held, restart_guard, expired or lost (1 for the current one).",
                [("state", lease_state(&h).to_string())],
            )?;
            gauge(
                e,
                "polyflake_lease_high_water_ms",
                "The lease's high-water mark R (Unix ms): no ID is issued past it.",
                l.high_water_ms,
            )?;
            gauge(
                e,
                "polyflake_lease_guard_remaining_ms",
                "How long the restart guard still waits (0 when it does not).",
                i64::try_from(l.guard_remaining_ms).unwrap_or(i64::MAX),
            )?;
        }
        let m = e.encode_descriptor(
            "polyflake_http_responses",
            "HTTP responses by status code.",
            None,
            MetricType::Counter,
        )?;
        self.responses.encode(m)?;
        let m = e.encode_descriptor(
            "polyflake_http_connections",
            "HTTP connections open now.",
            None,
            MetricType::Gauge,
        )?;
        self.connections_open.encode(m)?;
        let m = e.encode_descriptor("polyflake_http_connections_closed", "HTTP connections the service closed: header_timeout, idle_timeout, evicted (quietest idle one, to make room at the cap) or refused (at the cap, every connection busy).", None, MetricType::Counter)?;
        self.connections_closed.encode(m)?;
        Ok(())
    }
}

/// The lease's state in one word, for health and metrics (the core's phase).
pub(crate) fn lease_state(h: &polyflake::Health) -> &'static str {
    h.lease.as_ref().map_or("none", |l| l.phase().name())
}
