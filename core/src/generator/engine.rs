//! The generator: one packed state word `P = elapsed << seq_bits | seq`, advanced by
//! compare-and-swap as `P' = max(P + 1, now << seq_bits)`. A new millisecond resets the sequence,
//! the same millisecond increments it, and a spent sequence carries into the next millisecond.
//! The two modes differ only in how far `P'` may run ahead of the wall clock.
//!
//! This file is the engine of [`Generator::next_id`]: the state word and its counters, the clock
//! reading checked against the issuing window and the forward-step bound, the strict step (which
//! may wait) and the monotonic step (which never does), and the wait under one deadline per
//! call. The batch steps (`batch.rs`) reserve runs of the same word the same way. Loom checks
//! this compare-and-swap path (`verify/loom/tests/loom.rs`, `make loom`).
//!
//! A reading order: [`Generator::next_id`], then `next_strict` and `next_monotonic` (the two
//! steps), `read` / `elapsed_of` (the clock reading and the window), `check_ahead` (monotonic
//! mode's bounds), `wait_rewind` / `wait_exhausted` / `sleep` (the wait and its one deadline),
//! and `record` (the counters). The `Generator` struct itself, with each field's meaning, is in
//! `mod.rs`.
//!
//! ## Decisions
//!
//! - **The state word is loaded before the clock is read.** Every ID in `P` was then issued at
//!   a reading taken before ours, so `now < last` really means the clock went back, not that
//!   another thread read it a microsecond later (reading first made contended threads see
//!   phantom 1 ms rewinds and sleep).
//! - **The exhaustion deadline restarts when the clock moves.** A strict call that finds the
//!   millisecond spent sleeps to the boundary under a deadline of `max(max_wait_ms, 1)` ms; if it
//!   wakes to a later reading whose millisecond other threads already spent, the clock is not
//!   stuck and the deadline starts again. Only a reading that stays put for the whole budget is
//!   refused as stuck. The rewind deadline never restarts: it bounds the whole call.
//! - **A rewind beyond the budget is refused even in the middle of a wait**, as soon as the
//!   distance exceeds `max_wait_ms`, without waiting for the deadline.
//! - **`try_next_id`** issues only if no wait is needed (`Ok(None)` otherwise), so a binding can
//!   hold its runtime lock (Python's GIL) on the fast path and release it before any sleep.

use super::Generator;
use crate::clock::{Clock, SystemClock};
use crate::error::{Error, Result};
use crate::fork;
use crate::forward::Verdict;
use crate::interrupt::Checks;
use crate::settings::Mode;
use crate::sync::{AtomicU64, Ordering};
// Plain std atomics for what changes only at a fork re-lease: loom models the state word only.
use std::sync::atomic::Ordering as StdOrdering;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Where the wall clock comes from. The system clock is matched directly so its hot path is a
/// plain `clock_gettime`, with no virtual call.
#[derive(Clone)]
pub(super) enum TimeSource {
    System,
    Injected(Arc<dyn Clock>),
}

impl TimeSource {
    #[inline]
    pub(super) fn now_ms(&self) -> Result<i64> {
        match self {
            TimeSource::System => Ok(SystemClock::read_ms()),
            TimeSource::Injected(c) => c.now_ms().map_err(|e| Error::ClockFailed { reason: e.0 }),
        }
    }

    pub(super) fn until_next_ms(&self) -> Duration {
        match self {
            TimeSource::System => SystemClock.until_next_ms(),
            TimeSource::Injected(c) => c.until_next_ms(),
        }
    }

    pub(super) fn boot_ms(&self) -> i64 {
        match self {
            TimeSource::System => SystemClock::boot_ms(),
            TimeSource::Injected(c) => c.boot_ms(),
        }
    }

    #[inline]
    pub(super) fn now_ns(&self) -> Result<i64> {
        match self {
            TimeSource::System => Ok(SystemClock::read_ns()),
            TimeSource::Injected(c) => c.now_ns().map_err(|e| Error::ClockFailed { reason: e.0 }),
        }
    }

