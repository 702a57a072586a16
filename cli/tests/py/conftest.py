"""A running `polyflake serve` for the service's Python tests (schemathesis, the Prometheus text
parser). The binary is $POLYFLAKE_BIN, else $POLYFLAKE_RELEASE_DIR/polyflake (the Makefile's
target/<host triple>/release), else $CARGO_TARGET_DIR/release/polyflake or the repository's
target/release/polyflake (a plain `cargo build --release`); `make test-cli` builds it first."""

import os
import pathlib
import signal
import subprocess
import threading
import urllib.request

import pytest

REPO = pathlib.Path(__file__).resolve().parents[3]


def binary() -> str:
    if os.environ.get("POLYFLAKE_BIN"):
        return os.environ["POLYFLAKE_BIN"]
    if os.environ.get("POLYFLAKE_RELEASE_DIR"):
        return str(pathlib.Path(os.environ["POLYFLAKE_RELEASE_DIR"]) / "polyflake")
    target = pathlib.Path(os.environ.get("CARGO_TARGET_DIR", REPO / "target"))
    return str(target / "release" / "polyflake")


class Service:
    """`polyflake serve --listen 127.0.0.1:0 ARGS...`, stopped with SIGTERM."""

    def __init__(self, *args: str):
        self.proc = subprocess.Popen(
            [binary(), "serve", "--listen", "127.0.0.1:0", *args],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.banner = self.proc.stdout.readline()
        words = [w for w in self.banner.split() if w.startswith("http://")]
        if not words:
            self.proc.wait(timeout=10)
            raise RuntimeError(f"serve did not start: {self.proc.stderr.read()}")
        self.url = words[0]
        # Keep draining both pipes so the server never blocks on them.
        for pipe in (self.proc.stdout, self.proc.stderr):
            threading.Thread(target=pipe.read, daemon=True).start()

    def get(self, path: str) -> tuple[int, dict, bytes]:
        try:
            with urllib.request.urlopen(self.url + path, timeout=20) as r:
                return r.status, dict(r.headers), r.read()
        except urllib.error.HTTPError as e:
            return e.code, dict(e.headers), e.read()

    def post_json(self, path: str, body: str) -> tuple[int, bytes]:
        req = urllib.request.Request(
            self.url + path,
            data=body.encode(),
            headers={"Content-Type": "application/json"},
            method="POST",
        )
        try:
            with urllib.request.urlopen(req, timeout=20) as r:
                return r.status, r.read()
        except urllib.error.HTTPError as e:
            return e.code, e.read()

    def stop(self) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        return self.proc.returncode


@pytest.fixture
def service():
    started = []

    def start(*args: str) -> Service:
        s = Service(*args)
        started.append(s)
        return s

    yield start
    for s in started:
        s.stop()
