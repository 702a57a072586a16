//! Clocks a generator can read instead of the system clock: the core's `ManualClock` and
//! `ScriptedClock` (in `polyflake.testing`), and any Python callable returning int milliseconds.

use crate::args::{bad_argument, clamped_i64, exact_i64_arg, i64_arg, unsigned_arg};
use crate::error::{stash_clock_error, to_py_err};
use polyflake::{Clock, ClockError};
use pyo3::exceptions::{PyException, PyTypeError};
use pyo3::prelude::*;
use std::sync::Arc;

/// A clock that only moves when told to (the core's `ManualClock`).
#[pyclass(frozen, module = "polyflake.testing", name = "ManualClock")]
pub(crate) struct PyManualClock(pub(crate) polyflake::ManualClock);

#[pymethods]
impl PyManualClock {
    #[new]
    fn new(start_ms: &Bound<'_, PyAny>) -> PyResult<Self> {
        let start_ms = exact_i64_arg(start_ms, "start_ms", "start_ms")?;
        Ok(PyManualClock(polyflake::ManualClock::new(start_ms)))
    }

    /// Step the wall reading to `ms`; elapsed time does not move.
    fn set(&self, ms: &Bound<'_, PyAny>) -> PyResult<()> {
        self.0.set(exact_i64_arg(ms, "ms", "ms")?);
        Ok(())
    }

    /// Step the wall reading by `delta_ms` (negative moves it back; `elapse` is time passing).
    /// A step past the 64-bit range is refused (`InvalidArgument`).
    fn advance(&self, py: Python<'_>, delta_ms: &Bound<'_, PyAny>) -> PyResult<()> {
        let delta = exact_i64_arg(delta_ms, "delta_ms", "delta_ms")?;
        // Callers hold the GIL, so no other Python call moves the clock in between.
        let now = self.0.get();
        if now.checked_add(delta).is_none() {
            let reason = format!("{now} + {delta} is outside the 64-bit range");
            return Err(to_py_err(py, bad_argument("delta_ms", reason)));
        }
        self.0.advance(delta);
        Ok(())
    }

    /// Let `ms` milliseconds pass: the wall reading and the elapsed-time reading both move.
    fn elapse(&self, ms: &Bound<'_, PyAny>) -> PyResult<()> {
        self.0.elapse(unsigned_arg(ms, "ms", bad_argument)?);
        Ok(())
    }

    /// The current wall reading, Unix milliseconds.
    fn now_ms(&self) -> i64 {
        self.0.get()
    }

    /// The coarse reading: the wall reading rounded down to a multiple of `tick_ms` (default 1).
    /// Set it before making a generator on the clock with `clock_source="coarse"`.
    fn set_tick_ms(&self, tick_ms: &Bound<'_, PyAny>) -> PyResult<()> {
        self.0.set_tick_ms(i64_arg(tick_ms, "tick_ms")?);
        Ok(())
    }

    fn __repr__(&self) -> String {
        format!("ManualClock({})", self.0.get())
    }
}

/// A clock that returns prepared readings in order, then ticks forward 1 ms per read.
#[pyclass(frozen, module = "polyflake.testing", name = "ScriptedClock")]
pub(crate) struct PyScriptedClock(pub(crate) Arc<polyflake::ScriptedClock>);

#[pymethods]
impl PyScriptedClock {
    #[new]
    fn new(values: &Bound<'_, PyAny>) -> PyResult<Self> {
        let not_iterable =
            |_| PyTypeError::new_err("ScriptedClock takes an iterable of int milliseconds");
        let readings = values
            .try_iter()
            .map_err(not_iterable)?
            .map(|v| exact_i64_arg(&v?, "a ScriptedClock value", "values"))
            .collect::<PyResult<_>>()?;
        let clock = polyflake::ScriptedClock::new(readings);
        Ok(PyScriptedClock(Arc::new(clock)))
    }

    /// How many readings have been taken so far.
    #[getter]
    fn reads(&self) -> usize {
        self.0.reads()
    }

    /// The next reading (this advances the script, like a generator's read).
    fn now_ms(&self) -> i64 {
        // A ScriptedClock never fails; the Result is the trait's.
        self.0.now_ms().unwrap_or_default()
    }

    fn __repr__(&self) -> String {
        format!("<ScriptedClock reads={}>", self.0.reads())
    }
}

/// A Python callable as the core's `Clock`; each read attaches (the GIL may have been released).
pub(crate) struct CallableClock(pub(crate) Py<PyAny>);

impl Clock for CallableClock {
    fn now_ms(&self) -> Result<i64, ClockError> {
        Python::attach(|py| {
            let reading = self.0.bind(py).call0();
            let ms = reading.and_then(|v| clamped_i64(&v, "the clock's reading"));
            ms.map_err(|err| {
                let reason = format!("the clock callable raised {err}");
                if err.is_instance_of::<PyException>(py) {
                    // Keep the exception itself: it becomes the __cause__ of ClockFailed.
                    stash_clock_error(err);
                } else {
                    // KeyboardInterrupt (a Ctrl-C seen while the callable ran), SystemExit:
                    // raised as they are, not as a clock failure.
                    crate::error::stash_signal(err);
                }
                ClockError(reason)
            })
        })
    }
}
