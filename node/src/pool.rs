//! The async forms (`nextIdAsync`, `nextIdsAsync`): a Promise that is settled at once, on the JS
//! thread, when the core's `try_*` call issues without a wait (the common case: no thread hop),
//! and otherwise by the core's blocking call run on the libuv thread pool (a napi-rs
//! `AsyncTask`), where it may sleep without stopping the event loop. A generator on a JS clock
//! function is the exception: only its own thread may call that function, so its waits run
//! there (and block, as the synchronous forms do).

use crate::errors::{error_value, panic_fail};
use crate::fast::Shared;
use crate::js::{check, Fail, Val};
use napi::bindgen_prelude::{Env, Unknown};
use napi::{sys, JsValue, ScopedTask};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr;

/// A Promise already settled with `value` (rejected with the JS error of a failure).
pub(crate) fn settled(env: sys::napi_env, value: Result<Val, Fail>) -> Result<Val, Fail> {
    let (mut deferred, mut promise) = (ptr::null_mut(), ptr::null_mut());
    // SAFETY: the env of the current call.
    let status = unsafe { sys::napi_create_promise(env, &mut deferred, &mut promise) };
    check(status, "create a promise")?;
    // SAFETY (both): the deferred just made, settled once.
    let status = match value {
        Ok(v) => unsafe { sys::napi_resolve_deferred(env, deferred, v.raw) },
        Err(fail) => {
            let err = error_value(env, &fail)?;
            unsafe { sys::napi_reject_deferred(env, deferred, err.raw) }
        }
    };
    check(status, "settle a promise")?;
    Ok(Val::new(env, promise))
}

/// A blocking core call for the pool, and how its value becomes a JS value there after.
struct Wait<G, T, W> {
    cell: Shared<G>,
    work: Option<W>,
    out: fn(sys::napi_env, T) -> Result<Val, Fail>,
}

impl<'env, G, T, W> ScopedTask<'env> for Wait<G, T, W>
where
    G: Send + Sync + 'static,
    T: Send + 'static,
    W: FnOnce(&G) -> polyflake::Result<T> + Send,
{
    type Output = Result<T, Fail>;
    type JsValue = Unknown<'env>;

    /// On a pool thread: the core's call, which may sleep. A panic stops here.
    fn compute(&mut self) -> napi::Result<Self::Output> {
        let (g, work) = (&self.cell.g, self.work.take());
        Ok(
            match catch_unwind(AssertUnwindSafe(|| work.map(|w| w(g)))) {
                Ok(Some(value)) => value.map_err(Fail::Core),
                Ok(None) => Err(Fail::Panic("an async task ran twice".into())),
                Err(panic) => Err(panic_fail(panic)),
            },
        )
    }

    /// Back on the JS thread: resolve with the value, or reject with the core error as JS error.
    fn resolve(&mut self, env: &'env Env, output: Self::Output) -> napi::Result<Unknown<'env>> {
        match output.and_then(|v| (self.out)(env.raw(), v)) {
            Ok(v) => Ok(v.unknown()),
            Err(fail) => Err(match error_value(env.raw(), &fail) {
                Ok(err) => napi::Error::from_unknown_without_coercion(err.unknown()),
                Err(again) => napi::Error::from_reason(again.to_string()),
            }),
        }
    }
}

/// A Promise of `fast()`'s value or, where that needs a wait (`None`), of `work` run on the
/// pool and turned into a JS value by `out`. A refusal rejects, never throws.
pub(crate) fn promise<G, T, W>(
    env: sys::napi_env,
    cell: &Shared<G>,
    fast: impl FnOnce() -> Result<Option<Val>, Fail>,
    work: W,
    out: fn(sys::napi_env, T) -> Result<Val, Fail>,
) -> Result<Val, Fail>
where
    G: Send + Sync + 'static,
    T: Send + 'static,
    W: FnOnce(&G) -> polyflake::Result<T> + Send + 'static,
{
    match fast() {
        Ok(Some(v)) => settled(env, Ok(v)),
        Err(fail) => settled(env, Err(fail)),
        Ok(None) if cell.js_clock => {
            let value = work(&cell.g).map_err(Fail::Core);
            settled(env, value.and_then(|v| out(env, v)))
        }
        Ok(None) => {
            let cell = Shared::clone(cell);
            let work = Some(work);
            let task = Env::from_raw(env).spawn(Wait { cell, work, out })?;
            Ok(Val::new(env, task.promise_object().raw()))
        }
    }
}
