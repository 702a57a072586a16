//! Node identity: the node-id sources, and the two lease kinds (file, etcd) with the restart
//! guard.
//!
//! A lease holds a slot (= the node id) and a high-water mark R (Unix ms) in its store. The
//! generator never issues an ID whose timestamp exceeds R, and a new holder issues nothing until
//! its clock passes the R it found. A background thread keeps R ahead of the clock
//! (`R = now + reserve`, every `reserve / 5`), writing it durably BEFORE publishing it to the
//! generator, and only while it still owns the slot. The generator's hot path only compares
//! with two atomics of [`LeaseState`] (`floor` and `limit`): no I/O, no mutex.

mod file;
mod source;

#[cfg(all(feature = "etcd", not(loom)))]
mod etcd;

pub use source::{
    hostname_ordinal, EtcdLeaseOptions, FileLeaseOptions, NodeSource, NodeSourceKind,
    DEFAULT_ETCD_PREFIX, DEFAULT_ETCD_TIMEOUT_MS, DEFAULT_ETCD_TTL_S, DEFAULT_RESERVE_MS,
};

use crate::clock::Clock;
use crate::error::{Error, Result};
use crate::layout::Layout;
use crate::registry::{self, Claim};
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

/// No previous holder's mark (see `LeaseState::guard_until_ms`).
const NONE: i64 = i64::MIN;

/// The issuing window of a generator, shared with its lease's background thread. Every
/// generator has one; without a lease it never changes (`floor = -1`, `limit` = the layout's
/// last millisecond).
pub(crate) struct LeaseState {
    /// Elapsed ms (since the epoch) the clock must be ABOVE to issue: the restart guard.
    pub floor: AtomicI64,
    /// The largest elapsed ms an ID may carry: R (or the layout's end), -1 once the lease is lost.
    pub limit: AtomicI64,
    epoch_ms: i64,
    max_elapsed: i64,
    /// R, Unix ms, as last written to the store.
    r_ms: AtomicI64,
    /// The previous holder's R found when the slot was taken (`NONE` if there was none).
    guard_until_ms: AtomicI64,
    lost: AtomicBool,
    renewals: AtomicU64,
    failures: AtomicU64,
    /// The last store error or the reason the lease was lost (diagnostics only; `try_lock`
    /// everywhere, so a lock inherited locked across `fork` can never block).
    note: Mutex<String>,
}

impl LeaseState {
    pub(crate) fn unleased(layout: Layout, epoch_ms: i64) -> LeaseState {
        let max_elapsed = layout.max_elapsed_ms() as i64;
        LeaseState {
            floor: AtomicI64::new(-1),
            limit: AtomicI64::new(max_elapsed),
            epoch_ms,
            max_elapsed,
            r_ms: AtomicI64::new(NONE),
            guard_until_ms: AtomicI64::new(NONE),
            lost: AtomicBool::new(false),
            renewals: AtomicU64::new(0),
            failures: AtomicU64::new(0),
            note: Mutex::new(String::new()),
        }
    }

    /// A fresh slot: the previous holder's R and ours (already durable).
    fn start(&self, guard_until_ms: Option<i64>, r_ms: i64) {
        let guard = guard_until_ms.unwrap_or(NONE);
        self.guard_until_ms.store(guard, Ordering::Relaxed);
        self.lost.store(false, Ordering::Relaxed);
        self.r_ms.store(r_ms, Ordering::Relaxed);
        let floor = if guard == NONE {
            -1
        } else {
            guard.saturating_sub(self.epoch_ms).max(-1)
        };
        self.floor.store(floor, Ordering::Release);
        self.publish(r_ms);
    }

    /// R is durable in the store: let the generator issue up to it.
    fn publish(&self, r_ms: i64) {
        if self.lost.load(Ordering::Acquire) {
            return;
        }
        let r = self.r_ms.load(Ordering::Relaxed).max(r_ms);
        self.r_ms.store(r, Ordering::Relaxed);
        let limit = r.saturating_sub(self.epoch_ms).min(self.max_elapsed);
        self.limit.store(limit, Ordering::Release);
    }

