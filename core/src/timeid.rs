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
//! - **`rand_a` is time**: the fraction of the reading's millisecond (0 on an injected clock
//!   that reads whole milliseconds), so a generator's UUIDs sort by time within a millisecond.
//! - **Text.** UUIDs are written in the canonical 36-character lower-case form and read in any
//!   case, hyphenated only; ULIDs are written in upper-case Crockford base32 and read in any
//!   case, `I`/`L` as 1 and `O` as 0 (`U` is not a digit), a first character above `7` (more
//!   than 128 bits) refused. Bad text is `InvalidId`.
//! - **After fork**: no node id, so no node-id rule. A forked child goes on from the state it
//!   inherited, but its random parts are its own (the ChaCha12 generators reseed and the ULID key
//!   is re-made whenever the fork generation changes), so parent and child differ in the random
//!   bits of UUIDs of the same state.

use crate::clock::{Clock, ClockSource};
use crate::error::{Error, Result};
use crate::fork;
use crate::forklock::ForkLock;
use crate::generator::{Builder, Generator, Health, Kind, Mode};
use crate::random::{os_seed, random_u64};
use crate::settings::Settings;
use rand::rngs::ChaCha12Rng;
use rand::{Rng, SeedableRng};
use std::cell::RefCell;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// Bits below the millisecond in the engine's state word.
const SUB_BITS: u32 = 15;

/// Settings for a [`Uuid7Generator`] or a [`UlidGenerator`]: the same as a Snowflake
/// generator's, less the node id and the layout.
///
/// ```
/// use polyflake::{Mode, TimeIdBuilder};
/// let g = TimeIdBuilder::new().mode(Mode::Monotonic).build_uuid7().unwrap();
/// assert!(g.next_uuid().unwrap() < g.next_uuid().unwrap());
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

    /// Check the settings and make a UUIDv7 generator.
    pub fn build_uuid7(self) -> Result<Uuid7Generator> {
        Ok(Uuid7Generator {
            inner: self.inner.time_ordered(Kind::Uuid7).build()?,
        })
    }

    /// Check the settings and make a ULID generator.
    pub fn build_ulid(self) -> Result<UlidGenerator> {
        Ok(UlidGenerator {
            inner: self.inner.time_ordered(Kind::Ulid).build()?,
            key: ForkLock::new(Key::fresh()),
            id: NEXT_ULID_GENERATOR.fetch_add(1, Ordering::Relaxed),
        })
    }
}

/// A UUID version 7 from an engine state and 64 random bits.
fn uuid7_of(state: i64, random: u64) -> u128 {
    let ms = (state >> SUB_BITS) as u128;
    let rand_a = ((state >> 3) & 0xfff) as u128;
    let counter = (state & 7) as u128;
    let rand_b = (counter << 59) | u128::from(random & ((1 << 59) - 1));
    (ms << 80) | (0x7 << 76) | (rand_a << 64) | (0b10 << 62) | rand_b
}

/// A generator of UUIDs version 7 (RFC 9562), time-ordered, with the Snowflake generator's
/// rewind guard. Thread-safe; share it.
///
/// ```
/// use polyflake::{format_uuid, uuid7_timestamp_ms, ManualClock, TimeIdBuilder};
/// let clock = ManualClock::new(1_645_557_742_000);
/// let g = TimeIdBuilder::new().clock(clock.clone()).build_uuid7().unwrap();
/// let u = g.next_uuid().unwrap();
/// assert_eq!(uuid7_timestamp_ms(u).unwrap(), 1_645_557_742_000);
/// assert!(format_uuid(u).starts_with("017f22e2-79b0-7"));
/// clock.advance(-600); // a rewind: refused in strict mode, as for Snowflake IDs
/// assert!(g.next_uuid().is_err());
/// ```
#[derive(Debug)]
pub struct Uuid7Generator {
    inner: Generator,
}

