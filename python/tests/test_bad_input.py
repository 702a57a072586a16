"""Bad input gets a clear TypeError or ValueError, never a wrong ID."""

import pytest

import polyflake
from polyflake import Layout, MonotonicSnowflake, Snowflake
from polyflake.testing import ManualClock, ScriptedClock

from conftest import CUSTOM_EPOCH_MS


def clock():
    return ManualClock(CUSTOM_EPOCH_MS + 1000)


def gen():
    return MonotonicSnowflake(5, clock=clock())


# (description, callable, expected exception, message fragment)
TABLE = [
    # node ids
    ("node_id bool", lambda: Snowflake(True, clock=clock()), TypeError, "not bool"),
    ("node_id float", lambda: Snowflake(1.0, clock=clock()), TypeError, "not float"),
    ("node_id str", lambda: Snowflake("1", clock=clock()), TypeError, "not str"),
    ("node_id None", lambda: Snowflake(None, clock=clock()), TypeError, "not NoneType"),
    ("node_id list", lambda: Snowflake([1], clock=clock()), TypeError, "not list"),
    ("node_id negative", lambda: Snowflake(-1, clock=clock()), polyflake.InvalidNodeId, "out of range"),
    ("node_id 1024", lambda: Snowflake(1024, clock=clock()), polyflake.InvalidNodeId, "[0, 1023]"),
    ("node_id 2**64", lambda: Snowflake(2**64, clock=clock()), polyflake.InvalidNodeId, "out of range"),
    ("node_id 10**60", lambda: Snowflake(10**60, clock=clock()), polyflake.InvalidArgument, str(10**60)),
    ("node_id -10**60", lambda: Snowflake(-(10**60), clock=clock()), polyflake.InvalidArgument, str(-(10**60))),
    ("node_id over big_fleet", lambda: Snowflake(4096, layout=Layout.BIG_FLEET, clock=clock()), ValueError, "[0, 4095]"),
    # settings
    ("epoch_ms float", lambda: Snowflake(1, epoch_ms=1.5), TypeError, "epoch_ms must be an int"),
    ("epoch_ms bool", lambda: Snowflake(1, epoch_ms=True), TypeError, "not bool"),
    ("epoch_ms None", lambda: Snowflake(1, epoch_ms=None), TypeError, "epoch_ms"),
    ("epoch_ms negative", lambda: Snowflake(1, epoch_ms=-1, clock=clock()), polyflake.InvalidEpoch, "1970"),
    ("epoch_ms future", lambda: Snowflake(1, epoch_ms=2**62), polyflake.InvalidEpoch, "future"),
    ("max_wait_ms str", lambda: Snowflake(1, max_wait_ms="5"), TypeError, "max_wait_ms must be a number"),
    ("max_wait_ms bool", lambda: Snowflake(1, max_wait_ms=True), TypeError, "not bool"),
    ("max_wait_ms None", lambda: Snowflake(1, max_wait_ms=None), TypeError, "max_wait_ms"),
    ("max_wait_ms negative", lambda: Snowflake(1, max_wait_ms=-1.0, clock=clock()), polyflake.InvalidArgument, "max_wait_ms"),
    ("max_wait_ms nan", lambda: Snowflake(1, max_wait_ms=float("nan"), clock=clock()), polyflake.InvalidArgument, "max_wait_ms"),
    ("max_wait_ms inf", lambda: Snowflake(1, max_wait_ms=float("inf"), clock=clock()), polyflake.InvalidArgument, "max_wait_ms"),
    ("max_lead_ms negative", lambda: MonotonicSnowflake(1, max_lead_ms=-5, clock=clock()), polyflake.InvalidArgument, "max_lead_ms"),
    ("max_lead_ms float", lambda: MonotonicSnowflake(1, max_lead_ms=2.5, clock=clock()), TypeError, "max_lead_ms"),
    ("max_lead_ms on strict", lambda: Snowflake(1, max_lead_ms=5), TypeError, "max_lead_ms"),
    ("positional epoch", lambda: Snowflake(1, CUSTOM_EPOCH_MS), TypeError, ""),
    ("layout unknown name", lambda: Snowflake(1, layout="huge", clock=clock()), polyflake.UnknownLayout, "huge"),
    ("layout bad sum", lambda: Snowflake(1, layout=(41, 10, 13), clock=clock()), polyflake.InvalidLayout, "63"),
    ("layout two fields", lambda: Snowflake(1, layout=(41, 22), clock=clock()), TypeError, "3 ints"),
    ("layout negative", lambda: Layout(-1, 10, 54), polyflake.InvalidArgument, "-1 is out of range"),
    ("layout float", lambda: Layout(41.0, 10, 12), TypeError, "timestamp_bits"),
    ("layout type", lambda: Snowflake(1, layout=41, clock=clock()), TypeError, "layout must be"),
    ("clock not callable", lambda: Snowflake(1, clock=5), TypeError, "clock must be"),
    # counts
    ("count bool", lambda: gen().next_ids(True), TypeError, "not bool"),
    ("count float", lambda: gen().next_ids(10.0), TypeError, "not float"),
    ("count str", lambda: gen().next_ids("10"), TypeError, "not str"),
    ("count None", lambda: gen().next_ids(None), TypeError, "not NoneType"),
    ("count negative", lambda: gen().next_ids(-1), polyflake.InvalidArgument, "count"),
    ("count over max", lambda: gen().next_ids(polyflake.MAX_BATCH + 1), polyflake.InvalidArgument, "count"),
    ("count 2**100", lambda: gen().next_ids(2**100), polyflake.InvalidArgument, "count"),
    # IDs
    ("decode bool", lambda: Snowflake.decode(True), TypeError, "not bool"),
    ("decode float", lambda: Snowflake.decode(1.0), TypeError, "not float"),
    ("decode str", lambda: Snowflake.decode("141264821508263936"), TypeError, "not str"),
    ("decode None", lambda: Snowflake.decode(None), TypeError, "not NoneType"),
    ("decode negative", lambda: Snowflake.decode(-1), polyflake.InvalidId, "negative"),
    ("decode 2**63", lambda: Snowflake.decode(2**63), polyflake.InvalidId, "2^63"),
    ("decode 2**200", lambda: Snowflake.decode(2**200), polyflake.InvalidId, "2^63"),
    ("instance decode negative", lambda: gen().decode(-1), polyflake.InvalidId, "negative"),
    ("instance decode float", lambda: gen().decode(2.0), TypeError, "not float"),
    ("format_id negative", lambda: polyflake.format_id(-5), polyflake.InvalidId, "negative"),
    ("format_id str", lambda: polyflake.format_id("5"), TypeError, "not str"),
    ("parse_id int", lambda: polyflake.parse_id(5), TypeError, "str"),
    ("parse_id sign", lambda: polyflake.parse_id("+5"), polyflake.InvalidId, "digits"),
    ("parse_id too big", lambda: polyflake.parse_id("9223372036854775808"), polyflake.InvalidId, "2^63"),
    # clocks
    ("ManualClock float", lambda: ManualClock(1.5), TypeError, "start_ms"),
    ("ManualClock.set str", lambda: clock().set("5"), TypeError, "ms"),
    ("ScriptedClock not iterable", lambda: ScriptedClock(5), TypeError, "iterable"),
    ("ScriptedClock float value", lambda: ScriptedClock([1, 2.5]), TypeError, "ScriptedClock value"),
]


