#!/usr/bin/env python3
"""Go per-call benchmark rounds, interleaved, with medians and ratios to bwmarrin/snowflake and
time.Now(); then the CPU cost of a strict loop at the default layout's ceiling.

Runs every benchmark of the tests/go benchmark binary (bench_test.go) once per round
(`-test.bench . -test.count 1`) for ROUNDS rounds, so machine load falls on every candidate alike,
and prints each benchmark's median and best ns/op with its ratio to time.Now() and to bwmarrin's
Generate() on the same setup (the wide one, 41/1/21, for the uncapped rows; its default for the
capped ones). Then the binary's ceiling mode (`-ceiling 1s`): CPU-s per wall-s of a strict loop at
4,096,000 IDs/s, polyflake's NextID beside bwmarrin's Generate.

Usage: bench.py [ROUNDS] [BENCHTIME] [BINARY]
  (defaults 5, 1s; BINARY: `go test -c` of tests/go, built here into a temporary directory when
  not given, from tests/go with PKG_CONFIG_PATH set; make bench-go gives it)
"""

import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 5
benchtime = sys.argv[2] if len(sys.argv) > 2 else "1s"
line = re.compile(r"^Benchmark(\S+?)(?:-\d+)?\s+\d+\s+([\d.]+) ns/op")


def run(binary: Path) -> None:
    runs: dict[str, list[float]] = {}
    for r in range(rounds):
        out = subprocess.run(
            [str(binary), "-test.run", "^$", "-test.bench", ".", "-test.benchtime", benchtime,
             "-test.count", "1"],
            check=True, capture_output=True, text=True,
        ).stdout
        for text in out.splitlines():
            m = line.match(text)
            if m:
                runs.setdefault(m.group(1), []).append(float(m.group(2)))
        print(f"round {r + 1}/{rounds} done", file=sys.stderr)

    med = {name: statistics.median(v) for name, v in runs.items()}
    print(f"{'benchmark':40} {'median ns':>10} {'best ns':>9}  {'vs time.Now':>11}  vs bwmarrin (median)")
    for name, v in runs.items():
        capped = "StrictDefault" in name or name == "BwmarrinGenerate"
        ref = "BwmarrinGenerate" if capped else "BwmarrinGenerateWide"
        ratio = med[name] / med[ref] if ref in med else float("nan")
        now = med[name] / med["TimeNow"] if "TimeNow" in med else float("nan")
        print(f"{name:40} {med[name]:10.2f} {min(v):9.2f}  {now:10.2f}x  {ratio:.2f}x {ref}")
    print()
    subprocess.run([str(binary), "-ceiling", "1s", "-ceiling.rounds", "3"], check=True)


if len(sys.argv) > 3:
    run(Path(sys.argv[3]))
else:
    with tempfile.TemporaryDirectory() as tmp:
        binary = Path(tmp) / "bench.test"
        subprocess.run(["go", "test", "-c", "-o", str(binary), "."], check=True)
        run(binary)
