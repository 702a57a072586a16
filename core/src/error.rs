//! The one error type of polyflake. Every binding maps [`ErrorKind`] with one exhaustive `match`,
//! so a new variant breaks every binding's build until it is mapped.

use std::fmt;

/// Everything that can go wrong in polyflake, with the numbers a user needs to act on it.
///
/// ```
/// use polyflake::{Error, ErrorKind, Layout};
/// let err = Layout::new(41, 10, 13).unwrap_err();
/// assert_eq!(err.kind(), ErrorKind::InvalidLayout);
/// assert!(err.to_string().contains("63"));
/// ```
#[derive(Debug, Clone, PartialEq)]
pub enum Error {
    /// The three fields of a layout are not each at least 1 bit, the node or sequence field is
    /// over 32 bits, or the three do not add up to 63.
    InvalidLayout {
        /// Requested timestamp bits.
        timestamp_bits: u32,
        /// Requested node bits.
        node_bits: u32,
        /// Requested sequence bits.
        sequence_bits: u32,
    },
    /// A layout name that is not one of the presets and not `T/N/S`.
    UnknownLayout {
        /// The name given.
        name: String,
    },
    /// The node id does not fit the layout's node field (or is negative).
    InvalidNodeId {
        /// The node id given (wide enough to carry any value a binding receives).
        node_id: i128,
        /// The largest node id the layout allows.
        max: u64,
    },
    /// The epoch is negative, lies in the future of the system clock, or leaves the system
    /// clock outside the layout's window.
    InvalidEpoch {
        /// The epoch given, Unix milliseconds.
        epoch_ms: i64,
        /// The system wall clock when it was checked, Unix milliseconds.
        now_ms: i64,
        /// Which of the three it is.
        reason: &'static str,
    },
    /// A numeric setting or argument is out of range (a wait budget, a batch count, ...).
    InvalidArgument {
        /// The argument's name.
        name: &'static str,
        /// What is wrong with it.
        reason: String,
    },
    /// A value is not a valid ID: negative, at least 2^63, or not plain decimal digits.
    InvalidId {
        /// The value as given (decimal text, or the number).
        input: String,
        /// Why it was rejected.
        reason: &'static str,
    },
    /// The wall clock is behind a millisecond this generator already issued from (or has not
    /// advanced while the sequence for the current millisecond is spent). Issuing now could
    /// repeat an ID, so the call is refused.
    ClockMovedBackwards {
        /// The generator's node id.
        node_id: u32,
        /// How far the clock is behind the last issued millisecond (0 when it is stuck on it).
        behind_ms: u64,
        /// True when the clock did not advance past a spent millisecond within the budget.
        stuck: bool,
        /// The wait budget in milliseconds that was used up or exceeded.
        max_wait_ms: f64,
    },
    /// The timestamp to issue lies outside the layout's window (before the epoch, or past its
    /// last millisecond). An ID outside the window is refused, never wrapped.
    TimestampOverflow {
        /// The timestamp that did not fit, Unix milliseconds.
        unix_ms: i64,
        /// The generator's epoch, Unix milliseconds.
        epoch_ms: i64,
        /// The largest elapsed milliseconds the layout holds.
        max_elapsed_ms: u64,
    },
    /// A monotonic generator would run further ahead of the wall clock than its `max_lead_ms`.
    LeadLimitExceeded {
        /// The generator's node id.
        node_id: u32,
        /// How far ahead the ID would be, in milliseconds.
        lead_ms: u64,
        /// The configured limit.
        max_lead_ms: u64,
    },
    /// Another live generator already uses this static node id with the same epoch and layout
    /// on the system clock: in this process (share that one), or in another process on this
    /// host (give each process its own node id, or use a lease).
    NodeIdInUse {
        /// The node id asked for.
        node_id: u32,
        /// The holding process when it is another one on this host (its pid when the host
        /// could tell it, else 0); `None` when the holder is in this process.
        holder_pid: Option<u32>,
    },
    /// The generator was created before `fork()` and this is the child process: it shares the
    /// parent's node id and state, so it refuses to issue.
    UsedAfterFork {
        /// The generator's node id.
        node_id: u32,
    },
    /// An injected clock failed to give a reading.
    ClockFailed {
        /// What the clock reported.
        reason: String,
    },
    /// A node-id source could not give a node id: an environment variable unset or not a
    /// number, a hostname without an ordinal, an IPv4 prefix too short for the node field, lease
    /// options out of range.
    InvalidNodeSource {
        /// What is wrong, naming the source.
        reason: String,
    },
    /// Every slot of a lease store is held by a live holder.
    NoFreeSlot {
        /// The lease directory, or the etcd endpoints and key prefix.
        dir_or_prefix: String,
        /// How many slots the store was asked to use.
        slots: u32,
    },
    /// The restart guard: the slot's previous holder may have issued up to its high-water mark R,
    /// and this holder's clock has not passed R yet (or has stepped back under it after passing
    /// it: `cause` says which). Nothing is issued until it has.
    LeaseNotReady {
        /// The leased node id.
        node_id: u32,
        /// How long until the wall clock passes R, in milliseconds.
        remaining_ms: u64,
        /// Why the clock is under the guard, in words.
        cause: String,
    },
    /// The holder's next ID would pass its high-water mark R: because R was not renewed (the
    /// store is unreachable or refuses the write: `cause` has its words), or because a monotonic
    /// generator runs further ahead of its clock than the reserve. It never issues past R.
    LeaseExpired {
        /// The leased node id.
        node_id: u32,
        /// The high-water mark R, Unix milliseconds.
        high_water_ms: i64,
        /// What stopped it, in words (and which setting to change, where one would help).
        cause: String,
    },
    /// The lease was lost (the etcd lease was revoked or expired, the ZooKeeper session expired,
    /// or the slot key or znode was deleted or changed hands): the generator stops at once and
    /// for good; make a new one.
    LeaseLost {
        /// The node id the lease held.
        node_id: u32,
        /// What was seen.
        reason: String,
    },
    /// The lease store failed: an I/O error on the lease directory, an etcd or ZooKeeper error
    /// or timeout, credentials or certificates refused.
    LeaseStore {
        /// What failed, naming the store.
        reason: String,
    },
    /// Strict mode: the wall clock is further ahead of the time elapsed since it was last
    /// trusted than `max_forward_step_ms` (a bad NTP server, a VM restored with a wrong clock).
    /// Issuing now would put IDs in the future that nothing remembers after the correction, so
    /// the call is refused until the clock comes back or the new offset has held for
    /// `forward_confirm_ms`.
    ClockJumpedAhead {
        /// The generator's node id.
        node_id: u32,
        /// How far the reading is ahead of what elapsed time vouches for, in ms.
        ahead_ms: i64,
        /// The bound on a forward step, in ms.
        max_forward_step_ms: u64,
        /// How much longer the new offset must hold before it is believed, in ms.
        confirm_remaining_ms: i64,
    },
    /// A lease store already belongs to another ID space (epoch and layout): two generators
    /// of different spaces on one store could spell the same number with different node ids.
    IdSpaceMismatch {
        /// The lease directory, or the etcd endpoints and prefix.
        store: String,
        /// The space recorded in the store.
        store_space: String,
        /// This generator's space.
        our_space: String,
    },
    /// The generator was closed: it issues nothing more (its node id, or its lease's slot,
    /// may already belong to another generator).
    GeneratorClosed {
        /// The generator's node id.
        node_id: u32,
    },
    /// A call was cut short while it waited (a signal for Python, a terminating Node worker,
    /// the C ABI's cancel, the service's shutdown). It issued nothing its caller did not get,
    /// and IDs it had reserved are never issued.
    Interrupted {
        /// The generator's node id.
        node_id: u32,
        /// How long the call had waited, in milliseconds.
        waited_ms: u64,
    },
}

