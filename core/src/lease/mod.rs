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
//! Rooms: `session.rs` (a slot taken, the session renewing it, the generator's runtime),
//! `health.rs`, `order.rs` (which slot to try first, and the guard a mark implies), `file.rs`,
//! `host.rs` (a fixed node id's mark on the host: its restart guard, kept like a lease's R),
//! and the remote stores: `remote.rs` (the take and renewal they share, over `remote/store.rs`'s
//! interface), `etcd.rs`, `zookeeper.rs`.

mod dir;
mod fence;
mod file;
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod fuzzing;
mod health;
pub(crate) mod host;
mod inspect;
mod node_source;
mod options;
mod order;
mod read_options;
mod record;
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
pub use host::{
    RestartGuard, RestartGuardOptions, DEFAULT_MAX_RESTART_WAIT_MS, RESTART_GUARD_ENV,
    STATE_DIR_ENV,
};
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
