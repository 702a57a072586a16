"""Many threads on one generator: no duplicate; and a strict wait lets other threads run."""

import threading

import polyflake
from polyflake.testing import ManualClock

from conftest import CUSTOM_EPOCH_MS

THREADS, PER_THREAD = 8, 100_000


def hammer(g):
    out = [None] * THREADS
    start = threading.Barrier(THREADS)

    def work(k):
        start.wait()
        f = g.next_id
        out[k] = [f() for _ in range(PER_THREAD)]

    threads = [threading.Thread(target=work, args=(k,)) for k in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return out


def check(out):
    every = [x for ids in out for x in ids]
    assert len(every) == THREADS * PER_THREAD
    assert len(set(every)) == len(every), "duplicate IDs across threads"
    for ids in out:
        assert all(a < b for a, b in zip(ids, ids[1:])), "a thread saw IDs go backwards"


def test_strict_8_threads_no_duplicate():
    # 800,000 IDs at 4,096 per ms: the threads exhaust milliseconds and take the waiting path.
    g = polyflake.Snowflake(node_id=801)
    check(hammer(g))
    h = g.health()
    assert h.ok and h.ids_issued == THREADS * PER_THREAD


def test_monotonic_8_threads_no_duplicate():
    g = polyflake.MonotonicSnowflake(node_id=802)
    check(hammer(g))
    assert g.health().ids_issued == THREADS * PER_THREAD


def test_batches_from_threads_no_duplicate():
    g = polyflake.MonotonicSnowflake(node_id=803)
    out = [None] * THREADS

    def work(k):
        out[k] = [x for _ in range(10) for x in g.next_ids(10_000)]

    threads = [threading.Thread(target=work, args=(k,)) for k in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    every = [x for ids in out for x in ids]
    assert len(set(every)) == len(every) == THREADS * 100_000


def test_strict_wait_releases_the_gil():
    """A call that waits (here: a frozen clock with a 300 ms budget) must not hold the GIL:
    another Python thread keeps running meanwhile."""
    clock = ManualClock(CUSTOM_EPOCH_MS + 5)
    g = polyflake.Snowflake(node_id=1, clock=clock, max_wait_ms=300.0)
    for _ in range(4096):
        g.next_id()
    ticks = [0]
    waiting = threading.Event()
    done = threading.Event()

    def counter():
        waiting.wait()
        while not done.is_set():
            ticks[0] += 1

    t = threading.Thread(target=counter)
    t.start()
    waiting.set()
    try:
        g.next_id()
        raise AssertionError("a frozen clock must refuse")
    except polyflake.ClockMovedBackwards:
        pass
    finally:
        done.set()
        t.join()
    # Held for 300 ms, the GIL would have let the counter run only between Python calls here;
    # released, it spins the whole time (millions of iterations; 1,000 is a wide margin).
    assert ticks[0] > 1000, ticks[0]
