//! `Snowflake` and `MonotonicSnowflake`: two JS classes over one core [`polyflake::Generator`]
//! each. They differ only in the core's mode; every method converts types and calls the core.

use crate::clocks::{val, JsFnClock, ManualClock, ScriptedClock};
use crate::errors::{guard, Fail, Result};
use crate::js::{f64_arg, i64_arg, id_arg, int_arg, Ty, Val};
use crate::layout::{layout_arg, Layout};
use napi::bindgen_prelude::{ClassInstance, Env, FromNapiValue, JavaScriptClassExt, This, Unknown};
use napi::sys;
use napi::JsValue;
use polyflake::{Decoded, Generator, Mode};
use std::ptr;
use std::sync::Arc;

/// The three fields of an ID.
#[napi(object)]
pub struct DecodedId {
    /// When the ID was made at the latest, in Unix milliseconds (a monotonic generator may run
    /// ahead of the wall clock, never behind it).
    pub epoch_ms: i64,
    /// The node that made it.
    pub node_id: u32,
    /// Its position within that node's millisecond.
    pub sequence: u32,
}

/// A snapshot of a generator: ok or not and why, the clocks, and the counters. Counters are
/// Numbers (exact up to 2^53, far beyond any real count).
#[napi(object)]
pub struct Health {
    /// True when the generator can issue now.
    pub ok: bool,
    /// `'ok'`, `'clock_behind'`, `'clock_outside_window'`, `'clock_failed'`, `'clock_stuck'`,
    /// `'lead_too_large'` or `'used_after_fork'`.
    pub status: String,
    /// A human-readable reason; empty when ok.
    pub reason: String,
    /// The generator's node id.
    pub node_id: u32,
    /// `'strict'` or `'monotonic'`.
    pub mode: String,
    /// The Unix millisecond of the last issued ID (absent before the first).
    pub last_issued_ms: Option<i64>,
    /// The wall clock when the snapshot was taken, Unix ms (0 if the clock failed).
    pub wall_ms: i64,
    /// How far the last issued millisecond is ahead of the wall clock.
    pub lead_ms: i64,
    /// IDs issued so far.
    pub ids_issued: i64,
    /// Calls that waited out a small rewind and then succeeded.
    pub rewinds_waited: i64,
    /// Calls refused because the clock was behind (or stuck) past the wait budget.
    pub rewinds_refused: i64,
    /// Times a strict call found the millisecond's sequence spent and had to wait.
    pub sequence_exhaustions: i64,
    /// Sleeps taken while waiting (strict mode never spins).
    pub wait_sleeps: i64,
    /// Milliseconds a monotonic generator moved into ahead of the wall clock.
    pub ms_borrowed: i64,
    /// Monotonic calls refused by `maxLeadMs`.
    pub lead_refused: i64,
}

/// Options of `new Snowflake(...)` (strict mode). This struct only declares the TypeScript type:
/// the constructor reads the options object itself, so that it can refuse wrong types, unsafe
/// Numbers and unknown keys with a clear error.
#[napi(object)]
pub struct SnowflakeOptions {
    /// This generator's node id, unique among live generators (0 to 1023 with the default layout).
    #[napi(ts_type = "number | bigint")]
    pub node_id: i64,
    /// The epoch in Unix milliseconds (default 1704067200000, 2024-01-01T00:00:00Z).
    #[napi(ts_type = "number | bigint")]
    pub epoch_ms: Option<i64>,
    /// A rewind up to this many ms is waited out, a larger one refused (default 5).
    pub max_wait_ms: Option<f64>,
    /// The bit layout (default `'default'`, 41/10/12).
    #[napi(ts_type = "LayoutPreset | string | LayoutBits | Layout")]
    pub layout: Option<String>,
    /// Where time comes from (default the system clock): a test clock, or a function returning
    /// Unix ms, called synchronously inside `nextId`.
    #[napi(ts_type = "ManualClock | ScriptedClock | (() => number | bigint)")]
    pub clock: Option<String>,
}

/// Options of `new MonotonicSnowflake(...)` (declares the TypeScript type only, as above).
#[napi(object)]
pub struct MonotonicSnowflakeOptions {
    /// This generator's node id, unique among live generators (0 to 1023 with the default layout).
    #[napi(ts_type = "number | bigint")]
    pub node_id: i64,
    /// The epoch in Unix milliseconds (default 1704067200000, 2024-01-01T00:00:00Z).
    #[napi(ts_type = "number | bigint")]
    pub epoch_ms: Option<i64>,
    /// Accepted for symmetry with `Snowflake`; a monotonic generator never waits.
    pub max_wait_ms: Option<f64>,
    /// Refuse rather than run more than this many ms ahead of the wall clock (default unbounded).
    #[napi(ts_type = "number | bigint")]
    pub max_lead_ms: Option<i64>,
    /// The bit layout (default `'default'`, 41/10/12).
    #[napi(ts_type = "LayoutPreset | string | LayoutBits | Layout")]
    pub layout: Option<String>,
    /// Where time comes from (default the system clock): a test clock, or a function returning
    /// Unix ms, called synchronously inside `nextId`.
    #[napi(ts_type = "ManualClock | ScriptedClock | (() => number | bigint)")]
    pub clock: Option<String>,
}

