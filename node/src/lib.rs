//! # polyflake for Node
//!
//! The napi-rs binding of the polyflake core. It converts types and calls the core, nothing
//! more: every rule about IDs lives in `core/`. IDs cross as `bigint` (never a Number, which
//! rounds above 2^53) or decimal strings; UUIDs and ULIDs as text or 16 bytes.
//!
//! Modules, each using only those listed before it (named as the core names the same concern):
//! `js` (the value layer and `Fail`), `error` (throwing), `fast` (the generator cell and the
//! bound functions), `interrupt` (waits cut when the environment terminates), `issue` (issuing
//! through the core's `Issuer`, sync and async), `clock`, `settings`, `layout`, `metrics`,
//! `generator` (the two Snowflake classes), `timeid` (the 128-bit class and its two subclasses).
//!
//! ## Decisions
//!
//! - **One class implementation, two JS classes.** JavaScript names the mode by the class and
//!   napi-rs 3 has no class inheritance, so one macro (`generator_class!`) holds the whole class
//!   and is declared twice with its mode and TypeScript signatures. The 128-bit formats are ONE
//!   class, `TimeIdGenerator`, whose calls are written once over the core's fixed formats and
//!   picked at construction (`timeid.rs`); `Uuid7Generator` and `UlidGenerator` are its JS
//!   subclasses (`class extends`), made at load and typed in types.d.ts. What the classes share
//!   is written once: `issue.rs` (`JsId`, the bound `nextId`/`tryNextId`/`nextIdAsync`), every
//!   raw Node-API call through `napi_call!`/`napi_make!` (the status checked, the call named in
//!   the error, one safety statement), `clock_steps!`. The settings every generator takes are
//!   read once (`settings.rs`) into one core `Settings`.
//! - **The generator cell's one home is `fast.rs`** (`Arc`, since async waits run on the libuv
//!   pool); the bound `nextId` is a plain Node-API function whose data is that cell (napi-rs's
//!   method path cost several times the ID). No closed flag or `Option` around the generator:
//!   `close()` is the core's, so a closed generator is still there, `health()` says `'closed'`,
//!   and every call gets `GENERATOR_CLOSED`.
//! - **Errors carry the core error's data** (`Error::fields()`) as camelCase properties besides
//!   `code`; a field named like a property every JS error has (`name`, `message`, `stack`,
//!   `code`, `cause`) takes its kind's name as a prefix (`err.invalidArgumentName`), so
//!   `err.name` stays `'RangeError'`. Configuration mistakes are `RangeError`s, the rest `Error`s.
//! - **Numbers out are exact**: an integer from the core is a Number when a Number holds it
//!   exactly and a bigint otherwise; a `Null` field is left out (`undefined`).
//! - **Health is the core's `Health::fields()`** walked into an object, names camelCased by one
//!   function. Its types and the option objects' are written in TypeScript in `node/types.d.ts`,
//!   which `napi build` puts first in `index.d.ts` (`napi.dtsHeaderFile`); `index.d.ts` repeats it
//!   because the npm stage ships `index.d.ts` alone. A test compares `health()`'s keys with the
//!   declared ones.
//! - **Defaults are the core's**, exported as `DEFAULT_*` constants; an option left out is never
//!   set on the builder. `maxForwardStepMs: null` turns the check off (`undefined` keeps it).
//!   `clock` takes `'precise'` or `'coarse'` by name (the core's `ClockSource::from_name`, so any
//!   other string is its `RangeError`) besides a test clock or a function; giving a name and
//!   `clockSource` too is refused. `waitReady(timeoutMs?)` blocks (it is for startup, right after
//!   taking a slot).
//! - **The async forms settle at once on the core's `try_*` path** and wait on the libuv pool
//!   otherwise. `nextIdAsync` is a small JavaScript closure per instance (compiled once) around
//!   the bound `tryNextId`: a Node-API promise cost about 3x the ID, V8's `Promise.resolve` a
//!   fraction of it. With a JS clock function the wait stays on the JS thread (only it may call
//!   the function).
//! - **128-bit IDs** are the core's text by default, 16 big-endian bytes in a `Buffer` on
//!   request; a batch is ONE Buffer of `16 * n` bytes or an array of strings. `uuid7()` and
//!   `ulid()` use process-wide strict generators shared by worker threads.
//! - **Metrics come from the core's table** (`healthMetrics()`, `healthSamples()`);
//!   `polyflake/prometheus` (plain JS) makes prom-client metrics from them, the first taking one
//!   health snapshot per scrape for all. prom-client is an optional peer dependency.
//! - **`fromZooKeeper` is shaped like `fromEtcd`**: an option left `undefined` stays `None`, so
//!   the core's environment fallback applies; a string ensemble is split by the core. The tests
//!   run under `tests/stores/with_zookeeper.sh` and fail rather than skip without its server.
//! - **`package.json` has `exports`** (`.`, `./prometheus`, `./package.json`), so
//!   `require('polyflake/prometheus')` and the Express example's self-reference work.

