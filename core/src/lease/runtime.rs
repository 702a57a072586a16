//! What a lease-backed generator keeps: how to take a slot (by the node source's kind), the
//! session it holds now, and how to let it go (a close, a crash, a fork).
//!
//! ## Decisions
//!
//! - **A lease re-leases in a forked child.** The child's next call (or `health()`) sees the
//!   generation mismatch and, under the session's fork-aware lock, forgets the parent's session
//!   (the fork handler closed the child's copies without unlocking: `flock` belongs to the open
//!   file description the parent still holds), takes a fresh slot with a new descriptor (or a new
//!   etcd client and runtime), starts a renewal thread, and only then publishes the new node id
//!   and generation (Release/Acquire), so no call sees the new generation with the old node id.
//!   The node part of an ID is therefore an atomic (read Relaxed on the hot path). ZooKeeper
//!   cannot re-lease in a child forked after the process used it (`zookeeper.rs`): refused, never
//!   a hang; a child forked before that leases normally (`core/tests/zookeeper_fork.rs`), and etcd
//!   re-leases after fork (`core/tests/etcd_fork.rs`).

#[cfg(all(feature = "etcd", not(loom)))]
use super::etcd;
use super::file;
use super::health::{LeaseHealth, LeaseKind};
use super::node_source::NodeSource;
use super::session::{Session, SlotContext};
#[cfg(all(feature = "zookeeper", not(loom)))]
use super::zookeeper;
use crate::error::{Error, Result};
use crate::forklock::ForkLock;

/// How a lease-backed generator lets go of its slot.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Release {
    /// A clean close: leave R at the last issued millisecond (`None`: nothing was issued) and
    /// the state word of the last ID (for the process's node-id table).
    Clean {
        last_ms: Option<i64>,
        last_state: i64,
    },
    /// As a crash would: R stays at its last renewal.
    Crash,
}

/// What a lease-backed generator keeps: how to take a slot, and the slot it holds now. A fixed
/// node id's restart guard (`host.rs`) is kept the same way, as a lease of the host's mark that
/// is never taken again (its generator refuses after `fork()`).
pub(crate) struct LeaseRuntime {
    pub(super) source: NodeSource,
    pub(super) kind: LeaseKind,
    store: String,
    pub(super) ctx: SlotContext,
    pub(super) session: ForkLock<Option<Session>>,
    /// Whether a lost lease is healed (`heal.rs`).
    pub(super) heal: bool,
    /// The fork generation + 1 of the heal running now (0: none).
    pub(super) healing: std::sync::atomic::AtomicU64,
}

impl LeaseRuntime {
    /// Check the options and take a slot. Returns the runtime and the slot (the node id).
    pub(crate) fn acquire(
        source: NodeSource,
        ctx: SlotContext,
        generation: u64,
    ) -> Result<(LeaseRuntime, u32)> {
        let (kind, store) = match &source {
            NodeSource::FileLease(o) => (LeaseKind::File, o.dir.display().to_string()),
            NodeSource::Etcd(o) => (
                LeaseKind::Etcd,
                format!("etcd {} prefix {}", o.endpoints.join(","), o.store.prefix),
            ),
            NodeSource::ZooKeeper(o) => (
                LeaseKind::ZooKeeper,
                format!(
                    "zookeeper {} prefix {}",
                    o.ensemble.join(","),
                    o.store.prefix
                ),
            ),
            _ => unreachable!("only lease sources have a runtime"),
        };
        let heal = match &source {
            NodeSource::FileLease(o) => o.common.heal,
            NodeSource::Etcd(o) => o.common.heal,
            NodeSource::ZooKeeper(o) => o.common.heal,
            _ => false,
        };
        let rt = LeaseRuntime {
            source,
            kind,
            store,
            ctx,
            session: ForkLock::new(None),
            heal,
            healing: std::sync::atomic::AtomicU64::new(0),
        };
        let session = rt.take_slot(generation)?;
        let slot = session.slot;
        *rt.session.lock() = Some(session);
        Ok((rt, slot))
    }

    /// The runtime of a fixed node id's mark, already taken (`host::hold`).
    pub(crate) fn of_mark(
        source: NodeSource,
        store: String,
        ctx: SlotContext,
        session: Session,
    ) -> LeaseRuntime {
        LeaseRuntime {
            source,
            kind: LeaseKind::Host,
            store,
            ctx,
            session: ForkLock::new(Some(session)),
            heal: false,
            healing: std::sync::atomic::AtomicU64::new(0),
        }
    }

