"""UUIDv7 and ULID through the binding: the conformance vectors of
tests/vectors/formats.json, the module's uuid7()/ulid() and their fast paths, the generator
classes, batches, bad input, and fork.

Expected values come from the vectors (RFC 9562, the ULID spec) or from the layouts' arithmetic,
never from running polyflake: a UUIDv7 is unix_ts_ms (48) | 7 (4) | rand_a (12) | 0b10 (2) |
rand_b (62); a ULID is unix ms (48) | 80 bits.
"""

import os
import pickle
import re
import time
import uuid

import pytest

import polyflake
from polyflake import UlidGenerator, Uuid7Generator
from polyflake.testing import ManualClock

from conftest import VECTORS, load_json, run_in_child

FORMATS = load_json(VECTORS / "formats.json")
CROCKFORD = re.compile(r"[0-7][0-9A-HJKMNP-TV-Z]{25}")
T = 1_737_747_358_021  # the reference literal's instant, Unix ms


def fields(u: int):
    """(unix_ts_ms, version, variant, rand_a, rand_b) of a 128-bit UUID, by the RFC's layout."""
    return u >> 80, (u >> 76) & 0xF, (u >> 62) & 0b11, (u >> 64) & 0xFFF, u & ((1 << 62) - 1)


def now_ms():
    return time.time_ns() // 1_000_000


# --- the vectors ------------------------------------------------------------------------------

def test_rfc9562_example():
    ex = FORMATS["uuid"]["rfc9562_example"]
    u = polyflake.parse_uuid(ex["text"])
    assert isinstance(u, uuid.UUID) and u == uuid.UUID(ex["canonical"])
    assert u.int == int(ex["value"]) and u.is_safe is uuid.SafeUUID.unknown
    assert fields(u.int) == (ex["unix_ts_ms"], ex["version"], ex["variant"], ex["rand_a"], int(ex["rand_b"]))
    assert polyflake.format_uuid(ex["text"]) == ex["canonical"]
    for form in (u, u.bytes, u.int, ex["text"], ex["canonical"]):
        assert polyflake.format_uuid(form) == ex["canonical"]
        assert polyflake.uuid7_timestamp_ms(form) == ex["unix_ts_ms"]


def test_uuid_limits_round_trip():
    for case in FORMATS["uuid"]["limits"]:
        u = polyflake.parse_uuid(case["text"])
        assert str(u) == case["text"] == polyflake.format_uuid(u.bytes)
        assert polyflake.uuid7_timestamp_ms(u) == case["unix_ts_ms"]


@pytest.mark.parametrize("text", FORMATS["uuid"]["bad_text"])
def test_uuid_bad_text(text):
    for call in (polyflake.parse_uuid, polyflake.format_uuid, polyflake.uuid7_timestamp_ms):
        with pytest.raises(polyflake.InvalidId) as e:
            call(text)
        assert isinstance(e.value, ValueError) and e.value.code == "INVALID_ID"


@pytest.mark.parametrize("text", FORMATS["uuid"]["not_v7"])
def test_uuid_not_v7(text):
    assert str(polyflake.parse_uuid(text)) == text  # a valid UUID ...
    with pytest.raises(polyflake.InvalidId):  # ... of another version or variant
        polyflake.uuid7_timestamp_ms(text)


def test_ulid_examples():
    for ex in FORMATS["ulid"]["examples"]:
        raw = polyflake.parse_ulid(ex["text"])
        assert raw == int(ex["value"]).to_bytes(16, "big")
        assert polyflake.format_ulid(raw) == polyflake.format_ulid(int(ex["value"])) == ex["text"]
        assert polyflake.ulid_timestamp_ms(ex["text"]) == ex["unix_ts_ms"]
        assert polyflake.ulid_timestamp_ms(raw) == ex["unix_ts_ms"]


def test_ulid_monotonic_pair_and_limits():
    a, b = (int.from_bytes(polyflake.parse_ulid(t), "big") for t in FORMATS["ulid"]["monotonic_pair"])
    assert b == a + 1
    for case in FORMATS["ulid"]["limits"]:
        assert polyflake.format_ulid(case["text"]) == case["text"]
        assert polyflake.ulid_timestamp_ms(case["text"]) == case["unix_ts_ms"]


