//! The hot path, and the home of the generator cell: plain Node-API functions bound to one
//! generator (`nextId`, `tryNextId`, `nextIdAsync`, the formats' `nextIdBuffer`).
//!
//! napi-rs's class methods unwrap `this` and track borrows on every call (358 ns a call
//! measured, against 55 ns for this path). Each instance therefore also gets own,
//! non-enumerable functions whose data pointer holds its [`Shared`] cell and the body: no `this`
//! to unwrap or spoof. A function keeps its cell until it is itself collected, so
//! `const f = gen.nextId` stays valid (after `close()` the core refuses). The prototype methods
//! napi-rs generates (what index.d.ts documents) run the same bodies.

use crate::error::{self, throw_fail};
use crate::js::{napi_call, napi_make, Fail, Val};
use napi::bindgen_prelude::{Env, Unknown};
use napi::sys;
use std::ffi::{c_void, CStr};
use std::ptr;
use std::sync::Arc;

/// One core generator and what the binding must know about it.
pub(crate) struct Cell<G> {
    /// The core generator (a Snowflake one, or a UUIDv7 or ULID one).
    pub(crate) g: G,
    /// True when it reads a JS clock function, which only its own JS thread may call: the
    /// async forms then wait on that thread instead of the libuv pool (see `issue.rs`).
    pub(crate) js_clock: bool,
}

/// A generator cell shared by a JS object, its bound functions and the async waits in flight.
/// The core's `close(&self)` ends it, so no binding state wraps it.
pub(crate) type Shared<G> = Arc<Cell<G>>;

/// What a raw Node-API callback's body returns: a JS value or the failure to throw.
pub(crate) type Raw = Result<sys::napi_value, Fail>;

/// The body of a bound function: the JS value it returns, from the generator alone.
pub(crate) type Body<G> = fn(sys::napi_env, &Shared<G>) -> Raw;

/// What a bound function's data pointer owns.
struct Bound<G> {
    cell: Shared<G>,
    body: Body<G>,
}

unsafe extern "C" fn call<G>(env: sys::napi_env, info: sys::napi_callback_info) -> sys::napi_value {
    let mut data: *mut c_void = ptr::null_mut();
    let (argc, argv, this) = (ptr::null_mut(), ptr::null_mut(), ptr::null_mut());
    let what = "read the callback's data"; // argc may be NULL: the arguments are ignored
    let got = napi_call!(what => napi_get_cb_info(env, info, argc, argv, this, &mut data));
    if got.is_err() || data.is_null() {
        throw_fail(
            env,
            got.err()
                .unwrap_or_else(|| Fail::Type("no generator bound".into())),
        );
        return ptr::null_mut();
    }
    // SAFETY: `data` is the `Bound<G>` given to `napi_create_function` in `install`; the
    // function's finalizer frees it only when the function itself is collected, so it is alive
    // while the function runs (on the JS thread that owns it).
    let bound = unsafe { &*(data as *const Bound<G>) };
    run(env, || (bound.body)(env, &bound.cell))
}

/// The end of a raw Node-API callback: `f`'s value, or its failure (or panic) thrown into `env`
/// and NULL returned, as Node-API expects of a callback that threw.
pub(crate) fn run(env: sys::napi_env, f: impl FnOnce() -> Raw) -> sys::napi_value {
    error::caught(env, f).unwrap_or(ptr::null_mut())
}

unsafe extern "C" fn release<G>(_env: sys::napi_env, data: *mut c_void, _hint: *mut c_void) {
    // SAFETY: `data` came from `Box::into_raw` in `install`, released exactly once here, by a
    // finalizer, which runs on the JS thread that made it.
    drop(unsafe { Box::from_raw(data as *mut Bound<G>) });
}

/// A property descriptor of a plain value: writable and configurable, not enumerable.
fn own(name: &CStr, value: sys::napi_value) -> sys::napi_property_descriptor {
    sys::napi_property_descriptor {
        utf8name: name.as_ptr(),
        name: ptr::null_mut(),
        method: None,
        getter: None,
        setter: None,
        value,
        attributes: sys::PropertyAttributes::writable | sys::PropertyAttributes::configurable,
        data: ptr::null_mut(),
    }
}

