//! The test clocks: `dev.polyflake.ManualClock` and `ScriptedClock` over the core's, as boxed
//! handles. A generator built on one shares it (the core's clocks are shared handles).

use crate::error::{run, Fail};
use jni::objects::{JClass, JLongArray};
use jni::sys::jlong;
use jni::EnvUnowned;
use polyflake::{Clock, ManualClock, ScriptedClock};
use std::sync::Arc;

/// A test clock behind a Java handle.
pub(crate) enum TestClock {
    /// A clock the test sets, steps and lets elapse.
    Manual(ManualClock),
    /// Values in order, then 1 ms per read.
    Scripted(Arc<ScriptedClock>),
}

impl TestClock {
    /// The clock as the core's builders take it.
    pub(crate) fn shared(&self) -> Arc<dyn Clock> {
        match self {
            TestClock::Manual(c) => Arc::new(c.clone()),
            TestClock::Scripted(c) => c.clone(),
        }
    }
}

/// The clock behind `handle` (0: none).
pub(crate) fn from_handle(handle: jlong) -> Option<&'static TestClock> {
    // SAFETY: a nonzero handle is a `Box<TestClock>` made by `into_handle` and not yet freed:
    // the Java object holding it stays reachable for the call (reachabilityFence) and frees it
    // once, from its Cleaner.
    (handle != 0).then(|| unsafe { &*(handle as *const TestClock) })
}

fn into_handle(clock: TestClock) -> jlong {
    Box::into_raw(Box::new(clock)) as jlong
}

fn manual(handle: jlong) -> &'static ManualClock {
    match from_handle(handle) {
        Some(TestClock::Manual(c)) => c,
        _ => unreachable!("a ManualClock handle"),
    }
}

/// `ManualClock(startMs)`.
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_polyflake_Native_manualClockNew<'l>(
    mut env: EnvUnowned<'l>,
    _class: JClass<'l>,
    start_ms: jlong,
) -> jlong {
    run(&mut env, |_| {
        Ok(into_handle(TestClock::Manual(ManualClock::new(start_ms))))
    })
}

/// `ScriptedClock(values...)`.
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_polyflake_Native_scriptedClockNew<'l>(
    mut env: EnvUnowned<'l>,
    _class: JClass<'l>,
    values: JLongArray<'l>,
) -> jlong {
    run(&mut env, |env| {
        let mut buf = vec![0; values.len(env)?];
        values.get_region(env, 0, &mut buf)?;
        let clock = Arc::new(ScriptedClock::new(buf));
        Ok::<_, Fail>(into_handle(TestClock::Scripted(clock)))
    })
}

/// `ManualClock.set(ms)` (0), `advance(deltaMs)` (1), `elapse(ms)` (2), `setTickMs(ms)` (3);
/// the reading after it.
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_polyflake_Native_manualClockOp<'l>(
    mut env: EnvUnowned<'l>,
    _class: JClass<'l>,
    handle: jlong,
    op: jni::sys::jint,
    ms: jlong,
) -> jlong {
    run(&mut env, |_| {
        let c = manual(handle);
        match op {
            0 => c.set(ms),
            1 => c.advance(ms),
            2 => match u64::try_from(ms) {
                Ok(ms) => c.elapse(ms),
                Err(_) => {
                    return Err(Fail::Core(crate::wire::bad(
                        "elapse",
                        format!("{ms} ms: time cannot elapse backwards (use advance to step the wall clock)"),
                    )))
                }
            },
            3 => c.set_tick_ms(ms),
            _ => {}
        }
        Ok(c.get())
    })
}

/// Free a clock handle (its generators keep their share of the clock).
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_polyflake_Native_clockFree<'l>(
    mut env: EnvUnowned<'l>,
    _class: JClass<'l>,
    handle: jlong,
) {
    run(&mut env, |_| {
        if handle != 0 {
            // SAFETY: made by `into_handle`, freed once (the Java Cleaner runs its action once).
            drop(unsafe { Box::from_raw(handle as *mut TestClock) });
        }
        Ok(())
    })
}
