//! The one result enum of the C ABI, its static names and messages, and the ONE exhaustive map
//! from the core's `ErrorKind`.

use polyflake_core::{Error, ErrorKind};
use std::cell::RefCell;
use std::ffi::{c_char, CStr};

/// What every fallible `polyflake_*` function returns. `POLYFLAKE_RESULT_OK` (0) is success;
/// every other value is an error. Codes are stable and never reused: 1 to 99 mirror the core's
/// error kinds, 100 and up are faults of the C boundary itself.
///
/// `polyflake_result_name()` gives the stable code name (the scenario files' error names, e.g.
/// "CLOCK_MOVED_BACKWARDS"), `polyflake_result_message()` a static English sentence, and
/// `polyflake_last_error_message()` the full message of this thread's last error, with its numbers.
#[repr(u32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum polyflake_result {
    /// Success.
    Ok = 0,
    /// The three layout fields are not each at least 1 bit, or do not add up to 63.
    InvalidLayout = 1,
    /// A layout name that is not a preset and not "T/N/S".
    UnknownLayout = 2,
    /// The node id does not fit the layout's node field (or is negative).
    InvalidNodeId = 3,
    /// The epoch is negative, in the future, or leaves the system clock outside the layout's window.
    InvalidEpoch = 4,
    /// A numeric setting or argument is out of range (a wait budget, a batch count, a mode, ...).
    InvalidArgument = 5,
    /// Not a valid ID: at least 2^63, or text that is not plain decimal digits.
    InvalidId = 6,
    /// The clock is behind (or stuck on) a millisecond already issued from, past the wait budget.
    ClockMovedBackwards = 7,
    /// The timestamp to issue lies outside the layout's window.
    TimestampOverflow = 8,
    /// A monotonic generator would run further ahead of the wall clock than max_lead_ms.
    LeadLimitExceeded = 9,
    /// A live system-clock generator in this process already uses this node id, epoch and layout.
    NodeIdInUse = 10,
    /// The generator was made before fork() and this is the child process.
    UsedAfterFork = 11,
    /// An injected clock failed to give a reading.
    ClockFailed = 12,
    /// A node-id source could not give a node id (env var unset, hostname without ordinal, IPv4
    /// prefix too short for the node field, lease options out of range).
    InvalidNodeSource = 13,
    /// Every slot of the lease store is held by a live holder.
    NoFreeSlot = 14,
    /// Restart guard: the clock has not passed the slot's previous high-water mark yet.
    LeaseNotReady = 15,
    /// The lease's high-water mark was reached without a renewal (store unreachable).
    LeaseExpired = 16,
    /// The lease was lost (etcd lease revoked or expired): the generator has stopped for good.
    LeaseLost = 17,
    /// The lease store failed (I/O error on the lease directory, etcd error or timeout).
    LeaseStore = 18,
    /// Strict mode: the wall clock stepped ahead of elapsed time past max_forward_step_ms.
    ClockJumpedAhead = 19,
    /// The lease store belongs to another ID space (epoch and layout).
    IdSpaceMismatch = 20,
    /// The generator was closed.
    GeneratorClosed = 21,
    /// A required pointer argument was NULL. Nothing was written.
    NullParameter = 100,
    /// polyflake panicked (a bug): the panic was caught at the boundary. Nothing was written.
    Panic = 101,
    /// The caller's buffer is too small for the output. Nothing was written.
    BufferTooSmall = 102,
}

impl polyflake_result {
    /// Every result, in code order (for lookups by number and for tests).
    pub(crate) const ALL: [polyflake_result; 25] = [
        polyflake_result::Ok,
        polyflake_result::InvalidLayout,
        polyflake_result::UnknownLayout,
        polyflake_result::InvalidNodeId,
        polyflake_result::InvalidEpoch,
        polyflake_result::InvalidArgument,
        polyflake_result::InvalidId,
        polyflake_result::ClockMovedBackwards,
        polyflake_result::TimestampOverflow,
        polyflake_result::LeadLimitExceeded,
        polyflake_result::NodeIdInUse,
        polyflake_result::UsedAfterFork,
        polyflake_result::ClockFailed,
        polyflake_result::InvalidNodeSource,
        polyflake_result::NoFreeSlot,
        polyflake_result::LeaseNotReady,
        polyflake_result::LeaseExpired,
        polyflake_result::LeaseLost,
        polyflake_result::LeaseStore,
        polyflake_result::ClockJumpedAhead,
        polyflake_result::IdSpaceMismatch,
        polyflake_result::GeneratorClosed,
        polyflake_result::NullParameter,
        polyflake_result::Panic,
        polyflake_result::BufferTooSmall,
    ];

