//! Health snapshots: the core's `Health` flattened into one fixed C struct, and the names
//! of statuses, sources, lease kinds and phases, clock sources and the kernel's clock states
//! from the core's own lists.

use crate::boundary::{arg, boundary_value, fill_char_array, write_out};
use crate::error::{polyflake_result, static_name, NameTable};
use crate::generator::{polyflake_generator, Handle};
use polyflake_core::{
    ClockSource, ClockSync, ClockSyncState, Health, HealthStatus, LeaseHealth, LeaseKind,
    LeasePhase, Mode, NodeSourceKind,
};
use std::ffi::c_char;

/// Why a generator is or is not healthy (`polyflake_health_snapshot.status`), in the core's
/// order; named by `polyflake_health_status_name`.
#[repr(u32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum polyflake_health_status {
    /// Issuing normally.
    Ok = 0,
    /// Strict mode: the wall clock is behind the last issued ms (calls wait, or are refused).
    ClockBehind = 1,
    /// The wall clock is before the epoch or past the layout's window.
    ClockOutsideWindow = 2,
    /// An injected clock failed to give a reading.
    ClockFailed = 3,
    /// Strict mode: a call gave up on a spent millisecond the clock has not left since.
    ClockStuck = 4,
    /// Monotonic mode: the next ID would run further ahead of the wall clock than max_lead_ms.
    LeadTooLarge = 5,
    /// This is a forked child and the generator was made in the parent.
    UsedAfterFork = 6,
    /// A lease's restart guard, or a fixed node id's (its mark on this host), waits until the
    /// clock passes what the previous holder may have issued.
    RestartGuard = 7,
    /// Lease: the high-water mark was reached without a renewal (store unreachable).
    LeaseExpired = 8,
    /// Lease: the lease was lost; the generator has stopped for good (or heals: `heal`).
    LeaseLost = 9,
    /// Strict mode: the wall clock stepped ahead past max_forward_step_ms (`clock_ahead_ms`).
    ClockAhead = 10,
    /// The generator was closed.
    Closed = 11,
    /// Lease: the store went back in time (restored from an older backup); the lease is lost.
    StoreRolledBack = 12,
    /// The kernel says the system clock is not synchronized, or its maximum error exceeds
    /// max_clock_error_ms: calls are refused (POLYFLAKE_RESULT_CLOCK_UNSYNCHRONIZED) until it
    /// says otherwise.
    ClockUnsynchronized = 13,
}

/// Where a generator's node id came from (`polyflake_health_snapshot.source`), in the core's
/// order; named by `polyflake_node_source_name`.
#[repr(u32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum polyflake_node_source {
    /// `polyflake_config.node_id` (`polyflake_generator_new`).
    Static = 0,
    /// An environment variable (`polyflake_generator_new_from_env`).
    Env = 1,
    /// A hostname's ordinal (`polyflake_generator_new_from_hostname`).
    Hostname = 2,
    /// An IPv4 address in a stated subnet (`polyflake_generator_new_from_ipv4`).
    Ipv4 = 3,
    /// A slot of a file lease (`polyflake_generator_new_file_lease`).
    FileLease = 4,
    /// A slot of an etcd lease (`polyflake_generator_new_etcd`).
    Etcd = 5,
    /// A slot of a ZooKeeper lease (`polyflake_generator_new_zookeeper`).
    Zookeeper = 6,
}

/// Which store a generator's lease lives in (`polyflake_health_snapshot.lease_kind`); named by
/// `polyflake_lease_kind_name`.
#[repr(u32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum polyflake_lease_kind {
    /// The node id is not leased; every other `lease_` field of the snapshot is zero or empty.
    None = 0,
    /// A directory of slot files.
    File = 1,
    /// An etcd v3 cluster.
    Etcd = 2,
    /// A ZooKeeper ensemble.
    Zookeeper = 3,
    /// Not a lease: the mark of a fixed node id (static, env, hostname, IPv4) on this host, its
    /// restart guard, kept in the state directory as a lease keeps its R (`lease_store` is the
    /// mark's path).
    Host = 4,
}

