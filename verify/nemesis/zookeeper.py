"""A real ZooKeeper for the nemesis run, and the few ZooKeeper requests the run makes itself.

`ZooKeeper` starts Debian's ZooKeeper 3.8 (its Java main, as tests/stores/with_zookeeper.sh
does) on 127.0.0.1 with a free port and a temporary data dir; `stop` kills it and `start` brings
it back on the same port and data (or on a private port, where no holder looks). `Client` speaks
just enough of the ZooKeeper wire protocol (jute framing: connect, getChildren, getData, delete,
close) for the run to list and delete a holder's slot znode, as an operator or a broken tool
would, without a client library.
"""

from __future__ import annotations

import socket
import struct
import subprocess
import sys
import time
from pathlib import Path

JAVA, JAR = "/usr/bin/java", "/usr/share/java/zookeeper.jar"
EXTRA_JARS = ["/usr/share/java/netty-codec.jar", "/usr/share/java/slf4j-simple.jar"]

# Operation codes and error codes of the protocol (ZooDefs.OpCode, KeeperException.Code).
OP_DELETE, OP_GET_DATA, OP_GET_CHILDREN, OP_CLOSE = 2, 4, 8, -11
ERR_NO_NODE, ERR_BAD_VERSION = -101, -103


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class ZooKeeper:
    """One standalone ZooKeeper server; tickTime 200 ms so sessions of 400 ms to 60 s exist."""

    def __init__(self, workdir: Path):
        self.dir = workdir / "zookeeper"
        self.dir.mkdir(parents=True, exist_ok=True)
        self.data = self.dir / "data"
        self.port = free_port()
        self.ensemble = f"127.0.0.1:{self.port}"
        self.proc: subprocess.Popen | None = None
        self.start()

    def config(self, port: int) -> Path:
        """A server config on `port` over the one data dir (the run's port, or a private one)."""
        cfg = self.dir / f"zoo-{port}.cfg"
        cfg.write_text(
            f"tickTime=200\ndataDir={self.data}\nclientPort={port}\n"
            "clientPortAddress=127.0.0.1\nmaxSessionTimeout=60000\nadmin.enableServer=false\n"
            "4lw.commands.whitelist=ruok,srvr,cons\n")
        return cfg

    def start(self, port: int | None = None) -> None:
        """Start on the run's port, or on `port` (where no holder looks: to fence a restored
        store before any holder reaches it)."""
        port = port or self.port
        classpath = ":".join([JAR, *[j for j in EXTRA_JARS if Path(j).exists()]])
        log = open(self.dir / "zookeeper.log", "ab")
        self.proc = subprocess.Popen(
            [JAVA, "-Xmx128m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
             "-Dzookeeper.jmx.log4j.disable=true", "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
             "-cp", classpath, "org.apache.zookeeper.server.ZooKeeperServerMain",
             str(self.config(port))],
            stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 60
        while not self.serving(port):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                sys.exit(f"nemesis: ZooKeeper did not serve within 60 s (log: {self.dir}/zookeeper.log)")
            time.sleep(0.1)

    def serving(self, port: int | None = None) -> bool:
        """`srvr` names a mode only once the server takes sessions (`ruok` answers earlier)."""
        try:
            with socket.create_connection(("127.0.0.1", port or self.port), timeout=1) as s:
                s.sendall(b"srvr")
                reply = b""
                while chunk := s.recv(4096):
                    reply += chunk
            return b"Mode: " in reply
        except OSError:
            return False

    def stop(self) -> None:
        if self.proc:
            self.proc.kill()
            self.proc.wait()
            self.proc = None


def _string(text: str) -> bytes:
    data = text.encode()
    return struct.pack(">i", len(data)) + data


class Client:
    """A ZooKeeper session over one socket, one request at a time."""

    def __init__(self, ensemble: str, timeout_ms: int = 4000):
        host, port = ensemble.rsplit(":", 1)
        self.sock = socket.create_connection((host, int(port)), timeout=timeout_ms / 1000)
        self.xid = 0
        # ConnectRequest: protocolVersion, lastZxidSeen, timeOut, sessionId, passwd, readOnly.
        self._send(struct.pack(">iqiqi", 0, 0, timeout_ms, 0, 16) + b"\0" * 16 + b"\0")
        reply = self._recv()
        if len(reply) < 16:
            raise OSError("ZooKeeper refused the session")

    def _send(self, payload: bytes) -> None:
        self.sock.sendall(struct.pack(">i", len(payload)) + payload)

    def _recv(self) -> bytes:
        head = self._exact(4)
        return self._exact(struct.unpack(">i", head)[0])

    def _exact(self, n: int) -> bytes:
        out = b""
        while len(out) < n:
            chunk = self.sock.recv(n - len(out))
            if not chunk:
                raise OSError("ZooKeeper closed the connection")
            out += chunk
        return out

    def _call(self, op: int, body: bytes) -> tuple[int, bytes]:
        self.xid += 1
        self._send(struct.pack(">ii", self.xid, op) + body)
        while True:
            reply = self._recv()
            xid, _zxid, err = struct.unpack_from(">iqi", reply)
            if xid == self.xid:  # (watch events, xid -1, are not asked for)
                return err, reply[16:]

    def children(self, path: str) -> list[str]:
        err, body = self._call(OP_GET_CHILDREN, _string(path) + b"\0")
        if err == ERR_NO_NODE:
            return []
        if err:
            raise OSError(f"getChildren {path}: error {err}")
        (count,), at, names = struct.unpack_from(">i", body), 4, []
        for _ in range(max(count, 0)):
            (n,) = struct.unpack_from(">i", body, at)
            names.append(body[at + 4:at + 4 + n].decode())
            at += 4 + n
        return names

    def get(self, path: str) -> bytes | None:
        err, body = self._call(OP_GET_DATA, _string(path) + b"\0")
        if err == ERR_NO_NODE:
            return None
        if err:
            raise OSError(f"getData {path}: error {err}")
        (n,) = struct.unpack_from(">i", body)
        return body[4:4 + n] if n >= 0 else b""

    def delete(self, path: str) -> bool:
        """Delete `path` whatever its version; False when it was not there."""
        err, _ = self._call(OP_DELETE, _string(path) + struct.pack(">i", -1))
        if err and err != ERR_NO_NODE:
            raise OSError(f"delete {path}: error {err}")
        return err == 0

    def close(self) -> None:
        try:
            self._call(OP_CLOSE, b"")
        except OSError:
            pass
        self.sock.close()
