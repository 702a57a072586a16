"""`polyflake.prometheus.Collector(g)`: scraped over HTTP from prometheus_client's own
server and parsed back, its names, kinds and help texts are the core's metric table
(`polyflake.HEALTH_METRICS`, the table the service's /metrics uses), and its values the
generator's health."""

import tempfile
import urllib.request

import pytest
from prometheus_client import CollectorRegistry, start_http_server
from prometheus_client.parser import text_string_to_metric_families

import polyflake
from polyflake import HEALTH_METRICS, Snowflake, Uuid7Generator
from polyflake.prometheus import Collector
from polyflake.testing import ManualClock

T = 1_737_747_358_021
LEASE_METRICS = {
    "polyflake_lease_info", "polyflake_lease_state", "polyflake_lease_high_water_ms",
    "polyflake_lease_guard_remaining_ms",
}


def scrape(*collectors):
    """Serve a registry holding `collectors` on a free port, GET /metrics, parse it."""
    registry = CollectorRegistry()
    for c in collectors:
        registry.register(c)
    server, thread = start_http_server(0, addr="127.0.0.1", registry=registry)
    try:
        port = server.server_address[1]
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as r:
            assert r.status == 200
            text = r.read().decode()
    finally:
        server.shutdown()
        server.server_close()
        thread.join(10)
    return {f.name: f for f in text_string_to_metric_families(text)}


def value(families, name, **labels):
    samples = [s for f in families.values() for s in f.samples
               if s.name == name and all(s.labels.get(k) == v for k, v in labels.items())]
    assert len(samples) == 1, (name, labels, samples)
    return samples[0].value


def test_the_table_is_the_cores():
    names = [m[0] for m in HEALTH_METRICS]
    assert len(names) == len(set(names)) == 23
    # The restart guard's waits and the kernel's word on the clock are in it.
    assert {"polyflake_restart_waits", "polyflake_clock_synchronized",
            "polyflake_clock_max_error_seconds"} <= set(names)
    assert all(n.startswith("polyflake_") and not n.endswith("_total") for n in names)
    assert {m[1] for m in HEALTH_METRICS} == {"counter", "gauge"}
    assert all(isinstance(m[2], str) and m[2] and isinstance(m[3], tuple) for m in HEALTH_METRICS)


def test_a_scrape_is_the_table_and_the_health():
    clock = ManualClock(T)
    g = Snowflake(node_id=37, clock=clock)
    for _ in range(5):
        g.next_id()
    clock.advance(-600)
    with pytest.raises(polyflake.ClockMovedBackwards):
        g.next_id()
    families = scrape(Collector(g))
    # Every metric of the table but the lease's (no lease), with the table's kind and help.
    assert set(families) == {m[0] for m in HEALTH_METRICS} - LEASE_METRICS
    for name, kind, help_text, _ in HEALTH_METRICS:
        if name in families:
            assert (families[name].type, families[name].documentation) == (kind, help_text)
    assert value(families, "polyflake_ids_issued_total") == 5  # a counter gains _total
    assert value(families, "polyflake_rewinds_refused_total") == 1
    assert value(families, "polyflake_node_id") == 37
    assert value(families, "polyflake_healthy") == 0
    assert value(families, "polyflake_last_issued_ms") == T
    assert value(families, "polyflake_health_status", status="clock_behind") == 1


def test_a_leased_generator_adds_the_lease_metrics():
    lease_dir = tempfile.mkdtemp()
    with Snowflake.from_file_lease(lease_dir, slots=4, reserve_ms=200) as g:
        g.wait_ready()
        g.next_id()
        families = scrape(Collector(g))
        assert LEASE_METRICS <= set(families)
        info = value(families, "polyflake_lease_info", kind="file", slot=str(g.node_id))
        assert info == 1
        assert value(families, "polyflake_lease_state", state="held") == 1
        # R is ahead of every issued ID (it is renewed in the background, so only a bound).
        assert value(families, "polyflake_lease_high_water_ms") >= g.health().last_issued_ms
        assert value(families, "polyflake_healthy") == 1


def test_several_generators_share_one_collector():
    a = Snowflake(node_id=38)
    b = Uuid7Generator()
    a.next_id()
    for _ in range(3):
        b.next_id()
    families = scrape(Collector({"orders": a, "events": b}, label="generator"))
    assert value(families, "polyflake_ids_issued_total", generator="orders") == 1
    assert value(families, "polyflake_ids_issued_total", generator="events") == 3
    assert value(families, "polyflake_health_status", generator="events", status="ok") == 1
    assert value(families, "polyflake_node_id", generator="orders") == 38
    # A metric name may appear once in a registry: two collectors clash (prometheus_client
    # refuses the second), which is why one collector takes several generators.
    registry = CollectorRegistry()
    registry.register(Collector(a))
    with pytest.raises(ValueError, match="Duplicated"):
        registry.register(Collector(b))
