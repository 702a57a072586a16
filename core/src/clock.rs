//! Time sources. The generator reads the wall clock through [`Clock`] (so tests and simulations can
//! script any fault), and measures its own waits with the monotonic clock, which no NTP step or
//! injected clock can move.
//!
//! ## Decisions
//!
//! - **Test clocks step and elapse apart.** `ManualClock::advance` and `set` step the wall
//!   reading (the boot reading stays), `ManualClock::elapse` lets time pass (both move), so a
//!   test shows the forward-step check both. A `ScriptedClock`'s boot clock counts reads (each a
//!   millisecond of elapsed time): its ticks after the script are time passing, a scripted jump
//!   ahead is a step. Any other [`Clock`] reads the system's boot clock unless it says otherwise
//!   ([`Clock::boot_ms`]).
//! - **`ClockSource::Coarse`** reads `CLOCK_REALTIME_COARSE` (the last tick's time, from the
//!   vDSO, a fraction of a precise read) per ID. A coarse reading is a past tick of the same
//!   clock, never ahead of it, so strict mode issues at `max(last issued ms, coarse)` while the
//!   millisecond's sequence lasts and keeps its promise (an ID's timestamp never exceeds the
//!   wall clock). Only a spent sequence, or a coarse reading behind the last issued millisecond
//!   (a tick's lag, or a real rewind: the coarse clock shows a step at once), asks the precise
//!   reading, under the usual wait and refuse rules. Monotonic mode floors at the coarse reading
//!   and decides a `max_lead_ms` refusal on the precise one (the tick's lag would otherwise count
//!   as lead). Batches read the precise clock (they spend milliseconds anyway).
//! - **The trade, and why coarse is not the default**: at low rates an ID's timestamp may be up
//!   to one tick (4 ms at HZ=250) older than the call, loosening cross-node order by that much.
//! - **The tick** comes from `clock_getres` at construction and is reported in health
//!   (`clock_tick_ns`); where the coarse clock is missing or its tick is over
//!   [`MAX_COARSE_TICK_NS`] (10 ms) the generator uses the precise clock and health says why
//!   (`clock_note`); health's `clock_source` is the source in effect.
//! - **Injected clocks model both readings** ([`Clock::coarse_ms`], by default the precise one,
//!   and [`Clock::coarse_is_precise`]); a clock whose coarse reading is its precise one is read
//!   once per step, exactly as in precise mode, so every scenario file gives the same IDs on both
//!   sources (the Rust runner runs each file on both). `ManualClock::set_tick_ms` models a tick.

use crate::sync::{AtomicI64, Ordering};
use std::fmt;
use std::sync::Mutex;
use std::time::Duration;

/// A failed clock reading (for example a user-supplied callable that raised).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClockError(pub String);

impl fmt::Display for ClockError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ClockError {}

/// A wall clock in Unix milliseconds.
///
/// Implement it to feed a generator your own time source. Readings may go backwards, stop or
/// jump: that is what the generator guards against.
///
/// ```
/// use polyflake::{Clock, ClockError};
/// struct Fixed(i64);
/// impl Clock for Fixed {
///     fn now_ms(&self) -> Result<i64, ClockError> { Ok(self.0) }
/// }
/// assert_eq!(Fixed(5).now_ms().unwrap(), 5);
/// ```
pub trait Clock: Send + Sync {
    /// The current time in Unix milliseconds.
    fn now_ms(&self) -> Result<i64, ClockError>;

    /// How long to sleep, at most, before the reading can have moved to the next millisecond.
    /// Exhaustion waits sleep this long (never spin). The default, 200 µs, suits clocks that do
    /// not follow real time.
    fn until_next_ms(&self) -> Duration {
        Duration::from_micros(200)
    }

