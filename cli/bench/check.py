#!/usr/bin/env python3
"""The service's rows of `make bench-check`: one keep-alive client (wrk -t1 -c1) minting 64-bit
IDs with POST /v1/ids, against the same client decoding an ID with GET /v1/ids/{id} on the same
server (an HTTP round trip that touches no generator): the ratio is what minting adds to a
request. Rounds interleave the two; medians. Prints the JSON rows verify/bench/check.py reads.

    cli/bench/check.py POLYFLAKE_BIN [SECONDS_PER_RUN] [ROUNDS]
"""

import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

LITERAL = "141264821508263936"


def wrk(url, seconds, lua=None):
    cmd = ["wrk", "-t1", "-c1", f"-d{seconds}s"]
    if lua:
        cmd += ["-s", lua]
    out = subprocess.run(cmd + [url], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, check=True).stdout
    m = re.search(r"Requests/sec:\s+([0-9.]+)", out)
    if not m or "Non-2xx" in out:
        raise SystemExit(f"wrk did not measure {url}:\n{out}")
    return float(m.group(1))


def main():
    binary = sys.argv[1]
    seconds = int(sys.argv[2]) if len(sys.argv) > 2 else 2
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 3
    with tempfile.TemporaryDirectory() as tmp:
        out_path = os.path.join(tmp, "serve.out")
        env = dict(os.environ, POLYFLAKE_HOST_SCOPE=f"bench-check-{os.getpid()}")
        with open(out_path, "w") as out:
            server = subprocess.Popen(
                [binary, "serve", "--listen", "127.0.0.1:0", "--node-id", "901", "--max-count", "4096",
                 "--restart-guard", "off"],
                stdout=out, stderr=subprocess.DEVNULL, env=env)
        try:
            url = None
            for _ in range(200):
                with open(out_path) as f:
                    m = re.search(r"http://[0-9.:]+", f.read())
                if m:
                    url = m.group(0)
                    break
                time.sleep(0.05)
            if not url:
                raise SystemExit("the service did not start")
            rows = {}
            for count in (1, 100):
                lua = os.path.join(tmp, f"post{count}.lua")
                with open(lua, "w") as f:
                    f.write('wrk.method = "POST"\n'
                            f'wrk.body = "{{\\"count\\": {count}}}"\n'
                            'wrk.headers["Content-Type"] = "application/json"\n')
                req = urllib.request.Request(f"{url}/v1/ids", data=json.dumps({"count": count}).encode(),
                                             headers={"Content-Type": "application/json"})
                assert len(json.load(urllib.request.urlopen(req))["ids"]) == count
                rows[count] = ([], [])
                for _ in range(rounds):
                    rows[count][0].append(1e9 / wrk(f"{url}/v1/ids", seconds, lua))
                    rows[count][1].append(1e9 / wrk(f"{url}/v1/ids/{LITERAL}", seconds))
            for count, (mint, decode) in rows.items():
                ratios = [m / d for m, d in zip(mint, decode)]
                print(json.dumps({
                    "row": f"service POST /v1/ids count {count}, one keep-alive client",
                    "ns": round(statistics.median(mint), 1),
                    "reference": "GET /v1/ids/{id} (decode), one keep-alive client",
                    "reference_ns": round(statistics.median(decode), 1),
                    "ratio": round(statistics.median(ratios), 4),
                    "ids_per_s": round(count * 1e9 / statistics.median(mint)),
                }))
        finally:
            server.terminate()
            server.wait(timeout=20)


if __name__ == "__main__":
    main()
