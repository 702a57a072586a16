"""A fixed node id keeps the promises a lease keeps, tried through Python with real processes on
one host (as core/tests/static_guard.rs does in Rust): a handover between processes, a restart
with the clock stepped back (libfaketime), a monotonic holder that ran ahead, a forked child
taking over from its parent, a lease and a static id of the same node id, a directory that
cannot keep a mark, a Python callable clock exempt from the host-wide claim. Every case counts
the duplicates across the holders' IDs: zero.

The holders are `static_holder.py` processes; each test keeps its marks in a state directory of
its own (`tmp_path`) and claims its node ids in a host scope of its own, and kills whatever
holder is left when it ends."""

import array
import os
import shutil
import signal
import subprocess
import sys
import time

import pytest

import polyflake
from polyflake import MonotonicSnowflake, Snowflake

HOLDER = os.path.join(os.path.dirname(__file__), "static_holder.py")


class Holder:
    """A `static_holder.py` process; `lines` reads what it says."""

    def __init__(self, env, faketime=None):
        cmd = [sys.executable, HOLDER]
        if faketime is not None:
            # The wall clock only: elapsed time (the waits' deadlines) stays true.
            cmd = ["faketime", "-f", faketime, *cmd]
            env = {**env, "FAKETIME_DONT_FAKE_MONOTONIC": "1"}
        self.proc = subprocess.Popen(cmd, env=env, stdin=subprocess.DEVNULL,
                                     stdout=subprocess.PIPE, text=True)

    def line(self, prefix):
        """Its next line that starts with `prefix`."""
        for line in self.proc.stdout:
            if line.startswith(prefix):
                return line.strip()
        raise AssertionError(f"the holder ended (exit {self.proc.wait()}) before saying {prefix!r}")

    def kill(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=30)

    def wait(self):
        assert self.proc.wait(timeout=60) == 0


@pytest.fixture
def holders(tmp_path, request):
    """Start holders with `spawn(**vars)`; every one still running is killed at the end (a
    failing test leaves no process holding a node id)."""
    started = []
    scope = f"guard-{os.getpid()}-{request.node.name}"[:40].replace("[", "-").replace("]", "")

    def spawn(faketime=None, **vars):
        env = {**os.environ, "STATE": str(tmp_path), "SCOPE": scope,
               **{k: str(v) for k, v in vars.items()}}
        h = Holder(env, faketime)
        started.append(h)
        return h

    spawn.scope = scope
    yield spawn
    for h in started:
        h.kill()


def read_ids(path):
    ids = array.array("q")
    if os.path.exists(path):
        with open(path, "rb") as f:
            ids.frombytes(f.read())
    return ids


def duplicates(*sets):
    every = [x for ids in sets for x in ids]
    return len(every) - len(set(every))


def field(line, name):
    """`name=value` of a DONE line."""
    return next(w.split("=", 1)[1] for w in line.split() if w.startswith(name + "="))


def test_a_handover_between_processes_repeats_nothing(holders, tmp_path):
    # A holder mints and lets go (a close, an exit with its generator open, a SIGKILL); a
    # successor already retrying for the node id builds the moment it is free and mints.
    every = []
    for n, end in enumerate(["close", "exit", "hang", "close", "exit"]):
        a_out, b_out = tmp_path / f"a{n}", tmp_path / f"b{n}"
        a = holders(NODE=960, OUT=a_out, COUNT=3000, END=end)
        a.line("READY")
        b = holders(NODE=960, OUT=b_out, COUNT=3000, RETRY=1)
        a.line("DONE")
        if end == "hang":
            a.kill()
        else:
            a.wait()
        gone = time.monotonic()
        ready = b.line("READY")
        took_over_s = time.monotonic() - gone
        done = b.line("DONE")
        b.wait()
        assert "REFUSED" not in done, done
        waits, first_ms = int(field(done, "waits")), int(field(done, "first_ms"))
        print(f"\nhandover after {end}: the successor built {took_over_s * 1000:.0f} ms after the "
              f"holder was gone ({ready}), its first ID after {first_ms} ms, waits={waits}")
        # Built as soon as the node id was free (a loaded machine: an honest margin).
        assert took_over_s < 5, took_over_s
        if end in ("close", "exit"):
            # A clean mark (a close, the exit handlers): nothing to wait for.
            assert waits == 0 and first_ms < 1000, done
        else:
            # A SIGKILL left R up to one reserve (5 s) ahead: the successor waited for it.
            assert waits == 1 and first_ms < polyflake.DEFAULT_MAX_RESTART_WAIT_MS, done
        ai, bi = read_ids(a_out), read_ids(b_out)
        assert (len(ai), len(bi)) == (3000, 3000), n
        assert min(bi) > max(ai), "the successor starts above its predecessor"
        every += [ai, bi]
    assert duplicates(*every) == 0
    assert len({x for ids in every for x in ids}) == 10 * 3000


