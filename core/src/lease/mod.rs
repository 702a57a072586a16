//! Node identity: the node-id sources, and the three lease kinds (file, etcd, ZooKeeper) with
//! the restart guard.
//!
//! A lease holds a slot (= the node id) and a high-water mark R (Unix ms) in its store. The
//! generator never issues an ID whose timestamp exceeds R, and a new holder issues nothing until
//! its clock passes the R it found (or, when it found no complete record, a full reserve: a
//! holder it cannot see may have reached that far). A background thread keeps R ahead of the
//! clock (`R = now + reserve`, every `reserve / 5`), checking first that the slot is still
//! ours, writing it durably BEFORE publishing it to the generator. The generator's hot path
//! only compares with two atomics of [`LeaseState`] (`floor` and `limit`): no I/O, no mutex.

mod dir;
mod fence;
mod file;
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod fuzzing;
mod inspect;
mod node_source;
mod options;
mod order;
mod record;

#[cfg(all(any(feature = "etcd", feature = "zookeeper"), not(loom)))]
mod creds;
#[cfg(all(feature = "etcd", not(loom)))]
mod etcd;
#[cfg(all(any(feature = "etcd", feature = "zookeeper"), not(loom)))]
mod remote;
#[cfg(all(feature = "zookeeper", not(loom)))]
mod zookeeper;

pub use fence::{FenceReport, DEFAULT_FENCE_SKEW_MS};
pub use file::fence_file_lease;
pub use inspect::{inspect_file_lease, SlotReport, StoreReport};
pub use node_source::{hostname_ordinal, NodeSource, NodeSourceKind};
pub use options::{
    default_lease_dir, EtcdLeaseOptions, FileLeaseOptions, LeaseCommon, RemoteStore,
    StoreCredentials, ZooKeeperLeaseOptions, DEFAULT_ETCD_PREFIX, DEFAULT_ETCD_TIMEOUT_MS,
    DEFAULT_ETCD_TTL_S, DEFAULT_MAX_GUARD_WAIT_MS, DEFAULT_RESERVE_MS, DEFAULT_ZOOKEEPER_PREFIX,
    DEFAULT_ZOOKEEPER_SESSION_TIMEOUT_MS, DEFAULT_ZOOKEEPER_TIMEOUT_MS, LEASE_CREDENTIALS,
};
pub use record::IdSpace;

pub(crate) use order::{guard_note, slot_order};

use crate::clock::Clock;
use crate::error::{Error, Result};
use crate::forklock::ForkLock;
use crate::forward::ForwardGuard;
use crate::layout::Layout;
use crate::registry::{self, Claim};
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

/// No previous holder's mark (see `LeaseState::guard_until_ms`).
const NONE: i64 = i64::MIN;

