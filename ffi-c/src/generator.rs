//! The generator handle: configuration, minting, decoding with its layout, health.

use crate::boundary::{arg, boundary, boundary_void, fill_char_array, out};
use crate::clock::{polyflake_manual_clock, polyflake_scripted_clock};
use crate::id::{polyflake_decoded, polyflake_layout, POLYFLAKE_DEFAULT_EPOCH_MS};
use crate::result::polyflake_result;
use crate::source::{lease_kind_of, source_of};
use polyflake_core::{
    batch_len, Builder, Generator, HealthStatus, Layout, Mode, NodeSource, DEFAULT_MAX_WAIT_MS,
};
use std::ffi::c_char;

/// How a generator treats the wall clock (the `mode` field of `polyflake_config`).
#[repr(u32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum polyflake_mode {
    /// `Snowflake`: an issued timestamp never exceeds the wall clock. Small rewinds (up to
    /// max_wait_ms) are waited out, larger ones refused; a spent sequence sleeps to the next ms.
    Strict = 0,
    /// `MonotonicSnowflake`: never waits and never duplicates; borrows from the next
    /// millisecond on a rewind or a spent sequence (bounded by max_lead_ms if set).
    Monotonic = 1,
}

fn mode_of(code: u32) -> Result<Mode, polyflake_result> {
    match code {
        c if c == polyflake_mode::Strict as u32 => Ok(Mode::Strict),
        c if c == polyflake_mode::Monotonic as u32 => Ok(Mode::Monotonic),
        _ => Err(polyflake_result::InvalidArgument),
    }
}

const fn mode_code(mode: Mode) -> u32 {
    match mode {
        Mode::Strict => polyflake_mode::Strict as u32,
        Mode::Monotonic => polyflake_mode::Monotonic as u32,
    }
}

/// Settings for a generator. Fill it with `polyflake_config_init` (the defaults), then change
/// what you need. Every field is checked by the core when the generator is made, never later.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct polyflake_config {
    /// The bit layout (default 41/10/12).
    pub layout: polyflake_layout,
    /// The epoch, Unix milliseconds (default POLYFLAKE_DEFAULT_EPOCH_MS, 2024-01-01T00:00:00Z).
    pub epoch_ms: i64,
    /// This generator's node id: 0 to 2^node_bits - 1 (default 0).
    pub node_id: i64,
    /// A `polyflake_mode` value (default POLYFLAKE_MODE_STRICT). Any other number:
    /// POLYFLAKE_RESULT_INVALID_ARGUMENT.
    pub mode: u32,
    /// Strict mode's wait budget in milliseconds (default 5.0): a rewind up to this size is
    /// waited out, a larger one refused; a spent sequence waits at most max(this, 1) ms.
    pub max_wait_ms: f64,
    /// Nonzero: `max_lead_ms` applies. Zero (the default): monotonic mode may run ahead of the
    /// wall clock without bound.
    pub has_max_lead: u32,
    /// Monotonic mode's limit on running ahead of the wall clock, in milliseconds (only read
    /// when `has_max_lead` is nonzero; must then be >= 0).
    pub max_lead_ms: i64,
}

/// Fill `*out_config` with the defaults: layout 41/10/12, the default epoch, node 0, strict
/// mode, max_wait_ms 5.0, no lead limit. NULL: POLYFLAKE_RESULT_NULL_PARAMETER. Thread-safe.
#[no_mangle]
pub extern "C" fn polyflake_config_init(out_config: *mut polyflake_config) -> polyflake_result {
    boundary(|| {
        let dst = out(out_config)?;
        let cfg = polyflake_config {
            layout: Layout::DEFAULT.into(),
            epoch_ms: POLYFLAKE_DEFAULT_EPOCH_MS,
            node_id: 0,
            mode: mode_code(Mode::Strict),
            max_wait_ms: DEFAULT_MAX_WAIT_MS,
            has_max_lead: 0,
            max_lead_ms: 0,
        };
        // SAFETY: `dst` is non-NULL and the caller promises it is writable.
        unsafe { dst.write(cfg) };
        Ok(())
    })
}