/// What the kernel says of the system clock (`polyflake_health_snapshot.clock_sync_state`,
/// from `adjtimex`), in the core's order; named by `polyflake_clock_sync_state_name`.
#[repr(u32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum polyflake_clock_sync_state {
    /// Synchronized, no leap second due.
    Ok = 0,
    /// A leap second will be inserted at the end of the UTC day.
    InsertLeap = 1,
    /// A leap second will be deleted at the end of the UTC day.
    DeleteLeap = 2,
    /// A leap second is being inserted now.
    LeapInProgress = 3,
    /// A leap second has just happened.
    LeapDone = 4,
    /// The clock is not synchronized (no time daemon disciplines it).
    Unsynchronized = 5,
    /// `adjtimex` could not be called (a sandbox without it).
    Unavailable = 6,
}

/// Where a lease stands (`polyflake_health_snapshot.lease_phase`), in the core's order; named by
/// `polyflake_lease_phase_name`.
#[repr(u32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum polyflake_lease_phase {
    /// Held and issuing (also the value when there is no lease).
    Held = 0,
    /// The restart guard waits.
    RestartGuard = 1,
    /// R was reached without a renewal.
    Expired = 2,
    /// Lost: for good, or until it heals (`heal`).
    Lost = 3,
}

/// The names of `polyflake_lease_kind`'s codes: "none", then the core's names in its order.
fn lease_kind_names() -> Vec<&'static str> {
    std::iter::once("none")
        .chain(LeaseKind::ALL.map(LeaseKind::name))
        .collect()
}

/// Bytes of each text field of `polyflake_health_snapshot`, NUL included.
pub const POLYFLAKE_HEALTH_TEXT_LEN: usize = 256;

