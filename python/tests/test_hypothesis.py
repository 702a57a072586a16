"""Property tests (hypothesis) on the whole Python surface: arguments of every type (None,
bools, huge and negative ints, floats with NaN and infinities, strings, bytes, lists, tuples,
dicts, arbitrary objects) to every constructor, method and function.

Every call either succeeds or raises a polyflake.PolyflakeError subclass, TypeError or
ValueError: never another exception, never a crash, and when it succeeds the answer is checked
(an ID is in range and carries the node id, the clock's millisecond and a valid sequence; a
decoded ID composes back to the same number; text round-trips). A state machine also drives one
generator through random calls and clock moves (forwards and backwards): the IDs it hands out
only ever increase.

Runs are derandomized (the same examples every run, so a failure reproduces) and keep no example
database (nothing is written next to the tests).
"""

import array
import ipaddress
import os

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

import polyflake
from polyflake import Layout, MonotonicSnowflake, Snowflake
from polyflake.testing import ManualClock, ScriptedClock

from conftest import CUSTOM_EPOCH_MS

settings.register_profile(
    "polyflake-properties",
    derandomize=True,
    database=None,
    deadline=None,
    max_examples=int(os.environ.get("POLYFLAKE_HYPOTHESIS_EXAMPLES", "150")),
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
PROFILE = settings.get_profile("polyflake-properties")

# What a call may raise: the library's own errors, or the built-in TypeError/ValueError a
# Python API raises for a wrong type or value. (PolyflakeError subclasses may also derive from
# RuntimeError or OverflowError; they are PolyflakeErrors first.)
ALLOWED = (polyflake.PolyflakeError, TypeError, ValueError)

MAX_ID = polyflake.MAX_ID
I64 = 2**63

#: Values of every type, with the edges of the integer types the binding converts to.
anything = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.integers(min_value=-(2**200), max_value=2**200),
    st.sampled_from([0, 1, -1, 2**31, 2**32, 2**53, I64 - 1, I64, 2**64 - 1, 2**64, -I64, -I64 - 1]),
    st.floats(),
    st.floats(allow_nan=False, allow_infinity=False, min_value=-1e6, max_value=1e6),
    st.text(max_size=40),
    st.binary(max_size=20),
    st.lists(st.integers(min_value=-5, max_value=100), max_size=4),
    st.tuples(st.integers(0, 64), st.integers(0, 64), st.integers(0, 64)),
    st.dictionaries(st.text(max_size=5), st.integers(), max_size=2),
    st.builds(object),
)

layouts = st.one_of(
    anything,
    st.sampled_from(["default", "long_lived", "big_fleet", "short", "41/10/12", "1/1/61", "40/11/13"]),
    st.sampled_from([Layout.DEFAULT, Layout.LONG_LIVED, Layout.BIG_FLEET, Layout.SHORT]),
    st.tuples(st.integers(-2, 64), st.integers(-2, 64), st.integers(-2, 64)),
)
node_ids = st.one_of(anything, st.integers(min_value=-2, max_value=4100))
epochs = st.one_of(
    anything,
    st.integers(min_value=-5, max_value=2 * CUSTOM_EPOCH_MS),
    st.just(CUSTOM_EPOCH_MS),
)
waits = st.one_of(anything, st.floats(min_value=0, max_value=100), st.integers(0, 100))
leads = st.one_of(anything, st.none(), st.integers(-5, 10_000))
clock_ms = st.integers(min_value=0, max_value=CUSTOM_EPOCH_MS * 3)


def manual(ms):
    return ManualClock(ms)


clocks = st.one_of(
    anything,
    st.none(),
    clock_ms.map(manual),
    st.lists(clock_ms, min_size=1, max_size=4).map(ScriptedClock),
    clock_ms.map(lambda ms: (lambda: ms)),
    st.just(lambda: "not a number"),
    st.just(lambda: 1.5),
)


#: What `call` answers when the call raised an allowed error.
REFUSED = object()


def call(f, *args, **kwargs):
    """f(*args, **kwargs), or REFUSED if it raised an allowed error; anything else fails the test."""
    try:
        return f(*args, **kwargs)
    except ALLOWED:
        return REFUSED


