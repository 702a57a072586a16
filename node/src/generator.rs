//! `Snowflake` and `MonotonicSnowflake`: two JS classes over one core [`polyflake::Generator`]
//! each. They differ only in the core's mode; every method converts types and calls the core.
//! A generator's node id is given (`new Snowflake({ nodeId })`) or comes from one of the core's
//! [`NodeSource`]s (`Snowflake.fromFileLease`, `fromEtcd`, `fromEnv`, `fromHostname`,
//! `fromIpv4`); which node id, and whether the lease allows issuing, is the core's business.
//!
//! A JS generator and its bound `nextId` (see `fast.rs`) share one [`Shared`] cell; `close()`
//! empties it, which drops the core generator and so frees a leased slot at once. Both live on
//! the one JS thread that made them, so the cell is an `Rc<RefCell<..>>`: the `RefCell` only
//! stops `close()` from a call's own clock function while that call still uses the generator.

use crate::clocks::{val, JsFnClock, ManualClock, ScriptedClock};
use crate::errors::{closed, guard, Fail, Result};
use crate::js::{f64_arg, i64_arg, id_arg, int_arg, u32_arg, u64_arg, Ty, Val};
use crate::layout::{layout_arg, Layout};
use napi::bindgen_prelude::{ClassInstance, Env, FromNapiValue, JavaScriptClassExt, This, Unknown};
use napi::sys;
use napi::JsValue;
use polyflake::{Builder, Decoded, Generator, Mode, NodeSource};
use std::cell::{Cell, RefCell};
use std::net::Ipv4Addr;
use std::ptr;
use std::rc::Rc;

/// One core generator shared by a JS object and its bound `nextId`; `None` once closed.
pub(crate) type Shared = Rc<RefCell<Option<Generator>>>;

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

/// The lease part of `Health` (present when the node id comes from a file or etcd lease).
#[napi(object)]
pub struct LeaseHealth {
    /// `'file'` or `'etcd'`.
    pub kind: String,
    /// The lease directory, or the etcd endpoints and key prefix.
    pub store: String,
    /// The slot held, which is the node id.
    pub slot: u32,
    /// The high-water mark R (Unix ms): no ID carries a later timestamp until the store has
    /// extended it (a background thread keeps it `reserveMs` ahead of the clock).
    pub high_water_ms: i64,
    /// The previous holder's R found when the slot was taken, if any: nothing is issued until
    /// the clock passes it.
    pub guard_until_ms: Option<i64>,
    /// True while the restart guard waits (calls throw `LEASE_NOT_READY`).
    pub guard_waiting: bool,
    /// How long the restart guard still waits, in ms (0 when it does not).
    pub guard_remaining_ms: i64,
    /// True once the lease is lost (the generator has stopped for good: `LEASE_LOST`).
    pub lost: bool,
    /// Successful extensions of R.
    pub renewals: i64,
    /// Failed extensions (store unreachable, I/O errors).
    pub failures: i64,
    /// The last store error, or why the lease was lost; empty if none.
    pub last_error: String,
}

