//! The one error type of polyflake. Every binding maps [`ErrorKind`] with one exhaustive `match`,
//! so a new variant breaks every binding's build until it is mapped.
//!
//! The kinds are written once, in the table that `error_kinds!` is called with below: each row gives a
//! variant of [`Error`] with its fields, its stable code, its [`ErrorCategory`], its one-sentence
//! description and its message. The macro makes [`Error`] and [`ErrorKind`] (two plain enums, so
//! bindings keep their exhaustive `match`), [`ErrorKind::ALL`], the kind's code, name,
//! description and category, [`Error::kind`], [`Error::fields`] and `Display`: a new row is a new
//! kind everywhere at once.

use std::fmt;

/// Makes the error types from the table of kinds below. One row per kind:
///
/// ```text
/// /// Docs of the variant.
/// Kind {
///     /// Docs of the field.
///     field: Type,
/// }
/// code: "KIND",
/// category: Configuration | Unavailable | Conflict,
/// description: "one sentence",
/// display: |f| write!(f, "the message, naming {field}");
/// ```
///
/// In `display` the fields are bound by reference under their own names, and `f` is the
/// formatter. Each field's type turns into a [`Value`] through `FieldValue`.
macro_rules! error_kinds {
    ($(
        $(#[$doc:meta])*
        $kind:ident {
            $($(#[$field_doc:meta])* $field:ident: $ty:ty,)*
        }
        code: $code:literal,
        category: $category:ident,
        description: $description:literal,
        display: |$f:ident| $display:expr;
    )*) => {
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
            $(
                $(#[$doc])*
                $kind {
                    $($(#[$field_doc])* $field: $ty,)*
                },
            )*
        }

        /// The kind of an [`Error`], without its data: what bindings match on to pick an
        /// exception class, an error code or a C result.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum ErrorKind {
            $(
                #[doc = concat!("See [`Error::", stringify!($kind), "`].")]
                $kind,
            )*
        }

        /// How many kinds the table holds.
        const KIND_COUNT: usize = [$(stringify!($kind)),*].len();

        impl ErrorKind {
            /// Every kind, in a fixed order (for tables and tests).
            pub const ALL: [ErrorKind; KIND_COUNT] = [$(ErrorKind::$kind),*];

            /// A stable SCREAMING_SNAKE_CASE code: Node's `err.code`, the scenario files' error
            /// names.
            ///
            /// ```
            /// assert_eq!(polyflake::ErrorKind::ClockMovedBackwards.code(), "CLOCK_MOVED_BACKWARDS");
            /// ```
            pub const fn code(self) -> &'static str {
                match self {
                    $(ErrorKind::$kind => $code,)*
                }
            }

            /// The kind's name as a type name (`"ClockMovedBackwards"`): Python's exception
            /// classes.
            pub const fn name(self) -> &'static str {
                match self {
                    $(ErrorKind::$kind => stringify!($kind),)*
                }
            }

            /// One sentence on what this kind of error means (C's static messages, Python's
            /// docstrings).
            pub const fn description(self) -> &'static str {
                match self {
                    $(ErrorKind::$kind => $description,)*
                }
            }

            /// What a caller can do about it (see [`ErrorCategory`]).
            pub const fn category(self) -> ErrorCategory {
                match self {
                    $(ErrorKind::$kind => ErrorCategory::$category,)*
                }
            }
        }

        impl Error {
            /// The kind of this error.
            ///
            /// ```
            /// use polyflake::{parse_id, ErrorKind};
            /// assert_eq!(parse_id("12a").unwrap_err().kind(), ErrorKind::InvalidId);
            /// ```
            pub fn kind(&self) -> ErrorKind {
                match self {
                    $(Error::$kind { .. } => ErrorKind::$kind,)*
                }
            }

            /// The error's data as named fields, in declaration order: what bindings attach to
            /// their exception or error objects (Python attributes, Node properties), so none of
            /// them lists the variants by hand.
            ///
            /// ```
            /// use polyflake::{Error, Value};
            /// let e = Error::LeaseNotReady { node_id: 7, remaining_ms: 40, cause: "a clock behind".into() };
            /// assert_eq!(e.fields()[..2], [("node_id", Value::Int(7)), ("remaining_ms", Value::Int(40))]);
            /// ```
            pub fn fields(&self) -> Vec<(&'static str, Value)> {
                match self {
                    $(Error::$kind { $($field),* } => {
                        vec![$((stringify!($field), FieldValue::value($field))),*]
                    })*
                }
            }
        }

        impl fmt::Display for Error {
            fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
                match self {
                    $(Error::$kind { $($field),* } => {
                        let $f = formatter;
                        $display
                    })*
                }
            }
        }
    };
}