    #[inline]
    pub(super) fn coarse_ms(&self) -> Result<i64> {
        match self {
            TimeSource::System => Ok(SystemClock::read_coarse_ms()),
            TimeSource::Injected(c) => c
                .coarse_ms()
                .map_err(|e| Error::ClockFailed { reason: e.0 }),
        }
    }
}

#[derive(Default)]
pub(super) struct Stats {
    /// IDs issued in milliseconds before the state's current one.
    pub(super) completed: AtomicU64,
    pub(super) rewinds_waited: AtomicU64,
    pub(super) rewinds_refused: AtomicU64,
    pub(super) sequence_exhaustions: AtomicU64,
    pub(super) wait_sleeps: AtomicU64,
    pub(super) ms_borrowed: AtomicU64,
    pub(super) lead_refused: AtomicU64,
    pub(super) forward_refused: AtomicU64,
    /// Calls that waited for a fixed node id's restart guard.
    pub(super) restart_waits: AtomicU64,
}

/// No stuck refusal recorded (see `Generator::stuck_at`).
pub(super) const NOT_STUCK: i64 = i64::MIN;
pub(super) use crate::window::CLOSED_STATE;
/// `closed_state` before the generator is closed.
pub(super) const NOT_CLOSED: i64 = i64::MIN;

pub(super) fn bump(counter: &AtomicU64, by: u64) {
    counter.fetch_add(by, Ordering::Relaxed);
}

/// Per-call wait bookkeeping: ONE monotonic deadline for the whole call, started at the first
/// wait, so a clock that keeps retreating (or never advances) ends in a refusal, never a hang.
/// The deadline restarts only when a spent-sequence wait sees the clock has advanced (the
/// millisecond was taken by other threads): that is contention, not a stuck clock.
pub(super) struct Wait {
    started: Option<Instant>,
    pub(super) rewound: bool,
    exhausted: bool,
    /// The reading at which the sequence was last found spent.
    exhausted_at: Option<i64>,
    /// The generator's interrupt count when the call began: a higher one stops the call.
    interrupts_seen: u64,
    /// When the call first waited (for the refusal's figure) and the binding's hook was asked.
    first_wait: Option<Instant>,
    /// When the call began waiting for a fixed node id's restart guard (its own budget).
    restart_started: Option<Instant>,
    checks: Checks,
}

impl Wait {
    pub(super) fn new(interrupts_seen: u64) -> Wait {
        Wait {
            started: None,
            rewound: false,
            exhausted: false,
            exhausted_at: None,
            interrupts_seen,
            first_wait: None,
            restart_started: None,
            checks: Checks::default(),
        }
    }
    /// A millisecond of progress: the deadlines start again (the interrupt bookkeeping does not).
    pub(super) fn progressed(&mut self) {
        self.started = None;
        self.rewound = false;
        self.exhausted = false;
        self.exhausted_at = None;
    }
    pub(super) fn spent(&mut self) -> Duration {
        self.started.get_or_insert_with(Instant::now).elapsed()
    }
}

impl Generator {
    /// The ID of state `p` with the node part `node` (`Generator::node_part`).
    #[inline]
    pub(super) fn id_of(&self, p: i64, node: u64) -> u64 {
        (((p >> self.seq_bits) as u64) << self.ts_shift) | node | (p & self.seq_mask) as u64
    }

    /// The node part of the IDs, read once per attempt, AFTER the state word and BEFORE the
    /// window check (Acquire): an attempt whose compare-and-swap succeeds then composes its ID
    /// with the node id of the window it checked. A lease that takes a new slot in place (a
    /// heal) sets the node part, then moves the state word, then opens the window
    /// (`lease/heal.rs`), so an attempt that read the state before the move fails its
    /// compare-and-swap, and one that read it after reads the new node part and sees the old
    /// window shut. A plain load on x86-64.
    #[inline]
    pub(super) fn node_part(&self) -> u64 {
        self.lease_state.node_part.load(StdOrdering::Acquire)
    }