    /// The result with this number, if there is one (C hands results back as plain integers).
    pub(crate) fn from_code(code: u32) -> Option<polyflake_result> {
        polyflake_result::ALL
            .into_iter()
            .find(|r| *r as u32 == code)
    }

    /// The stable code name; for core errors it equals `ErrorKind::code()` (a unit test checks).
    pub(crate) const fn name(self) -> &'static CStr {
        match self {
            polyflake_result::Ok => c"OK",
            polyflake_result::InvalidLayout => c"INVALID_LAYOUT",
            polyflake_result::UnknownLayout => c"UNKNOWN_LAYOUT",
            polyflake_result::InvalidNodeId => c"INVALID_NODE_ID",
            polyflake_result::InvalidEpoch => c"INVALID_EPOCH",
            polyflake_result::InvalidArgument => c"INVALID_ARGUMENT",
            polyflake_result::InvalidId => c"INVALID_ID",
            polyflake_result::ClockMovedBackwards => c"CLOCK_MOVED_BACKWARDS",
            polyflake_result::TimestampOverflow => c"TIMESTAMP_OVERFLOW",
            polyflake_result::LeadLimitExceeded => c"LEAD_LIMIT_EXCEEDED",
            polyflake_result::NodeIdInUse => c"NODE_ID_IN_USE",
            polyflake_result::UsedAfterFork => c"USED_AFTER_FORK",
            polyflake_result::ClockFailed => c"CLOCK_FAILED",
            polyflake_result::InvalidNodeSource => c"INVALID_NODE_SOURCE",
            polyflake_result::NoFreeSlot => c"NO_FREE_SLOT",
            polyflake_result::LeaseNotReady => c"LEASE_NOT_READY",
            polyflake_result::LeaseExpired => c"LEASE_EXPIRED",
            polyflake_result::LeaseLost => c"LEASE_LOST",
            polyflake_result::LeaseStore => c"LEASE_STORE",
            polyflake_result::ClockJumpedAhead => c"CLOCK_JUMPED_AHEAD",
            polyflake_result::IdSpaceMismatch => c"ID_SPACE_MISMATCH",
            polyflake_result::GeneratorClosed => c"GENERATOR_CLOSED",
            polyflake_result::NullParameter => c"NULL_PARAMETER",
            polyflake_result::Panic => c"PANIC",
            polyflake_result::BufferTooSmall => c"BUFFER_TOO_SMALL",
        }
    }

    /// A static sentence for this result (the numbers of a particular error are in
    /// `polyflake_last_error_message`).
    pub(crate) const fn message(self) -> &'static CStr {
        match self {
            polyflake_result::Ok => c"success",
            polyflake_result::InvalidLayout => {
                c"invalid layout: each field needs at least 1 bit and the three must add up to 63"
            }
            polyflake_result::UnknownLayout => {
                c"unknown layout name: use default, long_lived, big_fleet, short, or T/N/S"
            }
            polyflake_result::InvalidNodeId => c"node id out of range for the layout",
            polyflake_result::InvalidEpoch => {
                c"invalid epoch: negative, in the future, or outside the layout's window"
            }
            polyflake_result::InvalidArgument => c"an argument or setting is out of range",
            polyflake_result::InvalidId => c"invalid ID: IDs are decimal digits below 2^63",
            polyflake_result::ClockMovedBackwards => {
                c"the clock moved backwards (or is stuck) past the wait budget: refusing to issue"
            }
            polyflake_result::TimestampOverflow => {
                c"the timestamp lies outside the layout's window"
            }
            polyflake_result::LeadLimitExceeded => {
                c"a monotonic generator would run further ahead of the wall clock than max_lead_ms"
            }
            polyflake_result::NodeIdInUse => {
                c"node id already used by a live generator in this process: share that one"
            }
            polyflake_result::UsedAfterFork => {
                c"used after fork: make a new generator in the child"
            }
            polyflake_result::ClockFailed => c"the clock failed to give a reading",
            polyflake_result::InvalidNodeSource => c"invalid node-id source",
            polyflake_result::NoFreeSlot => c"no free slot: every slot of the lease store is held",
            polyflake_result::LeaseNotReady => {
                c"restart guard: waiting until the clock passes the slot's previous high-water mark"
            }
            polyflake_result::LeaseExpired => {
                c"lease expired: the high-water mark was reached without a renewal"
            }
            polyflake_result::LeaseLost => c"lease lost: the generator has stopped for good",
            polyflake_result::LeaseStore => c"lease store error (I/O or etcd)",
            polyflake_result::ClockJumpedAhead => {
                c"the clock stepped ahead of elapsed time past max_forward_step_ms: refusing to issue"
            }
            polyflake_result::IdSpaceMismatch => {
                c"the lease store belongs to another ID space (epoch and layout)"
            }
            polyflake_result::GeneratorClosed => c"the generator is closed",
            polyflake_result::NullParameter => c"a required pointer argument was NULL",
            polyflake_result::Panic => c"internal error: a panic was caught at the C boundary",
            polyflake_result::BufferTooSmall => c"the output buffer is too small",
        }
    }
}

