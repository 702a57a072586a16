"""The generator's rules as plain Python assertions on callable clocks (`clock=lambda: ...`, a
`scripted_clock`): the bit layout, order within and across milliseconds, the reference literal,
rewinds small and large, the call's wait budget, sequence exhaustion, a frozen clock, and
monotonic mode. Nothing reaches past the API (no `g._last_ms`, no `sleep=`): the exhaustion case
drives the clock and reads the sleeps from health().

A user's callable clock is not a test clock: one live generator per node id in a process, and a
successor continues after the last ID of its node id. So each test runs in a process of its
own (as each would in use), and a generator is dropped before its node id is used again."""

import time

import pytest

from polyflake import ClockMovedBackwards, MonotonicSnowflake, Snowflake

from conftest import CUSTOM_EPOCH_MS

MAX_SEQUENCE = 4095

pytestmark = pytest.mark.forked


def scripted_clock(values):
    """A clock that returns `values` in order, then ticks forward by 1 ms."""
    it = iter(values)
    state = [0]

    def clock():
        try:
            state[0] = next(it)
        except StopIteration:
            state[0] += 1
        return state[0]

    return clock


def test_bit_layout():
    g = Snowflake(node_id=1023, clock=lambda: CUSTOM_EPOCH_MS + 1)
    one = g.next_id()
    assert one < (1 << 63), "must stay positive in a signed BIGINT"
    assert Snowflake.decode(one)["node_id"] == 1023
    assert Snowflake.decode(one)["epoch_ms"] == CUSTOM_EPOCH_MS + 1


def test_monotonic_within_and_across_ms():
    g = Snowflake(node_id=7, clock=scripted_clock([CUSTOM_EPOCH_MS] * 5))
    ids = [g.next_id() for _ in range(5)]
    assert ids == sorted(ids) and len(set(ids)) == 5
    assert [Snowflake.decode(i)["sequence"] for i in ids] == [0, 1, 2, 3, 4]

    del g
    g = Snowflake(node_id=7, clock=scripted_clock([CUSTOM_EPOCH_MS, CUSTOM_EPOCH_MS, CUSTOM_EPOCH_MS + 1]))
    ids = [g.next_id() for _ in range(3)]
    assert ids == sorted(ids) and len(set(ids)) == 3


def test_the_literal():
    g = Snowflake(node_id=37, clock=lambda: 1_737_747_358_021)
    first = g.next_id()
    assert first == 141264821508263936
    assert Snowflake.decode(first) == {"epoch_ms": 1_737_747_358_021, "node_id": 37, "sequence": 0}
    assert Snowflake.decode(141264821510144037) == {
        "epoch_ms": 1_737_747_358_021,
        "node_id": 496,
        "sequence": 37,
    }


def test_large_rewind_refused():
    g = Snowflake(node_id=7, max_wait_ms=5.0, clock=scripted_clock([CUSTOM_EPOCH_MS + 1000, CUSTOM_EPOCH_MS + 400]))
    g.next_id()
    with pytest.raises(ClockMovedBackwards) as info:
        g.next_id()
    assert isinstance(info.value, RuntimeError)
    assert info.value.behind_ms == 600 and info.value.node_id == 7


def test_small_rewind_waited_out():
    g = Snowflake(
        node_id=7,
        max_wait_ms=5.0,
        clock=scripted_clock([CUSTOM_EPOCH_MS + 1000, CUSTOM_EPOCH_MS + 998, CUSTOM_EPOCH_MS + 1000]),
    )
    one, two = g.next_id(), g.next_id()
    assert two > one
    assert Snowflake.decode(two)["epoch_ms"] == CUSTOM_EPOCH_MS + 1000
    assert Snowflake.decode(two)["sequence"] == 1


def test_max_wait_bounds_the_call():
    state = {"ms": CUSTOM_EPOCH_MS + 1_000_000, "reads": 0}

    def retreating_clock():
        state["reads"] += 1
        if state["reads"] > 1:
            state["ms"] -= 4
        return state["ms"]

    g = Snowflake(node_id=7, max_wait_ms=5.0, clock=retreating_clock)
    g.next_id()
    started = time.monotonic()
    with pytest.raises(ClockMovedBackwards):
        g.next_id()
    waited_ms = (time.monotonic() - started) * 1000
    # The 5 ms budget bounds the whole call. 500 ms, not 50: the wait is real sleeps (each can be
    # descheduled on a loaded machine) and every clock read is a Python call; a deadline per
    # sample instead would never end (this clock retreats forever), so a hang still fails.
    assert waited_ms < 500, waited_ms