    /// The wall clock as elapsed ms since the epoch, refused outside the issuing window: the
    /// layout's window, narrowed by a lease to `(floor, R]`. Strict mode issues at `now`, so this
    /// one check covers both its bounds; monotonic mode also checks its ID's ms (`check_ahead`).
    /// A reading past the forward-step bound goes the cold way, which refuses it (strict) or
    /// replaces it with the time elapsed time vouches for (monotonic).
    #[inline]
    pub(super) fn now_elapsed(&self) -> Result<i64> {
        self.elapsed_of(self.clock.now_ms()?)
    }

    /// A reading as elapsed ms and the state floor it gives (`ms << seq_bits`, or for UUIDv7
    /// with the sub-millisecond fraction and a counter seed below it).
    #[inline]
    pub(super) fn read(&self) -> Result<(i64, i64)> {
        if self.sub_ms {
            return self.read_sub_ms(false);
        }
        let ms = self.now_elapsed()?;
        Ok((ms, ms << self.seq_bits))
    }

    /// [`Generator::read`] on the coarse reading when the coarse source is in effect.
    #[inline(always)]
    pub(super) fn read_fast(&self) -> Result<(i64, i64)> {
        if !self.coarse {
            return self.read();
        }
        if self.sub_ms {
            return self.read_sub_ms(true);
        }
        let ms = self.coarse_elapsed()?;
        Ok((ms, ms << self.seq_bits))
    }

    #[cold]
    fn read_sub_ms(&self, coarse: bool) -> Result<(i64, i64)> {
        let ns = if coarse {
            self.clock.coarse_ms()?.saturating_mul(1_000_000)
        } else {
            self.clock.now_ns()?
        };
        let ms = self.elapsed_of(ns.div_euclid(1_000_000))?;
        // 12 bits of the millisecond (RFC 9562, 6.2 method 3), then a counter whose start in
        // each new tick is random (method 1): the state's 15 bits below the millisecond.
        let frac = (ns.rem_euclid(1_000_000) << 12) / 1_000_000;
        let seed = (crate::random::random_u64() & 3) as i64;
        Ok((ms, (ms << self.seq_bits) | (frac << 3) | seed))
    }

    /// The coarse reading (the coarse source), checked like [`Generator::now_elapsed`].
    #[inline(always)]
    fn coarse_elapsed(&self) -> Result<i64> {
        self.elapsed_of(self.clock.coarse_ms()?)
    }

    #[inline]
    fn elapsed_of(&self, now: i64) -> Result<i64> {
        let elapsed = i128::from(now) - i128::from(self.epoch_ms);
        let window = &*self.lease_state;
        // `limit` with Acquire: a window opened for a new slot (a heal, a forked child's
        // re-lease) is seen with its node id (`Window::resume`). A plain load on x86-64.
        if elapsed <= i128::from(window.floor.load(StdOrdering::Relaxed))
            || elapsed > i128::from(window.limit.load(StdOrdering::Acquire))
            || !self.forward.trusts(now)
        {
            return self.now_elapsed_cold(now);
        }
        Ok(elapsed as i64)
    }

    #[cold]
    #[inline(never)]
    fn now_elapsed_cold(&self, now: i64) -> Result<i64> {
        let now = match self.forward.check(now, || self.clock.boot_ms()) {
            Verdict::Trusted => now,
            Verdict::Ahead {
                expected_ms,
                ahead_ms,
                confirm_remaining_ms,
            } => {
                if self.lease_state.is_closed() {
                    return Err(Error::GeneratorClosed {
                        node_id: self.node_id(),
                    });
                }
                match self.mode {
                    Mode::Strict => {
                        bump(&self.stats.forward_refused, 1);
                        return Err(Error::ClockJumpedAhead {
                            node_id: self.node_id(),
                            ahead_ms,
                            max_forward_step_ms: self.forward.max_step_ms().unwrap_or(0),
                            confirm_remaining_ms,
                        });
                    }
                    // Monotonic mode does not move its floor up to a bad step: it issues from
                    // the time elapsed time vouches for (borrowing ahead of it as usual).
                    Mode::Monotonic => expected_ms,
                }
            }
        };
        let elapsed = i128::from(now) - i128::from(self.epoch_ms);
        let window = &*self.lease_state;
        if elapsed <= i128::from(window.floor.load(StdOrdering::Relaxed))
            || (elapsed > i128::from(window.limit.load(StdOrdering::Acquire))
                && !self.renew_for(now))
        {
            return Err(self.outside(now, elapsed));
        }
        Ok(elapsed as i64)
    }