#![deny(missing_docs)]

#[macro_use]
extern crate napi_derive;

mod clock;
mod error;
mod fast;
mod generator;
mod interrupt;
mod issue;
mod js;
mod layout;
mod metrics;
mod settings;
mod timeid;

use crate::error::{guard, Result};
use crate::js::{id_arg, Fail, Ty, Val};
use napi::bindgen_prelude::{Env, Unknown};

pub use clock::{ManualClock, ScriptedClock};
pub use generator::{MonotonicSnowflake, Snowflake};
pub use layout::{Layout, LayoutBits, LayoutPreset};
pub use metrics::health_metrics;
pub use timeid::{
    bind_module_functions, format_ulid, format_uuid, parse_ulid, parse_uuid, ulid, ulid_time,
    ulid_timestamp_ms, uuid7, uuid7_time, uuid7_timestamp_ms, FixedFormatClass, TimeIdGenerator,
    UlidGenerator, Uuid7Generator,
};

/// The version of the polyflake core inside this addon.
#[napi]
pub const CORE_VERSION: &str = polyflake::VERSION;

/// The default epoch, 2024-01-01T00:00:00Z, in Unix milliseconds.
#[napi]
pub const DEFAULT_EPOCH_MS: i64 = polyflake::DEFAULT_EPOCH_MS;

/// The largest batch one `nextIds` call may ask for.
#[napi]
pub const MAX_BATCH: u32 = polyflake::MAX_BATCH as u32;

/// The default `maxForwardStepMs`: a larger forward step of the wall clock is not issued from.
#[napi]
pub const DEFAULT_MAX_FORWARD_STEP_MS: f64 = polyflake::DEFAULT_MAX_FORWARD_STEP_MS as f64;

/// The default `forwardConfirmMs`: how long a stepped-ahead clock must hold to be believed.
#[napi]
pub const DEFAULT_FORWARD_CONFIRM_MS: f64 = polyflake::DEFAULT_FORWARD_CONFIRM_MS as f64;

/// The default `reserveMs` of both lease kinds (and the restart guard of a new slot), and how
/// far ahead of the clock a fixed node id's mark on the host is kept: the longest a successor of
/// a killed holder waits.
#[napi]
pub const DEFAULT_RESERVE_MS: f64 = polyflake::DEFAULT_RESERVE_MS as f64;

/// How long a call waits for a fixed node id's restart guard before it throws
/// `LEASE_NOT_READY` (two reserves: one for a killed holder, one more for a clock stepped back).
#[napi]
pub const DEFAULT_MAX_RESTART_WAIT_MS: f64 = polyflake::DEFAULT_MAX_RESTART_WAIT_MS as f64;

/// The default `maxLeadMs` of the monotonic generators (`null` set explicitly: unbounded).
#[napi]
pub const DEFAULT_MAX_LEAD_MS: f64 = polyflake::DEFAULT_MAX_LEAD_MS as f64;

/// The default `maxGuardWaitMs` of both lease kinds, and `waitReady`'s default timeout.
#[napi]
pub const DEFAULT_MAX_GUARD_WAIT_MS: f64 = polyflake::DEFAULT_MAX_GUARD_WAIT_MS as f64;

