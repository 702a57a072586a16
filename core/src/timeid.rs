//! UUIDv7 (RFC 9562) and ULID: 128-bit time-ordered IDs from the same engine as the Snowflake
//! IDs, so the same rewind guard (strict waits or refuses, monotonic borrows ahead up to
//! `max_lead_ms`), the same forward-step check, batches, health and fork safety apply.
//!
//! The engine's state word is `Unix ms << 15 | 15 bits below the millisecond`:
//!
//! - **UUIDv7**: `unix_ts_ms` (48) | `ver` 7 | `rand_a` (12) | `var` 0b10 | `rand_b` (62). `rand_a`
//!   holds 12 bits of sub-millisecond time (RFC 9562 section 6.2, method 3) and the top 3 bits of
//!   `rand_b` a counter (method 1) whose start in each new tick is random; both come from the
//!   state, so a generator's UUIDs strictly increase. The other 59 bits of `rand_b` are fresh per
//!   UUID from a ChaCha12 generator seeded from the operating system (per thread, reseeded in a
//!   forked child). The counter bits are guessable by design (they only order); the 59 random
//!   bits are not.
//! - **ULID**: 48 bits of Unix ms, then 80 "random" bits that, as the ULID spec says, increase by
//!   one for each ULID within the same millisecond: a per-millisecond base (79 bits from a ChaCha12
//!   stream keyed per generator and indexed by the millisecond, so every thread agrees on it
//!   without shared state) plus the state's 15-bit counter. The base's top bit is 0, so the
//!   increments never overflow the 80 bits: nothing ever wraps.
//!
//! Both issue at most 32,768 IDs per millisecond per generator; strict mode then waits for the
//! next millisecond, monotonic mode borrows it.
//!
//! ## Decisions
//!
//! - **One engine.** Both formats run on the Snowflake generator's engine with an internal
//!   layout 48/0/15 (Unix ms, no node, 15 bits below the millisecond), so the rewind guard, the
//!   forward-step check, batches, health and close are the same code, not a second copy.
//! - **One generator type.** [`TimeIdGenerator<F>`] is generic over its format (`format.rs`):
//!   [`Uuid7`] or [`Ulid`] fixed at compile time (`Uuid7Generator` and `UlidGenerator` are those
//!   two, by name), or [`TimeFormat`], a value chosen at run time, which is what every binding's
//!   one class holds. The format is asked for its value on each ID; for a fixed format that is a
//!   constant and the match folds away, so the fixed types' hot path is the code the two
//!   separate types had. Each format's own method names (`next_uuid`, `next_ulid`, ...) stay, as
//!   the generic ones under another name.
//! - **`rand_a` is time**: the fraction of the reading's millisecond (0 on an injected clock
//!   that reads whole milliseconds), so a generator's UUIDs sort by time within a millisecond.
//! - **Text.** UUIDs are written in the canonical 36-character lower-case form and read in any
//!   case, hyphenated only; ULIDs are written in upper-case Crockford base32 and read in any
//!   case, `I`/`L` as 1 and `O` as 0 (`U` is not a digit), a first character above `7` (more
//!   than 128 bits) refused. Bad text is `InvalidId` (`text.rs`).
//! - **After fork**: no node id, so no node-id rule. A forked child goes on from the state it
//!   inherited, but its random parts are its own (the ChaCha12 generators reseed and the ULID key
//!   is re-made whenever the fork generation changes), so parent and child differ in the random
//!   bits of UUIDs of the same state.

mod format;
mod text;

pub use format::{FixedFormat, TimeFormat, TimeIdFormat, Ulid, Uuid7};
pub use text::{
    format_ulid, format_uuid, parse_ulid, parse_uuid, ulid_timestamp_ms, uuid7_timestamp_ms,
};

use crate::clock::{Clock, ClockSource};
use crate::error::Result;
use crate::generator::{batch_buffer, Builder, Generator, Health, Mode};
use crate::settings::Settings;
use format::UlidBases;
use std::fmt;
use std::sync::Arc;

