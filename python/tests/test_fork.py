"""After fork() a generator made in the parent refuses in the child (it shares the parent's node
id and state), with UsedAfterFork. A static node id is held host-wide: while the
parent lives, a child (or any other process) asking for it is refused with NodeIdInUse naming
the holder's pid; once the parent closes its generator, the child can take it."""

import multiprocessing
import os
import subprocess
import sys
import textwrap

import pytest

import polyflake

from conftest import run_in_child

# Made at import, before any worker forks: the multiprocessing test's workers inherit it.
INHERITED = polyflake.Snowflake(node_id=901)


@pytest.mark.parametrize("cls", [polyflake.Snowflake, polyflake.MonotonicSnowflake])
def test_os_fork_child_refuses(cls):
    node = 902 if cls is polyflake.Snowflake else 903
    g = cls(node_id=node)
    parent_id = g.next_id()
    to_parent_r, to_parent_w = os.pipe()
    to_child_r, to_child_w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: its exit code says what failed
        code = 99
        try:
            os.close(to_parent_r)
            os.close(to_child_w)
            code = _child_checks(cls, g, node, to_parent_w, to_child_r)
        except BaseException:  # noqa: BLE001 - any escape is a failure code
            import traceback

            traceback.print_exc()
            code = 98
        finally:
            os._exit(code)
    os.close(to_parent_w)
    os.close(to_child_r)
    # The child has checked the refusals while this generator lived; now hand the id over.
    assert os.read(to_parent_r, 16) == b"refused", "the child failed before the handover"
    # The parent is unaffected by the child.
    last = g.next_id()
    assert last > parent_id and g.health().ok
    g.close()
    os.write(to_child_w, str(last).encode())
    os.close(to_child_w)
    _, status = os.waitpid(pid, 0)
    os.close(to_parent_r)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, status


def _child_checks(cls, g, node, to_parent, from_parent):
    # The inherited generator refuses.
    try:
        g.next_id()
        return 1
    except polyflake.UsedAfterFork as e:
        if not (isinstance(e, polyflake.PolyflakeError) and e.code == "USED_AFTER_FORK"):
            return 2
    try:
        g.next_ids(10)
        return 3
    except polyflake.UsedAfterFork:
        pass
    h = g.health()
    if h.ok or h.status != "used_after_fork":
        return 4
    # The parent's static id, while the parent holds it: refused, naming the parent.
    for _ in range(2):  # and again: a refusal leaves nothing behind
        try:
            cls(node_id=node)
            return 5
        except polyflake.NodeIdInUse as e:
            if e.holder_pid != os.getppid() or e.node_id != node:
                print("holder", e.holder_pid, "parent", os.getppid(), file=sys.stderr)
                return 6
            named = f"process {os.getppid()} (python"
            if not (e.holder.startswith(named) and named in str(e) and "lease" in str(e)):
                print(str(e), file=sys.stderr)
                return 7
    os.write(to_parent, b"refused")
    # The parent closes its generator and sends its last ID: the id is the child's now.
    last = int(os.read(from_parent, 32).decode())
    fresh = cls(node_id=node)
    first = fresh.next_id()
    if first <= last or fresh.decode(first)["node_id"] != node:
        print("parent's last", last, "child's first", first, file=sys.stderr)
        return 8
    fresh.close()
    return 0


def test_a_sibling_child_cannot_take_a_static_id_its_sibling_holds():
    """Two forked workers (the parent holds nothing) both make node 921: the second is refused,
    naming the first (a pre-fork server's workers with one configured id)."""
    r, w = os.pipe()
    first = os.fork()
    if first == 0:
        code = 99
        try:
            os.close(r)
            g = polyflake.Snowflake(node_id=921)
            g.next_id()
            os.write(w, b"holding")
            os.close(w)
            # Hold it until the parent has asked the sibling (the parent kills this child).
            import time

            time.sleep(60)
            code = 0
        finally:
            os._exit(code)
    os.close(w)
    assert os.read(r, 16) == b"holding"
    os.close(r)
    try:

        def sibling():
            try:
                polyflake.Snowflake(node_id=921)
                return 1
            except polyflake.NodeIdInUse as e:
                ok = e.holder_pid == first and e.holder.startswith(f"process {first} (")
                return 0 if ok else 2

        assert run_in_child(sibling) == 0
    finally:
        os.kill(first, 9)
        os.waitpid(first, 0)
    # The holder died without closing anything: the id is free again, here too.
    with polyflake.Snowflake(node_id=921) as g:
        assert g.next_id() > 0


