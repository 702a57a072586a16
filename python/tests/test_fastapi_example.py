"""The FastAPI example (python/examples/fastapi_app.py, shown in docs/python.md) really runs:
started with uvicorn on a free loopback port, hit with a real HTTP client from several threads,
shut down with SIGINT; then its slot is free, with no restart guard left (close() lowered the
high-water mark to the last ID issued), so this process takes it at once."""

import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor

from prometheus_client.parser import text_string_to_metric_families

import polyflake

from conftest import REPO

EXAMPLES = REPO / "python" / "examples"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def call(base, method, path):
    """(status, body) of one request; an HTTP error status is an answer too."""
    req = urllib.request.Request(base + path, method=method)
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


def test_fastapi_example(tmp_path):
    lease_dir = tempfile.mkdtemp(dir=tmp_path)
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    log = open(tmp_path / "uvicorn.log", "w+")
    server = subprocess.Popen(
        [sys.executable, "-m", "uvicorn", "fastapi_app:app", "--app-dir", str(EXAMPLES),
         "--host", "127.0.0.1", "--port", str(port)],
        env={**os.environ, "POLYFLAKE_LEASE_DIR": lease_dir}, stdout=log, stderr=subprocess.STDOUT,
    )
    try:
        # Up, and 503 while the new slot's restart guard holds (one reserve: 5 s).
        statuses = []
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                status, body = call(base, "GET", "/health")
            except OSError:  # not listening yet
                time.sleep(0.05)
                continue
            statuses.append((status, json.loads(body)["status"]))
            if status == 200:
                break
            time.sleep(0.2)
        assert statuses and statuses[-1] == (200, "ok"), statuses
        assert (503, "restart_guard") in statuses, statuses
        node_id = json.loads(call(base, "GET", "/health")[1])["node_id"]

        # 4 clients x 50 requests of 100 IDs: all unique, each response increasing.
        def client(_):
            got = []
            for _ in range(50):
                status, body = call(base, "POST", "/ids?count=100")
                assert status == 200, body
                answer = json.loads(body)
                ids = [int(x) for x in answer["ids"]]
                assert len(ids) == 100 and ids == sorted(ids) and answer["node_id"] == node_id
                got += ids
            return got

        with ThreadPoolExecutor(4) as pool:
            every = [x for ids in pool.map(client, range(4)) for x in ids]
        assert len(set(every)) == len(every) == 20_000
        assert {polyflake.decode(x)["node_id"] for x in every} == {node_id}
        assert call(base, "POST", "/ids?count=0")[0] == 422  # FastAPI's own validation

        status, body = call(base, "GET", "/metrics")
        assert status == 200
        families = {f.name: f for f in text_string_to_metric_families(body.decode())}
        assert {m[0] for m in polyflake.HEALTH_METRICS} == set(families)  # lease metrics too
        issued = families["polyflake_ids_issued"].samples[0]
        assert issued.name == "polyflake_ids_issued_total" and issued.value >= 20_000
    finally:
        server.send_signal(signal.SIGINT)  # uvicorn's graceful shutdown runs the lifespan's exit
        code = server.wait(30)
        log.seek(0)
        output = log.read()
        log.close()
    assert code == 0, output
    assert "Application shutdown complete" in output, output

    # The slot is free and its guard already passed: the same identity takes it at once.
    with polyflake.Snowflake.from_file_lease(lease_dir) as g:
        assert g.node_id == node_id
        assert g.health().ok, g.health().reason
        assert g.next_id() > max(every)
