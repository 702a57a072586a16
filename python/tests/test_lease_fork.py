"""Fork with leases: a lease-backed generator made before os.fork() takes a FRESH slot in the
child before its next ID (the parent's slot stays the parent's), in an os.fork() child and in
every worker of a multiprocessing 'fork' pool; the union of all IDs has no duplicate. (A static
generator still refuses after fork: test_fork.py.)"""

import array
import multiprocessing
import os
import threading

import polyflake
from polyflake import MonotonicSnowflake, Snowflake

from conftest import run_in_child

PER_PROCESS = 20_000


def mint(g, n=PER_PROCESS):
    g.wait_ready()  # a fresh slot (a forked child's included) waits out its restart guard first
    out = array.array("q")
    for _ in range(n):
        out.append(g.next_id())
    return out


def check_union(batches):
    """batches: [(node_id, array of IDs)]; every ID carries its process's node id, each node
    strictly increases, and the union has no duplicate."""
    seen = set()
    total = 0
    for node, ids in batches:
        assert {polyflake.decode(x)["node_id"] for x in ids} == {node}
        assert all(a < b for a, b in zip(ids, ids[1:]))
        seen.update(ids)
        total += len(ids)
    assert len(seen) == total


def test_os_fork_child_gets_a_fresh_slot(tmp_path):
    g = Snowflake.from_file_lease(tmp_path, slots=16, identity="py-fork", reserve_ms=200)
    parent_node = g.node_id
    before = mint(g, 5000)
    out = tmp_path / "child.bin"

    def child():
        ids = mint(g)
        node = g.node_id  # the fresh slot, taken by the first call
        h = g.health()
        if not h.ok or h.lease.slot != node or node == parent_node:
            return 2
        with open(out, "wb") as f:
            f.write(node.to_bytes(4, "little") + ids.tobytes())
        return 0

    assert run_in_child(child) == 0
    raw = out.read_bytes()
    child_node = int.from_bytes(raw[:4], "little")
    child_ids = array.array("q", raw[4:])
    after = mint(g)
    assert g.node_id == parent_node and child_node != parent_node
    assert len(child_ids) == PER_PROCESS
    check_union([(parent_node, before + after), (child_node, child_ids)])


def test_os_fork_child_of_a_monotonic_lease(tmp_path):
    g = MonotonicSnowflake.from_file_lease(tmp_path, slots=16, identity="py-fork-m", reserve_ms=200)
    g.wait_ready()
    parent_node = g.node_id
    before = g.next_ids(10_000)
    out = tmp_path / "child.bin"

    def child():
        g.wait_ready()  # re-leases, then waits out the fresh slot's guard
        ids = g.next_ids(10_000)
        with open(out, "wb") as f:
            f.write(g.node_id.to_bytes(4, "little") + ids.tobytes())
        return 0

    assert run_in_child(child) == 0
    raw = out.read_bytes()
    child_node = int.from_bytes(raw[:4], "little")
    check_union([(parent_node, before + g.next_ids(10_000)), (child_node, array.array("q", raw[4:]))])
    assert child_node != parent_node


# Set by the pool test before the pool forks: every worker inherits it.
INHERITED = None
BARRIER = None


def _worker_mint(_):
    # All four workers meet here first, so each of the four processes runs one task.
    BARRIER.wait(timeout=60)
    ids = mint(INHERITED)
    return os.getpid(), INHERITED.node_id, ids.tobytes()


def test_multiprocessing_fork_pool_workers_each_get_a_slot(tmp_path):
    global INHERITED, BARRIER
    ctx = multiprocessing.get_context("fork")
    INHERITED = Snowflake.from_file_lease(tmp_path, slots=16, identity="py-pool", reserve_ms=200)
    BARRIER = ctx.Barrier(4)
    try:
        parent_node = INHERITED.node_id
        before = mint(INHERITED, 5000)
        with ctx.Pool(4) as pool:
            results = pool.map(_worker_mint, range(4), chunksize=1)
        after = mint(INHERITED, 5000)
    finally:
        INHERITED.close()
        INHERITED, BARRIER = None, None
    pids = {pid for pid, _, _ in results}
    nodes = [node for _, node, _ in results]
    assert len(pids) == 4 and os.getpid() not in pids
    assert len(set(nodes)) == 4 and parent_node not in nodes
    batches = [(node, array.array("q", raw)) for _, node, raw in results]
    assert all(len(ids) == PER_PROCESS for _, ids in batches)
    check_union(batches + [(parent_node, before + after)])


def test_fork_while_another_thread_issues(tmp_path):
    """A thread minting in the parent at the moment of fork does not hold anything the child
    needs: the child re-leases and issues."""
    g = Snowflake.from_file_lease(tmp_path, slots=16, identity="py-fork-thread", reserve_ms=200)
    stop = threading.Event()
    parent_ids = array.array("q")

    def spin():
        while not stop.is_set():
            parent_ids.append(g.next_id())

    g.wait_ready()
    t = threading.Thread(target=spin)
    t.start()
    out = tmp_path / "child.bin"
    try:

        def child():
            ids = mint(g, 5000)
            with open(out, "wb") as f:
                f.write(g.node_id.to_bytes(4, "little") + ids.tobytes())
            return 0

        code = run_in_child(child)
    finally:
        stop.set()
        t.join()
    assert code == 0
    raw = out.read_bytes()
    child_node = int.from_bytes(raw[:4], "little")
    assert child_node != g.node_id
    check_union([(g.node_id, parent_ids), (child_node, array.array("q", raw[4:]))])
