"""A FastAPI service that mints polyflake IDs per request (docs/python.md, "In an async service").

    POLYFLAKE_LEASE_DIR=/var/lib/ids uvicorn fastapi_app:app --port 8000

- The node id is a slot of a file lease: every process of the host leases from one directory,
  so no two share a node id. The slot is taken at startup and freed at shutdown.
- IDs are minted without blocking the event loop (`anext_ids`: a strict batch that has to wait
  for the next millisecond waits in a thread).
- `GET /health` is 200 while the generator can issue and 503 otherwise (the restart guard of a
  new slot, a clock stepped back, a lost lease), for a load balancer; `GET /metrics` is
  Prometheus text. A refused call is a 503 with the core's error code.
"""

import os
from contextlib import asynccontextmanager
from typing import AsyncIterator, Dict, List, Union

from fastapi import FastAPI, Query, Request, Response
from fastapi.responses import JSONResponse
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest

import polyflake
from polyflake.prometheus import Collector

LEASE_DIR = os.environ.get("POLYFLAKE_LEASE_DIR", "/var/tmp/polyflake-leases")


@asynccontextmanager
async def lifespan(app: FastAPI) -> AsyncIterator[None]:
    # A new slot first waits out one reserve (5 s): /health says 503 until then.
    with polyflake.Snowflake.from_file_lease(LEASE_DIR) as ids:
        metrics = CollectorRegistry()
        metrics.register(Collector(ids))
        app.state.ids, app.state.metrics = ids, metrics
        yield
    # Leaving the block closed the generator: the slot is free for the next process now.


app = FastAPI(lifespan=lifespan)


def generator() -> polyflake.Snowflake:
    """The generator the lifespan made (app.state is untyped)."""
    ids: polyflake.Snowflake = app.state.ids
    return ids


@app.exception_handler(polyflake.PolyflakeError)
async def refused(request: Request, e: polyflake.PolyflakeError) -> JSONResponse:
    # The generator refused rather than risk a duplicate: try another instance, or again soon.
    body = {"error": {"code": e.code, "message": str(e)}}
    return JSONResponse(body, status_code=503, headers={"Retry-After": "1"})


@app.post("/ids")
async def new_ids(count: int = Query(1, ge=1, le=4096)) -> Dict[str, Union[List[str], int]]:
    g = generator()
    ids = await g.anext_ids(count)
    # Decimal strings: a JavaScript client's JSON.parse would round a bare 64-bit number.
    return {"ids": [str(i) for i in ids], "node_id": g.node_id}


@app.get("/health")
async def health() -> JSONResponse:
    h = generator().health()
    return JSONResponse(h.to_dict(), status_code=200 if h.ok else 503)


@app.get("/metrics")
async def metrics() -> Response:
    registry: CollectorRegistry = app.state.metrics
    return Response(generate_latest(registry), media_type=CONTENT_TYPE_LATEST)
