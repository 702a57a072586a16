"""The Python snippets of the README, of python/README.md (the package's) and of docs/python.md, extracted from between their markers
and executed. Every ```python block of either file must be a marked snippet that a test here
runs, so no snippet goes stale unexecuted."""

import os
import re
import shutil
import subprocess
import sys

import pytest

from conftest import README, REPO

GUIDE = REPO / "docs" / "python.md"
PACKAGE_README = REPO / "python" / "README.md"
END = "<!-- /snippet -->"
SNIPPET = re.compile(r"<!-- snippet:(python-[a-z0-9-]+) -->")

#: Every Python snippet, with the file that holds it.
SNIPPETS = {
    "python-quickstart": README,
    "python-package-readme": PACKAGE_README,
    "python-snowflake": GUIDE,
    "python-formats": GUIDE,
    "python-coarse": GUIDE,
    "python-file-lease": GUIDE,
    "python-prefork": GUIDE,
    "python-zookeeper": GUIDE,
    "python-async": GUIDE,
    "python-prometheus": GUIDE,
    "python-restart-guard": GUIDE,
    "python-clock-sync": GUIDE,
}


def snippet(name: str) -> str:
    path = SNIPPETS[name]
    start = f"<!-- snippet:{name} -->"
    text = path.read_text(encoding="utf-8")
    assert text.count(start) == 1, f"{path.name} must hold exactly one {name} snippet"
    body = text.split(start, 1)[1].split(END, 1)[0]
    m = re.fullmatch(r"\s*```python\n(.*?)```\s*", body, re.S)
    assert m, "the snippet must be one ```python block"
    return m.group(1)


def run(name: str) -> dict:
    scope = {"__name__": "snippet"}
    exec(compile(snippet(name), f"{SNIPPETS[name]}:{name}", "exec"), scope)
    return scope


@pytest.mark.parametrize("path", [README, GUIDE, PACKAGE_README],
                         ids=["README", "docs/python.md", "python/README.md"])
def test_every_python_block_is_a_listed_snippet(path):
    text = path.read_text(encoding="utf-8")
    marked = SNIPPET.findall(text)
    assert sorted(marked) == sorted(n for n, p in SNIPPETS.items() if p == path)
    assert text.count("```python") == len(marked), f"{path.name} has a ```python block outside a snippet"


@pytest.mark.forked
def test_readme_quickstart_runs():
    code = snippet("python-quickstart")
    assert "next_id" in code and "uuid7" in code
    run("python-quickstart")


@pytest.mark.forked  # generators with fixed node ids on the system clock: one process per test
@pytest.mark.parametrize("name", ["python-package-readme", "python-snowflake", "python-formats", "python-coarse",
                                  "python-async", "python-prometheus", "python-prefork",
                                  "python-restart-guard", "python-clock-sync"])
def test_guide_snippet_runs(name):
    run(name)


def test_guide_marks_only_its_snippets_not_standalone():
    # tests/dist/python_guide.sh runs every guide snippet against the installed wheel but these,
    # naming the reason; each is still run here (against a real store) and type-checked there.
    text = GUIDE.read_text(encoding="utf-8")
    marked = dict(re.findall(r"<!-- not-standalone:([a-z0-9-]+)\s+(.*?)\s*-->", text, re.S))
    assert marked.keys() == {"python-zookeeper"}
    assert all(SNIPPETS.get(name) == GUIDE and reason for name, reason in marked.items())


def test_guide_snippets_and_fastapi_example_pass_mypy_strict(tmp_path):
    files = []
    for name, path in SNIPPETS.items():
        if path == GUIDE:
            files.append(tmp_path / f"{name.replace('-', '_')}.py")
            files[-1].write_text(snippet(name), encoding="utf-8")
    files.append(tmp_path / "fastapi_app.py")
    shutil.copy(REPO / "python" / "examples" / "fastapi_app.py", files[-1])
    env = {**os.environ, "MYPY_CACHE_DIR": str(tmp_path / "mypy-cache")}
    run = subprocess.run([sys.executable, "-m", "mypy", "--strict", *map(str, files)],
                         cwd=tmp_path, env=env, capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr


def test_guide_file_lease_runs():
    code = snippet("python-file-lease")
    assert "from_file_lease" in code and "with " in code
    scope = run("python-file-lease")
    # The block closed the generator, which freed its slot.
    assert scope["g"].closed
    with pytest.raises(ValueError):
        scope["g"].next_id()


def test_guide_zookeeper_runs(zookeeper, monkeypatch):
    monkeypatch.setenv("ZOOKEEPER_ENSEMBLE", zookeeper)
    scope = run("python-zookeeper")
    assert scope["g"].closed and scope["ensemble"] == zookeeper