/// A generator of unique, time-sortable 64-bit IDs for one node id: an opaque handle.
///
/// Thread-safe: any number of threads may call `polyflake_next_id`, `polyflake_next_ids`,
/// `polyflake_health` and `polyflake_generator_decode` on one handle at once (the hot path is a
/// clock read and a compare-and-swap, no lock). Free it with `polyflake_generator_free` once no
/// thread uses it.
pub struct polyflake_generator {
    inner: Generator,
}

fn builder_of(cfg: &polyflake_config) -> Result<Builder, polyflake_result> {
    builder_from(NodeSource::Static(i128::from(cfg.node_id)), cfg)
}

/// A builder for `source` with every setting of `cfg` but its node id.
pub(crate) fn builder_from(
    source: NodeSource,
    cfg: &polyflake_config,
) -> Result<Builder, polyflake_result> {
    Ok(Generator::builder_from(source)
        .mode(mode_of(cfg.mode)?)
        .layout(cfg.layout.to_core()?)
        .epoch_ms(cfg.epoch_ms)
        .max_wait_ms(cfg.max_wait_ms)
        .max_lead_ms((cfg.has_max_lead != 0).then_some(cfg.max_lead_ms)))
}

pub(crate) fn build_into(
    builder: Builder,
    dst: *mut *mut polyflake_generator,
) -> Result<(), polyflake_result> {
    let dst = out(dst)?;
    let handle = Box::new(polyflake_generator {
        inner: builder.build()?,
    });
    // SAFETY: `dst` is non-NULL and the caller promises it is writable.
    unsafe { dst.write(Box::into_raw(handle)) };
    Ok(())
}

/// Make a generator on the system clock from `*config` and store the new handle in
/// `*out_generator`.
///
/// Ownership: the caller owns the handle and frees it with `polyflake_generator_free`.
/// Errors (nothing written): POLYFLAKE_RESULT_INVALID_LAYOUT, _INVALID_NODE_ID, _INVALID_EPOCH,
/// _INVALID_ARGUMENT, and POLYFLAKE_RESULT_NODE_ID_IN_USE when a live system-clock generator in
/// this process already has the same node id, epoch and layout (share that one instead).
/// NULL `config` or `out_generator`: POLYFLAKE_RESULT_NULL_PARAMETER. Thread-safe.
#[no_mangle]
pub extern "C" fn polyflake_generator_new(
    config: *const polyflake_config,
    out_generator: *mut *mut polyflake_generator,
) -> polyflake_result {
    boundary(|| {
        let cfg = arg(config)?;
        out(out_generator)?;
        build_into(builder_of(cfg)?, out_generator)
    })
}

/// Make a generator that reads time from a manual clock (tests, simulations) and store the new
/// handle in `*out_generator`. The generator shares the clock: moving the clock moves the time
/// it sees. It keeps its own reference, so the clock handle may be freed first.
/// Generators on an injected clock are independent of the one-node-id-per-process rule.
///
/// Ownership and errors as `polyflake_generator_new` (except NODE_ID_IN_USE, which does not
/// apply). NULL `config`, `clock` or `out_generator`: POLYFLAKE_RESULT_NULL_PARAMETER.
/// Thread-safe.
#[no_mangle]
pub extern "C" fn polyflake_generator_new_with_manual_clock(
    config: *const polyflake_config,
    clock: *const polyflake_manual_clock,
    out_generator: *mut *mut polyflake_generator,
) -> polyflake_result {
    boundary(|| {
        let cfg = arg(config)?;
        let clock = arg(clock)?;
        out(out_generator)?;
        build_into(builder_of(cfg)?.clock(clock.inner.clone()), out_generator)
    })
}

