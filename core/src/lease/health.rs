//! What a lease reports in health: the kind of store, where the lease stands, and its figures.

/// Which kind of store a lease lives in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LeaseKind {
    /// A directory of slot files.
    File,
    /// An etcd v3 cluster.
    Etcd,
    /// A ZooKeeper ensemble.
    ZooKeeper,
    /// The host's mark of a fixed node id (static, environment, hostname, IPv4): its restart
    /// guard, kept in the state directory as a lease keeps its R.
    Host,
}

impl LeaseKind {
    /// `"file"`, `"etcd"`, `"zookeeper"` or `"host"`.
    pub const fn name(self) -> &'static str {
        match self {
            LeaseKind::File => "file",
            LeaseKind::Etcd => "etcd",
            LeaseKind::ZooKeeper => "zookeeper",
            LeaseKind::Host => "host",
        }
    }

    /// Every kind, in a fixed order.
    pub const ALL: [LeaseKind; 4] = [
        LeaseKind::File,
        LeaseKind::Etcd,
        LeaseKind::ZooKeeper,
        LeaseKind::Host,
    ];
}

/// The lease part of [`crate::Health`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeaseHealth {
    /// File, etcd, ZooKeeper, or the host's mark of a fixed node id.
    pub kind: LeaseKind,
    /// The directory, or the endpoints (ensemble) and key (znode) prefix, or the mark's path.
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
    /// Lost leases replaced by a new slot in place (a lease that heals,
    /// [`crate::LeaseCommon::heal`]).
    pub heals: u64,
    /// What the last heal did, in words ("lease lost on node 3 (lease_lost: ...); took node 1
    /// from a new lease"); empty if none.
    pub last_heal: String,
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
