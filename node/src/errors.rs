//! How failures cross into JavaScript. Every core [`polyflake::Error`] becomes a JS error whose
//! `code` is the core's stable [`polyflake::ErrorKind::code`]; the binding's own conversion
//! failures (a Number where an ID belongs, an unsafe integer) are `TypeError`/`RangeError` with
//! Node's usual codes; a panic is caught here and never unwinds into Node.

use napi::bindgen_prelude::{JsError, JsRangeError, JsTypeError};
use napi::sys;
use polyflake::ErrorKind;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// The result type every `#[napi]` function returns. Its error is always "an exception is now
/// pending": [`guard`] has already thrown the right JS error object.
pub type Result<T> = std::result::Result<T, napi::Error<&'static str>>;

/// Code of the `TypeError` for a value of the wrong JS type (a Number where an ID belongs).
pub const CODE_TYPE: &str = "ERR_INVALID_ARG_TYPE";
/// Code of the `RangeError` for a Number that is not a safe integer or a value that does not fit
/// the Rust type it converts to (before the core ever sees it).
pub const CODE_RANGE: &str = "ERR_OUT_OF_RANGE";
/// Code of the error thrown when Rust code panicked (a bug): the panic stops at the boundary.
pub const CODE_PANIC: &str = "INTERNAL_PANIC";
/// Code of the `Error` thrown by a generator after `close()` (its node id was given back).
pub const CODE_CLOSED: &str = "GENERATOR_CLOSED";

/// Everything a binding call can fail with, before it is thrown.
#[derive(Debug)]
pub enum Fail {
    /// A rule of the core refused (configuration, IDs, clock faults).
    Core(polyflake::Error),
    /// A JS value of the wrong type: `TypeError`, code [`CODE_TYPE`].
    Type(String),
    /// A JS value that cannot be converted exactly: `RangeError`, code [`CODE_RANGE`].
    Range(String),
    /// A Node-API call failed (for example, a getter on an options object threw).
    Napi(napi::Error),
    /// The generator was closed (`Error`, code [`CODE_CLOSED`]), or `close()` was called from
    /// inside one of its own calls (its clock function); the text says which.
    Closed(String),
}

impl From<polyflake::Error> for Fail {
    fn from(e: polyflake::Error) -> Self {
        Fail::Core(e)
    }
}

impl From<napi::Error> for Fail {
    fn from(e: napi::Error) -> Self {
        Fail::Napi(e)
    }
}

/// Which JS constructor an error is built with.
enum Class {
    Error,
    Range,
    Type,
}

/// THE mapping of core error kinds to JS error classes: one exhaustive match, so a new kind in
/// the core breaks this build until it is mapped. Mistakes in a value the caller passed are
/// `RangeError`s; faults while issuing are plain `Error`s. The `code` is always the core's.
fn class_of(kind: ErrorKind) -> Class {
    match kind {
        ErrorKind::InvalidLayout
        | ErrorKind::UnknownLayout
        | ErrorKind::InvalidNodeId
        | ErrorKind::InvalidEpoch
        | ErrorKind::InvalidArgument
        | ErrorKind::InvalidId
        | ErrorKind::InvalidNodeSource
        | ErrorKind::IdSpaceMismatch => Class::Range,
        ErrorKind::ClockMovedBackwards
        | ErrorKind::TimestampOverflow
        | ErrorKind::LeadLimitExceeded
        | ErrorKind::NodeIdInUse
        | ErrorKind::UsedAfterFork
        | ErrorKind::ClockFailed
        | ErrorKind::NoFreeSlot
        | ErrorKind::LeaseNotReady
        | ErrorKind::LeaseExpired
        | ErrorKind::LeaseLost
        | ErrorKind::LeaseStore
        | ErrorKind::ClockJumpedAhead
        | ErrorKind::GeneratorClosed => Class::Error,
    }
}

/// The failure of any call on a closed generator.
pub fn closed() -> Fail {
    Fail::Closed("this generator was closed (close() gave its node id back): make a new one".into())
}

/// Throw `fail` into `env` as a JS exception.
fn throw(env: sys::napi_env, fail: Fail) {
    let (class, code, message): (Class, &str, String) = match fail {
        Fail::Core(e) => (class_of(e.kind()), e.code(), e.to_string()),
        Fail::Type(m) => (Class::Type, CODE_TYPE, m),
        Fail::Range(m) => (Class::Range, CODE_RANGE, m),
        Fail::Closed(m) => (Class::Error, CODE_CLOSED, m),
        Fail::Napi(e) => {
            let mut pending = false;
            // SAFETY: `env` is the env of the callback we are running in.
            unsafe { sys::napi_is_exception_pending(env, &mut pending) };
            if pending {
                // A JS exception (from a getter, a Proxy, ...) is already on its way: keep it.
                return;
            }
            // SAFETY: as above.
            unsafe { JsError::from(e).throw_into(env) };
            return;
        }
    };
    let err = napi::Error::new(code, message);
    // SAFETY: `env` is the env of the callback we are running in.
    unsafe {
        match class {
            Class::Error => JsError::from(err).throw_into(env),
            Class::Range => JsRangeError::from(err).throw_into(env),
            Class::Type => JsTypeError::from(err).throw_into(env),
        }
    }
}

/// Throw a caught panic's payload as an `Error` with code [`CODE_PANIC`].
pub fn throw_panic(env: sys::napi_env, panic: Box<dyn std::any::Any + Send>) {
    let what = panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".to_string());
    let err = napi::Error::new(
        CODE_PANIC,
        format!("polyflake panicked (a bug, please report it): {what}"),
    );
    // SAFETY: `env` is the env of the callback we are running in.
    unsafe { JsError::from(err).throw_into(env) };
}

/// Throw `fail` into `env` (for raw Node-API callbacks, which return no `Result`).
pub fn throw_fail(env: sys::napi_env, fail: Fail) {
    throw(env, fail)
}

/// Run one binding call: convert its failure (or a panic) into a thrown JS error. The returned
/// `Err` tells napi-rs that an exception is already pending, so it throws nothing more.
pub fn guard<T>(env: sys::napi_env, f: impl FnOnce() -> std::result::Result<T, Fail>) -> Result<T> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(fail)) => {
            throw(env, fail);
            Err(pending())
        }
        Err(panic) => {
            throw_panic(env, panic);
            Err(pending())
        }
    }
}

/// The error napi-rs recognises as "an exception is already pending: throw nothing".
fn pending() -> napi::Error<&'static str> {
    napi::Error::new("PendingException", String::new())
}
