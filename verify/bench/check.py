#!/usr/bin/env python3
"""The benchmark gate: every language's per-call figures as ratios to a reference measured in the
same run, compared with a committed baseline of ratios (verify/bench/baseline.json). Fails, with a
table, when a ratio is worse than its baseline by more than the tolerance. Not a test: speed is
never asserted in `make test`; `make bench-check` runs this, `make bench-check UPDATE=1` rewrites
the baseline on purpose (say why in the commit).

Each language prints its rows as JSON lines, one object per row:
  {"row": ..., "ns": ..., "reference": ..., "reference_ns": ..., "ratio": ...}
(`ratio`: the median over interleaved rounds of the row's time over its reference's time, so a
machine whose load changes moves both). The commands are below (SOURCES); each is run once.

    python3 verify/bench/check.py [--update] [--only rust,c,...] [--save DIR] [--rows FILE...]

--save writes each source's rows to DIR/<source>.jsonl (a run to keep). --rows reads rows from
such files instead of running the sources; where several files carry the same row (several saved
runs), the row's ratio is the median of theirs, and with --update each such row gets a tolerance
of its own from their spread (twice the largest distance from the median, rounded up to 5%,
never below the default): how the baseline is taken, from three runs on a quiet machine:

    for i in 1 2 3; do python3 verify/bench/check.py --save /tmp/bc$i; done
    python3 verify/bench/check.py --update --rows /tmp/bc1/*.jsonl /tmp/bc2/*.jsonl /tmp/bc3/*.jsonl

Python's standard library only.
"""

import argparse
import datetime
import json
import math
import os
import platform
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BASELINE = os.path.join(ROOT, "verify", "bench", "baseline.json")

# Each source: a name and the command that prints its rows (run from the repository's root; the
# make targets build what is missing first, quietly).
SOURCES = [
    ("rust", ["cargo", "bench", "-q", "-p", "polyflake", "--bench", "check"]),
    ("c", ["make", "-s", "--no-print-directory", "bench-check-c"]),
    ("go", ["make", "-s", "--no-print-directory", "bench-check-go"]),
    ("python", ["make", "-s", "--no-print-directory", "bench-check-python"]),
    ("node", ["make", "-s", "--no-print-directory", "bench-check-node"]),
    ("java", ["make", "-s", "--no-print-directory", "bench-check-java"]),
    ("service", ["make", "-s", "--no-print-directory", "bench-check-service"]),
]

# The default tolerance: a row fails when its ratio is more than this fraction above its
# baseline. Chosen from the run-to-run spread of three consecutive runs on the 2-core machine
# (BENCHMARKS.md, "The benchmark gate"); a row may carry its own in the baseline.
DEFAULT_TOLERANCE = 0.20


def machine():
    model = ""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return f"{platform.machine()}, {os.cpu_count()} CPUs, {model or 'unknown CPU'}"


def parse_rows(text, source):
    rows = {}
    for line in text.splitlines():
        line = line.strip()
        if not line.startswith("{"):
            continue
        try:
            r = json.loads(line)
        except json.JSONDecodeError:
            continue
        if not isinstance(r, dict) or "row" not in r or "ratio" not in r:
            continue
        r["source"] = source
        rows[r["row"]] = r
    return rows