@pytest.mark.parametrize("what,call,exc,fragment", TABLE, ids=[row[0] for row in TABLE])
def test_bad_input(what, call, exc, fragment):
    with pytest.raises(exc) as info:
        call()
    assert fragment in str(info.value), (what, str(info.value))
    if isinstance(info.value, polyflake.PolyflakeError):
        assert isinstance(info.value, ValueError), "configuration errors are ValueErrors"


def test_an_int_a_float_holds_exactly_is_taken_as_a_float_setting():
    g = Snowflake(1, max_wait_ms=60_000, clock=manual())
    assert g.max_wait_ms == 60_000.0
    with pytest.raises(polyflake.InvalidArgument) as info:
        Snowflake(1, max_wait_ms=2**53, clock=manual())  # exact as a float: the core's limit
    assert str(2**53) in str(info.value) and "60000 ms limit" in str(info.value)
    g.wait_ready(timeout_ms=2**53)  # no lease: at once


@pytest.mark.parametrize("reading", [1.5, "1737747358021", None, True])
def test_clock_returning_a_non_int_fails_clearly(reading):
    # A user's callable is not a test clock: one generator per node id, so each is closed.
    with Snowflake(1, clock=lambda: reading) as g, pytest.raises(polyflake.ClockFailed) as info:
        g.next_id()
    assert isinstance(info.value.__cause__, TypeError)
    assert "reading" in str(info.value)