error_kinds! {
    /// The three fields of a layout are not each at least 1 bit, the node or sequence field is
    /// over 32 bits, or the three do not add up to 63.
    InvalidLayout {
        /// Requested timestamp bits.
        timestamp_bits: u32,
        /// Requested node bits.
        node_bits: u32,
        /// Requested sequence bits.
        sequence_bits: u32,
    }
    code: "INVALID_LAYOUT",
    category: Configuration,
    description: "invalid layout: each field needs at least 1 bit and the three must add up to 63",
    display: |f| write!(
        f,
        "invalid layout {timestamp_bits}/{node_bits}/{sequence_bits}: each field needs at least 1 bit, the node and sequence fields at most 32, and the three must add up to 63 (they add up to {})",
        u64::from(*timestamp_bits) + u64::from(*node_bits) + u64::from(*sequence_bits)
    );

    /// A layout name that is not one of the presets and not `T/N/S`.
    UnknownLayout {
        /// The name given.
        name: String,
    }
    code: "UNKNOWN_LAYOUT",
    category: Configuration,
    description: "unknown layout name: use default, long_lived, big_fleet, short, or T/N/S",
    display: |f| write!(
        f,
        "unknown layout {name:?}: use one of default, long_lived, big_fleet, short, or T/N/S such as 41/10/12"
    );

    /// The node id does not fit the layout's node field (or is negative).
    InvalidNodeId {
        /// The node id given (wide enough to carry any value a binding receives).
        node_id: i128,
        /// The largest node id the layout allows.
        max: u64,
    }
    code: "INVALID_NODE_ID",
    category: Configuration,
    description: "node id out of range for the layout (or negative)",
    display: |f| write!(f, "node id {node_id} is out of range: it must be in [0, {max}]");

    /// The epoch is negative, lies in the future of the system clock, or leaves the system
    /// clock outside the layout's window.
    InvalidEpoch {
        /// The epoch given, Unix milliseconds.
        epoch_ms: i64,
        /// The system wall clock when it was checked, Unix milliseconds.
        now_ms: i64,
        /// Which of the three it is.
        reason: &'static str,
    }
    code: "INVALID_EPOCH",
    category: Configuration,
    description: "invalid epoch: negative, in the future, or leaving the clock outside the layout's window",
    display: |f| write!(
        f,
        "invalid epoch {epoch_ms} ms: {reason} (the system clock reads {now_ms} ms)"
    );

    /// A numeric setting or argument is out of range (a wait budget, a batch count, ...).
    InvalidArgument {
        /// The argument's name.
        name: &'static str,
        /// What is wrong with it.
        reason: String,
    }
    code: "INVALID_ARGUMENT",
    category: Configuration,
    description: "an argument or setting is out of range (a wait budget, a batch count, ...)",
    display: |f| write!(f, "invalid {name}: {reason}");

    /// A value is not a valid ID: negative, at least 2^63, or not plain decimal digits.
    InvalidId {
        /// The value as given (decimal text, or the number).
        input: String,
        /// Why it was rejected.
        reason: &'static str,
    }
    code: "INVALID_ID",
    category: Configuration,
    description: "invalid ID: IDs are decimal digits below 2^63",
    display: |f| write!(f, "invalid ID {input:?}: {reason}");

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
    }
    code: "CLOCK_MOVED_BACKWARDS",
    category: Unavailable,
    description: "the clock moved backwards (or is stuck) past the wait budget: issuing could repeat an ID, so the call is refused",
    display: |f| if *stuck {
        write!(
            f,
            "clock stuck on node {node_id}: the sequence for this millisecond is spent and the clock did not advance within {max_wait_ms} ms"
        )
    } else if (*behind_ms as f64) <= *max_wait_ms {
        // A rewind the budget covers, on a clock that did not catch up in it (a frozen or
        // stepped test clock, a paused VM).
        write!(
            f,
            "clock moved backwards by {behind_ms} ms on node {node_id} and did not catch up within the wait budget ({max_wait_ms} ms): refusing to issue"
        )
    } else {
        write!(
            f,
            "clock moved backwards by {behind_ms} ms on node {node_id} (wait budget {max_wait_ms} ms): refusing to issue"
        )
    };

    /// The timestamp to issue lies outside the layout's window (before the epoch, or past its
    /// last millisecond). An ID outside the window is refused, never wrapped.
    TimestampOverflow {
        /// The timestamp that did not fit, Unix milliseconds.
        unix_ms: i64,
        /// The generator's epoch, Unix milliseconds.
        epoch_ms: i64,
        /// The largest elapsed milliseconds the layout holds.
        max_elapsed_ms: u64,
    }
    code: "TIMESTAMP_OVERFLOW",
    category: Unavailable,
    description: "the timestamp lies outside the layout's window: an ID is never wrapped",
    display: |f| write!(
        f,
        "timestamp {unix_ms} ms is outside the layout's window [{epoch_ms}, {}] ms",
        i128::from(*epoch_ms) + i128::from(*max_elapsed_ms)
    );

    /// A monotonic generator would run further ahead of the wall clock than its `max_lead_ms`.
    LeadLimitExceeded {
        /// The generator's node id.
        node_id: u32,
        /// How far ahead the ID would be, in milliseconds.
        lead_ms: u64,
        /// The configured limit.
        max_lead_ms: u64,
    }
    code: "LEAD_LIMIT_EXCEEDED",
    category: Unavailable,
    description: "a monotonic generator would run further ahead of the wall clock than max_lead_ms",
    display: |f| write!(
        f,
        "node {node_id} would run {lead_ms} ms ahead of the wall clock, past max_lead_ms = {max_lead_ms}"
    );

    /// Another live generator already holds this node id with the same layout (any epoch: the
    /// IDs' bits would meet) and scope: in this process (share that one), or in another process
    /// on this host, whatever its source (a static id, a lease's slot): give each process its
    /// own node id, or use a lease.
    NodeIdInUse {
        /// The node id asked for.
        node_id: u32,
        /// The holding process when it is another one on this host (its pid when the host
        /// could tell it, else 0); `None` when the holder is in this process.
        holder_pid: Option<u32>,
        /// The holding process in words (`process 4242 (billing) on this host`); empty when
        /// the holder is a generator of this process.
        holder: String,
    }
    code: "NODE_ID_IN_USE",
    category: Conflict,
    description: "node id already held by a live generator with the same layout (any epoch), in this process or another on this host, by a static id or a lease: share it, give each process its own id, or use a lease",
    display: |f| match holder_pid {
        None => write!(
            f,
            "node id {node_id} is already used by a live generator in this process with the same layout (any epoch: their IDs would share bits): share that generator instead of making a second"
        ),
        Some(_) => write!(
            f,
            "node id {node_id} is already held by {holder} with the same layout (any epoch: their IDs would share bits), as a static node id or a lease's slot (a forked parent, a sibling worker, another service): give each process its own node id, or take one from a lease (a file lease per process on one host)"
        ),
    };

    /// The generator was created before `fork()` and this is the child process: it shares the
    /// parent's node id and state, so it refuses to issue.
    UsedAfterFork {
        /// The generator's node id.
        node_id: u32,
    }
    code: "USED_AFTER_FORK",
    category: Conflict,
    description: "used after fork: the generator was made in the parent process; make a new one in the child",
    display: |f| write!(
        f,
        "used after fork: this generator (node {node_id}) was created in the parent process; make a new one in the child with its own node id (the parent keeps this one while it lives), or use a lease"
    );

    /// An injected clock failed to give a reading.
    ClockFailed {
        /// What the clock reported.
        reason: String,
    }
    code: "CLOCK_FAILED",
    category: Unavailable,
    description: "the clock failed to give a reading",
    display: |f| write!(f, "the clock failed: {reason}");

    /// A node-id source could not give a node id: an environment variable unset or not a
    /// number, a hostname without an ordinal, an IPv4 prefix too short for the node field, lease
    /// options out of range.
    InvalidNodeSource {
        /// What is wrong, naming the source.
        reason: String,
    }
    code: "INVALID_NODE_SOURCE",
    category: Configuration,
    description: "invalid node-id source (an environment variable unset, a hostname without an ordinal, an IPv4 prefix too short, lease options out of range)",
    display: |f| write!(f, "invalid node-id source: {reason}");

    /// Every slot of a lease store is held by a live holder.
    NoFreeSlot {
        /// The lease directory, or the etcd endpoints and key prefix.
        dir_or_prefix: String,
        /// How many slots the store was asked to use.
        slots: u32,
    }
    code: "NO_FREE_SLOT",
    category: Conflict,
    description: "no free slot: every slot of the lease store is held by a live generator",
    display: |f| write!(
        f,
        "no free slot in {dir_or_prefix}: all {slots} slots are held by live generators (stop one, or allow more slots)"
    );

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
    }
    code: "LEASE_NOT_READY",
    category: Unavailable,
    description: "restart guard: waiting until the clock passes what the slot's previous holder may have issued up to",
    display: |f| write!(
        f,
        "restart guard on node {node_id}: {cause}; issuing again in {remaining_ms} ms"
    );

    /// The holder's next ID would pass its high-water mark R: because R was not renewed (the
    /// store is unreachable or refuses the write: `cause` has its words), or because a monotonic
    /// generator runs further ahead of its clock than the reserve. It never issues past R.
    LeaseExpired {
        /// The leased node id.
        node_id: u32,
        /// The mark in force, Unix milliseconds: R, or one reserve past the last check that the
        /// slot is ours when that comes first (the cause says which).
        high_water_ms: i64,
        /// What stopped it, in words (and which setting to change, where one would help).
        cause: String,
    }
    code: "LEASE_EXPIRED",
    category: Unavailable,
    description: "lease expired: the next ID would pass the high-water mark R, or one reserve past the last check that the slot is ours (not renewed: the store is unreachable or refuses, the renewal is late; or a monotonic generator runs ahead past the reserve)",
    display: |f| write!(
        f,
        "lease expired: node {node_id}'s next ID would pass its high-water mark {high_water_ms} ms: {cause}"
    );

    /// The lease was lost (the etcd lease was revoked or expired, the ZooKeeper session expired,
    /// or the slot key or znode was deleted or changed hands): the generator stops at once and
    /// for good; make a new one.
    LeaseLost {
        /// The node id the lease held.
        node_id: u32,
        /// What was seen.
        reason: String,
    }
    code: "LEASE_LOST",
    category: Unavailable,
    description: "lease lost (etcd lease revoked or expired, ZooKeeper session expired, slot file or znode deleted or replaced): the generator has stopped for good",
    display: |f| write!(
        f,
        "lease lost for node {node_id}: {reason}; this generator stops for good, make a new one"
    );

    /// The lease store failed: an I/O error on the lease directory, an etcd or ZooKeeper error
    /// or timeout, credentials or certificates refused.
    LeaseStore {
        /// What failed, naming the store.
        reason: String,
    }
    code: "LEASE_STORE",
    category: Unavailable,
    description: "lease store error (I/O on the lease directory, an etcd or ZooKeeper error or timeout, credentials refused)",
    display: |f| write!(f, "lease store error: {reason}");

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
    }
    code: "CLOCK_JUMPED_AHEAD",
    category: Unavailable,
    description: "the clock stepped ahead of elapsed time past max_forward_step_ms: nothing is issued from it until it comes back or the new offset has held for forward_confirm_ms",
    display: |f| write!(
        f,
        "clock jumped ahead on node {node_id}: it reads {ahead_ms} ms past what elapsed time vouches for (max_forward_step_ms = {max_forward_step_ms}); refusing to issue from it until it comes back, or until the new offset has held for another {confirm_remaining_ms} ms"
    );

    /// A lease store already belongs to another ID space (epoch and layout): two generators
    /// of different spaces on one store could spell the same number with different node ids.
    IdSpaceMismatch {
        /// The lease directory, or the etcd endpoints and prefix.
        store: String,
        /// The space recorded in the store.
        store_space: String,
        /// This generator's space.
        our_space: String,
    }
    code: "ID_SPACE_MISMATCH",
    category: Configuration,
    description: "the lease store belongs to another ID space (epoch and layout): one store serves one space",
    display: |f| write!(
        f,
        "the lease store {store} belongs to the ID space {store_space}, and this generator mints in {our_space}: one store serves one ID space (use another directory or prefix)"
    );

    /// The generator was closed: it issues nothing more (its node id, or its lease's slot,
    /// may already belong to another generator).
    GeneratorClosed {
        /// The generator's node id.
        node_id: u32,
    }
    code: "GENERATOR_CLOSED",
    category: Conflict,
    description: "the generator is closed: it issues nothing more; make a new one",
    display: |f| write!(
        f,
        "this generator (node {node_id}) is closed: it issues nothing more; make a new one"
    );

    /// A call was cut short while it waited (a signal for Python, a terminating Node worker,
    /// the C ABI's cancel, the service's shutdown). It issued nothing its caller did not get,
    /// and IDs it had reserved are never issued.
    Interrupted {
        /// The generator's node id.
        node_id: u32,
        /// How long the call had waited, in milliseconds.
        waited_ms: u64,
    }
    code: "INTERRUPTED",
    category: Unavailable,
    description: "the call was interrupted while it waited (a signal, a terminating worker, a cancel): nothing was issued to it",
    display: |f| write!(
        f,
        "interrupted after waiting {waited_ms} ms (node {node_id}): the call issued nothing, and the IDs it had reserved are never issued"
    );

    /// The kernel says the system clock is not synchronized, or its maximum error exceeds the
    /// generator's `max_clock_error_ms`: nothing is issued until it says otherwise (checked
    /// once a second, off the hot path).
    ClockUnsynchronized {
        /// The generator's node id (0 for the 128-bit formats).
        node_id: u32,
        /// The kernel's maximum error of the clock when last read, in microseconds.
        max_error_us: i64,
        /// Why, in words (the kernel's state, the bound, what to do).
        cause: String,
    }
    code: "CLOCK_UNSYNCHRONIZED",
    category: Unavailable,
    description: "the kernel says the clock is not synchronized, or its error exceeds max_clock_error_ms: nothing is issued until it says otherwise",
    display: |f| write!(
        f,
        "refusing to issue on node {node_id}: {cause} (the kernel's maximum error: {max_error_us} us)"
    );
}

