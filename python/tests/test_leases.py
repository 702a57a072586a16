"""Node-id sources from Python: file leases (slots, NoFreeSlot, close and `with`, the restart
guard, health), the static sources (env, hostname, IPv4), bad input, and close() racing calls
on other threads. Every rule is the core's: the tests check that Python reaches it."""

import ipaddress
import os
import threading
import time

import pytest

import polyflake
from polyflake import MonotonicSnowflake, Snowflake
from polyflake.testing import ManualClock

from conftest import CUSTOM_EPOCH_MS


def retry_not_ready(call, limit_s=15.0):
    """Call until the restart guard lets it through (LeaseNotReady), at most limit_s."""
    deadline = time.monotonic() + limit_s
    while True:
        try:
            return call()
        except polyflake.LeaseNotReady:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.005)


def test_file_lease_issues_and_reports_the_lease(tmp_path):
    g = Snowflake.from_file_lease(tmp_path, slots=4, identity="py-health", reserve_ms=200)
    g.wait_ready()  # a new slot waits a full reserve: a holder nobody can see may have reached it
    assert 0 <= g.node_id < 4 and g.node_source == "file_lease" and g.mode == "strict"
    ids = [g.next_id() for _ in range(10_000)]
    assert len(set(ids)) == len(ids) and ids == sorted(ids)
    assert {g.decode(x)["node_id"] for x in ids} == {g.node_id}
    h = g.health()
    assert h.ok and h.status == "ok" and h.source == "file_lease" and h.node_id == g.node_id
    lease = h.lease
    assert lease.kind == "file" and lease.slot == g.node_id and lease.store == str(tmp_path)
    # R is durable before use: no issued timestamp is past it.
    assert lease.high_water_ms >= g.decode(ids[-1])["epoch_ms"]
    assert not lease.guard_waiting and lease.guard_remaining_ms == 0 and lease.phase == "held"
    assert lease.guard_until_ms < g.decode(ids[0])["epoch_ms"] and not lease.expired
    assert not lease.lost and lease.failures == 0 and lease.last_error == ""
    d = h.to_dict()
    assert d["source"] == "file_lease" and d["lease"] == lease.to_dict()
    assert d["lease"]["slot"] == g.node_id
    assert "node_source='file_lease'" in repr(g)
    # A slot file per slot taken, in the directory given (str or PathLike alike).
    assert any(p.name.startswith("slot-") for p in tmp_path.iterdir())
    g.close()


def test_a_static_generator_keeps_a_mark_not_a_lease(tmp_path):
    # On the system clock a fixed node id keeps its restart guard's mark on the host: `lease`
    # says so with kind "host", the mark's path as its store.
    h = Snowflake(911, state_dir=tmp_path).health()
    assert h.source == "static" and h.lease.kind == "host" and h.lease.slot == 911
    assert h.lease.store.startswith(str(tmp_path)) and h.to_dict()["lease"]["kind"] == "host"
    assert h.restart_guard_note == "" and h.restart_waits == 0
    # Without one (restart_guard="off", or a test clock) there is none.
    h = Snowflake(912, restart_guard="off").health()
    assert h.lease is None and h.to_dict()["lease"] is None
    assert h.restart_guard_note.startswith("off")
    assert Snowflake(913, clock=ManualClock(CUSTOM_EPOCH_MS)).health().lease is None


def test_two_generators_on_one_directory_get_different_slots(tmp_path):
    a = Snowflake.from_file_lease(str(tmp_path), slots=8, identity="py-two", reserve_ms=100)
    b = MonotonicSnowflake.from_file_lease(tmp_path, slots=8, identity="py-two", max_lead_ms=50, reserve_ms=100)
    a.wait_ready()
    b.wait_ready()
    assert a.node_id != b.node_id
    assert (b.mode, b.max_lead_ms, type(b)) == ("monotonic", 50, MonotonicSnowflake)
    ids = [a.next_id() for _ in range(5000)] + list(b.next_ids(5000))
    assert len(set(ids)) == 10_000
    a.close()
    b.close()