def test_exhaustion_sleeps_then_rolls():
    ticks = iter([CUSTOM_EPOCH_MS + 9] * (MAX_SEQUENCE + 1) + [CUSTOM_EPOCH_MS + 9] * 3 + [CUSTOM_EPOCH_MS + 10] * 4)
    # The three sleeps before the clock moves are real time: a budget of 50 ms instead of the
    # default 5 keeps a busy machine (descheduled sleeps) from turning the roll into a refusal.
    g = Snowflake(node_id=7, max_wait_ms=50.0, clock=lambda: next(ticks))
    ids = [g.next_id() for _ in range(MAX_SEQUENCE + 1)]
    assert Snowflake.decode(ids[-1])["sequence"] == MAX_SEQUENCE  # last one
    rolled = g.next_id()  # must roll to the next ms
    assert Snowflake.decode(rolled)["epoch_ms"] == CUSTOM_EPOCH_MS + 10
    assert Snowflake.decode(rolled)["sequence"] == 0
    h = g.health()
    assert h.sequence_exhaustions == 1
    assert h.wait_sleeps >= 1, "the exhaustion path must sleep, not busy-spin"


def test_frozen_clock_refuses_not_blocks():
    g = Snowflake(node_id=1, clock=lambda: CUSTOM_EPOCH_MS + 5)
    frozen_ids = [g.next_id() for _ in range(MAX_SEQUENCE + 1)]
    assert len(set(frozen_ids)) == 4096 and frozen_ids == sorted(frozen_ids)
    started = time.monotonic()
    with pytest.raises(ClockMovedBackwards) as info:
        g.next_id()  # the 4,097th
    # The 5 ms budget, then a refusal. 500 ms, not 100: the budget is spent in real sleeps a
    # loaded machine can deschedule; a frozen clock that blocked would never return at all.
    assert (time.monotonic() - started) * 1000 < 500
    assert info.value.stuck is True


def test_monotonic_immune_to_frozen_clock():
    m = MonotonicSnowflake(node_id=1, clock=lambda: CUSTOM_EPOCH_MS + 5)
    immune = [m.next_id() for _ in range(50_000)]
    assert len(set(immune)) == 50_000 and immune == sorted(immune)


def test_monotonic_resets_sequence_every_ms():
    two_per_ms = iter([CUSTOM_EPOCH_MS + i // 2 for i in range(9_000)])
    m = MonotonicSnowflake(node_id=9, clock=lambda: next(two_per_ms))
    seqs = [Snowflake.decode(m.next_id())["sequence"] for _ in range(9_000)]
    assert max(seqs) == 1


def test_monotonic_borrows_on_frozen_clock():
    m = MonotonicSnowflake(node_id=9, clock=lambda: CUSTOM_EPOCH_MS + 77)
    ids = [m.next_id() for _ in range(10_000)]
    assert len(set(ids)) == 10_000 and ids == sorted(ids)
    assert Snowflake.decode(ids[0])["epoch_ms"] == CUSTOM_EPOCH_MS + 77
    assert Snowflake.decode(ids[-1])["epoch_ms"] == CUSTOM_EPOCH_MS + 79
    assert max(Snowflake.decode(i)["sequence"] for i in ids) == MAX_SEQUENCE


def test_monotonic_absorbs_rewind():
    back = iter([CUSTOM_EPOCH_MS + 1000, CUSTOM_EPOCH_MS + 400, CUSTOM_EPOCH_MS + 401])
    m = MonotonicSnowflake(node_id=9, clock=lambda: next(back))
    a, b, c = m.next_id(), m.next_id(), m.next_id()
    assert a < b < c
    assert Snowflake.decode(b)["epoch_ms"] == CUSTOM_EPOCH_MS + 1000  # ahead
    assert Snowflake.decode(b)["sequence"] == 1


def test_two_nodes_never_collide():
    a = Snowflake(node_id=1, clock=lambda: CUSTOM_EPOCH_MS + 99)
    b = Snowflake(node_id=2, clock=lambda: CUSTOM_EPOCH_MS + 99)
    assert a.next_id() != b.next_id()