/// The issuing window of a generator, shared with its lease's background thread. Every
/// generator has one; without a lease it changes only when the generator is closed
/// (`floor = -1`, `limit` = the layout's last millisecond, then -1).
pub(crate) struct LeaseState {
    /// Elapsed ms (since the epoch) the clock must be ABOVE to issue: the restart guard.
    pub floor: AtomicI64,
    /// The largest elapsed ms an ID may carry: R (or the layout's end), -1 once the lease is
    /// lost or the generator closed.
    pub limit: AtomicI64,
    epoch_ms: i64,
    max_elapsed: i64,
    /// R, Unix ms, as last written to the store.
    r_ms: AtomicI64,
    /// The previous holder's R found when the slot was taken (`NONE` if there was none).
    guard_until_ms: AtomicI64,
    lost: AtomicBool,
    /// The loss was the store going back in time (restored from an older backup).
    rolled_back: AtomicBool,
    closed: AtomicBool,
    renewals: AtomicU64,
    failures: AtomicU64,
    /// The last store error or the reason the lease was lost (diagnostics only; `try_lock`
    /// everywhere, so a lock inherited locked across `fork` can never block).
    note: Mutex<String>,
    /// Why the restart guard is long, when the slot was taken with nothing better free.
    guard_note: Mutex<String>,
    /// Serialises the writers of `limit` (renewal, loss, close), so a renewal can never
    /// reopen a window that a loss or a close has just shut.
    writer: ForkLock<()>,
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
            rolled_back: AtomicBool::new(false),
            closed: AtomicBool::new(false),
            renewals: AtomicU64::new(0),
            failures: AtomicU64::new(0),
            note: Mutex::new(String::new()),
            guard_note: Mutex::new(String::new()),
            writer: ForkLock::new(()),
        }
    }

    /// A fresh slot: the previous holder's R (or the guard assumed for it) and ours (already
    /// durable).
    // Modelled in model/lease.pml: inline start (R_GUARD; R_CAP is a cap the model proposes, not in
    // this code) (make model).
    fn start(&self, guard_until_ms: i64, r_ms: i64, guard_note: String) {
        let _w = self.writer.lock();
        if self.closed.load(Ordering::Acquire) {
            return;
        }
        self.guard_until_ms.store(guard_until_ms, Ordering::Relaxed);
        self.lost.store(false, Ordering::Release);
        self.r_ms.store(r_ms, Ordering::Relaxed);
        set(&self.guard_note, guard_note);
        let floor = guard_until_ms.saturating_sub(self.epoch_ms).max(-1);
        self.floor.store(floor, Ordering::Release);
        self.store_limit(r_ms);
    }

    /// R is durable in the store: let the generator issue up to it.
    // Modelled in model/lease.pml: inline publish (R_BEFORE: called only after the durable write)
    // (make model).
    fn publish(&self, r_ms: i64) {
        let _w = self.writer.lock();
        if self.lost.load(Ordering::Acquire) || self.closed.load(Ordering::Acquire) {
            return;
        }
        let r = self.r_ms.load(Ordering::Relaxed).max(r_ms);
        self.r_ms.store(r, Ordering::Relaxed);
        self.store_limit(r);
    }

    fn store_limit(&self, r_ms: i64) {
        let limit = r_ms.saturating_sub(self.epoch_ms).min(self.max_elapsed);
        self.limit.store(limit, Ordering::Release);
    }

    /// Nothing may be issued until a fresh slot is published (a forked child re-leasing).
    fn suspend(&self) {
        let _w = self.writer.lock();
        self.limit.store(-1, Ordering::Release);
    }

    /// The lease is gone: stop issuing at once, for good.
    // Modelled in model/lease.pml: inline lose (make model).
    fn lose(&self, reason: String) {
        let _w = self.writer.lock();
        self.lost.store(true, Ordering::Release);
        self.limit.store(-1, Ordering::Release);
        set(&self.note, reason);
    }

    /// The store was seen to go back in time: the loss that follows is reported as such
    /// (health `store_rolled_back`). Only the remote stores can see it.
    #[cfg_attr(not(any(feature = "etcd", feature = "zookeeper")), allow(dead_code))]
    fn rolled_back(&self) {
        self.rolled_back.store(true, Ordering::Release);
    }

    /// The generator is closed: nothing more is issued.
    pub(crate) fn close(&self) {
        let _w = self.writer.lock();
        self.closed.store(true, Ordering::Release);
        self.limit.store(-1, Ordering::Release);
    }

    fn renewed(&self) {
        self.renewals.fetch_add(1, Ordering::Relaxed);
    }

    fn failed(&self, reason: String) {
        self.failures.fetch_add(1, Ordering::Relaxed);
        set(&self.note, reason);
    }

    fn note(&self) -> String {
        get(&self.note)
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
    /// The lease was lost because the store went back in time.
    pub(crate) fn is_rolled_back(&self) -> bool {
        self.is_lost() && self.rolled_back.load(Ordering::Acquire)
    }
    pub(crate) fn is_closed(&self) -> bool {
        self.closed.load(Ordering::Acquire)
    }
    pub(crate) fn renewals(&self) -> u64 {
        self.renewals.load(Ordering::Relaxed)
    }
    pub(crate) fn failures(&self) -> u64 {
        self.failures.load(Ordering::Relaxed)
    }

    /// Why a call whose clock reads `now_ms` is outside the lease's window, naming the true
    /// cause: the previous holder's guard, or this clock stepped back under a slot it had
    /// already issued from (`last_ms`, the last issued ID's ms); R not renewed (with the
    /// store's last words), or a monotonic generator whose next ID (`next_ms`) runs ahead of
    /// the clock past R. All times are Unix ms.
    pub(crate) fn refusal(
        &self,
        node_id: u32,
        now_ms: i64,
        next_ms: Option<i64>,
        last_ms: Option<i64>,
    ) -> Error {
        if self.is_closed() {
            return Error::GeneratorClosed { node_id };
        }
        if self.is_lost() {
            return Error::LeaseLost {
                node_id,
                reason: self.note(),
            };
        }
        if let Some(g) = self.guard_until_ms() {
            if now_ms <= g {
                let cause = match last_ms.filter(|&l| l > g) {
                    Some(l) => format!(
                        "this clock stepped back under the slot this generator holds: it reads {now_ms}, {} ms behind the last ID it issued ({l}), and the slot's restart guard ({g}) holds again until the clock passes it",
                        l - now_ms
                    ),
                    None => match get(&self.guard_note) {
                        note if note.is_empty() => format!(
                            "the slot's previous holder may have issued IDs up to {g}, a time this clock ({now_ms}) has not reached yet (a slot with no record: one reserve_ms from its take)"
                        ),
                        note => format!(
                            "nothing may be issued up to {g}, a time this clock ({now_ms}) has not reached yet: {note}"
                        ),
                    },
                };
                return Error::LeaseNotReady {
                    node_id,
                    remaining_ms: (g - now_ms + 1) as u64,
                    cause,
                };
            }
        }
        let r = self.r_ms();
        let cause = match next_ms {
            Some(next) if now_ms < r && next > r => format!(
                "the generator runs {} ms ahead of its clock ({now_ms}), {} ms past R, which is renewed to the clock plus reserve_ms: raise reserve_ms above the lead you need, or set max_lead_ms below reserve_ms so the lead is refused as such",
                next - now_ms,
                next - r
            ),
            _ => match self.note() {
                note if !note.is_empty() && self.failures() > 0 => {
                    format!("R was not renewed; the store's last answer: {note}")
                }
                _ => "R was not renewed in time (no renewal has failed: the renewal thread is late, or the process was paused)".to_string(),
            },
        };
        Error::LeaseExpired {
            node_id,
            high_water_ms: r,
            cause,
        }
    }
}