    /// Milliseconds on a clock that only moves with elapsed time and also counts time spent
    /// suspended (Linux `CLOCK_BOOTTIME`). The generator compares the wall clock's progress
    /// with it to tell a forward STEP of the wall clock (a bad NTP server, a VM restored with a
    /// wrong clock) from time that really passed. The default reads the system's boot clock,
    /// which suits any clock that follows real time (a wrapper around the system clock).
    fn boot_ms(&self) -> i64 {
        SystemClock::boot_ms()
    }

    /// The current time in Unix nanoseconds, for formats that carry sub-millisecond time
    /// (UUIDv7). The default is `now_ms` in nanoseconds (a fraction of 0).
    fn now_ns(&self) -> Result<i64, ClockError> {
        self.now_ms().map(|ms| ms.saturating_mul(1_000_000))
    }

    /// A cheaper reading that may lag `now_ms` but is never ahead of it: the time of the last
    /// clock tick (what [`ClockSource::Coarse`] reads; the system's is `CLOCK_REALTIME_COARSE`).
    /// The default is `now_ms` itself.
    fn coarse_ms(&self) -> Result<i64, ClockError> {
        self.now_ms()
    }

    /// True when `coarse_ms` is no cheaper or coarser reading than `now_ms` but the same one
    /// (the default): a [`ClockSource::Coarse`] generator then simply reads `now_ms`, once per
    /// step, exactly like a precise one.
    fn coarse_is_precise(&self) -> bool {
        true
    }

    /// True only for the test clocks ([`ManualClock`], [`ScriptedClock`]): generators on them
    /// are independent of each other and exempt from the one-generator-per-node-id rule. Any
    /// other clock (a user's own time source) is treated like the system clock there.
    fn is_test_clock(&self) -> bool {
        false
    }
}

/// The operating system's wall clock (`CLOCK_REALTIME`).
///
/// ```
/// use polyflake::{Clock, SystemClock};
/// assert!(SystemClock.now_ms().unwrap() > 1_704_067_200_000);
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl SystemClock {
    #[inline]
    fn timespec() -> libc::timespec {
        read_clock(libc::CLOCK_REALTIME)
    }

    /// The system wall clock in Unix milliseconds, read directly (the generator's hot path).
    #[inline]
    // `time_t` and `c_long` are i64 here but narrower on 32-bit targets: keep the casts.
    #[allow(clippy::unnecessary_cast)]
    pub fn read_ms() -> i64 {
        let ts = Self::timespec();
        ts.tv_sec as i64 * 1000 + ts.tv_nsec as i64 / 1_000_000
    }

    /// The system wall clock in Unix nanoseconds.
    ///
    /// ```
    /// assert!(polyflake::SystemClock::read_ns() / 1_000_000 >= 1_704_067_200_000);
    /// ```
    #[inline]
    #[allow(clippy::unnecessary_cast)]
    pub fn read_ns() -> i64 {
        let ts = Self::timespec();
        ts.tv_sec as i64 * 1_000_000_000 + ts.tv_nsec as i64
    }

    /// The coarse wall clock (`CLOCK_REALTIME_COARSE`: the time of the last tick, read from the
    /// vDSO without touching the hardware clock) in Unix milliseconds. Never ahead of
    /// [`SystemClock::read_ms`]; behind it by up to one tick.
    ///
    /// ```
    /// let coarse = polyflake::SystemClock::read_coarse_ms();
    /// assert!(coarse <= polyflake::SystemClock::read_ms());
    /// ```
    #[inline]
    #[allow(clippy::unnecessary_cast)]
    pub fn read_coarse_ms() -> i64 {
        let ts = read_clock(libc::CLOCK_REALTIME_COARSE);
        ts.tv_sec as i64 * 1000 + ts.tv_nsec as i64 / 1_000_000
    }

    /// The resolution of the coarse wall clock in nanoseconds (`clock_getres`): its tick, 4 ms
    /// with HZ=250. `None` where the clock does not exist.
    pub fn coarse_resolution_ns() -> Option<u64> {
        resolution_ns(libc::CLOCK_REALTIME_COARSE)
    }

    /// The resolution of the precise wall clock in nanoseconds (`clock_getres`).
    pub fn resolution_ns() -> Option<u64> {
        resolution_ns(libc::CLOCK_REALTIME)
    }

    /// The boot clock (`CLOCK_BOOTTIME`: never steps, counts suspend) in milliseconds.
    ///
    /// ```
    /// let a = polyflake::SystemClock::boot_ms();
    /// assert!(polyflake::SystemClock::boot_ms() >= a);
    /// ```
    #[allow(clippy::unnecessary_cast)]
    pub fn boot_ms() -> i64 {
        let ts = read_clock(libc::CLOCK_BOOTTIME);
        ts.tv_sec as i64 * 1000 + ts.tv_nsec as i64 / 1_000_000
    }
}

