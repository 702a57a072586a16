//! The health snapshot: [`Generator::health`], [`HealthStatus`] and [`Health`].
//!
//! ## Decisions
//!
//! - **One clock reading per snapshot**, and one status, the first that holds, in this order:
//!   `closed`; `used_after_fork` (or `lease_lost` when a forked child's re-lease failed, with the
//!   reason); `lease_lost`, or `store_rolled_back` when the loss was the store going back in
//!   time; `clock_failed`; `clock_unsynchronized`; (strict) `clock_ahead`;
//!   `clock_outside_window`; `restart_guard`; `lease_expired`; (strict) `clock_behind`, as soon
//!   as the clock is behind the last issued millisecond at all (a call waits, or past
//!   `max_wait_ms` is refused: the reason says which); (strict) `clock_stuck`, after a call gave
//!   up on a clock that has not moved since; (monotonic) `lead_too_large`, when the next ID would
//!   exceed `max_lead_ms`.
//! - **Health tells the truth at the window's end**: a monotonic generator whose next ID would
//!   pass the layout's last millisecond reports `clock_outside_window` ("the window is spent"),
//!   as its calls refuse with `TimestampOverflow`.
//! - **`ids_issued` needs no per-ID atomic**: every millisecond starts at sequence 0, so it is
//!   the completed milliseconds' total (updated only when the millisecond changes) plus the
//!   current `seq + 1`. It counts reserved IDs, a failed batch's included. `lead_ms` is how far
//!   the last issued millisecond is ahead of the wall clock (0 when it is not); `wait_sleeps`
//!   counts sleeps, which is how the tests show that exhaustion sleeps rather than spins.
//! - **Bindings copy a snapshot by walking it** ([`Health::fields`], `LeaseHealth::fields`), so a
//!   new field reaches every binding without a change there.

use super::engine::NOT_CLOSED;
use super::Generator;
use crate::clock::ClockSource;
use crate::error::{Error, Value};
use crate::forward::Verdict;
use crate::lease::{LeaseHealth, NodeSourceKind};
use crate::settings::Mode;
use crate::sync::{AtomicU64, Ordering};
use std::sync::atomic::Ordering as StdOrdering;

