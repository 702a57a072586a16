//! The test clocks: `polyflake_manual_clock` and `polyflake_scripted_clock`.

use crate::boundary::{arg, boundary, boundary_void, out};
use crate::result::polyflake_result;
use polyflake_core::{ManualClock, ScriptedClock};
use std::sync::Arc;

/// A clock that only moves when told to (for tests and simulations): an opaque handle.
///
/// A generator made with it (`polyflake_generator_new_with_manual_clock`) shares its reading, so
/// `polyflake_manual_clock_set` / `_advance` move the time that generator sees. Thread-safe.
pub struct polyflake_manual_clock {
    pub(crate) inner: ManualClock,
}

/// A clock that returns prepared readings in order, then ticks forward 1 ms per read: an opaque
/// handle. Generators made with it share its script (each reading is consumed once, whoever
/// reads it). Thread-safe.
pub struct polyflake_scripted_clock {
    pub(crate) inner: Arc<ScriptedClock>,
}

/// Make a manual clock reading `start_ms` (Unix milliseconds) and store the new handle in `*out`.
///
/// Ownership: the caller owns the handle and frees it with `polyflake_manual_clock_free`.
/// Generators made from it keep their own reference, so it may be freed before them.
/// NULL `out`: POLYFLAKE_RESULT_NULL_PARAMETER.
#[no_mangle]
pub extern "C" fn polyflake_manual_clock_new(
    start_ms: i64,
    out_clock: *mut *mut polyflake_manual_clock,
) -> polyflake_result {
    boundary(|| {
        let dst = out(out_clock)?;
        let handle = Box::new(polyflake_manual_clock {
            inner: ManualClock::new(start_ms),
        });
        // SAFETY: `dst` is non-NULL and the caller promises it is writable.
        unsafe { dst.write(Box::into_raw(handle)) };
        Ok(())
    })
}

/// Set the clock's reading to `ms` (backwards is allowed: that is a rewind). NULL `clock`:
/// POLYFLAKE_RESULT_NULL_PARAMETER. Thread-safe.
#[no_mangle]
pub extern "C" fn polyflake_manual_clock_set(
    clock: *const polyflake_manual_clock,
    ms: i64,
) -> polyflake_result {
    boundary(|| {
        arg(clock)?.inner.set(ms);
        Ok(())
    })
}

/// Move the clock's reading by `delta_ms` (negative moves it back). NULL `clock`:
/// POLYFLAKE_RESULT_NULL_PARAMETER. Thread-safe.
#[no_mangle]
pub extern "C" fn polyflake_manual_clock_advance(
    clock: *const polyflake_manual_clock,
    delta_ms: i64,
) -> polyflake_result {
    boundary(|| {
        arg(clock)?.inner.advance(delta_ms);
        Ok(())
    })
}

/// Store the clock's current reading in `*out_ms`. NULL `clock` or `out_ms`:
/// POLYFLAKE_RESULT_NULL_PARAMETER. Thread-safe.
#[no_mangle]
pub extern "C" fn polyflake_manual_clock_get(
    clock: *const polyflake_manual_clock,
    out_ms: *mut i64,
) -> polyflake_result {
    boundary(|| {
        let clock = arg(clock)?;
        let dst = out(out_ms)?;
        // SAFETY: `dst` is non-NULL and the caller promises it is writable.
        unsafe { dst.write(clock.inner.get()) };
        Ok(())
    })
}

/// Free a manual clock handle. NULL is accepted and does nothing. Generators made from the
/// clock keep working (they hold their own reference). Do not use the handle afterwards, and
/// do not free it while another thread is still calling a function on it.
#[no_mangle]
pub extern "C" fn polyflake_manual_clock_free(clock: *mut polyflake_manual_clock) {
    boundary_void(|| {
        if !clock.is_null() {
            // SAFETY: a non-NULL handle came from polyflake_manual_clock_new and is freed once.
            drop(unsafe { Box::from_raw(clock) });
        }
    })
}

/// Make a scripted clock that returns `values[0..n]` in order, then the last value plus 1, 2,
/// ... (one millisecond per read; with n == 0 it reads 1, 2, 3, ...), and store the new handle
/// in `*out`. The values are copied: the array may be freed after the call.
///
/// Ownership: the caller owns the handle and frees it with `polyflake_scripted_clock_free`;
/// generators made from it keep their own reference. `values` may be NULL only when `n` is 0;
/// otherwise NULL `values` or NULL `out`: POLYFLAKE_RESULT_NULL_PARAMETER.
#[no_mangle]
pub extern "C" fn polyflake_scripted_clock_new(
    values: *const i64,
    n: usize,
    out_clock: *mut *mut polyflake_scripted_clock,
) -> polyflake_result {
    boundary(|| {
        let dst = out(out_clock)?;
        let script = if n == 0 {
            Vec::new()
        } else {
            let first = arg(values)?;
            // SAFETY: the caller promises `values` points to `n` readable int64_t.
            unsafe { std::slice::from_raw_parts(first as *const i64, n) }.to_vec()
        };
        let handle = Box::new(polyflake_scripted_clock {
            inner: Arc::new(ScriptedClock::new(script)),
        });
        // SAFETY: `dst` is non-NULL and the caller promises it is writable.
        unsafe { dst.write(Box::into_raw(handle)) };
        Ok(())
    })
}

/// Free a scripted clock handle. NULL is accepted and does nothing. Generators made from the
/// clock keep working. Do not use the handle afterwards, and do not free it while another
/// thread is still calling a function on it.
#[no_mangle]
pub extern "C" fn polyflake_scripted_clock_free(clock: *mut polyflake_scripted_clock) {
    boundary_void(|| {
        if !clock.is_null() {
            // SAFETY: a non-NULL handle came from polyflake_scripted_clock_new and is freed once.
            drop(unsafe { Box::from_raw(clock) });
        }
    })
}
