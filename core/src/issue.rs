//! One issuing vocabulary for the three generator kinds: [`Issuer`], implemented by
//! [`Generator`] (64-bit Snowflake IDs) and by [`TimeIdGenerator`] of a fixed format
//! ([`Uuid7Generator`], [`UlidGenerator`]: 128-bit IDs, one generic impl). Their inherent
//! methods keep their names (`next_id`, `next_uuid`, `next_ulid`, ...); the trait only gives them
//! one set of names, so a front end (the CLI and its service, the Node binding) writes each call
//! once, generic over the kind, instead of its own trait, macro or dispatch. Every
//! implementation here delegates: no rule lives in this file. A `TimeIdGenerator<TimeFormat>`,
//! whose format is a run-time value, is no `Issuer`: [`Issuer::format_id`] needs the format
//! without a generator (it has the same inherent calls, and `format()` for the text).

use crate::{format_id, parse_id, FixedFormat, Generator, Health, Mode, Result, TimeIdGenerator};
#[cfg(any(doc, test))]
use crate::{format_ulid, format_uuid, UlidGenerator, Uuid7Generator};
#[cfg(doc)]
use crate::{parse_ulid, parse_uuid};
use std::fmt;

/// A generator of one ID kind, by the core's names for its calls: one ID ([`Issuer::next_id`]),
/// one without waiting ([`Issuer::try_next_id`]), a batch ([`Issuer::next_ids`]), a batch
/// without waiting ([`Issuer::try_next_ids`]), [`Issuer::health`], [`Issuer::close`],
/// [`Issuer::mode`] and [`Issuer::interrupt_waits`], and the ID's canonical text both ways
/// ([`Issuer::format_id`], [`Issuer::parse_id`]).
///
/// Each method behaves exactly as the inherent method it names (the waits, the refusals, the
/// all-or-nothing batches): see [`Generator::next_id`], [`Generator::try_next_id`],
/// [`Generator::next_ids`] and [`Generator::try_next_ids`]. Apart from the two text functions
/// the trait is dyn-compatible, so `&dyn Issuer<Id = u128>` serves either 128-bit kind.
///
/// ```
/// use polyflake::{Generator, HealthStatus, Issuer, ManualClock, TimeIdBuilder};
///
/// /// Three increasing IDs as text, one and then a batch of two, from any kind of generator.
/// fn three<G: Issuer>(g: &G) -> Vec<String> {
///     let mut ids = vec![g.next_id().unwrap(); 3];
///     g.next_ids(&mut ids[1..]).unwrap();
///     assert!(ids.windows(2).all(|w| w[0] < w[1]));
///     ids.into_iter().map(G::format_id).collect()
/// }
///
/// let clock = ManualClock::new(1_737_747_358_021);
/// let snowflake = Generator::builder(37).clock(clock.clone()).build().unwrap();
/// assert_eq!(three(&snowflake)[0], "141264821508263936");
/// let uuid7 = TimeIdBuilder::new().clock(clock.clone()).build_uuid7().unwrap();
/// assert!(three(&uuid7)[0].starts_with("019499d0-6145-7"));
/// let ulid = TimeIdBuilder::new().clock(clock).build_ulid().unwrap();
/// assert_eq!(three(&ulid)[2].len(), 26);
///
/// // Either 128-bit kind behind one reference.
/// for g in [&uuid7 as &dyn Issuer<Id = u128>, &ulid] {
///     assert!(g.try_next_id().unwrap().is_some());
///     g.close();
///     assert!(g.next_id().is_err());
///     assert_eq!(g.health().status, HealthStatus::Closed);
/// }
/// /// ```
pub trait Issuer: Send + Sync {
    /// The ID's integer: `u64` for a Snowflake ID, `u128` for a UUIDv7 or a ULID.
    type Id: Copy + Default + Ord + fmt::Debug + Send + Sync + 'static;

    /// One ID, waiting where the core waits (strict mode only) and refusing past that.
    fn next_id(&self) -> Result<Self::Id>;

    /// One ID if that needs no wait: `Ok(None)` where [`Issuer::next_id`] would sleep.
    fn try_next_id(&self) -> Result<Option<Self::Id>>;

    /// Fill `out` with increasing IDs; on an error `out` is left as it was.
    fn next_ids(&self, out: &mut [Self::Id]) -> Result<()>;

    /// Fill `out` only if that needs no wait: `Ok(false)`, `out` untouched and nothing issued,
    /// where [`Issuer::next_ids`] would sleep.
    fn try_next_ids(&self, out: &mut [Self::Id]) -> Result<bool>;

    /// A snapshot of the generator's state and counters.
    fn health(&self) -> Health;

    /// Stop issuing for good (a lease's slot is freed); closing twice is allowed.
    fn close(&self);

    /// Strict or monotonic.
    fn mode(&self) -> Mode;

    /// Cut every call of this generator waiting now (it fails with `Interrupted`).
    fn interrupt_waits(&self);

    /// An ID's canonical text: decimal for a Snowflake ID ([`format_id`]), the hyphenated
    /// lower-case form for a UUID ([`format_uuid`]), Crockford base32 for a ULID
    /// ([`format_ulid`]).
    fn format_id(id: Self::Id) -> String
    where
        Self: Sized;

    /// An ID from its text, as [`parse_id`], [`parse_uuid`] or [`parse_ulid`] read it.
    fn parse_id(text: &str) -> Result<Self::Id>
    where
        Self: Sized;
}

