"""Clocks for tests and simulations (the core's own, not re-implemented here).

- ``ManualClock(start_ms)``: reads ``start_ms`` until moved with ``set(ms)`` or ``advance(ms)``.
- ``ScriptedClock(values)``: returns ``values`` in order, then ticks forward 1 ms per read.

Pass either as ``clock=`` to ``Snowflake`` or ``MonotonicSnowflake``; the generator reads it
without touching the GIL. Any callable returning int milliseconds works as ``clock=`` too.
"""

from polyflake._polyflake import ManualClock, ScriptedClock

__all__ = ["ManualClock", "ScriptedClock"]