def faketime_works():
    return shutil.which("faketime") is not None and subprocess.run(
        ["faketime", "-f", "-1s", "true"]).returncode == 0


def restart_behind(holders, tmp_path, tag, offset, end):
    """A holder mints for 300 ms on the true clock and goes (`end`); its successor starts at once
    with its clock `offset` behind (libfaketime) and mints for 300 ms. Its READY and DONE lines
    and the two ID sets."""
    a_out, b_out = tmp_path / f"{tag}-a", tmp_path / f"{tag}-b"
    a = holders(NODE=961, OUT=a_out, MS=300, END=end)
    a.line("DONE")
    if end == "hang":
        a.kill()
    else:
        a.wait()
    b = holders(faketime=offset, NODE=961, OUT=b_out, MS=300)
    ready, done = b.line("READY"), b.line("DONE")
    b.wait()
    return ready, done, read_ids(a_out), read_ids(b_out)


def test_a_restart_with_the_clock_stepped_back_waits_and_repeats_nothing(holders, tmp_path):
    assert faketime_works(), "faketime is missing: make deps-apt installs it"
    # Killed (R up to one reserve, 5 s, ahead), the successor 3 s behind: it waits out the
    # guard (health says restart_guard meanwhile) and issues above everything the first did.
    ready, done, a, b = restart_behind(holders, tmp_path, "kill3s", "-3s", "hang")
    print(f"\nkilled, successor 3 s behind: {ready}; {done}")
    assert ready.split()[2] == "restart_guard" and int(ready.split()[3]) > 3000, ready
    assert field(done, "waits") == "1" and "REFUSED" not in done, done
    assert int(field(done, "first_ms")) > 3000, done
    assert len(b) > 0 and duplicates(a, b) == 0 and min(b) > max(a)
    # A clean close, the successor 1 s behind (an ntpd step): it waits up to 1 s, less however
    # long it took to start (1 s, not 200 ms: a loaded machine's interpreter start can take
    # longer than 200 ms, and a successor that starts after the step has passed does not wait).
    ready, done, a, b = restart_behind(holders, tmp_path, "close1s", "-1s", "close")
    print(f"closed, successor 1 s behind: {ready}; {done}")
    assert field(done, "waits") == "1" and "REFUSED" not in done, done
    assert 0 <= int(field(done, "first_ms")) < 3000, done
    assert duplicates(a, b) == 0 and min(b) > max(a)
    # An exit with the generator open (the exit handlers leave a clean mark), 1 s behind.
    ready, done, a, b = restart_behind(holders, tmp_path, "exit1s", "-1s", "exit")
    print(f"exited, successor 1 s behind: {ready}; {done}")
    assert "REFUSED" not in done and duplicates(a, b) == 0 and min(b) > max(a), done
    # Further behind than a call waits (10 s): refused with the reason, nothing issued.
    ready, done, a, b = restart_behind(holders, tmp_path, "kill30s", "-30s", "hang")
    print(f"killed, successor 30 s behind: {done}")
    assert " REFUSED LEASE_NOT_READY " in done and "longer than a call waits" in done, done
    assert len(b) == 0