/// Settings for a [`TimeIdGenerator`] of any format: the same as a Snowflake generator's, less
/// the node id and the layout.
///
/// ```
/// use polyflake::{Mode, TimeFormat, TimeIdBuilder};
/// let g = TimeIdBuilder::new().mode(Mode::Monotonic).build_uuid7().unwrap();
/// assert!(g.next_uuid().unwrap() < g.next_uuid().unwrap());
/// let l = TimeIdBuilder::new().build(TimeFormat::Ulid).unwrap(); // the format as a value
/// assert_eq!(l.format(), TimeFormat::Ulid);
/// ```
#[derive(Debug, Clone)]
pub struct TimeIdBuilder {
    inner: Builder,
}

impl Default for TimeIdBuilder {
    fn default() -> Self {
        TimeIdBuilder::new()
    }
}

impl TimeIdBuilder {
    /// Every setting at its default: strict, system clock, `max_wait_ms` 5.0.
    pub fn new() -> TimeIdBuilder {
        TimeIdBuilder {
            inner: Generator::builder(0),
        }
    }
    /// Every shared setting at once (see [`Settings`]), replacing what the one-field setters
    /// wrote.
    ///
    /// ```
    /// use polyflake::{Mode, Settings, TimeIdBuilder};
    /// let s = Settings { mode: Mode::Monotonic, ..Settings::default() };
    /// let g = TimeIdBuilder::new().settings(s).build_ulid().unwrap();
    /// assert_eq!(g.settings().mode, Mode::Monotonic);
    /// ```
    pub fn settings(self, settings: Settings) -> Self {
        self.with(|b| b.settings(settings))
    }
    /// Strict or monotonic (default strict).
    pub fn mode(self, mode: Mode) -> Self {
        self.with(|b| b.mode(mode))
    }
    /// Strict mode's wait budget in ms (default 5.0), as for Snowflake generators.
    pub fn max_wait_ms(self, ms: f64) -> Self {
        self.with(|b| b.max_wait_ms(ms))
    }
    /// Monotonic mode's limit on running ahead of the wall clock, in ms (default 5,000;
    /// `None`: unbounded).
    pub fn max_lead_ms(self, ms: Option<i64>) -> Self {
        self.with(|b| b.max_lead_ms(ms))
    }
    /// The forward-step bound (default 60,000 ms; `None`: no check).
    pub fn max_forward_step_ms(self, ms: Option<u64>) -> Self {
        self.with(|b| b.max_forward_step_ms(ms))
    }
    /// How long a stepped-ahead clock must hold before it is believed (default 300,000 ms).
    pub fn forward_confirm_ms(self, ms: u64) -> Self {
        self.with(|b| b.forward_confirm_ms(ms))
    }
    /// The precise or the coarse clock reading (see [`ClockSource`]).
    pub fn clock_source(self, source: ClockSource) -> Self {
        self.with(|b| b.clock_source(source))
    }
    /// Read time from this clock instead of the system clock (tests, simulations).
    pub fn clock<C: Clock + 'static>(self, clock: C) -> Self {
        self.with(|b| b.clock(clock))
    }
    /// Like [`TimeIdBuilder::clock`], for a clock already behind an `Arc`.
    pub fn shared_clock(self, clock: Arc<dyn Clock>) -> Self {
        self.with(|b| b.shared_clock(clock))
    }

    fn with(self, f: impl FnOnce(Builder) -> Builder) -> Self {
        TimeIdBuilder {
            inner: f(self.inner),
        }
    }

    /// Check the settings and make a generator of `format`: [`Uuid7`] or [`Ulid`] (a fixed
    /// format), or a [`TimeFormat`] value.
    pub fn build<F: TimeIdFormat>(self, format: F) -> Result<TimeIdGenerator<F>> {
        let kind = format.value().kind();
        Ok(TimeIdGenerator {
            inner: self.inner.time_ordered(kind).build()?,
            format,
            bases: UlidBases::new(),
        })
    }

    /// Check the settings and make a UUIDv7 generator (`build(Uuid7)`).
    pub fn build_uuid7(self) -> Result<Uuid7Generator> {
        self.build(Uuid7)
    }

    /// Check the settings and make a ULID generator (`build(Ulid)`).
    pub fn build_ulid(self) -> Result<UlidGenerator> {
        self.build(Ulid)
    }
}

