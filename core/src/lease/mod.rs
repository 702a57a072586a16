//! Node identity: the node-id sources, and the three lease kinds (file, etcd, ZooKeeper) with
//! the restart guard.
//!
//! A lease holds a slot (= the node id) and a high-water mark R (Unix ms) in its store. The
//! generator never issues an ID whose timestamp exceeds R, and a new holder issues nothing until
//! its clock passes the R it found (or, when it found no complete record, a full reserve: a
//! holder it cannot see may have reached that far). A background thread keeps R ahead of the
//! clock (`R = now + reserve`, every `reserve / 5`), checking first that the slot is still
//! ours, writing it durably BEFORE publishing it to the generator. The generator's hot path
//! only compares with two atomics of its issuing window (`crate::window::Window`: `floor` and
//! `limit`): no I/O, no mutex.
//!
//! Rooms: `session.rs` (a slot taken, the session renewing it, for all three kinds),
//! `runtime.rs` (what the generator keeps to take a slot again and let it go), `heal.rs` (a
//! lost lease replaced by a new slot in place, when the lease heals), `health.rs`,
//! `order.rs` (which slot to try first, and the guard a mark implies), `record.rs` (what the
//! stores hold), `file.rs` and `dir.rs` (file leases), `lockfile.rs` (a file held by `flock` in
//! a lease directory: a slot file, a host mark), `fence.rs`, `host.rs` (a fixed node id's mark on
//! the host: its restart guard, kept like a lease's R; its settings are `restart_guard.rs`),
//! `read_options.rs` (the one place that reads option fields), and the remote stores: `remote.rs`
//! (the take and renewal they share, `remote/protocol.rs`, over two small traits: `Store` while
//! taking, `Holder` once held), `etcd.rs`, `zookeeper.rs`. The issuing window itself is
//! `crate::window`.
//!
//! ## Decisions
//!
//! - **R is written before it is used.** The renewal thread (every reserve / 5, at least 2 ms)
//!   computes `R = max(now + reserve, R)` with the generator's own clock (so a `ManualClock`
//!   test drives the guard too), writes it durably (file: one 512-byte `pwrite` and
//!   `fdatasync`; etcd and ZooKeeper: a write that compares the slot and the mark with ours), and
//!   only then publishes it to the window's `limit`. R never decreases while held. A failed write
//!   counts in `lease_failures` and leaves `limit` where it was: the generator issues up to it,
//!   then refuses with `LeaseExpired`, and recovers by itself when a later write succeeds.
//! - **Taking a slot.** The new holder's R = `max(now, guard) + reserve`, written before the
//!   first ID, and the window's floor is the guard, so nothing is issued until the clock passes
//!   it. The guard is the previous holder's R when its record is complete; otherwise (a new
//!   slot, an emptied or damaged record, a missing mark) a full reserve past the later of the
//!   record's time and now: a holder nobody can see any more may have reached that far, and no
//!   further, since its limit is capped one reserve past its last check (`crate::window`). So a
//!   slot's first use waits one reserve (`wait_ready` waits it out; the CLI does). Use one
//!   reserve for every holder of a store: a missing record is guarded for the taker's reserve.
//! - **The restart guard's arithmetic.** The guard G is the LAST millisecond a predecessor may
//!   have issued, inclusive. The successor issues from G + 1, so the wait still ahead at `now` is
//!   `G + 1 - now` ms (health's `guard_remaining_ms`, 0 once `now > G`). Right after a NEW slot
//!   is taken G = now + reserve, so the wait is at most **reserve + 1 ms**, not reserve: a test
//!   may bound it by reserve + 1 and must not bound it by reserve (that bound failed 4 runs in 5
//!   on a fresh machine, where the first reading and the take fall in one millisecond). The
//!   core, health, the C ABI and every binding's tests use this one rule; on a test clock the
//!   figure is exact.
//! - **A slot whose record is gone has no memory (a limit).** Its guard is one reserve past the
//!   TAKER's clock: if the host clock stepped back between the lost holder's last IDs and the
//!   take (or the holders of one store read clocks that differ), the taker can reach a
//!   millisecond the lost holder used (`verify/model/trails/finding-deleted-file-clock-back.txt`).
//!   Nothing in the store remembers how far a deleted slot was used, so no rule of the taker can
//!   close this: the slot is then as safe as a static node id restarted after the same step.
//!   `make model` keeps the finding as a check that the limit is exactly this (it must keep
//!   failing), rather than widen every new slot's wait by an assumed bound on clock steps.
//! - **Closing lowers R to what was really issued.** A clean close stops the renewal and writes
//!   `R = max(last issued ms, the guard it started behind)` (never above the current R) before
//!   freeing the slot, so a successor after a clean shutdown waits only past the last real ID.
//!   After a crash the last renewed R stays (a successor waits up to one reserve).
//! - **The options nest what the kinds share** (`options.rs`: `LeaseCommon`, `RemoteStore`,
//!   `StoreCredentials`), and the C ABI nests the same way, so each binding has one function per
//!   nested struct and no field-copying macro.

mod dir;
mod fence;
mod file;
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod fuzzing;
mod heal;
mod health;
pub(crate) mod host;
mod inspect;
mod lockfile;
mod node_source;
mod options;
mod order;
mod read_options;
mod record;
mod restart_guard;
mod runtime;
mod session;
mod store;

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
pub use health::{LeaseHealth, LeaseKind, LeasePhase};
pub use inspect::{inspect_file_lease, SlotReport, StoreReport};
pub use node_source::{hostname_ordinal, NodeSource, NodeSourceKind};
pub use options::{
    default_lease_dir, EtcdLeaseOptions, FileLeaseOptions, LeaseCommon, RemoteStore,
    StoreCredentials, ZooKeeperLeaseOptions, DEFAULT_ETCD_PREFIX, DEFAULT_ETCD_TIMEOUT_MS,
    DEFAULT_ETCD_TTL_S, DEFAULT_MAX_GUARD_WAIT_MS, DEFAULT_RESERVE_MS, DEFAULT_ZOOKEEPER_PREFIX,
    DEFAULT_ZOOKEEPER_SESSION_TIMEOUT_MS, DEFAULT_ZOOKEEPER_TIMEOUT_MS, LEASE_CREDENTIALS,
};
pub use record::IdSpace;
pub use restart_guard::{
    RestartGuard, RestartGuardOptions, DEFAULT_MAX_RESTART_WAIT_MS, RESTART_GUARD_ENV,
    STATE_DIR_ENV,
};

pub(crate) use order::{guard_note, slot_order};

/// The issuing window, by the name its users knew it under.
pub(crate) use crate::window::Window as LeaseState;
pub(crate) use runtime::{LeaseRuntime, Release};
pub(crate) use session::SlotContext;

#[cfg(not(all(feature = "etcd", feature = "zookeeper", not(loom))))]
use crate::error::Error;
use crate::error::Result;

/// Read an etcd lease store (every key under the prefix) without taking anything: each slot's
/// holder and mark, and the recorded ID space (`options.common.reserve_ms` is what a missing or
/// damaged mark is assumed to hide, `options.common.max_guard_wait_ms` what counts as poisoned).
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