/// The kind of an [`Error`], without its data: what bindings match on to pick an exception class,
/// an error code or a C result.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorKind {
    /// See [`Error::InvalidLayout`].
    InvalidLayout,
    /// See [`Error::UnknownLayout`].
    UnknownLayout,
    /// See [`Error::InvalidNodeId`].
    InvalidNodeId,
    /// See [`Error::InvalidEpoch`].
    InvalidEpoch,
    /// See [`Error::InvalidArgument`].
    InvalidArgument,
    /// See [`Error::InvalidId`].
    InvalidId,
    /// See [`Error::ClockMovedBackwards`].
    ClockMovedBackwards,
    /// See [`Error::TimestampOverflow`].
    TimestampOverflow,
    /// See [`Error::LeadLimitExceeded`].
    LeadLimitExceeded,
    /// See [`Error::NodeIdInUse`].
    NodeIdInUse,
    /// See [`Error::UsedAfterFork`].
    UsedAfterFork,
    /// See [`Error::ClockFailed`].
    ClockFailed,
    /// See [`Error::InvalidNodeSource`].
    InvalidNodeSource,
    /// See [`Error::NoFreeSlot`].
    NoFreeSlot,
    /// See [`Error::LeaseNotReady`].
    LeaseNotReady,
    /// See [`Error::LeaseExpired`].
    LeaseExpired,
    /// See [`Error::LeaseLost`].
    LeaseLost,
    /// See [`Error::LeaseStore`].
    LeaseStore,
    /// See [`Error::ClockJumpedAhead`].
    ClockJumpedAhead,
    /// See [`Error::IdSpaceMismatch`].
    IdSpaceMismatch,
    /// See [`Error::GeneratorClosed`].
    GeneratorClosed,
    /// See [`Error::Interrupted`].
    Interrupted,
}

