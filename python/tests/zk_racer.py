"""A child process of test_zookeeper.py (not a test):

    python zk_racer.py ENSEMBLE PREFIX SLOTS IDENTITY

Tries to take a slot of a ZooKeeper lease (reserve_ms=100), then prints one line: `WON <node id>
<first ID>` (after waiting out the slot's restart guard and issuing an ID) or `LOST <error code>`.
A winner keeps its slot until its stdin closes, so every racer runs while the winners hold theirs.
"""

import sys

import polyflake


def main(ensemble, prefix, slots, identity):
    try:
        g = polyflake.Snowflake.from_zookeeper(
            ensemble, prefix=prefix, slots=slots, identity=identity, reserve_ms=100,
            session_timeout_ms=4000, connect_timeout_ms=5000,
        )
    except polyflake.PolyflakeError as e:
        print(f"LOST {e.code}", flush=True)
        return
    with g:
        g.wait_ready(30_000)
        print(f"WON {g.node_id} {g.next_id()}", flush=True)
        sys.stdin.read()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4])
