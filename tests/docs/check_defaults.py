#!/usr/bin/env python3
"""Every statement of a shared generator setting's default, checked against the core.

The defaults of the settings every generator shares (mode, wait budget, lead limit, forward-step
bound and its confirmation, clock source) are written once, in the core's `Settings::default()`
(core/src/settings.rs). The docs, the C header, the Go docs, the Python stubs and signatures and
the Node type declarations restate them in prose; this finds each such statement and compares
its figure with the core's, which `cargo run -p polyflake --example settings_defaults` prints
as JSON (or pass that JSON's file with --defaults).

A statement is a figure after the word "default" (`default 5.0`, `(default 60,000)`,
`[default: 5]`, `default 60 s`), a value before "(the default)" / "(default)", or a keyword
default in a signature (`max_wait_ms=5.0`, `max_wait_ms: float = 5.0`), that belongs to the
nearest setting named before it in the same paragraph or comment block (`max_wait_ms`,
`maxWaitMs`, `WithMaxWaitMs`, `--max-wait-ms`, "wait budget", ...). A figure nearer to another
setting's name (the epoch, a lease's reserve) is not one of these and is left alone.

Exit status 1, with file:line and what the core says, for every figure that differs.
Python's standard library only.

    python3 tests/docs/check_defaults.py [--defaults FILE] [--root DIR] [FILE...]
"""

import argparse
import json
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from prose import NUMBER, ROOT, blocks, judge, source_files, to_ms  # noqa: E402

# Where the defaults are restated (globs relative to the root).
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
    "ffi-c/src/*.rs",
    "service/src/*.rs",
    "cli/src/*.rs",
    "core/src/*.rs",
    "core/src/generator/*.rs",
    "tests/vectors/scenarios/README.md",
]

# Each shared setting's names, in every spelling the bindings use. Matched case-insensitively
# with word boundaries; `_`, `-` and nothing are the same.
SETTINGS = {
    "max_wait_ms": [r"max[_-]?wait[_-]?ms", r"withmaxwaitms", r"max[_-]wait\b", r"wait budget"],
    "max_lead_ms": [
        r"max[_-]?lead[_-]?ms",
        r"withmaxleadms",
        r"lead limit",
        r"(limit on )?running ahead of the wall clock",
        r"generator may run ahead of the wall clock",
    ],
    "max_forward_step_ms": [
        r"max[_-]?forward[_-]?step[_-]?ms",
        r"withmaxforwardstepms",
        r"forward[- ]step bound",
        r"forward step\b",
    ],
    "forward_confirm_ms": [
        r"forward[_-]?confirm[_-]?ms",
        r"withforwardconfirmms",
        r"stepped[- ]ahead clock must hold",
    ],
    # "mode" as the setting, not "strict mode" / "monotonic mode's ..." (the modes themselves).
    "mode": [
        r"(?<!strict )(?<!monotonic )\bmode\b(?!'s)",
        r"withmode",
        r"\A\s*monotonic mode:",  # the CLI's --monotonic flag ("Default: strict")
    ],
    "clock_source": [r"clock[_-]?source", r"withclocksource", r"--clock\b"],
    "max_clock_error_ms": [r"max[_-]?clock[_-]?error[_-]?ms", r"withmaxclockerrorms"],
}

# Values that belong to one setting whatever is named near them.
SELF_NAMED = {
    "strict": "mode", "monotonic": "mode", "precise": "clock_source", "coarse": "clock_source",
}

# How a binding spells "left to the core's default" where that is not the figure itself:
# Python's `clock_source=None` is the clock's precise reading.
UNSET = {"clock_source": {"none"}}

# Other settings' names: a default nearer to one of these is that setting's, not ours.
OTHERS = [
    r"epoch", r"layout", r"reserve", r"guard[_-]?wait", r"slots", r"ttl", r"prefix",
    r"timeout", r"node[_-]?id", r"identity", r"session", r"fence[_-]?skew", r"dir\b",
    r"endpoints?", r"ensemble", r"format", r"count", r"port", r"listen", r"batch",
    r"max[_-]?guard", r"guard", r"skew", r"workers?", r"threads?", r"interval",
    r"max[_-]?ids", r"retries", r"bits", r"host", r"tick",
]

UNIT = r"(?:\s*(?P<unit>ms|milliseconds?|s|seconds?|min|minutes?)\b)?"
WORD_VALUES = {
    "strict", "monotonic", "precise", "coarse", "unbounded", "none", "null", "nil", "off", "no",
}
NONE_WORDS = {"unbounded", "none", "null", "nil", "off", "no"}

