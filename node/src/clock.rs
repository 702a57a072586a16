//! Test clocks for JavaScript: thin wrappers around the core's [`polyflake::ManualClock`] and
//! [`polyflake::ScriptedClock`], and a clock that calls a JS function.

use crate::error::{guard, Result};
use crate::js::{napi_call, napi_make, narrow, take_exception, Fail, Ty, Val};
use napi::bindgen_prelude::{Env, Unknown};
use napi::sys;
use polyflake::{Clock, ClockError};
use std::ptr;
use std::sync::Arc;
use std::thread::{self, ThreadId};

/// A clock that only moves when told to (for tests and simulations). Pass it as the `clock`
/// option; keep the object to move the time the generator reads.
#[napi]
pub struct ManualClock {
    pub(crate) inner: polyflake::ManualClock,
}

#[napi]
impl ManualClock {
    /// A clock reading `startMs` (Unix milliseconds, a safe-integer Number or a bigint).
    #[napi(constructor, ts_args_type = "startMs: number | bigint")]
    pub fn new(env: Env, start_ms: Unknown<'_>) -> Result<Self> {
        guard(env.raw(), || {
            let start = narrow(Val::of(env, &start_ms), "startMs")?;
            Ok(ManualClock {
                inner: polyflake::ManualClock::new(start),
            })
        })
    }

    /// The current reading in Unix milliseconds.
    #[napi]
    pub fn now(&self) -> i64 {
        self.inner.get()
    }
}

/// The methods that move a manual clock, each calling the core's method of the same name with
/// its one integer argument (named by the first literal; the second is its TypeScript).
macro_rules! clock_steps {
    ($($(#[doc = $doc:tt])* $name:ident($arg:literal, $ts:literal);)*) => {
        #[napi]
        impl ManualClock {
            $(
                $(#[doc = $doc])*
                #[napi(ts_args_type = $ts)]
                pub fn $name(&self, env: Env, v: Unknown<'_>) -> Result<()> {
                    guard(env.raw(), || narrow(Val::of(env, &v), $arg).map(|x| self.inner.$name(x)))
                }
            )*
        }
    };
}

clock_steps! {
    #[doc = " STEP the wall reading to `ms` (backwards is a rewind, forwards a forward step); elapsed"]
    #[doc = " time does not move (use `elapse` for time passing)."]
    set("ms", "ms: number | bigint");
    #[doc = " STEP the wall reading by `deltaMs` (negative moves it back); elapsed time does not move."]
    advance("deltaMs", "deltaMs: number | bigint");
    #[doc = " Let `ms` (>= 0) milliseconds pass: the wall reading and elapsed time (the boot clock,"]
    #[doc = " which counts a suspend) both move, so it is never mistaken for a forward step."]
    elapse("ms", "ms: number | bigint");
    #[doc = " Model a tick-based coarse reading (for tests of `clockSource: 'coarse'`): from now on the"]
    #[doc = " coarse reading is the wall reading rounded down to a multiple of `tickMs`, lagging it by"]
    #[doc = " up to `tickMs - 1`, as `CLOCK_REALTIME_COARSE` does (default 1: coarse = precise). Set it"]
    #[doc = " before making a generator on the clock."]
    set_tick_ms("tickMs", "tickMs: number | bigint");
}

/// A clock that returns prepared readings in order, then ticks forward 1 ms per read: for making
/// a clock jump back, stop, or retreat on every read.
#[napi]
pub struct ScriptedClock {
    pub(crate) inner: Arc<polyflake::ScriptedClock>,
}

#[napi]
impl ScriptedClock {
    /// A clock that returns `values` (Unix milliseconds) in order, then the last one plus 1, 2, ...
    #[napi(constructor, ts_args_type = "values: Array<number | bigint>")]
    pub fn new(env: Env, values: Unknown<'_>) -> Result<Self> {
        guard(env.raw(), || {
            let list = Val::of(env, &values);
            if !list.is_array()? {
                return Err(Fail::Type(format!(
                    "values must be an array of Unix milliseconds, got {}",
                    list.describe()
                )));
            }
            let values = (list.elements()?.into_iter().enumerate())
                .map(|(i, v)| narrow(v, "values").map_err(|e| e.in_element(i)))
                .collect::<std::result::Result<_, _>>()?;
            Ok(ScriptedClock {
                inner: Arc::new(polyflake::ScriptedClock::new(values)),
            })
        })
    }

    /// How many readings have been taken so far.
    #[napi(getter)]
    pub fn reads(&self) -> u32 {
        u32::try_from(self.inner.reads()).unwrap_or(u32::MAX)
    }
}

/// A clock that calls a JS function returning Unix milliseconds (a Number or a bigint).
///
/// Soundness: a JS function may only be called on the thread that owns its env, inside a call
/// from JS. A generator is a JS object owned by that thread (Node never moves one to another
/// thread) and the core reads its clock only inside `nextId`, `nextIds` and `health`, all called
/// from JS on that thread. `now_ms` still checks the thread and refuses anywhere else.
pub(crate) struct JsFnClock {
    env: sys::napi_env,
    func: sys::napi_ref,
    thread: ThreadId,
}

// SAFETY: the raw handles are only used on `thread` (checked on every use); elsewhere the clock
// refuses to read and `Drop` leaks the reference rather than touch the env.
unsafe impl Send for JsFnClock {}
// SAFETY: as above.
unsafe impl Sync for JsFnClock {}

impl JsFnClock {
    /// Hold a reference to the function `f`.
    pub(crate) fn new(f: Val) -> std::result::Result<JsFnClock, Fail> {
        let mut func = ptr::null_mut();
        let what = "keep a reference to the clock function";
        napi_call!(what => napi_create_reference(f.env, f.raw, 1, &mut func))?;
        let thread = thread::current().id();
        Ok(JsFnClock {
            env: f.env,
            func,
            thread,
        })
    }

    /// Call the function and read its Unix ms (on the env's own thread, inside a call from JS:
    /// see the type's docs; the reference is strong, so the function is alive).
    fn read(&self) -> std::result::Result<i64, Fail> {
        let env = self.env;
        let f = napi_make!(env, "read the clock function" => napi_get_reference_value(self.func))?;
        let recv = Val::undefined(env)?;
        let (what, none) = ("call the clock function", ptr::null());
        let out = napi_make!(env, what => napi_call_function(recv.raw, f.raw, 0, none));
        let v = out.map_err(|fail| match take_exception(env) {
            Some(exc) => Fail::Type(format!("the clock function threw: {}", exc.to_text())),
            None => fail,
        })?;
        match v.ty()? {
            Ty::Number | Ty::BigInt => narrow(v, "the clock function's return value"),
            _ => Err(Fail::Type(format!(
                "the clock function must return Unix milliseconds as a Number or a bigint, got {}",
                v.describe()
            ))),
        }
    }
}

impl Clock for JsFnClock {
    fn now_ms(&self) -> std::result::Result<i64, ClockError> {
        if thread::current().id() != self.thread {
            return Err(ClockError(
                "a JS clock function can only be called on its own JS thread".into(),
            ));
        }
        self.read().map_err(|fail| ClockError(fail.to_string()))
    }
}

impl Drop for JsFnClock {
    fn drop(&mut self) {
        // Generators are finalized on their own JS thread; anywhere else, leak the reference
        // rather than touch an env from the wrong thread.
        if thread::current().id() == self.thread {
            // SAFETY: on the env's own thread; the reference was made by `new`.
            unsafe { sys::napi_delete_reference(self.env, self.func) };
        }
    }
}
