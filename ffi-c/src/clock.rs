//! The clocks a generator can read instead of the system clock, behind one handle type
//! `polyflake_clock` that every generator constructor takes (NULL for the system clock): the
//! test clocks (manual, scripted) and a user's own time source (a function pointer).

use crate::boundary::{arg, boundary, free_handle, new_handle, write_out};
use crate::error::polyflake_result;
use polyflake_core::{Clock, ClockError, Error, ManualClock, ScriptedClock};
use std::ffi::{c_char, c_void, CStr};
use std::sync::Arc;

/// A clock instead of the system clock, for any generator constructor (NULL there: the system
/// clock): an opaque handle. A test clock (manual: it moves only when told to; scripted:
/// prepared readings in order) makes generators that are exempt from the
/// one-generator-per-node-id rule. A user clock (`polyflake_user_clock_new`) keeps that rule in
/// this process but not host-wide. Generators keep their own reference (free the handle before
/// them if you like).
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

/// The manual clock behind `clock`; a scripted or user clock is an INVALID_ARGUMENT.
fn manual<'a>(clock: *const polyflake_clock) -> Result<&'a ManualClock, polyflake_result> {
    arg(clock)?.manual.as_ref().ok_or_else(|| {
        Error::InvalidArgument {
            name: "clock",
            reason: "only a manual clock can be set, advanced, elapsed, read or given a tick"
                .to_string(),
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
/// not move). A scripted or user clock: POLYFLAKE_RESULT_INVALID_ARGUMENT.
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

/// Store the clock's wall reading in `*out_ms`. A scripted or user clock:
/// POLYFLAKE_RESULT_INVALID_ARGUMENT.
#[no_mangle]
pub extern "C" fn polyflake_manual_clock_get(
    clock: *const polyflake_clock,
    out_ms: *mut i64,
) -> polyflake_result {
    write_out(out_ms, || Ok(manual(clock)?.get()))
}

/// A user's time source (`polyflake_user_clock_new`): store the time now, in Unix milliseconds,
/// in `*out_ms` and return 0. Any other value is a failed reading: the call that read the clock
/// fails with POLYFLAKE_RESULT_CLOCK_FAILED, whose message gives the value and what the function
/// wrote into `why` (a NUL-terminated reason, at most `why_len` bytes with the NUL; `why` starts
/// empty). Called from any thread that calls the generator, and from a lease's renewal thread:
/// it must be thread-safe, and must not throw, unwind or longjmp out.
pub type polyflake_clock_read_fn = Option<
    extern "C" fn(context: *mut c_void, out_ms: *mut i64, why: *mut c_char, why_len: usize) -> i32,
>;

/// Called once with the user clock's `context` when the handle and every generator made with it
/// are gone (`polyflake_user_clock_new`), from the thread that let go of the last one.
pub type polyflake_clock_free_fn = Option<extern "C" fn(context: *mut c_void)>;

/// Bytes of the reason a user clock's read function may give, NUL included.
const WHY_LEN: usize = 256;

/// A user's clock: a read function, its context, and what frees the context.
struct UserClock {
    read: extern "C" fn(*mut c_void, *mut i64, *mut c_char, usize) -> i32,
    free: polyflake_clock_free_fn,
    context: *mut c_void,
}

// SAFETY: the caller of `polyflake_user_clock_new` promises a read function callable from any
// thread with this context, and a free function callable from any thread once.
unsafe impl Send for UserClock {}
unsafe impl Sync for UserClock {}

impl Clock for UserClock {
    fn now_ms(&self) -> Result<i64, ClockError> {
        let mut ms = 0i64;
        let mut why = [0 as c_char; WHY_LEN];
        match (self.read)(self.context, &mut ms, why.as_mut_ptr(), WHY_LEN) {
            0 => Ok(ms),
            rc => {
                why[WHY_LEN - 1] = 0; // whatever the function wrote, the text ends here
                                      // SAFETY: NUL-terminated within the array.
                let why = unsafe { CStr::from_ptr(why.as_ptr()) }.to_string_lossy();
                Err(ClockError(match why.is_empty() {
                    true => format!("the user clock's read function returned {rc}"),
                    false => format!("the user clock's read function returned {rc}: {why}"),
                }))
            }
        }
    }
}

impl Drop for UserClock {
    fn drop(&mut self) {
        if let Some(free) = self.free {
            free(self.context);
        }
    }
}

/// Make a clock that reads `read(context, &ms)` into `*out_clock` (`free(context)` runs once
/// when the handle and every generator made with it are gone; `free` may be NULL); the caller
/// frees the handle with `polyflake_clock_free`. For a time source of your own that follows
/// real time (PTP, a GPS receiver, a clock read from another machine): its times are not the host's,
/// so a generator on it holds its node id in this process only (a second one here is
/// POLYFLAKE_RESULT_NODE_ID_IN_USE) and keeps no restart-guard mark; another process with the
/// same node id on its own user clock runs. To drive time by hand in a test, use the manual
/// clock. NULL `read`: POLYFLAKE_RESULT_NULL_PARAMETER (`free` is not called).
#[no_mangle]
pub extern "C" fn polyflake_user_clock_new(
    read: polyflake_clock_read_fn,
    free: polyflake_clock_free_fn,
    context: *mut c_void,
    out_clock: *mut *mut polyflake_clock,
) -> polyflake_result {
    new_handle(out_clock, || {
        let read = read.ok_or(polyflake_result::NullParameter)?;
        Ok(polyflake_clock {
            shared: Arc::new(UserClock {
                read,
                free,
                context,
            }),
            manual: None,
        })
    })
}

/// Free a clock handle (NULL does nothing); generators made with it keep working. Do not use
/// the handle afterwards, nor free it while another thread still uses it.
#[no_mangle]
pub extern "C" fn polyflake_clock_free(clock: *mut polyflake_clock) {
    free_handle(clock)
}
