//! The generator: one packed state word `P = elapsed << seq_bits | seq`, advanced by
//! compare-and-swap as `P' = max(P + 1, now << seq_bits)`. A new millisecond resets the sequence,
//! the same millisecond increments it, and a spent sequence carries into the next millisecond.
//! The two modes differ only in how far `P'` may run ahead of the wall clock.
//!
//! The rooms: [`Generator`] and its public calls here; `builder.rs` checks the settings and
//! makes a generator; `engine.rs` is the engine of `next_id` (the state word, the strict and
//! monotonic steps, the wait: what loom checks); `batch.rs` the batch steps over the same word;
//! `health.rs` the health snapshot.
//!
//! ## Decisions
//!
//! - **`close()` is the core's.** [`Generator::close`] shuts the issuing window (under the
//!   window's writer lock, so no renewal can reopen it), then swaps the state word for a
//!   sentinel past every window: a call in flight fails its compare-and-swap, reloads, finds the
//!   window shut and refuses with `GeneratorClosed`. The swapped-out word is the last ID really
//!   issued, so the lease's final R and the successor's resume state come from it and nothing
//!   can be issued after R is written. Bindings hold the generator directly (no lock of their
//!   own around it) and call `close()`; drop closes too. [`Generator::abandon`] leaves R at its
//!   last renewal, as a crash would (for simulations and tests).

mod batch;
mod builder;
mod engine;
mod health;

pub use crate::settings::{Mode, Settings};
pub use batch::{batch_buffer, batch_len, MAX_BATCH};
pub use builder::Builder;
pub(crate) use builder::Kind;
pub use health::{Health, HealthStatus};

use crate::clock::ClockSource;
use crate::error::{Error, Result};
use crate::fork;
use crate::forward::ForwardGuard;
use crate::layout::{Decoded, Layout, DEFAULT_EPOCH_MS};
use crate::lease::{LeaseRuntime, LeaseState, NodeSource, NodeSourceKind, Release};
use crate::registry::Claim;
use crate::sync::{AtomicI64, AtomicU64, Ordering};
use engine::{Stats, TimeSource, CLOSED_STATE};
use std::fmt;
// Plain std atomics for what changes only at a fork re-lease: loom models the state word only.
use std::sync::atomic::{AtomicU64 as StdAtomicU64, Ordering as StdOrdering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A generator of unique, time-sortable 64-bit IDs for one node id. Thread-safe: share it
/// (`&Generator` or `Arc<Generator>`) between threads; the hot path is one clock read and one
/// compare-and-swap, with no mutex.
///
/// ```
/// use polyflake::{Generator, ManualClock};
/// let clock = ManualClock::new(1_737_747_358_021);
/// let g = Generator::builder(37).clock(clock.clone()).build().unwrap();
/// let a = g.next_id().unwrap();
/// let b = g.next_id().unwrap();
/// assert!(b > a);
/// assert_eq!(g.decode(b).unwrap().sequence, 1);
/// ```
pub struct Generator {
    seq_bits: u32,
    ts_shift: u32,
    seq_mask: i64,
    max_elapsed: i64,
    epoch_ms: i64,
    mode: Mode,
    clock: TimeSource,
    /// UUIDv7: a reading's floor carries its sub-millisecond fraction (12 bits) and a random
    /// counter seed (2 bits) below the millisecond.
    sub_ms: bool,
    /// The 128-bit formats carry no node id: a forked child goes on issuing (their random
    /// parts are reseeded there).
    fork_ok: bool,
    /// IDs issued, counted per step (UUIDv7, whose milliseconds do not start at 0).
    exact_issued: AtomicU64,
    /// True when IDs read the coarse clock first (`ClockSource::Coarse`, in effect).
    coarse: bool,
    /// The resolution of the clock in use, ns (0 for an injected clock).
    clock_tick_ns: u64,
    /// Why a requested coarse source is not in use; empty otherwise.
    clock_note: String,
    /// The fork generation this generator (or its lease) belongs to.
    fork_generation: StdAtomicU64,
    layout: Layout,
    max_wait_ms: f64,
    max_wait: Duration,
    exhaust_budget: Duration,
    /// Bumped by `interrupt_waits`: calls waiting when it moves are cut short.
    interrupts: AtomicU64,
    max_lead_ms: Option<i64>,
    stats: Stats,
    /// The elapsed ms at which a strict call last gave up on a clock that did not advance;
    /// health reports the clock stuck until it reads past this.
    stuck_at: AtomicI64,
    /// The state word as it was when the generator was closed (for health).
    closed_state: AtomicI64,
    /// IDs of the starting millisecond issued by a predecessor with this node id (the state
    /// continues after them), which `ids_issued` must not count.
    issued_before: u64,
    /// Whether a wall reading is a forward step (shared with the lease's renewal).
    forward: Arc<ForwardGuard>,
    /// The issuing window (`floor < now`, `ms <= limit`) and the node part of the IDs: fixed
    /// without a lease (until closed), moved by the lease's background thread with one.
    lease_state: Arc<LeaseState>,
    lease: Option<Arc<LeaseRuntime>>,
    source_kind: NodeSourceKind,
    claim: Option<Claim>,
    /// How long a call waits for a fixed node id's restart guard (`None`: not a fixed node id
    /// with a mark; a lease refuses at once and its caller waits with `wait_ready`).
    restart_wait: Option<Duration>,
    /// The bound on the kernel's maximum error of the clock, if the generator refuses past it.
    max_clock_error_ms: Option<u64>,
    /// Why a fixed node id on the system clock keeps no mark (empty when it keeps one, or is
    /// not such a generator).
    restart_guard_note: String,
}

impl fmt::Debug for Generator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Generator")
            .field("node_id", &self.node_id())
            .field("source", &self.source_kind)
            .field("mode", &self.mode)
            .field("layout", &self.layout)
            .field("epoch_ms", &self.epoch_ms)
            .finish_non_exhaustive()
    }
}

