//! UUIDv7 and ULID: `Uuid7Generator` and `UlidGenerator`, ONE class implementation
//! (`format_class!`) over the core's two generators (generic over the core's [`Issuer`], with
//! [`Format`] below for the rest), the text helpers, and the module-level `uuid7()` / `ulid()`
//! on process-wide strict generators made on first use. IDs are strings by default (the core's
//! canonical text), 16 bytes big-endian in a `Buffer` on request; batches are one `Buffer` of 16
//! bytes per ID, or an array of strings. Every rule (layout, counters, randomness, text) is the
//! core's.

use crate::error::{guard, js_value, Result};
use crate::fast::{self, install, method, Body, Cell, Out, Raw, Reads, Shared};
use crate::interrupt::waiting;
use crate::issue::{self, bodies, issue_methods, js};
use crate::js::{count_arg, string_arg, Fail, Ty, Val};
use crate::metrics::samples;
use crate::settings::{self, only_keys, FResult};
use napi::bindgen_prelude::{Env, Object, This, Unknown};
use napi::{sys, JsValue};
use polyflake::{Issuer, Mode, TimeIdBuilder};
use std::ffi::CStr;
use std::ptr;
use std::sync::{Arc, OnceLock};

/// What the two 128-bit classes need beyond the core's [`Issuer`]: the class name, the
/// builder call, the timestamp, and the process-wide generator.
pub(crate) trait Format: Issuer<Id = u128> + Sized + 'static {
    /// The JS class, for messages.
    const CLASS: &'static str;
    /// The generator these settings make.
    fn build(b: TimeIdBuilder) -> polyflake::Result<Self>;
    /// An ID's Unix ms.
    fn timestamp_ms(id: u128) -> polyflake::Result<i64>;
    /// The process-wide strict generator of `uuid7()` / `ulid()`, made on first use.
    fn global() -> &'static OnceLock<Self>;
}

impl Format for polyflake::Uuid7Generator {
    const CLASS: &'static str = "Uuid7Generator";
    fn build(b: TimeIdBuilder) -> polyflake::Result<Self> {
        b.build_uuid7()
    }
    fn timestamp_ms(id: u128) -> polyflake::Result<i64> {
        polyflake::uuid7_timestamp_ms(id)
    }
    fn global() -> &'static OnceLock<Self> {
        &UUID7
    }
}

impl Format for polyflake::UlidGenerator {
    const CLASS: &'static str = "UlidGenerator";
    fn build(b: TimeIdBuilder) -> polyflake::Result<Self> {
        b.build_ulid()
    }
    fn timestamp_ms(id: u128) -> polyflake::Result<i64> {
        Ok(polyflake::ulid_timestamp_ms(id))
    }
    fn global() -> &'static OnceLock<Self> {
        &ULID
    }
}

/// `new Uuid7Generator(options?)` / `new UlidGenerator(options?)`: `mode` (`'strict'` or
/// `'monotonic'`) and the shared settings; no node id, layout or epoch.
fn make<F: Format>(env: Env, options: Val) -> FResult<Cell<F>> {
    let mut b = TimeIdBuilder::new();
    let mut reads = Reads::System;
    if !options.is_undefined()? {
        let what = format!("new {}", F::CLASS);
        settings::object(options, &what)?;
        let mode = match options.get_opt("mode")? {
            Some(v) => Some(Mode::from_name(&string_arg(v, "mode")?)?),
            None => None,
        };
        let keys = settings::keys(mode.unwrap_or(Mode::Strict));
        only_keys(options, &what, &[&["mode"][..], &keys].concat())?;
        let s = settings::read(env, options, mode.unwrap_or(Mode::Strict), false)?;
        reads = s.reads;
        b = b.settings(s.core);
    }
    Ok(Cell {
        g: F::build(b)?,
        reads,
    })
}