    /// An ID at `ms` (Unix) refused only by the lease's cap (one reserve past the last check that
    /// the slot is ours, `Window::capped_renewal`): a file lease renews in the caller's thread, checking
    /// the slot as its renewal thread does, and says whether the window now admits `ms`. The
    /// renewal thread is late (the process was paused), or a test clock ran ahead of it; the
    /// remote stores renew on their own thread only.
    #[cold]
    #[inline(never)]
    fn renew_for(&self, ms: i64) -> bool {
        match &self.lease {
            Some(lease) if self.lease_state.capped_renewal(ms) => {
                lease.renew_now().is_ok()
                    && ms - self.epoch_ms <= self.lease_state.limit.load(StdOrdering::Acquire)
            }
            _ => false,
        }
    }

    /// Why `now` (Unix ms) is outside the issuing window.
    #[cold]
    fn outside(&self, now: i64, elapsed: i128) -> Error {
        if self.lease_state.is_closed() {
            return Error::GeneratorClosed {
                node_id: self.node_id(),
            };
        }
        if elapsed < 0 || elapsed > i128::from(self.max_elapsed) {
            return self.overflow(now);
        }
        // Strict mode issues at the clock's millisecond: never ahead of it.
        self.lease_state
            .refusal(self.node_id(), now, Some(now), self.last_issued_unix_ms())
    }

    /// The millisecond of the last ID this generator issued (Unix ms), if any.
    pub(super) fn last_issued_unix_ms(&self) -> Option<i64> {
        let p = self.lease_state.state.0.load(Ordering::Relaxed);
        (p >= 0 && self.closed_state.load(Ordering::Relaxed) == NOT_CLOSED)
            .then(|| self.epoch_ms + (p >> self.seq_bits))
    }

    pub(super) fn overflow(&self, unix_ms: i64) -> Error {
        Error::TimestampOverflow {
            unix_ms,
            epoch_ms: self.epoch_ms,
            max_elapsed_ms: self.max_elapsed as u64,
        }
    }

    #[inline]
    pub(super) fn check_fork(&self) -> Result<()> {
        if fork::current_fork_generation() != self.fork_generation.load(StdOrdering::Acquire) {
            return self.after_fork();
        }
        Ok(())
    }

    /// This is a forked child: a static generator refuses; a 128-bit format goes on; a
    /// lease-backed one takes a fresh
    /// slot (the parent's stays the parent's) and restarts its renewal before issuing.
    // Modelled in verify/model/file.pml: Holder, the relet_after_fork step; verify/model/fork.pml: the child's
    // inherited generator (make model).
    #[cold]
    #[inline(never)]
    fn after_fork(&self) -> Result<()> {
        if self.fork_ok {
            // No node id to share: the child goes on (the format reseeds its random parts).
            self.fork_generation
                .store(fork::current_fork_generation(), StdOrdering::Release);
            return Ok(());
        }
        let Some(lease) = &self.lease else {
            return Err(Error::UsedAfterFork {
                node_id: self.node_id(),
            });
        };
        let generation = fork::current_fork_generation();
        let done = || self.fork_generation.load(StdOrdering::Acquire) == generation;
        // The runtime sets the new node id in the window before it opens it.
        lease.relet_after_fork(generation, &done)?;
        self.fork_generation.store(generation, StdOrdering::Release);
        Ok(())
    }

