"""Type stubs for the native module polyflake._polyflake (hand-written, checked by mypy.stubtest).

Every default shown is the core's (``DEFAULT_*`` below), as the runtime's signatures show them.
"""

import array
import ipaddress
import os
import uuid
from datetime import datetime
from types import TracebackType
from typing import (
    Any,
    Callable,
    ClassVar,
    Coroutine,
    Final,
    Generic,
    Iterable,
    List,
    Literal,
    Optional,
    Tuple,
    Type,
    TypeVar,
    TypedDict,
    Union,
    final,
    type_check_only,
)

from typing_extensions import Self, disjoint_base

__all__ = [
    "CORE_VERSION",
    "ClockFailed",
    "ClockJumpedAhead",
    "ClockMovedBackwards",
    "ClockSync",
    "ClockUnsynchronized",
    "DEFAULT_EPOCH_MS",
    "DEFAULT_FORWARD_CONFIRM_MS",
    "DEFAULT_MAX_FORWARD_STEP_MS",
    "DEFAULT_MAX_GUARD_WAIT_MS",
    "DEFAULT_MAX_LEAD_MS",
    "DEFAULT_MAX_RESTART_WAIT_MS",
    "DEFAULT_MAX_WAIT_MS",
    "DEFAULT_RESERVE_MS",
    "GeneratorClosed",
    "HEALTH_METRICS",
    "Health",
    "IdSpaceMismatch",
    "Interrupted",
    "InvalidArgument",
    "InvalidEpoch",
    "InvalidId",
    "InvalidLayout",
    "InvalidNodeId",
    "InvalidNodeSource",
    "Layout",
    "LeadLimitExceeded",
    "LeaseExpired",
    "LeaseHealth",
    "LeaseLost",
    "LeaseNotReady",
    "LeaseStore",
    "MAX_BATCH",
    "MAX_ID",
    "MonotonicSnowflake",
    "NoFreeSlot",
    "NodeIdInUse",
    "PolyflakeError",
    "Snowflake",
    "TimeIdGenerator",
    "TimestampOverflow",
    "UlidGenerator",
    "UnknownLayout",
    "UsedAfterFork",
    "Uuid7Generator",
    "__version__",
    "decode",
    "decode_time",
    "format_id",
    "format_ulid",
    "format_uuid",
    "parse_id",
    "parse_ulid",
    "parse_uuid",
    "ulid",
    "ulid_bytes",
    "ulid_time",
    "ulid_timestamp_ms",
    "uuid7",
    "uuid7_bytes",
    "uuid7_str",
    "uuid7_time",
    "uuid7_timestamp_ms",
]

__version__: Final[str]
CORE_VERSION: Final[str]
DEFAULT_EPOCH_MS: Final[int]
DEFAULT_MAX_WAIT_MS: Final[float]
DEFAULT_RESERVE_MS: Final[int]
DEFAULT_MAX_GUARD_WAIT_MS: Final[int]
#: A monotonic generator's lead limit when ``max_lead_ms`` is not given (5,000 ms).
DEFAULT_MAX_LEAD_MS: Final[int]
#: How long a call waits for a fixed node id's restart guard before ``LeaseNotReady``.
DEFAULT_MAX_RESTART_WAIT_MS: Final[int]
DEFAULT_MAX_FORWARD_STEP_MS: Final[int]
DEFAULT_FORWARD_CONFIRM_MS: Final[int]
MAX_ID: Final[int]
MAX_BATCH: Final[int]
#: The core's metric table: ``(name, kind, help, label names)`` per metric, ``kind`` being
#: ``"counter"`` (exported with ``_total``) or ``"gauge"``; ``Health.samples()`` gives values.
HEALTH_METRICS: Final[Tuple[Tuple[str, str, str, Tuple[str, ...]], ...]]

class _Decoded(TypedDict):
    """What ``decode`` returns: the ID's Unix-ms timestamp (an upper bound on when it was made),
    node id and sequence."""

    epoch_ms: int
    node_id: int
    sequence: int