impl Generator {
    /// A builder for a generator with this node id and every other setting at its default
    /// (`Generator::builder_from(NodeSource::Static(node_id))`).
    pub fn builder(node_id: impl Into<i128>) -> Builder {
        Generator::builder_from(NodeSource::Static(node_id.into()))
    }

    /// A builder for a generator whose node id comes from `source` (an environment variable,
    /// a hostname's ordinal, an IPv4 address, a file lease or an etcd lease), with every other
    /// setting at its default.
    ///
    /// ```
    /// use polyflake::{FileLeaseOptions, Generator, NodeSource};
    /// let dir = std::env::temp_dir().join(format!("polyflake-doc-{}", std::process::id()));
    /// let mut opts = FileLeaseOptions::new(&dir);
    /// opts.common.slots = Some(4);
    /// opts.common.reserve_ms = 50;
    /// let a = Generator::builder_from(NodeSource::FileLease(opts.clone())).build().unwrap();
    /// let b = Generator::builder_from(NodeSource::FileLease(opts)).build().unwrap();
    /// assert_ne!(a.node_id(), b.node_id()); // two slots of one directory
    /// // A new slot file is guarded for one reserve (nobody can tell who held it before).
    /// a.wait_ready(std::time::Duration::from_secs(1)).unwrap();
    /// assert!(a.next_id().unwrap() > 0);
    /// # drop((a, b)); std::fs::remove_dir_all(&dir).unwrap();
    /// ```
    pub fn builder_from(source: NodeSource) -> Builder {
        Builder::new(source)
    }

    /// A strict generator (`Snowflake`) on the system clock with the default layout and epoch.
    ///
    /// ```
    /// let g = polyflake::Generator::strict(901).unwrap();
    /// assert!(g.next_id().unwrap() > 0);
    /// ```
    pub fn strict(node_id: impl Into<i128>) -> Result<Generator> {
        Generator::builder(node_id).build()
    }

    /// A monotonic generator (`MonotonicSnowflake`) on the system clock with the default layout
    /// and epoch.
    ///
    /// ```
    /// let g = polyflake::Generator::monotonic(902).unwrap();
    /// let mut buf = [0u64; 10_000];
    /// g.next_ids(&mut buf).unwrap();
    /// assert!(buf.windows(2).all(|w| w[0] < w[1]));
    /// ```
    pub fn monotonic(node_id: impl Into<i128>) -> Result<Generator> {
        Generator::builder(node_id).mode(Mode::Monotonic).build()
    }

