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
use crate::source::{
    self, prefix_len_arg, reserve_arg, timeout_arg, ttl_arg, EtcdArgs, PyLeaseHealth,
};
use polyflake::{
    batch_len, id_from_i128, Decoded, Generator, Health, Layout, Mode, NodeSource,
    DEFAULT_EPOCH_MS, DEFAULT_ETCD_PREFIX, DEFAULT_ETCD_TIMEOUT_MS, DEFAULT_ETCD_TTL_S,
    DEFAULT_MAX_WAIT_MS, DEFAULT_RESERVE_MS,
};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBytes, PyDict, PyType};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{RwLock, RwLockReadGuard};

/// A strict generator: an issued timestamp never exceeds the wall clock.
#[pyclass(frozen, subclass, module = "polyflake", name = "Snowflake")]
pub(crate) struct Snowflake {
    core: Core,
    /// True for an injected clock. `try_next_id` spends a clock reading when it declines, which
    /// a scripted clock would notice (the retry would see the next scripted value, not the same
    /// one), so generators on an injected clock go straight to `next_id` with the GIL released;
    /// the system clock takes the GIL-held fast path.
    injected: bool,
}

/// The core generator, and how `close()` reaches it.
enum Core {
    /// A node id fixed at construction (a number, an environment variable, a hostname, an IPv4
    /// address): read with no lock. `close()` only makes it refuse; its node id is released
    /// when the object is freed.
    Fixed { gen: Generator, closed: AtomicBool },
    /// A lease (file or etcd): `close()` drops the generator at once, which stops the renewal,
    /// leaves the high-water mark in the store and frees the slot.
    Leased(RwLock<Option<Generator>>),
}

/// A live generator, borrowed for one call.
enum GenRef<'a> {
    Fixed(&'a Generator),
    Leased(RwLockReadGuard<'a, Option<Generator>>),
}

impl std::ops::Deref for GenRef<'_> {
    type Target = Generator;
    #[inline]
    fn deref(&self) -> &Generator {
        match self {
            GenRef::Fixed(g) => g,
            // `Core::get` only makes this variant for a lock holding a generator.
            GenRef::Leased(guard) => guard.as_ref().unwrap_or_else(|| unreachable!()),
        }
    }
}

impl Core {
    /// The generator, or `None` once closed, for a caller attached to the interpreter. The
    /// write lock is held only by `close()` while it takes the generator out, but that waits
    /// for readers, one of which may need the GIL (a Python clock): so this never blocks on
    /// the lock with the GIL held.
    #[inline]
    fn get(&self, py: Python<'_>) -> Option<GenRef<'_>> {
        match self {
            Core::Fixed { gen, closed } => {
                (!closed.load(Ordering::Relaxed)).then_some(GenRef::Fixed(gen))
            }
            Core::Leased(lock) => loop {
                match lock.try_read() {
                    Ok(guard) => return guard.is_some().then_some(GenRef::Leased(guard)),
                    Err(std::sync::TryLockError::Poisoned(p)) => {
                        let guard = p.into_inner();
                        return guard.is_some().then_some(GenRef::Leased(guard));
                    }
                    Err(std::sync::TryLockError::WouldBlock) => {
                        py.detach(|| drop(lock.read()));
                    }
                }
            },
        }
    }

    /// [`Core::get`] for a caller that has released the GIL: may block while `close()` runs.
    fn get_detached(&self) -> Option<GenRef<'_>> {
        match self {
            Core::Fixed { gen, closed } => {
                (!closed.load(Ordering::Relaxed)).then_some(GenRef::Fixed(gen))
            }
            Core::Leased(lock) => {
                let guard = lock.read().unwrap_or_else(|p| p.into_inner());
                guard.is_some().then_some(GenRef::Leased(guard))
            }
        }
    }

    /// Close: see the variants. The caller has released the GIL (dropping a lease joins its
    /// renewal thread, which may be reading a Python clock).
    fn close(&self) {
        match self {
            Core::Fixed { closed, .. } => closed.store(true, Ordering::Relaxed),
            Core::Leased(lock) => {
                let gen = lock.write().unwrap_or_else(|p| p.into_inner()).take();
                drop(gen);
            }
        }
    }
}

