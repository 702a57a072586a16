#!/usr/bin/env python3
"""The cross-language uniqueness run.

Starts one participant per language (Rust, C, C++, Go, Python, Node, Java) at the same moment, each
leasing a node id from ONE lease directory and minting strict IDs with single `next_id` calls at
full speed for a few seconds. Then it checks the union: zero duplicates, every node's IDs strictly
increasing, every node id distinct, every ID carrying its own node id. With --report it prints a
per-language table; with --plot it draws the merged stream.

Participant protocol (each language implements it): `PROGRAM LEASE_DIR SECONDS OUT_PATH` writes
OUT_PATH (raw little-endian u64 IDs in issue order) and OUT_PATH.json
(`{"language", "node_id", "count", "seconds", "first", "last"}`), exit 0.
`PROGRAM LEASE_DIR SECONDS OUT_PATH uuidv7` mints UUIDv7s instead (no lease: LEASE_DIR is
ignored) and writes them as 16 bytes big-endian each, with `"format": "uuidv7"` and a null
`node_id` in the summary (`first`/`last` as decimal 128-bit integers or UUID text). `--format uuidv7` runs that:
the union must hold no duplicate, each participant's UUIDs must strictly increase, and every one
must be a version-7, RFC 9562-variant UUID.

`--zookeeper` leases from one real ZooKeeper instead of a lease directory: the run
starts one with tests/stores/with_zookeeper.sh (free loopback port, temporary data, stopped
after) unless it is given an ensemble, and passes every participant
`zk://HOST:PORT[,HOST:PORT...]/PREFIX` as its LEASE_DIR (contract: with that form a participant
leases from that ensemble under the znode prefix `/PREFIX`, identity its language, every other
option at its default, and frees the slot when it is done). The checker then asks for zero
duplicates and as many distinct node ids as languages, and `polyflake lease inspect --zookeeper`
must show no slot znode left behind once the participants have exited.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import secrets
import subprocess
import sys
import tempfile
import uuid
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
TARGET = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
# Release binaries: the Makefile's target/<host triple>/release, or a plain cargo build's.
RELEASE = Path(os.environ.get("POLYFLAKE_RELEASE_DIR", TARGET / "release"))

# Default layout 41/10/12 and epoch, as every participant uses them.
EPOCH_MS = 1704067200000
SEQ_BITS, NODE_BITS = 12, 10

PARTICIPANTS = {
    "rust": [str(RELEASE / "examples/participant")],
    "c": [str(TARGET / "polyglot/participant_c")],
    "cpp": [str(TARGET / "polyglot/participant_cpp")],
    "go": [str(TARGET / "polyglot/participant_go")],
    "python": [str(ROOT / ".venv/bin/python"), str(ROOT / "tests/polyglot/participant.py")],
    "node": ["node", str(ROOT / "tests/polyglot/participant.js")],
    "java": [os.environ.get("POLYFLAKE_JAVA", "/usr/lib/jvm/java-17-openjdk-amd64/bin/java"), "-cp",
             f"{TARGET / 'polyglot/java'}:{TARGET / 'polyglot/java/polyflake.jar'}", "Participant"],
}


def iso(ms: int) -> str:
    return dt.datetime.fromtimestamp(ms / 1000, tz=dt.timezone.utc).strftime(
        "%Y-%m-%dT%H:%M:%S.%f"
    )[:-3] + "Z"


def decode(ids: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    ts = (ids >> np.uint64(NODE_BITS + SEQ_BITS)).astype(np.int64) + EPOCH_MS
    node = ((ids >> np.uint64(SEQ_BITS)) & np.uint64((1 << NODE_BITS) - 1)).astype(np.int64)
    seq = (ids & np.uint64((1 << SEQ_BITS) - 1)).astype(np.int64)
    return ts, node, seq


def run(langs: list[str], seconds: float, workdir: Path, fmt: str = "snowflake",
        lease: str | None = None) -> dict[str, dict]:
    lease_dir = lease or str(workdir / "leases")
    procs = {}
    for lang in langs:
        cmd = PARTICIPANTS[lang]
        exe = cmd[0]
        if os.sep in exe and not Path(exe).exists():
            sys.exit(f"polyglot: the {lang} participant is not built: {exe} is missing (run `make build`)")
        out = workdir / f"{lang}.bin"
        procs[lang] = (
            subprocess.Popen(
                [*cmd, lease_dir, str(seconds), str(out)] + ([fmt] if fmt != "snowflake" else []),
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            ),
            out,
        )
    results = {}
    failed = []
    deadline = time.monotonic() + seconds + 90
    for lang, (p, out) in procs.items():
        try:
            stdout, stderr = p.communicate(timeout=max(1.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            p.kill()
            stdout, stderr = p.communicate()
            failed.append(f"{lang}: timed out")
            continue
        if p.returncode != 0:
            failed.append(f"{lang}: exit {p.returncode}: {stderr.strip()[-500:]}")
            continue
        summary = json.loads(Path(f"{out}.json").read_text())
        if fmt == "uuidv7":
            # 16 bytes big-endian each: the high and the low 64 bits.
            ids = np.fromfile(out, dtype=">u8").reshape(-1, 2).astype(np.uint64)
        else:
            ids = np.fromfile(out, dtype="<u8")
        results[lang] = {"summary": summary, "ids": ids}
    if failed:
        sys.exit("polyglot: participants failed:\n  " + "\n  ".join(failed))
    return results


def check(results: dict[str, dict]) -> dict:
    problems = []
    nodes = {}
    for lang, r in results.items():
        s, ids = r["summary"], r["ids"]
        if s.get("language") != lang:
            problems.append(f"{lang}: summary says language {s.get('language')!r}")
        if len(ids) == 0 or len(ids) != s["count"]:
            problems.append(f"{lang}: {len(ids)} IDs in the file, summary says {s['count']}")
            continue
        if str(int(ids[0])) != s["first"] or str(int(ids[-1])) != s["last"]:
            problems.append(f"{lang}: first/last IDs differ from the summary")
        if np.any(ids >= np.uint64(1 << 63)):
            problems.append(f"{lang}: an ID has the sign bit set")
        if not np.all(np.diff(ids.astype(np.uint64)) > 0):
            problems.append(f"{lang}: IDs are not strictly increasing")
        _, node, _ = decode(ids)
        if not np.all(node == s["node_id"]):
            problems.append(f"{lang}: IDs carry node ids other than its own {s['node_id']}")
        if s["node_id"] in nodes:
            problems.append(f"{lang}: node id {s['node_id']} also held by {nodes[s['node_id']]}")
        nodes[s["node_id"]] = lang
    merged = np.sort(np.concatenate([r["ids"] for r in results.values()]))
    dups = int(np.count_nonzero(np.diff(merged) == 0))
    if dups:
        problems.append(f"{dups} duplicate IDs in the union")
    # Ordering across nodes: sorted by ID, the stream is sorted by millisecond, then node id, then
    # sequence. So two IDs can be out of creation order only inside one millisecond (ordered by
    # node id there): count the milliseconds shared by several nodes.
    ts, node, _ = decode(merged)
    key = ts * 4096 + node
    per_ms_nodes = np.unique(np.unique(key) // 4096, return_counts=True)[1]
    shared_ms = int(np.count_nonzero(per_ms_nodes > 1))
    ts_sorted_ok = bool(np.all(np.diff(ts) >= 0))
    if not ts_sorted_ok:
        problems.append("the merged stream is not sorted by timestamp")
    return {
        "problems": problems,
        "total": int(len(merged)),
        "duplicates": dups,
        "shared_ms": shared_ms,
        "max_inversion_ms": 1 if shared_ms else 0,
        "merged": merged,
    }


def uuid_value(text) -> int | None:
    """A summary's `first`/`last` of the UUIDv7 run as a 128-bit integer: decimal digits, or UUID
    text (hyphenated or 32 hex digits, any case). None for anything else."""
    if not isinstance(text, str):
        return None
    if text.isdigit():
        return int(text)
    try:
        return uuid.UUID(text).int
    except ValueError:
        return None


def check_uuid(results: dict[str, dict]) -> dict:
    """The UUIDv7 run: version and variant bits, per-participant order, a union without duplicates."""
    problems = []
    for lang, r in results.items():
        s, ids = r["summary"], r["ids"]
        if s.get("language") != lang or s.get("format") != "uuidv7":
            problems.append(f"{lang}: summary {s.get('language')!r}/{s.get('format')!r}")
        if len(ids) == 0 or len(ids) != s["count"]:
            problems.append(f"{lang}: {len(ids)} UUIDs in the file, summary says {s['count']}")
            continue
        hi, lo = ids[:, 0], ids[:, 1]
        first = (int(hi[0]) << 64) | int(lo[0])
        last = (int(hi[-1]) << 64) | int(lo[-1])
        if uuid_value(s.get("first")) != first or uuid_value(s.get("last")) != last:
            problems.append(f"{lang}: the first or last UUID differs from the summary")
        if np.any((hi >> np.uint64(12)) & np.uint64(0xF) != 7) or np.any(lo >> np.uint64(62) != 2):
            problems.append(f"{lang}: a UUID is not version 7 with the RFC 9562 variant")
        step_up = (hi[1:] > hi[:-1]) | ((hi[1:] == hi[:-1]) & (lo[1:] > lo[:-1]))
        if not np.all(step_up):
            problems.append(f"{lang}: UUIDs are not strictly increasing")
    allids = np.concatenate([r["ids"] for r in results.values()])
    order = np.lexsort((allids[:, 1], allids[:, 0]))
    merged = allids[order]
    same = (merged[1:, 0] == merged[:-1, 0]) & (merged[1:, 1] == merged[:-1, 1])
    dups = int(np.count_nonzero(same))
    if dups:
        problems.append(f"{dups} duplicate UUIDs in the union")
    return {"problems": problems, "total": int(len(merged)), "duplicates": dups}


CLI = RELEASE / "polyflake"


def leftover_slots(ensemble: str, prefix: str) -> list[dict]:
    """The slots `polyflake lease inspect --zookeeper` reports held under the prefix (a held slot
    is one whose ephemeral slot znode exists). Polled for up to 2 s, well under the 10 s session
    timeout: a participant that exited without closing its session still leaves its znode then."""
    if not CLI.exists():
        sys.exit(f"polyglot: {CLI} is missing (run `make build-cli`): it inspects the ZooKeeper store")
    deadline = time.monotonic() + 2.0
    while True:
        p = subprocess.run(
            [str(CLI), "lease", "inspect", "--zookeeper", ensemble, "--zookeeper-prefix", prefix,
             "--output", "json"],
            capture_output=True, text=True, timeout=60,
        )
        if p.returncode != 0:
            sys.exit(f"polyglot: lease inspect failed: {p.stderr.strip()}")
        held = [s for s in json.loads(p.stdout)["slots"] if s["held"]]
        if not held or time.monotonic() > deadline:
            return held
        time.sleep(0.1)


def zookeeper_run(langs: list[str], seconds: float, ensemble: str) -> int:
    prefix = f"/polyglot-{secrets.token_hex(4)}"
    print(f"polyglot: {len(langs)} participants ({', '.join(langs)}) minting for {seconds} s "
          f"from one ZooKeeper ({ensemble}, prefix {prefix})", flush=True)
    with tempfile.TemporaryDirectory(prefix="polyflake-polyglot-zk-") as tmp:
        results = run(langs, seconds, Path(tmp), lease=f"zk://{ensemble}{prefix}")
    verdict = check(results)
    problems = list(verdict["problems"])
    nodes = {r["summary"]["node_id"] for r in results.values()}
    if len(nodes) != len(langs):
        problems.append(f"{len(nodes)} distinct node ids for {len(langs)} languages")
    held = leftover_slots(ensemble, prefix)
    if held:
        problems.append("slot znodes left behind after every participant exited: "
                        + ", ".join(f"{s['slot']} ({s['identity']})" for s in held))
    if problems:
        print("polyglot: FAILED\n  " + "\n  ".join(problems), file=sys.stderr)
        return 1
    for lang, r in results.items():
        s = r["summary"]
        print(f"  {lang:8} node {s['node_id']:>4} {s['count']:>11,} IDs")
    print(f"polyglot: {verdict['total']:,} IDs from {len(results)} languages leasing from ZooKeeper, "
          f"{len(nodes)} distinct node ids, 0 duplicates, every node strictly increasing, "
          "no slot znode left behind")
    return 0


def report(results: dict[str, dict], verdict: dict) -> None:
    print(f"\n{'language':8} {'node':>5} {'IDs':>11} {'IDs/s':>12}  first ID -> last ID (decoded)")
    for lang, r in results.items():
        s, ids = r["summary"], r["ids"]
        ts, node, seq = decode(ids[[0, -1]])
        rate = s["count"] / s["seconds"] if s["seconds"] > 0 else float("nan")
        print(
            f"{lang:8} {s['node_id']:>5} {s['count']:>11,} {rate:>12,.0f}  "
            f"{int(ids[0])} ({iso(int(ts[0]))} n{node[0]} s{seq[0]}) -> "
            f"{int(ids[-1])} ({iso(int(ts[1]))} n{node[1]} s{seq[1]})"
        )
    print(f"\nmerged total: {verdict['total']:,} IDs from {len(results)} languages")
    print(f"duplicates: {verdict['duplicates']}")
    print(
        "largest cross-node ordering inversion: "
        + (
            f"under 1 ms ({verdict['shared_ms']:,} milliseconds held IDs of more than one node; "
            "inside a millisecond IDs sort by node id, not by creation; across milliseconds never)"
            if verdict["shared_ms"]
            else "0 ms (no millisecond was shared by two nodes)"
        )
    )


def plot(results: dict[str, dict], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (top, bottom) = plt.subplots(2, 1, figsize=(11, 7), dpi=110, sharex=True,
                                      gridspec_kw={"height_ratios": [1, 1]})
    t0 = min(int(decode(r["ids"][:1])[0][0]) for r in results.values())
    order = sorted(results, key=lambda lang: results[lang]["summary"]["node_id"])
    for row, lang in enumerate(order):
        r = results[lang]
        ts, _, seq = decode(r["ids"])
        x = (ts - t0) + seq / 4096.0  # position inside the millisecond by sequence
        pick = slice(None, None, max(1, len(x) // 3000))
        color = f"C{row}"
        label = f"{lang} (node {r['summary']['node_id']})"
        top.scatter(x[pick], np.full(len(x[pick]), row), s=3, color=color, label=label)
        # IDs per 10 ms window.
        bins = np.arange(0, (ts.max() - t0) + 11, 10)
        counts, edges = np.histogram(ts - t0, bins=bins)
        bottom.plot(edges[:-1], counts, color=color, lw=1, label=label)
    top.set_yticks(range(len(order)), [f"{lang}\nnode {results[lang]['summary']['node_id']}" for lang in order])
    top.set_title("polyflake: seven languages, one lease directory, one merged ID stream")
    top.grid(alpha=0.3)
    bottom.set_ylabel("IDs per 10 ms")
    bottom.axhline(40960, color="grey", ls="--", lw=0.8)
    bottom.text(0, 40960, " layout ceiling per node (4,096/ms)", va="bottom", fontsize=8, color="grey")
    bottom.set_xlabel(f"ms since {iso(t0)} (ID timestamp; sequence spreads each ms)")
    bottom.legend(loc="lower right", fontsize=8, ncol=3)
    bottom.grid(alpha=0.3)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path)
    plt.close(fig)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=2.0)
    ap.add_argument("--langs", default=",".join(PARTICIPANTS))
    ap.add_argument("--report", action="store_true", help="print the per-language report")
    ap.add_argument("--plot", type=Path, help="write a PNG of the merged stream here")
    ap.add_argument("--format", choices=["snowflake", "uuidv7"], default="snowflake",
                    help="mint Snowflake IDs from one lease directory, or UUIDv7s (no lease)")
    ap.add_argument("--zookeeper", action="store_true",
                    help="lease from one real ZooKeeper (started here) instead of a lease directory")
    ap.add_argument("ensemble", nargs="?",
                    help="with --zookeeper: an ensemble to use (HOST:PORT,...) instead of starting one")
    args = ap.parse_args()
    langs = [x for x in args.langs.split(",") if x]
    unknown = [x for x in langs if x not in PARTICIPANTS]
    if unknown:
        sys.exit(f"polyglot: unknown languages {unknown}")
    if args.zookeeper:
        if args.format != "snowflake":
            sys.exit("polyglot: --zookeeper leases node ids: it runs the snowflake format only")
        if not args.ensemble:
            # Start a ZooKeeper beside this same run; the script appends the ensemble.
            script = ROOT / "tests/stores/with_zookeeper.sh"
            return subprocess.call(["bash", str(script), sys.executable, *sys.argv])
        return zookeeper_run(langs, args.seconds, args.ensemble)
    with tempfile.TemporaryDirectory(prefix="polyflake-polyglot-") as tmp:
        if args.format == "uuidv7":
            print(f"polyglot: {len(langs)} participants ({', '.join(langs)}) minting UUIDv7s for "
                  f"{args.seconds} s", flush=True)
            results = run(langs, args.seconds, Path(tmp), "uuidv7")
            verdict = check_uuid(results)
            if verdict["problems"]:
                print("polyglot: FAILED\n  " + "\n  ".join(verdict["problems"]), file=sys.stderr)
                return 1
            for lang, r in results.items():
                s = r["summary"]
                print(f"  {lang:8} {s['count']:>11,} UUIDv7s  {s['count'] / s['seconds']:>12,.0f}/s")
            print(f"polyglot: {verdict['total']:,} UUIDv7s from {len(results)} languages, "
                  "0 duplicates, every participant strictly increasing, all version 7")
            return 0
        print(f"polyglot: {len(langs)} participants ({', '.join(langs)}) minting for {args.seconds} s "
              f"from one lease directory", flush=True)
        results = run(langs, args.seconds, Path(tmp))
        verdict = check(results)
        if args.report:
            report(results, verdict)
        if args.plot:
            plot(results, args.plot)
            print(f"\nplot: {args.plot}")
    if verdict["problems"]:
        print("polyglot: FAILED\n  " + "\n  ".join(verdict["problems"]), file=sys.stderr)
        return 1
    print(
        f"polyglot: {verdict['total']:,} IDs from {len(results)} languages, "
        f"{len(set(r['summary']['node_id'] for r in results.values()))} distinct node ids, "
        f"0 duplicates, every node strictly increasing"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
