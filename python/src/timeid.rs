//! UUIDv7 and ULID: ONE class, `TimeIdGenerator`, over the core's generator with its format
//! chosen at run time (`format=` or the class); `Uuid7Generator` and `UlidGenerator` are its
//! subclasses of a fixed format, made at import with `type()` (no code of their own).
//! `uuid7()` and `ulid()` issue on process-wide strict generators made on first use; the text
//! helpers are the core's.

use crate::args::{batch_bytes, int_value, str_arg, wrong_type};
use crate::error::to_py_err;
use crate::interrupt::{waiting, Cancel};
use crate::settings::{core_settings, Settings};
use crate::utc::utc_datetime;
use polyflake::{self as pf, Error, Mode, TimeFormat, TimeIdBuilder};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBytes, PyDict, PyString, PyTuple, PyType};
use pyo3::{ffi, intern};

/// How an ID goes to Python: `uuid.UUID` for a UUID and text for a ULID, text, 16 bytes.
#[derive(Clone, Copy)]
enum Form {
    Native,
    Text,
    Bytes,
}

/// An ID of `format` in `form`.
fn to_py(py: Python<'_>, format: TimeFormat, u: u128, form: Form) -> PyResult<Bound<'_, PyAny>> {
    Ok(match (form, format) {
        (Form::Bytes, _) => PyBytes::new(py, &u.to_be_bytes()).into_any(),
        (Form::Native, TimeFormat::Uuid7) => uuid_object(py, u)?,
        _ => PyString::new(py, &format.format_id(u)).into_any(),
    })
}

/// One ID of `g`, with the GIL released only if it waits (a strict generator on a clock object,
/// `injected`, skips the try, which would spend a scripted clock's reading).
fn issue(py: Python<'_>, g: &pf::TimeIdGenerator, injected: bool) -> PyResult<u128> {
    if !injected || g.mode() == Mode::Monotonic {
        match g.try_next_id() {
            Ok(Some(u)) => return Ok(u),
            Ok(None) => {}
            Err(e) => return Err(to_py_err(py, e)),
        }
    }
    waiting(py, None, || g.next_id())
}

/// `uuid.UUID` and `SafeUUID.unknown`, fetched once.
struct StdUuid {
    class: Py<PyType>,
    unknown: Py<PyAny>,
}

static STD_UUID: PyOnceLock<StdUuid> = PyOnceLock::new();

fn std_uuid(py: Python<'_>) -> PyResult<&'static StdUuid> {
    STD_UUID.get_or_try_init(py, || {
        let m = py.import("uuid")?;
        Ok(StdUuid {
            class: m.getattr("UUID")?.cast_into::<PyType>()?.unbind(),
            unknown: m.getattr("SafeUUID")?.getattr("unknown")?.unbind(),
        })
    })
}

/// A `uuid.UUID` made as CPython 3.14's `UUID._from_int` does, without `__init__`'s parsing:
/// `object.__new__(UUID)`, then its slots `int` and `is_safe` set past `UUID.__setattr__`.
fn uuid_object(py: Python<'_>, u: u128) -> PyResult<Bound<'_, PyAny>> {
    let std = std_uuid(py)?;
    let int = u.into_pyobject(py)?;
    // SAFETY: `class` is a type object; GenericAlloc is its tp_alloc (object.__new__ does no
    // more for a class without __new__), and GenericSetAttr writes the slots' descriptors.
    unsafe {
        let obj = ffi::PyType_GenericAlloc(std.class.as_ptr().cast(), 0);
        let obj = Bound::from_owned_ptr_or_err(py, obj)?;
        for (name, value) in [
            (intern!(py, "int"), int.as_any()),
            (intern!(py, "is_safe"), std.unknown.bind(py)),
        ] {
            if ffi::PyObject_GenericSetAttr(obj.as_ptr(), name.as_ptr(), value.as_ptr()) < 0 {
                return Err(PyErr::fetch(py));
            }
        }
        Ok(obj)
    }
}

/// UUIDv7 or ULID generator: `format` is `"uuid7"` (the default) or `"ulid"`, or the class's
/// own (`Uuid7Generator`, `UlidGenerator`); settings `mode` ("strict" or "monotonic") and the
/// clock settings of `Snowflake`.
#[pyclass(frozen, subclass, module = "polyflake", name = "TimeIdGenerator")]
pub(crate) struct TimeIdGenerator {
    g: pf::TimeIdGenerator,
    /// True for a clock object (see `issue`).
    injected: bool,
}

/// The subclasses of a fixed format, in `TimeFormat::ALL` order, with their docstrings.
const FIXED: [(&str, &str); 2] = [
    (
        "Uuid7Generator",
        "A UUIDv7 generator (RFC 9562): a TimeIdGenerator whose format is \"uuid7\". \
         next_id() gives a uuid.UUID.",
    ),
    (
        "UlidGenerator",
        "A ULID generator: a TimeIdGenerator whose format is \"ulid\". next_id() gives its \
         26-character text.",
    ),
];

/// The classes of `FIXED`, made by `register`.
static FIXED_CLASSES: PyOnceLock<Vec<Py<PyType>>> = PyOnceLock::new();

/// The format `cls` fixes (`Uuid7Generator`, `UlidGenerator` and their subclasses), if any.
fn fixed_format(cls: &Bound<'_, PyType>) -> PyResult<Option<TimeFormat>> {
    for (c, format) in FIXED_CLASSES
        .get(cls.py())
        .into_iter()
        .flatten()
        .zip(TimeFormat::ALL)
    {
        if cls.is_subclass(c.bind(cls.py()))? {
            return Ok(Some(format));
        }
    }
    Ok(None)
}

#[pymethods]
impl TimeIdGenerator {
    /// Every default shown is the core's (`DEFAULT_*`); `max_lead_ms` is monotonic mode's (the
    /// core's `DEFAULT_MAX_LEAD_MS`; None: unbounded); `format=None` is the class's format.
    #[new]
    #[classmethod]
    #[pyo3(
        signature = (**settings),
        text_signature = "(*, format=None, mode='strict', max_wait_ms=5.0, max_forward_step_ms=60000, forward_confirm_ms=300000, clock=None, clock_source=None, max_lead_ms=5000, max_clock_error_ms=None)"
    )]
    fn new(cls: &Bound<'_, PyType>, settings: Option<&Bound<'_, PyDict>>) -> PyResult<Self> {
        let (py, what) = (cls.py(), cls.name()?.to_string());
        let s = Settings(settings.cloned());
        let fixed = fixed_format(cls)?;
        let asked = match s.take("format")?.filter(|v| !v.is_none()) {
            Some(v) => {
                Some(TimeFormat::from_name(&str_arg(&v, "format")?).map_err(|e| to_py_err(py, e))?)
            }
            None => None,
        };
        let format = match (fixed, asked) {
            (Some(f), Some(a)) if f != a => {
                return Err(PyTypeError::new_err(format!(
                    "{what} issues {f} only: TimeIdGenerator(format=\"{a}\") issues {a}"
                )))
            }
            (f, a) => f.or(a).unwrap_or(TimeFormat::Uuid7),
        };
        let mode = match s.take("mode")? {
            Some(m) => Mode::from_name(&str_arg(&m, "mode")?).map_err(|e| to_py_err(py, e))?,
            None => Mode::Strict,
        };
        let (settings, injected) = core_settings(mode, &s, true)?;
        s.finish(&what)?;
        let g = TimeIdBuilder::new().settings(settings).build(format);
        let g = g.map_err(|e| to_py_err(py, e))?;
        Ok(TimeIdGenerator { g, injected })
    }

    /// `"uuid7"` or `"ulid"`.
    #[getter]
    fn format(&self) -> &'static str {
        self.g.format().name()
    }

    /// One ID: a `uuid.UUID` (UUIDv7) or the 26-character text (ULID).
    fn next_id<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.issue(py, Form::Native)
    }

    /// One ID as its canonical text (UUID: 36 characters, lower case; ULID: 26, upper case).
    fn next_str<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.issue(py, Form::Text)
    }

    /// One ID as 16 bytes, big-endian.
    fn next_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.issue(py, Form::Bytes)
    }

    /// `await g.anext_id()`: an ID issued without waiting is ready at once; a call that would
    /// wait runs `next_id()` in a thread, never blocking the event loop.
    fn anext_id<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        let (py, g, this) = (slf.py(), slf.get(), slf.as_any());
        let skip = g.injected && g.g.mode() == Mode::Strict;
        crate::aio::anext_id(this, skip, || g.try_now(), |id| g.id_to_py(py, id))
    }

    /// One ID if that needs no wait, else None (where `next_id()` would sleep).
    fn try_next_id<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        let u = self.try_now().map_err(|e| to_py_err(py, e))?;
        u.map(|u| self.id_to_py(py, u)).transpose()
    }

    /// `count` consecutive IDs as one `bytes`, 16 big-endian bytes each.
    fn next_ids<'py>(
        &self,
        _py: Python<'py>,
        count: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        batch_bytes(count, None, |out| self.g.next_ids(out), u128::to_be)
    }

    fn __repr__(slf: &Bound<'_, Self>) -> PyResult<String> {
        let g = slf.get();
        let clock = if g.injected { ", clock=injected" } else { "" };
        let source = g.g.health().clock_source.name();
        let (name, mode) = (slf.get_type().name()?, g.g.mode().name());
        Ok(format!(
            "{name}(mode='{mode}', clock_source='{source}'{clock})"
        ))
    }
}

