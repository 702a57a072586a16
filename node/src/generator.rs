//! `Snowflake` and `MonotonicSnowflake`: ONE class implementation (`generator_class!`), declared
//! twice because JavaScript names the mode by the class. Each instance wraps one core
//! [`polyflake::Generator`] on a given node id or one of the core's [`NodeSource`]s.

use crate::error::{guard, js_value, Result};
use crate::fast::{install, method, Cell, Reads, Shared};
use crate::interrupt::waiting;
use crate::issue::{self, bodies};
use crate::js::{bool_arg, count_arg, id_arg, int_arg, narrow, string_arg, Fail, Ty, Val};
use crate::layout::{layout_arg, Layout};
use crate::metrics::samples;
use crate::settings::{self, only_keys, FResult};
use napi::bindgen_prelude::{ClassInstance, Env, JavaScriptClassExt, This, Unknown};
use napi::{sys, JsValue};
use polyflake::{
    Decoded, Generator, LeaseCommon, Mode, NodeSource, RemoteStore, RestartGuard,
    RestartGuardOptions,
};
use std::sync::Arc;
use std::time::Duration;

/// The keys of a fixed node id's claim on the host (static, environment, hostname, IPv4): its
/// restart guard and the host scope (see [`host`]). A lease takes the scope only
/// ([`LEASE_KEYS`]): its restart guard is its store's R.
const FIXED_KEYS: [&str; 3] = ["restartGuard", "stateDir", "hostScope"];

/// What `options` says of the node id's claim on this host, onto `b`: `restartGuard` (`'auto'`,
/// `'required'` or `'off'`, checked by the core) and `stateDir`, each left to its environment
/// variable when absent, and `hostScope` (the core checks it). Only the keys the call was
/// checked against can be present.
fn host(options: Val, mut b: polyflake::Builder) -> FResult<polyflake::Builder> {
    let mut guard = RestartGuardOptions::default();
    if let Some(v) = options.get_opt("restartGuard")? {
        guard.mode = Some(RestartGuard::from_name(&string_arg(v, "restartGuard")?)?);
    }
    if let Some(v) = options.get_opt("stateDir")? {
        guard.state_dir = Some(string_arg(v, "stateDir")?.into());
    }
    b = b.restart_guard(guard);
    if let Some(v) = options.get_opt("hostScope")? {
        b = b.host_scope(string_arg(v, "hostScope")?);
    }
    Ok(b)
}

/// Make a core generator: `what` names the call in messages; `options` (`undefined` allowed
/// when `optional`) takes the keys `own`, `epochMs`, `layout` and `settings::keys(mode)`;
/// `source` reads the node source.
fn make(
    env: Env,
    what: &str,
    mode: Mode,
    options: Val,
    optional: bool,
    own: &[&str],
    source: impl FnOnce(Val) -> FResult<NodeSource>,
) -> FResult<Cell<Generator>> {
    let present = !(optional && options.is_undefined()?);
    if present {
        let this: &[&str] = &["epochMs", "layout"];
        only_keys(options, what, &[own, this, &settings::keys(mode)].concat())?;
    }
    let source = source(options)?;
    let leased = source.kind().is_lease();
    let mut b = Generator::builder_from(source).mode(mode);
    let mut reads = Reads::System;
    if present {
        if let Some(v) = options.get_opt("epochMs")? {
            b = b.epoch_ms(narrow(v, "epochMs")?);
        }
        if let Some(v) = options.get_opt("layout")? {
            b = b.layout(layout_arg(env, v)?);
        }
        b = host(options, b)?;
        let s = settings::read(env, options, mode, leased)?;
        reads = s.reads;
        b = b.settings(s.core);
    }
    Ok(Cell {
        g: b.build()?,
        reads,
    })
}

/// The JS class of `mode`, for messages.
fn class_name(mode: Mode) -> &'static str {
    match mode {
        Mode::Strict => "Snowflake",
        Mode::Monotonic => "MonotonicSnowflake",
    }
}

