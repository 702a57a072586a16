//! The take and the renewal of a remote lease, written once over what a store does (`Store`
//! while taking, `Holder` once a slot is held); etcd (`etcd.rs`) and ZooKeeper (`zookeeper.rs`)
//! are its two implementations.
//!
//! Taking: read the slot this identity held last and every slot and mark, try the free slots in
//! order (`free_slot_order`), each by creating its slot key only if absent (as ours, hanging on
//! our etcd lease or ZooKeeper session) and reading its mark and the store's fence; the guard is
//! the mark (or a full reserve past now when there is none readable), never below the fence;
//! then R = max(guard, now) + reserve is written (a compare on the slot being ours and the mark
//! being the one read) BEFORE anything is issued. Renewing: the fence read again (moved since the
//! take: the store was restored, the lease is lost), then R = max(now + reserve, R), written with
//! the same compare, then published; a failed compare loses the lease.
//!
//! ## Decisions
//!
//! - **Rollback detection.** etcd: only the answers to our own transactions are compared (they
//!   are sequential); the watch and keep-alive streams can deliver an answer created before our
//!   last transaction's, so their lower revisions are not evidence. A revision below the highest
//!   seen, or another cluster id, loses the lease at once with the reason. ZooKeeper: a restored
//!   server refuses our session (it has seen a later zxid) and the client only retries, so once a
//!   renewal finds the session cut off for a renewal period, a fresh session reads our mark: a
//!   version below the one we last wrote means the store forgot our writes (a network outage
//!   makes the fresh session fail too, and is then only an outage).
//! - **A fence raised since the take is a rollback too.** A holder cut off from the backup until
//!   after the restore lost no write, so its session (or etcd lease) and its mark's version come
//!   back and every compare passes; but the lost history may hold its session's expiry and
//!   another holder's use of its slot (the ZooKeeper nemesis found such a holder issuing 7.5 s
//!   after a fenced restore). So every renewal reads the fence before its write of R and writes
//!   and publishes only while the fence reads as it did at the take: one read per renewal period.
//!   An unreadable fence is a failed renewal (R not published), not a loss.
//! - **The take reads the fence again after its first write** and fails (`LeaseStore`, "this take
//!   was under way: make the generator again") when it moved: the model, once it read the fence
//!   as the code does and restored the snapshot's etcd leases and ZooKeeper sessions, found a take
//!   under way during the restore that kept the guard it read before it. One more read per take.
//!   A file take does the same (`file.rs`), for the same reason: it reads the fence before it
//!   locks a slot file.

use super::super::fence;
use super::super::host::{self, LeaseMarkTake};
use super::super::options::Common;
use super::super::order::guard_of;
use super::super::record;
use super::super::session::{Plan, Session, SlotContext, Stop, Taken};
use super::super::store::store_error;
use super::{free_slot_order, keys, Keys};
use crate::error::{Error, Result};
use std::collections::HashMap;
use std::future::Future;
use std::sync::Arc;

/// A mark as stored: its bytes and the revision (etcd) or version (ZooKeeper) they were read at.
pub(crate) struct Mark {
    pub value: Vec<u8>,
    pub version: i64,
}

/// What creating a slot key found: the slot's mark and the store's fence, as stored.
pub(crate) struct Created {
    /// `None`: the slot has no mark.
    pub mark: Option<Mark>,
    /// The fence's bytes (`None`: no fence), or why it could not be read.
    pub fence: Result<Option<Vec<u8>>>,
}

/// What a store holds, by slot number.
pub(crate) struct Contents {
    /// Every held slot: its holder's token, as stored.
    pub taken: HashMap<u32, String>,
    /// Every mark, as stored.
    pub marks: HashMap<u32, Vec<u8>>,
}

/// A remote store while a slot is being taken: one connection, and the etcd lease or ZooKeeper
/// session our token names.
pub(crate) trait Store {
    /// What the renewal keeps once a slot is held.
    type Held: Holder;

    /// The slot this identity held last (`key`: `{prefix}/owner/{identity}`), when it can be read.
    async fn owner_slot(&mut self, key: &str) -> Option<u32>;

