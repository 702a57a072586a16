"""After fork() a generator made in the parent refuses in the child (it shares the parent's node
id and state), with UsedAfterFork; a fresh generator in the child works."""

import multiprocessing
import os

import pytest

import polyflake

from conftest import run_in_child

# Made at import, before any worker forks: the multiprocessing test's workers inherit it.
INHERITED = polyflake.Snowflake(node_id=901)


@pytest.mark.parametrize("cls", [polyflake.Snowflake, polyflake.MonotonicSnowflake])
def test_os_fork_child_refuses(cls):
    g = cls(node_id=902 if cls is polyflake.Snowflake else 903)
    parent_id = g.next_id()

    def child():
        try:
            g.next_id()
        except polyflake.UsedAfterFork as e:
            ok = isinstance(e, polyflake.PolyflakeError) and e.code == "USED_AFTER_FORK"
            if not ok:
                return 2
        else:
            return 1
        try:
            g.next_ids(10)
            return 3
        except polyflake.UsedAfterFork:
            pass
        h = g.health()
        if h.ok or h.status != "used_after_fork":
            return 4
        # A generator made in the child, even with the same node id, works.
        fresh = cls(node_id=g.node_id)
        return 0 if fresh.next_id() > 0 else 5

    assert run_in_child(child) == 0
    # The parent is unaffected.
    assert g.next_id() > parent_id
    assert g.health().ok


def _use_inherited(_):
    try:
        INHERITED.next_id()
        return "issued"
    except polyflake.UsedAfterFork as e:
        return type(e).__name__


def _raise_inherited(_):
    return INHERITED.next_id()


def test_multiprocessing_fork_pool_refuses():
    INHERITED.next_id()
    ctx = multiprocessing.get_context("fork")
    with ctx.Pool(2) as pool:
        assert pool.map(_use_inherited, range(4)) == ["UsedAfterFork"] * 4
        # The exception itself crosses the process boundary (it pickles by class name).
        with pytest.raises(polyflake.UsedAfterFork) as info:
            pool.apply(_raise_inherited, (0,))
    assert info.value.node_id == 901
    assert INHERITED.next_id() > 0
