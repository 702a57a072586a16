//! The generator handle: its configuration, the ONE constructor every `polyflake_generator_new*`
//! goes through (an optional clock, a node-id source), minting, decoding, closing.

use crate::boundary::{arg, boundary, c_str, free_handle, new_handle, out, write_out};
use crate::clock::polyflake_clock;
use crate::error::polyflake_result;
use crate::id::{polyflake_decoded, polyflake_layout};
use polyflake_core::{
    batch_len, interruptible, ClockSource, Error, Generator, Health, ManualClock, Mode, NodeSource,
    RestartGuard, RestartGuardOptions, DEFAULT_EPOCH_MS,
};
use std::ffi::{c_char, OsStr};
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;
use std::ptr::null;
use std::time::{Duration, Instant};

/// How a generator treats the wall clock (`polyflake_config.mode`), in the core's order.
#[repr(u32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum polyflake_mode {
    /// `Snowflake`: an issued timestamp never exceeds the wall clock. Small rewinds (up to
    /// max_wait_ms) are waited out, larger ones refused; a spent sequence sleeps to the next ms.
    Strict = 0,
    /// `MonotonicSnowflake`: never waits and never duplicates; borrows from the next
    /// millisecond on a rewind or a spent sequence, up to max_lead_ms ahead of the wall clock
    /// (5,000 ms by default).
    Monotonic = 1,
}

/// Whether a fixed node id (static, env, hostname, IPv4) on the system clock keeps a mark on
/// this host (`polyflake_config.restart_guard`), so that its next holder here (a restart, a
/// forked child after its parent exits, a new generator in this process) starts above
/// everything it could have issued, whatever the clock did in between.
#[repr(u32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum polyflake_restart_guard {
    /// The environment's choice: POLYFLAKE_RESTART_GUARD ("auto", "required" or "off") when it
    /// is set, else auto. What `polyflake_config_init` writes.
    Default = 0,
    /// Keep a mark where the state directory allows it; where it does not (a read-only
    /// container, another user's directory), issue without one, say so once on stderr and in
    /// health (`restart_guard_note`).
    Auto = 1,
    /// Keep a mark or refuse to make the generator (POLYFLAKE_RESULT_LEASE_STORE, naming the
    /// directory and the fixes).
    Required = 2,
    /// Keep no mark: a successor after a clock stepped back can repeat IDs. For hosts where the
    /// node id never outlives a process.
    Off = 3,
}

/// Which clock reading a generator takes per ID (`polyflake_config.clock_source`), in the core's
/// order; named by `polyflake_clock_source_name`.
#[repr(u32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum polyflake_clock_source {
    /// Every ID reads the precise clock (`CLOCK_REALTIME`): the default.
    Precise = 0,
    /// IDs read the coarse clock (`CLOCK_REALTIME_COARSE`, about a fifth of the cost) and the
    /// precise one only when the millisecond's sequence is spent or the coarse reading is behind
    /// the last issued millisecond. Every guarantee holds; an ID's timestamp may be up to one
    /// tick (4 ms at HZ=250) older than the call. Where the coarse clock is missing or coarser
    /// than 10 ms the generator uses the precise clock and health says why (`clock_note`).
    Coarse = 1,
}

/// `polyflake_config.max_forward_step_ms` value that turns the forward-step check off.
pub const POLYFLAKE_FORWARD_STEP_OFF: u64 = u64::MAX;