def test_clock_exception_is_the_cause():
    class Boom(Exception):
        pass

    def clock():
        raise Boom("ntp daemon gone")

    g = Snowflake(1, clock=clock)
    with pytest.raises(polyflake.ClockFailed) as info:
        g.next_id()
    assert isinstance(info.value.__cause__, Boom)
    assert "ntp daemon gone" in str(info.value)
    # health() reports the failure instead of raising it.
    h = g.health()
    g.close()
    assert not h.ok and h.status == "clock_failed"
    # and the next error is not polluted by a stale cause
    with pytest.raises(polyflake.InvalidId) as info2:
        Snowflake.decode(-1)
    assert info2.value.__cause__ is None


def test_clock_outside_window_is_an_error_not_a_wrapped_id():
    with Snowflake(1, clock=lambda: CUSTOM_EPOCH_MS - 1) as g:
        with pytest.raises(polyflake.TimestampOverflow) as info:
            g.next_id()
    assert isinstance(info.value, OverflowError)
    with Snowflake(1, clock=lambda: 2**70) as g, pytest.raises(polyflake.TimestampOverflow):
        g.next_id()


class Index:
    """An int-like object (numpy's integers are such): `__index__` gives the int."""

    def __init__(self, value):
        self.value = value

    def __index__(self):
        return self.value


def manual():
    return ManualClock(CUSTOM_EPOCH_MS + 1000)