    /// Count what a successful step from `p` to `next` (reserving `n` values) did.
    #[inline]
    pub(super) fn record(&self, p: i64, next: i64, n: i64, now: i64) {
        if self.sub_ms {
            bump(&self.exact_issued, n as u64);
        }
        let (old_ms, new_ms) = (p >> self.seq_bits, next >> self.seq_bits);
        if new_ms != old_ms {
            // Every millisecond starts at sequence 0, so the IDs issued so far are `completed`
            // plus the current millisecond's `seq + 1`. Only a change of millisecond moves
            // `completed`, which keeps a shared counter off the per-ID path.
            let before = if p >= 0 { (p & self.seq_mask) + 1 } else { 0 };
            let done = before + n - ((next & self.seq_mask) + 1);
            bump(&self.stats.completed, done as u64);
            let borrowed = new_ms - old_ms.max(now);
            if borrowed > 0 {
                bump(&self.stats.ms_borrowed, borrowed as u64);
            }
        }
    }

    /// Issue one ID.
    ///
    /// Strict mode may wait (at most `max_wait_ms` for a rewind, `max(max_wait_ms, 1)` ms for a
    /// spent sequence) and refuses with [`Error::ClockMovedBackwards`] past that. Monotonic mode
    /// never waits.
    ///
    /// ```
    /// use polyflake::{ErrorKind, Generator, ManualClock};
    /// let clock = ManualClock::new(1_704_067_201_000);
    /// let g = Generator::builder(7).clock(clock.clone()).build().unwrap();
    /// g.next_id().unwrap();
    /// clock.advance(-600); // an NTP step back
    /// assert_eq!(g.next_id().unwrap_err().kind(), ErrorKind::ClockMovedBackwards);
    /// ```
    #[inline]
    pub fn next_id(&self) -> Result<u64> {
        self.check_fork()?;
        match self.mode {
            Mode::Strict => match self.next_strict(true)? {
                Some(id) => Ok(id),
                None => {
                    unreachable!("a strict call that may wait always returns an ID or an error")
                }
            },
            Mode::Monotonic => match self.next_monotonic(true)? {
                Some(id) => Ok(id),
                None => {
                    unreachable!("a monotonic call that may wait always returns an ID or an error")
                }
            },
        }
    }

    /// Issue one ID if that needs no wait: `Ok(None)` where [`Generator::next_id`] would sleep
    /// (a small rewind, or a spent sequence in strict mode). Refusals are errors exactly as in
    /// `next_id`. Bindings use it to hold a runtime lock (Python's GIL) only on the fast path and
    /// release it before a call that waits.
    ///
    /// ```
    /// use polyflake::{Generator, ManualClock};
    /// let g = Generator::builder(1).clock(ManualClock::new(1_704_067_200_005)).build().unwrap();
    /// for _ in 0..4096 {
    ///     assert!(g.try_next_id().unwrap().is_some());
    /// }
    /// assert_eq!(g.try_next_id().unwrap(), None); // the frozen millisecond is spent
    /// ```
    #[inline]
    pub fn try_next_id(&self) -> Result<Option<u64>> {
        self.check_fork()?;
        match self.mode {
            Mode::Strict => self.next_strict(false),
            Mode::Monotonic => self.next_monotonic(false),
        }
    }