#[allow(clippy::unnecessary_cast)]
fn resolution_ns(id: libc::clockid_t) -> Option<u64> {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec.
    let rc = unsafe { libc::clock_getres(id, &mut ts) };
    (rc == 0).then(|| ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64)
}

#[inline]
fn read_clock(id: libc::clockid_t) -> libc::timespec {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; CLOCK_REALTIME and CLOCK_BOOTTIME always exist
    // on Linux.
    unsafe { libc::clock_gettime(id, &mut ts) };
    ts
}

impl Clock for SystemClock {
    #[inline]
    fn now_ms(&self) -> Result<i64, ClockError> {
        Ok(Self::read_ms())
    }

    #[inline]
    fn coarse_ms(&self) -> Result<i64, ClockError> {
        Ok(Self::read_coarse_ms())
    }

    fn coarse_is_precise(&self) -> bool {
        false
    }

    #[inline]
    fn now_ns(&self) -> Result<i64, ClockError> {
        Ok(Self::read_ns())
    }

    fn until_next_ms(&self) -> Duration {
        let ns_into_ms = Self::timespec().tv_nsec as u64 % 1_000_000;
        Duration::from_nanos(1_000_000 - ns_into_ms)
    }
}

/// A clock that only moves when told to: for tests and simulations.
///
/// It has two readings, like a real host: the wall clock (`now_ms`) and a boot clock
/// (`boot_ms`) that counts elapsed time. [`ManualClock::set`] and [`ManualClock::advance`] STEP
/// the wall clock alone (what NTP, an operator or a leap second does); [`ManualClock::elapse`]
/// lets time pass, moving both. A wall clock that runs ahead of elapsed time by more than the
/// generator's `max_forward_step_ms` is a forward step the generator does not trust.
///
/// Clones share one reading, so a test can keep a handle and move the clock a generator reads.
///
/// ```
/// use polyflake::{Clock, ManualClock};
/// let c = ManualClock::new(1_000);
/// let handle = c.clone();
/// handle.advance(5);
/// assert_eq!(c.now_ms().unwrap(), 1_005);
/// handle.set(400);
/// assert_eq!(c.now_ms().unwrap(), 400);
/// handle.elapse(60);
/// assert_eq!((c.now_ms().unwrap(), c.boot_ms()), (460, 60));
/// ```
#[derive(Debug, Clone)]
pub struct ManualClock {
    ms: std::sync::Arc<AtomicI64>,
    boot: std::sync::Arc<AtomicI64>,
    tick: std::sync::Arc<AtomicI64>,
}

impl ManualClock {
    /// A clock reading `start_ms`, whose boot clock reads 0.
    pub fn new(start_ms: i64) -> ManualClock {
        ManualClock {
            ms: std::sync::Arc::new(AtomicI64::new(start_ms)),
            boot: std::sync::Arc::new(AtomicI64::new(0)),
            tick: std::sync::Arc::new(AtomicI64::new(1)),
        }
    }

