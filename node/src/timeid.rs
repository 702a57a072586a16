//! UUIDv7 and ULID: ONE class, `TimeIdGenerator` (`format: 'uuid7' | 'ulid'`), over the core's
//! generator of that format; `Uuid7Generator` and `UlidGenerator` are its JS subclasses of a
//! fixed format, made at module load (`class extends`, no native code of their own: napi-rs 3
//! has no native inheritance). Then the text helpers, and the module-level `uuid7()` / `ulid()`
//! on process-wide strict generators made on first use. IDs are strings by default (the core's
//! canonical text), 16 bytes big-endian in a `Buffer` on request; batches are one `Buffer` of 16
//! bytes per ID, or an array of strings. Every rule (layout, counters, randomness, text) is the
//! core's.

use crate::error::{guard, js_value, Result};
use crate::fast::{self, install, Body, Cell, Out, Raw, Reads, Shared};
use crate::interrupt::waiting;
use crate::issue::{self, bodies};
use crate::js::{count_arg, napi_call, napi_make, string_arg, Fail, Ty, Val};
use crate::metrics::samples;
use crate::settings::{self, only_keys, FResult};
use napi::bindgen_prelude::{Env, Object, This, ToNapiValue, Unknown};
use napi::{sys, JsValue};
use polyflake::{FixedFormat, Issuer, Mode, TimeFormat, TimeIdBuilder, Ulid, Uuid7};
use std::ffi::CStr;
use std::ptr;
use std::sync::{Arc, OnceLock};

/// The core generator of a fixed format `F`, as the class holds it.
type Fixed<F> = Shared<polyflake::TimeIdGenerator<F>>;

/// The prototype methods' bodies that issue (the bound functions of `fast.rs` run the same).
#[derive(Clone, Copy)]
enum Call {
    Next,
    TryNext,
    Async,
    Buffer,
}

/// The shapes of a batch.
#[derive(Clone, Copy)]
enum Batch {
    Bytes,
    Strings,
    Async,
}

/// What the class does with its generator, written once over the fixed format (the impl for
/// [`Fixed`]) and chosen when it is made: the bound `nextId` and friends are that impl's own
/// bodies, so they dispatch on nothing; the prototype methods reach them through this trait.
trait Calls: Send + Sync {
    /// An issuing body, as a prototype method runs it.
    fn call(&self, env: sys::napi_env, call: Call) -> Raw;
    /// A batch of `count`.
    fn batch(&self, env: sys::napi_env, count: Val, batch: Batch) -> FResult<Val>;
    /// The core generator (health, close, mode).
    fn core(&self) -> &dyn Issuer<Id = u128>;
    /// Its format.
    fn format(&self) -> TimeFormat;
}

impl<F: FixedFormat> Calls for Fixed<F> {
    fn call(&self, env: sys::napi_env, call: Call) -> Raw {
        let body: Body<polyflake::TimeIdGenerator<F>> = match call {
            Call::Next => issue::next_id,
            Call::TryNext => issue::try_next_id,
            Call::Async => issue::next_id_async,
            Call::Buffer => next_id_buffer,
        };
        body(env, self, Out::RETURN)
    }

    fn batch(&self, env: sys::napi_env, count: Val, batch: Batch) -> FResult<Val> {
        match batch {
            Batch::Bytes => ids(env, self, count, Val::bytes_of),
            Batch::Strings => ids(env, self, count, texts::<F>),
            Batch::Async => ids_async(env, self, count),
        }
    }

    fn core(&self) -> &dyn Issuer<Id = u128> {
        &self.g
    }

    fn format(&self) -> TimeFormat {
        F::FORMAT
    }
}

/// The format named by a JS value (`what` names it in the error).
fn format_arg(v: Val, what: &'static str) -> FResult<TimeFormat> {
    Ok(TimeFormat::from_name(&string_arg(v, what)?)?)
}