def test_ulid_aliases():
    for case in FORMATS["ulid"]["aliases"]:
        assert polyflake.format_ulid(case["text"]) == case["canonical"]


@pytest.mark.parametrize("text", FORMATS["ulid"]["bad_text"])
def test_ulid_bad_text(text):
    for call in (polyflake.parse_ulid, polyflake.format_ulid, polyflake.ulid_timestamp_ms):
        with pytest.raises(polyflake.InvalidId):
            call(text)


def test_bad_binary_and_int_forms():
    for bad in (b"\x00" * 15, b"\x00" * 17, -1, 2**128):
        with pytest.raises(polyflake.InvalidId):
            polyflake.format_uuid(bad)
        with pytest.raises(polyflake.InvalidId):
            polyflake.format_ulid(bad)
    assert polyflake.format_ulid(2**128 - 1) == "7ZZZZZZZZZZZZZZZZZZZZZZZZZ"
    for wrong in (1.5, None, True, bytearray(16), ["a"]):
        with pytest.raises(TypeError):
            polyflake.format_uuid(wrong)
    with pytest.raises(TypeError):
        polyflake.parse_uuid(b"017f22e2-79b0-7cc3-98c4-dc0c0c07398f")
    with pytest.raises(TypeError):
        polyflake.parse_ulid(uuid.uuid4())


# --- the module's process-wide generators -----------------------------------------------------

def test_uuid7_is_a_stdlib_uuid_version_7_of_now():
    before = now_ms()
    u = polyflake.uuid7()
    after = now_ms()
    assert type(u) is uuid.UUID
    assert u.version == 7 and u.variant == uuid.RFC_4122 and u.is_safe is uuid.SafeUUID.unknown
    # Strict: the timestamp is the wall clock at the call, never ahead of it.
    assert before <= polyflake.uuid7_timestamp_ms(u) <= after
    assert u == uuid.UUID(str(u)) and hash(u) == hash(uuid.UUID(str(u)))
    assert pickle.loads(pickle.dumps(u)) == u
    with pytest.raises(TypeError):
        u.int = 5  # as immutable as any uuid.UUID


def test_uuid7_forms_come_from_one_increasing_stream():
    calls = [polyflake.uuid7, lambda: polyflake.uuid7_str(), lambda: polyflake.uuid7_bytes()]
    values = []
    for k in range(30_000):
        x = calls[k % 3]()
        if isinstance(x, str):
            assert len(x) == 36 and x == x.lower() and uuid.UUID(x).version == 7
            x = uuid.UUID(x)
        elif isinstance(x, bytes):
            assert len(x) == 16
            x = uuid.UUID(bytes=x)
        values.append(x.int)
    assert all(a < b for a, b in zip(values, values[1:]))
    assert all(fields(v)[1:3] == (7, 2) for v in values)


def test_ulid_text_and_bytes():
    before = now_ms()
    texts = [polyflake.ulid() for _ in range(10_000)]
    raws = [polyflake.ulid_bytes() for _ in range(10_000)]
    after = now_ms()
    assert all(CROCKFORD.fullmatch(t) for t in texts)
    assert texts == sorted(texts) and len(set(texts)) == len(texts)  # text order is issue order
    ints = [int.from_bytes(polyflake.parse_ulid(t), "big") for t in texts]
    ints += [int.from_bytes(r, "big") for r in raws]
    assert all(a < b for a, b in zip(ints, ints[1:]))
    assert before <= polyflake.ulid_timestamp_ms(texts[0]) <= polyflake.ulid_timestamp_ms(raws[-1]) <= after


# --- generator classes ------------------------------------------------------------------------

def test_uuid7_generator_on_a_manual_clock():
    clock = ManualClock(T)
    g = Uuid7Generator(clock=clock, max_wait_ms=2.0)
    assert g.mode == "strict"
    us = [g.next_id().int for _ in range(5)]
    assert all(fields(u)[0] == T and fields(u)[1:3] == (7, 2) for u in us)
    # A whole-ms injected clock has no sub-millisecond fraction: rand_a is 0 (method 3).
    assert {fields(u)[3] for u in us} == {0}
    assert us == sorted(us) and len(set(us)) == 5
    clock.advance(-600)  # an NTP step back of 600 ms: refused, never repeated
    with pytest.raises(polyflake.ClockMovedBackwards) as e:
        g.next_id()
    assert e.value.behind_ms == 600 and g.health().status == "clock_behind"
    with pytest.raises(polyflake.ClockMovedBackwards):
        g.try_next_id()  # a refusal is an error in try_next_id too (None only means "would wait")


