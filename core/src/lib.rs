//! # polyflake
//!
//! Unique, time-sortable 64-bit IDs, minted in-process without asking anyone: the one core that
//! polyflake's C, Python and Node bindings share, so the rules that prevent duplicate IDs (the
//! clock-rewind guard, sequence exhaustion, one node id per generator, fork safety) exist once.
//!
//! An ID is `0 | timestamp | node | sequence` (41/10/12 bits by default, epoch
//! 2024-01-01T00:00:00Z): positive as a signed BIGINT, and sorted by time first.
//!
//! ```
//! use polyflake::{Generator, ManualClock, Mode};
//!
//! // On the system clock:
//! let g = Generator::strict(37).unwrap();
//! let id = g.next_id().unwrap();
//! assert_eq!(g.decode(id).unwrap().node_id, 37);
//!
//! // On a clock a test controls, reproducing a known ID (the literal every binding's tests check):
//! let clock = ManualClock::new(1_737_747_358_021);
//! let g = Generator::builder(37).clock(clock.clone()).build().unwrap();
//! assert_eq!(g.next_id().unwrap(), 141264821508263936);
//!
//! // Monotonic mode never waits: a rewind is absorbed by borrowing ahead.
//! let m = Generator::builder(9).mode(Mode::Monotonic).clock(clock.clone()).build().unwrap();
//! let a = m.next_id().unwrap();
//! clock.advance(-600);
//! assert!(m.next_id().unwrap() > a);
//! ```
//!
//! ## Two modes
//! - [`Mode::Strict`] (the bindings' `Snowflake`): an issued timestamp never exceeds the wall
//!   clock. A rewind up to `max_wait_ms` (default 5.0) is waited out under one monotonic
//!   deadline for the whole call; a larger one is refused with [`Error::ClockMovedBackwards`].
//!   A spent sequence sleeps to the next millisecond (no spin), for at most
//!   `max(max_wait_ms, 1)` ms, so a frozen clock issues exactly `2^sequence_bits` IDs and then
//!   refuses.
//! - [`Mode::Monotonic`] (`MonotonicSnowflake`): never waits and never duplicates; the wall
//!   clock only floors a logical clock, which borrows from the next millisecond. A decoded
//!   timestamp is therefore an upper bound on the creation time, not the time itself.
//!
//! ## Node ids
//! A node id is static ([`Generator::builder`]) or comes from a [`NodeSource`]
//! ([`Generator::builder_from`]): an environment variable, a StatefulSet hostname's ordinal, the
//! low bits of an IPv4 address in a stated subnet, or a lease (a directory of slot files, an
//! etcd cluster, or a ZooKeeper ensemble) with a restart guard: a new holder of a slot issues nothing until its clock
//! passes the high-water mark its predecessor could have issued up to.
//!
//! ## Features
//! - `etcd` (default): [`NodeSource::Etcd`] through the `etcd-client` crate (building it needs
//!   `protoc`). Without it, an etcd source is refused with [`Error::InvalidNodeSource`].
//! - `zookeeper` (default): [`NodeSource::ZooKeeper`] through the `zookeeper-client` crate.
//!   Without it, a ZooKeeper source is refused with [`Error::InvalidNodeSource`].
//!
//! Under `--cfg loom` the state word uses loom's atomics so the compare-and-swap step can be
//! model-checked (`verify/loom/tests/loom.rs`, `make loom`); etcd and ZooKeeper are left out there.
//!
//! ## What every binding shares
//! - **What the caller wrote reaches the core as written.** A binding never clamps a setting into
//!   range, so every binding refuses with the core's one message; only a value the binding cannot
//!   read or hand over is refused by the binding itself, as the core's kind would.
//! - **The core gives each shape once, and the bindings map it**: one [`Settings`] value, the
//!   lease options nested as the kinds share them, one [`Issuer`] trait over the three generator
//!   kinds (which the CLI, Node and Python issue through), [`Health::fields`] and
//!   [`ErrorKind::ALL`] to walk. A binding's modules take the core's names (`timeid`, `error`,
//!   `clock`, `interrupt`, `issue`).

