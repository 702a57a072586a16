#!/usr/bin/env python3
"""Check the links of the project's Markdown files (Python stdlib only; no network).

Every relative link (inline `[text](target)`, image `![alt](target)`, reference definition
`[label]: target`, HTML `href="..."`/`src="..."`) must name a file or directory that exists inside
the repository, and its `#anchor`, if any, must match a heading of the Markdown file it points at
(or of the same file, for `#anchor` alone), by GitHub's slug rules: the heading's text lowercased,
punctuation removed, each space turned into '-', and `-1`, `-2`, ... appended to repeated slugs.
`<a name="...">` and `<a id="...">` count as anchors too. A `#L10` or `#L10-L20` anchor on a
non-Markdown file is GitHub's line anchor and is accepted. External http(s) links are not fetched:
they must be well-formed (a scheme, a host, no spaces). Fenced code blocks and inline code spans
are skipped.

Usage: check_links.py [--root DIR] [FILE.md ...]
  With no files: README.md, docs/*.md, and ffi-c/sdk/README-C.md, CHANGELOG.md, BENCHMARKS.md.
Prints each file checked with its counts; exits 1 naming file:line and the link of each broken one.
"""
from __future__ import annotations

import argparse
import html
import re
import sys
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urlsplit

DEFAULT_FILES = ["README.md", "docs/*.md", "ffi-c/sdk/README-C.md", "CHANGELOG.md", "BENCHMARKS.md"]

FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
CODE_SPAN = re.compile(r"(`+)(.+?)\1")
HTML_ANCHOR = re.compile(r"<a\s[^>]*?\b(?:name|id)\s*=\s*[\"']([^\"']+)[\"']", re.I)
HTML_LINK = re.compile(r"<(?:a|img|source)\s[^>]*?\b(?:href|src)\s*=\s*[\"']([^\"']*)[\"']", re.I)
REF_DEF = re.compile(r"^ {0,3}\[([^\]]+)\]:\s*(<[^>]*>|\S+)")
AUTOLINK = re.compile(r"<((?:https?|mailto):[^>\s]*)>")
LINE_ANCHOR = re.compile(r"^L\d+(?:C\d+)?(?:-L\d+(?:C\d+)?)?$")


@dataclass
class Link:
    file: Path
    line: int
    target: str


def mask_code_spans(line: str) -> str:
    """The line with every inline code span blanked (same length, so columns stay)."""
    return CODE_SPAN.sub(lambda m: " " * len(m.group(0)), line)


def prose_lines(text: str):
    """(line number, line) of every line outside fenced code blocks."""
    fence = None
    for number, line in enumerate(text.splitlines(), 1):
        m = FENCE.match(line)
        if fence is None:
            if m:
                fence = m.group(1)
                continue
            yield number, line
        elif m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence) \
                and line.strip() == m.group(1):
            fence = None


def heading_text(raw: str) -> str:
    """A heading's text as GitHub renders it: no inline markup, links reduced to their text."""
    text = re.sub(r"!\[([^\]]*)\]\([^)]*\)", r"\1", raw)          # images: alt text
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)          # links: their text
    text = re.sub(r"\[([^\]]*)\]\[[^\]]*\]", r"\1", text)         # reference links
    text = re.sub(r"<[^>]+>", "", text)                           # HTML tags
    text = re.sub(r"(`+)(.+?)\1", lambda m: m.group(2).strip(), text)
    text = re.sub(r"(\*\*|__)(.+?)\1", r"\2", text)
    text = re.sub(r"(?<![\w*])[*_](?!\s)(.+?)(?<!\s)[*_](?![\w*])", r"\1", text)
    text = re.sub(r"~~(.+?)~~", r"\1", text)
    text = re.sub(r"\\(.)", r"\1", text)                          # backslash escapes
    return html.unescape(text).strip()


def slug(text: str) -> str:
    """GitHub's slug (github-slugger): lowercase, keep letters, marks, digits, '_', '-' and
    spaces, then each space becomes '-'."""
    out = []
    for ch in text.lower():
        cat = unicodedata.category(ch)
        if ch in " -_" or cat[0] in "LMN" or cat == "Pc":
            out.append("-" if ch == " " else ch)
    return "".join(out)


def anchors(text: str) -> set[str]:
    """Every anchor a Markdown file offers: its headings' slugs (repeats numbered) and HTML
    name/id anchors."""
    found: set[str] = set()
    seen: dict[str, int] = {}

    def add(heading: str) -> None:
        base = slug(heading_text(heading))
        n = seen.get(base, 0)
        seen[base] = n + 1
        found.add(base if n == 0 else f"{base}-{n}")

    previous = ""
    for _, line in prose_lines(text):
        m = ATX.match(line)
        if m:
            add(m.group(2) or "")
        elif SETEXT.match(line) and previous.strip() and not ATX.match(previous) \
                and not previous.lstrip().startswith(("|", "-", "*", "+", ">")) \
                and not re.match(r"^ {0,3}\d+[.)]\s", previous):
            add(previous.strip())
        for a in HTML_ANCHOR.findall(line):
            found.add(a)
        previous = line
    return found


MALFORMED = "\0"


def destination(line: str, start: int) -> str | None:
    """The link destination that begins at line[start] (just after '('); MALFORMED when what
    follows is no destination (a space inside it, no closing ')' on the line); None if no
    destination at all."""
    i = start
    while i < len(line) and line[i] in " \t":
        i += 1
    if i < len(line) and line[i] == "<":
        end = line.find(">", i)
        return line[i + 1:end] if end > 0 else MALFORMED
    depth, j = 0, i
    while j < len(line):
        c = line[j]
        if c == "\\":
            j += 2
            continue
        if c == "(":
            depth += 1
        elif c == ")":
            if depth == 0:
                break
            depth -= 1
        elif c in " \t":
            break
        j += 1
    rest = line[j:].lstrip()
    if not rest or not (rest.startswith(")") or rest[:1] in "\"'("):
        return MALFORMED                 # GitHub shows this as text, not as a link
    return line[i:j]