impl Uuid7Generator {
    /// A strict UUIDv7 generator on the system clock.
    pub fn strict() -> Result<Uuid7Generator> {
        TimeIdBuilder::new().build_uuid7()
    }
    /// A monotonic UUIDv7 generator on the system clock.
    pub fn monotonic() -> Result<Uuid7Generator> {
        TimeIdBuilder::new().mode(Mode::Monotonic).build_uuid7()
    }
    /// One UUID (as its 128-bit big-endian value).
    #[inline]
    pub fn next_uuid(&self) -> Result<u128> {
        let state = self.inner.next_id()?;
        Ok(uuid7_of(state as i64, random_u64()))
    }
    /// One UUID if that needs no wait (`Ok(None)` where [`Uuid7Generator::next_uuid`] would sleep).
    #[inline]
    pub fn try_next_uuid(&self) -> Result<Option<u128>> {
        Ok(self
            .inner
            .try_next_id()?
            .map(|s| uuid7_of(s as i64, random_u64())))
    }
    /// Fill `out` with increasing UUIDs; on an error `out` is left as it was.
    pub fn next_uuids(&self, out: &mut [u128]) -> Result<()> {
        let mut states = crate::generator::batch_buffer::<u64>(out.len())?;
        self.inner.next_ids(&mut states)?;
        for (o, s) in out.iter_mut().zip(states) {
            *o = uuid7_of(s as i64, random_u64());
        }
        Ok(())
    }
    /// Fill `out` only if that needs no wait (`Ok(false)`, `out` untouched, where
    /// [`Uuid7Generator::next_uuids`] would sleep; see [`Generator::try_next_ids`]).
    pub fn try_next_uuids(&self, out: &mut [u128]) -> Result<bool> {
        let mut states = crate::generator::batch_buffer::<u64>(out.len())?;
        if !self.inner.try_next_ids(&mut states)? {
            return Ok(false);
        }
        for (o, s) in out.iter_mut().zip(states) {
            *o = uuid7_of(s as i64, random_u64());
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

/// A ULID generator's key for the per-millisecond bases, and the fork generation it belongs to.
struct Key {
    generation: u64,
    seed: [u8; 32],
}

impl Key {
    fn fresh() -> Key {
        Key {
            generation: fork::current_fork_generation(),
            seed: os_seed(),
        }
    }
}

static NEXT_ULID_GENERATOR: AtomicU64 = AtomicU64::new(1);

thread_local! {
    /// The last base computed on this thread: (generator, fork generation, ms) -> base.
    static BASE: RefCell<(u64, u64, i64, u128)> = const { RefCell::new((0, 0, -1, 0)) };
}

/// A ULID generator: 48 bits of Unix ms and 80 bits that increase by one within a millisecond
/// (the ULID spec's monotonic variant), with the Snowflake generator's rewind guard.
///
/// ```
/// use polyflake::{format_ulid, ulid_timestamp_ms, TimeIdBuilder};
/// let g = TimeIdBuilder::new().build_ulid().unwrap();
/// let (a, b) = (g.next_ulid().unwrap(), g.next_ulid().unwrap());
/// assert!(b > a);
/// assert_eq!(format_ulid(a).len(), 26);
/// assert!(ulid_timestamp_ms(a) > 1_704_067_200_000);
/// ```
pub struct UlidGenerator {
    inner: Generator,
    key: ForkLock<Key>,
    id: u64,
}

impl std::fmt::Debug for UlidGenerator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UlidGenerator")
            .field("mode", &self.inner.mode())
            .finish_non_exhaustive()
    }
}

impl UlidGenerator {
    /// A strict ULID generator on the system clock.
    pub fn strict() -> Result<UlidGenerator> {
        TimeIdBuilder::new().build_ulid()
    }
    /// A monotonic ULID generator on the system clock.
    pub fn monotonic() -> Result<UlidGenerator> {
        TimeIdBuilder::new().mode(Mode::Monotonic).build_ulid()
    }