    /// This generator's node id (a lease's slot; in a forked child, the child's fresh slot
    /// once it has taken one; after a heal, the new slot).
    pub fn node_id(&self) -> u32 {
        self.lease_state.node_id()
    }
    /// True when this generator's lease heals ([`crate::LeaseCommon::heal`]): a lost lease is
    /// then replaced by a new slot, so a wait for readiness may wait through the loss.
    pub fn heals(&self) -> bool {
        self.lease.as_ref().is_some_and(|l| l.heals())
    }
    /// The kind of source this generator's node id came from.
    pub fn node_source(&self) -> NodeSourceKind {
        self.source_kind
    }
    /// This generator's mode.
    pub fn mode(&self) -> Mode {
        self.mode
    }
    /// This generator's layout.
    pub fn layout(&self) -> Layout {
        self.layout
    }
    /// This generator's epoch, Unix milliseconds.
    pub fn epoch_ms(&self) -> i64 {
        self.epoch_ms
    }
    /// Strict mode's wait budget in milliseconds.
    pub fn max_wait_ms(&self) -> f64 {
        self.max_wait_ms
    }
    /// Monotonic mode's lead limit in milliseconds, if any.
    pub fn max_lead_ms(&self) -> Option<i64> {
        self.max_lead_ms
    }
    /// True when time comes from an injected clock rather than the system clock.
    pub fn has_injected_clock(&self) -> bool {
        matches!(self.clock, TimeSource::Injected(_))
    }
    /// The clock reading in use: [`ClockSource::Coarse`] only when it was asked for and the
    /// system's coarse clock is fine enough (see [`Health::clock_note`]).
    pub fn clock_source(&self) -> ClockSource {
        if self.coarse {
            ClockSource::Coarse
        } else {
            ClockSource::Precise
        }
    }
    /// The bound on a forward step of the wall clock, in ms (`None`: no check).
    pub fn max_forward_step_ms(&self) -> Option<u64> {
        self.forward.max_step_ms()
    }
    /// How long a stepped-ahead clock must hold before it is believed, in ms.
    pub fn forward_confirm_ms(&self) -> u64 {
        self.forward.confirm_ms()
    }

    /// The shared settings this generator runs with: its mode, wait budget, lead limit,
    /// forward-step bound and confirmation, the clock source in effect (coarse only when it was
    /// asked for and is fine enough, as [`Generator::clock_source`] says) and the injected clock,
    /// if any. A builder given them makes a generator that behaves the same.
    ///
    /// ```
    /// use polyflake::{Generator, Settings};
    /// let g = Generator::strict(905).unwrap();
    /// let s = g.settings();
    /// assert_eq!((s.mode, s.max_wait_ms), (Settings::default().mode, 5.0));
    /// assert!(s.clock.is_none());
    /// ```
    pub fn settings(&self) -> Settings {
        Settings {
            mode: self.mode,
            max_wait_ms: self.max_wait_ms,
            max_lead_ms: self.max_lead_ms,
            max_forward_step_ms: self.max_forward_step_ms(),
            forward_confirm_ms: self.forward_confirm_ms(),
            clock_source: self.clock_source(),
            clock: match &self.clock {
                TimeSource::System => None,
                TimeSource::Injected(c) => Some(c.clone()),
            },
            max_clock_error_ms: self.max_clock_error_ms,
        }
    }

    /// Decode an ID with this generator's layout and epoch.
    pub fn decode(&self, id: u64) -> Result<Decoded> {
        self.layout.decode(id, self.epoch_ms)
    }

    /// Stop issuing, for good, and give the node id back: a lease frees its slot, leaving as
    /// the slot's high-water mark the last millisecond really issued from (never less than the
    /// guard it started behind; with nothing issued, the time of closing), and a fixed node id
    /// may be used by a new generator of this process, which continues after the last ID this
    /// one issued (so even a successor in the same millisecond repeats nothing). Every later
    /// call fails with [`Error::GeneratorClosed`]; a call in flight either completes before the close or
    /// fails. Idempotent; dropping the generator closes it.
    ///
    /// ```
    /// use polyflake::{ErrorKind, Generator, ManualClock};
    /// let clock = ManualClock::new(1_704_067_200_005);
    /// let g = Generator::builder(3).clock(clock.clone()).build().unwrap();
    /// g.next_id().unwrap();
    /// g.close();
    /// assert_eq!(g.next_id().unwrap_err().kind(), ErrorKind::GeneratorClosed);
    /// assert_eq!(g.health().status, polyflake::HealthStatus::Closed);
    /// ```
    pub fn close(&self) {
        self.release(true);
    }

    /// Drop a lease-backed generator the way a crash would: its renewal stops and its slot is
    /// freed, but the slot's high-water mark stays at its last renewal (a successor waits past
    /// it). For simulations and tests of the restart guard; otherwise like [`Generator::close`].
    pub fn abandon(self) {
        self.release(false);
    }