/// An ID argument: its text, or 16 bytes big-endian in a Uint8Array (a Buffer).
fn id_arg<F: Format>(v: Val) -> FResult<u128> {
    if v.ty()? == Ty::String {
        return Ok(F::parse_id(&v.string()?)?);
    }
    match v.bytes()? {
        Some(b) => match <[u8; 16]>::try_from(b) {
            Ok(b) => Ok(u128::from_be_bytes(b)),
            Err(_) => Err(Fail::Range(format!(
                "an ID in bytes is 16 bytes, got {}",
                b.len()
            ))),
        },
        None => Err(Fail::Type(format!(
            "an ID must be its text or 16 bytes (a Buffer or Uint8Array), got {}",
            v.describe()
        ))),
    }
}

fn next_id_buffer<F: Format>(env: sys::napi_env, c: &Shared<F>, _out: Out) -> Raw {
    Ok(Val::bytes_of(env, &[waiting(env, || c.g.next_id())?])?.raw)
}

/// A batch of `count` from `c`, into `out`'s shape.
fn batch<F: Format>(
    env: sys::napi_env,
    c: &Shared<F>,
    count: Val,
    out: fn(sys::napi_env, &[u128]) -> FResult<Val>,
) -> FResult<Val> {
    let mut ids = polyflake::batch_buffer::<u128>(count_arg(count)?)?;
    waiting(env, || c.g.next_ids(&mut ids))?;
    out(env, &ids)
}

/// IDs as an array of strings.
fn texts<F: Format>(env: sys::napi_env, ids: &[u128]) -> FResult<Val> {
    Val::array(env, ids.iter().map(|id| js::<F>(env, *id)))
}

/// `nextIdsAsync(count)`: filled at once with the core's all-or-nothing `try_*` batch, or on the
/// pool when it must wait.
fn ids_async<F: Format>(env: sys::napi_env, c: &Shared<F>, count: Val) -> FResult<Val> {
    // A bad count rejects too: an async form never throws at the call.
    let n = match count_arg(count) {
        Ok(n) => n,
        Err(fail) => return issue::settled(env, Err(fail)),
    };
    let fast = || {
        let mut ids = polyflake::batch_buffer::<u128>(n)?;
        let done = c.g.try_next_ids(&mut ids)?;
        done.then(|| Val::bytes_of(env, &ids)).transpose()
    };
    let work = move |g: &F| {
        let mut ids = polyflake::batch_buffer::<u128>(n)?;
        g.next_ids(&mut ids).map(|()| ids)
    };
    let out = |env, ids: Vec<u128>| Val::bytes_of(env, &ids);
    issue::promise(env, c, fast, work, out)
}

/// Both classes, from one implementation over [`Format`].
macro_rules! format_class {
    ($(#[doc = $doc:tt])* $name:ident, $core:ty) => {
        $(#[doc = $doc])*
        #[napi]
        pub struct $name {
            cell: Shared<$core>,
        }

        issue_methods!($name, "string", "string | null", "Promise<string>");

        #[napi]
        impl $name {
            /// A generator with explicit settings (all optional): `mode` (`'strict'`, the
            /// default, or `'monotonic'`), `maxWaitMs`, `maxLeadMs` (monotonic),
            /// `maxForwardStepMs`, `forwardConfirmMs`, `maxClockErrorMs`, `clock`, `clockSource`.
            #[napi(constructor, ts_args_type = "options?: TimeIdOptions")]
            pub fn new(env: Env, this: This<'_>, options: Option<Unknown<'_>>) -> Result<Self> {
                guard(env.raw(), || {
                    let cell = Arc::new(make::<$core>(env, Val::opt(env, &options)?)?);
                    let extra = [(c"nextIdBuffer", next_id_buffer as Body<$core>)];
                    install(env.raw(), this.object.raw(), &cell, bodies(), &extra)?;
                    Ok($name { cell })
                })
            }

            /// One ID as 16 bytes, big-endian (the byte order a database's `uuid` sorts by).
            #[napi(ts_return_type = "Buffer")]
            pub fn next_id_buffer<'env>(&self, env: &'env Env) -> Result<Unknown<'env>> {
                method(env, &self.cell, next_id_buffer)
            }

            /// `count` increasing IDs in one Buffer, 16 bytes big-endian each (a failed call
            /// issues none). Strict mode blocks through every millisecond it fills; a Worker's
            /// `terminate()` or `process.exit()` cuts the wait within 20 ms.
            #[napi(ts_args_type = "count: number | bigint", ts_return_type = "Buffer")]
            pub fn next_ids<'env>(&self, env: &'env Env, count: Unknown<'_>) -> Result<Unknown<'env>> {
                js_value(env, |raw| batch(raw, &self.cell, Val::of(*env, &count), Val::bytes_of))
            }

            /// `count` increasing IDs as an array of strings.
            #[napi(ts_args_type = "count: number | bigint", ts_return_type = "Array<string>")]
            pub fn next_id_strings<'env>(&self, env: &'env Env, count: Unknown<'_>) -> Result<Unknown<'env>> {
                js_value(env, |raw| batch(raw, &self.cell, Val::of(*env, &count), texts::<$core>))
            }

            /// `nextIds(count)` as a Promise that never blocks the event loop: a batch that fits
            /// what is left of the current millisecond (and any monotonic batch) is filled at
            /// once; one that must wait is filled on the libuv thread pool.
            #[napi(ts_args_type = "count: number | bigint", ts_return_type = "Promise<Buffer>")]
            pub fn next_ids_async<'env>(&self, env: &'env Env, count: Unknown<'_>) -> Result<Unknown<'env>> {
                js_value(env, |raw| ids_async(raw, &self.cell, Val::of(*env, &count)))
            }

            /// Stop issuing for good: later calls throw `GENERATOR_CLOSED`.
            #[napi]
            pub fn close(&self) {
                self.cell.g.close()
            }

            /// `'strict'` or `'monotonic'`.
            #[napi(getter, ts_return_type = "GeneratorMode")]
            pub fn mode(&self) -> &'static str {
                self.cell.g.mode().name()
            }
        }
    };
}

