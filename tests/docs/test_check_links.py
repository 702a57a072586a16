#!/usr/bin/env python3
"""check_links.py on a tree made here: GitHub's slug rules, and every kind of broken link reported
by file:line with the link (so `make test-docs-links` proves the checker can fail)."""
import contextlib
import io
import sys
import tempfile
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import check_links  # noqa: E402

GOOD = """\
# polyflake: one core, six languages

See [the guide](docs/guide.md#strict-or-monotonic-the-modes), [a folder](docs/),
[the heading below](#install--run), [again](#install--run-1), [an image](docs/img.png),
![alt](docs/img.png "a title"), [a line](docs/code.rs#L3-L7), [text][ref],
<a href="docs/guide.md#the-c-abi">html</a>, [mail](mailto:someone@example.org),
<https://example.org/a?b=c#d> and [web](https://github.com/org/repo/blob/main/x.md#y).

[ref]: docs/guide.md#plain

## Install & run

## Install & run

```sh
[not a link](missing.md) inside a fence
```

`[not a link](missing.md)` inside a code span.
"""

GUIDE = """\
# Guide

## Strict or monotonic: the modes

## The `C` ABI

Plain
-----

<a name="custom"></a>
"""

BROKEN = """\
# Broken

[no file](docs/missing.md)
[no heading](docs/guide.md#strict-or-monotonic)
[no local heading](#nowhere)
[outside](../../etc/passwd)
[absolute](/docs/guide.md)
[bad url](https://exa mple.org)
[no host](https:///path)
[anchor on a directory](docs/#x)
[fine](docs/guide.md#custom)
"""


def run(root, *files):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = check_links.main(["--root", str(root), *files])
    return rc, out.getvalue(), err.getvalue()


class CheckLinks(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        root = self.root = Path(self.tmp.name) / "repo"
        (root / "docs").mkdir(parents=True)
        (root / "README.md").write_text(GOOD)
        (root / "docs" / "guide.md").write_text(GUIDE)
        (root / "docs" / "img.png").write_bytes(b"")
        (root / "docs" / "code.rs").write_text("\n" * 9)
        (root / "BROKEN.md").write_text(BROKEN)

    def tearDown(self):
        self.tmp.cleanup()

    def test_slugs_follow_github(self):
        self.assertEqual(check_links.slug("Strict or monotonic: the modes"), "strict-or-monotonic-the-modes")
        self.assertEqual(check_links.slug(check_links.heading_text("The `C` ABI")), "the-c-abi")
        self.assertEqual(check_links.slug("Runs of 1, 10 and 30 s (UUIDv7/ULID, the coarse clock)"),
                         "runs-of-1-10-and-30-s-uuidv7ulid-the-coarse-clock")
        self.assertEqual(check_links.slug("Install & run"), "install--run")
        self.assertEqual(check_links.slug("snake_case and émigré"), "snake_case-and-émigré")
        self.assertIn("plain", check_links.anchors(GUIDE))
        self.assertIn("custom", check_links.anchors(GUIDE))

    def test_good_links_pass(self):
        rc, out, err = run(self.root, "README.md", "docs/guide.md")
        self.assertEqual(rc, 0, err)
        self.assertIn("every relative link and anchor resolves", out)
        self.assertIn("README.md", out)

    def test_each_broken_link_is_named_by_file_and_line(self):
        rc, _, err = run(self.root, "BROKEN.md")
        self.assertEqual(rc, 1)
        for line, target, why in [
            (3, "docs/missing.md", "no such file: docs/missing.md"),
            (4, "docs/guide.md#strict-or-monotonic", "no heading #strict-or-monotonic in docs/guide.md"),
            (5, "#nowhere", "no heading #nowhere in BROKEN.md"),
            (6, "../../etc/passwd", "points outside the repository"),
            (7, "/docs/guide.md", "absolute path"),
            (8, "https://exa mple.org", "not a link on GitHub"),
            (9, "https:///path", "no host"),
            (10, "docs/#x", "an anchor on a directory"),
        ]:
            self.assertIn(f"BROKEN.md:{line}: ({target}", err)
            self.assertIn(why, err)
        self.assertNotIn("BROKEN.md:11:", err)
        self.assertIn("8 broken link(s)", err)


if __name__ == "__main__":
    unittest.main(verbosity=2)