def _second_process(node, hold_s=0.0):
    """Python code that asks for `node` and prints what happened (holding it `hold_s` s)."""
    return textwrap.dedent(f"""
        import os, sys, time
        import polyflake
        try:
            g = polyflake.Snowflake(node_id={node})
        except polyflake.NodeIdInUse as e:
            print("REFUSED", e.holder_pid, e.node_id, e.holder, "|", str(e), flush=True)
            sys.exit(0)
        print("HOLDING", os.getpid(), flush=True)
        sys.stdin.read() if {hold_s} else None
        print("TOOK", g.next_id(), flush=True)
    """)


def test_a_second_process_is_refused_a_held_static_id():
    g = polyflake.Snowflake(node_id=922)
    last = g.next_ids(5000)[-1]  # 2 ms of IDs: the holder's last is in the current millisecond
    out = subprocess.run([sys.executable, "-c", _second_process(922)], capture_output=True,
                         text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    word, holder, node, rest = out.stdout.split(" ", 3)
    named, message = rest.split(" | ", 1)
    assert (word, int(holder), int(node)) == ("REFUSED", os.getpid(), 922), out.stdout
    # The holder in words: its pid and its name (this test's python), on this host.
    assert named.startswith(f"process {os.getpid()} (python") and named.endswith(" on this host")
    assert f"node id 922 is already held by {named}" in message
    g.close()
    # Closed here: the other process takes it.
    out = subprocess.run([sys.executable, "-c", _second_process(922)], capture_output=True,
                         text=True, timeout=60)
    took = [line for line in out.stdout.splitlines() if line.startswith("TOOK ")]
    assert took, (out.stdout, out.stderr)
    # The new holder starts after the old holder's last millisecond: no repeat across processes.
    assert int(took[0].split()[1]) > last


def test_a_static_id_held_by_another_process_is_refused_here():
    holder = subprocess.Popen([sys.executable, "-c", _second_process(923, hold_s=1)],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        line = holder.stdout.readline().split()
        assert line[:2] == ["HOLDING", str(holder.pid)], line
        with pytest.raises(polyflake.NodeIdInUse) as info:
            polyflake.Snowflake(node_id=923)
        assert info.value.holder_pid == holder.pid
        assert info.value.holder.startswith(f"process {holder.pid} (python")
        assert info.value.holder in str(info.value)
        # A test clock is exempt (it never mints real IDs).
        from polyflake.testing import ManualClock

        assert polyflake.Snowflake(923, clock=ManualClock(1_737_747_358_021)).next_id() > 0
    finally:
        holder.stdin.close()
        holder.wait(timeout=60)
    assert holder.returncode == 0


def _use_inherited(_):
    try:
        INHERITED.next_id()
        return "issued"
    except polyflake.UsedAfterFork as e:
        return type(e).__name__


def _raise_inherited(_):
    return INHERITED.next_id()


def _take_inherited_id(_):
    """A pool worker asks for the static id its parent (this test process) holds."""
    try:
        polyflake.Snowflake(node_id=INHERITED.node_id)
        return "issued"
    except polyflake.NodeIdInUse as e:
        return (type(e).__name__, e.holder_pid == os.getppid(), e.holder_pid)


def test_multiprocessing_fork_pool_refuses():
    INHERITED.next_id()
    ctx = multiprocessing.get_context("fork")
    with ctx.Pool(2) as pool:
        assert pool.map(_use_inherited, range(4)) == ["UsedAfterFork"] * 4
        taken = pool.map(_take_inherited_id, range(4))
        assert taken == [("NodeIdInUse", True, os.getpid())] * 4, taken
        # The exception itself crosses the process boundary (it pickles by class name).
        with pytest.raises(polyflake.UsedAfterFork) as info:
            pool.apply(_raise_inherited, (0,))
    assert info.value.node_id == 901
    assert INHERITED.next_id() > 0
