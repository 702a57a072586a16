#!/usr/bin/env python3
"""The wall time of each target of one `make test`, from the timing log.

Under `make test` every recipe line runs through the timed shell of .build/mk/build.sh, which appends
"START END TARGET" for it; a target's time is the sum of its lines (a line that runs a sub-make
is left to the sub-make's own lines). "(start)" and "(end)" mark the run itself. Targets may run
side by side (the test phase runs several at a time), so their times can add up to more than the
run's wall time, which the last row gives. Usage: timing.py LOG [OUT.md]: prints the table
(slowest first) and writes it as Markdown to OUT.md when given.
"""
import sys


def read(path):
    total, order, marks = {}, [], {}
    with open(path) as f:
        for line in f:
            parts = line.split(maxsplit=2)
            if len(parts) == 2 and parts[1] in ("(start)", "(end)"):
                marks[parts[1]] = float(parts[0])
                continue
            if len(parts) != 3:
                continue
            start, end, target = float(parts[0]), float(parts[1]), parts[2].strip()
            if target not in total:
                order.append(target)
                total[target] = 0.0
            total[target] += end - start
    wall = marks.get("(end)", 0.0) - marks.get("(start)", 0.0) if "(end)" in marks else None
    return order, total, wall


def main():
    order, total, wall = read(sys.argv[1])
    rows = sorted(order, key=lambda n: -total[n])
    width = max([len(n) for n in rows] + [24])
    lines = [f"| {'target':<{width}} | wall (s) |", f"|{'-' * (width + 2)}|---------:|"]
    for n in rows:
        lines.append(f"| {n:<{width}} | {total[n]:8.1f} |")
    summed = sum(total.values())
    lines.append(f"| {'sum of the targets':<{width}} | {summed:8.1f} |")
    if wall is not None:
        lines.append(f"| {'make test, wall clock':<{width}} | {wall:8.1f} |")
    text = "\n".join(lines)
    print("\n==> make test: wall time per target (in the order of cost; the test phase runs several at a time)")
    print(text)
    if wall is not None:
        print(f"make test took {wall / 60:.1f} min")
    if len(sys.argv) > 2:
        with open(sys.argv[2], "w") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    main()
