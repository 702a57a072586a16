"""The uniqueness run's Python participant (tests/polyglot/participant.py) keeps its protocol:
`participant.py LEASE_DIR SECONDS OUT_PATH` writes raw little-endian u64 IDs and a JSON
summary, `... uuidv7` 16-byte big-endian UUIDv7s without a lease, and it exits 1 with one stderr
line on an error."""

import json
import subprocess
import sys
import uuid

from conftest import REPO

import polyflake

PARTICIPANT = REPO / "tests" / "polyglot" / "participant.py"


def run(*args):
    return subprocess.run([sys.executable, str(PARTICIPANT), *map(str, args)], capture_output=True,
                          text=True, timeout=120, cwd="/")


def test_participant_protocol(tmp_path):
    check_two_participants(tmp_path, tmp_path / "leases")


def test_participant_zookeeper_lease(tmp_path, zookeeper):
    """LEASE_DIR `zk://HOST:PORT[,HOST:PORT]/PREFIX`: a ZooKeeper lease under that prefix."""
    prefix = f"polyflake-participant-{tmp_path.name}"
    # The ensemble given twice: a connect string of two servers (the same one here).
    check_two_participants(tmp_path, f"zk://{zookeeper},{zookeeper}/{prefix}")


def test_participant_zookeeper_lease_without_prefix(tmp_path, zookeeper):
    r = run(f"zk://{zookeeper}", "0.1", tmp_path / "a.bin")
    assert r.returncode == 1 and r.stderr.count("\n") == 1, r.stderr
    assert "has no /PREFIX" in r.stderr


def check_two_participants(tmp_path, lease):
    outs = [tmp_path / "a.bin", tmp_path / "b.bin"]
    # Two at once on one lease: two slots.
    procs = [subprocess.Popen([sys.executable, str(PARTICIPANT), str(lease), "0.3", str(o)],
                              stderr=subprocess.PIPE, text=True, cwd="/") for o in outs]
    for p in procs:
        _, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
    seen = set()
    nodes = set()
    for out in outs:
        raw = out.read_bytes()
        ids = [int.from_bytes(raw[k:k + 8], "little") for k in range(0, len(raw), 8)]
        meta = json.loads((tmp_path / (out.name + ".json")).read_text())
        assert meta["language"] == "python" and meta["count"] == len(ids) > 1024
        assert meta["first"] == str(ids[0]) and meta["last"] == str(ids[-1])
        assert 0.3 <= meta["seconds"] < 60
        assert all(a < b for a, b in zip(ids, ids[1:]))
        assert {polyflake.decode(x)["node_id"] for x in (ids[0], ids[-1])} == {meta["node_id"]}
        nodes.add(meta["node_id"])
        seen.update(ids)
    assert len(nodes) == 2
    assert len(seen) == sum(json.loads((tmp_path / (o.name + ".json")).read_text())["count"] for o in outs)


def test_participant_uuidv7_mode(tmp_path):
    outs = [tmp_path / "a.bin", tmp_path / "b.bin"]
    # Two processes at once, no lease directory needed (LEASE_DIR is ignored).
    procs = [subprocess.Popen([sys.executable, str(PARTICIPANT), str(tmp_path / "unused"), "0.3",
                               str(o), "uuidv7"], stderr=subprocess.PIPE, text=True, cwd="/")
             for o in outs]
    for p in procs:
        _, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
    assert not (tmp_path / "unused").exists()
    seen = set()
    for out in outs:
        raw = out.read_bytes()
        assert len(raw) % 16 == 0
        ids = [raw[k:k + 16] for k in range(0, len(raw), 16)]
        meta = json.loads((tmp_path / (out.name + ".json")).read_text())
        assert meta["language"] == "python" and meta["format"] == "uuidv7"
        assert meta["node_id"] is None and meta["count"] == len(ids) > 1024
        assert meta["first"] == str(uuid.UUID(bytes=ids[0])) and meta["last"] == str(uuid.UUID(bytes=ids[-1]))
        assert all(a < b for a, b in zip(ids, ids[1:]))  # big-endian bytes sort as issued
        assert {uuid.UUID(bytes=x).version for x in (ids[0], ids[-1])} == {7}
        seen.update(ids)
    assert len(seen) == sum(json.loads((tmp_path / (o.name + ".json")).read_text())["count"] for o in outs)
    r = run(tmp_path, "0.1", tmp_path / "c.bin", "uuidv8")
    assert r.returncode != 0 and "usage" in r.stderr


def test_participant_errors_are_one_line(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    r = run(blocker / "leases", "0.1", tmp_path / "out.bin")
    assert r.returncode == 1 and r.stderr.count("\n") == 1 and "participant.py" in r.stderr
    r = run(tmp_path, "soon", tmp_path / "out.bin")
    assert r.returncode == 1 and r.stderr.count("\n") == 1
    r = run(tmp_path)
    assert r.returncode != 0
