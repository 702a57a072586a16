#!/usr/bin/env python3
"""Fail unless every scenario runner ran every scenario file (see scenarios/README.md, Coverage).

Usage: check_coverage.py COVERAGE_DIR

Each runner writes COVERAGE_DIR/<lang>.txt, one line per scenario file it ran and passed:
`<name> ok` or `<name> not-applicable: <reason>`. A language file missing, a scenario missing
from it, a line for no scenario, or a `not-applicable` that the file's `needs` does not allow
for that language: all fail, each named.
"""

import json
import pathlib
import sys

LANGS = ["rust", "c-shared", "c-static", "cpp-shared", "cpp-static", "go", "python", "node", "java"]
# needs entry -> the languages that may record a file with it as not-applicable.
MAY_SKIP = {
    "fork": {"go", "node", "java"},
}

SCENARIOS = pathlib.Path(__file__).resolve().parent / "scenarios"


def main(argv):
    if len(argv) != 2:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    out = pathlib.Path(argv[1])
    needs = {}
    for path in sorted(SCENARIOS.glob("*.json")):
        with path.open(encoding="utf-8") as f:
            doc = json.load(f)
        for n in doc.get("needs", []):
            if n not in MAY_SKIP:
                print(f"{path.name}: unknown needs entry {n!r}", file=sys.stderr)
                return 1
        needs[path.stem] = set(doc.get("needs", []))
    problems = []
    for lang in LANGS:
        cov = out / f"{lang}.txt"
        if not cov.is_file():
            problems.append(f"{lang}: no coverage file {cov} (did its scenario runner run?)")
            continue
        seen = {}
        for line in cov.read_text(encoding="utf-8").splitlines():
            if not line.strip():
                continue
            name, _, status = line.partition(" ")
            if name in seen:
                problems.append(f"{lang}: {name} listed twice")
            seen[name] = status
        for name in sorted(needs):
            status = seen.get(name)
            if status is None:
                problems.append(f"{lang}: scenario {name}.json not run")
            elif status.startswith("not-applicable:"):
                if not any(lang in MAY_SKIP[n] for n in needs[name]):
                    problems.append(f"{lang}: {name}.json may not be skipped ({status})")
            elif status != "ok":
                problems.append(f"{lang}: {name}.json: {status}")
        for name in sorted(set(seen) - set(needs)):
            problems.append(f"{lang}: {name} is not a scenario file")
    for p in problems:
        print(f"scenario coverage: {p}", file=sys.stderr)
    if problems:
        return 1
    skipped = sum(
        1
        for lang in LANGS
        for line in (out / f"{lang}.txt").read_text(encoding="utf-8").splitlines()
        if "not-applicable" in line
    )
    print(
        f"scenario coverage: {len(needs)} files x {len(LANGS)} runners, "
        f"{skipped} not-applicable (allowed by needs)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
