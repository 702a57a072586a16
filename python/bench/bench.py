"""polyflake Python benchmark (not a test).

    make bench-python          python bench.py: the full run, human tables, each target met or missed
    make bench-check-python    python bench.py --check: the benchmark gate's rows (verify/bench/check.py),
                               one JSON object per line on stdout and nothing else

The full run measures, interleaved round by round so machine noise hits every candidate alike:
  - next_id beside time.time_ns(), uuid.uuid4(), uuid_utils.uuid7() and snowflake-id;
  - next_id on the coarse clock source;
  - polyflake.uuid7() (a uuid.UUID) beside uuid_utils.compat.uuid7() (also a uuid.UUID), and the
    str/bytes fast path (uuid7_str(), uuid7_bytes()) beside uuid_utils.uuid7();
  - `await g.anext_id()` beside `g.next_id()`, both in one coroutine's loop;
  - next_ids(10**6);
  - a strict default-layout tight loop at the layout's ceiling (4,096,000 IDs/s): CPU-seconds
    per wall-second, beside snowflake-id flat out.
Targets: next_id <= 1.1x time.time_ns(); coarse next_id <= 0.85x time.time_ns(); uuid7() <= 0.8x
uuid_utils.compat.uuid7(); uuid7_str()/uuid7_bytes() <= 0.8x uuid_utils.uuid7(); the async fast
path <= 1.5x the sync call; next_ids(10**6) <= 5 ms.

The default layout caps a strict generator at 4,096 IDs per ms (244 ns/ID on average once calls
are faster than that), so per-call cost is measured on MonotonicSnowflake (never waits) and on a
strict Snowflake with layout 41/1/21 (2,097,152 IDs per ms: it cannot exhaust at Python speed).
The capped default is printed too, for information.

Every generator here runs flat out, which the defaults guard against: a monotonic one would meet
its lead limit (5,000 ms by default) within a second, and a fixed node id's restart-guard mark
(one reserve ahead) bounds the lead too. So the monotonic ones have `max_lead_ms=None`, and all
of them `restart_guard="off"` and a host scope of their own (no claim on the host's node ids,
which other processes on the machine may hold).
"""

import argparse
import asyncio
import json
import os
import platform
import statistics
import sys
import time
import timeit
import uuid

import polyflake

try:
    import snowflake  # snowflake-id
    import uuid_utils
    import uuid_utils.compat
except ImportError as e:  # pragma: no cover - make bench-python installs them
    sys.exit(f"missing benchmark dependency ({e}): pip install uuid-utils snowflake-id")

ROUNDS = int(os.environ.get("BENCH_ROUNDS", "21"))
CHECK_ROUNDS = int(os.environ.get("BENCH_ROUNDS", "51"))
# How long each tight loop at the ceiling runs (seconds; two runs each, alternated).
CEILING_S = float(os.environ.get("BENCH_CEILING_S", "3"))


def generators(scope):
    """The benchmark's generators (see the module's docstring for their settings)."""
    claim = dict(restart_guard="off", host_scope=scope)
    unbounded = dict(claim, max_lead_ms=None)
    Mono, Strict = polyflake.MonotonicSnowflake, polyflake.Snowflake
    return {
        "mono": Mono(node_id=1, **unbounded),
        "mono_coarse": Mono(node_id=4, clock="coarse", **unbounded),
        "strict_wide": Strict(node_id=1, layout=(41, 1, 21), **claim),
        "strict_wide_coarse": Strict(node_id=0, layout=(41, 1, 21), clock="coarse", **claim),
        "strict_default": Strict(node_id=2, **claim),
    }


def per_call_ns(fn, number, timer):
    return timeit.Timer(fn, timer=timer).timeit(number) / number * 1e9


# Per-call cost is thread CPU time (on a shared 2-core machine, time spent descheduled is not the
# call's); the capped strict generator sleeps by design, so it is timed on the wall clock.
CPU, WALL = time.thread_time, time.perf_counter


def await_loop_ns(call, number):
    """CPU ns per iteration of `for _ in range(number): await call()` inside one coroutine, run to
    completion on a fresh event loop."""

    async def awaited():
        for _ in range(number):
            await call()

    t0 = CPU()
    asyncio.run(awaited())
    return (CPU() - t0) / number * 1e9