/// Settings for a generator. Fill it with `polyflake_config_init` (the core's defaults), then
/// change what you need. The core checks every field as written when the generator is made
/// (a number 0 is never "the default"; POLYFLAKE_RESTART_GUARD_DEFAULT and a NULL string are
/// the environment's choice, as each field says). The struct grows at its end between versions:
/// a program compiled against an older polyflake.h must be compiled again.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct polyflake_config {
    /// The bit layout (default 41/10/12).
    pub layout: polyflake_layout,
    /// The epoch, Unix milliseconds (default POLYFLAKE_DEFAULT_EPOCH_MS, 2024-01-01T00:00:00Z).
    pub epoch_ms: i64,
    /// This generator's node id: 0 to 2^node_bits - 1 (default 0). Only
    /// `polyflake_generator_new` reads it; the other sources give the node id.
    pub node_id: i64,
    /// A `polyflake_mode` value (default POLYFLAKE_MODE_STRICT).
    pub mode: u32,
    /// Strict mode's wait budget in milliseconds (default 5.0): a rewind up to this size is
    /// waited out, a larger one refused; a spent sequence waits at most max(this, 1) ms.
    pub max_wait_ms: f64,
    /// Nonzero (the default): `max_lead_ms` applies. Zero: no lead limit at all (a monotonic
    /// generator may then run ahead of the wall clock without bound).
    pub has_max_lead: u32,
    /// Monotonic mode's limit on running ahead of the wall clock, in ms (>= 0; default 5,000:
    /// one reserve, so a successor of this node id waits at most that long for its lead).
    pub max_lead_ms: i64,
    /// How far the wall clock may read ahead of the time elapsed since it was last trusted
    /// before it is a forward STEP, in ms (default 60,000; 1 to a day, 86,400,000): strict mode
    /// refuses to issue from a step (POLYFLAKE_RESULT_CLOCK_JUMPED_AHEAD), monotonic mode keeps
    /// issuing from the trusted time. POLYFLAKE_FORWARD_STEP_OFF turns the check off.
    pub max_forward_step_ms: u64,
    /// How long a stepped-ahead clock must hold its new offset before it is believed as a
    /// correction, in ms of elapsed time (default 300,000).
    pub forward_confirm_ms: u64,
    /// A `polyflake_clock_source` value (default POLYFLAKE_CLOCK_SOURCE_PRECISE).
    pub clock_source: u32,
    /// Nonzero: `max_clock_error_ms` applies. Zero (the default): the kernel's word on the clock
    /// is reported in health (`clock_sync_*`), never a reason to refuse.
    pub has_max_clock_error: u32,
    /// Refuse to issue (POLYFLAKE_RESULT_CLOCK_UNSYNCHRONIZED, health status
    /// clock_unsynchronized) while the kernel says the system clock is not synchronized or its
    /// maximum error exceeds this many ms (1 to 16,000). Checked once a second off the hot
    /// path; refused with an injected clock (the kernel says nothing of it).
    pub max_clock_error_ms: u64,
    /// A fixed node id's restart guard: a `polyflake_restart_guard` value (default
    /// POLYFLAKE_RESTART_GUARD_DEFAULT: POLYFLAKE_RESTART_GUARD, else auto). Leases, test
    /// clocks and user clocks keep no mark (POLYFLAKE_RESTART_GUARD_REQUIRED with a test or
    /// user clock: POLYFLAKE_RESULT_INVALID_ARGUMENT).
    pub restart_guard: u32,
    /// The restart guard's state directory, a NUL-terminated path (only read during the call);
    /// NULL (the default): POLYFLAKE_STATE_DIR when set, else the lease directory
    /// (POLYFLAKE_LEASE_DIR, else /var/tmp/polyflake-leases). Nothing there is followed, and only
    /// this user's own files are written or trusted.
    pub state_dir: *const c_char,
    /// The host scope of the node id's claim and mark, NUL-terminated: at most 40 ASCII letters,
    /// digits, '.', '_' and '-' (else POLYFLAKE_RESULT_INVALID_ARGUMENT echoing it). Generators
    /// in different scopes may hold the same node id and layout on one host, on purpose
    /// (services writing to different tables). NULL (the default): POLYFLAKE_HOST_SCOPE when
    /// set, else the host's one scope.
    pub host_scope: *const c_char,
}

/// Fill `*out_config` with the core's defaults: layout 41/10/12, the default epoch, node 0,
/// strict mode, max_wait_ms 5.0, a lead limit of 5,000 ms (has_max_lead 1), max_forward_step_ms
/// 60,000, forward_confirm_ms 300,000, the precise clock source, no bound on the clock's error
/// (has_max_clock_error 0), POLYFLAKE_RESTART_GUARD_DEFAULT, state_dir and host_scope NULL.
#[no_mangle]
pub extern "C" fn polyflake_config_init(out_config: *mut polyflake_config) -> polyflake_result {
    write_out(out_config, default_config)
}

/// The core's defaults, read from a generator it makes with them.
pub(crate) fn default_config() -> Result<polyflake_config, polyflake_result> {
    let clock = ManualClock::new(DEFAULT_EPOCH_MS);
    Ok(config_of(&Generator::builder(0).clock(clock).build()?))
}