    /// The lease is gone: stop issuing at once, for good.
    fn lose(&self, reason: String) {
        self.lost.store(true, Ordering::Release);
        self.limit.store(-1, Ordering::Release);
        self.set_note(reason);
    }

    fn renewed(&self) {
        self.renewals.fetch_add(1, Ordering::Relaxed);
    }

    fn failed(&self, reason: String) {
        self.failures.fetch_add(1, Ordering::Relaxed);
        self.set_note(reason);
    }

    fn set_note(&self, note: String) {
        if let Ok(mut n) = self.note.try_lock() {
            *n = note;
        }
    }

    fn note(&self) -> String {
        self.note.try_lock().map(|n| n.clone()).unwrap_or_default()
    }

    pub(crate) fn r_ms(&self) -> i64 {
        self.r_ms.load(Ordering::Relaxed)
    }
    pub(crate) fn guard_until_ms(&self) -> Option<i64> {
        let g = self.guard_until_ms.load(Ordering::Relaxed);
        (g != NONE).then_some(g)
    }
    pub(crate) fn is_lost(&self) -> bool {
        self.lost.load(Ordering::Acquire)
    }
    pub(crate) fn renewals(&self) -> u64 {
        self.renewals.load(Ordering::Relaxed)
    }
    pub(crate) fn failures(&self) -> u64 {
        self.failures.load(Ordering::Relaxed)
    }

    /// Why a call whose clock reads `now_ms` is outside the lease's window.
    pub(crate) fn refusal(&self, node_id: u32, now_ms: i64) -> Error {
        if self.is_lost() {
            return Error::LeaseLost {
                node_id,
                reason: self.note(),
            };
        }
        if let Some(g) = self.guard_until_ms() {
            if now_ms <= g {
                return Error::LeaseNotReady {
                    node_id,
                    remaining_ms: (g - now_ms + 1) as u64,
                };
            }
        }
        Error::LeaseExpired {
            node_id,
            high_water_ms: self.r_ms(),
        }
    }
}

/// Which kind of store a lease lives in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LeaseKind {
    /// A directory of slot files.
    File,
    /// An etcd v3 cluster.
    Etcd,
}

impl LeaseKind {
    /// `"file"` or `"etcd"`.
    pub const fn name(self) -> &'static str {
        match self {
            LeaseKind::File => "file",
            LeaseKind::Etcd => "etcd",
        }
    }
}

/// The lease part of [`crate::Health`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeaseHealth {
    /// File or etcd.
    pub kind: LeaseKind,
    /// The directory, or the endpoints and key prefix.
    pub store: String,
    /// The slot held, which is the node id.
    pub slot: u32,
    /// The high-water mark R (Unix ms): no ID is issued with a later timestamp until the store
    /// has extended it.
    pub high_water_ms: i64,
    /// The previous holder's R found when the slot was taken, if any: nothing is issued until
    /// the clock passes it.
    pub guard_until_ms: Option<i64>,
    /// True while the restart guard waits.
    pub guard_waiting: bool,
    /// How long the restart guard still waits, in ms (0 when it does not).
    pub guard_remaining_ms: u64,
    /// True once the lease is lost (the generator has stopped for good).
    pub lost: bool,
    /// Successful extensions of R.
    pub renewals: u64,
    /// Failed extensions (store unreachable, I/O errors).
    pub failures: u64,
    /// The last store error, or why the lease was lost; empty if none.
    pub last_error: String,
}

/// Tells a background thread to stop, and when.
pub(crate) struct Stop {
    stopped: Mutex<bool>,
    cv: Condvar,
    /// R to leave in the store on a clean close (the last issued ms, or the guard): the
    /// successor then waits only past what was really issued. `NONE`: keep R as it is.
    final_r_ms: AtomicI64,
    #[cfg(all(feature = "etcd", not(loom)))]
    notify: tokio::sync::Notify,
}

impl Stop {
    fn new() -> Arc<Stop> {
        Arc::new(Stop {
            stopped: Mutex::new(false),
            cv: Condvar::new(),
            final_r_ms: AtomicI64::new(NONE),
            #[cfg(all(feature = "etcd", not(loom)))]
            notify: tokio::sync::Notify::new(),
        })
    }