/// The generator `options` ask for (`mode`, `format`, the shared settings), its format `fixed`
/// when a subclass gives one, as [`Calls`] with its bound functions installed on `this`.
fn make(env: Env, this: sys::napi_value, options: Val, fixed: Val) -> FResult<Box<dyn Calls>> {
    let fixed = match fixed.ty()? {
        Ty::Undefined => None,
        _ => Some(format_arg(fixed, "format")?),
    };
    let class = match fixed {
        Some(TimeFormat::Uuid7) => "Uuid7Generator",
        Some(TimeFormat::Ulid) => "UlidGenerator",
        None => "TimeIdGenerator",
    };
    let mut b = TimeIdBuilder::new();
    let (mut reads, mut format) = (Reads::System, fixed.unwrap_or(TimeFormat::Uuid7));
    if !options.is_undefined()? {
        let what = format!("new {class}");
        settings::object(options, &what)?;
        let mode = match options.get_opt("mode")? {
            Some(v) => Some(Mode::from_name(&string_arg(v, "mode")?)?),
            None => None,
        };
        let keys = settings::keys(mode.unwrap_or(Mode::Strict));
        only_keys(options, &what, &[&["mode", "format"][..], &keys].concat())?;
        if let Some(v) = options.get_opt("format")? {
            match (format_arg(v, "format")?, fixed) {
                (asked, Some(own)) if asked != own => {
                    return Err(Fail::Type(format!(
                        "{what} issues {own} only: new TimeIdGenerator({{ format: '{asked}' }}) issues {asked}"
                    )))
                }
                (asked, _) => format = asked,
            }
        }
        let s = settings::read(env, options, mode.unwrap_or(Mode::Strict), false)?;
        reads = s.reads;
        b = b.settings(s.core);
    }
    match format {
        TimeFormat::Uuid7 => installed(env, this, b.build(Uuid7)?, reads),
        TimeFormat::Ulid => installed(env, this, b.build(Ulid)?, reads),
    }
}

/// `g` in its cell, its bound functions on `this`.
fn installed<F: FixedFormat>(
    env: Env,
    this: sys::napi_value,
    g: polyflake::TimeIdGenerator<F>,
    reads: Reads,
) -> FResult<Box<dyn Calls>> {
    let cell = Arc::new(Cell { g, reads });
    let extra = [(c"nextIdBuffer", next_id_buffer as Body<_>)];
    install(env.raw(), this, &cell, bodies(), &extra)?;
    Ok(Box::new(cell))
}

