//! Python arguments to Rust values. Only type conversion lives here: every range rule (node ids,
//! counts, IDs, wait budgets, layouts) is the core's, reached by passing the value through
//! unchanged (ints arrive as `i128`, wide enough for any value the core must judge).

use crate::errors::to_py_err;
use polyflake::Error;
use pyo3::exceptions::{PyOverflowError, PyTypeError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyFloat, PyString};

fn type_name(obj: &Bound<'_, PyAny>) -> String {
    obj.get_type()
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "?".into())
}

/// A Python int (or an object with `__index__`) as an `i128`. `bool` is refused although it is
/// an int subclass: `Snowflake(True)` is a bug, not node 1. An int beyond 128 bits is out of
/// every range the core knows, so it is clamped to the i128 bound of its sign and the core
/// refuses it with the same error (and class) as any other out-of-range value.
pub(crate) fn int_arg(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<i128> {
    if obj.is_instance_of::<PyBool>() {
        return Err(PyTypeError::new_err(format!(
            "{what} must be an int, not bool"
        )));
    }
    if obj.is_instance_of::<PyFloat>() || obj.is_instance_of::<PyString>() || obj.is_none() {
        return Err(PyTypeError::new_err(format!(
            "{what} must be an int, not {}",
            type_name(obj)
        )));
    }
    match obj.extract::<i128>() {
        Ok(v) => Ok(v),
        Err(e) if e.is_instance_of::<PyOverflowError>(obj.py()) => {
            Ok(if obj.lt(0)? { i128::MIN } else { i128::MAX })
        }
        Err(_) => Err(PyTypeError::new_err(format!(
            "{what} must be an int, not {}",
            type_name(obj)
        ))),
    }
}

/// An int as an `i64` for the core: values past the i64 range are clamped to its bounds, which
/// the core then judges (a clock reading that far is outside every window, a lead limit that
/// large is no limit). Only for values that are judged, never read back: see [`exact_i64_arg`].
pub(crate) fn i64_arg(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<i64> {
    let v = int_arg(obj, what)?;
    Ok(i64::try_from(v).unwrap_or(if v < 0 { i64::MIN } else { i64::MAX }))
}

/// An int that must fit an `i64` as it is, because it comes back out (a test clock's reading,
/// the epoch a decoded timestamp counts from): clamping would answer a different number, so a
/// value outside the range is `polyflake.InvalidArgument` (`name` says which argument).
pub(crate) fn exact_i64_arg(
    obj: &Bound<'_, PyAny>,
    what: &str,
    name: &'static str,
) -> PyResult<i64> {
    let v = int_arg(obj, what)?;
    i64::try_from(v).map_err(|_| {
        let shown = obj
            .repr()
            .map(|r| r.to_string())
            .unwrap_or_else(|_| v.to_string());
        to_py_err(
            obj.py(),
            Error::InvalidArgument {
                name,
                reason: format!("{shown} is outside the 64-bit range [-2**63, 2**63 - 1]"),
            },
        )
    })
}

/// A real number (int or float), refusing bool, str and None.
pub(crate) fn float_arg(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<f64> {
    if obj.is_instance_of::<PyBool>() || obj.is_instance_of::<PyString>() || obj.is_none() {
        return Err(PyTypeError::new_err(format!(
            "{what} must be a number, not {}",
            type_name(obj)
        )));
    }
    obj.extract::<f64>().map_err(|_| {
        PyTypeError::new_err(format!("{what} must be a number, not {}", type_name(obj)))
    })
}

/// `from_py_with` helpers for signatures.
pub(crate) fn node_id_arg(obj: &Bound<'_, PyAny>) -> PyResult<i128> {
    int_arg(obj, "node_id")
}
pub(crate) fn epoch_arg(obj: &Bound<'_, PyAny>) -> PyResult<i64> {
    exact_i64_arg(obj, "epoch_ms", "epoch_ms")
}
pub(crate) fn max_wait_arg(obj: &Bound<'_, PyAny>) -> PyResult<f64> {
    float_arg(obj, "max_wait_ms")
}
pub(crate) fn count_arg(obj: &Bound<'_, PyAny>) -> PyResult<i128> {
    int_arg(obj, "count")
}
pub(crate) fn id_arg(obj: &Bound<'_, PyAny>) -> PyResult<i128> {
    int_arg(obj, "id")
}
pub(crate) fn ms_arg(obj: &Bound<'_, PyAny>) -> PyResult<i64> {
    exact_i64_arg(obj, "ms", "ms")
}
