//! UUIDv7 and ULID: `Uuid7Generator` and `UlidGenerator` over the core's 128-bit generators
//! (one engine for both formats, with the Snowflake generator's rewind guard, forward-step check,
//! health and close), the module's `uuid7()` and `ulid()` on process-wide strict generators made
//! on first use, and the text helpers. A UUID comes out as a stdlib `uuid.UUID`, a ULID as its
//! 26-character text; `*_bytes` give the 16 bytes (big-endian), `*_str` the text, and a batch
//! is one `bytes` of 16 bytes per ID in issue order.
//!
//! These generators hold no node id, so nothing needs re-making after `fork()`: the core's
//! generators go on in the child, with their random parts reseeded there.

use crate::aio;
use crate::args::{fill_bytes, int_arg, str_arg, type_name};
use crate::errors::to_py_err;
use crate::settings::{apply, Settings};
use polyflake::{batch_len, Error, Health, Mode, TimeIdBuilder, UlidGenerator, Uuid7Generator};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBytes, PyDict, PyString, PyType};
use pyo3::{ffi, intern};

/// One of the core's 128-bit generators.
enum Engine {
    Uuid7(Uuid7Generator),
    Ulid(UlidGenerator),
}

/// How an ID goes to Python.
#[derive(Clone, Copy)]
enum Form {
    /// A `uuid.UUID` for a UUID, the text for a ULID.
    Native,
    /// The canonical text.
    Text,
    /// 16 bytes, big-endian.
    Bytes,
}

impl Engine {
    fn try_next(&self) -> polyflake::Result<Option<u128>> {
        match self {
            Engine::Uuid7(g) => g.try_next_uuid(),
            Engine::Ulid(g) => g.try_next_ulid(),
        }
    }
    fn next(&self) -> polyflake::Result<u128> {
        match self {
            Engine::Uuid7(g) => g.next_uuid(),
            Engine::Ulid(g) => g.next_ulid(),
        }
    }
    fn fill(&self, out: &mut [u128]) -> polyflake::Result<()> {
        match self {
            Engine::Uuid7(g) => g.next_uuids(out),
            Engine::Ulid(g) => g.next_ulids(out),
        }
    }
    fn health(&self) -> Health {
        match self {
            Engine::Uuid7(g) => g.health(),
            Engine::Ulid(g) => g.health(),
        }
    }
    fn close(&self) {
        match self {
            Engine::Uuid7(g) => g.close(),
            Engine::Ulid(g) => g.close(),
        }
    }
    fn mode(&self) -> Mode {
        match self {
            Engine::Uuid7(g) => g.mode(),
            Engine::Ulid(g) => g.mode(),
        }
    }

    /// One ID in `form`: with the GIL held when the core issues it without waiting, else with
    /// the GIL released while it waits. A strict generator on a clock object goes straight to
    /// the waiting call: a declined try spends a reading, which a scripted clock would notice.
    fn issue<'py>(
        &self,
        py: Python<'py>,
        injected: bool,
        form: Form,
    ) -> PyResult<Bound<'py, PyAny>> {
        if !injected || self.mode() == Mode::Monotonic {
            match self.try_next() {
                Ok(Some(u)) => return self.to_py(py, u, form),
                Ok(None) => {}
                Err(e) => return Err(to_py_err(py, e)),
            }
        }
        let u = py.detach(|| self.next()).map_err(|e| to_py_err(py, e))?;
        self.to_py(py, u, form)
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

/// A stdlib `uuid.UUID` of this value, made as `uuid.UUID` makes itself without `__init__`'s
/// parsing: `object.__new__(UUID)`, then its two slots (`int`, and `is_safe` = unknown) set
/// past `UUID.__setattr__`, which refuses every write. (CPython 3.14's `UUID._from_int` does
/// the same in Python.)
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

/// Base of `Uuid7Generator` and `UlidGenerator` (ONE implementation; the format comes from the
/// class, as the mode does for `Snowflake` and `MonotonicSnowflake`).
#[pyclass(frozen, subclass, module = "polyflake", name = "_TimeIdGenerator")]
pub(crate) struct TimeIdGenerator {
    engine: Engine,
    /// True for a clock object (see `Engine::issue`).
    injected: bool,
}

/// A UUIDv7 generator (RFC 9562) with explicit settings: `mode` ("strict" or "monotonic"),
/// `max_wait_ms`, `max_lead_ms` (monotonic), `clock`, `clock_source`, `max_forward_step_ms`,
/// `forward_confirm_ms`. `next_id()` gives a `uuid.UUID`.
#[pyclass(frozen, extends = TimeIdGenerator, module = "polyflake", name = "Uuid7Generator")]
pub(crate) struct PyUuid7Generator;

