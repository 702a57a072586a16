"""GET /metrics parsed back with the Prometheus project's own Python parser
(prometheus_client.parser): every family the service has always exposed is there with its type
and help text, the values follow what the test did, and label values with quotes, backslashes
and newlines survive the round trip."""

import json
import pathlib

from prometheus_client.parser import text_string_to_metric_families

# The generator's families are the core's table (polyflake::HEALTH_METRICS; the Rust test
# cli/tests/formats.rs checks every name, type, help text and label against it): here their names
# and types, and that each has a help text.
CORE_FAMILIES = {
    "polyflake_ids_issued": "counter",
    "polyflake_rewinds_waited": "counter",
    "polyflake_rewinds_refused": "counter",
    "polyflake_sequence_exhaustions": "counter",
    "polyflake_wait_sleeps": "counter",
    "polyflake_ms_borrowed": "counter",
    "polyflake_lead_refused": "counter",
    "polyflake_forward_refused": "counter",
    "polyflake_lease_renewals": "counter",
    "polyflake_lease_failures": "counter",
    "polyflake_lead_ms": "gauge",
    "polyflake_clock_ahead_ms": "gauge",
    "polyflake_last_issued_ms": "gauge",
    "polyflake_node_id": "gauge",
    "polyflake_healthy": "gauge",
    "polyflake_health_status": "gauge",
}
LEASE_FAMILIES = {
    "polyflake_lease_info": "gauge",
    "polyflake_lease_state": "gauge",
    "polyflake_lease_high_water_ms": "gauge",
    "polyflake_lease_guard_remaining_ms": "gauge",
}
# The service's own: name (without _total for counters) -> (type, help).
SERVICE_FAMILIES = {
    "polyflake_ids_refused": ("counter", "POST /v1/ids requests the generator refused (clock behind or stuck, lead limit, lease)."),
    "polyflake_blocking_calls": ("counter", "Generator calls run on the blocking pool because they might sleep."),
    "polyflake_http_responses": ("counter", "HTTP responses by status code."),
    "polyflake_http_connections": ("gauge", "HTTP connections open now."),
}


def scrape(s):
    status, headers, body = s.get("/metrics")
    assert status == 200
    ctype = {k.lower(): v for k, v in headers.items()}["content-type"]
    assert ctype == "text/plain; version=0.0.4; charset=utf-8"
    text = body.decode("utf-8")
    families = {f.name: f for f in text_string_to_metric_families(text)}
    return text, families


def value(families, name, **labels):
    fam_name = name[: -len("_total")] if name.endswith("_total") else name
    for sample in families[fam_name].samples:
        if sample.name == name and sample.labels == labels:
            return sample.value
    raise KeyError(f"{name}{labels}")


def test_every_family_parses_with_its_type_and_help(service):
    s = service("--node-id", "42", "--max-count", "500")
    text, fam = scrape(s)
    for name, typ in CORE_FAMILIES.items():
        assert name in fam, f"{name} missing from:\n{text}"
        assert fam[name].type == typ, name
        assert fam[name].documentation, name
    for name, (typ, help_text) in SERVICE_FAMILIES.items():
        assert name in fam, f"{name} missing from:\n{text}"
        assert fam[name].type == typ, name
        assert fam[name].documentation == help_text, name
    # A fixed node id with its restart guard keeps a mark: the lease families describe it (kind
    # "host", the mark's file as the store, the node id as the slot).
    for name, typ in LEASE_FAMILIES.items():
        assert name in fam and fam[name].type == typ, f"{name} missing from:\n{text}"
    info = [x for x in fam["polyflake_lease_info"].samples if x.value == 1]
    assert [(x.labels["kind"], x.labels["slot"]) for x in info] == [("host", "42")], info
    assert "node-41-10-12-0042" in info[0].labels["store"], info
    # Every line of the text is a comment or a sample of a known family.
    for line in text.splitlines():
        if line and not line.startswith("#"):
            assert line.split("{")[0].split(" ")[0].removesuffix("_total") in fam, line

    before = value(fam, "polyflake_ids_issued_total")
    assert before == 0
    assert s.post_json("/v1/ids", '{"count": 250}')[0] == 200
    assert s.post_json("/v1/ids", '{"count": 0}')[0] == 400
    assert s.post_json("/v1/ids", '{"count": 1, "count": 2}')[0] == 400
    _, fam = scrape(s)
    assert value(fam, "polyflake_ids_issued_total") == 250
    assert value(fam, "polyflake_node_id") == 42
    assert value(fam, "polyflake_healthy") == 1
    assert value(fam, "polyflake_health_status", status="ok") == 1
    assert value(fam, "polyflake_http_responses_total", code="400") == 2
    assert value(fam, "polyflake_http_responses_total", code="200") >= 2  # the scrapes and the IDs
    assert value(fam, "polyflake_http_connections") >= 1  # this scrape's own


def test_a_fixed_node_id_without_its_restart_guard_has_no_lease_families(service):
    s = service("--node-id", "43", "--restart-guard", "off")
    text, fam = scrape(s)
    assert "polyflake_ids_issued" in fam, text
    for name in LEASE_FAMILIES:
        assert name not in fam, text  # no lease, no mark: no lease families


def test_lease_labels_with_quotes_backslashes_and_newlines_round_trip(service, tmp_path):
    lease_dir = tmp_path / 'we"ird\\dir\nname'
    s = service("--lease-dir", str(lease_dir), "--slots", "2")
    text, fam = scrape(s)
    for name, typ in LEASE_FAMILIES.items():
        assert fam[name].type == typ, name
        assert fam[name].documentation, name
    info = fam["polyflake_lease_info"].samples
    assert len(info) == 1, text
    assert info[0].labels == {"kind": "file", "store": str(lease_dir), "slot": "0"}, text
    assert info[0].value == 1
    states = {smp.labels["state"] for smp in fam["polyflake_lease_state"].samples}
    assert len(states) == 1 and states <= {"held", "restart_guard"}, text
    status, _, body = s.get("/v1/health")
    assert json.loads(body)["lease"]["store"] == str(lease_dir)