/// A generator's settings as the core holds them.
fn config_of(g: &Generator) -> polyflake_config {
    let code = |i: Option<usize>| i.unwrap_or(0) as u32;
    let max_clock_error = g.settings().max_clock_error_ms;
    polyflake_config {
        layout: g.layout().into(),
        epoch_ms: g.epoch_ms(),
        node_id: i64::from(g.node_id()),
        mode: code(Mode::ALL.iter().position(|m| *m == g.mode())),
        max_wait_ms: g.max_wait_ms(),
        has_max_lead: u32::from(g.max_lead_ms().is_some()),
        max_lead_ms: g.max_lead_ms().unwrap_or(0),
        max_forward_step_ms: g
            .max_forward_step_ms()
            .unwrap_or(POLYFLAKE_FORWARD_STEP_OFF),
        forward_confirm_ms: g.forward_confirm_ms(),
        clock_source: code(ClockSource::ALL.iter().position(|s| *s == g.clock_source())),
        has_max_clock_error: u32::from(max_clock_error.is_some()),
        max_clock_error_ms: max_clock_error.unwrap_or(0),
        // Not kept by the generator: health says what its guard does (a `host` lease, or
        // `restart_guard_note`).
        restart_guard: polyflake_restart_guard::Default as u32,
        state_dir: null(),
        host_scope: null(),
    }
}

impl polyflake_config {
    /// The restart guard's options and the host scope these fields stand for (NULL: the
    /// environment's; the numbers the core's defaults).
    pub(crate) fn host_options(
        &self,
    ) -> Result<(RestartGuardOptions, Option<String>), polyflake_result> {
        let mode = match self.restart_guard {
            0 => None,
            code => Some(
                RestartGuard::ALL
                    .get(code as usize - 1)
                    .copied()
                    .ok_or_else(|| {
                        let names = RestartGuard::ALL.map(RestartGuard::name);
                        let codes: Vec<_> = std::iter::once("default")
                            .chain(names)
                            .enumerate()
                            .map(|(i, n)| format!("{i} {n}"))
                            .collect();
                        Error::InvalidArgument {
                            name: "restart_guard",
                            reason: format!(
                                "{code} is not a polyflake_restart_guard ({})",
                                codes.join(", ")
                            ),
                        }
                    })?,
            ),
        };
        let state_dir = match self.state_dir.is_null() {
            true => None,
            // A path is bytes on Unix: taken as given, UTF-8 or not.
            false => Some(PathBuf::from(OsStr::from_bytes(
                c_str(self.state_dir)?.to_bytes(),
            ))),
        };
        let scope = match self.host_scope.is_null() {
            true => None,
            false => {
                let raw = c_str(self.host_scope)?;
                let scope = raw.to_str().map_err(|_| Error::InvalidArgument {
                    // The core's words for a scope that cannot be read, echoing the bytes sent.
                    name: "host_scope",
                    reason: format!(
                        "{:?} is not a scope name: it is not valid UTF-8 (a scope that cannot be read is never taken as the default one)",
                        OsStr::from_bytes(raw.to_bytes())
                    ),
                })?;
                Some(scope.to_string())
            }
        };
        let guard = RestartGuardOptions {
            mode,
            state_dir,
            ..RestartGuardOptions::default()
        };
        Ok((guard, scope))
    }
}

/// The entry of the core's list `all` at C code `code`, or the core's INVALID_ARGUMENT naming
/// the field `polyflake_{name}` and its codes, such as "(0 strict, 1 monotonic)".
pub(crate) fn pick<T: Copy, const N: usize>(
    all: [T; N],
    name_of: fn(T) -> &'static str,
    code: u32,
    name: &'static str,
) -> Result<T, polyflake_result> {
    all.get(code as usize).copied().ok_or_else(|| {
        let codes: Vec<_> = (0..N).map(|i| format!("{i} {}", name_of(all[i]))).collect();
        let reason = format!("{code} is not a polyflake_{name} ({})", codes.join(", "));
        Error::InvalidArgument { name, reason }.into()
    })
}

/// A generator of unique, time-sortable 64-bit IDs for one node id: an opaque handle. Any number
/// of threads may call every function but `polyflake_generator_free` on it at once (the hot path
/// is a clock read and a compare-and-swap, no lock).
pub struct polyflake_generator {
    pub(crate) inner: Generator,
}

/// What every generator handle (Snowflake, UUIDv7, ULID) offers the shared entry points.
pub(crate) trait Handle {
    fn health(&self) -> Health;
    fn close(&self);
}

impl Handle for polyflake_generator {
    fn health(&self) -> Health {
        self.inner.health()
    }
    fn close(&self) {
        self.inner.close()
    }
}

