//! Forward steps of the wall clock.
//!
//! A rewind is visible (the clock is behind what was issued); a forward step is not: a clock
//! stepped a year ahead issues IDs a year in the future, and after the correction nothing
//! remembers them. So the wall clock is trusted only as far as elapsed time allows: the first
//! reading anchors it to the boot clock (`CLOCK_BOOTTIME`, which never steps and counts
//! suspend), and a reading more than `max_forward_step_ms` ahead of `anchor + elapsed` is a
//! forward step. It is believed only once the new offset has held steadily for
//! `forward_confirm_ms` of elapsed time (then it is a correction, and the anchor moves).
//!
//! The hot path pays one comparison: readings up to `trusted_until` (the last expected wall
//! time plus the step bound) need no boot-clock read. The boot clock is read about once per
//! `max_forward_step_ms` of wall time, and on every call while a step is in doubt.
//!
//! ## Decisions
//!
//! - **Why a forward step is checked at all**: after the correction, a restarted generator
//!   without a lease reissues the IDs of the stepped-ahead time when the clock gets there, and a
//!   lease would carry R ahead and poison its slot for as long.
//! - **The anchor** is the first reading: at construction on the system clock, at the first
//!   call on an injected clock (which is not read before).
//! - **What a step does.** Strict mode refuses to issue from it (`ClockJumpedAhead`, carrying how
//!   far ahead and how long the confirmation still runs; health `clock_ahead`); monotonic mode
//!   issues from the time elapsed time vouches for (its floor does not move up; it stays healthy
//!   and reports `clock_ahead_ms`); a lease's renewal does not move R to it (it uses the same
//!   trusted time).
//! - **Confirmation**: a new offset (wall minus boot) that holds within 1 s for
//!   `forward_confirm_ms` of elapsed time is a correction and becomes the anchor; if the clock
//!   comes back first, nothing was issued from the bad time. Why the defaults are a minute and
//!   five minutes: `crate::settings`. `max_forward_step_ms = None` (`off` in the CLI, null or
//!   None in the bindings) turns the check off; both are settable in every binding, the CLI and
//!   the service.

use std::sync::atomic::{AtomicI64, Ordering};

// The defaults and the range of both settings live with the other settings (`settings.rs`).
/// How much the offset of a stepped clock may wander while it is being confirmed (a slewing
/// clock moves at most 0.5 ms per second; a second re-step restarts the confirmation).
const STEADY_MS: i64 = 1_000;

const NONE: i64 = i64::MIN;

/// What a wall reading is, compared with elapsed time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// Within the bound: use it.
    Trusted,
    /// A forward step not (yet) believed. `expected_ms` is the wall time elapsed time vouches
    /// for; the reading is `ahead_ms` past it.
    Ahead {
        expected_ms: i64,
        ahead_ms: i64,
        /// How much longer the new offset must hold before it is believed.
        confirm_remaining_ms: i64,
    },
}

/// The forward-step detector of one generator (shared with its lease's renewal thread).
pub(crate) struct ForwardGuard {
    /// `None`: detection is off.
    max_step: Option<i64>,
    confirm: i64,
    /// Wall minus boot of the trusted timeline (`NONE` until the first reading).
    anchor: AtomicI64,
    /// Readings up to this (Unix ms) are trusted without reading the boot clock.
    trusted_until: AtomicI64,
    /// The offset of a step being confirmed, and the boot time it was first seen.
    pending_offset: AtomicI64,
    pending_since: AtomicI64,
}

impl ForwardGuard {
    pub(crate) fn new(max_step_ms: Option<u64>, confirm_ms: u64) -> ForwardGuard {
        ForwardGuard {
            max_step: max_step_ms.map(|m| m as i64),
            confirm: confirm_ms as i64,
            anchor: AtomicI64::new(NONE),
            trusted_until: AtomicI64::new(if max_step_ms.is_some() {
                NONE
            } else {
                i64::MAX
            }),
            pending_offset: AtomicI64::new(NONE),
            pending_since: AtomicI64::new(NONE),
        }
    }

    /// The step bound, if detection is on.
    pub(crate) fn max_step_ms(&self) -> Option<u64> {
        self.max_step.map(|m| m as u64)
    }

    /// The confirmation time.
    pub(crate) fn confirm_ms(&self) -> u64 {
        self.confirm as u64
    }

    /// The fast test: true when `wall_ms` needs no closer look.
    #[inline]
    pub(crate) fn trusts(&self, wall_ms: i64) -> bool {
        wall_ms <= self.trusted_until.load(Ordering::Relaxed)
    }

    /// Judge `wall_ms`, reading the boot clock with `boot` only when the fast test fails.
    #[inline]
    pub(crate) fn check(&self, wall_ms: i64, boot: impl FnOnce() -> i64) -> Verdict {
        if self.trusts(wall_ms) {
            return Verdict::Trusted;
        }
        self.check_slow(wall_ms, boot())
    }

