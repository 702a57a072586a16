#!/usr/bin/env python3
"""The nemesis run (issue 14): six processes lease node ids from ONE real store (etcd, or
ZooKeeper with --store zookeeper) and mint continuously while a scheduler, from a seed, injects
faults:

- SIGSTOP a holder past its lease's time to live (etcd lease TTL, ZooKeeper session timeout: the
  store expires it and a successor may take its slot meanwhile), then SIGCONT it;
- SIGKILL a holder and start it again;
- stop the store and start it again on the same data;
- take a holder's slot away in the store: revoke an etcd lease with etcdctl, or delete a slot
  znode (what an operator, a broken tool or a lost session does);
- step a service's clock back (the CLI's loopback-only test clock), then restore it.

The holders on etcd: two Python processes and two Node processes (tests/nemesis/participant.py
and .js, minting batches) and two `polyflake serve` services (Rust) driven over HTTP. On
ZooKeeper: six `polyflake serve --zookeeper` services (the bindings' ZooKeeper constructors are
not there yet). A service whose lease is lost answers 503 until it is restarted, so the run
restarts it (as an orchestrator would on a failing health check). Every ID is logged
with the lease's high-water mark R seen right after its batch. The checker fails on any duplicate
in the union of every process's IDs, on any process whose IDs do not strictly increase, and on
any ID above the R its holder reported for it; it reports the faults injected, the IDs checked and
each holder's availability (the share of 250 ms windows in which it issued).

Usage: nemesis.py [--store etcd|zookeeper] [--seconds 20] [--seed 1] [--report PATH]
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import random
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from zookeeper import JAR as ZK_JAR, JAVA as ZK_JAVA, Client as ZkClient, ZooKeeper  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
TARGET = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
# Release binaries: the Makefile's target/<host triple>/release, or a plain cargo build's.
RELEASE = Path(os.environ.get("POLYFLAKE_RELEASE_DIR", TARGET / "release"))
CLI = RELEASE / "polyflake"
PY = ROOT / ".venv" / "bin" / "python"
ETCD, ETCDCTL = "/usr/bin/etcd", "/usr/bin/etcdctl"
PREFIX, SLOTS, TTL_S = "/nemesis", 6, 2  # (ZooKeeper: a session timeout of TTL_S s)
EPOCH_MS, SHIFT = 1704067200000, 22


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Etcd:
    """A real etcd on loopback ports with a temporary data dir; stop/start keep both."""

    restart_fault, revoke_fault = "etcd_restart", "revoke"

    def __init__(self, workdir: Path):
        self.dir = workdir / "etcd"
        self.url = f"http://127.0.0.1:{free_port()}"
        self.peer = f"http://127.0.0.1:{free_port()}"
        self.proc = None
        self.start()

    def start(self) -> None:
        log = open(self.dir.with_suffix(".log"), "ab")
        self.proc = subprocess.Popen(
            [ETCD, "--name", "nemesis", "--data-dir", str(self.dir),
             "--listen-client-urls", self.url, "--advertise-client-urls", self.url,
             "--listen-peer-urls", self.peer, "--initial-advertise-peer-urls", self.peer,
             "--initial-cluster", f"nemesis={self.peer}"],
            stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 30
        while self.ctl("endpoint", "health").returncode != 0:
            if time.monotonic() > deadline:
                sys.exit("nemesis: etcd did not become healthy within 30 s")
            time.sleep(0.1)

    def stop(self) -> None:
        if self.proc:
            self.proc.kill()
            self.proc.wait()
            self.proc = None

    def node_args(self) -> list[str]:
        return ["--etcd", self.url, "--etcd-prefix", PREFIX, "--etcd-ttl-s", str(TTL_S)]

    def revoke(self, rng: random.Random) -> bool:
        """Revoke one live etcd lease (its holder's slot key goes with it)."""
        listed = self.ctl("lease", "list").stdout.split()
        ids = [x for x in listed if all(c in "0123456789abcdef" for c in x) and len(x) > 4]
        if not ids:
            return False
        self.ctl("lease", "revoke", rng.choice(ids))
        return True

    def ctl(self, *args: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [ETCDCTL, f"--endpoints={self.url}", "--dial-timeout=1s", "--command-timeout=2s", *args],
            env={**os.environ, "ETCDCTL_API": "3"}, capture_output=True, text=True)


class ZkStore(ZooKeeper):
    """The ZooKeeper the holders lease from, with the faults the run injects into it."""

    restart_fault, revoke_fault = "zookeeper_restart", "znode_delete"

    def node_args(self) -> list[str]:
        return ["--zookeeper", self.ensemble, "--zookeeper-prefix", PREFIX,
                "--zookeeper-session-timeout-ms", str(TTL_S * 1000)]

    def revoke(self, rng: random.Random) -> bool:
        """Delete one held slot znode (its holder must notice and stop issuing)."""
        try:
            c = ZkClient(self.ensemble)
            try:
                held = c.children(f"{PREFIX}/slot")
                return bool(held) and c.delete(f"{PREFIX}/slot/{rng.choice(sorted(held))}")
            finally:
                c.close()
        except OSError:
            return False


class Holder:
    """One named holder: its current process (incarnation) and how to start another."""

    def __init__(self, name: str, kind: str, workdir: Path, store: Etcd | ZkStore):
        self.name, self.kind, self.workdir, self.store = name, kind, workdir, store
        self.incarnation = 0
        self.proc: subprocess.Popen | None = None
        self.addr: tuple[str, int] | None = None
        self.lock = threading.Lock()
        self.stopped = False  # SIGSTOPped now
        self.restarts = 0

    def out(self) -> Path:
        return self.workdir / f"{self.name}.{self.incarnation}.bin"

    def start(self) -> None:
        with self.lock:
            self.incarnation += 1
            err = open(self.workdir / f"{self.name}.{self.incarnation}.err", "wb")
            if self.kind == "svc":
                self.proc = subprocess.Popen(
                    [str(CLI), "serve", "--listen", "127.0.0.1:0", *self.store.node_args(),
                     "--slots", str(SLOTS), "--lease-identity", self.name,
                     "--lease-reserve-ms", "500", "--test-clock"],
                    stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=err)
                banner = self.proc.stdout.readline().decode()
                # "listening on http://HOST:PORT (... etcd http://...)": the first URL is ours.
                self.addr = None
                for word in banner.split():
                    if word.startswith("http://"):
                        host, port = word[len("http://"):].rstrip("/,)").split(":")
                        self.addr = (host, int(port))
                        break
                # Keep draining stdout so the service never blocks on a full pipe.
                threading.Thread(target=self.proc.stdout.read, daemon=True).start()
            else:
                cmd = ([str(PY), str(ROOT / "tests/nemesis/participant.py")] if self.kind == "py"
                       else ["node", str(ROOT / "tests/nemesis/participant.js")])
                self.proc = subprocess.Popen(
                    [*cmd, self.store.url, PREFIX, str(SLOTS), self.name, str(self.out())],
                    stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err)

    def signal(self, sig: int) -> None:
        with self.lock:
            if self.proc and self.proc.poll() is None:
                self.proc.send_signal(sig)


def drive(h: Holder, until: float) -> None:
    """Mint through a service's HTTP API, logging records as the participants do."""
    while time.monotonic() < until:
        with h.lock:
            addr, out = h.addr, h.out()
        if addr is None:
            time.sleep(0.05)
            continue
        try:
            c = http.client.HTTPConnection(*addr, timeout=1.0)
            c.request("POST", "/v1/ids", body=b'{"count": 100}',
                      headers={"Content-Type": "application/json"})
            r = c.getresponse()
            body = r.read()
            if r.status != 200:
                c.request("GET", "/v1/health")
                lease = json.loads(c.getresponse().read()).get("lease") or {}
                c.close()
                if lease.get("lost"):
                    # A lost lease is never re-taken by the same generator: restart the
                    # service (the supervisor starts the next incarnation).
                    h.signal(signal.SIGTERM)
                    time.sleep(0.2)
                time.sleep(0.005)
                continue
            ids = [int(x) for x in json.loads(body)["ids"]]
            c.request("GET", "/v1/health")
            health = json.loads(c.getresponse().read())
            c.close()
            lease = health.get("lease") or {}
            high = lease.get("high_water_ms")
            if high is None:
                continue
            with open(out, "ab") as f:
                f.write(struct.pack("<Iq", len(ids), int(high)) + struct.pack(f"<{len(ids)}Q", *ids))
        except (OSError, http.client.HTTPException, ValueError):
            time.sleep(0.02)


def schedule(seed: int, seconds: float, holders: list[Holder], store: Etcd | ZkStore,
             faults: dict, until: float) -> None:
    rng = random.Random(seed)
    kinds = ["sigstop", "sigkill", store.restart_fault, store.revoke_fault, "clock_back"]
    weights = [3, 3, 1, 2, 2]
    time.sleep(2.0)  # let everyone take a slot first
    while time.monotonic() < until - 3.0:
        kind = rng.choices(kinds, weights)[0]
        h = rng.choice(holders)
        if kind == "sigstop":
            if h.stopped:
                continue
            h.stopped = True
            h.signal(signal.SIGSTOP)
            pause = TTL_S + 1.5  # past its lease's TTL or session timeout: a successor may take its slot

            def resume(h: Holder = h) -> None:
                h.signal(signal.SIGCONT)
                h.stopped = False

            threading.Timer(pause, resume).start()
        elif kind == "sigkill":
            h.signal(signal.SIGCONT)
            h.signal(signal.SIGKILL)
            h.stopped = False
        elif kind == store.restart_fault:
            store.stop()
            time.sleep(rng.uniform(1.0, 2.5))
            store.start()
        elif kind == store.revoke_fault:
            if not store.revoke(rng):
                continue
        elif kind == "clock_back":
            svcs = [x for x in holders if x.kind == "svc" and x.addr and not x.stopped]
            if not svcs:
                continue
            s = rng.choice(svcs)
            try:
                for body in (json.dumps({"advance_ms": -rng.randint(50, 700)}), '{"offset_ms": 0}'):
                    c = http.client.HTTPConnection(*s.addr, timeout=1.0)
                    c.request("POST", "/v1/admin/clock", body=body.encode(),
                              headers={"Content-Type": "application/json"})
                    c.getresponse().read()
                    c.close()
                    if body != '{"offset_ms": 0}':
                        time.sleep(1.0)
            except OSError:
                continue
        faults[kind] = faults.get(kind, 0) + 1
        time.sleep(rng.uniform(0.6, 1.4))


def supervise(holders: list[Holder], until: float) -> None:
    """Start again any holder whose process has ended (killed, or done with a lost lease)."""
    while time.monotonic() < until:
        for h in holders:
            if h.proc and h.proc.poll() is not None:
                h.restarts += 1
                h.start()
        time.sleep(0.1)


def read_records(path: Path) -> tuple[np.ndarray, np.ndarray]:
    """The IDs of a holder's file in order, and beside each the R its batch reported."""
    data = path.read_bytes()
    ids, highs = [], []
    at = 0
    while at + 12 <= len(data):
        n, high = struct.unpack_from("<Iq", data, at)
        at += 12
        if at + 8 * n > len(data):
            break  # the last record of a process killed mid-write
        ids.append(np.frombuffer(data, dtype="<u8", count=n, offset=at))
        highs.append(np.full(n, high, dtype=np.int64))
        at += 8 * n
    if not ids:
        return np.zeros(0, dtype=np.uint64), np.zeros(0, dtype=np.int64)
    return np.concatenate(ids), np.concatenate(highs)


def check(holders: list[Holder], workdir: Path, start_ms: int, end_ms: int) -> dict:
    problems, everything, windows = [], [], {}
    span = max(1, (end_ms - start_ms) // 250)
    for h in holders:
        seen = []
        for inc in range(1, h.incarnation + 1):
            path = workdir / f"{h.name}.{inc}.bin"
            if not path.exists():
                continue
            ids, highs = read_records(path)
            if len(ids) == 0:
                continue
            if not np.all(np.diff(ids) > 0):
                problems.append(f"{h.name}#{inc}: IDs not strictly increasing")
            ms = (ids >> np.uint64(SHIFT)).astype(np.int64) + EPOCH_MS
            past = int(np.count_nonzero(ms > highs))
            if past:
                problems.append(f"{h.name}#{inc}: {past} IDs past the R their batch reported")
            seen.append(np.unique((ms - start_ms) // 250))
            everything.append(ids)
        got = np.unique(np.concatenate(seen)) if seen else np.zeros(0, dtype=np.int64)
        windows[h.name] = round(int(np.count_nonzero((got >= 0) & (got < span))) / span, 4)
    union = np.sort(np.concatenate(everything)) if everything else np.zeros(0, dtype=np.uint64)
    dups = int(np.count_nonzero(np.diff(union) == 0))
    if dups:
        problems.append(f"{dups} duplicate IDs in the union")
    return {"problems": problems, "ids": int(len(union)), "duplicates": dups,
            "availability": windows}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--store", choices=["etcd", "zookeeper"], default="etcd")
    ap.add_argument("--seconds", type=float, default=20.0)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--report", type=Path)
    args = ap.parse_args()
    needed = (ETCD, ETCDCTL, str(PY)) if args.store == "etcd" else (ZK_JAVA, ZK_JAR)
    for binary in (*needed, str(CLI)):
        if not os.path.exists(binary):
            sys.exit(f"nemesis: {binary} is missing (make build, make deps-apt)")
    workdir = Path(tempfile.mkdtemp(prefix="polyflake-nemesis-"))
    if args.store == "etcd":
        store: Etcd | ZkStore = Etcd(workdir)
        kinds = [("py-0", "py"), ("py-1", "py"), ("js-0", "js"), ("js-1", "js"),
                 ("svc-0", "svc"), ("svc-1", "svc")]
    else:
        store = ZkStore(workdir)
        kinds = [(f"svc-{i}", "svc") for i in range(6)]
    holders = [Holder(n, k, workdir, store) for n, k in kinds]
    faults: dict[str, int] = {}
    start_ms = int(time.time() * 1000)
    until = time.monotonic() + args.seconds
    try:
        for h in holders:
            h.start()
        threads = [threading.Thread(target=drive, args=(h, until), daemon=True)
                   for h in holders if h.kind == "svc"]
        threads.append(threading.Thread(target=supervise, args=(holders, until), daemon=True))
        threads.append(threading.Thread(
            target=schedule, args=(args.seed, args.seconds, holders, store, faults, until),
            daemon=True))
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=max(0.1, until - time.monotonic() + 10))
    finally:
        for h in holders:
            h.signal(signal.SIGCONT)
            h.signal(signal.SIGTERM)
        for h in holders:
            if h.proc:
                try:
                    h.proc.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    h.proc.kill()
        store.stop()
    end_ms = int(time.time() * 1000)
    verdict = check(holders, workdir, start_ms, end_ms)
    restarts = {h.name: h.incarnation - 1 for h in holders}
    result = {"store": args.store, "seconds": args.seconds, "seed": args.seed, "faults": faults,
              "ids_checked": verdict["ids"], "duplicates": verdict["duplicates"],
              "availability": verdict["availability"], "incarnations": restarts,
              "problems": verdict["problems"]}
    print(json.dumps(result, indent=1))
    if args.report:
        args.report.write_text(json.dumps(result, indent=1) + "\n")
    if verdict["problems"] or not faults or verdict["ids"] == 0:
        print("nemesis: FAILED", file=sys.stderr)
        return 1
    shutil.rmtree(workdir, ignore_errors=True)
    print(f"nemesis ({args.store}): {sum(faults.values())} faults, {verdict['ids']:,} IDs checked, 0 duplicates, "
          "no ID past its holder's R")
    return 0


if __name__ == "__main__":
    sys.exit(main())