    pub(super) fn release(&self, clean: bool) {
        // Shut the window first: no new call passes the window check after this.
        self.lease_state.close();
        // Then take the state word: a call in flight fails its compare-and-swap and finds the
        // window shut, so no ID is issued after the last state is known.
        let p = self
            .lease_state
            .state
            .0
            .swap(CLOSED_STATE, Ordering::AcqRel);
        if p == CLOSED_STATE {
            return; // closed already
        }
        self.closed_state.store(p, Ordering::Relaxed);
        if let Some(lease) = &self.lease {
            let how = if clean {
                Release::Clean {
                    last_ms: (p >= 0).then(|| self.epoch_ms + (p >> self.seq_bits)),
                    last_state: p,
                }
            } else {
                Release::Crash
            };
            lease.close(fork::current_fork_generation(), how);
        }
        if let Some(c) = &self.claim {
            c.release(p);
        }
    }

    /// True once [`Generator::close`] has been called.
    pub fn is_closed(&self) -> bool {
        self.lease_state.is_closed()
    }

    /// Wait, up to `timeout`, while the restart guard holds (a lease's previous holder may have
    /// issued up to a time this clock has not reached). Returns at once when nothing needs
    /// waiting for; with the guard still holding at the deadline, returns its
    /// [`Error::LeaseNotReady`]. A closed generator or a lost lease returns its error at once.
    /// Like every wait, it can be cut short ([`crate::interruptible`],
    /// [`Generator::interrupt_waits`]): then [`Error::Interrupted`].
    ///
    /// ```
    /// use std::time::Duration;
    /// let g = polyflake::Generator::strict(904).unwrap();
    /// g.wait_ready(Duration::from_secs(1)).unwrap(); // no lease: nothing to wait for
    /// ```
    pub fn wait_ready(&self, timeout: Duration) -> Result<()> {
        let deadline = Instant::now() + timeout;
        let mut wait = self.new_wait();
        loop {
            self.check_fork()?;
            let state = &*self.lease_state;
            if state.is_closed() {
                return Err(state.refusal(self.node_id(), 0, None, None));
            }
            if state.is_lost() || state.is_held() {
                // A lease that heals takes a new slot: wait for it too.
                if !self.lease.as_ref().is_some_and(|l| l.heals()) || Instant::now() >= deadline {
                    return Err(state.refusal(self.node_id(), 0, None, None));
                }
                self.sleep(&mut wait, Duration::from_millis(1))?;
                continue;
            }
            let now = self.clock.now_ms()?;
            let now = self.forward.trusted_now(now, || self.clock.boot_ms());
            // The window's floor: the guard, or under it by a monotonic fixed node id's lead.
            let floor = self.epoch_ms + state.floor.load(StdOrdering::Acquire);
            let Some(guard) = state
                .guard_until_ms()
                .map(|g| g.min(floor))
                .filter(|g| now <= *g)
            else {
                return Ok(());
            };
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(state.refusal(self.node_id(), now, None, self.last_issued_unix_ms()));
            }
            // The system clock is slept on in one go; an injected one is looked at often,
            // since another thread moves it.
            let step = match self.clock {
                TimeSource::System => Duration::from_millis((guard - now + 1) as u64),
                TimeSource::Injected(_) => Duration::from_millis(1),
            };
            // Sliced, and cut short by the binding's hook or `interrupt_waits`.
            self.sleep(&mut wait, step.min(left))?;
        }
    }

    /// Renew the lease now, as its background thread does every `reserve / 5`: check that the
    /// slot is still ours, then write and publish `R = max(now + reserve, R)`, and return when
    /// that renewal is done (an error says why it failed). For tests and simulations on injected
    /// clocks, whose time does not follow the renewal thread's real-time schedule: after moving
    /// such a clock ahead, a renewal at the new time opens the window to it. A file lease (or a
    /// static node id's mark) renews in this thread; an etcd or ZooKeeper lease asks its renewal
    /// task for one and waits for it (at most 10 s).
    pub fn renew_lease(&self) -> Result<()> {
        self.check_fork()?;
        match &self.lease {
            Some(lease) => lease.renew_and_wait(Duration::from_secs(10)),
            None => Err(Error::InvalidArgument {
                name: "renew_lease",
                reason: "this generator's node id does not come from a lease".to_string(),
            }),
        }
    }
}

impl Drop for Generator {
    /// Dropping closes (see [`Generator::close`]).
    fn drop(&mut self) {
        self.release(true);
    }
}

/// Decode an ID with the default layout and epoch.
///
/// ```
/// let d = polyflake::decode(141264821508263936).unwrap();
/// assert_eq!((d.timestamp_ms, d.node_id, d.sequence), (1_737_747_358_021, 37, 0));
/// ```
pub fn decode(id: u64) -> Result<Decoded> {
    Layout::DEFAULT.decode(id, DEFAULT_EPOCH_MS)
}