/// Make a core generator from a JS options object.
fn build(env: Env, options: Val, mode: Mode) -> std::result::Result<Generator, Fail> {
    let class = match mode {
        Mode::Strict => "Snowflake",
        Mode::Monotonic => "MonotonicSnowflake",
    };
    if options.ty()? != Ty::Object || options.is_array()? {
        return Err(Fail::Type(format!(
            "new {class}(options) takes an object such as {{ nodeId: 37 }}, got {}",
            options.describe()
        )));
    }
    let allowed: &[&str] = match mode {
        Mode::Strict => &["nodeId", "epochMs", "maxWaitMs", "layout", "clock"],
        Mode::Monotonic => &[
            "nodeId",
            "epochMs",
            "maxWaitMs",
            "maxLeadMs",
            "layout",
            "clock",
        ],
    };
    for k in options.keys()? {
        if !allowed.contains(&k.as_str()) {
            return Err(Fail::Type(format!(
                "unknown option {k:?} for {class}: expected one of {}",
                allowed.join(", ")
            )));
        }
    }
    let node = options.get("nodeId")?;
    if node.is_undefined()? {
        return Err(Fail::Type(format!("new {class}: nodeId is required")));
    }
    let mut b = Generator::builder(int_arg(node, "nodeId")?).mode(mode);
    let v = options.get("epochMs")?;
    if !v.is_undefined()? {
        b = b.epoch_ms(i64_arg(v, "epochMs")?);
    }
    let v = options.get("maxWaitMs")?;
    if !v.is_undefined()? {
        b = b.max_wait_ms(f64_arg(v, "maxWaitMs")?);
    }
    if mode == Mode::Monotonic {
        let v = options.get("maxLeadMs")?;
        if !matches!(v.ty()?, Ty::Undefined | Ty::Null) {
            b = b.max_lead_ms(Some(i64_arg(v, "maxLeadMs")?));
        }
    }
    let v = options.get("layout")?;
    if !v.is_undefined()? {
        b = b.layout(layout_arg(env, v)?);
    }
    let v = options.get("clock")?;
    match v.ty()? {
        Ty::Undefined => {}
        Ty::Function => b = b.clock(JsFnClock::new(v)?),
        Ty::Object => {
            // SAFETY: a value of the current call.
            let unknown = unsafe { Unknown::from_raw_unchecked(v.env, v.raw) };
            if ManualClock::instance_of(&env, &unknown)? {
                // SAFETY: checked to be a `ManualClock` just above.
                let c = unsafe { ClassInstance::<ManualClock>::from_napi_value(v.env, v.raw) }?;
                b = b.clock(c.inner.clone());
            } else if ScriptedClock::instance_of(&env, &unknown)? {
                // SAFETY: checked to be a `ScriptedClock` just above.
                let c = unsafe { ClassInstance::<ScriptedClock>::from_napi_value(v.env, v.raw) }?;
                b = b.shared_clock(c.inner.clone());
            } else {
                return Err(clock_type_error(v));
            }
        }
        _ => return Err(clock_type_error(v)),
    }
    Ok(b.build()?)
}

fn clock_type_error(v: Val) -> Fail {
    Fail::Type(format!(
        "clock must be a ManualClock, a ScriptedClock or a function returning Unix ms, got {}",
        v.describe()
    ))
}

/// A decoded ID for JS. Timestamps past 2^53 (only reachable with a far-future custom epoch)
/// would round as a Number, so they are refused instead.
fn decoded(d: Decoded) -> std::result::Result<DecodedId, Fail> {
    if d.timestamp_ms.unsigned_abs() > (1 << 53) - 1 {
        return Err(Fail::Range(format!(
            "the decoded timestamp {} ms is not a safe integer as a Number",
            d.timestamp_ms
        )));
    }
    Ok(DecodedId {
        epoch_ms: d.timestamp_ms,
        node_id: d.node_id,
        sequence: d.sequence,
    })
}

fn decode_default(env: Env, id: Unknown<'_>) -> Result<DecodedId> {
    guard(env.raw(), || {
        decoded(polyflake::decode(id_arg(val(env, &id))?)?)
    })
}