impl ErrorKind {
    /// Every kind, in a fixed order (for tables and tests).
    pub const ALL: [ErrorKind; 22] = [
        ErrorKind::InvalidLayout,
        ErrorKind::UnknownLayout,
        ErrorKind::InvalidNodeId,
        ErrorKind::InvalidEpoch,
        ErrorKind::InvalidArgument,
        ErrorKind::InvalidId,
        ErrorKind::ClockMovedBackwards,
        ErrorKind::TimestampOverflow,
        ErrorKind::LeadLimitExceeded,
        ErrorKind::NodeIdInUse,
        ErrorKind::UsedAfterFork,
        ErrorKind::ClockFailed,
        ErrorKind::InvalidNodeSource,
        ErrorKind::NoFreeSlot,
        ErrorKind::LeaseNotReady,
        ErrorKind::LeaseExpired,
        ErrorKind::LeaseLost,
        ErrorKind::LeaseStore,
        ErrorKind::ClockJumpedAhead,
        ErrorKind::IdSpaceMismatch,
        ErrorKind::GeneratorClosed,
        ErrorKind::Interrupted,
    ];

    /// A stable SCREAMING_SNAKE_CASE code: Node's `err.code`, the scenario files' error names.
    ///
    /// ```
    /// assert_eq!(polyflake::ErrorKind::ClockMovedBackwards.code(), "CLOCK_MOVED_BACKWARDS");
    /// ```
    pub const fn code(self) -> &'static str {
        match self {
            ErrorKind::InvalidLayout => "INVALID_LAYOUT",
            ErrorKind::UnknownLayout => "UNKNOWN_LAYOUT",
            ErrorKind::InvalidNodeId => "INVALID_NODE_ID",
            ErrorKind::InvalidEpoch => "INVALID_EPOCH",
            ErrorKind::InvalidArgument => "INVALID_ARGUMENT",
            ErrorKind::InvalidId => "INVALID_ID",
            ErrorKind::ClockMovedBackwards => "CLOCK_MOVED_BACKWARDS",
            ErrorKind::TimestampOverflow => "TIMESTAMP_OVERFLOW",
            ErrorKind::LeadLimitExceeded => "LEAD_LIMIT_EXCEEDED",
            ErrorKind::NodeIdInUse => "NODE_ID_IN_USE",
            ErrorKind::UsedAfterFork => "USED_AFTER_FORK",
            ErrorKind::ClockFailed => "CLOCK_FAILED",
            ErrorKind::InvalidNodeSource => "INVALID_NODE_SOURCE",
            ErrorKind::NoFreeSlot => "NO_FREE_SLOT",
            ErrorKind::LeaseNotReady => "LEASE_NOT_READY",
            ErrorKind::LeaseExpired => "LEASE_EXPIRED",
            ErrorKind::LeaseLost => "LEASE_LOST",
            ErrorKind::LeaseStore => "LEASE_STORE",
            ErrorKind::ClockJumpedAhead => "CLOCK_JUMPED_AHEAD",
            ErrorKind::IdSpaceMismatch => "ID_SPACE_MISMATCH",
            ErrorKind::GeneratorClosed => "GENERATOR_CLOSED",
            ErrorKind::Interrupted => "INTERRUPTED",
        }
    }

    /// The kind's name as a type name (`"ClockMovedBackwards"`): Python's exception classes.
    pub const fn name(self) -> &'static str {
        match self {
            ErrorKind::InvalidLayout => "InvalidLayout",
            ErrorKind::UnknownLayout => "UnknownLayout",
            ErrorKind::InvalidNodeId => "InvalidNodeId",
            ErrorKind::InvalidEpoch => "InvalidEpoch",
            ErrorKind::InvalidArgument => "InvalidArgument",
            ErrorKind::InvalidId => "InvalidId",
            ErrorKind::ClockMovedBackwards => "ClockMovedBackwards",
            ErrorKind::TimestampOverflow => "TimestampOverflow",
            ErrorKind::LeadLimitExceeded => "LeadLimitExceeded",
            ErrorKind::NodeIdInUse => "NodeIdInUse",
            ErrorKind::UsedAfterFork => "UsedAfterFork",
            ErrorKind::ClockFailed => "ClockFailed",
            ErrorKind::InvalidNodeSource => "InvalidNodeSource",
            ErrorKind::NoFreeSlot => "NoFreeSlot",
            ErrorKind::LeaseNotReady => "LeaseNotReady",
            ErrorKind::LeaseExpired => "LeaseExpired",
            ErrorKind::LeaseLost => "LeaseLost",
            ErrorKind::LeaseStore => "LeaseStore",
            ErrorKind::ClockJumpedAhead => "ClockJumpedAhead",
            ErrorKind::IdSpaceMismatch => "IdSpaceMismatch",
            ErrorKind::GeneratorClosed => "GeneratorClosed",
            ErrorKind::Interrupted => "Interrupted",
        }
    }

    /// One sentence on what this kind of error means (C's static messages, Python's
    /// docstrings).
    pub const fn description(self) -> &'static str {
        match self {
            ErrorKind::InvalidLayout => "invalid layout: each field needs at least 1 bit and the three must add up to 63",
            ErrorKind::UnknownLayout => "unknown layout name: use default, long_lived, big_fleet, short, or T/N/S",
            ErrorKind::InvalidNodeId => "node id out of range for the layout (or negative)",
            ErrorKind::InvalidEpoch => "invalid epoch: negative, in the future, or leaving the clock outside the layout's window",
            ErrorKind::InvalidArgument => "an argument or setting is out of range (a wait budget, a batch count, ...)",
            ErrorKind::InvalidId => "invalid ID: IDs are decimal digits below 2^63",
            ErrorKind::ClockMovedBackwards => "the clock moved backwards (or is stuck) past the wait budget: issuing could repeat an ID, so the call is refused",
            ErrorKind::TimestampOverflow => "the timestamp lies outside the layout's window: an ID is never wrapped",
            ErrorKind::LeadLimitExceeded => "a monotonic generator would run further ahead of the wall clock than max_lead_ms",
            ErrorKind::NodeIdInUse => "node id already used by a live generator (same epoch and layout) in this process or another on this host: share it, give each process its own id, or use a lease",
            ErrorKind::UsedAfterFork => "used after fork: the generator was made in the parent process; make a new one in the child",
            ErrorKind::ClockFailed => "the clock failed to give a reading",
            ErrorKind::InvalidNodeSource => "invalid node-id source (an environment variable unset, a hostname without an ordinal, an IPv4 prefix too short, lease options out of range)",
            ErrorKind::NoFreeSlot => "no free slot: every slot of the lease store is held by a live generator",
            ErrorKind::LeaseNotReady => "restart guard: waiting until the clock passes what the slot's previous holder may have issued up to",
            ErrorKind::LeaseExpired => "lease expired: the next ID would pass the high-water mark R (not renewed: the store is unreachable or refuses; or a monotonic generator runs ahead past the reserve)",
            ErrorKind::LeaseLost => "lease lost (etcd lease revoked or expired, ZooKeeper session expired, slot file or znode deleted or replaced): the generator has stopped for good",
            ErrorKind::LeaseStore => "lease store error (I/O on the lease directory, an etcd or ZooKeeper error or timeout, credentials refused)",
            ErrorKind::ClockJumpedAhead => "the clock stepped ahead of elapsed time past max_forward_step_ms: nothing is issued from it until it comes back or the new offset has held for forward_confirm_ms",
            ErrorKind::IdSpaceMismatch => "the lease store belongs to another ID space (epoch and layout): one store serves one space",
            ErrorKind::GeneratorClosed => "the generator is closed: it issues nothing more; make a new one",
            ErrorKind::Interrupted => "the call was interrupted while it waited (a signal, a terminating worker, a cancel): nothing was issued to it",
        }
    }

    /// What a caller can do about it (see [`ErrorCategory`]).
    pub const fn category(self) -> ErrorCategory {
        match self {
            ErrorKind::InvalidLayout
            | ErrorKind::UnknownLayout
            | ErrorKind::InvalidNodeId
            | ErrorKind::InvalidEpoch
            | ErrorKind::InvalidArgument
            | ErrorKind::InvalidId
            | ErrorKind::InvalidNodeSource
            | ErrorKind::IdSpaceMismatch => ErrorCategory::Configuration,
            ErrorKind::ClockMovedBackwards
            | ErrorKind::TimestampOverflow
            | ErrorKind::LeadLimitExceeded
            | ErrorKind::ClockFailed
            | ErrorKind::LeaseNotReady
            | ErrorKind::LeaseExpired
            | ErrorKind::LeaseLost
            | ErrorKind::LeaseStore
            | ErrorKind::ClockJumpedAhead
            | ErrorKind::Interrupted => ErrorCategory::Unavailable,
            ErrorKind::NodeIdInUse
            | ErrorKind::UsedAfterFork
            | ErrorKind::NoFreeSlot
            | ErrorKind::GeneratorClosed => ErrorCategory::Conflict,
        }
    }

    /// True for mistakes in how a generator was configured or called (as opposed to faults
    /// that arise while issuing): bindings raise these as value errors.
    pub const fn is_configuration(self) -> bool {
        matches!(self.category(), ErrorCategory::Configuration)
    }
}