    /// Strict mode. With `may_wait` false, returns `Ok(None)` instead of sleeping.
    // Modelled in verify/model/lease.pml: CAN_ISSUE and inline issue (strict mode, issued eagerly) (make
    // model).
    #[inline]
    fn next_strict(&self, may_wait: bool) -> Result<Option<u64>> {
        let s = self.seq_bits;
        // The call's interrupt count, read as it begins; the rest of the wait's bookkeeping only
        // once the call waits (most calls never do: building it each time showed in the
        // strict coarse path's cost).
        let seen = self.interrupts.load(Ordering::Relaxed);
        let mut wait: Option<Wait> = None;
        loop {
            // Load the state BEFORE reading the clock: every ID in it was issued at a reading
            // taken before ours, so `now < last` means the clock really went back, not that
            // another thread read it a moment later than we did.
            let p = self.lease_state.state.0.load(Ordering::Acquire);
            let node = self.node_part();
            let last = p >> s;
            let (mut now, floor) = match self.read_fast() {
                Ok(reading) => reading,
                // A fixed node id's restart guard is waited out like a rewind, on its own budget.
                Err(e) => {
                    let w = wait.get_or_insert_with(|| Wait::new(seen));
                    match self.restart_wait(w, e, may_wait)? {
                        true => continue,
                        false => return Ok(None),
                    }
                }
            };
            // The coarse reading is a past tick of the same clock, never ahead of it: issuing at
            // max(last, coarse) keeps strict mode's promise. Only when it is behind the last
            // issued millisecond (a tick's lag, or a real rewind) or that millisecond is spent
            // does the precise reading decide, and then only whether the clock has reached the
            // millisecond to issue in: the state word goes on from the coarse floor, never jumps
            // to the precise reading. A state that followed the precise clock would stay ahead of
            // the coarse one for good, and every later call would read both clocks (strict coarse
            // `next_id` cost 35 ns, slower than the precise path's 30, until this rule).
            let next = (p + 1).max(floor);
            if self.coarse && (now < last || next >> s > now) {
                now = self.read()?.0;
            }
            if now < last {
                if !may_wait && (last - now) as f64 <= self.max_wait_ms {
                    return Ok(None);
                }
                let w = wait.get_or_insert_with(|| Wait::new(seen));
                self.wait_rewind(w, (last - now) as u64)?;
                continue;
            }
            if next >> s > now {
                // This millisecond's sequence is spent; strict mode never borrows ahead.
                if !may_wait {
                    return Ok(None);
                }
                let w = wait.get_or_insert_with(|| Wait::new(seen));
                self.wait_exhausted(w, now)?;
                continue;
            }
            if self
                .lease_state
                .state
                .0
                .compare_exchange_weak(p, next, Ordering::AcqRel, Ordering::Relaxed)
                .is_ok()
            {
                self.record(p, next, 1, now);
                if wait.as_ref().is_some_and(|w| w.rewound) {
                    bump(&self.stats.rewinds_waited, 1);
                }
                return Ok(Some(self.id_of(next, node)));
            }
        }
    }

    // Modelled in verify/model/lease.pml: CAN_ISSUE with MONO=1, inline issue (make model).
    /// Monotonic mode. It never waits, but for a fixed node id's restart guard further ahead
    /// than it may lead (`may_wait` false: `Ok(None)` there).
    #[inline]
    fn next_monotonic(&self, may_wait: bool) -> Result<Option<u64>> {
        let s = self.seq_bits;
        let (now, floor) = match self.read_fast() {
            Ok(reading) => reading,
            Err(e) => return self.monotonic_restart_wait(e, may_wait),
        };
        // Acquire, and the node part after it (see `node_part`).
        let mut p = self.lease_state.state.0.load(Ordering::Acquire);
        loop {
            let node = self.node_part();
            let next = (p + 1).max(floor);
            self.check_ahead(next >> s, now)?;
            match self.lease_state.state.0.compare_exchange_weak(
                p,
                next,
                Ordering::Acquire,
                Ordering::Acquire,
            ) {
                Ok(_) => {
                    self.record(p, next, 1, now);
                    return Ok(Some(self.id_of(next, node)));
                }
                Err(actual) => p = actual,
            }
        }
    }

    /// A monotonic reading refused: wait out a restart guard further ahead than the lead limit
    /// (then issue), or refuse.
    #[cold]
    #[inline(never)]
    fn monotonic_restart_wait(&self, refusal: Error, may_wait: bool) -> Result<Option<u64>> {
        let mut wait = self.new_wait();
        let mut refusal = refusal;
        loop {
            if !self.restart_wait(&mut wait, refusal, may_wait)? {
                return Ok(None);
            }
            match self.read_fast() {
                Ok(_) => return self.next_monotonic(may_wait),
                Err(e) => refusal = e,
            }
        }
    }

