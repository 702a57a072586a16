//! The issuing window every generator has: the two atomics its hot path compares with (`floor`,
//! the restart guard, and `limit`, R or the layout's end), shared with the lease's background
//! thread when the node id is leased (see `lease`), and what a refusal says about them.
//!
//! The generator never issues an ID whose timestamp is outside `(floor, limit]`. A lease moves
//! the window: `start` when a slot is taken (the previous holder's R as the floor), `publish`
//! after each durable renewal, `lose` and `close` to shut it for good. Without a lease it changes
//! only when the generator is closed.
//!
//! A lease's limit is R capped at one reserve past the clock's reading just before the last
//! check that the slot is still ours (the take, or a renewal's compare): `min(R, checked +
//! reserve)`. A taker that finds no record of a slot guards one reserve past its own clock, so a
//! holder whose record was deleted or lost must not issue further than that past the last time it
//! knew the slot was its own, however far its R runs (a long restart guard makes the first R
//! lie more than a reserve ahead). Found by the model (`verify/model/trails/no-cap.txt`: a new slot's
//! file deleted under its holder, the next taker issues in the holder's window), see
//! docs/reliability.md.
//!
//! ## Decisions
//!
//! - **The no-lease path pays nothing new.** Without a lease `floor = -1` and `limit` = the
//!   layout's last millisecond, exactly the window check the generator made anyway: the same two
//!   comparisons, against two atomics. Strict mode issues at `now`, so
//!   `floor < now <= limit` covers it; monotonic mode compares its ID's millisecond with `limit`
//!   where it compared with the window's end. `limit` and the node part are read with Acquire
//!   (a heal or a forked child's re-lease changes both: `lease/heal.rs`), plain loads on x86-64
//!   as Relaxed ones are. Only a refusal looks at the lease (cold path), to
//!   tell `LeaseNotReady`, `LeaseExpired`, `LeaseLost` and `TimestampOverflow` apart.
//! - **What the cap means for callers.** A new slot's window opens at its first renewal
//!   (reserve / 5 after the take, within the one-reserve guard it waits anyway on a real clock);
//!   a refusal by the cap is `LeaseExpired` whose `high_water_ms` is the cap and whose cause
//!   names R, the check's time and the reserve. A caller the cap refuses renews a FILE lease on
//!   its own thread (`engine.rs`'s `renew_for`: the renewal thread's check and write, on the cold
//!   path only), so a process resumed after a stop, or a test whose `ManualClock` ran ahead of
//!   the renewal thread, issues again as soon as its slot is confirmed. etcd and ZooKeeper renew
//!   on their thread only (async clients): a test clock that jumps more than a reserve waits for
//!   the next renewal (every reserve / 5 of real time).

use crate::error::Error;
use crate::forklock::ForkLock;
use crate::layout::Layout;
use crate::sync::AtomicI64 as StateWord;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
use std::sync::Mutex;

/// No previous holder's mark (see `Window::guard_until_ms`), no final R (see the lease's
/// `Stop`).
pub(crate) const NONE: i64 = i64::MIN;

/// The state word of a closed generator: far past every layout's window (so every step from it
/// is refused) yet far enough from `i64::MAX` that adding a batch cannot overflow.
pub(crate) const CLOSED_STATE: i64 = i64::MAX / 4;

/// A lease's copy of its R on the host (its node id's mark, `lease::host`): written durably
/// before the window opens to an R.
pub(crate) trait MarkMirror: Send + Sync {
    /// Write the window's limit to the mark (`Err`: why not; the limit is then not published).
    fn mirror(&self, limit_ms: i64) -> std::result::Result<(), String>;
    /// The lease's clean close: its last issued millisecond and ID's state word (`now_ms`: the
    /// time of closing, for a lease that issued nothing).
    fn finish_lease(&self, last_ms: Option<i64>, last_state: i64, now_ms: i64);
}

/// The generator's state word (`elapsed << seq_bits | seq`) on a cache line of its own, so
/// threads that CAS it do not also invalidate the read-mostly window beside it. It lives in the
/// window, which the hot path reaches anyway, so that what must close a generator without
/// owning it (a process exiting with a fixed node id's mark open: `lease::host`) can take it.
#[repr(align(64))]
pub(crate) struct PaddedState(pub(crate) StateWord);

