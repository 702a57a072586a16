//! The hot path, and the home of the generator cell: plain Node-API functions bound to one
//! generator, under small JS functions (`nextId`, `tryNextId`, `nextIdAsync`), and the formats'
//! `nextIdBuffer`.
//!
//! napi-rs's class methods unwrap `this` and track borrows on every call (358 ns a call
//! measured, against 55 ns for this path). Each instance therefore also gets own,
//! non-enumerable functions whose data pointer holds its [`Shared`] cell and the body: no `this`
//! to unwrap or spoof. A function keeps its cell until it is itself collected, so
//! `const f = gen.nextId` stays valid (after `close()` the core refuses). The prototype methods
//! napi-rs generates (what index.d.ts documents) run the same bodies.
//!
//! A 64-bit ID does not cross as a Node-API bigint: `napi_create_bigint_uint64` (V8's runtime
//! makes the bigint, then `MutableBigInt::Canonicalize`) costs about 15 ns, more than the call
//! into the addon itself (about 13). The native function writes the ID into its instance's
//! one-element `BigInt64Array` ([`Out`]) and returns `undefined`; the JS function around it
//! ([`ISSUE_IN_JS`]) reads `slot[0]`, a bigint V8's compiled code makes inline (about 6 ns: a
//! constant ID costs 18 ns this way against 27, BENCHMARKS.md, "Node: the benchmark gate's rows
//! and the floors"). Each ID is still issued inside the call that returns it: the slot only
//! carries it to the JS function, which reads it before anything else can run.

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
    /// The clock it reads.
    pub(crate) reads: Reads,
}

/// The clock a generator reads, as far as the binding must know (see `issue.rs`).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Reads {
    /// The system clock (precise or coarse): one more reading is only a later one, so `nextId`
    /// may try the core's call that never waits first.
    System,
    /// A `ManualClock` or a `ScriptedClock`: a test's clock, read exactly as often as the core's
    /// waiting call reads it (a script moves on with each reading).
    Injected,
    /// A JS function: as `Injected`, and only its own JS thread may call it, so the async forms
    /// wait on that thread instead of the libuv pool.
    JsFunction,
}

/// A generator cell shared by a JS object, its bound functions and the async waits in flight.
/// The core's `close(&self)` ends it, so no binding state wraps it.
pub(crate) type Shared<G> = Arc<Cell<G>>;

/// What a raw Node-API callback's body returns: a JS value or the failure to throw (a NULL
/// value is `undefined`).
pub(crate) type Raw = Result<sys::napi_value, Fail>;

/// Where a body puts a 64-bit ID instead of returning it: the memory of its instance's
/// one-element `BigInt64Array`, which the JS function around it reads; or nowhere
/// ([`Out::RETURN`]: the prototype methods, the async forms), and the body returns the bigint.
#[derive(Clone, Copy)]
pub(crate) struct Out(*mut u64);

impl Out {
    /// Return the ID as a value.
    pub(crate) const RETURN: Out = Out(ptr::null_mut());

    /// `id` into the slot (and `undefined` returned), or as the value `make` gives.
    #[inline]
    pub(crate) fn put(self, id: u64, make: impl FnOnce(u64) -> Raw) -> Raw {
        if self.0.is_null() {
            return make(id);
        }
        // SAFETY: a non-null `Out` is the slot `install` gave this function: 8 aligned bytes of
        // an ArrayBuffer that only the JS functions of ISSUE_IN_JS reach (never detached), and
        // they hold it and this function alike, so it is alive while this function runs.
        unsafe { self.0.write(id) };
        Ok(ptr::null_mut())
    }
}

/// The body of a bound function: the JS value it returns, from the generator alone (a 64-bit ID
/// into `Out` when there is one).
pub(crate) type Body<G> = fn(sys::napi_env, &Shared<G>, Out) -> Raw;

/// The three issuing bodies of every generator, which [`ISSUE_IN_JS`] wraps.
pub(crate) struct Issuing<G> {
    /// `nextId()`: the ID (into the slot where it is 64-bit).
    pub(crate) next: Body<G>,
    /// `tryNextId()`: as `next`, or `null` where that would wait.
    pub(crate) try_next: Body<G>,
    /// The native `nextIdAsync()`, for where `try_next` said `null`: a Promise.
    pub(crate) wait: Body<G>,
}