/// An ID argument of `format`: its text, or 16 bytes big-endian in a Uint8Array (a Buffer).
fn id_arg(v: Val, format: TimeFormat) -> FResult<u128> {
    if v.ty()? == Ty::String {
        return Ok(format.parse_id(&v.string()?)?);
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

fn next_id_buffer<G: Issuer<Id = u128>>(env: sys::napi_env, c: &Shared<G>, _out: Out) -> Raw {
    Ok(Val::bytes_of(env, &[waiting(env, || c.g.next_id())?])?.raw)
}

/// A batch of `count` from `c`, into `out`'s shape.
fn ids<G: Issuer<Id = u128>>(
    env: sys::napi_env,
    c: &Shared<G>,
    count: Val,
    out: fn(sys::napi_env, &[u128]) -> FResult<Val>,
) -> FResult<Val> {
    let mut ids = polyflake::batch_buffer::<u128>(count_arg(count)?)?;
    waiting(env, || c.g.next_ids(&mut ids))?;
    out(env, &ids)
}

/// IDs as an array of strings.
fn texts<F: FixedFormat>(env: sys::napi_env, ids: &[u128]) -> FResult<Val> {
    Val::array(
        env,
        ids.iter()
            .map(|id| Val::ascii(env, F::FORMAT.format_id(*id).as_bytes())),
    )
}

/// `nextIdsAsync(count)`: filled at once with the core's all-or-nothing `try_*` batch, or on the
/// pool when it must wait.
fn ids_async<G: Issuer<Id = u128> + 'static>(
    env: sys::napi_env,
    c: &Shared<G>,
    count: Val,
) -> FResult<Val> {
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
    let work = move |g: &G| {
        let mut ids = polyflake::batch_buffer::<u128>(n)?;
        g.next_ids(&mut ids).map(|()| ids)
    };
    let out = |env, ids: Vec<u128>| Val::bytes_of(env, &ids);
    issue::promise(env, c, fast, work, out)
}

/// UUIDs version 7 (RFC 9562: 48 bits of Unix ms, 12 bits of sub-millisecond time and a counter,
/// then 59 random bits from the OS) or ULIDs (48 bits of Unix ms and 80 bits that start at random
/// each millisecond and grow by one per ULID within it), with the Snowflake generators' rewind
/// guard: strict mode (the default) waits out or refuses a rewind, monotonic mode borrows ahead.
/// A generator's IDs strictly increase, as text and as bytes. `Uuid7Generator` and
/// `UlidGenerator` are this class with its format fixed.
#[napi]
pub struct TimeIdGenerator {
    calls: Box<dyn Calls>,
}

#[napi]
impl TimeIdGenerator {
    /// A generator with explicit settings (all optional): `format` (`'uuid7'`, the default, or
    /// `'ulid'`), `mode` (`'strict'`, the default, or `'monotonic'`), `maxWaitMs`, `maxLeadMs`
    /// (monotonic), `maxForwardStepMs`, `forwardConfirmMs`, `maxClockErrorMs`, `clock`,
    /// `clockSource`.
    #[napi(constructor, ts_args_type = "options?: TimeIdGeneratorOptions")]
    pub fn new(
        env: Env,
        this: This<'_>,
        options: Option<Unknown<'_>>,
        fixed: Option<Unknown<'_>>,
    ) -> Result<Self> {
        guard(env.raw(), || {
            let (options, fixed) = (Val::opt(env, &options)?, Val::opt(env, &fixed)?);
            let calls = make(env, this.object.raw(), options, fixed)?;
            Ok(TimeIdGenerator { calls })
        })
    }

    /// One ID as its text. Strict mode may block the thread: at most `max(maxWaitMs, 1)` ms on a
    /// spent millisecond (32,768 IDs), at most `maxWaitMs` on a small rewind (see
    /// `nextIdAsync`). A Worker's `terminate()` or `process.exit()` cuts a wait within 20 ms.
    #[napi(ts_return_type = "string")]
    pub fn next_id<'env>(&self, env: &'env Env) -> Result<Unknown<'env>> {
        self.call(env, Call::Next)
    }

    /// One ID if that needs no wait; `null` where `nextId()` would sleep (a spent millisecond
    /// or a small rewind in strict mode). Refusals throw as in `nextId()`.
    #[napi(ts_return_type = "string | null")]
    pub fn try_next_id<'env>(&self, env: &'env Env) -> Result<Unknown<'env>> {
        self.call(env, Call::TryNext)
    }

    /// One ID as a Promise that never blocks the event loop: settled at once when no wait is
    /// needed (no thread hop), otherwise the wait runs on the libuv thread pool. A refusal
    /// rejects with the error `nextId()` would throw.
    #[napi(ts_return_type = "Promise<string>")]
    pub fn next_id_async<'env>(&self, env: &'env Env) -> Result<Unknown<'env>> {
        self.call(env, Call::Async)
    }

    /// One ID as 16 bytes, big-endian (the byte order a database's `uuid` sorts by).
    #[napi(ts_return_type = "Buffer")]
    pub fn next_id_buffer<'env>(&self, env: &'env Env) -> Result<Unknown<'env>> {
        self.call(env, Call::Buffer)
    }

    /// `count` increasing IDs in one Buffer, 16 bytes big-endian each (a failed call issues
    /// none). Strict mode blocks through every millisecond it fills; a Worker's `terminate()` or
    /// `process.exit()` cuts the wait within 20 ms.
    #[napi(ts_args_type = "count: number | bigint", ts_return_type = "Buffer")]
    pub fn next_ids<'env>(&self, env: &'env Env, count: Unknown<'_>) -> Result<Unknown<'env>> {
        self.batch(env, count, Batch::Bytes)
    }

    /// `count` increasing IDs as an array of strings.
    #[napi(
        ts_args_type = "count: number | bigint",
        ts_return_type = "Array<string>"
    )]
    pub fn next_id_strings<'env>(
        &self,
        env: &'env Env,
        count: Unknown<'_>,
    ) -> Result<Unknown<'env>> {
        self.batch(env, count, Batch::Strings)
    }

    /// `nextIds(count)` as a Promise that never blocks the event loop: a batch that fits what
    /// is left of the current millisecond (and any monotonic batch) is filled at once; one that
    /// must wait is filled on the libuv thread pool.
    #[napi(
        ts_args_type = "count: number | bigint",
        ts_return_type = "Promise<Buffer>"
    )]
    pub fn next_ids_async<'env>(
        &self,
        env: &'env Env,
        count: Unknown<'_>,
    ) -> Result<Unknown<'env>> {
        self.batch(env, count, Batch::Async)
    }

    /// A snapshot of this generator's state and counters (reads the clock once; status
    /// `'closed'` after `close()`; `nodeId` 0).
    #[napi(ts_return_type = "Health")]
    pub fn health<'env>(&self, env: &'env Env) -> Result<Unknown<'env>> {
        js_value(env, |raw| {
            Val::record(raw, &self.calls.core().health().fields())
        })
    }

    /// The health snapshot as metric samples: the core's `HEALTH_METRICS` table's names and
    /// labels (see `healthMetrics()`; `polyflake/prometheus` exports them).
    #[napi(ts_return_type = "Array<HealthSample>")]
    pub fn health_samples<'env>(&self, env: &'env Env) -> Result<Unknown<'env>> {
        js_value(env, |raw| samples(raw, &self.calls.core().health()))
    }

    /// Stop issuing for good: later calls throw `GENERATOR_CLOSED`.
    #[napi]
    pub fn close(&self) {
        self.calls.core().close()
    }

    /// `'strict'` or `'monotonic'`.
    #[napi(getter, ts_return_type = "GeneratorMode")]
    pub fn mode(&self) -> &'static str {
        self.calls.core().mode().name()
    }

    /// `'uuid7'` or `'ulid'`.
    #[napi(getter, ts_return_type = "TimeFormatName")]
    pub fn format(&self) -> &'static str {
        self.calls.format().name()
    }
}