/// The body of every `_close`.
pub(crate) fn close_of<G: Handle>(generator: *const G) -> polyflake_result {
    boundary(|| {
        arg(generator)?.close();
        Ok(())
    })
}

/// The ONE constructor behind every `polyflake_generator_new*`: NULL `out_generator` is refused
/// first, then `config`; `source` turns the function's own arguments into the core's node-id
/// source; `clock` NULL is the system clock. Every check is the core's.
pub(crate) fn new_generator(
    config: *const polyflake_config,
    clock: *const polyflake_clock,
    out_generator: *mut *mut polyflake_generator,
    source: impl FnOnce(&polyflake_config) -> Result<NodeSource, polyflake_result>,
) -> polyflake_result {
    new_handle(out_generator, || {
        let cfg = arg(config)?;
        let (guard, scope) = cfg.host_options()?;
        let mut builder = Generator::builder_from(source(cfg)?)
            .layout(cfg.layout.to_core()?)
            .epoch_ms(cfg.epoch_ms)
            .restart_guard(guard);
        if let Some(scope) = scope {
            builder = builder.host_scope(scope);
        }
        Ok(polyflake_generator {
            inner: builder.settings(cfg.shared().settings(clock)?).build()?,
        })
    })
}

/// Make a generator whose node id is `config->node_id` into `*out_generator` (`clock`: a test
/// or user clock, or NULL for the system clock); the caller frees it with
/// `polyflake_generator_free`. Errors (nothing written): POLYFLAKE_RESULT_INVALID_LAYOUT,
/// _INVALID_NODE_ID, _INVALID_EPOCH, _INVALID_ARGUMENT, _NODE_ID_IN_USE (a live generator not on
/// a test clock has the same node id and layout, any epoch, in the same host scope: in this
/// process, share that one; in another live process on this host, which the message names (a
/// forked parent, a sibling worker, a lease holding that slot), give each process its own node
/// id or take one from a lease), _LEASE_STORE (POLYFLAKE_RESTART_GUARD_REQUIRED and a state
/// directory that cannot keep the mark). On the system clock the node id is held host-wide
/// until the generator is closed or freed, or its process ends however it ends, and keeps its
/// restart guard's mark in the state directory: its next holder on this host starts above
/// everything it could have issued (after a clean close, an `exit()` or a return from `main`,
/// at once; after a kill, once the clock passes the mark, at most one reserve, 5 s, later).
#[no_mangle]
pub extern "C" fn polyflake_generator_new(
    config: *const polyflake_config,
    clock: *const polyflake_clock,
    out_generator: *mut *mut polyflake_generator,
) -> polyflake_result {
    new_generator(config, clock, out_generator, |cfg| {
        Ok(NodeSource::Static(cfg.node_id.into()))
    })
}

/// Close the generator: every later call fails with POLYFLAKE_RESULT_GENERATOR_CLOSED (health
/// says "closed"), its node id is free again on this host, a lease frees its slot (R stays at
/// the last millisecond issued from), and a fixed node id's mark is left clean (its successor
/// need not wait for the clock). Closing twice is fine; the handle stays valid
/// until `_free`. A call in flight on another thread either issues before the close or fails.
#[no_mangle]
pub extern "C" fn polyflake_generator_close(
    generator: *const polyflake_generator,
) -> polyflake_result {
    close_of(generator)
}

/// Free a generator, closing it first (NULL does nothing). Do not use the handle afterwards, nor
/// free it while another thread still uses it.
#[no_mangle]
pub extern "C" fn polyflake_generator_free(generator: *mut polyflake_generator) {
    free_handle(generator)
}

/// Wait, up to `timeout_ms`, while a restart guard holds: a lease's (call it after taking a
/// slot, before the first ID), or a fixed node id's mark on this host (its previous holder may
/// have issued up to a time the clock has not reached; `polyflake_next_id` also waits for that
/// by itself). POLYFLAKE_RESULT_OK at once when nothing needs waiting for (always on a test or
/// user clock); _LEASE_NOT_READY if the guard still holds at the deadline; _GENERATOR_CLOSED,
/// _LEASE_LOST or _USED_AFTER_FORK at once (a lease with `common.heal` set waits through its
/// heal instead of _LEASE_LOST).
#[no_mangle]
pub extern "C" fn polyflake_wait_ready(
    generator: *const polyflake_generator,
    timeout_ms: u64,
) -> polyflake_result {
    boundary(|| {
        let g = arg(generator)?;
        Ok(g.inner.wait_ready(Duration::from_millis(timeout_ms))?)
    })
}

