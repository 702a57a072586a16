"""Every call that waits can be interrupted: Ctrl-C (a real SIGINT, sent from another
process) reaches Python within 100 ms from a strict batch that spans seconds and from a rewind
wait inside a 20-second budget, as KeyboardInterrupt (never Interrupted, never lost); the
generator stays consistent (the cut batch returns nothing, the next ID is above every ID issued
before). A cancelled asyncio task frees its executor thread within the same bound.

Timing: the core asks the hook at most every 20 ms, so the bound is 100 ms; the machines these
run on have 2 busy cores, so each figure is asserted as best of 3 <= 100 ms + MARGIN_MS, and
every single run <= 1 s (an uninterruptible wait would take 9.6 s or 19.5 s). The figures are
printed (pytest -s shows them)."""

import asyncio
import concurrent.futures
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time

import pytest

from polyflake import Snowflake

#: What a loaded 2-core machine may add to the 100 ms bound (scheduling of two processes).
MARGIN_MS = 150
BOUND_MS = 100
RUNS = 3

# The child: make the generator, issue some IDs, say READY, then wait in the call under test
# until the parent's SIGINT; print when KeyboardInterrupt arrived (CLOCK_MONOTONIC is one clock
# for every process of the host) and whether the generator is still consistent.
CHILD = textwrap.dedent("""
    import signal, sys, time
    # Python's own Ctrl-C handler, as an interactive shell's child has it: a child of a background
    # job (`make test &`) starts with SIGINT ignored, and Python then installs none.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    import polyflake
    from polyflake import Snowflake, Uuid7Generator, UlidGenerator

    case, node = sys.argv[1], int(sys.argv[2])
    offset = [0]
    def clock():  # the system clock, then stepped back 19.5 s (a user's callable: no test clock)
        return time.time_ns() // 1_000_000 - offset[0]

    if case == "batch":
        g = Snowflake(node_id=node, layout="41/21/1")  # 2 IDs per ms: 20,000 take 10 s
        before = list(g.next_ids(10))
        call = lambda: g.next_ids(20_000)
    elif case == "rewind":
        g = Snowflake(node_id=node, clock=clock, max_wait_ms=20_000)
        before = list(g.next_ids(10))
        offset[0] = 19_500
        call = g.next_id
    else:
        cls = {"uuid7": Uuid7Generator, "ulid": UlidGenerator}[case]
        g = cls(clock=clock, max_wait_ms=20_000)
        before = [int.from_bytes(g.next_ids(10)[i:i + 16], "big") for i in range(0, 160, 16)]
        offset[0] = 19_500
        call = g.next_bytes
    result = None
    print("READY", flush=True)
    try:
        result = call()
        print("NOT INTERRUPTED", flush=True)
    except KeyboardInterrupt:
        print("CAUGHT", time.monotonic(), flush=True)
    except BaseException as e:
        print("WRONG", type(e).__name__, e, flush=True)
    offset[0] = 0
    if case in ("batch", "rewind"):
        after = g.next_id()
    else:
        after = int.from_bytes(g.next_bytes(), "big")
    ok = result is None and after > max(before) and g.health().ok
    print("CONSISTENT" if ok else f"INCONSISTENT {result!r} {after} {max(before)}", flush=True)
""")


