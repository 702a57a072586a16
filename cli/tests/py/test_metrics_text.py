"""GET /metrics parsed back with the Prometheus project's own Python parser
(prometheus_client.parser): every family the service has always exposed is there with its type
and help text, the values follow what the test did, and label values with quotes, backslashes
and newlines survive the round trip."""

import json
import pathlib

from prometheus_client.parser import text_string_to_metric_families

# name (without _total for counters) -> (type, help), as the service has always written them.
FAMILIES = {
    "polyflake_ids_issued": ("counter", "IDs issued by this service's generator."),
    "polyflake_ids_refused": ("counter", "POST /v1/ids requests the generator refused (clock behind or stuck, lead limit, lease)."),
    "polyflake_rewinds_waited": ("counter", "Calls that waited out a small clock rewind."),
    "polyflake_rewinds_refused": ("counter", "Calls refused because the clock was behind or stuck past the wait budget."),
    "polyflake_sequence_exhaustions": ("counter", "Times a millisecond's sequence was spent and a strict call waited."),
    "polyflake_wait_sleeps": ("counter", "Sleeps taken while waiting (strict mode never spins)."),
    "polyflake_ms_borrowed": ("counter", "Milliseconds a monotonic generator moved ahead of the wall clock."),
    "polyflake_lead_refused": ("counter", "Monotonic calls refused by max_lead_ms."),
    "polyflake_lease_renewals": ("counter", "Lease renewals (0 without a lease)."),
    "polyflake_lease_failures": ("counter", "Failed lease renewals (0 without a lease)."),
    "polyflake_blocking_calls": ("counter", "Generator calls run on the blocking pool because they might sleep."),
    "polyflake_lead_ms": ("gauge", "How far the last issued millisecond is ahead of the wall clock."),
    "polyflake_last_issued_ms": ("gauge", "Unix ms of the last issued ID (0 before the first)."),
    "polyflake_node_id": ("gauge", "This service's node id."),
    "polyflake_healthy": ("gauge", "1 when the generator can issue now (GET /v1/health answers 200), else 0."),
    "polyflake_health_status": ("gauge", "The generator's health status (1 for the current one)."),
    "polyflake_http_responses": ("counter", "HTTP responses by status code."),
    "polyflake_http_connections": ("gauge", "HTTP connections open now."),
}
LEASE_FAMILIES = {
    "polyflake_lease_info": ("gauge", "The leased slot (1 while a lease is held or last held)."),
    "polyflake_lease_state": ("gauge", "The lease's state: held, restart_guard, expired or lost (1 for the current one)."),
    "polyflake_lease_high_water_ms": ("gauge", "The lease's high-water mark R (Unix ms): no ID is issued past it."),
    "polyflake_lease_guard_remaining_ms": ("gauge", "How long the restart guard still waits (0 when it does not)."),
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
    for name, (typ, help_text) in FAMILIES.items():
        assert name in fam, f"{name} missing from:\n{text}"
        assert fam[name].type == typ, name
        assert fam[name].documentation == help_text, name
    for name in LEASE_FAMILIES:
        assert name not in fam  # no lease: no lease families
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


def test_lease_labels_with_quotes_backslashes_and_newlines_round_trip(service, tmp_path):
    lease_dir = tmp_path / 'we"ird\\dir\nname'
    s = service("--lease-dir", str(lease_dir), "--slots", "2")
    text, fam = scrape(s)
    for name, (typ, help_text) in LEASE_FAMILIES.items():
        assert fam[name].type == typ, name
        assert fam[name].documentation == help_text, name
    info = fam["polyflake_lease_info"].samples
    assert len(info) == 1, text
    assert info[0].labels == {"kind": "file", "store": str(lease_dir), "slot": "0"}, text
    assert info[0].value == 1
    states = {smp.labels["state"] for smp in fam["polyflake_lease_state"].samples}
    assert len(states) == 1 and states <= {"held", "restart_guard"}, text
    status, _, body = s.get("/v1/health")
    assert json.loads(body)["lease"]["store"] == str(lease_dir)
