//! Python arguments to Rust values: type conversion only (every range rule is the core's).

use crate::errors::to_py_err;
use polyflake::{batch_len, Error};
use pyo3::exceptions::{PyOverflowError, PyTypeError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyFloat, PyString};

/// The name of an object's type, for error messages.
pub(crate) fn type_name(obj: &Bound<'_, PyAny>) -> String {
    obj.get_type()
        .name()
        .map_or_else(|_| "?".into(), |n| n.to_string())
}

/// `{what} must be {want}, not {type}`.
pub(crate) fn wrong_type(obj: &Bound<'_, PyAny>, what: &str, want: &str) -> PyErr {
    PyTypeError::new_err(format!("{what} must be {want}, not {}", type_name(obj)))
}

/// A Python int (or `__index__`) as an `i128`; `bool` is refused (`Snowflake(True)` is a bug). An
/// int beyond 128 bits becomes the bound of its sign, which the core refuses as out of range.
pub(crate) fn int_arg(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<i128> {
    let not_int = obj.is_instance_of::<PyBool>()
        || obj.is_instance_of::<PyFloat>()
        || obj.is_instance_of::<PyString>()
        || obj.is_none();
    match obj.extract::<i128>() {
        Ok(v) if !not_int => Ok(v),
        Err(e) if !not_int && e.is_instance_of::<PyOverflowError>(obj.py()) => {
            Ok(if obj.lt(0)? { i128::MIN } else { i128::MAX })
        }
        _ => Err(wrong_type(obj, what, "an int")),
    }
}

/// An int as an `i64` for the core to judge, clamped to the range (never for values read back).
pub(crate) fn i64_arg(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<i64> {
    Ok(int_arg(obj, what)?.clamp(i64::MIN.into(), i64::MAX.into()) as i64)
}

/// An int that must fit an `i64` as it is (it comes back out), else `InvalidArgument` (`name`).
pub(crate) fn exact_i64_arg(
    obj: &Bound<'_, PyAny>,
    what: &str,
    name: &'static str,
) -> PyResult<i64> {
    let v = int_arg(obj, what)?;
    i64::try_from(v).map_err(|_| {
        let shown = obj.repr().map_or_else(|_| v.to_string(), |r| r.to_string());
        let reason = format!("{shown} is outside the 64-bit range [-2**63, 2**63 - 1]");
        to_py_err(obj.py(), bad_argument(name, reason))
    })
}

/// An int for an unsigned setting of the core (outside the Rust type: the core's `bad` error).
pub(crate) fn unsigned_arg<T: TryFrom<i128>>(
    obj: &Bound<'_, PyAny>,
    what: &'static str,
    bad: fn(&'static str, String) -> Error,
) -> PyResult<T> {
    let v = int_arg(obj, what)?;
    T::try_from(v).map_err(|_| to_py_err(obj.py(), bad(what, format!("{v} is out of range"))))
}

/// `bad` for a generator setting.
pub(crate) fn bad_argument(name: &'static str, reason: String) -> Error {
    Error::InvalidArgument { name, reason }
}

/// A real number (int or float), refusing bool, str and None.
pub(crate) fn float_arg(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<f64> {
    let bad = || wrong_type(obj, what, "a number");
    if obj.is_instance_of::<PyBool>() || obj.is_instance_of::<PyString>() || obj.is_none() {
        return Err(bad());
    }
    obj.extract::<f64>().map_err(|_| bad())
}

/// A `str` argument (no other type, not even bytes).
pub(crate) fn str_arg(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<String> {
    match obj.cast::<PyString>() {
        Ok(s) => Ok(s.to_cow()?.into_owned()),
        Err(_) => Err(wrong_type(obj, what, "a str")),
    }
}

/// An optional `str` (None: absent).
pub(crate) fn opt_str_arg(obj: Option<&Bound<'_, PyAny>>, what: &str) -> PyResult<Option<String>> {
    obj.filter(|o| !o.is_none())
        .map(|o| str_arg(o, what))
        .transpose()
}

/// `count` of the core's values in a new `bytes`, written by `fill` as `T` (a plain integer type)
/// with the GIL released, each put by `order` in the byte order Python reads.
pub(crate) fn batch_bytes<'py, T: Copy + Default + Send>(
    count: &Bound<'py, PyAny>,
    fill: impl FnOnce(&mut [T]) -> polyflake::Result<()> + Send,
    order: fn(T) -> T,
) -> PyResult<Bound<'py, PyBytes>> {
    let (py, size) = (count.py(), std::mem::size_of::<T>());
    let n = batch_len(int_arg(count, "count")?).map_err(|e| to_py_err(py, e))?;
    let filled = |buf: &mut [u8]| {
        // SAFETY: T is a plain integer type (above); align_to_mut only reinterprets the aligned
        // middle of the buffer.
        let (head, values, tail) = unsafe { buf.align_to_mut::<T>() };
        if head.is_empty() && tail.is_empty() {
            fill(values)?;
            values.iter_mut().for_each(|v| *v = order(*v));
            return Ok(());
        }
        // A misaligned buffer (not seen with CPython's bytes): fill aside, then copy.
        let mut aside = polyflake::batch_buffer::<T>(buf.len() / size)?;
        fill(&mut aside)?;
        for (chunk, v) in buf.chunks_exact_mut(size).zip(aside) {
            let v = order(v);
            // SAFETY: `v` is a plain integer of `size` bytes.
            chunk.copy_from_slice(unsafe {
                std::slice::from_raw_parts((&v as *const T).cast(), size)
            });
        }
        Ok(())
    };
    PyBytes::new_with(py, n * size, |buf| {
        py.detach(|| filled(buf)).map_err(|e| to_py_err(py, e))
    })
}

/// Read-only properties of a class, `name: type = value;` each, `value` reading the instance `$s`.
macro_rules! getters {
    ($class:ty, |$s:ident| $($(#[doc = $doc:literal])* $name:ident: $t:ty = $value:expr;)*) => {
        #[pymethods]
        impl $class {$(
            $(#[doc = $doc])*
            #[getter]
            fn $name(&self) -> $t {
                let $s = self;
                $value
            }
        )*}
    };
}
pub(crate) use getters;