/// A snapshot of a generator's state and counters (`polyflake_health`; the fields are the core's
/// `Health`, flattened). Plain data: copy it, keep it, no free. Text fields are NUL-terminated
/// UTF-8, cut at a character boundary if longer. The struct grows at its end between versions
/// (the library writes all of it): a program compiled against an older polyflake.h must be
/// compiled again.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct polyflake_health_snapshot {
    /// True when the generator can issue now.
    pub ok: bool,
    /// Why it is or is not healthy: a `polyflake_health_status` value.
    pub status: u32,
    /// A human-readable reason; empty when ok.
    pub reason: [c_char; POLYFLAKE_HEALTH_TEXT_LEN],
    /// The generator's node id.
    pub node_id: u32,
    /// Where the node id came from: a `polyflake_node_source` value.
    pub source: u32,
    /// The generator's mode: a `polyflake_mode` value.
    pub mode: u32,
    /// True when an ID was issued, so `last_issued_ms` means something.
    pub has_last_issued: bool,
    /// The millisecond (Unix) of the last issued ID (0 when none was issued).
    pub last_issued_ms: i64,
    /// The wall clock when the snapshot was taken, Unix ms (0 if the clock failed).
    pub wall_ms: i64,
    /// How far the last issued millisecond is ahead of the wall clock (0 when it is not).
    pub lead_ms: i64,
    /// IDs issued so far.
    pub ids_issued: u64,
    /// Calls that waited out a small rewind and then succeeded.
    pub rewinds_waited: u64,
    /// Calls refused because the clock was behind (or stuck) past the wait budget.
    pub rewinds_refused: u64,
    /// Times a strict call found the millisecond's sequence spent and had to wait.
    pub sequence_exhaustions: u64,
    /// Sleeps taken while waiting (strict mode never spins).
    pub wait_sleeps: u64,
    /// Milliseconds a monotonic generator moved into ahead of the wall clock.
    pub ms_borrowed: u64,
    /// Monotonic calls refused by max_lead_ms.
    pub lead_refused: u64,
    /// Lease renewals (0 without a lease).
    pub lease_renewals: u64,
    /// Failed lease renewals (0 without a lease).
    pub lease_failures: u64,
    /// How far the wall clock reads ahead of what elapsed time vouches for, while that is more
    /// than max_forward_step_ms and not yet believed (0 otherwise).
    pub clock_ahead_ms: i64,
    /// Strict calls refused because the clock had stepped ahead.
    pub forward_refused: u64,
    /// The clock reading in use: a `polyflake_clock_source` value.
    pub clock_source: u32,
    /// The resolution of the system clock in use (clock_getres), in ns; 0 for an injected clock.
    pub clock_tick_ns: u64,
    /// Why a requested coarse source is not in use; empty otherwise.
    pub clock_note: [c_char; POLYFLAKE_HEALTH_TEXT_LEN],
    /// The lease's store: a `polyflake_lease_kind` value (POLYFLAKE_LEASE_KIND_NONE: no lease;
    /// POLYFLAKE_LEASE_KIND_HOST: a fixed node id's mark on this host, its restart guard).
    pub lease_kind: u32,
    /// The directory, or the endpoints (ensemble) and key prefix, or the mark's path.
    pub lease_store: [c_char; POLYFLAKE_HEALTH_TEXT_LEN],
    /// The slot held, which is the node id.
    pub lease_slot: u32,
    /// The high-water mark R (Unix ms): no ID carries a later timestamp until the store extends it.
    pub lease_high_water_ms: i64,
    /// True when `lease_guard_until_ms` means something (the slot was taken behind a guard).
    pub lease_has_guard: bool,
    /// What the slot's previous holder may have reached: nothing is issued until the clock
    /// passes it.
    pub lease_guard_until_ms: i64,
    /// True while the restart guard waits (`polyflake_wait_ready` waits it out).
    pub lease_guard_waiting: bool,
    /// How long the restart guard still waits, in ms (0 when it does not).
    pub lease_guard_remaining_ms: u64,
    /// Why the guard is long (taken past max_guard_wait_ms, no other slot free); else empty.
    pub lease_guard_note: [c_char; POLYFLAKE_HEALTH_TEXT_LEN],
    /// True once the lease is lost (the generator has stopped for good, or heals: `heal`).
    pub lease_lost: bool,
    /// True while the next ID would pass R (the store has not extended it).
    pub lease_expired: bool,
    /// Where the lease stands: a `polyflake_lease_phase` value.
    pub lease_phase: u32,
    /// The last store error, or why the lease was lost; empty if none.
    pub lease_last_error: [c_char; POLYFLAKE_HEALTH_TEXT_LEN],
    /// Calls that waited for a fixed node id's restart guard (its previous holder on this host
    /// may have issued up to a time the clock had not reached).
    pub restart_waits: u64,
    /// Why a fixed node id on the system clock keeps no mark on this host (the state directory
    /// cannot be written, or POLYFLAKE_RESTART_GUARD_OFF): a successor after a clock stepped back
    /// could then repeat its IDs. Empty when it keeps one (`lease_kind` host), and for leases
    /// and injected clocks.
    pub restart_guard_note: [c_char; POLYFLAKE_HEALTH_TEXT_LEN],
    /// What the kernel said of the system clock when the snapshot was taken (`adjtimex`): a
    /// `polyflake_clock_sync_state` value.
    pub clock_sync_state: u32,
    /// True when a time daemon keeps the system clock synchronized.
    pub clock_sync_synchronized: bool,
    /// The kernel's maximum error of the clock, in microseconds (16,000,000 when
    /// unsynchronized; -1 when unavailable).
    pub clock_sync_max_error_us: i64,
    /// The kernel's estimated error of the clock, in microseconds (-1 when unavailable).
    pub clock_sync_est_error_us: i64,
}

/// The C code of a core enum value: its position in the core's list (`ALL`), as the C enums
/// number them.
fn code_in<T: PartialEq, const N: usize>(value: T, all: [T; N]) -> u32 {
    all.iter().position(|v| *v == value).unwrap_or(N) as u32
}

