//! `Snowflake` and `MonotonicSnowflake`: thin wrappers over one `polyflake::Generator` each.
//!
//! The GIL is held only on the fast path: `try_next_id` either returns an ID at once or says the
//! call would wait, and only then is the GIL released for `next_id`, so a strict wait (a small
//! rewind, a spent millisecond) never stalls the other Python threads. Batches always fill with
//! the GIL released.

use crate::args::{count_arg, epoch_arg, i64_arg, id_arg, max_wait_arg, node_id_arg};
use crate::clock::{CallableClock, PyManualClock, PyScriptedClock};
use crate::errors::{discard_clock_error, to_py_err};
use crate::layout::{layout_arg, PyLayout};
use polyflake::{
    batch_len, id_from_i128, Decoded, Generator, Health, Layout, Mode, DEFAULT_EPOCH_MS,
    DEFAULT_MAX_WAIT_MS,
};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBytes, PyDict, PyType};

/// A strict generator: an issued timestamp never exceeds the wall clock.
#[pyclass(frozen, subclass, module = "polyflake", name = "Snowflake")]
pub(crate) struct Snowflake {
    gen: Generator,
    /// True for an injected clock. `try_next_id` spends a clock reading when it declines, which
    /// a scripted clock would notice (the retry would see the next scripted value, not the same
    /// one), so generators on an injected clock go straight to `next_id` with the GIL released;
    /// the system clock takes the GIL-held fast path.
    injected: bool,
}

/// A monotonic generator: never waits, never duplicates; its timestamps may run ahead of the
/// wall clock (bounded by `max_lead_ms` if set).
#[pyclass(frozen, extends = Snowflake, module = "polyflake", name = "MonotonicSnowflake")]
pub(crate) struct MonotonicSnowflake;

/// The settings both constructors take, handed to the core's builder as they are.
struct Settings<'a, 'py> {
    node_id: i128,
    epoch_ms: i64,
    max_wait_ms: f64,
    layout: Option<&'a Bound<'py, PyAny>>,
    clock: Option<&'a Bound<'py, PyAny>>,
    max_lead_ms: Option<&'a Bound<'py, PyAny>>,
}

impl Settings<'_, '_> {
    fn build(self, py: Python<'_>, mode: Mode) -> PyResult<Snowflake> {
        let mut b = Generator::builder(self.node_id)
            .mode(mode)
            .layout(layout_arg(self.layout)?)
            .epoch_ms(self.epoch_ms)
            .max_wait_ms(self.max_wait_ms);
        if let Some(lead) = self.max_lead_ms.filter(|o| !o.is_none()) {
            b = b.max_lead_ms(Some(i64_arg(lead, "max_lead_ms")?));
        }
        if let Some(clock) = self.clock.filter(|o| !o.is_none()) {
            b = if let Ok(c) = clock.cast::<PyManualClock>() {
                b.clock(c.get().inner.clone())
            } else if let Ok(c) = clock.cast::<PyScriptedClock>() {
                b.shared_clock(c.get().inner.clone())
            } else if clock.is_callable() {
                b.clock(CallableClock::new(clock.clone().unbind()))
            } else {
                return Err(PyTypeError::new_err(format!(
                    "clock must be a callable returning int milliseconds (or a \
                     polyflake.testing clock), not {}",
                    clock.get_type().name()?
                )));
            };
        }
        let gen = b.build().map_err(|e| to_py_err(py, e))?;
        let injected = gen.has_injected_clock();
        Ok(Snowflake { gen, injected })
    }
}