    /// Model a tick-based coarse reading: from now on `coarse_ms` is the wall reading rounded
    /// down to a multiple of `tick_ms` (the time of the last tick, as `CLOCK_REALTIME_COARSE`
    /// is), lagging it by up to `tick_ms - 1`; a step of the wall clock shows in it at once.
    /// The default tick is 1 ms (coarse = precise). A tick below 1 is taken as 1. Set it before
    /// building a generator on the clock: a generator decides at build whether the clock has a
    /// coarse reading of its own.
    ///
    /// ```
    /// use polyflake::{Clock, ManualClock};
    /// let c = ManualClock::new(1_003);
    /// c.set_tick_ms(4);
    /// assert_eq!((c.now_ms().unwrap(), c.coarse_ms().unwrap()), (1_003, 1_000));
    /// ```
    pub fn set_tick_ms(&self, tick_ms: i64) {
        self.tick.store(tick_ms.max(1), Ordering::SeqCst);
    }

    /// Step the wall reading to `ms` (backwards is a rewind, forwards a forward step).
    pub fn set(&self, ms: i64) {
        self.ms.store(ms, Ordering::SeqCst);
    }

    /// Step the wall reading by `delta_ms` (negative moves it back). Elapsed time does not
    /// move: use [`ManualClock::elapse`] for time passing.
    pub fn advance(&self, delta_ms: i64) {
        self.ms.fetch_add(delta_ms, Ordering::SeqCst);
    }

    /// Let `ms` milliseconds pass: the boot clock and the wall clock both move forward by it.
    pub fn elapse(&self, ms: u64) {
        let ms = i64::try_from(ms).unwrap_or(i64::MAX);
        // Boot first: a reader that sees the new wall reading then also sees the new boot
        // reading, so a concurrent call never mistakes passing time for a forward step.
        self.boot.fetch_add(ms, Ordering::SeqCst);
        self.ms.fetch_add(ms, Ordering::SeqCst);
    }

    /// The current wall reading.
    pub fn get(&self) -> i64 {
        self.ms.load(Ordering::SeqCst)
    }
}

impl Clock for ManualClock {
    fn now_ms(&self) -> Result<i64, ClockError> {
        Ok(self.get())
    }
    fn coarse_ms(&self) -> Result<i64, ClockError> {
        let (ms, tick) = (self.get(), self.tick.load(Ordering::SeqCst));
        Ok(ms - ms.rem_euclid(tick))
    }
    fn coarse_is_precise(&self) -> bool {
        self.tick.load(Ordering::SeqCst) == 1
    }
    fn boot_ms(&self) -> i64 {
        self.boot.load(Ordering::SeqCst)
    }
    fn is_test_clock(&self) -> bool {
        true
    }
}

/// A clock that returns prepared readings in order, then ticks forward 1 ms per read,
/// for making a clock jump back, stop or retreat on every read.
///
/// Its boot clock counts reads: every reading is one millisecond of elapsed time, so the ticks
/// after the script are time passing, and a scripted jump ahead is a forward step.
///
/// ```
/// use polyflake::{Clock, ScriptedClock};
/// let c = ScriptedClock::new(vec![10, 8, 8]);
/// let reads: Vec<i64> = (0..5).map(|_| c.now_ms().unwrap()).collect();
/// assert_eq!(reads, [10, 8, 8, 9, 10]);
/// ```
#[derive(Debug)]
pub struct ScriptedClock {
    state: Mutex<Script>,
}

#[derive(Debug)]
struct Script {
    values: Vec<i64>,
    next: usize,
    last: i64,
}

impl ScriptedClock {
    /// A clock that returns `values` in order, then the last value plus 1, 2, ... (an empty
    /// script starts from 0, so it reads 1, 2, 3, ...).
    pub fn new(values: Vec<i64>) -> ScriptedClock {
        ScriptedClock {
            state: Mutex::new(Script {
                values,
                next: 0,
                last: 0,
            }),
        }
    }