fn set(m: &Mutex<String>, value: String) {
    if let Ok(mut n) = m.try_lock() {
        *n = value;
    }
}

fn get(m: &Mutex<String>) -> String {
    m.try_lock().map(|n| n.clone()).unwrap_or_default()
}

/// Read an etcd lease store (every key under the prefix) without taking anything: each slot's
/// holder and mark, and the recorded ID space (`options.common.reserve_ms` is what a missing or damaged
/// mark is assumed to hide, `options.common.max_guard_wait_ms` what counts as poisoned).
pub fn inspect_etcd_lease(options: &EtcdLeaseOptions) -> Result<StoreReport> {
    #[cfg(all(feature = "etcd", not(loom)))]
    return etcd::inspect(options);
    #[cfg(not(all(feature = "etcd", not(loom))))]
    {
        let _ = options;
        Err(Error::InvalidNodeSource {
            reason: "this build of polyflake has no etcd support (cargo feature `etcd`)"
                .to_string(),
        })
    }
}

/// Raise an etcd lease store's fence (`{prefix}/fence`) to `now + margin_ms`, never lowering
/// it: after the store was restored from a backup, no new holder of any slot issues at or below
/// it (see `polyflake lease fence` and docs/node-ids.md, "Backup and restore").
pub fn fence_etcd_lease(options: &EtcdLeaseOptions, margin_ms: u64) -> Result<FenceReport> {
    #[cfg(all(feature = "etcd", not(loom)))]
    return etcd::fence(options, margin_ms);
    #[cfg(not(all(feature = "etcd", not(loom))))]
    {
        let _ = (options, margin_ms);
        Err(Error::InvalidNodeSource {
            reason: "this build of polyflake has no etcd support (cargo feature `etcd`)"
                .to_string(),
        })
    }
}

