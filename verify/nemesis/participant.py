"""A nemesis participant in Python: lease a slot from etcd and mint until killed.

Usage: participant.py ETCD_URL PREFIX SLOTS NAME OUT_PATH [TTL_S]

Each batch is appended to OUT_PATH as one record: u32 count, i64 R (the lease's high-water
mark right after the batch, Unix ms), then `count` IDs (u64), all little-endian. A refusal is
retried; a lost lease ends the process with exit code 3 (the harness starts a new one) after one
line on stderr, "NAME: LEASE_LOST: why" (the harness times it); a failed renewal, as soon as a
batch sees it, is a line "NAME: LEASE_FAILURES count: error". TTL_S: the etcd lease's time to
live (default 2).
"""

import os
import struct
import sys
import time

from polyflake import PolyflakeError, Snowflake


def main() -> int:
    url, prefix, slots, name, out = sys.argv[1:6]
    ttl_s = int(sys.argv[6]) if len(sys.argv) > 6 else 2
    while True:
        try:
            g = Snowflake.from_etcd(url, prefix=prefix, slots=int(slots), identity=name,
                                    reserve_ms=500, ttl_s=ttl_s, connect_timeout_ms=1000)
            break
        except PolyflakeError as e:  # every slot held for now, or etcd away: try again
            print(f"{name}: {e.code}", file=sys.stderr, flush=True)
            time.sleep(0.2)
    fd = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    failures = 0
    while True:
        try:
            ids = g.next_ids(1000)
        except PolyflakeError as e:
            if e.code == "LEASE_LOST":
                print(f"{name}: LEASE_LOST: {e}", file=sys.stderr, flush=True)
                return 3
            time.sleep(0.005)
            continue
        health = g.health()
        if health.lease_failures != failures:  # a renewal failed (timed out): tell the harness
            failures = health.lease_failures
            print(f"{name}: LEASE_FAILURES {failures}: {health.lease.last_error}",
                  file=sys.stderr, flush=True)
        os.write(fd, struct.pack("<Iq", len(ids), health.lease.high_water_ms) + ids.tobytes())


if __name__ == "__main__":
    sys.exit(main())