def as_layout(layout):
    """The Layout a `layout=` argument that was accepted means."""
    if layout is None:
        return Layout.DEFAULT
    if isinstance(layout, Layout):
        return layout
    if isinstance(layout, str):
        return Layout.from_name(layout)
    return Layout(*layout)


def check_id(g, id_, clock_reading=None):
    """An ID issued by g: in range, its node, a sequence in range, its millisecond sane."""
    assert isinstance(id_, int) and not isinstance(id_, bool)
    assert 0 <= id_ <= MAX_ID
    layout = g.layout
    d = polyflake.decode(id_, layout=layout, epoch_ms=g.epoch_ms)
    assert d["node_id"] == g.node_id
    assert 0 <= d["sequence"] <= layout.max_sequence
    elapsed = id_ >> (layout.node_bits + layout.sequence_bits)
    assert d["epoch_ms"] == g.epoch_ms + elapsed
    if clock_reading is not None:
        if g.mode == "strict":
            assert d["epoch_ms"] == clock_reading, (d, clock_reading)
        else:
            assert d["epoch_ms"] >= clock_reading, (d, clock_reading)


def exercise(g, clock, count):
    """Use a generator that was just made; close it at the end."""
    try:
        reading = clock.now_ms() if isinstance(clock, ManualClock) else None
        id_ = call(g.next_id)
        if id_ is not REFUSED:
            check_id(g, id_, reading)
        ids = call(g.next_ids, count)
        if ids is not REFUSED:
            assert isinstance(ids, array.array)
            assert len(ids) == count
            assert all(a < b for a, b in zip(ids, ids[1:]))
            if id_ is not REFUSED and len(ids):
                assert ids[0] > id_
            for x in ids[:50]:
                check_id(g, x)
        h = g.health()
        assert isinstance(h.ok, bool) and h.node_id == g.node_id
        assert isinstance(h.to_dict(), dict)
        assert isinstance(repr(g), str)
    finally:
        g.close()
    assert g.closed
    # A closed generator issues nothing more (GeneratorClosed); health() may still answer.
    with pytest.raises(polyflake.PolyflakeError):
        g.next_id()
    with pytest.raises(polyflake.PolyflakeError):
        g.next_ids(2)
    call(g.health)


counts = st.one_of(
    anything,
    st.integers(min_value=0, max_value=3000),
    st.integers(min_value=polyflake.MAX_BATCH + 1, max_value=2**100),
    st.integers(max_value=-1),
)


def small_count(count):
    """Skip counts that are valid but large (a 16-million-ID batch is slow, not interesting)."""
    if isinstance(count, int) and not isinstance(count, bool):
        assume(count < 5000 or count > polyflake.MAX_BATCH)


@PROFILE
@given(node=node_ids, epoch=epochs, wait=waits, layout=layouts, clock=clocks, count=counts)
def test_snowflake_constructor_and_methods(node, epoch, wait, layout, clock, count):
    small_count(count)
    g = call(Snowflake, node, epoch_ms=epoch, max_wait_ms=wait, layout=layout, clock=clock)
    if g is REFUSED:
        return
    assert g.node_id == node and g.epoch_ms == epoch and g.mode == "strict"
    assert g.layout == as_layout(layout)
    exercise(g, clock, count)


@PROFILE
@given(
    node=node_ids, epoch=epochs, wait=waits, layout=layouts, clock=clocks, lead=leads, count=counts
)
def test_monotonic_constructor_and_methods(node, epoch, wait, layout, clock, lead, count):
    small_count(count)
    g = call(
        MonotonicSnowflake,
        node,
        epoch_ms=epoch,
        max_wait_ms=wait,
        layout=layout,
        clock=clock,
        max_lead_ms=lead,
    )
    if g is REFUSED:
        return
    assert g.node_id == node and g.mode == "monotonic" and g.max_lead_ms == lead
    exercise(g, clock, count)