crate::generator::shared_methods!(TimeIdGenerator, g);

impl TimeIdGenerator {
    fn issue<'py>(&self, py: Python<'py>, form: Form) -> PyResult<Bound<'py, PyAny>> {
        let u = issue(py, &self.g, self.injected)?;
        to_py(py, self.g.format(), u, form)
    }

    fn try_now(&self) -> polyflake::Result<Option<u128>> {
        self.g.try_next_id()
    }

    fn next_id_with(&self, py: Python<'_>, cancel: Option<&Cancel>) -> PyResult<u128> {
        waiting(py, cancel, || self.g.next_id())
    }

    fn next_ids_with<'py>(
        &self,
        _py: Python<'py>,
        count: &Bound<'py, PyAny>,
        cancel: Option<&Cancel>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let bytes = batch_bytes(count, cancel, |out| self.g.next_ids(out), u128::to_be)?;
        Ok(bytes.into_any())
    }

    fn id_to_py<'py>(&self, py: Python<'py>, u: u128) -> PyResult<Bound<'py, PyAny>> {
        to_py(py, self.g.format(), u, Form::Native)
    }
}

/// The process-wide strict generators, in `TimeFormat::ALL` order, each made on first use.
static DEFAULTS: [PyOnceLock<pf::TimeIdGenerator>; 2] = [PyOnceLock::new(), PyOnceLock::new()];