/// A generator of 128-bit time-ordered IDs in format `F`, with the Snowflake generator's rewind
/// guard: UUIDs version 7 (RFC 9562) or ULIDs (the spec's monotonic variant). Thread-safe;
/// share it. `F` is [`Uuid7`] or [`Ulid`] ([`Uuid7Generator`], [`UlidGenerator`]), or a
/// [`TimeFormat`] chosen at run time (the default parameter).
///
/// ```
/// use polyflake::{format_uuid, uuid7_timestamp_ms, ManualClock, TimeIdBuilder};
/// let clock = ManualClock::new(1_645_557_742_000);
/// let g = TimeIdBuilder::new().clock(clock.clone()).build_uuid7().unwrap();
/// let u = g.next_id().unwrap();
/// assert_eq!(uuid7_timestamp_ms(u).unwrap(), 1_645_557_742_000);
/// assert!(format_uuid(u).starts_with("017f22e2-79b0-7"));
/// clock.advance(-600); // a rewind: refused in strict mode, as for Snowflake IDs
/// assert!(g.next_id().is_err());
/// ```
///
/// The same generator with its format picked at run time:
///
/// ```
/// use polyflake::{TimeFormat, TimeIdBuilder, TimeIdGenerator};
/// let format = TimeFormat::from_name("ulid").unwrap();
/// let g: TimeIdGenerator = TimeIdBuilder::new().build(format).unwrap();
/// let (a, b) = (g.next_id().unwrap(), g.next_id().unwrap());
/// assert!(b > a);
/// assert_eq!(g.format().format_id(a).len(), 26);
/// ```
pub struct TimeIdGenerator<F: TimeIdFormat = TimeFormat> {
    inner: Generator,
    format: F,
    /// Used by ULIDs only (keyed on the first one).
    bases: UlidBases,
}

/// A generator of UUIDs version 7 (RFC 9562), time-ordered, with the Snowflake generator's
/// rewind guard: [`TimeIdGenerator`] of the fixed format [`Uuid7`].
///
/// ```
/// use polyflake::{uuid7_timestamp_ms, ManualClock, TimeIdBuilder};
/// let clock = ManualClock::new(1_645_557_742_000);
/// let g = TimeIdBuilder::new().clock(clock.clone()).build_uuid7().unwrap();
/// let u = g.next_uuid().unwrap();
/// assert_eq!(uuid7_timestamp_ms(u).unwrap(), 1_645_557_742_000);
/// clock.advance(-600);
/// assert!(g.next_uuid().is_err());
/// ```
pub type Uuid7Generator = TimeIdGenerator<Uuid7>;

/// A ULID generator: 48 bits of Unix ms and 80 bits that increase by one within a millisecond
/// (the ULID spec's monotonic variant), with the Snowflake generator's rewind guard:
/// [`TimeIdGenerator`] of the fixed format [`Ulid`].
///
/// ```
/// use polyflake::{format_ulid, ulid_timestamp_ms, TimeIdBuilder};
/// let g = TimeIdBuilder::new().build_ulid().unwrap();
/// let (a, b) = (g.next_ulid().unwrap(), g.next_ulid().unwrap());
/// assert!(b > a);
/// assert_eq!(format_ulid(a).len(), 26);
/// assert!(ulid_timestamp_ms(a) > 1_704_067_200_000);
/// ```
pub type UlidGenerator = TimeIdGenerator<Ulid>;

impl<F: TimeIdFormat> fmt::Debug for TimeIdGenerator<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TimeIdGenerator")
            .field("format", &self.format.value())
            .field("mode", &self.inner.mode())
            .finish_non_exhaustive()
    }
}

impl<F: FixedFormat> TimeIdGenerator<F> {
    /// A strict generator on the system clock.
    pub fn strict() -> Result<TimeIdGenerator<F>> {
        TimeIdBuilder::new().build(F::default())
    }
    /// A monotonic generator on the system clock.
    pub fn monotonic() -> Result<TimeIdGenerator<F>> {
        TimeIdBuilder::new()
            .mode(Mode::Monotonic)
            .build(F::default())
    }
}

impl<F: TimeIdFormat> TimeIdGenerator<F> {
    /// The format this generator issues in.
    pub fn format(&self) -> TimeFormat {
        self.format.value()
    }

    /// The ID of engine state `state` (a fixed format's match is folded away here).
    #[inline(always)]
    fn id_of(&self, state: u64) -> u128 {
        self.format.value().id(state as i64, &self.bases)
    }

