//! The keyword settings of every constructor (`**settings`), and the generator settings the
//! core's two builders share (`Builder` for Snowflake IDs, `TimeIdBuilder` for UUIDv7 and ULID),
//! applied by one function to either. A setting that is absent is never set, so its default is
//! the core's.

use crate::args::{bad_argument, float_arg, i64_arg, str_arg, type_name, unsigned_arg};
use crate::clock::{CallableClock, PyManualClock, PyScriptedClock};
use crate::errors::to_py_err;
use polyflake::{Builder, Clock, ClockSource, Mode, TimeIdBuilder};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString};
use std::sync::Arc;

/// The keyword settings of a constructor (`**settings`), taken out by name; one left over is a
/// TypeError, as for any unexpected keyword argument. Absent settings keep the core's defaults.
pub(crate) struct Settings<'py>(pub(crate) Option<Bound<'py, PyDict>>);

impl<'py> Settings<'py> {
    /// The setting `key`, if given.
    pub(crate) fn take(&self, key: &str) -> PyResult<Option<Bound<'py, PyAny>>> {
        let Some(d) = &self.0 else { return Ok(None) };
        let value = d.get_item(key)?;
        if value.is_some() {
            d.del_item(key)?;
        }
        Ok(value)
    }

    /// Refuse what no `take` asked for.
    pub(crate) fn finish(&self, what: &str) -> PyResult<()> {
        match self.0.as_ref().and_then(|d| d.keys().iter().next()) {
            Some(key) => Err(PyTypeError::new_err(format!(
                "{what}() got an unexpected keyword argument {}",
                key.repr()?
            ))),
            None => Ok(()),
        }
    }
}

/// The settings both of the core's builders take, each the builder's own method.
pub(crate) trait Tunable: Sized {
    fn mode(self, mode: Mode) -> Self;
    fn max_wait_ms(self, ms: f64) -> Self;
    fn max_lead_ms(self, ms: Option<i64>) -> Self;
    fn max_forward_step_ms(self, ms: Option<u64>) -> Self;
    fn forward_confirm_ms(self, ms: u64) -> Self;
    fn clock_source(self, source: ClockSource) -> Self;
    fn clock<C: Clock + 'static>(self, clock: C) -> Self;
    fn shared_clock(self, clock: Arc<dyn Clock>) -> Self;
}

macro_rules! tunable {
    ($($t:ty),*) => {$(
        impl Tunable for $t {
            fn mode(self, mode: Mode) -> Self { <$t>::mode(self, mode) }
            fn max_wait_ms(self, ms: f64) -> Self { <$t>::max_wait_ms(self, ms) }
            fn max_lead_ms(self, ms: Option<i64>) -> Self { <$t>::max_lead_ms(self, ms) }
            fn max_forward_step_ms(self, ms: Option<u64>) -> Self { <$t>::max_forward_step_ms(self, ms) }
            fn forward_confirm_ms(self, ms: u64) -> Self { <$t>::forward_confirm_ms(self, ms) }
            fn clock_source(self, source: ClockSource) -> Self { <$t>::clock_source(self, source) }
            fn clock<C: Clock + 'static>(self, clock: C) -> Self { <$t>::clock(self, clock) }
            fn shared_clock(self, clock: Arc<dyn Clock>) -> Self { <$t>::shared_clock(self, clock) }
        }
    )*};
}
tunable!(Builder, TimeIdBuilder);

/// Apply the mode and the shared settings: `max_wait_ms`, `max_forward_step_ms`,
/// `forward_confirm_ms`, `clock`, `clock_source`, and `max_lead_ms` in monotonic mode (elsewhere
/// it stays behind for `finish` to refuse). Returns the builder and whether it reads a clock
/// object (a test clock or a callable) rather than the system clock.
pub(crate) fn apply<B: Tunable>(b: B, mode: Mode, s: &Settings<'_>) -> PyResult<(B, bool)> {
    let mut b = b.mode(mode);
    if let Some(v) = s.take("max_wait_ms")? {
        b = b.max_wait_ms(float_arg(&v, "max_wait_ms")?);
    }
    if let Some(v) = s.take("max_forward_step_ms")? {
        let step = (!v.is_none()).then(|| unsigned_arg(&v, "max_forward_step_ms", bad_argument));
        b = b.max_forward_step_ms(step.transpose()?);
    }
    if let Some(v) = s.take("forward_confirm_ms")? {
        b = b.forward_confirm_ms(unsigned_arg(&v, "forward_confirm_ms", bad_argument)?);
    }
    if mode == Mode::Monotonic {
        if let Some(v) = s.take("max_lead_ms")? {
            let lead = (!v.is_none()).then(|| i64_arg(&v, "max_lead_ms"));
            b = b.max_lead_ms(lead.transpose()?);
        }
    }
    with_clock(b, s.take("clock")?, s.take("clock_source")?)
}

/// The `clock=` and `clock_source=` settings. `clock` is a `polyflake.testing` clock, a callable,
/// None (the system clock) or the name of a clock source of the system clock (`"precise"`,
/// `"coarse"`: the core's `ClockSource::from_name` judges it); `clock_source` names the reading
/// to take of a clock object. Returns the builder and whether it reads a clock object.
pub(crate) fn with_clock<B: Tunable>(
    b: B,
    clock: Option<Bound<'_, PyAny>>,
    source: Option<Bound<'_, PyAny>>,
) -> PyResult<(B, bool)> {
    let (mut b, mut name) = (b, None);
    let injected = match clock {
        Some(c) if c.is_instance_of::<PyString>() => {
            name = Some(c);
            false
        }
        Some(c) if !c.is_none() => {
            b = with_clock_object(b, &c)?;
            true
        }
        _ => false,
    };
    if let Some(s) = source {
        if name.is_some() {
            return Err(PyTypeError::new_err(
                "clock already names the clock source; clock_source goes with a clock object",
            ));
        }
        name = Some(s);
    }
    if let Some(n) = name {
        let source = ClockSource::from_name(&str_arg(&n, "clock_source")?);
        b = b.clock_source(source.map_err(|e| to_py_err(n.py(), e))?);
    }
    Ok((b, injected))
}

fn with_clock_object<B: Tunable>(b: B, clock: &Bound<'_, PyAny>) -> PyResult<B> {
    Ok(if let Ok(c) = clock.cast::<PyManualClock>() {
        b.clock(c.get().0.clone())
    } else if let Ok(c) = clock.cast::<PyScriptedClock>() {
        b.shared_clock(c.get().0.clone())
    } else if clock.is_callable() {
        b.clock(CallableClock(clock.clone().unbind()))
    } else {
        return Err(PyTypeError::new_err(format!(
            "clock must be a callable returning int milliseconds, a polyflake.testing clock, or \
             'precise' or 'coarse', not {}",
            type_name(clock)
        )));
    })
}
