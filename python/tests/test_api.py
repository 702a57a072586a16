"""The API surface: decode on the class and on a generator, layouts, health, errors, batches."""

import array
import pickle

import pytest

import polyflake
from polyflake import Layout, MonotonicSnowflake, Snowflake
from polyflake.testing import ManualClock, ScriptedClock

from conftest import CUSTOM_EPOCH_MS

LITERAL = 141264821508263936


def test_decode_static_and_bound():
    assert Snowflake.decode(LITERAL) == {"epoch_ms": 1737747358021, "node_id": 37, "sequence": 0}
    assert MonotonicSnowflake.decode(LITERAL) == Snowflake.decode(LITERAL)
    assert polyflake.decode(LITERAL) == Snowflake.decode(LITERAL)
    # On a generator, decode uses its own layout and epoch.
    g = Snowflake(3, layout=Layout.BIG_FLEET, epoch_ms=CUSTOM_EPOCH_MS + 10, clock=ManualClock(CUSTOM_EPOCH_MS + 500))
    x = g.next_id()
    assert g.decode(x) == {"epoch_ms": CUSTOM_EPOCH_MS + 500, "node_id": 3, "sequence": 0}
    assert g.decode(x) == polyflake.decode(x, layout=Layout.BIG_FLEET, epoch_ms=CUSTOM_EPOCH_MS + 10)
    assert Snowflake.decode(x) != g.decode(x)  # the default layout reads other fields
    with pytest.raises(TypeError):
        g.decode(x, layout=Layout.DEFAULT)  # a generator's decode takes no overrides


def test_layout_forms_are_equal():
    forms = [Layout.LONG_LIVED, Layout(42, 8, 13), Layout.from_name("long_lived"), "long_lived", "42/8/13", (42, 8, 13), [42, 8, 13]]
    for form in forms:
        g = Snowflake(1, layout=form, clock=ManualClock(CUSTOM_EPOCH_MS))
        assert g.layout == Layout.LONG_LIVED, form
    assert Layout.LONG_LIVED.name == "long_lived" and Layout(40, 11, 12).name is None
    assert str(Layout.DEFAULT) == "41/10/12" and repr(Layout.SHORT) == "Layout.SHORT"
    assert pickle.loads(pickle.dumps(Layout(40, 11, 12))) == Layout(40, 11, 12)
    assert len({Layout.DEFAULT, Layout(41, 10, 12)}) == 1


def test_next_ids_is_an_int64_array():
    m = MonotonicSnowflake(4, clock=ManualClock(CUSTOM_EPOCH_MS + 1))
    ids = m.next_ids(5000)
    assert isinstance(ids, array.array) and ids.typecode == "q" and ids.itemsize == 8
    assert memoryview(ids).format == "q"
    assert list(ids) == sorted(set(ids))
    assert m.next_ids(0).tolist() == []
    after = m.next_id()
    assert after > ids[-1]
    s = Snowflake(4, clock=ScriptedClock([CUSTOM_EPOCH_MS + 1]))
    assert list(s.next_ids(3)) == [4 << 12 | k | 1 << 22 for k in range(3)]


def test_properties_and_repr():
    m = MonotonicSnowflake(9, max_lead_ms=3, clock=ManualClock(CUSTOM_EPOCH_MS))
    assert (m.node_id, m.epoch_ms, m.mode, m.max_lead_ms, m.max_wait_ms) == (9, CUSTOM_EPOCH_MS, "monotonic", 3, 5.0)
    assert isinstance(m, Snowflake)
    assert "MonotonicSnowflake(node_id=9" in repr(m)
    s = Snowflake(9, clock=ManualClock(CUSTOM_EPOCH_MS))
    # The core's setting, which a strict generator never reaches (it never runs ahead).
    assert s.mode == "strict" and s.max_lead_ms == polyflake.DEFAULT_MAX_LEAD_MS == 5000
    # A monotonic generator is bounded by default; None set explicitly is unbounded.
    assert MonotonicSnowflake(10, clock=ManualClock(CUSTOM_EPOCH_MS)).max_lead_ms == 5000
    assert MonotonicSnowflake(11, clock=ManualClock(CUSTOM_EPOCH_MS), max_lead_ms=None).max_lead_ms is None