# (description, callable, the int the caller sent): every refusal of an int that does not fit
# the core's type echoes Python's str() of it, never a clamped bound.
WIDE = [
    ("node_id 2**1000", lambda: Snowflake(node_id=2**1000), 2**1000),
    ("node_id -2**1000", lambda: Snowflake(node_id=-(2**1000)), -(2**1000)),
    ("node_id 2**127", lambda: Snowflake(2**127, clock=manual()), 2**127),
    ("node_id via __index__", lambda: Snowflake(Index(2**100), clock=manual()), 2**100),
    ("monotonic node_id 2**200", lambda: MonotonicSnowflake(2**200), 2**200),
    ("epoch_ms 2**63", lambda: Snowflake(1, epoch_ms=2**63), 2**63),
    ("epoch_ms -2**63 - 1", lambda: Snowflake(1, epoch_ms=-(2**63) - 1), -(2**63) - 1),
    ("epoch_ms 2**300", lambda: Snowflake(1, epoch_ms=2**300), 2**300),
    ("count 2**64", lambda: gen().next_ids(2**64), 2**64),
    ("count -2**70", lambda: gen().next_ids(-(2**70)), -(2**70)),
    ("count 2**200", lambda: gen().next_ids(2**200), 2**200),
    ("uuid7 count 2**64", lambda: polyflake.Uuid7Generator(clock=manual()).next_ids(2**64), 2**64),
    ("ulid count -2**200", lambda: polyflake.UlidGenerator(clock=manual()).next_ids(-(2**200)), -(2**200)),
    ("max_lead_ms 2**63", lambda: MonotonicSnowflake(1, max_lead_ms=2**63, clock=manual()), 2**63),
    ("max_forward_step_ms 2**64", lambda: Snowflake(1, max_forward_step_ms=2**64, clock=manual()), 2**64),
    ("forward_confirm_ms -2**70", lambda: Snowflake(1, forward_confirm_ms=-(2**70), clock=manual()), -(2**70)),
    ("layout node_bits 2**40", lambda: Layout(41, 2**40, 12), 2**40),
    ("layout sequence_bits 2**200", lambda: Layout(41, 10, 2**200), 2**200),
    ("layout tuple -2**70", lambda: Snowflake(1, layout=(-(2**70), 10, 12), clock=manual()), -(2**70)),
    ("decode 2**200", lambda: Snowflake.decode(2**200), 2**200),
    ("decode -2**200", lambda: Snowflake.decode(-(2**200)), -(2**200)),
    ("instance decode 2**128", lambda: gen().decode(2**128), 2**128),
    ("decode epoch 2**63", lambda: polyflake.decode(1, epoch_ms=2**63), 2**63),
    ("format_id 2**130", lambda: polyflake.format_id(2**130), 2**130),
    ("format_uuid 2**128", lambda: polyflake.format_uuid(2**128), 2**128),
    ("uuid7_timestamp_ms -2**300", lambda: polyflake.uuid7_timestamp_ms(-(2**300)), -(2**300)),
    ("ManualClock 2**63", lambda: ManualClock(2**63), 2**63),
    ("ManualClock.set -2**130", lambda: manual().set(-(2**130)), -(2**130)),
    ("ManualClock.advance 2**100", lambda: manual().advance(2**100), 2**100),
    ("ManualClock.elapse 2**64", lambda: manual().elapse(2**64), 2**64),
    ("ManualClock.set_tick_ms 2**63", lambda: manual().set_tick_ms(2**63), 2**63),
    ("ScriptedClock 2**64", lambda: ScriptedClock([1, 2**64]), 2**64),
    ("ipv4 prefix 2**100", lambda: Snowflake.from_ipv4("10.0.0.1", 2**100), 2**100),
    ("max_wait_ms 2**60", lambda: Snowflake(1, max_wait_ms=2**60, clock=manual()), 2**60),
    ("max_wait_ms 2**1100", lambda: Snowflake(1, max_wait_ms=2**1100, clock=manual()), 2**1100),
    ("uuid7 max_wait_ms -2**64", lambda: polyflake.Uuid7Generator(max_wait_ms=-(2**64)), -(2**64)),
    ("wait_ready timeout_ms 10**400", lambda: gen().wait_ready(timeout_ms=10**400), 10**400),
]

#: Bounds a clamping conversion would have shown instead (i64, u64, i128, u32 ends).
CLAMPED = [str(b) for b in (2**63 - 1, -(2**63), 2**64 - 1, 2**127 - 1, -(2**127), 2**32 - 1)]


@pytest.mark.parametrize("what,call,sent", WIDE, ids=[row[0] for row in WIDE])
def test_a_refusal_echoes_the_int_sent(what, call, sent):
    with pytest.raises(polyflake.PolyflakeError) as info:
        call()
    message = str(info.value)
    assert str(sent) in message, (what, message)
    assert not [b for b in CLAMPED if b in message.replace(str(sent), "")], (what, message)
    assert isinstance(info.value, ValueError), (what, type(info.value))


@pytest.mark.parametrize("count", [2**64, -(2**70), 2**1000])
def test_a_lease_setting_too_wide_echoes_it(tmp_path, count):
    with pytest.raises(polyflake.InvalidNodeSource) as info:
        Snowflake.from_file_lease(tmp_path, slots=count)
    assert str(count) in str(info.value)
    with pytest.raises(polyflake.InvalidNodeSource) as info:
        Snowflake.from_file_lease(tmp_path, reserve_ms=count)
    assert str(count) in str(info.value)