    /// How many readings have been taken so far.
    pub fn reads(&self) -> usize {
        let s = self.state.lock().unwrap_or_else(|p| p.into_inner());
        s.next
    }
}

impl Clock for ScriptedClock {
    fn now_ms(&self) -> Result<i64, ClockError> {
        let mut s = self.state.lock().unwrap_or_else(|p| p.into_inner());
        let value = match s.values.get(s.next) {
            Some(v) => *v,
            None => s.last.saturating_add(1),
        };
        s.next += 1;
        s.last = value;
        Ok(value)
    }
    fn boot_ms(&self) -> i64 {
        let s = self.state.lock().unwrap_or_else(|p| p.into_inner());
        i64::try_from(s.next).unwrap_or(i64::MAX)
    }
    fn is_test_clock(&self) -> bool {
        true
    }
}

impl<C: Clock + ?Sized> Clock for std::sync::Arc<C> {
    fn now_ms(&self) -> Result<i64, ClockError> {
        (**self).now_ms()
    }
    fn until_next_ms(&self) -> Duration {
        (**self).until_next_ms()
    }
    fn boot_ms(&self) -> i64 {
        (**self).boot_ms()
    }
    fn coarse_ms(&self) -> Result<i64, ClockError> {
        (**self).coarse_ms()
    }
    fn coarse_is_precise(&self) -> bool {
        (**self).coarse_is_precise()
    }
    fn now_ns(&self) -> Result<i64, ClockError> {
        (**self).now_ns()
    }
    fn is_test_clock(&self) -> bool {
        (**self).is_test_clock()
    }
}

/// Which reading of its clock a generator takes per ID.
///
/// `Coarse` is a fast path that keeps every guarantee: strict mode issues at
/// `max(last issued ms, coarse reading)` while the millisecond's sequence lasts (a coarse
/// reading is a past tick of the same clock, so that is never ahead of the wall clock), and reads
/// the precise clock only when the sequence is spent or the coarse reading is behind the last
/// issued millisecond (to tell the tick's lag from a real rewind, which it then waits out or
/// refuses by the usual rules). The cost: an ID's timestamp may be up to one tick (4 ms at
/// HZ=250) older than the call, which loosens cross-node sort order by that much.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum ClockSource {
    /// Every ID reads the precise clock (`CLOCK_REALTIME`): the default.
    #[default]
    Precise,
    /// IDs read the coarse clock (`CLOCK_REALTIME_COARSE`, or an injected clock's
    /// [`Clock::coarse_ms`]) and fall back to the precise one as described above. On the system
    /// clock it is used only where its resolution is 10 ms or finer (else the generator uses the
    /// precise clock and health says why).
    Coarse,
}

impl ClockSource {
    /// `"precise"` or `"coarse"`.
    pub const fn name(self) -> &'static str {
        match self {
            ClockSource::Precise => "precise",
            ClockSource::Coarse => "coarse",
        }
    }

    /// The source named `"precise"` or `"coarse"`.
    ///
    /// ```
    /// assert_eq!(polyflake::ClockSource::from_name("coarse").unwrap(), polyflake::ClockSource::Coarse);
    /// assert!(polyflake::ClockSource::from_name("fast").is_err());
    /// ```
    pub fn from_name(name: &str) -> crate::Result<ClockSource> {
        match name {
            "precise" => Ok(ClockSource::Precise),
            "coarse" => Ok(ClockSource::Coarse),
            _ => Err(crate::Error::InvalidArgument {
                name: "clock_source",
                reason: format!("{name:?} is not a clock source: use \"precise\" or \"coarse\""),
            }),
        }
    }

    /// Both sources.
    pub const ALL: [ClockSource; 2] = [ClockSource::Precise, ClockSource::Coarse];
}

/// The coarsest tick a `Coarse` source accepts from the system (10 ms).
pub const MAX_COARSE_TICK_NS: u64 = 10_000_000;
