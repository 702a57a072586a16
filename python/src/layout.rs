//! `Layout`: how the 63 usable bits split into timestamp, node and sequence (the core's
//! `polyflake::Layout`, with its presets as class attributes).

use crate::args::int_arg;
use crate::errors::to_py_err;
use polyflake::Layout;
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyList, PyString, PyTuple};

/// A bit layout. Presets: `Layout.DEFAULT` (41/10/12), `Layout.LONG_LIVED` (42/8/13),
/// `Layout.BIG_FLEET` (41/12/10), `Layout.SHORT` (39/12/12); any other split with
/// `Layout(timestamp_bits, node_bits, sequence_bits)` or `Layout.from_name("40/11/12")`.
#[pyclass(frozen, eq, hash, module = "polyflake", name = "Layout")]
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct PyLayout {
    pub(crate) inner: Layout,
}

/// A bit count as the core's `u32`: negative counts become 0 and huge ones `u32::MAX`, both of
/// which the core refuses as an invalid layout.
fn bits(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<u32> {
    let v = int_arg(obj, what)?;
    Ok(u32::try_from(v).unwrap_or(if v < 0 { 0 } else { u32::MAX }))
}

#[pymethods]
impl PyLayout {
    #[new]
    fn new(
        py: Python<'_>,
        timestamp_bits: &Bound<'_, PyAny>,
        node_bits: &Bound<'_, PyAny>,
        sequence_bits: &Bound<'_, PyAny>,
    ) -> PyResult<Self> {
        let t = bits(timestamp_bits, "timestamp_bits")?;
        let n = bits(node_bits, "node_bits")?;
        let s = bits(sequence_bits, "sequence_bits")?;
        Layout::new(t, n, s)
            .map(|inner| PyLayout { inner })
            .map_err(|e| to_py_err(py, e))
    }

    /// A preset by name (`default`, `long_lived`, `big_fleet`, `short`) or `"T/N/S"`.
    #[staticmethod]
    fn from_name(py: Python<'_>, name: &str) -> PyResult<Self> {
        Layout::from_name(name)
            .map(|inner| PyLayout { inner })
            .map_err(|e| to_py_err(py, e))
    }

    #[classattr]
    #[pyo3(name = "DEFAULT")]
    fn default_() -> Self {
        PyLayout {
            inner: Layout::DEFAULT,
        }
    }
    #[classattr]
    #[pyo3(name = "LONG_LIVED")]
    fn long_lived() -> Self {
        PyLayout {
            inner: Layout::LONG_LIVED,
        }
    }
    #[classattr]
    #[pyo3(name = "BIG_FLEET")]
    fn big_fleet() -> Self {
        PyLayout {
            inner: Layout::BIG_FLEET,
        }
    }
    #[classattr]
    #[pyo3(name = "SHORT")]
    fn short() -> Self {
        PyLayout {
            inner: Layout::SHORT,
        }
    }

    /// Bits of elapsed milliseconds.
    #[getter]
    fn timestamp_bits(&self) -> u32 {
        self.inner.timestamp_bits()
    }
    /// Bits of node id.
    #[getter]
    fn node_bits(&self) -> u32 {
        self.inner.node_bits()
    }
    /// Bits of per-millisecond sequence.
    #[getter]
    fn sequence_bits(&self) -> u32 {
        self.inner.sequence_bits()
    }
    /// The largest node id.
    #[getter]
    fn max_node_id(&self) -> u64 {
        self.inner.max_node_id()
    }
    /// The largest sequence value.
    #[getter]
    fn max_sequence(&self) -> u64 {
        self.inner.max_sequence()
    }
    /// IDs one node can issue per millisecond.
    #[getter]
    fn ids_per_ms(&self) -> u64 {
        self.inner.ids_per_ms()
    }
    /// The largest elapsed milliseconds since the epoch.
    #[getter]
    fn max_elapsed_ms(&self) -> u64 {
        self.inner.max_elapsed_ms()
    }
    /// Years of milliseconds the timestamp field holds (Julian years).
    #[getter]
    fn years(&self) -> f64 {
        self.inner.years()
    }
    /// The preset name, or None for a custom layout.
    #[getter]
    fn name(&self) -> Option<&'static str> {
        self.inner.preset_name()
    }

    pub(crate) fn __repr__(&self) -> String {
        match self.inner.preset_name() {
            Some(name) => format!("Layout.{}", name.to_ascii_uppercase()),
            None => format!(
                "Layout({}, {}, {})",
                self.inner.timestamp_bits(),
                self.inner.node_bits(),
                self.inner.sequence_bits()
            ),
        }
    }

    fn __str__(&self) -> String {
        self.inner.to_string()
    }

    fn __reduce__(&self, py: Python<'_>) -> PyResult<(Py<PyAny>, (u32, u32, u32))> {
        let cls = py.get_type::<PyLayout>().into_any().unbind();
        Ok((
            cls,
            (
                self.inner.timestamp_bits(),
                self.inner.node_bits(),
                self.inner.sequence_bits(),
            ),
        ))
    }
}

/// The `layout=` argument: a `Layout`, a name (`"big_fleet"`, `"41/10/12"`), a
/// `(timestamp_bits, node_bits, sequence_bits)` tuple or list, or None for the default.
pub(crate) fn layout_arg(obj: Option<&Bound<'_, PyAny>>) -> PyResult<Layout> {
    let Some(obj) = obj else {
        return Ok(Layout::DEFAULT);
    };
    let py = obj.py();
    if obj.is_none() {
        return Ok(Layout::DEFAULT);
    }
    if let Ok(l) = obj.cast::<PyLayout>() {
        return Ok(l.get().inner);
    }
    if let Ok(s) = obj.cast::<PyString>() {
        return Layout::from_name(&s.to_cow()?).map_err(|e| to_py_err(py, e));
    }
    if obj.is_instance_of::<PyTuple>() || obj.is_instance_of::<PyList>() {
        let items: Vec<Bound<'_, PyAny>> = obj.try_iter()?.collect::<PyResult<_>>()?;
        if let [t, n, s] = items.as_slice() {
            let (t, n, s) = (
                bits(t, "timestamp_bits")?,
                bits(n, "node_bits")?,
                bits(s, "sequence_bits")?,
            );
            return Layout::new(t, n, s).map_err(|e| to_py_err(py, e));
        }
        return Err(PyTypeError::new_err(format!(
            "a layout tuple has 3 ints (timestamp_bits, node_bits, sequence_bits), not {}",
            items.len()
        )));
    }
    Err(PyTypeError::new_err(format!(
        "layout must be a polyflake.Layout, a name such as 'big_fleet' or '41/10/12', or a \
         (timestamp_bits, node_bits, sequence_bits) tuple, not {}",
        obj.get_type().name()?
    )))
}