/// The issuing window of a generator, shared with its lease's background thread. Every
/// generator has one; without a lease it changes only when the generator is closed
/// (`floor = -1`, `limit` = the layout's last millisecond, then -1).
pub(crate) struct Window {
    /// The generator's state word (`engine.rs`).
    pub state: PaddedState,
    /// Elapsed ms (since the epoch) the clock must be ABOVE to issue: the restart guard.
    pub floor: AtomicI64,
    /// The largest elapsed ms an ID may carry: R (or the layout's end), -1 once the lease is
    /// lost or the generator closed. Stored with Release after `node_part`, and read with
    /// Acquire by a call: a call that sees a window opened for a new slot sees its node id.
    pub limit: AtomicI64,
    /// `node_id << seq_bits`: the node part of every ID. Changes only when a lease takes a new
    /// slot in place (a forked child's re-lease, a heal), while the window is held shut.
    pub node_part: AtomicU64,
    /// The node id (the slot held).
    node_id: AtomicU64,
    /// True while a new slot is taken in place: the window stays shut (as `sync_blocked` does)
    /// until the new node id is published.
    held: AtomicBool,
    /// Lost leases healed (`lease/heal.rs`).
    heals: AtomicU64,
    /// Sequence values a heal counted as spent without issuing them (health's `ids_issued`
    /// leaves them out).
    unissued: AtomicU64,
    /// What the last heal did, in words (empty: none yet).
    heal_note: Mutex<String>,
    /// Called once the lease is lost (`lose`): starts a heal when the lease heals.
    on_lost: ForkLock<Option<std::sync::Arc<dyn Fn() + Send + Sync>>>,
    epoch_ms: i64,
    max_elapsed: i64,
    /// R, Unix ms, as last written to the store.
    r_ms: AtomicI64,
    /// The clock's reading (Unix ms) just before the last successful check that the slot is
    /// ours (`NONE` without a lease): the limit is at most one reserve past it.
    checked_ms: AtomicI64,
    /// The lease's reserve_ms (0 without a lease).
    reserve_ms: AtomicI64,
    /// The last millisecond a capped caller renewed at (`capped_renewal`): one try per ms.
    caller_renewal_ms: AtomicI64,
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
    /// The kernel says the clock is unsynchronized or too far off for this generator's
    /// `max_clock_error_ms` (`clocksync.rs`): nothing is issued until it says otherwise.
    sync_blocked: AtomicBool,
    /// Why, in words, and the kernel's maximum error when last read (us).
    sync_note: Mutex<String>,
    sync_max_error_us: AtomicI64,
    /// A lease's node-id mark on the host, kept at every R before it is published.
    mirror: ForkLock<Option<std::sync::Arc<dyn MarkMirror>>>,
    /// The layout's sequence bits (the state word's millisecond starts above them).
    seq_bits: u32,
    /// Serialises the writers of `limit` (renewal, loss, close), so a renewal can never
    /// reopen a window that a loss or a close has just shut.
    writer: ForkLock<()>,
}

impl Window {
    /// The window of a generator with no lease: open from the epoch to the layout's end.
    pub(crate) fn unleased(layout: Layout, epoch_ms: i64) -> Window {
        let max_elapsed = layout.max_elapsed_ms() as i64;
        Window {
            state: PaddedState(StateWord::new(-1)),
            floor: AtomicI64::new(-1),
            limit: AtomicI64::new(max_elapsed),
            node_part: AtomicU64::new(0),
            node_id: AtomicU64::new(0),
            held: AtomicBool::new(false),
            heals: AtomicU64::new(0),
            unissued: AtomicU64::new(0),
            heal_note: Mutex::new(String::new()),
            on_lost: ForkLock::new(None),
            epoch_ms,
            max_elapsed,
            r_ms: AtomicI64::new(NONE),
            checked_ms: AtomicI64::new(NONE),
            reserve_ms: AtomicI64::new(0),
            caller_renewal_ms: AtomicI64::new(NONE),
            guard_until_ms: AtomicI64::new(NONE),
            lost: AtomicBool::new(false),
            rolled_back: AtomicBool::new(false),
            closed: AtomicBool::new(false),
            renewals: AtomicU64::new(0),
            failures: AtomicU64::new(0),
            note: Mutex::new(String::new()),
            guard_note: Mutex::new(String::new()),
            sync_blocked: AtomicBool::new(false),
            sync_note: Mutex::new(String::new()),
            sync_max_error_us: AtomicI64::new(-1),
            mirror: ForkLock::new(None),
            seq_bits: layout.sequence_bits(),
            writer: ForkLock::new(()),
        }
    }

