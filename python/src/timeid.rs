//! UUIDv7 and ULID: `Uuid7Generator` and `UlidGenerator`, `uuid7()` and `ulid()` on
//! process-wide strict generators made on first use, and the text helpers.

use crate::args::{batch_bytes, int_value, str_arg, wrong_type};
use crate::error::to_py_err;
use crate::interrupt::{waiting, Cancel};
use crate::settings::{core_settings, Settings};
use crate::utc::utc_datetime;
use polyflake::{self as pf, Error, Issuer, Mode, TimeIdBuilder};
use polyflake::{UlidGenerator, Uuid7Generator};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBytes, PyDict, PyString, PyType};
use pyo3::{ffi, intern};

/// One of the core's 128-bit generators.
enum Engine {
    Uuid7(Uuid7Generator),
    Ulid(UlidGenerator),
}

/// How an ID goes to Python: `uuid.UUID` for a UUID and text for a ULID, text, 16 bytes.
#[derive(Clone, Copy)]
enum Form {
    Native,
    Text,
    Bytes,
}

/// Either engine as the core's [`Issuer`]: `engine.next_id()`, `engine.health()` and the rest
/// are the core's calls on whichever generator it holds.
impl std::ops::Deref for Engine {
    type Target = dyn Issuer<Id = u128>;

    fn deref(&self) -> &Self::Target {
        match self {
            Engine::Uuid7(g) => g,
            Engine::Ulid(g) => g,
        }
    }
}

impl Engine {
    /// One ID, with the GIL released only if it waits (a strict generator on a clock object
    /// skips the try, which would spend a scripted clock's reading).
    fn issue_u128(&self, py: Python<'_>, clocked: bool) -> PyResult<u128> {
        if !clocked || self.mode() == Mode::Monotonic {
            match self.try_next_id() {
                Ok(Some(u)) => return Ok(u),
                Ok(None) => {}
                Err(e) => return Err(to_py_err(py, e)),
            }
        }
        self.next_with(py, None)
    }

    /// One ID with the GIL released, cut short by Ctrl-C (or `cancel`) while it waits.
    fn next_with(&self, py: Python<'_>, cancel: Option<&Cancel>) -> PyResult<u128> {
        waiting(py, cancel, || self.next_id())
    }

    fn to_py<'py>(&self, py: Python<'py>, u: u128, form: Form) -> PyResult<Bound<'py, PyAny>> {
        Ok(match (form, self) {
            (Form::Bytes, _) => PyBytes::new(py, &u.to_be_bytes()).into_any(),
            (Form::Native, Engine::Uuid7(_)) => uuid_object(py, u)?,
            (_, Engine::Uuid7(_)) => PyString::new(py, &polyflake::format_uuid(u)).into_any(),
            (_, Engine::Ulid(_)) => PyString::new(py, &polyflake::format_ulid(u)).into_any(),
        })
    }
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

/// Base of `Uuid7Generator` and `UlidGenerator` (ONE implementation; the class gives the format).
#[pyclass(frozen, subclass, module = "polyflake", name = "_TimeIdGenerator")]
pub(crate) struct TimeIdGenerator {
    engine: Engine,
    /// True for a clock object (see `Engine::issue`).
    injected: bool,
}

/// The generator `what` asks for, from its keyword settings.
fn make(
    py: Python<'_>,
    what: &str,
    settings: Option<&Bound<'_, PyDict>>,
) -> PyResult<PyClassInitializer<TimeIdGenerator>> {
    let s = Settings(settings.cloned());
    let mode = match s.take("mode")? {
        Some(m) => Mode::from_name(&str_arg(&m, "mode")?).map_err(|e| to_py_err(py, e))?,
        None => Mode::Strict,
    };
    let (settings, injected) = core_settings(mode, &s, true)?;
    let b = TimeIdBuilder::new().settings(settings);
    s.finish(what)?;
    let engine = match what {
        "UlidGenerator" => b.build_ulid().map(Engine::Ulid),
        _ => b.build_uuid7().map(Engine::Uuid7),
    };
    let engine = engine.map_err(|e| to_py_err(py, e))?;
    Ok(TimeIdGenerator { engine, injected }.into())
}

/// Each format's class, `Class: "PythonName";`: a `TimeIdGenerator` with its constructor.
macro_rules! time_id_classes {
    ($($(#[doc = $doc:literal])* $class:ident: $name:tt;)*) => {$(
        $(#[doc = $doc])*
        #[pyclass(frozen, extends = TimeIdGenerator, module = "polyflake", name = $name)]
        pub(crate) struct $class;

        #[pymethods]
        impl $class {
            /// Every default shown is the core's (`DEFAULT_*`); `max_lead_ms` is monotonic
            /// mode's (the core's `DEFAULT_MAX_LEAD_MS`; None: unbounded).
            #[new]
            #[pyo3(
                signature = (**settings),
                text_signature = "(*, mode='strict', max_wait_ms=5.0, max_forward_step_ms=60000, forward_confirm_ms=300000, clock=None, clock_source=None, max_lead_ms=5000, max_clock_error_ms=None)"
            )]
            fn new(
                py: Python<'_>,
                settings: Option<&Bound<'_, PyDict>>,
            ) -> PyResult<PyClassInitializer<Self>> {
                Ok(make(py, $name, settings)?.add_subclass($class))
            }
        }
    )*};
}

