//! `Layout`: the core's `polyflake::Layout` (its presets become class attributes in `lib.rs`).

use crate::args::{bad_argument, getters, type_name, unsigned_arg};
use crate::error::to_py_err;
use polyflake::Layout;
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyList, PyString, PyTuple};

/// A bit layout: a preset (`Layout.DEFAULT`, 41/10/12, `LONG_LIVED`, `BIG_FLEET`, `SHORT`),
/// `Layout(timestamp_bits, node_bits, sequence_bits)` or `Layout.from_name("40/11/12")`.
#[pyclass(frozen, eq, hash, module = "polyflake", name = "Layout")]
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct PyLayout(pub(crate) Layout);

/// Three bit counts as the core's layout (one that is no `u32`: `InvalidArgument`, echoing it).
fn from_bits(py: Python<'_>, bits: [&Bound<'_, PyAny>; 3]) -> PyResult<Layout> {
    let (names, mut n) = (["timestamp_bits", "node_bits", "sequence_bits"], [0u32; 3]);
    for (i, obj) in bits.iter().enumerate() {
        n[i] = unsigned_arg(obj, names[i], not_bits)?;
    }
    Layout::new(n[0], n[1], n[2]).map_err(|e| to_py_err(py, e))
}

/// A layout field that is no bit count at all (negative, or past 2**32 - 1).
fn not_bits(name: &'static str, reason: String) -> polyflake::Error {
    let rule = "each field needs at least 1 bit, the node and sequence fields at most 32, \
                and the three must add up to 63";
    bad_argument(name, format!("{reason}: {rule}"))
}

#[pymethods]
impl PyLayout {
    #[new]
    fn new(
        timestamp_bits: &Bound<'_, PyAny>,
        node_bits: &Bound<'_, PyAny>,
        sequence_bits: &Bound<'_, PyAny>,
    ) -> PyResult<Self> {
        let bits = [timestamp_bits, node_bits, sequence_bits];
        from_bits(timestamp_bits.py(), bits).map(PyLayout)
    }

    /// A preset by name (`default`, `long_lived`, `big_fleet`, `short`) or `"T/N/S"`.
    #[staticmethod]
    fn from_name(py: Python<'_>, name: &str) -> PyResult<Self> {
        Layout::from_name(name)
            .map(PyLayout)
            .map_err(|e| to_py_err(py, e))
    }

    pub(crate) fn __repr__(&self) -> String {
        let l = self.0;
        match l.preset_name() {
            Some(name) => format!("Layout.{}", name.to_ascii_uppercase()),
            None => format!(
                "Layout({}, {}, {})",
                l.timestamp_bits(),
                l.node_bits(),
                l.sequence_bits()
            ),
        }
    }

    fn __str__(&self) -> String {
        self.0.to_string()
    }

    fn __reduce__(&self, py: Python<'_>) -> (Py<PyAny>, (u32, u32, u32)) {
        let l = self.0;
        let fields = (l.timestamp_bits(), l.node_bits(), l.sequence_bits());
        (py.get_type::<PyLayout>().into_any().unbind(), fields)
    }
}

getters! { PyLayout, |l|
    /// Bits of elapsed milliseconds.
    timestamp_bits: u32 = l.0.timestamp_bits();
    /// Bits of node id.
    node_bits: u32 = l.0.node_bits();
    /// Bits of per-millisecond sequence.
    sequence_bits: u32 = l.0.sequence_bits();
    /// The largest node id.
    max_node_id: u64 = l.0.max_node_id();
    /// The largest sequence value.
    max_sequence: u64 = l.0.max_sequence();
    /// IDs one node can issue per millisecond.
    ids_per_ms: u64 = l.0.ids_per_ms();
    /// The largest elapsed milliseconds since the epoch.
    max_elapsed_ms: u64 = l.0.max_elapsed_ms();
    /// Years of milliseconds the timestamp field holds (Julian years).
    years: f64 = l.0.years();
    /// The preset name, or None for a custom layout.
    name: Option<&'static str> = l.0.preset_name();
}

/// The `layout=` setting: a `Layout`, a name, a tuple or list of three, or None (the default).
pub(crate) fn layout_arg(obj: &Bound<'_, PyAny>) -> PyResult<Layout> {
    let py = obj.py();
    if obj.is_none() {
        Ok(Layout::DEFAULT)
    } else if let Ok(l) = obj.cast::<PyLayout>() {
        Ok(l.get().0)
    } else if let Ok(s) = obj.cast::<PyString>() {
        Layout::from_name(&s.to_cow()?).map_err(|e| to_py_err(py, e))
    } else if obj.is_instance_of::<PyTuple>() || obj.is_instance_of::<PyList>() {
        let items: Vec<Bound<'_, PyAny>> = obj.try_iter()?.collect::<PyResult<_>>()?;
        match items.as_slice() {
            [t, n, s] => from_bits(py, [t, n, s]),
            _ => Err(PyTypeError::new_err(format!(
                "a layout tuple has 3 ints (timestamp_bits, node_bits, sequence_bits), not {}",
                items.len()
            ))),
        }
    } else {
        Err(PyTypeError::new_err(format!(
            "layout must be a polyflake.Layout, a name such as 'big_fleet' or '41/10/12', or a \
             (timestamp_bits, node_bits, sequence_bits) tuple, not {}",
            type_name(obj)
        )))
    }
}