@final
class Layout:
    """How the 63 usable bits of an ID split into timestamp, node and sequence."""

    DEFAULT: ClassVar[Layout]
    LONG_LIVED: ClassVar[Layout]
    BIG_FLEET: ClassVar[Layout]
    SHORT: ClassVar[Layout]
    def __new__(cls, timestamp_bits: int, node_bits: int, sequence_bits: int) -> Self: ...
    @staticmethod
    def from_name(name: str) -> Layout: ...
    @property
    def timestamp_bits(self) -> int: ...
    @property
    def node_bits(self) -> int: ...
    @property
    def sequence_bits(self) -> int: ...
    @property
    def max_node_id(self) -> int: ...
    @property
    def max_sequence(self) -> int: ...
    @property
    def ids_per_ms(self) -> int: ...
    @property
    def max_elapsed_ms(self) -> int: ...
    @property
    def years(self) -> float: ...
    @property
    def name(self) -> Optional[str]: ...
    def __eq__(self, other: object, /) -> bool: ...
    def __hash__(self) -> int: ...
    def __reduce__(self) -> Tuple[type, Tuple[int, int, int]]: ...

_LayoutLike = Union[Layout, str, Tuple[int, int, int]]
_ClockSource = Literal["precise", "coarse"]
_ClockLike = Union["ManualClock", "ScriptedClock", Callable[[], int], _ClockSource]
_PathLike = Union[str, "os.PathLike[str]"]
_Ipv4Like = Union[str, "ipaddress.IPv4Address"]
_Value = Union[bool, int, float, str, None]
_RestartGuard = Literal["auto", "required", "off"]
#: ``Health.status``: the core's ``HealthStatus`` names.
_HealthStatus = Literal[
    "ok", "clock_behind", "clock_outside_window", "clock_failed", "lead_too_large",
    "used_after_fork", "restart_guard", "lease_expired", "lease_lost", "clock_ahead", "closed",
    "store_rolled_back", "clock_unsynchronized",
]
#: ``LeaseHealth.kind``: a lease's store, or ``"host"`` for a fixed node id's mark.
_LeaseKind = Literal["file", "etcd", "zookeeper", "host"]
#: ``ClockSync.state``: what the kernel says of the clock.
_ClockSyncState = Literal[
    "ok", "insert_leap", "delete_leap", "leap_in_progress", "leap_done", "unsynchronized",
    "unavailable",
]
_ExcInfo = Union[Optional[Type[BaseException]], Optional[BaseException], Optional[TracebackType]]

@type_check_only
@disjoint_base
class _Snapshot:
    def to_dict(self) -> dict[str, Union[_Value, dict[str, _Value]]]:
        """Every field; ``lease`` and ``clock_sync`` as nested dicts."""
    def __getattr__(self, name: str) -> object: ...

@final
class LeaseHealth(_Snapshot):
    """The lease part of a ``Health`` snapshot: slot, high-water mark, restart guard, phase;
    kind ``"host"`` for a fixed node id's mark on the host (``store`` is its path)."""

    kind: _LeaseKind
    store: str
    slot: int
    high_water_ms: int
    guard_until_ms: Optional[int]
    guard_waiting: bool
    guard_remaining_ms: int
    guard_note: str
    lost: bool
    expired: bool
    phase: str
    renewals: int
    failures: int
    last_error: str

@final
class ClockSync(_Snapshot):
    """The kernel's word on the system clock (``adjtimex``) when the snapshot was taken."""

    state: _ClockSyncState
    synchronized: bool
    #: The kernel's maximum error (16,000,000 when unsynchronized; -1 when unavailable).
    max_error_us: int
    est_error_us: int

