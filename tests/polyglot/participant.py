"""The Python participant of the cross-language uniqueness run (issue 8):

    .venv/bin/python tests/polyglot/participant.py LEASE_DIR SECONDS OUT_PATH

A strict generator (default layout and epoch) on a file lease of LEASE_DIR (default slots,
identity "python"), waiting out the restart guard (`wait_ready`) for up to 15 s; single
next_id() calls at full speed for SECONDS (the time is checked every 1,024 IDs), the IDs kept in
an array('q') (8 bytes each, no object per ID); then OUT_PATH gets them as raw little-endian u64
in issue order and OUT_PATH + ".json" a summary. Exit 0 on success; any error: one line on
stderr, exit 1. It uses the polyflake wheel installed in the venv that runs it.
"""

import array
import json
import sys
import time

GUARD_WAIT_S = 15.0
CHECK_EVERY = 1024


def start(polyflake, lease_dir):
    """The generator, once its slot's restart guard has passed (a new slot, or one whose
    previous holder may have issued up to a time this clock has not reached): at most 15 s."""
    gen = polyflake.Snowflake.from_file_lease(lease_dir, identity="python")
    gen.wait_ready(GUARD_WAIT_S * 1000)
    return gen, gen.next_id()


def main(argv):
    if len(argv) != 4:
        raise SystemExit("usage: participant.py LEASE_DIR SECONDS OUT_PATH")
    lease_dir, seconds_arg, out = argv[1:]
    seconds = float(seconds_arg)
    if not seconds >= 0 or seconds == float("inf"):
        raise ValueError(f"SECONDS must be a finite number >= 0, got {seconds_arg!r}")
    import polyflake

    gen, first = start(polyflake, lease_dir)
    ids = array.array("q", [first])
    append, next_id, clock = ids.append, gen.next_id, time.perf_counter
    began = clock()
    end = began + seconds
    batch = range(CHECK_EVERY)
    while clock() < end:
        for _ in batch:
            append(next_id())
    elapsed = clock() - began
    node_id = gen.node_id

    if sys.byteorder != "little":
        ids.byteswap()
    with open(out, "wb") as f:
        ids.tofile(f)
    if sys.byteorder != "little":
        ids.byteswap()
    summary = {
        "language": "python",
        "node_id": node_id,
        "count": len(ids),
        "seconds": elapsed,
        "first": str(ids[0]),
        "last": str(ids[-1]),
    }
    with open(out + ".json", "w", encoding="utf-8") as f:
        json.dump(summary, f)
    gen.close()


if __name__ == "__main__":
    try:
        main(sys.argv)
    except SystemExit:
        raise
    except BaseException as e:  # noqa: BLE001 - the protocol: one line on stderr, exit 1
        line = str(e).splitlines()[0] if str(e) else ""
        sys.stderr.write(f"participant.py: {type(e).__name__}: {line}\n")
        sys.exit(1)
