"""Every scenario file in tests/vectors/scenarios/ through the Python binding, on the precise
and on the coarse clock source, as the Rust runner runs them.

The schema is tests/vectors/scenarios/README.md. The runner fails on an unknown op or key, and
the parametrisation is the directory listing itself, so no file can be skipped. The UUIDv7/ULID
files waiting in scenarios/formats/ run too; only the files of scenarios/ itself go
into the coverage record (the lead moves the others up once every runner runs them).
"""

import os
import pathlib
import shutil
import tempfile
import time

import pytest

import polyflake
from polyflake.testing import ManualClock, ScriptedClock

from conftest import REPO, SCENARIOS, load_json

FILES = sorted(SCENARIOS.glob("*.json"))
FORMAT_FILES = sorted((SCENARIOS / "formats").glob("*.json"))
SOURCES = ("precise", "coarse")

TOP_KEYS = {"name", "description", "source", "needs", "generators", "steps"}
SPEC_KEYS = {
    "mode", "node_id", "layout", "epoch_ms", "max_wait_ms", "max_lead_ms", "max_forward_step_ms",
    "forward_confirm_ms", "clock", "source", "deferred", "format",
}
# What a "format" generator takes (no node id, layout, epoch or source).
FORMAT_SPEC_KEYS = {
    "mode", "format", "max_wait_ms", "max_lead_ms", "max_forward_step_ms", "forward_confirm_ms",
    "clock", "deferred",
}
# Python offers every need: os.fork, and leases on an injected clock.
NEEDS = {"fork"}
STEP_KEYS = {"op", "gen", "count", "id", "ms", "config", "expect", "within_ms"}
ID_EXPECT_KEYS = {"error", "ids", "sequences", "max_sequence", "first", "last", "increasing"}
HEALTH_KEYS = {
    "ok", "status", "lead_ms", "ids_issued", "rewinds_waited", "rewinds_refused",
    "sequence_exhaustions", "wait_sleeps", "ms_borrowed", "lead_refused", "clock_ahead_ms",
    "forward_refused",
}


def known(keys, allowed, where):
    unknown = set(keys) - allowed
    assert not unknown, f"{where}: unknown keys {sorted(unknown)}"