/// A snapshot of a generator: ok or not and why, the clocks, the counters and the lease.
/// Counters are Numbers (exact up to 2^53, far beyond any real count).
#[napi(object)]
pub struct Health {
    /// True when the generator can issue now.
    pub ok: bool,
    /// `'ok'`, `'clock_behind'`, `'clock_outside_window'`, `'clock_failed'`, `'clock_stuck'`,
    /// `'lead_too_large'`, `'used_after_fork'`, `'restart_guard'`, `'lease_expired'` or
    /// `'lease_lost'`.
    pub status: String,
    /// A human-readable reason; empty when ok.
    pub reason: String,
    /// The generator's node id (a lease's slot).
    pub node_id: u32,
    /// Where the node id came from: `'static'`, `'env'`, `'hostname'`, `'ipv4'`,
    /// `'file_lease'` or `'etcd'`.
    pub source: String,
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
    /// Lease renewals (0 without a lease).
    pub lease_renewals: i64,
    /// Failed lease renewals (0 without a lease).
    pub lease_failures: i64,
    /// The lease's state (slot, high-water mark, restart guard), if the node id is leased.
    pub lease: Option<LeaseHealth>,
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

/// Settings every factory takes besides its source (declares the TypeScript type only).
#[napi(object)]
pub struct SourceOptions {
    /// The epoch in Unix milliseconds (default 1704067200000, 2024-01-01T00:00:00Z).
    #[napi(ts_type = "number | bigint")]
    pub epoch_ms: Option<i64>,
    /// Strict: a rewind up to this many ms is waited out, a larger one refused (default 5).
    pub max_wait_ms: Option<f64>,
    /// The bit layout (default `'default'`, 41/10/12).
    #[napi(ts_type = "LayoutPreset | string | LayoutBits | Layout")]
    pub layout: Option<String>,
    /// Where time comes from (default the system clock). A lease's background thread reads the
    /// clock too, so a leased generator takes a `ManualClock` or `ScriptedClock`, not a function.
    #[napi(ts_type = "ManualClock | ScriptedClock | (() => number | bigint)")]
    pub clock: Option<String>,
}

/// The monotonic factories' extra setting (declares the TypeScript type only).
#[napi(object)]
pub struct LeadOptions {
    /// Refuse rather than run more than this many ms ahead of the wall clock (default unbounded).
    #[napi(ts_type = "number | bigint")]
    pub max_lead_ms: Option<i64>,
}

/// Options of `Snowflake.fromFileLease(...)`: a slot of a directory of slot files on one host,
/// held with `flock` (the kernel frees it when the process dies), plus the `SourceOptions`.
#[napi(object)]
pub struct FileLeaseOptions {
    /// The lease directory (created if missing), on a local file system; every process that
    /// shares node ids uses the same one.
    pub dir: String,
    /// How many slots (node ids 0 to slots - 1) to use (default: every node id of the layout).
    pub slots: Option<u32>,
    /// A stable identity: the slot it held before is tried first (default: the hostname).
    pub identity: Option<String>,
    /// How far ahead of the clock the high-water mark is kept, in ms (default 5000): the
    /// longest a successor of a crashed holder waits.
    #[napi(ts_type = "number | bigint")]
    pub reserve_ms: Option<i64>,
    /// See `SourceOptions`.
    #[napi(ts_type = "number | bigint")]
    pub epoch_ms: Option<i64>,
    /// See `SourceOptions`.
    pub max_wait_ms: Option<f64>,
    /// See `SourceOptions`.
    #[napi(ts_type = "LayoutPreset | string | LayoutBits | Layout")]
    pub layout: Option<String>,
    /// See `SourceOptions` (a `ManualClock` or `ScriptedClock`).
    #[napi(ts_type = "ManualClock | ScriptedClock")]
    pub clock: Option<String>,
}

/// Options of `Snowflake.fromEtcd(...)`: a slot key in an etcd v3 cluster, attached to an etcd
/// lease kept alive in the background, plus the `SourceOptions`.
#[napi(object)]
pub struct EtcdOptions {
    /// The cluster's client URLs, such as `'http://127.0.0.1:2379'` (one string or an array).
    #[napi(ts_type = "string | Array<string>")]
    pub endpoints: Vec<String>,
    /// The key prefix (default `'/polyflake'`).
    pub prefix: Option<String>,
    /// The etcd lease's time to live in seconds (default 10).
    #[napi(ts_type = "number | bigint")]
    pub ttl_s: Option<i64>,
    /// How far ahead of the clock the high-water mark is kept, in ms (default 5000).
    #[napi(ts_type = "number | bigint")]
    pub reserve_ms: Option<i64>,
    /// How many slots to use (default: every node id of the layout).
    pub slots: Option<u32>,
    /// A stable identity: the slot it held before is tried first (default: the hostname).
    pub identity: Option<String>,
    /// The timeout of connecting and of each request, in ms (default 2000).
    #[napi(ts_type = "number | bigint")]
    pub connect_timeout_ms: Option<i64>,
    /// See `SourceOptions`.
    #[napi(ts_type = "number | bigint")]
    pub epoch_ms: Option<i64>,
    /// See `SourceOptions`.
    pub max_wait_ms: Option<f64>,
    /// See `SourceOptions`.
    #[napi(ts_type = "LayoutPreset | string | LayoutBits | Layout")]
    pub layout: Option<String>,
    /// See `SourceOptions` (a `ManualClock` or `ScriptedClock`).
    #[napi(ts_type = "ManualClock | ScriptedClock")]
    pub clock: Option<String>,
}

/// The settings every way of making a generator shares.
const SETTINGS: &[&str] = &["epochMs", "maxWaitMs", "layout", "clock"];

/// An option that is present (not `undefined`).
fn opt(options: Val, key: &str) -> std::result::Result<Option<Val>, Fail> {
    let v = options.get(key)?;
    Ok(if v.is_undefined()? { None } else { Some(v) })
}

/// A string argument.
fn string_arg(v: Val, name: &str) -> std::result::Result<String, Fail> {
    if v.ty()? != Ty::String {
        return Err(Fail::Type(format!(
            "{name} must be a string, got {}",
            v.describe()
        )));
    }
    v.string()
}

/// Make a core generator: `what` names the call in messages (`Snowflake.fromFileLease`);
/// `options` must be an object (or may be `undefined` when `optional`) whose keys are `own`, the
/// shared settings, and `maxLeadMs` for a monotonic generator; `source` reads the node source.
fn make(
    env: Env,
    what: &str,
    mode: Mode,
    options: Val,
    optional: bool,
    own: &[&str],
    source: impl FnOnce(Val) -> std::result::Result<NodeSource, Fail>,
) -> std::result::Result<Generator, Fail> {
    let present = !(optional && options.is_undefined()?);
    if present {
        if options.ty()? != Ty::Object || options.is_array()? {
            return Err(Fail::Type(format!(
                "{what} takes an options object, got {}",
                options.describe()
            )));
        }
        let lead: &[&str] = match mode {
            Mode::Strict => &[],
            Mode::Monotonic => &["maxLeadMs"],
        };
        let allowed: Vec<&str> = own.iter().chain(SETTINGS).chain(lead).copied().collect();
        for k in options.keys()? {
            if !allowed.contains(&k.as_str()) {
                return Err(Fail::Type(format!(
                    "unknown option {k:?} for {what}: expected one of {}",
                    allowed.join(", ")
                )));
            }
        }
    }
    let source = source(options)?;
    let leased = source.kind().is_lease();
    let mut b = Generator::builder_from(source).mode(mode);
    if present {
        b = settings(env, b, options, mode, leased)?;
    }
    Ok(b.build()?)
}

/// Apply the shared settings of `options` to `b`.
fn settings(
    env: Env,
    mut b: Builder,
    options: Val,
    mode: Mode,
    leased: bool,
) -> std::result::Result<Builder, Fail> {
    if let Some(v) = opt(options, "epochMs")? {
        b = b.epoch_ms(i64_arg(v, "epochMs")?);
    }
    if let Some(v) = opt(options, "maxWaitMs")? {
        b = b.max_wait_ms(f64_arg(v, "maxWaitMs")?);
    }
    if mode == Mode::Monotonic {
        let v = options.get("maxLeadMs")?;
        if !matches!(v.ty()?, Ty::Undefined | Ty::Null) {
            b = b.max_lead_ms(Some(i64_arg(v, "maxLeadMs")?));
        }
    }
    if let Some(v) = opt(options, "layout")? {
        b = b.layout(layout_arg(env, v)?);
    }
    let v = options.get("clock")?;
    match v.ty()? {
        Ty::Undefined => {}
        Ty::Function if leased => {
            return Err(Fail::Type(
                "a leased generator's background thread reads the clock too, and a JS function can only be called on its own thread: pass a ManualClock or a ScriptedClock".into(),
            ))
        }
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
    Ok(b)
}

/// `new Snowflake({ nodeId, ... })`: a static node id.
fn from_options(env: Env, options: Val, mode: Mode) -> std::result::Result<Generator, Fail> {
    let class = class_name(mode);
    if options.ty()? != Ty::Object || options.is_array()? {
        return Err(Fail::Type(format!(
            "new {class}(options) takes an object such as {{ nodeId: 37 }}, got {}",
            options.describe()
        )));
    }
    make(
        env,
        &format!("new {class}"),
        mode,
        options,
        false,
        &["nodeId"],
        |o| match opt(o, "nodeId")? {
            Some(v) => Ok(NodeSource::Static(int_arg(v, "nodeId")?)),
            None => Err(Fail::Type(format!("new {class}: nodeId is required"))),
        },
    )
}

fn class_name(mode: Mode) -> &'static str {
    match mode {
        Mode::Strict => "Snowflake",
        Mode::Monotonic => "MonotonicSnowflake",
    }
}

/// `fromFileLease({ dir, slots?, identity?, reserveMs?, ... })`.
fn file_lease(env: Env, options: Val, mode: Mode) -> std::result::Result<Generator, Fail> {
    let what = format!("{}.fromFileLease", class_name(mode));
    make(
        env,
        &what,
        mode,
        options,
        false,
        &["dir", "slots", "identity", "reserveMs"],
        |o| {
            let dir = match opt(o, "dir")? {
                Some(v) => string_arg(v, "dir")?,
                None => return Err(Fail::Type(format!("{what}: dir is required"))),
            };
            let mut f = polyflake::FileLeaseOptions::new(dir);
            if let Some(v) = opt(o, "slots")? {
                f.slots = Some(u32_arg(v, "slots")?);
            }
            if let Some(v) = opt(o, "identity")? {
                f.identity = Some(string_arg(v, "identity")?);
            }
            if let Some(v) = opt(o, "reserveMs")? {
                f.reserve_ms = u64_arg(v, "reserveMs")?;
            }
            Ok(NodeSource::FileLease(f))
        },
    )
}

/// `fromEtcd({ endpoints, prefix?, ttlS?, reserveMs?, slots?, identity?, connectTimeoutMs?, ... })`.
fn etcd(env: Env, options: Val, mode: Mode) -> std::result::Result<Generator, Fail> {
    let what = format!("{}.fromEtcd", class_name(mode));
    make(
        env,
        &what,
        mode,
        options,
        false,
        &[
            "endpoints",
            "prefix",
            "ttlS",
            "reserveMs",
            "slots",
            "identity",
            "connectTimeoutMs",
        ],
        |o| {
            let endpoints = match opt(o, "endpoints")? {
                None => return Err(Fail::Type(format!("{what}: endpoints is required"))),
                Some(v) if v.ty()? == Ty::String => vec![v.string()?],
                Some(v) if v.ty()? == Ty::Object && v.is_array()? => (0..v.array_len()?)
                    .map(|i| string_arg(v.index(i)?, &format!("endpoints[{i}]")))
                    .collect::<std::result::Result<Vec<_>, _>>()?,
                Some(v) => {
                    return Err(Fail::Type(format!(
                        "endpoints must be a string or an array of strings, got {}",
                        v.describe()
                    )))
                }
            };
            let mut e = polyflake::EtcdLeaseOptions::new(endpoints);
            if let Some(v) = opt(o, "prefix")? {
                e.prefix = string_arg(v, "prefix")?;
            }
            if let Some(v) = opt(o, "ttlS")? {
                e.ttl_s = i64_arg(v, "ttlS")?;
            }
            if let Some(v) = opt(o, "reserveMs")? {
                e.reserve_ms = u64_arg(v, "reserveMs")?;
            }
            if let Some(v) = opt(o, "slots")? {
                e.slots = Some(u32_arg(v, "slots")?);
            }
            if let Some(v) = opt(o, "identity")? {
                e.identity = Some(string_arg(v, "identity")?);
            }
            if let Some(v) = opt(o, "connectTimeoutMs")? {
                e.connect_timeout_ms = u64_arg(v, "connectTimeoutMs")?;
            }
            Ok(NodeSource::Etcd(e))
        },
    )
}

/// `fromEnv(variable, options?)`.
fn env_source(
    env: Env,
    var: Val,
    options: Val,
    mode: Mode,
) -> std::result::Result<Generator, Fail> {
    let var = string_arg(var, "the environment variable's name")?;
    let what = format!("{}.fromEnv", class_name(mode));
    make(env, &what, mode, options, true, &[], |_| {
        Ok(NodeSource::Env { var })
    })
}

/// `fromHostname(hostname?, options?)`.
fn hostname_source(
    env: Env,
    hostname: Val,
    options: Val,
    mode: Mode,
) -> std::result::Result<Generator, Fail> {
    let hostname = match hostname.ty()? {
        Ty::Undefined | Ty::Null => None,
        _ => Some(string_arg(hostname, "hostname")?),
    };
    let what = format!("{}.fromHostname", class_name(mode));
    make(env, &what, mode, options, true, &[], |_| {
        Ok(NodeSource::Hostname { hostname })
    })
}

/// `fromIpv4(address, prefixLen, options?)`.
fn ipv4_source(
    env: Env,
    addr: Val,
    prefix_len: Val,
    options: Val,
    mode: Mode,
) -> std::result::Result<Generator, Fail> {
    let text = string_arg(addr, "the IPv4 address")?;
    // Only the text's syntax is checked here; whether the subnet fits is the core's rule.
    let addr: Ipv4Addr = text.parse().map_err(|_| {
        Fail::Core(polyflake::Error::InvalidNodeSource {
            reason: format!("{text:?} is not an IPv4 address such as \"10.1.7.9\""),
        })
    })?;
    let n = u32_arg(prefix_len, "prefixLen")?;
    let prefix_len =
        u8::try_from(n).map_err(|_| Fail::Range(format!("prefixLen = {n} is not in [0, 256)")))?;
    let what = format!("{}.fromIpv4", class_name(mode));
    make(env, &what, mode, options, true, &[], |_| {
        Ok(NodeSource::Ipv4 { addr, prefix_len })
    })
}

/// An optional argument as a value (`undefined` when it was not passed).
fn optional(env: Env, v: &Option<Unknown<'_>>) -> std::result::Result<Val, Fail> {
    match v {
        Some(u) => Ok(val(env, u)),
        None => {
            let mut out = ptr::null_mut();
            // SAFETY: the env of the current call.
            let status = unsafe { sys::napi_get_undefined(env.raw(), &mut out) };
            if status != sys::Status::napi_ok {
                return Err(Fail::Napi(napi::Error::new(
                    napi::Status::from(status),
                    "could not read undefined",
                )));
            }
            Ok(Val::new(env.raw(), out))
        }
    }
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
        source: h.source.name().to_string(),
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
        lease_renewals: n(h.lease_renewals),
        lease_failures: n(h.lease_failures),
        lease: h.lease.map(|l| LeaseHealth {
            kind: l.kind.name().to_string(),
            store: l.store,
            slot: l.slot,
            high_water_ms: l.high_water_ms,
            guard_until_ms: l.guard_until_ms,
            guard_waiting: l.guard_waiting,
            guard_remaining_ms: n(l.guard_remaining_ms),
            lost: l.lost,
            renewals: n(l.renewals),
            failures: n(l.failures),
            last_error: l.last_error,
        }),
    }
}