@pytest.mark.parametrize("end", ["exit", "hang"])
def test_a_monotonic_holder_ahead_hands_its_lead_on(holders, tmp_path, end):
    # 409,600 IDs at once put a monotonic holder 100 ms ahead of its clock; it goes (an exit with
    # the generator open, a SIGKILL), and a strict and a monotonic successor start at once.
    outs = [tmp_path / f"o{i}" for i in range(3)]
    a = holders(NODE=962, OUT=outs[0], MODE="monotonic", BURST=409_600, END=end)
    a.line("DONE")
    if end == "hang":
        a.kill()
    else:
        a.wait()
    for i, mode in [(1, "strict"), (2, "monotonic")]:
        gone = time.monotonic()
        b = holders(NODE=962, OUT=outs[i], MODE=mode, COUNT=20_000)
        b.line("READY")
        assert time.monotonic() - gone < 5, "the successor did not start at once"
        done = b.line("DONE")
        b.wait()
        print(f"\n{mode} successor of a monotonic holder 100 ms ahead ({end}): {done}")
        assert "REFUSED" not in done, done
    ids = [read_ids(o) for o in outs]
    assert len(ids[0]) == 409_600 and len(ids[1]) == len(ids[2]) == 20_000
    assert duplicates(*ids) == 0
    assert min(ids[1]) > max(ids[0]), "the successor started under the holder's lead"


def test_a_forked_child_takes_over_above_its_parent(holders, tmp_path):
    # The parent (monotonic, 100 ms ahead after a burst) forks and exits with its generator
    # open; the child waits for it to be gone, then makes a generator with the parent's node id.
    out = tmp_path / "parent"
    parent = holders(NODE=963, OUT=out, END="fork")
    child = int(parent.line("CHILD").split()[1])
    try:
        parent.wait()
        child_out = f"{out}.child"
        deadline = time.monotonic() + 20
        err = f"{out}.err"
        while not os.path.exists(child_out):
            assert not os.path.exists(err), f"the forked child {child} failed: {open(err).read()}"
            assert time.monotonic() < deadline, f"the forked child {child} wrote nothing in 20 s"
            time.sleep(0.02)
    finally:
        try:  # not ours to wait for: it is the parent's child (reparented when the parent exited)
            os.kill(child, signal.SIGKILL)
        except ProcessLookupError:
            pass
    p, c = read_ids(out), read_ids(child_out)
    assert (len(p), len(c)) == (409_600, 20_000)
    assert duplicates(p, c) == 0
    # The child started above everything the parent issued, its lead included.
    assert min(c) > max(p)


def test_a_python_clock_is_exempt_from_the_host_claim(holders, tmp_path):
    # Two processes with a callable clock and one node id both run: their times are not the
    # host's, so they claim in their process only and keep no mark.
    a = holders(NODE=966, OUT=tmp_path / "a", CLOCK="user", COUNT=10, END="hang")
    b = holders(NODE=966, OUT=tmp_path / "b", CLOCK="user", COUNT=10, END="hang")
    assert a.line("READY").startswith("READY 966 ok") and b.line("READY").startswith("READY 966 ok")
    assert "REFUSED" not in a.line("DONE") + b.line("DONE")
    a.kill()
    b.kill()
    # A holder on the system clock is the host's: a system-clock generator here is refused...
    s = holders(NODE=966, OUT=tmp_path / "s", COUNT=10, END="hang")
    s.line("DONE")
    with pytest.raises(polyflake.NodeIdInUse) as info:
        Snowflake(966, state_dir=tmp_path, host_scope=holders.scope)
    assert info.value.holder_pid == s.proc.pid
    # ... a callable clock here is not (and keeps no mark),
    clock = lambda: time.time_ns() // 1_000_000  # noqa: E731
    with Snowflake(966, clock=clock, state_dir=tmp_path, host_scope=holders.scope) as g:
        assert g.next_id() > 0 and g.health().lease is None
        # but in this process the one-generator-per-node-id rule holds.
        with pytest.raises(polyflake.NodeIdInUse) as info:
            MonotonicSnowflake(966, clock=clock, host_scope=holders.scope)
        assert info.value.holder_pid is None and info.value.holder == ""


