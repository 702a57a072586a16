//! One holding of one slot, for every lease kind: the slot just taken (`Taken`), the session
//! that publishes it and runs its renewal thread until told to `Stop`, and the runtime a
//! lease-backed generator keeps (how to take a slot again, how to let it go).

#[cfg(all(feature = "etcd", not(loom)))]
use super::etcd;
use super::file::{self, SlotFile};
use super::health::{LeaseHealth, LeaseKind};
use super::node_source::NodeSource;
use super::record::IdSpace;
#[cfg(all(feature = "zookeeper", not(loom)))]
use super::zookeeper;
use crate::clock::Clock;
use crate::error::{Error, Result};
use crate::forklock::ForkLock;
use crate::forward::ForwardGuard;
use crate::layout::Layout;
use crate::registry::{self, Claim};
use crate::window::{Window, NONE};
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

/// A slot just taken, its first R already durable in the store.
pub(crate) struct Taken<H> {
    /// What the renewal thread holds: the store's handle (a client, a slot file).
    pub held: H,
    /// The node id claimed in this process's table (`None` on a test clock).
    pub claim: Option<Claim>,
    /// The restart guard: the previous holder's R (or what is assumed of it), the fence's floor.
    pub guard_ms: i64,
    /// Our first R, as written.
    pub r_ms: i64,
    /// Why the guard is long (empty when it is not).
    pub guard_note: String,
}

/// What a session is besides the slot taken: its number, its fork generation, the name of its
/// renewal thread, and (file leases) the slot file a synchronous renewal writes.
pub(crate) struct Plan {
    pub slot: u32,
    pub generation: u64,
    pub thread_name: String,
    pub file: Option<Arc<SlotFile>>,
}

/// Tells a background thread to stop, and what to leave behind.
pub(crate) struct Stop {
    stopped: Mutex<bool>,
    cv: Condvar,
    /// R to leave in the store on a clean close (the last issued ms, or the guard, or now): the
    /// successor then waits only past what was really issued. `NONE`: keep R as it is (a
    /// crash, or a lost lease).
    final_r_ms: AtomicI64,
    /// Wakes a remote lease's renewal task at once.
    #[cfg(all(any(feature = "etcd", feature = "zookeeper"), not(loom)))]
    pub(crate) notify: tokio::sync::Notify,
}

impl Stop {
    fn new() -> Arc<Stop> {
        Arc::new(Stop {
            stopped: Mutex::new(false),
            cv: Condvar::new(),
            final_r_ms: AtomicI64::new(NONE),
            #[cfg(all(any(feature = "etcd", feature = "zookeeper"), not(loom)))]
            notify: tokio::sync::Notify::new(),
        })
    }

    /// Sleep up to `d`; true once stopped.
    pub(crate) fn wait(&self, d: Duration) -> bool {
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

    #[cfg(all(any(feature = "etcd", feature = "zookeeper"), not(loom)))]
    pub(crate) fn is_stopped(&self) -> bool {
        *self.stopped.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn stop(&self, final_r_ms: Option<i64>) {
        self.final_r_ms
            .store(final_r_ms.unwrap_or(NONE), Ordering::Relaxed);
        *self.stopped.lock().unwrap_or_else(|p| p.into_inner()) = true;
        self.cv.notify_all();
        #[cfg(all(any(feature = "etcd", feature = "zookeeper"), not(loom)))]
        self.notify.notify_one();
    }

    pub(crate) fn final_r_ms(&self) -> Option<i64> {
        let r = self.final_r_ms.load(Ordering::Relaxed);
        (r != NONE).then_some(r)
    }
}

/// One holding of one slot: the background thread that renews it, and (file leases) the slot
/// file, owned.
pub(crate) struct Session {
    slot: u32,
    /// The fork generation the slot was taken in: a session of an older one is the parent's.
    generation: u64,
    stop: Arc<Stop>,
    thread: Option<JoinHandle<()>>,
    file: Option<Arc<SlotFile>>,
    claim: Option<Claim>,
}

impl Session {
    /// Publish a slot just taken (its guard and first R, already durable) and start its renewal
    /// thread, which runs `renew` with what was taken until the generator lets go. The one way a
    /// session of any lease kind starts.
    pub(crate) fn start<H: Send + 'static>(
        plan: Plan,
        taken: Taken<H>,
        ctx: SlotContext,
        renew: impl FnOnce(H, SlotContext, Arc<Stop>) + Send + 'static,
    ) -> std::io::Result<Session> {
        let Taken {
            held,
            claim,
            guard_ms,
            r_ms,
            guard_note,
        } = taken;
        ctx.state.start(guard_ms, r_ms, guard_note);
        let stop = Stop::new();
        let thread_stop = stop.clone();
        let thread = std::thread::Builder::new()
            .name(plan.thread_name)
            .spawn(move || renew(held, ctx, thread_stop))?;
        Ok(Session {
            slot: plan.slot,
            generation: plan.generation,
            stop,
            thread: Some(thread),
            file: plan.file,
            claim,
        })
    }
}

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

/// What a lease-backed generator keeps: how to take a slot, and the slot it holds now.
pub(crate) struct LeaseRuntime {
    source: NodeSource,
    kind: LeaseKind,
    store: String,
    ctx: SlotContext,
    session: ForkLock<Option<Session>>,
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
        let rt = LeaseRuntime {
            source,
            kind,
            store,
            ctx,
            session: ForkLock::new(None),
        };
        let session = rt.take_slot(generation)?;
        let slot = session.slot;
        *rt.session.lock() = Some(session);
        Ok((rt, slot))
    }

