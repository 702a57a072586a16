"""The coarse clock source through the binding: `clock="coarse"` (or `"precise"`) on
every constructor, `clock_source=` for a clock object's coarse reading, the source in health, and
the core's error for a bad name. The rules themselves are the core's (core/tests/coarse.rs); the
scenario files run on both sources in test_scenarios.py."""

import tempfile

import pytest

import polyflake
from polyflake import MonotonicSnowflake, Snowflake, UlidGenerator, Uuid7Generator
from polyflake.testing import ManualClock

T = 1_704_067_201_003  # 3 ms past a 4 ms tick (1_704_067_201_000)
MAX_COARSE_TICK_NS = 10_000_000  # the core's MAX_COARSE_TICK_NS


@pytest.mark.parametrize(
    "make",
    [
        lambda **kw: Snowflake(node_id=700, **kw),
        lambda **kw: MonotonicSnowflake(node_id=701, **kw),
        lambda **kw: Uuid7Generator(**kw),
        lambda **kw: UlidGenerator(mode="monotonic", **kw),
    ],
    ids=["Snowflake", "MonotonicSnowflake", "Uuid7Generator", "UlidGenerator"],
)
def test_every_constructor_takes_a_clock_source_name(make):
    for name in ("coarse", "precise"):
        g = make(clock=name)
        g.next_id()
        h = g.health()
        # Coarse is in effect where the system's coarse clock ticks at 10 ms or finer; otherwise
        # the core falls back to precise and says why.
        assert h.clock_source in (name, "precise")
        if h.clock_source != name:
            assert name == "coarse" and h.clock_note
        else:
            assert h.clock_note == ""
        assert 0 < h.clock_tick_ns <= (MAX_COARSE_TICK_NS if h.clock_source == "coarse" else 10**9)
        if isinstance(g, Snowflake):
            assert g.clock_source == h.clock_source
        g.close()


def test_coarse_in_effect_on_linux():
    g = Snowflake(node_id=702, clock="coarse")
    h = g.health()
    assert (h.clock_source, h.clock_note) == ("coarse", ""), h.clock_note
    assert h.clock_tick_ns % 1_000_000 == 0  # a whole number of ms per tick (HZ=250: 4 ms)
    assert "clock_source" in h.to_dict()
    assert Snowflake(node_id=703).clock_source == "precise"  # the default


def test_the_lease_constructors_take_it_too():
    with Snowflake.from_file_lease(tempfile.mkdtemp(), slots=1, clock="coarse") as g:
        assert g.clock_source == "coarse"
    assert MonotonicSnowflake.from_hostname("ids-707", clock="coarse").clock_source == "coarse"


def test_a_bad_name_is_the_cores_error():
    for make in (lambda **kw: Snowflake(node_id=704, **kw), lambda **kw: Uuid7Generator(**kw)):
        with pytest.raises(polyflake.InvalidArgument) as e:
            make(clock="fast")
        assert isinstance(e.value, ValueError) and e.value.name == "clock_source"
        assert '"precise" or "coarse"' in str(e.value)
        with pytest.raises(polyflake.InvalidArgument):
            make(clock_source="COARSE")
        with pytest.raises(TypeError):
            make(clock_source=4)
        with pytest.raises(TypeError):  # two names for one thing
            make(clock="coarse", clock_source="precise")


def test_a_manual_clocks_coarse_reading():
    # A 4 ms tick: the coarse reading lags the precise one by up to 3 ms.
    lagging = ManualClock(T)
    lagging.set_tick_ms(4)
    coarse = Snowflake(node_id=705, clock=lagging, clock_source="coarse")
    precise = Snowflake(node_id=706, clock=lagging)
    # Strict mode issues at the coarse reading: a past tick, never ahead of the wall clock.
    assert coarse.decode(coarse.next_id())["epoch_ms"] == T - 3
    assert precise.decode(precise.next_id())["epoch_ms"] == T
    assert coarse.health().clock_source == "coarse"
    assert coarse.health().clock_tick_ns == 0  # an injected clock has no clock_getres
    for _ in range(4095):  # the rest of the coarse millisecond's 4,096
        assert coarse.decode(coarse.next_id())["epoch_ms"] == T - 3
    # Spent: the precise reading (T) decides only whether the clock has reached the next
    # millisecond; the state goes on from the coarse floor (T - 2), never jumps to the precise
    # reading (a state that followed it would read both clocks at every later call).
    assert coarse.decode(coarse.next_id()) == {"epoch_ms": T - 2, "node_id": 705, "sequence": 0}
    # The coarse reading (T - 3) is now behind the last issued millisecond: the tick's lag, not
    # a rewind, so nothing waits and nothing is refused.
    assert coarse.decode(coarse.next_id()) == {"epoch_ms": T - 2, "node_id": 705, "sequence": 1}
    h = coarse.health()
    assert h.ok and h.rewinds_waited == 0 and h.rewinds_refused == 0
    # A real rewind shows at once in the coarse reading too, and is refused past max_wait_ms.
    lagging.advance(-600)
    with pytest.raises(polyflake.ClockMovedBackwards):
        coarse.next_id()


def test_uuid_generator_on_a_coarse_manual_clock():
    clock = ManualClock(T)
    clock.set_tick_ms(4)
    g = Uuid7Generator(clock=clock, clock_source="coarse")
    assert polyflake.uuid7_timestamp_ms(g.next_id()) == T - 3
    assert "clock_source='coarse'" in repr(g)