    /// The 79-bit base of millisecond `ms`: the start of a ChaCha12 stream keyed by this
    /// generator's key (re-made in a forked child) at stream index `ms`.
    fn base(&self, ms: i64) -> u128 {
        let generation = fork::current_fork_generation();
        let hit = BASE.with(|b| {
            let b = b.borrow();
            (b.0 == self.id && b.1 == generation && b.2 == ms).then_some(b.3)
        });
        if let Some(base) = hit {
            return base;
        }
        let seed = {
            let mut key = self.key.lock();
            if key.generation != generation {
                *key = Key::fresh();
            }
            key.seed
        };
        let mut rng = ChaCha12Rng::from_seed(seed);
        rng.set_stream(ms as u64);
        let base = ((u128::from(rng.next_u64()) << 64) | u128::from(rng.next_u64())) >> 49;
        BASE.with(|b| *b.borrow_mut() = (self.id, generation, ms, base));
        base
    }

    fn of(&self, state: i64) -> u128 {
        let ms = state >> SUB_BITS;
        let counter = (state & ((1 << SUB_BITS) - 1)) as u128;
        ((ms as u128) << 80) | (self.base(ms) + counter)
    }

    /// One ULID (as its 128-bit value).
    #[inline]
    pub fn next_ulid(&self) -> Result<u128> {
        let state = self.inner.next_id()?;
        Ok(self.of(state as i64))
    }
    /// One ULID if that needs no wait.
    pub fn try_next_ulid(&self) -> Result<Option<u128>> {
        Ok(self.inner.try_next_id()?.map(|s| self.of(s as i64)))
    }
    /// Fill `out` with increasing ULIDs; on an error `out` is left as it was.
    pub fn next_ulids(&self, out: &mut [u128]) -> Result<()> {
        let mut states = crate::generator::batch_buffer::<u64>(out.len())?;
        self.inner.next_ids(&mut states)?;
        for (o, s) in out.iter_mut().zip(states) {
            *o = self.of(s as i64);
        }
        Ok(())
    }
    /// Fill `out` only if that needs no wait (`Ok(false)`, `out` untouched, where
    /// [`UlidGenerator::next_ulids`] would sleep; see [`Generator::try_next_ids`]).
    pub fn try_next_ulids(&self, out: &mut [u128]) -> Result<bool> {
        let mut states = crate::generator::batch_buffer::<u64>(out.len())?;
        if !self.inner.try_next_ids(&mut states)? {
            return Ok(false);
        }
        for (o, s) in out.iter_mut().zip(states) {
            *o = self.of(s as i64);
        }
        Ok(true)
    }
    /// The shared settings this generator runs with (see [`Generator::settings`]).
    pub fn settings(&self) -> Settings {
        self.inner.settings()
    }
    /// The engine's health.
    pub fn health(&self) -> Health {
        self.inner.health()
    }
    /// Stop issuing for good.
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

const HEX: &[u8; 16] = b"0123456789abcdef";

/// The canonical text of a UUID: 36 characters, lower-case hex, hyphens after 8, 12, 16 and 20
/// digits.
///
/// ```
/// assert_eq!(
///     polyflake::format_uuid(0x017F22E2_79B0_7CC3_98C4_DC0C0C07398F),
///     "017f22e2-79b0-7cc3-98c4-dc0c0c07398f"
/// );
/// ```
pub fn format_uuid(u: u128) -> String {
    let mut out = String::with_capacity(36);
    for i in 0..32 {
        if matches!(i, 8 | 12 | 16 | 20) {
            out.push('-');
        }
        out.push(HEX[((u >> (124 - 4 * i)) & 0xf) as usize] as char);
    }
    out
}

fn bad_id(input: &str, reason: &'static str) -> Error {
    Error::InvalidId {
        input: input.chars().take(64).collect(),
        reason,
    }
}

/// Parse a UUID's text: the 36-character hyphenated form, hex digits in any case.
///
/// ```
/// let u = polyflake::parse_uuid("017F22E2-79B0-7CC3-98C4-DC0C0C07398F").unwrap();
/// assert_eq!(u, 0x017F22E2_79B0_7CC3_98C4_DC0C0C07398F);
/// assert!(polyflake::parse_uuid("017F22E2-79B0-7CC3-98C4-DC0C0C07398").is_err());
/// ```
pub fn parse_uuid(text: &str) -> Result<u128> {
    let b = text.as_bytes();
    if b.len() != 36 {
        return Err(bad_id(
            text,
            "a UUID is 36 characters: 8-4-4-4-12 hex digits",
        ));
    }
    let mut u: u128 = 0;
    for (i, &c) in b.iter().enumerate() {
        if matches!(i, 8 | 13 | 18 | 23) {
            if c != b'-' {
                return Err(bad_id(
                    text,
                    "a UUID has hyphens after 8, 12, 16 and 20 digits",
                ));
            }
            continue;
        }
        let d = (c as char)
            .to_digit(16)
            .ok_or_else(|| bad_id(text, "a UUID's digits are hexadecimal"))?;
        u = (u << 4) | u128::from(d);
    }
    Ok(u)
}

/// The Unix ms of a UUID version 7 (its first 48 bits); refused unless its version is 7 and its
/// variant is RFC 9562's.
///
/// ```
/// let u = polyflake::parse_uuid("017f22e2-79b0-7cc3-98c4-dc0c0c07398f").unwrap();
/// assert_eq!(polyflake::uuid7_timestamp_ms(u).unwrap(), 1_645_557_742_000);
/// ```
pub fn uuid7_timestamp_ms(u: u128) -> Result<i64> {
    if (u >> 76) & 0xf != 7 || (u >> 62) & 0b11 != 0b10 {
        return Err(Error::InvalidId {
            input: format_uuid(u),
            reason: "not a UUID version 7 (version 7, variant 0b10)",
        });
    }
    Ok((u >> 80) as i64)
}

const CROCKFORD: &[u8; 32] = b"0123456789ABCDEFGHJKMNPQRSTVWXYZ";

/// The text of a ULID: 26 characters of Crockford's base32, upper case.
///
/// ```
/// assert_eq!(polyflake::format_ulid(0), "00000000000000000000000000");
/// assert_eq!(polyflake::format_ulid(u128::MAX), "7ZZZZZZZZZZZZZZZZZZZZZZZZZ");
/// ```
pub fn format_ulid(u: u128) -> String {
    (0..26)
        .map(|i| CROCKFORD[((u >> (125 - 5 * i)) & 0x1f) as usize] as char)
        .collect()
}

/// Parse a ULID's text: 26 characters of Crockford's base32, any case, `I` and `L` read as 1 and
/// `O` as 0 (`U` is not a digit); a first character above `7` would overflow 128 bits and is
/// refused.
///
/// ```
/// let u = polyflake::parse_ulid("01arz3ndektsv4rrffq69g5fav").unwrap();
/// assert_eq!(polyflake::format_ulid(u), "01ARZ3NDEKTSV4RRFFQ69G5FAV");
/// assert!(polyflake::parse_ulid("81ARZ3NDEKTSV4RRFFQ69G5FAV").is_err());
/// ```
pub fn parse_ulid(text: &str) -> Result<u128> {
    let b = text.as_bytes();
    if b.len() != 26 {
        return Err(bad_id(
            text,
            "a ULID is 26 characters of Crockford's base32",
        ));
    }
    let mut u: u128 = 0;
    for (i, &c) in b.iter().enumerate() {
        let d: u128 = match c.to_ascii_uppercase() {
            c @ b'0'..=b'9' => u128::from(c - b'0'),
            b'I' | b'L' => 1,
            b'O' => 0,
            c => match CROCKFORD.iter().position(|&x| x == c) {
                Some(p) => p as u128,
                None => return Err(bad_id(text, "not a Crockford base32 digit (U is not one)")),
            },
        };
        if i == 0 && d > 7 {
            return Err(bad_id(
                text,
                "a ULID's first character is at most 7 (128 bits)",
            ));
        }
        u = (u << 5) | d;
    }
    Ok(u)
}

/// The Unix ms of a ULID (its first 48 bits).
///
/// ```
/// let u = polyflake::parse_ulid("01ARZ3NDEKTSV4RRFFQ69G5FAV").unwrap();
/// assert_eq!(polyflake::ulid_timestamp_ms(u), 1_469_922_850_259);
/// ```
pub fn ulid_timestamp_ms(u: u128) -> i64 {
    (u >> 80) as i64
}
