"""The Python participant of the cross-language uniqueness run (Snowflake IDs, or UUIDv7s):

    .venv/bin/python tests/polyglot/participant.py LEASE_DIR SECONDS OUT_PATH [uuidv7]

A strict generator (default layout and epoch) on a file lease of LEASE_DIR (default slots,
identity "python"), or, when LEASE_DIR is `zk://HOST:PORT[,HOST:PORT]/PREFIX`, on a ZooKeeper
lease from that ensemble under the znode prefix `/PREFIX` (identity "python", other settings
the defaults), waiting out the restart guard (`wait_ready`) for up to 15 s; single
next_id() calls at full speed for SECONDS (the time is checked every 1,024 IDs), the IDs kept in
an array('q') (8 bytes each, no object per ID); then OUT_PATH gets them as raw little-endian u64
in issue order and OUT_PATH + ".json" a summary.

With `uuidv7`: no lease (LEASE_DIR is ignored); single `polyflake.uuid7_bytes()` calls (the
process-wide strict UUIDv7 generator) at full speed for SECONDS, OUT_PATH gets them as 16 bytes
big-endian each in issue order, and the summary says `"format": "uuidv7"`, `"node_id": null`,
`first`/`last` as UUID text.

Exit 0 on success; any error: one line on stderr, exit 1. It uses the polyflake wheel installed
in the venv that runs it.
"""

import array
import json
import sys
import time

GUARD_WAIT_S = 15.0
CHECK_EVERY = 1024


ZOOKEEPER_SCHEME = "zk://"


def zookeeper_lease(lease_dir):
    """`zk://HOST:PORT[,HOST:PORT]/PREFIX` as (ensemble, "/PREFIX"); None for a directory. The
    core judges both parts (host:port each, an absolute prefix)."""
    if not lease_dir.startswith(ZOOKEEPER_SCHEME):
        return None
    ensemble, slash, prefix = lease_dir[len(ZOOKEEPER_SCHEME):].partition("/")
    if not slash:
        raise ValueError(f"LEASE_DIR {lease_dir!r}: zk://HOST:PORT[,HOST:PORT]/PREFIX has no /PREFIX")
    return ensemble, "/" + prefix


def start(polyflake, lease_dir):
    """The generator, once its slot's restart guard has passed (a new slot, or one whose
    previous holder may have issued up to a time this clock has not reached): at most 15 s."""
    zookeeper = zookeeper_lease(lease_dir)
    if zookeeper is None:
        gen = polyflake.Snowflake.from_file_lease(lease_dir, identity="python")
    else:
        ensemble, prefix = zookeeper
        gen = polyflake.Snowflake.from_zookeeper(ensemble, prefix=prefix, identity="python")
    gen.wait_ready(GUARD_WAIT_S * 1000)
    return gen, gen.next_id()


def mint_uuidv7(polyflake, seconds, out):
    """UUIDv7s with single calls for `seconds`; OUT_PATH gets 16 bytes each, big-endian."""
    ids = bytearray()  # 16 bytes per ID, no object kept per ID
    append, uuid7_bytes, clock = ids.extend, polyflake.uuid7_bytes, time.perf_counter
    append(uuid7_bytes())
    began = clock()
    end = began + seconds
    batch = range(CHECK_EVERY)
    while clock() < end:
        for _ in batch:
            append(uuid7_bytes())
    elapsed = clock() - began
    with open(out, "wb") as f:
        f.write(ids)
    return {
        "language": "python",
        "format": "uuidv7",
        "node_id": None,
        "count": len(ids) // 16,
        "seconds": elapsed,
        "first": polyflake.format_uuid(bytes(ids[:16])),
        "last": polyflake.format_uuid(bytes(ids[-16:])),
    }


def main(argv):
    if len(argv) not in (4, 5) or argv[4:] not in ([], ["uuidv7"]):
        raise SystemExit("usage: participant.py LEASE_DIR SECONDS OUT_PATH [uuidv7]")
    lease_dir, seconds_arg, out = argv[1:4]
    seconds = float(seconds_arg)
    if not seconds >= 0 or seconds == float("inf"):
        raise ValueError(f"SECONDS must be a finite number >= 0, got {seconds_arg!r}")
    import polyflake

    if argv[4:] == ["uuidv7"]:
        summary = mint_uuidv7(polyflake, seconds, out)
        with open(out + ".json", "w", encoding="utf-8") as f:
            json.dump(summary, f)
        return
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
