//! The hot path: `nextId` as a plain Node-API function bound to one generator.
//!
//! napi-rs's class methods unwrap `this` and track native borrows on every call (about 250 ns
//! here, three times the cost of the whole ID). Each generator instance therefore also gets an
//! own, non-enumerable `nextId` created with `napi_create_function`, whose data pointer is an
//! `Rc` of the generator's [`Shared`] cell: no `this` to unwrap or spoof, one borrow flag, one
//! clock read, one CAS, one `napi_create_bigint_uint64`. The function keeps its `Rc` until the
//! function itself is garbage collected, so `const f = gen.nextId` stays valid after `gen` is
//! gone; `close()` empties the cell, after which it throws `GENERATOR_CLOSED`. A leased
//! generator's checks (the restart guard, R, a lost lease) all happen inside the core's
//! `next_id`. The prototype
//! method that napi-rs generates stays (it is what index.d.ts documents, and what
//! `Snowflake.prototype.nextId.call(gen)` reaches) and does exactly the same.

use crate::errors::{closed, throw_fail, throw_panic, Fail};
use crate::generator::Shared;
use napi::sys;
use polyflake::Generator;
use std::cell::RefCell;
use std::ffi::c_void;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr;
use std::rc::Rc;

fn check(status: sys::napi_status, what: &str) -> Result<(), Fail> {
    if status == sys::Status::napi_ok {
        Ok(())
    } else {
        Err(Fail::Napi(napi::Error::new(
            napi::Status::from(status),
            format!("Node-API call failed: {what}"),
        )))
    }
}

unsafe extern "C" fn next_id(env: sys::napi_env, info: sys::napi_callback_info) -> sys::napi_value {
    let mut data: *mut c_void = ptr::null_mut();
    // SAFETY: `env` and `info` are this callback's; argc may be NULL (arguments are ignored).
    let status = unsafe {
        sys::napi_get_cb_info(
            env,
            info,
            ptr::null_mut(),
            ptr::null_mut(),
            ptr::null_mut(),
            &mut data,
        )
    };
    if status != sys::Status::napi_ok || data.is_null() {
        throw_fail(
            env,
            check(status, "read the callback's data")
                .err()
                .unwrap_or_else(|| Fail::Type("nextId was called without its generator".into())),
        );
        return ptr::null_mut();
    }
    // SAFETY: `data` is the `Shared` (`Rc`) pointer given to `napi_create_function` below; the
    // function's finalizer releases it only when the function itself is collected, so it is
    // alive while the function runs (on the JS thread that owns it, like every use of it).
    let cell = unsafe { &*(data as *const RefCell<Option<Generator>>) };
    let call = || match cell.try_borrow() {
        Ok(g) => match g.as_ref() {
            Some(g) => g.next_id().map_err(Fail::Core),
            None => Err(closed()),
        },
        Err(_) => Err(closed()),
    };
    match catch_unwind(AssertUnwindSafe(call)) {
        Ok(Ok(id)) => {
            let mut out = ptr::null_mut();
            // SAFETY: the env of the current call.
            let status = unsafe { sys::napi_create_bigint_uint64(env, id, &mut out) };
            if let Err(fail) = check(status, "create a bigint") {
                throw_fail(env, fail);
                return ptr::null_mut();
            }
            out
        }
        Ok(Err(fail)) => {
            throw_fail(env, fail);
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
    drop(unsafe { Rc::from_raw(data as *const RefCell<Option<Generator>>) });
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
            sys::napi_create_function(
                env,
                name.as_ptr().cast(),
                name.len() as isize,
                Some(next_id),
                data,
                &mut f,
            )
        },
        "create nextId",
    );
    let owned = made.and_then(|()| {
        // SAFETY: as above; from here on the finalizer owns `data`.
        check(
            unsafe {
                sys::napi_add_finalizer(
                    env,
                    f,
                    data,
                    Some(release),
                    ptr::null_mut(),
                    ptr::null_mut(),
                )
            },
            "attach nextId's finalizer",
        )
    });
    if let Err(fail) = owned {
        // SAFETY: no finalizer took `data`: release it here, once.
        drop(unsafe { Rc::from_raw(data as *const RefCell<Option<Generator>>) });
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
    check(
        unsafe { sys::napi_define_properties(env, this, 1, &desc) },
        "define nextId",
    )
}