def script_values(values):
    """Expand a scripted clock's values: ints, and run objects {start, count, step, each}."""
    out = []
    for v in values:
        if isinstance(v, int):
            out.append(v)
            continue
        known(v, {"start", "count", "step", "each"}, "scripted run")
        step, each = v.get("step", 0), v.get("each", 1)
        out.extend(v["start"] + step * (i // each) for i in range(v["count"]))
    return out


class FormatGen:
    """A UUIDv7 or ULID generator as the runner sees it: IDs as 128-bit ints (big-endian), and a
    decode that names only the Unix ms."""

    def __init__(self, g, fmt):
        self.g, self.fmt = g, fmt

    def as_int(self, x):
        return x.int if self.fmt == "uuidv7" else int.from_bytes(polyflake.parse_ulid(x), "big")

    def next_id(self):
        return self.as_int(self.g.next_id())

    def next_ids(self, count):
        raw = self.g.next_ids(count)
        assert isinstance(raw, bytes) and len(raw) == 16 * count
        return [int.from_bytes(raw[k:k + 16], "big") for k in range(0, len(raw), 16)]

    def decode(self, x):
        timestamp = polyflake.uuid7_timestamp_ms if self.fmt == "uuidv7" else polyflake.ulid_timestamp_ms
        return {"epoch_ms": timestamp(x)}

    def health(self):
        return self.g.health()

    def close(self):
        self.g.close()


def make(spec, lease_dir, source):
    """Build a generator from a spec on a clock source; returns (generator, manual clock or None).
    File-lease generators lease from `lease_dir`, the scenario's one temporary directory."""
    known(spec, SPEC_KEYS, "generator spec")
    kwargs = {"clock_source": source}
    for key in ("epoch_ms", "max_wait_ms", "max_lead_ms", "layout", "max_forward_step_ms", "forward_confirm_ms"):
        if key in spec:
            kwargs[key] = spec[key]
    manual = None
    if "clock" in spec:
        c = spec["clock"]
        if c["kind"] == "manual":
            known(c, {"kind", "start_ms"}, "manual clock")
            manual = kwargs["clock"] = ManualClock(c["start_ms"])
        elif c["kind"] == "scripted":
            known(c, {"kind", "values"}, "scripted clock")
            kwargs["clock"] = ScriptedClock(script_values(c["values"]))
        else:
            pytest.fail(f"unknown clock kind {c['kind']!r}")
    if "format" in spec:
        known(spec, FORMAT_SPEC_KEYS, "format generator spec")
        cls = {"uuidv7": polyflake.Uuid7Generator, "ulid": polyflake.UlidGenerator}[spec["format"]]
        return FormatGen(cls(mode=spec["mode"], **kwargs), spec["format"]), manual
    if spec["mode"] == "strict":
        assert "max_lead_ms" not in kwargs, "max_lead_ms is monotonic only"
        cls = polyflake.Snowflake
    elif spec["mode"] == "monotonic":
        cls = polyflake.MonotonicSnowflake
    else:
        pytest.fail(f"unknown mode {spec['mode']!r}")
    if "source" in spec:
        src = spec["source"]
        known(src, {"kind", "slots", "reserve_ms"}, "source")
        assert src["kind"] == "file_lease", src
        kwargs.update({k: src[k] for k in ("slots", "reserve_ms") if k in src})
        return cls.from_file_lease(lease_dir, **kwargs), manual
    return cls(spec["node_id"], **kwargs), manual


def next_id_in_child(g):
    """Fork; the child calls next_id() once and pipes back "ok" or the error code."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # child: never return into pytest
        try:
            g.next_id()
            outcome = b"ok"
        except polyflake.PolyflakeError as e:
            outcome = e.code.encode()
        except BaseException:  # noqa: BLE001 - anything else is reported as such
            outcome = b"unexpected exception"
        os.write(w, outcome)
        os._exit(0)
    os.close(w)
    with os.fdopen(r, "rb") as f:
        outcome = f.read().decode()
    _, status = os.waitpid(pid, 0)
    assert os.WIFEXITED(status), status
    return outcome


PASSED = set()  # (file, clock source) for each run that passed


@pytest.fixture(scope="module", autouse=True)
def coverage_record():
    """After the module: write the record `make test` checks (tests/vectors/check_coverage.py):
    each file of scenarios/ that passed on both clock sources."""
    yield
    target = pathlib.Path(os.environ.get("CARGO_TARGET_DIR", REPO / "target"))
    out = target / "scenario-coverage"
    out.mkdir(parents=True, exist_ok=True)
    done = [p.stem for p in FILES if all((p, source) in PASSED for source in SOURCES)]
    (out / "python.txt").write_text("".join(f"{name} ok\n" for name in done))


def as_decoded(d):
    """The scenario files' decoded form: `timestamp_ms` is the dict's `epoch_ms` (all a UUIDv7
    or ULID decode has)."""
    names = {"epoch_ms": "timestamp_ms", "node_id": "node_id", "sequence": "sequence"}
    return {names[k]: v for k, v in d.items()}


def check_counter(name, got, want):
    if isinstance(want, dict):
        known(want, {"min", "max"}, f"health {name}")
        if "min" in want:
            assert got >= want["min"], (name, got, want)
        if "max" in want:
            assert got <= want["max"], (name, got, want)
    else:
        assert got == want, (name, got, want)


RUNS = [(p, source) for p in FILES + FORMAT_FILES for source in SOURCES]


@pytest.mark.parametrize(
    "path,source", RUNS, ids=[f"{p.parent.name}/{p.stem}-{source}" for p, source in RUNS]
)
def test_scenario(path, source):
    sc = load_json(path)
    known(sc, TOP_KEYS, path.name)
    assert sc["name"] == path.stem
    assert set(sc.get("needs", [])) <= NEEDS, f"{path.name}: unknown needs {sc['needs']}"
    lease_dir = tempfile.mkdtemp(prefix=f"polyflake-scenario-{path.stem}-")
    try:
        run_scenario(sc, path, lease_dir, source)
    finally:
        shutil.rmtree(lease_dir, ignore_errors=True)
    PASSED.add((path, source))


def run_scenario(sc, path, lease_dir, source):
    gens, clocks = {}, {}
    for name, spec in sc["generators"].items():
        if not spec.get("deferred"):
            gens[name], clocks[name] = make(spec, lease_dir, source)
    issued = []  # every ID of the scenario, for the uniqueness check
    last_id = {}  # per generator, for the strictly-increasing check across steps

    for i, step in enumerate(sc["steps"]):
        where = f"{path.name} step {i} ({step.get('op')})"
        known(step, STEP_KEYS, where)
        expect = step.get("expect", {})
        started = time.monotonic()
        op = step["op"]

        if op in ("next_id", "next_ids"):
            known(expect, ID_EXPECT_KEYS, where)
            g = gens[step["gen"]]
            ids, error = [], None
            if op == "next_id":
                count = step.get("count", 1)
                for k in range(count):
                    try:
                        ids.append(g.next_id())
                    except polyflake.PolyflakeError as e:
                        assert k == count - 1, f"{where}: call {k} of {count} failed: {e!r}"
                        error = e
            else:
                try:
                    batch = g.next_ids(step["count"])
                    if not isinstance(g, FormatGen):
                        assert batch.typecode == "q" and len(batch) == step["count"]
                    ids = list(batch)
                except polyflake.PolyflakeError as e:
                    error = e
            if "error" in expect:
                assert error is not None, f"{where}: expected {expect['error']}, got no error"
                assert error.code == expect["error"], (where, error.code, str(error))
            else:
                assert error is None, f"{where}: unexpected {error!r}"
            if "ids" in expect:
                assert ids == [int(x) for x in expect["ids"]], where
            if "sequences" in expect:
                assert [g.decode(x)["sequence"] for x in ids] == expect["sequences"], where
            if "max_sequence" in expect:
                assert max(g.decode(x)["sequence"] for x in ids) == expect["max_sequence"], where
            if "first" in expect:
                assert as_decoded(g.decode(ids[0])) == expect["first"], where
            if "last" in expect:
                assert as_decoded(g.decode(ids[-1])) == expect["last"], where
            # `increasing` is checked for every step, asked for or not.
            prev = last_id.get(step["gen"])
            for x in ids:
                assert prev is None or x > prev, f"{where}: {x} after {prev}"
                prev = x
            if ids:
                last_id[step["gen"]] = prev
            issued.extend(ids)

        elif op == "decode":
            known(expect, {"decoded"}, where)
            got = gens[step["gen"]].decode(int(step["id"]))
            assert as_decoded(got) == expect["decoded"], where

        elif op == "health":
            known(expect, HEALTH_KEYS, where)
            h = gens[step["gen"]].health()
            for key, want in expect.items():
                got = getattr(h, key)
                if key in ("ok", "status"):
                    assert got == want, (where, key, got, want, h.reason)
                else:
                    check_counter(key, got, want)

        elif op in ("clock_set", "clock_advance", "clock_elapse"):
            assert not expect, f"{where}: a clock step expects nothing"
            clock = clocks[step["gen"]]
            assert clock is not None, f"{where}: {step['gen']} has no manual clock"
            move = {"clock_set": clock.set, "clock_advance": clock.advance, "clock_elapse": clock.elapse}
            move[op](step["ms"])

        elif op == "create":
            known(expect, {"error"}, where)
            spec = sc["generators"][step["gen"]]
            assert spec.get("deferred") and step["gen"] not in gens, where
            try:
                gens[step["gen"]], clocks[step["gen"]] = make(spec, lease_dir, source)
            except polyflake.PolyflakeError as e:
                assert e.code == expect.get("error"), (where, e.code, str(e))
            else:
                assert "error" not in expect, f"{where}: expected {expect['error']}"

        elif op == "close":
            # The generator stays: every later call on it fails with GENERATOR_CLOSED.
            assert not expect, f"{where}: close expects nothing"
            gens[step["gen"]].close()

        elif op == "fork":
            known(expect, {"error"}, where)
            outcome = next_id_in_child(gens[step["gen"]])
            assert outcome == expect.get("error", "ok"), (where, outcome)

        elif op == "construct":
            known(expect, {"error", "ok"}, where)
            try:
                g, _ = make(step["config"], lease_dir, source)
            except polyflake.PolyflakeError as e:
                assert "error" in expect, f"{where}: unexpected {e!r}"
                assert e.code == expect["error"], (where, e.code, str(e))
                # Configuration errors are also ValueErrors.
                assert isinstance(e, ValueError), where
            else:
                assert "error" not in expect, f"{where}: expected {expect['error']}"
                assert expect.get("ok") is True, where
                del g

        else:
            pytest.fail(f"{where}: unknown op {op!r}")

        if "within_ms" in step:
            elapsed_ms = (time.monotonic() - started) * 1000
            assert elapsed_ms <= step["within_ms"], f"{where}: took {elapsed_ms:.1f} ms"

    assert len(set(issued)) == len(issued), f"{path.name}: duplicate IDs"


def test_every_scenario_file_is_run():
    assert FILES, f"no scenario files in {SCENARIOS}"
    every = FILES + FORMAT_FILES
    assert {p.stem for p in every} == {load_json(p)["name"] for p in every}
    # Every file of scenarios/ and scenarios/formats/ is a parameter, on both sources.
    json_files = sorted(SCENARIOS.rglob("*.json"))
    assert json_files == sorted(FILES + FORMAT_FILES), "a scenario file outside the runner's reach"