def test_no_free_slot_and_close_frees_it(tmp_path):
    first = Snowflake.from_file_lease(tmp_path, slots=1, identity="py-one", reserve_ms=200)
    assert first.node_id == 0
    with pytest.raises(polyflake.NoFreeSlot) as info:
        Snowflake.from_file_lease(tmp_path, slots=1, identity="py-other")
    e = info.value
    assert isinstance(e, polyflake.PolyflakeError) and isinstance(e, RuntimeError)
    assert e.code == "NO_FREE_SLOT" and e.slots == 1 and str(tmp_path) in str(e)
    first.wait_ready()
    last = first.next_id()
    first.close()
    first.close()  # twice is fine
    assert first.closed and repr(first) == "<Snowflake closed>"
    for call in (first.next_id, lambda: first.next_ids(3), first.wait_ready):
        with pytest.raises(polyflake.GeneratorClosed, match="closed") as info:
            call()
        assert isinstance(info.value, ValueError) and info.value.node_id == 0
    # health() says so; what the generator was stays readable.
    assert first.health().status == "closed" and not first.health().ok and first.node_id == 0
    # The slot is free again; its successor starts above what the first holder issued.
    with Snowflake.from_file_lease(tmp_path, slots=1, identity="py-other", reserve_ms=200) as second:
        assert second.node_id == 0 and not second.closed
        assert retry_not_ready(second.next_id) > last
    assert second.closed
    # And free once more after the `with` block.
    third = Snowflake.from_file_lease(tmp_path, slots=1, identity="py-third", reserve_ms=200)
    assert third.node_id == 0
    del third  # dropping the object frees the slot too
    Snowflake.from_file_lease(tmp_path, slots=1, identity="py-fourth", reserve_ms=200).close()


def test_with_block_closes_on_an_exception(tmp_path):
    with pytest.raises(KeyError):
        with Snowflake.from_file_lease(tmp_path, slots=1, identity="py-exc") as g:
            raise KeyError("boom")
    assert g.closed
    Snowflake.from_file_lease(tmp_path, slots=1, identity="py-exc").close()


def test_close_on_a_fixed_node_id_refuses_later_calls():
    with Snowflake(913) as g:
        assert g.next_id() > 0
    assert g.closed
    with pytest.raises(ValueError, match="closed"):
        g.next_id()


def test_restart_guard_with_a_clock_behind_the_stored_mark(tmp_path):
    """A successor whose clock is 2 s behind the previous holder's mark issues nothing until
    its clock passes it, then continues with larger timestamps."""
    clock = ManualClock(CUSTOM_EPOCH_MS + 10_000_000)
    first = Snowflake.from_file_lease(tmp_path, slots=1, identity="py-guard", clock=clock, reserve_ms=1000)
    clock.elapse(1001)  # past the new slot's guard (a full reserve)
    t = clock.now_ms()
    last = first.next_id()
    first.close()  # leaves the last issued millisecond (t) as the slot's mark
    behind = ManualClock(t - 2000)
    second = Snowflake.from_file_lease(tmp_path, slots=1, identity="py-guard", clock=behind)
    h = second.health()
    assert not h.ok and h.status == "restart_guard"
    assert h.lease.guard_waiting and h.lease.guard_until_ms == t
    assert h.lease.guard_remaining_ms == t - behind.now_ms() + 1
    with pytest.raises(polyflake.LeaseNotReady) as info:
        second.next_id()
    assert info.value.remaining_ms == t - behind.now_ms() + 1 and info.value.node_id == 0
    behind.set(t)
    with pytest.raises(polyflake.LeaseNotReady):
        second.next_id()  # not past the mark yet
    behind.set(t + 1)
    nxt = second.next_id()
    assert nxt > last and second.decode(nxt)["epoch_ms"] == t + 1
    assert second.health().ok
    second.close()


