//! Healing a lost lease: when the store says the slot is no longer ours, take a new one in
//! place, in the background, and go on issuing from it.
//!
//! A lease is lost when its store stops vouching for the slot: an etcd lease revoked or expired,
//! a ZooKeeper session expired, the slot file deleted or replaced, the store restored from an
//! older backup. Without healing the generator then refuses for good (`LeaseLost`, or
//! `StoreRolledBack`) until its owner builds a new one. With [`crate::LeaseCommon::heal`] the
//! lease does that itself: the moment the window is lost (`Window::lose`), a thread named
//! `polyflake-heal` takes a new slot from the same store with the same options, exactly as a
//! new generator would (the host's claim, the slot order, the mark, the fence, the restart
//! guard), and the generator issues from it once its guard has passed.
//!
//! ## Decisions
//!
//! - **Off by default in the libraries, on in the service.** A heal changes the generator's
//!   node id under its owner (the new slot is usually another one) and makes calls wait a new
//!   restart guard (up to one reserve) mid-flight; code that reads `node_id()` once, or that
//!   handles `LeaseLost` by building a new generator, keeps working unchanged. Turning it on is
//!   one option in every binding (`heal`). `polyflake serve` heals unless `--no-heal`: a
//!   service that stops for good on a store hiccup is an outage.
//! - **The new slot is taken as a restart would take it.** The lost session is let go as a
//!   crash would let it go (its R stays where it was; its thread is stopped and joined before
//!   the take, so no renewal of the old slot can publish into the new window), the node id's
//!   claim on the host is given back, and the take runs with the window held shut
//!   (`Window::hold`): its `start` and first renewals set the figures only. Then, in this order:
//!   the new node id is set (Release); the state word is moved, always to a new value, to the
//!   last sequence value of a millisecond past every ID issued and at or past the new slot's
//!   floor (so the next ID is above every earlier one, whichever node id is larger); the window
//!   is opened (`Window::resume`, Release). A call reads the state word, then the node part,
//!   then the window (each Acquire) and composes its ID with the node part it read
//!   (`Generator::node_part`): one that read the state before the move fails its
//!   compare-and-swap and reads all three again, and one that read it after sees the new node
//!   id and a window that is shut or the new one. So no ID pairs one slot's node id with the
//!   other slot's window, however long a thread is preempted in the middle of a call.
//! - **After a store rollback, wait past the old R.** A restored store may have forgotten the
//!   R this generator issued up to, so a slot taken from it now could be guarded too briefly
//!   (its restored record shows an older R). The heal waits until the clock has passed the lost
//!   slot's R before it takes anything: nothing this process issued can then repeat (an
//!   operator's fence covers the other holders of the lost history, docs/reliability.md).
//! - **A failed take is tried again** every `reserve / 5` (at least 20 ms, at most 1 s) until
//!   one succeeds or the generator is closed; health stays `lease_lost` meanwhile and its
//!   reason says why the last try failed.
//! - **Counters go on.** The generator is the same object: `ids_issued`, waits and refusals
//!   continue across heals, the lease's renewals and failures too; health's lease part counts
//!   `heals`. The sequence values of the millisecond counted as spent are left out of
//!   `ids_issued`.
//! - **Closing wins.** A close takes the session lock the heal holds while it takes a slot, so
//!   it waits for that take and then closes the new slot cleanly; a heal that finds the
//!   generator closed takes nothing. In a forked child the heal leaves the slot to the child's
//!   re-lease (`runtime.rs`).

use super::runtime::LeaseRuntime;
use crate::fork;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Weak};
use std::time::Duration;

impl LeaseRuntime {
    /// Heal this lease whenever it is lost, if it heals: what `Window::lose` calls.
    pub(crate) fn arm_heal(self: &Arc<Self>) {
        if !self.heal {
            return;
        }
        let weak: Weak<LeaseRuntime> = Arc::downgrade(self);
        self.ctx.state.set_on_lost(Some(Arc::new(move || {
            if let Some(rt) = weak.upgrade() {
                rt.start_heal();
            }
        })));
    }

    /// Whether a lost lease heals.
    pub(crate) fn heals(&self) -> bool {
        self.heal
    }

    /// Start the heal thread unless one runs in this process already.
    fn start_heal(self: Arc<Self>) {
        let mine = fork::current_fork_generation() + 1;
        if self.healing.swap(mine, Ordering::AcqRel) == mine {
            return;
        }
        let rt = self.clone();
        let spawned = std::thread::Builder::new()
            .name("polyflake-heal".to_string())
            .spawn(move || rt.heal_loop(mine));
        if let Err(e) = spawned {
            self.healing.store(0, Ordering::Release);
            let state = &self.ctx.state;
            state.set_note(format!(
                "{}; the lease heals but no thread could be started to take a new slot: {e}",
                state.note()
            ));
        }
    }

