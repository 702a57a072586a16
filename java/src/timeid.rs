//! `dev.polyflake.TimeIdGenerator` (and its subclasses `Uuid7Generator`, `UlidGenerator`): the
//! core's one 128-bit generator, its format chosen at run time, behind a handle; an ID crosses as
//! two `long`s (high, low), which is what `java.util.UUID` holds. A format crosses as
//! `TimeIdGenerator.Format`'s ordinal, the core's `TimeFormat::ALL` index.

use crate::error::{run, run_fast, Fail};
use crate::snowflake::{settings, string, waiting};
use crate::wire::{encode_fields, Options};
use jni::objects::{JClass, JLongArray, JString};
use jni::sys::{jboolean, jint, jlong};
use jni::EnvUnowned;
use polyflake::{Error, Result, TimeFormat, TimeIdBuilder, TimeIdGenerator};

fn gen(handle: jlong) -> &'static TimeIdGenerator {
    // SAFETY: a `Box<TimeIdGenerator>` from `timeIdNew`, freed only by the Cleaner after the last
    // call (the Java side keeps its object reachable through each call).
    unsafe { &*(handle as *const TimeIdGenerator) }
}

/// The format of ordinal `format` (Java passes only its enum's ordinals).
fn format_of(format: jint) -> Result<TimeFormat> {
    let all = TimeFormat::ALL;
    let ordinal = usize::try_from(format).ok().filter(|&i| i < all.len());
    ordinal
        .map(|i| all[i])
        .ok_or_else(|| Error::InvalidArgument {
            name: "format",
            reason: format!("{format} is not a time-ID format's ordinal"),
        })
}

fn split(id: u128) -> [i64; 2] {
    [(id >> 64) as u64 as i64, id as u64 as i64]
}

fn join(high: jlong, low: jlong) -> u128 {
    (u128::from(high as u64) << 64) | u128::from(low as u64)
}

/// A generator of `format`: a handle.
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_polyflake_Native_timeIdNew<'l>(
    mut env: EnvUnowned<'l>,
    _class: JClass<'l>,
    format: jint,
    options: JString<'l>,
    clock: jlong,
) -> jlong {
    run(&mut env, |env| {
        let mut o = Options::parse(&string(env, &options)?)?;
        let b = TimeIdBuilder::new().settings(settings(&mut o, clock)?);
        o.finish()?;
        let g = b.build(format_of(format)?)?;
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
        let s = gen(handle).settings();
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
        drop(unsafe { Box::from_raw(handle as *mut TimeIdGenerator) });
        Ok(())
    })
}

/// An ID's canonical text in `format`, from its two halves.
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_polyflake_Native_timeIdFormat<'l>(
    mut env: EnvUnowned<'l>,
    _class: JClass<'l>,
    format: jint,
    high: jlong,
    low: jlong,
) -> JString<'l> {
    run(&mut env, |env| {
        let text = format_of(format)?.format_id(join(high, low));
        Ok(env.new_string(text)?)
    })
}

/// An ID's text in `format` parsed by the core into `out` = [high, low] (its `InvalidId`
/// otherwise).
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_polyflake_Native_timeIdParse<'l>(
    mut env: EnvUnowned<'l>,
    _class: JClass<'l>,
    format: jint,
    text: JString<'l>,
    out: JLongArray<'l>,
) {
    run(&mut env, |env| {
        let id = format_of(format)?.parse_id(&string(env, &text)?)?;
        out.set_region(env, 0, &split(id))?;
        Ok(())
    })
}

/// The Unix ms of an ID of `format` (a UUID's version and variant checked by the core).
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_polyflake_Native_timeIdTimestampMs<'l>(
    mut env: EnvUnowned<'l>,
    _class: JClass<'l>,
    format: jint,
    high: jlong,
    low: jlong,
) -> jlong {
    run(&mut env, |_| {
        Ok(format_of(format)?.timestamp_ms(join(high, low))?)
    })
}