/// The snapshot of a core health (of any generator: Snowflake, UUIDv7 or ULID). The core
/// structs are taken apart field by field without `..`, so a field added to the core's `Health`,
/// `LeaseHealth` or `ClockSync` does not build here until the C struct has it.
pub(crate) fn snapshot_of(h: &Health) -> polyflake_health_snapshot {
    let Health {
        ok,
        status,
        reason,
        node_id,
        source,
        mode,
        last_issued_ms,
        wall_ms,
        lead_ms,
        ids_issued,
        rewinds_waited,
        rewinds_refused,
        sequence_exhaustions,
        wait_sleeps,
        ms_borrowed,
        lead_refused,
        lease_renewals,
        lease_failures,
        clock_ahead_ms,
        forward_refused,
        clock_source,
        clock_tick_ns,
        clock_note,
        restart_waits,
        restart_guard_note,
        clock_sync,
        lease,
    } = h;
    let ClockSync {
        state: sync_state,
        synchronized,
        max_error_us,
        est_error_us,
    } = clock_sync;
    let mut s = polyflake_health_snapshot {
        ok: *ok,
        status: code_in(*status, HealthStatus::ALL),
        reason: fill_char_array(reason),
        node_id: *node_id,
        source: code_in(*source, NodeSourceKind::ALL),
        mode: code_in(*mode, Mode::ALL),
        has_last_issued: last_issued_ms.is_some(),
        last_issued_ms: last_issued_ms.unwrap_or(0),
        wall_ms: *wall_ms,
        lead_ms: *lead_ms,
        ids_issued: *ids_issued,
        rewinds_waited: *rewinds_waited,
        rewinds_refused: *rewinds_refused,
        sequence_exhaustions: *sequence_exhaustions,
        wait_sleeps: *wait_sleeps,
        ms_borrowed: *ms_borrowed,
        lead_refused: *lead_refused,
        lease_renewals: *lease_renewals,
        lease_failures: *lease_failures,
        clock_ahead_ms: *clock_ahead_ms,
        forward_refused: *forward_refused,
        clock_source: code_in(*clock_source, ClockSource::ALL),
        clock_tick_ns: *clock_tick_ns,
        clock_note: fill_char_array(clock_note),
        // No lease: every lease field zero (kind "none", empty texts).
        lease_kind: 0,
        lease_store: [0; POLYFLAKE_HEALTH_TEXT_LEN],
        lease_slot: 0,
        lease_high_water_ms: 0,
        lease_has_guard: false,
        lease_guard_until_ms: 0,
        lease_guard_waiting: false,
        lease_guard_remaining_ms: 0,
        lease_guard_note: [0; POLYFLAKE_HEALTH_TEXT_LEN],
        lease_lost: false,
        lease_expired: false,
        lease_phase: 0,
        lease_last_error: [0; POLYFLAKE_HEALTH_TEXT_LEN],
        restart_waits: *restart_waits,
        restart_guard_note: fill_char_array(restart_guard_note),
        clock_sync_state: code_in(*sync_state, ClockSyncState::ALL),
        clock_sync_synchronized: *synchronized,
        clock_sync_max_error_us: *max_error_us,
        clock_sync_est_error_us: *est_error_us,
    };
    if let Some(l) = lease {
        let phase = l.phase();
        let LeaseHealth {
            kind,
            store,
            slot,
            high_water_ms,
            guard_until_ms,
            guard_waiting,
            guard_remaining_ms,
            guard_note,
            lost,
            expired,
            renewals,
            failures,
            last_error,
            // Rust only: not in Health::fields(), so not in the C snapshot.
            heals: _,
            last_heal: _,
        } = l;
        // Code 0 is "none": the core's kinds follow in their order.
        s.lease_kind = 1 + code_in(*kind, LeaseKind::ALL);
        s.lease_store = fill_char_array(store);
        s.lease_slot = *slot;
        s.lease_high_water_ms = *high_water_ms;
        s.lease_has_guard = guard_until_ms.is_some();
        s.lease_guard_until_ms = guard_until_ms.unwrap_or(0);
        s.lease_guard_waiting = *guard_waiting;
        s.lease_guard_remaining_ms = *guard_remaining_ms;
        s.lease_guard_note = fill_char_array(guard_note);
        s.lease_lost = *lost;
        s.lease_expired = *expired;
        s.lease_phase = code_in(phase, LeasePhase::ALL);
        // The lease's own counters, read after the generator's (as the snapshot always had).
        s.lease_renewals = *renewals;
        s.lease_failures = *failures;
        s.lease_last_error = fill_char_array(last_error);
    }
    s
}