/// What a caller can do about an error: each [`ErrorKind`] belongs to one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorCategory {
    /// A mistake in how the generator was configured or called: fix the input (Python
    /// `ValueError`, JavaScript `RangeError`, HTTP 400, exit code 2).
    Configuration,
    /// The generator cannot issue right now (clock, lease, store): retry later or on another
    /// node (HTTP 503).
    Unavailable,
    /// The generator cannot be made or used in this process as asked (node id taken, used after
    /// fork, every slot held, closed).
    Conflict,
}

impl ErrorCategory {
    /// `"configuration"`, `"unavailable"` or `"conflict"`.
    pub const fn name(self) -> &'static str {
        match self {
            ErrorCategory::Configuration => "configuration",
            ErrorCategory::Unavailable => "unavailable",
            ErrorCategory::Conflict => "conflict",
        }
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.code())
    }
}

impl Error {
    /// The refusal of a value too wide for the core's own types (a Python int past 2^127, a
    /// JSON number past 2^64), echoing exactly what the caller sent: bindings call this instead
    /// of clamping, so the message never shows a bound the caller did not write.
    ///
    /// ```
    /// let sent = "340282366920938463463374607431768211456"; // 2**128, from Python
    /// let e = polyflake::Error::too_wide("node_id", sent);
    /// assert!(e.to_string().contains(sent));
    /// assert_eq!(e.kind(), polyflake::ErrorKind::InvalidArgument);
    /// ```
    pub fn too_wide(name: &'static str, sent: &str) -> Error {
        let limit = match name {
            "node_id" | "nodeId" => "no layout has a node id above 2^32 - 1",
            "epoch_ms" | "epochMs" => "Unix milliseconds are a signed 64-bit number",
            "count" | "n" => "no batch holds that many IDs",
            _ => "it is past the range of the setting's type",
        };
        Error::InvalidArgument {
            name,
            reason: format!("{sent} is out of range: {limit}"),
        }
    }