/// `new Snowflake({ nodeId, ... })`: a static node id.
fn from_options(env: Env, options: Val, mode: Mode) -> FResult<Cell<Generator>> {
    let what = format!("new {}", class_name(mode));
    let own = [&["nodeId"][..], &FIXED_KEYS].concat();
    make(env, &what, mode, options, false, &own, |o| {
        match o.get_opt("nodeId")? {
            Some(v) => Ok(NodeSource::Static(int_arg(v, "nodeId")?)),
            None => Err(Fail::Type(format!("{what}: nodeId is required"))),
        }
    })
}

/// A generator on a node source that takes no options of its own (`options` may be `undefined`).
fn fixed(
    env: Env,
    name: &str,
    mode: Mode,
    options: Val,
    source: NodeSource,
) -> FResult<Cell<Generator>> {
    let what = format!("{}.{name}", class_name(mode));
    make(env, &what, mode, options, true, &FIXED_KEYS, |_| Ok(source))
}

/// The options every lease kind shares ([`LEASE_KEYS`]), absent ones at the core's defaults.
fn lease_common(o: Val) -> FResult<LeaseCommon> {
    let mut c = LeaseCommon::default();
    o.read_some("slots", narrow, &mut c.slots)?;
    o.read_some("identity", string_arg, &mut c.identity)?;
    o.read("reserveMs", narrow, &mut c.reserve_ms)?;
    o.read("maxGuardWaitMs", narrow, &mut c.max_guard_wait_ms)?;
    o.read("heal", bool_arg, &mut c.heal)?;
    Ok(c)
}

/// The keys `lease_common` reads, and the lease's host scope (read by [`host`]).
const LEASE_KEYS: [&str; 6] = [
    "slots",
    "identity",
    "reserveMs",
    "maxGuardWaitMs",
    "heal",
    "hostScope",
];

/// `fromFileLease({ dir, slots?, identity?, reserveMs?, maxGuardWaitMs?, heal?, ... })`.
fn file_lease(env: Env, options: Val, mode: Mode) -> FResult<Cell<Generator>> {
    let what = format!("{}.fromFileLease", class_name(mode));
    let own: Vec<&str> = ["dir"].iter().chain(&LEASE_KEYS).copied().collect();
    make(env, &what, mode, options, false, &own, |o| {
        let Some(dir) = o.get_opt("dir")? else {
            return Err(Fail::Type(format!("{what}: dir is required")));
        };
        Ok(NodeSource::FileLease(polyflake::FileLeaseOptions {
            dir: string_arg(dir, "dir")?.into(),
            common: lease_common(o)?,
        }))
    })
}

/// What both remote stores read over their defaults `store`: `prefix`, `connectTimeoutMs`, and
/// the TLS and authentication options, each of [`AUTH_KEYS`] the camelCase name of one of the
/// core's `LEASE_CREDENTIALS`, set through the core's `StoreCredentials::set`; `undefined`
/// leaves the field to its environment variable.
fn remote_store(o: Val, mut store: RemoteStore) -> FResult<RemoteStore> {
    o.read("prefix", string_arg, &mut store.prefix)?;
    o.read("connectTimeoutMs", narrow, &mut store.connect_timeout_ms)?;
    for (name, key) in polyflake::LEASE_CREDENTIALS.into_iter().zip(AUTH_KEYS) {
        if let Some(v) = o.get_opt(key)? {
            store
                .credentials
                .set(name, Some(string_arg(v, key)?.into()))?;
        }
    }
    Ok(store)
}

/// The credential keys `remote_store` reads, in the order of the core's `LEASE_CREDENTIALS`.
const AUTH_KEYS: [&str; 5] = ["caFile", "certFile", "keyFile", "username", "password"];