def run_sources(only, save):
    rows, failures, times = {}, [], {}
    if save:
        os.makedirs(save, exist_ok=True)
    for name, cmd in SOURCES:
        if only and name not in only:
            continue
        print(f"==> bench-check {name}: {' '.join(cmd)}", file=sys.stderr, flush=True)
        t0 = time.monotonic()
        p = subprocess.run(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        times[name] = time.monotonic() - t0
        got = parse_rows(p.stdout, name)
        if save:
            with open(os.path.join(save, f"{name}.jsonl"), "w") as f:
                f.writelines(json.dumps(r) + "\n" for r in got.values())
        if p.returncode != 0 or not got:
            failures.append(
                f"{name}: exit {p.returncode}, {len(got)} rows\n{p.stderr[-3000:]}"
            )
        rows.update(got)
        print(f"    {len(got)} rows in {times[name]:.0f} s", file=sys.stderr, flush=True)
    return rows, failures, times


def read_saved(paths):
    """Rows from saved files (each named <source>.jsonl); a row found in several files gets the
    median of their ratios and ns, and `runs`, every ratio seen."""
    seen = {}
    for path in paths:
        with open(path) as f:
            for name, r in parse_rows(f.read(), os.path.basename(path).split(".")[0]).items():
                seen.setdefault(name, []).append(r)
    rows = {}
    for name, rs in seen.items():
        r = dict(rs[-1])
        if len(rs) > 1:
            r["ratio"] = round(statistics.median(x["ratio"] for x in rs), 6)
            r["ns"] = round(statistics.median(x["ns"] for x in rs), 4)
            r["reference_ns"] = round(statistics.median(x["reference_ns"] for x in rs), 4)
            r["runs"] = [x["ratio"] for x in rs]
        rows[name] = r
    return rows


def own_tolerance(runs, median, default):
    """A row's tolerance from its runs' spread: twice the largest distance of a run's ratio from
    their median, rounded up to 5%; None where that is within the default."""
    spread = max(abs(x / median - 1) for x in runs)
    tol = math.ceil(2 * spread * 20 - 1e-9) / 20
    return tol if tol > default else None


def compare(rows, baseline, only):
    base_rows = baseline.get("rows", {})
    default_tol = baseline.get("tolerance", DEFAULT_TOLERANCE)
    table, worse = [], []
    names = sorted(set(rows) | set(base_rows))
    for name in names:
        b = base_rows.get(name)
        r = rows.get(name)
        source = (r or b or {}).get("source", "")
        if only and source not in only:
            continue
        if r is None:
            table.append((name, f"{b['ratio']:.3f}", "-", "-", "MISSING: no such row in this run"))
            worse.append(name)
            continue
        if b is None:
            table.append((name, "-", f"{r['ratio']:.3f}", "-", "new (not in the baseline)"))
            continue
        tol = b.get("tolerance", default_tol)
        change = r["ratio"] / b["ratio"] - 1
        verdict = "ok"
        if change > tol:
            verdict = f"WORSE (over +{tol:.0%})"
            worse.append(name)
        elif change < -tol:
            verdict = "better (update the baseline on purpose to keep it)"
        table.append((name, f"{b['ratio']:.3f}", f"{r['ratio']:.3f}", f"{change:+.1%}", verdict))
    return table, worse


def print_table(table, rows):
    print("| row | reference | baseline ratio | this run | change | verdict |")
    print("|---|---|---:|---:|---:|---|")
    for name, b, r, change, verdict in table:
        ref = rows.get(name, {}).get("reference", "")
        print(f"| {name} | {ref} | {b} | {r} | {change} | {verdict} |")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--update", action="store_true", help="rewrite the baseline from this run")
    ap.add_argument("--only", default="", help="comma-separated sources (rust,c,go,...)")
    ap.add_argument("--rows", nargs="*", help="read rows from these files instead of running")
    ap.add_argument("--save", default="", help="write each source's rows to DIR/<source>.jsonl")
    args = ap.parse_args()
    only = [s for s in args.only.split(",") if s]
    t0 = time.monotonic()
    if args.rows:
        failures, times = [], {}
        rows = read_saved(args.rows)
    else:
        rows, failures, times = run_sources(only, args.save)
    try:
        with open(BASELINE) as f:
            baseline = json.load(f)
    except FileNotFoundError:
        baseline = {"rows": {}}
    if args.update:
        if failures:
            print("\n".join(failures), file=sys.stderr)
            print("bench-check: a source failed: the baseline is left as it was", file=sys.stderr)
            return 1
        kept = {} if not only else {
            k: v for k, v in baseline.get("rows", {}).items() if v.get("source") not in only
        }
        for name, r in rows.items():
            entry = {k: r[k] for k in ("ratio", "ns", "reference", "reference_ns", "source")}
            old = baseline.get("rows", {}).get(name, {})
            default_tol = baseline.get("tolerance", DEFAULT_TOLERANCE)
            if "runs" in r:
                entry["runs"] = r["runs"]
                tol = own_tolerance(r["runs"], r["ratio"], default_tol)
                if tol is not None:
                    entry["tolerance"] = tol
            elif "tolerance" in old:
                entry["tolerance"] = old["tolerance"]
            kept[name] = entry
        new = {
            **({"notes": baseline["notes"]} if "notes" in baseline else {}),
            "machine": machine(),
            "date": datetime.date.today().isoformat(),
            "tolerance": baseline.get("tolerance", DEFAULT_TOLERANCE),
            "rows": dict(sorted(kept.items())),
        }
        with open(BASELINE, "w") as f:
            json.dump(new, f, indent=2)
            f.write("\n")
        print(f"bench-check: wrote {len(kept)} rows to {os.path.relpath(BASELINE, ROOT)}")
        return 0
    table, worse = compare(rows, baseline, only)
    print(f"bench-check: this machine: {machine()}; baseline: {baseline.get('machine', '?')}, "
          f"{baseline.get('date', '?')}; tolerance +{baseline.get('tolerance', DEFAULT_TOLERANCE):.0%} "
          f"unless a row says otherwise; {time.monotonic() - t0:.0f} s "
          + ", ".join(f"{k} {v:.0f} s" for k, v in times.items()))
    print_table(table, rows)
    for f in failures:
        print(f"\nbench-check: a source failed: {f}", file=sys.stderr)
    if worse or failures:
        print(f"\nbench-check: FAILED: {len(worse)} row(s) worse than the baseline"
              + (f", {len(failures)} source(s) failed" if failures else ""))
        return 1
    print("\nbench-check: every ratio within its tolerance of the baseline")
    return 0


if __name__ == "__main__":
    sys.exit(main())