    pub(super) fn take_slot(&self, generation: u64) -> Result<Session> {
        let ctx = self.ctx.for_generation(generation);
        match &self.source {
            NodeSource::FileLease(o) => file::acquire(o, ctx, generation),
            #[cfg(all(feature = "etcd", not(loom)))]
            NodeSource::Etcd(o) => etcd::acquire(o, ctx, generation),
            #[cfg(not(all(feature = "etcd", not(loom))))]
            NodeSource::Etcd(_) => Err(Error::InvalidNodeSource {
                reason: "this build of polyflake has no etcd support (cargo feature `etcd`)"
                    .to_string(),
            }),
            #[cfg(all(feature = "zookeeper", not(loom)))]
            NodeSource::ZooKeeper(o) => zookeeper::acquire(o, ctx, generation),
            #[cfg(not(all(feature = "zookeeper", not(loom))))]
            NodeSource::ZooKeeper(_) => Err(super::no_zookeeper()),
            _ => unreachable!("only lease sources have a runtime"),
        }
    }

    /// In a forked child: leave the parent's slot to the parent (the fork handler already
    /// closed the child's copies of its descriptors; its thread does not exist here) and take a
    /// fresh slot. Returns the new slot. Called with the generator's fork generation mismatched.
    // Modelled in verify/model/file.pml: Holder, the relet_after_fork step (R_FSTAT: abandon, never
    // unlock) (make model).
    pub(crate) fn relet_after_fork(
        &self,
        generation: u64,
        already_done: &dyn Fn() -> bool,
    ) -> Result<u32> {
        let mut held = self.session.lock();
        if self.kind == LeaseKind::Host {
            // A fixed node id is not taken again in a child: its parent may still hold it.
            return Err(Error::UsedAfterFork {
                node_id: held.as_ref().map_or(0, |s| s.slot),
            });
        }
        if already_done() {
            // Another thread of this child re-leased first.
            if let Some(s) = held.as_ref() {
                return Ok(s.slot);
            }
        }
        if let Some(old) = held.take() {
            if old.generation == generation {
                let slot = old.slot;
                *held = Some(old);
                return Ok(slot);
            }
            abandon(old);
            forget_mirror(&self.ctx.state);
        }
        if self.ctx.state.is_closed() {
            return Err(Error::GeneratorClosed { node_id: 0 });
        }
        // Nothing may be issued from the parent's window while the new slot is taken, and the
        // window opens only once the new node id is set.
        let state = &self.ctx.state;
        state.hold();
        let session = self.take_slot(generation);
        let session = match session {
            Ok(s) => s,
            Err(e) => {
                state.abort_hold(None);
                return Err(e);
            }
        };
        let slot = session.slot;
        state.set_node(slot);
        *held = Some(session);
        state.resume();
        Ok(slot)
    }

    /// Let go of the slot: stop renewing, leave the final R (a clean close) or R as it is (a
    /// crash), unlock it. In a forked child that never re-leased, only let go of the parent's
    /// slot, touching nothing of the parent's.
    // Modelled in verify/model/file.pml and verify/model/remote.pml: Holder, the clean close step (final R) (make
    // model).
    pub(crate) fn close(&self, generation: u64, how: Release) {
        let mut held = self.session.lock();
        let Some(mut session) = held.take() else {
            return;
        };
        if session.generation != generation {
            abandon(session);
            forget_mirror(&self.ctx.state);
            return;
        }
        let (last_state, final_r, issued_ms) = match how {
            Release::Clean {
                last_ms,
                last_state,
            } => {
                // Never below the guard (a successor must still wait past what the previous
                // holder may have issued), never above R; with nothing issued and no guard,
                // the time of closing.
                let guard = self.ctx.state.guard_until_ms();
                let final_r = match (last_ms, guard) {
                    (None, None) => self.ctx.now_ms().unwrap_or(i64::MIN),
                    (a, b) => a.unwrap_or(i64::MIN).max(b.unwrap_or(i64::MIN)),
                };
                let final_r = final_r.min(self.ctx.state.r_ms());
                session.stop.set_final_state(last_state);
                session.stop.stop(Some(final_r));
                (last_state, Some(final_r), last_ms)
            }
            Release::Crash => {
                session.stop.stop(None);
                (-1, None, None)
            }
        };
        if let Some(t) = session.thread.take() {
            let _ = t.join();
        }
        // A lease's mark on the host: a clean close leaves R at its last millisecond and the
        // last ID's state (a crash leaves the last R it kept there). A fixed node id's own mark
        // was written by its thread above.
        if let (Some(_), Some(m)) = (final_r, self.ctx.state.mirror()) {
            let now = self.ctx.now_ms().unwrap_or(i64::MIN);
            m.finish_lease(issued_ms, last_state, now);
        }
        self.ctx.state.set_mirror(None);
        // Unlock everything (the slot file, the mark) before the claim is let go: a taker that
        // gets the claim must find the mark free and final. Found by the host model
        // (`finding-claim-released-before-unlock`).
        let claim = session.claim.take();
        drop(session);
        if let Some(c) = claim {
            c.release(last_state);
        }
    }