/// What both classes keep: the shared cell, and what still answers after `close()`.
struct Inner {
    cell: Shared,
    layout: polyflake::Layout,
    epoch_ms: i64,
    /// The node id when closed (a lease's slot can change only in a forked child).
    node_id: Cell<u32>,
}

impl Inner {
    /// Wrap `g` for the JS object `this`, giving it its own bound `nextId`.
    fn new(
        env: sys::napi_env,
        this: sys::napi_value,
        g: Generator,
    ) -> std::result::Result<Inner, Fail> {
        let inner = Inner {
            layout: g.layout(),
            epoch_ms: g.epoch_ms(),
            node_id: Cell::new(g.node_id()),
            cell: Rc::new(RefCell::new(Some(g))),
        };
        crate::fast::install_next_id(env, this, &inner.cell)?;
        Ok(inner)
    }

    /// Run `f` on the open generator.
    fn with<T>(
        &self,
        f: impl FnOnce(&Generator) -> std::result::Result<T, Fail>,
    ) -> std::result::Result<T, Fail> {
        match self.cell.try_borrow() {
            Ok(g) => match g.as_ref() {
                Some(g) => f(g),
                None => Err(closed()),
            },
            Err(_) => Err(closed()),
        }
    }

    fn close(&self) -> std::result::Result<(), Fail> {
        let mut slot = self.cell.try_borrow_mut().map_err(|_| {
            Fail::Closed(
                "close() was called from inside one of this generator's own calls (its clock function): call it after that call returns".into(),
            )
        })?;
        if let Some(g) = slot.take() {
            self.node_id.set(g.node_id());
            // Dropping the core generator stops its lease and frees the slot (keeping R).
            drop(g);
        }
        Ok(())
    }

