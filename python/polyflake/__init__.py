"""polyflake: unique, time-sortable IDs from one Rust core: 64-bit Snowflake IDs, UUIDv7
(``uuid7()``, a ``uuid.UUID``) and ULID (``ulid()``, 26 characters). The guide is
docs/python.md in the repository.

An ID is ``0 | timestamp | node | sequence`` (41/10/12 bits by default, epoch
2024-01-01T00:00:00Z = 1704067200000 ms): a positive signed 64-bit integer that sorts by time.

- ``Snowflake(node_id)``: strict; an issued timestamp never exceeds the wall clock. Small clock
  rewinds (up to ``max_wait_ms``) are waited out, larger ones raise ``ClockMovedBackwards``; a
  forward step past ``max_forward_step_ms`` is not issued from (``ClockJumpedAhead``).
- ``MonotonicSnowflake(node_id)``: never waits and never duplicates; its timestamps may run ahead
  of the wall clock (by at most ``max_lead_ms``, 5,000 ms unless set; None: unbounded), so a
  decoded ``epoch_ms`` is an upper bound on when the ID was made.

A fixed node id is claimed host-wide while its generator lives (``NodeIdInUse`` names the holder)
and keeps a restart guard: a mark in the state directory (``state_dir``, ``POLYFLAKE_STATE_DIR``)
from which its next holder on the host starts above everything it issued; the first call after
a holder was killed waits for it (up to a reserve, 5 s). ``max_clock_error_ms`` refuses to issue
while the kernel says the clock is unsynchronized (``ClockUnsynchronized``); ``health()``
reports the kernel's word (``clock_sync``) either way.

Node ids can also come from the core's node-id sources: ``Snowflake.from_file_lease(dir)`` (a
slot of a lease directory, one host), ``Snowflake.from_etcd(endpoints)`` (a slot in etcd, a fleet),
``Snowflake.from_zookeeper(ensemble)`` (a slot in ZooKeeper, a fleet), ``from_env``, ``from_hostname`` and ``from_ipv4``. A lease-backed generator waits out its slot's
restart guard (``wait_ready()``), keeps the slot's high-water mark ahead of the clock, takes a
fresh slot in a forked child, and frees the slot on ``close()`` or at the end of a ``with`` block.

Every rule lives in the Rust core; this package only converts Python values.
"""

from polyflake import _polyflake
from polyflake._polyflake import *  # noqa: F403 - the native module's public names

__all__ = _polyflake.__all__
