//! Batches: the strict and monotonic batch steps, which reserve runs of the state word with the
//! same compare-and-swap as the one-ID steps in `engine.rs`, and the helpers bindings size
//! their batches with.
//!
//! ## Decisions
//!
//! - **Monotonic batches take one compare-and-swap for the whole batch.** Strict batches reserve
//!   what is left of the current millisecond per step and wait into the next, the wait deadline
//!   restarting after each millisecond of progress.
//! - **A failed or cut batch leaves the caller's buffer as it was.** The runs reserved so far
//!   (one per millisecond) are written only once the whole batch is reserved; reserved values
//!   never written are never issued (a gap, never a duplicate). So every binding passes the
//!   caller's own memory straight to the core. Bindings cap a batch at [`MAX_BATCH`] (2^24 IDs);
//!   no batch is refused for how long it may wait, since every wait can be cut.
//! - **Batches reserve fallibly.** Every batch buffer (`batch_buffer`, the strict fill's run
//!   list, the 128-bit batches' state buffer) is reserved with `try_reserve_exact`: memory that
//!   cannot be had is an `InvalidArgument` naming the count, never an abort.

use super::engine::bump;
use super::Generator;
use crate::error::{Error, Result};
use crate::settings::Mode;
use crate::sync::Ordering;

/// The largest batch one `next_ids` call may ask for through a binding (2^24 = 16,777,216 IDs).
pub const MAX_BATCH: usize = 1 << 24;

impl Generator {
    /// Fill `out` with consecutive IDs.
    ///
    /// Monotonic mode reserves the whole batch with one atomic step. Strict mode fills the
    /// current millisecond and waits into the next ones (100,000 IDs take about 25 ms with the
    /// default layout), with the wait deadline restarting after each millisecond of progress.
    /// On an error the buffer is left exactly as it was (nothing is written unless the whole
    /// batch was issued), so a binding may pass the caller's own memory.
    ///
    /// ```
    /// use polyflake::{Generator, ManualClock, Mode};
    /// let g = Generator::builder(3).mode(Mode::Monotonic)
    ///     .clock(ManualClock::new(1_704_067_200_005)).build().unwrap();
    /// let mut ids = vec![0u64; 10_000];
    /// g.next_ids(&mut ids).unwrap();
    /// assert!(ids.windows(2).all(|w| w[1] == w[0] + 1 || w[1] > w[0]));
    /// ```
    pub fn next_ids(&self, out: &mut [u64]) -> Result<()> {
        self.check_fork()?;
        if out.is_empty() {
            return Ok(());
        }
        match self.mode {
            Mode::Strict => self.fill_strict(out),
            Mode::Monotonic => self.fill_monotonic(out, true).map(|_| ()),
        }
    }

    /// Fill `out` only if that needs no wait: `Ok(false)` where [`Generator::next_ids`] would
    /// sleep (in strict mode: a small rewind, or fewer IDs left in the current millisecond than
    /// `out` holds), with `out` untouched and nothing issued. Refusals are errors exactly as in
    /// `next_ids`; monotonic mode never waits, so it always fills. Bindings use it to fill a
    /// batch that fits the current millisecond on the caller's thread and hand only a batch that
    /// must wait to another thread (an event loop must not sleep).
    ///
    /// ```
    /// use polyflake::{Generator, ManualClock};
    /// let g = Generator::builder(1).clock(ManualClock::new(1_704_067_200_005)).build().unwrap();
    /// let mut ids = vec![0u64; 4_000];
    /// assert!(g.try_next_ids(&mut ids).unwrap()); // 4,000 of the millisecond's 4,096
    /// let mut more = vec![0u64; 100];
    /// assert!(!g.try_next_ids(&mut more).unwrap()); // 96 left: next_ids would wait
    /// assert!(more.iter().all(|&id| id == 0));
    /// assert!(g.try_next_ids(&mut more[..96]).unwrap());
    /// ```
    pub fn try_next_ids(&self, out: &mut [u64]) -> Result<bool> {
        self.check_fork()?;
        if out.is_empty() {
            return Ok(true);
        }
        match self.mode {
            Mode::Strict => self.try_fill_strict(out),
            Mode::Monotonic => self.fill_monotonic(out, false),
        }
    }