def sync_loop_ns(call, number):
    """The same loop with a plain call, in a coroutine on a fresh event loop (the same frame
    and loop set-up as await_loop_ns)."""

    async def called():
        for _ in range(number):
            call()

    t0 = CPU()
    asyncio.run(called())
    return (CPU() - t0) / number * 1e9


def verdict(ratio, target):
    return "met" if ratio <= target else "MISSED"


def full():
    g = generators("bench-python")
    mono, strict_wide, strict_default = g["mono"], g["strict_wide"], g["strict_default"]
    mono_coarse, strict_wide_coarse = g["mono_coarse"], g["strict_wide_coarse"]
    sf_id = snowflake.SnowflakeGenerator(3)
    assert isinstance(polyflake.uuid7(), uuid.UUID)
    assert isinstance(uuid_utils.compat.uuid7(), uuid.UUID)

    # name -> (callable, calls per round, timer)
    candidates = {
        "time.time_ns()": (time.time_ns, 200_000, CPU),
        "MonotonicSnowflake.next_id()": (mono.next_id, 200_000, CPU),
        "Snowflake.next_id(), layout 41/1/21": (strict_wide.next_id, 200_000, CPU),
        "uuid.uuid4()": (uuid.uuid4, 30_000, CPU),
        "uuid_utils.uuid7()": (uuid_utils.uuid7, 100_000, CPU),
        "snowflake-id next(gen)": (sf_id.__next__, 30_000, CPU),
        "MonotonicSnowflake(clock=\"coarse\").next_id()": (mono_coarse.next_id, 200_000, CPU),
        "Snowflake(clock=\"coarse\").next_id(), layout 41/1/21": (strict_wide_coarse.next_id, 200_000, CPU),
        "polyflake.uuid7()": (polyflake.uuid7, 100_000, CPU),
        "uuid_utils.compat.uuid7()": (uuid_utils.compat.uuid7, 100_000, CPU),
        "polyflake.uuid7_str()": (polyflake.uuid7_str, 100_000, CPU),
        "polyflake.uuid7_bytes()": (polyflake.uuid7_bytes, 100_000, CPU),
        "Snowflake.next_id(), default 41/10/12 (capped 4,096/ms; wall clock)": (strict_default.next_id, 50_000, WALL),
    }
    for fn, _, _ in candidates.values():  # warm up
        for _ in range(10_000):
            fn()
    results = {name: [] for name in candidates}
    for _ in range(ROUNDS):
        for name, (fn, number, timer) in candidates.items():
            results[name].append(per_call_ns(fn, number, timer))

    # The async fast path: each round, the sync and the awaited loop on the same generator.
    loops = {
        "MonotonicSnowflake.next_id() in a coroutine": (sync_loop_ns, mono.next_id),
        "await MonotonicSnowflake.anext_id()": (await_loop_ns, mono.anext_id),
        "Snowflake.next_id() in a coroutine, layout 41/1/21": (sync_loop_ns, strict_wide.next_id),
        "await Snowflake.anext_id(), layout 41/1/21": (await_loop_ns, strict_wide.anext_id),
    }
    loop_ns = {name: [] for name in loops}
    for _ in range(ROUNDS):
        for name, (measure, call) in loops.items():
            loop_ns[name].append(measure(call, 100_000))

    base = results["time.time_ns()"]
    print(f"Python {platform.python_version()} ({sys.executable}), polyflake {polyflake.__version__}")
    print(
        f"{platform.machine()}, {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}; "
        f"{ROUNDS} interleaved rounds"
    )
    print()
    print("| call | best ns | median ns | ratio to time.time_ns(): median of rounds | best / best |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for name, vals in results.items():
        ratios = [v / b for v, b in zip(vals, base)]
        print(
            f"| `{name}` | {min(vals):.1f} | {statistics.median(vals):.1f} "
            f"| {statistics.median(ratios):.2f}x | {min(vals) / min(base):.2f}x |"
        )

    print()
    print("| loop in one coroutine (asyncio.run) | best ns | median ns | ratio to the sync loop: median of rounds |")
    print("| --- | ---: | ---: | ---: |")
    pairs = {}
    sync_name = None
    for name, vals in loop_ns.items():
        if name.startswith("await"):
            ratio = statistics.median(a / b for a, b in zip(vals, loop_ns[sync_name]))
            pairs[name] = ratio
            shown = f"{ratio:.2f}x"
        else:
            sync_name, shown = name, "1.00x"
        print(f"| `{name}` | {min(vals):.1f} | {statistics.median(vals):.1f} | {shown} |")

    print()
    batches = {
        "MonotonicSnowflake.next_ids(10**6)": (mono, 15),
        "Snowflake.next_ids(10**6), layout 41/1/21": (strict_wide, 15),
        "Snowflake.next_ids(10**6), default layout (capped 4,096/ms)": (strict_default, 3),
    }
    print("| batch | best ms | median ms |")
    print("| --- | ---: | ---: |")
    batch_ms = {}
    for name, (g, reps) in batches.items():
        g.next_ids(10**6)
        times = []
        for _ in range(reps):
            t0 = time.perf_counter()
            ids = g.next_ids(10**6)
            times.append((time.perf_counter() - t0) * 1e3)
            assert len(ids) == 10**6
        batch_ms[name] = times
        print(f"| `{name}` | {min(times):.2f} | {statistics.median(times):.2f} |")

    print()
    for name in ("MonotonicSnowflake.next_id()", "Snowflake.next_id(), layout 41/1/21"):
        ratio = statistics.median(v / b for v, b in zip(results[name], base))
        best = min(results[name]) / min(base)
        print(
            f"target next_id <= 1.1x time.time_ns(): {name}: median {ratio:.2f}x -> {verdict(ratio, 1.1)}; "
            f"best/best {best:.2f}x -> {'met' if best <= 1.1 else 'MISSED'}"
        )
    def ratio_to(name, ref):
        return statistics.median(a / b for a, b in zip(results[name], results[ref]))

    for name in ('MonotonicSnowflake(clock="coarse").next_id()',
                 'Snowflake(clock="coarse").next_id(), layout 41/1/21'):
        r = ratio_to(name, "time.time_ns()")
        print(f"target coarse next_id <= 0.85x time.time_ns(): {name}: median {r:.2f}x -> {verdict(r, 0.85)}")
    r = ratio_to("polyflake.uuid7()", "uuid_utils.compat.uuid7()")
    print(f"target uuid7() <= 0.8x uuid_utils.compat.uuid7(): median {r:.2f}x -> {verdict(r, 0.8)}")
    for name in ("polyflake.uuid7_str()", "polyflake.uuid7_bytes()"):
        r = ratio_to(name, "uuid_utils.uuid7()")
        print(f"target {name} <= 0.8x uuid_utils.uuid7(): median {r:.2f}x -> {verdict(r, 0.8)}")
    for name, r in pairs.items():
        print(f"target async fast path <= 1.5x the sync call: {name}: median {r:.2f}x -> {verdict(r, 1.5)}")
    for name in ("MonotonicSnowflake.next_ids(10**6)", "Snowflake.next_ids(10**6), layout 41/1/21"):
        med = statistics.median(batch_ms[name])
        print(f"target next_ids(10**6) <= 5 ms: {name}: {med:.2f} ms (median) -> {verdict(med, 5.0)}")

    ceiling(strict_default, sf_id)


def ids_per_wall_second(issue_chunk, seconds):
    """Run `issue_chunk()` (which returns how many IDs it issued) for about `seconds`: IDs per
    wall-second and the process's CPU-seconds per wall-second (every thread's)."""
    issued, t0, c0 = 0, time.perf_counter(), time.process_time()
    while time.perf_counter() - t0 < seconds:
        issued += issue_chunk()
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    return issued / wall, cpu / wall


def ceiling(strict_default, sf_id):
    """A strict default-layout generator in a tight loop reaches the layout's ceiling (4,096 IDs
    a millisecond, then a sleep to the next): what that costs in CPU, beside snowflake-id flat
    out (it hands back None for a spent millisecond, so a caller spins)."""
    chunk = 40_960  # 10 ms of the ceiling

    def polyflake_chunk(next_id=strict_default.next_id):
        for _ in range(chunk):
            next_id()
        return chunk

    def snowflake_id_chunk(gen=sf_id.__next__):
        issued = 0
        for _ in range(chunk):
            if gen() is not None:
                issued += 1
        return issued

    loops = {
        "polyflake `Snowflake(...).next_id()`, 41/10/12": polyflake_chunk,
        "snowflake-id `next(gen)` (41/10/12), flat out": snowflake_id_chunk,
    }
    runs = {name: [] for name in loops}
    for _ in range(2):
        for name, loop in loops.items():
            runs[name].append(ids_per_wall_second(loop, CEILING_S))
    print()
    print(f"| strict tight loop, {CEILING_S:g} s a run, 2 runs alternated | IDs per wall-second "
          "| share of 4,096,000 | CPU-s per wall-s |")
    print("| --- | ---: | ---: | ---: |")
    for name, vals in runs.items():
        for rate, cpu in vals:
            print(f"| {name} | {rate:,.0f} | {rate / 4_096_000:.1%} | {cpu:.3f} |")


# The gate's rows: (row, candidate, reference). Row names are the baseline's keys: keep them.
CHECK_ROWS = [
    ("python next_id strict 41/1/21", "strict_wide", "time.time_ns()"),
    ("python next_id monotonic 41/10/12", "mono", "time.time_ns()"),
    ("python next_id strict 41/1/21 coarse", "strict_wide_coarse", "time.time_ns()"),
    ("python next_id monotonic 41/10/12 coarse", "mono_coarse", "time.time_ns()"),
    ("python next_ids(10**6) per id", "batch", "time.time_ns()"),
    ("python uuid7()", "uuid7", "uuid_utils.compat.uuid7()"),
    ("python uuid7_str()", "uuid7_str", "uuid_utils.uuid7()"),
    ("python ulid()", "ulid", "uuid_utils.uuid7()"),
]


def check():
    """The gate's rows as JSON lines: each the median over interleaved rounds of (its time /
    its reference's time in the same round), with both medians. About 5 s."""
    t0 = time.perf_counter()
    g = generators("bench-check-python")
    batch = 10**6
    # name -> (callable, calls per round, IDs per call)
    cases = {
        "time.time_ns()": (time.time_ns, 200_000, 1),
        "uuid_utils.uuid7()": (uuid_utils.uuid7, 50_000, 1),
        "uuid_utils.compat.uuid7()": (uuid_utils.compat.uuid7, 10_000, 1),
        **{name: (g[name].next_id, 200_000, 1) for name in
           ("strict_wide", "mono", "strict_wide_coarse", "mono_coarse")},
        "batch": (lambda: g["strict_wide"].next_ids(batch), 4, batch),
        "uuid7": (polyflake.uuid7, 30_000, 1),
        "uuid7_str": (polyflake.uuid7_str, 50_000, 1),
        "ulid": (polyflake.ulid, 50_000, 1),
    }
    timers = {name: timeit.Timer(fn, timer=CPU) for name, (fn, _, _) in cases.items()}
    for name, t in timers.items():  # warm up
        t.timeit(max(1, cases[name][1] // 10))
    ns = {name: [] for name in cases}
    for _ in range(CHECK_ROUNDS):
        for name, t in timers.items():
            _, number, per = cases[name]
            ns[name].append(t.timeit(number) / (number * per) * 1e9)
    for row, name, ref in CHECK_ROWS:
        ratio = statistics.median(a / b for a, b in zip(ns[name], ns[ref]))
        print(json.dumps({
            "row": row,
            "ns": round(statistics.median(ns[name]), 4),
            "reference": ref,
            "reference_ns": round(statistics.median(ns[ref]), 4),
            "ratio": round(ratio, 4),
        }), flush=True)
    print(
        f"python check mode: {len(CHECK_ROWS)} rows, {CHECK_ROUNDS} interleaved rounds in "
        f"{time.perf_counter() - t0:.1f} s; Python {platform.python_version()}, polyflake "
        f"{polyflake.__version__}, load average {os.getloadavg()[0]:.2f}",
        file=sys.stderr,
    )


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="the gate's rows, as JSON lines")
    if ap.parse_args().check:
        check()
    else:
        full()


if __name__ == "__main__":
    main()
