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

/// What the option readers return.
type FResult<T> = std::result::Result<T, Fail>;

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
    source: impl FnOnce(Val) -> FResult<NodeSource>,
) -> FResult<Generator> {
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
fn settings(env: Env, mut b: Builder, options: Val, mode: Mode, leased: bool) -> FResult<Builder> {
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
fn from_options(env: Env, options: Val, mode: Mode) -> FResult<Generator> {
    let what = format!("new {}", class_name(mode));
    make(env, &what, mode, options, false, &["nodeId"], |o| {
        match o.get_opt("nodeId")? {
            Some(v) => Ok(NodeSource::Static(int_arg(v, "nodeId")?)),
            None => Err(Fail::Type(format!("{what}: nodeId is required"))),
        }
    })
}

/// A generator on a node source that needs no options of its own (`fromEnv`, `fromHostname`,
/// `fromIpv4`): `options` may be `undefined`.
fn fixed(env: Env, name: &str, mode: Mode, options: Val, source: NodeSource) -> FResult<Generator> {
    let what = format!("{}.{name}", class_name(mode));
    make(env, &what, mode, options, true, &[], |_| Ok(source))
}

/// The options both lease kinds share, read into the core's options `$l` (same field names).
macro_rules! lease_common {
    ($o:expr, $l:expr) => {
        if let Some(v) = $o.get_opt("slots")? {
            $l.slots = Some(narrow(v, "slots")?);
        }
        if let Some(v) = $o.get_opt("identity")? {
            $l.identity = Some(string_arg(v, "identity")?);
        }
        if let Some(v) = $o.get_opt("reserveMs")? {
            $l.reserve_ms = narrow(v, "reserveMs")?;
        }
        if let Some(v) = $o.get_opt("maxGuardWaitMs")? {
            $l.max_guard_wait_ms = narrow(v, "maxGuardWaitMs")?;
        }
    };
}

/// The keys `lease_common!` reads.
const LEASE_KEYS: [&str; 4] = ["slots", "identity", "reserveMs", "maxGuardWaitMs"];

/// `fromFileLease({ dir, slots?, identity?, reserveMs?, maxGuardWaitMs?, ... })`.
fn file_lease(env: Env, options: Val, mode: Mode) -> FResult<Generator> {
    let what = format!("{}.fromFileLease", class_name(mode));
    let own: Vec<&str> = ["dir"].iter().chain(&LEASE_KEYS).copied().collect();
    make(env, &what, mode, options, false, &own, |o| {
        let Some(dir) = o.get_opt("dir")? else {
            return Err(Fail::Type(format!("{what}: dir is required")));
        };
        let mut f = polyflake::FileLeaseOptions::new(string_arg(dir, "dir")?);
        lease_common!(o, f);
        Ok(NodeSource::FileLease(f))
    })
}

/// `fromEtcd({ endpoints, prefix?, ttlS?, connectTimeoutMs?, slots?, identity?, ... })`.
fn etcd(env: Env, options: Val, mode: Mode) -> FResult<Generator> {
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
                .collect::<FResult<Vec<_>>>()?,
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
        lease_common!(o, e);
        Ok(NodeSource::Etcd(e))
    })
}

/// A decoded ID for JS. Timestamps past 2^53 (only reachable with a far-future custom epoch)
/// would round as a Number, so they are refused instead.
fn decoded(d: Decoded) -> FResult<DecodedId> {
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
                make: impl FnOnce() -> FResult<Generator>,
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
                    let var = string_arg(Val::of(*env, &variable), "the variable's name")?;
                    let source = NodeSource::Env { var };
                    fixed(*env, "fromEnv", $mode, Val::opt(*env, &options)?, source)
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
                    let hostname = match host.ty()? {
                        Ty::Undefined | Ty::Null => None,
                        _ => Some(string_arg(host, "hostname")?),
                    };
                    let source = NodeSource::Hostname { hostname };
                    fixed(*env, "fromHostname", $mode, Val::opt(*env, &options)?, source)
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
                    let addr = string_arg(Val::of(*env, &address), "the IPv4 address")?;
                    let prefix_len = int_arg(Val::of(*env, &prefix_len), "prefixLen")?;
                    let source = NodeSource::ipv4(&addr, prefix_len)?;
                    fixed(*env, "fromIpv4", $mode, Val::opt(*env, &options)?, source)
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
