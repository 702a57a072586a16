//! UUIDv7 and ULID: ONE generator body over the core's `TimeIdGenerator`, behind three handle
//! types: `polyflake_timeid_generator`, whose format is a `polyflake_time_format` value given to
//! `_new` (what a binding with one generator type uses: Go), and the typed
//! `polyflake_uuid7_generator` and `polyflake_ulid_generator` (the format in the type, so C
//! catches passing one for the other at compile time; the core's fixed-format generators, so
//! their calls branch on nothing). Every entry point of every handle is one line into a body
//! generic over `TimeHandle`. Their shared config and the text helpers are here too. A 128-bit
//! ID crosses the boundary as its 16 bytes, big-endian (the order of its text and of
//! PostgreSQL's `uuid`), so `memcmp` sorts IDs as the core issued them.

use crate::boundary::{
    arg, boundary, c_str, free_handle, new_handle, out, write_c_string, write_out,
};
use crate::clock::polyflake_clock;
use crate::error::polyflake_result;
use crate::generator::{
    close_of, deadline_in, default_config, passed, pick, polyflake_config, Handle,
    POLYFLAKE_FORWARD_STEP_OFF,
};
use crate::health::{health_of, polyflake_health_snapshot};
use polyflake_core::{
    batch_len, format_ulid, format_uuid, interruptible, parse_ulid, parse_uuid, ulid_timestamp_ms,
    uuid7_timestamp_ms, ClockSource, Health, Mode, Result, Settings, TimeFormat, TimeIdBuilder,
    TimeIdFormat, TimeIdGenerator, UlidGenerator, Uuid7Generator,
};
use std::ffi::c_char;
use std::time::Instant;

/// A 128-bit time-ID format (`polyflake_timeid_generator_new`'s `format`), in the core's order.
#[repr(u32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum polyflake_time_format {
    /// UUID version 7 (RFC 9562).
    Uuid7 = 0,
    /// ULID: 48 bits of Unix ms, then 80 bits that increase by one within a millisecond.
    Ulid = 1,
}

/// Bytes of one UUID or ULID: 16, big-endian.
pub const POLYFLAKE_ID128_LEN: usize = 16;

/// Bytes a buffer needs for a UUID's text with its NUL: 36 characters + 1.
pub const POLYFLAKE_UUID_TEXT_LEN: usize = 37;

/// Bytes a buffer needs for a ULID's text with its NUL: 26 characters + 1.
pub const POLYFLAKE_ULID_TEXT_LEN: usize = 27;

/// Settings of a UUIDv7 or ULID generator: those of `polyflake_config` less the node id, layout,
/// epoch and what belongs to a node id (its restart guard and host scope), each meaning what it
/// means there. Fill it with `polyflake_timeid_config_init`. The struct grows at its end between
/// versions: a program compiled against an older polyflake.h must be compiled again.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct polyflake_timeid_config {
    /// A `polyflake_mode` value (default POLYFLAKE_MODE_STRICT; strict waits for the next
    /// millisecond after 32,768 IDs in one).
    pub mode: u32,
    /// A `polyflake_clock_source` value (default POLYFLAKE_CLOCK_SOURCE_PRECISE).
    pub clock_source: u32,
    /// Strict mode's wait budget in milliseconds (default 5.0).
    pub max_wait_ms: f64,
    /// The forward-step bound in ms (default 60,000); POLYFLAKE_FORWARD_STEP_OFF: no check.
    pub max_forward_step_ms: u64,
    /// How long a stepped-ahead clock must hold before it is believed, in ms (default 300,000).
    pub forward_confirm_ms: u64,
    /// Nonzero (the default): `max_lead_ms` applies; zero: no lead limit at all.
    pub has_max_lead: u32,
    /// Monotonic mode's limit on running ahead of the wall clock, in ms (default 5,000).
    pub max_lead_ms: i64,
    /// Nonzero: `max_clock_error_ms` applies (default zero: reported in health only).
    pub has_max_clock_error: u32,
    /// Refuse to issue while the kernel says the system clock is not synchronized or its
    /// maximum error exceeds this many ms (1 to 16,000): POLYFLAKE_RESULT_CLOCK_UNSYNCHRONIZED.
    pub max_clock_error_ms: u64,
}

