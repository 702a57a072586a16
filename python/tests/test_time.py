"""An ID's time in one call, for a log line: `decode_time` gives the decoded `epoch_ms`
as an aware UTC `datetime` (on the class, the module and a generator, as `decode`), and
`uuid7_time`/`ulid_time` do the same for the 128-bit formats. `decode()`'s dict is unchanged."""

import uuid
from datetime import datetime, timedelta, timezone

import pytest

import polyflake
from polyflake import Layout, MonotonicSnowflake, Snowflake, UlidGenerator, Uuid7Generator
from polyflake.testing import ManualClock

from conftest import CUSTOM_EPOCH_MS

LITERAL = 141264821508263936  # the reference literal: 2025-01-24T19:35:58.021Z, node 37, sequence 0
UNIX = datetime(1970, 1, 1, tzinfo=timezone.utc)


def at(ms):
    return UNIX + timedelta(milliseconds=ms)


def test_reference_literal():
    t = Snowflake.decode_time(LITERAL)
    assert t == datetime(2025, 1, 24, 19, 35, 58, 21000, tzinfo=timezone.utc)
    assert t.tzinfo is timezone.utc and t.utcoffset() == timedelta(0)
    assert t.isoformat() == "2025-01-24T19:35:58.021000+00:00"
    assert polyflake.decode_time(LITERAL) == MonotonicSnowflake.decode_time(LITERAL) == t
    # decode() keeps its dict's keys.
    assert Snowflake.decode(LITERAL) == {"epoch_ms": 1737747358021, "node_id": 37, "sequence": 0}


def test_generator_uses_its_layout_and_epoch():
    epoch = CUSTOM_EPOCH_MS + 10
    clock = ManualClock(CUSTOM_EPOCH_MS + 123_456_789)
    g = Snowflake(3, layout=Layout.BIG_FLEET, epoch_ms=epoch, clock=clock)
    x = g.next_id()
    assert g.decode_time(x) == at(CUSTOM_EPOCH_MS + 123_456_789) == at(g.decode(x)["epoch_ms"])
    assert g.decode_time(x) == polyflake.decode_time(x, layout=Layout.BIG_FLEET, epoch_ms=epoch)
    assert Snowflake.decode_time(x) != g.decode_time(x)  # the default layout reads other fields
    with pytest.raises(TypeError):
        g.decode_time(x, layout=Layout.DEFAULT)  # a generator's takes no overrides
    g.close()


@pytest.mark.parametrize("ms", [0, 1, 999, 1000, 86_399_999, 86_400_000, 1_737_747_358_999])
def test_milliseconds_are_exact(ms):
    layout = Layout.DEFAULT
    x = ms << (layout.node_bits + layout.sequence_bits)
    t = polyflake.decode_time(x, epoch_ms=CUSTOM_EPOCH_MS)
    assert t == at(CUSTOM_EPOCH_MS + ms) and t.microsecond % 1000 == 0
    assert polyflake.decode_time(x, epoch_ms=-ms - 1) == at(-1)  # before 1970 too


def test_system_clock_time_is_now():
    g = Snowflake(615)
    before = datetime.now(timezone.utc) - timedelta(milliseconds=1)
    t = g.decode_time(g.next_id())
    assert before <= t <= datetime.now(timezone.utc) + timedelta(milliseconds=1)
    g.close()


def test_bad_ids_are_refused_as_decode_does():
    with pytest.raises(polyflake.InvalidId):
        polyflake.decode_time(-1)
    with pytest.raises(polyflake.InvalidId):
        polyflake.decode_time(2**63)
    with pytest.raises(TypeError):
        polyflake.decode_time("141264821508263936")
    with pytest.raises(TypeError):
        polyflake.decode_time(None)
    # Outside what a datetime holds (years 1 to 9999): OverflowError, naming the ms.
    with pytest.raises(OverflowError, match="years 1 to 9999"):
        polyflake.decode_time(polyflake.MAX_ID, epoch_ms=2**62)


def test_uuid7_time_from_every_form():
    g = Uuid7Generator(clock=ManualClock(1_737_747_358_021))
    u = g.next_id()
    want = datetime(2025, 1, 24, 19, 35, 58, 21000, tzinfo=timezone.utc)
    for form in (u, u.bytes, u.int, str(u), str(u).upper()):
        assert polyflake.uuid7_time(form) == want
    assert polyflake.uuid7_time(u) == at(polyflake.uuid7_timestamp_ms(u))
    assert polyflake.uuid7_time(polyflake.uuid7()).tzinfo is timezone.utc
    with pytest.raises(polyflake.InvalidId):
        polyflake.uuid7_time(uuid.uuid4())  # not a version 7
    with pytest.raises(TypeError):
        polyflake.uuid7_time(1.5)


def test_ulid_time_from_every_form():
    g = UlidGenerator(clock=ManualClock(1_737_747_358_021))
    s = g.next_id()
    raw = polyflake.parse_ulid(s)
    want = datetime(2025, 1, 24, 19, 35, 58, 21000, tzinfo=timezone.utc)
    for form in (s, s.lower(), raw, int.from_bytes(raw, "big")):
        assert polyflake.ulid_time(form) == want
    assert polyflake.ulid_time(polyflake.ulid()).tzinfo is timezone.utc
    # 48 bits of ms reach the year 10889: past 9999-12-31 no datetime holds it.
    assert polyflake.ulid_time((253_402_300_799_999 << 80)) == datetime(9999, 12, 31, 23, 59, 59, 999000,
                                                                        tzinfo=timezone.utc)
    with pytest.raises(OverflowError, match="years 1 to 9999"):
        polyflake.ulid_time(2**128 - 1)
    with pytest.raises(polyflake.InvalidId):
        polyflake.ulid_time("not a ulid")