@PROFILE
@given(kwargs=st.dictionaries(st.text(max_size=12), anything, max_size=3), node=node_ids)
def test_unknown_keywords_are_type_errors(kwargs, node):
    known = {"epoch_ms", "max_wait_ms", "layout", "clock", "max_lead_ms"}
    assume(not set(kwargs) & known)
    for cls in (Snowflake, MonotonicSnowflake):
        g = call(cls, node, clock=ManualClock(CUSTOM_EPOCH_MS + 1), **kwargs)
        if kwargs:
            assert g is REFUSED
        elif g is not REFUSED:
            g.close()


@PROFILE
@given(
    var=st.one_of(anything, st.just("POLYFLAKE_HYPOTHESIS_NODE")),
    value=st.one_of(st.text(max_size=8), st.integers(-3, 5000).map(str)),
    layout=layouts,
)
def test_from_env(var, value, layout):
    name = "POLYFLAKE_HYPOTHESIS_NODE"
    os.environ[name] = value.replace("\0", "")
    try:
        for cls in (Snowflake, MonotonicSnowflake):
            g = call(cls.from_env, var, layout=layout, clock=ManualClock(CUSTOM_EPOCH_MS + 7))
            if g is not REFUSED:
                assert var == name and os.environ[name].isascii() and os.environ[name].isdigit()
                assert g.node_source == "env" and g.node_id == int(os.environ[name])
                exercise(g, None, 3)
    finally:
        del os.environ[name]


@PROFILE
@given(hostname=st.one_of(anything, st.text(max_size=20), st.integers(0, 5000).map(lambda n: f"ids-{n}.svc")))
def test_from_hostname(hostname):
    g = call(Snowflake.from_hostname, hostname, clock=ManualClock(CUSTOM_EPOCH_MS + 7))
    if g is not REFUSED:
        if hostname is not None:
            assert isinstance(hostname, str)
            assert int(hostname.split(".")[0].rsplit("-", 1)[1]) == g.node_id
        exercise(g, None, 2)


@PROFILE
@given(
    addr=st.one_of(anything, st.ip_addresses(v=4), st.ip_addresses(v=4).map(str), st.ip_addresses(v=6)),
    prefix=st.one_of(anything, st.integers(-1, 40)),
)
def test_from_ipv4(addr, prefix):
    g = call(Snowflake.from_ipv4, addr, prefix, clock=ManualClock(CUSTOM_EPOCH_MS + 7))
    if g is not REFUSED:
        a = ipaddress.IPv4Address(str(addr))
        assert g.node_id == int(a) & ((1 << (32 - prefix)) - 1)
        exercise(g, None, 2)


@PROFILE
@given(
    slots=st.one_of(anything, st.integers(-1, 5000)),
    identity=st.one_of(anything, st.text(max_size=10)),
    reserve=st.one_of(anything, st.integers(-5, 100_000)),
    epoch=epochs,
)
def test_from_file_lease(tmp_path_factory, slots, identity, reserve, epoch):
    d = tmp_path_factory.mktemp("leases")
    g = call(
        Snowflake.from_file_lease,
        d,
        slots=slots,
        identity=identity,
        reserve_ms=reserve,
        epoch_ms=epoch,
        clock=ManualClock(CUSTOM_EPOCH_MS + 10_000_000),
    )
    if g is not REFUSED:
        assert g.node_source == "file_lease"
        assert 0 <= g.node_id < (slots if isinstance(slots, int) else 1024)
        g.close()
    # A directory argument of the wrong type is refused before anything is created.
    for bad in (None, 5, 1.5, b"\0", ["x"], object()):
        assert call(Snowflake.from_file_lease, bad) is REFUSED


@PROFILE
@given(
    endpoints=st.one_of(anything, st.just([]), st.just("http://127.0.0.1:1")),
    prefix=st.one_of(anything, st.text(max_size=8)),
    ttl=st.one_of(anything, st.integers(-5, 100)),
    timeout=st.one_of(anything, st.integers(-5, 50)),
)
def test_from_etcd_without_etcd(endpoints, prefix, ttl, timeout):
    # Nothing listens on port 1: every call must be refused, quickly and cleanly.
    g = call(
        Snowflake.from_etcd,
        endpoints,
        prefix=prefix,
        ttl_s=ttl,
        connect_timeout_ms=timeout,
        clock=ManualClock(CUSTOM_EPOCH_MS + 7),
    )
    if g is not REFUSED:
        g.close()
        raise AssertionError(f"from_etcd({endpoints!r}) succeeded with no etcd running")