/// The keys of a remote store: its own, then those `remote_store` and `lease_common` read.
fn store_keys(own: &[&'static str]) -> Vec<&'static str> {
    [
        own,
        &["prefix", "connectTimeoutMs"],
        &LEASE_KEYS,
        &AUTH_KEYS,
    ]
    .concat()
}

/// A list of servers: one string, or an array of strings (`what` names the option).
fn servers(v: Val, what: &str) -> FResult<Vec<String>> {
    if v.ty()? == Ty::String {
        return Ok(vec![v.string()?]);
    }
    if v.is_array()? {
        return (v.elements()?.into_iter().enumerate())
            .map(|(i, e)| string_arg(e, &format!("{what}[{i}]")))
            .collect();
    }
    Err(Fail::Type(format!(
        "{what} must be a string or an array of strings, got {}",
        v.describe()
    )))
}

/// `fromEtcd({ endpoints, prefix?, ttlS?, connectTimeoutMs?, slots?, identity?, caFile?, ... })`.
fn etcd(env: Env, options: Val, mode: Mode) -> FResult<Cell<Generator>> {
    let what = format!("{}.fromEtcd", class_name(mode));
    let own = store_keys(&["endpoints", "ttlS"]);
    make(env, &what, mode, options, false, &own, |o| {
        let Some(v) = o.get_opt("endpoints")? else {
            return Err(Fail::Type(format!("{what}: endpoints is required")));
        };
        let mut e = polyflake::EtcdLeaseOptions::new(servers(v, "endpoints")?);
        o.read("ttlS", narrow, &mut e.ttl_s)?;
        e.store = remote_store(o, e.store)?;
        e.common = lease_common(o)?;
        Ok(NodeSource::Etcd(e))
    })
}

/// `fromZooKeeper({ ensemble, prefix?, sessionTimeoutMs?, connectTimeoutMs?, slots?, ... })`:
/// `ensemble` is a connect string `"host:port,host:port"` (the core splits it) or an array of
/// `host:port` strings.
fn zookeeper(env: Env, options: Val, mode: Mode) -> FResult<Cell<Generator>> {
    let what = format!("{}.fromZooKeeper", class_name(mode));
    let own = store_keys(&["ensemble", "sessionTimeoutMs"]);
    make(env, &what, mode, options, false, &own, |o| {
        let mut z = match o.get_opt("ensemble")? {
            None => return Err(Fail::Type(format!("{what}: ensemble is required"))),
            Some(v) if v.ty()? == Ty::String => {
                polyflake::ZooKeeperLeaseOptions::from_ensemble(&v.string()?)
            }
            Some(v) => polyflake::ZooKeeperLeaseOptions::new(servers(v, "ensemble")?),
        };
        o.read("sessionTimeoutMs", narrow, &mut z.session_timeout_ms)?;
        z.store = remote_store(o, z.store)?;
        z.common = lease_common(o)?;
        Ok(NodeSource::ZooKeeper(z))
    })
}

/// A decoded ID for JS (TypeScript's `DecodedId`, node/types.d.ts): `timestampMs`, `nodeId`,
/// `sequence` and `time`, the timestamp as a `Date` (exact: a Date holds whole ms). A timestamp
/// a Date cannot hold (a far-future custom epoch) is refused.
fn decoded(env: sys::napi_env, d: Decoded) -> FResult<Val> {
    let time = Val::date(env, d.timestamp_ms)?;
    let out = Val::object(env)?;
    out.set("timestampMs", Val::number(env, d.timestamp_ms as f64)?)?;
    out.set("nodeId", Val::number(env, f64::from(d.node_id))?)?;
    out.set("sequence", Val::number(env, f64::from(d.sequence))?)?;
    out.set("time", time)?;
    Ok(out)
}

type Flake = Shared<Generator>;

/// A BigInt64Array of the IDs `ids`.
fn id_array(env: sys::napi_env, ids: Vec<u64>) -> FResult<Val> {
    Val::id_array(env, ids.len(), |out| {
        out.copy_from_slice(&ids);
        Ok(())
    })
}

/// `nextIdsAsync(count)`: filled at once by the core's all-or-nothing `try_next_ids`, or on the
/// pool when it must wait.
fn ids_async(env: sys::napi_env, c: &Flake, count: Val) -> FResult<Val> {
    // A bad count rejects too: an async form never throws at the call.
    let n = match count_arg(count) {
        Ok(n) => n,
        Err(fail) => return issue::settled(env, Err(fail)),
    };
    let fast = || {
        let mut done = false;
        let ids = Val::id_array(env, n, |out| {
            done = c.g.try_next_ids(out)?;
            Ok(())
        })?;
        Ok(done.then_some(ids))
    };
    let work = move |g: &Generator| {
        let mut ids = polyflake::batch_buffer::<u64>(n)?;
        g.next_ids(&mut ids).map(|()| ids)
    };
    issue::promise(env, c, fast, work, id_array)
}

/// Both classes, from one implementation: `$mode` is the class's mode, the string literals the
/// TypeScript signatures of its constructor and factories.
macro_rules! generator_class {
    ($(#[doc = $doc:tt])* $name:ident, $mode:expr, ret = $ret:tt, new = $new:tt, file = $file:tt,
     etcd = $etcd:tt, zk = $zk:tt, env = $env:tt, host = $host:tt, ipv4 = $ipv4:tt) => {
        $(#[doc = $doc])*
        #[napi]
        pub struct $name {
            cell: Flake,
        }

        #[napi]
        impl $name {
            /// One ID. Strict mode may block the thread: at most `max(maxWaitMs, 1)` ms on a
            /// spent millisecond, at most `maxWaitMs` on a small rewind (see `nextIdAsync`). The
            /// first call on a fixed node id may wait for its restart guard (a predecessor on this
            /// host killed within the last reserve, or a clock stepped back since: at most
            /// `DEFAULT_MAX_RESTART_WAIT_MS`, else `LEASE_NOT_READY`). A Worker's `terminate()` or
            /// `process.exit()` cuts a wait within 20 ms.
            #[napi(ts_return_type = "bigint")]
            pub fn next_id<'env>(&self, env: &'env Env) -> Result<Unknown<'env>> {
                method(env, &self.cell, issue::next_id)
            }

            /// One ID if that needs no wait; `null` where `nextId()` would sleep (a spent
            /// millisecond or a small rewind in strict mode, a fixed node id's restart guard).
            /// Refusals throw as in `nextId()`.
            #[napi(ts_return_type = "bigint | null")]
            pub fn try_next_id<'env>(&self, env: &'env Env) -> Result<Unknown<'env>> {
                method(env, &self.cell, issue::try_next_id)
            }

            /// One ID as a Promise that never blocks the event loop: settled at once when no
            /// wait is needed (no thread hop), otherwise the wait runs on the libuv thread pool.
            /// A refusal rejects with the error `nextId()` would throw.
            #[napi(ts_return_type = "Promise<bigint>")]
            pub fn next_id_async<'env>(&self, env: &'env Env) -> Result<Unknown<'env>> {
                method(env, &self.cell, issue::next_id_async)
            }

            /// A snapshot of this generator's state, counters and lease if any (reads the clock
            /// once; status `'closed'` after `close()`; `nodeId` 0 where there is none).
            #[napi(ts_return_type = "Health")]
            pub fn health<'env>(&self, env: &'env Env) -> Result<Unknown<'env>> {
                js_value(env, |raw| Val::record(raw, &self.cell.g.health().fields()))
            }

            /// The health snapshot as metric samples: the core's `HEALTH_METRICS` table's names
            /// and labels (see `healthMetrics()`; `polyflake/prometheus` exports them).
            #[napi(ts_return_type = "Array<HealthSample>")]
            pub fn health_samples<'env>(&self, env: &'env Env) -> Result<Unknown<'env>> {
                js_value(env, |raw| samples(raw, &self.cell.g.health()))
            }

            /// A generator with a given node id, claimed on this host (`NODE_ID_IN_USE` while
            /// another live generator holds it) and kept by its restart guard (a mark in
            /// `stateDir`: the next holder here starts above every ID this one issued). Throws a
            /// `RangeError` with a `code` for bad settings.
            #[napi(constructor, ts_args_type = $new)]
            pub fn new(env: Env, this: This<'_>, options: Unknown<'_>) -> Result<Self> {
                guard(env.raw(), || {
                    let cell = Arc::new(from_options(env, Val::of(env, &options), $mode)?);
                    install(env.raw(), this.object.raw(), &cell, bodies(), &[])?;
                    Ok($name { cell })
                })
            }

            /// Wrap the generator `make` gives as a new JS instance with its own bound functions.
            fn instance<'env>(
                env: &'env Env,
                make: impl FnOnce() -> FResult<Cell<Generator>>,
            ) -> Result<ClassInstance<'env, Self>> {
                guard(env.raw(), || {
                    let cell = Arc::new(make()?);
                    let made = $name { cell: cell.clone() }.into_instance(env)?;
                    install(env.raw(), made.value, &cell, bodies(), &[])?;
                    Ok(made)
                })
            }

            /// A generator on a slot leased from a directory of slot files (one host): `flock`
            /// holds the slot while this process lives; calls throw `LEASE_NOT_READY` until the
            /// clock passes what the slot's previous holder may have issued (see `waitReady`).
            /// Throws `NO_FREE_SLOT` when every slot is held, `ID_SPACE_MISMATCH` for another
            /// epoch or layout; a deleted slot file loses the lease (`LEASE_LOST`).
            #[napi(ts_args_type = $file, ts_return_type = $ret)]
            pub fn from_file_lease<'env>(env: &'env Env, options: Unknown<'_>) -> Result<ClassInstance<'env, Self>> {
                Self::instance(env, || file_lease(*env, Val::of(*env, &options), $mode))
            }

            /// A generator on a slot leased from an etcd v3 cluster: a lost lease stops it at once
            /// (`LEASE_LOST`), an unreachable store lets it issue only up to its high-water mark
            /// (`LEASE_EXPIRED`). Connecting blocks (up to `connectTimeoutMs` per request).
            #[napi(ts_args_type = $etcd, ts_return_type = $ret)]
            pub fn from_etcd<'env>(env: &'env Env, options: Unknown<'_>) -> Result<ClassInstance<'env, Self>> {
                Self::instance(env, || etcd(*env, Val::of(*env, &options), $mode))
            }

            /// A generator on a slot leased from a ZooKeeper ensemble (3.5 or later): an expired
            /// session or a deleted slot znode stops it at once (`LEASE_LOST`), a lost connection
            /// lets it issue only up to its high-water mark (`LEASE_EXPIRED`). Connecting blocks
            /// (up to `connectTimeoutMs`).
            #[napi(js_name = "fromZooKeeper", ts_args_type = $zk, ts_return_type = $ret)]
            pub fn from_zookeeper<'env>(env: &'env Env, options: Unknown<'_>) -> Result<ClassInstance<'env, Self>> {
                Self::instance(env, || zookeeper(*env, Val::of(*env, &options), $mode))
            }

            /// A generator whose node id is the decimal integer in an environment variable.
            #[napi(ts_args_type = $env, ts_return_type = $ret)]
            pub fn from_env<'env>(env: &'env Env, variable: Unknown<'_>, options: Option<Unknown<'_>>) -> Result<ClassInstance<'env, Self>> {
                Self::instance(env, || {
                    let var = string_arg(Val::of(*env, &variable), "the variable's name")?;
                    fixed(*env, "fromEnv", $mode, Val::opt(*env, &options)?, NodeSource::Env { var })
                })
            }

            /// A generator whose node id is the ordinal of a StatefulSet-style hostname
            /// (`ids-7` -> 7); this host's name when `hostname` is omitted or null.
            #[napi(ts_args_type = $host, ts_return_type = $ret)]
            pub fn from_hostname<'env>(env: &'env Env, hostname: Option<Unknown<'_>>, options: Option<Unknown<'_>>) -> Result<ClassInstance<'env, Self>> {
                Self::instance(env, || {
                    let host = Val::opt(*env, &hostname)?;
                    let hostname = match host.ty()? {
                        Ty::Undefined | Ty::Null => None,
                        _ => Some(string_arg(host, "hostname")?),
                    };
                    fixed(*env, "fromHostname", $mode, Val::opt(*env, &options)?, NodeSource::Hostname { hostname })
                })
            }

            /// A generator whose node id is the host part of an IPv4 address in a subnet of
            /// `prefixLen` bits; refused (`INVALID_NODE_SOURCE`) unless the prefix is 0 to 32
            /// and the host part fits the node field (a /22 or narrower with 10 node bits).
            #[napi(ts_args_type = $ipv4, ts_return_type = $ret)]
            pub fn from_ipv4<'env>(env: &'env Env, address: Unknown<'_>, prefix_len: Unknown<'_>, options: Option<Unknown<'_>>) -> Result<ClassInstance<'env, Self>> {
                Self::instance(env, || {
                    let addr = string_arg(Val::of(*env, &address), "the IPv4 address")?;
                    let source = NodeSource::ipv4(&addr, int_arg(Val::of(*env, &prefix_len), "prefixLen")?)?;
                    fixed(*env, "fromIpv4", $mode, Val::opt(*env, &options)?, source)
                })
            }

            /// One ID as a decimal string (for JSON).
            #[napi]
            pub fn next_id_string(&self, env: Env) -> Result<String> {
                guard(env.raw(), || {
                    Ok(polyflake::format_id(waiting(env.raw(), || self.cell.g.next_id())?))
                })
            }

            /// `count` IDs in one call, written straight into a new BigInt64Array (a failed
            /// call issues none). Strict mode blocks through every millisecond it fills
            /// (10**6 IDs on the default layout: about 244 ms; see `nextIdsAsync`); a Worker's
            /// `terminate()` or `process.exit()` cuts the wait within 20 ms.
            #[napi(ts_args_type = "count: number | bigint", ts_return_type = "BigInt64Array")]
            pub fn next_ids<'env>(&self, env: &'env Env, count: Unknown<'_>) -> Result<Unknown<'env>> {
                js_value(env, |raw| {
                    let n = count_arg(Val::of(*env, &count))?;
                    Val::id_array(raw, n, |out| Ok(waiting(raw, || self.cell.g.next_ids(out))?))
                })
            }

            /// `count` IDs as a Promise of a BigInt64Array that never blocks the event loop: a
            /// batch that fits what is left of the current millisecond (and any monotonic
            /// batch) is filled at once; one that must wait is filled on the libuv thread pool.
            #[napi(ts_args_type = "count: number | bigint", ts_return_type = "Promise<BigInt64Array>")]
            pub fn next_ids_async<'env>(&self, env: &'env Env, count: Unknown<'_>) -> Result<Unknown<'env>> {
                js_value(env, |raw| ids_async(raw, &self.cell, Val::of(*env, &count)))
            }

            /// Decode an ID (bigint or decimal string) with this generator's layout and epoch:
            /// `timestampMs`, `nodeId`, `sequence`, and `time`, the same instant as a `Date`
            /// (`gen.decode(id).time.toISOString()` for a log line).
            #[napi(js_name = "decode", ts_args_type = "id: bigint | string", ts_return_type = "DecodedId")]
            pub fn decode_id<'env>(&self, env: &'env Env, id: Unknown<'_>) -> Result<Unknown<'env>> {
                js_value(env, |raw| decoded(raw, self.cell.g.decode(id_arg(Val::of(*env, &id))?)?))
            }

            /// Decode an ID (bigint or decimal string) with the default layout and epoch.
            #[napi(js_name = "decode", ts_args_type = "id: bigint | string", ts_return_type = "DecodedId")]
            pub fn decode_default<'env>(env: &'env Env, id: Unknown<'_>) -> Result<Unknown<'env>> {
                js_value(env, |raw| decoded(raw, polyflake::decode(id_arg(Val::of(*env, &id))?)?))
            }

            /// Block the calling thread until the restart guard (a lease's, or a fixed node id's
            /// mark on this host) has passed, at most `timeoutMs` (default
            /// `DEFAULT_MAX_GUARD_WAIT_MS`); at once when nothing needs waiting for.
            /// Throws `LEASE_NOT_READY` at the deadline, `LEASE_LOST` or `GENERATOR_CLOSED` at
            /// once; a lease with `heal` is waited through its heal (its new slot's guard too).
            /// Meant for startup.
            #[napi(ts_args_type = "timeoutMs?: number | bigint")]
            pub fn wait_ready(&self, env: Env, timeout_ms: Option<Unknown<'_>>) -> Result<()> {
                guard(env.raw(), || {
                    let ms = match timeout_ms {
                        Some(t) => narrow(Val::of(env, &t), "timeoutMs")?,
                        None => polyflake::DEFAULT_MAX_GUARD_WAIT_MS,
                    };
                    let wait = Duration::from_millis(ms);
                    Ok(waiting(env.raw(), || self.cell.g.wait_ready(wait))?)
                })
            }

            /// Give the generator up now: a leased slot is freed at once (a successor waits only
            /// past the last millisecond really issued). Every later call but `decode`, `health`
            /// and the getters throws `GENERATOR_CLOSED`; closing twice is fine. Without it the
            /// slot is freed when the generator is collected or the process exits.
            #[napi]
            pub fn close(&self) {
                self.cell.g.close()
            }

            /// True once `close()` was called.
            #[napi(getter)]
            pub fn closed(&self) -> bool {
                self.cell.g.is_closed()
            }

            /// This generator's node id (with a lease, the slot it holds).
            #[napi(getter)]
            pub fn node_id(&self) -> u32 {
                self.cell.g.node_id()
            }

            /// This generator's epoch, Unix milliseconds.
            #[napi(getter)]
            pub fn epoch_ms(&self) -> i64 {
                self.cell.g.epoch_ms()
            }

            /// The bound on a forward clock step in ms (`null`: the check is off).
            #[napi(getter)]
            pub fn max_forward_step_ms(&self) -> Option<f64> {
                self.cell.g.max_forward_step_ms().map(|ms| ms as f64)
            }

            /// How long a stepped-ahead clock must hold its offset to be believed, in ms.
            #[napi(getter)]
            pub fn forward_confirm_ms(&self) -> f64 {
                self.cell.g.forward_confirm_ms() as f64
            }

            /// The clock reading in effect: `'precise'`, or `'coarse'` where it was asked for and
            /// the system's coarse clock is fine enough (`health().clockNote` says why not).
            #[napi(getter, ts_return_type = "ClockSourceName")]
            pub fn clock_source(&self) -> &'static str {
                self.cell.g.clock_source().name()
            }

            /// This generator's layout.
            #[napi(getter)]
            pub fn layout(&self) -> Layout {
                Layout { inner: self.cell.g.layout() }
            }
        }
    };
}

