//! Interruptible waits: every wait inside the core (a strict rewind, a spent sequence, a batch
//! that spans milliseconds, the restart guard) sleeps in slices of at most [`SLICE`] and between
//! them asks whether to stop. Two things can stop it: the hook a binding installs for the calls
//! it makes on one thread ([`interruptible`]: Python's pending signals, Node's terminating
//! isolate), and [`Generator::interrupt_waits`](crate::Generator::interrupt_waits) on the
//! generator (the C ABI's cancel call, the service's shutdown). A stopped call fails with
//! [`Error::Interrupted`](crate::Error::Interrupted) and issues nothing the caller does not get.
//!
//! ## Decisions
//!
//! - **The interrupt counter cuts only the waits of that moment**:
//!   `Generator::interrupt_waits` stops every call waiting when it is called and none that
//!   begins later. The hook is a thread-local that lives exactly as long as one call. A cut call
//!   fails with `Interrupted` (category unavailable) after at most one slice.
//! - **The hook is asked at most once per slice** (and at the first wait), even when the call
//!   sleeps a millisecond at a time (a strict batch on a 1-bit sequence), so a hook that takes a
//!   runtime lock (Python's GIL, to run signal handlers) costs at most 50 acquisitions a second.
//! - **A cut strict batch returns nothing and writes nothing**; the runs it had reserved stay
//!   reserved (the state word is past them) and are never issued: a gap, never a duplicate.
//! - **Per binding.** Python runs `check_signals` (with the GIL, on the main thread), so Ctrl-C
//!   raises `KeyboardInterrupt` within a slice (the signal's own exception, never
//!   `Interrupted`), and a cancelled asyncio task cuts its worker thread's wait. Node's hook runs
//!   a trivial script, which Node refuses once a Worker is terminating; a pool batch is cut by a
//!   timer on the Worker's loop or a `process.on('exit')` listener. The service calls
//!   `interrupt_waits` on shutdown. The C ABI has `_within` forms with a per-call deadline and a
//!   `polyflake_*_interrupt` per handle (the 128-bit generators too); Go's `...Context` forms
//!   turn a context's deadline into the C deadline and its cancellation into interrupt calls.

use std::cell::Cell;
use std::time::{Duration, Instant};

/// The longest sleep between two checks of the hook.
pub const SLICE: Duration = Duration::from_millis(20);

/// A hook installed for the extent of one [`interruptible`] call on this thread.
type Hook = *const (dyn Fn() -> bool + 'static);

thread_local! {
    static HOOK: Cell<Option<Hook>> = const { Cell::new(None) };
}

/// Run `f` with `stop` asked during every wait inside it on this thread (at most every
/// [`SLICE`]); once `stop` returns true, the waiting call fails with
/// [`Error::Interrupted`](crate::Error::Interrupted). Calls that do not wait never ask it.
/// Nested calls: the innermost hook applies; the outer one is back when it returns.
///
/// ```
/// use polyflake::{interruptible, ErrorKind, Generator, ManualClock};
/// let clock = ManualClock::new(1_704_167_201_000);
/// let g = Generator::builder(7).max_wait_ms(60_000.0).clock(clock.clone()).build().unwrap();
/// g.next_id().unwrap();
/// clock.advance(-30_000); // a rewind inside the budget: next_id would wait 30 s
/// let err = interruptible(&|| true, || g.next_id()).unwrap_err();
/// assert_eq!(err.kind(), ErrorKind::Interrupted);
/// ```
pub fn interruptible<R>(stop: &dyn Fn() -> bool, f: impl FnOnce() -> R) -> R {
    struct Restore(Option<Hook>);
    impl Drop for Restore {
        fn drop(&mut self) {
            HOOK.with(|h| h.set(self.0));
        }
    }
    // SAFETY: the 'static is a lie told only to the thread-local: the pointer is removed (by
    // `Restore`, also on unwind) before `stop` goes out of scope, and only this thread reads it.
    let hook: Hook =
        unsafe { std::mem::transmute::<*const (dyn Fn() -> bool + '_), Hook>(stop as *const _) };
    let _restore = Restore(HOOK.with(|h| h.replace(Some(hook))));
    f()
}

/// Ask this thread's hook (if any).
fn hook_says_stop() -> bool {
    match HOOK.with(|h| h.get()) {
        // SAFETY: a hook is installed only while its `interruptible` frame lives (see there).
        Some(hook) => unsafe { (*hook)() },
        None => false,
    }
}

/// The bookkeeping of one call's waits: when the hook was last asked.
#[derive(Debug, Default)]
pub(crate) struct Checks {
    last: Option<Instant>,
}

impl Checks {
    /// True when the hook (asked at most every [`SLICE`], and on the first wait) says stop.
    pub(crate) fn stop_now(&mut self) -> bool {
        let now = Instant::now();
        match self.last {
            Some(last) if now.duration_since(last) < SLICE => false,
            _ => {
                self.last = Some(now);
                hook_says_stop()
            }
        }
    }

    /// Sleep `d` in slices, asking `stopped` (the generator's own cancel) and the hook between
    /// them. Returns false when told to stop (the sleep is cut short).
    pub(crate) fn sleep(&mut self, d: Duration, stopped: impl Fn() -> bool) -> bool {
        let end = Instant::now() + d;
        loop {
            if stopped() || self.stop_now() {
                return false;
            }
            let left = end.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return true;
            }
            std::thread::sleep(left.min(SLICE));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hook_is_scoped_to_its_call() {
        assert!(!hook_says_stop());
        let inner = interruptible(&|| true, || {
            assert!(hook_says_stop());
            interruptible(&|| false, hook_says_stop)
        });
        assert!(!inner);
        assert!(!hook_says_stop());
    }

    #[test]
    fn a_sleep_is_cut_within_a_slice() {
        let t = Instant::now();
        let flag = std::sync::atomic::AtomicBool::new(false);
        std::thread::scope(|s| {
            s.spawn(|| {
                std::thread::sleep(Duration::from_millis(30));
                flag.store(true, std::sync::atomic::Ordering::SeqCst);
            });
            let done = Checks::default().sleep(Duration::from_secs(10), || {
                flag.load(std::sync::atomic::Ordering::SeqCst)
            });
            assert!(!done);
        });
        // 30 ms plus at most a slice, with a wide margin for a loaded machine.
        assert!(t.elapsed() < Duration::from_secs(5), "{:?}", t.elapsed());
    }
}