@PROFILE
@given(id_=st.one_of(anything, st.integers(min_value=0, max_value=MAX_ID)), layout=layouts, epoch=epochs)
def test_decode_everywhere(id_, layout, epoch):
    d = call(polyflake.decode, id_, layout=layout, epoch_ms=epoch)
    if d is not REFUSED:
        lay = as_layout(layout)
        assert isinstance(id_, int) and 0 <= id_ <= MAX_ID
        shift = lay.node_bits + lay.sequence_bits
        assert d == {
            "epoch_ms": epoch + (id_ >> shift),
            "node_id": (id_ >> lay.sequence_bits) & lay.max_node_id,
            "sequence": id_ & lay.max_sequence,
        }
        # The same fields compose back to the same ID (Python arithmetic).
        again = ((d["epoch_ms"] - epoch) << shift) | (d["node_id"] << lay.sequence_bits) | d["sequence"]
        assert again == id_
    assert call(Snowflake.decode, id_, layout=layout, epoch_ms=epoch) == d
    if layout is None and epoch == CUSTOM_EPOCH_MS:
        assert call(Snowflake.decode, id_) == d
    g = MonotonicSnowflake(3, clock=ManualClock(CUSTOM_EPOCH_MS + 1))
    try:
        via_instance = call(g.decode, id_)
        if via_instance is not REFUSED:
            assert via_instance == polyflake.decode(id_)
    finally:
        g.close()


@PROFILE
@given(text=st.one_of(anything, st.text(alphabet="0123456789", max_size=25), st.text(max_size=25)))
def test_parse_id(text):
    id_ = call(polyflake.parse_id, text)
    if id_ is not REFUSED:
        assert isinstance(text, str) and text.isascii() and text.isdigit()
        assert id_ == int(text) <= MAX_ID
        assert polyflake.format_id(id_) == str(id_)
    elif isinstance(text, str) and text.isascii() and text.isdigit():
        assert int(text) > MAX_ID, text


@PROFILE
@given(value=st.one_of(anything, st.integers(min_value=0, max_value=MAX_ID)))
def test_format_id(value):
    text = call(polyflake.format_id, value)
    if text is not REFUSED:
        assert type(value) is int and 0 <= value <= MAX_ID
        assert text == str(value) and polyflake.parse_id(text) == value
    else:
        assert not (type(value) is int and 0 <= value <= MAX_ID)


@PROFILE
@given(t=anything, n=anything, s=anything, name=st.one_of(anything, st.text(max_size=12), layouts))
def test_layouts(t, n, s, name):
    for a, b, c in ((t, n, s), (t % 64 if type(t) is int else t, 10, 12)):
        lay = call(Layout, a, b, c)
        if lay is not REFUSED:
            assert (lay.timestamp_bits, lay.node_bits, lay.sequence_bits) == (a, b, c)
            assert a + b + c == 63 and min(a, b, c) >= 1
            assert lay.max_node_id == 2**b - 1 and lay.ids_per_ms == 2**c
            assert Layout.from_name(f"{a}/{b}/{c}") == lay
    lay = call(Layout.from_name, name)
    if lay is not REFUSED:
        assert isinstance(name, str)
        if lay.name == name:
            return
        parts = name.split("/")
        assert len(parts) == 3 and all(p.isascii() and p.isdigit() for p in parts), name
        assert Layout(*(int(p) for p in parts)) == lay