time_id_classes! {
    /// A UUIDv7 generator (RFC 9562); settings `mode` ("strict" or "monotonic") and the clock
    /// settings of `Snowflake`. `next_id()` gives a `uuid.UUID`.
    PyUuid7Generator: "Uuid7Generator";
    /// A ULID generator (the settings of `Uuid7Generator`); `next_id()` gives its text.
    PyUlidGenerator: "UlidGenerator";
}

#[pymethods]
impl TimeIdGenerator {
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
        let skip = g.injected && g.engine.mode() == polyflake::Mode::Strict;
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
        batch_bytes(count, None, |out| self.engine.next_ids(out), u128::to_be)
    }

    fn __repr__(slf: &Bound<'_, Self>) -> PyResult<String> {
        let g = slf.get();
        let clock = if g.injected { ", clock=injected" } else { "" };
        let source = g.engine.health().clock_source.name();
        let (name, mode) = (slf.get_type().name()?, g.engine.mode().name());
        Ok(format!(
            "{name}(mode='{mode}', clock_source='{source}'{clock})"
        ))
    }
}

crate::generator::shared_methods!(TimeIdGenerator, engine);

impl TimeIdGenerator {
    fn issue<'py>(&self, py: Python<'py>, form: Form) -> PyResult<Bound<'py, PyAny>> {
        let u = self.engine.issue_u128(py, self.injected)?;
        self.engine.to_py(py, u, form)
    }

    fn try_now(&self) -> polyflake::Result<Option<u128>> {
        self.engine.try_next_id()
    }

    fn next_id_with(&self, py: Python<'_>, cancel: Option<&Cancel>) -> PyResult<u128> {
        self.engine.next_with(py, cancel)
    }

    fn next_ids_with<'py>(
        &self,
        _py: Python<'py>,
        count: &Bound<'py, PyAny>,
        cancel: Option<&Cancel>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let bytes = batch_bytes(count, cancel, |out| self.engine.next_ids(out), u128::to_be)?;
        Ok(bytes.into_any())
    }

    fn id_to_py<'py>(&self, py: Python<'py>, u: u128) -> PyResult<Bound<'py, PyAny>> {
        self.engine.to_py(py, u, Form::Native)
    }
}

static UUID7: PyOnceLock<Engine> = PyOnceLock::new();
static ULID: PyOnceLock<Engine> = PyOnceLock::new();

/// The process-wide strict generator of a format, made on first use.
fn default_id<'py>(
    py: Python<'py>,
    cell: &'static PyOnceLock<Engine>,
    form: Form,
) -> PyResult<Bound<'py, PyAny>> {
    let engine = cell.get_or_try_init(py, || {
        let e = if std::ptr::eq(cell, &ULID) {
            UlidGenerator::strict().map(Engine::Ulid)
        } else {
            Uuid7Generator::strict().map(Engine::Uuid7)
        };
        e.map_err(|e| to_py_err(py, e))
    })?;
    let u = engine.issue_u128(py, false)?;
    engine.to_py(py, u, form)
}

/// The module's functions on the process-wide generators, `name: cell, form;` each.
macro_rules! default_id_functions {
    ($($(#[doc = $doc:literal])* $name:ident: $cell:ident, $form:ident;)*) => {$(
        $(#[doc = $doc])*
        #[pyfunction]
        fn $name(py: Python<'_>) -> PyResult<Bound<'_, PyAny>> {
            default_id(py, &$cell, Form::$form)
        }
    )*};
}

default_id_functions! {
    /// A UUIDv7 as a stdlib `uuid.UUID`, from the process-wide strict generator.
    uuid7: UUID7, Native;
    /// A UUIDv7 as its text (36 characters, lower case), from the generator of `uuid7()`.
    uuid7_str: UUID7, Text;
    /// A UUIDv7 as 16 bytes, big-endian, from the generator of `uuid7()`.
    uuid7_bytes: UUID7, Bytes;
    /// A ULID as its 26-character text, from the process-wide strict generator.
    ulid: ULID, Native;
    /// A ULID as 16 bytes, big-endian, from the generator of `ulid()`.
    ulid_bytes: ULID, Bytes;
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

/// Add the classes and functions of this module.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyUuid7Generator>()?;
    m.add_class::<PyUlidGenerator>()?;
    // The shared base is not public (not in `__all__`), but reachable for the stubs.
    m.setattr("_TimeIdGenerator", m.py().get_type::<TimeIdGenerator>())?;
    add_functions! { m: uuid7, uuid7_str, uuid7_bytes, ulid, ulid_bytes, parse_uuid, format_uuid,
    uuid7_timestamp_ms, uuid7_time, parse_ulid, format_ulid, ulid_timestamp_ms, ulid_time }
    Ok(())
}
