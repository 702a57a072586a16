"""schemathesis against the live service: every operation of the OpenAPI document the service
serves (GET /openapi.json included) with `--checks all`: every answer matches the description
(status, content type, headers, body schema), nothing is a 5xx, requests the schema calls invalid
are refused and those it calls valid are accepted (positive_data_acceptance: `{"count": 3664.0}`
is 3664 IDs), unsupported methods get 405, and every ID handed out during the run is unique
(st_hooks.py). Bounded and seeded: ST_MAX_EXAMPLES examples per operation (default 300), ST_SEED
(default 14); the command and schemathesis's summary are printed."""

import json
import os
import pathlib
import shlex
import subprocess
import sys

import jsonschema_rs

HERE = pathlib.Path(__file__).resolve().parent
MAX_EXAMPLES = int(os.environ.get("ST_MAX_EXAMPLES", "300"))
SEED = int(os.environ.get("ST_SEED", "14"))
METHODS = {"get", "put", "post", "delete", "options", "head", "patch", "trace"}


def schemathesis_command(url: str, report: pathlib.Path, *extra: str) -> list[str]:
    return [
        sys.executable, "-m", "schemathesis.cli", "run", url + "/openapi.json",
        "--checks", "all",
        "--max-examples", str(MAX_EXAMPLES),
        "--seed", str(SEED),
        "--generation-database", "none",
        # schemathesis leaves out the operation that serves the document it reads unless a
        # filter names it: this one names every path, so GET /openapi.json is tested too.
        "--include-path-regex", "^/",
        "--no-color",
        "--report", "junit", "--report-junit-path", str(report),
        *extra,
    ]


def run_schemathesis(url: str, ids_log: pathlib.Path, report: pathlib.Path, capsys, *extra: str):
    env = dict(os.environ)
    env["SCHEMATHESIS_HOOKS"] = "st_hooks"
    env["PYTHONPATH"] = str(HERE) + os.pathsep + env.get("PYTHONPATH", "")
    env["ST_IDS_LOG"] = str(ids_log)
    cmd = schemathesis_command(url, report, *extra)
    with capsys.disabled():
        print(f"\nSCHEMATHESIS_HOOKS=st_hooks schemathesis {shlex.join(cmd[3:])}")
    # schemathesis keeps a cache in its working directory: a scratch one, not the source tree.
    run = subprocess.run(
        cmd, env=env, cwd=report.parent, capture_output=True, text=True, timeout=600
    )
    with capsys.disabled():
        for line in run.stdout.splitlines():
            if any(k in line for k in ("Schemathesis v", "Operations:", "Selected:", "Tested:",
                                       "generated,", "No issues found", "failed", "Seed:")):
                print("  " + line.strip(" =").strip())
    return run


def operations(doc: dict) -> list[str]:
    return [f"{m.upper()} {p}" for p, item in doc["paths"].items() for m in item if m in METHODS]


def test_every_answer_matches_the_schema_and_ids_are_unique(service, tmp_path, capsys):
    s = service("--node-id", "41")
    ids_log = tmp_path / "ids.txt"
    run = run_schemathesis(s.url, ids_log, tmp_path / "junit.xml", capsys)
    assert run.returncode == 0, run.stdout[-6000:] + run.stderr[-3000:]
    assert "No issues found" in run.stdout
    # Every operation of the document was tested, GET /openapi.json included.
    status, _, body = s.get("/openapi.json")
    ops = operations(json.loads(body))
    assert len(ops) == 5, ops
    assert f"Selected: {len(ops)}/{len(ops)}" in run.stdout, run.stdout[-3000:]
    assert f"Tested: {len(ops)}" in run.stdout, run.stdout[-3000:]
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


def test_the_schema_and_the_service_agree_on_integers(service):
    """What the served schema calls a valid count (JSON Schema's integer: no fractional part,
    however written) the service accepts, as that many IDs; what it calls invalid the service
    refuses with 400, echoing the number as it was sent."""
    s = service("--node-id", "42", "--max-count", "4096")
    status, _, body = s.get("/openapi.json")
    doc = json.loads(body)
    schema = dict(doc["components"]["schemas"]["IdsRequest"])
    validator = jsonschema_rs.Draft202012Validator(schema)
    for text, n in [("3664", 3664), ("3664.0", 3664), ("3.664e3", 3664), ("1E1", 10),
                    ("4096.000", 4096), ("100e-2", 1)]:
        sent = f'{{"count": {text}}}'
        assert validator.is_valid(json.loads(sent)), sent
        status, answer = s.post_json("/v1/ids", sent)
        assert status == 200, (sent, answer)
        ids = json.loads(answer)["ids"]
        assert len(ids) == n, sent
        assert len(set(ids)) == n
    for text in ["3664.5", "-1", "0", "0.0", "4097.0", "1e-2", "18446744073709551616.0"]:
        sent = f'{{"count": {text}}}'
        assert not validator.is_valid(json.loads(sent)), sent
        status, answer = s.post_json("/v1/ids", sent)
        assert status == 400, (sent, answer)
        error = json.loads(answer)["error"]
        assert error["code"] == "INVALID_COUNT", answer
        assert error["message"].endswith(f"not {text}"), answer
    # Past what the service reads: JSON allows 1e400, a 64-bit float does not.
    status, answer = s.post_json("/v1/ids", '{"count": 1e400}')
    assert status == 400, answer
    error = json.loads(answer)["error"]
    assert error["code"] == "MALFORMED_JSON" and "1e400" in error["message"], answer