/// Raise a ZooKeeper lease store's fence (`{prefix}/fence`) to `now + margin_ms`, never
/// lowering it (see [`fence_etcd_lease`]).
pub fn fence_zookeeper_lease(
    options: &ZooKeeperLeaseOptions,
    margin_ms: u64,
) -> Result<FenceReport> {
    #[cfg(all(feature = "zookeeper", not(loom)))]
    return zookeeper::fence(options, margin_ms);
    #[cfg(not(all(feature = "zookeeper", not(loom))))]
    {
        let _ = (options, margin_ms);
        Err(no_zookeeper())
    }
}

/// Read a ZooKeeper lease store (every znode under the prefix) without taking anything: each
/// slot's holder and mark, and the recorded ID space (`options.common.reserve_ms` is what a missing or
/// damaged mark is assumed to hide, `options.common.max_guard_wait_ms` what counts as poisoned).
pub fn inspect_zookeeper_lease(options: &ZooKeeperLeaseOptions) -> Result<StoreReport> {
    #[cfg(all(feature = "zookeeper", not(loom)))]
    return zookeeper::inspect(options);
    #[cfg(not(all(feature = "zookeeper", not(loom))))]
    {
        let _ = options;
        Err(no_zookeeper())
    }
}

#[cfg(not(all(feature = "zookeeper", not(loom))))]
fn no_zookeeper() -> Error {
    Error::InvalidNodeSource {
        reason: "this build of polyflake has no ZooKeeper support (cargo feature `zookeeper`)"
            .to_string(),
    }
}

/// Which kind of store a lease lives in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LeaseKind {
    /// A directory of slot files.
    File,
    /// An etcd v3 cluster.
    Etcd,
    /// A ZooKeeper ensemble.
    ZooKeeper,
}

impl LeaseKind {
    /// `"file"`, `"etcd"` or `"zookeeper"`.
    pub const fn name(self) -> &'static str {
        match self {
            LeaseKind::File => "file",
            LeaseKind::Etcd => "etcd",
            LeaseKind::ZooKeeper => "zookeeper",
        }
    }
}

/// The lease part of [`crate::Health`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeaseHealth {
    /// File, etcd or ZooKeeper.
    pub kind: LeaseKind,
    /// The directory, or the endpoints (ensemble) and key (znode) prefix.
    pub store: String,
    /// The slot held, which is the node id.
    pub slot: u32,
    /// The high-water mark R (Unix ms): no ID is issued with a later timestamp until the store
    /// has extended it.
    pub high_water_ms: i64,
    /// What the slot's previous holder may have reached when the slot was taken (its R, or a
    /// full reserve past the record's time when the record was missing or damaged): nothing is
    /// issued until the clock passes it.
    pub guard_until_ms: Option<i64>,
    /// True while the restart guard waits.
    pub guard_waiting: bool,
    /// How long the restart guard still waits, in ms (0 when it does not).
    pub guard_remaining_ms: u64,
    /// Why the guard is long: set when the slot was taken although its guard exceeded
    /// `max_guard_wait_ms`, because no slot with a shorter guard was free. File leases also
    /// name here the slot names skipped as unsafe (a symbolic link, a hard link, a FIFO, a
    /// directory, a device, another user's file: never read nor written). Empty otherwise.
    pub guard_note: String,
    /// True once the lease is lost (the generator has stopped for good).
    pub lost: bool,
    /// True while the next ID would pass R (the store has not extended it): calls are refused
    /// until a renewal succeeds.
    pub expired: bool,
    /// Successful extensions of R.
    pub renewals: u64,
    /// Failed extensions (store unreachable, I/O errors).
    pub failures: u64,
    /// The last store error, or why the lease was lost; empty if none.
    pub last_error: String,
}

/// Where a lease stands, in one word.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LeasePhase {
    /// Held and issuing.
    Held,
    /// The restart guard waits.
    RestartGuard,
    /// R was reached without a renewal.
    Expired,
    /// Lost for good.
    Lost,
}