/// Make a generator that reads time from a scripted clock and store the new handle in
/// `*out_generator`. The clock is not read until the first ID, so its first value goes to the
/// first ID. The generator keeps its own reference, so the clock handle may be freed first.
///
/// Ownership and errors as `polyflake_generator_new_with_manual_clock`. NULL `config`, `clock`
/// or `out_generator`: POLYFLAKE_RESULT_NULL_PARAMETER. Thread-safe.
#[no_mangle]
pub extern "C" fn polyflake_generator_new_with_scripted_clock(
    config: *const polyflake_config,
    clock: *const polyflake_scripted_clock,
    out_generator: *mut *mut polyflake_generator,
) -> polyflake_result {
    boundary(|| {
        let cfg = arg(config)?;
        let clock = arg(clock)?;
        out(out_generator)?;
        build_into(
            builder_of(cfg)?.shared_clock(clock.inner.clone()),
            out_generator,
        )
    })
}

/// Free a generator (for the system clock, this releases its node id in this process). NULL is
/// accepted and does nothing. Do not use the handle afterwards, and do not free it while
/// another thread still uses it.
#[no_mangle]
pub extern "C" fn polyflake_generator_free(generator: *mut polyflake_generator) {
    boundary_void(|| {
        if !generator.is_null() {
            // SAFETY: a non-NULL handle came from a polyflake_generator_new* function and is
            // freed once.
            drop(unsafe { Box::from_raw(generator) });
        }
    })
}

/// Issue one ID into `*out_id`.
///
/// Strict mode may wait (at most max_wait_ms for a rewind, max(max_wait_ms, 1) ms for a spent
/// sequence) and refuses with POLYFLAKE_RESULT_CLOCK_MOVED_BACKWARDS past that. Monotonic mode
/// never waits; it refuses with POLYFLAKE_RESULT_LEAD_LIMIT_EXCEEDED past max_lead_ms.
/// Other errors: POLYFLAKE_RESULT_TIMESTAMP_OVERFLOW, _USED_AFTER_FORK, _CLOCK_FAILED.
/// NULL `generator` or `out_id`: POLYFLAKE_RESULT_NULL_PARAMETER. `*out_id` is written only on
/// success. Thread-safe.
#[no_mangle]
pub extern "C" fn polyflake_next_id(
    generator: *const polyflake_generator,
    out_id: *mut u64,
) -> polyflake_result {
    boundary(|| {
        let g = arg(generator)?;
        let dst = out(out_id)?;
        let id = g.inner.next_id()?;
        // SAFETY: `dst` is non-NULL and the caller promises it is writable.
        unsafe { dst.write(id) };
        Ok(())
    })
}

/// Fill `buf[0..n]` with `n` consecutive, increasing IDs (0 <= n <= POLYFLAKE_MAX_BATCH).
///
/// Monotonic mode reserves the whole batch with one atomic step. Strict mode fills the current
/// millisecond and waits into the next ones (100,000 IDs take about 25 ms with the default
/// layout). On any error `buf` is left untouched.
/// Errors: as `polyflake_next_id`, and POLYFLAKE_RESULT_INVALID_ARGUMENT for n over the cap.
/// NULL `generator` or `buf` (even with n == 0): POLYFLAKE_RESULT_NULL_PARAMETER. Thread-safe.
#[no_mangle]
pub extern "C" fn polyflake_next_ids(
    generator: *const polyflake_generator,
    buf: *mut u64,
    n: usize,
) -> polyflake_result {
    boundary(|| {
        let g = arg(generator)?;
        let buf = out(buf)?;
        let n = batch_len(n as i128)?;
        // SAFETY: `buf` is non-NULL and the caller promises `n` writable uint64_t there.
        let dst = unsafe { std::slice::from_raw_parts_mut(buf.as_ptr(), n) };
        match g.inner.mode() {
            // One reservation, written after it succeeds: on an error nothing was written.
            Mode::Monotonic => g.inner.next_ids(dst)?,
            // Strict batches write each millisecond's run as they go and may fail after some
            // runs; fill a scratch buffer so the caller's is written only on success. The copy
            // costs far less than the ~0.25 us/ID a strict batch spends waiting for milliseconds.
            Mode::Strict => {
                let mut scratch = vec![0u64; n];
                g.inner.next_ids(&mut scratch)?;
                dst.copy_from_slice(&scratch);
            }
        }
        Ok(())
    })
}

