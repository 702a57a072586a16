#!/usr/bin/env python3
"""Facts the docs state about the code, checked against the code.

Some figures are written once in the code and restated in prose in many places: the guides, the
module docs, the C header, the Go docs, the stubs, the Makefile's headers. This reads each
figure from the line of code that defines it (no build: the source is parsed) and finds every
statement of it:

- the lease record's size: `RECORD_LEN` in core/src/lease/record.rs (a slot file's record, and a
  fixed node id's mark, which has the same length), and `RECORD_LEN_V0`, the previous version's.
  A statement is a figure in bytes (`512 bytes`, `one 256-byte pwrite`) whose paragraph or
  comment block names a record, a slot file, a mark or a `pwrite` just before it (or a record
  just after it). It is the previous version's when a word such as "previous", "older" or "v0"
  is nearer before it than the figure's own subject;
- the default reserve: `DEFAULT_RESERVE_MS` in core/src/lease/options.rs. A statement is a
  figure after "default" (or before "by default") in a sentence about the reserve, a figure in
  "one reserve (5 s)", or a keyword default `reserve_ms=5000` in a signature or stub;
- the name of a fixed node id's mark: the `node-...` format in core/src/lease/host/mark.rs and
  the slot number's padding in core/src/lease/record.rs. A statement is an example name
  (`node-41-10-12-0037`, `node-41-10-12-0037-billing`: the three fields of a 63-bit layout and
  a node id as the code pads it) or the pattern (`node-<T>-<N>-<S>-<NNNN>`).

Exit status 1, with file:line and what the code says, for every statement that differs, or
when a fact is stated nowhere (the patterns lost track of the docs). Python's standard library
only.

    python3 tests/docs/check_facts.py [--root DIR] [--verbose] [FILE...]
"""

import argparse
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from prose import NUMBER, ROOT, blocks, judge, source_files, to_ms  # noqa: E402

# Where the facts are restated (globs relative to the root). Tests are left out: a test may
# write an old or a wrong record on purpose.
SOURCES = [
    "README.md",
    "docs/*.md",
    "ffi-c/sdk/README-C.md",
    "include/polyflake.h",
    "include/polyflake.hpp",
    "go/*.go",
    "python/polyflake/*.pyi",
    "python/src/*.rs",
    "node/index.d.ts",
    "node/types.d.ts",
    "node/src/*.rs",
    "java/src/main/java/dev/polyflake/*.java",
    "java/src/*.rs",
    "ffi-c/src/*.rs",
    "service/src/*.rs",
    "cli/src/*.rs",
    "core/src/*.rs",
    "core/src/*/*.rs",
    "core/src/*/*/*.rs",
    "Makefile",
    ".build/mk/*.mk",
]
SKIP = re.compile(r"(_test\.go|/tests?/)")


# ---------------------------------------------------------------------------------------------
# The code's figures.


def read(root, rel):
    with open(os.path.join(root, rel), encoding="utf-8") as f:
        return f.read()


def const(text, name, rel):
    """The integer value of `const NAME: T = VALUE;` in Rust source."""
    m = re.search(r"\bconst\s+" + name + r"\s*:\s*\w+\s*=\s*([\d_]+)\s*;", text)
    if not m:
        raise SystemExit(f"check_facts: no `const {name}` in {rel}: the checker lost track")
    return int(m.group(1).replace("_", ""))


def code_facts(root):
    record = read(root, "core/src/lease/record.rs")
    options = read(root, "core/src/lease/options.rs")
    mark = read(root, "core/src/lease/host/mark.rs")
    m = re.search(r'format!\(\s*"(node(?:-\{\}){4})"', mark)
    if not m:
        raise SystemExit("check_facts: no `node-{}-{}-{}-{}` format in mark.rs: lost track")
    pad = re.search(r'fn slot_name\([^)]*\)[^{]*\{\s*format!\("\{slot:0(\d+)\}"\)', record)
    if not pad:
        raise SystemExit("check_facts: no slot_name format in record.rs: lost track")
    return {
        "record_len": const(record, "RECORD_LEN", "core/src/lease/record.rs"),
        "record_len_v0": const(record, "RECORD_LEN_V0", "core/src/lease/record.rs"),
        "reserve_ms": const(options, "DEFAULT_RESERVE_MS", "core/src/lease/options.rs"),
        "mark_fields": m.group(1).count("{}"),
        "slot_digits": int(pad.group(1)),
    }


