//! `Snowflake` and `MonotonicSnowflake`: ONE class implementation (the `generator_class!` macro
//! below), declared twice because JavaScript names the mode by the class. Each instance wraps one
//! core [`polyflake::Generator`]; every method converts types and calls the core. A generator's
//! node id is given (`new Snowflake({ nodeId })`) or comes from one of the core's [`NodeSource`]s
//! (`fromFileLease`, `fromEtcd`, `fromEnv`, `fromHostname`, `fromIpv4`); which node id, and
//! whether the lease allows issuing, is the core's business. Every default is the core's.

use crate::clocks::{JsFnClock, ManualClock, ScriptedClock};
use crate::errors::{guard, Result};
use crate::fast::{install_next_id, Shared};
use crate::js::{f64_arg, id_arg, int_arg, narrow, string_arg, Fail, Ty, Val};
use crate::layout::{layout_arg, Layout};
use napi::bindgen_prelude::{ClassInstance, Env, FromNapiValue, JavaScriptClassExt, This, Unknown};
use napi::JsValue;
use polyflake::{Builder, Decoded, Generator, Mode, NodeSource};
use std::rc::Rc;
use std::time::Duration;

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

/// The lease part of `Health` (present when the node id comes from a file or etcd lease). Built
/// by walking the core's `LeaseHealth::fields()`; this struct only declares the TypeScript type.
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
    /// What the slot's previous holder may have reached (its R, or a full reserve past the
    /// record's time for a new or damaged record): nothing is issued until the clock passes it.
    pub guard_until_ms: Option<i64>,
    /// True while the restart guard waits (calls throw `LEASE_NOT_READY`; see `waitReady`).
    pub guard_waiting: bool,
    /// How long the restart guard still waits, in ms (0 when it does not).
    pub guard_remaining_ms: i64,
    /// Why the guard is long: set when the slot was taken although its guard exceeded
    /// `maxGuardWaitMs`, because no slot with a shorter guard was free. Empty otherwise.
    pub guard_note: String,
    /// True once the lease is lost (the generator has stopped for good: `LEASE_LOST`).
    pub lost: bool,
    /// True while the next ID would pass R (the store has not extended it: `LEASE_EXPIRED`).
    pub expired: bool,
    /// Where the lease stands: `'held'`, `'restart_guard'`, `'expired'` or `'lost'`.
    pub phase: String,
    /// Successful extensions of R.
    pub renewals: i64,
    /// Failed extensions (store unreachable, I/O errors).
    pub failures: i64,
    /// The last store error, or why the lease was lost; empty if none.
    pub last_error: String,
}

/// A snapshot of a generator: ok or not and why, the clocks, the counters and the lease. Built
/// by walking the core's `Health::fields()` (this struct only declares the TypeScript type).
/// Numbers are exact: a count a Number could not hold would come as a bigint.
#[napi(object)]
pub struct Health {
    /// True when the generator can issue now.
    pub ok: bool,
    /// `'ok'`, `'clock_behind'`, `'clock_outside_window'`, `'clock_failed'`, `'clock_stuck'`,
    /// `'lead_too_large'`, `'used_after_fork'`, `'restart_guard'`, `'lease_expired'`,
    /// `'lease_lost'`, `'clock_ahead'` or `'closed'`.
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
    /// How far the wall clock reads ahead of what elapsed time vouches for, while that exceeds
    /// `maxForwardStepMs` and is not yet believed (0 otherwise).
    pub clock_ahead_ms: i64,
    /// Strict calls refused because the clock had stepped ahead (`CLOCK_JUMPED_AHEAD`).
    pub forward_refused: i64,
    /// The lease's state (slot, high-water mark, restart guard), if the node id is leased.
    pub lease: Option<LeaseHealth>,
}

/// The node id of `new Snowflake(...)` / `new MonotonicSnowflake(...)`, besides the
/// `SourceOptions`. The option structs only declare TypeScript types: the constructors read the
/// options object themselves, so that they can refuse wrong types, unsafe Numbers and unknown
/// keys with a clear error.
#[napi(object)]
pub struct SnowflakeOptions {
    /// This generator's node id, unique among live generators (0 to 1023 with the default layout).
    #[napi(ts_type = "number | bigint")]
    pub node_id: i64,
}