def links(path: Path, text: str) -> list[Link]:
    """Every link target in a Markdown file, with its line."""
    found = []
    for number, raw in prose_lines(text):
        line = mask_code_spans(raw)
        m = REF_DEF.match(line)
        if m:
            found.append(Link(path, number, m.group(2).strip("<>")))
            continue
        for m in re.finditer(r"\]\(", line):
            target = destination(line, m.end())
            if target == MALFORMED:
                found.append(Link(path, number, line[m.end():].split(")")[0].strip() + MALFORMED))
            elif target is not None:
                found.append(Link(path, number, target))
        for m in HTML_LINK.finditer(line):
            found.append(Link(path, number, html.unescape(m.group(1))))
        for m in AUTOLINK.finditer(line):
            found.append(Link(path, number, m.group(1)))
    return found


def external_problem(target: str) -> str | None:
    """Why an http(s)/mailto link is malformed, or None."""
    if target.startswith("mailto:"):
        return None if re.fullmatch(r"mailto:[^@\s]+@[^@\s]+\.[^@\s]+", target) else "malformed mailto"
    if re.search(r"\s", target):
        return "whitespace in the URL"
    try:
        parts = urlsplit(target)
        parts.port  # raises on a bad port
    except ValueError as e:
        return f"malformed URL ({e})"
    host = parts.hostname or ""
    if parts.scheme not in ("http", "https") or not host:
        return "no host"
    if not re.fullmatch(r"[A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\]", host) or ".." in host \
            or host.startswith(".") or host.endswith("-"):
        return f"malformed host {host!r}"
    return None


class Checker:
    def __init__(self, root: Path):
        self.root = root.resolve()
        self.cache: dict[Path, set[str]] = {}

    def anchors_of(self, path: Path) -> set[str]:
        if path not in self.cache:
            self.cache[path] = anchors(path.read_text(encoding="utf-8"))
        return self.cache[path]

    def problem(self, link: Link) -> tuple[str | None, str]:
        """(why the link is broken or None, its kind: 'external', 'anchor' or 'relative')."""
        target = link.target
        if target.endswith(MALFORMED):
            return "not a link on GitHub: a space in the destination, or no ')' on the line", "relative"
        if not target:
            return "empty link", "relative"
        scheme = re.match(r"^([A-Za-z][A-Za-z0-9+.-]*):", target)
        if scheme:
            if scheme.group(1).lower() in ("http", "https", "mailto"):
                return external_problem(target), "external"
            return f"unexpected scheme {scheme.group(1)!r}", "external"
        if target.startswith("//"):
            return "protocol-relative URL: write https://", "external"
        path_part, _, anchor = target.partition("#")
        path_part = unquote(path_part.split("?", 1)[0])
        if path_part:
            if path_part.startswith("/"):
                return "absolute path: write it relative to the file", "relative"
            dest = (link.file.parent / path_part).resolve()
            if dest != self.root and self.root not in dest.parents:
                return "points outside the repository", "relative"
            if not dest.exists():
                return f"no such file: {dest.relative_to(self.root)}", "relative"
            kind = "relative"
        else:
            dest, kind = link.file.resolve(), "anchor"
        if anchor:
            anchor = unquote(anchor)
            if dest.is_dir():
                return "an anchor on a directory", kind
            if dest.suffix.lower() not in (".md", ".markdown"):
                if LINE_ANCHOR.match(anchor):
                    return None, kind
                return f"anchor #{anchor} on a non-Markdown file", kind
            if anchor not in self.anchors_of(dest):
                where = dest.relative_to(self.root)
                near = sorted(a for a in self.anchors_of(dest) if a[:6] == anchor[:6])
                hint = f" (near: {', '.join('#' + a for a in near[:3])})" if near else ""
                return f"no heading #{anchor} in {where}{hint}", kind
            kind = "anchor"
        return None, kind


def expand(root: Path, patterns: list[str]) -> list[Path]:
    files: list[Path] = []
    for p in patterns:
        matched = sorted(root.glob(p)) if any(c in p for c in "*?[") else [root / p]
        files += [f for f in matched if f.is_file() and f not in files]
    return files


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--root", type=Path, default=Path(__file__).resolve().parents[2])
    ap.add_argument("files", nargs="*")
    args = ap.parse_args(argv)
    root = args.root.resolve()
    files = expand(root, args.files or DEFAULT_FILES)
    checker = Checker(root)
    broken = []
    totals = {"relative": 0, "anchor": 0, "external": 0}
    for f in files:
        counts = {"relative": 0, "anchor": 0, "external": 0}
        for link in links(f, f.read_text(encoding="utf-8")):
            why, kind = checker.problem(link)
            counts[kind] += 1
            if why:
                shown = link.target.rstrip(MALFORMED)
                broken.append(f"{f.relative_to(root)}:{link.line}: ({shown}): {why}")
        for k in totals:
            totals[k] += counts[k]
        print(f"{str(f.relative_to(root)):24} {counts['relative']:4} relative, {counts['anchor']:4} with an "
              f"anchor, {counts['external']:3} external (well-formed only)")
    print(f"{len(files)} files: {totals['relative']} relative links, {totals['anchor']} anchors, "
          f"{totals['external']} external links")
    if broken:
        print(f"\n{len(broken)} broken link(s):", file=sys.stderr)
        for b in broken:
            print(f"  {b}", file=sys.stderr)
        return 1
    print("every relative link and anchor resolves")
    return 0


if __name__ == "__main__":
    sys.exit(main())
