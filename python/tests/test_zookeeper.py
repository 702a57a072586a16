"""ZooKeeper leases from Python against a real ZooKeeper (Debian's zookeeper 3.8 on its Java main,
installed by `make deps-apt`), from the `zookeeper` fixture of conftest.py. No mock stands in
for ZooKeeper."""

import os
import socket
import subprocess
import sys
import time

import pytest

import polyflake
from polyflake import MonotonicSnowflake, Snowflake

RACER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "zk_racer.py")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def unique_prefix(name):
    return f"/polyflake-py-{name}-{os.getpid()}-{time.monotonic_ns()}"


def test_from_zookeeper_takes_a_slot_and_issues(zookeeper):
    prefix = unique_prefix("a")
    g = Snowflake.from_zookeeper(zookeeper, prefix=prefix, session_timeout_ms=4000, reserve_ms=300,
                                 slots=4, identity="py-zk-a")
    g.wait_ready(30_000)  # a new slot waits out a full reserve
    assert 0 <= g.node_id < 4 and g.node_source == "zookeeper"
    ids = [g.next_id() for _ in range(5000)]
    assert len(set(ids)) == 5000 and {g.decode(x)["node_id"] for x in ids} == {g.node_id}
    h = g.health()
    assert h.ok and h.source == "zookeeper" and h.lease.kind == "zookeeper"
    assert h.lease.slot == g.node_id
    # The store names the ensemble and the prefix.
    assert zookeeper in h.lease.store and prefix in h.lease.store, h.lease.store
    assert h.lease.high_water_ms >= g.decode(ids[-1])["epoch_ms"]

    # A second holder (the ensemble as a list, monotonic) gets another slot of the same prefix.
    m = MonotonicSnowflake.from_zookeeper([zookeeper], prefix=prefix, session_timeout_ms=4000,
                                          reserve_ms=300, slots=4, identity="py-zk-b",
                                          max_lead_ms=100)
    m.wait_ready(30_000)
    assert m.node_id != g.node_id and m.mode == "monotonic" and m.node_source == "zookeeper"
    more = list(m.next_ids(5000))
    assert len(set(ids) | set(more)) == 10_000
    g.close()
    m.close()
    assert g.closed and m.closed


def test_close_frees_the_slot_at_once(zookeeper):
    prefix = unique_prefix("free")
    settings = dict(prefix=prefix, slots=1, reserve_ms=100, session_timeout_ms=10_000)
    with Snowflake.from_zookeeper(zookeeper, identity="py-zk-first", **settings) as g:
        assert g.node_id == 0
        with pytest.raises(polyflake.NoFreeSlot) as info:
            Snowflake.from_zookeeper(zookeeper, identity="py-zk-second", **settings)
        assert info.value.slots == 1 and prefix in str(info.value)
    # Closed: the ephemeral slot znode is deleted, not left to the 10 s session timeout.
    start = time.monotonic()
    with Snowflake.from_zookeeper(zookeeper, identity="py-zk-second", **settings) as again:
        assert again.node_id == 0
    assert time.monotonic() - start < 5


