#!/usr/bin/env python3
"""Pictures of a fleet simulation: reads the simulator's results.json, writes PNGs beside it.

- leap.png: fleet availability and the lead of IDs over the wall clock, in 10 ms bins from 2 s
  before to 4 s after the leap second: stepped, smeared and mixed fleets, strict and monotonic.
- blue-green.png: lease slots held and fleet availability through the blue-green deploy, on
  41/10/12 (1,024 node ids) and 41/12/10 (4,096).
- availability.png: fleet availability over each whole run, every scenario, both modes.

Usage: plot.py RESULTS_JSON
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

COLORS = {"leap-step": "tab:red", "leap-smear": "tab:green", "leap-mixed": "tab:orange"}


def find(runs: list[dict], scenario: str, mode: str) -> dict | None:
    for r in runs:
        if r["scenario"] == scenario and r["mode"] == mode:
            return r
    return None


def leap_png(runs: list[dict], out: Path) -> bool:
    have = [r for r in runs if r.get("leap_series") and r["scenario"] in COLORS]
    if not have:
        return False
    fig, (a1, a2) = plt.subplots(2, 1, figsize=(10, 7), sharex=True)
    for scenario, color in COLORS.items():
        for mode, style in (("strict", "-"), ("monotonic", "--")):
            r = find(runs, scenario, mode)
            if not r:
                continue
            s = r["leap_series"]
            label = f"{scenario.removeprefix('leap-')}, {mode}"
            a1.plot(s["t"], [100 * a for a in s["availability"]], style, color=color,
                    label=label, linewidth=1.4, drawstyle="steps-post")
            a2.plot(s["t"], s["lead_max"], style, color=color, label=label, linewidth=1.4,
                    drawstyle="steps-post")
    nodes = have[0]["nodes"]
    a1.set_ylabel("fleet availability, % of nodes")
    a1.set_ylim(-3, 103)
    a1.set_title(f"Through the leap second: {nodes:,} nodes, 10 ms bins "
                 "(strict solid, monotonic dashed)", fontsize=11)
    a1.legend(fontsize=8, loc="lower right", ncol=2)
    a2.set_ylabel("largest lead of an ID over\nits node's wall clock, ms")
    a2.set_xlabel("ms from midnight (the leap second)")
    a2.legend(fontsize=8, loc="upper right", ncol=2)
    for a in (a1, a2):
        a.grid(alpha=0.3)
        a.axvline(0, color="gray", linewidth=0.8)
    fig.tight_layout()
    fig.savefig(out / "leap.png", dpi=90)
    plt.close(fig)
    return True


def blue_green_png(runs: list[dict], out: Path) -> bool:
    cases = [(n, find(runs, n, "strict") or find(runs, n, "monotonic"))
             for n in ("blue-green", "blue-green-4096")]
    cases = [(n, r) for n, r in cases if r]
    if not cases:
        return False
    fig, axes = plt.subplots(2, len(cases), figsize=(6 * len(cases), 6.5), sharex=True,
                             squeeze=False)
    for col, (name, r) in enumerate(cases):
        s = r["series"]
        minutes = [t / 60 for t in s["t"]]
        a1, a2 = axes[0][col], axes[1][col]
        a1.plot(minutes, s["slots"], color="tab:blue", label="slots held", drawstyle="steps-post")
        a1.plot(minutes, s["nodes"], color="tab:gray", linestyle=":", label="instances running")
        a1.axhline(r["node_ids"], color="tab:red", linestyle="--", linewidth=1,
                   label=f"node ids in {r['layout']}: {r['node_ids']:,}")
        a1.set_ylim(0, max(r["node_ids"], 2 * r["nodes"]) * 1.1)
        a1.set_title(f"{name} ({r['layout']}), {r['nodes']:,} nodes per colour", fontsize=10)
        a1.set_ylabel("lease slots")
        a1.legend(fontsize=8, loc="upper left")
        a2.plot(minutes, [100 * a for a in s["availability"]], color="tab:green",
                drawstyle="steps-post", label="instances able to issue")
        served = []
        for k in range(len(s["t"])):
            total = s["ids"][k] + s["refused"][k] + s["unserved"][k]
            served.append(100 * s["ids"][k] / total if total else 100)
        a2.plot(minutes, served, color="tab:purple", linestyle="--", drawstyle="steps-post",
                label="requests served")
        a2.set_ylim(-3, 103)
        a2.set_ylabel("%")
        a2.set_xlabel("minutes (green starts at 1/6, traffic moves at 1/4, blue stops at 1/3)")
        a2.legend(fontsize=8, loc="lower left")
        for a in (a1, a2):
            a.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(out / "blue-green.png", dpi=90)
    plt.close(fig)
    return True


def availability_png(runs: list[dict], out: Path) -> bool:
    names = []
    for r in runs:
        if r["scenario"] not in names:
            names.append(r["scenario"])
    if not names:
        return False
    cols = 2
    rows = (len(names) + 1) // 2
    fig, axes = plt.subplots(rows, cols, figsize=(12, 2.3 * rows), squeeze=False)
    for k, name in enumerate(names):
        a = axes[k // cols][k % cols]
        for mode, style, color in (("strict", "-", "tab:red"), ("monotonic", "--", "tab:blue")):
            r = find(runs, name, mode)
            if not r:
                continue
            s = r["series"]
            hours = [t / 3600 for t in s["t"]]
            a.plot(hours, [100 * x for x in s["availability"]], style, color=color,
                   label=mode, linewidth=1, drawstyle="steps-post")
        a.set_title(name, fontsize=9)
        a.set_ylim(min(90, a.get_ylim()[0]), 100.5)
        a.grid(alpha=0.3)
        a.tick_params(labelsize=8)
        a.legend(fontsize=7, loc="lower left")
    for k in range(len(names), rows * cols):
        axes[k // cols][k % cols].axis("off")
    fig.suptitle("Fleet availability (% of node-time able to issue), per run bin; x: hours",
                 fontsize=10)
    fig.tight_layout()
    fig.savefig(out / "availability.png", dpi=80)
    plt.close(fig)
    return True


def main() -> int:
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    path = Path(sys.argv[1])
    data = json.loads(path.read_text())
    runs = data["runs"]
    out = path.parent
    wrote = []
    for name, fn in (("leap.png", leap_png), ("blue-green.png", blue_green_png),
                     ("availability.png", availability_png)):
        if fn(runs, out):
            wrote.append(str(out / name))
    print("wrote " + (", ".join(wrote) if wrote else "no picture (no scenario to draw)"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
