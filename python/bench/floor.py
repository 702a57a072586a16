"""The floor under Python's `next_id()` (not a test): `make bench-python-floor`.

What a call costs with nothing behind it, through both of the binding's mechanisms (PyO3's
`#[pymethods]`, and the plain `METH_NOARGS` function `next_id()` is: `python/src/fast.rs`), then
with the clock behind it, then with the clock and one compare-and-swap (the least a lock-free
generator does), beside `time.time_ns()` and `next_id()` itself. The `_floor` module is
`python/bench/floor/` (built by the make target, never shipped). Interleaved round by round, the
thread's CPU time per call, median of rounds; ratios are to `time.time_ns()` in the same round.

    python floor.py DIR_OF_FLOOR_MODULE
"""

import os
import statistics
import sys
import time
import timeit

import polyflake

sys.path.insert(0, sys.argv[1])
import _floor  # noqa: E402

ROUNDS = int(os.environ.get("BENCH_ROUNDS", "21"))
CALLS = 200_000
BENCH = dict(restart_guard="off", host_scope="bench-python-floor")


def main():
    f = _floor.Floor()
    strict = polyflake.Snowflake(node_id=1, layout=(41, 1, 21), **BENCH)
    coarse = polyflake.Snowflake(node_id=0, layout=(41, 1, 21), clock="coarse", **BENCH)
    mono = polyflake.MonotonicSnowflake(node_id=1, max_lead_ms=None, **BENCH)
    candidates = {
        "time.time_ns()": time.time_ns,
        "METH_NOARGS, returns None": f.raw_none,
        "METH_NOARGS, returns a constant ID-sized int": f.raw_int,
        "#[pymethods], returns None": f.pyo3_none,
        "#[pymethods], returns a constant ID-sized int": f.pyo3_int,
        "METH_NOARGS, clock_gettime as ns (time.time_ns() again)": f.raw_clock,
        "METH_NOARGS, clock_gettime as ms, one CAS (a minimal generator)": f.raw_clock_cas,
        "Snowflake.next_id(), 41/1/21": strict.next_id,
        "MonotonicSnowflake.next_id(), 41/10/12": mono.next_id,
        'Snowflake(clock="coarse").next_id(), 41/1/21': coarse.next_id,
    }
    timers = {name: timeit.Timer(fn, timer=time.thread_time) for name, fn in candidates.items()}
    for t in timers.values():
        t.timeit(20_000)
    ns = {name: [] for name in candidates}
    for _ in range(ROUNDS):
        for name, t in timers.items():
            ns[name].append(t.timeit(CALLS) / CALLS * 1e9)
    base = ns["time.time_ns()"]
    print(f"Python {sys.version.split()[0]}, polyflake {polyflake.__version__}, "
          f"load average {os.getloadavg()[0]:.2f}; {ROUNDS} interleaved rounds of {CALLS:,} calls")
    print()
    print("| call | median ns | ratio to `time.time_ns()` (median of rounds) |")
    print("| --- | ---: | ---: |")
    for name, vals in ns.items():
        ratio = statistics.median(v / b for v, b in zip(vals, base))
        print(f"| {name} | {statistics.median(vals):.1f} | {ratio:.2f}x |")
    med = {name: statistics.median(vals) for name, vals in ns.items()}
    print()
    print(f"PyO3's method over METH_NOARGS: "
          f"{med['#[pymethods], returns a constant ID-sized int'] - med['METH_NOARGS, returns a constant ID-sized int']:.1f} ns; "
          f"an ID-sized int: {med['METH_NOARGS, returns a constant ID-sized int'] - med['METH_NOARGS, returns None']:.1f} ns; "
          f"next_id over the minimal generator: "
          f"{med['Snowflake.next_id(), 41/1/21'] - med['METH_NOARGS, clock_gettime as ms, one CAS (a minimal generator)']:.1f} ns")


if __name__ == "__main__":
    main()