def test_processes_racing_for_fewer_slots(zookeeper):
    """Six processes race for three slots: exactly three win, each with its own node id; the
    others are refused with NoFreeSlot."""
    prefix, slots, racers = unique_prefix("race"), 3, 6
    procs = [
        subprocess.Popen([sys.executable, RACER, zookeeper, prefix, str(slots), f"py-racer-{i}"],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        for i in range(racers)
    ]
    try:
        lines = [p.stdout.readline().split() for p in procs]
    finally:
        for p in procs:
            p.stdin.close()
        codes = [p.wait(timeout=60) for p in procs]
    assert codes == [0] * racers, (codes, lines)
    won = [line for line in lines if line[0] == "WON"]
    lost = [line for line in lines if line[0] == "LOST"]
    assert len(won) == slots and len(lost) == racers - slots, lines
    assert sorted(int(w[1]) for w in won) == list(range(slots))
    assert {line[1] for line in lost} == {polyflake.NoFreeSlot.code}
    # Each winner's ID carries its own node id.
    assert {Snowflake.decode(int(w[2]))["node_id"] for w in won} == set(range(slots))


def test_digest_auth_protects_the_znodes(zookeeper, monkeypatch):
    """With username and password, the znodes polyflake creates are writable by that user only:
    the same user with a wrong password cannot take a slot; the right one can, from the keywords
    or (keywords None) from POLYFLAKE_ZOOKEEPER_USERNAME / _PASSWORD."""
    prefix = unique_prefix("auth")
    settings = dict(prefix=prefix, slots=1, reserve_ms=100)
    with Snowflake.from_zookeeper(zookeeper, username="alice", password="s3cret", **settings) as g:
        assert g.node_id == 0
    with pytest.raises(polyflake.LeaseStore) as info:
        Snowflake.from_zookeeper(zookeeper, username="alice", password="wrong", **settings)
    assert "not authorized" in str(info.value), info.value
    with pytest.raises(polyflake.LeaseStore):
        Snowflake.from_zookeeper(zookeeper, **settings)
    monkeypatch.setenv("POLYFLAKE_ZOOKEEPER_USERNAME", "alice")
    monkeypatch.setenv("POLYFLAKE_ZOOKEEPER_PASSWORD", "s3cret")
    with Snowflake.from_zookeeper(zookeeper, username=None, password=None, **settings) as g:
        assert g.node_id == 0


def test_tls_files_are_read_before_connecting(tmp_path, monkeypatch):
    """ca_file, cert_file and key_file reach the core on both stores: a file that is missing or
    not PEM is refused by name before any connection (no server needed), and so is one named by
    the environment when the keyword is None."""
    missing = tmp_path / "no-such-ca.pem"
    not_pem = tmp_path / "not.pem"
    not_pem.write_text("hello\n")
    port = free_port()
    for make, where in ((Snowflake.from_etcd, f"http://127.0.0.1:{port}"),
                        (Snowflake.from_zookeeper, f"127.0.0.1:{port}")):
        with pytest.raises(polyflake.InvalidNodeSource, match="ca_file .*no-such-ca.pem"):
            make(where, ca_file=missing)  # an os.PathLike
        with pytest.raises(polyflake.InvalidNodeSource, match="cert_file .*not.pem"):
            make(where, cert_file=str(not_pem), key_file=str(not_pem))
    monkeypatch.setenv("POLYFLAKE_ZOOKEEPER_CA_FILE", str(missing))
    with pytest.raises(polyflake.InvalidNodeSource, match="POLYFLAKE_ZOOKEEPER_CA_FILE"):
        Snowflake.from_zookeeper(f"127.0.0.1:{port}", ca_file=None)
    monkeypatch.setenv("POLYFLAKE_ETCD_CA_FILE", str(missing))
    with pytest.raises(polyflake.InvalidNodeSource, match="POLYFLAKE_ETCD_CA_FILE"):
        Snowflake.from_etcd(f"http://127.0.0.1:{port}")


def test_unreachable_ensemble_fails_within_the_connect_timeout():
    start = time.monotonic()
    with pytest.raises(polyflake.LeaseStore) as info:
        Snowflake.from_zookeeper(f"127.0.0.1:{free_port()}", connect_timeout_ms=500)
    elapsed = time.monotonic() - start
    assert "cannot reach ZooKeeper" in str(info.value), info.value
    assert "timed out after 500 ms" in str(info.value), info.value
    # The connect timeout bounds the attempt (with room for a loaded machine, not a hang).
    assert elapsed < 0.5 + 2.0, elapsed


@pytest.mark.parametrize("ensemble", ["", " , ", []])
def test_empty_ensemble(ensemble):
    with pytest.raises(polyflake.InvalidNodeSource):
        Snowflake.from_zookeeper(ensemble)


@pytest.mark.parametrize("settings, match", [
    (dict(prefix="polyflake"), "prefix"),
    (dict(prefix=""), "prefix"),
    (dict(session_timeout_ms=10), "session_timeout_ms"),
    (dict(session_timeout_ms=-1), "session_timeout_ms"),
    (dict(connect_timeout_ms=0), "connect_timeout_ms"),
    (dict(slots=0), "slots"),
    (dict(reserve_ms=1), "reserve_ms"),
])
def test_bad_settings_are_the_cores_errors(settings, match):
    # Checked before connecting: no server is needed for any of them.
    with pytest.raises(polyflake.InvalidNodeSource, match=match):
        Snowflake.from_zookeeper(f"127.0.0.1:{free_port()}", **settings)


@pytest.mark.parametrize("server", ["127.0.0.1", "127.0.0.1:0", "127.0.0.1:70000", ":2181",
                                    "zk://127.0.0.1:2181"])
def test_bad_server(server):
    with pytest.raises(polyflake.InvalidNodeSource, match="host:port"):
        Snowflake.from_zookeeper([server])


@pytest.mark.parametrize("args, settings, match", [
    ((2181,), {}, "ensemble must be"),
    ((b"127.0.0.1:2181",), {}, "ensemble must be"),
    (([1],), {}, "each item of ensemble must be a str"),
    ((None,), {}, "ensemble must be"),
    (("127.0.0.1:2181",), dict(prefix=1), "prefix must be a str"),
    (("127.0.0.1:2181",), dict(session_timeout_ms="10"), "session_timeout_ms must be an int"),
    (("127.0.0.1:2181",), dict(connect_timeout_ms=1.5), "connect_timeout_ms must be an int"),
    (("127.0.0.1:2181",), dict(ca_file=b"/ca.pem"), "ca_file must be a str or an os.PathLike"),
    (("127.0.0.1:2181",), dict(cert_file=1), "cert_file must be a str or an os.PathLike"),
    (("127.0.0.1:2181",), dict(username=1), "username must be a str"),
    (("127.0.0.1:2181",), dict(password=b"pw"), "password must be a str"),
    (("127.0.0.1:2181",), dict(ttl_s=10), "unexpected keyword argument 'ttl_s'"),
    ((), {}, "ensemble"),
])
def test_wrong_types_are_type_errors(args, settings, match):
    with pytest.raises(TypeError, match=match):
        Snowflake.from_zookeeper(*args, **settings)


def test_etcd_takes_the_credential_keywords_with_checked_types():
    with pytest.raises(TypeError, match="key_file must be a str or an os.PathLike"):
        Snowflake.from_etcd("http://127.0.0.1:2379", key_file=3)
    with pytest.raises(TypeError, match="password must be a str"):
        Snowflake.from_etcd("http://127.0.0.1:2379", password=1234)
    with pytest.raises(TypeError, match="unexpected keyword argument 'session_timeout_ms'"):
        Snowflake.from_etcd("http://127.0.0.1:2379", session_timeout_ms=1000)