    /// A reading refused by a fixed node id's restart guard (the clock not yet above what its
    /// previous holder on this host may have issued), waited out under its own budget
    /// (`RestartGuardOptions::max_wait_ms`, for the whole call) in interruptible slices:
    /// `Ok(true)` after a sleep (read again), `Ok(false)` when the call may not wait, the refusal
    /// itself for anything else or past the budget. Leases refuse at once instead (their
    /// callers wait with `wait_ready`), as they always have.
    #[cold]
    #[inline(never)]
    pub(super) fn restart_wait(
        &self,
        wait: &mut Wait,
        refusal: Error,
        may_wait: bool,
    ) -> Result<bool> {
        let Some(budget) = self.restart_wait else {
            return Err(refusal);
        };
        let Error::LeaseNotReady { node_id, cause, .. } = &refusal else {
            return Err(refusal);
        };
        // How long until the clock is above the window's floor (a monotonic one's floor sits
        // its lead limit under the guard).
        let now = self.clock.now_ms()?;
        let floor = self.epoch_ms + self.lease_state.floor.load(StdOrdering::Acquire);
        let remaining = (floor - now + 1).max(1) as u64;
        let first = wait.restart_started.is_none();
        let started = *wait.restart_started.get_or_insert_with(Instant::now);
        let spent = started.elapsed();
        if Duration::from_millis(remaining) > budget.saturating_sub(spent) {
            return Err(Error::LeaseNotReady {
                node_id: *node_id,
                remaining_ms: remaining,
                cause: format!(
                    "{cause}; that is longer than a call waits for it (max_wait_ms of the restart guard: {} ms): wait_ready waits as long as asked",
                    budget.as_millis()
                ),
            });
        }
        if !may_wait {
            return Ok(false);
        }
        bump(&self.stats.wait_sleeps, 1);
        bump(&self.stats.restart_waits, u64::from(first));
        self.sleep(wait, Duration::from_millis(remaining))?;
        Ok(true)
    }

    /// Monotonic mode: refuse a step whose millisecond leaves the window or runs further ahead
    /// of the wall clock than `max_lead_ms`.
    #[inline]
    pub(super) fn check_ahead(&self, ms: i64, now: i64) -> Result<()> {
        if ms > self.lease_state.limit.load(StdOrdering::Relaxed)
            && !self.renew_for(self.epoch_ms + ms)
        {
            if self.lease_state.is_closed() {
                return Err(Error::GeneratorClosed {
                    node_id: self.node_id(),
                });
            }
            if ms > self.max_elapsed {
                return Err(self.overflow(self.epoch_ms.saturating_add(ms)));
            }
            return Err(self.lease_state.refusal(
                self.node_id(),
                self.epoch_ms + now,
                Some(self.epoch_ms + ms),
                self.last_issued_unix_ms(),
            ));
        }
        if let Some(max_lead) = self.max_lead_ms {
            if ms - now > max_lead {
                // A coarse reading lags by up to a tick: the precise one decides a refusal.
                if self.coarse && ms - self.now_elapsed()? <= max_lead {
                    return Ok(());
                }
                bump(&self.stats.lead_refused, 1);
                return Err(Error::LeadLimitExceeded {
                    node_id: self.node_id(),
                    lead_ms: (ms - now) as u64,
                    max_lead_ms: max_lead as u64,
                });
            }
        }
        Ok(())
    }

    /// The clock is `behind` ms behind the last issued millisecond: refuse beyond the budget,
    /// otherwise sleep towards it under the call's one monotonic deadline.
    pub(super) fn wait_rewind(&self, wait: &mut Wait, behind: u64) -> Result<()> {
        let refuse = || {
            bump(&self.stats.rewinds_refused, 1);
            Err(Error::ClockMovedBackwards {
                node_id: self.node_id(),
                behind_ms: behind,
                stuck: false,
                max_wait_ms: self.max_wait_ms,
            })
        };
        // A rewind larger than the budget is a real event (an NTP step, a leap second): refuse
        // at once so the caller can go to another node.
        if behind as f64 > self.max_wait_ms {
            return refuse();
        }
        // Below the budget it is slew jitter: wait, but the deadline bounds the whole call, not
        // one sample of the drift, so a clock that keeps retreating cannot hold us here.
        let spent = wait.spent();
        if spent >= self.max_wait {
            return refuse();
        }
        wait.rewound = true;
        bump(&self.stats.wait_sleeps, 1);
        self.sleep(
            wait,
            Duration::from_millis(behind).min(self.max_wait - spent),
        )
    }