/// A ULID generator with explicit settings (those of `Uuid7Generator`). `next_id()` gives the
/// 26-character text.
#[pyclass(frozen, extends = TimeIdGenerator, module = "polyflake", name = "UlidGenerator")]
pub(crate) struct PyUlidGenerator;

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
    let (b, injected) = apply(TimeIdBuilder::new(), mode, &s)?;
    s.finish(what)?;
    let engine = if what == "UlidGenerator" {
        b.build_ulid().map(Engine::Ulid)
    } else {
        b.build_uuid7().map(Engine::Uuid7)
    };
    let engine = engine.map_err(|e| to_py_err(py, e))?;
    Ok(PyClassInitializer::from(TimeIdGenerator {
        engine,
        injected,
    }))
}

/// The constructor of each format's class, `Class: "PythonName";`: `make` with its settings.
macro_rules! time_id_constructors {
    ($($class:ident: $name:literal;)*) => {$(
        #[pymethods]
        impl $class {
            #[new]
            #[pyo3(signature = (**settings))]
            fn new(
                py: Python<'_>,
                settings: Option<&Bound<'_, PyDict>>,
            ) -> PyResult<PyClassInitializer<Self>> {
                Ok(make(py, $name, settings)?.add_subclass($class))
            }
        }
    )*};
}

time_id_constructors! {
    PyUuid7Generator: "Uuid7Generator";
    PyUlidGenerator: "UlidGenerator";
}

#[pymethods]
impl TimeIdGenerator {
    /// One ID: a `uuid.UUID` (UUIDv7) or the 26-character text (ULID).
    fn next_id<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.engine.issue(py, self.injected, Form::Native)
    }

    /// One ID as its canonical text (UUID: 36 characters, lower case; ULID: 26, upper case).
    fn next_str<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.engine.issue(py, self.injected, Form::Text)
    }

    /// One ID as 16 bytes, big-endian (what a `uuid` column or `uuid.UUID(bytes=...)` takes).
    fn next_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.engine.issue(py, self.injected, Form::Bytes)
    }

    /// One ID if that needs no wait, else None (where `next_id()` would sleep).
    fn try_next_id<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        let u = self.engine.try_next().map_err(|e| to_py_err(py, e))?;
        u.map(|u| self.engine.to_py(py, u, Form::Native))
            .transpose()
    }

    /// `count` consecutive IDs as one `bytes` of 16 big-endian bytes each, filled by the core
    /// with the GIL released.
    fn next_ids<'py>(
        &self,
        py: Python<'py>,
        count: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let n = batch_len(int_arg(count, "count")?).map_err(|e| to_py_err(py, e))?;
        PyBytes::new_with(py, n * 16, |buf| {
            py.detach(|| fill_bytes(buf, |out| self.engine.fill(out), u128::to_be))
                .map_err(|e| to_py_err(py, e))
        })
    }

    /// `await g.anext_id()`: `next_id()` that never blocks the running event loop: an ID the
    /// core issues without waiting is ready at once; a wait runs in a thread.
    fn anext_id<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        let (py, g) = (slf.py(), slf.get());
        aio::anext_id(
            slf.as_any(),
            g.injected && g.engine.mode() == Mode::Strict,
            || g.engine.try_next(),
            |u| g.engine.to_py(py, u, Form::Native),
        )
    }

    fn __repr__(slf: &Bound<'_, Self>) -> PyResult<String> {
        let g = slf.get();
        let clock = if g.injected { ", clock=injected" } else { "" };
        let source = g.engine.health().clock_source.name();
        Ok(format!(
            "{}(mode='{}', clock_source='{source}'{clock})",
            slf.get_type().name()?,
            g.engine.mode().name()
        ))
    }
}

crate::generator::shared_methods!(TimeIdGenerator, engine);

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
    engine.issue(py, false, form)
}

/// The module's functions on the process-wide generators: `name: cell, form;` each, with its
/// doc comment.
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
    /// A UUIDv7 as its canonical text (36 characters, lower case), from the same generator as
    /// `uuid7()`.
    uuid7_str: UUID7, Text;
    /// A UUIDv7 as 16 bytes, big-endian, from the same generator as `uuid7()`.
    uuid7_bytes: UUID7, Bytes;
    /// A ULID as its 26-character text (Crockford base32, upper case), from the process-wide
    /// strict generator.
    ulid: ULID, Native;
    /// A ULID as 16 bytes, big-endian, from the same generator as `ulid()`.
    ulid_bytes: ULID, Bytes;
}