    fn is_closed(&self) -> bool {
        matches!(self.cell.try_borrow(), Ok(g) if g.is_none())
    }

    fn node_id(&self) -> u32 {
        match self.cell.try_borrow() {
            Ok(g) => g.as_ref().map_or(self.node_id.get(), |g| g.node_id()),
            Err(_) => self.node_id.get(),
        }
    }

    fn decode(&self, env: Env, id: Unknown<'_>) -> Result<DecodedId> {
        guard(env.raw(), || {
            decoded(self.layout.decode(id_arg(val(env, &id))?, self.epoch_ms)?)
        })
    }
}

/// `nextIds(n)`: a BigInt64Array that the core fills in place, with no per-ID allocation.
fn next_ids<'env>(inner: &Inner, env: &'env Env, count: Unknown<'_>) -> Result<Unknown<'env>> {
    guard(env.raw(), || {
        let n = polyflake::batch_len(int_arg(val(*env, &count), "count")?)?;
        inner.with(|_| Ok(()))?;
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
            inner.with(|g| Ok(g.next_ids(out)?))?;
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
    inner: Inner,
}

#[napi]
impl Snowflake {
    /// A strict generator. Throws a `RangeError` with a `code` for bad settings.
    #[napi(constructor, ts_args_type = "options: SnowflakeOptions")]
    pub fn new(env: Env, this: This<'_>, options: Unknown<'_>) -> Result<Self> {
        guard(env.raw(), || {
            let g = from_options(env, val(env, &options), Mode::Strict)?;
            Ok(Snowflake {
                inner: Inner::new(env.raw(), this.object.raw(), g)?,
            })
        })
    }

    /// Wrap a core generator as a new JS instance with its own bound `nextId`.
    fn instance<'env>(
        env: &'env Env,
        g: Generator,
    ) -> std::result::Result<ClassInstance<'env, Self>, Fail> {
        let layout = g.layout();
        let epoch_ms = g.epoch_ms();
        let node_id = Cell::new(g.node_id());
        let cell: Shared = Rc::new(RefCell::new(Some(g)));
        let made = Snowflake {
            inner: Inner {
                cell: cell.clone(),
                layout,
                epoch_ms,
                node_id,
            },
        }
        .into_instance(env)?;
        crate::fast::install_next_id(env.raw(), made.value, &cell)?;
        Ok(made)
    }

    /// A generator whose node id is a slot leased from a directory of slot files (one host, no
    /// server): `flock` holds the slot while this process lives, the slot's high-water mark R
    /// is kept ahead of the clock in the background, and a successor waits until its clock
    /// passes the R it finds (`LEASE_NOT_READY` until then). Throws `NO_FREE_SLOT` when every
    /// slot is held. `close()` frees the slot early.
    #[napi(
        ts_args_type = "options: FileLeaseOptions",
        ts_return_type = "Snowflake"
    )]
    pub fn from_file_lease<'env>(
        env: &'env Env,
        options: Unknown<'_>,
    ) -> Result<ClassInstance<'env, Self>> {
        guard(env.raw(), || {
            let g = file_lease(*env, val(*env, &options), Mode::Strict)?;
            Self::instance(env, g)
        })
    }

    /// A generator whose node id is a slot leased from an etcd v3 cluster (a fleet): the slot
    /// key is attached to an etcd lease kept alive in the background; a lost lease stops it at
    /// once (`LEASE_LOST`), an unreachable store lets it issue only up to R (`LEASE_EXPIRED`).
    /// Connecting blocks the calling thread (up to `connectTimeoutMs` per request).
    #[napi(ts_args_type = "options: EtcdOptions", ts_return_type = "Snowflake")]
    pub fn from_etcd<'env>(
        env: &'env Env,
        options: Unknown<'_>,
    ) -> Result<ClassInstance<'env, Self>> {
        guard(env.raw(), || {
            let g = etcd(*env, val(*env, &options), Mode::Strict)?;
            Self::instance(env, g)
        })
    }

    /// A generator whose node id is the decimal integer in an environment variable.
    #[napi(
        ts_args_type = "variable: string, options?: SourceOptions",
        ts_return_type = "Snowflake"
    )]
    pub fn from_env<'env>(
        env: &'env Env,
        variable: Unknown<'_>,
        options: Option<Unknown<'_>>,
    ) -> Result<ClassInstance<'env, Self>> {
        guard(env.raw(), || {
            let g = env_source(
                *env,
                val(*env, &variable),
                optional(*env, &options)?,
                Mode::Strict,
            )?;
            Self::instance(env, g)
        })
    }

    /// A generator whose node id is the ordinal of a StatefulSet-style hostname (`ids-7` ->
    /// 7); this host's name when `hostname` is omitted or null.
    #[napi(
        ts_args_type = "hostname?: string | null, options?: SourceOptions",
        ts_return_type = "Snowflake"
    )]
    pub fn from_hostname<'env>(
        env: &'env Env,
        hostname: Option<Unknown<'_>>,
        options: Option<Unknown<'_>>,
    ) -> Result<ClassInstance<'env, Self>> {
        guard(env.raw(), || {
            let g = hostname_source(
                *env,
                optional(*env, &hostname)?,
                optional(*env, &options)?,
                Mode::Strict,
            )?;
            Self::instance(env, g)
        })
    }

    /// A generator whose node id is the host part of an IPv4 address in a subnet of
    /// `prefixLen` bits; refused (`INVALID_NODE_SOURCE`) unless the host part fits the node
    /// field (a /22 or narrower with 10 node bits).
    #[napi(
        ts_args_type = "address: string, prefixLen: number, options?: SourceOptions",
        ts_return_type = "Snowflake"
    )]
    pub fn from_ipv4<'env>(
        env: &'env Env,
        address: Unknown<'_>,
        prefix_len: Unknown<'_>,
        options: Option<Unknown<'_>>,
    ) -> Result<ClassInstance<'env, Self>> {
        guard(env.raw(), || {
            let g = ipv4_source(
                *env,
                val(*env, &address),
                val(*env, &prefix_len),
                optional(*env, &options)?,
                Mode::Strict,
            )?;
            Self::instance(env, g)
        })
    }

    /// One ID.
    #[napi]
    pub fn next_id(&self, env: Env) -> Result<u64> {
        guard(env.raw(), || self.inner.with(|g| Ok(g.next_id()?)))
    }

    /// One ID as a decimal string (for JSON).
    #[napi]
    pub fn next_id_string(&self, env: Env) -> Result<String> {
        guard(env.raw(), || {
            self.inner.with(|g| Ok(polyflake::format_id(g.next_id()?)))
        })
    }

    /// `count` IDs in one call, written straight into a new BigInt64Array.
    #[napi(
        ts_args_type = "count: number | bigint",
        ts_return_type = "BigInt64Array"
    )]
    pub fn next_ids<'env>(&self, env: &'env Env, count: Unknown<'_>) -> Result<Unknown<'env>> {
        next_ids(&self.inner, env, count)
    }

    /// Decode an ID (bigint or decimal string) with this generator's layout and epoch.
    #[napi(js_name = "decode", ts_args_type = "id: bigint | string")]
    pub fn decode_id(&self, env: Env, id: Unknown<'_>) -> Result<DecodedId> {
        self.inner.decode(env, id)
    }

    /// Decode an ID (bigint or decimal string) with the default layout and epoch.
    #[napi(js_name = "decode", ts_args_type = "id: bigint | string")]
    pub fn decode_default(env: Env, id: Unknown<'_>) -> Result<DecodedId> {
        decode_default(env, id)
    }

    /// A snapshot of this generator's state, counters and lease (reads the clock once).
    #[napi]
    pub fn health(&self, env: Env) -> Result<Health> {
        guard(env.raw(), || self.inner.with(|g| Ok(health(g))))
    }

    /// Give the generator up now: a leased slot is freed at once (its high-water mark stays,
    /// lowered to the last millisecond really issued, so a successor waits only past that).
    /// Every later call but `decode` and the getters throws `GENERATOR_CLOSED`. Closing twice
    /// is fine. Without `close()` the slot is freed when the generator is garbage collected or
    /// the process exits.
    #[napi]
    pub fn close(&self, env: Env) -> Result<()> {
        guard(env.raw(), || self.inner.close())
    }

    /// True once `close()` was called.
    #[napi(getter)]
    pub fn closed(&self) -> bool {
        self.inner.is_closed()
    }

    /// This generator's node id (with a lease, the slot it holds).
    #[napi(getter)]
    pub fn node_id(&self) -> u32 {
        self.inner.node_id()
    }
    /// This generator's epoch, Unix milliseconds.
    #[napi(getter)]
    pub fn epoch_ms(&self) -> i64 {
        self.inner.epoch_ms
    }
    /// This generator's layout.
    #[napi(getter)]
    pub fn layout(&self) -> Layout {
        Layout {
            inner: self.inner.layout,
        }
    }
}

