//! `Snowflake` and `MonotonicSnowflake`: ONE class implementation over one
//! `polyflake::Generator`, held directly (no binding lock: `close()` is the core's, so a fork
//! can leave nothing held). The mode comes from the class: `MonotonicSnowflake` is a subclass
//! with no state of its own.
//!
//! The GIL is held only on the fast path: `try_next_id` either returns an ID at once or says the
//! call would wait, and only then is the GIL released for `next_id`, so a strict wait (a small
//! rewind, a spent millisecond) never stalls the other Python threads. Batches, health, waits,
//! construction and close run with the GIL released.

use crate::args::{bad_argument, exact_i64_arg, float_arg, i64_arg, int_arg, unsigned_arg};
use crate::clock::with_clock;
use crate::errors::{discard_clock_error, to_py_err};
use crate::health::{health, PyHealth};
use crate::layout::{layout_arg, PyLayout};
use crate::source::{self, Settings};
use polyflake::{
    batch_len, id_from_i128, ErrorKind, Generator, Layout, Mode, NodeSource, DEFAULT_EPOCH_MS,
};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBytes, PyDict, PyTuple, PyType};
use std::time::{Duration, Instant};

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

impl Drop for Snowflake {
    /// Close with the GIL released, as `close()` does: a lease's renewal thread may be reading
    /// a Python clock, which needs the GIL to finish. At interpreter shutdown (no attaching)
    /// the core's own drop closes it.
    fn drop(&mut self) {
        let gen = &self.gen;
        Python::try_attach(|py| py.detach(|| gen.close()));
    }
}

/// The generator settings every constructor takes, applied to the core's builder (absent ones
/// keep the core's defaults), then the generator; `what` names the call for a leftover setting.
fn build(
    py: Python<'_>,
    what: &str,
    source: NodeSource,
    mode: Mode,
    s: &Settings<'_>,
) -> PyResult<Snowflake> {
    let mut b = Generator::builder_from(source).mode(mode);
    if let Some(v) = s.take("epoch_ms")? {
        b = b.epoch_ms(i64_arg(&v, "epoch_ms")?);
    }
    if let Some(v) = s.take("max_wait_ms")? {
        b = b.max_wait_ms(float_arg(&v, "max_wait_ms")?);
    }
    if let Some(v) = s.take("layout")? {
        b = b.layout(layout_arg(&v)?);
    }
    if let Some(v) = s.take("clock")? {
        b = with_clock(b, &v)?;
    }
    if let Some(v) = s.take("max_forward_step_ms")? {
        let step = (!v.is_none()).then(|| unsigned_arg(&v, "max_forward_step_ms", bad_argument));
        b = b.max_forward_step_ms(step.transpose()?);
    }
    if let Some(v) = s.take("forward_confirm_ms")? {
        b = b.forward_confirm_ms(unsigned_arg(&v, "forward_confirm_ms", bad_argument)?);
    }
    if mode == Mode::Monotonic {
        if let Some(v) = s.take("max_lead_ms")? {
            b = b.max_lead_ms(
                (!v.is_none())
                    .then(|| i64_arg(&v, "max_lead_ms"))
                    .transpose()?,
            );
        }
    }
    s.finish(what)?;
    // Taking a lease does I/O (fsync, or etcd round trips up to the connect timeout).
    let gen = py.detach(|| b.build()).map_err(|e| to_py_err(py, e))?;
    let injected = gen.has_injected_clock();
    Ok(Snowflake { gen, injected })
}

/// Make an instance of `cls` (`Snowflake` or `MonotonicSnowflake`, which gives the mode) from a
/// node-id source and the keyword settings.
fn make<'py>(
    cls: &Bound<'py, PyType>,
    what: &str,
    source: impl FnOnce(&Settings<'py>) -> PyResult<NodeSource>,
    settings: Option<&Bound<'py, PyDict>>,
) -> PyResult<Py<PyAny>> {
    let py = cls.py();
    let s = Settings(settings.cloned());
    let source = source(&s)?;
    let monotonic = cls.is_subclass_of::<MonotonicSnowflake>()?;
    let mode = if monotonic {
        Mode::Monotonic
    } else {
        Mode::Strict
    };
    let base = build(py, &format!("{}.{what}", cls.name()?), source, mode, &s)?;
    let init = PyClassInitializer::from(base);
    Ok(if monotonic {
        Py::new(py, init.add_subclass(MonotonicSnowflake))?.into_any()
    } else {
        Py::new(py, init)?.into_any()
    })
}