    /// A fresh slot: the previous holder's R (or the guard assumed for it) and ours (already
    /// durable); `checked_ms` is the clock's reading before the take's check (the lock and read
    /// of a slot file, the store's create), `reserve_ms` the lease's.
    // Modelled in verify/model/lease.pml: inline start (R_GUARD, R_CAP) (make model).
    pub(crate) fn start(
        &self,
        guard_until_ms: i64,
        r_ms: i64,
        checked_ms: i64,
        reserve_ms: i64,
        guard_note: String,
    ) {
        let _w = self.writer.lock();
        if self.closed.load(Ordering::Acquire) {
            return;
        }
        self.guard_until_ms.store(guard_until_ms, Ordering::Relaxed);
        self.lost.store(false, Ordering::Release);
        self.rolled_back.store(false, Ordering::Release);
        self.r_ms.store(r_ms, Ordering::Relaxed);
        self.checked_ms.store(checked_ms, Ordering::Relaxed);
        self.reserve_ms.store(reserve_ms, Ordering::Relaxed);
        set(&self.guard_note, guard_note);
        let floor = guard_until_ms.saturating_sub(self.epoch_ms).max(-1);
        self.floor.store(floor, Ordering::Release);
        self.store_limit();
    }

    /// Lower the floor below the guard (a monotonic holder of a fixed node id, which may borrow
    /// up to its lead over the guard: its state word already starts above it). Only before the
    /// generator issues.
    pub(crate) fn lower_floor(&self, floor_elapsed: i64) {
        let _w = self.writer.lock();
        let f = self
            .floor
            .load(Ordering::Relaxed)
            .min(floor_elapsed)
            .max(-1);
        self.floor.store(f, Ordering::Release);
    }

    /// A lease's mark on the host, to keep at every R from now on (`None`: none).
    pub(crate) fn set_mirror(&self, mirror: Option<std::sync::Arc<dyn MarkMirror>>) {
        *self.mirror.lock() = mirror;
    }

    /// The lease's mark on the host, if it keeps one.
    pub(crate) fn mirror(&self) -> Option<std::sync::Arc<dyn MarkMirror>> {
        self.mirror.lock().clone()
    }

    /// Count the millisecond of `after_claim_ms` (a reading taken after the node id's claim) as
    /// spent: nothing is issued in it. Its previous holder on this host may have issued in it
    /// and left no mark saying so (a holder that kept none).
    // Modelled in verify/model/host.pml: the taker's first state (SPENT_ALWAYS) (make model).
    pub(crate) fn spend_millisecond(&self, after_claim_ms: i64) {
        let elapsed = after_claim_ms.saturating_sub(self.epoch_ms);
        if elapsed < 0 || elapsed > self.max_elapsed {
            return;
        }
        let spent = (elapsed << self.seq_bits) | ((1i64 << self.seq_bits) - 1);
        let word = &self.state.0;
        let mut p = word.load(crate::sync::Ordering::Acquire);
        while p < spent && p != CLOSED_STATE {
            match word.compare_exchange_weak(
                p,
                spent,
                crate::sync::Ordering::AcqRel,
                crate::sync::Ordering::Acquire,
            ) {
                Ok(_) => return,
                Err(actual) => p = actual,
            }
        }
    }

