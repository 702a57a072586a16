//! Health snapshots: the core's `Health` flattened into one fixed C struct, and the names
//! of statuses, sources, lease kinds and phases and clock sources from the core's own lists.

use crate::boundary::{arg, boundary_value, fill_char_array, write_out};
use crate::error::{polyflake_result, static_name, NameTable};
use crate::generator::{polyflake_generator, Handle};
use polyflake_core::{
    ClockSource, Health, HealthStatus, LeaseHealth, LeaseKind, LeasePhase, Mode, NodeSourceKind,
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
    /// Lease: the restart guard waits until the clock passes the previous holder's mark.
    RestartGuard = 7,
    /// Lease: the high-water mark was reached without a renewal (store unreachable).
    LeaseExpired = 8,
    /// Lease: the lease was lost; the generator has stopped for good.
    LeaseLost = 9,
    /// Strict mode: the wall clock stepped ahead past max_forward_step_ms (`clock_ahead_ms`).
    ClockAhead = 10,
    /// The generator was closed.
    Closed = 11,
    /// Lease: the store went back in time (restored from an older backup); the lease is lost.
    StoreRolledBack = 12,
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
    /// Lost for good.
    Lost = 3,
}

/// The names of `polyflake_lease_kind`'s codes: "none", then the core's names.
const LEASE_KINDS: [&str; 4] = [
    "none",
    LeaseKind::File.name(),
    LeaseKind::Etcd.name(),
    LeaseKind::ZooKeeper.name(),
];

/// Bytes of each text field of `polyflake_health_snapshot`, NUL included.
pub const POLYFLAKE_HEALTH_TEXT_LEN: usize = 256;

/// A snapshot of a generator's state and counters (`polyflake_health`; the fields are the core's
/// `Health`, flattened). Plain data: copy it, keep it, no free. Text fields are NUL-terminated
/// UTF-8, cut at a character boundary if longer.
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
    /// The lease's store: a `polyflake_lease_kind` value (POLYFLAKE_LEASE_KIND_NONE: no lease).
    pub lease_kind: u32,
    /// The directory, or the endpoints (ensemble) and key prefix.
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
    /// True once the lease is lost (the generator has stopped for good).
    pub lease_lost: bool,
    /// True while the next ID would pass R (the store has not extended it).
    pub lease_expired: bool,
    /// Where the lease stands: a `polyflake_lease_phase` value.
    pub lease_phase: u32,
    /// The last store error, or why the lease was lost; empty if none.
    pub lease_last_error: [c_char; POLYFLAKE_HEALTH_TEXT_LEN],
}

/// The C code of a core enum value: its position in the core's list (`ALL`), as the C enums
/// number them.
fn code_in<T: PartialEq, const N: usize>(value: T, all: [T; N]) -> u32 {
    all.iter().position(|v| *v == value).unwrap_or(N) as u32
}

/// The snapshot of a core health (of any generator: Snowflake, UUIDv7 or ULID). Both core
/// structs are taken apart field by field without `..`, so a field added to the core's `Health`
/// or `LeaseHealth` does not build here until the C struct has it.
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
        lease,
    } = h;
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
        } = l;
        // Code 0 is "none": the core's kinds follow in their order.
        s.lease_kind = 1 + code_in(
            *kind,
            [LeaseKind::File, LeaseKind::Etcd, LeaseKind::ZooKeeper],
        );
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
        let all = || $names.to_vec();
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

/// The name of a lease kind ("none", "file", "etcd", "zookeeper"); as
/// `polyflake_health_status_name`.
#[no_mangle]
pub extern "C" fn polyflake_lease_kind_name(kind: u32) -> *const c_char {
    name_in!(kind, LEASE_KINDS)
}

/// The name of a clock source ("precise", "coarse"); as `polyflake_health_status_name`.
#[no_mangle]
pub extern "C" fn polyflake_clock_source_name(source: u32) -> *const c_char {
    name_in!(source, ClockSource::ALL.map(ClockSource::name))
}

#[cfg(test)]
mod tests {
    use super::*;
    use polyflake_core::{FileLeaseOptions, Generator, ManualClock, NodeSource};
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
        ];
        assert_eq!(statuses.len(), HealthStatus::ALL.len());
        for (c, core) in statuses.into_iter().zip(HealthStatus::ALL) {
            assert_eq!(snake(c), core.name());
            assert_eq!(name(polyflake_health_status_name(c as u32)), core.name());
        }
        assert_eq!((S::ClockAhead as u32, S::Closed as u32), (10, 11));
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
        assert_eq!(snake(polyflake_lease_kind::File), LeaseKind::File.name());
        assert_eq!(snake(polyflake_lease_kind::Etcd), LeaseKind::Etcd.name());
        assert_eq!(
            snake(polyflake_lease_kind::Zookeeper),
            LeaseKind::ZooKeeper.name()
        );
        use polyflake_lease_kind as K;
        for (c, want) in [(K::None, "none"), (K::File, "file"), (K::Etcd, "etcd")]
            .into_iter()
            .chain([(K::Zookeeper, LeaseKind::ZooKeeper.name())])
        {
            assert_eq!(name(polyflake_lease_kind_name(c as u32)), want);
        }
        for unknown in [
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
        // Without a lease every lease field stays zero.
        let g = Generator::builder(3).clock(clock).build().unwrap();
        let s = snapshot_of(&g.health());
        assert_eq!((s.lease_kind, s.lease_slot, s.node_id), (0, 0, 3));
        assert_eq!(s.mode, crate::generator::polyflake_mode::Strict as u32);
    }
}