impl Drop for Snowflake {
    /// Drop a lease-backed generator with the GIL released, as `close()` does.
    fn drop(&mut self) {
        if let Core::Leased(lock) = &mut self.core {
            let gen = lock.get_mut().unwrap_or_else(|p| p.into_inner()).take();
            if let Some(gen) = gen {
                // A renewal thread reading a Python clock needs the GIL to finish. At
                // interpreter shutdown (no attaching) the generator is dropped as it is.
                let mut gen = Some(gen);
                Python::try_attach(|py| py.detach(|| drop(gen.take())));
                drop(gen);
            }
        }
    }
}

#[cold]
fn closed_error() -> PyErr {
    PyValueError::new_err("this generator is closed")
}

/// A monotonic generator: never waits, never duplicates; its timestamps may run ahead of the
/// wall clock (bounded by `max_lead_ms` if set).
#[pyclass(frozen, extends = Snowflake, module = "polyflake", name = "MonotonicSnowflake")]
pub(crate) struct MonotonicSnowflake;

/// The generator settings every constructor takes, handed to the core's builder as they are.
struct Settings<'a, 'py> {
    source: NodeSource,
    epoch_ms: i64,
    max_wait_ms: f64,
    layout: Option<&'a Bound<'py, PyAny>>,
    clock: Option<&'a Bound<'py, PyAny>>,
    max_lead_ms: Option<&'a Bound<'py, PyAny>>,
}

impl Settings<'_, '_> {
    fn build(self, py: Python<'_>, mode: Mode) -> PyResult<Snowflake> {
        let mut b = Generator::builder_from(self.source)
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
        // Taking a lease does I/O (fsync, or etcd round trips up to the connect timeout).
        let gen = py.detach(|| b.build()).map_err(|e| to_py_err(py, e))?;
        let injected = gen.has_injected_clock();
        let core = if gen.node_source().is_lease() {
            Core::Leased(RwLock::new(Some(gen)))
        } else {
            Core::Fixed {
                gen,
                closed: AtomicBool::new(false),
            }
        };
        Ok(Snowflake { core, injected })
    }