# A figure after "default": `default 5.0`, `(default 60,000)`, `[default: 5]`, `default 60 s`.
AFTER_DEFAULT = re.compile(
    r"\bdefaults?\b(?:\s+(?:is|of|to|value|being|here))*[\s:=`'\"(\[]*"
    r"(?:(?P<num>" + NUMBER + r")" + UNIT + r"|(?P<word>[a-z]+)\b)",
    re.I,
)
# A value before "(the default)", "(default)", ", the default" or "by default".
BEFORE_DEFAULT = re.compile(
    r"[`'\"]?(?:(?P<num>" + NUMBER + r")" + UNIT + r"|(?P<word>[a-z]+))[`'\"]?\s*"
    r"(?:\((?:the\s+)?default\)|,\s*the\s+default\b|by\s+default\b)",
    re.I,
)
# A keyword default in a signature: `name=VALUE` or `name: type = VALUE`.
SIGNATURE = re.compile(
    r"\b(?P<name>[a-z_]+)\s*(?P<ann>:\s*[\w\[\], |.]+?)?\s*=\s*(?P<value>[-\w.'\"]+)", re.I
)

def setting_before(block, pos, window=240):
    """The setting named nearest before `pos` in `block`, or None (another setting's name is
    nearer, or none is near)."""
    lo = max(0, pos - window)
    best, best_at = None, -1
    for name, pats in SETTINGS.items():
        for pat in pats:
            for m in re.finditer(pat, block[lo:pos], re.I):
                if m.start() > best_at:
                    best, best_at = name, m.start()
    for pat in OTHERS:
        for m in re.finditer(pat, block[lo:pos], re.I):
            if m.start() > best_at:
                best, best_at = None, m.start()
    return best


def agrees(setting, value, core):
    """True when the stated `value` (a float in ms, or a word) is the core's default."""
    want = core[setting]
    if isinstance(value, str):
        v = value.lower()
        if v in UNSET.get(setting, ()):
            return True
        if want is None:
            return v in NONE_WORDS
        if isinstance(want, str):
            return v == want
        return False
    if want is None or isinstance(want, str):
        return False
    return abs(value - float(want)) < 1e-9


def stated(m):
    """The value a match states: a float in ms, a word, or None (not a stated value)."""
    if m.group("num"):
        return to_ms(m.group("num"), m.group("unit"))
    word = m.group("word").lower()
    return word if word in WORD_VALUES else None


def statements(path, text):
    """(line, setting, stated value, snippet) of each statement of a shared default."""
    found = []
    for b in blocks(path, text, empty_comment_ends=False):
        block = b.text
        for pattern in (AFTER_DEFAULT, BEFORE_DEFAULT):
            for m in pattern.finditer(block):
                setting = setting_before(block, m.start() + 1)
                value = stated(m)
                # A mode or a clock source names its setting itself ("precise (default)").
                setting = SELF_NAMED.get(str(value).lower(), setting)
                if setting is None or value is None:
                    continue
                at = m.start("num") if m.group("num") else m.start("word")
                snippet = block[max(0, m.start() - 60): m.end() + 10]
                found.append((b.line_at(at), setting, value, snippet))
        # Keyword defaults only in signatures (stubs, text signatures, a keyword-only `*,`), not
        # in examples or prose that pass a value (`max_forward_step_ms=None` turns it off).
        # (A stub's parameters are annotated: `max_wait_ms: float = 5.0`.)
        signature = "*," in block or "text_signature" in block
        for m in SIGNATURE.finditer(block):
            name = m.group("name").lower()
            if name not in SETTINGS:
                continue
            if not (signature or (path.endswith(".pyi") and m.group("ann"))):
                continue
            raw = m.group("value").strip("'\"")
            if re.fullmatch(r"[\d_]+(\.\d+)?", raw):
                value = to_ms(raw, None)
            elif raw.lower() in WORD_VALUES:
                value = raw
            else:
                continue  # an expression, a variable: not a stated figure
            snippet = block[max(0, m.start() - 20): m.end()]
            found.append((b.line_at(m.start()), name, value, snippet))
    return found


def core_defaults(root):
    out = subprocess.run(
        ["cargo", "run", "-q", "-p", "polyflake", "--example", "settings_defaults"],
        cwd=root, check=True, capture_output=True, text=True,
    ).stdout
    return json.loads(out)


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--defaults", help="the core's defaults as JSON (default: run the example)")
    ap.add_argument("--root", default=ROOT)
    ap.add_argument("--verbose", action="store_true", help="list every statement found")
    ap.add_argument("files", nargs="*", help="files to check (default: every source listed)")
    args = ap.parse_args(argv)
    if args.defaults:
        with open(args.defaults) as f:
            core = json.load(f)
    else:
        core = core_defaults(args.root)
    files = args.files or source_files(args.root, SOURCES)

    def why(setting, value):
        return None if agrees(setting, value, core) else f"the core says {core[setting]!r}"

    checked, bad, seen = judge(args.root, files, statements, why, args.verbose,
                               "default stated as")
    if not args.files:
        # The whole tree states every default somewhere: finding none means the patterns lost
        # track of the docs, not that they agree.
        for setting in sorted(set(SETTINGS) - seen):
            print(f"BAD no statement of {setting}'s default found: check_defaults.py lost track")
            bad += 1
    print(f"check_defaults: {checked} statements of a shared setting's default, {bad} wrong")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