/// Decode an ID as `{"epoch_ms", "node_id", "sequence"}`.
fn decoded(py: Python<'_>, id: i128, layout: Layout, epoch_ms: i64) -> PyResult<Py<PyDict>> {
    let d = id_from_i128(id)
        .and_then(|id| layout.decode(id, epoch_ms))
        .map_err(|e| to_py_err(py, e))?;
    let dict = PyDict::new(py);
    // The design text's names: `epoch_ms` is the ID's Unix-ms timestamp.
    dict.set_item("epoch_ms", d.timestamp_ms)?;
    dict.set_item("node_id", d.node_id)?;
    dict.set_item("sequence", d.sequence)?;
    Ok(dict.unbind())
}

#[pymethods]
impl Snowflake {
    /// `Snowflake(node_id, *, epoch_ms, max_wait_ms, layout, clock, max_forward_step_ms,
    /// forward_confirm_ms)`; defaults are the core's (see the stubs).
    #[new]
    #[pyo3(signature = (node_id, **settings))]
    fn new(node_id: &Bound<'_, PyAny>, settings: Option<&Bound<'_, PyDict>>) -> PyResult<Self> {
        let s = Settings(settings.cloned());
        let source = NodeSource::Static(int_arg(node_id, "node_id")?);
        build(node_id.py(), "Snowflake", source, Mode::Strict, &s)
    }

    /// A generator whose node id is a slot leased from a directory of slot files (one host, no
    /// server); settings `slots`, `identity`, `reserve_ms`, `max_guard_wait_ms` and the
    /// generator's. A slot whose previous holder may have issued up to a time this clock has not
    /// reached (a new slot included) issues nothing until it has (`LeaseNotReady`;
    /// `wait_ready()` waits it out). `close()` (or the end of a `with` block) frees the slot.
    #[classmethod]
    #[pyo3(signature = (dir, **settings))]
    fn from_file_lease<'py>(
        cls: &Bound<'py, PyType>,
        dir: &Bound<'py, PyAny>,
        settings: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Py<PyAny>> {
        make(
            cls,
            "from_file_lease",
            |s| source::file_lease(dir, s),
            settings,
        )
    }

    /// A generator whose node id is a slot leased from an etcd v3 cluster (`endpoints`: one URL
    /// or several); settings `prefix`, `ttl_s`, `connect_timeout_ms`, the lease settings of
    /// `from_file_lease` and the generator's. A lost lease stops the generator at once.
    #[classmethod]
    #[pyo3(signature = (endpoints, **settings))]
    fn from_etcd<'py>(
        cls: &Bound<'py, PyType>,
        endpoints: &Bound<'py, PyAny>,
        settings: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Py<PyAny>> {
        make(
            cls,
            "from_etcd",
            |s| source::etcd_lease(endpoints, s),
            settings,
        )
    }

    /// A generator whose node id is the decimal integer in the environment variable `var`.
    #[classmethod]
    #[pyo3(signature = (var, **settings))]
    fn from_env<'py>(
        cls: &Bound<'py, PyType>,
        var: &Bound<'py, PyAny>,
        settings: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Py<PyAny>> {
        make(cls, "from_env", |_| source::env(var), settings)
    }

    /// A generator whose node id is the ordinal of a StatefulSet-style hostname (`ids-7` -> 7);
    /// None reads this host's name.
    #[classmethod]
    #[pyo3(signature = (hostname = None, **settings))]
    fn from_hostname<'py>(
        cls: &Bound<'py, PyType>,
        hostname: Option<&Bound<'py, PyAny>>,
        settings: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Py<PyAny>> {
        make(
            cls,
            "from_hostname",
            |_| source::hostname(hostname),
            settings,
        )
    }

