//! The test clocks, behind one handle type `polyflake_clock` that every generator constructor
//! takes (NULL for the system clock).

use crate::boundary::{arg, boundary, free_handle, new_handle, write_out};
use crate::error::polyflake_result;
use polyflake_core::{Clock, Error, ManualClock, ScriptedClock};
use std::sync::Arc;

/// A clock a test or simulation controls: an opaque handle, manual (it moves only when told to)
/// or scripted (prepared readings in order), for any generator constructor (NULL there: the
/// system clock). Generators keep their own reference (free it before them if you like) and are
/// exempt from the one-generator-per-node-id rule.
pub struct polyflake_clock {
    pub(crate) shared: Arc<dyn Clock>,
    manual: Option<ManualClock>,
}

/// Make a manual clock reading `start_ms` (Unix ms; its elapsed-time reading starts at 0) into
/// `*out_clock`; the caller frees it with `polyflake_clock_free`.
#[no_mangle]
pub extern "C" fn polyflake_manual_clock_new(
    start_ms: i64,
    out_clock: *mut *mut polyflake_clock,
) -> polyflake_result {
    new_handle(out_clock, || {
        let manual = ManualClock::new(start_ms);
        let shared = Arc::new(manual.clone());
        Ok(polyflake_clock {
            shared,
            manual: Some(manual),
        })
    })
}

/// Make a scripted clock reading `values[0..n]` (copied; NULL only when n is 0) in order, then
/// the last value plus 1, 2, ... (with n == 0: 1, 2, 3, ...; each read is also one ms of elapsed
/// time), into `*out_clock`; the caller frees it with `polyflake_clock_free`.
#[no_mangle]
pub extern "C" fn polyflake_scripted_clock_new(
    values: *const i64,
    n: usize,
    out_clock: *mut *mut polyflake_clock,
) -> polyflake_result {
    new_handle(out_clock, || {
        let script = match n {
            0 => Vec::new(),
            // SAFETY: non-NULL (checked), and the caller promises `n` readable int64_t there.
            _ => unsafe { std::slice::from_raw_parts(arg(values)?, n) }.to_vec(),
        };
        Ok(polyflake_clock {
            shared: Arc::new(ScriptedClock::new(script)),
            manual: None,
        })
    })
}

/// The manual clock behind `clock`; a scripted one is an INVALID_ARGUMENT.
fn manual<'a>(clock: *const polyflake_clock) -> Result<&'a ManualClock, polyflake_result> {
    arg(clock)?.manual.as_ref().ok_or_else(|| {
        Error::InvalidArgument {
            name: "clock",
            reason: "a scripted clock cannot be set, advanced, elapsed or given a tick".to_string(),
        }
        .into()
    })
}

/// Run `f` on the manual clock behind `clock`, inside the boundary.
fn with_manual(clock: *const polyflake_clock, f: impl FnOnce(&ManualClock)) -> polyflake_result {
    boundary(|| {
        f(manual(clock)?);
        Ok(())
    })
}

/// STEP the wall reading to `ms` (backwards is a rewind, forwards a forward step; elapsed time does
/// not move). A scripted clock: POLYFLAKE_RESULT_INVALID_ARGUMENT.
#[no_mangle]
pub extern "C" fn polyflake_manual_clock_set(
    clock: *const polyflake_clock,
    ms: i64,
) -> polyflake_result {
    with_manual(clock, |c| c.set(ms))
}

/// STEP the wall reading by `delta_ms` (negative: back); as `polyflake_manual_clock_set`.
#[no_mangle]
pub extern "C" fn polyflake_manual_clock_advance(
    clock: *const polyflake_clock,
    delta_ms: i64,
) -> polyflake_result {
    with_manual(clock, |c| c.advance(delta_ms))
}

/// Let `ms` milliseconds pass: the wall and the elapsed-time readings both move (never taken
/// for a forward step). Errors as `polyflake_manual_clock_set`.
#[no_mangle]
pub extern "C" fn polyflake_manual_clock_elapse(
    clock: *const polyflake_clock,
    ms: u64,
) -> polyflake_result {
    with_manual(clock, |c| c.elapse(ms))
}

/// Give the clock a coarse reading (what POLYFLAKE_CLOCK_SOURCE_COARSE reads): its wall reading
/// rounded down to a multiple of `tick_ms` (default 1, coarse = precise; below 1 is 1). Set it
/// before making generators on the clock. Errors as `polyflake_manual_clock_set`.
#[no_mangle]
pub extern "C" fn polyflake_manual_clock_set_tick_ms(
    clock: *const polyflake_clock,
    tick_ms: i64,
) -> polyflake_result {
    with_manual(clock, |c| c.set_tick_ms(tick_ms))
}

/// Store the clock's wall reading in `*out_ms`. A scripted clock: POLYFLAKE_RESULT_INVALID_ARGUMENT.
#[no_mangle]
pub extern "C" fn polyflake_manual_clock_get(
    clock: *const polyflake_clock,
    out_ms: *mut i64,
) -> polyflake_result {
    write_out(out_ms, || Ok(manual(clock)?.get()))
}

/// Free a clock handle (NULL does nothing); generators made with it keep working. Do not use
/// the handle afterwards, nor free it while another thread still uses it.
#[no_mangle]
pub extern "C" fn polyflake_clock_free(clock: *mut polyflake_clock) {
    free_handle(clock)
}