/// A 128-bit ID given as a `uuid.UUID`, 16 big-endian bytes, an int, or text (read by
/// `parse`, the core's parser of the format).
fn id128_arg(obj: &Bound<'_, PyAny>, parse: fn(&str) -> polyflake::Result<u128>) -> PyResult<u128> {
    let py = obj.py();
    let bad = |input: String, reason| to_py_err(py, Error::InvalidId { input, reason });
    if let Ok(text) = obj.cast::<PyString>() {
        return parse(&text.to_cow()?).map_err(|e| to_py_err(py, e));
    }
    if let Ok(b) = obj.cast::<PyBytes>() {
        let raw = <[u8; 16]>::try_from(b.as_bytes()).map_err(|_| {
            bad(
                format!("{} bytes", b.len().unwrap_or(0)),
                "a 128-bit ID is 16 bytes",
            )
        })?;
        return Ok(u128::from_be_bytes(raw));
    }
    if obj.is_instance(std_uuid(py)?.class.bind(py))? {
        return obj.getattr(intern!(py, "int"))?.extract();
    }
    let i = int_arg(obj, "id").map_err(|_| {
        PyTypeError::new_err(format!(
            "id must be a uuid.UUID, 16 bytes, an int or a str, not {}",
            type_name(obj)
        ))
    })?;
    // int_arg saturates at the i128 range, which the u128 range check below refuses too.
    let wide = obj.extract::<u128>().ok().filter(|_| i >= 0);
    wide.ok_or_else(|| {
        bad(
            obj.str().map_or_else(|_| "?".into(), |s| s.to_string()),
            "a 128-bit ID is an int from 0 to 2**128 - 1",
        )
    })
}

/// Parse a UUID's canonical text (36 characters with hyphens, any case) into a `uuid.UUID`.
#[pyfunction]
fn parse_uuid<'py>(py: Python<'py>, text: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    let u = polyflake::parse_uuid(&str_arg(text, "text")?).map_err(|e| to_py_err(py, e))?;
    uuid_object(py, u)
}

/// The canonical text of a UUID (a `uuid.UUID`, 16 bytes, an int, or text to check).
#[pyfunction]
fn format_uuid(id: &Bound<'_, PyAny>) -> PyResult<String> {
    Ok(polyflake::format_uuid(id128_arg(
        id,
        polyflake::parse_uuid,
    )?))
}

/// The Unix ms of a UUIDv7 (a `uuid.UUID`, 16 bytes, an int or text); refused
/// (`InvalidId`) unless its version is 7 and its variant RFC 9562's.
#[pyfunction]
fn uuid7_timestamp_ms(id: &Bound<'_, PyAny>) -> PyResult<i64> {
    let u = id128_arg(id, polyflake::parse_uuid)?;
    polyflake::uuid7_timestamp_ms(u).map_err(|e| to_py_err(id.py(), e))
}

/// Parse a ULID's text (Crockford base32, any case, I and L read as 1, O as 0) into its 16
/// bytes, big-endian.
#[pyfunction]
fn parse_ulid<'py>(py: Python<'py>, text: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyBytes>> {
    let u = polyflake::parse_ulid(&str_arg(text, "text")?).map_err(|e| to_py_err(py, e))?;
    Ok(PyBytes::new(py, &u.to_be_bytes()))
}

/// The canonical text of a ULID (16 bytes, an int, or text to check): 26 characters, upper
/// case.
#[pyfunction]
fn format_ulid(id: &Bound<'_, PyAny>) -> PyResult<String> {
    Ok(polyflake::format_ulid(id128_arg(
        id,
        polyflake::parse_ulid,
    )?))
}

/// The Unix ms of a ULID (16 bytes, an int or text).
#[pyfunction]
fn ulid_timestamp_ms(id: &Bound<'_, PyAny>) -> PyResult<i64> {
    Ok(polyflake::ulid_timestamp_ms(id128_arg(
        id,
        polyflake::parse_ulid,
    )?))
}

/// Add the classes and functions of this module.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyUuid7Generator>()?;
    m.add_class::<PyUlidGenerator>()?;
    // The shared base is not public (not in `__all__`), but reachable for the stubs.
    m.setattr("_TimeIdGenerator", m.py().get_type::<TimeIdGenerator>())?;
    m.add_function(wrap_pyfunction!(uuid7, m)?)?;
    m.add_function(wrap_pyfunction!(uuid7_str, m)?)?;
    m.add_function(wrap_pyfunction!(uuid7_bytes, m)?)?;
    m.add_function(wrap_pyfunction!(ulid, m)?)?;
    m.add_function(wrap_pyfunction!(ulid_bytes, m)?)?;
    m.add_function(wrap_pyfunction!(parse_uuid, m)?)?;
    m.add_function(wrap_pyfunction!(format_uuid, m)?)?;
    m.add_function(wrap_pyfunction!(uuid7_timestamp_ms, m)?)?;
    m.add_function(wrap_pyfunction!(parse_ulid, m)?)?;
    m.add_function(wrap_pyfunction!(format_ulid, m)?)?;
    m.add_function(wrap_pyfunction!(ulid_timestamp_ms, m)?)?;
    Ok(())
}