    /// R is durable in the store, written after a check at `checked_ms` found the slot still
    /// ours: let the generator issue up to R, and no more than one reserve past the check. A
    /// lease that keeps its node id's mark on the host writes R there first.
    // Modelled in verify/model/lease.pml: inline publish (R_BEFORE: called only after the durable write;
    // R_CAP) (make model).
    pub(crate) fn publish(&self, r_ms: i64, checked_ms: i64) {
        let _w = self.writer.lock();
        if self.lost.load(Ordering::Acquire) || self.closed.load(Ordering::Acquire) {
            return;
        }
        if let Some(m) = self.mirror() {
            // What the window will let the generator issue up to: the limit this publish makes.
            let r = self.r_ms.load(Ordering::Relaxed).max(r_ms);
            let cap = checked_ms.saturating_add(self.reserve_ms.load(Ordering::Relaxed));
            if let Err(why) = m.mirror(r.min(cap)) {
                self.failures.fetch_add(1, Ordering::Relaxed);
                set(&self.note, why);
                return;
            }
        }
        let r = self.r_ms.load(Ordering::Relaxed).max(r_ms);
        self.r_ms.store(r, Ordering::Relaxed);
        // The latest check, even when the clock went back since the one before: a cap from an
        // earlier reading would trust a check the later one replaced.
        self.checked_ms.store(checked_ms, Ordering::Relaxed);
        self.store_limit();
    }

    /// The limit from R and the last check, or the layout's end without a lease; -1 while the
    /// clock's synchronization forbids issuing (the caller holds `writer`).
    fn store_limit(&self) {
        if self.sync_blocked.load(Ordering::Acquire) || self.held.load(Ordering::Acquire) {
            self.limit.store(-1, Ordering::Release);
            return;
        }
        if self.reserve_ms.load(Ordering::Relaxed) == 0 {
            self.limit.store(self.max_elapsed, Ordering::Release);
            return;
        }
        let r = self.r_ms.load(Ordering::Relaxed);
        let cap = self
            .checked_ms
            .load(Ordering::Relaxed)
            .saturating_add(self.reserve_ms.load(Ordering::Relaxed));
        let limit = r
            .min(cap)
            .saturating_sub(self.epoch_ms)
            .min(self.max_elapsed);
        self.limit.store(limit, Ordering::Release);
    }

    /// An ID at `ms` (Unix) is past the limit only because of the cap (R covers it: a renewal
    /// that finds the slot still ours now would open the window to it), and no caller has
    /// renewed for this `ms` yet: a refused caller that spins (a store that keeps failing)
    /// renews once per millisecond, not once per call.
    pub(crate) fn capped_renewal(&self, ms: i64) -> bool {
        let cap = self
            .checked_ms
            .load(Ordering::Relaxed)
            .saturating_add(self.reserve_ms.load(Ordering::Relaxed));
        !self.is_lost()
            && !self.is_closed()
            && ms <= self.r_ms()
            && ms > cap
            && self.caller_renewal_ms.swap(ms, Ordering::Relaxed) != ms
    }

    /// The kernel's word on the clock, as `clocksync.rs` judged it for this generator: `Some`
    /// (why) shuts the window until a later reading opens it again. A closed or lost window
    /// stays shut.
    pub(crate) fn set_sync(&self, refusal: Option<String>, max_error_us: i64) {
        let _w = self.writer.lock();
        self.sync_max_error_us
            .store(max_error_us, Ordering::Relaxed);
        let blocked = refusal.is_some();
        if let Some(why) = refusal {
            set(&self.sync_note, why);
        }
        if self.sync_blocked.swap(blocked, Ordering::AcqRel) == blocked {
            return;
        }
        if self.closed.load(Ordering::Acquire) || self.lost.load(Ordering::Acquire) {
            return;
        }
        self.store_limit();
    }

    /// True while the clock's synchronization forbids issuing.
    pub(crate) fn is_sync_blocked(&self) -> bool {
        self.sync_blocked.load(Ordering::Acquire)
    }

    /// The node id of the slot held (and the node part of every ID, `node_id << seq_bits`).
    /// Before the window opens: at build, or while it is held (`hold`).
    pub(crate) fn set_node(&self, node_id: u32) {
        self.node_id.store(u64::from(node_id), Ordering::Relaxed);
        // Release: a call that reads the new node part (Acquire) sees the window held shut.
        self.node_part
            .store(u64::from(node_id) << self.seq_bits, Ordering::Release);
    }

