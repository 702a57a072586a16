//! The one result enum of the C ABI, the ONE exhaustive map from the core's `ErrorKind`, and
//! the names and messages of results (the core's, for every core error).

use polyflake_core::{Error, ErrorKind};
use std::cell::RefCell;
use std::ffi::{c_char, CStr, CString};
use std::sync::OnceLock;

/// What every fallible `polyflake_*` function returns: `POLYFLAKE_RESULT_OK` (0) or an error.
/// Codes are stable and never reused: 1 to 99 the core's error kinds, 100 and up faults of the
/// C boundary. Named by `polyflake_result_name()`, described by `polyflake_result_message()`;
/// `polyflake_last_error_message()` gives this thread's last error with its numbers.
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
    /// A live generator in this process, or another process on this host, already uses this
    /// static node id, epoch and layout.
    NodeIdInUse = 10,
    /// The generator was made before fork() and this is the child process.
    UsedAfterFork = 11,
    /// An injected clock failed to give a reading.
    ClockFailed = 12,
    /// A node-id source could not give a node id (env var unset, hostname without ordinal, IPv4
    /// subnet too wide, lease options out of range, ...).
    InvalidNodeSource = 13,
    /// Every slot of the lease store is held by a live holder.
    NoFreeSlot = 14,
    /// Restart guard: the clock has not passed what the slot's previous holder may have issued.
    LeaseNotReady = 15,
    /// The lease's high-water mark was reached without a renewal (store unreachable).
    LeaseExpired = 16,
    /// The lease was lost (store lease revoked or expired, slot deleted): stopped for good, or
    /// until it heals (`polyflake_lease_common.heal`).
    LeaseLost = 17,
    /// The lease store failed (I/O error on the lease directory, etcd error or timeout).
    LeaseStore = 18,
    /// Strict mode: the wall clock stepped ahead of elapsed time past max_forward_step_ms.
    ClockJumpedAhead = 19,
    /// The lease store belongs to another ID space (epoch and layout).
    IdSpaceMismatch = 20,
    /// The generator was closed (`polyflake_generator_close`).
    GeneratorClosed = 21,
    /// A call was cut short while it waited (its deadline passed, or
    /// `polyflake_generator_interrupt` was called): it wrote nothing, and the IDs it had
    /// reserved are never issued.
    Interrupted = 22,
    /// The kernel says the system clock is not synchronized, or its maximum error exceeds
    /// max_clock_error_ms: nothing is issued until it says otherwise.
    ClockUnsynchronized = 23,
    /// A required pointer argument was NULL. Nothing was written.
    NullParameter = 100,
    /// polyflake panicked (a bug): the panic was caught at the boundary. Nothing was written.
    Panic = 101,
    /// The caller's buffer is too small for the output. Nothing was written.
    BufferTooSmall = 102,
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
        ErrorKind::Interrupted => polyflake_result::Interrupted,
        ErrorKind::ClockUnsynchronized => polyflake_result::ClockUnsynchronized,
    }
}

/// The results that are not core errors, with their names and messages.
#[rustfmt::skip]
const OWN: [(polyflake_result, &CStr, &CStr); 4] = [
    (polyflake_result::Ok, c"OK", c"success"),
    (polyflake_result::NullParameter, c"NULL_PARAMETER", c"a required pointer argument was NULL"),
    (polyflake_result::Panic, c"PANIC", c"internal error: a panic was caught at the C boundary"),
    (polyflake_result::BufferTooSmall, c"BUFFER_TOO_SMALL", c"the output buffer is too small"),
];