@final
class Health(_Snapshot):
    """A snapshot from ``health()``: ok or not and why, the clocks, and the counters."""

    ok: bool
    status: _HealthStatus
    reason: str
    node_id: int
    source: str
    mode: str
    last_issued_ms: Optional[int]
    wall_ms: int
    lead_ms: int
    ids_issued: int
    rewinds_waited: int
    rewinds_refused: int
    sequence_exhaustions: int
    wait_sleeps: int
    ms_borrowed: int
    lead_refused: int
    lease_renewals: int
    lease_failures: int
    clock_ahead_ms: int
    forward_refused: int
    clock_source: str
    clock_tick_ns: int
    clock_note: str
    #: Calls that waited for a fixed node id's restart guard.
    restart_waits: int
    #: Why a fixed node id issues without a restart guard (empty when it keeps one).
    restart_guard_note: str
    clock_sync: ClockSync
    #: A lease's state, or a fixed node id's mark (kind ``"host"``); None without either.
    lease: Optional[LeaseHealth]
    def samples(self) -> List[Tuple[str, List[str], float]]:
        """``(name, label values, value)`` for each metric of ``HEALTH_METRICS`` this snapshot
        gives (the lease's metrics only with a lease)."""

# The keywords of the constructors, spelled out in each signature below (what help() shows at
# runtime). Every default shown is the core's (``DEFAULT_*`` above); an absent keyword is its
# default. ``clock``: None (the system clock), a clock source of it ("precise", "coarse"), or a
# clock object; ``clock_source``: the reading to take of a clock object (None: precise).
# ``max_forward_step_ms=None`` turns the forward-step check off; ``max_lead_ms`` is monotonic
# mode's (None: unbounded), taken in strict mode only as shown or None. ``max_clock_error_ms``
# (None: the kernel's word is reported, never a reason to refuse) refuses to issue while the
# kernel says the clock is unsynchronized or its maximum error is over it. A fixed node id:
# ``restart_guard`` (None: ``POLYFLAKE_RESTART_GUARD``, else "auto"), ``state_dir`` (None:
# ``POLYFLAKE_STATE_DIR``, else the lease directory), ``host_scope`` (None:
# ``POLYFLAKE_HOST_SCOPE``; also a lease's, whose slot is claimed host-wide). Lease keywords:
# ``slots=None`` (every node id of the layout), ``identity=None`` (the hostname). Credentials
# left None are read from ``POLYFLAKE_ETCD_*`` / ``POLYFLAKE_ZOOKEEPER_*`` (``_CA_FILE``,
# ``_CERT_FILE``, ``_KEY_FILE``, ``_USERNAME``, ``_PASSWORD``) when set.