impl Generator {
    /// A snapshot of this generator's state and counters. Reads the clock once.
    ///
    /// ```
    /// use polyflake::{Generator, ManualClock};
    /// let clock = ManualClock::new(1_704_067_201_000);
    /// let g = Generator::builder(7).clock(clock.clone()).build().unwrap();
    /// g.next_id().unwrap();
    /// assert!(g.health().ok);
    /// clock.advance(-600);
    /// let h = g.health();
    /// assert!(!h.ok);
    /// assert_eq!(h.status, polyflake::HealthStatus::ClockBehind);
    /// ```
    pub fn health(&self) -> Health {
        // In a forked child a lease-backed generator takes its fresh slot here too.
        let fork_error = self.check_fork().err();
        let s = self.seq_bits;
        let p = match self.closed_state.load(Ordering::Relaxed) {
            NOT_CLOSED => self.lease_state.state.0.load(Ordering::Relaxed),
            closed => closed,
        };
        let issued = if self.sub_ms {
            self.exact_issued.load(Ordering::Relaxed)
        } else {
            (self.stats.completed.load(Ordering::Relaxed)
                + if p >= 0 {
                    (p & self.seq_mask) as u64 + 1
                } else {
                    0
                })
            .saturating_sub(self.issued_before + self.lease_state.unissued())
        };
        // The state word may start above a millisecond a take counted as spent, or continue a
        // predecessor's last ID: only this generator's own IDs make a "last issued".
        let last_issued_ms = (p >= 0 && issued > 0).then(|| self.epoch_ms + (p >> s));
        let reading = self.clock.now_ms();
        let wall_ms = *reading.as_ref().unwrap_or(&0);
        let verdict = match &reading {
            Ok(now) => self.forward.check(*now, || self.clock.boot_ms()),
            Err(_) => Verdict::Trusted,
        };
        let clock_ahead_ms = match verdict {
            Verdict::Ahead { ahead_ms, .. } => ahead_ms,
            Verdict::Trusted => 0,
        };
        let lead_ms = match last_issued_ms {
            Some(last) if reading.is_ok() => (last - wall_ms).max(0),
            _ => 0,
        };
        // While a forward step is in doubt, the time elapsed time vouches for (what a monotonic
        // generator and the lease use).
        let trusted_ms = match verdict {
            Verdict::Ahead { expected_ms, .. } => expected_ms,
            Verdict::Trusted => wall_ms,
        };
        let elapsed = i128::from(trusted_ms) - i128::from(self.epoch_ms);
        let limit = i128::from(self.lease_state.limit.load(StdOrdering::Relaxed));
        let next_ms = if self.mode == Mode::Monotonic {
            i128::from((p + 1).max((elapsed.max(0) as i64) << s) >> s)
        } else {
            elapsed
        };
        let lease = self.lease.as_ref().map(|l| {
            let mut h = l.health(self.node_id(), reading.as_ref().ok().map(|_| trusted_ms));
            h.expired = !h.lost && !h.guard_waiting && next_ms > limit;
            h
        });
        let (status, reason) = if self.lease_state.is_closed() {
            (HealthStatus::Closed, "the generator is closed".to_string())
        } else if let Some(e) = fork_error {
            if e.kind() == crate::error::ErrorKind::UsedAfterFork {
                (HealthStatus::UsedAfterFork, "used after fork".to_string())
            } else {
                (
                    HealthStatus::LeaseLost,
                    format!("forked child could not take a fresh slot: {e}"),
                )
            }
        } else if self.lease.is_some() && (self.lease_state.is_lost() || self.lease_state.is_held())
        {
            (
                if self.lease_state.is_rolled_back() {
                    HealthStatus::StoreRolledBack
                } else {
                    HealthStatus::LeaseLost
                },
                self.lease_state
                    .refusal(self.node_id(), 0, None, None)
                    .to_string(),
            )
        } else if let Err(e) = &reading {
            (HealthStatus::ClockFailed, e.to_string())
        } else if self.lease_state.is_sync_blocked() {
            (
                HealthStatus::ClockUnsynchronized,
                self.lease_state
                    .refusal(self.node_id(), wall_ms, None, None)
                    .to_string(),
            )
        } else if let (
            Mode::Strict,
            Verdict::Ahead {
                ahead_ms,
                confirm_remaining_ms,
                ..
            },
        ) = (self.mode, verdict)
        {
            (
                HealthStatus::ClockAhead,
                Error::ClockJumpedAhead {
                    node_id: self.node_id(),
                    ahead_ms,
                    max_forward_step_ms: self.forward.max_step_ms().unwrap_or(0),
                    confirm_remaining_ms,
                }
                .to_string(),
            )
        } else if elapsed < 0
            || elapsed > i128::from(self.max_elapsed)
            || next_ms > i128::from(self.max_elapsed)
        {
            (
                HealthStatus::ClockOutsideWindow,
                if next_ms > i128::from(self.max_elapsed) && elapsed <= i128::from(self.max_elapsed)
                {
                    format!(
                        "the next ID would pass the layout's last millisecond ({} ms): the window is spent",
                        self.epoch_ms + self.max_elapsed
                    )
                } else {
                    self.overflow(wall_ms).to_string()
                },
            )
        } else if lease.as_ref().is_some_and(|l| l.guard_waiting) {
            let refusal =
                self.lease_state
                    .refusal(self.node_id(), trusted_ms, None, last_issued_ms);
            // The refusal carries the guard note (why the guard is long, or the fence).
            (HealthStatus::RestartGuard, refusal.to_string())
        } else if lease.as_ref().is_some_and(|l| l.expired) {
            (
                HealthStatus::LeaseExpired,
                self.lease_state
                    .refusal(
                        self.node_id(),
                        trusted_ms,
                        Some(self.epoch_ms + next_ms as i64),
                        last_issued_ms,
                    )
                    .to_string(),
            )
        } else if self.mode == Mode::Strict && lead_ms > 0 {
            // Behind at all: a call now waits (a frozen or slow clock may never catch up within
            // the budget), or is refused at once past the budget.
            (
                HealthStatus::ClockBehind,
                if lead_ms as f64 > self.max_wait_ms {
                    format!(
                        "clock is {lead_ms} ms behind the last issued millisecond, more than the wait budget ({} ms): calls are refused until it catches up",
                        self.max_wait_ms
                    )
                } else {
                    format!(
                        "clock is {lead_ms} ms behind the last issued millisecond: calls wait for it to catch up, at most the wait budget ({} ms), and are refused if it does not",
                        self.max_wait_ms
                    )
                },
            )
        } else if self.mode == Mode::Strict
            && elapsed <= i128::from(self.stuck_at.load(Ordering::Relaxed))
        {
            (
                HealthStatus::ClockStuck,
                "the clock has not advanced past a millisecond whose sequence is spent".to_string(),
            )
        } else if self.mode == Mode::Monotonic
            && self.max_lead_ms.is_some_and(|max| {
                // Unhealthy when the next call would be refused.
                let next = (p + 1).max((elapsed as i64) << s);
                (next >> s) - elapsed as i64 > max
            })
        {
            (
                HealthStatus::LeadTooLarge,
                format!(
                    "the next ID would run more than max_lead_ms = {} ms ahead of the wall clock (now {lead_ms} ms ahead)",
                    self.max_lead_ms.unwrap_or_default()
                ),
            )
        } else {
            (HealthStatus::Ok, String::new())
        };
        let load = |c: &AtomicU64| c.load(Ordering::Relaxed);
        Health {
            ok: status == HealthStatus::Ok,
            status,
            reason,
            node_id: self.node_id(),
            source: self.source_kind,
            mode: self.mode,
            last_issued_ms,
            wall_ms,
            lead_ms,
            ids_issued: issued,
            rewinds_waited: load(&self.stats.rewinds_waited),
            rewinds_refused: load(&self.stats.rewinds_refused),
            sequence_exhaustions: load(&self.stats.sequence_exhaustions),
            wait_sleeps: load(&self.stats.wait_sleeps),
            ms_borrowed: load(&self.stats.ms_borrowed),
            lead_refused: load(&self.stats.lead_refused),
            lease_renewals: self.lease_state.renewals(),
            lease_failures: self.lease_state.failures(),
            clock_ahead_ms,
            forward_refused: load(&self.stats.forward_refused),
            clock_source: self.clock_source(),
            clock_tick_ns: self.clock_tick_ns,
            clock_note: self.clock_note.clone(),
            restart_waits: load(&self.stats.restart_waits),
            restart_guard_note: self.restart_guard_note.clone(),
            clock_sync: crate::clocksync::clock_sync(),
            lease,
        }
    }
}