    /// Every slot key (taken or not) and every mark under the prefix.
    async fn contents(&mut self) -> Result<Contents>;

    /// Create the slot key only if absent, with our token; then read the mark and the fence.
    /// `Ok(None)`: the slot is someone else's.
    async fn create_slot(&mut self, keys: &Keys) -> Result<Option<Created>>;

    /// Give back a slot key just created (deleted only while it is still ours).
    async fn give_back(&mut self, keys: &Keys);

    /// The take gives up: let go of what the token names (etcd revokes its lease).
    async fn abandon(&mut self);

    /// The slot is ours: what its renewal holds. `version`: the mark's, as read (`None`: none).
    fn hold(self, at: HeldSlot, version: Option<i64>) -> Self::Held;
}

/// The slot a remote holder holds, whichever the store.
pub(crate) struct HeldSlot {
    pub slot: u32,
    /// Its keys or znodes.
    pub keys: Keys,
    /// How far ahead of the clock R is kept.
    pub reserve_ms: i64,
    /// The store's fence as read while taking (`None`: there was none).
    pub fence: Option<Vec<u8>>,
}

/// Why a write of R found the lease lost.
pub(crate) struct Lost {
    pub reason: String,
    /// The store was seen to go back in time (restored from an older backup).
    pub rolled_back: bool,
}

/// A remote store while a slot is held: the write of R, and what its failures say.
pub(crate) trait Holder {
    /// A request that failed (no answer, or a refusal).
    type Fail: std::fmt::Display;

    /// Write R only while the slot is ours and the mark is the one we last wrote (so R in the
    /// store only grows). `Ok(false)`: either is no longer true (`lost` says why).
    async fn write_hwm(&mut self, r: i64) -> std::result::Result<bool, Self::Fail>;

    /// Why the last `write_hwm` returned `Ok(false)`.
    fn lost(&mut self) -> Lost;

    /// A failed request (`what` was being done) as the window's note.
    fn note(&self, what: &str, e: &Self::Fail) -> String;

    /// A failed request (`what` was being done) as a take's error.
    fn refused(&self, what: &str, e: Self::Fail) -> Error;

    /// The slot changed between its creation and the first write of R.
    fn lost_while_taking(&self) -> Error;

    /// Remember the slot as this identity's last (`key`: `{prefix}/owner/{identity}`).
    async fn record_owner(&mut self, key: &str, slot: u32);

    /// Before a renewal's write: `Some(reason)` when the store is seen to have gone back in time.
    async fn rolled_back(&mut self) -> Option<String>;

    /// The store's fence as it is now (`None`: there is none).
    async fn read_fence(&mut self) -> std::result::Result<Option<Vec<u8>>, Self::Fail>;

    /// A renewal's write was answered (`None`) or failed (`Some`).
    fn wrote(&mut self, failed: Option<&Self::Fail>);

    /// The slot held.
    fn at(&self) -> &HeldSlot;
}