    /// A generator whose node id is the host part of an IPv4 address in a subnet of
    /// `prefix_len` bits; refused unless the host part fits the node field (a /22 or narrower
    /// for 10 node bits).
    #[classmethod]
    #[pyo3(signature = (addr, prefix_len, **settings))]
    fn from_ipv4<'py>(
        cls: &Bound<'py, PyType>,
        addr: &Bound<'py, PyAny>,
        prefix_len: &Bound<'py, PyAny>,
        settings: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Py<PyAny>> {
        make(
            cls,
            "from_ipv4",
            |_| source::ipv4(addr, prefix_len),
            settings,
        )
    }

    /// Issue one ID.
    fn next_id(&self, py: Python<'_>) -> PyResult<u64> {
        if self.injected {
            return self.next_id_waiting(py);
        }
        match try_next_id(&self.gen) {
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
        count: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let n = batch_len(int_arg(count, "count")?).map_err(|e| to_py_err(py, e))?;
        let bytes = PyBytes::new_with(py, n * 8, |buf| {
            py.detach(|| fill(&self.gen, buf))
                .map_err(|e| to_py_err(py, e))
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
    fn _decode(&self, py: Python<'_>, id: &Bound<'_, PyAny>) -> PyResult<Py<PyDict>> {
        decoded(
            py,
            int_arg(id, "id")?,
            self.gen.layout(),
            self.gen.epoch_ms(),
        )
    }

    /// A snapshot of this generator's state and counters (reads the clock once). In a forked
    /// child, a lease-backed generator takes its fresh slot here if it has not yet.
    fn health(&self, py: Python<'_>) -> PyResult<Py<PyHealth>> {
        let h = py.detach(|| self.gen.health());
        // A failing Python clock is reported in the snapshot, not raised.
        discard_clock_error();
        health(py, h.fields())
    }

    /// Wait while the restart guard holds (a lease's previous holder may have issued up to a
    /// time this clock has not reached; a new slot waits a full reserve). `timeout_ms=None`
    /// waits as long as the guard needs; at a deadline with the guard still holding, raises
    /// `LeaseNotReady`. Returns at once without a lease. Ctrl-C interrupts the wait.
    #[pyo3(signature = (timeout_ms = None))]
    fn wait_ready(&self, py: Python<'_>, timeout_ms: Option<&Bound<'_, PyAny>>) -> PyResult<()> {
        let deadline = match timeout_ms {
            Some(t) => {
                let ms = float_arg(t, "timeout_ms")?;
                let bad = || {
                    to_py_err(
                        py,
                        bad_argument("timeout_ms", format!("{ms} is not a finite number >= 0")),
                    )
                };
                let d = Duration::try_from_secs_f64(ms / 1000.0).map_err(|_| bad())?;
                Instant::now().checked_add(d)
            }
            None => None,
        };
        // The core waits in slices, so a signal is seen between them.
        loop {
            let left = deadline.map_or(Duration::MAX, |d| {
                d.saturating_duration_since(Instant::now())
            });
            let slice = left.min(Duration::from_millis(100));
            match py.detach(|| self.gen.wait_ready(slice)) {
                Err(e) if e.kind() == ErrorKind::LeaseNotReady && slice < left => {
                    py.check_signals()?
                }
                r => return r.map_err(|e| to_py_err(py, e)),
            }
        }
    }

    /// Close the generator: every later call raises `GeneratorClosed` (also a ValueError). A
    /// lease-backed generator frees its slot at once (its high-water mark stays in the store for
    /// the next holder); a fixed node id may be used by a new generator. Closing twice is allowed.
    fn close(&self, py: Python<'_>) {
        py.detach(|| self.gen.close());
    }

    /// True once `close()` has been called.
    #[getter]
    fn closed(&self) -> bool {
        self.gen.is_closed()
    }

    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    /// `with` closes the generator at the end of the block (exceptions propagate).
    #[pyo3(signature = (*_exc))]
    fn __exit__(&self, py: Python<'_>, _exc: &Bound<'_, PyTuple>) -> bool {
        self.close(py);
        false
    }

    /// This generator's node id: the slot of a lease. In a process forked after the generator
    /// was made, the child's fresh slot once its first call (or `health()`) has taken it.
    #[getter]
    fn node_id(&self) -> u32 {
        self.gen.node_id()
    }
    /// Where the node id came from: `"static"`, `"env"`, `"hostname"`, `"ipv4"`,
    /// `"file_lease"` or `"etcd"`.
    #[getter]
    fn node_source(&self) -> &'static str {
        self.gen.node_source().name()
    }
    /// The epoch, Unix milliseconds.
    #[getter]
    fn epoch_ms(&self) -> i64 {
        self.gen.epoch_ms()
    }
    /// The bit layout.
    #[getter]
    fn layout(&self) -> PyLayout {
        PyLayout(self.gen.layout())
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
    /// The bound on a forward step of the wall clock, milliseconds (None: the check is off).
    #[getter]
    fn max_forward_step_ms(&self) -> Option<u64> {
        self.gen.max_forward_step_ms()
    }
    /// How long a stepped-ahead clock must hold before it is believed, milliseconds.
    #[getter]
    fn forward_confirm_ms(&self) -> u64 {
        self.gen.forward_confirm_ms()
    }
    /// `"strict"` or `"monotonic"`.
    #[getter]
    fn mode(&self) -> &'static str {
        self.gen.mode().name()
    }

    fn __repr__(slf: &Bound<'_, Self>) -> PyResult<String> {
        let (name, g) = (slf.get_type().name()?, &slf.get().gen);
        if g.is_closed() {
            return Ok(format!("<{name} closed>"));
        }
        let source = match g.node_source().name() {
            "static" => String::new(),
            source => format!(", node_source='{source}'"),
        };
        let clock = if g.has_injected_clock() {
            ", clock=injected"
        } else {
            ""
        };
        let layout = PyLayout(g.layout()).__repr__();
        let (node, epoch, mode) = (g.node_id(), g.epoch_ms(), g.mode().name());
        Ok(format!("{name}(node_id={node}, epoch_ms={epoch}, layout={layout}, mode='{mode}'{source}{clock})"))
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

/// The core's `try_next_id`, compiled on its own: inlined into the method, LLVM moved the clock
/// reading through a 16-byte load that missed store forwarding (5 ns more a monotonic call).
#[inline(never)]
fn try_next_id(gen: &Generator) -> polyflake::Result<Option<u64>> {
    gen.try_next_id()
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
    /// `MonotonicSnowflake(node_id, *, ..., max_lead_ms)`: the settings of `Snowflake` and
    /// `max_lead_ms`. The `from_*` constructors of `Snowflake` make a `MonotonicSnowflake` when
    /// called on this class.
    #[new]
    #[pyo3(signature = (node_id, **settings))]
    fn new(
        node_id: &Bound<'_, PyAny>,
        settings: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<PyClassInitializer<Self>> {
        let s = Settings(settings.cloned());
        let source = NodeSource::Static(int_arg(node_id, "node_id")?);
        let base = build(
            node_id.py(),
            "MonotonicSnowflake",
            source,
            Mode::Monotonic,
            &s,
        )?;
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
        static DECODE: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
        if instance.is_none() {
            let f = DECODE.get_or_try_init(py, || {
                Ok::<_, PyErr>(
                    py.import("polyflake._polyflake")?
                        .getattr("decode")?
                        .unbind(),
                )
            })?;
            return Ok(f.clone_ref(py));
        }
        Ok(instance.getattr("_decode")?.unbind())
    }
}

/// Decode an ID: `{"epoch_ms", "node_id", "sequence"}` for a layout and epoch (default
/// 41/10/12 and 2024-01-01). `epoch_ms` in the result is the ID's Unix-ms timestamp, an upper
/// bound on when it was made.
#[pyfunction]
#[pyo3(signature = (id, /, *, layout = None, epoch_ms = DEFAULT_EPOCH_MS))]
pub(crate) fn decode(
    py: Python<'_>,
    id: &Bound<'_, PyAny>,
    layout: Option<&Bound<'_, PyAny>>,
    #[pyo3(from_py_with = epoch_arg)] epoch_ms: i64,
) -> PyResult<Py<PyDict>> {
    let id = int_arg(id, "id")?;
    decoded(
        py,
        id,
        layout.map_or(Ok(Layout::DEFAULT), layout_arg)?,
        epoch_ms,
    )
}

/// The epoch a decoded timestamp counts from: it comes back out in the answer, so a value
/// outside 64 bits is refused rather than clamped (which would answer another timestamp).
fn epoch_arg(obj: &Bound<'_, PyAny>) -> PyResult<i64> {
    exact_i64_arg(obj, "epoch_ms", "epoch_ms")
}