@disjoint_base
class Snowflake:
    """A strict generator: an issued timestamp never exceeds the wall clock. Called on
    ``MonotonicSnowflake``, every ``from_*`` constructor makes a monotonic one."""

    def __new__(
        cls,
        node_id: int,
        *,
        epoch_ms: int = 1704067200000,
        layout: Optional[_LayoutLike] = None,
        max_wait_ms: float = 5.0,
        max_forward_step_ms: Optional[int] = 60000,
        forward_confirm_ms: int = 300000,
        clock: Optional[_ClockLike] = None,
        clock_source: Optional[_ClockSource] = None,
        max_clock_error_ms: Optional[int] = None,
        restart_guard: Optional[_RestartGuard] = None,
        state_dir: Optional[_PathLike] = None,
        host_scope: Optional[str] = None,
    ) -> Self: ...
    @classmethod
    def from_file_lease(
        cls,
        dir: _PathLike,
        *,
        slots: Optional[int] = None,
        identity: Optional[str] = None,
        reserve_ms: int = 5000,
        max_guard_wait_ms: int = 60000,
        heal: bool = False,
        epoch_ms: int = 1704067200000,
        layout: Optional[_LayoutLike] = None,
        max_wait_ms: float = 5.0,
        max_forward_step_ms: Optional[int] = 60000,
        forward_confirm_ms: int = 300000,
        clock: Optional[_ClockLike] = None,
        clock_source: Optional[_ClockSource] = None,
        max_lead_ms: Optional[int] = 5000,
        max_clock_error_ms: Optional[int] = None,
        host_scope: Optional[str] = None,
    ) -> Self:
        """A slot leased from a directory of slot files (one host); ``close()`` frees it.
        ``heal=True``: a lost lease takes a new slot by itself (a new ``node_id``, the same
        generator) instead of raising ``LeaseLost`` for good."""
    @classmethod
    def from_etcd(
        cls,
        endpoints: Union[str, Iterable[str]],
        *,
        prefix: str = "/polyflake",
        ttl_s: int = 10,
        connect_timeout_ms: int = 2000,
        ca_file: Optional[_PathLike] = None,
        cert_file: Optional[_PathLike] = None,
        key_file: Optional[_PathLike] = None,
        username: Optional[str] = None,
        password: Optional[str] = None,
        slots: Optional[int] = None,
        identity: Optional[str] = None,
        reserve_ms: int = 5000,
        max_guard_wait_ms: int = 60000,
        heal: bool = False,
        epoch_ms: int = 1704067200000,
        layout: Optional[_LayoutLike] = None,
        max_wait_ms: float = 5.0,
        max_forward_step_ms: Optional[int] = 60000,
        forward_confirm_ms: int = 300000,
        clock: Optional[_ClockLike] = None,
        clock_source: Optional[_ClockSource] = None,
        max_lead_ms: Optional[int] = 5000,
        max_clock_error_ms: Optional[int] = None,
        host_scope: Optional[str] = None,
    ) -> Self:
        """A slot leased from an etcd v3 cluster; ``close()`` frees it."""
    @classmethod
    def from_zookeeper(
        cls,
        ensemble: Union[str, Iterable[str]],
        *,
        prefix: str = "/polyflake",
        session_timeout_ms: int = 10000,
        connect_timeout_ms: int = 2000,
        ca_file: Optional[_PathLike] = None,
        cert_file: Optional[_PathLike] = None,
        key_file: Optional[_PathLike] = None,
        username: Optional[str] = None,
        password: Optional[str] = None,
        slots: Optional[int] = None,
        identity: Optional[str] = None,
        reserve_ms: int = 5000,
        max_guard_wait_ms: int = 60000,
        heal: bool = False,
        epoch_ms: int = 1704067200000,
        layout: Optional[_LayoutLike] = None,
        max_wait_ms: float = 5.0,
        max_forward_step_ms: Optional[int] = 60000,
        forward_confirm_ms: int = 300000,
        clock: Optional[_ClockLike] = None,
        clock_source: Optional[_ClockSource] = None,
        max_lead_ms: Optional[int] = 5000,
        max_clock_error_ms: Optional[int] = None,
        host_scope: Optional[str] = None,
    ) -> Self:
        """A slot leased from a ZooKeeper ensemble (``"host:port,host:port"`` or a list);
        ``close()`` frees it."""
    @classmethod
    def from_env(
        cls,
        var: str,
        *,
        epoch_ms: int = 1704067200000,
        layout: Optional[_LayoutLike] = None,
        max_wait_ms: float = 5.0,
        max_forward_step_ms: Optional[int] = 60000,
        forward_confirm_ms: int = 300000,
        clock: Optional[_ClockLike] = None,
        clock_source: Optional[_ClockSource] = None,
        max_lead_ms: Optional[int] = 5000,
        max_clock_error_ms: Optional[int] = None,
        restart_guard: Optional[_RestartGuard] = None,
        state_dir: Optional[_PathLike] = None,
        host_scope: Optional[str] = None,
    ) -> Self: ...
    @classmethod
    def from_hostname(
        cls,
        hostname: Optional[str] = None,
        *,
        epoch_ms: int = 1704067200000,
        layout: Optional[_LayoutLike] = None,
        max_wait_ms: float = 5.0,
        max_forward_step_ms: Optional[int] = 60000,
        forward_confirm_ms: int = 300000,
        clock: Optional[_ClockLike] = None,
        clock_source: Optional[_ClockSource] = None,
        max_lead_ms: Optional[int] = 5000,
        max_clock_error_ms: Optional[int] = None,
        restart_guard: Optional[_RestartGuard] = None,
        state_dir: Optional[_PathLike] = None,
        host_scope: Optional[str] = None,
    ) -> Self: ...
    @classmethod
    def from_ipv4(
        cls,
        addr: _Ipv4Like,
        prefix_len: int,
        *,
        epoch_ms: int = 1704067200000,
        layout: Optional[_LayoutLike] = None,
        max_wait_ms: float = 5.0,
        max_forward_step_ms: Optional[int] = 60000,
        forward_confirm_ms: int = 300000,
        clock: Optional[_ClockLike] = None,
        clock_source: Optional[_ClockSource] = None,
        max_lead_ms: Optional[int] = 5000,
        max_clock_error_ms: Optional[int] = None,
        restart_guard: Optional[_RestartGuard] = None,
        state_dir: Optional[_PathLike] = None,
        host_scope: Optional[str] = None,
    ) -> Self: ...
    def next_id(self) -> int: ...
    def try_next_id(self) -> Optional[int]:
        """An ID if that needs no wait; None where ``next_id()`` would sleep."""
    def anext_id(self) -> Coroutine[Any, Any, int]:
        """``await g.anext_id()``: never blocks the event loop (a wait runs in a thread)."""
    def next_ids(self, count: int) -> array.array[int]: ...
    def anext_ids(self, count: int) -> Coroutine[Any, Any, array.array[int]]:
        """``await g.anext_ids(n)``: a strict batch runs in a thread; a monotonic one at once."""
    @staticmethod
    def decode(id: int, /, *, layout: Optional[_LayoutLike] = None, epoch_ms: int = 1704067200000) -> _Decoded:
        """On the class: the default layout and epoch (or those given). On a generator
        (``g.decode(x)``): that generator's layout and epoch; keywords are not accepted there."""
    @staticmethod
    def decode_time(id: int, /, *, layout: Optional[_LayoutLike] = None, epoch_ms: int = 1704067200000) -> datetime:
        """The ID's time (``decode(id)["epoch_ms"]``) as an aware UTC ``datetime``; on a
        generator, with its layout and epoch, as ``decode``."""
    def health(self) -> Health: ...
    def wait_ready(self, timeout_ms: Optional[float] = None) -> None:
        """Wait while a restart guard holds (a lease's, or a fixed node id's mark); at the
        deadline, ``LeaseNotReady``."""
    def close(self) -> None: ...
    @property
    def closed(self) -> bool: ...
    def __enter__(self) -> Self: ...
    def __exit__(self, *_exc: _ExcInfo) -> Literal[False]: ...
    @property
    def node_id(self) -> int: ...
    @property
    def node_source(self) -> str: ...
    @property
    def epoch_ms(self) -> int: ...
    @property
    def layout(self) -> Layout: ...
    @property
    def max_wait_ms(self) -> float: ...
    @property
    def max_lead_ms(self) -> Optional[int]: ...
    @property
    def max_forward_step_ms(self) -> Optional[int]: ...
    @property
    def forward_confirm_ms(self) -> int: ...
    @property
    def mode(self) -> str: ...
    @property
    def clock_source(self) -> str: ...
    @property
    def max_clock_error_ms(self) -> Optional[int]: ...

