//! The format a [`TimeIdGenerator`](crate::TimeIdGenerator) issues in, as its type parameter:
//! what an engine state becomes (a UUIDv7 or a ULID), the ID's text and timestamp, each written
//! once per format here.
//!
//! A format is a type fixed at compile time ([`Uuid7`], [`Ulid`]) or a value chosen at run time
//! ([`TimeFormat`], what a binding's one class holds). The generator asks it for its value on
//! every ID and matches on that: for a fixed format the value is a constant, so the match folds
//! away and a `TimeIdGenerator<Uuid7>` runs the UUIDv7 code alone, as the separate type did; a
//! run-time format pays one well-predicted branch.

use crate::error::{Error, Result};
use crate::fork;
use crate::forklock::ForkLock;
use crate::generator::Kind;
use crate::random::{os_seed, random_u64};
use crate::timeid::text::{
    format_ulid, format_uuid, parse_ulid, parse_uuid, ulid_timestamp_ms, uuid7_timestamp_ms,
};
use rand::rngs::ChaCha12Rng;
use rand::{Rng, SeedableRng};
use std::cell::RefCell;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};

/// Bits below the millisecond in the engine's state word.
pub(crate) const SUB_BITS: u32 = 15;

mod sealed {
    /// Only the core's formats: the generator's code matches on every one of them.
    pub trait Sealed {}
    impl Sealed for super::Uuid7 {}
    impl Sealed for super::Ulid {}
    impl Sealed for super::TimeFormat {}
}

/// The type parameter of a [`TimeIdGenerator`](crate::TimeIdGenerator): [`Uuid7`] or [`Ulid`],
/// fixed at compile time, or [`TimeFormat`], a value chosen at run time. Sealed.
pub trait TimeIdFormat: sealed::Sealed + Copy + fmt::Debug + Send + Sync + 'static {
    /// This format as a value (a constant for a fixed format).
    fn value(self) -> TimeFormat;
}

/// A format fixed at compile time ([`Uuid7`], [`Ulid`]): its generator has `strict()` and
/// `monotonic()` and is an [`Issuer`](crate::Issuer), whose text functions need the format
/// without a generator.
pub trait FixedFormat: TimeIdFormat + Default {
    /// The format.
    const FORMAT: TimeFormat;
}

/// UUID version 7 (RFC 9562), fixed at compile time: `TimeIdGenerator<Uuid7>` is
/// [`Uuid7Generator`](crate::Uuid7Generator).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Uuid7;

/// ULID, fixed at compile time: `TimeIdGenerator<Ulid>` is
/// [`UlidGenerator`](crate::UlidGenerator).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Ulid;

impl TimeIdFormat for Uuid7 {
    #[inline(always)]
    fn value(self) -> TimeFormat {
        TimeFormat::Uuid7
    }
}

impl FixedFormat for Uuid7 {
    const FORMAT: TimeFormat = TimeFormat::Uuid7;
}

impl TimeIdFormat for Ulid {
    #[inline(always)]
    fn value(self) -> TimeFormat {
        TimeFormat::Ulid
    }
}

impl FixedFormat for Ulid {
    const FORMAT: TimeFormat = TimeFormat::Ulid;
}

/// A 128-bit time-ID format as a value: what a binding takes by name and its one generator
/// class holds (`TimeIdGenerator<TimeFormat>`, the default parameter), and the text and
/// timestamp functions of either format behind one call.
///
/// ```
/// use polyflake::TimeFormat;
/// let f = TimeFormat::from_name("ulid").unwrap();
/// let u = f.parse_id("01arz3ndektsv4rrffq69g5fav").unwrap();
/// assert_eq!(f.format_id(u), "01ARZ3NDEKTSV4RRFFQ69G5FAV");
/// assert_eq!(f.timestamp_ms(u).unwrap(), 1_469_922_850_259);
/// assert_eq!(TimeFormat::Uuid7.format_id(u).len(), 36);
/// assert!(TimeFormat::from_name("uuidv7").is_err());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TimeFormat {
    /// UUID version 7 (RFC 9562): 36-character lower-case hyphenated text.
    Uuid7,
    /// ULID: 26 characters of Crockford's base32, upper case.
    Ulid,
}

impl TimeIdFormat for TimeFormat {
    #[inline(always)]
    fn value(self) -> TimeFormat {
        self
    }
}

impl TimeFormat {
    /// Both formats.
    pub const ALL: [TimeFormat; 2] = [TimeFormat::Uuid7, TimeFormat::Ulid];

