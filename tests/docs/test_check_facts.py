#!/usr/bin/env python3
"""check_facts.py on a tree made here: the code's figures are read from its source, every form of
a statement is found and judged, a wrong figure fails with file:line, and figures that are not
the fact (a C text field's 256 bytes, an example's own reserve, the fence's margin) are left
alone. So `make test-docs-facts` proves the checker can fail."""
import contextlib
import io
import sys
import tempfile
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import check_facts  # noqa: E402

CODE = {
    "core/src/lease/record.rs": (
        "pub(crate) const RECORD_LEN: usize = 512;\nconst RECORD_LEN_V0: usize = 256;\n"
        'pub(crate) fn slot_name(slot: u32) -> String {\n    format!("{slot:04}")\n}\n'
    ),
    "core/src/lease/options.rs": "pub const DEFAULT_RESERVE_MS: u64 = 5_000;\n",
    "core/src/lease/host/mark.rs": (
        "fn file_name(&self) -> String {\n"
        '    let mut name = format!(\n        "node-{}-{}-{}-{}",\n'
        "        t, n, s, slot_name(id)\n    );\n}\n"
    ),
}

# Each (file name, text): statements the code agrees with.
RIGHT = {
    "a.md": "R is written durably (one 512-byte `pwrite` and `fdatasync`) before it is used.\n",
    "b.rs": "//! A slot file is one fixed-size text record (512 bytes, one `pwrite`).\nfn x() {}\n",
    "c.rs": "/// Records of the previous version (256 bytes, no checksum) still read.\nfn x() {}\n",
    "d.md": "- A new slot waits one reserve (5 s by default) before its first ID.\n",
    "e.h": "/**\n * kept one reserve (`DEFAULT_RESERVE_MS`, 5 s) ahead of the clock\n */\n",
    "f.pyi": "def f(*, slots: int | None = None, reserve_ms: int = 5000) -> None: ...\n",
    "g.md": "The mark `node-41-10-12-0037` (or `node-<T>-<N>-<S>-<NNNN>[-<scope>]`).\n",
    "h.go": "// --lease-reserve-ms (how far ahead R is kept, default 5,000)\n",
}

# Each (file name, text, line): one wrong statement, on that line.
WRONG = {
    "a.md": ("Intro.\n\nR is written durably (one 256-byte `pwrite` and `fdatasync`).\n", 3),
    "b.rs": ("fn x() {}\n//! A slot file is one fixed-size text record (1024 bytes).\n", 2),
    "c.rs": ("/// Records of older versions were 128 bytes; both read the same way.\n", 1),
    "d.md": ("- A new slot waits one reserve (2 s by default) before its first ID.\n", 1),
    "e.h": ("/**\n * kept one reserve (`DEFAULT_RESERVE_MS`, 500 ms) ahead of the clock\n */\n", 2),
    "f.pyi": ("\ndef f(*, reserve_ms: int = 500) -> None: ...\n", 2),
    "g.md": ("The mark `node-41-10-12-37` says so.\n", 1),
    "h.md": ("The mark is named `node-<T>-<N>-<S>-<node>`.\n", 1),
    "i.md": ("The mark `node-41-10-13-0037` says so.\n", 1),
}

# Figures that are not the fact.
NOT_OURS = """\
/// All text fields are 256 bytes (`POLYFLAKE_HEALTH_TEXT_LEN`), the snapshot's reason too.
/// The margin covers the skew plus the reserve: the default is 60 s plus the reserve.
/// A batch is 16 big-endian bytes per ID.
/// The nemesis run: TTL 2 s, reserve 500 ms, one fault at a time.
g = Snowflake.from_file_lease(d, reserve_ms=500)
"""


def run(files, root):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = check_facts.main(["--root", str(root)] + [str(root / f) for f in files])
    return code, out.getvalue()


class CheckFacts(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.root = Path(self.tmp.name)
        for rel, text in CODE.items():
            (self.root / rel).parent.mkdir(parents=True, exist_ok=True)
            (self.root / rel).write_text(text)

    def tearDown(self):
        self.tmp.cleanup()

    def write(self, name, text):
        (self.root / name).write_text(text)
        return name

    def test_the_code_is_read_from_its_source(self):
        facts = check_facts.code_facts(str(self.root))
        self.assertEqual(
            facts,
            {"record_len": 512, "record_len_v0": 256, "reserve_ms": 5000, "mark_fields": 4,
             "slot_digits": 4},
        )

    def test_right_statements_pass(self):
        for name, text in RIGHT.items():
            with self.subTest(name=name):
                code, out = run([self.write(name, text)], self.root)
                self.assertEqual(code, 0, out)
                self.assertRegex(out, r"check_facts: [1-9]\d* statements", out)

    def test_a_wrong_figure_fails_with_its_file_and_line(self):
        for name, (text, line) in WRONG.items():
            with self.subTest(name=name):
                code, out = run([self.write(name, text)], self.root)
                self.assertEqual(code, 1, out)
                self.assertIn(f"BAD {name}:{line}:", out)

    def test_a_changed_constant_fails_the_docs_that_state_the_old_one(self):
        (self.root / "core/src/lease/record.rs").write_text(
            CODE["core/src/lease/record.rs"].replace("= 512", "= 1024")
        )
        code, out = run([self.write("a.md", RIGHT["a.md"])], self.root)
        self.assertEqual(code, 1, out)
        self.assertIn("RECORD_LEN (core/src/lease/record.rs) is 1024", out)

    def test_other_figures_are_left_alone(self):
        code, out = run([self.write("n.rs", NOT_OURS)], self.root)
        self.assertEqual(code, 0, out)
        self.assertIn("check_facts: 0 statements", out)

    def test_a_fact_stated_nowhere_fails(self):
        for rel in ("docs", "core/src"):
            (self.root / rel).mkdir(parents=True, exist_ok=True)
        self.write("docs/a.md", RIGHT["a.md"])
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            code = check_facts.main(["--root", str(self.root)])
        self.assertEqual(code, 1, out.getvalue())
        self.assertIn("no statement of reserve_ms found", out.getvalue())

    def test_the_repository_passes(self):
        root = Path(__file__).resolve().parents[2]
        if not (root / "core/src/lease/record.rs").exists():
            self.skipTest("not in the repository")
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            code = check_facts.main(["--root", str(root)])
        self.assertEqual(code, 0, out.getvalue())


if __name__ == "__main__":
    unittest.main()