/// Why a generator is or is not healthy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum HealthStatus {
    /// Issuing normally.
    Ok,
    /// Strict mode: the wall clock is behind the last issued millisecond, so calls wait for it
    /// (at most the wait budget) or, past the budget, are refused.
    ClockBehind,
    /// The wall clock is before the epoch or past the layout's window.
    ClockOutsideWindow,
    /// An injected clock failed to give a reading.
    ClockFailed,
    /// Strict mode: a call gave up because the clock did not advance past a spent millisecond,
    /// and it still has not.
    ClockStuck,
    /// Monotonic mode: the next ID would run further ahead of the wall clock than
    /// `max_lead_ms`, so calls are being refused.
    LeadTooLarge,
    /// This is a forked child and the generator was made in the parent.
    UsedAfterFork,
    /// Lease: the restart guard waits until the clock passes the previous holder's high-water
    /// mark (`Health::lease` says how long).
    RestartGuard,
    /// Lease: the high-water mark R was reached without a renewal (the store is unreachable);
    /// calls are refused until the store is back.
    LeaseExpired,
    /// Lease: the lease was lost (etcd lease revoked or expired, the slot file deleted or
    /// replaced); the generator has stopped for good.
    LeaseLost,
    /// Strict mode: the wall clock has stepped ahead of elapsed time by more than
    /// `max_forward_step_ms` (`Health::clock_ahead_ms` says how far); calls are refused until it
    /// comes back or the new offset has held for `forward_confirm_ms`.
    ClockAhead,
    /// The generator was closed.
    Closed,
    /// The kernel says the system clock is not synchronized, or its maximum error exceeds
    /// `max_clock_error_ms`: calls are refused until it says otherwise.
    ClockUnsynchronized,
    /// Lease: the store went back in time under this holder (restored from an older backup:
    /// a lower revision or mark version than it had seen, or another cluster); the lease is
    /// lost and the generator has stopped for good (calls fail with `LeaseLost`). Fence the
    /// store (`polyflake lease fence`) before new holders start.
    StoreRolledBack,
}