/// Take a health snapshot of the generator (this reads its clock once) into `*out_health`.
#[no_mangle]
pub extern "C" fn polyflake_health(
    generator: *const polyflake_generator,
    out_health: *mut polyflake_health_snapshot,
) -> polyflake_result {
    health_of(generator, out_health)
}

/// The body of every `_health`.
pub(crate) fn health_of<G: Handle>(
    generator: *const G,
    out_health: *mut polyflake_health_snapshot,
) -> polyflake_result {
    write_out(out_health, || Ok(snapshot_of(&arg(generator)?.health())))
}

/// The `index`th of a core list's `names` as a static NUL-terminated string, or "unknown"
/// (each call site keeps its own table).
macro_rules! name_in {
    ($index:expr, $names:expr) => {{
        static TABLE: NameTable = NameTable::new();
        let unknown = c"unknown";
        let all = || $names.into_iter().collect();
        boundary_value(unknown.as_ptr(), || {
            static_name(&TABLE, all, $index as usize, unknown)
        })
    }};
}

/// The stable snake_case name of a health status ("ok", "clock_behind", "closed", ...) as a
/// static NUL-terminated string; an unknown number gives "unknown". Never NULL; do not free.
#[no_mangle]
pub extern "C" fn polyflake_health_status_name(status: u32) -> *const c_char {
    name_in!(status, HealthStatus::ALL.map(HealthStatus::name))
}

/// The name of a node source ("static", "env", "hostname", "ipv4", "file_lease", "etcd",
/// "zookeeper"); as `polyflake_health_status_name`.
#[no_mangle]
pub extern "C" fn polyflake_node_source_name(source: u32) -> *const c_char {
    name_in!(source, NodeSourceKind::ALL.map(NodeSourceKind::name))
}

/// The name of a lease phase ("held", "restart_guard", "expired", "lost"); as
/// `polyflake_health_status_name`.
#[no_mangle]
pub extern "C" fn polyflake_lease_phase_name(phase: u32) -> *const c_char {
    name_in!(phase, LeasePhase::ALL.map(LeasePhase::name))
}

/// The name of a lease kind ("none", "file", "etcd", "zookeeper", "host"); as
/// `polyflake_health_status_name`.
#[no_mangle]
pub extern "C" fn polyflake_lease_kind_name(kind: u32) -> *const c_char {
    name_in!(kind, lease_kind_names())
}

/// The name of a kernel clock state ("ok", "insert_leap", "delete_leap", "leap_in_progress",
/// "leap_done", "unsynchronized", "unavailable"); as `polyflake_health_status_name`.
#[no_mangle]
pub extern "C" fn polyflake_clock_sync_state_name(state: u32) -> *const c_char {
    name_in!(state, ClockSyncState::ALL.map(ClockSyncState::name))
}

/// The name of a clock source ("precise", "coarse"); as `polyflake_health_status_name`.
#[no_mangle]
pub extern "C" fn polyflake_clock_source_name(source: u32) -> *const c_char {
    name_in!(source, ClockSource::ALL.map(ClockSource::name))
}

#[cfg(test)]
mod tests {
    use super::*;
    use polyflake_core::{
        FileLeaseOptions, Generator, ManualClock, NodeSource, RestartGuard, RestartGuardOptions,
    };
    use std::ffi::CStr;

    fn name(p: *const c_char) -> String {
        unsafe { CStr::from_ptr(p) }.to_str().unwrap().to_string()
    }

