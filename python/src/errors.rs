//! The core's errors as Python exceptions: `PolyflakeError` and one subclass per
//! [`ErrorKind`], chosen by the ONE exhaustive match in [`class_spec`], so a new kind in the core
//! breaks this build until it is mapped.

use polyflake::{Error, ErrorKind};
use pyo3::exceptions::{PyOverflowError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyTuple, PyType};
use pyo3::IntoPyObjectExt;
use std::cell::RefCell;

/// The built-in exception a kind also derives from, so `except ValueError` keeps working for
/// configuration mistakes and `except RuntimeError` for refusals (as in the design text).
#[derive(Clone, Copy)]
enum Builtin {
    Value,
    Runtime,
    Overflow,
}

/// The Python class name, extra built-in base and docstring of each kind.
const fn class_spec(kind: ErrorKind) -> (&'static str, Builtin, &'static str) {
    match kind {
        ErrorKind::InvalidLayout => (
            "InvalidLayout",
            Builtin::Value,
            "A layout whose three fields are not each at least 1 bit, or do not add up to 63.",
        ),
        ErrorKind::UnknownLayout => (
            "UnknownLayout",
            Builtin::Value,
            "A layout name that is not a preset and not 'T/N/S'.",
        ),
        ErrorKind::InvalidNodeId => (
            "InvalidNodeId",
            Builtin::Value,
            "A node id that does not fit the layout's node field (or is negative).",
        ),
        ErrorKind::InvalidEpoch => (
            "InvalidEpoch",
            Builtin::Value,
            "An epoch that is negative, in the future, or leaves the clock outside the window.",
        ),
        ErrorKind::InvalidArgument => (
            "InvalidArgument",
            Builtin::Value,
            "A numeric setting or argument out of range (a wait budget, a batch count, ...).",
        ),
        ErrorKind::InvalidId => (
            "InvalidId",
            Builtin::Value,
            "A value that is not a valid ID: negative, at least 2**63, or not decimal digits.",
        ),
        ErrorKind::ClockMovedBackwards => (
            "ClockMovedBackwards",
            Builtin::Runtime,
            "The wall clock is behind a millisecond already issued (or stuck on a spent one) \
             beyond the wait budget: issuing could repeat an ID, so the call is refused.",
        ),
        ErrorKind::TimestampOverflow => (
            "TimestampOverflow",
            Builtin::Overflow,
            "The timestamp lies outside the layout's window: an ID is never wrapped.",
        ),
        ErrorKind::LeadLimitExceeded => (
            "LeadLimitExceeded",
            Builtin::Runtime,
            "A MonotonicSnowflake would run further ahead of the wall clock than max_lead_ms.",
        ),
        ErrorKind::NodeIdInUse => (
            "NodeIdInUse",
            Builtin::Runtime,
            "Another live generator in this process already uses this node id (same epoch and \
             layout, system clock): share that one.",
        ),
        ErrorKind::UsedAfterFork => (
            "UsedAfterFork",
            Builtin::Runtime,
            "The generator was made before os.fork() and this is the child: it refuses to issue.",
        ),
        ErrorKind::ClockFailed => (
            "ClockFailed",
            Builtin::Runtime,
            "The injected clock failed to give a reading (a callable raised or returned a non-int).",
        ),
        ErrorKind::InvalidNodeSource => ("InvalidNodeSource", Builtin::Value, "A node-id source could not give a node id (env var unset, hostname without ordinal, IPv4 prefix too short, lease options out of range)."),
        ErrorKind::NoFreeSlot => ("NoFreeSlot", Builtin::Runtime, "Every slot of the lease store is held by a live holder."),
        ErrorKind::LeaseNotReady => ("LeaseNotReady", Builtin::Runtime, "Restart guard: the clock has not passed the slot's previous high-water mark yet."),
        ErrorKind::LeaseExpired => ("LeaseExpired", Builtin::Runtime, "The lease's high-water mark was reached without a renewal (the store is unreachable)."),
        ErrorKind::LeaseLost => ("LeaseLost", Builtin::Runtime, "The lease was lost (etcd lease revoked or expired): the generator has stopped for good."),
        ErrorKind::LeaseStore => ("LeaseStore", Builtin::Runtime, "The lease store failed (I/O error on the lease directory, etcd error or timeout)."),
        ErrorKind::ClockJumpedAhead => ("ClockJumpedAhead", Builtin::Runtime, "Strict mode: the wall clock stepped ahead of elapsed time by more than max_forward_step_ms; nothing is issued from it until it comes back or the new offset has held for forward_confirm_ms."),
        ErrorKind::IdSpaceMismatch => ("IdSpaceMismatch", Builtin::Value, "The lease store belongs to another ID space (epoch and layout): one store serves one space."),
        ErrorKind::GeneratorClosed => ("GeneratorClosed", Builtin::Value, "The generator was closed: it issues nothing more; make a new one."),
    }
}

