//! Waits that Ctrl-C cuts short: every core call that may wait runs with the GIL released inside
//! `polyflake::interruptible`, whose hook (asked at most every 20 ms while the call waits)
//! attaches to the interpreter and runs its pending signal handlers. A handler that raises (the
//! default SIGINT one: KeyboardInterrupt) stops the wait; the core then fails the call with
//! `Interrupted`, having issued nothing, and the caller gets the handler's exception instead.
//! Only the main thread runs signal handlers (CPython's rule): elsewhere the check is a no-op.
//! A call run for an asyncio task (`anext_id`, `anext_ids`) also stops when the task is
//! cancelled, through its [`Cancel`] flag.

use crate::error::{stash_signal, take_signal, to_py_err};
use pyo3::prelude::*;
use std::sync::atomic::{AtomicBool, Ordering};

/// A cancel flag for one call run in a thread for an asyncio task: set when the task is
/// cancelled (see `polyflake/_aio.py`), it stops the call's wait within a slice.
#[pyclass(frozen, module = "polyflake", name = "_Cancel")]
#[derive(Default)]
pub(crate) struct Cancel(AtomicBool);

#[pymethods]
impl Cancel {
    /// Stop the call's wait (at its next check, within 20 ms).
    fn set(&self) {
        self.0.store(true, Ordering::Relaxed);
    }

    /// True once `set()` was called.
    #[getter]
    fn is_set(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
}

/// The hook: stop when `cancel` is set or a signal handler raised (its exception stashed).
fn stop(cancel: Option<&Cancel>) -> bool {
    if cancel.is_some_and(|c| c.0.load(Ordering::Relaxed)) {
        return true;
    }
    // At interpreter shutdown (no attaching) there is no handler to run.
    Python::try_attach(|py| match py.check_signals() {
        Ok(()) => false,
        Err(e) => {
            stash_signal(e);
            true
        }
    })
    .unwrap_or(false)
}

/// Run the core call `f` with the GIL released, interruptible by a signal handler that raises
/// (and by `cancel`): the handler's exception is raised in place of the core's `Interrupted`.
/// It is raised even if the call finished meanwhile (its IDs are then a gap, never reissued),
/// so a Ctrl-C is never lost.
pub(crate) fn waiting<T: Send>(
    py: Python<'_>,
    cancel: Option<&Cancel>,
    f: impl FnOnce() -> polyflake::Result<T> + Send,
) -> PyResult<T> {
    let result = py.detach(|| polyflake::interruptible(&|| stop(cancel), f));
    match (take_signal(), result) {
        (Some(err), _) => Err(err),
        (None, Ok(v)) => Ok(v),
        (None, Err(e)) => Err(to_py_err(py, e)),
    }
}