def figure(text):
    return float(text.replace(",", "").replace("_", ""))


# ---------------------------------------------------------------------------------------------
# The lease record's size.

BYTES = re.compile(r"\b(" + NUMBER + r")(?:-byte\b|\s+bytes\b)", re.I)
# What a record-size statement is about, before the figure (nearest wins) ...
SUBJECT = re.compile(r"\brecords?\b|\bslot files?\b|\bpwrite\b|\bmarks?\b", re.I)
# ... and the words that make it the previous version's.
PREVIOUS = re.compile(r"\bprevious\b|\bolder\b|\bold\b|\bearlier\b|\bv0\b|\bRECORD_LEN_V0\b", re.I)
# After the figure (`256 bytes of the record`, `a 512-byte record`).
SUBJECT_AFTER = re.compile(r"^[^.;]{0,25}?\b(record|pwrite)\b", re.I)


def record_statements(block):
    text = block.text
    for m in BYTES.finditer(text):
        before = text[max(0, m.start() - 100): m.start()]
        subjects = list(SUBJECT.finditer(before))
        after = SUBJECT_AFTER.search(text[m.end(): m.end() + 40])
        if not subjects and not after:
            continue
        subject_at = subjects[-1].start() if subjects else -1
        previous = [p for p in PREVIOUS.finditer(before) if p.start() > subject_at - 40]
        # The nearest qualifier after the last "current" word decides the version.
        current = list(re.finditer(r"\bcurrent\b|\bnow\b|\bnew\b", before, re.I))
        old = bool(previous) and (not current or previous[-1].start() > current[-1].start())
        which = "record_len_v0" if old else "record_len"
        snippet = text[max(0, m.start() - 50): m.end() + 10]
        yield block.line_at(m.start()), which, figure(m.group(1)), snippet


# ---------------------------------------------------------------------------------------------
# The default reserve.

UNIT = r"(?:\s*(ms|milliseconds?|s|seconds?)\b)?"
RESERVE = r"(?:\breserve(?:[_ ]?ms)?\b|\breserveMs\b|--lease-reserve-ms)"
# "reserve ... default 5 s", "reserve (default 5,000)", in one sentence.
RESERVE_DEFAULT = re.compile(
    RESERVE + r"[^.;!?]{0,50}?\bdefault\b(?:\s+(?:is|of))?[\s:=`'\"(]*(" + NUMBER + r")" + UNIT,
    re.I,
)
# "reserve (`--lease-reserve-ms`, 5 s by default)".
RESERVE_BY_DEFAULT = re.compile(
    RESERVE + r"[^.;!?]{0,50}?(" + NUMBER + r")" + UNIT + r"\s+by default\b", re.I
)
# "one reserve (5 s)", "one reserve (`DEFAULT_RESERVE_MS`, 5 s)", "one reserve, 5 s,".
ONE_RESERVE = re.compile(
    r"\bone reserve\b\s*(?:\((?:[^()]*?,\s*)?|,\s*)(" + NUMBER + r")" + UNIT + r"\s*[,)]", re.I
)
# A keyword default in a stub or a text signature: `reserve_ms=5000`, `reserve_ms: int = 5000`.
SIGNATURE = re.compile(r"\breserve_ms\s*(?::\s*[\w\[\], |.]+?)?\s*=\s*(" + NUMBER + r")\b")


# A figure that is another setting's (the fence's margin: "60 s plus the reserve").
OTHER = re.compile(r"\b(margin|skew|fence|ttl|timeout)\b", re.I)
SUM = re.compile(r"^[^.;]{0,20}?\b(plus|of skew)\b", re.I)