/// The settings every way of making a generator takes; each default is the core's.
#[napi(object)]
pub struct SourceOptions {
    /// The epoch in Unix milliseconds (default `DEFAULT_EPOCH_MS`, 2024-01-01T00:00:00Z).
    #[napi(ts_type = "number | bigint")]
    pub epoch_ms: Option<i64>,
    /// Strict: a rewind up to this many ms is waited out, a larger one refused (default 5).
    pub max_wait_ms: Option<f64>,
    /// A wall-clock reading further than this ahead of the elapsed time since it was last
    /// trusted is a forward STEP, not issued from (strict: `CLOCK_JUMPED_AHEAD`; monotonic keeps
    /// issuing from the trusted time) until it comes back or holds for `forwardConfirmMs`.
    /// Default `DEFAULT_MAX_FORWARD_STEP_MS`; `null` turns the check off.
    #[napi(ts_type = "number | bigint | null")]
    pub max_forward_step_ms: Option<i64>,
    /// How long a stepped-ahead clock must hold its offset to be believed as a correction, in
    /// ms of elapsed time (default `DEFAULT_FORWARD_CONFIRM_MS`).
    #[napi(ts_type = "number | bigint")]
    pub forward_confirm_ms: Option<i64>,
    /// The bit layout (default `'default'`, 41/10/12).
    #[napi(ts_type = "LayoutPreset | string | LayoutBits | Layout")]
    pub layout: Option<String>,
    /// Where time comes from (default the system clock): a test clock, or a function returning
    /// Unix ms, called synchronously inside `nextId` (not with a lease, whose background thread
    /// reads the clock too). Only the test clocks are exempt from one generator per node id.
    #[napi(ts_type = "ManualClock | ScriptedClock | (() => number | bigint)")]
    pub clock: Option<String>,
}

/// The monotonic generators' extra setting.
#[napi(object)]
pub struct LeadOptions {
    /// Refuse rather than run more than this many ms ahead of the wall clock (default unbounded).
    #[napi(ts_type = "number | bigint")]
    pub max_lead_ms: Option<i64>,
}

/// Options of `fromFileLease(...)`, besides the `SourceOptions`: a slot of a directory of slot
/// files on one host, held with `flock` (the kernel frees it when the process dies).
#[napi(object)]
pub struct FileLeaseOptions {
    /// The lease directory (created if missing), on a local file system that no cleaner
    /// touches; every process that shares node ids uses the same one.
    pub dir: String,
    /// How many slots (node ids 0 to slots - 1) to use (default: every node id of the layout).
    pub slots: Option<u32>,
    /// A stable identity: the slot it held before is tried first (default: the hostname).
    pub identity: Option<String>,
    /// How far ahead of the clock the high-water mark is kept, in ms (default
    /// `DEFAULT_RESERVE_MS`): the longest a successor of a crashed holder, or a new slot, waits.
    #[napi(ts_type = "number | bigint")]
    pub reserve_ms: Option<i64>,
    /// A free slot whose restart guard is longer than this is taken only when no other is free
    /// (default `DEFAULT_MAX_GUARD_WAIT_MS`).
    #[napi(ts_type = "number | bigint")]
    pub max_guard_wait_ms: Option<i64>,
}

/// Options of `fromEtcd(...)`, besides the `SourceOptions`: a slot key in an etcd v3 cluster,
/// attached to an etcd lease kept alive in the background.
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
    /// As in `FileLeaseOptions`.
    #[napi(ts_type = "number | bigint")]
    pub reserve_ms: Option<i64>,
    /// As in `FileLeaseOptions`.
    pub slots: Option<u32>,
    /// As in `FileLeaseOptions`.
    pub identity: Option<String>,
    /// The timeout of connecting and of each request, in ms (default 2000).
    #[napi(ts_type = "number | bigint")]
    pub connect_timeout_ms: Option<i64>,
    /// As in `FileLeaseOptions`.
    #[napi(ts_type = "number | bigint")]
    pub max_guard_wait_ms: Option<i64>,
}

