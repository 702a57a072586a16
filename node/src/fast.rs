//! The hot path, and the home of the generator cell: `nextId` as a plain Node-API function
//! bound to one generator.
//!
//! napi-rs's class methods unwrap `this` and track native borrows on every call (358 ns a call
//! measured, against 55 ns for this path: the whole ID costs less than the unwrapping). Each
//! generator instance therefore also gets an own, non-enumerable `nextId` made with
//! `napi_create_function`, whose data pointer is the generator's [`Shared`] cell: no `this` to
//! unwrap or spoof, one clock read, one CAS, one `napi_create_bigint_uint64`. The function keeps
//! its `Rc` until the function itself is garbage collected, so `const f = gen.nextId` stays valid
//! after `gen` is gone; after `close()` the core refuses with `GENERATOR_CLOSED`. Every check
//! (closed, forked, the restart guard, a lost lease) happens inside the core's `next_id`. The
//! prototype method napi-rs generates stays (it is what index.d.ts documents, and what
//! `Snowflake.prototype.nextId.call(gen)` reaches) and does exactly the same.

use crate::errors::{throw_fail, throw_panic};
use crate::js::{check, Fail};
use napi::sys;
use polyflake::Generator;
use std::ffi::c_void;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr;
use std::rc::Rc;

/// One core generator, shared by a JS object and its bound `nextId`. Both live on the JS thread
/// that made them; the core's own `close(&self)` ends it, so no binding state wraps it.
pub(crate) type Shared = Rc<Generator>;

unsafe extern "C" fn next_id(env: sys::napi_env, info: sys::napi_callback_info) -> sys::napi_value {
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
            fail.unwrap_or_else(|| Fail::Type("nextId has no generator".into())),
        );
        return ptr::null_mut();
    }
    // SAFETY: `data` is the `Shared` pointer given to `napi_create_function` below; the
    // function's finalizer releases it only when the function itself is collected, so it is
    // alive while the function runs (on the JS thread that owns it, like every use of it).
    let g = unsafe { &*(data as *const Generator) };
    match catch_unwind(AssertUnwindSafe(|| g.next_id())) {
        Ok(Ok(id)) => {
            let mut out = ptr::null_mut();
            // SAFETY: the env of the current call.
            let status = unsafe { sys::napi_create_bigint_uint64(env, id, &mut out) };
            match check(status, "create a bigint") {
                Ok(()) => out,
                Err(fail) => {
                    throw_fail(env, fail);
                    ptr::null_mut()
                }
            }
        }
        Ok(Err(e)) => {
            throw_fail(env, Fail::Core(e));
            ptr::null_mut()
        }
        Err(panic) => {
            throw_panic(env, panic);
            ptr::null_mut()
        }
    }
}

unsafe extern "C" fn release(_env: sys::napi_env, data: *mut c_void, _hint: *mut c_void) {
    // SAFETY: `data` came from `Rc::into_raw` in `install_next_id`, released exactly once here,
    // by a finalizer, which runs on the JS thread that made it.
    drop(unsafe { Rc::from_raw(data as *const Generator) });
}

/// Give the JS object `this` an own, non-enumerable `nextId` bound to `g`.
pub(crate) fn install_next_id(
    env: sys::napi_env,
    this: sys::napi_value,
    g: &Shared,
) -> Result<(), Fail> {
    let data = Rc::into_raw(Rc::clone(g)) as *mut c_void;
    let name = "nextId";
    let mut f = ptr::null_mut();
    // SAFETY: the env and object of the current call; `name` is valid UTF-8 of the given length.
    let made = check(
        unsafe {
            let len = name.len() as isize;
            sys::napi_create_function(env, name.as_ptr().cast(), len, Some(next_id), data, &mut f)
        },
        "create nextId",
    );
    // SAFETY: as above; from here on the finalizer owns `data`.
    let owned = made.and_then(|()| {
        let (hint, none) = (ptr::null_mut(), ptr::null_mut());
        let status = unsafe { sys::napi_add_finalizer(env, f, data, Some(release), hint, none) };
        check(status, "attach nextId's finalizer")
    });
    if let Err(fail) = owned {
        // SAFETY: no finalizer took `data`: release it here, once.
        drop(unsafe { Rc::from_raw(data as *const Generator) });
        return Err(fail);
    }
    let desc = sys::napi_property_descriptor {
        utf8name: c"nextId".as_ptr(),
        name: ptr::null_mut(),
        method: None,
        getter: None,
        setter: None,
        value: f,
        attributes: sys::PropertyAttributes::writable | sys::PropertyAttributes::configurable,
        data: ptr::null_mut(),
    };
    // SAFETY: the env and object of the current call; one valid descriptor.
    let status = unsafe { sys::napi_define_properties(env, this, 1, &desc) };
    check(status, "define nextId")
}