    /// After `set_node`, before `resume`: move the state word to the last sequence value of a
    /// millisecond past every ID issued so far and at or past the new slot's floor, always to a
    /// new value, so a call that read the state before the new node id was set fails its
    /// compare-and-swap and reads both again (`Generator::node_part`). `now_elapsed`: the
    /// clock, for a state word that has issued nothing. Returns the values replaced and set.
    pub(crate) fn move_past_node_change(&self, now_elapsed: i64) -> (i64, i64) {
        let word = &self.state.0;
        let mask = (1i64 << self.seq_bits) - 1;
        let floor = self.floor.load(Ordering::Acquire).max(0);
        loop {
            let p = word.load(crate::sync::Ordering::Acquire);
            if p == CLOSED_STATE {
                return (p, p);
            }
            let ms = if p < 0 {
                now_elapsed.max(0)
            } else if p & mask == mask {
                (p >> self.seq_bits) + 1
            } else {
                p >> self.seq_bits
            };
            let ms = ms.max(floor).min(self.max_elapsed);
            let spent = (ms << self.seq_bits) | mask;
            if spent <= p {
                // The layout's last millisecond is spent: nothing more can be issued anyway.
                return (p, p);
            }
            if word
                .compare_exchange_weak(
                    p,
                    spent,
                    crate::sync::Ordering::AcqRel,
                    crate::sync::Ordering::Acquire,
                )
                .is_ok()
            {
                return (p, spent);
            }
        }
    }

    /// The node id of the slot held.
    pub(crate) fn node_id(&self) -> u32 {
        self.node_id.load(Ordering::Relaxed) as u32
    }

    /// Nothing may be issued until `resume`: a new slot is being taken in place (a forked
    /// child re-leasing, a heal). Its take opens the window (`start`, `publish`) only in the
    /// figures; the limit stays -1 until the new node id is set and `resume` publishes it.
    pub(crate) fn hold(&self) {
        let _w = self.writer.lock();
        self.held.store(true, Ordering::Release);
        self.limit.store(-1, Ordering::Release);
    }

    /// The new node id is set (`set_node`): open the window to what the take published (a
    /// lost or closed window stays shut).
    pub(crate) fn resume(&self) {
        let _w = self.writer.lock();
        self.held.store(false, Ordering::Release);
        if self.lost.load(Ordering::Acquire) || self.closed.load(Ordering::Acquire) {
            return;
        }
        self.store_limit();
    }

    /// The new slot could not be taken: stop holding, with the window left shut (a heal's
    /// lease stays lost, with `why`; a forked child tries again at its next call).
    pub(crate) fn abort_hold(&self, why: Option<String>) {
        let _w = self.writer.lock();
        if let Some(why) = why {
            self.lost.store(true, Ordering::Release);
            set(&self.note, why);
        }
        self.limit.store(-1, Ordering::Release);
        self.held.store(false, Ordering::Release);
    }

    /// True while a new slot is taken in place.
    pub(crate) fn is_held(&self) -> bool {
        self.held.load(Ordering::Acquire)
    }

    /// The lease is gone: stop issuing at once (for good, unless the lease heals: then
    /// `on_lost` starts taking a new slot).
    // Modelled in verify/model/lease.pml: inline lose (make model).
    pub(crate) fn lose(&self, reason: String) {
        {
            let _w = self.writer.lock();
            self.lost.store(true, Ordering::Release);
            self.limit.store(-1, Ordering::Release);
            set(&self.note, reason);
        }
        let hook = self.on_lost.lock().clone();
        if let Some(hook) = hook {
            hook();
        }
    }

    /// What to do once the lease is lost (`None`: nothing; the generator stops for good).
    pub(crate) fn set_on_lost(&self, hook: Option<std::sync::Arc<dyn Fn() + Send + Sync>>) {
        *self.on_lost.lock() = hook;
    }

    /// Why the lease is lost, with what its heal says now (the note is the health's reason).
    pub(crate) fn set_note(&self, reason: String) {
        set(&self.note, reason);
    }

