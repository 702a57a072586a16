//! The core's errors as Python exceptions: `PolyflakeError` and one subclass per [`ErrorKind`].

use crate::health::value_to_py;
use polyflake::{Error, ErrorCategory, ErrorKind};
use pyo3::exceptions::{PyException, PyOverflowError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyTuple, PyType};
use std::cell::RefCell;

/// The built-in exception a kind also derives from: ValueError for configuration mistakes (and a
/// closed generator), OverflowError for the window's end, RuntimeError for the rest.
fn builtin(py: Python<'_>, kind: ErrorKind) -> Bound<'_, PyType> {
    match (kind, kind.category()) {
        (ErrorKind::TimestampOverflow, _) => py.get_type::<PyOverflowError>(),
        (ErrorKind::GeneratorClosed, _) | (_, ErrorCategory::Configuration) => {
            py.get_type::<PyValueError>()
        }
        (_, ErrorCategory::Unavailable | ErrorCategory::Conflict) => {
            py.get_type::<PyRuntimeError>()
        }
    }
}

/// `PolyflakeError`, then one class per kind in the order of `ErrorKind::ALL`.
static CLASSES: PyOnceLock<Vec<Py<PyType>>> = PyOnceLock::new();

fn make_classes(py: Python<'_>) -> PyResult<Vec<Py<PyType>>> {
    let new_class = |name: &str, bases: Bound<'_, PyTuple>, doc: &str, code: &str| {
        let ns = PyDict::new(py);
        ns.set_item("__module__", "polyflake")?;
        ns.set_item("__doc__", doc)?;
        ns.set_item("code", code)?;
        let class = py.get_type::<PyType>().call1((name, bases, ns))?;
        Ok::<_, PyErr>(class.cast_into::<PyType>()?.unbind())
    };
    let exception = PyTuple::new(py, [py.get_type::<PyException>()])?;
    let doc = "Base class of every polyflake error. `code` is the core's stable error code.";
    let base = new_class("PolyflakeError", exception, doc, "")?;
    let mut classes = vec![base.clone_ref(py)];
    for kind in ErrorKind::ALL {
        let bases = PyTuple::new(py, [base.bind(py).clone(), builtin(py, kind)])?;
        let class = new_class(kind.name(), bases, kind.description(), kind.code())?;
        classes.push(class);
    }
    Ok(classes)
}

fn classes(py: Python<'_>) -> PyResult<&'static Vec<Py<PyType>>> {
    CLASSES.get_or_try_init(py, || make_classes(py))
}

/// Add `PolyflakeError` and every kind's class to the module.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    for class in classes(m.py())? {
        m.add(class.bind(m.py()).name()?, class.bind(m.py()))?;
    }
    Ok(())
}

thread_local! {
    /// The exception a Python clock raised on this thread, to chain to the core's `ClockFailed`
    /// (the core calls the clock on the caller's thread).
    static CLOCK_ERROR: RefCell<Option<PyErr>> = const { RefCell::new(None) };
}

/// Keep the exception a Python clock raised, for [`to_py_err`] to chain.
pub(crate) fn stash_clock_error(err: PyErr) {
    CLOCK_ERROR.with(|slot| *slot.borrow_mut() = Some(err));
}

thread_local! {
    /// The exception a signal handler (or a Python clock, for KeyboardInterrupt and SystemExit)
    /// raised on this thread during a core call: it replaces the core's error.
    static PENDING: RefCell<Option<PyErr>> = const { RefCell::new(None) };
}

/// Keep `err` (a signal handler's exception) for the call under way on this thread to raise.
pub(crate) fn stash_signal(err: PyErr) {
    PENDING.with(|slot| {
        let mut slot = slot.borrow_mut();
        // The first one wins: a second Ctrl-C before the call returns is the same request.
        if slot.is_none() {
            *slot = Some(err);
        }
    });
}

/// The exception stashed on this thread, if any (taken).
pub(crate) fn take_signal() -> Option<PyErr> {
    PENDING.with(|slot| slot.borrow_mut().take())
}

/// Drop a stashed clock exception that no error will carry (health() swallows clock failures).
pub(crate) fn discard_clock_error() {
    CLOCK_ERROR.with(|slot| slot.borrow_mut().take());
}

/// A core error as its Python exception (a failed Python clock's exception as `__cause__`); a
/// signal handler's exception raised during the call (KeyboardInterrupt) replaces it.
#[cold]
pub(crate) fn to_py_err(py: Python<'_>, err: Error) -> PyErr {
    if let Some(signal) = take_signal() {
        discard_clock_error();
        return signal;
    }
    let cause = CLOCK_ERROR.with(|slot| slot.borrow_mut().take());
    let kind = err.kind();
    let index = ErrorKind::ALL.iter().position(|k| *k == kind);
    let class = match (classes(py), index) {
        (Ok(c), Some(i)) => c[i + 1].bind(py).clone(),
        (Err(e), _) => return e,
        (_, None) => return PyRuntimeError::new_err(format!("polyflake: unmapped {kind}: {err}")),
    };
    let exc = PyErr::from_type(class, err.to_string());
    let value = exc.value(py);
    for (name, field) in err.fields() {
        // An attribute that cannot be set is not worth losing the error over.
        if let Ok(obj) = value_to_py(py, &field, &|_| Ok(py.None())) {
            let _ = value.setattr(name, obj);
        }
    }
    if kind == ErrorKind::ClockFailed {
        exc.set_cause(py, cause);
    }
    exc
}