def reserve_statements(path, block):
    text = block.text
    for pattern in (RESERVE_DEFAULT, RESERVE_BY_DEFAULT, ONE_RESERVE):
        for m in pattern.finditer(text):
            between = text[m.start(): m.start(1)]
            if OTHER.search(between) or SUM.search(text[m.end(1): m.end(1) + 40]):
                continue
            value = to_ms(m.group(1), m.group(2))
            snippet = text[max(0, m.start() - 20): m.end() + 10]
            yield block.line_at(m.start(1)), "reserve_ms", value, snippet
    # Keyword defaults only where they are the signature's (a stub, a text signature, a keyword-
    # only parameter list), never a call in an example that passes its own reserve.
    if path.endswith(".pyi") or "text_signature" in text or '"($cls' in text or "*," in text:
        for m in SIGNATURE.finditer(text):
            snippet = text[max(0, m.start() - 20): m.end()]
            yield block.line_at(m.start()), "reserve_ms", figure(m.group(1)), snippet


# ---------------------------------------------------------------------------------------------
# The mark's name.

MARK_EXAMPLE = re.compile(r"\bnode((?:-\d+)+)(?:-([A-Za-z][\w.-]*))?")
MARK_PATTERN = re.compile(r"\bnode-<[^`\s]*")


def mark_statements(block):
    text = block.text
    for m in MARK_EXAMPLE.finditer(text):
        fields = m.group(1).strip("-").split("-")
        yield block.line_at(m.start()), "mark_name", fields, m.group(0)
    for m in MARK_PATTERN.finditer(text):
        yield block.line_at(m.start()), "mark_pattern", m.group(0), m.group(0)


def mark_problem(kind, value, facts):
    n, digits = facts["mark_fields"], facts["slot_digits"]
    if kind == "mark_pattern":
        base = "node" + "".join("-<" + f + ">" for f in ("T", "N", "S", "N" * digits))
        allowed = (base, base + "[-<scope>]", base + "-<scope>")
        shown = value.rstrip(".,;:)`'\"")
        if shown not in allowed:
            return f"the code's name is {base} (and -<scope> in a scope)"
        return None
    if len(value) != n:
        return f"a mark's name has {n} numbers (T, N, S, the node id)"
    t, nb, s, node = value
    if int(t) + int(nb) + int(s) != 63:
        return f"{t}/{nb}/{s} is not a layout (63 bits)"
    if len(node) < digits or (len(node) > digits and node.startswith("0")):
        return (f"the node id is written with at least {digits} digits, zero-padded: "
                f"{int(node):0{digits}d}")
    return None


# ---------------------------------------------------------------------------------------------


def statements(path, text):
    """(line, fact, stated value, snippet) of each statement of a checked fact."""
    for b in blocks(path, text):
        yield from record_statements(b)
        yield from reserve_statements(path, b)
        yield from mark_statements(b)


def problem(fact, value, facts):
    """None when the statement agrees with the code, else what the code says."""
    if fact in ("mark_name", "mark_pattern"):
        return mark_problem(fact, value, facts)
    want = facts[fact]
    if abs(value - want) < 1e-9:
        return None
    names = {
        "record_len": "RECORD_LEN (core/src/lease/record.rs)",
        "record_len_v0": "RECORD_LEN_V0, the previous version's (core/src/lease/record.rs)",
        "reserve_ms": "DEFAULT_RESERVE_MS in ms (core/src/lease/options.rs)",
    }
    return f"{names[fact]} is {want}"


FACTS = ("record_len", "record_len_v0", "reserve_ms", "mark_name", "mark_pattern")


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--root", default=ROOT, help="the repository whose code and docs to read")
    ap.add_argument("--verbose", action="store_true", help="list every statement found")
    ap.add_argument("files", nargs="*", help="files to check (default: every source listed)")
    args = ap.parse_args(argv)
    facts = code_facts(args.root)
    files = args.files or source_files(args.root, SOURCES, SKIP)
    checked, bad, seen = judge(args.root, files, statements,
                               lambda fact, value: problem(fact, value, facts), args.verbose,
                               "stated as")
    if not args.files:
        for fact in FACTS:
            if fact not in seen:
                print(f"BAD no statement of {fact} found: check_facts.py lost track of the docs")
                bad += 1
    print(f"check_facts: {checked} statements of a fact the code defines, {bad} wrong")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
