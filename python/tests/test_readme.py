"""The README's Python quickstart, extracted from between its snippet markers and executed."""

import re

from conftest import README

START, END = "<!-- snippet:python-quickstart -->", "<!-- /snippet -->"


def quickstart() -> str:
    text = README.read_text(encoding="utf-8")
    assert text.count(START) == 1, "the README must hold exactly one python-quickstart snippet"
    body = text.split(START, 1)[1].split(END, 1)[0]
    m = re.fullmatch(r"\s*```python\n(.*?)```\s*", body, re.S)
    assert m, "the snippet must be one ```python block"
    return m.group(1)


def test_readme_quickstart_runs():
    code = quickstart()
    assert "next_id" in code and "decode" in code
    exec(compile(code, str(README) + ":python-quickstart", "exec"), {"__name__": "readme"})