    /// A lost lease was healed (`what`, in words); `unissued` sequence values were counted as
    /// spent on the way.
    pub(crate) fn healed(&self, unissued: u64, what: String) {
        set(&self.heal_note, what);
        self.heals.fetch_add(1, Ordering::Relaxed);
        self.unissued.fetch_add(unissued, Ordering::Relaxed);
    }

    /// What the last heal did, in words (empty: none yet).
    pub(crate) fn heal_note(&self) -> String {
        get(&self.heal_note)
    }

    /// Lost leases healed so far.
    pub(crate) fn heals(&self) -> u64 {
        self.heals.load(Ordering::Relaxed)
    }

    /// Sequence values counted as spent by heals, never issued.
    pub(crate) fn unissued(&self) -> u64 {
        self.unissued.load(Ordering::Relaxed)
    }

    /// The store was seen to go back in time: the loss that follows is reported as such
    /// (health `store_rolled_back`). Only the remote stores can see it.
    #[cfg_attr(not(any(feature = "etcd", feature = "zookeeper")), allow(dead_code))]
    pub(crate) fn rolled_back(&self) {
        self.rolled_back.store(true, Ordering::Release);
    }

    /// The generator is closed: nothing more is issued.
    pub(crate) fn close(&self) {
        let _w = self.writer.lock();
        self.closed.store(true, Ordering::Release);
        self.limit.store(-1, Ordering::Release);
    }

    /// A renewal succeeded.
    pub(crate) fn renewed(&self) {
        self.renewals.fetch_add(1, Ordering::Relaxed);
    }

    /// A renewal failed (the lease is kept until R): `reason` is the store's answer.
    pub(crate) fn failed(&self, reason: String) {
        self.failures.fetch_add(1, Ordering::Relaxed);
        set(&self.note, reason);
    }

    /// The last store error, or why the lease was lost (empty if none).
    pub(crate) fn note(&self) -> String {
        get(&self.note)
    }

    /// Why the restart guard is long (empty if it is not).
    pub(crate) fn guard_note(&self) -> String {
        get(&self.guard_note)
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
        // While a new slot is taken in place the old one is still the lost one.
        if self.is_lost() || self.is_held() {
            return Error::LeaseLost {
                node_id,
                reason: self.note(),
            };
        }
        if self.is_sync_blocked() {
            return Error::ClockUnsynchronized {
                node_id,
                max_error_us: self.sync_max_error_us.load(Ordering::Relaxed),
                cause: get(&self.sync_note),
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
        let renewal = || {
            match self.note() {
            note if !note.is_empty() && self.failures() > 0 => {
                format!("R was not renewed; the store's last answer: {note}")
            }
            _ => "R was not renewed in time (no renewal has failed: the renewal thread is late, or the process was paused)".to_string(),
        }
        };
        let checked = self.checked_ms.load(Ordering::Relaxed);
        let reserve = self.reserve_ms.load(Ordering::Relaxed);
        let cap = checked.saturating_add(reserve);
        if matches!(next_ms, Some(next) if next <= r && next > cap) {
            // The mark in force is the cap, not R.
            return Error::LeaseExpired {
                node_id,
                high_water_ms: cap,
                cause: format!(
                    "that is one reserve_ms ({reserve}) past the last time the slot was confirmed as this holder's (the clock read {checked}); R, durable up to {r}, is issued from only once a renewal confirms the slot again (a record lost under a live holder is guarded that far, no further): {}",
                    match self.note() {
                        note if !note.is_empty() && self.failures() > 0 => {
                            format!("the store's last answer: {note}")
                        }
                        _ => "no renewal has failed: the renewal thread is late, the process was paused, or a test clock ran ahead of the renewals".to_string(),
                    }
                ),
            };
        }
        let cause = match next_ms {
            Some(next) if now_ms < r && next > r => format!(
                "the generator runs {} ms ahead of its clock ({now_ms}), {} ms past R, which is renewed to the clock plus reserve_ms: raise reserve_ms above the lead you need, or set max_lead_ms below reserve_ms so the lead is refused as such",
                next - now_ms,
                next - r
            ),
            _ => renewal(),
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