fn health(g: &Generator) -> Health {
    let h = g.health();
    let n = |x: u64| i64::try_from(x).unwrap_or(i64::MAX);
    Health {
        ok: h.ok,
        status: h.status.name().to_string(),
        reason: h.reason,
        node_id: h.node_id,
        mode: h.mode.name().to_string(),
        last_issued_ms: h.last_issued_ms,
        wall_ms: h.wall_ms,
        lead_ms: h.lead_ms,
        ids_issued: n(h.ids_issued),
        rewinds_waited: n(h.rewinds_waited),
        rewinds_refused: n(h.rewinds_refused),
        sequence_exhaustions: n(h.sequence_exhaustions),
        wait_sleeps: n(h.wait_sleeps),
        ms_borrowed: n(h.ms_borrowed),
        lead_refused: n(h.lead_refused),
    }
}

/// `nextIds(n)`: a BigInt64Array that the core fills in place, with no per-ID allocation.
fn next_ids<'env>(g: &Generator, env: &'env Env, count: Unknown<'_>) -> Result<Unknown<'env>> {
    guard(env.raw(), || {
        let n = polyflake::batch_len(int_arg(val(*env, &count), "count")?)?;
        let raw = env.raw();
        let mut data: *mut std::ffi::c_void = ptr::null_mut();
        let mut buffer = ptr::null_mut();
        // SAFETY: the env of the current call; the buffer holds n * 8 bytes (n <= 2^24).
        let status = unsafe { sys::napi_create_arraybuffer(raw, n * 8, &mut data, &mut buffer) };
        if status != sys::Status::napi_ok {
            return Err(Fail::Napi(napi::Error::new(
                napi::Status::from(status),
                format!("could not allocate an ArrayBuffer for {n} IDs"),
            )));
        }
        if n > 0 {
            if data.is_null() || !(data as usize).is_multiple_of(std::mem::align_of::<u64>()) {
                return Err(Fail::Napi(napi::Error::new(
                    napi::Status::GenericFailure,
                    "the ArrayBuffer's memory is not 8-byte aligned",
                )));
            }
            // SAFETY: `data` points at n * 8 writable, aligned bytes owned by `buffer`, which
            // the current handle scope keeps alive; nothing else sees it yet.
            let out = unsafe { std::slice::from_raw_parts_mut(data as *mut u64, n) };
            g.next_ids(out)?;
        }
        let mut array = ptr::null_mut();
        // SAFETY: as above; the view covers the whole buffer.
        let status = unsafe {
            sys::napi_create_typedarray(
                raw,
                sys::TypedarrayType::bigint64_array,
                n,
                buffer,
                0,
                &mut array,
            )
        };
        if status != sys::Status::napi_ok {
            return Err(Fail::Napi(napi::Error::new(
                napi::Status::from(status),
                "could not create the BigInt64Array",
            )));
        }
        // SAFETY: a value of the current call.
        Ok(unsafe { Unknown::from_raw_unchecked(raw, array) })
    })
}

/// Strict mode: an issued timestamp never exceeds the wall clock. A rewind up to `maxWaitMs`
/// (default 5) is waited out, a larger one throws `CLOCK_MOVED_BACKWARDS`; a spent millisecond
/// sleeps to the next one. IDs are bigints; use `nextIdString()` or `idsToStrings()` for JSON.
#[napi]
pub struct Snowflake {
    g: Arc<Generator>,
}

#[napi]
impl Snowflake {
    /// A strict generator. Throws a `RangeError` with a `code` for bad settings.
    #[napi(constructor, ts_args_type = "options: SnowflakeOptions")]
    pub fn new(env: Env, this: This<'_>, options: Unknown<'_>) -> Result<Self> {
        guard(env.raw(), || {
            let g = Arc::new(build(env, val(env, &options), Mode::Strict)?);
            crate::fast::install_next_id(env.raw(), this.object.raw(), &g)?;
            Ok(Snowflake { g })
        })
    }

    /// One ID.
    #[napi]
    pub fn next_id(&self, env: Env) -> Result<u64> {
        guard(env.raw(), || Ok(self.g.next_id()?))
    }

    /// One ID as a decimal string (for JSON).
    #[napi]
    pub fn next_id_string(&self, env: Env) -> Result<String> {
        guard(env.raw(), || Ok(polyflake::format_id(self.g.next_id()?)))
    }

