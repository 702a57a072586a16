//! Python arguments to Rust values: type conversion only (every range rule is the core's).

use crate::error::to_py_err;
use crate::interrupt::{waiting, Cancel};
use polyflake::{batch_len, Error};
use pyo3::exceptions::{PyOverflowError, PyTypeError};
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyFloat, PyInt, PyString};

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

/// A Python int (or `__index__`) as an `i128`, or `Err(text)` with its decimal text (Python's
/// `str(int)`) when it is wider than 128 bits; `bool`, `float`, `str` and None are refused
/// (`Snowflake(True)` is a bug).
pub(crate) fn int_value(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<Result<i128, String>> {
    let not_int = obj.is_instance_of::<PyBool>()
        || obj.is_instance_of::<PyFloat>()
        || obj.is_instance_of::<PyString>()
        || obj.is_none();
    if not_int {
        return Err(wrong_type(obj, what, "an int"));
    }
    // `operator.index(obj)`: the int itself, or what an int-like object's `__index__` gives.
    // SAFETY: PyNumber_Index takes a borrowed object and returns a new reference or null with
    // an exception set.
    let int = unsafe { Bound::from_owned_ptr_or_err(obj.py(), ffi::PyNumber_Index(obj.as_ptr())) }
        .map_err(|_| wrong_type(obj, what, "an int"))?;
    match int.extract::<i128>() {
        Ok(v) => Ok(Ok(v)),
        // Wider than 128 bits: its str is what the caller wrote (in decimal).
        Err(e) if e.is_instance_of::<PyOverflowError>(obj.py()) => {
            Ok(Err(int.str()?.to_cow()?.into_owned()))
        }
        Err(e) => Err(e),
    }
}

/// `Error::too_wide(name, text)` as its Python exception (an `InvalidArgument`).
fn too_wide(obj: &Bound<'_, PyAny>, name: &'static str, text: &str) -> PyErr {
    to_py_err(obj.py(), Error::too_wide(name, text))
}

/// A Python int as an `i128` for the core to judge; wider, `InvalidArgument` echoing the int.
pub(crate) fn int_arg(obj: &Bound<'_, PyAny>, what: &'static str) -> PyResult<i128> {
    int_value(obj, what)?.map_err(|text| too_wide(obj, what, &text))
}

/// An int that must fit an `i64` (the core's type for it), else `InvalidArgument` echoing it.
pub(crate) fn i64_arg(obj: &Bound<'_, PyAny>, what: &'static str) -> PyResult<i64> {
    match int_value(obj, what)? {
        Ok(v) => i64::try_from(v).map_err(|_| too_wide(obj, what, &v.to_string())),
        Err(text) => Err(too_wide(obj, what, &text)),
    }
}

/// An int as an `i64`, clamped to the range: only for a clock's reading, which the core then
/// refuses as outside the ID window (`TimestampOverflow`), as it is.
pub(crate) fn clamped_i64(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<i64> {
    Ok(match int_value(obj, what)? {
        Ok(v) => v.clamp(i64::MIN.into(), i64::MAX.into()) as i64,
        Err(text) if text.starts_with('-') => i64::MIN,
        Err(_) => i64::MAX,
    })
}

/// An int that must fit an `i64` as it is (it comes back out), else `InvalidArgument` (`name`).
pub(crate) fn exact_i64_arg(
    obj: &Bound<'_, PyAny>,
    what: &str,
    name: &'static str,
) -> PyResult<i64> {
    let text = match int_value(obj, what)? {
        Ok(v) => match i64::try_from(v) {
            Ok(v) => return Ok(v),
            Err(_) => v.to_string(),
        },
        Err(text) => text,
    };
    let reason = format!("{text} is outside the 64-bit range [-2**63, 2**63 - 1]");
    Err(to_py_err(obj.py(), bad_argument(name, reason)))
}

/// An int for an unsigned setting of the core (outside the Rust type: the core's `bad` error,
/// echoing the int).
pub(crate) fn unsigned_arg<T: TryFrom<i128>>(
    obj: &Bound<'_, PyAny>,
    what: &'static str,
    bad: fn(&'static str, String) -> Error,
) -> PyResult<T> {
    let text = match int_value(obj, what)? {
        Ok(v) => match T::try_from(v) {
            Ok(v) => return Ok(v),
            Err(_) => v.to_string(),
        },
        Err(text) => text,
    };
    Err(to_py_err(
        obj.py(),
        bad(what, format!("{text} is out of range")),
    ))
}

/// A 64-bit ID given as an int (`what` names it), as an `i128` for the core to judge; wider,
/// `InvalidId` echoing the int.
pub(crate) fn id_arg(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<i128> {
    int_value(obj, what)?.map_err(|input| {
        let reason = if input.starts_with('-') {
            "an ID is never negative"
        } else {
            "an ID must be below 2^63"
        };
        to_py_err(obj.py(), Error::InvalidId { input, reason })
    })
}

/// `bad` for a generator setting.
pub(crate) fn bad_argument(name: &'static str, reason: String) -> Error {
    Error::InvalidArgument { name, reason }
}

/// A real number (int or float), refusing bool, str and None. An int is taken only where a
/// float holds it exactly (|n| <= 2**53, which every message then shows as sent); a wider one is
/// refused as `InvalidArgument`, echoing it (a float would show it rounded, or not at all).
pub(crate) fn float_arg(obj: &Bound<'_, PyAny>, what: &'static str) -> PyResult<f64> {
    let bad = || wrong_type(obj, what, "a number");
    if obj.is_instance_of::<PyBool>() || obj.is_instance_of::<PyString>() || obj.is_none() {
        return Err(bad());
    }
    if obj.is_instance_of::<PyInt>() {
        const EXACT: i128 = 1 << 53;
        let text = match int_value(obj, what)? {
            Ok(v) if (-EXACT..=EXACT).contains(&v) => return Ok(v as f64),
            Ok(v) => v.to_string(),
            Err(text) => text,
        };
        let reason = format!("{text} is out of range: past 2**53 a number is not exact as a float");
        return Err(to_py_err(obj.py(), bad_argument(what, reason)));
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

/// A `bool` argument (no other type: `heal=1` is a TypeError, not a truthy guess).
pub(crate) fn bool_arg(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<bool> {
    match obj.cast::<PyBool>() {
        Ok(b) => Ok(b.is_true()),
        Err(_) => Err(wrong_type(obj, what, "a bool")),
    }
}

/// An optional `str` (None: absent).
pub(crate) fn opt_str_arg(obj: Option<&Bound<'_, PyAny>>, what: &str) -> PyResult<Option<String>> {
    obj.filter(|o| !o.is_none())
        .map(|o| str_arg(o, what))
        .transpose()
}

/// `count` of the core's values in a new `bytes`, written by `fill` as `T` (a plain integer type)
/// with the GIL released (cut short by Ctrl-C or `cancel`: then no bytes), each put by `order`
/// in the byte order Python reads.
pub(crate) fn batch_bytes<'py, T: Copy + Default + Send>(
    count: &Bound<'py, PyAny>,
    cancel: Option<&Cancel>,
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
    PyBytes::new_with(py, n * size, |buf| waiting(py, cancel, || filled(buf)))
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