def test_static_sources(monkeypatch):
    monkeypatch.setenv("POLYFLAKE_PY_NODE", "12")
    g = Snowflake.from_env("POLYFLAKE_PY_NODE")
    assert (g.node_id, g.node_source) == (12, "env") and g.health().lease.kind == "host"
    m = MonotonicSnowflake.from_env("POLYFLAKE_PY_NODE", max_lead_ms=5, clock=ManualClock(CUSTOM_EPOCH_MS))
    assert (m.node_id, m.mode, m.max_lead_ms) == (12, "monotonic", 5)
    h = Snowflake.from_hostname("ids-7.ids.default.svc", clock=ManualClock(CUSTOM_EPOCH_MS))
    assert (h.node_id, h.node_source) == (7, "hostname")
    for addr in ("10.1.7.9", ipaddress.IPv4Address("10.1.7.10")):
        ip = Snowflake.from_ipv4(addr, 22, clock=ManualClock(CUSTOM_EPOCH_MS))
        assert ip.node_id == int(ipaddress.IPv4Address(addr)) & ((1 << (32 - 22)) - 1)
        assert ip.node_source == "ipv4"
    # The layout decides what fits: 12 node bits take a /20.
    big = Snowflake.from_ipv4("10.1.7.9", 20, layout="big_fleet", clock=ManualClock(CUSTOM_EPOCH_MS))
    assert big.node_id == int(ipaddress.IPv4Address("10.1.7.9")) & ((1 << 12) - 1)


@pytest.mark.parametrize(
    "make",
    [
        lambda d: Snowflake.from_file_lease(d, slots=0),
        lambda d: Snowflake.from_file_lease(d, slots=-1),
        lambda d: Snowflake.from_file_lease(d, slots=1025),
        lambda d: Snowflake.from_file_lease(d, slots=2**70),
        lambda d: Snowflake.from_file_lease(d, reserve_ms=1),
        lambda d: Snowflake.from_file_lease(d, reserve_ms=-5),
        lambda d: Snowflake.from_file_lease(d, identity=""),
        lambda d: Snowflake.from_file_lease(d, identity="a/b"),
        lambda d: Snowflake.from_etcd([]),
        lambda d: Snowflake.from_etcd("http://127.0.0.1:2379", ttl_s=0),
        lambda d: Snowflake.from_etcd("http://127.0.0.1:2379", connect_timeout_ms=0),
        lambda d: Snowflake.from_env("POLYFLAKE_PY_SURELY_UNSET"),
        lambda d: Snowflake.from_hostname("no-ordinal-here-x"),
        lambda d: Snowflake.from_ipv4("10.1.7", 22),
        lambda d: Snowflake.from_ipv4("10.1.7.9", 21),
        lambda d: Snowflake.from_ipv4("10.1.7.9", 33),
        lambda d: Snowflake.from_ipv4("10.1.7.9", -1),
    ],
)
def test_bad_source_values_are_the_cores_errors(tmp_path, make):
    with pytest.raises(polyflake.InvalidNodeSource) as info:
        make(tmp_path)
    assert isinstance(info.value, ValueError) and info.value.code == "INVALID_NODE_SOURCE"
    assert info.value.reason


def test_bad_env_value(monkeypatch):
    monkeypatch.setenv("POLYFLAKE_PY_NODE", "twelve")
    with pytest.raises(polyflake.InvalidNodeSource):
        Snowflake.from_env("POLYFLAKE_PY_NODE")
    monkeypatch.setenv("POLYFLAKE_PY_NODE", "5000")
    with pytest.raises(polyflake.InvalidNodeId):
        Snowflake.from_env("POLYFLAKE_PY_NODE")