/// Take a free slot (see the module's notes): the slot's first R is durable when this returns.
/// `name` is the store's name for messages, `prefix` the checked key prefix.
// Modelled in verify/model/remote.pml: Holder, the two take steps (STORE=2 and STORE=3; the second
// reads the fence after the first write, R_ROLLBACK) (make model).
pub(crate) async fn take<S: Store>(
    mut store: S,
    prefix: &str,
    name: &str,
    common: &Common,
    ctx: &SlotContext,
) -> Result<Taken<S::Held>> {
    // Free slots whose mark has passed first (the slot this identity held before ahead of
    // the rest), then the nearest guard; poisoned ones last.
    let owner_key = format!("{prefix}/owner/{}", common.identity);
    let fence_key = fence::fence_key(prefix);
    let own = store.owner_slot(&owner_key).await;
    let Contents { taken, marks } = store.contents().await?;
    let window_end = ctx.window_end_ms();
    let now = ctx.now_ms()?;
    let order = free_slot_order(common, &taken, &marks, own, now, window_end);

    for slot in order {
        let Some(claim) = ctx.claim(slot) else {
            continue;
        };
        // The clock before the create: the first limit is one reserve past it (R_CAP).
        let checked = ctx.now_ms()?;
        let k = keys(prefix, slot);
        let Some(created) = store.create_slot(&k).await? else {
            continue;
        };
        let fence_seen = created.fence.as_ref().ok().cloned().flatten();
        // The fence, read after the slot is ours: a number, and not past the window; else the
        // slot goes back and the take is refused (an operator's fence is never ignored).
        let fence_ms = created.fence.and_then(|value| match value {
            None => Ok(None),
            Some(v) => fence::parse(&v)
                .ok_or_else(|| fence::unreadable(name, &fence_key))
                .and_then(|f| fence::check_window(name, Some(f), window_end).map(|()| Some(f))),
        });
        let fence_ms = match fence_ms {
            Ok(f) => f,
            Err(e) => {
                store.give_back(&k).await;
                store.abandon().await;
                return Err(e);
            }
        };
        let now = ctx.now_ms()?;
        let stored = created
            .mark
            .as_ref()
            .and_then(|m| record::parse_mark(&m.value));
        let Some(own_guard) = guard_of(stored, now, common.reserve_ms, window_end) else {
            // A mark past the layout's window: give the slot back, try the next.
            store.give_back(&k).await;
            continue;
        };
        let guard = fence::floor(own_guard, fence_ms);
        // The node id's mark on this host: a static holder (or an earlier lease) may have
        // issued up to it. A mark held elsewhere, or far ahead (another epoch's, which this
        // one's IDs would meet in years), leaves the slot to the next.
        let mark = match host::take_mark(ctx, slot, now) {
            LeaseMarkTake::Busy => {
                store.give_back(&k).await;
                continue;
            }
            LeaseMarkTake::Unavailable => None,
            LeaseMarkTake::Taken(m) => Some(m),
        };
        let host = mark.as_ref().and_then(|m| m.floor);
        if host.is_some_and(|h| h - now > common.max_guard_wait_ms) {
            store.give_back(&k).await;
            continue;
        }
        let guard = host.map_or(guard, |h| guard.max(h));
        let r = guard.max(now).saturating_add(common.reserve_ms);
        let note = fence::note(
            super::super::guard_note(slot, guard, now, common.max_guard_wait_ms),
            own_guard,
            fence_ms,
        );
        let version = created.mark.map(|m| m.version);
        let at = HeldSlot {
            slot,
            keys: k,
            reserve_ms: common.reserve_ms,
            fence: fence_seen,
        };
        let mut held = store.hold(at, version);
        match held.write_hwm(r).await {
            Ok(true) => {}
            Ok(false) => return Err(held.lost_while_taking()),
            Err(e) => return Err(held.refused("cannot write the high-water mark", e)),
        }
        // The fence again, after the first write: one that moved since the create's read means
        // the store was restored (and fenced) while this take was under way, and the guard read
        // before the restore is void. Found by the lease model (no-rollback-detection).
        match held.read_fence().await {
            Ok(fence) if fence == held.at().fence => {}
            Ok(fence) => {
                return Err(Error::LeaseStore {
                    reason: format!(
                        "{}; this take was under way: make the generator again",
                        fence_raised(held.at(), fence.as_deref())
                    ),
                })
            }
            Err(e) => return Err(held.refused("cannot read the fence", e)),
        }
        held.record_owner(&owner_key, slot).await;
        // The host's copy of R, durable before the first ID (without it, the lease runs as one
        // that keeps no mark: the store's R still guards its own successors).
        let mark = mark
            .filter(|m| {
                crate::window::MarkMirror::mirror(&*m.file, r.min(checked + common.reserve_ms))
                    .is_ok()
            })
            .map(|m| m.file as std::sync::Arc<dyn crate::window::MarkMirror>);
        return Ok(Taken {
            held,
            claim,
            guard_ms: guard,
            r_ms: r,
            checked_ms: checked,
            reserve_ms: common.reserve_ms,
            guard_note: note,
            mark,
            spent_ms: ctx.spent(now),
        });
    }
    store.abandon().await;
    Err(Error::NoFreeSlot {
        dir_or_prefix: name.to_string(),
        slots: common.slots,
    })
}