    /// Strict mode's batch in ONE millisecond run, or `Ok(false)` (see `try_next_ids`).
    fn try_fill_strict(&self, out: &mut [u64]) -> Result<bool> {
        let s = self.seq_bits;
        let n = i64::try_from(out.len()).map_err(|_| self.overflow(i64::MAX))?;
        loop {
            // The state before the clock, as in `next_strict`.
            let p = self.lease_state.state.0.load(Ordering::Acquire);
            let node = self.node_part();
            let (now, floor) = match self.read() {
                Ok(reading) => reading,
                Err(e) => {
                    // A restart guard within its budget: "would wait".
                    return self
                        .restart_wait(&mut self.new_wait(), e, false)
                        .map(|_| false);
                }
            };
            let last = p >> s;
            if now < last {
                if (last - now) as f64 <= self.max_wait_ms {
                    return Ok(false);
                }
                // Beyond the budget this refuses at once, without sleeping.
                return self
                    .wait_rewind(&mut self.new_wait(), (last - now) as u64)
                    .map(|()| false);
            }
            let start = (p + 1).max(floor);
            let room = ((now << s) | self.seq_mask) - start + 1;
            if start >> s > now || room < n {
                return Ok(false);
            }
            let end = start + n - 1;
            if self
                .lease_state
                .state
                .0
                .compare_exchange_weak(p, end, Ordering::AcqRel, Ordering::Relaxed)
                .is_ok()
            {
                self.record(p, end, n, now);
                self.write_run(out, start, node);
                return Ok(true);
            }
        }
    }

    /// Monotonic mode's batch: `Ok(false)` only for a restart guard it may not wait for.
    fn fill_monotonic(&self, out: &mut [u64], may_wait: bool) -> Result<bool> {
        let s = self.seq_bits;
        let n = i64::try_from(out.len()).map_err(|_| self.overflow(i64::MAX))?;
        let mut wait = self.new_wait();
        let (now, floor) = loop {
            match self.read() {
                Ok(reading) => break reading,
                Err(e) => {
                    if !self.restart_wait(&mut wait, e, may_wait)? {
                        return Ok(false);
                    }
                }
            }
        };
        // Acquire, and the node part after it (see `node_part`).
        let mut p = self.lease_state.state.0.load(Ordering::Acquire);
        loop {
            let node = self.node_part();
            let start = (p + 1).max(floor);
            let end = start
                .checked_add(n - 1)
                .ok_or_else(|| self.overflow(i64::MAX))?;
            self.check_ahead(end >> s, now)?;
            match self.lease_state.state.0.compare_exchange_weak(
                p,
                end,
                Ordering::Acquire,
                Ordering::Acquire,
            ) {
                Ok(_) => {
                    self.record(p, end, n, now);
                    self.write_run(out, start, node);
                    return Ok(true);
                }
                Err(actual) => p = actual,
            }
        }
    }