impl ErrorKind {
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

    /// A stable code for this error's kind (see [`ErrorKind::code`]).
    pub fn code(&self) -> &'static str {
        self.kind().code()
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

/// How one field of an [`Error`] becomes a [`Value`] in [`Error::fields`]: integers as `Int`,
/// the wait budget as `Float`, flags as `Bool`, text as `Text`, an absent holder as `Null`.
trait FieldValue {
    /// The field as a [`Value`].
    fn value(&self) -> Value;
}

macro_rules! int_field {
    ($($ty:ty),*) => {$(
        impl FieldValue for $ty {
            fn value(&self) -> Value {
                Value::Int((*self).into())
            }
        }
    )*};
}

int_field!(u32, u64, i64, i128);

impl FieldValue for bool {
    fn value(&self) -> Value {
        Value::Bool(*self)
    }
}

impl FieldValue for f64 {
    fn value(&self) -> Value {
        Value::Float(*self)
    }
}

impl FieldValue for String {
    fn value(&self) -> Value {
        Value::Text(self.clone())
    }
}

impl FieldValue for &str {
    fn value(&self) -> Value {
        Value::Text((*self).to_string())
    }
}

impl<T: FieldValue> FieldValue for Option<T> {
    fn value(&self) -> Value {
        self.as_ref().map_or(Value::Null, FieldValue::value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each row's code is its name in SCREAMING_SNAKE_CASE, and no two rows share a code or a
    /// name: a typo in a new row's code fails here, not in a binding's error table.
    #[test]
    fn codes_spell_names() {
        let mut codes = std::collections::HashSet::new();
        for kind in ErrorKind::ALL {
            let mut snake = String::new();
            for (i, c) in kind.name().chars().enumerate() {
                if c.is_ascii_uppercase() && i > 0 {
                    snake.push('_');
                }
                snake.push(c.to_ascii_uppercase());
            }
            assert_eq!(kind.code(), snake);
            assert_eq!(format!("{kind:?}"), kind.name());
            assert!(codes.insert(kind.code()), "{} twice", kind.code());
        }
        assert_eq!(codes.len(), 23);
    }

    /// `fields` names every field of the variant in declaration order, each as the `Value` the
    /// bindings expect of its type.
    #[test]
    fn fields_follow_declaration() {
        let e = Error::ClockMovedBackwards {
            node_id: 3,
            behind_ms: 5,
            stuck: false,
            max_wait_ms: 1.5,
        };
        assert_eq!(
            e.fields(),
            [
                ("node_id", Value::Int(3)),
                ("behind_ms", Value::Int(5)),
                ("stuck", Value::Bool(false)),
                ("max_wait_ms", Value::Float(1.5)),
            ]
        );
        let held = |holder_pid| Error::NodeIdInUse {
            node_id: 1,
            holder_pid,
            holder: String::new(),
        };
        assert_eq!(held(None).fields()[1], ("holder_pid", Value::Null));
        assert_eq!(held(Some(9)).fields()[1], ("holder_pid", Value::Int(9)));
        let e = Error::InvalidArgument {
            name: "count",
            reason: "too big".into(),
        };
        assert_eq!(
            e.fields(),
            [
                ("name", Value::Text("count".into())),
                ("reason", Value::Text("too big".into()))
            ]
        );
    }
}