    /// `count` IDs in one call, written straight into a new BigInt64Array.
    #[napi(
        ts_args_type = "count: number | bigint",
        ts_return_type = "BigInt64Array"
    )]
    pub fn next_ids<'env>(&self, env: &'env Env, count: Unknown<'_>) -> Result<Unknown<'env>> {
        next_ids(&self.g, env, count)
    }

    /// Decode an ID (bigint or decimal string) with this generator's layout and epoch.
    #[napi(js_name = "decode", ts_args_type = "id: bigint | string")]
    pub fn decode_id(&self, env: Env, id: Unknown<'_>) -> Result<DecodedId> {
        guard(env.raw(), || {
            decoded(self.g.decode(id_arg(val(env, &id))?)?)
        })
    }

    /// Decode an ID (bigint or decimal string) with the default layout and epoch.
    #[napi(js_name = "decode", ts_args_type = "id: bigint | string")]
    pub fn decode_default(env: Env, id: Unknown<'_>) -> Result<DecodedId> {
        decode_default(env, id)
    }

    /// A snapshot of this generator's state and counters (reads the clock once).
    #[napi]
    pub fn health(&self, env: Env) -> Result<Health> {
        guard(env.raw(), || Ok(health(&self.g)))
    }

    /// This generator's node id.
    #[napi(getter)]
    pub fn node_id(&self) -> u32 {
        self.g.node_id()
    }
    /// This generator's epoch, Unix milliseconds.
    #[napi(getter)]
    pub fn epoch_ms(&self) -> i64 {
        self.g.epoch_ms()
    }
    /// This generator's layout.
    #[napi(getter)]
    pub fn layout(&self) -> Layout {
        Layout {
            inner: self.g.layout(),
        }
    }
}

/// Monotonic mode: never waits, never duplicates. The wall clock only floors a logical clock
/// that borrows from the next millisecond on a rewind or a burst, so a decoded timestamp is an
/// upper bound on when the ID was made. `maxLeadMs` bounds how far ahead it may run.
#[napi]
pub struct MonotonicSnowflake {
    g: Arc<Generator>,
}

#[napi]
impl MonotonicSnowflake {
    /// A monotonic generator. Throws a `RangeError` with a `code` for bad settings.
    #[napi(constructor, ts_args_type = "options: MonotonicSnowflakeOptions")]
    pub fn new(env: Env, this: This<'_>, options: Unknown<'_>) -> Result<Self> {
        guard(env.raw(), || {
            let g = Arc::new(build(env, val(env, &options), Mode::Monotonic)?);
            crate::fast::install_next_id(env.raw(), this.object.raw(), &g)?;
            Ok(MonotonicSnowflake { g })
        })
    }

    /// One ID.
    #[napi]
    pub fn next_id(&self, env: Env) -> Result<u64> {
        guard(env.raw(), || Ok(self.g.next_id()?))
    }

    /// One ID as a decimal string (for JSON).
    #[napi]
    pub fn next_id_string(&self, env: Env) -> Result<String> {
        guard(env.raw(), || Ok(polyflake::format_id(self.g.next_id()?)))
    }

    /// `count` IDs reserved with one atomic step, written straight into a new BigInt64Array.
    #[napi(
        ts_args_type = "count: number | bigint",
        ts_return_type = "BigInt64Array"
    )]
    pub fn next_ids<'env>(&self, env: &'env Env, count: Unknown<'_>) -> Result<Unknown<'env>> {
        next_ids(&self.g, env, count)
    }

    /// Decode an ID (bigint or decimal string) with this generator's layout and epoch.
    #[napi(js_name = "decode", ts_args_type = "id: bigint | string")]
    pub fn decode_id(&self, env: Env, id: Unknown<'_>) -> Result<DecodedId> {
        guard(env.raw(), || {
            decoded(self.g.decode(id_arg(val(env, &id))?)?)
        })
    }

    /// Decode an ID (bigint or decimal string) with the default layout and epoch.
    #[napi(js_name = "decode", ts_args_type = "id: bigint | string")]
    pub fn decode_default(env: Env, id: Unknown<'_>) -> Result<DecodedId> {
        decode_default(env, id)
    }

    /// A snapshot of this generator's state and counters (reads the clock once).
    #[napi]
    pub fn health(&self, env: Env) -> Result<Health> {
        guard(env.raw(), || Ok(health(&self.g)))
    }

    /// This generator's node id.
    #[napi(getter)]
    pub fn node_id(&self) -> u32 {
        self.g.node_id()
    }
    /// This generator's epoch, Unix milliseconds.
    #[napi(getter)]
    pub fn epoch_ms(&self) -> i64 {
        self.g.epoch_ms()
    }
    /// This generator's layout.
    #[napi(getter)]
    pub fn layout(&self) -> Layout {
        Layout {
            inner: self.g.layout(),
        }
    }
}