def test_monotonic_uuid7_absorbs_a_rewind_and_batches():
    clock = ManualClock(T)
    g = Uuid7Generator(mode="monotonic", clock=clock, max_lead_ms=1000)
    assert g.mode == "monotonic"
    a = g.next_id()
    clock.advance(-600)
    b = g.next_id()
    assert b > a and polyflake.uuid7_timestamp_ms(b) == T  # it stays in the ms it was in
    raw = g.next_ids(100_000)  # 32,768 per ms: borrows 3 ms
    assert isinstance(raw, bytes) and len(raw) == 16 * 100_000
    ints = [int.from_bytes(raw[k:k + 16], "big") for k in range(0, len(raw), 16)]
    assert ints[0] > b.int and all(x < y for x, y in zip(ints, ints[1:]))
    assert {fields(x)[1:3] for x in ints} == {(7, 2)}
    assert fields(ints[-1])[0] == T + 3
    assert g.health().ms_borrowed == 3


def test_ulid_generator_increments_within_a_millisecond():
    g = UlidGenerator(clock=ManualClock(T))
    texts = [g.next_id() for _ in range(3)] + [g.next_str()]
    ints = [int.from_bytes(polyflake.parse_ulid(t), "big") for t in texts]
    ints.append(int.from_bytes(g.next_bytes(), "big"))
    # The ULID spec's monotonic variant: +1 per ULID within the millisecond.
    assert [y - x for x, y in zip(ints, ints[1:])] == [1, 1, 1, 1]
    assert {x >> 80 for x in ints} == {T}
    raw = g.next_ids(10)
    batch = [int.from_bytes(raw[k:k + 16], "big") for k in range(0, 160, 16)]
    assert batch == list(range(ints[-1] + 1, ints[-1] + 11))


def test_forms_of_one_generator():
    g = Uuid7Generator(clock=ManualClock(T))
    assert isinstance(g.next_id(), uuid.UUID)
    s = g.next_str()
    assert len(s) == 36 and polyflake.uuid7_timestamp_ms(s) == T
    assert polyflake.uuid7_timestamp_ms(g.next_bytes()) == T
    assert isinstance(g.try_next_id(), uuid.UUID)
    assert g.next_ids(0) == b""
    u = UlidGenerator(clock=ManualClock(T))
    assert isinstance(u.next_id(), str) and isinstance(u.try_next_id(), str)


def test_strict_exhaustion_try_returns_none():
    g = UlidGenerator(clock=ManualClock(T), max_wait_ms=1.0)
    g.next_ids(32_768)  # the frozen millisecond's 2^15 IDs
    assert g.try_next_id() is None  # next_id would sleep for the next millisecond
    with pytest.raises(polyflake.ClockMovedBackwards) as e:
        g.next_id()  # ... which never comes: a stuck clock
    assert e.value.stuck


def test_close_and_with():
    with Uuid7Generator() as g:
        g.next_id()
    for call in (g.next_id, g.next_str, g.next_bytes, lambda: g.next_ids(3)):
        with pytest.raises(polyflake.GeneratorClosed):
            call()
    assert g.health().status == "closed"
    u = UlidGenerator()
    u.close()
    u.close()
    with pytest.raises(polyflake.GeneratorClosed):
        u.next_id()


def test_settings_and_bad_input():
    assert "Uuid7Generator(mode='strict'" in repr(Uuid7Generator())
    assert Uuid7Generator(max_forward_step_ms=None, forward_confirm_ms=1000).next_id().version == 7
    for bad in ({"node_id": 1}, {"layout": "default"}, {"epoch_ms": 0}, {"max_lead_ms": 5}):
        with pytest.raises(TypeError, match="unexpected keyword"):
            Uuid7Generator(**bad)  # no node id, no layout, no epoch; max_lead_ms is monotonic
    with pytest.raises(TypeError):
        Uuid7Generator(5)
    with pytest.raises(polyflake.InvalidArgument, match="mode"):
        UlidGenerator(mode="Strict")
    with pytest.raises(TypeError):
        UlidGenerator(mode=1)
    with pytest.raises(polyflake.InvalidArgument):
        Uuid7Generator(max_wait_ms=-1)
    with pytest.raises(TypeError):
        Uuid7Generator(clock=5)
    g = Uuid7Generator()
    for bad_count in (-1, 2**24 + 1):
        with pytest.raises(polyflake.InvalidArgument):
            g.next_ids(bad_count)
    with pytest.raises(TypeError):
        g.next_ids(1.0)