def test_health_fields():
    clock = ManualClock(CUSTOM_EPOCH_MS + 100)
    g = Snowflake(2, clock=clock)
    h = g.health()
    assert h.ok and h.status == "ok" and h.last_issued_ms is None and h.ids_issued == 0
    g.next_id()
    clock.advance(-50)
    h = g.health()
    assert not h.ok and h.status == "clock_behind" and h.lead_ms == 50
    assert h.last_issued_ms == CUSTOM_EPOCH_MS + 100 and h.wall_ms == CUSTOM_EPOCH_MS + 50
    d = h.to_dict()
    assert d["status"] == "clock_behind" and d["ids_issued"] == 1 and d["lease_failures"] == 0
    with pytest.raises(AttributeError):
        h.ok = True  # frozen


def test_every_nested_health_record_has_its_class(tmp_path):
    # `lease` (here a fixed node id's mark) and `clock_sync`: a record the core adds must be
    # given its class here too, not read as a plain snapshot.
    with Snowflake(917, state_dir=tmp_path) as g:
        h = g.health()
        nested = {k for k, v in h.to_dict().items() if isinstance(v, dict)}
        assert nested == {"lease", "clock_sync"}
        assert type(h.lease) is polyflake.LeaseHealth and type(h.clock_sync) is polyflake.ClockSync
        assert h.lease.kind == "host" and h.to_dict()["lease"] == h.lease.to_dict()


def test_error_classes():
    kinds = [
        polyflake.InvalidLayout, polyflake.UnknownLayout, polyflake.InvalidNodeId,
        polyflake.InvalidEpoch, polyflake.InvalidArgument, polyflake.InvalidId,
        polyflake.ClockMovedBackwards, polyflake.TimestampOverflow, polyflake.LeadLimitExceeded,
        polyflake.NodeIdInUse, polyflake.UsedAfterFork, polyflake.ClockFailed,
    ]
    assert len({k.code for k in kinds}) == len(kinds)
    for k in kinds:
        assert issubclass(k, polyflake.PolyflakeError) and k.__module__ == "polyflake"
    assert issubclass(polyflake.ClockMovedBackwards, RuntimeError)
    # The kernel's refusal is a runtime condition, as a lease's expiry is.
    for k in (polyflake.ClockUnsynchronized, polyflake.LeaseExpired):
        assert issubclass(k, polyflake.PolyflakeError) and issubclass(k, RuntimeError)
        assert not issubclass(k, ValueError) and k in map(vars(polyflake).get, polyflake.__all__)
    assert polyflake.ClockUnsynchronized.code == "CLOCK_UNSYNCHRONIZED"
    for k in kinds[:6]:
        assert issubclass(k, ValueError), k
    e = pickle.loads(pickle.dumps(polyflake.InvalidId("x")))
    assert type(e) is polyflake.InvalidId


def test_node_id_in_use_on_the_system_clock():
    a = Snowflake(611)
    with pytest.raises(polyflake.NodeIdInUse) as info:
        Snowflake(611)
    # Held in this process: no pid to name (another process's holder is named: test_fork.py).
    assert info.value.holder_pid is None and info.value.node_id == 611
    assert info.value.code == "NODE_ID_IN_USE" and "in this process" in str(info.value)
    # Another layout or epoch, or an injected clock, is a different generator.
    Snowflake(611, layout=Layout.BIG_FLEET)
    Snowflake(611, clock=ManualClock(CUSTOM_EPOCH_MS))
    del a
    Snowflake(611)  # released when the first one is gone


def test_lead_limit():
    m = MonotonicSnowflake(4, max_lead_ms=0, clock=ManualClock(CUSTOM_EPOCH_MS + 1))
    m.next_ids(4096)
    with pytest.raises(polyflake.LeadLimitExceeded) as info:
        m.next_id()
    assert info.value.max_lead_ms == 0 and isinstance(info.value, RuntimeError)


def test_generators_cannot_be_pickled():
    # A copy would issue the same IDs again.
    with pytest.raises(TypeError):
        pickle.dumps(MonotonicSnowflake(4, clock=ManualClock(CUSTOM_EPOCH_MS)))
