"""The shared layout vectors (tests/vectors/layouts.json) through the binding."""

import pytest

import polyflake
from polyflake import Layout
from polyflake.testing import ManualClock


def layout_of(spec):
    return Layout(spec["timestamp_bits"], spec["node_bits"], spec["sequence_bits"])


def test_layout_fields(layouts):
    for name, spec in layouts["layouts"].items():
        layout = layout_of(spec)
        assert layout.max_node_id == spec["max_node_id"], name
        assert layout.max_sequence == spec["max_sequence"], name
        assert layout.max_elapsed_ms == spec["max_elapsed_ms"], name
        assert round(layout.years, 2) == spec["years"], name


def test_presets_are_the_vector_layouts(layouts):
    presets = {
        "default_41_10_12": Layout.DEFAULT,
        "long_lived_42_8_13": Layout.LONG_LIVED,
        "big_fleet_41_12_10": Layout.BIG_FLEET,
        "short_39_12_12": Layout.SHORT,
    }
    assert set(presets) == set(layouts["layouts"])
    for name, preset in presets.items():
        assert layout_of(layouts["layouts"][name]) == preset, name


def test_decode_every_case(layouts):
    epoch = layouts["epoch_ms_default"]
    n = 0
    for name, spec in layouts["layouts"].items():
        layout = layout_of(spec)
        for case in spec["cases"]:
            got = polyflake.decode(int(case["id"]), layout=layout, epoch_ms=epoch)
            assert got == {
                "epoch_ms": case["epoch_ms"],
                "node_id": case["node_id"],
                "sequence": case["sequence"],
            }, (name, case)
            n += 1
    assert n > 0


def test_generate_every_sequence_zero_case(layouts):
    """A generator on a clock at the case's millisecond issues exactly the case's ID first."""
    n = 0
    for name, spec in layouts["layouts"].items():
        layout = layout_of(spec)
        for case in spec["cases"]:
            if case["sequence"] != 0:
                continue
            g = polyflake.Snowflake(
                case["node_id"], layout=layout, clock=ManualClock(case["epoch_ms"])
            )
            assert g.next_id() == int(case["id"]), (name, case)
            n += 1
    assert n > 0


def test_literals(layouts):
    for lit in layouts["literals"]:
        assert lit["layout"] == "default_41_10_12"
        expected = {"epoch_ms": lit["epoch_ms"], "node_id": lit["node_id"], "sequence": lit["sequence"]}
        assert polyflake.Snowflake.decode(int(lit["id"])) == expected
        assert polyflake.parse_id(lit["id"]) == int(lit["id"])
        assert polyflake.format_id(int(lit["id"])) == lit["id"]


def test_invalid_node_ids(layouts):
    for node_id in layouts["invalid"]["node_id_default_layout"]:
        with pytest.raises(polyflake.InvalidNodeId):
            polyflake.Snowflake(node_id, clock=ManualClock(layouts["epoch_ms_default"]))
        with pytest.raises(ValueError):
            polyflake.MonotonicSnowflake(node_id)


def test_invalid_ids(layouts):
    for text in layouts["invalid"]["decode_default_layout"]:
        with pytest.raises(polyflake.InvalidId):
            polyflake.parse_id(text)
        try:
            value = int(text)
        except ValueError:
            continue
        if text != str(value):
            continue  # " 1" is not an ID as text, though int() accepts it
        with pytest.raises(polyflake.InvalidId):
            polyflake.Snowflake.decode(value)
        with pytest.raises(ValueError):
            polyflake.format_id(value)


def test_invalid_layouts(layouts):
    for bits in layouts["invalid"]["layouts"]:
        with pytest.raises(polyflake.InvalidLayout):
            Layout(*bits)
        with pytest.raises(ValueError):
            polyflake.Snowflake(1, layout=tuple(bits), clock=ManualClock(layouts["epoch_ms_default"]))
        with pytest.raises(polyflake.InvalidLayout):
            Layout.from_name("/".join(map(str, bits)))
