"""Every scenario file in tests/vectors/scenarios/ through the Python binding.

The schema is tests/vectors/scenarios/README.md. The runner fails on an unknown op or key, and
the parametrisation is the directory listing itself, so no file can be skipped.
"""

import time

import pytest

import polyflake
from polyflake.testing import ManualClock, ScriptedClock

from conftest import SCENARIOS, load_json

FILES = sorted(SCENARIOS.glob("*.json"))

TOP_KEYS = {"name", "description", "source", "generators", "steps"}
SPEC_KEYS = {"mode", "node_id", "layout", "epoch_ms", "max_wait_ms", "max_lead_ms", "clock"}
STEP_KEYS = {"op", "gen", "count", "id", "ms", "config", "expect", "within_ms"}
ID_EXPECT_KEYS = {"error", "ids", "sequences", "max_sequence", "first", "last", "increasing"}
HEALTH_KEYS = {
    "ok", "status", "lead_ms", "ids_issued", "rewinds_waited", "rewinds_refused",
    "sequence_exhaustions", "wait_sleeps", "ms_borrowed", "lead_refused",
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


def make(spec):
    """Build a generator from a spec; returns (generator, manual clock or None)."""
    known(spec, SPEC_KEYS, "generator spec")
    kwargs = {}
    for key in ("epoch_ms", "max_wait_ms", "max_lead_ms", "layout"):
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
    if spec["mode"] == "strict":
        assert "max_lead_ms" not in kwargs, "max_lead_ms is monotonic only"
        return polyflake.Snowflake(spec["node_id"], **kwargs), manual
    if spec["mode"] == "monotonic":
        return polyflake.MonotonicSnowflake(spec["node_id"], **kwargs), manual
    pytest.fail(f"unknown mode {spec['mode']!r}")


def as_decoded(d):
    """The scenario files' decoded form: `timestamp_ms` is the dict's `epoch_ms`."""
    return {"timestamp_ms": d["epoch_ms"], "node_id": d["node_id"], "sequence": d["sequence"]}


def check_counter(name, got, want):
    if isinstance(want, dict):
        known(want, {"min", "max"}, f"health {name}")
        if "min" in want:
            assert got >= want["min"], (name, got, want)
        if "max" in want:
            assert got <= want["max"], (name, got, want)
    else:
        assert got == want, (name, got, want)


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_scenario(path):
    sc = load_json(path)
    known(sc, TOP_KEYS, path.name)
    assert sc["name"] == path.stem
    gens, clocks = {}, {}
    for name, spec in sc["generators"].items():
        gens[name], clocks[name] = make(spec)
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

        elif op in ("clock_set", "clock_advance"):
            assert not expect, f"{where}: a clock step expects nothing"
            clock = clocks[step["gen"]]
            assert clock is not None, f"{where}: {step['gen']} has no manual clock"
            (clock.set if op == "clock_set" else clock.advance)(step["ms"])

        elif op == "construct":
            known(expect, {"error", "ok"}, where)
            try:
                g, _ = make(step["config"])
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
    assert {p.stem for p in FILES} == {load_json(p)["name"] for p in FILES}
