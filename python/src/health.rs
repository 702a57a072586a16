//! `Health` and `LeaseHealth`, whose attributes are the fields the core's snapshot walks.

use polyflake::{health_samples, Health, Metric, Value, HEALTH_METRICS};
use pyo3::exceptions::PyAttributeError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};
use pyo3::IntoPyObjectExt;

/// A snapshot's named fields, read as attributes.
#[pyclass(frozen, subclass, module = "polyflake")]
pub(crate) struct Snapshot(Vec<(&'static str, Value)>);

/// A snapshot from `health()`: ok or not and why, the clocks, the counters, `clock_sync` and
/// `lease`.
#[pyclass(frozen, extends = Snapshot, module = "polyflake", name = "Health")]
pub(crate) struct PyHealth(Health);

/// The lease part of a `Health` snapshot: slot, high-water mark, restart guard, phase; kind
/// `host` for a fixed node id's mark on the host.
#[pyclass(frozen, extends = Snapshot, module = "polyflake", name = "LeaseHealth")]
pub(crate) struct PyLeaseHealth;

/// The kernel's word on the system clock in a `Health` snapshot (`adjtimex`): `state`,
/// `synchronized`, `max_error_us`, `est_error_us`.
#[pyclass(frozen, extends = Snapshot, module = "polyflake", name = "ClockSync")]
pub(crate) struct PyClockSync;

/// The `Health` of a core snapshot.
pub(crate) fn health(py: Python<'_>, h: Health) -> PyResult<Py<PyHealth>> {
    let init = PyClassInitializer::from(Snapshot(h.fields()));
    Py::new(py, init.add_subclass(PyHealth(h)))
}

#[pymethods]
impl PyHealth {
    /// `(name, label values, value)` for each metric of `HEALTH_METRICS` the snapshot gives (the
    /// lease's only with a lease); a counter's name is without `_total`.
    fn samples(&self) -> Vec<(&'static str, Vec<String>, f64)> {
        health_samples(&self.0)
            .into_iter()
            .map(|s| (s.metric.name, s.labels, s.value))
            .collect()
    }
}

/// The core's metric table, `HEALTH_METRICS`, as a tuple of `(name, kind, help, label names)`.
pub(crate) fn metric_table(py: Python<'_>) -> PyResult<Bound<'_, PyTuple>> {
    let row = |m: &Metric| Ok((m.name, m.kind.name(), m.help, PyTuple::new(py, m.labels)?));
    PyTuple::new(
        py,
        HEALTH_METRICS
            .iter()
            .map(row)
            .collect::<PyResult<Vec<_>>>()?,
    )
}

/// A nested record of a snapshot as its class, by the field that holds it: `lease`, a
/// `LeaseHealth`; `clock_sync`, a `ClockSync`; a record the binding does not know yet, a plain
/// snapshot (its fields still attributes and `to_dict()`).
fn record(py: Python<'_>, field: &str, fields: &Fields) -> PyResult<Py<PyAny>> {
    let init = PyClassInitializer::from(Snapshot(fields.to_vec()));
    Ok(match field {
        "lease" => Py::new(py, init.add_subclass(PyLeaseHealth))?.into_any(),
        "clock_sync" => Py::new(py, init.add_subclass(PyClockSync))?.into_any(),
        _ => Py::new(py, init)?.into_any(),
    })
}

#[pymethods]
impl Snapshot {
    fn __getattr__(&self, py: Python<'_>, name: &str) -> PyResult<Py<PyAny>> {
        let Some((_, value)) = self.0.iter().find(|(n, _)| *n == name) else {
            return Err(PyAttributeError::new_err(format!(
                "no health field {name:?}"
            )));
        };
        value_to_py(py, value, &|f| record(py, name, f))
    }

    /// Every field as a dict (what a `/health` endpoint would serialise).
    fn to_dict(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        fields_dict(py, &self.0)
    }

    fn __repr__(slf: &Bound<'_, Self>) -> PyResult<String> {
        let field = |name: &str| Ok(format!("{name}={}", slf.getattr(name)?.repr()?));
        let fields = slf.get().0.iter().map(|(name, _)| field(name));
        let fields = fields.collect::<PyResult<Vec<_>>>()?.join(", ");
        Ok(format!("{}({fields})", slf.get_type().name()?))
    }
}

/// The core's named values (an error's or a health snapshot's fields).
pub(crate) type Fields = [(&'static str, Value)];

/// One of the core's named values as a Python object; a nested record, `nested` of its fields.
pub(crate) fn value_to_py(
    py: Python<'_>,
    value: &Value,
    nested: &dyn Fn(&Fields) -> PyResult<Py<PyAny>>,
) -> PyResult<Py<PyAny>> {
    match value {
        Value::Int(i) => i.into_py_any(py),
        Value::Float(f) => f.into_py_any(py),
        Value::Bool(b) => b.into_py_any(py),
        Value::Text(t) => t.into_py_any(py),
        Value::Null => Ok(py.None()),
        Value::Fields(fields) => nested(fields),
    }
}

/// Named values as a dict, nested records as dicts too.
pub(crate) fn fields_dict(py: Python<'_>, fields: &Fields) -> PyResult<Py<PyAny>> {
    let d = PyDict::new(py);
    for (name, value) in fields {
        d.set_item(name, value_to_py(py, value, &|f| fields_dict(py, f))?)?;
    }
    d.into_py_any(py)
}
