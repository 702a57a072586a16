//! The test clocks, behind one handle type `polyflake_clock` that every generator constructor
//! takes (NULL for the system clock).

use crate::boundary::{arg, boundary, free_handle, new_handle, write_out};
use crate::result::polyflake_result;
use polyflake_core::{Clock, Error, ManualClock, ScriptedClock};
use std::sync::Arc;

/// A clock a test or simulation controls: an opaque handle, made by `polyflake_manual_clock_new`
/// (it moves only when told to) or `polyflake_scripted_clock_new` (prepared readings in order).
/// Pass it to any `polyflake_generator_new*` function; NULL there means the system clock.
/// Generators on it share its readings and keep their own reference, so it may be freed
/// (`polyflake_clock_free`) before them. Generators on a test clock are exempt from the
/// one-generator-per-node-id rule.
pub struct polyflake_clock {
    pub(crate) shared: Arc<dyn Clock>,
    manual: Option<ManualClock>,
}

/// Make a manual clock reading `start_ms` (Unix milliseconds; its elapsed-time reading starts at 0)
/// and store the new handle in `*out_clock`. Ownership: the caller frees it with
/// `polyflake_clock_free`.
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

/// Make a scripted clock that returns `values[0..n]` in order, then the last value plus 1, 2, ...
/// (one millisecond per read; with n == 0 it reads 1, 2, 3, ...; each read is also one millisecond
/// of elapsed time), and store the new handle in `*out_clock`. The values are copied. Ownership:
/// the caller frees it with `polyflake_clock_free`. `values` may be NULL only when `n` is 0.
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

/// STEP the wall reading by `delta_ms` (negative moves it back; elapsed time does not move:
/// that is `polyflake_manual_clock_elapse`). Errors as `polyflake_manual_clock_set`.
#[no_mangle]
pub extern "C" fn polyflake_manual_clock_advance(
    clock: *const polyflake_clock,
    delta_ms: i64,
) -> polyflake_result {
    with_manual(clock, |c| c.advance(delta_ms))
}

/// Let `ms` milliseconds pass: the wall reading and the elapsed-time (boot clock) reading both
/// move forward by it, so it is never mistaken for a forward step. Errors as
/// `polyflake_manual_clock_set`.
#[no_mangle]
pub extern "C" fn polyflake_manual_clock_elapse(
    clock: *const polyflake_clock,
    ms: u64,
) -> polyflake_result {
    with_manual(clock, |c| c.elapse(ms))
}

/// Model a tick-based coarse reading (what POLYFLAKE_CLOCK_SOURCE_COARSE reads): from now on the
/// clock's coarse reading is its wall reading rounded down to a multiple of `tick_ms` (1 by
/// default: coarse = precise; below 1 is taken as 1). Set it before making a generator on the
/// clock: a generator decides when it is made whether the clock has a coarse reading of its own.
/// Errors as `polyflake_manual_clock_set`.
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

/// Free a clock handle. NULL is accepted and does nothing. Generators made with it keep
/// working. Do not use the handle afterwards, nor free it while another thread still uses it.
#[no_mangle]
pub extern "C" fn polyflake_clock_free(clock: *mut polyflake_clock) {
    free_handle(clock)
}