    /// One ID (as its 128-bit value, big-endian as text and bytes), waiting where the core
    /// waits (strict mode only; see [`Generator::next_id`]).
    #[inline]
    pub fn next_id(&self) -> Result<u128> {
        let state = self.inner.next_id()?;
        Ok(self.id_of(state))
    }
    /// One ID if that needs no wait (`Ok(None)` where [`TimeIdGenerator::next_id`] would
    /// sleep).
    #[inline]
    pub fn try_next_id(&self) -> Result<Option<u128>> {
        Ok(self.inner.try_next_id()?.map(|s| self.id_of(s)))
    }
    /// Fill `out` with increasing IDs; on an error `out` is left as it was.
    pub fn next_ids(&self, out: &mut [u128]) -> Result<()> {
        let mut states = batch_buffer::<u64>(out.len())?;
        self.inner.next_ids(&mut states)?;
        for (o, s) in out.iter_mut().zip(states) {
            *o = self.id_of(s);
        }
        Ok(())
    }
    /// Fill `out` only if that needs no wait (`Ok(false)`, `out` untouched, where
    /// [`TimeIdGenerator::next_ids`] would sleep; see [`Generator::try_next_ids`]).
    pub fn try_next_ids(&self, out: &mut [u128]) -> Result<bool> {
        let mut states = batch_buffer::<u64>(out.len())?;
        if !self.inner.try_next_ids(&mut states)? {
            return Ok(false);
        }
        for (o, s) in out.iter_mut().zip(states) {
            *o = self.id_of(s);
        }
        Ok(true)
    }
    /// The shared settings this generator runs with (see [`Generator::settings`]).
    pub fn settings(&self) -> Settings {
        self.inner.settings()
    }
    /// The engine's health (node id 0; `lead_ms`, counters and clock state as for Snowflake).
    pub fn health(&self) -> Health {
        self.inner.health()
    }
    /// Stop issuing for good (see [`Generator::close`]).
    pub fn close(&self) {
        self.inner.close()
    }
    /// Cut every call waiting now (see [`Generator::interrupt_waits`]).
    pub fn interrupt_waits(&self) {
        self.inner.interrupt_waits()
    }
    /// Strict or monotonic.
    pub fn mode(&self) -> Mode {
        self.inner.mode()
    }
}

/// The UUID names of a [`Uuid7Generator`]'s calls.
impl TimeIdGenerator<Uuid7> {
    /// One UUID: [`TimeIdGenerator::next_id`].
    #[inline]
    pub fn next_uuid(&self) -> Result<u128> {
        self.next_id()
    }
    /// One UUID if that needs no wait: [`TimeIdGenerator::try_next_id`].
    #[inline]
    pub fn try_next_uuid(&self) -> Result<Option<u128>> {
        self.try_next_id()
    }
    /// Increasing UUIDs into `out`: [`TimeIdGenerator::next_ids`].
    pub fn next_uuids(&self, out: &mut [u128]) -> Result<()> {
        self.next_ids(out)
    }
    /// Increasing UUIDs into `out` if that needs no wait: [`TimeIdGenerator::try_next_ids`].
    pub fn try_next_uuids(&self, out: &mut [u128]) -> Result<bool> {
        self.try_next_ids(out)
    }
}

/// The ULID names of a [`UlidGenerator`]'s calls.
impl TimeIdGenerator<Ulid> {
    /// One ULID: [`TimeIdGenerator::next_id`].
    #[inline]
    pub fn next_ulid(&self) -> Result<u128> {
        self.next_id()
    }
    /// One ULID if that needs no wait: [`TimeIdGenerator::try_next_id`].
    #[inline]
    pub fn try_next_ulid(&self) -> Result<Option<u128>> {
        self.try_next_id()
    }
    /// Increasing ULIDs into `out`: [`TimeIdGenerator::next_ids`].
    pub fn next_ulids(&self, out: &mut [u128]) -> Result<()> {
        self.next_ids(out)
    }
    /// Increasing ULIDs into `out` if that needs no wait: [`TimeIdGenerator::try_next_ids`].
    pub fn try_next_ulids(&self, out: &mut [u128]) -> Result<bool> {
        self.try_next_ids(out)
    }
}