/// The name (`message == false`) or static message of any number a caller hands back: the
/// core's code or description for core errors; "unknown polyflake_result" for other numbers.
pub(crate) fn text_of(code: u32, message: bool) -> *const c_char {
    static NAMES: NameTable = NameTable::new();
    static MESSAGES: NameTable = NameTable::new();
    if let Some((_, name, text)) = OWN.iter().find(|(r, _, _)| *r as u32 == code) {
        return if message { text } else { name }.as_ptr();
    }
    let index = ErrorKind::ALL
        .iter()
        .position(|k| result_of(*k) as u32 == code)
        .unwrap_or(usize::MAX);
    let (table, pick): (_, fn(ErrorKind) -> &'static str) = match message {
        false => (&NAMES, ErrorKind::code),
        true => (&MESSAGES, ErrorKind::description),
    };
    let all = || ErrorKind::ALL.into_iter().map(pick).collect();
    static_name(table, all, index, c"unknown polyflake_result")
}

/// A table of the core's static names (`&'static str`, no NUL), made NUL-terminated once.
pub(crate) type NameTable = OnceLock<Vec<CString>>;

/// The `index`th name of `names` as a static NUL-terminated string (the table is built on first
/// use), or `unknown` for an index past its end. Never NULL; call it inside a boundary.
pub(crate) fn static_name(
    table: &'static NameTable,
    names: impl FnOnce() -> Vec<&'static str>,
    index: usize,
    unknown: &'static CStr,
) -> *const c_char {
    let list = table.get_or_init(|| {
        let to_c = |n| CString::new(n).unwrap_or_default();
        names().into_iter().map(to_c).collect()
    });
    list.get(index).map_or(unknown.as_ptr(), |n| n.as_ptr())
}

thread_local! {
    /// The full text of this thread's last error (core errors carry their numbers in it).
    static LAST_ERROR: RefCell<String> = const { RefCell::new(String::new()) };
}

/// This thread's last core error message ("" if none yet).
pub(crate) fn last_error() -> String {
    LAST_ERROR
        .try_with(|e| e.borrow().clone())
        .unwrap_or_default()
}

impl From<Error> for polyflake_result {
    fn from(e: Error) -> polyflake_result {
        // A thread being torn down may have no thread-locals left: then there is nothing to keep.
        let _ = LAST_ERROR.try_with(|last| *last.borrow_mut() = e.to_string());
        result_of(e.kind())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(code: u32, message: bool) -> &'static str {
        unsafe { CStr::from_ptr(text_of(code, message)) }
            .to_str()
            .unwrap()
    }

    #[test]
    fn static_names_are_nul_terminated_and_total() {
        static T: NameTable = NameTable::new();
        let get = |i| unsafe { CStr::from_ptr(static_name(&T, || vec!["a", "bc"], i, c"?")) };
        assert_eq!(get(1).to_str().unwrap(), "bc");
        assert_eq!(get(2).to_str().unwrap(), "?");
    }

    #[test]
    fn core_kinds_keep_their_codes_names_and_messages() {
        let mut seen = std::collections::HashSet::new();
        for (i, kind) in ErrorKind::ALL.into_iter().enumerate() {
            let r = result_of(kind) as u32;
            // Codes never change: the kinds were numbered in the core's order, 1 to 23 (the
            // core appends new kinds at the end of its table).
            assert_eq!(r, i as u32 + 1, "{kind:?}");
            assert!(seen.insert(r));
            assert_eq!(text(r, false), kind.code());
            assert_eq!(text(r, true), kind.description());
        }
        assert_eq!(result_of(ErrorKind::ClockJumpedAhead) as u32, 19);
        assert_eq!(result_of(ErrorKind::IdSpaceMismatch) as u32, 20);
        assert_eq!(result_of(ErrorKind::GeneratorClosed) as u32, 21);
        assert_eq!(result_of(ErrorKind::ClockUnsynchronized) as u32, 23);
        for (r, name, _) in OWN {
            assert!(seen.insert(r as u32));
            assert_eq!(text(r as u32, false), name.to_str().unwrap());
            assert!(!text(r as u32, true).is_empty());
        }
        assert_eq!(text(99, false), "unknown polyflake_result");
        assert_eq!(text(99, true), "unknown polyflake_result");
    }
}
