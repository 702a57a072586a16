"""The README's Python snippets, extracted from between their markers and executed."""

import re

import pytest

from conftest import README

END = "<!-- /snippet -->"


def snippet(name: str) -> str:
    start = f"<!-- snippet:{name} -->"
    text = README.read_text(encoding="utf-8")
    assert text.count(start) == 1, f"the README must hold exactly one {name} snippet"
    body = text.split(start, 1)[1].split(END, 1)[0]
    m = re.fullmatch(r"\s*```python\n(.*?)```\s*", body, re.S)
    assert m, "the snippet must be one ```python block"
    return m.group(1)


def run(name: str) -> dict:
    scope = {"__name__": "readme"}
    exec(compile(snippet(name), f"{README}:{name}", "exec"), scope)
    return scope


def test_readme_quickstart_runs():
    code = snippet("python-quickstart")
    assert "next_id" in code and "decode" in code
    run("python-quickstart")


def test_readme_file_lease_runs():
    code = snippet("python-file-lease")
    assert "from_file_lease" in code and "with " in code
    scope = run("python-file-lease")
    # The block closed the generator, which freed its slot.
    assert scope["g"].closed
    with pytest.raises(ValueError):
        scope["g"].next_id()