@final
class MonotonicSnowflake(Snowflake):
    """A monotonic generator: never waits, never duplicates; may run ahead of the wall clock."""

    def __new__(
        cls,
        node_id: int,
        *,
        epoch_ms: int = 1704067200000,
        layout: Optional[_LayoutLike] = None,
        max_wait_ms: float = 5.0,
        max_forward_step_ms: Optional[int] = 60000,
        forward_confirm_ms: int = 300000,
        clock: Optional[_ClockLike] = None,
        clock_source: Optional[_ClockSource] = None,
        max_lead_ms: Optional[int] = 5000,
        max_clock_error_ms: Optional[int] = None,
        restart_guard: Optional[_RestartGuard] = None,
        state_dir: Optional[_PathLike] = None,
        host_scope: Optional[str] = None,
    ) -> Self: ...

_Id = TypeVar("_Id", uuid.UUID, str)
_TimeFormat = Literal["uuid7", "ulid"]

@disjoint_base
class TimeIdGenerator(Generic[_Id]):
    """UUIDv7 or ULID generator: ``format`` is ``"uuid7"`` (the default) or ``"ulid"``, or the
    class's own (``Uuid7Generator``, ``UlidGenerator``)."""

    def __new__(
        cls,
        *,
        format: Optional[_TimeFormat] = None,
        mode: Literal["strict", "monotonic"] = "strict",
        max_wait_ms: float = 5.0,
        max_forward_step_ms: Optional[int] = 60000,
        forward_confirm_ms: int = 300000,
        clock: Optional[_ClockLike] = None,
        clock_source: Optional[_ClockSource] = None,
        max_lead_ms: Optional[int] = 5000,
        max_clock_error_ms: Optional[int] = None,
    ) -> Self: ...
    @property
    def format(self) -> _TimeFormat: ...
    def next_id(self) -> _Id:
        """A ``uuid.UUID`` (UUIDv7) or the 26-character text (ULID)."""
    def next_str(self) -> str: ...
    def next_bytes(self) -> bytes:
        """16 bytes, big-endian."""
    def try_next_id(self) -> Optional[_Id]: ...
    def anext_id(self) -> Coroutine[Any, Any, _Id]: ...
    def next_ids(self, count: int) -> bytes:
        """``count`` IDs, 16 big-endian bytes each, in issue order."""
    def anext_ids(self, count: int) -> Coroutine[Any, Any, bytes]: ...
    def health(self) -> Health: ...
    def close(self) -> None: ...
    def __enter__(self) -> Self: ...
    def __exit__(self, *_exc: _ExcInfo) -> Literal[False]: ...
    @property
    def mode(self) -> str: ...

