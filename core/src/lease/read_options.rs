//! The lease options as the lease kinds read them: the one place that names their fields, so a
//! change of the options' shape (see `options.rs`) is a change here only.

use super::options::{
    Common, EtcdLeaseOptions, FileLeaseOptions, LeaseCommon, ZooKeeperLeaseOptions,
};
use crate::error::Result;
use crate::layout::Layout;

/// How long a slot's guard may be assumed, and what counts as poisoned (as given, for the
/// operator's report of a store).
#[derive(Debug, Clone, Copy)]
#[cfg_attr(not(any(feature = "etcd", feature = "zookeeper")), allow(dead_code))]
pub(crate) struct Guards {
    pub reserve_ms: u64,
    pub max_guard_wait_ms: u64,
}

/// What every lease kind's options share.
pub(crate) trait LeaseOptions {
    /// The settings every lease kind shares, as given.
    fn lease_common(&self) -> &LeaseCommon;

    /// The slots, identity, reserve and guard wait, checked against the layout.
    fn common(&self, layout: Layout) -> Result<Common> {
        self.lease_common().check(layout)
    }

    /// The reserve and the longest guard wait, as given.
    #[cfg_attr(not(any(feature = "etcd", feature = "zookeeper")), allow(dead_code))]
    fn guards(&self) -> Guards {
        let common = self.lease_common();
        Guards {
            reserve_ms: common.reserve_ms,
            max_guard_wait_ms: common.max_guard_wait_ms,
        }
    }
}

/// What the remote stores' options share.
#[cfg_attr(not(any(feature = "etcd", feature = "zookeeper")), allow(dead_code))]
pub(crate) struct Remote<'a> {
    /// etcd's endpoints, or ZooKeeper's ensemble.
    pub servers: &'a [String],
    pub prefix: &'a str,
    pub connect_timeout_ms: u64,
}

impl Remote<'_> {
    /// The connect timeout, which is also every request's.
    #[cfg_attr(not(any(feature = "etcd", feature = "zookeeper")), allow(dead_code))]
    pub(crate) fn timeout(&self) -> std::time::Duration {
        std::time::Duration::from_millis(self.connect_timeout_ms)
    }
}

/// The options of a remote store.
#[cfg_attr(not(any(feature = "etcd", feature = "zookeeper")), allow(dead_code))]
pub(crate) trait RemoteOptions: LeaseOptions {
    /// The servers, prefix and connect timeout.
    fn remote(&self) -> Remote<'_>;
}

impl LeaseOptions for FileLeaseOptions {
    fn lease_common(&self) -> &LeaseCommon {
        &self.common
    }
}

impl LeaseOptions for EtcdLeaseOptions {
    fn lease_common(&self) -> &LeaseCommon {
        &self.common
    }
}

impl LeaseOptions for ZooKeeperLeaseOptions {
    fn lease_common(&self) -> &LeaseCommon {
        &self.common
    }
}

impl RemoteOptions for EtcdLeaseOptions {
    fn remote(&self) -> Remote<'_> {
        Remote {
            servers: &self.endpoints,
            prefix: &self.store.prefix,
            connect_timeout_ms: self.store.connect_timeout_ms,
        }
    }
}

impl RemoteOptions for ZooKeeperLeaseOptions {
    fn remote(&self) -> Remote<'_> {
        Remote {
            servers: &self.ensemble,
            prefix: &self.store.prefix,
            connect_timeout_ms: self.store.connect_timeout_ms,
        }
    }
}