format_class!(
    #[doc = " UUIDs version 7 (RFC 9562): 48 bits of Unix ms, 12 bits of sub-millisecond time and a"]
    #[doc = " counter, then 59 random bits (from the OS), with the Snowflake generators' rewind guard:"]
    #[doc = " strict mode (the default) waits out or refuses a rewind, monotonic mode borrows ahead. A"]
    #[doc = " generator's UUIDs strictly increase, as text and as bytes."]
    Uuid7Generator,
    polyflake::Uuid7Generator
);

format_class!(
    #[doc = " ULIDs: 48 bits of Unix ms and 80 bits that start at random each millisecond and grow by one"]
    #[doc = " per ULID within it (the spec's monotonic variant), as 26 characters of Crockford base32,"]
    #[doc = " with the Snowflake generators' rewind guard (strict by default, or monotonic)."]
    UlidGenerator,
    polyflake::UlidGenerator
);

/// The process-wide strict generators of `uuid7()` and `ulid()`, made on first use.
static UUID7: OnceLock<polyflake::Uuid7Generator> = OnceLock::new();
static ULID: OnceLock<polyflake::UlidGenerator> = OnceLock::new();

/// The body of `uuid7()` / `ulid()`: an ID of `F`'s process-wide generator (two threads may
/// both build one; the first stored serves every call), on the system clock.
fn next_shared<F: Format>(env: sys::napi_env) -> Raw {
    let g = match F::global().get() {
        Some(g) => g,
        None => {
            let made = F::build(TimeIdBuilder::new())?;
            F::global().get_or_init(|| made)
        }
    };
    Ok(js::<F>(env, issue::one(env, g, Reads::System)?)?.raw)
}

unsafe extern "C" fn shared_callback<F: Format>(
    env: sys::napi_env,
    _info: sys::napi_callback_info,
) -> sys::napi_value {
    fast::run(env, || next_shared::<F>(env))
}

/// `uuid7` and `ulid` as plain Node-API functions, set over napi-rs's at module load: its
/// function wrapper cost about as much as the UUID (758 against 428 ns for the same body bound
/// to a generator, in one benchmark run). index.d.ts still comes from the `#[napi]` functions.
#[napi(module_exports)]
pub fn bind_module_functions(env: Env, exports: Object<'_>) -> Result<()> {
    let raw = env.raw();
    guard(raw, || {
        let exports = Val::new(raw, exports.raw());
        let functions: [(&CStr, sys::napi_callback); 2] = [
            (c"uuid7", Some(shared_callback::<polyflake::Uuid7Generator>)),
            (c"ulid", Some(shared_callback::<polyflake::UlidGenerator>)),
        ];
        for (name, callback) in functions {
            let f = fast::function(raw, name, callback, ptr::null_mut())?;
            exports.set(name.to_str().unwrap_or_default(), Val::new(raw, f))?;
        }
        Ok(())
    })
}