/// The settings every way of making a generator shares.
const SETTINGS: &[&str] = &[
    "epochMs",
    "maxWaitMs",
    "maxForwardStepMs",
    "forwardConfirmMs",
    "layout",
    "clock",
];

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
        if !options.is_object()? {
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
        if let Some(k) = options
            .keys()?
            .into_iter()
            .find(|k| !allowed.contains(&k.as_str()))
        {
            return Err(Fail::Type(format!(
                "unknown option {k:?} for {what}: expected one of {}",
                allowed.join(", ")
            )));
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
    if let Some(v) = options.get_opt("epochMs")? {
        b = b.epoch_ms(narrow(v, "epochMs")?);
    }
    if let Some(v) = options.get_opt("maxWaitMs")? {
        b = b.max_wait_ms(f64_arg(v, "maxWaitMs")?);
    }
    if let Some(v) = options.get_opt("maxForwardStepMs")? {
        let off = v.ty()? == Ty::Null;
        b = b.max_forward_step_ms(if off {
            None
        } else {
            Some(narrow(v, "maxForwardStepMs")?)
        });
    }
    if let Some(v) = options.get_opt("forwardConfirmMs")? {
        b = b.forward_confirm_ms(narrow(v, "forwardConfirmMs")?);
    }
    if mode == Mode::Monotonic {
        let v = options.get("maxLeadMs")?;
        if !matches!(v.ty()?, Ty::Undefined | Ty::Null) {
            b = b.max_lead_ms(Some(narrow(v, "maxLeadMs")?));
        }
    }
    if let Some(v) = options.get_opt("layout")? {
        b = b.layout(layout_arg(env, v)?);
    }
    let Some(v) = options.get_opt("clock")? else {
        return Ok(b);
    };
    // SAFETY: a value of the current call.
    let unknown = unsafe { Unknown::from_raw_unchecked(v.env, v.raw) };
    Ok(match v.ty()? {
        Ty::Function if leased => {
            return Err(Fail::Type(
                "a leased generator's background thread reads the clock too, and a JS function can only be called on its own thread: pass a ManualClock or a ScriptedClock".into(),
            ))
        }
        Ty::Function => b.clock(JsFnClock::new(v)?),
        Ty::Object if ManualClock::instance_of(&env, &unknown)? => {
            // SAFETY: checked to be a `ManualClock` just above.
            let c = unsafe { ClassInstance::<ManualClock>::from_napi_value(v.env, v.raw) }?;
            b.clock(c.inner.clone())
        }
        Ty::Object if ScriptedClock::instance_of(&env, &unknown)? => {
            // SAFETY: checked to be a `ScriptedClock` just above.
            let c = unsafe { ClassInstance::<ScriptedClock>::from_napi_value(v.env, v.raw) }?;
            b.shared_clock(c.inner.clone())
        }
        _ => {
            return Err(Fail::Type(format!(
                "clock must be a ManualClock, a ScriptedClock or a function returning Unix ms, got {}",
                v.describe()
            )))
        }
    })
}

fn class_name(mode: Mode) -> &'static str {
    match mode {
        Mode::Strict => "Snowflake",
        Mode::Monotonic => "MonotonicSnowflake",
    }
}

/// `new Snowflake({ nodeId, ... })`: a static node id.
fn from_options(env: Env, options: Val, mode: Mode) -> std::result::Result<Generator, Fail> {
    let class = class_name(mode);
    if !options.is_object()? {
        return Err(Fail::Type(format!(
            "new {class}(options) takes an object such as {{ nodeId: 37 }}, got {}",
            options.describe()
        )));
    }
    let what = format!("new {class}");
    make(env, &what, mode, options, false, &["nodeId"], |o| {
        match o.get_opt("nodeId")? {
            Some(v) => Ok(NodeSource::Static(int_arg(v, "nodeId")?)),
            None => Err(Fail::Type(format!("{what}: nodeId is required"))),
        }
    })
}

