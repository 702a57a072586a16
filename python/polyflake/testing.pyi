"""Type stubs for polyflake.testing."""

from polyflake._polyflake import ManualClock as ManualClock, ScriptedClock as ScriptedClock

__all__ = ["ManualClock", "ScriptedClock"]
