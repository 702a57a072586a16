"""Type stubs for the native module polyflake._polyflake (hand-written, checked by mypy.stubtest)."""

import array
import ipaddress
import os
from types import TracebackType
from typing import (
    Callable,
    ClassVar,
    Final,
    Iterable,
    Literal,
    Optional,
    Tuple,
    Type,
    TypedDict,
    Union,
    final,
)

from typing_extensions import Self, disjoint_base

__all__ = [
    "Snowflake",
    "MonotonicSnowflake",
    "Health",
    "LeaseHealth",
    "Layout",
    "ManualClock",
    "ScriptedClock",
    "decode",
    "parse_id",
    "format_id",
    "PolyflakeError",
    "InvalidLayout",
    "UnknownLayout",
    "InvalidNodeId",
    "InvalidEpoch",
    "InvalidArgument",
    "InvalidId",
    "ClockMovedBackwards",
    "TimestampOverflow",
    "LeadLimitExceeded",
    "NodeIdInUse",
    "UsedAfterFork",
    "ClockFailed",
    "InvalidNodeSource",
    "NoFreeSlot",
    "LeaseNotReady",
    "LeaseExpired",
    "LeaseLost",
    "LeaseStore",
    "DEFAULT_EPOCH_MS",
    "DEFAULT_MAX_WAIT_MS",
    "DEFAULT_RESERVE_MS",
    "MAX_ID",
    "MAX_BATCH",
    "CORE_VERSION",
    "__version__",
]

__version__: Final[str]
CORE_VERSION: Final[str]
DEFAULT_EPOCH_MS: Final[int]
DEFAULT_MAX_WAIT_MS: Final[float]
MAX_ID: Final[int]
MAX_BATCH: Final[int]
DEFAULT_RESERVE_MS: Final[int]

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
_ClockLike = Union["ManualClock", "ScriptedClock", Callable[[], int]]
_PathLike = Union[str, "os.PathLike[str]"]
_Ipv4Like = Union[str, "ipaddress.IPv4Address"]

@final
class LeaseHealth:
    """The lease part of a ``Health`` snapshot: slot, high-water mark, restart guard."""

    @property
    def kind(self) -> str: ...
    @property
    def store(self) -> str: ...
    @property
    def slot(self) -> int: ...
    @property
    def high_water_ms(self) -> int: ...
    @property
    def guard_until_ms(self) -> Optional[int]: ...
    @property
    def guard_waiting(self) -> bool: ...
    @property
    def guard_remaining_ms(self) -> int: ...
    @property
    def lost(self) -> bool: ...
    @property
    def renewals(self) -> int: ...
    @property
    def failures(self) -> int: ...
    @property
    def last_error(self) -> str: ...
    def to_dict(self) -> dict[str, Union[bool, int, str, None]]: ...

@final
class Health:
    """A snapshot from ``health()``: ok or not and why, the clocks, and the counters."""

    @property
    def ok(self) -> bool: ...
    @property
    def status(self) -> str: ...
    @property
    def reason(self) -> str: ...
    @property
    def node_id(self) -> int: ...
    @property
    def source(self) -> str: ...
    @property
    def mode(self) -> str: ...
    @property
    def last_issued_ms(self) -> Optional[int]: ...
    @property
    def wall_ms(self) -> int: ...
    @property
    def lead_ms(self) -> int: ...
    @property
    def ids_issued(self) -> int: ...
    @property
    def rewinds_waited(self) -> int: ...
    @property
    def rewinds_refused(self) -> int: ...
    @property
    def sequence_exhaustions(self) -> int: ...
    @property
    def wait_sleeps(self) -> int: ...
    @property
    def ms_borrowed(self) -> int: ...
    @property
    def lead_refused(self) -> int: ...
    @property
    def lease_renewals(self) -> int: ...
    @property
    def lease_failures(self) -> int: ...
    @property
    def lease(self) -> Optional[LeaseHealth]: ...
    def to_dict(
        self,
    ) -> dict[str, Union[bool, int, str, None, dict[str, Union[bool, int, str, None]]]]: ...