impl polyflake_timeid_config {
    /// The core `Settings` these fields and the optional clock (NULL: the system clock) stand
    /// for: the ONE value every C constructor, Snowflake's included, hands its builder. Returns
    /// the core's error for a code out of range (the mode first, then the clock source).
    pub(crate) fn settings(
        &self,
        clock: *const polyflake_clock,
    ) -> std::result::Result<Settings, polyflake_result> {
        let step = self.max_forward_step_ms;
        Ok(Settings {
            mode: pick(Mode::ALL, Mode::name, self.mode, "mode")?,
            max_wait_ms: self.max_wait_ms,
            max_lead_ms: (self.has_max_lead != 0).then_some(self.max_lead_ms),
            max_forward_step_ms: (step != POLYFLAKE_FORWARD_STEP_OFF).then_some(step),
            forward_confirm_ms: self.forward_confirm_ms,
            clock_source: pick(
                ClockSource::ALL,
                ClockSource::name,
                self.clock_source,
                "clock_source",
            )?,
            clock: match clock.is_null() {
                true => None,
                false => Some(arg(clock)?.shared.clone()),
            },
            max_clock_error_ms: (self.has_max_clock_error != 0).then_some(self.max_clock_error_ms),
        })
    }
}

impl polyflake_config {
    /// The settings every generator shares, as this struct holds them (written here, beside the
    /// struct it fills, so the Snowflake handle's file needs nothing from this one).
    pub(crate) fn shared(&self) -> polyflake_timeid_config {
        polyflake_timeid_config {
            mode: self.mode,
            clock_source: self.clock_source,
            max_wait_ms: self.max_wait_ms,
            max_forward_step_ms: self.max_forward_step_ms,
            forward_confirm_ms: self.forward_confirm_ms,
            has_max_lead: self.has_max_lead,
            max_lead_ms: self.max_lead_ms,
            has_max_clock_error: self.has_max_clock_error,
            max_clock_error_ms: self.max_clock_error_ms,
        }
    }
}

/// Fill `*out_config` with the core's defaults (those of `polyflake_config_init`).
#[no_mangle]
pub extern "C" fn polyflake_timeid_config_init(
    out_config: *mut polyflake_timeid_config,
) -> polyflake_result {
    write_out(out_config, || Ok(default_config()?.shared()))
}

/// A generator of UUIDv7s or ULIDs, its format chosen by `polyflake_timeid_generator_new`: an
/// opaque handle, thread-safe (share it). Its IDs strictly increase and carry the Snowflake
/// generator's rewind guard; it needs no node id, and one made before fork() goes on issuing in
/// the child.
pub struct polyflake_timeid_generator {
    inner: TimeIdGenerator,
}

/// A generator of UUIDs version 7 (RFC 9562); as `polyflake_timeid_generator` of
/// POLYFLAKE_TIME_FORMAT_UUID7, in a type of its own.
pub struct polyflake_uuid7_generator {
    inner: Uuid7Generator,
}

/// A generator of ULIDs (48 bits of Unix ms, then 80 bits that increase by one within a
/// millisecond: the spec's monotonic variant); as `polyflake_timeid_generator` of
/// POLYFLAKE_TIME_FORMAT_ULID, in a type of its own.
pub struct polyflake_ulid_generator {
    inner: UlidGenerator,
}

/// A time-ID handle: the core generator it holds (of a run-time or a fixed format).
trait TimeHandle {
    type F: TimeIdFormat;
    fn core(&self) -> &TimeIdGenerator<Self::F>;
}

impl TimeHandle for polyflake_timeid_generator {
    type F = TimeFormat;
    fn core(&self) -> &TimeIdGenerator {
        &self.inner
    }
}

impl TimeHandle for polyflake_uuid7_generator {
    type F = polyflake_core::Uuid7;
    fn core(&self) -> &Uuid7Generator {
        &self.inner
    }
}

impl TimeHandle for polyflake_ulid_generator {
    type F = polyflake_core::Ulid;
    fn core(&self) -> &UlidGenerator {
        &self.inner
    }
}