@PROFILE
@given(start=anything, to=anything, delta=anything, values=anything)
def test_clocks(start, to, delta, values):
    c = call(ManualClock, start)
    if c is not REFUSED:
        assert type(start) is int and c.now_ms() == start
        before = c.now_ms()
        if call(c.set, to) is REFUSED:
            assert c.now_ms() == before
        else:
            assert type(to) is int and c.now_ms() == to
        before = c.now_ms()
        if call(c.advance, delta) is REFUSED:
            assert c.now_ms() == before
        else:
            assert type(delta) is int and c.now_ms() == before + delta
    sc = call(ScriptedClock, values)
    if sc is not REFUSED:
        assert sc.reads == 0


def test_values_that_come_back_out_are_refused_not_clamped():
    """Found by these properties: an epoch or a test-clock value outside 64 bits used to be
    clamped to the nearest bound, so decode answered a different timestamp and a ManualClock read
    back a different number (and advance() past the top wrapped to the bottom)."""
    for epoch in (I64, -I64 - 1, 2**70):
        with pytest.raises(polyflake.InvalidArgument, match="64-bit range"):
            polyflake.decode(0, epoch_ms=epoch)
        with pytest.raises(polyflake.InvalidArgument):
            Snowflake.decode(5, epoch_ms=epoch)
    # The ID's time past an epoch near the top does not fit either: refused by the core.
    with pytest.raises(polyflake.InvalidArgument, match="epoch_ms"):
        polyflake.decode(1 << 22, epoch_ms=I64 - 1)
    assert polyflake.decode(0, epoch_ms=I64 - 1)["epoch_ms"] == I64 - 1
    for bad in (I64, -I64 - 1):
        with pytest.raises(polyflake.InvalidArgument):
            ManualClock(bad)
        with pytest.raises(polyflake.InvalidArgument):
            ScriptedClock([1, bad])
    c = ManualClock(I64 - 1)
    with pytest.raises(polyflake.InvalidArgument):
        c.advance(1)
    with pytest.raises(polyflake.InvalidArgument):
        c.set(I64)
    assert c.now_ms() == I64 - 1
    c.advance(-(I64 - 1))
    c.advance(-I64)
    assert c.now_ms() == -I64
    with pytest.raises(polyflake.InvalidArgument):
        c.advance(-1)


class IssuingMachine(RuleBasedStateMachine):
    """One strict and one monotonic generator on a manual clock that moves both ways: whatever
    happens, every ID either hands out is above the one before."""

    def __init__(self):
        super().__init__()
        self.clock = ManualClock(CUSTOM_EPOCH_MS + 5_000_000)
        self.gens = {
            "strict": Snowflake(11, clock=self.clock, max_wait_ms=0),
            "monotonic": MonotonicSnowflake(12, clock=self.clock, max_lead_ms=5000),
        }
        self.last = {k: -1 for k in self.gens}

    def teardown(self):
        for g in self.gens.values():
            g.close()

    def _take(self, which, ids):
        for x in ids:
            assert x > self.last[which], (which, x, self.last[which])
            check_id(self.gens[which], x)
            self.last[which] = x

    @rule(which=st.sampled_from(["strict", "monotonic"]))
    def next_id(self, which):
        x = call(self.gens[which].next_id)
        if x is not REFUSED:
            self._take(which, [x])

    @rule(which=st.sampled_from(["strict", "monotonic"]), count=counts)
    def next_ids(self, which, count):
        if isinstance(count, int) and not isinstance(count, bool) and 5000 <= count <= polyflake.MAX_BATCH:
            return
        ids = call(self.gens[which].next_ids, count)
        if ids is not REFUSED:
            assert len(ids) == count
            self._take(which, list(ids))

    @rule(delta=st.one_of(st.integers(-3000, 3000), anything))
    def move_clock(self, delta):
        call(self.clock.advance, delta)

    @rule(which=st.sampled_from(["strict", "monotonic"]), arg=anything)
    def decode(self, which, arg):
        call(self.gens[which].decode, arg)

    @invariant()
    def health_answers(self):
        for g in self.gens.values():
            h = g.health()
            assert h.ids_issued >= 0 and isinstance(h.status, str)


TestIssuingMachine = IssuingMachine.TestCase
TestIssuingMachine.settings = settings(PROFILE, max_examples=60, stateful_step_count=40)
