#!/usr/bin/env python3
"""The Java benchmark's figures from JMH's JSON output (make bench-java): the ratios the Java
targets name, each marked met or missed, and the same as Markdown rows for BENCHMARKS.md's
"Java (JMH)" section. Speed is reported, never asserted: the exit status is 0 either way (a run
of some cases only, make bench-java JMH_CASES=..., gets the rows it has and "not measured").

    report.py JMH_JSON [LOAD_BEFORE]
"""

import json
import os
import platform
import sys

PREFIX = "dev.polyflake.bench.IdBench."

# (method, what the row says), in the order of the table.
CASES = [
    ("clockCurrentTimeMillis", "`System.currentTimeMillis()`"),
    ("hutoolNextId", "Hutool 5.8 `Snowflake#nextId` (64 generators, round-robin)"),
    ("polyflakeStrictNextId", "polyflake `nextId`, strict, precise clock (64 generators, round-robin)"),
    ("polyflakeCoarseNextId", "polyflake `nextId`, strict, coarse clock (64 generators, round-robin)"),
    ("polyflakeStrictNextIdOneGenerator", "polyflake `nextId`, strict, one generator (41/1/21)"),
    ("polyflakeCoarseNextIdOneGenerator", "polyflake `nextId`, strict, coarse clock, one generator (41/1/21)"),
    ("polyflakeMonotonicNextId", "polyflake `nextId`, monotonic, one generator (41/10/12, no lead limit)"),
    ("polyflakeMonotonicCoarseNextId", "polyflake `nextId`, monotonic, coarse clock, one generator (41/10/12, no lead limit)"),
    ("polyflakeNextIds4096", "polyflake `nextIds(4096)`, per ID (new array per batch)"),
    ("polyflakeNextIdsIntoBuffer4096", "polyflake `nextIds(long[4096])`, per ID (reused array)"),
    ("jvmNewLongArray4096", "control: `new long[4096]` alone, per element"),
    ("uuidCreatorTimeOrderedEpoch", "uuid-creator `UuidCreator.getTimeOrderedEpoch()`"),
    ("polyflakeUuid7", "polyflake `Polyflake.uuid7()`"),
    ("polyflakeUlid", "polyflake `Polyflake.ulid()` (a `String`)"),
    ("polyflakeStrictNextId8Threads", "polyflake `nextId`, 8 platform threads on one generator (39/1/23), per call per thread"),
]

# (what, numerator case, denominator case or None for an absolute ns figure, limit)
TARGETS = [
    ("strict `nextId` <= 1.5x Hutool's `nextId`", "polyflakeStrictNextId", "hutoolNextId", 1.5),
    ("coarse-clock `nextId` <= 1.0x Hutool's `nextId`", "polyflakeCoarseNextId", "hutoolNextId", 1.0),
    ("`nextIds(4096)` <= 0.5 ns per ID", "polyflakeNextIds4096", None, 0.5),
    ("`Polyflake.uuid7()` <= 0.8x uuid-creator's `getTimeOrderedEpoch()`", "polyflakeUuid7",
     "uuidCreatorTimeOrderedEpoch", 0.8),
]


def machine():
    model = "unknown CPU"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return f"{model}, {os.cpu_count()} cores, {platform.system()} {platform.release()}"


def load_now():
    try:
        with open("/proc/loadavg") as f:
            return " ".join(f.read().split()[:3])
    except OSError:
        return "?"


def main():
    path = sys.argv[1]
    load_before = sys.argv[2] if len(sys.argv) > 2 else "?"
    with open(path) as f:
        runs = json.load(f)
    by = {}
    for r in runs:
        name = r["benchmark"].removeprefix(PREFIX)
        by[name] = r
    missing = [c for c, _ in CASES if c not in by]
    if missing:
        print(f"report: {path} has no result for {', '.join(missing)} (a partial run?)")

    first = runs[0]
    settings = (f"{first['forks']} fork, {first['warmupIterations']} x {first['warmupTime']} warm-up, "
                f"{first['measurementIterations']} x {first['measurementTime']} measurement, "
                f"mode {first['mode']}")
    jdk = f"{first.get('vmName', '?')} {first.get('vmVersion', first.get('jdkVersion', '?'))}"
    print()
    print("==> Java (JMH) figures")
    print(f"JDK: {jdk}; JMH {first.get('jmhVersion', '?')}")
    print(f"machine: {machine()}")
    print(f"settings: {settings}; JVM args {' '.join(first.get('jvmArgs', [])) or '(none)'}")
    print(f"load average (1, 5, 15 min): {load_before} before, {load_now()} after")

    def score(case):
        return by[case]["primaryMetric"]["score"] if case in by else None

    def err(case):
        e = by[case]["primaryMetric"]["scoreError"]
        return e if isinstance(e, (int, float)) and e == e else 0.0

    clock = score("clockCurrentTimeMillis")
    hutool = score("hutoolNextId")
    uc = score("uuidCreatorTimeOrderedEpoch")
    rows = []
    for case, label in CASES:
        s = score(case)
        if s is None:
            continue
        per_call = not any(k in case for k in ("uuid", "Uuid", "Ulid", "4096", "8Threads"))
        vs_h = f"{s / hutool:.2f}x" if hutool and per_call else ""
        vs_u = f"{s / uc:.2f}x" if uc and ("uuid" in case.lower() or "Uuid" in case) else ""
        vs_c = f"{s / clock:.2f}x" if clock and "4096" not in case and "8Threads" not in case else ""
        rows.append(f"| {label} | {s:.2f} ± {err(case):.2f} | {vs_c} | {vs_h} | {vs_u} |")
    print()
    print("| case | ns per call (± 99.9% CI) | vs `currentTimeMillis()` | vs Hutool `nextId` | vs uuid-creator |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for r in rows:
        print(r)
    s8 = score("polyflakeStrictNextId8Threads")
    if s8:
        print()
        print(f"8 threads on one generator: {8 / s8 * 1e3:.1f} M IDs per second in all "
              f"({s8:.1f} ns per call per thread).")

    print()
    print("Targets:")
    for what, num, den, limit in TARGETS:
        n = score(num)
        d = score(den) if den else 1.0
        if n is None or d is None:
            print(f"- {what}: **not measured**")
            continue
        value = n / d
        status = "met" if value <= limit else "missed"
        if den:
            print(f"- {what}: **{status}**, {value:.2f}x ({n:.2f} against {d:.2f} ns)")
        else:
            print(f"- {what}: **{status}**, {value:.3f} ns per ID")
    return 0


if __name__ == "__main__":
    sys.exit(main())