/// A plain Node-API function `name` calling `callback` with `data`.
pub(crate) fn function(
    env: sys::napi_env,
    name: &CStr,
    callback: sys::napi_callback,
    data: *mut c_void,
) -> Result<sys::napi_value, Fail> {
    let len = usize::MAX as isize; // NUL-terminated
    let name = name.as_ptr();
    let f = napi_make!(env, "create a function" => napi_create_function(name, len, callback, data));
    f.map(|f| f.raw)
}

/// Give the JS object `this` own, non-enumerable functions bound to `cell`: `(name, body)`, then
/// the JS `nextIdAsync` of [`SETTLE_IN_JS`] over the bound `tryNextId` and `nextIdAsync`.
pub(crate) fn install<G: 'static>(
    env: sys::napi_env,
    this: sys::napi_value,
    cell: &Shared<G>,
    functions: &[(&'static CStr, Body<G>)],
) -> Result<(), Fail> {
    let mut descriptors = Vec::with_capacity(functions.len());
    for &(name, body) in functions {
        let bound = Box::new(Bound {
            cell: Arc::clone(cell),
            body,
        });
        let data = Box::into_raw(bound) as *mut c_void;
        let owned = function(env, name, Some(call::<G>), data).and_then(|f| {
            let (hint, none) = (ptr::null_mut(), ptr::null_mut());
            // From here on the function's finalizer owns `data`.
            let what = "attach a bound function's finalizer";
            napi_call!(what => napi_add_finalizer(env, f, data, Some(release::<G>), hint, none))
                .map(|()| f)
        });
        match owned {
            Ok(f) => descriptors.push(own(name, f)),
            Err(fail) => {
                // SAFETY: no finalizer took `data`: release it here, once.
                drop(unsafe { Box::from_raw(data as *mut Bound<G>) });
                return Err(fail);
            }
        }
    }
    define(env, this, &descriptors, "define the bound functions")?;
    settle_in_js(env, this)
}

/// Define `descriptors` on the object `this` (`what` names them in the error).
fn define(
    env: sys::napi_env,
    this: sys::napi_value,
    descriptors: &[sys::napi_property_descriptor],
    what: &str,
) -> Result<(), Fail> {
    let (n, all) = (descriptors.len(), descriptors.as_ptr());
    napi_call!(what => napi_define_properties(env, this, n, all))
}

/// Run a bound function's body as a prototype method (the same body, through napi-rs).
pub(crate) fn method<'env, G>(
    env: &'env Env,
    cell: &Shared<G>,
    body: Body<G>,
) -> error::Result<Unknown<'env>> {
    error::js_value(env, |raw| Ok(Val::new(raw, body(raw, cell)?)))
}

/// The async fast path in JavaScript: V8's own `Promise.resolve`/`reject` of the bound
/// `tryNextId` (a Node-API promise costs about as much as the whole ID); only where it would wait
/// (`null`) the native `nextIdAsync`, which waits on the libuv pool.
const SETTLE_IN_JS: &str = "(function (tryNextId, waitOnPool) {
  return function nextIdAsync() {
    let id
    try { id = tryNextId() } catch (e) { return Promise.reject(e) }
    return id === null ? waitOnPool() : Promise.resolve(id)
  }
})";

/// Replace `this.nextIdAsync` (the native one) by [`SETTLE_IN_JS`] over it and `this.tryNextId`.
fn settle_in_js(env: sys::napi_env, this: sys::napi_value) -> Result<(), Fail> {
    let object = Val::new(env, this);
    let (try_next, native) = (object.get("tryNextId")?, object.get("nextIdAsync")?);
    let source = Val::text(env, SETTLE_IN_JS)?;
    let factory = napi_make!(env, "compile the async fast path" => napi_run_script(source.raw))?;
    let (args, recv) = ([try_next.raw, native.raw], Val::undefined(env)?.raw);
    let what = "make the async fast path";
    let wrapped = napi_make!(env, what => napi_call_function(recv, factory.raw, 2, args.as_ptr()))?;
    let what = "define the async fast path";
    define(env, this, &[own(c"nextIdAsync", wrapped.raw)], what)
}