struct Classes {
    base: Py<PyType>,
    kinds: Vec<(ErrorKind, Py<PyType>)>,
}

static CLASSES: PyOnceLock<Classes> = PyOnceLock::new();

fn make_classes(py: Python<'_>) -> PyResult<Classes> {
    let type_ = py.get_type::<PyType>();
    let new_class = |name: &str, bases: Bound<'_, PyTuple>, doc: &str, code: Option<&str>| {
        let ns = PyDict::new(py);
        ns.set_item("__module__", "polyflake")?;
        ns.set_item("__doc__", doc)?;
        if let Some(code) = code {
            ns.set_item("code", code)?;
        }
        type_
            .call1((name, bases, ns))?
            .cast_into::<PyType>()
            .map(Bound::unbind)
            .map_err(PyErr::from)
    };
    let exception = py.get_type::<pyo3::exceptions::PyException>();
    let base = new_class(
        "PolyflakeError",
        PyTuple::new(py, [exception])?,
        "Base class of every polyflake error. `code` is the core's stable error code.",
        Some(""),
    )?;
    let mut kinds = Vec::with_capacity(ErrorKind::ALL.len());
    for kind in ErrorKind::ALL {
        let (name, builtin, doc) = class_spec(kind);
        let builtin = match builtin {
            Builtin::Value => py.get_type::<PyValueError>(),
            Builtin::Runtime => py.get_type::<PyRuntimeError>(),
            Builtin::Overflow => py.get_type::<PyOverflowError>(),
        };
        let bases = PyTuple::new(py, [base.bind(py).clone(), builtin])?;
        kinds.push((kind, new_class(name, bases, doc, Some(kind.code()))?));
    }
    Ok(Classes { base, kinds })
}

fn classes(py: Python<'_>) -> PyResult<&'static Classes> {
    CLASSES.get_or_try_init(py, || make_classes(py))
}

/// Add `PolyflakeError` and every kind's class to the module.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    let c = classes(py)?;
    m.add("PolyflakeError", c.base.bind(py))?;
    for (kind, class) in &c.kinds {
        m.add(class_spec(*kind).0, class.bind(py))?;
    }
    Ok(())
}

thread_local! {
    /// The exception an injected Python clock raised on this thread, kept until the core's
    /// `ClockFailed` error reaches Python so it can be chained as the cause. The core calls the
    /// clock on the caller's thread, so a thread-local pairs them exactly.
    static CLOCK_ERROR: RefCell<Option<PyErr>> = const { RefCell::new(None) };
}

/// Keep the exception a Python clock raised, for [`to_py_err`] to chain.
pub(crate) fn stash_clock_error(err: PyErr) {
    CLOCK_ERROR.with(|slot| *slot.borrow_mut() = Some(err));
}

/// Drop a stashed clock exception that no error will carry (health() swallows clock failures).
pub(crate) fn discard_clock_error() {
    CLOCK_ERROR.with(|slot| slot.borrow_mut().take());
}

/// The data of an error, as attributes of the exception (the core's own list of fields).
fn fields<'py>(py: Python<'py>, err: &Error) -> PyResult<Vec<(&'static str, Bound<'py, PyAny>)>> {
    err.fields()
        .into_iter()
        .map(|(name, value)| {
            let obj = match value {
                polyflake::Value::Int(i) => i.into_bound_py_any(py)?,
                polyflake::Value::Float(f) => f.into_bound_py_any(py)?,
                polyflake::Value::Bool(b) => b.into_bound_py_any(py)?,
                polyflake::Value::Text(t) => t.into_bound_py_any(py)?,
                // Errors carry no optional or nested fields.
                polyflake::Value::Null | polyflake::Value::Fields(_) => py.None().into_bound(py),
            };
            Ok((name, obj))
        })
        .collect()
}

/// Convert a core error into its Python exception, with the error's data as attributes and, for
/// a failed Python clock, the exception the clock raised as `__cause__`.
#[cold]
pub(crate) fn to_py_err(py: Python<'_>, err: Error) -> PyErr {
    let cause = CLOCK_ERROR.with(|slot| slot.borrow_mut().take());
    let c = match classes(py) {
        Ok(c) => c,
        Err(e) => return e,
    };
    let kind = err.kind();
    let Some((_, class)) = c.kinds.iter().find(|(k, _)| *k == kind) else {
        return PyRuntimeError::new_err(format!("polyflake: unmapped error kind {kind}: {err}"));
    };
    let exc = PyErr::from_type(class.bind(py).clone(), err.to_string());
    let value = exc.value(py);
    if let Ok(fields) = fields(py, &err) {
        for (name, val) in fields {
            // An attribute that cannot be set is not worth losing the error over.
            let _ = value.setattr(name, val);
        }
    }
    if kind == ErrorKind::ClockFailed {
        exc.set_cause(py, cause);
    }
    exc
}