class Uuid7Generator(TimeIdGenerator[uuid.UUID]):
    """UUIDv7 (RFC 9562) with the Snowflake generators' rewind guard; no node id."""

    def __new__(
        cls,
        *,
        format: Optional[Literal["uuid7"]] = None,
        mode: Literal["strict", "monotonic"] = "strict",
        max_wait_ms: float = 5.0,
        max_forward_step_ms: Optional[int] = 60000,
        forward_confirm_ms: int = 300000,
        clock: Optional[_ClockLike] = None,
        clock_source: Optional[_ClockSource] = None,
        max_lead_ms: Optional[int] = 5000,
        max_clock_error_ms: Optional[int] = None,
    ) -> Self: ...

class UlidGenerator(TimeIdGenerator[str]):
    """ULID (48-bit ms, 80 bits increasing within a millisecond); no node id."""

    def __new__(
        cls,
        *,
        format: Optional[Literal["ulid"]] = None,
        mode: Literal["strict", "monotonic"] = "strict",
        max_wait_ms: float = 5.0,
        max_forward_step_ms: Optional[int] = 60000,
        forward_confirm_ms: int = 300000,
        clock: Optional[_ClockLike] = None,
        clock_source: Optional[_ClockSource] = None,
        max_lead_ms: Optional[int] = 5000,
        max_clock_error_ms: Optional[int] = None,
    ) -> Self: ...

def uuid7() -> uuid.UUID:
    """A UUIDv7 from the process-wide strict generator (made on first use)."""
def uuid7_str() -> str: ...
def uuid7_bytes() -> bytes: ...
def ulid() -> str:
    """A ULID from the process-wide strict generator (made on first use)."""
def ulid_bytes() -> bytes: ...
def parse_uuid(text: str) -> uuid.UUID: ...
def format_uuid(id: Union[uuid.UUID, bytes, int, str]) -> str: ...
def uuid7_timestamp_ms(id: Union[uuid.UUID, bytes, int, str]) -> int: ...
def uuid7_time(id: Union[uuid.UUID, bytes, int, str]) -> datetime:
    """The UUIDv7's time (``uuid7_timestamp_ms``) as an aware UTC ``datetime``."""
def parse_ulid(text: str) -> bytes: ...
def format_ulid(id: Union[bytes, int, str]) -> str: ...
def ulid_timestamp_ms(id: Union[bytes, int, str]) -> int: ...
def ulid_time(id: Union[bytes, int, str]) -> datetime:
    """The ULID's time (``ulid_timestamp_ms``) as an aware UTC ``datetime``; past 9999-12-31,
    Python's ``OverflowError``."""