/// Monotonic mode: never waits, never duplicates. The wall clock only floors a logical clock
/// that borrows from the next millisecond on a rewind or a burst, so a decoded timestamp is an
/// upper bound on when the ID was made. `maxLeadMs` bounds how far ahead it may run.
#[napi]
pub struct MonotonicSnowflake {
    inner: Inner,
}

#[napi]
impl MonotonicSnowflake {
    /// A monotonic generator. Throws a `RangeError` with a `code` for bad settings.
    #[napi(constructor, ts_args_type = "options: MonotonicSnowflakeOptions")]
    pub fn new(env: Env, this: This<'_>, options: Unknown<'_>) -> Result<Self> {
        guard(env.raw(), || {
            let g = from_options(env, val(env, &options), Mode::Monotonic)?;
            Ok(MonotonicSnowflake {
                inner: Inner::new(env.raw(), this.object.raw(), g)?,
            })
        })
    }

    /// Wrap a core generator as a new JS instance with its own bound `nextId`.
    fn instance<'env>(
        env: &'env Env,
        g: Generator,
    ) -> std::result::Result<ClassInstance<'env, Self>, Fail> {
        let layout = g.layout();
        let epoch_ms = g.epoch_ms();
        let node_id = Cell::new(g.node_id());
        let cell: Shared = Rc::new(RefCell::new(Some(g)));
        let made = MonotonicSnowflake {
            inner: Inner {
                cell: cell.clone(),
                layout,
                epoch_ms,
                node_id,
            },
        }
        .into_instance(env)?;
        crate::fast::install_next_id(env.raw(), made.value, &cell)?;
        Ok(made)
    }

    /// A generator whose node id is a slot leased from a directory of slot files (one host, no
    /// server): `flock` holds the slot while this process lives, the slot's high-water mark R
    /// is kept ahead of the clock in the background, and a successor waits until its clock
    /// passes the R it finds (`LEASE_NOT_READY` until then). Throws `NO_FREE_SLOT` when every
    /// slot is held. `close()` frees the slot early.
    #[napi(
        ts_args_type = "options: FileLeaseOptions & LeadOptions",
        ts_return_type = "MonotonicSnowflake"
    )]
    pub fn from_file_lease<'env>(
        env: &'env Env,
        options: Unknown<'_>,
    ) -> Result<ClassInstance<'env, Self>> {
        guard(env.raw(), || {
            let g = file_lease(*env, val(*env, &options), Mode::Monotonic)?;
            Self::instance(env, g)
        })
    }

    /// A generator whose node id is a slot leased from an etcd v3 cluster (a fleet): the slot
    /// key is attached to an etcd lease kept alive in the background; a lost lease stops it at
    /// once (`LEASE_LOST`), an unreachable store lets it issue only up to R (`LEASE_EXPIRED`).
    /// Connecting blocks the calling thread (up to `connectTimeoutMs` per request).
    #[napi(
        ts_args_type = "options: EtcdOptions & LeadOptions",
        ts_return_type = "MonotonicSnowflake"
    )]
    pub fn from_etcd<'env>(
        env: &'env Env,
        options: Unknown<'_>,
    ) -> Result<ClassInstance<'env, Self>> {
        guard(env.raw(), || {
            let g = etcd(*env, val(*env, &options), Mode::Monotonic)?;
            Self::instance(env, g)
        })
    }

    /// A generator whose node id is the decimal integer in an environment variable.
    #[napi(
        ts_args_type = "variable: string, options?: SourceOptions & LeadOptions",
        ts_return_type = "MonotonicSnowflake"
    )]
    pub fn from_env<'env>(
        env: &'env Env,
        variable: Unknown<'_>,
        options: Option<Unknown<'_>>,
    ) -> Result<ClassInstance<'env, Self>> {
        guard(env.raw(), || {
            let g = env_source(
                *env,
                val(*env, &variable),
                optional(*env, &options)?,
                Mode::Monotonic,
            )?;
            Self::instance(env, g)
        })
    }

    /// A generator whose node id is the ordinal of a StatefulSet-style hostname (`ids-7` ->
    /// 7); this host's name when `hostname` is omitted or null.
    #[napi(
        ts_args_type = "hostname?: string | null, options?: SourceOptions & LeadOptions",
        ts_return_type = "MonotonicSnowflake"
    )]
    pub fn from_hostname<'env>(
        env: &'env Env,
        hostname: Option<Unknown<'_>>,
        options: Option<Unknown<'_>>,
    ) -> Result<ClassInstance<'env, Self>> {
        guard(env.raw(), || {
            let g = hostname_source(
                *env,
                optional(*env, &hostname)?,
                optional(*env, &options)?,
                Mode::Monotonic,
            )?;
            Self::instance(env, g)
        })
    }

    /// A generator whose node id is the host part of an IPv4 address in a subnet of
    /// `prefixLen` bits; refused (`INVALID_NODE_SOURCE`) unless the host part fits the node
    /// field (a /22 or narrower with 10 node bits).
    #[napi(
        ts_args_type = "address: string, prefixLen: number, options?: SourceOptions & LeadOptions",
        ts_return_type = "MonotonicSnowflake"
    )]
    pub fn from_ipv4<'env>(
        env: &'env Env,
        address: Unknown<'_>,
        prefix_len: Unknown<'_>,
        options: Option<Unknown<'_>>,
    ) -> Result<ClassInstance<'env, Self>> {
        guard(env.raw(), || {
            let g = ipv4_source(
                *env,
                val(*env, &address),
                val(*env, &prefix_len),
                optional(*env, &options)?,
                Mode::Monotonic,
            )?;
            Self::instance(env, g)
        })
    }

    /// One ID.
    #[napi]
    pub fn next_id(&self, env: Env) -> Result<u64> {
        guard(env.raw(), || self.inner.with(|g| Ok(g.next_id()?)))
    }

    /// One ID as a decimal string (for JSON).
    #[napi]
    pub fn next_id_string(&self, env: Env) -> Result<String> {
        guard(env.raw(), || {
            self.inner.with(|g| Ok(polyflake::format_id(g.next_id()?)))
        })
    }

    /// `count` IDs reserved with one atomic step, written straight into a new BigInt64Array.
    #[napi(
        ts_args_type = "count: number | bigint",
        ts_return_type = "BigInt64Array"
    )]
    pub fn next_ids<'env>(&self, env: &'env Env, count: Unknown<'_>) -> Result<Unknown<'env>> {
        next_ids(&self.inner, env, count)
    }

    /// Decode an ID (bigint or decimal string) with this generator's layout and epoch.
    #[napi(js_name = "decode", ts_args_type = "id: bigint | string")]
    pub fn decode_id(&self, env: Env, id: Unknown<'_>) -> Result<DecodedId> {
        self.inner.decode(env, id)
    }

    /// Decode an ID (bigint or decimal string) with the default layout and epoch.
    #[napi(js_name = "decode", ts_args_type = "id: bigint | string")]
    pub fn decode_default(env: Env, id: Unknown<'_>) -> Result<DecodedId> {
        decode_default(env, id)
    }

    /// A snapshot of this generator's state, counters and lease (reads the clock once).
    #[napi]
    pub fn health(&self, env: Env) -> Result<Health> {
        guard(env.raw(), || self.inner.with(|g| Ok(health(g))))
    }

    /// Give the generator up now: a leased slot is freed at once (its high-water mark stays,
    /// lowered to the last millisecond really issued, so a successor waits only past that).
    /// Every later call but `decode` and the getters throws `GENERATOR_CLOSED`. Closing twice
    /// is fine. Without `close()` the slot is freed when the generator is garbage collected or
    /// the process exits.
    #[napi]
    pub fn close(&self, env: Env) -> Result<()> {
        guard(env.raw(), || self.inner.close())
    }

    /// True once `close()` was called.
    #[napi(getter)]
    pub fn closed(&self) -> bool {
        self.inner.is_closed()
    }

    /// This generator's node id (with a lease, the slot it holds).
    #[napi(getter)]
    pub fn node_id(&self) -> u32 {
        self.inner.node_id()
    }
    /// This generator's epoch, Unix milliseconds.
    #[napi(getter)]
    pub fn epoch_ms(&self) -> i64 {
        self.inner.epoch_ms
    }
    /// This generator's layout.
    #[napi(getter)]
    pub fn layout(&self) -> Layout {
        Layout {
            inner: self.inner.layout,
        }
    }
}
