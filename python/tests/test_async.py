"""The async forms: `await g.anext_id()` and `await g.anext_ids(n)` never block the
running event loop, `g.try_next_id()` returns None where `next_id()` would sleep, and IDs from
mixed sync and async calls stay unique and increasing per generator."""

import asyncio
import collections.abc

import pytest

import polyflake
from polyflake import MonotonicSnowflake, Snowflake, Uuid7Generator
from polyflake.testing import ManualClock

T = 1_737_747_358_021


class Ticker:
    """A task that counts 1 ms sleeps: it advances only while the loop is free."""

    def __init__(self):
        self.ticks = 0
        self.task = asyncio.get_running_loop().create_task(self.run())

    async def run(self):
        while True:
            self.ticks += 1
            await asyncio.sleep(0.001)

    def stop(self):
        self.task.cancel()


def run(coro):
    return asyncio.run(coro)


def test_the_loop_keeps_running_during_a_strict_batch_of_a_million():
    async def main():
        g = Snowflake(node_id=801)  # the default layout: 4,096 IDs per ms
        ticker = Ticker()
        await asyncio.sleep(0.01)
        loop = asyncio.get_running_loop()
        started, ticks_before = loop.time(), ticker.ticks
        ids = await g.anext_ids(10**6)  # fills 245 ms, sleeping through each one
        took, ticks = loop.time() - started, ticker.ticks - ticks_before
        ticker.stop()
        return ids, took, ticks

    ids, took, ticks = run(main())
    assert len(ids) == 10**6 and ids.typecode == "q"
    assert all(a < b for a, b in zip(ids, ids[1:]))
    assert took >= 0.2  # 10**6 / 4,096 per ms = 244 ms: the batch really waited ...
    # ... and the loop ran meanwhile (inline, the ticker would not have moved at all).
    assert ticks >= 20, (ticks, took)


def test_the_loop_keeps_running_while_a_call_waits_out_a_rewind():
    async def main():
        clock = ManualClock(T)
        # The budget is real time: 5 s, not 100 ms, which a loaded machine could spend before the
        # loop below gets back from its 50 ms sleep to move the clock (a refusal, not a wait).
        g = Snowflake(node_id=802, clock=clock, max_wait_ms=5000.0)
        g.next_id()
        clock.advance(-50)  # a small rewind: waited out, here for as long as the clock lags
        ticker = Ticker()
        pending = asyncio.ensure_future(g.anext_id())
        await asyncio.sleep(0.05)
        assert not pending.done()
        clock.elapse(60)  # time passes: the wait ends
        x = await pending
        ticker.stop()
        return g, x, ticker.ticks

    g, x, ticks = run(main())
    assert g.decode(x)["epoch_ms"] == T + 10 and ticks >= 5
    assert g.health().rewinds_waited == 1


def test_try_next_id_is_none_where_next_id_would_sleep():
    g = Snowflake(node_id=803, clock=ManualClock(T), max_wait_ms=1.0)
    ids = [g.try_next_id() for _ in range(4096)]
    assert None not in ids and ids == sorted(ids)
    assert g.try_next_id() is None  # the frozen millisecond is spent: next_id would sleep
    assert g.health().ids_issued == 4096  # declining issued nothing
    m = MonotonicSnowflake(node_id=804, clock=ManualClock(T))
    assert all(m.try_next_id() is not None for _ in range(5000))  # monotonic never waits
    # A UUIDv7 millisecond holds 2^15 states, less the random start of its counter (0 to 7).
    u = Uuid7Generator(clock=ManualClock(T))
    issued = sum(1 for _ in iter(u.try_next_id, None))
    assert 32_768 - 7 <= issued <= 32_768 and u.try_next_id() is None


def test_the_fast_path_is_ready_at_once():
    async def main():
        g = Snowflake(node_id=805)
        # A new static generator issues from the millisecond after it took its node id (a
        # predecessor in another process may have issued in this one): this call waits for it.
        g.next_id()
        aw = g.anext_id()
        # No thread and no Python frame: a native awaitable that is also a coroutine.
        assert type(aw).__name__ == "Ready" and asyncio.iscoroutine(aw)
        assert isinstance(aw, collections.abc.Coroutine)
        x = await aw
        with pytest.raises(RuntimeError, match="already awaited"):
            await aw  # an outcome is given once: never the same ID twice
        y = await asyncio.create_task(g.anext_id())
        z = await asyncio.gather(*(g.anext_id() for _ in range(100)))
        return x, y, z

    x, y, z = run(main())
    assert x < y < z[0] and len(set(z)) == 100


def test_coroutine_protocol():
    g = Snowflake(node_id=806)
    g.next_id()  # past the millisecond the node id was taken in (see above): no wait below
    aw = g.anext_id()
    with pytest.raises(StopIteration) as stop:
        aw.send(None)
    assert isinstance(stop.value.value, int)
    aw = g.anext_id()
    with pytest.raises(ValueError, match="boom"):
        aw.throw(ValueError("boom"))
    with pytest.raises(KeyError):
        g.anext_id().throw(KeyError, "k")
    aw = g.anext_id()
    assert aw.close() is None
    with pytest.raises(RuntimeError):
        aw.send(None)  # closed: the ID it held is a gap, never handed out later


def test_errors_come_out_at_the_await():
    async def main():
        clock = ManualClock(T)
        g = Snowflake(node_id=807, clock=clock)
        g.next_id()
        clock.advance(-600)
        aw = g.anext_id()  # no exception yet ...
        with pytest.raises(polyflake.ClockMovedBackwards):
            await aw  # ... it is the await's
        g.close()
        for aw in (g.anext_id(), g.anext_ids(3)):
            with pytest.raises(polyflake.GeneratorClosed):
                await aw
        m = MonotonicSnowflake(node_id=808)
        with pytest.raises(polyflake.InvalidArgument):
            await m.anext_ids(-1)

    run(main())


@pytest.mark.parametrize("kind", ["strict", "monotonic", "uuid7"])
def test_mixed_sync_and_async_calls_stay_unique_and_increasing(kind):
    async def worker(g, out, rounds):
        for k in range(rounds):
            if k % 3 == 0:
                out.append(g.next_id())
            elif k % 3 == 1:
                out.append(await g.anext_id())
            else:
                batch = await g.anext_ids(5)
                out.extend(batch if not isinstance(batch, bytes) else
                           [int.from_bytes(batch[i:i + 16], "big") for i in range(0, 80, 16)])
            await asyncio.sleep(0)

    async def main():
        if kind == "uuid7":
            g = Uuid7Generator()
        else:
            g = (Snowflake if kind == "strict" else MonotonicSnowflake)(node_id=810 + len(kind))
        outs = [[] for _ in range(4)]
        await asyncio.gather(*(worker(g, out, 3000) for out in outs))
        return outs

    outs = run(main())
    as_int = [[x.int if hasattr(x, "int") else x for x in out] for out in outs]
    for out in as_int:
        assert all(a < b for a, b in zip(out, out[1:]))  # one task's IDs: increasing
    every = [x for out in as_int for x in out]
    assert len(set(every)) == len(every) == 4 * (1000 * 2 + 1000 * 5)


def test_uuid_and_ulid_async_forms():
    async def main():
        u = Uuid7Generator()
        l = polyflake.UlidGenerator(mode="monotonic")
        a, b = await u.anext_id(), await l.anext_id()
        raw = await u.anext_ids(1000)
        return a, b, raw

    a, b, raw = run(main())
    assert a.version == 7 and len(b) == 26 and len(raw) == 16_000
