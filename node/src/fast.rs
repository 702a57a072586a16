//! The hot paths, and the home of the generator cell: plain Node-API functions bound to one
//! generator (`nextId`, `tryNextId`, `nextIdAsync`, and the 128-bit formats' `nextIdBuffer`).
//!
//! napi-rs's class methods unwrap `this` and track native borrows on every call (358 ns a call
//! measured, against 55 ns for this path: the whole ID costs less than the unwrapping). Each
//! generator instance therefore also gets own, non-enumerable functions made with
//! `napi_create_function`, whose data pointer holds the generator's [`Shared`] cell and the
//! function's body: no `this` to unwrap or spoof. A function keeps its cell until the function
//! itself is garbage collected, so `const f = gen.nextId` stays valid after `gen` is gone; after
//! `close()` the core refuses with `GENERATOR_CLOSED`. Every check (closed, forked, the restart
//! guard, a lost lease) happens inside the core. The prototype methods napi-rs generates stay
//! (they are what index.d.ts documents, and what `Snowflake.prototype.nextId.call(gen)` reaches)
//! and run the same bodies.

use crate::errors::{panic_fail, throw_fail};
use crate::js::{check, Fail, Val};
use napi::sys;
use std::ffi::{c_void, CStr};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr;
use std::sync::Arc;

/// One core generator and what the binding must know about it.
pub(crate) struct Cell<G> {
    /// The core generator (a Snowflake one, or a UUIDv7 or ULID one).
    pub(crate) g: G,
    /// True when it reads a JS clock function, which only its own JS thread may call: the
    /// async forms then wait on that thread instead of the libuv pool (see `pool.rs`).
    pub(crate) js_clock: bool,
}

/// A generator cell shared by a JS object, its bound functions and the async waits in flight.
/// The core's `close(&self)` ends it, so no binding state wraps it.
pub(crate) type Shared<G> = Arc<Cell<G>>;

/// The body of a bound function: the JS value it returns, from the generator alone.
pub(crate) type Body<G> = fn(sys::napi_env, &Shared<G>) -> Result<sys::napi_value, Fail>;

/// What a bound function's data pointer owns.
struct Bound<G> {
    cell: Shared<G>,
    body: Body<G>,
}

unsafe extern "C" fn call<G>(env: sys::napi_env, info: sys::napi_callback_info) -> sys::napi_value {
    let mut data: *mut c_void = ptr::null_mut();
    // SAFETY: `env` and `info` are this callback's; argc may be NULL (arguments are ignored).
    let status = unsafe {
        let (argc, argv, this) = (ptr::null_mut(), ptr::null_mut(), ptr::null_mut());
        sys::napi_get_cb_info(env, info, argc, argv, this, &mut data)
    };
    if status != sys::Status::napi_ok || data.is_null() {
        let fail = check(status, "read the callback's data").err();
        throw_fail(
            env,
            fail.unwrap_or_else(|| Fail::Type("no generator bound".into())),
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
pub(crate) fn run(
    env: sys::napi_env,
    f: impl FnOnce() -> Result<sys::napi_value, Fail>,
) -> sys::napi_value {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(value)) => value,
        Ok(Err(fail)) => {
            throw_fail(env, fail);
            ptr::null_mut()
        }
        Err(panic) => {
            throw_fail(env, panic_fail(panic));
            ptr::null_mut()
        }
    }
}

unsafe extern "C" fn release<G>(_env: sys::napi_env, data: *mut c_void, _hint: *mut c_void) {
    // SAFETY: `data` came from `Box::into_raw` in `install`, released exactly once here, by a
    // finalizer, which runs on the JS thread that made it.
    drop(unsafe { Box::from_raw(data as *mut Bound<G>) });
}

/// Give the JS object `this` own, non-enumerable functions bound to `cell`: `(name, body)`.
pub(crate) fn install<G: 'static>(
    env: sys::napi_env,
    this: sys::napi_value,
    cell: &Shared<G>,
    functions: &[(&'static CStr, Body<G>)],
) -> Result<(), Fail> {
    let mut descriptors = Vec::with_capacity(functions.len());
    for &(name, body) in functions {
        let data = Box::into_raw(Box::new(Bound {
            cell: Arc::clone(cell),
            body,
        })) as *mut c_void;
        let mut f = ptr::null_mut();
        // SAFETY: the env of the current call; `name` is NUL-terminated.
        let made = check(
            unsafe {
                let name = name.as_ptr();
                sys::napi_create_function(
                    env,
                    name,
                    usize::MAX as isize,
                    Some(call::<G>),
                    data,
                    &mut f,
                )
            },
            "create a bound function",
        );
        // SAFETY: as above; from here on the finalizer owns `data`.
        let owned = made.and_then(|()| {
            let (hint, none) = (ptr::null_mut(), ptr::null_mut());
            let status =
                unsafe { sys::napi_add_finalizer(env, f, data, Some(release::<G>), hint, none) };
            check(status, "attach a bound function's finalizer")
        });
        if let Err(fail) = owned {
            // SAFETY: no finalizer took `data`: release it here, once.
            drop(unsafe { Box::from_raw(data as *mut Bound<G>) });
            return Err(fail);
        }
        descriptors.push(sys::napi_property_descriptor {
            utf8name: name.as_ptr(),
            name: ptr::null_mut(),
            method: None,
            getter: None,
            setter: None,
            value: f,
            attributes: sys::PropertyAttributes::writable | sys::PropertyAttributes::configurable,
            data: ptr::null_mut(),
        });
    }
    // SAFETY: the env and object of the current call; valid descriptors.
    let status =
        unsafe { sys::napi_define_properties(env, this, descriptors.len(), descriptors.as_ptr()) };
    check(status, "define the bound functions")?;
    let names: Vec<&CStr> = functions.iter().map(|(name, _)| *name).collect();
    if names.contains(&c"tryNextId") && names.contains(&c"nextIdAsync") {
        settle_in_js(env, this)?;
    }
    Ok(())
}

/// The async fast path in JavaScript: `nextIdAsync` calls the bound `tryNextId` and settles with
/// V8's own `Promise.resolve` when it issued (a Node-API promise costs about as much as the whole
/// ID), or `Promise.reject` when it refused; only where it would wait (`null`) does it call the
/// native `nextIdAsync`, which hands the wait to the libuv pool. The closure holds the two bound
/// functions, not the object.
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
    let mut factory = ptr::null_mut();
    // SAFETY: the env of the current call and a string of it.
    let status = unsafe { sys::napi_run_script(env, source.raw, &mut factory) };
    check(status, "compile the async fast path")?;
    let (args, mut wrapped) = ([try_next.raw, native.raw], ptr::null_mut());
    let recv = Val::undefined(env)?.raw;
    // SAFETY: as above; `factory` is the function the script evaluates to, called with 2 args.
    let status =
        unsafe { sys::napi_call_function(env, recv, factory, 2, args.as_ptr(), &mut wrapped) };
    check(status, "make the async fast path")?;
    let descriptor = sys::napi_property_descriptor {
        utf8name: c"nextIdAsync".as_ptr(),
        name: ptr::null_mut(),
        method: None,
        getter: None,
        setter: None,
        value: wrapped,
        attributes: sys::PropertyAttributes::writable | sys::PropertyAttributes::configurable,
        data: ptr::null_mut(),
    };
    // SAFETY: the env and object of the current call; one valid descriptor.
    let status = unsafe { sys::napi_define_properties(env, this, 1, &descriptor) };
    check(status, "define the async fast path")
}