impl LeasePhase {
    /// `"held"`, `"restart_guard"`, `"expired"` or `"lost"`.
    pub const fn name(self) -> &'static str {
        match self {
            LeasePhase::Held => "held",
            LeasePhase::RestartGuard => "restart_guard",
            LeasePhase::Expired => "expired",
            LeasePhase::Lost => "lost",
        }
    }

    /// Every phase, in a fixed order.
    pub const ALL: [LeasePhase; 4] = [
        LeasePhase::Held,
        LeasePhase::RestartGuard,
        LeasePhase::Expired,
        LeasePhase::Lost,
    ];
}

impl LeaseHealth {
    /// Every field by name, in declaration order, plus `phase` (see [`crate::Health::fields`]).
    pub fn fields(&self) -> Vec<(&'static str, crate::Value)> {
        use crate::Value::{Bool, Int, Text};
        vec![
            ("kind", Text(self.kind.name().to_string())),
            ("store", Text(self.store.clone())),
            ("slot", Int(self.slot.into())),
            ("high_water_ms", Int(self.high_water_ms.into())),
            ("guard_until_ms", crate::Value::opt_int(self.guard_until_ms)),
            ("guard_waiting", Bool(self.guard_waiting)),
            ("guard_remaining_ms", Int(self.guard_remaining_ms.into())),
            ("guard_note", Text(self.guard_note.clone())),
            ("lost", Bool(self.lost)),
            ("expired", Bool(self.expired)),
            ("phase", Text(self.phase().name().to_string())),
            ("renewals", Int(self.renewals.into())),
            ("failures", Int(self.failures.into())),
            ("last_error", Text(self.last_error.clone())),
        ]
    }

    /// Where the lease stands: lost, waiting out the restart guard, expired, or held.
    pub fn phase(&self) -> LeasePhase {
        if self.lost {
            LeasePhase::Lost
        } else if self.guard_waiting {
            LeasePhase::RestartGuard
        } else if self.expired {
            LeasePhase::Expired
        } else {
            LeasePhase::Held
        }
    }
}

/// Tells a background thread to stop, and what to leave behind.
pub(crate) struct Stop {
    stopped: Mutex<bool>,
    cv: Condvar,
    /// R to leave in the store on a clean close (the last issued ms, or the guard, or now): the
    /// successor then waits only past what was really issued. `NONE`: keep R as it is (a
    /// crash, or a lost lease).
    final_r_ms: AtomicI64,
    #[cfg(all(any(feature = "etcd", feature = "zookeeper"), not(loom)))]
    notify: tokio::sync::Notify,
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

    #[cfg(all(any(feature = "etcd", feature = "zookeeper"), not(loom)))]
    fn is_stopped(&self) -> bool {
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

    fn final_r_ms(&self) -> Option<i64> {
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
    file: Option<Arc<file::SlotFile>>,
    claim: Option<Claim>,
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
    source: crate::lease::NodeSource,
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
            NodeSource::ZooKeeper(_) => Err(no_zookeeper()),
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
            guard_note: get(&state.guard_note),
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
    pub state: Arc<LeaseState>,
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
    fn now_ms(&self) -> Result<i64> {
        let now = self
            .clock
            .now_ms()
            .map_err(|e| Error::ClockFailed { reason: e.0 })?;
        Ok(self.forward.trusted_now(now, || self.clock.boot_ms()))
    }

    /// The ID space this generator mints in.
    fn space(&self) -> IdSpace {
        IdSpace {
            epoch_ms: self.epoch_ms,
            layout: self.layout,
        }
    }

    /// The last Unix ms the layout can carry.
    fn window_end_ms(&self) -> i64 {
        self.epoch_ms
            .saturating_add(self.layout.max_elapsed_ms() as i64)
    }

    /// Claim the node id in this process: `None` if another live generator here has it, so
    /// the caller tries the next slot.
    fn claim(&self, slot: u32) -> Option<Option<Claim>> {
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
fn renew_period(reserve_ms: i64) -> Duration {
    Duration::from_millis((reserve_ms / 5).max(2) as u64)
}