    /// The kind of this error.
    ///
    /// ```
    /// use polyflake::{parse_id, ErrorKind};
    /// assert_eq!(parse_id("12a").unwrap_err().kind(), ErrorKind::InvalidId);
    /// ```
    pub fn kind(&self) -> ErrorKind {
        match self {
            Error::InvalidLayout { .. } => ErrorKind::InvalidLayout,
            Error::UnknownLayout { .. } => ErrorKind::UnknownLayout,
            Error::InvalidNodeId { .. } => ErrorKind::InvalidNodeId,
            Error::InvalidEpoch { .. } => ErrorKind::InvalidEpoch,
            Error::InvalidArgument { .. } => ErrorKind::InvalidArgument,
            Error::InvalidId { .. } => ErrorKind::InvalidId,
            Error::ClockMovedBackwards { .. } => ErrorKind::ClockMovedBackwards,
            Error::TimestampOverflow { .. } => ErrorKind::TimestampOverflow,
            Error::LeadLimitExceeded { .. } => ErrorKind::LeadLimitExceeded,
            Error::NodeIdInUse { .. } => ErrorKind::NodeIdInUse,
            Error::UsedAfterFork { .. } => ErrorKind::UsedAfterFork,
            Error::ClockFailed { .. } => ErrorKind::ClockFailed,
            Error::InvalidNodeSource { .. } => ErrorKind::InvalidNodeSource,
            Error::NoFreeSlot { .. } => ErrorKind::NoFreeSlot,
            Error::LeaseNotReady { .. } => ErrorKind::LeaseNotReady,
            Error::LeaseExpired { .. } => ErrorKind::LeaseExpired,
            Error::LeaseLost { .. } => ErrorKind::LeaseLost,
            Error::LeaseStore { .. } => ErrorKind::LeaseStore,
            Error::ClockJumpedAhead { .. } => ErrorKind::ClockJumpedAhead,
            Error::IdSpaceMismatch { .. } => ErrorKind::IdSpaceMismatch,
            Error::GeneratorClosed { .. } => ErrorKind::GeneratorClosed,
            Error::Interrupted { .. } => ErrorKind::Interrupted,
        }
    }