/// Decode `id` with this generator's layout and epoch into `*out_decoded`.
/// Errors: POLYFLAKE_RESULT_INVALID_ID for `id` >= 2^63; NULL `generator` or `out_decoded`:
/// POLYFLAKE_RESULT_NULL_PARAMETER. Thread-safe.
#[no_mangle]
pub extern "C" fn polyflake_generator_decode(
    generator: *const polyflake_generator,
    id: u64,
    out_decoded: *mut polyflake_decoded,
) -> polyflake_result {
    boundary(|| {
        let g = arg(generator)?;
        let dst = out(out_decoded)?;
        let d = g.inner.decode(id)?;
        // SAFETY: `dst` is non-NULL and the caller promises it is writable.
        unsafe { dst.write(d.into()) };
        Ok(())
    })
}

/// Store this generator's settings in `*out_config` (as the core holds them).
/// NULL `generator` or `out_config`: POLYFLAKE_RESULT_NULL_PARAMETER. Thread-safe.
#[no_mangle]
pub extern "C" fn polyflake_generator_config(
    generator: *const polyflake_generator,
    out_config: *mut polyflake_config,
) -> polyflake_result {
    boundary(|| {
        let g = &arg(generator)?.inner;
        let dst = out(out_config)?;
        let cfg = polyflake_config {
            layout: g.layout().into(),
            epoch_ms: g.epoch_ms(),
            node_id: i64::from(g.node_id()),
            mode: mode_code(g.mode()),
            max_wait_ms: g.max_wait_ms(),
            has_max_lead: u32::from(g.max_lead_ms().is_some()),
            max_lead_ms: g.max_lead_ms().unwrap_or(0),
        };
        // SAFETY: `dst` is non-NULL and the caller promises it is writable.
        unsafe { dst.write(cfg) };
        Ok(())
    })
}

/// Why a generator is or is not healthy (the `status` of `polyflake_health_snapshot`).
#[repr(u32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum polyflake_health_status {
    /// Issuing normally.
    Ok = 0,
    /// Strict mode: the wall clock is behind the last issued ms by more than the wait budget.
    ClockBehind = 1,
    /// The wall clock is before the epoch or past the layout's window.
    ClockOutsideWindow = 2,
    /// An injected clock failed to give a reading.
    ClockFailed = 3,
    /// Strict mode: a call gave up because the clock did not advance past a spent millisecond,
    /// and it still has not.
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
    /// Strict mode: the wall clock stepped ahead of elapsed time past max_forward_step_ms.
    ClockAhead = 10,
    /// The generator was closed.
    Closed = 11,
}

/// The ONE map from the core's health statuses. Exhaustive: a new core status breaks the build.
const fn status_of(s: HealthStatus) -> polyflake_health_status {
    match s {
        HealthStatus::Ok => polyflake_health_status::Ok,
        HealthStatus::ClockBehind => polyflake_health_status::ClockBehind,
        HealthStatus::ClockOutsideWindow => polyflake_health_status::ClockOutsideWindow,
        HealthStatus::ClockFailed => polyflake_health_status::ClockFailed,
        HealthStatus::ClockStuck => polyflake_health_status::ClockStuck,
        HealthStatus::LeadTooLarge => polyflake_health_status::LeadTooLarge,
        HealthStatus::UsedAfterFork => polyflake_health_status::UsedAfterFork,
        HealthStatus::RestartGuard => polyflake_health_status::RestartGuard,
        HealthStatus::LeaseExpired => polyflake_health_status::LeaseExpired,
        HealthStatus::LeaseLost => polyflake_health_status::LeaseLost,
        HealthStatus::ClockAhead => polyflake_health_status::ClockAhead,
        HealthStatus::Closed => polyflake_health_status::Closed,
    }
}