/// The options both lease kinds share, read into the core's fields.
struct LeaseCommon<'a> {
    slots: &'a mut Option<u32>,
    identity: &'a mut Option<String>,
    reserve_ms: &'a mut u64,
    max_guard_wait_ms: &'a mut u64,
}

const LEASE_KEYS: [&str; 4] = ["slots", "identity", "reserveMs", "maxGuardWaitMs"];

fn lease_common(o: Val, c: LeaseCommon<'_>) -> std::result::Result<(), Fail> {
    if let Some(v) = o.get_opt("slots")? {
        *c.slots = Some(narrow(v, "slots")?);
    }
    if let Some(v) = o.get_opt("identity")? {
        *c.identity = Some(string_arg(v, "identity")?);
    }
    if let Some(v) = o.get_opt("reserveMs")? {
        *c.reserve_ms = narrow(v, "reserveMs")?;
    }
    if let Some(v) = o.get_opt("maxGuardWaitMs")? {
        *c.max_guard_wait_ms = narrow(v, "maxGuardWaitMs")?;
    }
    Ok(())
}

/// `fromFileLease({ dir, slots?, identity?, reserveMs?, maxGuardWaitMs?, ... })`.
fn file_lease(env: Env, options: Val, mode: Mode) -> std::result::Result<Generator, Fail> {
    let what = format!("{}.fromFileLease", class_name(mode));
    let own: Vec<&str> = ["dir"].iter().chain(&LEASE_KEYS).copied().collect();
    make(env, &what, mode, options, false, &own, |o| {
        let Some(dir) = o.get_opt("dir")? else {
            return Err(Fail::Type(format!("{what}: dir is required")));
        };
        let mut f = polyflake::FileLeaseOptions::new(string_arg(dir, "dir")?);
        lease_common(
            o,
            LeaseCommon {
                slots: &mut f.slots,
                identity: &mut f.identity,
                reserve_ms: &mut f.reserve_ms,
                max_guard_wait_ms: &mut f.max_guard_wait_ms,
            },
        )?;
        Ok(NodeSource::FileLease(f))
    })
}

