"""Shared paths and guards for the polyflake Python tests.

The tests run against the wheel installed into the project venv, never the source tree:
`make test-python` runs pytest from this directory, where no `polyflake` package lives.
"""

import json
import pathlib

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
VECTORS = REPO / "tests" / "vectors"
SCENARIOS = VECTORS / "scenarios"
README = REPO / "README.md"

#: The design's default epoch, 2024-01-01T00:00:00Z (the design text's CUSTOM_EPOCH_MS).
CUSTOM_EPOCH_MS = 1704067200000


def load_json(path: pathlib.Path):
    with path.open(encoding="utf-8") as f:
        return json.load(f)


@pytest.fixture(scope="session")
def layouts():
    return load_json(VECTORS / "layouts.json")