    fn fill_strict(&self, out: &mut [u64]) -> Result<()> {
        let s = self.seq_bits;
        let mut filled = 0usize;
        let mut wait = self.new_wait();
        // The runs reserved so far (one per millisecond), written into `out` only once the
        // whole batch is reserved: a batch that fails part-way leaves the caller's buffer as it
        // was (its reserved values are never issued: a gap, never a duplicate).
        let mut runs: Vec<(i64, usize, u64)> = Vec::new();
        reserve_batch(&mut runs, out.len() / (1usize << s) + 2, out.len())?;
        while filled < out.len() {
            // Load the state BEFORE reading the clock: every ID in it was issued at a reading
            // taken before ours, so `now < last` means the clock really went back, not that
            // another thread read it a moment later than we did.
            let p = self.lease_state.state.0.load(Ordering::Acquire);
            let node = self.node_part();
            let (now, floor) = match self.read() {
                Ok(reading) => reading,
                Err(e) => {
                    self.restart_wait(&mut wait, e, true)?;
                    continue;
                }
            };
            let last = p >> s;
            if now < last {
                self.wait_rewind(&mut wait, (last - now) as u64)?;
                continue;
            }
            let start = (p + 1).max(floor);
            if start >> s > now {
                self.wait_exhausted(&mut wait, now)?;
                continue;
            }
            let room = ((now << s) | self.seq_mask) - start + 1;
            let k = room.min((out.len() - filled) as i64);
            let end = start + k - 1;
            if self
                .lease_state
                .state
                .0
                .compare_exchange_weak(p, end, Ordering::AcqRel, Ordering::Relaxed)
                .is_ok()
            {
                self.record(p, end, k, now);
                if wait.rewound {
                    bump(&self.stats.rewinds_waited, 1);
                }
                runs.push((start, k as usize, node));
                filled += k as usize;
                wait.progressed();
            }
        }
        let mut at = 0;
        for (start, k, node) in runs {
            self.write_run(&mut out[at..at + k], start, node);
            at += k;
        }
        Ok(())
    }

    /// Write the IDs of the consecutive states `start, start + 1, ...` into `out`. Within one
    /// millisecond consecutive states are consecutive IDs, so each run is a plain count.
    fn write_run(&self, out: &mut [u64], start: i64, node: u64) {
        let mut p = start;
        let mut rest = out;
        while !rest.is_empty() {
            let room = (self.seq_mask - (p & self.seq_mask) + 1) as usize;
            let take = room.min(rest.len());
            let (run, tail) = rest.split_at_mut(take);
            let base = self.id_of(p, node);
            for (k, slot) in run.iter_mut().enumerate() {
                *slot = base + k as u64;
            }
            p += take as i64;
            rest = tail;
        }
    }
}

/// Check a batch size a binding received: 0 to [`MAX_BATCH`].
///
/// ```
/// assert_eq!(polyflake::batch_len(4096).unwrap(), 4096);
/// assert!(polyflake::batch_len(-1).is_err());
/// assert!(polyflake::batch_len(1 << 40).is_err());
/// ```
pub fn batch_len(n: i128) -> Result<usize> {
    batch_len_checked(n)
}

/// A zeroed buffer of `n` items for a batch, reserved fallibly: when memory cannot be had, a
/// clear error echoing the count, never an abort. Bindings fill their batches through it.
///
/// ```
/// assert_eq!(polyflake::batch_buffer::<u64>(3).unwrap(), [0, 0, 0]);
/// let e = polyflake::batch_buffer::<u128>(usize::MAX / 2).unwrap_err();
/// assert!(e.to_string().contains(&(usize::MAX / 2).to_string()));
/// ```
pub fn batch_buffer<T: Default + Clone>(n: usize) -> Result<Vec<T>> {
    let mut v = Vec::new();
    reserve_batch(&mut v, n, n)?;
    v.resize(n, T::default());
    Ok(v)
}

/// Reserve room for `items` more in `v`, for a batch of `count` IDs: the error echoes the count.
pub(crate) fn reserve_batch<T>(v: &mut Vec<T>, items: usize, count: usize) -> Result<()> {
    v.try_reserve_exact(items)
        .map_err(|_| Error::InvalidArgument {
            name: "count",
            reason: format!(
            "a batch of {count} IDs needs more memory than can be had ({items} items of {} bytes)",
            std::mem::size_of::<T>()
        ),
        })
}

fn batch_len_checked(n: i128) -> Result<usize> {
    if n < 0 || n > MAX_BATCH as i128 {
        return Err(Error::InvalidArgument {
            name: "count",
            reason: format!("{n} is out of range [0, {MAX_BATCH}]"),
        });
    }
    Ok(n as usize)
}