/// IDs as decimal strings, for JSON (`JSON.stringify` throws on a bigint, and a Number would
/// round): takes the BigInt64Array from `nextIds`, or an array of bigints or decimal strings.
/// Every element is checked to be a valid ID.
#[napi(ts_args_type = "ids: BigInt64Array | Array<bigint | string>")]
pub fn ids_to_strings(env: Env, ids: Unknown<'_>) -> Result<Vec<String>> {
    guard(env.raw(), || {
        let v = Val::of(env, &ids);
        if let Some(values) = v.bigint64_array() {
            let id = |x: &i64| polyflake::id_from_i128(i128::from(*x));
            return Ok(values
                .iter()
                .map(|x| Ok(polyflake::format_id(id(x)?)))
                .collect::<polyflake::Result<_>>()?);
        }
        if v.ty()? == Ty::Object && v.is_array()? {
            let ids = v.elements()?.into_iter().map(id_arg);
            return ids.map(|id| Ok(polyflake::format_id(id?))).collect();
        }
        Err(Fail::Type(format!(
            "idsToStrings takes a BigInt64Array or an array of bigints, got {}",
            v.describe()
        )))
    })
}

/// One ID (bigint or decimal string) as a decimal string, checked to be a valid ID.
#[napi(ts_args_type = "id: bigint | string")]
pub fn id_to_string(env: Env, id: Unknown<'_>) -> Result<String> {
    guard(env.raw(), || {
        Ok(polyflake::format_id(id_arg(Val::of(env, &id))?))
    })
}

/// True when `e` is an error this package throws or rejects with: an `Error` whose `code` is a
/// `PolyflakeErrorCode` (then `e.code` narrows to that union in TypeScript). Never throws.
#[napi(ts_args_type = "e: unknown", ts_return_type = "e is PolyflakeError")]
pub fn is_polyflake_error(env: Env, e: Unknown<'_>) -> Result<bool> {
    guard(env.raw(), || error::is_polyflake_error(Val::of(env, &e)))
}

/// The core's lists of names that types.d.ts spells out as TypeScript unions, for
/// node/test/types.test.js to compare (not part of the API: left out of index.d.ts).
#[napi(js_name = "_typeNames", skip_typescript)]
pub fn type_names(env: Env) -> Result<Unknown<'static>> {
    use polyflake::{
        ClockSource, ClockSyncState, HealthStatus, LeaseKind, LeasePhase, Mode, NodeSourceKind,
        RestartGuard,
    };
    let lists: [(&str, Vec<&str>); 9] = [
        ("errorCodes", error::codes().collect()),
        (
            "healthStatuses",
            HealthStatus::ALL.map(HealthStatus::name).to_vec(),
        ),
        (
            "sources",
            NodeSourceKind::ALL.map(NodeSourceKind::name).to_vec(),
        ),
        ("modes", Mode::ALL.map(Mode::name).to_vec()),
        (
            "clockSources",
            ClockSource::ALL.map(ClockSource::name).to_vec(),
        ),
        ("leaseKinds", LeaseKind::ALL.map(LeaseKind::name).to_vec()),
        (
            "leasePhases",
            LeasePhase::ALL.map(LeasePhase::name).to_vec(),
        ),
        (
            "clockSyncStates",
            ClockSyncState::ALL.map(ClockSyncState::name).to_vec(),
        ),
        (
            "restartGuards",
            RestartGuard::ALL.map(RestartGuard::name).to_vec(),
        ),
    ];
    let raw = env.raw();
    guard(raw, || {
        let out = Val::object(raw)?;
        for (key, names) in lists {
            out.set(
                key,
                Val::array(raw, names.into_iter().map(|n| Val::text(raw, n)))?,
            )?;
        }
        Ok(out.unknown())
    })
}

/// Parse an ID from JSON: a decimal string (digits only, below 2^63) or a bigint, to a bigint.
#[napi(ts_args_type = "id: string | bigint")]
pub fn parse_id(env: Env, id: Unknown<'_>) -> Result<u64> {
    guard(env.raw(), || id_arg(Val::of(env, &id)))
}
