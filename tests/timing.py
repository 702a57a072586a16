#!/usr/bin/env python3
"""The wall time of each target of one `make test`, from the timing log its recipes stamp.

Every recipe opens with `$(call say,...)`, which (under `make test`) appends "EPOCH TARGET" to
the log; make runs one recipe at a time, so a target's time is from its first stamp to the next
target's. Usage: timing.py LOG [OUT.md]. Prints the table (slowest first) and writes it as
Markdown to OUT.md when given.
"""
import sys


def spans(path):
    marks = []
    with open(path) as f:
        for line in f:
            t, _, name = line.strip().partition(" ")
            if t:
                marks.append((float(t), name))
    total = {}
    order = []
    for (t0, name), (t1, _) in zip(marks, marks[1:]):
        if name in ("(start)", "(end)"):
            name = "(make itself)"
        if name not in total:
            order.append(name)
            total[name] = 0.0
        total[name] += t1 - t0
    wall = marks[-1][0] - marks[0][0] if len(marks) > 1 else 0.0
    return order, total, wall


def main():
    order, total, wall = spans(sys.argv[1])
    rows = sorted(order, key=lambda n: -total[n])
    width = max([len(n) for n in rows] + [6])
    lines = [f"| {'target':<{width}} | wall (s) | share |", f"|{'-' * (width + 2)}|---------:|------:|"]
    for n in rows:
        share = 100.0 * total[n] / wall if wall else 0.0
        lines.append(f"| {n:<{width}} | {total[n]:8.1f} | {share:4.1f}% |")
    lines.append(f"| {'total':<{width}} | {wall:8.1f} | {f'{wall / 60:.1f} min':>5} |")
    text = "\n".join(lines)
    print("\n==> make test: wall time per target (in the order of cost)")
    print(text)
    if len(sys.argv) > 2:
        with open(sys.argv[2], "w") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    main()