    #[cold]
    fn check_slow(&self, wall: i64, boot: i64) -> Verdict {
        let Some(max_step) = self.max_step else {
            return Verdict::Trusted;
        };
        let offset = wall.saturating_sub(boot);
        let anchor =
            match self
                .anchor
                .compare_exchange(NONE, offset, Ordering::AcqRel, Ordering::Acquire)
            {
                Ok(_) => offset,
                Err(current) => current,
            };
        let expected = anchor.saturating_add(boot);
        if wall <= expected.saturating_add(max_step) {
            // In bounds (or behind: a rewind is the generator's business, not this guard's).
            self.pending_offset.store(NONE, Ordering::Relaxed);
            self.trusted_until
                .fetch_max(expected.saturating_add(max_step), Ordering::Relaxed);
            return Verdict::Trusted;
        }
        // While a step is in doubt every reading takes this slow path, so a reading back in
        // bounds clears the doubt (and a later step starts its confirmation afresh).
        self.trusted_until.store(NONE, Ordering::Relaxed);
        let pending = self.pending_offset.load(Ordering::Relaxed);
        let since = self.pending_since.load(Ordering::Relaxed);
        if pending == NONE || since == NONE || (offset - pending).abs() > STEADY_MS {
            // A new step (or a second one): the confirmation starts now.
            self.pending_since.store(boot, Ordering::Relaxed);
            self.pending_offset.store(offset, Ordering::Relaxed);
            return Verdict::Ahead {
                expected_ms: expected,
                ahead_ms: wall - expected,
                confirm_remaining_ms: self.confirm,
            };
        }
        let held = boot.saturating_sub(since);
        if held >= self.confirm {
            // The new offset held: it was a correction. Trust it from now on.
            self.anchor.fetch_max(offset, Ordering::AcqRel);
            self.pending_offset.store(NONE, Ordering::Relaxed);
            self.trusted_until
                .fetch_max(wall.saturating_add(max_step), Ordering::Relaxed);
            return Verdict::Trusted;
        }
        Verdict::Ahead {
            expected_ms: expected,
            ahead_ms: wall - expected,
            confirm_remaining_ms: self.confirm - held,
        }
    }

    /// The wall time to use for `wall_ms`: the reading itself, or the time elapsed time vouches
    /// for while a forward step is in doubt (what a monotonic generator and a lease use).
    pub(crate) fn trusted_now(&self, wall_ms: i64, boot: impl FnOnce() -> i64) -> i64 {
        match self.check(wall_ms, boot) {
            Verdict::Trusted => wall_ms,
            Verdict::Ahead { expected_ms, .. } => expected_ms,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const T: i64 = 1_737_747_358_021;

    #[test]
    fn passing_time_is_trusted_and_a_step_is_not() {
        let g = ForwardGuard::new(Some(60_000), 300_000);
        assert_eq!(g.check(T, || 0), Verdict::Trusted);
        // An hour passes: wall and boot move together.
        assert_eq!(g.check(T + 3_600_000, || 3_600_000), Verdict::Trusted);
        // A step of 59 s is within the bound; 61 s is not.
        assert_eq!(g.check(T + 3_659_000, || 3_600_000), Verdict::Trusted);
        match g.check(T + 3_661_000, || 3_600_000) {
            Verdict::Ahead { ahead_ms, .. } => assert_eq!(ahead_ms, 61_000),
            v => panic!("{v:?}"),
        }
        // Coming back clears it.
        assert_eq!(g.check(T + 3_600_001, || 3_600_001), Verdict::Trusted);
    }

    #[test]
    fn a_step_that_holds_is_believed_after_the_confirmation_time() {
        let year = 31_536_000_000;
        let g = ForwardGuard::new(Some(60_000), 300_000);
        assert_eq!(g.check(T, || 0), Verdict::Trusted);
        assert!(matches!(g.check(T + year, || 0), Verdict::Ahead { .. }));
        assert!(matches!(
            g.check(T + year + 299_999, || 299_999),
            Verdict::Ahead {
                confirm_remaining_ms: 1,
                ..
            }
        ));
        assert_eq!(g.check(T + year + 300_000, || 300_000), Verdict::Trusted);
        assert_eq!(g.check(T + year + 300_001, || 300_001), Verdict::Trusted);
        assert_eq!(
            g.trusted_now(T + year + 300_002, || 300_002),
            T + year + 300_002
        );
    }

    #[test]
    fn a_second_step_restarts_the_confirmation_and_trusted_now_follows_elapsed_time() {
        let g = ForwardGuard::new(Some(1_000), 10_000);
        g.check(T, || 0);
        assert!(matches!(g.check(T + 50_000, || 0), Verdict::Ahead { .. }));
        assert!(matches!(
            g.check(T + 90_000, || 5_000),
            Verdict::Ahead {
                confirm_remaining_ms: 10_000,
                ..
            }
        ));
        assert_eq!(g.trusted_now(T + 90_001, || 6_000), T + 6_000);
    }

    #[test]
    fn a_step_corrected_in_between_restarts_the_confirmation() {
        let g = ForwardGuard::new(Some(1_000), 10_000);
        assert_eq!(g.check(T, || 0), Verdict::Trusted);
        assert!(matches!(
            g.check(T + 3_600_000, || 0),
            Verdict::Ahead { .. }
        ));
        // Corrected half a second later (the fast path would trust it).
        assert_eq!(g.check(T + 500, || 500), Verdict::Trusted);
        // The same step again: its confirmation starts now, not at the first one.
        assert!(matches!(
            g.check(T + 3_600_500, || 500),
            Verdict::Ahead {
                confirm_remaining_ms: 10_000,
                ..
            }
        ));
        assert!(matches!(
            g.check(T + 3_610_000, || 10_000),
            Verdict::Ahead {
                confirm_remaining_ms: 500,
                ..
            }
        ));
        assert_eq!(g.check(T + 3_610_500, || 10_500), Verdict::Trusted);
    }

    #[test]
    fn detection_off_trusts_everything() {
        let g = ForwardGuard::new(None, 0);
        assert_eq!(g.check(i64::MAX, || 0), Verdict::Trusted);
    }
}