/// One renewal: R = max(now + reserve, R), written only while the store's fence is the one the
/// take read and the slot is still ours, then published. `Some(reason)`: the lease is lost. A failed write leaves R where it was (the
/// generator issues up to it, then refuses until a renewal succeeds).
// Modelled in verify/model/remote.pml: Holder, the renewal step (write_hwm, then publish) (make model).
pub(crate) async fn renew_tick<H: Holder>(h: &mut H, ctx: &SlotContext) -> Option<String> {
    let state = &ctx.state;
    let now = match ctx.now_ms() {
        Ok(n) => n,
        Err(e) => {
            state.failed(e.to_string());
            return None;
        }
    };
    let r = (now + h.at().reserve_ms).max(state.r_ms());
    if let Some(reason) = h.rolled_back().await {
        state.rolled_back();
        return Some(reason);
    }
    // The fence, read before the write: one raised since the take means the store was restored
    // from a backup. The restore may have lost this holder's session ending and another holder's
    // use of the slot, which no version or revision of ours can show when the restore kept all of
    // our writes; and a ZooKeeper slot whose znode the restore took away is checked by version
    // only, so our write could land on a successor's mark. Either way: no write, the slot goes.
    match h.read_fence().await {
        Ok(fence) if fence == h.at().fence => {}
        Ok(fence) => {
            state.rolled_back();
            return Some(fence_raised(h.at(), fence.as_deref()));
        }
        Err(e) => {
            let what = format!("cannot read the fence {}", h.at().keys.fence);
            state.failed(h.note(&what, &e));
            h.wrote(Some(&e));
            return None;
        }
    }
    match h.write_hwm(r).await {
        Ok(true) => {
            // `now` was read before the fence read and the compare: the cap's reading (R_CAP).
            state.publish(r, now);
            state.renewed();
            h.wrote(None);
            None
        }
        Ok(false) => {
            let lost = h.lost();
            if lost.rolled_back {
                state.rolled_back();
            }
            Some(lost.reason)
        }
        Err(e) => {
            let what = format!("cannot write the high-water mark {}", h.at().keys.hwm);
            state.failed(h.note(&what, &e));
            h.wrote(Some(&e));
            None
        }
    }
}

/// Why a holder whose store's fence moved since its take lets the slot go.
fn fence_raised(at: &HeldSlot, now: Option<&[u8]>) -> String {
    let shown = |v: Option<&[u8]>| {
        v.map_or_else(
            || "none".to_string(),
            |v| String::from_utf8_lossy(v).into_owned(),
        )
    };
    format!(
        "the store went back in time: its fence {} is {} and was {} when this holder took slot {} (`polyflake lease fence`, after a restore from an older backup)",
        at.keys.fence,
        shown(now),
        shown(at.fence.as_deref()),
        at.slot
    )
}

/// A clean close's final write: leave R at what the generator really issued.
// Modelled in verify/model/remote.pml: Holder, the clean close step (final R) (make model).
pub(crate) async fn finish<H: Holder>(h: &mut H, stop: &Stop) {
    if let Some(r) = stop.final_r_ms() {
        let _ = h.write_hwm(r).await;
    }
}

/// Start the session of a slot just taken: its renewal thread runs `renew` on `rt` (the
/// current-thread runtime the take ran on) until the generator lets go.
pub(crate) fn start<H, F, Fut>(
    rt: tokio::runtime::Runtime,
    kind: &str,
    name: &str,
    generation: u64,
    taken: Taken<H>,
    ctx: SlotContext,
    renew: F,
) -> Result<Session>
where
    H: Holder + Send + 'static,
    F: FnOnce(H, SlotContext, Arc<Stop>) -> Fut + Send + 'static,
    Fut: Future<Output = ()>,
{
    let slot = taken.held.at().slot;
    let plan = Plan {
        slot,
        generation,
        thread_name: format!("polyflake-{kind}-{slot}"),
        file: None,
    };
    Session::start(plan, taken, ctx, move |held, ctx, stop| {
        rt.block_on(renew(held, ctx, stop))
    })
    .map_err(|e| store_error(name, "cannot start the lease renewal thread", e))
}