fn decoded_dict(py: Python<'_>, d: Decoded) -> PyResult<Bound<'_, PyDict>> {
    let dict = PyDict::new(py);
    // The design text's names: `epoch_ms` is the ID's Unix-ms timestamp.
    dict.set_item("epoch_ms", d.timestamp_ms)?;
    dict.set_item("node_id", d.node_id)?;
    dict.set_item("sequence", d.sequence)?;
    Ok(dict)
}

#[pymethods]
impl Snowflake {
    #[new]
    #[pyo3(
        signature = (node_id, *, epoch_ms = DEFAULT_EPOCH_MS, max_wait_ms = DEFAULT_MAX_WAIT_MS, layout = None, clock = None),
        text_signature = "(node_id, *, epoch_ms=1704067200000, max_wait_ms=5.0, layout=None, clock=None)"
    )]
    fn new(
        py: Python<'_>,
        #[pyo3(from_py_with = node_id_arg)] node_id: i128,
        #[pyo3(from_py_with = epoch_arg)] epoch_ms: i64,
        #[pyo3(from_py_with = max_wait_arg)] max_wait_ms: f64,
        layout: Option<&Bound<'_, PyAny>>,
        clock: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        Settings {
            node_id,
            epoch_ms,
            max_wait_ms,
            layout,
            clock,
            max_lead_ms: None,
        }
        .build(py, Mode::Strict)
    }

    /// Issue one ID.
    fn next_id(&self, py: Python<'_>) -> PyResult<u64> {
        if self.injected {
            return self.next_id_waiting(py);
        }
        match self.gen.try_next_id() {
            Ok(Some(id)) => Ok(id),
            // The call would wait: let other threads run meanwhile.
            Ok(None) => self.next_id_waiting(py),
            Err(e) => Err(to_py_err(py, e)),
        }
    }

    /// Issue `count` consecutive IDs as an `array.array('q')`, filled by the core with the GIL
    /// released and no Python object per ID.
    fn next_ids<'py>(
        &self,
        py: Python<'py>,
        #[pyo3(from_py_with = count_arg)] count: i128,
    ) -> PyResult<Bound<'py, PyAny>> {
        let n = batch_len(count).map_err(|e| to_py_err(py, e))?;
        let gen = &self.gen;
        let bytes = PyBytes::new_with(py, n * 8, |buf| {
            py.detach(|| fill(gen, buf)).map_err(|e| to_py_err(py, e))
        })?;
        static ARRAY: PyOnceLock<Py<PyType>> = PyOnceLock::new();
        ARRAY.import(py, "array", "array")?.call1(("q", bytes))
    }

    /// `Snowflake.decode(x)`: the default layout and epoch (keywords `layout=`, `epoch_ms=` pick
    /// others); `g.decode(x)` on a generator: that generator's layout and epoch.
    #[classattr]
    fn decode() -> DecodeMethod {
        DecodeMethod
    }

    /// Decode with this generator's layout and epoch (what `g.decode(x)` calls).
    fn _decode<'py>(
        &self,
        py: Python<'py>,
        #[pyo3(from_py_with = id_arg)] id: i128,
    ) -> PyResult<Bound<'py, PyDict>> {
        let d = id_from_i128(id)
            .and_then(|id| self.gen.decode(id))
            .map_err(|e| to_py_err(py, e))?;
        decoded_dict(py, d)
    }

    /// A snapshot of this generator's state and counters (reads the clock once).
    fn health(&self, py: Python<'_>) -> PyHealth {
        let h = py.detach(|| self.gen.health());
        // A failing Python clock is reported in the snapshot, not raised.
        discard_clock_error();
        PyHealth::from(h)
    }

    /// This generator's node id.
    #[getter]
    fn node_id(&self) -> u32 {
        self.gen.node_id()
    }
    /// The epoch, Unix milliseconds.
    #[getter]
    fn epoch_ms(&self) -> i64 {
        self.gen.epoch_ms()
    }
    /// The bit layout.
    #[getter]
    fn layout(&self) -> PyLayout {
        PyLayout {
            inner: self.gen.layout(),
        }
    }
    /// Strict mode's wait budget, milliseconds.
    #[getter]
    fn max_wait_ms(&self) -> f64 {
        self.gen.max_wait_ms()
    }
    /// Monotonic mode's lead limit, milliseconds (None: unbounded).
    #[getter]
    fn max_lead_ms(&self) -> Option<i64> {
        self.gen.max_lead_ms()
    }
    /// `"strict"` or `"monotonic"`.
    #[getter]
    fn mode(&self) -> &'static str {
        self.gen.mode().name()
    }

    fn __repr__(slf: &Bound<'_, Self>) -> PyResult<String> {
        let g = &slf.get().gen;
        Ok(format!(
            "{}(node_id={}, epoch_ms={}, layout={}, mode='{}'{})",
            slf.get_type().name()?,
            g.node_id(),
            g.epoch_ms(),
            PyLayout { inner: g.layout() }.__repr__(),
            g.mode().name(),
            if g.has_injected_clock() {
                ", clock=injected"
            } else {
                ""
            }
        ))
    }
}