def test_a_lease_and_a_static_id_share_one_claim(holders, tmp_path):
    layout = (41, 3, 19)  # 8 node ids
    state, leases = tmp_path / "state", tmp_path / "leases"
    state.mkdir()
    scope = holders.scope

    def static(n):
        return Snowflake(n, layout=layout, state_dir=state, host_scope=scope)

    def lease(d):
        return Snowflake.from_file_lease(d, slots=8, layout=layout, reserve_ms=50, host_scope=scope)

    # In this process: a static holder of 0, so a lease skips slot 0 (it takes 1); a static 1
    # is then refused, naming this process (no pid: the holder is here).
    with static(0), lease(leases) as held:
        assert held.node_id == 1
        with pytest.raises(polyflake.NodeIdInUse) as info:
            static(1)
        assert info.value.holder_pid is None and info.value.holder == ""
    # Another process holding slot 0 of a lease: a static 0 here is refused naming it.
    other = holders(LEASE=tmp_path / "other", LAYOUT="41/3/19", OUT=tmp_path / "ids", COUNT=10, END="hang")
    assert other.line("READY").startswith("READY 0 ")
    other.line("DONE")
    with pytest.raises(polyflake.NodeIdInUse) as info:
        static(0)
    e = info.value
    assert e.node_id == 0 and e.holder_pid == other.proc.pid
    assert e.holder.startswith(f"process {other.proc.pid} (") and e.holder in str(e), e.holder
    other.kill()
    # Another process holding a static 2: a lease here skips slot 2.
    s2 = holders(NODE=2, LAYOUT="41/3/19", OUT=tmp_path / "ids2", COUNT=10, END="hang")
    s2.line("DONE")
    fresh = tmp_path / "fresh"
    with lease(fresh) as a, lease(fresh) as b, lease(fresh) as c:
        assert sorted([a.node_id, b.node_id, c.node_id]) == [0, 1, 3]


def test_a_directory_that_cannot_keep_a_mark_is_said_or_refused(tmp_path):
    not_a_dir = tmp_path / "file"
    not_a_dir.write_bytes(b"")
    scope = f"nodir-{os.getpid()}"
    with pytest.raises(polyflake.LeaseStore) as info:
        Snowflake(965, restart_guard="required", state_dir=not_a_dir, host_scope=scope)
    assert str(not_a_dir) in str(info.value) and "POLYFLAKE_STATE_DIR" in str(info.value)
    # Auto (the default): issues without a mark, and says so (a read-only container).
    with Snowflake(965, state_dir=not_a_dir, host_scope=scope) as g:
        h = g.health()
        assert h.ok and h.lease is None and "no restart guard" in h.restart_guard_note, h
        assert g.next_id() > 0
    with Snowflake(965, restart_guard="off", state_dir=not_a_dir, host_scope=scope) as g:
        assert g.health().restart_guard_note.startswith("off")


def test_the_environment_names_the_guard(tmp_path):
    # POLYFLAKE_RESTART_GUARD and POLYFLAKE_STATE_DIR stand for the keywords left None; a value
    # the guard does not know is refused, echoing it.
    code = ("import os, polyflake\n"
            "g = polyflake.Snowflake(967, host_scope='env-' + str(os.getpid()))\n"
            "h = g.health()\n"
            "print(h.lease.store if h.lease else 'none', '|', h.restart_guard_note)\n")
    run = lambda **env: subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,  # noqa: E731
                                       env={**os.environ, **env}, timeout=60)
    out = run(POLYFLAKE_STATE_DIR=str(tmp_path), POLYFLAKE_RESTART_GUARD="required")
    assert out.returncode == 0 and out.stdout.startswith(str(tmp_path)), out
    out = run(POLYFLAKE_RESTART_GUARD="off")
    assert out.stdout.startswith("none | off"), out
    out = run(POLYFLAKE_RESTART_GUARD="sometimes")
    assert out.returncode != 0 and "InvalidArgument" in out.stderr and '"sometimes"' in out.stderr, out
