//! Constructors' keyword settings, and the core `Settings` both of the core's builders take,
//! made by one fn.

use crate::args::{bad_argument, float_arg, i64_arg, int_value, str_arg, type_name, unsigned_arg};
use crate::clock::{CallableClock, PyManualClock, PyScriptedClock};
use crate::error::to_py_err;
use polyflake::{Clock, ClockSource, Mode, Settings as CoreSettings, DEFAULT_MAX_LEAD_MS};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString};
use std::sync::Arc;

/// The keyword settings of a constructor, taken out by name; one left over is a TypeError.
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

    /// The setting `key`, if given, left in place.
    pub(crate) fn peek(&self, key: &str) -> PyResult<Option<Bound<'py, PyAny>>> {
        let Some(d) = &self.0 else { return Ok(None) };
        d.get_item(key)
    }

    /// Set `field` to the setting `key` made by `conv`, if given.
    pub(crate) fn set<T>(
        &self,
        key: &'static str,
        field: &mut T,
        conv: impl FnOnce(&Bound<'py, PyAny>, &'static str) -> PyResult<T>,
    ) -> PyResult<()> {
        if let Some(v) = self.take(key)? {
            *field = conv(&v, key)?;
        }
        Ok(())
    }

    /// Refuse what no `take` asked for.
    pub(crate) fn finish(&self, what: &str) -> PyResult<()> {
        match self.0.as_ref().and_then(|d| d.keys().iter().next()) {
            Some(key) => {
                // Listed in some signatures, but a monotonic generator's, or a fixed node id's.
                let hint = match key.extract::<String>().as_deref() {
                    Ok("max_lead_ms") => " (a monotonic generator's setting)",
                    Ok("restart_guard" | "state_dir") => {
                        " (a fixed node id's setting: a lease keeps its own restart guard)"
                    }
                    _ => "",
                };
                Err(PyTypeError::new_err(format!(
                    "{what}() got an unexpected keyword argument {}{hint}",
                    key.repr()?
                )))
            }
            None => Ok(()),
        }
    }
}

/// The ONE core `Settings` a constructor's keywords stand for, with the mode; also says whether
/// it reads a clock object. `max_lead_ms` is monotonic mode's: in strict mode, where the
/// signature lists it (`lists_lead`: every constructor but `Snowflake`'s own), its shown value
/// (the core's `DEFAULT_MAX_LEAD_MS`) and None (no bound, which strict mode never needs) are
/// taken and dropped, and any other value is left for `finish` to refuse.
pub(crate) fn core_settings(
    mode: Mode,
    s: &Settings<'_>,
    lists_lead: bool,
) -> PyResult<(CoreSettings, bool)> {
    let mut out = CoreSettings {
        mode,
        ..CoreSettings::default()
    };
    s.set("max_wait_ms", &mut out.max_wait_ms, float_arg)?;
    s.set(
        "max_forward_step_ms",
        &mut out.max_forward_step_ms,
        |v, key| {
            let step = (!v.is_none()).then(|| unsigned_arg(v, key, bad_argument));
            step.transpose()
        },
    )?;
    s.set(
        "forward_confirm_ms",
        &mut out.forward_confirm_ms,
        |v, key| unsigned_arg(v, key, bad_argument),
    )?;
    if mode == Mode::Monotonic {
        s.set("max_lead_ms", &mut out.max_lead_ms, |v, key| {
            (!v.is_none()).then(|| i64_arg(v, key)).transpose()
        })?;
    } else if lists_lead {
        let shown = |v: &Bound<'_, PyAny>| {
            v.is_none()
                || matches!(
                    int_value(v, "max_lead_ms"),
                    Ok(Ok(DEFAULT_MAX_LEAD_MS_I128))
                )
        };
        if s.peek("max_lead_ms")?.is_some_and(|v| shown(&v)) {
            s.take("max_lead_ms")?;
        }
    }
    s.set(
        "max_clock_error_ms",
        &mut out.max_clock_error_ms,
        |v, key| {
            let bound = (!v.is_none()).then(|| unsigned_arg(v, key, bad_argument));
            bound.transpose()
        },
    )?;
    // `clock=`: a `polyflake.testing` clock, a callable, None, or a clock source of the system
    // clock (`"precise"`, `"coarse"`); `clock_source=`: the reading to take of a clock object
    // (None, the default: its precise reading).
    let (clock, name) = (s.take("clock")?, s.take("clock_source")?);
    let mut name = name.filter(|n| !n.is_none());
    match clock.filter(|c| !c.is_none()) {
        Some(c) if c.is_instance_of::<PyString>() => {
            if name.is_some() {
                return Err(PyTypeError::new_err(
                    "clock already names the clock source; clock_source goes with a clock object",
                ));
            }
            name = Some(c);
        }
        Some(c) => out.clock = Some(clock_object(&c)?),
        None => {}
    }
    if let Some(n) = name {
        let source = ClockSource::from_name(&str_arg(&n, "clock_source")?);
        out.clock_source = source.map_err(|e| to_py_err(n.py(), e))?;
    }
    let injected = out.clock.is_some();
    Ok((out, injected))
}

/// The core's default lead limit as the int a signature shows.
const DEFAULT_MAX_LEAD_MS_I128: i128 = DEFAULT_MAX_LEAD_MS as i128;

/// A clock object as the core's `Clock`.
fn clock_object(clock: &Bound<'_, PyAny>) -> PyResult<Arc<dyn Clock>> {
    Ok(if let Ok(c) = clock.cast::<PyManualClock>() {
        Arc::new(c.get().0.clone())
    } else if let Ok(c) = clock.cast::<PyScriptedClock>() {
        c.get().0.clone()
    } else if clock.is_callable() {
        Arc::new(CallableClock(clock.clone().unbind()))
    } else {
        return Err(PyTypeError::new_err(format!(
            "clock must be a callable returning int milliseconds, a polyflake.testing clock, or \
             'precise' or 'coarse', not {}",
            type_name(clock)
        )));
    })
}