impl<G: TimeHandle> Handle for G {
    fn health(&self) -> Health {
        self.core().health()
    }
    fn close(&self) {
        self.core().close()
    }
}

/// Run `call` so that a wait inside it stops at `deadline` (`None`: no deadline; the handle's
/// `_interrupt` cuts it either way).
fn within<R>(deadline: Option<Instant>, call: impl FnOnce() -> R) -> R {
    match deadline {
        Some(_) => interruptible(&|| passed(deadline), call),
        None => call(),
    }
}

/// The body of every `_interrupt` of a time-ID handle.
fn interrupt_of<G: TimeHandle>(generator: *const G) -> polyflake_result {
    boundary(|| {
        arg(generator)?.core().interrupt_waits();
        Ok(())
    })
}

/// Make a handle: NULL out-param first, then the config, then `build`'s (the format's, then
/// the core's checks).
fn new_timeid<G>(
    config: *const polyflake_timeid_config,
    clock: *const polyflake_clock,
    out_generator: *mut *mut G,
    build: impl FnOnce(TimeIdBuilder) -> std::result::Result<G, polyflake_result>,
) -> polyflake_result {
    new_handle(out_generator, || {
        let cfg = arg(config)?;
        build(TimeIdBuilder::new().settings(cfg.settings(clock)?))
    })
}

/// One ID into the 16 bytes at `out_id`, its waits cut at `deadline` or by the handle's
/// `_interrupt`.
fn next_one<G: TimeHandle>(
    generator: *const G,
    out_id: *mut u8,
    deadline: Option<Instant>,
) -> polyflake_result {
    write_out(out_id.cast::<[u8; 16]>(), || {
        let g = arg(generator)?.core();
        Ok(within(deadline, || g.next_id())?.to_be_bytes())
    })
}

/// `n` IDs into the `16 * n` bytes at `buf`, untouched on any error (the core fills a scratch
/// array of u128 first: the caller's bytes need not be aligned for one); waits as `next_one`.
fn next_many<G: TimeHandle>(
    generator: *const G,
    buf: *mut u8,
    n: usize,
    deadline: Option<Instant>,
) -> polyflake_result {
    boundary(|| {
        let g = arg(generator)?.core();
        let buf = out(buf.cast::<[u8; 16]>())?;
        let mut ids = polyflake_core::batch_buffer::<u128>(batch_len(n as i128)?)?;
        within(deadline, || g.next_ids(&mut ids))?;
        // SAFETY: non-NULL, and the caller promises 16 * n writable bytes there ([u8; 16] has
        // alignment 1); n is at most POLYFLAKE_MAX_BATCH, so 16 * n does not overflow.
        let dst = unsafe { std::slice::from_raw_parts_mut(buf.as_ptr(), ids.len()) };
        for (d, id) in dst.iter_mut().zip(ids) {
            *d = id.to_be_bytes();
        }
        Ok(())
    })
}

/// Make a generator of `format` (a `polyflake_time_format` value) with `config` into
/// `*out_generator` (`clock`: a test clock, or NULL for the system clock); the caller frees it
/// with `polyflake_timeid_generator_free`. Errors (nothing written):
/// POLYFLAKE_RESULT_INVALID_ARGUMENT (an unknown format, a setting out of range).
#[no_mangle]
pub extern "C" fn polyflake_timeid_generator_new(
    format: u32,
    config: *const polyflake_timeid_config,
    clock: *const polyflake_clock,
    out_generator: *mut *mut polyflake_timeid_generator,
) -> polyflake_result {
    new_timeid(config, clock, out_generator, |b| {
        let format = pick(TimeFormat::ALL, TimeFormat::name, format, "time_format")?;
        Ok(polyflake_timeid_generator {
            inner: b.build(format)?,
        })
    })
}

/// Issue one ID into the 16 bytes at `out_id` (written only on success). Errors as
/// `polyflake_next_id` (strict mode waits, also after 32,768 IDs in one millisecond), and
/// _TIMESTAMP_OVERFLOW past the year 10889; _INTERRUPTED when the handle's `_interrupt` cuts
/// its wait.
#[no_mangle]
pub extern "C" fn polyflake_next_timeid(
    generator: *const polyflake_timeid_generator,
    out_id: *mut u8,
) -> polyflake_result {
    next_one(generator, out_id, None)
}

