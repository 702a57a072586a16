//! Issuing one ID, the same for every generator (the core's [`Issuer`]): the bodies of the bound
//! functions `nextId`, `tryNextId` and `nextIdAsync`, and the async forms. A Promise is settled
//! at once, on the JS thread, when the core's `try_*` call issues without a wait (no thread hop),
//! and otherwise by the core's blocking call on the libuv thread pool (a napi-rs `AsyncTask`). A
//! generator on a JS clock function waits on its own thread instead (only it may call the
//! function), blocking as the synchronous forms do.

use crate::error::{error_value, panic_fail};
use crate::fast::{Issuing, Out, Raw, Reads, Shared};
use crate::interrupt::{pool_wait, waiting, PoolWait};
use crate::js::{napi_call, napi_make, Fail, Val};
use napi::bindgen_prelude::{Env, Unknown};
use napi::{sys, JsValue, ScopedTask};
use polyflake::Issuer;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr;

/// An ID as its JS value: a Snowflake ID a `bigint`, a UUID or ULID its generator's text.
pub(crate) trait JsId: Sized {
    /// `id`, issued by a `G`, as its JS value.
    fn js<G: Issuer<Id = Self>>(env: sys::napi_env, id: Self) -> Result<Val, Fail>;

    /// What a bound function returns for `id`: its JS value, or (a 64-bit ID) `undefined` with
    /// the ID in `out` when there is one.
    #[inline]
    fn put<G: Issuer<Id = Self>>(env: sys::napi_env, id: Self, _out: Out) -> Raw {
        Ok(Self::js::<G>(env, id)?.raw)
    }
}

impl JsId for u64 {
    fn js<G: Issuer<Id = u64>>(env: sys::napi_env, id: u64) -> Result<Val, Fail> {
        Val::id(env, id)
    }

    #[inline]
    fn put<G: Issuer<Id = u64>>(env: sys::napi_env, id: u64, out: Out) -> Raw {
        out.put(id, |id| Ok(Val::id(env, id)?.raw))
    }
}

impl JsId for u128 {
    fn js<G: Issuer<Id = u128>>(env: sys::napi_env, id: u128) -> Result<Val, Fail> {
        Val::ascii(env, G::format_id(id).as_bytes())
    }
}

/// An ID of `G` as its JS value.
pub(crate) fn js<G: Issuer<Id: JsId>>(env: sys::napi_env, id: G::Id) -> Result<Val, Fail> {
    <G::Id as JsId>::js::<G>(env, id)
}

/// One ID of `g`, which reads `reads`, waiting where the core must. On the system clock, the
/// core's `try_next_id` first: it never waits, and where it would (`None`) it has issued,
/// counted and changed nothing, so the waiting call after it is the call that read the clock a
/// moment later. Only that call needs the interrupt hook, a thread-local set and restored around
/// it (about 3 ns a call, BENCHMARKS.md, "Node: the benchmark gate's rows and the floors"). A
/// test's clock (a script moves on with each reading) is read exactly as the waiting call alone
/// reads it.
pub(crate) fn one<G: Issuer>(env: sys::napi_env, g: &G, reads: Reads) -> Result<G::Id, Fail> {
    let tried = match reads {
        Reads::System => g.try_next_id()?,
        Reads::Injected | Reads::JsFunction => None,
    };
    Ok(match tried {
        Some(id) => id,
        None => waiting(env, || g.next_id())?,
    })
}

/// `nextId()`.
pub(crate) fn next_id<G: Issuer<Id: JsId> + 'static>(
    env: sys::napi_env,
    c: &Shared<G>,
    out: Out,
) -> Raw {
    G::Id::put::<G>(env, one(env, &c.g, c.reads)?, out)
}

/// `tryNextId()`: `null` where `nextId()` would wait.
pub(crate) fn try_next_id<G: Issuer<Id: JsId> + 'static>(
    env: sys::napi_env,
    c: &Shared<G>,
    out: Out,
) -> Raw {
    match c.g.try_next_id()? {
        Some(id) => G::Id::put::<G>(env, id, out),
        None => Ok(Val::null(env)?.raw),
    }
}

/// `nextIdAsync()` (see `fast.rs`: the JS wrapper calls it only where `tryNextId()` is `null`).
pub(crate) fn next_id_async<G: Issuer<Id: JsId> + 'static>(
    env: sys::napi_env,
    c: &Shared<G>,
    _out: Out,
) -> Raw {
    let fast = || c.g.try_next_id()?.map(|id| js::<G>(env, id)).transpose();
    Ok(promise(env, c, fast, G::next_id, js::<G>)?.raw)
}

/// The issuing functions every generator instance gets bound to it (see `fast.rs`).
pub(crate) fn bodies<G: Issuer<Id: JsId> + 'static>() -> Issuing<G> {
    Issuing {
        next: next_id::<G>,
        try_next: try_next_id::<G>,
        wait: next_id_async::<G>,
    }
}

/// A Promise already settled with `value` (rejected with the JS error of a failure).
pub(crate) fn settled(env: sys::napi_env, value: Result<Val, Fail>) -> Result<Val, Fail> {
    let mut deferred = ptr::null_mut();
    let promise = napi_make!(env, "create a promise" => napi_create_promise(&mut deferred))?;
    // The deferred just made, settled once.
    match value {
        Ok(v) => napi_call!("settle a promise" => napi_resolve_deferred(env, deferred, v.raw)),
        Err(fail) => {
            let err = error_value(env, &fail)?;
            napi_call!("settle a promise" => napi_reject_deferred(env, deferred, err.raw))
        }
    }?;
    Ok(promise)
}

/// A blocking core call for the pool, and how its value becomes a JS value there after.
struct Wait<G, T, W> {
    cell: Shared<G>,
    work: Option<W>,
    /// Counts this wait in its environment's watch, and cuts it when that env terminates.
    watch: PoolWait,
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
        let (g, work, watch) = (&self.cell.g, self.work.take(), &self.watch);
        Ok(
            match catch_unwind(AssertUnwindSafe(|| work.map(|w| watch.run(|| w(g))))) {
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
        Ok(None) if cell.reads == Reads::JsFunction => {
            let value = waiting(env, || work(&cell.g)).map_err(Fail::Core);
            settled(env, value.and_then(|v| out(env, v)))
        }
        Ok(None) => {
            let cell = Shared::clone(cell);
            let (work, watch) = (Some(work), pool_wait(env));
            let task = Env::from_raw(env).spawn(Wait {
                cell,
                work,
                watch,
                out,
            })?;
            Ok(Val::new(env, task.promise_object().raw()))
        }
    }
}