/// The deadline of a `_within` call: `timeout_ms` from now (`None`: further than this system's
/// clock can name, so no deadline).
pub(crate) fn deadline_in(timeout_ms: u64) -> Option<Instant> {
    Instant::now().checked_add(Duration::from_millis(timeout_ms))
}

/// True once `deadline` has passed (never for `None`).
pub(crate) fn passed(deadline: Option<Instant>) -> bool {
    deadline.is_some_and(|d| Instant::now() >= d)
}

/// Run `call` on `g` with its waits cut at `deadline` (`None`: no hook, the plain call).
fn until<R>(deadline: Option<Instant>, call: impl FnOnce() -> R) -> R {
    match deadline {
        None => call(),
        Some(_) => interruptible(&|| passed(deadline), call),
    }
}

/// The body of `polyflake_next_id` and `polyflake_next_id_within`.
fn next_id_until(
    generator: *const polyflake_generator,
    out_id: *mut u64,
    deadline: Option<Instant>,
) -> polyflake_result {
    write_out(out_id, || {
        let g = arg(generator)?;
        Ok(until(deadline, || g.inner.next_id())?)
    })
}

/// The body of `polyflake_next_ids` and `polyflake_next_ids_within`.
fn next_ids_until(
    generator: *const polyflake_generator,
    buf: *mut u64,
    n: usize,
    deadline: Option<Instant>,
) -> polyflake_result {
    boundary(|| {
        let g = arg(generator)?;
        let buf = out(buf)?;
        let n = batch_len(n as i128)?;
        // SAFETY: `buf` is non-NULL and the caller promises `n` writable uint64_t there.
        let dst = unsafe { std::slice::from_raw_parts_mut(buf.as_ptr(), n) };
        Ok(until(deadline, || g.inner.next_ids(dst))?)
    })
}

/// Issue one ID into `*out_id`. Strict mode may wait (a rewind up to max_wait_ms, a spent
/// sequence up to the larger of max_wait_ms and 1 ms), then refuses with
/// POLYFLAKE_RESULT_CLOCK_MOVED_BACKWARDS, and with _CLOCK_JUMPED_AHEAD from a forward step;
/// monotonic mode borrows ahead instead and refuses with _LEAD_LIMIT_EXCEEDED past max_lead_ms.
/// A fixed node id's first call after its previous holder on this host was killed, or with the
/// clock stepped back under what that holder issued, waits for the restart guard (up to 10 s;
/// a monotonic generator borrows over it up to its lead limit), beyond that _LEASE_NOT_READY.
/// Also _TIMESTAMP_OVERFLOW, _USED_AFTER_FORK, _CLOCK_FAILED, _GENERATOR_CLOSED,
/// _CLOCK_UNSYNCHRONIZED (max_clock_error_ms), and a lease's _LEASE_NOT_READY, _LEASE_EXPIRED,
/// _LEASE_LOST; _INTERRUPTED when `polyflake_generator_interrupt` (or a `_within` deadline) cuts
/// its wait.
#[no_mangle]
pub extern "C" fn polyflake_next_id(
    generator: *const polyflake_generator,
    out_id: *mut u64,
) -> polyflake_result {
    next_id_until(generator, out_id, None)
}

/// `polyflake_next_id` whose waits end `timeout_ms` milliseconds after the call began: a call
/// still waiting then fails with POLYFLAKE_RESULT_INTERRUPTED (`*out_id` untouched). The deadline
/// is checked between the slices of a wait (at most 20 ms apart), so the call returns within
/// `timeout_ms` + 20 ms plus scheduling, never before `timeout_ms`; a call that needs no wait
/// issues whatever the timeout (0 included).
#[no_mangle]
pub extern "C" fn polyflake_next_id_within(
    generator: *const polyflake_generator,
    out_id: *mut u64,
    timeout_ms: u64,
) -> polyflake_result {
    next_id_until(generator, out_id, deadline_in(timeout_ms))
}

/// Fill `buf[0..n]` with `n` increasing IDs (0 <= n <= POLYFLAKE_MAX_BATCH; monotonic mode
/// reserves them in one atomic step, strict mode waits into the next milliseconds), `buf`
/// untouched on any error. Errors as `polyflake_next_id`, and POLYFLAKE_RESULT_INVALID_ARGUMENT
/// for n over the cap; NULL `buf`, even with n = 0: _NULL_PARAMETER. A strict batch larger
/// than a millisecond's sequence waits about n / 2^sequence_bits ms in all: bound it with
/// `polyflake_next_ids_within`, or cut it from another thread with
/// `polyflake_generator_interrupt`.
#[no_mangle]
pub extern "C" fn polyflake_next_ids(
    generator: *const polyflake_generator,
    buf: *mut u64,
    n: usize,
) -> polyflake_result {
    next_ids_until(generator, buf, n, None)
}