/// `polyflake_next_timeid` whose waits end `timeout_ms` after the call began; as
/// `polyflake_next_id_within` (POLYFLAKE_RESULT_INTERRUPTED, nothing written).
#[no_mangle]
pub extern "C" fn polyflake_next_timeid_within(
    generator: *const polyflake_timeid_generator,
    out_id: *mut u8,
    timeout_ms: u64,
) -> polyflake_result {
    next_one(generator, out_id, deadline_in(timeout_ms))
}

/// Fill `buf` (16 * n bytes) with `n` increasing IDs; as `polyflake_next_ids` (untouched on any
/// error; NULL `buf`, even with n = 0: POLYFLAKE_RESULT_NULL_PARAMETER).
#[no_mangle]
pub extern "C" fn polyflake_next_timeids(
    generator: *const polyflake_timeid_generator,
    buf: *mut u8,
    n: usize,
) -> polyflake_result {
    next_many(generator, buf, n, None)
}

/// `polyflake_next_timeids` whose waits end `timeout_ms` after the call began; as
/// `polyflake_next_ids_within` (POLYFLAKE_RESULT_INTERRUPTED, `buf` untouched).
#[no_mangle]
pub extern "C" fn polyflake_next_timeids_within(
    generator: *const polyflake_timeid_generator,
    buf: *mut u8,
    n: usize,
    timeout_ms: u64,
) -> polyflake_result {
    next_many(generator, buf, n, deadline_in(timeout_ms))
}

/// Cut short every call on this generator in flight now; as `polyflake_generator_interrupt`.
#[no_mangle]
pub extern "C" fn polyflake_timeid_generator_interrupt(
    generator: *const polyflake_timeid_generator,
) -> polyflake_result {
    interrupt_of(generator)
}

/// Take a health snapshot of the generator into `*out_health` (node_id 0, source "static").
#[no_mangle]
pub extern "C" fn polyflake_timeid_health(
    generator: *const polyflake_timeid_generator,
    out_health: *mut polyflake_health_snapshot,
) -> polyflake_result {
    health_of(generator, out_health)
}

/// Close the generator; as `polyflake_generator_close`.
#[no_mangle]
pub extern "C" fn polyflake_timeid_generator_close(
    generator: *const polyflake_timeid_generator,
) -> polyflake_result {
    close_of(generator)
}

/// Free a generator (NULL does nothing); as `polyflake_generator_free`.
#[no_mangle]
pub extern "C" fn polyflake_timeid_generator_free(generator: *mut polyflake_timeid_generator) {
    free_handle(generator)
}

/// Make a UUIDv7 generator; as `polyflake_timeid_generator_new` of POLYFLAKE_TIME_FORMAT_UUID7
/// (free it with `polyflake_uuid7_generator_free`).
#[no_mangle]
pub extern "C" fn polyflake_uuid7_generator_new(
    config: *const polyflake_timeid_config,
    clock: *const polyflake_clock,
    out_generator: *mut *mut polyflake_uuid7_generator,
) -> polyflake_result {
    new_timeid(config, clock, out_generator, |b| {
        Ok(polyflake_uuid7_generator {
            inner: b.build_uuid7()?,
        })
    })
}

/// Issue one UUIDv7 into the 16 bytes at `out_uuid`; as `polyflake_next_timeid`.
#[no_mangle]
pub extern "C" fn polyflake_next_uuid7(
    generator: *const polyflake_uuid7_generator,
    out_uuid: *mut u8,
) -> polyflake_result {
    next_one(generator, out_uuid, None)
}

/// `polyflake_next_uuid7` with a timeout; as `polyflake_next_timeid_within`.
#[no_mangle]
pub extern "C" fn polyflake_next_uuid7_within(
    generator: *const polyflake_uuid7_generator,
    out_uuid: *mut u8,
    timeout_ms: u64,
) -> polyflake_result {
    next_one(generator, out_uuid, deadline_in(timeout_ms))
}