@pytest.mark.parametrize(
    "make",
    [
        lambda d: Snowflake.from_file_lease(3),
        lambda d: Snowflake.from_file_lease(None),
        lambda d: Snowflake.from_file_lease(bytes(str(d), "utf-8")),
        lambda d: Snowflake.from_file_lease(d, slots="3"),
        lambda d: Snowflake.from_file_lease(d, slots=True),
        lambda d: Snowflake.from_file_lease(d, slots=2.0),
        lambda d: Snowflake.from_file_lease(d, identity=5),
        lambda d: Snowflake.from_file_lease(d, reserve_ms=1.5),
        lambda d: Snowflake.from_file_lease(d, reserve_ms=None),
        lambda d: Snowflake.from_file_lease(d, layout=object()),
        lambda d: Snowflake.from_etcd(5),
        lambda d: Snowflake.from_etcd([b"http://127.0.0.1:2379"]),
        lambda d: Snowflake.from_etcd("http://127.0.0.1:2379", prefix=5),
        lambda d: Snowflake.from_etcd("http://127.0.0.1:2379", ttl_s="10"),
        lambda d: Snowflake.from_env(5),
        lambda d: Snowflake.from_hostname(7),
        lambda d: Snowflake.from_ipv4(167839497, 22),
        lambda d: Snowflake.from_ipv4("10.1.7.9", "22"),
        lambda d: Snowflake.from_file_lease(d, max_lead_ms=3),  # a MonotonicSnowflake setting
    ],
)
def test_bad_source_types_are_type_errors(tmp_path, make):
    with pytest.raises(TypeError):
        make(tmp_path)


def test_close_while_other_threads_issue(tmp_path):
    g = Snowflake.from_file_lease(tmp_path, slots=2, identity="py-threads", reserve_ms=100)
    g.wait_ready()
    results = [[] for _ in range(4)]
    endings = [None] * 4
    started = threading.Barrier(5)

    def work(k):
        started.wait()
        out = results[k]
        try:
            while True:
                out.append(g.next_id())
                if len(out) % 512 == 0:
                    out.extend(g.next_ids(64))
        except ValueError as e:
            endings[k] = type(e).__name__

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    started.wait()
    time.sleep(0.2)
    g.close()
    for t in threads:
        t.join(timeout=30)
        assert not t.is_alive()
    assert endings == ["GeneratorClosed"] * 4
    ids = [x for r in results for x in r]
    assert len(ids) == len(set(ids)) and len(ids) > 0
    # The slot was freed: both slots can be taken again.
    a = Snowflake.from_file_lease(tmp_path, slots=2, identity="py-threads")
    b = Snowflake.from_file_lease(tmp_path, slots=2, identity="py-threads")
    assert {a.node_id, b.node_id} == {0, 1}


def test_lease_with_a_python_callable_clock_closes_without_deadlock(tmp_path):
    """The renewal thread reads a Python clock (it needs the GIL): close() and dropping the
    object must release the GIL while they join it."""
    now = [CUSTOM_EPOCH_MS + 20_000_000]
    g = Snowflake.from_file_lease(tmp_path, slots=1, identity="py-callable", reserve_ms=10, clock=lambda: now[0])
    now[0] += 11  # past the new slot's guard
    # The clock stands still (R = now + 10 ms stays ahead of it however late the renewal
    # thread gets the GIL); the renewals still call it. Issue until the renewal thread has run
    # (up to 10 s), rather than for a fixed ~50 ms a loaded machine can deschedule it through.
    deadline = time.monotonic() + 10
    while True:
        g.next_id()
        if g.health().lease.renewals > 0 or time.monotonic() > deadline:
            break
        time.sleep(0.001)
    assert g.health().lease.renewals > 0
    g.close()
    h = Snowflake.from_file_lease(tmp_path, slots=1, identity="py-callable", reserve_ms=10, clock=lambda: now[0])
    time.sleep(0.05)
    del h
    # After the drop the slot is free.
    Snowflake.from_file_lease(tmp_path, slots=1, identity="py-callable").close()


def test_lease_dir_is_created(tmp_path):
    d = tmp_path / "a" / "b"
    g = Snowflake.from_file_lease(os.fspath(d), slots=2, identity="py-mkdir", reserve_ms=100)
    g.wait_ready()
    assert d.is_dir() and g.next_id() > 0
    g.close()