impl HealthStatus {
    /// A stable snake_case name (`"ok"`, `"clock_behind"`, ...).
    pub const fn name(self) -> &'static str {
        match self {
            HealthStatus::Ok => "ok",
            HealthStatus::ClockBehind => "clock_behind",
            HealthStatus::ClockOutsideWindow => "clock_outside_window",
            HealthStatus::ClockFailed => "clock_failed",
            HealthStatus::ClockStuck => "clock_stuck",
            HealthStatus::LeadTooLarge => "lead_too_large",
            HealthStatus::UsedAfterFork => "used_after_fork",
            HealthStatus::RestartGuard => "restart_guard",
            HealthStatus::LeaseExpired => "lease_expired",
            HealthStatus::LeaseLost => "lease_lost",
            HealthStatus::ClockAhead => "clock_ahead",
            HealthStatus::Closed => "closed",
            HealthStatus::StoreRolledBack => "store_rolled_back",
            HealthStatus::ClockUnsynchronized => "clock_unsynchronized",
        }
    }

    /// Every status, in a fixed order (for tables and tests).
    pub const ALL: [HealthStatus; 14] = [
        HealthStatus::Ok,
        HealthStatus::ClockBehind,
        HealthStatus::ClockOutsideWindow,
        HealthStatus::ClockFailed,
        HealthStatus::ClockStuck,
        HealthStatus::LeadTooLarge,
        HealthStatus::UsedAfterFork,
        HealthStatus::RestartGuard,
        HealthStatus::LeaseExpired,
        HealthStatus::LeaseLost,
        HealthStatus::ClockAhead,
        HealthStatus::Closed,
        HealthStatus::StoreRolledBack,
        HealthStatus::ClockUnsynchronized,
    ];
}

/// A snapshot from [`Generator::health`]: ok or not and why, the clocks, and the counters.
#[derive(Debug, Clone, PartialEq)]
pub struct Health {
    /// True when the generator can issue now.
    pub ok: bool,
    /// Why it is or is not healthy.
    pub status: HealthStatus,
    /// A human-readable reason; empty when ok.
    pub reason: String,
    /// The generator's node id.
    pub node_id: u32,
    /// Where the node id came from.
    pub source: NodeSourceKind,
    /// The generator's mode.
    pub mode: Mode,
    /// The millisecond (Unix) of the last issued ID, if any was issued.
    pub last_issued_ms: Option<i64>,
    /// The wall clock when the snapshot was taken, Unix ms (0 if the clock failed).
    pub wall_ms: i64,
    /// How far the last issued millisecond is ahead of the wall clock (0 when it is not).
    pub lead_ms: i64,
    /// IDs issued so far.
    pub ids_issued: u64,
    /// Calls that waited out a small rewind and then succeeded.
    pub rewinds_waited: u64,
    /// Calls refused because the clock was behind (or stuck) past the wait budget.
    pub rewinds_refused: u64,
    /// Times a strict call found the millisecond's sequence spent and had to wait.
    pub sequence_exhaustions: u64,
    /// Sleeps taken while waiting (strict mode never spins).
    pub wait_sleeps: u64,
    /// Milliseconds a monotonic generator moved into ahead of the wall clock.
    pub ms_borrowed: u64,
    /// Monotonic calls refused by `max_lead_ms`.
    pub lead_refused: u64,
    /// Lease renewals (0 unless the node id comes from a lease).
    pub lease_renewals: u64,
    /// Failed lease renewals (0 unless the node id comes from a lease).
    pub lease_failures: u64,
    /// How far the wall clock reads ahead of what elapsed time vouches for, while that is more
    /// than `max_forward_step_ms` and not yet believed (0 otherwise). Strict mode reports
    /// `clock_ahead` then; monotonic mode stays ok, issuing from the trusted time.
    pub clock_ahead_ms: i64,
    /// Strict calls refused because the clock had stepped ahead.
    pub forward_refused: u64,
    /// The clock reading in use (coarse only when asked for and fine enough).
    pub clock_source: ClockSource,
    /// The resolution of the system clock in use, from `clock_getres`, in ns: the coarse
    /// clock's tick (4,000,000 at HZ=250) or the precise clock's; 0 for an injected clock.
    pub clock_tick_ns: u64,
    /// Why a requested coarse source is not in use (no coarse clock, or a tick over 10 ms);
    /// empty otherwise.
    pub clock_note: String,
    /// Calls that waited for a fixed node id's restart guard (its previous holder on this host
    /// may have issued up to a time the clock had not reached).
    pub restart_waits: u64,
    /// Why a fixed node id on the system clock keeps no mark on this host (the state directory
    /// cannot be written, or `restart_guard = off`): then a successor after a clock stepped back
    /// could repeat its IDs. Empty when it keeps one (see `lease`, kind `host`), and for leases
    /// and injected clocks.
    pub restart_guard_note: String,
    /// The kernel's word on the system clock when the snapshot was taken (`adjtimex`):
    /// synchronized or not, its maximum and estimated error, a leap second due.
    pub clock_sync: crate::ClockSync,
    /// The lease's state (slot, high-water mark, restart guard), if the node id is leased, or a
    /// fixed node id's mark on the host (kind `host`) when it keeps one.
    pub lease: Option<LeaseHealth>,
}

