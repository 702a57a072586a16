"""Shared paths and guards for the polyflake Python tests.

The tests run against the wheel installed into the project venv, never the source tree:
`make test-python` runs pytest from this directory, where no `polyflake` package lives.
"""

import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import traceback

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
VECTORS = REPO / "tests" / "vectors"
SCENARIOS = VECTORS / "scenarios"
README = REPO / "README.md"
WITH_ZOOKEEPER = REPO / "tests" / "stores" / "with_zookeeper.sh"

# The suite's own host scope and state directory, for this process and every child it starts.
# A node id's claim (a static id or a lease's slot, any epoch) is the host's, so another suite
# running beside this one (another language's tests, a second checkout) holds the same small node
# ids; and a fixed node id's marks that a past run left in the default directory would guard
# this run's generators (a run with another epoch would be refused for years).
STATE_DIR = tempfile.mkdtemp(prefix="pf-py-state-")
os.environ["POLYFLAKE_HOST_SCOPE"] = f"pytest-{os.getpid()}"
os.environ["POLYFLAKE_STATE_DIR"] = STATE_DIR
os.environ.pop("POLYFLAKE_RESTART_GUARD", None)

#: The default epoch, 2024-01-01T00:00:00Z (the core's DEFAULT_EPOCH_MS).
CUSTOM_EPOCH_MS = 1704067200000


def load_json(path: pathlib.Path):
    with path.open(encoding="utf-8") as f:
        return json.load(f)


@pytest.fixture(scope="session")
def layouts():
    return load_json(VECTORS / "layouts.json")


@pytest.fixture(scope="session")
def zookeeper():
    """The ensemble ("127.0.0.1:PORT") of a real ZooKeeper. `make test-python` runs pytest inside
    `tests/stores/with_zookeeper.sh`, which names it in POLYFLAKE_TEST_ZOOKEEPER; run alone, this
    starts the same script (Debian's ZooKeeper 3.8 on a free loopback port, a temporary data dir)
    and stops it when the session ends."""
    given = os.environ.get("POLYFLAKE_TEST_ZOOKEEPER")
    if given:
        yield given
        return
    # The script runs its command beside ZooKeeper with the ensemble as the last argument; this
    # command prints it and lives until its stdin closes, then the script stops ZooKeeper.
    holder = "import sys; print('ENSEMBLE', sys.argv[-1], flush=True); sys.stdin.read()"
    proc = subprocess.Popen(
        ["bash", str(WITH_ZOOKEEPER), sys.executable, "-c", holder],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )
    try:
        ensemble = None
        for line in proc.stdout:
            if line.startswith("ENSEMBLE "):
                ensemble = line.split()[1]
                break
        if ensemble is None:
            pytest.fail(f"with_zookeeper.sh did not start ZooKeeper (exit {proc.wait()})")
        yield ensemble
    finally:
        proc.stdin.close()
        proc.wait(timeout=60)


def run_in_child(fn):
    """Run fn() in a forked child; return its exit code (fn returns the code; an exception
    gives 98, its traceback on stderr). The child never returns into pytest."""
    pid = os.fork()
    if pid == 0:
        code = 99
        try:
            code = fn()
        except BaseException:  # noqa: BLE001 - any escape is a failure code
            traceback.print_exc()
            code = 98
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.WIFEXITED(status), status
    return os.WEXITSTATUS(status)


def pytest_configure(config):
    config.addinivalue_line("markers", "forked: run each test in a forked child process")


def pytest_unconfigure(config):
    shutil.rmtree(STATE_DIR, ignore_errors=True)


def pytest_pyfunc_call(pyfuncitem):
    """`@pytest.mark.forked`: the test runs in a child, so the generators it makes (on the system
    clock or a user's callable, one per node id in a process, each continuing after the last of
    its node id) leave nothing behind for the next test."""
    if pyfuncitem.get_closest_marker("forked") is None:
        return None
    args = {name: pyfuncitem.funcargs[name] for name in pyfuncitem._fixtureinfo.argnames}
    code = run_in_child(lambda: pyfuncitem.obj(**args) or 0)
    assert code == 0, f"the forked test failed (exit {code}): see its traceback on stderr"
    return True