/// An ID of the process-wide strict generator of `format`, in `form`.
fn default_id(py: Python<'_>, format: TimeFormat, form: Form) -> PyResult<Bound<'_, PyAny>> {
    let g = DEFAULTS[format as usize].get_or_try_init(py, || {
        TimeIdBuilder::new()
            .build(format)
            .map_err(|e| to_py_err(py, e))
    })?;
    to_py(py, format, issue(py, g, false)?, form)
}

/// A UUIDv7 as a stdlib `uuid.UUID`, from the process-wide strict generator.
#[pyfunction]
fn uuid7(py: Python<'_>) -> PyResult<Bound<'_, PyAny>> {
    default_id(py, TimeFormat::Uuid7, Form::Native)
}

/// A UUIDv7 as its text (36 characters, lower case), from the generator of `uuid7()`.
#[pyfunction]
fn uuid7_str(py: Python<'_>) -> PyResult<Bound<'_, PyAny>> {
    default_id(py, TimeFormat::Uuid7, Form::Text)
}

/// A UUIDv7 as 16 bytes, big-endian, from the generator of `uuid7()`.
#[pyfunction]
fn uuid7_bytes(py: Python<'_>) -> PyResult<Bound<'_, PyAny>> {
    default_id(py, TimeFormat::Uuid7, Form::Bytes)
}

/// A ULID as its 26-character text, from the process-wide strict generator.
#[pyfunction]
fn ulid(py: Python<'_>) -> PyResult<Bound<'_, PyAny>> {
    default_id(py, TimeFormat::Ulid, Form::Native)
}

/// A ULID as 16 bytes, big-endian, from the generator of `ulid()`.
#[pyfunction]
fn ulid_bytes(py: Python<'_>) -> PyResult<Bound<'_, PyAny>> {
    default_id(py, TimeFormat::Ulid, Form::Bytes)
}

/// A 128-bit ID given as a `uuid.UUID`, 16 big-endian bytes, an int, or text (for `parse`).
fn id128_arg(obj: &Bound<'_, PyAny>, parse: fn(&str) -> polyflake::Result<u128>) -> PyResult<u128> {
    let py = obj.py();
    let bad = |input: String, reason| to_py_err(py, Error::InvalidId { input, reason });
    if let Ok(text) = obj.cast::<PyString>() {
        return parse(&text.to_cow()?).map_err(|e| to_py_err(py, e));
    }
    if let Ok(b) = obj.cast::<PyBytes>() {
        let len = format!("{} bytes", b.len().unwrap_or(0));
        let raw = b
            .as_bytes()
            .try_into()
            .map_err(|_| bad(len, "a 128-bit ID is 16 bytes"))?;
        return Ok(u128::from_be_bytes(raw));
    }
    if obj.is_instance(std_uuid(py)?.class.bind(py))? {
        return obj.getattr(intern!(py, "int"))?.extract();
    }
    let want = "a uuid.UUID, 16 bytes, an int or a str";
    // The type check only: a value past 128 bits is judged (and echoed) below.
    let _ = int_value(obj, "id").map_err(|_| wrong_type(obj, "id", want))?;
    let shown = || obj.str().map_or_else(|_| "?".into(), |s| s.to_string());
    let wide = obj.extract::<u128>().ok();
    wide.ok_or_else(|| bad(shown(), "a 128-bit ID is an int from 0 to 2**128 - 1"))
}

/// Parse a UUID's canonical text (36 characters with hyphens, any case) into a `uuid.UUID`.
#[pyfunction]
fn parse_uuid<'py>(py: Python<'py>, text: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    let u = pf::parse_uuid(&str_arg(text, "text")?).map_err(|e| to_py_err(py, e))?;
    uuid_object(py, u)
}

/// The canonical text of a UUID (a `uuid.UUID`, 16 bytes, an int, or text to check).
#[pyfunction]
fn format_uuid(id: &Bound<'_, PyAny>) -> PyResult<String> {
    Ok(pf::format_uuid(id128_arg(id, pf::parse_uuid)?))
}

/// The Unix ms of a UUIDv7 (a `uuid.UUID`, 16 bytes, an int or text).
#[pyfunction]
fn uuid7_timestamp_ms(id: &Bound<'_, PyAny>) -> PyResult<i64> {
    pf::uuid7_timestamp_ms(id128_arg(id, pf::parse_uuid)?).map_err(|e| to_py_err(id.py(), e))
}

/// The time of a UUIDv7 (a `uuid.UUID`, 16 bytes, an int or text) as an aware UTC `datetime`.
#[pyfunction]
fn uuid7_time<'py>(id: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    let ms = pf::uuid7_timestamp_ms(id128_arg(id, pf::parse_uuid)?);
    utc_datetime(id.py(), ms.map_err(|e| to_py_err(id.py(), e))?)
}

/// Parse a ULID's text (Crockford base32, any case) into its 16 bytes, big-endian.
#[pyfunction]
fn parse_ulid<'py>(py: Python<'py>, text: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyBytes>> {
    let u = pf::parse_ulid(&str_arg(text, "text")?).map_err(|e| to_py_err(py, e))?;
    Ok(PyBytes::new(py, &u.to_be_bytes()))
}

/// The canonical text of a ULID (16 bytes, an int, or text to check).
#[pyfunction]
fn format_ulid(id: &Bound<'_, PyAny>) -> PyResult<String> {
    Ok(pf::format_ulid(id128_arg(id, pf::parse_ulid)?))
}

/// The Unix ms of a ULID (16 bytes, an int or text).
#[pyfunction]
fn ulid_timestamp_ms(id: &Bound<'_, PyAny>) -> PyResult<i64> {
    Ok(pf::ulid_timestamp_ms(id128_arg(id, pf::parse_ulid)?))
}

/// The time of a ULID (16 bytes, an int or text) as an aware UTC `datetime` (a ULID past
/// 9999-12-31, which 48 bits of ms reach, is Python's `OverflowError`).
#[pyfunction]
fn ulid_time<'py>(id: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    utc_datetime(
        id.py(),
        pf::ulid_timestamp_ms(id128_arg(id, pf::parse_ulid)?),
    )
}

/// Add the classes and functions of this module: `TimeIdGenerator`, then each fixed format's
/// subclass, made as Python makes a class (`type(name, (TimeIdGenerator,), namespace)`).
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add_class::<TimeIdGenerator>()?;
    let base = py.get_type::<TimeIdGenerator>();
    let mut classes = Vec::new();
    for (name, doc) in FIXED {
        let namespace = PyDict::new(py);
        namespace.set_item("__slots__", PyTuple::empty(py))?;
        namespace.set_item("__module__", "polyflake")?;
        namespace.set_item("__doc__", doc)?;
        let cls = py.get_type::<PyType>().call1((name, (&base,), namespace))?;
        m.add(name, &cls)?;
        classes.push(cls.cast_into::<PyType>()?.unbind());
    }
    // The module is initialised once per interpreter: a second set is not stored.
    let _ = FIXED_CLASSES.set(py, classes);
    add_functions! { m: uuid7, uuid7_str, uuid7_bytes, ulid, ulid_bytes, parse_uuid, format_uuid,
    uuid7_timestamp_ms, uuid7_time, parse_ulid, format_ulid, ulid_timestamp_ms, ulid_time }
    Ok(())
}