/// Fill `buf` (16 * n bytes) with `n` increasing UUIDv7s; as `polyflake_next_timeids`.
#[no_mangle]
pub extern "C" fn polyflake_next_uuid7s(
    generator: *const polyflake_uuid7_generator,
    buf: *mut u8,
    n: usize,
) -> polyflake_result {
    next_many(generator, buf, n, None)
}

/// `polyflake_next_uuid7s` with a timeout; as `polyflake_next_timeids_within`.
#[no_mangle]
pub extern "C" fn polyflake_next_uuid7s_within(
    generator: *const polyflake_uuid7_generator,
    buf: *mut u8,
    n: usize,
    timeout_ms: u64,
) -> polyflake_result {
    next_many(generator, buf, n, deadline_in(timeout_ms))
}

/// Cut short every call on this UUIDv7 generator in flight now; as
/// `polyflake_generator_interrupt`.
#[no_mangle]
pub extern "C" fn polyflake_uuid7_generator_interrupt(
    generator: *const polyflake_uuid7_generator,
) -> polyflake_result {
    interrupt_of(generator)
}

/// Take a health snapshot of the generator; as `polyflake_timeid_health`.
#[no_mangle]
pub extern "C" fn polyflake_uuid7_health(
    generator: *const polyflake_uuid7_generator,
    out_health: *mut polyflake_health_snapshot,
) -> polyflake_result {
    health_of(generator, out_health)
}

/// Close the generator; as `polyflake_generator_close`.
#[no_mangle]
pub extern "C" fn polyflake_uuid7_generator_close(
    generator: *const polyflake_uuid7_generator,
) -> polyflake_result {
    close_of(generator)
}

/// Free a UUIDv7 generator (NULL does nothing); as `polyflake_generator_free`.
#[no_mangle]
pub extern "C" fn polyflake_uuid7_generator_free(generator: *mut polyflake_uuid7_generator) {
    free_handle(generator)
}

/// Make a ULID generator; as `polyflake_timeid_generator_new` of POLYFLAKE_TIME_FORMAT_ULID
/// (free it with `polyflake_ulid_generator_free`).
#[no_mangle]
pub extern "C" fn polyflake_ulid_generator_new(
    config: *const polyflake_timeid_config,
    clock: *const polyflake_clock,
    out_generator: *mut *mut polyflake_ulid_generator,
) -> polyflake_result {
    new_timeid(config, clock, out_generator, |b| {
        Ok(polyflake_ulid_generator {
            inner: b.build_ulid()?,
        })
    })
}

/// Issue one ULID into the 16 bytes at `out_ulid`; as `polyflake_next_timeid`.
#[no_mangle]
pub extern "C" fn polyflake_next_ulid(
    generator: *const polyflake_ulid_generator,
    out_ulid: *mut u8,
) -> polyflake_result {
    next_one(generator, out_ulid, None)
}

/// `polyflake_next_ulid` with a timeout; as `polyflake_next_timeid_within`.
#[no_mangle]
pub extern "C" fn polyflake_next_ulid_within(
    generator: *const polyflake_ulid_generator,
    out_ulid: *mut u8,
    timeout_ms: u64,
) -> polyflake_result {
    next_one(generator, out_ulid, deadline_in(timeout_ms))
}

/// Fill `buf` (16 * n bytes) with `n` increasing ULIDs; as `polyflake_next_timeids`.
#[no_mangle]
pub extern "C" fn polyflake_next_ulids(
    generator: *const polyflake_ulid_generator,
    buf: *mut u8,
    n: usize,
) -> polyflake_result {
    next_many(generator, buf, n, None)
}

/// `polyflake_next_ulids` with a timeout; as `polyflake_next_timeids_within`.
#[no_mangle]
pub extern "C" fn polyflake_next_ulids_within(
    generator: *const polyflake_ulid_generator,
    buf: *mut u8,
    n: usize,
    timeout_ms: u64,
) -> polyflake_result {
    next_many(generator, buf, n, deadline_in(timeout_ms))
}

/// Cut short every call on this ULID generator in flight now; as
/// `polyflake_generator_interrupt`.
#[no_mangle]
pub extern "C" fn polyflake_ulid_generator_interrupt(
    generator: *const polyflake_ulid_generator,
) -> polyflake_result {
    interrupt_of(generator)
}

