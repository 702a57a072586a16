"""schemathesis against the live service: every answer matches the OpenAPI description
(status, content type, headers, body schema), nothing is a 5xx, invalid requests are refused
and valid ones accepted, unsupported methods get 405, and every ID handed out during the run is
unique (st_hooks.py). Bounded and seeded: ST_MAX_EXAMPLES examples per operation (default 300),
ST_SEED (default 14)."""

import json
import os
import pathlib
import subprocess
import sys

HERE = pathlib.Path(__file__).resolve().parent
MAX_EXAMPLES = int(os.environ.get("ST_MAX_EXAMPLES", "300"))
SEED = int(os.environ.get("ST_SEED", "14"))


def run_schemathesis(url: str, ids_log: pathlib.Path, report: pathlib.Path, *extra: str):
    env = dict(os.environ)
    env["SCHEMATHESIS_HOOKS"] = "st_hooks"
    env["PYTHONPATH"] = str(HERE) + os.pathsep + env.get("PYTHONPATH", "")
    env["ST_IDS_LOG"] = str(ids_log)
    cmd = [
        sys.executable, "-m", "schemathesis.cli", "run", url + "/openapi.json",
        "--checks", "all",
        "--max-examples", str(MAX_EXAMPLES),
        "--seed", str(SEED),
        "--generation-database", "none",
        "--no-color",
        "--report", "junit", "--report-junit-path", str(report),
        *extra,
    ]
    # schemathesis keeps a cache in its working directory: a scratch one, not the source tree.
    return subprocess.run(
        cmd, env=env, cwd=report.parent, capture_output=True, text=True, timeout=600
    )


def test_every_answer_matches_the_schema_and_ids_are_unique(service, tmp_path):
    s = service("--node-id", "41")
    ids_log = tmp_path / "ids.txt"
    run = run_schemathesis(s.url, ids_log, tmp_path / "junit.xml")
    print(run.stdout[-6000:])
    assert run.returncode == 0, run.stdout[-6000:] + run.stderr[-3000:]
    assert "No issues found" in run.stdout
    ids = [int(line) for line in ids_log.read_text().split()]
    # The run really minted (so the uniqueness check had something to check) ...
    assert len(ids) >= 100, f"only {len(ids)} IDs seen"
    assert len(set(ids)) == len(ids), "an ID was handed out twice"
    print(f"schemathesis: {len(ids)} IDs handed out during the run, all distinct")
    # ... and the service counted at least as many as schemathesis saw.
    status, _, body = s.get("/metrics")
    assert status == 200
    issued = next(
        float(line.split()[1])
        for line in body.decode().splitlines()
        if line.startswith("polyflake_ids_issued_total ")
    )
    assert issued >= len(ids)
    # The service lived through it.
    status, _, body = s.get("/v1/health")
    assert status == 200, body


def test_the_uniqueness_check_can_fail():
    """The hook's check, fed the same ID in two different answers, refuses."""
    sys.path.insert(0, str(HERE))
    import st_hooks

    class Answer:
        status_code = 200

        def __init__(self, ids):
            self.content = json.dumps({"ids": [str(i) for i in ids]}).encode()

    class Case:
        method = "POST"
        path = "/v1/ids"

    first, again, other = Answer([901, 902]), Answer([903, 901]), Answer([904])
    st_hooks.ids_are_unique_across_the_run(None, first, Case())
    st_hooks.ids_are_unique_across_the_run(None, first, Case())  # the same answer re-checked
    st_hooks.ids_are_unique_across_the_run(None, other, Case())
    try:
        st_hooks.ids_are_unique_across_the_run(None, again, Case())
    except AssertionError as e:
        assert "901" in str(e)
    else:
        raise AssertionError("a duplicate ID passed the check")