impl Snowflake {
    #[cold]
    #[inline(never)]
    fn next_id_waiting(&self, py: Python<'_>) -> PyResult<u64> {
        py.detach(|| self.gen.next_id())
            .map_err(|e| to_py_err(py, e))
    }
}

/// Fill a byte buffer with IDs in native byte order (what `array('q')` reads).
fn fill(gen: &Generator, buf: &mut [u8]) -> polyflake::Result<()> {
    // SAFETY: every bit pattern is a valid u64, and align_to_mut only reinterprets the aligned
    // middle of the buffer.
    let (head, ids, tail) = unsafe { buf.align_to_mut::<u64>() };
    if head.is_empty() && tail.is_empty() {
        return gen.next_ids(ids);
    }
    // A misaligned buffer (not seen with CPython's bytes): fill aside, then copy.
    let mut aside = vec![0u64; buf.len() / 8];
    gen.next_ids(&mut aside)?;
    for (chunk, id) in buf.chunks_exact_mut(8).zip(aside) {
        chunk.copy_from_slice(&id.to_ne_bytes());
    }
    Ok(())
}

#[pymethods]
impl MonotonicSnowflake {
    #[new]
    #[pyo3(
        signature = (node_id, *, epoch_ms = DEFAULT_EPOCH_MS, max_wait_ms = DEFAULT_MAX_WAIT_MS, layout = None, clock = None, max_lead_ms = None),
        text_signature = "(node_id, *, epoch_ms=1704067200000, max_wait_ms=5.0, layout=None, clock=None, max_lead_ms=None)"
    )]
    fn new(
        py: Python<'_>,
        #[pyo3(from_py_with = node_id_arg)] node_id: i128,
        #[pyo3(from_py_with = epoch_arg)] epoch_ms: i64,
        #[pyo3(from_py_with = max_wait_arg)] max_wait_ms: f64,
        layout: Option<&Bound<'_, PyAny>>,
        clock: Option<&Bound<'_, PyAny>>,
        max_lead_ms: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyClassInitializer<Self>> {
        let base = Settings {
            node_id,
            epoch_ms,
            max_wait_ms,
            layout,
            clock,
            max_lead_ms,
        }
        .build(py, Mode::Monotonic)?;
        Ok(PyClassInitializer::from(base).add_subclass(MonotonicSnowflake))
    }

    /// Issue one ID. The same call as `Snowflake.next_id`, defined again here so the receiver
    /// check is an exact type match rather than a subtype walk on the hot path.
    fn next_id(slf: &Bound<'_, Self>) -> PyResult<u64> {
        slf.as_super().get().next_id(slf.py())
    }
}

/// The descriptor behind `Snowflake.decode`: on the class it is the module's `decode` (default
/// layout and epoch, as in the design text's static method); on a generator it is bound to that
/// generator's layout and epoch, so `g.decode(x)` can never silently use the wrong layout.
#[pyclass(frozen, module = "polyflake")]
pub(crate) struct DecodeMethod;

#[pymethods]
impl DecodeMethod {
    fn __get__(
        &self,
        py: Python<'_>,
        instance: &Bound<'_, PyAny>,
        _owner: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        if instance.is_none() {
            static DECODE: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
            return DECODE
                .get_or_try_init(py, || {
                    Ok::<_, PyErr>(
                        py.import("polyflake._polyflake")?
                            .getattr("decode")?
                            .unbind(),
                    )
                })
                .map(|f| f.clone_ref(py));
        }
        Ok(instance.getattr("_decode")?.unbind())
    }
}