/// `polyflake_next_ids` whose waits end `timeout_ms` milliseconds after the call began: a batch
/// still waiting then fails with POLYFLAKE_RESULT_INTERRUPTED, `buf` untouched; the IDs it had
/// reserved are never issued (a gap, never a duplicate). Checked between the slices of a wait
/// (at most 20 ms apart): the call returns within `timeout_ms` + 20 ms plus scheduling, never
/// before `timeout_ms`.
#[no_mangle]
pub extern "C" fn polyflake_next_ids_within(
    generator: *const polyflake_generator,
    buf: *mut u64,
    n: usize,
    timeout_ms: u64,
) -> polyflake_result {
    next_ids_until(generator, buf, n, deadline_in(timeout_ms))
}

/// Cut short every call on this generator that is in flight now (any thread): each one that
/// waits (a strict rewind, a spent sequence, a batch spanning milliseconds) fails with
/// POLYFLAKE_RESULT_INTERRUPTED within 20 ms, having written nothing; calls that begin after
/// this one returns are not affected. Safe from any thread, also while other threads are inside
/// calls on the handle (not after `_free`, like every function). Returns POLYFLAKE_RESULT_OK
/// (also on a closed generator).
#[no_mangle]
pub extern "C" fn polyflake_generator_interrupt(
    generator: *const polyflake_generator,
) -> polyflake_result {
    boundary(|| {
        arg(generator)?.inner.interrupt_waits();
        Ok(())
    })
}

/// Decode `id` with this generator's layout and epoch into `*out_decoded`.
/// POLYFLAKE_RESULT_INVALID_ID for `id` >= 2^63.
#[no_mangle]
pub extern "C" fn polyflake_generator_decode(
    generator: *const polyflake_generator,
    id: u64,
    out_decoded: *mut polyflake_decoded,
) -> polyflake_result {
    write_out(out_decoded, || Ok(arg(generator)?.inner.decode(id)?.into()))
}

