"""Byte order against a real PostgreSQL 15: 10,000 of our UUIDv7s, issued in
order and inserted in another, come back from `ORDER BY` in issue order, both as the `uuid` type
and as text (bytewise and under the default and ICU collations).

The server is Debian's postgresql-15 (`make deps-apt` installs it), started here as the
`postgres` user with runuser, on a temporary data directory and a free loopback port, and
stopped (its whole process group) when the module ends, also on failure. Nothing stands in for
PostgreSQL."""

import os
import random
import shutil
import signal
import socket
import subprocess
import tempfile
import time

import pytest

import polyflake
from polyflake import Uuid7Generator

BIN = "/usr/lib/postgresql/15/bin"
PSQL = "/usr/bin/psql"
COUNT = 10_000


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Postgres:
    """A throwaway PostgreSQL 15: initdb in a temporary directory, then `postgres` in the
    foreground (our child, in its own process group, so stopping it cannot miss a process)."""

    def __init__(self):
        for binary in (f"{BIN}/initdb", f"{BIN}/postgres", PSQL):
            assert os.path.exists(binary), f"{binary} is missing: `make deps-apt` installs postgresql"
        # PostgreSQL refuses to run as root; as another user it runs as that user.
        self.as_postgres = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
        self.dir = tempfile.mkdtemp(prefix="polyflake-py-pg-")
        if self.as_postgres:
            shutil.chown(self.dir, "postgres", "postgres")
        self.port = free_port()
        self.proc = None
        data = os.path.join(self.dir, "data")
        subprocess.run(
            [*self.as_postgres, f"{BIN}/initdb", "-D", data, "-U", "postgres", "-A", "trust",
             "-E", "UTF8", "--locale=C.UTF-8", "--no-sync"],
            check=True, capture_output=True,
        )
        self.log = open(os.path.join(self.dir, "server.log"), "wb")
        self.proc = subprocess.Popen(
            [*self.as_postgres, f"{BIN}/postgres", "-D", data, "-p", str(self.port),
             "-c", "listen_addresses=127.0.0.1", "-c", f"unix_socket_directories={self.dir}",
             "-c", "fsync=off"],
            stdin=subprocess.DEVNULL, stdout=self.log, stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        deadline = time.monotonic() + 60
        while self.psql("SELECT 1").returncode != 0:
            if time.monotonic() > deadline or self.proc.poll() is not None:
                self.stop()
                pytest.fail(f"PostgreSQL did not start within 60 s (log: {self.dir}/server.log)")
            time.sleep(0.2)

    def psql(self, sql, stdin=None):
        return subprocess.run(
            [PSQL, "-h", "127.0.0.1", "-p", str(self.port), "-U", "postgres", "-d", "postgres",
             "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-c", sql],
            input=stdin, capture_output=True, text=True,
        )

    def rows(self, sql, stdin=None):
        r = self.psql(sql, stdin)
        assert r.returncode == 0, r.stderr
        return r.stdout.splitlines()

    def stop(self):
        if self.proc is not None and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGINT)  # PostgreSQL's fast shutdown
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        if hasattr(self, "log"):
            self.log.close()
        shutil.rmtree(self.dir, ignore_errors=True)


@pytest.fixture(scope="module")
def postgres():
    pg = Postgres()
    try:
        yield pg
    finally:
        pg.stop()


def check_sorts_in_issue_order(pg, table, issued):
    shuffled = issued[:]
    random.Random(15).shuffle(shuffled)  # inserted out of order: ORDER BY has to sort
    pg.rows(f"CREATE TABLE {table} (u uuid NOT NULL, t text NOT NULL)")
    pg.rows(f"COPY {table} (u, t) FROM STDIN", stdin="".join(f"{x}\t{x}\n" for x in shuffled))
    assert pg.rows(f"SELECT count(*) FROM {table}") == [str(COUNT)]
    assert pg.rows(f"SELECT u FROM {table} ORDER BY u") == issued  # uuid: its 16 bytes, in order
    assert pg.rows(f'SELECT t FROM {table} ORDER BY t COLLATE "C"') == issued  # text: bytewise
    assert pg.rows(f"SELECT t FROM {table} ORDER BY t") == issued  # the database's collation
    if pg.rows("SELECT count(*) FROM pg_collation WHERE collname = 'und-x-icu'") == ["1"]:
        assert pg.rows(f'SELECT t FROM {table} ORDER BY t COLLATE "und-x-icu"') == issued


def test_monotonic_uuid7s_sort_in_issue_order(postgres):
    g = Uuid7Generator(mode="monotonic")
    issued = [g.next_str() for _ in range(COUNT)]  # single calls, in order
    check_sorts_in_issue_order(postgres, "monotonic_ids", issued)


def test_the_module_uuid7s_sort_in_issue_order(postgres):
    issued = [str(polyflake.uuid7()) for _ in range(COUNT)]  # strict, process-wide
    check_sorts_in_issue_order(postgres, "strict_ids", issued)
    # PostgreSQL reads the same version and timestamp from the bytes.
    first = postgres.rows(
        "SELECT get_byte(uuid_send(u), 6) >> 4, "
        "('x' || substr(replace(u::text, '-', ''), 1, 12))::bit(48)::bigint "
        f"FROM strict_ids WHERE u = '{issued[0]}'"
    )
    assert first == [f"7|{polyflake.uuid7_timestamp_ms(issued[0])}"]
