"""etcd leases from Python against a real etcd (Debian's etcd-server, installed by
`make deps-apt`), started here on 127.0.0.1 with free ports and a temporary data dir, and
stopped afterwards. No mock stands in for etcd."""

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time

import pytest

import polyflake
from polyflake import MonotonicSnowflake, Snowflake

ETCD, ETCDCTL = "/usr/bin/etcd", "/usr/bin/etcdctl"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Etcd:
    def __init__(self):
        for binary in (ETCD, ETCDCTL):
            assert os.path.exists(binary), f"{binary} is missing: `make deps-apt` installs etcd-server"
        self.dir = tempfile.mkdtemp(prefix="polyflake-py-etcd-")
        self.url = f"http://127.0.0.1:{free_port()}"
        peer = f"http://127.0.0.1:{free_port()}"
        self.log = open(os.path.join(self.dir, "etcd.log"), "wb")
        self.proc = subprocess.Popen(
            [ETCD, "--name", "polyflake-py", "--data-dir", os.path.join(self.dir, "data"),
             "--listen-client-urls", self.url, "--advertise-client-urls", self.url,
             "--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer,
             "--initial-cluster", f"polyflake-py={peer}"],
            stdin=subprocess.DEVNULL, stdout=self.log, stderr=subprocess.STDOUT,
        )
        deadline = time.monotonic() + 30
        while not self.healthy():
            if time.monotonic() > deadline or self.proc.poll() is not None:
                self.stop()
                pytest.fail("etcd did not become healthy within 30 s")
            time.sleep(0.1)

    def etcdctl(self, *args):
        return subprocess.run(
            [ETCDCTL, f"--endpoints={self.url}", "--dial-timeout=1s", "--command-timeout=2s", *args],
            env={**os.environ, "ETCDCTL_API": "3"}, capture_output=True, text=True,
        )

    def healthy(self):
        return self.etcdctl("endpoint", "health").returncode == 0

    def stop(self):
        self.proc.kill()
        self.proc.wait()
        self.log.close()
        shutil.rmtree(self.dir, ignore_errors=True)


@pytest.fixture(scope="module")
def etcd():
    server = Etcd()
    try:
        yield server
    finally:
        server.stop()


def test_from_etcd_takes_a_slot_and_issues(etcd):
    prefix = f"/polyflake-py-{os.getpid()}"
    g = Snowflake.from_etcd(etcd.url, prefix=prefix, ttl_s=2, reserve_ms=500, slots=4, identity="py-etcd-a")
    g.wait_ready()  # a new slot waits a full reserve
    assert 0 <= g.node_id < 4 and g.node_source == "etcd"
    ids = [g.next_id() for _ in range(5000)]
    assert len(set(ids)) == 5000 and {g.decode(x)["node_id"] for x in ids} == {g.node_id}
    h = g.health()
    assert h.ok and h.source == "etcd" and h.lease.kind == "etcd" and h.lease.slot == g.node_id
    assert etcd.url in h.lease.store and prefix in h.lease.store
    assert h.lease.high_water_ms >= g.decode(ids[-1])["epoch_ms"]
    # The slot key is in etcd, under the prefix.
    keys = etcd.etcdctl("get", "--prefix", "--keys-only", prefix).stdout.split()
    assert f"{prefix}/slot/{g.node_id:04d}" in keys, keys

    # A second holder (a list of endpoints, monotonic) gets another slot.
    m = MonotonicSnowflake.from_etcd([etcd.url], prefix=prefix, ttl_s=2, reserve_ms=500, slots=4,
                                     identity="py-etcd-b", max_lead_ms=100)
    m.wait_ready()
    assert m.node_id != g.node_id and m.mode == "monotonic"
    more = list(m.next_ids(5000))
    assert len(set(ids) | set(more)) == 10_000

    # Closing frees the slot at once (the key is deleted, not left to expire).
    slot = g.node_id
    g.close()
    keys = etcd.etcdctl("get", "--prefix", "--keys-only", prefix).stdout.split()
    assert f"{prefix}/slot/{slot:04d}" not in keys, keys
    m.close()