/// What a bound function's data pointer owns.
struct Bound<G> {
    cell: Shared<G>,
    body: Body<G>,
    out: Out,
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
    run(env, || (bound.body)(env, &bound.cell, bound.out))
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

/// Give the JS object `this` own, non-enumerable functions bound to `cell`: `nextId`,
/// `tryNextId` and `nextIdAsync` (the JS functions of [`ISSUE_IN_JS`] over `issuing`'s bodies and
/// the instance's ID slot), then each of `extra`'s `(name, body)`.
pub(crate) fn install<G: 'static>(
    env: sys::napi_env,
    this: sys::napi_value,
    cell: &Shared<G>,
    issuing: Issuing<G>,
    extra: &[(&'static CStr, Body<G>)],
) -> Result<(), Fail> {
    let mut out = Out::RETURN;
    let slot = Val::id_array(env, 1, |memory| {
        out = Out(memory.as_mut_ptr());
        Ok(())
    })?;
    let next = bound(env, c"nextId", cell, issuing.next, out)?;
    let try_next = bound(env, c"tryNextId", cell, issuing.try_next, out)?;
    let wait = bound(env, c"nextIdAsync", cell, issuing.wait, Out::RETURN)?;
    let made = issue_in_js(env, [next, try_next, wait, slot.raw])?;
    let names = [c"nextId", c"tryNextId", c"nextIdAsync"];
    let mut descriptors: Vec<_> = names.iter().zip(made).map(|(n, f)| own(n, f.raw)).collect();
    for &(name, body) in extra {
        descriptors.push(own(name, bound(env, name, cell, body, Out::RETURN)?));
    }
    define(env, this, &descriptors, "define the bound functions")
}

/// A plain Node-API function `name` running `body` on `cell` (a 64-bit ID into `out`), which
/// owns what it needs until it is collected.
fn bound<G: 'static>(
    env: sys::napi_env,
    name: &CStr,
    cell: &Shared<G>,
    body: Body<G>,
    out: Out,
) -> Result<sys::napi_value, Fail> {
    let cell = Arc::clone(cell);
    let data = Box::into_raw(Box::new(Bound { cell, body, out })) as *mut c_void;
    let owned = function(env, name, Some(call::<G>), data).and_then(|f| {
        let (hint, none) = (ptr::null_mut(), ptr::null_mut());
        // From here on the function's finalizer owns `data`.
        let what = "attach a bound function's finalizer";
        napi_call!(what => napi_add_finalizer(env, f, data, Some(release::<G>), hint, none))
            .map(|()| f)
    });
    owned.inspect_err(|_| {
        // SAFETY: no finalizer took `data`: release it here, once.
        drop(unsafe { Box::from_raw(data as *mut Bound<G>) });
    })
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

/// Run a bound function's body as a prototype method (the same body, through napi-rs; the ID
/// returned as a value).
pub(crate) fn method<'env, G>(
    env: &'env Env,
    cell: &Shared<G>,
    body: Body<G>,
) -> error::Result<Unknown<'env>> {
    error::js_value(env, |raw| Ok(Val::new(raw, body(raw, cell, Out::RETURN)?)))
}

/// The issuing functions of an instance, in JavaScript over its native bodies and its ID slot:
/// `nextId` and `tryNextId` read a 64-bit ID from `slot` where the native call returned
/// `undefined` (see the module docs), and `nextIdAsync` settles with V8's own
/// `Promise.resolve`/`reject` of `tryNextId` (a Node-API promise costs about as much as the whole
/// ID); only where that would wait (`null`) the native `nextIdAsync`, which waits on the libuv
/// pool.
const ISSUE_IN_JS: &str = "(function (next, tryNext, waitOnPool, slot) {
  function nextId() {
    const id = next()
    return id === undefined ? slot[0] : id
  }
  function tryNextId() {
    const id = tryNext()
    return id === undefined ? slot[0] : id
  }
  function nextIdAsync() {
    let id
    try { id = tryNextId() } catch (e) { return Promise.reject(e) }
    return id === null ? waitOnPool() : Promise.resolve(id)
  }
  return [nextId, tryNextId, nextIdAsync]
})";

/// The three JS functions of [`ISSUE_IN_JS`] over `args` (the natives `nextId`, `tryNextId`,
/// `nextIdAsync`, then the slot).
fn issue_in_js(env: sys::napi_env, args: [sys::napi_value; 4]) -> Result<Vec<Val>, Fail> {
    let source = Val::text(env, ISSUE_IN_JS)?;
    let what = "compile the issuing functions";
    let factory = napi_make!(env, what => napi_run_script(source.raw))?;
    let (n, recv) = (args.len(), Val::undefined(env)?.raw);
    let what = "make the issuing functions";
    let made = napi_make!(env, what => napi_call_function(recv, factory.raw, n, args.as_ptr()))?;
    made.elements()
}