# --- fork -------------------------------------------------------------------------------------

def read_all(fd):
    with os.fdopen(fd, "rb") as f:
        return f.read()


def ids_from_children(make_id, children=2, per_child=500):
    """Fork `children` children at once; each sends `per_child` IDs (16 bytes each) back."""
    pipes = []
    for _ in range(children):
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:  # child: never return into pytest
            code = 0
            try:
                os.close(r)
                os.write(w, b"".join(make_id() for _ in range(per_child)))
            except BaseException:  # noqa: BLE001
                code = 1
            os._exit(code)
        os.close(w)
        pipes.append((pid, r))
    out = []
    for pid, r in pipes:
        raw = read_all(r)
        _, status = os.waitpid(pid, 0)
        assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
        assert len(raw) == 16 * per_child
        out.append([raw[k:k + 16] for k in range(0, len(raw), 16)])
    return out


@pytest.mark.parametrize("cls", [Uuid7Generator, UlidGenerator])
def test_forked_children_never_repeat_each_other(cls):
    # A frozen clock: the parent and both children issue from the same state in the same
    # millisecond, so only the random parts, reseeded in each child by the core, tell them apart.
    g = cls(clock=ManualClock(T))
    g.next_bytes()
    kids = ids_from_children(g.next_bytes)
    parent = [g.next_bytes() for _ in range(500)]
    every = parent + kids[0] + kids[1]
    assert len(set(every)) == len(every)
    for stream in [parent, *kids]:
        assert stream == sorted(stream)  # each process's own IDs still increase


def test_module_generators_go_on_in_a_child():
    # Nothing in the binding needs re-making after fork: the process-wide generators go on in
    # the child (no node id to clash), with fresh random parts.
    polyflake.uuid7()
    polyflake.ulid()
    kids = ids_from_children(polyflake.uuid7_bytes, per_child=2000)
    kids += ids_from_children(polyflake.ulid_bytes, per_child=2000)
    parent = [polyflake.uuid7_bytes() for _ in range(2000)] + [polyflake.ulid_bytes() for _ in range(2000)]
    every = parent + [x for k in kids for x in k]
    assert len(set(every)) == len(every)

    def child():
        u = polyflake.uuid7()
        return 0 if u.version == 7 and CROCKFORD.fullmatch(polyflake.ulid()) else 1

    assert run_in_child(child) == 0


# --- one class --------------------------------------------------------------------------------

def test_one_class_of_either_format():
    # TimeIdGenerator is the one class; Uuid7Generator and UlidGenerator are it with the format
    # fixed (a subclass may name only its own format).
    assert issubclass(Uuid7Generator, polyflake.TimeIdGenerator)
    assert issubclass(UlidGenerator, polyflake.TimeIdGenerator)
    g = polyflake.TimeIdGenerator(format="ulid", clock=ManualClock(T))
    assert g.format == "ulid" and type(g) is polyflake.TimeIdGenerator
    a, b = (int.from_bytes(g.next_bytes(), "big") for _ in range(2))
    assert b - a == 1 and a >> 80 == T  # the ULID spec's +1 within the millisecond
    assert isinstance(g.next_id(), str) and CROCKFORD.fullmatch(g.next_id())
    u = polyflake.TimeIdGenerator(clock=ManualClock(T))  # uuid7 unless told
    assert u.format == "uuid7" and u.next_id().version == 7
    assert Uuid7Generator(format="uuid7").format == "uuid7" and UlidGenerator().format == "ulid"
    with pytest.raises(TypeError, match="issues ulid only"):
        UlidGenerator(format="uuid7")
    with pytest.raises(polyflake.InvalidArgument, match="time-ID format"):
        polyflake.TimeIdGenerator(format="uuidv7")
    assert "TimeIdGenerator(mode='strict'" in repr(polyflake.TimeIdGenerator())
