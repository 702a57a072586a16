//! Clocks a generator can read instead of the system clock: the core's `ManualClock` and
//! `ScriptedClock` (exposed in `polyflake.testing`), and any Python callable returning int
//! milliseconds (`clock=lambda: 1737747358021`, as in the design text).

use crate::args::{exact_i64_arg, i64_arg, ms_arg};
use crate::errors::{stash_clock_error, to_py_err};
use polyflake::{Clock, ClockError};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use std::sync::Arc;

/// A clock that only moves when told to (the core's `ManualClock`).
#[pyclass(frozen, module = "polyflake.testing", name = "ManualClock")]
pub(crate) struct PyManualClock {
    pub(crate) inner: polyflake::ManualClock,
}

#[pymethods]
impl PyManualClock {
    #[new]
    fn new(#[pyo3(from_py_with = start_arg)] start_ms: i64) -> Self {
        PyManualClock {
            inner: polyflake::ManualClock::new(start_ms),
        }
    }

    /// Set the reading (backwards is allowed: that is a rewind).
    fn set(&self, #[pyo3(from_py_with = ms_arg)] ms: i64) {
        self.inner.set(ms);
    }

    /// Move the reading by `delta_ms` (negative moves it back). A move past the 64-bit range is
    /// refused (`InvalidArgument`) and leaves the reading as it was.
    fn advance(
        &self,
        py: Python<'_>,
        #[pyo3(from_py_with = delta_arg)] delta_ms: i64,
    ) -> PyResult<()> {
        // Callers hold the GIL, so no other Python call moves the clock in between.
        let now = self.inner.get();
        if now.checked_add(delta_ms).is_none() {
            return Err(to_py_err(
                py,
                polyflake::Error::InvalidArgument {
                    name: "delta_ms",
                    reason: format!("{now} + {delta_ms} is outside the 64-bit range"),
                },
            ));
        }
        self.inner.advance(delta_ms);
        Ok(())
    }

    /// The current reading, Unix milliseconds.
    fn now_ms(&self) -> i64 {
        self.inner.get()
    }

    fn __repr__(&self) -> String {
        format!("ManualClock({})", self.inner.get())
    }
}

fn start_arg(obj: &Bound<'_, PyAny>) -> PyResult<i64> {
    exact_i64_arg(obj, "start_ms", "start_ms")
}
fn delta_arg(obj: &Bound<'_, PyAny>) -> PyResult<i64> {
    exact_i64_arg(obj, "delta_ms", "delta_ms")
}

/// A clock that returns prepared readings in order, then ticks forward 1 ms per read (the core's
/// `ScriptedClock`, the design text's `scripted_clock`).
#[pyclass(frozen, module = "polyflake.testing", name = "ScriptedClock")]
pub(crate) struct PyScriptedClock {
    pub(crate) inner: Arc<polyflake::ScriptedClock>,
}

#[pymethods]
impl PyScriptedClock {
    #[new]
    fn new(values: &Bound<'_, PyAny>) -> PyResult<Self> {
        let mut readings = Vec::new();
        for value in values.try_iter().map_err(|_| {
            PyTypeError::new_err("ScriptedClock takes an iterable of int milliseconds")
        })? {
            readings.push(exact_i64_arg(&value?, "a ScriptedClock value", "values")?);
        }
        Ok(PyScriptedClock {
            inner: Arc::new(polyflake::ScriptedClock::new(readings)),
        })
    }

    /// How many readings have been taken so far.
    #[getter]
    fn reads(&self) -> usize {
        self.inner.reads()
    }

    /// The next reading (this advances the script, like a generator's read).
    fn now_ms(&self) -> i64 {
        // A ScriptedClock never fails; the Result is the trait's.
        self.inner.now_ms().unwrap_or_default()
    }

    fn __repr__(&self) -> String {
        format!("<ScriptedClock reads={}>", self.inner.reads())
    }
}

/// A Python callable as the core's `Clock`. The core may call it with the GIL released (while a
/// strict call waits), so each read attaches to the interpreter.
pub(crate) struct CallableClock {
    func: Py<PyAny>,
}

impl CallableClock {
    pub(crate) fn new(func: Py<PyAny>) -> Self {
        CallableClock { func }
    }
}

impl Clock for CallableClock {
    fn now_ms(&self) -> Result<i64, ClockError> {
        Python::attach(|py| {
            let reading = self
                .func
                .bind(py)
                .call0()
                .and_then(|v| i64_arg(&v, "the clock's reading"));
            reading.map_err(|err| {
                let reason = format!("the clock callable raised {err}");
                // Keep the exception itself: it becomes the __cause__ of ClockFailed.
                stash_clock_error(err);
                ClockError(reason)
            })
        })
    }
}