/// Decode an ID: `{"epoch_ms", "node_id", "sequence"}` for a layout and epoch (default
/// 41/10/12 and 2024-01-01). `epoch_ms` in the result is the ID's Unix-ms timestamp, an upper
/// bound on when it was made.
#[pyfunction]
#[pyo3(
    signature = (id, /, *, layout = None, epoch_ms = DEFAULT_EPOCH_MS),
    text_signature = "(id, /, *, layout=None, epoch_ms=1704067200000)"
)]
pub(crate) fn decode<'py>(
    py: Python<'py>,
    #[pyo3(from_py_with = id_arg)] id: i128,
    layout: Option<&Bound<'py, PyAny>>,
    #[pyo3(from_py_with = epoch_arg)] epoch_ms: i64,
) -> PyResult<Bound<'py, PyDict>> {
    let layout: Layout = layout_arg(layout)?;
    let d = id_from_i128(id)
        .and_then(|id| layout.decode(id, epoch_ms))
        .map_err(|e| to_py_err(py, e))?;
    decoded_dict(py, d)
}

/// A frozen snapshot from `health()`.
#[pyclass(frozen, get_all, module = "polyflake", name = "Health")]
pub(crate) struct PyHealth {
    /// True when the generator can issue now.
    ok: bool,
    /// `"ok"`, `"clock_behind"`, `"clock_stuck"`, `"clock_outside_window"`, `"clock_failed"`,
    /// `"lead_too_large"` or `"used_after_fork"`.
    status: &'static str,
    /// Why it is not ok; empty when ok.
    reason: String,
    node_id: u32,
    mode: &'static str,
    last_issued_ms: Option<i64>,
    wall_ms: i64,
    lead_ms: i64,
    ids_issued: u64,
    rewinds_waited: u64,
    rewinds_refused: u64,
    sequence_exhaustions: u64,
    wait_sleeps: u64,
    ms_borrowed: u64,
    lead_refused: u64,
    lease_renewals: u64,
    lease_failures: u64,
}

impl From<Health> for PyHealth {
    fn from(h: Health) -> Self {
        PyHealth {
            ok: h.ok,
            status: h.status.name(),
            reason: h.reason,
            node_id: h.node_id,
            mode: h.mode.name(),
            last_issued_ms: h.last_issued_ms,
            wall_ms: h.wall_ms,
            lead_ms: h.lead_ms,
            ids_issued: h.ids_issued,
            rewinds_waited: h.rewinds_waited,
            rewinds_refused: h.rewinds_refused,
            sequence_exhaustions: h.sequence_exhaustions,
            wait_sleeps: h.wait_sleeps,
            ms_borrowed: h.ms_borrowed,
            lead_refused: h.lead_refused,
            lease_renewals: h.lease_renewals,
            lease_failures: h.lease_failures,
        }
    }
}

#[pymethods]
impl PyHealth {
    /// Every field as a dict (what a `/health` endpoint would serialise).
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        d.set_item("ok", self.ok)?;
        d.set_item("status", self.status)?;
        d.set_item("reason", &self.reason)?;
        d.set_item("node_id", self.node_id)?;
        d.set_item("mode", self.mode)?;
        d.set_item("last_issued_ms", self.last_issued_ms)?;
        d.set_item("wall_ms", self.wall_ms)?;
        d.set_item("lead_ms", self.lead_ms)?;
        d.set_item("ids_issued", self.ids_issued)?;
        d.set_item("rewinds_waited", self.rewinds_waited)?;
        d.set_item("rewinds_refused", self.rewinds_refused)?;
        d.set_item("sequence_exhaustions", self.sequence_exhaustions)?;
        d.set_item("wait_sleeps", self.wait_sleeps)?;
        d.set_item("ms_borrowed", self.ms_borrowed)?;
        d.set_item("lead_refused", self.lead_refused)?;
        d.set_item("lease_renewals", self.lease_renewals)?;
        d.set_item("lease_failures", self.lease_failures)?;
        Ok(d)
    }

    fn __repr__(&self) -> String {
        format!(
            "Health(ok={}, status='{}', node_id={}, mode='{}', ids_issued={}, lead_ms={})",
            if self.ok { "True" } else { "False" },
            self.status,
            self.node_id,
            self.mode,
            self.ids_issued,
            self.lead_ms
        )
    }
}