impl Issuer for Generator {
    type Id = u64;
    #[inline]
    fn next_id(&self) -> Result<u64> {
        Generator::next_id(self)
    }
    #[inline]
    fn try_next_id(&self) -> Result<Option<u64>> {
        Generator::try_next_id(self)
    }
    fn next_ids(&self, out: &mut [u64]) -> Result<()> {
        Generator::next_ids(self, out)
    }
    fn try_next_ids(&self, out: &mut [u64]) -> Result<bool> {
        Generator::try_next_ids(self, out)
    }
    fn health(&self) -> Health {
        Generator::health(self)
    }
    fn close(&self) {
        Generator::close(self)
    }
    fn mode(&self) -> Mode {
        Generator::mode(self)
    }
    fn interrupt_waits(&self) {
        Generator::interrupt_waits(self)
    }
    fn format_id(id: u64) -> String {
        format_id(id)
    }
    fn parse_id(text: &str) -> Result<u64> {
        parse_id(text)
    }
}

/// Both fixed formats in one impl: the format's text comes from its type.
impl<F: FixedFormat> Issuer for TimeIdGenerator<F> {
    type Id = u128;
    #[inline]
    fn next_id(&self) -> Result<u128> {
        TimeIdGenerator::next_id(self)
    }
    #[inline]
    fn try_next_id(&self) -> Result<Option<u128>> {
        TimeIdGenerator::try_next_id(self)
    }
    fn next_ids(&self, out: &mut [u128]) -> Result<()> {
        TimeIdGenerator::next_ids(self, out)
    }
    fn try_next_ids(&self, out: &mut [u128]) -> Result<bool> {
        TimeIdGenerator::try_next_ids(self, out)
    }
    fn health(&self) -> Health {
        TimeIdGenerator::health(self)
    }
    fn close(&self) {
        TimeIdGenerator::close(self)
    }
    fn mode(&self) -> Mode {
        TimeIdGenerator::mode(self)
    }
    fn interrupt_waits(&self) {
        TimeIdGenerator::interrupt_waits(self)
    }
    fn format_id(id: u128) -> String {
        F::FORMAT.format_id(id)
    }
    fn parse_id(text: &str) -> Result<u128> {
        F::FORMAT.parse_id(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ErrorKind, HealthStatus, ManualClock, TimeIdBuilder};

    /// Through the trait only, on a frozen test clock: one ID, a batch, the text both ways, the
    /// all-or-nothing try batch (refused, untouched, when more than a millisecond holds is
    /// asked), health, interrupt and close.
    fn drive<G: Issuer>(g: &G, per_ms: usize) {
        let first = g.next_id().unwrap();
        assert_eq!(G::parse_id(&G::format_id(first)).unwrap(), first);
        let mut batch = vec![G::Id::default(); 10];
        g.next_ids(&mut batch).unwrap();
        assert!(first < batch[0] && batch.windows(2).all(|w| w[0] < w[1]));
        let mut untouched = vec![G::Id::default(); per_ms + 1];
        assert!(!g.try_next_ids(&mut untouched).unwrap());
        assert!(untouched.iter().all(|id| *id == G::Id::default()));
        assert!(g.try_next_ids(&mut batch[..5]).unwrap());
        assert!(batch[..5].windows(2).all(|w| w[0] < w[1]) && batch[0] > batch[9]);
        assert!(g.try_next_id().unwrap().unwrap() > batch[4]);
        assert_eq!(g.mode(), Mode::Strict);
        assert!(g.health().ok);
        g.interrupt_waits();
        g.close();
        g.close();
        assert_eq!(g.next_id().unwrap_err().kind(), ErrorKind::GeneratorClosed);
        assert_eq!(g.health().status, HealthStatus::Closed);
    }

    #[test]
    fn every_kind_issues_through_the_trait() {
        let at = 1_737_747_358_021;
        let g = Generator::builder(37).clock(ManualClock::new(at)).build();
        drive(&g.unwrap(), 4096);
        // A spent millisecond: the try says so where the inherent call would wait.
        let g = Generator::builder(37)
            .clock(ManualClock::new(at))
            .build()
            .unwrap();
        let mut all = vec![0; 4096];
        Issuer::next_ids(&g, &mut all).unwrap();
        assert_eq!(Issuer::try_next_id(&g).unwrap(), None);
        let b = || TimeIdBuilder::new().clock(ManualClock::new(at));
        drive(&b().build_uuid7().unwrap(), 32_768);
        drive(&b().build_ulid().unwrap(), 32_768);
    }

    #[test]
    fn the_text_is_the_core_functions() {
        assert_eq!(
            Generator::format_id(141264821508263936),
            "141264821508263936"
        );
        assert_eq!(
            Generator::parse_id("141264821508263936").unwrap(),
            141264821508263936
        );
        let u = 0x017F22E2_79B0_7CC3_98C4_DC0C0C07398F;
        assert_eq!(Uuid7Generator::format_id(u), format_uuid(u));
        assert_eq!(UlidGenerator::format_id(u), format_ulid(u));
        assert_eq!(Uuid7Generator::parse_id(&format_uuid(u)).unwrap(), u);
        assert_eq!(UlidGenerator::parse_id(&format_ulid(u)).unwrap(), u);
        assert!(Generator::parse_id("-1").is_err());
    }
}