impl TimeIdGenerator {
    fn call<'env>(&self, env: &'env Env, call: Call) -> Result<Unknown<'env>> {
        js_value(env, |raw| Ok(Val::new(raw, self.calls.call(raw, call)?)))
    }

    fn batch<'env>(&self, env: &'env Env, count: Unknown<'_>, b: Batch) -> Result<Unknown<'env>> {
        js_value(env, |raw| self.calls.batch(raw, Val::of(*env, &count), b))
    }
}

/// The process-wide strict generators of `uuid7()` and `ulid()`, in `TimeFormat::ALL` order,
/// made on first use.
static SHARED: [OnceLock<polyflake::TimeIdGenerator>; 2] = [OnceLock::new(), OnceLock::new()];

/// The body of `uuid7()` / `ulid()`: an ID of `format`'s process-wide generator (two threads may
/// both build one; the first stored serves every call), on the system clock: the core's
/// `try_next_id` first, which never waits, then the waiting call where it would.
fn next_shared(env: sys::napi_env, format: TimeFormat) -> Raw {
    let cell = &SHARED[format as usize];
    let g = match cell.get() {
        Some(g) => g,
        None => {
            let made = TimeIdBuilder::new().build(format)?;
            cell.get_or_init(|| made)
        }
    };
    let id = match g.try_next_id()? {
        Some(id) => id,
        None => waiting(env, || g.next_id())?,
    };
    Ok(Val::ascii(env, format.format_id(id).as_bytes())?.raw)
}

/// `uuid7()` (`F` 0) or `ulid()` (`F` 1): the format's index in `TimeFormat::ALL`.
unsafe extern "C" fn shared_callback<const F: usize>(
    env: sys::napi_env,
    _info: sys::napi_callback_info,
) -> sys::napi_value {
    fast::run(env, || next_shared(env, TimeFormat::ALL[F]))
}