/// `fromEtcd({ endpoints, prefix?, ttlS?, connectTimeoutMs?, slots?, identity?, ... })`.
fn etcd(env: Env, options: Val, mode: Mode) -> std::result::Result<Generator, Fail> {
    let what = format!("{}.fromEtcd", class_name(mode));
    let own: Vec<&str> = ["endpoints", "prefix", "ttlS", "connectTimeoutMs"]
        .iter()
        .chain(&LEASE_KEYS)
        .copied()
        .collect();
    make(env, &what, mode, options, false, &own, |o| {
        let endpoints = match o.get_opt("endpoints")? {
            None => return Err(Fail::Type(format!("{what}: endpoints is required"))),
            Some(v) if v.ty()? == Ty::String => vec![v.string()?],
            Some(v) if v.is_array()? => (v.elements()?.into_iter().enumerate())
                .map(|(i, e)| string_arg(e, &format!("endpoints[{i}]")))
                .collect::<std::result::Result<Vec<_>, _>>()?,
            Some(v) => {
                return Err(Fail::Type(format!(
                    "endpoints must be a string or an array of strings, got {}",
                    v.describe()
                )))
            }
        };
        let mut e = polyflake::EtcdLeaseOptions::new(endpoints);
        if let Some(v) = o.get_opt("prefix")? {
            e.prefix = string_arg(v, "prefix")?;
        }
        if let Some(v) = o.get_opt("ttlS")? {
            e.ttl_s = narrow(v, "ttlS")?;
        }
        if let Some(v) = o.get_opt("connectTimeoutMs")? {
            e.connect_timeout_ms = narrow(v, "connectTimeoutMs")?;
        }
        lease_common(
            o,
            LeaseCommon {
                slots: &mut e.slots,
                identity: &mut e.identity,
                reserve_ms: &mut e.reserve_ms,
                max_guard_wait_ms: &mut e.max_guard_wait_ms,
            },
        )?;
        Ok(NodeSource::Etcd(e))
    })
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

/// `fromIpv4(address, prefixLen, options?)`: the core checks the address and the prefix.
fn ipv4_source(
    env: Env,
    addr: Val,
    prefix_len: Val,
    options: Val,
    mode: Mode,
) -> std::result::Result<Generator, Fail> {
    let addr = string_arg(addr, "the IPv4 address")?;
    let source = NodeSource::ipv4(&addr, int_arg(prefix_len, "prefixLen")?)?;
    let what = format!("{}.fromIpv4", class_name(mode));
    make(env, &what, mode, options, true, &[], |_| Ok(source))
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

/// Both classes, from one implementation: `$mode` is the class's mode, the string literals are
/// the TypeScript signatures of its constructor and factories (which differ only by
/// `LeadOptions`).
macro_rules! generator_class {
    ($(#[doc = $doc:tt])* $name:ident, $mode:expr, ret = $ret:tt, new = $new:tt, file = $file:tt,
     etcd = $etcd:tt, env = $env:tt, host = $host:tt, ipv4 = $ipv4:tt) => {
        $(#[doc = $doc])*
        #[napi]
        pub struct $name {
            g: Shared,
        }

        #[napi]
        impl $name {
            /// A generator with a given node id. Throws a `RangeError` with a `code` for bad
            /// settings.
            #[napi(constructor, ts_args_type = $new)]
            pub fn new(env: Env, this: This<'_>, options: Unknown<'_>) -> Result<Self> {
                guard(env.raw(), || {
                    let g = Rc::new(from_options(env, Val::of(env, &options), $mode)?);
                    install_next_id(env.raw(), this.object.raw(), &g)?;
                    Ok($name { g })
                })
            }

            /// Wrap a core generator as a new JS instance with its own bound `nextId`.
            fn instance<'env>(
                env: &'env Env,
                make: impl FnOnce() -> std::result::Result<Generator, Fail>,
            ) -> Result<ClassInstance<'env, Self>> {
                guard(env.raw(), || {
                    let g = Rc::new(make()?);
                    let made = $name { g: g.clone() }.into_instance(env)?;
                    install_next_id(env.raw(), made.value, &g)?;
                    Ok(made)
                })
            }

            /// A generator whose node id is a slot leased from a directory of slot files (one
            /// host, no server): `flock` holds the slot while this process lives, the slot's
            /// high-water mark R is kept ahead of the clock in the background, and calls throw
            /// `LEASE_NOT_READY` until the clock passes what the slot's previous holder may have
            /// issued up to (a new slot: one reserve; see `waitReady`). Throws `NO_FREE_SLOT`
            /// when every slot is held, `ID_SPACE_MISMATCH` when the directory belongs to
            /// another epoch or layout. A deleted slot file or directory loses the lease
            /// (`LEASE_LOST`). `close()` frees the slot early.
            #[napi(ts_args_type = $file, ts_return_type = $ret)]
            pub fn from_file_lease<'env>(
                env: &'env Env,
                options: Unknown<'_>,
            ) -> Result<ClassInstance<'env, Self>> {
                Self::instance(env, || file_lease(*env, Val::of(*env, &options), $mode))
            }

            /// A generator whose node id is a slot leased from an etcd v3 cluster (a fleet): the
            /// slot key is attached to an etcd lease kept alive in the background; a lost lease
            /// stops it at once (`LEASE_LOST`), an unreachable store lets it issue only up to R
            /// (`LEASE_EXPIRED`). Connecting blocks the calling thread (up to
            /// `connectTimeoutMs` per request).
            #[napi(ts_args_type = $etcd, ts_return_type = $ret)]
            pub fn from_etcd<'env>(
                env: &'env Env,
                options: Unknown<'_>,
            ) -> Result<ClassInstance<'env, Self>> {
                Self::instance(env, || etcd(*env, Val::of(*env, &options), $mode))
            }

            /// A generator whose node id is the decimal integer in an environment variable.
            #[napi(ts_args_type = $env, ts_return_type = $ret)]
            pub fn from_env<'env>(
                env: &'env Env,
                variable: Unknown<'_>,
                options: Option<Unknown<'_>>,
            ) -> Result<ClassInstance<'env, Self>> {
                Self::instance(env, || {
                    let (var, opts) = (Val::of(*env, &variable), Val::opt(*env, &options)?);
                    env_source(*env, var, opts, $mode)
                })
            }

            /// A generator whose node id is the ordinal of a StatefulSet-style hostname
            /// (`ids-7` -> 7); this host's name when `hostname` is omitted or null.
            #[napi(ts_args_type = $host, ts_return_type = $ret)]
            pub fn from_hostname<'env>(
                env: &'env Env,
                hostname: Option<Unknown<'_>>,
                options: Option<Unknown<'_>>,
            ) -> Result<ClassInstance<'env, Self>> {
                Self::instance(env, || {
                    let host = Val::opt(*env, &hostname)?;
                    hostname_source(*env, host, Val::opt(*env, &options)?, $mode)
                })
            }

            /// A generator whose node id is the host part of an IPv4 address in a subnet of
            /// `prefixLen` bits; refused (`INVALID_NODE_SOURCE`) unless the prefix is 0 to 32
            /// and the host part fits the node field (a /22 or narrower with 10 node bits).
            #[napi(ts_args_type = $ipv4, ts_return_type = $ret)]
            pub fn from_ipv4<'env>(
                env: &'env Env,
                address: Unknown<'_>,
                prefix_len: Unknown<'_>,
                options: Option<Unknown<'_>>,
            ) -> Result<ClassInstance<'env, Self>> {
                Self::instance(env, || {
                    let (a, p) = (Val::of(*env, &address), Val::of(*env, &prefix_len));
                    ipv4_source(*env, a, p, Val::opt(*env, &options)?, $mode)
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

            /// `count` IDs in one call, written straight into a new BigInt64Array (a failed
            /// call issues none).
            #[napi(ts_args_type = "count: number | bigint", ts_return_type = "BigInt64Array")]
            pub fn next_ids<'env>(
                &self,
                env: &'env Env,
                count: Unknown<'_>,
            ) -> Result<Unknown<'env>> {
                guard(env.raw(), || {
                    let n = polyflake::batch_len(int_arg(Val::of(*env, &count), "count")?)?;
                    let ids = Val::id_array(env.raw(), n, |out| Ok(self.g.next_ids(out)?))?;
                    Ok(ids.unknown())
                })
            }

            /// Decode an ID (bigint or decimal string) with this generator's layout and epoch.
            #[napi(js_name = "decode", ts_args_type = "id: bigint | string")]
            pub fn decode_id(&self, env: Env, id: Unknown<'_>) -> Result<DecodedId> {
                guard(env.raw(), || {
                    decoded(self.g.decode(id_arg(Val::of(env, &id))?)?)
                })
            }

            /// Decode an ID (bigint or decimal string) with the default layout and epoch.
            #[napi(js_name = "decode", ts_args_type = "id: bigint | string")]
            pub fn decode_default(env: Env, id: Unknown<'_>) -> Result<DecodedId> {
                guard(env.raw(), || {
                    decoded(polyflake::decode(id_arg(Val::of(env, &id))?)?)
                })
            }

            /// A snapshot of this generator's state, counters and lease (reads the clock once;
            /// status `'closed'` after `close()`).
            #[napi(ts_return_type = "Health")]
            pub fn health<'env>(&self, env: &'env Env) -> Result<Unknown<'env>> {
                guard(env.raw(), || {
                    Ok(Val::record(env.raw(), &self.g.health().fields())?.unknown())
                })
            }

            /// Block the calling thread until the restart guard has passed (a leased slot's
            /// previous holder may have issued up to a time this clock has not reached; a new
            /// slot waits one reserve), at most `timeoutMs` (default
            /// `DEFAULT_MAX_GUARD_WAIT_MS`). Returns at once when nothing needs waiting for;
            /// throws `LEASE_NOT_READY` at the deadline, `LEASE_LOST` or `GENERATOR_CLOSED` at
            /// once. Blocking is meant (an async form is for later): call it at startup.
            #[napi(ts_args_type = "timeoutMs?: number | bigint")]
            pub fn wait_ready(&self, env: Env, timeout_ms: Option<Unknown<'_>>) -> Result<()> {
                guard(env.raw(), || {
                    let ms = match timeout_ms {
                        Some(t) => narrow(Val::of(env, &t), "timeoutMs")?,
                        None => polyflake::DEFAULT_MAX_GUARD_WAIT_MS,
                    };
                    Ok(self.g.wait_ready(Duration::from_millis(ms))?)
                })
            }

            /// Give the generator up now: a leased slot is freed at once (its high-water mark
            /// stays, lowered to the last millisecond really issued, so a successor waits only
            /// past that). Every later call but `decode`, `health` and the getters throws
            /// `GENERATOR_CLOSED`. Closing twice is fine. Without `close()` the slot is freed
            /// when the generator is garbage collected or the process exits.
            #[napi]
            pub fn close(&self) {
                self.g.close()
            }

            /// True once `close()` was called.
            #[napi(getter)]
            pub fn closed(&self) -> bool {
                self.g.is_closed()
            }

            /// This generator's node id (with a lease, the slot it holds).
            #[napi(getter)]
            pub fn node_id(&self) -> u32 {
                self.g.node_id()
            }

            /// This generator's epoch, Unix milliseconds.
            #[napi(getter)]
            pub fn epoch_ms(&self) -> i64 {
                self.g.epoch_ms()
            }

            /// The bound on a forward clock step in ms (`null`: the check is off).
            #[napi(getter)]
            pub fn max_forward_step_ms(&self) -> Option<f64> {
                self.g.max_forward_step_ms().map(|ms| ms as f64)
            }

            /// How long a stepped-ahead clock must hold its offset to be believed, in ms.
            #[napi(getter)]
            pub fn forward_confirm_ms(&self) -> f64 {
                self.g.forward_confirm_ms() as f64
            }

            /// This generator's layout.
            #[napi(getter)]
            pub fn layout(&self) -> Layout {
                Layout {
                    inner: self.g.layout(),
                }
            }
        }
    };
}