#![deny(missing_docs)]

mod clock;
mod clocksync;
mod error;
mod fork;
mod forklock;
mod forward;
mod generator;
mod interrupt;
mod issue;
mod layout;
mod lease;
mod metrics;
mod random;
mod registry;
mod settings;
mod sync;
mod timeid;
mod window;

pub use clock::{
    Clock, ClockError, ClockSource, ManualClock, ScriptedClock, SystemClock, MAX_COARSE_TICK_NS,
};
pub use clocksync::{clock_sync, ClockSync, ClockSyncState};
pub use error::{Error, ErrorCategory, ErrorKind, Result, Value};
pub use generator::{
    batch_buffer, batch_len, decode, Builder, Generator, Health, HealthStatus, MAX_BATCH,
};
pub use interrupt::{interruptible, SLICE as INTERRUPT_SLICE};
pub use issue::Issuer;
pub use layout::{
    check_id, format_id, id_from_i128, parse_id, unix_ms_time, Decoded, Layout, DEFAULT_EPOCH_MS,
    MAX_ID, MAX_NODE_OR_SEQUENCE_BITS,
};
/// The lease stores' record parsers, for the fuzz targets only (feature `fuzzing`).
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub use lease::fuzzing as lease_records;
pub use lease::{
    default_lease_dir, fence_etcd_lease, fence_file_lease, fence_zookeeper_lease, hostname_ordinal,
    inspect_etcd_lease, inspect_file_lease, inspect_zookeeper_lease, EtcdLeaseOptions, FenceReport,
    FileLeaseOptions, IdSpace, LeaseCommon, LeaseHealth, LeaseKind, LeasePhase, NodeSource,
    NodeSourceKind, RemoteStore, SlotReport, StoreCredentials, StoreReport, ZooKeeperLeaseOptions,
    DEFAULT_ETCD_PREFIX, DEFAULT_ETCD_TIMEOUT_MS, DEFAULT_ETCD_TTL_S, DEFAULT_FENCE_SKEW_MS,
    DEFAULT_MAX_GUARD_WAIT_MS, DEFAULT_RESERVE_MS, DEFAULT_ZOOKEEPER_PREFIX,
    DEFAULT_ZOOKEEPER_SESSION_TIMEOUT_MS, DEFAULT_ZOOKEEPER_TIMEOUT_MS, LEASE_CREDENTIALS,
};
pub use lease::{
    RestartGuard, RestartGuardOptions, DEFAULT_MAX_RESTART_WAIT_MS, RESTART_GUARD_ENV,
    STATE_DIR_ENV,
};
pub use registry::{host_scope, HOST_SCOPE_ENV, MAX_SCOPE_LEN};

pub use metrics::{health_samples, Metric, MetricKind, Sample, HEALTH_METRICS};
pub use settings::{
    Mode, Settings, DEFAULT_FORWARD_CONFIRM_MS, DEFAULT_MAX_FORWARD_STEP_MS, DEFAULT_MAX_LEAD_MS,
    DEFAULT_MAX_WAIT_MS, DEFAULT_MODE, MAX_WAIT_LIMIT_MS,
};
pub use timeid::{
    format_ulid, format_uuid, parse_ulid, parse_uuid, ulid_timestamp_ms, uuid7_timestamp_ms,
    FixedFormat, TimeFormat, TimeIdBuilder, TimeIdFormat, TimeIdGenerator, Ulid, UlidGenerator,
    Uuid7, Uuid7Generator,
};

/// The version of this crate (what the bindings report as their core version).
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// The README's Rust snippets, compiled and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
pub struct ReadmeDoctests;

/// The Rust guide's snippets (`docs/rust.md`), compiled and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../../docs/rust.md")]
pub struct RustGuideDoctests;

/// The node-id guide's snippets (`docs/node-ids.md`), compiled and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../../docs/node-ids.md")]
pub struct NodeIdGuideDoctests;
