"""The kernel's word on the clock through Python (as core/tests/clock_sync.rs): `health().clock_sync`
says what `adjtimex` says, and `max_clock_error_ms` refuses to issue (`ClockUnsynchronized`)
while the kernel says the clock is not synchronized or its maximum error is over the bound, and
issues again once it says otherwise. The kernel's state is moved under a live child by a stand-in
for `adjtimex` (core/tests/support/fake_adjtimex.c, preloaded), never the real clock's."""

import os
import subprocess
import sys
import textwrap
import time

import pytest

import polyflake
from polyflake import Snowflake, Uuid7Generator
from polyflake.testing import ManualClock

from conftest import CUSTOM_EPOCH_MS, REPO

SHIM = REPO / "core" / "tests" / "support" / "fake_adjtimex.c"

#: The child: a strict generator bound to 50 ms of error and one without a bound, answering
#: each `check` on stdin with what each does now.
CHILD = textwrap.dedent("""
    import sys
    import polyflake

    bound = polyflake.Snowflake(970, max_clock_error_ms=50)
    free = polyflake.Snowflake(971)
    for line in sys.stdin:
        h = bound.health()
        try:
            bound.next_id()
            says = "ID"
        except polyflake.ClockUnsynchronized as e:
            assert isinstance(e, polyflake.PolyflakeError) and isinstance(e, RuntimeError)
            says = f"{e.code} max_error_us={e.max_error_us} node={e.node_id} [{e.cause}]"
        free.next_id()
        print(f"ANSWER bound={says} free=ID status={h.status} state={h.clock_sync.state} "
              f"synchronized={h.clock_sync.synchronized} max_error_us={h.clock_sync.max_error_us}",
              flush=True)
""")


#: The kernel's states, as the core names them (`ClockSyncState::name`).
STATES = ("ok", "insert_leap", "delete_leap", "leap_in_progress", "leap_done", "unsynchronized",
          "unavailable")


@pytest.fixture(scope="module")
def shim(tmp_path_factory):
    so = tmp_path_factory.mktemp("adjtimex") / "fake_adjtimex.so"
    subprocess.run(["cc", "-shared", "-fPIC", "-O2", "-o", str(so), str(SHIM)], check=True)
    return so


def test_the_kernels_word_refuses_and_releases_a_bound_generator(shim, tmp_path):
    state = tmp_path / "state"
    state.write_text("0 0 5000 1000")  # synchronized, 5 ms of maximum error
    env = {**os.environ, "LD_PRELOAD": str(shim), "PF_FAKE_ADJTIMEX": str(state)}
    child = subprocess.Popen([sys.executable, "-c", CHILD], env=env, stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, text=True)
    try:
        def ask():
            child.stdin.write("check\n")
            child.stdin.flush()
            line = child.stdout.readline()
            assert line.startswith("ANSWER"), f"the child ended (exit {child.poll()})"
            return line.strip()

        def settle(want):
            """Ask until the answer has `want` (the monitor reads the kernel once a second: 2.5 s
            covers it on a loaded machine too); the answer and how long it took."""
            started = time.monotonic()
            while True:
                a = ask()
                if want in a or time.monotonic() - started > 2.5:
                    return a, time.monotonic() - started
                time.sleep(0.05)

        a = ask()
        assert "bound=ID" in a and "status=ok" in a, a
        assert "state=ok" in a and "synchronized=True" in a and "max_error_us=5000" in a, a
        state.write_text("5 64 16000000 16000000")  # unsynchronized (TIME_ERROR, STA_UNSYNC)
        a, took = settle("bound=CLOCK_UNSYNCHRONIZED")
        print(f"\nrefused {took * 1000:.0f} ms after the kernel said unsynchronized: {a}")
        assert "bound=CLOCK_UNSYNCHRONIZED max_error_us=16000000 node=970" in a, a
        assert "not synchronized" in a and "free=ID" in a, a
        assert "status=clock_unsynchronized" in a and "state=unsynchronized" in a, a
        state.write_text("0 0 80000 1000")  # synchronized, but 80 ms of error: over the 50 ms bound
        a, _ = settle("80.0 ms")
        assert "bound=CLOCK_UNSYNCHRONIZED" in a and "80.0 ms, over max_clock_error_ms = 50" in a, a
        state.write_text("1 0 2000 500")  # synchronized, a leap second to insert tonight
        a, took = settle("bound=ID")
        print(f"issuing again {took * 1000:.0f} ms after the kernel said synchronized: {a}")
        assert "bound=ID" in a and "state=insert_leap" in a and "status=ok" in a, a
    finally:
        child.stdin.close()
        assert child.wait(timeout=30) == 0


def test_health_reports_the_kernels_word_without_a_bound():
    # Whatever this host's clock is, an unbound generator issues and says what the kernel says.
    with Snowflake(973) as g:
        assert g.max_clock_error_ms is None and g.next_id() > 0
        h = g.health()
        assert h.ok and h.status != "clock_unsynchronized", h
        sync = h.clock_sync
        assert isinstance(sync, polyflake.ClockSync)
        assert sync.state in STATES, sync
        assert not (sync.synchronized and sync.state in ("unsynchronized", "unavailable")), sync
        assert sync.max_error_us >= -1 and sync.est_error_us >= -1
        assert h.to_dict()["clock_sync"] == {"state": sync.state, "synchronized": sync.synchronized,
                                             "max_error_us": sync.max_error_us,
                                             "est_error_us": sync.est_error_us}
        assert repr(sync).startswith("ClockSync(state=")


def test_the_setting_is_checked():
    for bad in (0, 16_001):
        with pytest.raises(polyflake.InvalidArgument, match=str(bad)):
            Snowflake(972, max_clock_error_ms=bad)
    with pytest.raises(TypeError):
        Snowflake(972, max_clock_error_ms=1.5)
    with pytest.raises(polyflake.InvalidArgument, match="injected clock"):
        Snowflake(972, max_clock_error_ms=100, clock=ManualClock(CUSTOM_EPOCH_MS))
    # The 128-bit formats take it too.
    with Uuid7Generator(max_clock_error_ms=16_000) as u:
        assert u.health().clock_sync.state
