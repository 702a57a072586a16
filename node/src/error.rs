//! How failures cross into JavaScript. Every core [`polyflake::Error`] becomes a JS error whose
//! `code` is the core's stable [`polyflake::ErrorKind::code`] and whose other properties are the
//! error's data, from [`polyflake::Error::fields`] in camelCase (the fields Python exceptions
//! carry as attributes). The binding's own conversion failures (a Number where an ID belongs, an
//! unsafe integer) are `TypeError`/`RangeError` with Node's usual codes; a panic is caught here
//! and never unwinds into Node.

use crate::js::{camel, napi_call, napi_make, pending_exception, take_exception, Fail, Ty, Val};
use napi::bindgen_prelude::{Env, Unknown};
use napi::sys;
use polyflake::{ErrorCategory, ErrorKind};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr;

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

/// Every `code` a binding call can throw or reject with: the core's codes ([`ErrorKind::ALL`]),
/// then the binding's own. TypeScript's `PolyflakeErrorCode` (node/types.d.ts) spells out the
/// same list, which node/test/types.test.js checks. (A failing Node-API call itself, such as an
/// allocation, throws with Node-API's status name instead: not a polyflake code.)
pub fn codes() -> impl Iterator<Item = &'static str> {
    let core = ErrorKind::ALL.into_iter().map(ErrorKind::code);
    core.chain([CODE_TYPE, CODE_RANGE, CODE_PANIC])
}

/// True for what `isPolyflakeError` accepts: an `Error` whose `code` is one of [`codes`]. Never
/// throws: a `code` getter that throws makes it false.
pub fn is_polyflake_error(v: Val) -> std::result::Result<bool, Fail> {
    if v.ty()? != Ty::Object || !v.is_error()? {
        return Ok(false);
    }
    let code = match v.get("code") {
        Ok(code) => code,
        Err(_) => {
            take_exception(v.env);
            return Ok(false);
        }
    };
    if code.ty()? != Ty::String {
        return Ok(false);
    }
    let code = code.string()?;
    Ok(codes().any(|c| c == code))
}

/// Properties every JS error has: a field of the same name is prefixed with its kind's name
/// (`InvalidArgument`'s `name` is `invalidArgumentName`), never shadowing them.
const RESERVED: [&str; 5] = ["name", "message", "stack", "code", "cause"];

/// Which JS constructor an error is built with.
enum Class {
    Error,
    Range,
    Type,
}

/// THE mapping of core errors to JS error classes, by the core's own category: mistakes in a
/// value the caller passed are `RangeError`s, faults while issuing plain `Error`s.
fn class_of(kind: ErrorKind) -> Class {
    match kind.category() {
        ErrorCategory::Configuration => Class::Range,
        ErrorCategory::Unavailable | ErrorCategory::Conflict => Class::Error,
    }
}

/// The property name of a core error's field (the names are ASCII).
fn key(kind: ErrorKind, field: &str) -> String {
    let f = camel(field);
    if !RESERVED.contains(&f.as_str()) {
        return f;
    }
    let k = kind.name();
    format!(
        "{}{}{}",
        k[..1].to_lowercase(),
        &k[1..],
        camel(&format!("_{f}"))
    )
}

/// An error object of `class` with `code`, `message` and the core error's fields.
fn build(
    env: sys::napi_env,
    class: Class,
    code: &str,
    message: &str,
    core: Option<&polyflake::Error>,
) -> std::result::Result<Val, Fail> {
    let (code, message) = (Val::text(env, code)?, Val::text(env, message)?);
    let (code, message, what) = (code.raw, message.raw, "create an error");
    let err = match class {
        Class::Error => napi_make!(env, what => napi_create_error(code, message)),
        Class::Range => napi_make!(env, what => napi_create_range_error(code, message)),
        Class::Type => napi_make!(env, what => napi_create_type_error(code, message)),
    }?;
    if let Some(e) = core {
        // Every field is a property, an absent one `null` (`holderPid` of a holder in this
        // process), so `err.holderPid === null` tells the two cases apart.
        for (k, v) in e.fields() {
            let v = match Val::value(env, &v)? {
                Some(v) => v,
                None => Val::null(env)?,
            };
            err.set(&key(e.kind(), k), v)?;
        }
    }
    Ok(err)
}

/// The JS error for `fail`, not thrown (a promise is rejected with it). A JS exception already
/// on its way (from a getter, a Proxy, ...) is taken and is the error.
pub fn error_value(env: sys::napi_env, fail: &Fail) -> std::result::Result<Val, Fail> {
    match fail {
        Fail::Core(e) => build(env, class_of(e.kind()), e.code(), &e.to_string(), Some(e)),
        Fail::Type(m) => build(env, Class::Type, CODE_TYPE, m, None),
        Fail::Range(m) => build(env, Class::Range, CODE_RANGE, m, None),
        Fail::Panic(m) => {
            let message = format!("polyflake panicked (a bug, please report it): {m}");
            build(env, Class::Error, CODE_PANIC, &message, None)
        }
        Fail::Napi(e) => match take_exception(env) {
            Some(pending) => Ok(pending),
            None => build(env, Class::Error, e.status.as_ref(), &e.reason, None),
        },
    }
}

/// Throw `fail` into `env` as a JS exception (for raw Node-API callbacks, which return no
/// `Result`). If even building the error fails, a plain `Error` says so.
pub fn throw_fail(env: sys::napi_env, fail: Fail) {
    // A JS exception already on its way is kept.
    if matches!(fail, Fail::Napi(_)) && pending_exception(env) {
        return;
    }
    let thrown =
        error_value(env, &fail).and_then(|err| napi_call!("throw" => napi_throw(env, err.raw)));
    if thrown.is_err() && !pending_exception(env) {
        let text = c"polyflake: could not build the error object".as_ptr();
        let _ = napi_call!("throw" => napi_throw_error(env, ptr::null(), text));
    }
}

/// A caught panic as a [`Fail`] (its payload's text).
pub fn panic_fail(panic: Box<dyn std::any::Any + Send>) -> Fail {
    Fail::Panic(
        panic
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown panic".to_string()),
    )
}

/// `f`'s value, or `None` once its failure (or panic) is thrown into `env`: a panic never
/// unwinds into Node.
#[inline]
pub fn caught<T>(
    env: sys::napi_env,
    f: impl FnOnce() -> std::result::Result<T, Fail>,
) -> Option<T> {
    let fail = match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(value)) => return Some(value),
        Ok(Err(fail)) => fail,
        Err(panic) => panic_fail(panic),
    };
    throw_fail(env, fail);
    None
}

/// Run one binding call: its failure (or a panic) becomes a thrown JS error, and the returned
/// `Err` tells napi-rs that an exception is already pending, so it throws nothing more.
pub fn guard<T>(env: sys::napi_env, f: impl FnOnce() -> std::result::Result<T, Fail>) -> Result<T> {
    caught(env, f).ok_or_else(pending)
}

/// [`guard`] for a call that makes a JS value.
pub fn js_value<'env>(
    env: &'env Env,
    f: impl FnOnce(sys::napi_env) -> std::result::Result<Val, Fail>,
) -> Result<Unknown<'env>> {
    let raw = env.raw();
    guard(raw, || Ok(f(raw)?.unknown()))
}

/// The error napi-rs recognises as "an exception is already pending: throw nothing".
fn pending() -> napi::Error<&'static str> {
    napi::Error::new("PendingException", String::new())
}