/// The module functions of one format, each with its docs: one ID (the napi-rs form, replaced at
/// load by `bind_module_functions`), text to bytes, canonical text, and the timestamp.
macro_rules! format_functions {
    ($core:ty, $(#[doc = $d1:tt])* $next:ident, $(#[doc = $d2:tt])* $parse:ident,
     $(#[doc = $d3:tt])* $format:ident, $(#[doc = $d4:tt])* $ts:ident,
     $(#[doc = $d5:tt])* $time:ident) => {
        $(#[doc = $d1])*
        #[napi(ts_return_type = "string")]
        pub fn $next(env: Env) -> Result<Unknown<'static>> {
            let raw = env.raw();
            guard(raw, || Ok(Val::new(raw, next_shared::<$core>(raw)?).unknown()))
        }

        $(#[doc = $d2])*
        #[napi(ts_args_type = "text: string", ts_return_type = "Buffer")]
        pub fn $parse(env: Env, text: Unknown<'_>) -> Result<Unknown<'static>> {
            let raw = env.raw();
            guard(raw, || {
                let id = <$core>::parse_id(&string_arg(Val::of(env, &text), "text")?)?;
                Ok(Val::bytes_of(raw, &[id])?.unknown())
            })
        }

        $(#[doc = $d3])*
        #[napi(ts_args_type = "id: Uint8Array | string")]
        pub fn $format(env: Env, id: Unknown<'_>) -> Result<String> {
            guard(env.raw(), || Ok(<$core>::format_id(id_arg::<$core>(Val::of(env, &id))?)))
        }

        $(#[doc = $d4])*
        #[napi(ts_args_type = "id: string | Uint8Array")]
        pub fn $ts(env: Env, id: Unknown<'_>) -> Result<f64> {
            // 48 bits: exact as a Number.
            guard(env.raw(), || Ok(<$core>::timestamp_ms(id_arg::<$core>(Val::of(env, &id))?)? as f64))
        }

        $(#[doc = $d5])*
        #[napi(ts_args_type = "id: string | Uint8Array", ts_return_type = "Date")]
        pub fn $time<'env>(env: &'env Env, id: Unknown<'_>) -> Result<Unknown<'env>> {
            js_value(env, |raw| Val::date(raw, <$core>::timestamp_ms(id_arg::<$core>(Val::of(*env, &id))?)?))
        }
    };
}

format_functions! {
    polyflake::Uuid7Generator,
    #[doc = " One UUIDv7 as text, from a process-wide strict generator made on first use (shared by"]
    #[doc = " every worker thread). For explicit settings, Buffers or batches use a `Uuid7Generator`."]
    uuid7,
    #[doc = " A UUID's text (36 characters, hex digits in any case) as 16 bytes, big-endian."]
    parse_uuid,
    #[doc = " A UUID (16 bytes, or text in any case) as its canonical text: lower-case, hyphenated."]
    format_uuid,
    #[doc = " The Unix ms of a UUID version 7 (text or 16 bytes); `INVALID_ID` unless it is version 7."]
    uuid7_timestamp_ms,
    #[doc = " The time of a UUID version 7 (text or 16 bytes) as a `Date` (exact: both hold whole ms)."]
    uuid7_time
}

format_functions! {
    polyflake::UlidGenerator,
    #[doc = " One ULID as text, from a process-wide strict generator made on first use."]
    ulid,
    #[doc = " A ULID's text (26 characters of Crockford base32, any case) as 16 bytes, big-endian."]
    parse_ulid,
    #[doc = " A ULID (16 bytes, or text in any case) as its canonical text: upper-case Crockford base32."]
    format_ulid,
    #[doc = " The Unix ms of a ULID (text or 16 bytes)."]
    ulid_timestamp_ms,
    #[doc = " The time of a ULID (text or 16 bytes) as a `Date` (exact: both hold whole ms)."]
    ulid_time
}
