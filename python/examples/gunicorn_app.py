"""polyflake under a pre-fork server (gunicorn): each worker makes its generator AFTER the fork,
from a file lease, so every worker has its own node id and no two processes share one.

    gunicorn -c python:gunicorn_app gunicorn_app:app     (this file is the config and the app)

    GET /ids?n=100   {"pid", "node_id", "ids": [...]} (IDs as decimal text, as JSON should carry)
    GET /status      {"pid", "node_id"} or, for a worker with no generator, 503 {"error", ...}

Settings (environment): POLYFLAKE_LEASE_DIR, the lease directory (default: the core's shared
one, /var/tmp/polyflake-leases); POLYFLAKE_EXAMPLE_NODE_ID, a static node id for every worker instead of a lease: the
failure mode this recipe avoids (one worker holds it, the others get NodeIdInUse, whose message
names the holder's pid); POLYFLAKE_EXAMPLE_STATUS_DIR, where each worker writes what it got
(`worker-<pid>.json`, for the tests).
"""

import json
import os
from urllib.parse import parse_qs

import polyflake

# gunicorn reads its settings from this module (`-c python:gunicorn_app`).
workers = int(os.environ.get("POLYFLAKE_EXAMPLE_WORKERS", "4"))
worker_class = "sync"

LEASE_DIR = os.environ.get("POLYFLAKE_LEASE_DIR", "/var/tmp/polyflake-leases")

_made_in = None  # the pid the generator below was made in
_generator = None
_error = None


def generator():
    """This process's generator, made on first use in each process (a forked worker never uses
    one made in the master: the pid tells). None if it was refused (`_error` says why)."""
    global _made_in, _generator, _error
    if _made_in != os.getpid():
        _made_in, _generator, _error = os.getpid(), None, None
        static = os.environ.get("POLYFLAKE_EXAMPLE_NODE_ID")
        try:
            if static is not None:
                _generator = polyflake.Snowflake(node_id=int(static))
            else:
                reserve = os.environ.get("POLYFLAKE_EXAMPLE_RESERVE_MS")  # the tests: 200
                settings = {"reserve_ms": int(reserve)} if reserve else {}
                g = polyflake.Snowflake.from_file_lease(LEASE_DIR, **settings)
                g.wait_ready(30_000)  # the new slot's restart guard
                _generator = g
        except polyflake.NodeIdInUse as e:
            _error = e
        _report()
    return _generator


def _report():
    status_dir = os.environ.get("POLYFLAKE_EXAMPLE_STATUS_DIR")
    if status_dir:
        path = os.path.join(status_dir, f"worker-{os.getpid()}.json")
        with open(path + ".tmp", "w", encoding="utf-8") as f:
            json.dump(_status(), f)
        os.replace(path + ".tmp", path)


def _status():
    if _generator is not None:
        return {"pid": os.getpid(), "node_id": _generator.node_id}
    e = _error
    return {"pid": os.getpid(), "error": e.code, "holder_pid": e.holder_pid, "holder": e.holder,
            "message": str(e)}


def post_fork(server, worker):
    """gunicorn's hook, in each worker right after the fork: take the worker's own node id."""
    generator()


def worker_exit(server, worker):
    """Free the slot at once when a worker stops (a crash frees it too, after its lease ends)."""
    if _generator is not None and _made_in == os.getpid():
        _generator.close()


def app(environ, start_response):
    g = generator()
    if g is None:
        return _json(start_response, "503 Service Unavailable", _status())
    path = environ.get("PATH_INFO", "")
    if path == "/status":
        return _json(start_response, "200 OK", _status())
    if path == "/ids":
        n = int(parse_qs(environ.get("QUERY_STRING", "")).get("n", ["1"])[0])
        ids = [str(x) for x in g.next_ids(n)]
        return _json(start_response, "200 OK", {**_status(), "ids": ids})
    return _json(start_response, "404 Not Found", {"error": "not found"})


def _json(start_response, status, body):
    data = json.dumps(body).encode()
    start_response(status, [("Content-Type", "application/json"),
                            ("Content-Length", str(len(data)))])
    return [data]
