"""A holder process of test_static_guard.py (not a test): a generator on a fixed node id (or a
file lease's slot), configured by the environment, which mints and then lets go.

    python static_holder.py

Environment: `NODE`, `MODE` (strict | monotonic), `STATE` (the state directory), `SCOPE` (the
host scope), `OUT` (its IDs, raw int64), `COUNT` (IDs to mint one by one), `BURST` (a batch
minted first: a monotonic holder runs ahead by it), `MS` (mint for this long instead of
`COUNT`), `RETRY` (retry the build while the node id is in use), `CLOCK=user` (a Python callable
clock instead of the system clock), `LEASE` (a file lease directory instead of `NODE`: one slot
of `LAYOUT`), `LAYOUT` (t/n/s), `END`: `close` (close, then exit), `exit` (exit with the
generator open and referenced past the interpreter's end: the C library's exit handlers leave
its mark), `hang` (print DONE, then wait to be killed), `fork` (see `forker`).

Prints `READY <node> <status before the first call> <guard_remaining_ms>` once built, then
`DONE waits=<restart_waits> status=<health status> first_ms=<the first call's time>` and, when
a call was refused, ` REFUSED <code> <message>`.
"""

import array
import ctypes
import os
import sys
import time
import traceback

import polyflake


def env(name, default=None):
    value = os.environ.get(name, default)
    if value is None:
        raise SystemExit(f"{name} is not set")
    return value


def settings():
    s = {"host_scope": env("SCOPE")}
    layout = os.environ.get("LAYOUT")
    if layout:
        s["layout"] = tuple(map(int, layout.split("/")))
    if os.environ.get("CLOCK") == "user":
        s["clock"] = lambda: time.time_ns() // 1_000_000
    return s


def build():
    monotonic = env("MODE", "strict") == "monotonic"
    cls = polyflake.MonotonicSnowflake if monotonic else polyflake.Snowflake
    s = settings()
    if monotonic:
        s["max_lead_ms"] = 60_000
    if os.environ.get("LEASE"):
        g = cls.from_file_lease(env("LEASE"), slots=1, reserve_ms=50, **s)
        g.wait_ready(10_000)
        return g
    # "required" goes with the system clock: the core refuses it on an injected one (which
    # keeps no mark, its times not being the host's).
    guard = "auto" if "clock" in s else "required"
    return cls(int(env("NODE")), restart_guard=guard, state_dir=env("STATE"), **s)


def build_retrying():
    started = time.monotonic()
    while True:
        try:
            return build()
        except polyflake.NodeIdInUse:
            if env("RETRY", "") != "1" or time.monotonic() - started > 20:
                raise
            time.sleep(0.0002)


def status_line(g):
    h = g.health()
    remaining = h.lease.guard_remaining_ms if h.lease is not None else 0
    return f"{h.status} {remaining}"


def forker():
    """The parent mints a monotonic burst (100 ms of IDs at once: it runs ahead), writes its
    IDs, forks and exits with its generator open; the child waits for it to be gone, then takes
    the same node id (strict) and mints 20,000 IDs into OUT.child."""
    node, out = int(env("NODE")), env("OUT")
    g = polyflake.MonotonicSnowflake(node, max_lead_ms=60_000, restart_guard="required",
                                     state_dir=env("STATE"), host_scope=env("SCOPE"))
    with open(out, "wb") as f:
        g.next_ids(409_600).tofile(f)
    pid = os.fork()
    if pid == 0:
        code = 99
        try:
            parent = os.getppid()
            while os.getppid() == parent:
                time.sleep(0.001)
            g2 = polyflake.Snowflake(node, restart_guard="required", state_dir=env("STATE"),
                                     host_scope=env("SCOPE"))
            ids = array.array("q", (g2.next_id() for _ in range(20_000)))
            with open(out + ".tmp", "wb") as f:
                ids.tofile(f)
            os.rename(out + ".tmp", out + ".child")
            code = 0
        except BaseException:  # said where the test looks, as the child's stderr may be gone
            with open(out + ".err", "w") as f:
                traceback.print_exc(file=f)
        finally:
            os._exit(code)
    print(f"CHILD {pid}", flush=True)
    leak(g)
    sys.exit(0)


def leak(g):
    """Keep `g` referenced past the interpreter's end: nothing in Python closes it, so its mark is
    left by the C library's exit handlers (what a process exiting with a generator open does)."""
    ctypes.pythonapi.Py_IncRef(ctypes.py_object(g))


def main():
    if env("END", "close") == "fork":
        return forker()
    g = build_retrying()
    print(f"READY {g.node_id} {status_line(g)}", flush=True)
    ids = array.array("q")
    refused = ""
    started = time.monotonic()
    first_ms = -1.0
    try:
        burst = int(env("BURST", "0"))
        if burst:
            ids.extend(g.next_ids(burst))
        count, ms = int(env("COUNT", "0")), int(env("MS", "0"))
        until = time.monotonic() + ms / 1000
        n = 0
        while n < count or time.monotonic() < until:
            ids.append(g.next_id())
            if first_ms < 0:
                first_ms = (time.monotonic() - started) * 1000
            n += 1
    except polyflake.PolyflakeError as e:
        refused = f" REFUSED {e.code} {e}"
    with open(env("OUT"), "wb") as f:
        ids.tofile(f)
    h = g.health()
    print(f"DONE waits={h.restart_waits} status={h.status} first_ms={first_ms:.0f}{refused}",
          flush=True)
    end = env("END", "close")
    if end == "exit":
        leak(g)
        sys.exit(0)
    if end == "hang":
        while True:
            time.sleep(1)
    g.close()


if __name__ == "__main__":
    main()