/// The ONE map from the core's error kinds to C results. Exhaustive on purpose: a new core
/// variant breaks this build until it gets a code of its own.
pub(crate) const fn result_of(kind: ErrorKind) -> polyflake_result {
    match kind {
        ErrorKind::InvalidLayout => polyflake_result::InvalidLayout,
        ErrorKind::UnknownLayout => polyflake_result::UnknownLayout,
        ErrorKind::InvalidNodeId => polyflake_result::InvalidNodeId,
        ErrorKind::InvalidEpoch => polyflake_result::InvalidEpoch,
        ErrorKind::InvalidArgument => polyflake_result::InvalidArgument,
        ErrorKind::InvalidId => polyflake_result::InvalidId,
        ErrorKind::ClockMovedBackwards => polyflake_result::ClockMovedBackwards,
        ErrorKind::TimestampOverflow => polyflake_result::TimestampOverflow,
        ErrorKind::LeadLimitExceeded => polyflake_result::LeadLimitExceeded,
        ErrorKind::NodeIdInUse => polyflake_result::NodeIdInUse,
        ErrorKind::UsedAfterFork => polyflake_result::UsedAfterFork,
        ErrorKind::ClockFailed => polyflake_result::ClockFailed,
        ErrorKind::InvalidNodeSource => polyflake_result::InvalidNodeSource,
        ErrorKind::NoFreeSlot => polyflake_result::NoFreeSlot,
        ErrorKind::LeaseNotReady => polyflake_result::LeaseNotReady,
        ErrorKind::LeaseExpired => polyflake_result::LeaseExpired,
        ErrorKind::LeaseLost => polyflake_result::LeaseLost,
        ErrorKind::LeaseStore => polyflake_result::LeaseStore,
        ErrorKind::ClockJumpedAhead => polyflake_result::ClockJumpedAhead,
        ErrorKind::IdSpaceMismatch => polyflake_result::IdSpaceMismatch,
        ErrorKind::GeneratorClosed => polyflake_result::GeneratorClosed,
    }
}

thread_local! {
    /// The full text of this thread's last error (core errors carry their numbers in it).
    static LAST_ERROR: RefCell<String> = const { RefCell::new(String::new()) };
}

pub(crate) fn set_last_error(text: String) {
    // A thread being torn down may have no thread-locals left: then there is nothing to keep.
    let _ = LAST_ERROR.try_with(|e| *e.borrow_mut() = text);
}

pub(crate) fn last_error() -> String {
    LAST_ERROR
        .try_with(|e| e.borrow().clone())
        .unwrap_or_default()
}

impl From<Error> for polyflake_result {
    fn from(e: Error) -> polyflake_result {
        let r = result_of(e.kind());
        set_last_error(e.to_string());
        r
    }
}

/// The result's static name or message, for any integer a caller hands back.
pub(crate) fn static_text(code: u32, pick: fn(polyflake_result) -> &'static CStr) -> *const c_char {
    match polyflake_result::from_code(code) {
        Some(r) => pick(r).as_ptr(),
        None => c"unknown polyflake_result".as_ptr(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn core_kinds_keep_their_code_names() {
        for kind in ErrorKind::ALL {
            let r = result_of(kind);
            assert_eq!(r.name().to_str().unwrap(), kind.code());
            assert!((1..100).contains(&(r as u32)), "{kind:?}");
        }
    }

    #[test]
    fn codes_are_unique_and_listed() {
        let mut seen = std::collections::HashSet::new();
        for r in polyflake_result::ALL {
            assert!(seen.insert(r as u32), "{r:?} reuses a code");
            assert_eq!(polyflake_result::from_code(r as u32), Some(r));
            assert!(!r.message().to_bytes().is_empty());
        }
        assert_eq!(polyflake_result::from_code(99), None);
    }
}