@disjoint_base
class Snowflake:
    """A strict generator: an issued timestamp never exceeds the wall clock."""

    def __new__(
        cls,
        node_id: int,
        *,
        epoch_ms: int = 1704067200000,
        max_wait_ms: float = 5.0,
        layout: Optional[_LayoutLike] = None,
        clock: Optional[_ClockLike] = None,
    ) -> Self: ...
    @classmethod
    def from_file_lease(
        cls,
        dir: _PathLike,
        *,
        slots: Optional[int] = None,
        identity: Optional[str] = None,
        reserve_ms: int = 5000,
        epoch_ms: int = 1704067200000,
        max_wait_ms: float = 5.0,
        layout: Optional[_LayoutLike] = None,
        clock: Optional[_ClockLike] = None,
    ) -> Snowflake:
        """A slot leased from a directory of slot files (one host); ``close()`` frees it."""
    @classmethod
    def from_etcd(
        cls,
        endpoints: Union[str, Iterable[str]],
        *,
        prefix: str = "/polyflake",
        ttl_s: int = 10,
        reserve_ms: int = 5000,
        slots: Optional[int] = None,
        identity: Optional[str] = None,
        connect_timeout_ms: int = 2000,
        epoch_ms: int = 1704067200000,
        max_wait_ms: float = 5.0,
        layout: Optional[_LayoutLike] = None,
        clock: Optional[_ClockLike] = None,
    ) -> Snowflake:
        """A slot leased from an etcd v3 cluster; ``close()`` frees it."""
    @classmethod
    def from_env(
        cls,
        var: str,
        *,
        epoch_ms: int = 1704067200000,
        max_wait_ms: float = 5.0,
        layout: Optional[_LayoutLike] = None,
        clock: Optional[_ClockLike] = None,
    ) -> Snowflake: ...
    @classmethod
    def from_hostname(
        cls,
        hostname: Optional[str] = None,
        *,
        epoch_ms: int = 1704067200000,
        max_wait_ms: float = 5.0,
        layout: Optional[_LayoutLike] = None,
        clock: Optional[_ClockLike] = None,
    ) -> Snowflake: ...
    @classmethod
    def from_ipv4(
        cls,
        addr: _Ipv4Like,
        prefix_len: int,
        *,
        epoch_ms: int = 1704067200000,
        max_wait_ms: float = 5.0,
        layout: Optional[_LayoutLike] = None,
        clock: Optional[_ClockLike] = None,
    ) -> Snowflake: ...
    def next_id(self) -> int: ...
    def next_ids(self, count: int) -> array.array[int]: ...
    @staticmethod
    def decode(
        id: int, /, *, layout: Optional[_LayoutLike] = None, epoch_ms: int = 1704067200000
    ) -> _Decoded:
        """On the class: the default layout and epoch (or those given). On a generator
        (``g.decode(x)``): that generator's layout and epoch; keywords are not accepted there."""
    def health(self) -> Health: ...
    def close(self) -> None: ...
    @property
    def closed(self) -> bool: ...
    def __enter__(self) -> Self: ...
    def __exit__(
        self,
        *_exc: Union[Optional[Type[BaseException]], Optional[BaseException], Optional[TracebackType]],
    ) -> Literal[False]: ...
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
    def mode(self) -> str: ...