    /// The error's data as named fields, in declaration order: what bindings attach to their
    /// exception or error objects (Python attributes, Node properties), so none of them lists
    /// the variants by hand.
    ///
    /// ```
    /// use polyflake::{Error, Value};
    /// let e = Error::LeaseNotReady { node_id: 7, remaining_ms: 40, cause: "a clock behind".into() };
    /// assert_eq!(e.fields()[..2], [("node_id", Value::Int(7)), ("remaining_ms", Value::Int(40))]);
    /// ```
    pub fn fields(&self) -> Vec<(&'static str, Value)> {
        use Value::{Bool, Float, Int, Text};
        let text = |s: &str| Text(s.to_string());
        match self {
            Error::InvalidLayout {
                timestamp_bits,
                node_bits,
                sequence_bits,
            } => vec![
                ("timestamp_bits", Int((*timestamp_bits).into())),
                ("node_bits", Int((*node_bits).into())),
                ("sequence_bits", Int((*sequence_bits).into())),
            ],
            Error::UnknownLayout { name } => vec![("name", text(name))],
            Error::InvalidNodeId { node_id, max } => {
                vec![("node_id", Int(*node_id)), ("max", Int((*max).into()))]
            }
            Error::InvalidEpoch {
                epoch_ms,
                now_ms,
                reason,
            } => vec![
                ("epoch_ms", Int((*epoch_ms).into())),
                ("now_ms", Int((*now_ms).into())),
                ("reason", text(reason)),
            ],
            Error::InvalidArgument { name, reason } => {
                vec![("name", text(name)), ("reason", text(reason))]
            }
            Error::InvalidId { input, reason } => {
                vec![("input", text(input)), ("reason", text(reason))]
            }
            Error::ClockMovedBackwards {
                node_id,
                behind_ms,
                stuck,
                max_wait_ms,
            } => vec![
                ("node_id", Int((*node_id).into())),
                ("behind_ms", Int((*behind_ms).into())),
                ("stuck", Bool(*stuck)),
                ("max_wait_ms", Float(*max_wait_ms)),
            ],
            Error::TimestampOverflow {
                unix_ms,
                epoch_ms,
                max_elapsed_ms,
            } => vec![
                ("unix_ms", Int((*unix_ms).into())),
                ("epoch_ms", Int((*epoch_ms).into())),
                ("max_elapsed_ms", Int((*max_elapsed_ms).into())),
            ],
            Error::LeadLimitExceeded {
                node_id,
                lead_ms,
                max_lead_ms,
            } => vec![
                ("node_id", Int((*node_id).into())),
                ("lead_ms", Int((*lead_ms).into())),
                ("max_lead_ms", Int((*max_lead_ms).into())),
            ],
            Error::NodeIdInUse {
                node_id,
                holder_pid,
            } => vec![
                ("node_id", Int((*node_id).into())),
                (
                    "holder_pid",
                    holder_pid.map_or(Value::Null, |p| Int(p.into())),
                ),
            ],
            Error::Interrupted { node_id, waited_ms } => vec![
                ("node_id", Int((*node_id).into())),
                ("waited_ms", Int((*waited_ms).into())),
            ],
            Error::UsedAfterFork { node_id } | Error::GeneratorClosed { node_id } => {
                vec![("node_id", Int((*node_id).into()))]
            }
            Error::ClockFailed { reason }
            | Error::InvalidNodeSource { reason }
            | Error::LeaseStore { reason } => vec![("reason", text(reason))],
            Error::NoFreeSlot {
                dir_or_prefix,
                slots,
            } => vec![
                ("dir_or_prefix", text(dir_or_prefix)),
                ("slots", Int((*slots).into())),
            ],
            Error::LeaseNotReady {
                node_id,
                remaining_ms,
                cause,
            } => vec![
                ("node_id", Int((*node_id).into())),
                ("remaining_ms", Int((*remaining_ms).into())),
                ("cause", text(cause)),
            ],
            Error::LeaseExpired {
                node_id,
                high_water_ms,
                cause,
            } => vec![
                ("node_id", Int((*node_id).into())),
                ("high_water_ms", Int((*high_water_ms).into())),
                ("cause", text(cause)),
            ],
            Error::LeaseLost { node_id, reason } => vec![
                ("node_id", Int((*node_id).into())),
                ("reason", text(reason)),
            ],
            Error::ClockJumpedAhead {
                node_id,
                ahead_ms,
                max_forward_step_ms,
                confirm_remaining_ms,
            } => vec![
                ("node_id", Int((*node_id).into())),
                ("ahead_ms", Int((*ahead_ms).into())),
                ("max_forward_step_ms", Int((*max_forward_step_ms).into())),
                ("confirm_remaining_ms", Int((*confirm_remaining_ms).into())),
            ],
            Error::IdSpaceMismatch {
                store,
                store_space,
                our_space,
            } => vec![
                ("store", text(store)),
                ("store_space", text(store_space)),
                ("our_space", text(our_space)),
            ],
        }
    }

