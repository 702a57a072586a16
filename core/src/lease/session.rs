//! One holding of one slot, for every lease kind: the slot just taken (`Taken`), and the
//! session that publishes it and runs its renewal thread until told to `Stop`. The runtime a
//! lease-backed generator keeps (how to take a slot again, how to let it go) is `runtime.rs`.

use super::record::IdSpace;
use crate::clock::Clock;
use crate::error::{Error, Result};
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
    /// The clock's reading just before the take's check that the slot is ours (the flock and
    /// read of a slot file, the store's create): the first limit is one reserve past it.
    pub checked_ms: i64,
    /// The lease's reserve_ms.
    pub reserve_ms: i64,
    /// Why the guard is long (empty when it is not).
    pub guard_note: String,
    /// The node id's mark on the host that the lease keeps (`None`: none kept).
    pub mark: Option<Arc<dyn crate::window::MarkMirror>>,
    /// A reading of the clock taken after the node id's claim: its millisecond is counted as
    /// spent (`None` on an injected clock).
    pub spent_ms: Option<i64>,
}

/// What a session is besides the slot taken: its number, its fork generation, the name of its
/// renewal thread, and (file leases) the slot file a synchronous renewal writes.
pub(crate) struct Plan {
    pub slot: u32,
    pub generation: u64,
    pub thread_name: String,
    pub file: Option<Arc<dyn RenewNow>>,
}

/// A slot that can be renewed at once, on the caller's thread, as its renewal thread would
/// (the file lease's slot file: `Generator::renew_lease`).
pub(crate) trait RenewNow: Send + Sync {
    /// One renewal now: check the slot is still ours, then write and publish R.
    fn renew_now(&self, state: &Window, now_ms: i64);
}

/// Tells a background thread to stop, and what to leave behind.
pub(crate) struct Stop {
    stopped: Mutex<bool>,
    cv: Condvar,
    /// R to leave in the store on a clean close (the last issued ms, or the guard, or now): the
    /// successor then waits only past what was really issued. `NONE`: keep R as it is (a
    /// crash, or a lost lease).
    final_r_ms: AtomicI64,
    /// The state word of the last ID of a clean close (-1: none), for a host mark's successor.
    final_state: AtomicI64,
    /// Wakes a remote lease's renewal task at once.
    #[cfg(all(any(feature = "etcd", feature = "zookeeper"), not(loom)))]
    pub(crate) notify: tokio::sync::Notify,
    /// Asks a remote lease's renewal task for one renewal now (`Generator::renew_lease`).
    #[cfg(all(any(feature = "etcd", feature = "zookeeper"), not(loom)))]
    pub(crate) renew: tokio::sync::Notify,
}

impl Stop {
    fn new() -> Arc<Stop> {
        Arc::new(Stop {
            stopped: Mutex::new(false),
            cv: Condvar::new(),
            final_r_ms: AtomicI64::new(NONE),
            final_state: AtomicI64::new(-1),
            #[cfg(all(any(feature = "etcd", feature = "zookeeper"), not(loom)))]
            notify: tokio::sync::Notify::new(),
            #[cfg(all(any(feature = "etcd", feature = "zookeeper"), not(loom)))]
            renew: tokio::sync::Notify::new(),
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

    pub(crate) fn stop(&self, final_r_ms: Option<i64>) {
        self.final_r_ms
            .store(final_r_ms.unwrap_or(NONE), Ordering::Relaxed);
        *self.stopped.lock().unwrap_or_else(|p| p.into_inner()) = true;
        self.cv.notify_all();
        #[cfg(all(any(feature = "etcd", feature = "zookeeper"), not(loom)))]
        self.notify.notify_one();
    }

    /// Record the last ID's state word of a clean close (before `stop`).
    pub(crate) fn set_final_state(&self, state: i64) {
        self.final_state.store(state, Ordering::Relaxed);
    }

    /// The last ID's state word of a clean close (-1: none).
    pub(crate) fn final_state(&self) -> i64 {
        self.final_state.load(Ordering::Relaxed)
    }

    pub(crate) fn final_r_ms(&self) -> Option<i64> {
        let r = self.final_r_ms.load(Ordering::Relaxed);
        (r != NONE).then_some(r)
    }
}

/// One holding of one slot: the background thread that renews it, and (file leases) the slot
/// file, owned.
pub(crate) struct Session {
    pub(crate) slot: u32,
    /// The fork generation the slot was taken in: a session of an older one is the parent's.
    pub(crate) generation: u64,
    pub(crate) stop: Arc<Stop>,
    pub(crate) thread: Option<JoinHandle<()>>,
    pub(crate) file: Option<Arc<dyn RenewNow>>,
    pub(crate) claim: Option<Claim>,
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
            checked_ms,
            reserve_ms,
            guard_note,
            mark,
            spent_ms,
        } = taken;
        if let Some(ms) = spent_ms {
            ctx.state.spend_millisecond(ms);
        }
        ctx.state.set_mirror(mark);
        ctx.state
            .start(guard_ms, r_ms, checked_ms, reserve_ms, guard_note);
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
    /// The host scope of the claim (`registry::host_scope`).
    pub scope: String,
    /// The restart guard's settings: a lease's take reads the node id's mark on the host as a
    /// floor, and a clean close leaves one (`host.rs`).
    pub host: Option<super::restart_guard::Resolved>,
}

impl SlotContext {
    pub(crate) fn for_generation(&self, generation: u64) -> SlotContext {
        SlotContext {
            layout: self.layout,
            epoch_ms: self.epoch_ms,
            clock: self.clock.clone(),
            forward: self.forward.clone(),
            state: self.state.clone(),
            claims: self.claims,
            system_clock: self.system_clock,
            generation,
            scope: self.scope.clone(),
            host: self.host.clone(),
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

    /// Claim the node id in this process and (on the system clock) on this host: `None` if
    /// another live generator has it (here, or a static holder or another lease's holder of
    /// the same node id and layout on this host), so the caller tries the next slot.
    // Modelled in verify/model/host.pml: LeaseTaker, the claim before the slot (R_ONECLAIM) (make model).
    pub(crate) fn claim(&self, slot: u32) -> Option<Option<Claim>> {
        if !self.claims {
            return Some(None);
        }
        let reach = if self.system_clock {
            registry::Reach::Host
        } else {
            registry::Reach::Process
        };
        registry::claim(slot, self.layout, &self.scope, self.generation, reach)
            .ok()
            .map(|(c, _)| Some(c))
    }

    /// The reading after the claim whose millisecond a lease's first ID must be above (the
    /// system clock only: an injected clock's holders are the test's own).
    pub(crate) fn spent(&self, now_ms: i64) -> Option<i64> {
        self.system_clock.then_some(now_ms)
    }
}

/// The period of R's renewal (and of the check that the slot is still ours): a fifth of the
/// reserve (at least 2 ms).
pub(crate) fn renew_period(reserve_ms: i64) -> Duration {
    Duration::from_millis((reserve_ms / 5).max(2) as u64)
}