    fn monotonic(self, py: Python<'_>) -> PyResult<Py<MonotonicSnowflake>> {
        let base = self.build(py, Mode::Monotonic)?;
        Py::new(
            py,
            PyClassInitializer::from(base).add_subclass(MonotonicSnowflake),
        )
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
            source: NodeSource::Static(node_id),
            epoch_ms,
            max_wait_ms,
            layout,
            clock,
            max_lead_ms: None,
        }
        .build(py, Mode::Strict)
    }

    /// A generator whose node id is a slot leased from a directory of slot files (one host, no
    /// server). The slot this identity held before is tried first; a slot whose previous holder
    /// left a high-water mark ahead of the clock issues nothing until the clock passes it (the
    /// restart guard, `LeaseNotReady`). `close()` (or the end of a `with` block) frees the slot.
    #[classmethod]
    #[pyo3(
        signature = (dir, *, slots = None, identity = None, reserve_ms = DEFAULT_RESERVE_MS, epoch_ms = DEFAULT_EPOCH_MS, max_wait_ms = DEFAULT_MAX_WAIT_MS, layout = None, clock = None),
        text_signature = "(dir, *, slots=None, identity=None, reserve_ms=5000, epoch_ms=1704067200000, max_wait_ms=5.0, layout=None, clock=None)"
    )]
    #[allow(clippy::too_many_arguments)]
    fn from_file_lease(
        _cls: &Bound<'_, PyType>,
        py: Python<'_>,
        dir: &Bound<'_, PyAny>,
        slots: Option<&Bound<'_, PyAny>>,
        identity: Option<&Bound<'_, PyAny>>,
        #[pyo3(from_py_with = reserve_arg)] reserve_ms: u64,
        #[pyo3(from_py_with = epoch_arg)] epoch_ms: i64,
        #[pyo3(from_py_with = max_wait_arg)] max_wait_ms: f64,
        layout: Option<&Bound<'_, PyAny>>,
        clock: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        Settings {
            source: source::file_lease(dir, slots, identity, reserve_ms)?,
            epoch_ms,
            max_wait_ms,
            layout,
            clock,
            max_lead_ms: None,
        }
        .build(py, Mode::Strict)
    }

    /// A generator whose node id is a slot leased from an etcd v3 cluster (`endpoints`: one URL
    /// or several). The slot key lives under `prefix`, attached to an etcd lease of `ttl_s`
    /// seconds kept alive in the background; a lost lease stops the generator at once.
    #[classmethod]
    #[pyo3(
        signature = (endpoints, *, prefix = DEFAULT_ETCD_PREFIX.to_string(), ttl_s = DEFAULT_ETCD_TTL_S, reserve_ms = DEFAULT_RESERVE_MS, slots = None, identity = None, connect_timeout_ms = DEFAULT_ETCD_TIMEOUT_MS, epoch_ms = DEFAULT_EPOCH_MS, max_wait_ms = DEFAULT_MAX_WAIT_MS, layout = None, clock = None),
        text_signature = "(endpoints, *, prefix='/polyflake', ttl_s=10, reserve_ms=5000, slots=None, identity=None, connect_timeout_ms=2000, epoch_ms=1704067200000, max_wait_ms=5.0, layout=None, clock=None)"
    )]
    #[allow(clippy::too_many_arguments)]
    fn from_etcd(
        _cls: &Bound<'_, PyType>,
        py: Python<'_>,
        endpoints: &Bound<'_, PyAny>,
        #[pyo3(from_py_with = prefix_arg)] prefix: String,
        #[pyo3(from_py_with = ttl_arg)] ttl_s: i64,
        #[pyo3(from_py_with = reserve_arg)] reserve_ms: u64,
        slots: Option<&Bound<'_, PyAny>>,
        identity: Option<&Bound<'_, PyAny>>,
        #[pyo3(from_py_with = timeout_arg)] connect_timeout_ms: u64,
        #[pyo3(from_py_with = epoch_arg)] epoch_ms: i64,
        #[pyo3(from_py_with = max_wait_arg)] max_wait_ms: f64,
        layout: Option<&Bound<'_, PyAny>>,
        clock: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        Settings {
            source: source::etcd_lease(EtcdArgs {
                endpoints,
                prefix,
                ttl_s,
                reserve_ms,
                slots,
                identity,
                connect_timeout_ms,
            })?,
            epoch_ms,
            max_wait_ms,
            layout,
            clock,
            max_lead_ms: None,
        }
        .build(py, Mode::Strict)
    }

    /// A generator whose node id is the decimal integer in the environment variable `var`.
    #[classmethod]
    #[pyo3(
        signature = (var, *, epoch_ms = DEFAULT_EPOCH_MS, max_wait_ms = DEFAULT_MAX_WAIT_MS, layout = None, clock = None),
        text_signature = "(var, *, epoch_ms=1704067200000, max_wait_ms=5.0, layout=None, clock=None)"
    )]
    fn from_env(
        _cls: &Bound<'_, PyType>,
        py: Python<'_>,
        var: &Bound<'_, PyAny>,
        #[pyo3(from_py_with = epoch_arg)] epoch_ms: i64,
        #[pyo3(from_py_with = max_wait_arg)] max_wait_ms: f64,
        layout: Option<&Bound<'_, PyAny>>,
        clock: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        Settings {
            source: source::env(var)?,
            epoch_ms,
            max_wait_ms,
            layout,
            clock,
            max_lead_ms: None,
        }
        .build(py, Mode::Strict)
    }

    /// A generator whose node id is the ordinal of a StatefulSet-style hostname (`ids-7` -> 7);
    /// None reads this host's name.
    #[classmethod]
    #[pyo3(
        signature = (hostname = None, *, epoch_ms = DEFAULT_EPOCH_MS, max_wait_ms = DEFAULT_MAX_WAIT_MS, layout = None, clock = None),
        text_signature = "(hostname=None, *, epoch_ms=1704067200000, max_wait_ms=5.0, layout=None, clock=None)"
    )]
    fn from_hostname(
        _cls: &Bound<'_, PyType>,
        py: Python<'_>,
        hostname: Option<&Bound<'_, PyAny>>,
        #[pyo3(from_py_with = epoch_arg)] epoch_ms: i64,
        #[pyo3(from_py_with = max_wait_arg)] max_wait_ms: f64,
        layout: Option<&Bound<'_, PyAny>>,
        clock: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        Settings {
            source: source::hostname(hostname)?,
            epoch_ms,
            max_wait_ms,
            layout,
            clock,
            max_lead_ms: None,
        }
        .build(py, Mode::Strict)
    }

    /// A generator whose node id is the host part of an IPv4 address in a subnet of
    /// `prefix_len` bits; refused unless the host part fits the node field (a /22 or narrower
    /// for 10 node bits).
    #[classmethod]
    #[pyo3(
        signature = (addr, prefix_len, *, epoch_ms = DEFAULT_EPOCH_MS, max_wait_ms = DEFAULT_MAX_WAIT_MS, layout = None, clock = None),
        text_signature = "(addr, prefix_len, *, epoch_ms=1704067200000, max_wait_ms=5.0, layout=None, clock=None)"
    )]
    #[allow(clippy::too_many_arguments)]
    fn from_ipv4(
        _cls: &Bound<'_, PyType>,
        py: Python<'_>,
        addr: &Bound<'_, PyAny>,
        #[pyo3(from_py_with = prefix_len_arg)] prefix_len: u8,
        #[pyo3(from_py_with = epoch_arg)] epoch_ms: i64,
        #[pyo3(from_py_with = max_wait_arg)] max_wait_ms: f64,
        layout: Option<&Bound<'_, PyAny>>,
        clock: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        Settings {
            source: source::ipv4(py, addr, prefix_len)?,
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
        let gen = self.core.get(py).ok_or_else(closed_error)?;
        match gen.try_next_id() {
            Ok(Some(id)) => Ok(id),
            // The call would wait: let other threads run meanwhile.
            Ok(None) => {
                drop(gen);
                self.next_id_waiting(py)
            }
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
        let core = &self.core;
        let bytes = PyBytes::new_with(py, n * 8, |buf| {
            match py.detach(|| core.get_detached().map(|gen| fill(&gen, buf))) {
                Some(Ok(())) => Ok(()),
                Some(Err(e)) => Err(to_py_err(py, e)),
                None => Err(closed_error()),
            }
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
        let (layout, epoch_ms) = self.with(py, |g| (g.layout(), g.epoch_ms()))?;
        let d = id_from_i128(id)
            .and_then(|id| layout.decode(id, epoch_ms))
            .map_err(|e| to_py_err(py, e))?;
        decoded_dict(py, d)
    }

    /// A snapshot of this generator's state and counters (reads the clock once). In a forked
    /// child, a lease-backed generator takes its fresh slot here if it has not yet.
    fn health(&self, py: Python<'_>) -> PyResult<PyHealth> {
        let h = py.detach(|| self.core.get_detached().map(|g| g.health()));
        // A failing Python clock is reported in the snapshot, not raised.
        discard_clock_error();
        PyHealth::new(py, h.ok_or_else(closed_error)?)
    }

    /// Close the generator: every later call raises ValueError. A lease-backed generator frees
    /// its slot at once (its high-water mark stays in the store for the next holder); a
    /// generator with a fixed node id releases that id when the object is freed. Closing twice
    /// is allowed.
    fn close(&self, py: Python<'_>) {
        py.detach(|| self.core.close());
    }

    /// True once `close()` has been called.
    #[getter]
    fn closed(&self, py: Python<'_>) -> bool {
        self.core.get(py).is_none()
    }

    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    /// `with` closes the generator at the end of the block (exceptions propagate).
    #[pyo3(signature = (*_exc))]
    fn __exit__(&self, py: Python<'_>, _exc: &Bound<'_, pyo3::types::PyTuple>) -> bool {
        self.close(py);
        false
    }

    /// This generator's node id: the slot of a lease. In a process forked after the generator
    /// was made, the child's fresh slot once its first call (or `health()`) has taken it.
    #[getter]
    fn node_id(&self, py: Python<'_>) -> PyResult<u32> {
        self.with(py, |g| g.node_id())
    }
    /// Where the node id came from: `"static"`, `"env"`, `"hostname"`, `"ipv4"`,
    /// `"file_lease"` or `"etcd"`.
    #[getter]
    fn node_source(&self, py: Python<'_>) -> PyResult<&'static str> {
        self.with(py, |g| g.node_source().name())
    }
    /// The epoch, Unix milliseconds.
    #[getter]
    fn epoch_ms(&self, py: Python<'_>) -> PyResult<i64> {
        self.with(py, |g| g.epoch_ms())
    }
    /// The bit layout.
    #[getter]
    fn layout(&self, py: Python<'_>) -> PyResult<PyLayout> {
        self.with(py, |g| PyLayout { inner: g.layout() })
    }
    /// Strict mode's wait budget, milliseconds.
    #[getter]
    fn max_wait_ms(&self, py: Python<'_>) -> PyResult<f64> {
        self.with(py, |g| g.max_wait_ms())
    }
    /// Monotonic mode's lead limit, milliseconds (None: unbounded).
    #[getter]
    fn max_lead_ms(&self, py: Python<'_>) -> PyResult<Option<i64>> {
        self.with(py, |g| g.max_lead_ms())
    }
    /// `"strict"` or `"monotonic"`.
    #[getter]
    fn mode(&self, py: Python<'_>) -> PyResult<&'static str> {
        self.with(py, |g| g.mode().name())
    }

    fn __repr__(slf: &Bound<'_, Self>) -> PyResult<String> {
        let name = slf.get_type().name()?;
        let Some(g) = slf.get().core.get(slf.py()) else {
            return Ok(format!("<{name} closed>"));
        };
        Ok(format!(
            "{}(node_id={}, epoch_ms={}, layout={}, mode='{}'{}{})",
            name,
            g.node_id(),
            g.epoch_ms(),
            PyLayout { inner: g.layout() }.__repr__(),
            g.mode().name(),
            match g.node_source().name() {
                "static" => String::new(),
                source => format!(", node_source='{source}'"),
            },
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
        match py.detach(|| self.core.get_detached().map(|g| g.next_id())) {
            Some(r) => r.map_err(|e| to_py_err(py, e)),
            None => Err(closed_error()),
        }
    }

    /// Read something from the live generator (GIL held; ValueError once closed).
    fn with<R>(&self, py: Python<'_>, f: impl FnOnce(&Generator) -> R) -> PyResult<R> {
        let gen = self.core.get(py).ok_or_else(closed_error)?;
        Ok(f(&gen))
    }
}

fn prefix_arg(obj: &Bound<'_, PyAny>) -> PyResult<String> {
    source::str_arg(obj, "prefix")
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
            source: NodeSource::Static(node_id),
            epoch_ms,
            max_wait_ms,
            layout,
            clock,
            max_lead_ms,
        }
        .build(py, Mode::Monotonic)?;
        Ok(PyClassInitializer::from(base).add_subclass(MonotonicSnowflake))
    }

    /// `Snowflake.from_file_lease`, monotonic (with `max_lead_ms`).
    #[classmethod]
    #[pyo3(
        signature = (dir, *, slots = None, identity = None, reserve_ms = DEFAULT_RESERVE_MS, epoch_ms = DEFAULT_EPOCH_MS, max_wait_ms = DEFAULT_MAX_WAIT_MS, layout = None, clock = None, max_lead_ms = None),
        text_signature = "(dir, *, slots=None, identity=None, reserve_ms=5000, epoch_ms=1704067200000, max_wait_ms=5.0, layout=None, clock=None, max_lead_ms=None)"
    )]
    #[allow(clippy::too_many_arguments)]
    fn from_file_lease(
        _cls: &Bound<'_, PyType>,
        py: Python<'_>,
        dir: &Bound<'_, PyAny>,
        slots: Option<&Bound<'_, PyAny>>,
        identity: Option<&Bound<'_, PyAny>>,
        #[pyo3(from_py_with = reserve_arg)] reserve_ms: u64,
        #[pyo3(from_py_with = epoch_arg)] epoch_ms: i64,
        #[pyo3(from_py_with = max_wait_arg)] max_wait_ms: f64,
        layout: Option<&Bound<'_, PyAny>>,
        clock: Option<&Bound<'_, PyAny>>,
        max_lead_ms: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Py<Self>> {
        Settings {
            source: source::file_lease(dir, slots, identity, reserve_ms)?,
            epoch_ms,
            max_wait_ms,
            layout,
            clock,
            max_lead_ms,
        }
        .monotonic(py)
    }

    /// `Snowflake.from_etcd`, monotonic (with `max_lead_ms`).
    #[classmethod]
    #[pyo3(
        signature = (endpoints, *, prefix = DEFAULT_ETCD_PREFIX.to_string(), ttl_s = DEFAULT_ETCD_TTL_S, reserve_ms = DEFAULT_RESERVE_MS, slots = None, identity = None, connect_timeout_ms = DEFAULT_ETCD_TIMEOUT_MS, epoch_ms = DEFAULT_EPOCH_MS, max_wait_ms = DEFAULT_MAX_WAIT_MS, layout = None, clock = None, max_lead_ms = None),
        text_signature = "(endpoints, *, prefix='/polyflake', ttl_s=10, reserve_ms=5000, slots=None, identity=None, connect_timeout_ms=2000, epoch_ms=1704067200000, max_wait_ms=5.0, layout=None, clock=None, max_lead_ms=None)"
    )]
    #[allow(clippy::too_many_arguments)]
    fn from_etcd(
        _cls: &Bound<'_, PyType>,
        py: Python<'_>,
        endpoints: &Bound<'_, PyAny>,
        #[pyo3(from_py_with = prefix_arg)] prefix: String,
        #[pyo3(from_py_with = ttl_arg)] ttl_s: i64,
        #[pyo3(from_py_with = reserve_arg)] reserve_ms: u64,
        slots: Option<&Bound<'_, PyAny>>,
        identity: Option<&Bound<'_, PyAny>>,
        #[pyo3(from_py_with = timeout_arg)] connect_timeout_ms: u64,
        #[pyo3(from_py_with = epoch_arg)] epoch_ms: i64,
        #[pyo3(from_py_with = max_wait_arg)] max_wait_ms: f64,
        layout: Option<&Bound<'_, PyAny>>,
        clock: Option<&Bound<'_, PyAny>>,
        max_lead_ms: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Py<Self>> {
        Settings {
            source: source::etcd_lease(EtcdArgs {
                endpoints,
                prefix,
                ttl_s,
                reserve_ms,
                slots,
                identity,
                connect_timeout_ms,
            })?,
            epoch_ms,
            max_wait_ms,
            layout,
            clock,
            max_lead_ms,
        }
        .monotonic(py)
    }

    /// `Snowflake.from_env`, monotonic (with `max_lead_ms`).
    #[classmethod]
    #[pyo3(
        signature = (var, *, epoch_ms = DEFAULT_EPOCH_MS, max_wait_ms = DEFAULT_MAX_WAIT_MS, layout = None, clock = None, max_lead_ms = None),
        text_signature = "(var, *, epoch_ms=1704067200000, max_wait_ms=5.0, layout=None, clock=None, max_lead_ms=None)"
    )]
    #[allow(clippy::too_many_arguments)]
    fn from_env(
        _cls: &Bound<'_, PyType>,
        py: Python<'_>,
        var: &Bound<'_, PyAny>,
        #[pyo3(from_py_with = epoch_arg)] epoch_ms: i64,
        #[pyo3(from_py_with = max_wait_arg)] max_wait_ms: f64,
        layout: Option<&Bound<'_, PyAny>>,
        clock: Option<&Bound<'_, PyAny>>,
        max_lead_ms: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Py<Self>> {
        Settings {
            source: source::env(var)?,
            epoch_ms,
            max_wait_ms,
            layout,
            clock,
            max_lead_ms,
        }
        .monotonic(py)
    }

    /// `Snowflake.from_hostname`, monotonic (with `max_lead_ms`).
    #[classmethod]
    #[pyo3(
        signature = (hostname = None, *, epoch_ms = DEFAULT_EPOCH_MS, max_wait_ms = DEFAULT_MAX_WAIT_MS, layout = None, clock = None, max_lead_ms = None),
        text_signature = "(hostname=None, *, epoch_ms=1704067200000, max_wait_ms=5.0, layout=None, clock=None, max_lead_ms=None)"
    )]
    #[allow(clippy::too_many_arguments)]
    fn from_hostname(
        _cls: &Bound<'_, PyType>,
        py: Python<'_>,
        hostname: Option<&Bound<'_, PyAny>>,
        #[pyo3(from_py_with = epoch_arg)] epoch_ms: i64,
        #[pyo3(from_py_with = max_wait_arg)] max_wait_ms: f64,
        layout: Option<&Bound<'_, PyAny>>,
        clock: Option<&Bound<'_, PyAny>>,
        max_lead_ms: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Py<Self>> {
        Settings {
            source: source::hostname(hostname)?,
            epoch_ms,
            max_wait_ms,
            layout,
            clock,
            max_lead_ms,
        }
        .monotonic(py)
    }

    /// `Snowflake.from_ipv4`, monotonic (with `max_lead_ms`).
    #[classmethod]
    #[pyo3(
        signature = (addr, prefix_len, *, epoch_ms = DEFAULT_EPOCH_MS, max_wait_ms = DEFAULT_MAX_WAIT_MS, layout = None, clock = None, max_lead_ms = None),
        text_signature = "(addr, prefix_len, *, epoch_ms=1704067200000, max_wait_ms=5.0, layout=None, clock=None, max_lead_ms=None)"
    )]
    #[allow(clippy::too_many_arguments)]
    fn from_ipv4(
        _cls: &Bound<'_, PyType>,
        py: Python<'_>,
        addr: &Bound<'_, PyAny>,
        #[pyo3(from_py_with = prefix_len_arg)] prefix_len: u8,
        #[pyo3(from_py_with = epoch_arg)] epoch_ms: i64,
        #[pyo3(from_py_with = max_wait_arg)] max_wait_ms: f64,
        layout: Option<&Bound<'_, PyAny>>,
        clock: Option<&Bound<'_, PyAny>>,
        max_lead_ms: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Py<Self>> {
        Settings {
            source: source::ipv4(py, addr, prefix_len)?,
            epoch_ms,
            max_wait_ms,
            layout,
            clock,
            max_lead_ms,
        }
        .monotonic(py)
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
    /// `"lead_too_large"`, `"used_after_fork"`, `"restart_guard"`, `"lease_expired"` or
    /// `"lease_lost"`.
    status: &'static str,
    /// Why it is not ok; empty when ok.
    reason: String,
    node_id: u32,
    /// Where the node id came from (`"static"`, `"env"`, ..., `"file_lease"`, `"etcd"`).
    source: &'static str,
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
    /// The lease's state (slot, high-water mark, restart guard), None without a lease.
    lease: Option<Py<PyLeaseHealth>>,
}

impl PyHealth {
    fn new(py: Python<'_>, h: Health) -> PyResult<Self> {
        Ok(PyHealth {
            ok: h.ok,
            status: h.status.name(),
            reason: h.reason,
            node_id: h.node_id,
            source: h.source.name(),
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
            lease: h
                .lease
                .map(|l| Py::new(py, PyLeaseHealth::from(l)))
                .transpose()?,
        })
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
        d.set_item("source", self.source)?;
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
        match &self.lease {
            Some(l) => d.set_item("lease", l.get().to_dict(py)?)?,
            None => d.set_item("lease", py.None())?,
        }
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