    /// `"uuid7"` or `"ulid"` (the bindings' function names: `uuid7()`, `ulid()`).
    pub const fn name(self) -> &'static str {
        match self {
            TimeFormat::Uuid7 => "uuid7",
            TimeFormat::Ulid => "ulid",
        }
    }

    /// The format named `"uuid7"` or `"ulid"` (what a binding takes as a `format` option).
    pub fn from_name(name: &str) -> Result<TimeFormat> {
        TimeFormat::ALL
            .into_iter()
            .find(|f| f.name() == name)
            .ok_or_else(|| Error::InvalidArgument {
                name: "format",
                reason: format!("{name:?} is not a time-ID format: use \"uuid7\" or \"ulid\""),
            })
    }

    /// An ID's canonical text: [`format_uuid`] or [`format_ulid`].
    pub fn format_id(self, id: u128) -> String {
        match self {
            TimeFormat::Uuid7 => format_uuid(id),
            TimeFormat::Ulid => format_ulid(id),
        }
    }

    /// An ID from its text: [`parse_uuid`] or [`parse_ulid`].
    pub fn parse_id(self, text: &str) -> Result<u128> {
        match self {
            TimeFormat::Uuid7 => parse_uuid(text),
            TimeFormat::Ulid => parse_ulid(text),
        }
    }

    /// An ID's Unix ms: [`uuid7_timestamp_ms`] (which refuses a UUID of another version) or
    /// [`ulid_timestamp_ms`].
    pub fn timestamp_ms(self, id: u128) -> Result<i64> {
        match self {
            TimeFormat::Uuid7 => uuid7_timestamp_ms(id),
            TimeFormat::Ulid => Ok(ulid_timestamp_ms(id)),
        }
    }

    /// What the engine's state words become for this format.
    pub(crate) const fn kind(self) -> Kind {
        match self {
            TimeFormat::Uuid7 => Kind::Uuid7,
            TimeFormat::Ulid => Kind::Ulid,
        }
    }

    /// The ID of engine state `state`: a UUIDv7 with fresh random bits, or a ULID on `bases`.
    #[inline(always)]
    pub(crate) fn id(self, state: i64, bases: &UlidBases) -> u128 {
        match self {
            TimeFormat::Uuid7 => uuid7_of(state, random_u64()),
            TimeFormat::Ulid => bases.ulid_of(state),
        }
    }
}

impl fmt::Display for TimeFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A UUID version 7 from an engine state and 64 random bits.
#[inline]
fn uuid7_of(state: i64, random: u64) -> u128 {
    let ms = (state >> SUB_BITS) as u128;
    let rand_a = ((state >> 3) & 0xfff) as u128;
    let counter = (state & 7) as u128;
    let rand_b = (counter << 59) | u128::from(random & ((1 << 59) - 1));
    (ms << 80) | (0x7 << 76) | (rand_a << 64) | (0b10 << 62) | rand_b
}

/// The key of a generator's per-millisecond ULID bases, and the fork generation it belongs to.
struct Key {
    generation: u64,
    seed: [u8; 32],
}

impl Key {
    /// No key yet: the first ULID makes one (a UUIDv7 generator never does).
    const UNSET: Key = Key {
        generation: u64::MAX,
        seed: [0; 32],
    };

    fn fresh() -> Key {
        Key {
            generation: fork::current_fork_generation(),
            seed: os_seed(),
        }
    }
}

static NEXT_GENERATOR: AtomicU64 = AtomicU64::new(1);

thread_local! {
    /// The last base computed on this thread: (generator, fork generation, ms) -> base.
    static BASE: RefCell<(u64, u64, i64, u128)> = const { RefCell::new((0, 0, -1, 0)) };
}

/// A generator's ULID bases: 79 bits per millisecond from a ChaCha12 stream keyed per
/// generator, so every thread agrees on a millisecond's base without shared state.
pub(crate) struct UlidBases {
    key: ForkLock<Key>,
    /// This generator, in the per-thread cache of the last base.
    id: u64,
}

impl UlidBases {
    pub(crate) fn new() -> UlidBases {
        UlidBases {
            key: ForkLock::new(Key::UNSET),
            id: NEXT_GENERATOR.fetch_add(1, Ordering::Relaxed),
        }
    }

    /// The 79-bit base of millisecond `ms`: the start of a ChaCha12 stream keyed by this
    /// generator's key (made on first use, and again in a forked child) at stream index `ms`.
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

    /// The ULID of engine state `state`: its millisecond, then that millisecond's base plus the
    /// state's 15-bit counter (the base's top bit is 0, so the sum never leaves 80 bits).
    fn ulid_of(&self, state: i64) -> u128 {
        let ms = state >> SUB_BITS;
        let counter = (state & ((1 << SUB_BITS) - 1)) as u128;
        ((ms as u128) << 80) | (self.base(ms) + counter)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ManualClock, TimeIdBuilder};

    #[test]
    fn a_format_chosen_at_run_time_issues_as_the_fixed_one() {
        let at = 1_737_747_358_021;
        let b = || TimeIdBuilder::new().clock(ManualClock::new(at));
        for format in TimeFormat::ALL {
            assert_eq!(TimeFormat::from_name(format.name()).unwrap(), format);
            let g = b().build(format).unwrap();
            assert_eq!(g.format(), format);
            let (x, y) = (g.next_id().unwrap(), g.next_id().unwrap());
            assert!(x < y && format.timestamp_ms(y).unwrap() == at);
            assert_eq!(format.parse_id(&format.format_id(y)).unwrap(), y);
        }
        // The fields each format's layout fixes, through the value and through the type.
        let (ulid, fixed) = (
            b().build(TimeFormat::Ulid).unwrap(),
            b().build(Ulid).unwrap(),
        );
        let (a, c) = (ulid.next_id().unwrap(), ulid.next_id().unwrap());
        assert_eq!((c - a, a >> 80), (1, at as u128)); // +1 within the millisecond
        let (a, c) = (fixed.next_id().unwrap(), fixed.next_id().unwrap());
        assert_eq!((c - a, a >> 80), (1, at as u128));
        let u = b().build(TimeFormat::Uuid7).unwrap().next_id().unwrap();
        assert_eq!(
            ((u >> 76) & 0xf, (u >> 62) & 0b11, u >> 80),
            (7, 0b10, at as u128)
        );
        assert!(TimeFormat::from_name("uuidv7").is_err());
    }
}
