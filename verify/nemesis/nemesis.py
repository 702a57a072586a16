#!/usr/bin/env python3
"""The nemesis run: six processes lease node ids from ONE real store (etcd, or
ZooKeeper with --store zookeeper) and mint continuously while a scheduler, from a seed, injects
faults:

- SIGSTOP a holder past its lease's time to live (etcd lease TTL, ZooKeeper session timeout: the
  store expires it and a successor may take its slot meanwhile), then SIGCONT it;
- SIGKILL a holder and start it again;
- stop the store and start it again on the same data;
- take a holder's slot away in the store: revoke an etcd lease with etcdctl, or delete a slot
  znode (what an operator, a broken tool or a lost session does);
- step a service's clock back (the CLI's loopback-only test clock), then restore it;
- restore the store from an older backup: a backup is taken early (etcd: `etcdctl
  snapshot save`; ZooKeeper: a copy of the data dir, the server stopped for it), a service's
  clock is set ahead (a host with skew), and later the store is stopped, restored from the
  backup, started on a private port where no holder looks, fenced (`polyflake lease fence
  --margin-ms 3500`: the skew plus the reserve, with room), and started again on its own port.
  Every live holder must notice the rollback and stop (LeaseLost); the participants exit and are
  started again, the services heal (a new generator on a new slot, behind the fence);
- stall the link of a holder behind a relay (verify/nemesis/relay.py) for 1.5-2.5 s, under its
  TTL: a renewal sent meanwhile times out at the holder and lands late (an ambiguous write). A
  holder that loses its lease in a stall with no other fault on it fails the run.

The holders on etcd: two Python processes and two Node processes (verify/nemesis/participant.py
and .js, minting batches) and two `polyflake serve` services (Rust) driven over HTTP. On
ZooKeeper: six `polyflake serve --zookeeper` services (the bindings' ZooKeeper constructors are
not there yet). A service whose lease is lost answers 503 until it is restarted, so the run
heals by itself (a new generator on a new slot; the run restarts it only if it has not healed
within 10 s, as an orchestrator would on a failing health check). The holders behind a relay (one
of each kind on etcd, three services on ZooKeeper) run a TTL (session timeout) of 6 s, over the
longest stall plus a keep-alive period; the others 2 s. Every ID is logged
with the lease's high-water mark R seen right after its batch. The checker fails on any duplicate
in the union of every process's IDs, on any process whose IDs do not strictly increase, and on
any ID above the R its holder reported for it; it reports the faults injected, the IDs checked and
each holder's availability (the share of 250 ms windows in which it issued), the lease losses
with their causes, what each restore did to the live holders, and the stalls. A process's IDs
must strictly increase per generator: a service that healed continues on another node id, and
its IDs are checked in runs of one node id.

Usage: nemesis.py [--store etcd|zookeeper] [--seconds 20] [--seed 1] [--report PATH]
                  [--keep-logs] [--restore-unfenced]   (a demonstration: no fence)
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import random
import re
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
from relay import Relay  # noqa: E402
from zookeeper import JAR as ZK_JAR, JAVA as ZK_JAVA, Client as ZkClient, ZooKeeper  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
TARGET = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
# Release binaries: the Makefile's target/<host triple>/release, or a plain cargo build's.
RELEASE = Path(os.environ.get("POLYFLAKE_RELEASE_DIR", TARGET / "release"))
CLI = RELEASE / "polyflake"
PY = ROOT / ".venv" / "bin" / "python"
ETCD, ETCDCTL = "/usr/bin/etcd", "/usr/bin/etcdctl"
PREFIX, SLOTS, TTL_S = "/nemesis", 6, 2  # (ZooKeeper: a session timeout of TTL_S s)
EPOCH_MS, SHIFT, NODE_SHIFT, NODE_MASK = 1704067200000, 22, 12, 0x3FF
RESERVE_MS = 500
# Holders behind a stalling relay: a TTL (session timeout) over the longest stall plus a
# keep-alive period (TTL/3), and a 1 s request timeout, so every stall times a renewal out.
RELAY_TTL_S, RELAY_TIMEOUT_MS = 6, 1000
STALL_S = (1.5, 2.5)
STALL_GRACE_S = 1.5  # a loss this soon after a stall ended is still the stall's
# The fence after a restore: now + the largest skew the run sets (2 s) + the reserve + 1 s.
SKEW_MS = (1000, 2000)
FENCE_MARGIN_MS = 3000 + RESERVE_MS
RESTORE_PERIOD_S = 60.0  # one backup and one restore per period (a 20 s run: one of each)
ROLLBACK = "went back in time"
# A holder that held a lease at a restore and ran this long after the store served again must
# have reported its lease lost (etcd: at its first answer; ZooKeeper: when its session is
# refused or expired, or its probe with a fresh session reads an older mark).
NOTICE_S = 5.0


class Log:
    """What happened when, in seconds since the run started: faults and lease losses."""

    def __init__(self) -> None:
        self.t0 = time.monotonic()
        self.start_ms = int(time.time() * 1000)
        self.lock = threading.Lock()
        self.faults: list[dict] = []
        self.losses: list[dict] = []
        # A participant's failed renewals: (holder, incarnation, time, count so far).
        self.failures: list[tuple[str, int, float, int]] = []
        self.problems: list[str] = []

    def now(self) -> float:
        return round(time.monotonic() - self.t0, 3)

    def fault(self, kind: str, target: str | None, t0: float, t1: float | None = None,
              **more) -> dict:
        f = {"kind": kind, "target": target, "t0": t0, "t1": t1 if t1 is not None else t0, **more}
        with self.lock:
            self.faults.append(f)
        return f

    def loss(self, holder: str, inc: int, node, t: float, reason: str, how: str) -> None:
        """A holder's generator lost its lease (seen by `how`: exit, health, heal)."""
        with self.lock:
            # A service's loss is seen twice: in its health (first), then in its heal's line.
            last = next((x for x in reversed(self.losses)
                         if (x["holder"], x["inc"]) == (holder, inc)), None)
            if last and node is not None and last["node"] == node:
                if how == "heal" and last["how"] == "health" and "healed" not in last:
                    last["healed"] = t
                    return
                if how == "health" and last["how"] == "heal" and t - last["t"] < 1.0:
                    return  # a health answer from just before the heal
            self.losses.append({"holder": holder, "inc": inc, "node": node, "t": t,
                                "how": how, "reason": reason})