/// Take a health snapshot of the generator; as `polyflake_timeid_health`.
#[no_mangle]
pub extern "C" fn polyflake_ulid_health(
    generator: *const polyflake_ulid_generator,
    out_health: *mut polyflake_health_snapshot,
) -> polyflake_result {
    health_of(generator, out_health)
}

/// Close the generator; as `polyflake_generator_close`.
#[no_mangle]
pub extern "C" fn polyflake_ulid_generator_close(
    generator: *const polyflake_ulid_generator,
) -> polyflake_result {
    close_of(generator)
}

/// Free a ULID generator (NULL does nothing); as `polyflake_generator_free`.
#[no_mangle]
pub extern "C" fn polyflake_ulid_generator_free(generator: *mut polyflake_ulid_generator) {
    free_handle(generator)
}

/// The 16 bytes at `id` as the core's u128 (NULL: NULL_PARAMETER).
fn id128(id: *const u8) -> std::result::Result<u128, polyflake_result> {
    Ok(u128::from_be_bytes(*arg(id.cast::<[u8; 16]>())?))
}

/// `format(id)` with a NUL into `buf[..len]`.
fn format_into(
    id: *const u8,
    buf: *mut c_char,
    len: usize,
    format: fn(u128) -> String,
) -> polyflake_result {
    boundary(|| write_c_string(out(buf)?, len, format(id128(id)?).as_bytes()))
}

/// `parse(text)` into the 16 bytes at `out_id`. Bytes that are not UTF-8 reach the core's
/// parser (as U+FFFD), which refuses them.
fn parse_into(
    text: *const c_char,
    out_id: *mut u8,
    parse: fn(&str) -> Result<u128>,
) -> polyflake_result {
    write_out(out_id.cast::<[u8; 16]>(), || {
        Ok(parse(&c_str(text)?.to_string_lossy())?.to_be_bytes())
    })
}

/// Write the UUID at `uuid` (16 bytes, any version) as its canonical text, 36 lower-case
/// characters, with a NUL into `buf` (`len` bytes; POLYFLAKE_UUID_TEXT_LEN suffices). Errors:
/// POLYFLAKE_RESULT_BUFFER_TOO_SMALL (nothing written).
#[no_mangle]
pub extern "C" fn polyflake_format_uuid(
    uuid: *const u8,
    buf: *mut c_char,
    len: usize,
) -> polyflake_result {
    format_into(uuid, buf, len, format_uuid)
}

/// Parse a UUID's text (36 characters, hyphens after 8, 12, 16 and 20 hex digits, any case)
/// into the 16 bytes at `out_uuid`. Errors: POLYFLAKE_RESULT_INVALID_ID.
#[no_mangle]
pub extern "C" fn polyflake_parse_uuid(text: *const c_char, out_uuid: *mut u8) -> polyflake_result {
    parse_into(text, out_uuid, parse_uuid)
}

/// Store the Unix-ms timestamp of the UUIDv7 at `uuid` (its first 48 bits) in `*out_ms`.
/// Errors: POLYFLAKE_RESULT_INVALID_ID unless it is version 7 with RFC 9562's variant.
#[no_mangle]
pub extern "C" fn polyflake_uuid7_timestamp_ms(
    uuid: *const u8,
    out_ms: *mut i64,
) -> polyflake_result {
    write_out(out_ms, || Ok(uuid7_timestamp_ms(id128(uuid)?)?))
}

/// Write the ULID at `ulid` as its text, 26 upper-case characters of Crockford's base32; as
/// `polyflake_format_uuid` (POLYFLAKE_ULID_TEXT_LEN suffices).
#[no_mangle]
pub extern "C" fn polyflake_format_ulid(
    ulid: *const u8,
    buf: *mut c_char,
    len: usize,
) -> polyflake_result {
    format_into(ulid, buf, len, format_ulid)
}

/// Parse a ULID's text (26 characters of Crockford's base32, any case, I and L read as 1 and O
/// as 0; the first at most 7) into the 16 bytes at `out_ulid`. Errors: _INVALID_ID.
#[no_mangle]
pub extern "C" fn polyflake_parse_ulid(text: *const c_char, out_ulid: *mut u8) -> polyflake_result {
    parse_into(text, out_ulid, parse_ulid)
}

