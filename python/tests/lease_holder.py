"""A child process of test_quiet_faults.py (not a test):

    python lease_holder.py LEASE_DIR OUT_PATH MS

Takes a slot of a file lease (slots=1, reserve_ms=500) on the system clock, waits out its
restart guard, prints `NODE <n>`, then issues batches at full speed for MS milliseconds (or until
a call fails), writing the IDs to OUT_PATH as raw int64; ends with `END <OK or error code>
<health status>`.
"""

import array
import sys
import time

import polyflake


def main(lease_dir, out, ms):
    g = polyflake.Snowflake.from_file_lease(lease_dir, slots=1, reserve_ms=500)
    g.wait_ready(30_000)
    print(f"NODE {g.node_id}", flush=True)
    ids = array.array("q")
    end, until = "OK", time.monotonic() + ms / 1000
    while time.monotonic() < until:
        try:
            ids.extend(g.next_ids(1000))
        except polyflake.PolyflakeError as e:
            end = e.code
            break
    with open(out, "wb") as f:
        ids.tofile(f)
    print(f"END {end} {g.health().status}", flush=True)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]))
