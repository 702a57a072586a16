"""What the docs checkers share: where prose is, cut into blocks (paragraphs, list items, table
rows, comment blocks, code lines), the figures in it, and the loop that judges every statement
and reports file:line. Python's standard library only."""

import glob
import os
import re

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# A figure as the docs write it: `5000`, `5,000`, `5_000`, `0.5`.
NUMBER = r"\d+(?:[,_]\d{3})*(?:\.\d+)?"

COMMENT = re.compile(r"^\s*(///?!?|#|\*|/\*\*?|//)\s?")


class Block:
    """A paragraph or comment block: its lines joined by one space, and where each began."""

    def __init__(self):
        self.lines = []  # (line number, text)

    def add(self, n, text):
        self.lines.append((n, text))

    @property
    def text(self):
        return " ".join(t for _, t in self.lines)

    def line_at(self, offset):
        """The file line of the joined text's `offset`."""
        at = 0
        for n, t in self.lines:
            at += len(t) + 1
            if offset < at:
                return n
        return self.lines[-1][0]


def blocks(path, text, empty_comment_ends=True):
    """Paragraphs, list items and table rows (Markdown); comment blocks and single code lines
    (anything else). An empty comment line ends a comment paragraph when `empty_comment_ends`."""
    md = path.endswith(".md")
    out, cur = [], Block()

    def flush():
        nonlocal cur
        if cur.lines:
            out.append(cur)
        cur = Block()

    for n, line in enumerate(text.split("\n"), 1):
        if md:
            # List items, table rows and headings start a block of their own.
            if not line.strip() or re.match(r"\s*([-*+]|\d+\.|\|)\s", line) or line.startswith("#"):
                flush()
            if line.strip():
                cur.add(n, line)
            continue
        m = COMMENT.match(line)
        if m:
            rest = line[m.end():]
            if empty_comment_ends and not rest.strip():
                flush()
            else:
                cur.add(n, rest)
            continue
        flush()
        # Code lines stand alone (signatures, attributes, type declarations).
        if line.strip():
            cur.add(n, line)
            flush()
    flush()
    return out


def to_ms(figure, unit):
    """A figure (`5,000`, `0.5`) with its unit (ms when none) in milliseconds."""
    v = float(figure.replace(",", "").replace("_", ""))
    unit = (unit or "ms").lower()
    if unit.startswith("min"):
        v *= 60_000
    elif unit in ("s", "sec", "second", "seconds"):
        v *= 1000
    return v


def source_files(root, sources, skip=None):
    """The files the `sources` globs name under `root`, less those whose path `skip` matches."""
    found = {p for g in sources for p in glob.glob(os.path.join(root, g))}
    return sorted(p for p in found if not (skip and skip.search(os.path.relpath(p, root))))


def judge(root, files, statements, why, verbose, what):
    """Judge every statement `statements(path, text)` yields, `(line, name, value, snippet)`,
    with `why(name, value)` (None when right, else what is wrong). Prints the wrong ones (every
    one when `verbose`); returns (statements checked, wrong, names seen)."""
    bad = checked = 0
    seen = set()
    for path in files:
        with open(path, encoding="utf-8") as f:
            text = f.read()
        rel = os.path.relpath(path, root)
        for line, name, value, snippet in statements(path, text):
            checked += 1
            seen.add(name)
            wrong = why(name, value)
            if verbose or wrong:
                mark = "BAD" if wrong else "ok "
                says = f": {wrong}" if wrong else ""
                shown = f"{value:g}" if isinstance(value, float) else repr(value)
                print(f"{mark} {rel}:{line}: {name} {what} {shown}{says}: "
                      f"...{' '.join(snippet.split())}...")
            bad += bool(wrong)
    return checked, bad, seen