    fn take_slot(&self, generation: u64) -> Result<Session> {
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
    // Modelled in model/file.pml: Holder, the relet_after_fork step (R_FSTAT: abandon, never
    // unlock) (make model).
    pub(crate) fn relet_after_fork(
        &self,
        generation: u64,
        already_done: &dyn Fn() -> bool,
    ) -> Result<u32> {
        let mut held = self.session.lock();
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
        }
        if self.ctx.state.is_closed() {
            return Err(Error::GeneratorClosed { node_id: 0 });
        }
        // Nothing may be issued from the parent's window while the new slot is taken.
        self.ctx.state.suspend();
        let session = self.take_slot(generation)?;
        let slot = session.slot;
        *held = Some(session);
        Ok(slot)
    }

    /// Let go of the slot: stop renewing, leave the final R (a clean close) or R as it is (a
    /// crash), unlock it. In a forked child that never re-leased, only let go of the parent's
    /// slot, touching nothing of the parent's.
    // Modelled in model/file.pml and model/remote.pml: Holder, the clean close step (final R) (make
    // model).
    pub(crate) fn close(&self, generation: u64, how: Release) {
        let mut held = self.session.lock();
        let Some(mut session) = held.take() else {
            return;
        };
        if session.generation != generation {
            abandon(session);
            return;
        }
        let last_state = match how {
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
                session.stop.stop(Some(final_r.min(self.ctx.state.r_ms())));
                last_state
            }
            Release::Crash => {
                session.stop.stop(None);
                -1
            }
        };
        if let Some(t) = session.thread.take() {
            let _ = t.join();
        }
        if let Some(c) = &session.claim {
            c.release(last_state);
        }
        // Dropping the session unlocks and closes the slot file.
    }

    /// One renewal now, as the background thread does it (file leases).
    pub(crate) fn renew_now(&self) -> Result<()> {
        let file = self.session.lock().as_ref().and_then(|s| s.file.clone());
        match file {
            Some(f) => {
                let now = self.ctx.now_ms()?;
                f.renew(&self.ctx.state, now);
                Ok(())
            }
            None => Err(Error::InvalidArgument {
                name: "renew_lease",
                reason: format!(
                    "a synchronous renewal is offered for file leases only, not {}",
                    self.kind.name()
                ),
            }),
        }
    }

    pub(crate) fn health(&self, node_id: u32, now_ms: Option<i64>) -> LeaseHealth {
        let state = &self.ctx.state;
        let guard = state.guard_until_ms();
        let remaining = match (guard, now_ms) {
            (Some(g), Some(now)) if now <= g => (g - now + 1) as u64,
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
        }
    }
}

/// Let go of a session inherited from the parent process. Its thread does not exist in this
/// process and its locks may be held; the fork handler has closed this process's copies of its
/// descriptors (after checking they were still the slot's file), so nothing is closed here by
/// number: everything is forgotten. The parent's `flock` stays with the parent.
// Modelled in model/file.pml: Holder, the relet_after_fork step (mutation descriptor-closed-by-
// number) (make model).
fn abandon(session: Session) {
    std::mem::forget(session);
}

/// What taking a slot needs from the generator.
pub(crate) struct SlotContext {
    pub layout: Layout,
    pub epoch_ms: i64,
    pub clock: Arc<dyn Clock>,
    pub forward: Arc<ForwardGuard>,
    pub state: Arc<Window>,
    /// True when the node id must be claimed in the process-wide table (not a test clock).
    pub claims: bool,
    /// True on the system clock: then a file's modification time (which the system clock
    /// stamps) is comparable with the generator's clock.
    pub system_clock: bool,
    /// The fork generation of a claim (set per take).
    pub generation: u64,
}

impl SlotContext {
    fn for_generation(&self, generation: u64) -> SlotContext {
        SlotContext {
            layout: self.layout,
            epoch_ms: self.epoch_ms,
            clock: self.clock.clone(),
            forward: self.forward.clone(),
            state: self.state.clone(),
            claims: self.claims,
            system_clock: self.system_clock,
            generation,
        }
    }

    /// The wall clock as the lease may use it: while a forward step is in doubt, the time
    /// elapsed time vouches for, so R never follows a bad step.
    pub(crate) fn now_ms(&self) -> Result<i64> {
        let now = self
            .clock
            .now_ms()
            .map_err(|e| Error::ClockFailed { reason: e.0 })?;
        Ok(self.forward.trusted_now(now, || self.clock.boot_ms()))
    }

    /// The ID space this generator mints in.
    pub(crate) fn space(&self) -> IdSpace {
        IdSpace {
            epoch_ms: self.epoch_ms,
            layout: self.layout,
        }
    }

    /// The last Unix ms the layout can carry.
    pub(crate) fn window_end_ms(&self) -> i64 {
        self.epoch_ms
            .saturating_add(self.layout.max_elapsed_ms() as i64)
    }

    /// Claim the node id in this process: `None` if another live generator here has it, so
    /// the caller tries the next slot.
    pub(crate) fn claim(&self, slot: u32) -> Option<Option<Claim>> {
        if !self.claims {
            return Some(None);
        }
        registry::claim(slot, self.epoch_ms, self.layout, self.generation, false)
            .ok()
            .map(|(c, _)| Some(c))
    }
}

/// The period of R's renewal (and of the check that the slot is still ours): a fifth of the
/// reserve (at least 2 ms).
pub(crate) fn renew_period(reserve_ms: i64) -> Duration {
    Duration::from_millis((reserve_ms / 5).max(2) as u64)
}