    /// A stable code for this error's kind (see [`ErrorKind::code`]).
    pub fn code(&self) -> &'static str {
        self.kind().code()
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::InvalidLayout {
                timestamp_bits,
                node_bits,
                sequence_bits,
            } => write!(
                f,
                "invalid layout {timestamp_bits}/{node_bits}/{sequence_bits}: each field needs at least 1 bit, the node and sequence fields at most 32, and the three must add up to 63 (they add up to {})",
                u64::from(*timestamp_bits) + u64::from(*node_bits) + u64::from(*sequence_bits)
            ),
            Error::UnknownLayout { name } => write!(
                f,
                "unknown layout {name:?}: use one of default, long_lived, big_fleet, short, or T/N/S such as 41/10/12"
            ),
            Error::InvalidNodeId { node_id, max } => {
                write!(f, "node id {node_id} is out of range: it must be in [0, {max}]")
            }
            Error::InvalidEpoch {
                epoch_ms,
                now_ms,
                reason,
            } => write!(
                f,
                "invalid epoch {epoch_ms} ms: {reason} (the system clock reads {now_ms} ms)"
            ),
            Error::InvalidArgument { name, reason } => write!(f, "invalid {name}: {reason}"),
            Error::InvalidId { input, reason } => write!(f, "invalid ID {input:?}: {reason}"),
            Error::ClockMovedBackwards {
                node_id,
                behind_ms,
                stuck,
                max_wait_ms,
            } => {
                if *stuck {
                    write!(
                        f,
                        "clock stuck on node {node_id}: the sequence for this millisecond is spent and the clock did not advance within {max_wait_ms} ms"
                    )
                } else if (*behind_ms as f64) <= *max_wait_ms {
                    // A rewind the budget covers, on a clock that did not catch up in it (a
                    // frozen or stepped test clock, a paused VM).
                    write!(
                        f,
                        "clock moved backwards by {behind_ms} ms on node {node_id} and did not catch up within the wait budget ({max_wait_ms} ms): refusing to issue"
                    )
                } else {
                    write!(
                        f,
                        "clock moved backwards by {behind_ms} ms on node {node_id} (wait budget {max_wait_ms} ms): refusing to issue"
                    )
                }
            }
            Error::TimestampOverflow {
                unix_ms,
                epoch_ms,
                max_elapsed_ms,
            } => write!(
                f,
                "timestamp {unix_ms} ms is outside the layout's window [{epoch_ms}, {}] ms",
                i128::from(*epoch_ms) + i128::from(*max_elapsed_ms)
            ),
            Error::LeadLimitExceeded {
                node_id,
                lead_ms,
                max_lead_ms,
            } => write!(
                f,
                "node {node_id} would run {lead_ms} ms ahead of the wall clock, past max_lead_ms = {max_lead_ms}"
            ),
            Error::NodeIdInUse {
                node_id,
                holder_pid: None,
            } => write!(
                f,
                "node id {node_id} is already used by a live generator in this process with the same epoch and layout: share that generator instead of making a second"
            ),
            Error::NodeIdInUse {
                node_id,
                holder_pid: Some(pid),
            } => {
                let who = if *pid == 0 {
                    "another process on this host".to_string()
                } else {
                    format!("process {pid} on this host")
                };
                write!(
                    f,
                    "node id {node_id} is already held by {who} with the same epoch and layout (a forked parent, a sibling worker, another service): give each process its own node id, or take one from a lease (a file lease per process on one host)"
                )
            }
            Error::Interrupted { node_id, waited_ms } => write!(
                f,
                "interrupted after waiting {waited_ms} ms (node {node_id}): the call issued nothing, and the IDs it had reserved are never issued"
            ),
            Error::UsedAfterFork { node_id } => write!(
                f,
                "used after fork: this generator (node {node_id}) was created in the parent process; make a new one in the child with its own node id (the parent keeps this one while it lives), or use a lease"
            ),
            Error::ClockFailed { reason } => write!(f, "the clock failed: {reason}"),
            Error::InvalidNodeSource { reason } => write!(f, "invalid node-id source: {reason}"),
            Error::NoFreeSlot {
                dir_or_prefix,
                slots,
            } => write!(
                f,
                "no free slot in {dir_or_prefix}: all {slots} slots are held by live generators (stop one, or allow more slots)"
            ),
            Error::LeaseNotReady {
                node_id,
                remaining_ms,
                cause,
            } => write!(
                f,
                "restart guard on node {node_id}: {cause}; issuing again in {remaining_ms} ms"
            ),
            Error::LeaseExpired {
                node_id,
                high_water_ms,
                cause,
            } => write!(
                f,
                "lease expired: node {node_id}'s next ID would pass its high-water mark {high_water_ms} ms: {cause}"
            ),
            Error::LeaseLost { node_id, reason } => write!(
                f,
                "lease lost for node {node_id}: {reason}; this generator stops for good, make a new one"
            ),
            Error::LeaseStore { reason } => write!(f, "lease store error: {reason}"),
            Error::ClockJumpedAhead {
                node_id,
                ahead_ms,
                max_forward_step_ms,
                confirm_remaining_ms,
            } => write!(
                f,
                "clock jumped ahead on node {node_id}: it reads {ahead_ms} ms past what elapsed time vouches for (max_forward_step_ms = {max_forward_step_ms}); refusing to issue from it until it comes back, or until the new offset has held for another {confirm_remaining_ms} ms"
            ),
            Error::IdSpaceMismatch {
                store,
                store_space,
                our_space,
            } => write!(
                f,
                "the lease store {store} belongs to the ID space {store_space}, and this generator mints in {our_space}: one store serves one ID space (use another directory or prefix)"
            ),
            Error::GeneratorClosed { node_id } => write!(
                f,
                "this generator (node {node_id}) is closed: it issues nothing more; make a new one"
            ),
        }
    }
}

impl std::error::Error for Error {}

/// One field of an error or a health snapshot, as [`Error::fields`] and
/// [`crate::Health::fields`] hand them to bindings.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// An integer (wide enough for every count, time and node id).
    Int(i128),
    /// A number with a fraction (wait budgets).
    Float(f64),
    /// A flag.
    Bool(bool),
    /// Text.
    Text(String),
    /// Nothing (an optional field that is absent).
    Null,
    /// A nested record (a health snapshot's lease part).
    Fields(Vec<(&'static str, Value)>),
}

impl Value {
    /// An optional integer: `Int` or `Null`.
    pub fn opt_int(v: Option<i64>) -> Value {
        v.map_or(Value::Null, |n| Value::Int(n.into()))
    }
}

/// Shorthand for results whose error is [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
