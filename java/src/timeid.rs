//! `dev.polyflake.Uuid7Generator` and `UlidGenerator`: the core's 128-bit generators behind a
//! handle; an ID crosses as two `long`s (high, low), which is what `java.util.UUID` holds.

use crate::error::{run, run_fast, Fail};
use crate::snowflake::{settings, string, waiting};
use crate::wire::{encode_fields, Options};
use jni::objects::{JClass, JLongArray, JString};
use jni::sys::{jboolean, jint, jlong};
use jni::EnvUnowned;
use polyflake::{Issuer, Result, TimeIdBuilder, UlidGenerator, Uuid7Generator};

/// Either 128-bit generator.
enum TimeId {
    Uuid7(Uuid7Generator),
    Ulid(UlidGenerator),
}

impl TimeId {
    fn issuer(&self) -> &dyn Issuer<Id = u128> {
        match self {
            TimeId::Uuid7(g) => g,
            TimeId::Ulid(g) => g,
        }
    }
}

fn gen(handle: jlong) -> &'static dyn Issuer<Id = u128> {
    // SAFETY: a `Box<TimeId>` from `timeIdNew`, freed only by the Cleaner after the last call
    // (the Java side keeps its object reachable through each call).
    unsafe { &*(handle as *const TimeId) }.issuer()
}

fn build(kind: jint, options: &str, clock: jlong) -> Result<TimeId> {
    let mut o = Options::parse(options)?;
    let b = TimeIdBuilder::new().settings(settings(&mut o, clock)?);
    o.finish()?;
    Ok(match kind {
        0 => TimeId::Uuid7(b.build_uuid7()?),
        _ => TimeId::Ulid(b.build_ulid()?),
    })
}

fn split(id: u128) -> [i64; 2] {
    [(id >> 64) as u64 as i64, id as u64 as i64]
}

/// A UUIDv7 (kind 0) or ULID (kind 1) generator: a handle.
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_polyflake_Native_timeIdNew<'l>(
    mut env: EnvUnowned<'l>,
    _class: JClass<'l>,
    kind: jint,
    options: JString<'l>,
    clock: jlong,
) -> jlong {
    run(&mut env, |env| {
        let g = build(kind, &string(env, &options)?, clock)?;
        Ok(Box::into_raw(Box::new(g)) as jlong)
    })
}

/// One ID into `out` = [high, low]: `may_wait` false returns false where the core would wait
/// (`interrupted`: see [`waiting`]).
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_polyflake_Native_timeIdNext<'l>(
    mut env: EnvUnowned<'l>,
    _class: JClass<'l>,
    handle: jlong,
    out: JLongArray<'l>,
    may_wait: jboolean,
    interrupted: jboolean,
) -> jboolean {
    if !may_wait {
        // The hot path (error::run_fast): no `Env` while the call succeeds, and the two halves
        // written by one raw SetLongArrayRegion (the Java side passes a new long[2]).
        let raw = env.as_raw();
        let array = out.as_raw();
        return run_fast(&mut env, || {
            let Some(id) = gen(handle).try_next_id()? else {
                return Ok(false);
            };
            let halves = split(id);
            // SAFETY: `raw` is this call's JNIEnv and `array` a live long[]; a shorter array
            // leaves an ArrayIndexOutOfBoundsException pending, thrown as this call returns.
            unsafe { ((**raw).v1_1.SetLongArrayRegion)(raw, array, 0, 2, halves.as_ptr()) };
            Ok(true)
        });
    }
    run(&mut env, |env| {
        out.set_region(
            env,
            0,
            &split(waiting(interrupted, || gen(handle).next_id())?),
        )?;
        Ok::<_, Fail>(true)
    })
}

/// The health snapshot, as fields.
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_polyflake_Native_timeIdHealth<'l>(
    mut env: EnvUnowned<'l>,
    _class: JClass<'l>,
    handle: jlong,
) -> JString<'l> {
    run(&mut env, |env| {
        Ok(env.new_string(encode_fields(&gen(handle).health().fields()))?)
    })
}

/// The generator's wait budget in ms, and -1 if its clock is injected (its calls then go to the
/// core's waiting call directly, as the scenario files count the core's waits).
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_polyflake_Native_timeIdWaitBudgetMs<'l>(
    mut env: EnvUnowned<'l>,
    _class: JClass<'l>,
    handle: jlong,
) -> f64 {
    run(&mut env, |_| {
        // SAFETY: as in `gen`.
        let s = match unsafe { &*(handle as *const TimeId) } {
            TimeId::Uuid7(g) => g.settings(),
            TimeId::Ulid(g) => g.settings(),
        };
        Ok(match s.clock {
            Some(_) => -1.0,
            None => s.max_wait_ms,
        })
    })
}

/// `close()`.
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_polyflake_Native_timeIdClose<'l>(
    mut env: EnvUnowned<'l>,
    _class: JClass<'l>,
    handle: jlong,
) {
    run(&mut env, |_| {
        gen(handle).close();
        Ok(())
    })
}

/// Free the generator: the Cleaner's action, run once.
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_polyflake_Native_timeIdFree<'l>(
    mut env: EnvUnowned<'l>,
    _class: JClass<'l>,
    handle: jlong,
) {
    run(&mut env, |_| {
        // SAFETY: made by `timeIdNew`, freed once.
        drop(unsafe { Box::from_raw(handle as *mut TimeId) });
        Ok(())
    })
}

/// A ULID's canonical text (Crockford base32) from its two halves.
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_polyflake_Native_ulidFormat<'l>(
    mut env: EnvUnowned<'l>,
    _class: JClass<'l>,
    high: jlong,
    low: jlong,
) -> JString<'l> {
    run(&mut env, |env| {
        let id = (u128::from(high as u64) << 64) | u128::from(low as u64);
        Ok(env.new_string(polyflake::format_ulid(id))?)
    })
}

/// A UUID's (kind 0) or ULID's (kind 1) text parsed by the core into `out` = [high, low] (its
/// `InvalidId` otherwise).
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_polyflake_Native_timeIdParse<'l>(
    mut env: EnvUnowned<'l>,
    _class: JClass<'l>,
    kind: jint,
    text: JString<'l>,
    out: JLongArray<'l>,
) {
    run(&mut env, |env| {
        let text = string(env, &text)?;
        let id = match kind {
            0 => polyflake::parse_uuid(&text)?,
            _ => polyflake::parse_ulid(&text)?,
        };
        out.set_region(env, 0, &split(id))?;
        Ok(())
    })
}

/// The Unix ms of a UUIDv7 (kind 0, the core's check of version and variant) or ULID (kind 1).
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_polyflake_Native_timeIdTimestampMs<'l>(
    mut env: EnvUnowned<'l>,
    _class: JClass<'l>,
    kind: jint,
    high: jlong,
    low: jlong,
) -> jlong {
    run(&mut env, |_| {
        let id = (u128::from(high as u64) << 64) | u128::from(low as u64);
        Ok(match kind {
            0 => polyflake::uuid7_timestamp_ms(id)?,
            _ => polyflake::ulid_timestamp_ms(id),
        })
    })
}