/// The value of `Uuid7Generator` and `UlidGenerator` until the module is loaded: `undefined`,
/// then their class (`bind_module_functions`). They are declared here so that napi-rs writes
/// them into index.js as the other exports (`module.exports.UlidGenerator = ...`: the line
/// Node's ESM loader reads the named exports of a CommonJS module from) and into index.d.ts
/// (`FixedFormatClass`, types.d.ts).
pub struct FixedFormatClass;

impl ToNapiValue for FixedFormatClass {
    unsafe fn to_napi_value(env: sys::napi_env, _: Self) -> napi::Result<sys::napi_value> {
        // SAFETY: the env napi-rs registers the export in, as it gives it.
        unsafe { <() as ToNapiValue>::to_napi_value(env, ()) }
    }
}

/// UUIDs version 7: the `TimeIdGenerator` class of the format `'uuid7'` (set at load).
#[napi]
#[allow(non_upper_case_globals)]
pub const Uuid7Generator: FixedFormatClass = FixedFormatClass;

/// ULIDs: the `TimeIdGenerator` class of the format `'ulid'` (set at load).
#[napi]
#[allow(non_upper_case_globals)]
pub const UlidGenerator: FixedFormatClass = FixedFormatClass;

/// A class of a fixed format: `class NAME extends TimeIdGenerator`, passing its format on.
const SUBCLASS: &str = "(function (TimeIdGenerator, name, format) {
  return { [name]: class extends TimeIdGenerator {
    constructor(options) { super(options, format) }
  } }[name]
})";

/// At module load: `uuid7` and `ulid` as plain Node-API functions, set over napi-rs's (its
/// function wrapper cost about as much as the UUID: 758 against 428 ns for the same body bound to
/// a generator, in one benchmark run; index.d.ts still comes from the `#[napi]` functions), and
/// `Uuid7Generator` and `UlidGenerator`, the subclasses of a fixed format (typed in types.d.ts).
#[napi(module_exports)]
pub fn bind_module_functions(env: Env, exports: Object<'_>) -> Result<()> {
    let raw = env.raw();
    guard(raw, || {
        let exports = Val::new(raw, exports.raw());
        let what = "compile the time-ID subclasses";
        let subclass = napi_make!(raw, what => napi_run_script(Val::text(raw, SUBCLASS)?.raw))?;
        let base = exports.get("TimeIdGenerator")?;
        let each: [(&str, &CStr, sys::napi_callback); 2] = [
            ("Uuid7Generator", c"uuid7", Some(shared_callback::<0>)),
            ("UlidGenerator", c"ulid", Some(shared_callback::<1>)),
        ];
        for ((class, function, callback), format) in each.into_iter().zip(TimeFormat::ALL) {
            let (name, recv) = (Val::text(raw, format.name())?, Val::undefined(raw)?);
            let args = [base.raw, Val::text(raw, class)?.raw, name.raw];
            let what = "make a time-ID subclass";
            let made = napi_make!(raw, what => napi_call_function(recv.raw, subclass.raw, 3, args.as_ptr()))?;
            exports.set(class, made)?;
            let f = fast::function(raw, function, callback, ptr::null_mut())?;
            exports.set(format.name(), Val::new(raw, f))?;
        }
        Ok(())
    })
}

/// One ID of `format`'s process-wide generator, the napi-rs form (replaced at load).
fn shared(env: Env, format: TimeFormat) -> Result<Unknown<'static>> {
    let raw = env.raw();
    guard(raw, || {
        Ok(Val::new(raw, next_shared(raw, format)?).unknown())
    })
}