/// Store the Unix-ms timestamp of the ULID at `ulid` (its first 48 bits) in `*out_ms`.
#[no_mangle]
pub extern "C" fn polyflake_ulid_timestamp_ms(
    ulid: *const u8,
    out_ms: *mut i64,
) -> polyflake_result {
    write_out(out_ms, || Ok(ulid_timestamp_ms(id128(ulid)?)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use polyflake_core::DEFAULT_MAX_WAIT_MS;

    #[test]
    fn defaults_are_the_snowflake_config_defaults() {
        let t = crate::boundary::tests::init(polyflake_timeid_config_init);
        let s = crate::boundary::tests::init(crate::polyflake_config_init);
        assert_eq!(t.max_wait_ms, DEFAULT_MAX_WAIT_MS);
        assert_eq!(
            (
                t.mode,
                t.has_max_lead,
                t.max_forward_step_ms,
                t.forward_confirm_ms
            ),
            (
                s.mode,
                s.has_max_lead,
                s.max_forward_step_ms,
                s.forward_confirm_ms
            )
        );
        assert_eq!(t.clock_source, s.clock_source);
    }

    #[test]
    fn time_format_codes_are_the_cores_order() {
        let codes = [polyflake_time_format::Uuid7, polyflake_time_format::Ulid];
        for (code, format) in codes.into_iter().zip(TimeFormat::ALL) {
            assert_eq!(
                pick(TimeFormat::ALL, TimeFormat::name, code as u32, "f"),
                Ok(format)
            );
        }
        let cfg = crate::boundary::tests::init(polyflake_timeid_config_init);
        let mut g = std::ptr::null_mut();
        let r = polyflake_timeid_generator_new(2, &cfg, std::ptr::null(), &mut g);
        assert_eq!((r, g.is_null()), (polyflake_result::InvalidArgument, true));
        let mut clock = std::ptr::null_mut();
        crate::clock::polyflake_manual_clock_new(1_737_747_358_021, &mut clock);
        let ulid = polyflake_time_format::Ulid as u32;
        let r = polyflake_timeid_generator_new(ulid, &cfg, clock, &mut g);
        assert_eq!(r, polyflake_result::Ok);
        let (mut a, mut b) = ([0u8; 16], [0u8; 16]);
        assert_eq!(
            polyflake_next_timeid(g, a.as_mut_ptr()),
            polyflake_result::Ok
        );
        assert_eq!(
            polyflake_next_timeid(g, b.as_mut_ptr()),
            polyflake_result::Ok
        );
        // A ULID's +1 within the millisecond (a UUIDv7's counter would leave random bits).
        assert_eq!(u128::from_be_bytes(b) - u128::from_be_bytes(a), 1);
        polyflake_timeid_generator_free(g);
        crate::clock::polyflake_clock_free(clock);
    }

    #[test]
    fn bytes_are_big_endian_and_text_round_trips() {
        let rfc = 0x017F22E2_79B0_7CC3_98C4_DC0C0C07398F_u128;
        let mut bytes = [0u8; 16];
        let text = c"017F22E2-79B0-7CC3-98C4-DC0C0C07398F";
        assert_eq!(
            polyflake_parse_uuid(text.as_ptr(), bytes.as_mut_ptr()),
            polyflake_result::Ok
        );
        assert_eq!(bytes[0], 0x01);
        assert_eq!(u128::from_be_bytes(bytes), rfc);
        let mut buf = [0 as c_char; POLYFLAKE_UUID_TEXT_LEN];
        assert_eq!(
            polyflake_format_uuid(bytes.as_ptr(), buf.as_mut_ptr(), buf.len() - 1),
            polyflake_result::BufferTooSmall
        );
        assert_eq!(buf[0], 0, "nothing written");
        assert_eq!(
            polyflake_format_uuid(bytes.as_ptr(), buf.as_mut_ptr(), buf.len()),
            polyflake_result::Ok
        );
        let back = unsafe { std::ffi::CStr::from_ptr(buf.as_ptr()) };
        assert_eq!(back.to_str().unwrap(), format_uuid(rfc));
    }
}