generator_class!(
    #[doc = " Strict mode: an issued timestamp never exceeds the wall clock. A rewind up to `maxWaitMs`"]
    #[doc = " (default 5) is waited out, a larger one throws `CLOCK_MOVED_BACKWARDS`; a spent"]
    #[doc = " millisecond sleeps to the next one; a forward clock step is not issued from"]
    #[doc = " (`CLOCK_JUMPED_AHEAD`). IDs are bigints; use `nextIdString()` or `idsToStrings()` for JSON."]
    Snowflake,
    Mode::Strict,
    ret = "Snowflake",
    new = "options: SnowflakeOptions & SourceOptions",
    file = "options: FileLeaseOptions & SourceOptions",
    etcd = "options: EtcdOptions & SourceOptions",
    env = "variable: string, options?: SourceOptions",
    host = "hostname?: string | null, options?: SourceOptions",
    ipv4 = "address: string, prefixLen: number | bigint, options?: SourceOptions"
);

generator_class!(
    #[doc = " Monotonic mode: never waits, never duplicates. The wall clock only floors a logical clock"]
    #[doc = " that borrows from the next millisecond on a rewind or a burst (and stays on trusted time"]
    #[doc = " through a forward step), so a decoded timestamp is an upper bound on when the ID was"]
    #[doc = " made. `maxLeadMs` bounds how far ahead it may run."]
    MonotonicSnowflake,
    Mode::Monotonic,
    ret = "MonotonicSnowflake",
    new = "options: SnowflakeOptions & SourceOptions & LeadOptions",
    file = "options: FileLeaseOptions & SourceOptions & LeadOptions",
    etcd = "options: EtcdOptions & SourceOptions & LeadOptions",
    env = "variable: string, options?: SourceOptions & LeadOptions",
    host = "hostname?: string | null, options?: SourceOptions & LeadOptions",
    ipv4 = "address: string, prefixLen: number | bigint, options?: SourceOptions & LeadOptions"
);