def test_a_revoked_etcd_lease_heals_with_heal_on(etcd):
    """`etcdctl lease revoke` under a live holder with heal=True: the generator takes a new slot
    by itself, behind its restart guard, and goes on; no ID repeats, the counters go on."""
    prefix = f"/polyflake-py-heal-{os.getpid()}"
    g = Snowflake.from_etcd(etcd.url, prefix=prefix, ttl_s=2, reserve_ms=500, slots=2,
                            identity="py-etcd-heal", heal=True)
    g.wait_ready(timeout_ms=10_000)
    ids = [g.next_id() for _ in range(5000)]
    issued_before = g.health().ids_issued
    got = json.loads(etcd.etcdctl("get", f"{prefix}/slot/{g.node_id:04d}", "-w", "json").stdout)
    lease_id = format(int(got["kvs"][0]["lease"]), "x")
    r = etcd.etcdctl("lease", "revoke", lease_id)
    assert r.returncode == 0, r.stderr
    statuses = set()
    end = time.monotonic() + 10
    while time.monotonic() < end and not statuses & {"lease_lost", "restart_guard"}:
        statuses.add(g.health().status)
        try:
            ids.append(g.next_id())
        except (polyflake.LeaseLost, polyflake.LeaseNotReady):
            time.sleep(0.005)
    assert statuses & {"lease_lost", "restart_guard"}, statuses
    g.wait_ready(timeout_ms=15_000)  # waits through the heal
    h = g.health()
    assert h.status == "ok" and h.lease.kind == "etcd" and h.lease.slot == g.node_id, h.to_dict()
    ids += [g.next_id() for _ in range(5000)]
    assert len(ids) == len(set(ids)), "an ID repeated across the heal"
    assert g.health().ids_issued >= len(ids) > issued_before
    keys = etcd.etcdctl("get", "--prefix", "--keys-only", prefix).stdout.split()
    assert f"{prefix}/slot/{g.node_id:04d}" in keys, keys
    g.close()


def test_from_etcd_no_free_slot(etcd):
    prefix = f"/polyflake-py-full-{os.getpid()}"
    with Snowflake.from_etcd(etcd.url, prefix=prefix, slots=1, identity="py-etcd-one") as g:
        assert g.node_id == 0
        with pytest.raises(polyflake.NoFreeSlot) as info:
            Snowflake.from_etcd(etcd.url, prefix=prefix, slots=1, identity="py-etcd-two")
        assert info.value.slots == 1 and prefix in str(info.value)


def test_from_etcd_unreachable_is_a_store_error():
    with pytest.raises(polyflake.LeaseStore):
        Snowflake.from_etcd(f"http://127.0.0.1:{free_port()}", connect_timeout_ms=300)


def test_from_etcd_username_and_password():
    """The credential keywords reach a real etcd with authentication on: the right password
    takes a slot (from the keywords, or with them None from POLYFLAKE_ETCD_USERNAME/_PASSWORD);
    a wrong one, or none, is a LeaseStore error naming the cause, not a hang."""
    server = Etcd()  # its own server: authentication stays on until it stops
    try:
        for args in (["user", "add", "root:rootpw"], ["role", "add", "root"],
                     ["user", "grant-role", "root", "root"], ["auth", "enable"]):
            r = server.etcdctl(*args)
            assert r.returncode == 0, (args, r.stderr)
        settings = dict(prefix="/polyflake-py-auth", slots=2, reserve_ms=100, connect_timeout_ms=3000)
        with Snowflake.from_etcd(server.url, username="root", password="rootpw", **settings) as g:
            g.wait_ready(30_000)
            assert g.next_id() > 0 and g.health().lease.kind == "etcd"
        with pytest.raises(polyflake.LeaseStore) as info:
            Snowflake.from_etcd(server.url, username="root", password="wrong", **settings)
        assert "auth" in str(info.value).lower(), info.value
        with pytest.raises(polyflake.LeaseStore):
            Snowflake.from_etcd(server.url, **settings)
        env = {"POLYFLAKE_ETCD_USERNAME": "root", "POLYFLAKE_ETCD_PASSWORD": "rootpw"}
        code = ("import sys, polyflake\n"
                "g = polyflake.Snowflake.from_etcd(sys.argv[1], username=None, password=None,"
                " prefix='/polyflake-py-auth', slots=2, reserve_ms=100, connect_timeout_ms=3000)\n"
                "g.wait_ready(30_000); print(g.node_id, g.next_id() > 0); g.close()\n")
        r = subprocess.run([sys.executable, "-c", code, server.url], env={**os.environ, **env},
                           capture_output=True, text=True, timeout=60)
        assert r.returncode == 0 and r.stdout.split()[1] == "True", r.stderr
    finally:
        server.stop()