def interrupt_once(case, node):
    """Run the child, SIGINT it 400 ms into its wait; the ms from the signal to the catch."""
    child = subprocess.Popen([sys.executable, "-c", CHILD, case, str(node)],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline().strip() == "READY", child.stderr.read()
        time.sleep(0.4)  # well inside the call's wait (10 s or 19.5 s)
        assert child.poll() is None, "the call returned before the signal"
        sent = time.monotonic()
        child.send_signal(signal.SIGINT)
        caught = child.stdout.readline().split()
        consistent = child.stdout.readline().strip()
        assert child.wait(timeout=60) == 0, child.stderr.read()
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    assert caught and caught[0] == "CAUGHT", (caught, child.stderr.read())
    assert consistent == "CONSISTENT", consistent
    return (float(caught[1]) - sent) * 1000


@pytest.mark.parametrize("case,node", [("batch", 940), ("rewind", 941), ("uuid7", 0), ("ulid", 0)])
def test_ctrl_c_reaches_python_within_100_ms(case, node):
    took = sorted(interrupt_once(case, node) for _ in range(RUNS))
    print(f"\n{case}: SIGINT to KeyboardInterrupt {', '.join(f'{t:.1f}' for t in took)} ms")
    assert took[0] <= BOUND_MS + MARGIN_MS, took
    assert took[-1] <= 1000, took


class Raised(Exception):
    pass


def test_any_raising_signal_handler_cuts_the_wait_and_its_exception_is_raised():
    """In this process: a SIGUSR1 handler that raises cuts a 10 s strict batch; the handler's
    own exception comes out (not Interrupted), the batch gives nothing, nothing is reissued."""
    g = Snowflake(node_id=942, layout="41/21/1")
    before = g.next_ids(10)
    sent = []

    def handler(signum, frame):
        raise Raised("from the handler")

    def send():
        time.sleep(0.3)
        sent.append(time.monotonic())
        os.kill(os.getpid(), signal.SIGUSR1)

    old = signal.signal(signal.SIGUSR1, handler)
    try:
        threading.Thread(target=send).start()
        result = None
        with pytest.raises(Raised):
            result = g.next_ids(20_000)
        took = (time.monotonic() - sent[0]) * 1000
    finally:
        signal.signal(signal.SIGUSR1, old)
    print(f"\nSIGUSR1 handler's exception after {took:.1f} ms")
    assert result is None
    assert took <= BOUND_MS + MARGIN_MS, took
    after = g.next_ids(10)
    assert after[0] > before[-1] and g.health().ok
    g.close()


def test_a_handler_that_does_not_raise_does_not_cut_the_wait():
    g = Snowflake(node_id=943, layout="41/21/1")
    seen = []
    old = signal.signal(signal.SIGUSR2, lambda *_: seen.append(1))
    try:
        timer = threading.Timer(0.05, os.kill, (os.getpid(), signal.SIGUSR2))
        timer.start()
        ids = g.next_ids(600)  # 300 ms of waiting
        timer.join()
    finally:
        signal.signal(signal.SIGUSR2, old)
    assert seen == [1] and len(ids) == 600 and len(set(ids)) == 600
    g.close()


def test_a_cancelled_task_frees_its_thread_at_once():
    """`anext_ids` runs a strict batch of 10 s in the default executor: cancelling the task cuts
    the thread's wait (the only worker is free for the next job within the bound)."""
    g = Snowflake(node_id=944, layout="41/21/1")
    before = g.next_ids(10)

    async def main():
        loop = asyncio.get_running_loop()
        loop.set_default_executor(concurrent.futures.ThreadPoolExecutor(max_workers=1))
        task = asyncio.ensure_future(g.anext_ids(20_000))
        await asyncio.sleep(0.3)
        assert not task.done()
        cancelled = time.monotonic()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        # The one worker runs this only once the batch's thread has stopped waiting.
        ran = await loop.run_in_executor(None, time.monotonic)
        return (ran - cancelled) * 1000

    took = asyncio.run(main())
    print(f"\ncancelled task's thread free after {took:.1f} ms")
    assert took <= BOUND_MS + MARGIN_MS, took
    after = g.next_ids(10)
    assert after[0] > before[-1]
    g.close()



def test_a_ctrl_c_seen_inside_a_clock_callable_is_raised_as_it_is():
    """A signal's KeyboardInterrupt may surface inside a user's clock callable (Python runs
    handlers between bytecodes): it comes out as KeyboardInterrupt, not as ClockFailed."""
    calls = []

    def clock():
        calls.append(1)
        if len(calls) > 1:
            raise KeyboardInterrupt
        return time.time_ns() // 1_000_000

    with Snowflake(node_id=945, clock=clock) as g:
        g.next_id()
        with pytest.raises(KeyboardInterrupt):
            g.next_id()
        with pytest.raises(KeyboardInterrupt):
            g.health()
    # An ordinary exception of a clock stays ClockFailed (test_bad_input.py).