impl Health {
    /// Every field by name, in declaration order (enums by their stable names, the lease as a
    /// nested record or `Null`): how bindings copy a snapshot without listing its fields.
    ///
    /// ```
    /// use polyflake::{Generator, ManualClock, Value};
    /// let g = Generator::builder(7).clock(ManualClock::new(1_704_067_201_000)).build().unwrap();
    /// g.next_id().unwrap();
    /// let fields = g.health().fields();
    /// assert_eq!(fields[0], ("ok", Value::Bool(true)));
    /// assert!(fields.contains(&("ids_issued", Value::Int(1))));
    /// assert!(fields.contains(&("lease", Value::Null)));
    /// ```
    pub fn fields(&self) -> Vec<(&'static str, Value)> {
        use Value::{Bool, Int, Text};
        vec![
            ("ok", Bool(self.ok)),
            ("status", Text(self.status.name().to_string())),
            ("reason", Text(self.reason.clone())),
            ("node_id", Int(self.node_id.into())),
            ("source", Text(self.source.name().to_string())),
            ("mode", Text(self.mode.name().to_string())),
            ("last_issued_ms", Value::opt_int(self.last_issued_ms)),
            ("wall_ms", Int(self.wall_ms.into())),
            ("lead_ms", Int(self.lead_ms.into())),
            ("ids_issued", Int(self.ids_issued.into())),
            ("rewinds_waited", Int(self.rewinds_waited.into())),
            ("rewinds_refused", Int(self.rewinds_refused.into())),
            (
                "sequence_exhaustions",
                Int(self.sequence_exhaustions.into()),
            ),
            ("wait_sleeps", Int(self.wait_sleeps.into())),
            ("ms_borrowed", Int(self.ms_borrowed.into())),
            ("lead_refused", Int(self.lead_refused.into())),
            ("lease_renewals", Int(self.lease_renewals.into())),
            ("lease_failures", Int(self.lease_failures.into())),
            ("clock_ahead_ms", Int(self.clock_ahead_ms.into())),
            ("forward_refused", Int(self.forward_refused.into())),
            ("clock_source", Text(self.clock_source.name().to_string())),
            ("clock_tick_ns", Int(self.clock_tick_ns.into())),
            ("clock_note", Text(self.clock_note.clone())),
            ("restart_waits", Int(self.restart_waits.into())),
            ("restart_guard_note", Text(self.restart_guard_note.clone())),
            ("clock_sync", Value::Fields(self.clock_sync.fields())),
            (
                "lease",
                self.lease
                    .as_ref()
                    .map_or(Value::Null, |l| Value::Fields(l.fields())),
            ),
        ]
    }
}