generator_class! {
    #[doc = " Strict mode: an issued timestamp never exceeds the wall clock. A rewind up to `maxWaitMs`"]
    #[doc = " (default 5) is waited out, a larger one throws `CLOCK_MOVED_BACKWARDS`; a spent"]
    #[doc = " millisecond sleeps to the next one; a forward clock step is not issued from"]
    #[doc = " (`CLOCK_JUMPED_AHEAD`). IDs are bigints; use `nextIdString()` or `idsToStrings()` for JSON."]
    Snowflake, Mode::Strict, ret = "Snowflake",
    new = "options: SnowflakeOptions & SourceOptions & HostOptions",
    file = "options: FileLeaseOptions & SourceOptions", etcd = "options: EtcdOptions & SourceOptions",
    zk = "options: ZooKeeperOptions & SourceOptions",
    env = "variable: string, options?: SourceOptions & HostOptions",
    host = "hostname?: string | null, options?: SourceOptions & HostOptions",
    ipv4 = "address: string, prefixLen: number | bigint, options?: SourceOptions & HostOptions"
}

generator_class! {
    #[doc = " Monotonic mode: never waits on the clock, never duplicates. The wall clock only floors a"]
    #[doc = " logical clock that borrows from the next millisecond on a rewind or a burst (and stays on"]
    #[doc = " trusted time through a forward step), so a decoded timestamp is an upper bound on when the"]
    #[doc = " ID was made. `maxLeadMs` bounds how far ahead it may run (default 5000 ms; `null`:"]
    #[doc = " unbounded); a fixed node id's restart guard is borrowed over up to it and waited for beyond."]
    MonotonicSnowflake, Mode::Monotonic, ret = "MonotonicSnowflake",
    new = "options: SnowflakeOptions & SourceOptions & LeadOptions & HostOptions",
    file = "options: FileLeaseOptions & SourceOptions & LeadOptions",
    etcd = "options: EtcdOptions & SourceOptions & LeadOptions",
    zk = "options: ZooKeeperOptions & SourceOptions & LeadOptions",
    env = "variable: string, options?: SourceOptions & LeadOptions & HostOptions",
    host = "hostname?: string | null, options?: SourceOptions & LeadOptions & HostOptions",
    ipv4 = "address: string, prefixLen: number | bigint, options?: SourceOptions & LeadOptions & HostOptions"
}