    /// Sleep up to `d`; true once stopped.
    fn wait(&self, d: Duration) -> bool {
        let guard = self.stopped.lock().unwrap_or_else(|p| p.into_inner());
        if *guard {
            return true;
        }
        let (guard, _) = self
            .cv
            .wait_timeout(guard, d)
            .unwrap_or_else(|p| p.into_inner());
        *guard
    }

    fn is_stopped(&self) -> bool {
        *self.stopped.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn stop(&self, final_r_ms: Option<i64>) {
        self.final_r_ms
            .store(final_r_ms.unwrap_or(NONE), Ordering::Relaxed);
        *self.stopped.lock().unwrap_or_else(|p| p.into_inner()) = true;
        self.cv.notify_all();
        #[cfg(all(feature = "etcd", not(loom)))]
        self.notify.notify_one();
    }

    fn final_r_ms(&self) -> Option<i64> {
        let r = self.final_r_ms.load(Ordering::Relaxed);
        (r != NONE).then_some(r)
    }
}

/// One holding of one slot: the background thread that renews it.
pub(crate) struct Session {
    slot: u32,
    stop: Arc<Stop>,
    thread: Option<JoinHandle<()>>,
    /// The slot file's descriptor (file leases): closed, never unlocked, in a forked child.
    fd: Option<i32>,
    _claim: Option<Claim>,
}

impl Drop for Session {
    fn drop(&mut self) {
        // Normally `LeaseRuntime::close` has stopped and joined the thread already.
        self.stop.stop(None);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// What a lease-backed generator keeps: how to take a slot, and the slot it holds now.
pub(crate) struct LeaseRuntime {
    source: NodeSource,
    kind: LeaseKind,
    store: String,
    layout: Layout,
    epoch_ms: i64,
    clock: Arc<dyn Clock>,
    system_clock: bool,
    state: Arc<LeaseState>,
    session: Mutex<Option<(Session, u64)>>,
}

impl LeaseRuntime {
    /// Check the options and take a slot. Returns the runtime and the slot (the node id).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn acquire(
        source: NodeSource,
        layout: Layout,
        epoch_ms: i64,
        clock: Arc<dyn Clock>,
        system_clock: bool,
        state: Arc<LeaseState>,
        generation: u64,
    ) -> Result<(LeaseRuntime, u32)> {
        let (kind, store) = match &source {
            NodeSource::FileLease(o) => (LeaseKind::File, o.dir.display().to_string()),
            NodeSource::Etcd(o) => (
                LeaseKind::Etcd,
                format!("etcd {} prefix {}", o.endpoints.join(","), o.prefix),
            ),
            _ => unreachable!("only lease sources have a runtime"),
        };
        let rt = LeaseRuntime {
            source,
            kind,
            store,
            layout,
            epoch_ms,
            clock,
            system_clock,
            state,
            session: Mutex::new(None),
        };
        let session = rt.take_slot(generation)?;
        let slot = session.slot;
        *rt.session.lock().unwrap_or_else(|p| p.into_inner()) = Some((session, generation));
        Ok((rt, slot))
    }

    fn take_slot(&self, generation: u64) -> Result<Session> {
        let ctx = SlotContext {
            layout: self.layout,
            clock: self.clock.clone(),
            state: self.state.clone(),
            claim: if self.system_clock {
                Some((self.epoch_ms, self.layout, generation))
            } else {
                None
            },
        };
        match &self.source {
            NodeSource::FileLease(o) => file::acquire(o, ctx),
            #[cfg(all(feature = "etcd", not(loom)))]
            NodeSource::Etcd(o) => etcd::acquire(o, ctx),
            #[cfg(not(all(feature = "etcd", not(loom))))]
            NodeSource::Etcd(_) => Err(Error::InvalidNodeSource {
                reason: "this build of polyflake has no etcd support (cargo feature `etcd`)"
                    .to_string(),
            }),
            _ => unreachable!("only lease sources have a runtime"),
        }
    }

    /// In a forked child: leave the parent's slot to the parent (close our copy of its file
    /// descriptor, never unlock it; its thread does not exist here) and take a fresh slot.
    /// Returns the new slot. Called with the generator's fork generation mismatched.
    pub(crate) fn relet_after_fork(
        &self,
        generation: u64,
        already_done: &dyn Fn() -> bool,
    ) -> Result<u32> {
        let mut held = self.session.lock().unwrap_or_else(|p| p.into_inner());
        if already_done() {
            // Another thread of this child re-leased first.
            if let Some((s, _)) = held.as_ref() {
                return Ok(s.slot);
            }
        }
        if let Some((old, old_gen)) = held.take() {
            if old_gen != generation {
                abandon(old);
            } else {
                *held = Some((old, old_gen));
            }
        }
        // Nothing may be issued from the parent's window while the new slot is taken.
        self.state.limit.store(-1, Ordering::Release);
        let session = self.take_slot(generation)?;
        let slot = session.slot;
        *held = Some((session, generation));
        Ok(slot)
    }

    /// Close the lease: stop renewing, leave `final_r_ms` (or R as it is) in the store, free
    /// the slot. In a forked child that never re-leased, only let go of the parent's slot.
    pub(crate) fn close(&self, generation: u64, final_r_ms: Option<i64>) {
        let mut held = self.session.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((mut session, session_gen)) = held.take() {
            if session_gen != generation {
                abandon(session);
                return;
            }
            let final_r = final_r_ms.map(|last| {
                // Never below the guard, never above R.
                let guard = self.state.guard_until_ms().unwrap_or(i64::MIN);
                last.max(guard).min(self.state.r_ms())
            });
            session.stop.stop(final_r);
            if let Some(t) = session.thread.take() {
                let _ = t.join();
            }
        }
    }

    pub(crate) fn health(&self, node_id: u32, now_ms: Option<i64>) -> LeaseHealth {
        let guard = self.state.guard_until_ms();
        let remaining = match (guard, now_ms) {
            (Some(g), Some(now)) if now <= g => (g - now + 1) as u64,
            _ => 0,
        };
        LeaseHealth {
            kind: self.kind,
            store: self.store.clone(),
            slot: node_id,
            high_water_ms: self.state.r_ms(),
            guard_until_ms: guard,
            guard_waiting: remaining > 0,
            guard_remaining_ms: remaining,
            lost: self.state.is_lost(),
            renewals: self.state.renewals(),
            failures: self.state.failures(),
            last_error: self.state.note(),
        }
    }
}

/// Let go of a session inherited from the parent process: its thread does not exist in this
/// process, its locks may be held; close our copy of the slot file (the parent's lock stays,
/// because `flock` belongs to the open file description the parent still has) and leak the rest.
fn abandon(session: Session) {
    if let Some(fd) = session.fd {
        // SAFETY: the descriptor was inherited from the parent and nothing else here uses it.
        unsafe { libc::close(fd) };
    }
    // The claim belongs to the parent's fork generation (harmless to drop), but the thread
    // handle and the file must not run their destructors here.
    std::mem::forget(session);
}

/// What taking a slot needs from the generator.
pub(crate) struct SlotContext {
    pub layout: Layout,
    pub clock: Arc<dyn Clock>,
    pub state: Arc<LeaseState>,
    /// (epoch, layout, fork generation) for the process-wide node-id claim (system clock only).
    pub claim: Option<(i64, Layout, u64)>,
}

impl SlotContext {
    fn now_ms(&self) -> Result<i64> {
        self.clock
            .now_ms()
            .map_err(|e| Error::ClockFailed { reason: e.0 })
    }

    /// Claim the node id in this process (system clock only): `None` if another live
    /// generator here has it, so the caller tries the next slot.
    fn claim(&self, slot: u32) -> Option<Option<Claim>> {
        match self.claim {
            None => Some(None),
            Some((epoch, layout, gen)) => registry::claim(slot, epoch, layout, gen).ok().map(Some),
        }
    }
}

/// The period of R's renewal: a fifth of the reserve (at least 2 ms).
fn renew_period(reserve_ms: i64) -> Duration {
    Duration::from_millis((reserve_ms / 5).max(2) as u64)
}