/// Store this generator's settings, as the core holds them, in `*out_config` (`node_id`: the node
/// id it holds, whatever its source). `restart_guard`, `state_dir` and `host_scope` are not kept:
/// POLYFLAKE_RESTART_GUARD_DEFAULT and NULL (health says what the guard does: a `host` lease, or
/// `restart_guard_note`).
#[no_mangle]
pub extern "C" fn polyflake_generator_config(
    generator: *const polyflake_generator,
    out_config: *mut polyflake_config,
) -> polyflake_result {
    write_out(out_config, || Ok(config_of(&arg(generator)?.inner)))
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::clock::{polyflake_clock_free, polyflake_user_clock_new};
    use polyflake_core::{
        Layout, DEFAULT_FORWARD_CONFIRM_MS, DEFAULT_MAX_FORWARD_STEP_MS, DEFAULT_MAX_LEAD_MS,
        DEFAULT_MAX_WAIT_MS,
    };
    use std::ffi::{c_char, c_void};
    use std::sync::atomic::{AtomicI64, AtomicUsize, Ordering};

    #[test]
    fn defaults_are_the_core_defaults_and_round_trip() {
        let mut cfg = crate::boundary::tests::init(polyflake_config_init);
        assert_eq!(cfg.max_wait_ms, DEFAULT_MAX_WAIT_MS);
        assert_eq!(cfg.layout.to_core().unwrap(), Layout::DEFAULT);
        assert_eq!(cfg.mode, polyflake_mode::Strict as u32);
        assert_eq!(cfg.epoch_ms, DEFAULT_EPOCH_MS);
        // The lead limit is on by default (has_max_lead 1); 0 stays "unbounded".
        assert_eq!(
            (cfg.node_id, cfg.has_max_lead, cfg.max_lead_ms),
            (0, 1, DEFAULT_MAX_LEAD_MS)
        );
        assert_eq!((cfg.has_max_clock_error, cfg.max_clock_error_ms), (0, 0));
        assert_eq!(cfg.restart_guard, polyflake_restart_guard::Default as u32);
        assert!(cfg.state_dir.is_null() && cfg.host_scope.is_null());
        assert_eq!(cfg.max_forward_step_ms, DEFAULT_MAX_FORWARD_STEP_MS);
        assert_eq!(cfg.forward_confirm_ms, DEFAULT_FORWARD_CONFIRM_MS);
        assert_eq!(cfg.clock_source, polyflake_clock_source::Precise as u32);
        let monotonic = Mode::ALL.iter().position(|m| *m == Mode::Monotonic);
        assert_eq!(monotonic, Some(polyflake_mode::Monotonic as usize));
        cfg.node_id = 905;
        cfg.host_scope = c"ffi-c-unit".as_ptr();
        let mut g = std::ptr::null_mut();
        let clock = std::ptr::null();
        assert_eq!(
            polyflake_generator_new(&cfg, clock, &mut g),
            polyflake_result::Ok
        );
        let mut back = cfg;
        back.node_id = 0;
        assert_eq!(
            polyflake_generator_config(g, &mut back),
            polyflake_result::Ok
        );
        // The scope is not reported back (health's lease says where the mark is).
        cfg.host_scope = std::ptr::null();
        assert_eq!(back, cfg, "what the core holds is what init gave");
        polyflake_generator_free(g);
    }

    #[test]
    fn the_host_fields_reach_the_core_and_bad_ones_echo_what_was_sent() {
        let mut cfg = crate::boundary::tests::init(polyflake_config_init);
        let (guard, scope) = cfg.host_options().unwrap();
        assert_eq!(guard, RestartGuardOptions::default());
        assert_eq!(scope, None);
        cfg.restart_guard = polyflake_restart_guard::Off as u32;
        cfg.state_dir = c"/srv/ids/state".as_ptr();
        cfg.host_scope = c"billing-v2".as_ptr();
        let (guard, scope) = cfg.host_options().unwrap();
        assert_eq!(guard.mode, Some(RestartGuard::Off));
        assert_eq!(guard.state_dir, Some(PathBuf::from("/srv/ids/state")));
        assert_eq!(scope.as_deref(), Some("billing-v2"));
        for (code, want) in [
            (polyflake_restart_guard::Auto, RestartGuard::Auto),
            (polyflake_restart_guard::Required, RestartGuard::Required),
        ] {
            cfg.restart_guard = code as u32;
            assert_eq!(cfg.host_options().unwrap().0.mode, Some(want));
        }
        cfg.restart_guard = 4;
        assert_eq!(
            cfg.host_options().unwrap_err(),
            polyflake_result::InvalidArgument
        );
        let msg = crate::error::last_error();
        assert!(
            msg.contains(
                "4 is not a polyflake_restart_guard (0 default, 1 auto, 2 required, 3 off)"
            ),
            "{msg}"
        );
        cfg.restart_guard = 0;
        cfg.host_scope = c"billing\xff".as_ptr();
        assert_eq!(
            cfg.host_options().unwrap_err(),
            polyflake_result::InvalidArgument
        );
        let msg = crate::error::last_error();
        assert!(
            msg.contains(r#""billing\xFF""#) && msg.contains("UTF-8"),
            "{msg}"
        );
        // A scope the core refuses, echoed by the core.
        cfg.host_scope = c"two words".as_ptr();
        cfg.node_id = 908;
        let mut g = std::ptr::null_mut();
        assert_eq!(
            polyflake_generator_new(&cfg, std::ptr::null(), &mut g),
            polyflake_result::InvalidArgument
        );
        assert!(crate::error::last_error().contains("\"two words\""));
        // The kernel's bound: out of range, and with an injected clock, refused by the core.
        cfg.host_scope = std::ptr::null();
        cfg.has_max_clock_error = 1;
        cfg.max_clock_error_ms = 16_001;
        assert_eq!(
            polyflake_generator_new(&cfg, std::ptr::null(), &mut g),
            polyflake_result::InvalidArgument
        );
        assert!(crate::error::last_error().contains("16001"));
        assert!(g.is_null());
    }

    #[test]
    fn a_deadline_cuts_a_strict_batch_and_writes_nothing() {
        let mut cfg = crate::boundary::tests::init(polyflake_config_init);
        cfg.layout = Layout::new(41, 21, 1).unwrap().into();
        cfg.node_id = 1_000_000;
        let mut g = std::ptr::null_mut();
        assert_eq!(
            polyflake_generator_new(&cfg, std::ptr::null(), &mut g),
            polyflake_result::Ok
        );
        let mut buf = vec![7u64; 20_000];
        let t = Instant::now();
        let r = polyflake_next_ids_within(g, buf.as_mut_ptr(), buf.len(), 50);
        let took = t.elapsed();
        assert_eq!(r, polyflake_result::Interrupted);
        assert!(took >= Duration::from_millis(50), "{took:?}");
        assert!(buf.iter().all(|v| *v == 7), "nothing written");
        assert!(crate::error::last_error().contains("interrupted after waiting"));
        // The farthest deadline (u64::MAX ms): a short batch issues.
        assert_eq!(
            polyflake_next_ids_within(g, buf.as_mut_ptr(), 4, u64::MAX),
            polyflake_result::Ok
        );
        assert_eq!(polyflake_generator_interrupt(g), polyflake_result::Ok);
        assert_eq!(
            polyflake_generator_interrupt(std::ptr::null()),
            polyflake_result::NullParameter
        );
        polyflake_generator_free(g);
    }

    #[test]
    fn a_code_out_of_range_names_the_field_and_its_codes() {
        let e = pick(Mode::ALL, Mode::name, 2, "mode").unwrap_err();
        assert_eq!(e, polyflake_result::InvalidArgument);
        let msg = crate::error::last_error();
        assert!(
            msg.contains("2 is not a polyflake_mode (0 strict, 1 monotonic)"),
            "{msg}"
        );
        pick(ClockSource::ALL, ClockSource::name, 7, "clock_source").unwrap_err();
        let msg = crate::error::last_error();
        assert!(
            msg.contains("7 is not a polyflake_clock_source (0 precise, 1 coarse)"),
            "{msg}"
        );
    }

    /// A context: the reading to give (negative: fail), and how often it was freed.
    struct Ctx {
        ms: AtomicI64,
        freed: AtomicUsize,
    }

    extern "C" fn read(ctx: *mut c_void, out: *mut i64, why: *mut c_char, len: usize) -> i32 {
        let ctx = unsafe { &*(ctx as *const Ctx) };
        let ms = ctx.ms.load(Ordering::SeqCst);
        if ms < 0 {
            let text = b"the receiver lost its fix\0";
            assert!(len >= text.len());
            unsafe { std::ptr::copy_nonoverlapping(text.as_ptr().cast(), why, text.len()) };
            return 7;
        }
        unsafe { *out = ms };
        0
    }

    extern "C" fn free(ctx: *mut c_void) {
        unsafe { &*(ctx as *const Ctx) }
            .freed
            .fetch_add(1, Ordering::SeqCst);
    }

    #[test]
    fn a_user_clock_reads_its_function_and_frees_its_context_once() {
        let ctx = Ctx {
            ms: AtomicI64::new(1_800_000_000_000),
            freed: AtomicUsize::new(0),
        };
        let p = &ctx as *const Ctx as *mut c_void;
        let mut clock = std::ptr::null_mut();
        assert_eq!(
            polyflake_user_clock_new(None, Some(free), p, &mut clock),
            polyflake_result::NullParameter
        );
        assert_eq!(ctx.freed.load(Ordering::SeqCst), 0);
        assert_eq!(
            polyflake_user_clock_new(Some(read), Some(free), p, &mut clock),
            polyflake_result::Ok
        );
        let mut cfg = crate::boundary::tests::init(polyflake_config_init);
        cfg.node_id = 909;
        let mut g = std::ptr::null_mut();
        assert_eq!(
            polyflake_generator_new(&cfg, clock, &mut g),
            polyflake_result::Ok
        );
        polyflake_clock_free(clock); // the generator keeps its own reference
        assert_eq!(ctx.freed.load(Ordering::SeqCst), 0);
        let mut id = 0u64;
        assert_eq!(polyflake_next_id(g, &mut id), polyflake_result::Ok);
        let mut d = std::mem::MaybeUninit::uninit();
        polyflake_generator_decode(g, id, d.as_mut_ptr());
        assert_eq!(unsafe { d.assume_init() }.timestamp_ms, 1_800_000_000_000);
        ctx.ms.store(-1, Ordering::SeqCst);
        assert_eq!(polyflake_next_id(g, &mut id), polyflake_result::ClockFailed);
        let msg = crate::error::last_error();
        assert!(
            msg.contains("returned 7: the receiver lost its fix"),
            "{msg}"
        );
        polyflake_generator_free(g);
        assert_eq!(ctx.freed.load(Ordering::SeqCst), 1);
    }
}