/// An ID's text of `format` as 16 bytes, big-endian.
fn parse(env: Env, text: Unknown<'_>, format: TimeFormat) -> Result<Unknown<'static>> {
    let raw = env.raw();
    guard(raw, || {
        let id = format.parse_id(&string_arg(Val::of(env, &text), "text")?)?;
        Ok(Val::bytes_of(raw, &[id])?.unknown())
    })
}

/// An ID (16 bytes or text) of `format` as its canonical text.
fn canonical(env: Env, id: Unknown<'_>, format: TimeFormat) -> Result<String> {
    guard(env.raw(), || {
        Ok(format.format_id(id_arg(Val::of(env, &id), format)?))
    })
}

/// The Unix ms of an ID (text or 16 bytes) of `format` (48 bits: exact as a Number).
fn timestamp_ms(env: Env, id: Unknown<'_>, format: TimeFormat) -> Result<f64> {
    guard(env.raw(), || {
        Ok(format.timestamp_ms(id_arg(Val::of(env, &id), format)?)? as f64)
    })
}

/// The time of an ID (text or 16 bytes) of `format` as a `Date`.
fn time<'env>(env: &'env Env, id: Unknown<'_>, format: TimeFormat) -> Result<Unknown<'env>> {
    js_value(env, |raw| {
        Val::date(
            raw,
            format.timestamp_ms(id_arg(Val::of(*env, &id), format)?)?,
        )
    })
}

/// One UUIDv7 as text, from a process-wide strict generator made on first use (shared by every
/// worker thread). For explicit settings, Buffers or batches use a `Uuid7Generator`.
#[napi(ts_return_type = "string")]
pub fn uuid7(env: Env) -> Result<Unknown<'static>> {
    shared(env, TimeFormat::Uuid7)
}

/// A UUID's text (36 characters, hex digits in any case) as 16 bytes, big-endian.
#[napi(ts_args_type = "text: string", ts_return_type = "Buffer")]
pub fn parse_uuid(env: Env, text: Unknown<'_>) -> Result<Unknown<'static>> {
    parse(env, text, TimeFormat::Uuid7)
}

/// A UUID (16 bytes, or text in any case) as its canonical text: lower-case, hyphenated.
#[napi(ts_args_type = "id: Uint8Array | string")]
pub fn format_uuid(env: Env, id: Unknown<'_>) -> Result<String> {
    canonical(env, id, TimeFormat::Uuid7)
}

/// The Unix ms of a UUID version 7 (text or 16 bytes); `INVALID_ID` unless it is version 7.
#[napi(ts_args_type = "id: string | Uint8Array")]
pub fn uuid7_timestamp_ms(env: Env, id: Unknown<'_>) -> Result<f64> {
    timestamp_ms(env, id, TimeFormat::Uuid7)
}

/// The time of a UUID version 7 (text or 16 bytes) as a `Date` (exact: both hold whole ms).
#[napi(ts_args_type = "id: string | Uint8Array", ts_return_type = "Date")]
pub fn uuid7_time<'env>(env: &'env Env, id: Unknown<'_>) -> Result<Unknown<'env>> {
    time(env, id, TimeFormat::Uuid7)
}

/// One ULID as text, from a process-wide strict generator made on first use.
#[napi(ts_return_type = "string")]
pub fn ulid(env: Env) -> Result<Unknown<'static>> {
    shared(env, TimeFormat::Ulid)
}

/// A ULID's text (26 characters of Crockford base32, any case) as 16 bytes, big-endian.
#[napi(ts_args_type = "text: string", ts_return_type = "Buffer")]
pub fn parse_ulid(env: Env, text: Unknown<'_>) -> Result<Unknown<'static>> {
    parse(env, text, TimeFormat::Ulid)
}

/// A ULID (16 bytes, or text in any case) as its canonical text: upper-case Crockford base32.
#[napi(ts_args_type = "id: Uint8Array | string")]
pub fn format_ulid(env: Env, id: Unknown<'_>) -> Result<String> {
    canonical(env, id, TimeFormat::Ulid)
}

/// The Unix ms of a ULID (text or 16 bytes).
#[napi(ts_args_type = "id: string | Uint8Array")]
pub fn ulid_timestamp_ms(env: Env, id: Unknown<'_>) -> Result<f64> {
    timestamp_ms(env, id, TimeFormat::Ulid)
}

/// The time of a ULID (text or 16 bytes) as a `Date` (exact: both hold whole ms).
#[napi(ts_args_type = "id: string | Uint8Array", ts_return_type = "Date")]
pub fn ulid_time<'env>(env: &'env Env, id: Unknown<'_>) -> Result<Unknown<'env>> {
    time(env, id, TimeFormat::Ulid)
}