@final
class ManualClock:
    def __new__(cls, start_ms: int) -> Self: ...
    def set(self, ms: int) -> None: ...
    def advance(self, delta_ms: int) -> None: ...
    def elapse(self, ms: int) -> None: ...
    def now_ms(self) -> int: ...
    def set_tick_ms(self, tick_ms: int) -> None: ...

@final
class ScriptedClock:
    def __new__(cls, values: Iterable[int]) -> Self: ...
    def now_ms(self) -> int: ...
    @property
    def reads(self) -> int: ...

def decode(id: int, /, *, layout: Optional[_LayoutLike] = None, epoch_ms: int = 1704067200000) -> _Decoded:
    """``epoch_ms`` defaults to ``DEFAULT_EPOCH_MS`` (1704067200000, 2024-01-01)."""
def decode_time(id: int, /, *, layout: Optional[_LayoutLike] = None, epoch_ms: int = 1704067200000) -> datetime:
    """The ID's time (``decode(id)["epoch_ms"]``) as an aware UTC ``datetime``, for a log line:
    an upper bound on when it was made (monotonic mode may run ahead)."""
def parse_id(text: str) -> int: ...
def format_id(id: int) -> str: ...

class PolyflakeError(Exception):
    code: ClassVar[str]

class InvalidLayout(PolyflakeError, ValueError):
    timestamp_bits: int
    node_bits: int
    sequence_bits: int

class UnknownLayout(PolyflakeError, ValueError):
    name: str

class InvalidNodeId(PolyflakeError, ValueError):
    node_id: int
    max: int

class InvalidEpoch(PolyflakeError, ValueError):
    epoch_ms: int
    now_ms: int
    reason: str

class InvalidArgument(PolyflakeError, ValueError):
    name: str
    reason: str

class InvalidId(PolyflakeError, ValueError):
    input: str
    reason: str

class ClockMovedBackwards(PolyflakeError, RuntimeError):
    node_id: int
    behind_ms: int
    stuck: bool
    max_wait_ms: float

class TimestampOverflow(PolyflakeError, OverflowError):
    unix_ms: int
    epoch_ms: int
    max_elapsed_ms: int

class LeadLimitExceeded(PolyflakeError, RuntimeError):
    node_id: int
    lead_ms: int
    max_lead_ms: int

class NodeIdInUse(PolyflakeError, RuntimeError):
    node_id: int
    holder_pid: int | None
    #: The holding process in words (``process 4242 (python3) on this host``); empty when the
    #: holder is a generator of this process.
    holder: str

class UsedAfterFork(PolyflakeError, RuntimeError):
    node_id: int

class ClockFailed(PolyflakeError, RuntimeError):
    reason: str

class InvalidNodeSource(PolyflakeError, ValueError):
    reason: str

class NoFreeSlot(PolyflakeError, RuntimeError):
    dir_or_prefix: str
    slots: int

class LeaseNotReady(PolyflakeError, RuntimeError):
    node_id: int
    remaining_ms: int
    cause: str

class LeaseExpired(PolyflakeError, RuntimeError):
    node_id: int
    high_water_ms: int
    cause: str

class LeaseLost(PolyflakeError, RuntimeError):
    node_id: int
    reason: str

class LeaseStore(PolyflakeError, RuntimeError):
    reason: str

class ClockJumpedAhead(PolyflakeError, RuntimeError):
    node_id: int
    ahead_ms: int
    max_forward_step_ms: int
    confirm_remaining_ms: int

class IdSpaceMismatch(PolyflakeError, ValueError):
    store: str
    store_space: str
    our_space: str

class GeneratorClosed(PolyflakeError, ValueError):
    node_id: int

class Interrupted(PolyflakeError, RuntimeError):
    node_id: int
    waited_ms: int

class ClockUnsynchronized(PolyflakeError, RuntimeError):
    node_id: int
    max_error_us: int
    cause: str
