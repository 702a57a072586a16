#!/usr/bin/env python3
"""check_defaults.py on files made here: every form of a stated default is found and judged
against the core's figures, a wrong figure fails with file:line, and figures that belong to
another setting (the epoch, a lease's reserve, a clock's tick) or that are not defaults (an
example's `max_forward_step_ms=None`) are left alone. So `make test-docs-defaults` proves the
checker can fail."""
import contextlib
import io
import json
import sys
import tempfile
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import check_defaults  # noqa: E402

CORE = {
    "mode": "strict",
    "max_wait_ms": 5.0,
    "max_lead_ms": None,
    "max_forward_step_ms": 60000,
    "forward_confirm_ms": 300000,
    "clock_source": "precise",
    "clock": None,
}

# Each (file name, text): one statement the core agrees with.
RIGHT = {
    "a.rs": "/// Strict mode's wait budget in milliseconds (default 5.0): a rewind...\nfn x() {}\n",
    "b.h": "  /**\n   * The forward-step bound in ms (default 60,000); OFF: no check.\n   */\n",
    "c.go": "// WithForwardConfirmMs is how long a stepped-ahead clock must hold (default 300,000).\n",
    "d.md": "A step ahead past `maxForwardStepMs` (default 60 s) is not issued from.\n",
    "e.pyi": "def f(*, max_wait_ms: float = 5.0, max_lead_ms: Optional[int] = None) -> None: ...\n",
    "f.go": "// WithClockSource is Precise (the default) or Coarse.\n",
    "g.md": "| precise (default) | 39.7 ns |\n",
    "h.go": "// a small rewind (up to WithMaxWaitMs, 5 ms by default) is waited out\n",
    "i.rs": "/// Monotonic mode's limit on running ahead of the wall clock (default unbounded).\n",
    "j.md": "- `Snowflake(node_id, *, max_wait_ms=5.0, clock_source=None, forward_confirm_ms=300000)`\n",
    "k.rs": "    #[arg(long)] // Default: strict.\n/// Strict or monotonic (default strict).\n",
}

# Each (file name, text, line): one statement with a wrong figure, on that line.
WRONG = {
    "a.rs": ("fn x() {}\n/// Strict mode's wait budget in milliseconds (default 6.0): a rewind.\n", 2),
    "b.h": ("/**\n * The forward-step bound in ms (default 30,000); OFF: no check.\n */\n", 2),
    "c.go": ("// WithForwardConfirmMs is how long a stepped-ahead clock must hold (default 3 min).\n", 1),
    "d.md": ("Intro.\n\nA step ahead past `maxForwardStepMs` (default 6 s) is not issued from.\n", 3),
    "e.pyi": ("\ndef f(*, max_wait_ms: float = 10.0) -> None: ...\n", 2),
    "f.go": ("// WithClockSource is Coarse (the default) or Precise.\n", 1),
    "g.md": ("| coarse (default) | 39.7 ns |\n", 1),
    "h.go": ("// a small rewind (up to WithMaxWaitMs, 50 ms by default) is waited out\n", 1),
    "i.rs": ("/// Monotonic mode's limit on running ahead of the wall clock (default 1000 ms).\n", 1),
    "j.md": ("- `Snowflake(node_id, *, max_wait_ms=5.0, forward_confirm_ms=30000)`\n", 1),
    "k.rs": ("/// Strict or monotonic (default monotonic).\n", 1),
}

# Figures that are not a shared setting's default.
NOT_OURS = """\
/// The epoch in Unix milliseconds (default 2024-01-01 = 1704067200000), and the wait budget.
/// `max_wait_ms` bounds a rewind; the lease's reserve (default 5000) is its own.
/// Its wall reading rounded down to `tick_ms` (default 1, coarse = 4).
/// Turn the check off with `max_forward_step_ms=None` (as in Python).
clock = Snowflake(node_id=5, max_wait_ms=50.0)
"""


def run(files, root):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = check_defaults.main(
            ["--defaults", str(root / "core.json"), "--root", str(root)]
            + [str(root / f) for f in files]
        )
    return code, out.getvalue()


class CheckDefaults(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.root = Path(self.tmp.name)
        (self.root / "core.json").write_text(json.dumps(CORE))

    def tearDown(self):
        self.tmp.cleanup()

    def test_right_figures_pass_and_are_all_found(self):
        for name, text in RIGHT.items():
            (self.root / name).write_text(text)
        code, out = run(RIGHT, self.root)
        self.assertEqual(code, 0, out)
        # Every file's statement was found (j.md holds three, e.pyi and k.rs two each).
        self.assertIn(f"{len(RIGHT) + 4} statements", out)

    def test_each_wrong_figure_fails_with_its_file_and_line(self):
        for name, (text, line) in WRONG.items():
            (self.root / name).write_text(text)
            code, out = run([name], self.root)
            self.assertEqual(code, 1, f"{name}: {out}")
            self.assertIn(f"BAD {name}:{line}:", out)
            self.assertIn("the core says", out)

    def test_other_settings_figures_and_examples_are_left_alone(self):
        (self.root / "n.rs").write_text(NOT_OURS)
        (self.root / "n.md").write_text(NOT_OURS)
        code, out = run(["n.rs", "n.md"], self.root)
        self.assertEqual(code, 0, out)
        self.assertIn(" 0 statements", out)


if __name__ == "__main__":
    unittest.main()