    /// Take a new slot, trying again until one is taken or the generator is closed.
    fn heal_loop(self: Arc<Self>, mine: u64) {
        let state = &self.ctx.state;
        let retry = Duration::from_millis((self.reserve_ms() / 5).clamp(20, 1_000) as u64);
        loop {
            let lost_reason = state.note();
            let lost_r_ms = state.r_ms();
            while !state.is_closed()
                && state.is_lost()
                && fork::current_fork_generation() + 1 == mine
            {
                if state.is_rolled_back() {
                    // Wait until the clock has passed what the lost slot may have issued up to.
                    match self.ctx.now_ms() {
                        Ok(now) if now > lost_r_ms => {}
                        _ => {
                            std::thread::sleep(Duration::from_millis(5));
                            continue;
                        }
                    }
                }
                if let Err(why) = self.heal_once(mine - 1, &lost_reason) {
                    state.set_note(why);
                    std::thread::sleep(retry);
                }
            }
            self.healing.store(0, Ordering::Release);
            // A loss after the last look found the flag set and started nothing: look again.
            let again = state.is_lost()
                && !state.is_closed()
                && fork::current_fork_generation() + 1 == mine
                && self
                    .healing
                    .compare_exchange(0, mine, Ordering::AcqRel, Ordering::Acquire)
                    .is_ok();
            if !again {
                return;
            }
        }
    }

    fn reserve_ms(&self) -> i64 {
        use super::read_options::LeaseOptions;
        match &self.source {
            super::NodeSource::FileLease(o) => o.lease_common().reserve_ms as i64,
            super::NodeSource::Etcd(o) => o.lease_common().reserve_ms as i64,
            super::NodeSource::ZooKeeper(o) => o.lease_common().reserve_ms as i64,
            _ => 1_000,
        }
    }

    /// One try: let the lost session go, take a new slot with the window held shut, set its
    /// node id, open the window. `Err`: why the take failed (the lease stays lost).
    fn heal_once(&self, generation: u64, lost_reason: &str) -> Result<(), String> {
        let state = &self.ctx.state;
        let mut held = self.session.lock();
        if state.is_closed() || !state.is_lost() {
            return Ok(());
        }
        if let Some(old) = held.take() {
            if old.generation != generation {
                // A parent's session in a forked child: its re-lease handles it.
                *held = Some(old);
                return Ok(());
            }
            let_go_lost(old, state);
        }
        let (old_node, rolled_back) = (state.node_id(), state.is_rolled_back());
        state.hold();
        // What was issued before the new slot (a call that passed the window check before the
        // hold may still land one: a miscount of one in health at most, never an ID).
        let p0 = state.state.0.load(crate::sync::Ordering::Acquire);
        let session = match self.take_slot(generation) {
            Ok(s) => s,
            Err(e) => {
                let why = format!(
                    "{lost_reason}; healing: a new slot could not be taken yet ({e}), trying again"
                );
                state.abort_hold(Some(why.clone()));
                return Err(why);
            }
        };
        // The order that keeps a call from pairing one slot's node id with the other's window:
        // the node id, then the state word moved (past every ID issued and up to the new
        // floor), then the window opened (`Generator::node_part`).
        state.set_node(session.slot);
        let now_elapsed = self
            .ctx
            .now_ms()
            .map_or(0, |now| now.saturating_sub(self.ctx.epoch_ms));
        let (_, p1) = state.move_past_node_change(now_elapsed);
        // The sequence values of the millisecond the state word now ends, counted as issued by
        // health's arithmetic (the last millisecond's sequence + 1) though none was, less what
        // that arithmetic no longer counts of p0's millisecond.
        let seq_bits = self.ctx.layout.sequence_bits();
        let mask = (1i64 << seq_bits) - 1;
        let unissued = if p1 != p0 && p1 >= 0 {
            ((p1 & mask) + 1 - if p0 >= 0 { (p0 & mask) + 1 } else { 0 }).max(0) as u64
        } else {
            0
        };
        let what = format!(
            "lease lost on node {old_node} ({}: {lost_reason}); took node {} from a new lease",
            if rolled_back {
                "store_rolled_back"
            } else {
                "lease_lost"
            },
            session.slot
        );
        *held = Some(session);
        state.healed(unissued, what);
        state.resume();
        Ok(())
    }
}

/// Let a lost session go as a crash would: stop its renewal (R stays where it was) and wait for
/// its thread, forget its host mark (its last R stays there), give back the node id's claim.
fn let_go_lost(mut session: super::session::Session, state: &crate::window::Window) {
    session.stop.stop(None);
    if let Some(t) = session.thread.take() {
        let _ = t.join();
    }
    state.set_mirror(None);
    let last = state.state.0.load(crate::sync::Ordering::Acquire);
    let claim = session.claim.take();
    drop(session);
    if let Some(c) = claim {
        c.release(last);
    }
}