/// Every core status, to answer `polyflake_health_status_name` from the core's own names.
const ALL_STATUSES: [HealthStatus; 12] = HealthStatus::ALL;

/// Bytes of `polyflake_health_snapshot.reason`, NUL included.
pub const POLYFLAKE_HEALTH_REASON_LEN: usize = 256;
/// Bytes of `polyflake_health_snapshot.lease_store` and `.lease_last_error`, NUL included.
pub const POLYFLAKE_HEALTH_TEXT_LEN: usize = 256;

/// A snapshot of a generator's state and counters (`polyflake_health`). Plain data: copy it,
/// keep it, no free.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct polyflake_health_snapshot {
    /// True when the generator can issue now.
    pub ok: bool,
    /// Why it is or is not healthy: a `polyflake_health_status` value.
    pub status: u32,
    /// The generator's node id.
    pub node_id: u32,
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
    /// Lease renewals (0 unless the node id comes from a lease).
    pub lease_renewals: u64,
    /// Failed lease renewals (0 unless the node id comes from a lease).
    pub lease_failures: u64,
    /// A human-readable reason, NUL-terminated UTF-8 (cut at a character boundary if longer);
    /// empty when ok.
    pub reason: [c_char; POLYFLAKE_HEALTH_REASON_LEN],
    /// Where the node id came from: a `polyflake_node_source` value.
    pub source: u32,
    /// The lease's store: a `polyflake_lease_kind` value, POLYFLAKE_LEASE_KIND_NONE when the
    /// node id is not leased (then every other `lease_` field below is zero or empty).
    pub lease_kind: u32,
    /// The slot held, which is the node id.
    pub lease_slot: u32,
    /// The high-water mark R (Unix ms): no ID carries a later timestamp until the store has
    /// extended it.
    pub lease_high_water_ms: i64,
    /// True when the slot had a previous holder's R when it was taken (`lease_guard_until_ms`
    /// means something).
    pub lease_has_guard: bool,
    /// The previous holder's R (Unix ms): nothing is issued until the clock passes it.
    pub lease_guard_until_ms: i64,
    /// True while the restart guard waits.
    pub lease_guard_waiting: bool,
    /// How long the restart guard still waits, in ms (0 when it does not).
    pub lease_guard_remaining_ms: u64,
    /// True once the lease is lost (the generator has stopped for good).
    pub lease_lost: bool,
    /// The directory, or the etcd endpoints and key prefix, NUL-terminated UTF-8 (cut at a
    /// character boundary if longer).
    pub lease_store: [c_char; POLYFLAKE_HEALTH_TEXT_LEN],
    /// The last store error, or why the lease was lost, NUL-terminated UTF-8; empty if none.
    pub lease_last_error: [c_char; POLYFLAKE_HEALTH_TEXT_LEN],
}