    /// One renewal now and its outcome, for the caller that asked (`Generator::renew_lease`):
    /// a file lease or a mark renews in the caller's thread; a remote lease's renewal task is
    /// asked for one and waited for (at most `timeout`), so the store's I/O stays on its task.
    pub(crate) fn renew_and_wait(&self, timeout: std::time::Duration) -> Result<()> {
        if matches!(self.kind, LeaseKind::File | LeaseKind::Host) {
            return self.renew_now();
        }
        #[cfg(all(any(feature = "etcd", feature = "zookeeper"), not(loom)))]
        {
            let state = &self.ctx.state;
            let (renewals, failures) = (state.renewals(), state.failures());
            match self.session.lock().as_ref() {
                Some(s) => s.stop.renew.notify_one(),
                None => return Err(state.refusal(0, 0, None, None)),
            }
            let deadline = std::time::Instant::now() + timeout;
            loop {
                if state.is_lost() || state.is_closed() {
                    return Err(state.refusal(0, 0, None, None));
                }
                if state.renewals() > renewals {
                    return Ok(());
                }
                if state.failures() > failures {
                    return Err(Error::LeaseStore {
                        reason: format!("the renewal failed: {}", state.note()),
                    });
                }
                if std::time::Instant::now() >= deadline {
                    return Err(Error::LeaseStore {
                        reason: format!(
                            "no renewal within {} ms (the store did not answer)",
                            timeout.as_millis()
                        ),
                    });
                }
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
        }
        #[cfg(not(all(any(feature = "etcd", feature = "zookeeper"), not(loom))))]
        {
            let _ = timeout;
            self.renew_now()
        }
    }

    /// One renewal now in the caller's thread, as the background thread does it (file leases
    /// and marks; the hot path's capped renewal): never a remote store's I/O.
    pub(crate) fn renew_now(&self) -> Result<()> {
        let file = self.session.lock().as_ref().and_then(|s| s.file.clone());
        match file {
            Some(f) => {
                let now = self.ctx.now_ms()?;
                f.renew_now(&self.ctx.state, now);
                Ok(())
            }
            None => Err(Error::InvalidArgument {
                name: "renew_lease",
                reason: format!(
                    "a renewal in the caller's thread is for file leases only, not {}",
                    self.kind.name()
                ),
            }),
        }
    }

    pub(crate) fn health(&self, node_id: u32, now_ms: Option<i64>) -> LeaseHealth {
        let state = &self.ctx.state;
        let guard = state.guard_until_ms();
        // Waiting while the clock is not above the window's floor: the guard, or under it by a
        // monotonic fixed node id's lead limit.
        let floor = self.ctx.epoch_ms + state.floor.load(std::sync::atomic::Ordering::Acquire);
        let remaining = match (guard, now_ms) {
            (Some(g), Some(now)) if now <= g.min(floor) => (g.min(floor) - now + 1) as u64,
            _ => 0,
        };
        LeaseHealth {
            kind: self.kind,
            store: self.store.clone(),
            slot: node_id,
            high_water_ms: state.r_ms(),
            guard_until_ms: guard,
            guard_waiting: remaining > 0,
            guard_remaining_ms: remaining,
            guard_note: state.guard_note(),
            lost: state.is_lost(),
            expired: false,
            renewals: state.renewals(),
            failures: state.failures(),
            last_error: state.note(),
            heals: state.heals(),
            last_heal: state.heal_note(),
        }
    }
}

/// Let go of a session inherited from the parent process. Its thread does not exist in this
/// process and its locks may be held; the fork handler has closed this process's copies of its
/// descriptors (after checking they were still the slot's file), so nothing is closed here by
/// number: everything is forgotten. The parent's `flock` stays with the parent.
// Modelled in verify/model/file.pml: Holder, the relet_after_fork step (mutation descriptor-closed-by-
// number) (make model).
fn abandon(session: Session) {
    std::mem::forget(session);
}

/// Forget the parent's node-id mark a forked child inherited in the window: the fork handler
/// closed the child's copy of its descriptor, whose number may name another file by now.
fn forget_mirror(state: &super::LeaseState) {
    if let Some(m) = state.mirror() {
        state.set_mirror(None);
        // The last reference here: never dropped, so nothing is closed or unlocked by number.
        std::mem::forget(m);
    }
}