LOG = Log()


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

    @property
    def port(self) -> int:
        return int(self.url.rsplit(":", 1)[1])

    def start(self, url: str | None = None) -> None:
        """Start on the run's client URL, or on `url` (a private one, where no holder looks)."""
        url = url or self.url
        log = open(self.dir.with_suffix(".log"), "ab")
        self.proc = subprocess.Popen(
            [ETCD, "--name", "nemesis", "--data-dir", str(self.dir),
             "--listen-client-urls", url, "--advertise-client-urls", url,
             "--listen-peer-urls", self.peer, "--initial-advertise-peer-urls", self.peer,
             "--initial-cluster", f"nemesis={self.peer}"],
            stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 30
        while self.ctl("endpoint", "health", url=url).returncode != 0:
            if time.monotonic() > deadline:
                sys.exit("nemesis: etcd did not become healthy within 30 s")
            time.sleep(0.1)

    def stop(self) -> None:
        if self.proc:
            self.proc.kill()
            self.proc.wait()
            self.proc = None

    def endpoint(self, port: int | None = None) -> str:
        return f"http://127.0.0.1:{port}" if port else self.url

    def node_args(self, port: int | None = None, ttl_s: int = TTL_S) -> list[str]:
        """A service's store flags; through a relay on `port`, with its longer TTL."""
        extra = ["--etcd-connect-timeout-ms", str(RELAY_TIMEOUT_MS)] if port else []
        return ["--etcd", self.endpoint(port), "--etcd-prefix", PREFIX, "--etcd-ttl-s", str(ttl_s),
                *extra]

    def revoke(self, rng: random.Random) -> str | None:
        """Revoke one live etcd lease (its holder's slot key goes with it): the holder's name
        ("" when no slot key hangs on it), or None when there was no lease."""
        listed = self.ctl("lease", "list").stdout.split()
        ids = [x for x in listed if all(c in "0123456789abcdef" for c in x) and len(x) > 4]
        if not ids:
            return None
        lease = rng.choice(ids)
        # Slot keys hold tokens "identity/pid/lease id in hex": whose slot goes with it.
        tokens = self.ctl("get", f"{PREFIX}/slot/", "--prefix", "--print-value-only").stdout.split()
        owner = next((t.split("/")[0] for t in tokens if t.endswith("/" + lease)), "")
        self.ctl("lease", "revoke", lease)
        return owner

    def backup(self, path: Path) -> None:
        """A backup of the live store: `etcdctl snapshot save`."""
        r = self.ctl("snapshot", "save", str(path))
        if r.returncode != 0:
            raise RuntimeError(f"etcdctl snapshot save: {r.stderr.strip()}")

    def restore(self, path: Path, fence: bool) -> dict:
        """Stop, replace the data with the backup's (`etcdctl snapshot restore` into a new data
        dir), fence on a private client URL, then start on the run's URL."""
        steps = {}
        t = time.monotonic()
        self.stop()
        shutil.rmtree(self.dir)
        r = subprocess.run(
            [ETCDCTL, "snapshot", "restore", str(path), "--data-dir", str(self.dir),
             "--name", "nemesis", f"--initial-cluster=nemesis={self.peer}",
             f"--initial-advertise-peer-urls={self.peer}"],
            env={**os.environ, "ETCDCTL_API": "3"}, capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError(f"etcdctl snapshot restore: {r.stderr.strip()}")
        steps["restored_s"] = round(time.monotonic() - t, 3)
        if fence:
            private = f"http://127.0.0.1:{free_port()}"
            self.start(private)
            steps["fence"] = run_fence(["--etcd", private, "--etcd-prefix", PREFIX])
            self.stop()
            steps["fenced_s"] = round(time.monotonic() - t, 3)
        self.start()
        steps["serving_s"] = round(time.monotonic() - t, 3)
        return steps

    def ctl(self, *args: str, url: str | None = None) -> subprocess.CompletedProcess:
        return subprocess.run(
            [ETCDCTL, f"--endpoints={url or self.url}", "--dial-timeout=1s", "--command-timeout=2s",
             *args],
            env={**os.environ, "ETCDCTL_API": "3"}, capture_output=True, text=True)


class ZkStore(ZooKeeper):
    """The ZooKeeper the holders lease from, with the faults the run injects into it."""

    restart_fault, revoke_fault = "zookeeper_restart", "znode_delete"

    def endpoint(self, port: int | None = None) -> str:
        return f"127.0.0.1:{port}" if port else self.ensemble

    def node_args(self, port: int | None = None, ttl_s: int = TTL_S) -> list[str]:
        """A service's store flags; through a relay on `port`, with its longer session."""
        extra = ["--zookeeper-connect-timeout-ms", str(RELAY_TIMEOUT_MS)] if port else []
        return ["--zookeeper", self.endpoint(port), "--zookeeper-prefix", PREFIX,
                "--zookeeper-session-timeout-ms", str(ttl_s * 1000), *extra]

    def revoke(self, rng: random.Random) -> str | None:
        """Delete one held slot znode (its holder must notice and stop issuing): the holder's
        name (from the znode's token, "identity/pid/session"), or None when none was deleted."""
        try:
            c = ZkClient(self.ensemble)
            try:
                held = c.children(f"{PREFIX}/slot")
                if not held:
                    return None
                path = f"{PREFIX}/slot/{rng.choice(sorted(held))}"
                token = (c.get(path) or b"").decode(errors="replace")
                return token.split("/")[0] if c.delete(path) else None
            finally:
                c.close()
        except OSError:
            return None

    def backup(self, path: Path) -> None:
        """A copy of the data dir, taken with the server stopped for a moment (consistent)."""
        self.stop()
        try:
            subprocess.run(["cp", "-a", str(self.data), str(path)], check=True)
        finally:
            self.start()

    def restore(self, path: Path, fence: bool) -> dict:
        """Stop, replace the data dir with the backup, fence on a private port, then start on
        the run's port."""
        steps = {}
        t = time.monotonic()
        self.stop()
        shutil.rmtree(self.data)
        subprocess.run(["cp", "-a", str(path), str(self.data)], check=True)
        steps["restored_s"] = round(time.monotonic() - t, 3)
        if fence:
            private = free_port()
            self.start(private)
            steps["fence"] = run_fence(["--zookeeper", f"127.0.0.1:{private}",
                                        "--zookeeper-prefix", PREFIX])
            self.stop()
            steps["fenced_s"] = round(time.monotonic() - t, 3)
        self.start()
        steps["serving_s"] = round(time.monotonic() - t, 3)
        return steps


def run_fence(store_flags: list[str]) -> dict:
    """`polyflake lease fence` with the store's flags: the fence it wrote."""
    r = subprocess.run([str(CLI), "lease", "fence", *store_flags, "--margin-ms",
                        str(FENCE_MARGIN_MS), "--output", "json"],
                       capture_output=True, text=True, timeout=20)
    if r.returncode != 0:
        raise RuntimeError(f"polyflake lease fence: {r.stderr.strip()}")
    return json.loads(r.stdout)


class Holder:
    """One named holder: its current process (incarnation) and how to start another."""

    def __init__(self, name: str, kind: str, workdir: Path, store: Etcd | ZkStore,
                 relayed: bool = False):
        self.name, self.kind, self.workdir, self.store = name, kind, workdir, store
        self.incarnation = 0
        self.proc: subprocess.Popen | None = None
        self.addr: tuple[str, int] | None = None
        self.lock = threading.Lock()
        self.stopped = False  # SIGSTOPped now
        self.restarts = 0
        # Behind a relay that stalls: a longer TTL (session timeout) than the stalls.
        self.relay = Relay(store.port) if relayed else None
        self.ttl_s = RELAY_TTL_S if relayed else TTL_S
        self.node = None  # a service: the node id of its last batch in this incarnation
        self.lost_since: float | None = None  # a service: its lease seen lost, not healed yet
        self.heals = 0  # a service: lost leases it replaced by itself
        self.forced = 0  # a service: restarts because it had not healed within 10 s

    def out(self) -> Path:
        return self.workdir / f"{self.name}.{self.incarnation}.bin"

    def start(self) -> None:
        with self.lock:
            self.incarnation += 1
            inc = self.incarnation
            self.node, self.lost_since = None, None
            err = self.workdir / f"{self.name}.{inc}.err"
            port = self.relay.port if self.relay else None
            if self.kind == "svc":
                self.proc = subprocess.Popen(
                    [str(CLI), "serve", "--listen", "127.0.0.1:0",
                     *self.store.node_args(port, self.ttl_s),
                     "--slots", str(SLOTS), "--lease-identity", self.name,
                     "--lease-reserve-ms", str(RESERVE_MS), "--test-clock"],
                    stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
                self.read_err(err, inc)
                banner = self.proc.stdout.readline().decode()
                # "listening on http://HOST:PORT (... etcd http://...)": the first URL is ours.
                self.addr = None
                for word in banner.split():
                    if word.startswith("http://"):
                        host, port_ = word[len("http://"):].rstrip("/,)").split(":")
                        self.addr = (host, int(port_))
                        break
                # Keep draining stdout so the service never blocks on a full pipe.
                threading.Thread(target=self.proc.stdout.read, daemon=True).start()
            else:
                cmd = ([str(PY), str(ROOT / "verify/nemesis/participant.py")] if self.kind == "py"
                       else ["node", str(ROOT / "verify/nemesis/participant.js")])
                self.proc = subprocess.Popen(
                    [*cmd, self.store.endpoint(port), PREFIX, str(SLOTS), self.name,
                     str(self.out()), str(self.ttl_s)],
                    stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
                self.read_err(err, inc)

    def read_err(self, path: Path, inc: int) -> None:
        """Copy the process's stderr to `path`, each line stamped with the run's time, and log
        the lease losses it tells: a participant's "LEASE_LOST: why" before it exits, a
        service's "lease lost on node N (why); took node M" when it healed."""
        stream = self.proc.stderr

        def pump() -> None:
            with open(path, "ab") as f:
                for line in iter(stream.readline, b""):
                    t = LOG.now()
                    f.write(f"{t:9.3f} ".encode() + line)
                    f.flush()
                    text = line.decode(errors="replace").strip()
                    if "LEASE_FAILURES " in text:
                        m = re.search(r"LEASE_FAILURES (\d+)", text)
                        with LOG.lock:
                            LOG.failures.append((self.name, inc, t, int(m.group(1))))
                    elif "LEASE_LOST:" in text:
                        LOG.loss(self.name, inc, None, t, text.split("LEASE_LOST:", 1)[1].strip(),
                                 "exit")
                    elif "lease lost on node" in text:
                        m = re.search(r"lease lost on node (\d+) \((.*)\); took node (\d+)", text)
                        with self.lock:
                            self.heals += 1
                            if inc == self.incarnation:
                                self.lost_since = None
                        LOG.loss(self.name, inc, int(m.group(1)) if m else None, t,
                                 m.group(2) if m else text, "heal")

        threading.Thread(target=pump, daemon=True).start()

    def signal(self, sig: int) -> None:
        with self.lock:
            if self.proc and self.proc.poll() is None:
                self.proc.send_signal(sig)

    def has_generator(self) -> bool:
        """A live process with a generator that holds a lease (as far as the run can tell: a
        participant opens its output once its generator is made; a service has issued)."""
        with self.lock:
            if self.proc is None or self.proc.poll() is not None:
                return False
            if self.kind == "svc":
                return self.node is not None and self.lost_since is None
            return self.out().exists()


def drive(h: Holder, until: float) -> None:
    """Mint through a service's HTTP API, logging records as the participants do."""
    while time.monotonic() < until:
        with h.lock:
            addr, out, inc = h.addr, h.out(), h.incarnation
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
                health = json.loads(c.getresponse().read())
                c.close()
                lease = health.get("lease") or {}
                if lease.get("lost"):
                    # The service replaces a lost generator by itself (a new slot): log the
                    # loss once; restart it only if it has not healed within 10 s.
                    t = LOG.now()
                    with h.lock:
                        current = inc == h.incarnation
                        first = current and h.lost_since is None
                        if first:
                            h.lost_since = t
                        stale = current and not first and t - h.lost_since > 10.0
                        if stale:
                            h.lost_since = t
                            h.forced += 1
                    if first:
                        LOG.loss(h.name, inc, health.get("node_id"), t,
                                 str(health.get("reason", "")), "health")
                    if stale:
                        h.signal(signal.SIGTERM)
                        time.sleep(0.2)
                time.sleep(0.005)
                continue
            got = json.loads(body)
            ids = [int(x) for x in got["ids"]]
            c.request("GET", "/v1/health")
            health = json.loads(c.getresponse().read())
            c.close()
            high = (health.get("lease") or {}).get("high_water_ms")
            if high is None or health.get("node_id") != got.get("node_id"):
                high = -1  # R unknown: the service healed between the batch and its health
            with h.lock:
                if inc == h.incarnation:
                    h.node, h.lost_since = got.get("node_id"), None
            with open(out, "ab") as f:
                f.write(struct.pack("<Iq", len(ids), int(high))
                        + struct.pack(f"<{len(ids)}Q", *ids))
        except (OSError, http.client.HTTPException, ValueError):
            time.sleep(0.02)


def set_clock(s: Holder, body: dict) -> bool:
    """POST /v1/admin/clock on a service (its test clock)."""
    try:
        c = http.client.HTTPConnection(*s.addr, timeout=1.0)
        c.request("POST", "/v1/admin/clock", body=json.dumps(body).encode(),
                  headers={"Content-Type": "application/json"})
        ok = c.getresponse().status == 200
        c.close()
        return ok
    except (OSError, TypeError, http.client.HTTPException):
        return False


def restore_plan(seed: int, seconds: float) -> tuple[random.Random, list[tuple[float, str, int]]]:
    """When to back the store up and when to restore it, in seconds from the scheduler's start:
    one pair per period (a 20 s run: a backup at 2 s, the restore at 8-11 s), from the seed."""
    rng = random.Random(f"{seed}/restore")
    period = min(RESTORE_PERIOD_S, seconds)
    plan, k = [], 0
    while True:
        backup = 2.0 + k * period
        restore = backup + rng.uniform(0.3, 0.45) * period
        if restore > seconds - 8.0:  # room for the restore, the fence and holders after it
            break
        plan += [(backup, "backup", k), (restore, "restore", k)]
        k += 1
    return rng, sorted(plan)


def schedule(seed: int, seconds: float, holders: list[Holder], store: Etcd | ZkStore,
             faults: dict, until: float, workdir: Path, fence: bool) -> None:
    rng = random.Random(seed)
    plan_rng, plan = restore_plan(seed, seconds)
    kinds = ["sigstop", "sigkill", store.restart_fault, store.revoke_fault, "clock_back"]
    weights = [3, 3, 1, 2, 2]
    started = time.monotonic()
    backups: dict[int, tuple[Path, float]] = {}
    time.sleep(2.0)  # let everyone take a slot first
    while time.monotonic() < until - 3.0:
        if plan and time.monotonic() - started >= plan[0][0]:
            _, what, k = plan.pop(0)
            if what == "backup":
                backups[k] = take_backup(k, holders, store, faults, workdir, plan_rng)
            elif k in backups:
                restore(k, backups[k], holders, store, faults, fence)
            time.sleep(1.0)
            continue
        kind = rng.choices(kinds, weights)[0]
        h = rng.choice(holders)
        t0 = LOG.now()
        target: str | None = h.name
        if kind == "sigstop":
            if h.stopped:
                continue
            h.stopped = True
            h.signal(signal.SIGSTOP)
            # Past its lease's TTL or session timeout: a successor may take its slot.
            pause = h.ttl_s + 1.5

            def resume(h: Holder = h) -> None:
                h.signal(signal.SIGCONT)
                h.stopped = False

            threading.Timer(pause, resume).start()
            LOG.fault(kind, h.name, t0, t0 + pause)
        elif kind == "sigkill":
            h.signal(signal.SIGCONT)
            h.signal(signal.SIGKILL)
            h.stopped = False
            LOG.fault(kind, h.name, t0)
        elif kind == store.restart_fault:
            store.stop()
            time.sleep(rng.uniform(1.0, 2.5))
            store.start()
            LOG.fault(kind, "store", t0, LOG.now())
        elif kind == store.revoke_fault:
            target = store.revoke(rng)
            if target is None:
                continue
            LOG.fault(kind, target or None, t0)
        elif kind == "clock_back":
            svcs = [x for x in holders if x.kind == "svc" and x.addr and not x.stopped]
            if not svcs:
                continue
            s = rng.choice(svcs)
            if not set_clock(s, {"advance_ms": -rng.randint(50, 700)}):
                continue
            time.sleep(1.0)
            if not set_clock(s, {"offset_ms": 0}):
                continue
            LOG.fault(kind, s.name, t0, LOG.now())
        faults[kind] = faults.get(kind, 0) + 1
        time.sleep(rng.uniform(0.6, 1.4))


def take_backup(k: int, holders: list[Holder], store: Etcd | ZkStore, faults: dict,
                workdir: Path, rng: random.Random) -> tuple[Path, float]:
    """Back the store up, then set one service's clock ahead (a host with skew: the IDs it
    issues from now on are up to 2 s ahead of the others', which the fence must cover)."""
    path = workdir / (f"backup-{k}.db" if isinstance(store, Etcd) else f"backup-{k}")
    t0 = LOG.now()
    store.backup(path)
    # (etcd's snapshot is taken live and touches no holder; ZooKeeper's stops the server.)
    LOG.fault("backup", "store" if isinstance(store, ZkStore) else None, t0, LOG.now())
    faults["backup"] = faults.get("backup", 0) + 1
    s = rng.choice([h for h in holders if h.kind == "svc"])
    skew = rng.randint(*SKEW_MS)
    if set_clock(s, {"offset_ms": skew}):
        LOG.fault("skew", s.name, LOG.now(), skew_ms=skew)
        faults["skew"] = faults.get("skew", 0) + 1
    return path, t0


def restore(k: int, backup: tuple[Path, float], holders: list[Holder], store: Etcd | ZkStore,
            faults: dict, fence: bool) -> None:
    """Restore the store from backup `k`, fenced before any holder can reach it (unless the
    run demonstrates the unfenced restore)."""
    live = {h.name: h.incarnation for h in holders if h.has_generator()}
    t0 = LOG.now()
    try:
        steps = store.restore(backup[0], fence)
    except (RuntimeError, OSError, subprocess.SubprocessError, ValueError) as e:
        LOG.problems.append(f"restore {k + 1} at {t0:.1f} s failed: {e}")
        if store.proc is None:
            store.start()
        return
    LOG.fault("restore", "store", t0, LOG.now(), backup_t=backup[1], fenced=fence, live=live,
              steps=steps)
    faults["restore"] = faults.get("restore", 0) + 1


def stalls(seed: int, holders: list[Holder], faults: dict, until: float) -> None:
    """Stall one relayed holder's link at a time for 1.5-2.5 s (bytes held, then delivered),
    every 1-3 s after the previous stall, from the seed (its own sequence)."""
    rng = random.Random(f"{seed}/stall")
    relayed = [h for h in holders if h.relay]
    time.sleep(3.0)
    while relayed and time.monotonic() < until - 4.0:
        h = rng.choice(relayed)
        hold = rng.uniform(*STALL_S)
        gap = rng.uniform(1.0, 3.0)
        before = lease_counters(h)
        t0 = LOG.now()
        h.relay.stall(True)
        time.sleep(hold)
        h.relay.stall(False)
        t1 = LOG.now()
        after = lease_counters(h)
        # A service tells its renewals that failed (timed out): the stall's ambiguous writes.
        failed = after[1] - before[1] if before and after and before[0] == after[0] else None
        LOG.fault("stall", h.name, t0, t1, seconds=round(hold, 3), renewals_failed=failed)
        faults["stall"] = faults.get("stall", 0) + 1
        time.sleep(gap)


def lease_counters(h: Holder) -> tuple[tuple, int] | None:
    """A service's generator (incarnation, node) and its count of failed lease renewals."""
    if h.kind != "svc" or h.addr is None or h.stopped:
        return None
    try:
        c = http.client.HTTPConnection(*h.addr, timeout=0.5)
        c.request("GET", "/v1/health")
        health = json.loads(c.getresponse().read())
        c.close()
        return (h.incarnation, health.get("node_id")), int(health["counters"]["lease_failures"])
    except (OSError, http.client.HTTPException, ValueError, KeyError, TypeError):
        return None


def supervise(holders: list[Holder], until: float) -> None:
    """Start again any holder whose process has ended (killed, or done with a lost lease)."""
    while time.monotonic() < until:
        for h in holders:
            if h.proc and h.proc.poll() is not None:
                h.restarts += 1
                h.start()
        time.sleep(0.1)


def read_records(path: Path) -> tuple[np.ndarray, np.ndarray]:
    """The IDs of a holder's file in order, and beside each the R its batch reported (-1: not
    known)."""
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
    problems, everything, windows, unknown_r = [], [], {}, 0
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
            # Strictly increasing per generator: a service that healed continues on another
            # node id, whose IDs may start below the last ones of the node it lost.
            nodes = (ids >> np.uint64(NODE_SHIFT)) & np.uint64(NODE_MASK)
            ordered = (np.diff(ids) > 0) | (nodes[1:] != nodes[:-1])
            if not np.all(ordered):
                at = int(np.argmin(ordered))
                problems.append(f"{h.name}#{inc}: IDs not strictly increasing ({int(ids[at])} then "
                                f"{int(ids[at + 1])}, node {int(nodes[at])})")
            ms = (ids >> np.uint64(SHIFT)).astype(np.int64) + EPOCH_MS
            known = highs >= 0
            unknown_r += int(np.count_nonzero(~known))
            past = int(np.count_nonzero(known & (ms > highs)))
            if past:
                problems.append(f"{h.name}#{inc}: {past} IDs past the R their batch reported")
            seen.append(np.unique((ms - start_ms) // 250))
            everything.append(ids)
        got = np.unique(np.concatenate(seen)) if seen else np.zeros(0, dtype=np.int64)
        windows[h.name] = round(int(np.count_nonzero((got >= 0) & (got < span))) / span, 4)
    union = np.sort(np.concatenate(everything)) if everything else np.zeros(0, dtype=np.uint64)
    dup_at = np.flatnonzero(np.diff(union) == 0)
    dups = int(len(dup_at))
    if dups:
        problems.append(f"{dups} duplicate IDs in the union")
        problems += describe_duplicates(holders, workdir, union[dup_at[:5]])
    return {"problems": problems, "ids": int(len(union)), "duplicates": dups,
            "availability": windows, "ids_without_r": unknown_r}


def describe_duplicates(holders: list[Holder], workdir: Path, some: np.ndarray) -> list[str]:
    """Who issued a few of the duplicates: holder, incarnation, node, time."""
    who: dict[int, list[str]] = {int(d): [] for d in some}
    for h in holders:
        for inc in range(1, h.incarnation + 1):
            path = workdir / f"{h.name}.{inc}.bin"
            if not path.exists():
                continue
            ids, highs = read_records(path)
            for at in np.flatnonzero(np.isin(ids, some)):
                who[int(ids[at])].append(f"{h.name}#{inc} (its R {int(highs[at])})")
    out = []
    for d, names in who.items():
        ms = (d >> SHIFT) + EPOCH_MS
        out.append(f"duplicate {d} (node {(d >> NODE_SHIFT) & NODE_MASK}, sequence "
                   f"{d & 0xFFF}, unix_ms {ms}, {ms - LOG.start_ms} ms into the run) issued by "
                   f"{', '.join(names)}")
    return out


def judge_faults(holders: list[Holder], end_t: float) -> tuple[dict, list[str]]:
    """What the restores did to the live holders, and whether a stall cost a lease."""
    problems: list[str] = []
    ttl = {h.name: h.ttl_s for h in holders}
    incarnation = {h.name: h.incarnation for h in holders}
    faults, losses = LOG.faults, LOG.losses

    def running(name: str, t0: float, t1: float) -> float:
        """How long `name` ran (not SIGSTOPped) between t0 and t1."""
        stopped = sum(max(0.0, min(t1, f["t1"]) - max(t0, f["t0"])) for f in faults
                      if f["kind"] == "sigstop" and f["target"] == name)
        return t1 - t0 - stopped
    restores = []
    for r in (f for f in faults if f["kind"] == "restore"):
        seen = {"noticed_rollback": [], "lost_otherwise": [], "killed_first": [],
                "no_time_to_tell": [], "kept_going": []}
        for name, inc in sorted(r["live"].items()):
            xs = [x for x in losses if x["holder"] == name and x["inc"] == inc
                  and r["t0"] - 0.5 <= x["t"] <= r["t1"] + 30.0]
            if any(ROLLBACK in x["reason"] for x in xs):
                seen["noticed_rollback"].append(name)
            elif xs:
                seen["lost_otherwise"].append(f"{name}: {xs[0]['reason'][:120]}")
            elif incarnation[name] > inc and any(
                    f["kind"] == "sigkill" and f["target"] == name and f["t0"] >= r["t0"]
                    for f in faults):
                seen["killed_first"].append(name)
            elif running(name, r["t1"], end_t) < NOTICE_S:
                # SIGSTOPped soon after the store came back, or the run ended: not a verdict.
                seen["no_time_to_tell"].append(name)
            else:
                seen["kept_going"].append(name)
                problems.append(f"restore at {r['t0']:.1f} s: {name}#{inc} held a lease, ran "
                                f"{running(name, r['t1'], end_t):.1f} s after the restored store "
                                "served again, and never reported its lease lost")
        fence = r["steps"].get("fence") or {}
        restores.append({"at_s": r["t0"], "serving_after_s": r["steps"].get("serving_s"),
                         "backup_at_s": r["backup_t"], "fenced": r["fenced"],
                         "fence_ms": fence.get("fence_ms"), "margin_ms": FENCE_MARGIN_MS,
                         "steps": {k: v for k, v in r["steps"].items() if k != "fence"},
                         "live_holders": len(r["live"]),
                         **{k: v for k, v in seen.items()}})
    stall_list, in_stall = [f for f in faults if f["kind"] == "stall"], []
    for s in stall_list:
        for x in losses:
            if x["holder"] != s["target"] or not s["t0"] <= x["t"] <= s["t1"] + STALL_GRACE_S:
                continue
            # Another fault on this holder, or on the store, since a TTL before the stall.
            others = sorted({f["kind"] for f in faults
                             if f["kind"] not in ("stall", "clock_back", "skew")
                             and f["target"] in (s["target"], "store")
                             and f["t0"] <= x["t"] and f["t1"] >= s["t0"] - ttl[s["target"]] - 1.0})
            in_stall.append({"holder": x["holder"], "t": x["t"], "stall_t0": s["t0"],
                             "stall_s": s["seconds"], "reason": x["reason"][:200],
                             "explained_by": others})
            if not others:
                problems.append(f"{x['holder']}#{x['inc']} lost its lease at {x['t']:.2f} s during "
                                f"a {s['seconds']:.2f} s stall ({s['t0']:.2f}-{s['t1']:.2f} s; TTL "
                                f"{ttl[s['target']]} s) with no other fault on it: {x['reason']}")
    # A participant tells its failed renewals once a batch sees them (after the stall): count
    # those told between the stall's start and shortly after its end.
    for s in stall_list:
        if s.get("renewals_failed") is not None or s["target"].startswith("svc"):
            continue
        told, prev = 0, {}
        for name, inc, t, n in sorted(LOG.failures, key=lambda x: x[2]):
            if name == s["target"]:
                if s["t0"] <= t <= s["t1"] + STALL_GRACE_S:
                    told += n - prev.get(inc, 0)
                prev[inc] = n
        s["renewals_failed"] = told
    measured = [s["renewals_failed"] for s in stall_list if s.get("renewals_failed") is not None]
    stall_report = {"count": len(stall_list),
                    "seconds": [s["seconds"] for s in stall_list],
                    # Of the stalls whose holder told its failed renewals (a service's health
                    # read around the stall; a participant's line): how many timed one out.
                    "stalls_measured": len(measured),
                    "stalls_with_timeouts": sum(1 for n in measured if n > 0),
                    "renewals_timed_out": sum(measured),
                    "holders": sorted({s["target"] for s in stall_list}),
                    "ttl_s": RELAY_TTL_S,
                    "leases_lost_in_stall": len(in_stall),
                    "unexplained": sum(1 for x in in_stall if not x["explained_by"]),
                    "losses": in_stall}
    causes: dict[str, int] = {}
    for x in losses:
        why = x["reason"]
        key = ("rollback" if ROLLBACK in why else "expired" if "expired" in why
               else "deleted" if "deleted" in why or "no longer ours" in why else "other")
        causes[key] = causes.get(key, 0) + 1
    timeline = [{k: v for k, v in f.items() if k not in ("live", "steps")} for f in faults]
    return {"restores": restores, "stalls": stall_report, "lease_losses": causes,
            "losses": [{**x, "reason": x["reason"][:200]} for x in losses],
            "timeline": sorted(timeline, key=lambda f: f["t0"])}, problems


def summary(faults: dict, judged: dict) -> str:
    parts = []
    for kind, n in sorted(faults.items()):
        if kind == "restore":
            rs = judged["restores"]
            fenced = "fenced" if rs and all(r["fenced"] for r in rs) else "NOT fenced"
            def count(*keys: str) -> int:
                return sum(len(r[k]) for r in rs for k in keys)

            parts.append(
                f"restores {n} ({fenced}; {sum(r['live_holders'] for r in rs)} live holders: "
                f"{count('noticed_rollback')} saw the rollback, {count('lost_otherwise')} lost "
                f"the lease otherwise, {count('killed_first', 'no_time_to_tell')} killed or "
                f"stopped first, {count('kept_going')} kept going)")
        elif kind == "stall":
            st = judged["stalls"]
            timed = (f"; {st['stalls_with_timeouts']} of {st['stalls_measured']} measured timed "
                     "a renewal out" if st["stalls_measured"] else "")
            parts.append(f"stalls {n} ({st['unexplained']} leases lost to a stall, "
                         f"{st['leases_lost_in_stall'] - st['unexplained']} in a stall with "
                         f"another fault{timed})")
        else:
            parts.append(f"{kind} {n}")
    return ", ".join(parts)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--store", choices=["etcd", "zookeeper"], default="etcd")
    ap.add_argument("--seconds", type=float, default=20.0)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--report", type=Path)
    ap.add_argument("--restore-unfenced", action="store_true",
                    help="restore without the fence (a demonstration of what it prevents)")
    ap.add_argument("--keep-logs", action="store_true",
                    help="keep the run's directory (ID logs, stderr, store data) when it passes")
    args = ap.parse_args()
    needed = (ETCD, ETCDCTL, str(PY)) if args.store == "etcd" else (ZK_JAVA, ZK_JAR)
    for binary in (*needed, str(CLI)):
        if not os.path.exists(binary):
            sys.exit(f"nemesis: {binary} is missing (make build, make deps-apt)")
    workdir = Path(tempfile.mkdtemp(prefix="polyflake-nemesis-"))
    wall = time.monotonic()
    if args.store == "etcd":
        store: Etcd | ZkStore = Etcd(workdir)
        kinds = [("py-0", "py", False), ("py-1", "py", True), ("js-0", "js", False),
                 ("js-1", "js", True), ("svc-0", "svc", False), ("svc-1", "svc", True)]
    else:
        store = ZkStore(workdir)
        kinds = [(f"svc-{i}", "svc", i >= 3) for i in range(6)]
    holders = [Holder(n, k, workdir, store, relayed) for n, k, relayed in kinds]
    faults: dict[str, int] = {}
    start_ms = int(time.time() * 1000)
    until = time.monotonic() + args.seconds
    LOG.t0, LOG.start_ms = time.monotonic(), start_ms  # the run's times count from here
    try:
        for h in holders:
            h.start()
        threads = [threading.Thread(target=drive, args=(h, until), daemon=True)
                   for h in holders if h.kind == "svc"]
        threads.append(threading.Thread(target=supervise, args=(holders, until), daemon=True))
        threads.append(threading.Thread(
            target=schedule, args=(args.seed, args.seconds, holders, store, faults, until, workdir,
                                   not args.restore_unfenced),
            daemon=True))
        threads.append(threading.Thread(target=stalls, args=(args.seed, holders, faults, until),
                                        daemon=True))
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=max(0.1, until - time.monotonic() + 10))
    finally:
        end_t = LOG.now()  # the holders ran until here
        for h in holders:
            if h.relay:
                h.relay.stall(False)
        for h in holders:
            h.signal(signal.SIGCONT)
            h.signal(signal.SIGTERM)
        for h in holders:
            if h.proc:
                try:
                    h.proc.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    h.proc.kill()
        for h in holders:
            if h.relay:
                h.relay.close()
        store.stop()
    end_ms = int(time.time() * 1000)
    verdict = check(holders, workdir, start_ms, end_ms)
    judged, fault_problems = judge_faults(holders, end_t)
    problems = LOG.problems + verdict["problems"] + fault_problems
    restarts = {h.name: h.incarnation - 1 for h in holders}
    result = {"store": args.store, "seconds": args.seconds, "seed": args.seed, "faults": faults,
              "ids_checked": verdict["ids"], "duplicates": verdict["duplicates"],
              "ids_without_r": verdict["ids_without_r"],
              "availability": verdict["availability"], "incarnations": restarts,
              "heals": {h.name: h.heals for h in holders if h.kind == "svc"},
              "forced_restarts": {h.name: h.forced for h in holders if h.forced},
              **judged,
              "wall_s": round(time.monotonic() - wall, 1),
              "problems": problems}
    print(json.dumps(result, indent=1))
    if args.report:
        args.report.write_text(json.dumps(result, indent=1) + "\n")
    print(f"nemesis ({args.store}, seed {args.seed}): {summary(faults, judged)}")
    if problems or not faults or verdict["ids"] == 0:
        print(f"nemesis: FAILED (the logs are in {workdir})", file=sys.stderr)
        return 1
    if args.keep_logs:
        print(f"nemesis: the logs are in {workdir}")
    else:
        shutil.rmtree(workdir, ignore_errors=True)
    print(f"nemesis ({args.store}): {sum(faults.values())} faults, {verdict['ids']:,} IDs checked, "
          f"0 duplicates, no ID past its holder's R ({result['wall_s']} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