/// Take a health snapshot of the generator (this reads its clock once) into `*out_health`.
/// NULL `generator` or `out_health`: POLYFLAKE_RESULT_NULL_PARAMETER. Thread-safe.
#[no_mangle]
pub extern "C" fn polyflake_health(
    generator: *const polyflake_generator,
    out_health: *mut polyflake_health_snapshot,
) -> polyflake_result {
    boundary(|| {
        let g = arg(generator)?;
        let dst = out(out_health)?;
        let h = g.inner.health();
        let lease = h.lease.as_ref();
        let snapshot = polyflake_health_snapshot {
            ok: h.ok,
            status: status_of(h.status) as u32,
            node_id: h.node_id,
            mode: mode_code(h.mode),
            has_last_issued: h.last_issued_ms.is_some(),
            last_issued_ms: h.last_issued_ms.unwrap_or(0),
            wall_ms: h.wall_ms,
            lead_ms: h.lead_ms,
            ids_issued: h.ids_issued,
            rewinds_waited: h.rewinds_waited,
            rewinds_refused: h.rewinds_refused,
            sequence_exhaustions: h.sequence_exhaustions,
            wait_sleeps: h.wait_sleeps,
            ms_borrowed: h.ms_borrowed,
            lead_refused: h.lead_refused,
            lease_renewals: h.lease_renewals,
            lease_failures: h.lease_failures,
            reason: fill_char_array(&h.reason),
            source: source_of(h.source) as u32,
            lease_kind: lease_kind_of(lease.map(|l| l.kind)) as u32,
            lease_slot: lease.map_or(0, |l| l.slot),
            lease_high_water_ms: lease.map_or(0, |l| l.high_water_ms),
            lease_has_guard: lease.is_some_and(|l| l.guard_until_ms.is_some()),
            lease_guard_until_ms: lease.and_then(|l| l.guard_until_ms).unwrap_or(0),
            lease_guard_waiting: lease.is_some_and(|l| l.guard_waiting),
            lease_guard_remaining_ms: lease.map_or(0, |l| l.guard_remaining_ms),
            lease_lost: lease.is_some_and(|l| l.lost),
            lease_store: fill_char_array(lease.map_or("", |l| l.store.as_str())),
            lease_last_error: fill_char_array(lease.map_or("", |l| l.last_error.as_str())),
        };
        // SAFETY: `dst` is non-NULL and the caller promises it is writable.
        unsafe { dst.write(snapshot) };
        Ok(())
    })
}

/// The stable snake_case name of a health status ("ok", "clock_behind", "clock_stuck", ...) as a
/// static NUL-terminated string (`status` is a `polyflake_health_status`); an unknown number
/// gives "unknown". Never NULL; do not free. Thread-safe.
#[no_mangle]
pub extern "C" fn polyflake_health_status_name(status: u32) -> *const c_char {
    crate::boundary::boundary_value(c"unknown".as_ptr(), || {
        // The core's names are &'static str without a NUL; keep one NUL-terminated copy each.
        static NAMES: std::sync::OnceLock<Vec<(u32, std::ffi::CString)>> =
            std::sync::OnceLock::new();
        let names = NAMES.get_or_init(|| {
            ALL_STATUSES
                .iter()
                .map(|s| {
                    let name = std::ffi::CString::new(s.name()).unwrap_or_default();
                    (status_of(*s) as u32, name)
                })
                .collect()
        });
        names
            .iter()
            .find(|(code, _)| *code == status)
            .map_or(c"unknown".as_ptr(), |(_, name)| name.as_ptr())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::CStr;

    #[test]
    fn status_names_come_from_the_core() {
        for s in ALL_STATUSES {
            let name = unsafe { CStr::from_ptr(polyflake_health_status_name(status_of(s) as u32)) };
            assert_eq!(name.to_str().unwrap(), s.name());
        }
        let unknown = unsafe { CStr::from_ptr(polyflake_health_status_name(99)) };
        assert_eq!(unknown.to_str().unwrap(), "unknown");
    }

    #[test]
    fn defaults_are_the_core_defaults() {
        let mut cfg = std::mem::MaybeUninit::<polyflake_config>::uninit();
        assert_eq!(
            polyflake_config_init(cfg.as_mut_ptr()),
            polyflake_result::Ok
        );
        let cfg = unsafe { cfg.assume_init() };
        assert_eq!(cfg.max_wait_ms, DEFAULT_MAX_WAIT_MS);
        assert_eq!(cfg.layout.to_core().unwrap(), Layout::DEFAULT);
        assert_eq!(cfg.mode, polyflake_mode::Strict as u32);
    }
}