    /// "ClockAhead" -> "clock_ahead": the C enum's variant, as the core names it.
    fn snake<T: std::fmt::Debug>(v: T) -> String {
        let mut out = String::new();
        for (i, c) in format!("{v:?}").chars().enumerate() {
            if c.is_uppercase() && i > 0 {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        }
        out
    }

    #[test]
    fn c_codes_follow_the_core_lists_and_names_come_from_the_core() {
        use polyflake_health_status as S;
        let statuses = [
            S::Ok,
            S::ClockBehind,
            S::ClockOutsideWindow,
            S::ClockFailed,
            S::ClockStuck,
            S::LeadTooLarge,
            S::UsedAfterFork,
            S::RestartGuard,
            S::LeaseExpired,
            S::LeaseLost,
            S::ClockAhead,
            S::Closed,
            S::StoreRolledBack,
            S::ClockUnsynchronized,
        ];
        assert_eq!(statuses.len(), HealthStatus::ALL.len());
        for (c, core) in statuses.into_iter().zip(HealthStatus::ALL) {
            assert_eq!(snake(c), core.name());
            assert_eq!(name(polyflake_health_status_name(c as u32)), core.name());
        }
        assert_eq!((S::ClockAhead as u32, S::Closed as u32), (10, 11));
        // Appended: the codes before it keep their numbers.
        assert_eq!(S::ClockUnsynchronized as u32, 13);
        use polyflake_node_source as N;
        let sources = [
            N::Static,
            N::Env,
            N::Hostname,
            N::Ipv4,
            N::FileLease,
            N::Etcd,
            N::Zookeeper,
        ];
        for (c, core) in sources.into_iter().zip(NodeSourceKind::ALL) {
            assert_eq!(snake(c), core.name());
            assert_eq!(name(polyflake_node_source_name(c as u32)), core.name());
        }
        use polyflake_lease_phase as P;
        let phases = [P::Held, P::RestartGuard, P::Expired, P::Lost];
        for (c, core) in phases.into_iter().zip(LeasePhase::ALL) {
            assert_eq!(snake(c), core.name());
            assert_eq!(name(polyflake_lease_phase_name(c as u32)), core.name());
        }
        use crate::generator::polyflake_clock_source as C;
        for (c, core) in [C::Precise, C::Coarse].into_iter().zip(ClockSource::ALL) {
            assert_eq!(snake(c), core.name());
            assert_eq!(name(polyflake_clock_source_name(c as u32)), core.name());
        }
        use polyflake_lease_kind as K;
        let kinds = [K::File, K::Etcd, K::Zookeeper, K::Host];
        assert_eq!(kinds.len(), LeaseKind::ALL.len());
        for (c, core) in kinds.into_iter().zip(LeaseKind::ALL) {
            assert_eq!(snake(c), core.name());
            assert_eq!(name(polyflake_lease_kind_name(c as u32)), core.name());
        }
        assert_eq!(name(polyflake_lease_kind_name(K::None as u32)), "none");
        assert_eq!(K::Host as u32, 4);
        use polyflake_clock_sync_state as Y;
        let states = [
            Y::Ok,
            Y::InsertLeap,
            Y::DeleteLeap,
            Y::LeapInProgress,
            Y::LeapDone,
            Y::Unsynchronized,
            Y::Unavailable,
        ];
        assert_eq!(states.len(), ClockSyncState::ALL.len());
        for (c, core) in states.into_iter().zip(ClockSyncState::ALL) {
            assert_eq!(snake(c), core.name());
            assert_eq!(name(polyflake_clock_sync_state_name(c as u32)), core.name());
        }
        for unknown in [
            polyflake_clock_sync_state_name(99),
            polyflake_health_status_name(99),
            polyflake_node_source_name(99),
            polyflake_lease_phase_name(99),
            polyflake_lease_kind_name(99),
            polyflake_clock_source_name(99),
        ] {
            assert_eq!(name(unknown), "unknown");
        }
    }

    #[test]
    fn the_snapshot_holds_the_core_health() {
        let dir = std::env::temp_dir().join(format!("polyflake-ffi-health-{}", std::process::id()));
        let mut o = FileLeaseOptions::new(&dir);
        o.common.slots = Some(4);
        let clock = ManualClock::new(1_800_000_000_000);
        let g = Generator::builder_from(NodeSource::FileLease(o))
            .clock(clock.clone())
            .build()
            .unwrap();
        let h = g.health();
        let s = snapshot_of(&h);
        let lease = h.lease.clone().unwrap();
        assert_eq!(s.status, polyflake_health_status::RestartGuard as u32);
        assert_eq!(s.source, polyflake_node_source::FileLease as u32);
        assert_eq!(s.lease_kind, polyflake_lease_kind::File as u32);
        assert_eq!(s.lease_phase, polyflake_lease_phase::RestartGuard as u32);
        assert_eq!((s.lease_slot, s.node_id), (lease.slot, g.node_id()));
        assert_eq!(s.lease_high_water_ms, lease.high_water_ms);
        assert!(s.lease_has_guard && s.lease_guard_until_ms == lease.guard_until_ms.unwrap());
        assert_eq!(s.lease_guard_remaining_ms, lease.guard_remaining_ms);
        assert!(s.lease_guard_waiting && !s.has_last_issued && !s.ok);
        assert_eq!(s.wall_ms, 1_800_000_000_000);
        let store = unsafe { CStr::from_ptr(s.lease_store.as_ptr()) };
        assert_eq!(store.to_str().unwrap(), lease.store);
        clock.elapse(10_000);
        g.next_id().unwrap();
        let s = snapshot_of(&g.health());
        assert!(s.ok && s.has_last_issued && s.ids_issued == 1);
        assert_eq!(s.last_issued_ms, 1_800_000_010_000);
        drop(g);
        let _ = std::fs::remove_dir_all(&dir);
        // Without a lease (a test clock keeps no mark) every lease field stays zero.
        let g = Generator::builder(3).clock(clock).build().unwrap();
        let h = g.health();
        let s = snapshot_of(&h);
        assert_eq!((s.lease_kind, s.lease_slot, s.node_id), (0, 0, 3));
        assert_eq!(s.mode, crate::generator::polyflake_mode::Strict as u32);
        // The kernel's word on the clock, as the core read it.
        let sync = h.clock_sync;
        assert_eq!(s.clock_sync_state, code_in(sync.state, ClockSyncState::ALL));
        assert_eq!(s.clock_sync_synchronized, sync.synchronized);
        assert_eq!(
            (s.clock_sync_max_error_us, s.clock_sync_est_error_us),
            (sync.max_error_us, sync.est_error_us)
        );
        assert_eq!(s.restart_waits, 0);
        assert_eq!(s.restart_guard_note[0], 0);
    }

    #[test]
    fn a_fixed_node_ids_mark_is_lease_kind_host() {
        let dir = std::env::temp_dir().join(format!("polyflake-ffi-mark-{}", std::process::id()));
        let guard = |mode| RestartGuardOptions {
            mode: Some(mode),
            state_dir: Some(dir.clone()),
            ..RestartGuardOptions::default()
        };
        let g = Generator::builder(907)
            .host_scope("ffi-c-unit")
            .restart_guard(guard(RestartGuard::Required))
            .build()
            .unwrap();
        g.next_id().unwrap();
        let h = g.health();
        let s = snapshot_of(&h);
        assert_eq!(s.lease_kind, polyflake_lease_kind::Host as u32);
        assert_eq!(name(polyflake_lease_kind_name(s.lease_kind)), "host");
        let store = unsafe { CStr::from_ptr(s.lease_store.as_ptr()) };
        assert_eq!(store.to_str().unwrap(), h.lease.unwrap().store);
        assert!(store.to_str().unwrap().starts_with(dir.to_str().unwrap()));
        drop(g);
        // Off: no mark, and health says why.
        let g = Generator::builder(907)
            .host_scope("ffi-c-unit")
            .restart_guard(guard(RestartGuard::Off))
            .build()
            .unwrap();
        let s = snapshot_of(&g.health());
        assert_eq!(s.lease_kind, polyflake_lease_kind::None as u32);
        let note = unsafe { CStr::from_ptr(s.restart_guard_note.as_ptr()) };
        assert!(note.to_str().unwrap().starts_with("off"), "{note:?}");
        drop(g);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