    /// The interrupt bookkeeping for a call that may wait.
    #[inline]
    pub(super) fn new_wait(&self) -> Wait {
        Wait::new(self.interrupts.load(Ordering::Relaxed))
    }

    /// Sleep in slices, stopping with [`Error::Interrupted`] when the binding's hook or
    /// [`Generator::interrupt_waits`] says so.
    pub(super) fn sleep(&self, wait: &mut Wait, d: Duration) -> Result<()> {
        let first = *wait.first_wait.get_or_insert_with(Instant::now);
        let seen = wait.interrupts_seen;
        if wait
            .checks
            .sleep(d, || self.interrupts.load(Ordering::Relaxed) != seen)
        {
            return Ok(());
        }
        Err(Error::Interrupted {
            node_id: self.node_id(),
            waited_ms: first.elapsed().as_millis() as u64,
        })
    }

    /// Cut short every call of this generator that is waiting now (a strict rewind, a spent
    /// sequence, a batch spanning milliseconds): each fails with [`Error::Interrupted`] within
    /// [`SLICE`](crate::interrupt::SLICE), having issued nothing its caller does not get.
    /// Calls that begin afterwards are not affected. The C ABI's cancel call and the service's
    /// shutdown use it.
    ///
    /// ```
    /// use polyflake::{ErrorKind, Generator, ManualClock};
    /// use std::sync::Arc;
    /// let clock = ManualClock::new(1_704_167_201_000);
    /// let g = Arc::new(Generator::builder(7).max_wait_ms(60_000.0).clock(clock.clone()).build().unwrap());
    /// g.next_id().unwrap();
    /// clock.advance(-30_000); // next_id would wait 30 s
    /// let waiter = { let g = g.clone(); std::thread::spawn(move || g.next_id()) };
    /// std::thread::sleep(std::time::Duration::from_millis(50));
    /// g.interrupt_waits();
    /// assert_eq!(waiter.join().unwrap().unwrap_err().kind(), ErrorKind::Interrupted);
    /// ```
    pub fn interrupt_waits(&self) {
        self.interrupts.fetch_add(1, Ordering::Relaxed);
    }

    /// The sequence for the current millisecond is spent: sleep to the millisecond boundary (a
    /// spin would burn a core for up to a millisecond), under a deadline of max(budget, 1 ms),
    /// because a frozen clock is the same fault as one that retreats.
    pub(super) fn wait_exhausted(&self, wait: &mut Wait, now: i64) -> Result<()> {
        if !wait.exhausted {
            bump(&self.stats.sequence_exhaustions, 1);
        }
        // First wait, or the clock has moved on since and other threads spent the new
        // millisecond first: the clock is not stuck, so the deadline starts again. Only a
        // reading that stays put for the whole budget is refused, and only one taken after a
        // sleep of this wait: a thread preempted for the whole budget between its reading and
        // this check (valgrind on a loaded machine) holds a stale reading, not a stuck clock,
        // and its call's deadline or interrupt is checked in the sleep first.
        let fresh = wait.exhausted_at != Some(now);
        if fresh {
            wait.exhausted = true;
            wait.exhausted_at = Some(now);
            wait.started = Some(Instant::now());
        }
        let spent = wait.spent();
        if !fresh && spent >= self.exhaust_budget {
            bump(&self.stats.rewinds_refused, 1);
            self.stuck_at.store(now, Ordering::Relaxed);
            return Err(Error::ClockMovedBackwards {
                node_id: self.node_id(),
                behind_ms: 0,
                stuck: true,
                max_wait_ms: self.exhaust_budget.as_secs_f64() * 1000.0,
            });
        }
        bump(&self.stats.wait_sleeps, 1);
        let d = self
            .clock
            .until_next_ms()
            .min(self.exhaust_budget.saturating_sub(spent));
        self.sleep(wait, d)
    }
}