@final
class MonotonicSnowflake(Snowflake):
    """A monotonic generator: never waits, never duplicates; may run ahead of the wall clock."""

    def __new__(
        cls,
        node_id: int,
        *,
        epoch_ms: int = 1704067200000,
        max_wait_ms: float = 5.0,
        layout: Optional[_LayoutLike] = None,
        clock: Optional[_ClockLike] = None,
        max_lead_ms: Optional[int] = None,
    ) -> Self: ...
    @classmethod
    def from_file_lease(
        cls,
        dir: _PathLike,
        *,
        slots: Optional[int] = None,
        identity: Optional[str] = None,
        reserve_ms: int = 5000,
        epoch_ms: int = 1704067200000,
        max_wait_ms: float = 5.0,
        layout: Optional[_LayoutLike] = None,
        clock: Optional[_ClockLike] = None,
        max_lead_ms: Optional[int] = None,
    ) -> MonotonicSnowflake:
        """A slot leased from a directory of slot files (one host); ``close()`` frees it."""
    @classmethod
    def from_etcd(
        cls,
        endpoints: Union[str, Iterable[str]],
        *,
        prefix: str = "/polyflake",
        ttl_s: int = 10,
        reserve_ms: int = 5000,
        slots: Optional[int] = None,
        identity: Optional[str] = None,
        connect_timeout_ms: int = 2000,
        epoch_ms: int = 1704067200000,
        max_wait_ms: float = 5.0,
        layout: Optional[_LayoutLike] = None,
        clock: Optional[_ClockLike] = None,
        max_lead_ms: Optional[int] = None,
    ) -> MonotonicSnowflake:
        """A slot leased from an etcd v3 cluster; ``close()`` frees it."""
    @classmethod
    def from_env(
        cls,
        var: str,
        *,
        epoch_ms: int = 1704067200000,
        max_wait_ms: float = 5.0,
        layout: Optional[_LayoutLike] = None,
        clock: Optional[_ClockLike] = None,
        max_lead_ms: Optional[int] = None,
    ) -> MonotonicSnowflake: ...
    @classmethod
    def from_hostname(
        cls,
        hostname: Optional[str] = None,
        *,
        epoch_ms: int = 1704067200000,
        max_wait_ms: float = 5.0,
        layout: Optional[_LayoutLike] = None,
        clock: Optional[_ClockLike] = None,
        max_lead_ms: Optional[int] = None,
    ) -> MonotonicSnowflake: ...
    @classmethod
    def from_ipv4(
        cls,
        addr: _Ipv4Like,
        prefix_len: int,
        *,
        epoch_ms: int = 1704067200000,
        max_wait_ms: float = 5.0,
        layout: Optional[_LayoutLike] = None,
        clock: Optional[_ClockLike] = None,
        max_lead_ms: Optional[int] = None,
    ) -> MonotonicSnowflake: ...

@final
class ManualClock:
    def __new__(cls, start_ms: int) -> Self: ...
    def set(self, ms: int) -> None: ...
    def advance(self, delta_ms: int) -> None: ...
    def now_ms(self) -> int: ...

@final
class ScriptedClock:
    def __new__(cls, values: Iterable[int]) -> Self: ...
    def now_ms(self) -> int: ...
    @property
    def reads(self) -> int: ...

def decode(
    id: int, /, *, layout: Optional[_LayoutLike] = None, epoch_ms: int = 1704067200000
) -> _Decoded: ...
def parse_id(text: str) -> int: ...
def format_id(id: int) -> str: ...

class PolyflakeError(Exception):
    code: ClassVar[str]

class InvalidLayout(PolyflakeError, ValueError): ...
class UnknownLayout(PolyflakeError, ValueError): ...
class InvalidNodeId(PolyflakeError, ValueError): ...
class InvalidEpoch(PolyflakeError, ValueError): ...
class InvalidArgument(PolyflakeError, ValueError): ...
class InvalidId(PolyflakeError, ValueError): ...
class ClockMovedBackwards(PolyflakeError, RuntimeError):
    node_id: int
    behind_ms: int
    stuck: bool
    max_wait_ms: float

class TimestampOverflow(PolyflakeError, OverflowError): ...
class LeadLimitExceeded(PolyflakeError, RuntimeError): ...
class NodeIdInUse(PolyflakeError, RuntimeError): ...
class UsedAfterFork(PolyflakeError, RuntimeError): ...
class ClockFailed(PolyflakeError, RuntimeError): ...
class InvalidNodeSource(PolyflakeError, ValueError):
    reason: str

class NoFreeSlot(PolyflakeError, RuntimeError):
    dir_or_prefix: str
    slots: int

class LeaseNotReady(PolyflakeError, RuntimeError):
    node_id: int
    remaining_ms: int

class LeaseExpired(PolyflakeError, RuntimeError):
    node_id: int
    high_water_ms: int

class LeaseLost(PolyflakeError, RuntimeError):
    node_id: int
    reason: str

class LeaseStore(PolyflakeError, RuntimeError):
    reason: str
