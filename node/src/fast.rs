//! The hot path: `nextId` as a plain Node-API function bound to one generator.
//!
//! napi-rs's class methods unwrap `this` and track native borrows on every call (about 250 ns
//! here, three times the cost of the whole ID). Each generator instance therefore also gets an
//! own, non-enumerable `nextId` created with `napi_create_function`, whose data pointer is an
//! `Arc` of the core generator: no `this` to unwrap or spoof, one clock read, one CAS, one
//! `napi_create_bigint_uint64`. The function keeps its `Arc` until the function itself is
//! garbage collected, so `const f = gen.nextId` stays valid after `gen` is gone. The prototype
//! method that napi-rs generates stays (it is what index.d.ts documents, and what
//! `Snowflake.prototype.nextId.call(gen)` reaches) and does exactly the same.

use crate::errors::{throw_fail, throw_panic, Fail};
use napi::sys;
use polyflake::Generator;
use std::ffi::c_void;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr;
use std::sync::Arc;

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
    // SAFETY: `data` is the `Arc<Generator>` pointer given to `napi_create_function` below; the
    // function's finalizer releases it only when the function itself is collected, so it is
    // alive while the function runs.
    let g = unsafe { &*(data as *const Generator) };
    match catch_unwind(AssertUnwindSafe(|| g.next_id())) {
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
    // SAFETY: `data` came from `Arc::into_raw` in `install_next_id`, released exactly once here.
    drop(unsafe { Arc::from_raw(data as *const Generator) });
}

/// Give the JS object `this` an own, non-enumerable `nextId` bound to `g`.
pub(crate) fn install_next_id(
    env: sys::napi_env,
    this: sys::napi_value,
    g: &Arc<Generator>,
) -> Result<(), Fail> {
    let data = Arc::into_raw(Arc::clone(g)) as *mut c_void;
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
        drop(unsafe { Arc::from_raw(data as *const Generator) });
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
