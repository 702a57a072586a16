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

/// The data of an error, as attributes of the exception.
fn fields<'py>(py: Python<'py>, err: &Error) -> PyResult<Vec<(&'static str, Bound<'py, PyAny>)>> {
    fn v<'py, T: IntoPyObject<'py>>(py: Python<'py>, x: T) -> PyResult<Bound<'py, PyAny>> {
        x.into_bound_py_any(py)
    }
    Ok(match err {
        Error::InvalidLayout {
            timestamp_bits,
            node_bits,
            sequence_bits,
        } => vec![
            ("timestamp_bits", v(py, timestamp_bits)?),
            ("node_bits", v(py, node_bits)?),
            ("sequence_bits", v(py, sequence_bits)?),
        ],
        Error::UnknownLayout { name } => vec![("name", v(py, name)?)],
        Error::InvalidNodeId { node_id, max } => {
            vec![("node_id", v(py, node_id)?), ("max", v(py, max)?)]
        }
        Error::InvalidEpoch {
            epoch_ms,
            now_ms,
            reason,
        } => vec![
            ("epoch_ms", v(py, epoch_ms)?),
            ("now_ms", v(py, now_ms)?),
            ("reason", v(py, reason)?),
        ],
        Error::InvalidArgument { name, reason } => {
            vec![("name", v(py, name)?), ("reason", v(py, reason)?)]
        }
        Error::InvalidId { input, reason } => {
            vec![("input", v(py, input)?), ("reason", v(py, reason)?)]
        }
        Error::ClockMovedBackwards {
            node_id,
            behind_ms,
            stuck,
            max_wait_ms,
        } => vec![
            ("node_id", v(py, node_id)?),
            ("behind_ms", v(py, behind_ms)?),
            ("stuck", v(py, stuck)?),
            ("max_wait_ms", v(py, max_wait_ms)?),
        ],
        Error::TimestampOverflow {
            unix_ms,
            epoch_ms,
            max_elapsed_ms,
        } => vec![
            ("unix_ms", v(py, unix_ms)?),
            ("epoch_ms", v(py, epoch_ms)?),
            ("max_elapsed_ms", v(py, max_elapsed_ms)?),
        ],
        Error::LeadLimitExceeded {
            node_id,
            lead_ms,
            max_lead_ms,
        } => vec![
            ("node_id", v(py, node_id)?),
            ("lead_ms", v(py, lead_ms)?),
            ("max_lead_ms", v(py, max_lead_ms)?),
        ],
        Error::NodeIdInUse { node_id } => vec![("node_id", v(py, node_id)?)],
        Error::UsedAfterFork { node_id } => vec![("node_id", v(py, node_id)?)],
        Error::ClockFailed { reason } => vec![("reason", v(py, reason)?)],
        Error::InvalidNodeSource { reason } => vec![("reason", v(py, reason)?)],
        Error::NoFreeSlot {
            dir_or_prefix,
            slots,
        } => vec![
            ("dir_or_prefix", v(py, dir_or_prefix)?),
            ("slots", v(py, slots)?),
        ],
        Error::LeaseNotReady {
            node_id,
            remaining_ms,
        } => vec![
            ("node_id", v(py, node_id)?),
            ("remaining_ms", v(py, remaining_ms)?),
        ],
        Error::LeaseExpired {
            node_id,
            high_water_ms,
        } => vec![
            ("node_id", v(py, node_id)?),
            ("high_water_ms", v(py, high_water_ms)?),
        ],
        Error::LeaseLost { node_id, reason } => {
            vec![("node_id", v(py, node_id)?), ("reason", v(py, reason)?)]
        }
        Error::LeaseStore { reason } => vec![("reason", v(py, reason)?)],
    })
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
