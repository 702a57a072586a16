"""A real pre-fork server: gunicorn with 4 sync workers running
python/examples/gunicorn_app.py. Each worker makes its generator after the fork from a file
lease (the recipe of docs/python.md): 4 distinct node ids, and 20,000 IDs fetched by 8 client
threads in batched requests have no duplicate. The failure mode the recipe avoids: a static
`Snowflake(node_id=5)` in each worker is taken by one worker only; the other three get
NodeIdInUse naming that worker's pid (and answer 503 saying so)."""

import collections
import concurrent.futures
import http.client
import json
import os
import pathlib
import socket
import subprocess
import sys
import time

import pytest

import polyflake

from conftest import REPO

EXAMPLES = REPO / "python" / "examples"
GUNICORN = pathlib.Path(sys.executable).with_name("gunicorn")
WORKERS = 4
TOTAL, PER_REQUEST, CLIENTS = 20_000, 100, 8

pytestmark = pytest.mark.skipif(not GUNICORN.exists(), reason="make deps-python installs gunicorn")


class Server:
    """gunicorn on a listening socket this test made (passed as fd://N: no port race)."""

    def __init__(self, tmp_path, **env):
        self.status_dir = tmp_path / "status"
        self.status_dir.mkdir()
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(128)
        self.port = self.sock.getsockname()[1]
        fd = self.sock.fileno()
        leases = tmp_path / "leases"  # a lease directory of this test's own
        leases.mkdir()
        environ = {**os.environ, **env, "POLYFLAKE_EXAMPLE_STATUS_DIR": str(self.status_dir),
                   "POLYFLAKE_LEASE_DIR": str(leases),
                   # `-c python:gunicorn_app` is imported before --chdir applies.
                   "PYTHONPATH": str(EXAMPLES),
                   # A scope of its own: node 5 here is nobody else's node 5 on this host.
                   "POLYFLAKE_HOST_SCOPE": f"gunicorn-{os.getpid()}-{tmp_path.name}"[-40:]}
        self.log = open(tmp_path / "gunicorn.log", "w+")
        self.proc = subprocess.Popen(
            [str(GUNICORN), "-c", "python:gunicorn_app", "--chdir", str(EXAMPLES),
             "--bind", f"fd://{fd}", "--workers", str(WORKERS), "--graceful-timeout", "5",
             "gunicorn_app:app"],
            pass_fds=[fd], env=environ, stdout=self.log, stderr=subprocess.STDOUT)

    def workers(self, deadline_s=20.0):
        """What each of the 4 workers reported after its fork (waits for all four)."""
        end = time.monotonic() + deadline_s
        while time.monotonic() < end:
            files = sorted(self.status_dir.glob("worker-*.json"))
            if len(files) >= WORKERS:
                return [json.loads(f.read_text()) for f in files]
            assert self.proc.poll() is None, self.output()
            time.sleep(0.05)
        pytest.fail(f"{len(files)} of {WORKERS} workers reported: {self.output()}")

    def get(self, path):
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        try:
            conn.request("GET", path)
            r = conn.getresponse()
            return r.status, json.loads(r.read())
        finally:
            conn.close()

    def output(self):
        self.log.flush()
        self.log.seek(0)
        return self.log.read()[-4000:]

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.sock.close()
        self.log.close()


@pytest.fixture
def server(tmp_path, request):
    s = Server(tmp_path, **request.param)
    yield s
    s.stop()


@pytest.mark.parametrize("server", [{"POLYFLAKE_EXAMPLE_RESERVE_MS": "200"}], indirect=True)
def test_four_workers_on_file_leases_mint_without_duplicates(server):
    reported = server.workers()
    nodes = {w["pid"]: w["node_id"] for w in reported}
    assert len(nodes) == WORKERS and len(set(nodes.values())) == WORKERS, reported

    started = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(CLIENTS) as pool:
        answers = list(pool.map(lambda _: server.get(f"/ids?n={PER_REQUEST}"),
                                range(TOTAL // PER_REQUEST)))
    took = time.monotonic() - started
    ids, served = [], collections.Counter()
    for status, body in answers:
        assert status == 200, body
        assert nodes[body["pid"]] == body["node_id"]
        batch = [int(x) for x in body["ids"]]
        assert {polyflake.decode(x)["node_id"] for x in batch} == {body["node_id"]}
        ids.extend(batch)
        served[body["pid"]] += 1
    print(f"\n{len(ids)} IDs in {took:.2f} s from {len(served)} workers {dict(served)}; "
          f"node ids {sorted(nodes.values())}")
    assert len(ids) == TOTAL and len(set(ids)) == TOTAL, "duplicates"
    assert len(served) >= 2, served  # the requests really were spread over the workers


@pytest.mark.parametrize("server", [{"POLYFLAKE_EXAMPLE_NODE_ID": "5"}], indirect=True)
def test_a_static_node_id_in_every_worker_is_held_by_one(server):
    reported = server.workers()
    holders = [w for w in reported if "node_id" in w]
    refused = [w for w in reported if "error" in w]
    assert len(holders) == 1 and holders[0]["node_id"] == 5, reported
    holder = holders[0]["pid"]
    assert len(refused) == WORKERS - 1, reported
    for w in refused:
        assert w["error"] == "NODE_ID_IN_USE" and w["holder_pid"] == holder, w
        # The holder in words: its pid and its name (the worker's, gunicorn's), on this host.
        assert w["holder"].startswith(f"process {holder} (") and w["holder"].endswith(" on this host"), w
        assert f"node id 5 is already held by {w['holder']}" in w["message"]
    # Over HTTP: every answer is either an ID of node 5 from the holder, or a 503 naming it.
    seen = collections.Counter()
    with concurrent.futures.ThreadPoolExecutor(CLIENTS) as pool:
        for status, body in pool.map(lambda _: server.get("/ids?n=10"), range(200)):
            if status == 200:
                assert body["pid"] == holder and body["node_id"] == 5
                assert {polyflake.decode(int(x))["node_id"] for x in body["ids"]} == {5}
            else:
                assert status == 503 and body["holder_pid"] == holder, body
            seen[status] += 1
    print(f"\nstatic node 5 in {WORKERS} workers: held by pid {holder}; answers {dict(seen)}")
    assert seen[200] > 0
