//! `Snowflake` and `MonotonicSnowflake` (a subclass that only sets the mode) over one
//! `polyflake::Generator`. The GIL is held only on the fast path (`try_next_id` issues at once
//! or says the call would wait); everything else runs with it released.

use crate::args::{bad_argument, batch_bytes, exact_i64_arg, float_arg, getters, i64_arg};
use crate::args::{id_arg, int_arg};
use crate::args::{opt_str_arg, str_arg};
use crate::error::to_py_err;
use crate::interrupt::{waiting, Cancel};
use crate::layout::{layout_arg, PyLayout};
use crate::settings::{core_settings, Settings};
use crate::source::{self, path_arg};
use crate::utc::utc_datetime;
use polyflake::DEFAULT_ZOOKEEPER_TIMEOUT_MS;
use polyflake::{id_from_i128, Decoded, ErrorKind, Generator, Layout, Mode, NodeSource};
use polyflake::{Builder, RestartGuard, RestartGuardOptions, DEFAULT_MAX_LEAD_MS};
use polyflake::{DEFAULT_EPOCH_MS, DEFAULT_FORWARD_CONFIRM_MS, DEFAULT_MAX_FORWARD_STEP_MS};
use polyflake::{DEFAULT_ETCD_PREFIX, DEFAULT_ETCD_TIMEOUT_MS, DEFAULT_ETCD_TTL_S};
use polyflake::{DEFAULT_MAX_GUARD_WAIT_MS, DEFAULT_MAX_WAIT_MS, DEFAULT_RESERVE_MS};
use polyflake::{DEFAULT_ZOOKEEPER_PREFIX, DEFAULT_ZOOKEEPER_SESSION_TIMEOUT_MS};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyModule, PyType};
use std::time::{Duration, Instant};

/// What a first step that issued no ID hands to the rest of the call (`next_id_rest`,
/// `anext_id_rest`): the core's answer (no ID yet, or an error), or None where it did not try.
pub(crate) type First = Option<polyflake::Result<Option<u64>>>;

/// A strict generator: an issued timestamp never exceeds the wall clock.
#[pyclass(frozen, subclass, module = "polyflake", name = "Snowflake")]
pub(crate) struct Snowflake {
    gen: Generator,
    /// An injected clock: `next_id` skips the try, which would spend a scripted clock's reading.
    injected: bool,
}

/// A monotonic generator: never waits, never duplicates; its timestamps may run ahead of the
/// wall clock (bounded by `max_lead_ms` if set).
#[pyclass(frozen, extends = Snowflake, module = "polyflake", name = "MonotonicSnowflake")]
pub(crate) struct MonotonicSnowflake;

/// The methods every generator class shares, on its core generator `$core`, `try_now` and
/// `id_to_py` (`anext_id` too, but each class has its own: `Snowflake`'s is in `fast.rs`).
/// Close (also on drop) releases the GIL, which a Python clock's reader may need.
macro_rules! shared_methods {
    ($class:ty, $core:ident) => {
        #[pymethods]
        impl $class {
            /// A snapshot of the generator's state and counters (reads the clock once).
            fn health(&self, py: Python<'_>) -> PyResult<Py<$crate::health::PyHealth>> {
                let h = py.detach(|| self.$core.health());
                // A failing Python clock is reported in the snapshot, not raised (but a Ctrl-C
                // seen while it ran is).
                $crate::error::discard_clock_error();
                if let Some(signal) = $crate::error::take_signal() {
                    return Err(signal);
                }
                $crate::health::health(py, h)
            }

            /// Close: every later call raises `GeneratorClosed` (a ValueError); a lease's slot is
            /// freed at once. Closing twice is allowed.
            fn close(&self, py: Python<'_>) {
                py.detach(|| self.$core.close());
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

            /// `"strict"` or `"monotonic"`.
            #[getter]
            fn mode(&self) -> &'static str {
                self.$core.mode().name()
            }

            /// `await g.anext_ids(count)`: `next_ids(count)` in a thread in strict mode (which
            /// sleeps through each millisecond it fills); a monotonic batch is made at once.
            fn anext_ids<'py>(
                slf: &Bound<'py, Self>,
                count: &Bound<'py, PyAny>,
            ) -> PyResult<Bound<'py, PyAny>> {
                let (py, g) = (slf.py(), slf.get());
                let now = (g.$core.mode() == polyflake::Mode::Monotonic)
                    .then(|| g.next_ids(py, count).map(Bound::into_any));
                let next_ids = pyo3::intern!(py, "_next_ids_cancellable");
                $crate::aio::now_or_in_thread(slf.as_any(), now.transpose(), next_ids, &[count])
            }

            /// `next_id()` in an asyncio task's thread: `cancel` (set when the task is
            /// cancelled) cuts its wait short (see `polyflake._aio`).
            fn _next_id_cancellable<'py>(
                &self,
                py: Python<'py>,
                cancel: &Bound<'py, $crate::interrupt::Cancel>,
            ) -> PyResult<Bound<'py, PyAny>> {
                let id = self.next_id_with(py, Some(cancel.get()))?;
                self.id_to_py(py, id)
            }

            /// `next_ids(count)` in an asyncio task's thread, as `_next_id_cancellable`.
            fn _next_ids_cancellable<'py>(
                &self,
                py: Python<'py>,
                count: &Bound<'py, PyAny>,
                cancel: &Bound<'py, $crate::interrupt::Cancel>,
            ) -> PyResult<Bound<'py, PyAny>> {
                self.next_ids_with(py, count, Some(cancel.get()))
            }
        }

        impl Drop for $class {
            /// At interpreter shutdown (no attaching) the core's own drop closes it.
            fn drop(&mut self) {
                let core = &self.$core;
                Python::try_attach(|py| py.detach(|| core.close()));
            }
        }
    };
}
pub(crate) use shared_methods;

shared_methods!(Snowflake, gen);

/// Where a constructor's node id comes from, for the keywords of its claim on the host.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Held {
    /// A fixed node id (`node_id=`, `from_env`, `from_hostname`, `from_ipv4`): `restart_guard`,
    /// `state_dir` and `host_scope`.
    Fixed,
    /// A lease's slot: `host_scope` only (the lease keeps its own restart guard).
    Leased,
}

/// The keywords of a node id's claim on the host (those `held` lists; None or absent: the
/// core's default, which reads `POLYFLAKE_RESTART_GUARD`, `POLYFLAKE_STATE_DIR` and
/// `POLYFLAKE_HOST_SCOPE`) on the builder.
fn host_claim(s: &Settings<'_>, held: Held, mut b: Builder) -> PyResult<Builder> {
    let given = |key| Ok::<_, PyErr>(s.take(key)?.filter(|v| !v.is_none()));
    if held == Held::Fixed {
        let mut guard = RestartGuardOptions::default();
        if let Some(v) = given("restart_guard")? {
            let name = str_arg(&v, "restart_guard (\"auto\", \"required\" or \"off\")")?;
            let mode = RestartGuard::from_name(&name).map_err(|e| to_py_err(v.py(), e))?;
            guard.mode = Some(mode);
        }
        if let Some(v) = given("state_dir")? {
            guard.state_dir = Some(path_arg(&v, "state_dir")?);
        }
        b = b.restart_guard(guard);
    }
    if let Some(v) = given("host_scope")? {
        b = b.host_scope(str_arg(&v, "host_scope")?);
    }
    Ok(b)
}

/// The generator from its node-id source and settings; `what` names the call, `lists_lead` says
/// whether its signature lists `max_lead_ms` (see `core_settings`).
fn build<'py>(
    py: Python<'py>,
    what: &str,
    source: impl FnOnce(&Settings<'py>) -> PyResult<NodeSource>,
    held: Held,
    mode: Mode,
    settings: Option<&Bound<'py, PyDict>>,
    lists_lead: bool,
) -> PyResult<Snowflake> {
    let s = Settings(settings.cloned());
    let mut b = Generator::builder_from(source(&s)?);
    if let Some(v) = s.take("epoch_ms")? {
        b = b.epoch_ms(i64_arg(&v, "epoch_ms")?);
    }
    if let Some(v) = s.take("layout")? {
        b = b.layout(layout_arg(&v)?);
    }
    let b = host_claim(&s, held, b)?;
    let b = b.settings(core_settings(mode, &s, lists_lead)?.0);
    s.finish(what)?;
    // Building may wait (a lease's restart guard, up to max_guard_wait_ms): Ctrl-C cuts it.
    let gen = waiting(py, None, || b.build())?;
    let injected = gen.has_injected_clock();
    Ok(Snowflake { gen, injected })
}

/// An instance of `cls` (`Snowflake` or `MonotonicSnowflake`, which gives the mode).
fn make<'py>(
    cls: &Bound<'py, PyType>,
    what: &str,
    source: impl FnOnce(&Settings<'py>) -> PyResult<NodeSource>,
    held: Held,
    settings: Option<&Bound<'py, PyDict>>,
) -> PyResult<Py<PyAny>> {
    let py = cls.py();
    let monotonic = cls.is_subclass_of::<MonotonicSnowflake>()?;
    let mode = [Mode::Strict, Mode::Monotonic][usize::from(monotonic)];
    let what = format!("{}.{what}", cls.name()?);
    let made = build(py, &what, source, held, mode, settings, true)?;
    let init = PyClassInitializer::from(made);
    Ok(if monotonic {
        Py::new(py, init.add_subclass(MonotonicSnowflake))?.into_any()
    } else {
        Py::new(py, init)?.into_any()
    })
}

/// The `from_*` class methods, `name(argument: type, ...) => node-id source;` each, with the
/// signature `help()` shows: the settings the source and `build` take, with the defaults they
/// stand for (the core's, checked below; `python/tests/test_signatures.py` checks the keywords).
macro_rules! from_sources {
    ($($(#[doc = $doc:literal])* $name:ident($($arg:ident: $t:ty $(= $default:tt)?),*)
        $text:literal => $held:ident $source:expr;)*) => {
        #[pymethods]
        impl Snowflake {$(
            $(#[doc = $doc])*
            #[classmethod]
            #[pyo3(signature = ($($arg $(= $default)?,)* **settings), text_signature = $text)]
            fn $name<'py>(
                cls: &Bound<'py, PyType>,
                $($arg: $t,)*
                settings: Option<&Bound<'py, PyDict>>,
            ) -> PyResult<Py<PyAny>> {
                make(cls, stringify!($name), $source, Held::$held, settings)
            }
        )*}
    };
}

from_sources! {
    /// A generator on a slot leased from a directory (one host); settings `slots`, `identity`,
    /// `reserve_ms`, `max_guard_wait_ms`, `heal`, `host_scope` (the slot is claimed host-wide in
    /// that scope, as a fixed node id is). Until the slot's restart guard has passed it raises
    /// `LeaseNotReady` (`wait_ready()` waits); `close()` frees the slot. A lost lease raises
    /// `LeaseLost` for good, or with `heal=True` takes a new slot by itself (a new `node_id`,
    /// behind its restart guard; the counters go on).
    from_file_lease(dir: &Bound<'_, PyAny>)
        "($cls, dir, *, slots=None, identity=None, reserve_ms=5000, max_guard_wait_ms=60000, heal=False, epoch_ms=1704067200000, layout=None, max_wait_ms=5.0, max_forward_step_ms=60000, forward_confirm_ms=300000, clock=None, clock_source=None, max_lead_ms=5000, max_clock_error_ms=None, host_scope=None)"
        => Leased |s| source::file_lease(dir, s);
    /// A generator on a slot leased from an etcd v3 cluster (one URL or several); settings
    /// `prefix`, `ttl_s`, `connect_timeout_ms`, those of `from_file_lease`, `ca_file`,
    /// `cert_file`, `key_file`, `username`, `password` (None: `POLYFLAKE_ETCD_*`).
    from_etcd(endpoints: &Bound<'_, PyAny>)
        "($cls, endpoints, *, prefix='/polyflake', ttl_s=10, connect_timeout_ms=2000, ca_file=None, cert_file=None, key_file=None, username=None, password=None, slots=None, identity=None, reserve_ms=5000, max_guard_wait_ms=60000, heal=False, epoch_ms=1704067200000, layout=None, max_wait_ms=5.0, max_forward_step_ms=60000, forward_confirm_ms=300000, clock=None, clock_source=None, max_lead_ms=5000, max_clock_error_ms=None, host_scope=None)"
        => Leased |s| source::etcd_lease(endpoints, s);
    /// A generator on a slot leased from a ZooKeeper ensemble (`"host:port,host:port"` or a
    /// list); settings as `from_etcd` (`POLYFLAKE_ZOOKEEPER_*`), with `session_timeout_ms` (the
    /// lease's time to live) for `ttl_s`. An expired session stops the generator at once (with
    /// `heal=True`: until it has taken a new slot).
    from_zookeeper(ensemble: &Bound<'_, PyAny>)
        "($cls, ensemble, *, prefix='/polyflake', session_timeout_ms=10000, connect_timeout_ms=2000, ca_file=None, cert_file=None, key_file=None, username=None, password=None, slots=None, identity=None, reserve_ms=5000, max_guard_wait_ms=60000, heal=False, epoch_ms=1704067200000, layout=None, max_wait_ms=5.0, max_forward_step_ms=60000, forward_confirm_ms=300000, clock=None, clock_source=None, max_lead_ms=5000, max_clock_error_ms=None, host_scope=None)"
        => Leased |s| source::zookeeper_lease(ensemble, s);
    /// A generator whose node id is the decimal integer in the environment variable `var`;
    /// the restart guard's settings as `Snowflake(node_id)`.
    from_env(var: &Bound<'_, PyAny>)
        "($cls, var, *, epoch_ms=1704067200000, layout=None, max_wait_ms=5.0, max_forward_step_ms=60000, forward_confirm_ms=300000, clock=None, clock_source=None, max_lead_ms=5000, max_clock_error_ms=None, restart_guard=None, state_dir=None, host_scope=None)"
        => Fixed |_| Ok(NodeSource::Env { var: str_arg(var, "var")? });
    /// A generator whose node id is the ordinal of a hostname (`ids-7` -> 7; None: this host).
    from_hostname(hostname: Option<&Bound<'_, PyAny>> = None)
        "($cls, hostname=None, *, epoch_ms=1704067200000, layout=None, max_wait_ms=5.0, max_forward_step_ms=60000, forward_confirm_ms=300000, clock=None, clock_source=None, max_lead_ms=5000, max_clock_error_ms=None, restart_guard=None, state_dir=None, host_scope=None)"
        => Fixed |_| Ok(NodeSource::Hostname { hostname: opt_str_arg(hostname, "hostname")? });
    /// A generator whose node id is the host part of an IPv4 address in a subnet of
    /// `prefix_len` bits (which must fit the node field: a /22 or narrower for 10 node bits).
    from_ipv4(addr: &Bound<'_, PyAny>, prefix_len: &Bound<'_, PyAny>)
        "($cls, addr, prefix_len, *, epoch_ms=1704067200000, layout=None, max_wait_ms=5.0, max_forward_step_ms=60000, forward_confirm_ms=300000, clock=None, clock_source=None, max_lead_ms=5000, max_clock_error_ms=None, restart_guard=None, state_dir=None, host_scope=None)"
        => Fixed |_| source::ipv4(addr, prefix_len);
}

// The defaults the signatures above and below show are the core's.
const _: () = assert!(
    DEFAULT_EPOCH_MS == 1_704_067_200_000
        && DEFAULT_MAX_WAIT_MS == 5.0
        && DEFAULT_MAX_FORWARD_STEP_MS == 60_000
        && DEFAULT_FORWARD_CONFIRM_MS == 300_000
        && DEFAULT_RESERVE_MS == 5_000
        && DEFAULT_MAX_GUARD_WAIT_MS == 60_000
        && DEFAULT_MAX_LEAD_MS == 5_000
        && DEFAULT_ETCD_TTL_S == 10
        && DEFAULT_ETCD_TIMEOUT_MS == 2_000
        && DEFAULT_ZOOKEEPER_SESSION_TIMEOUT_MS == 10_000
        && DEFAULT_ZOOKEEPER_TIMEOUT_MS == 2_000
        && matches!(DEFAULT_ETCD_PREFIX.as_bytes(), b"/polyflake")
        && matches!(DEFAULT_ZOOKEEPER_PREFIX.as_bytes(), b"/polyflake")
);

/// The core's decoding of an ID for a layout and epoch.
fn decode_id(py: Python<'_>, id: i128, layout: Layout, epoch_ms: i64) -> PyResult<Decoded> {
    id_from_i128(id)
        .and_then(|id| layout.decode(id, epoch_ms))
        .map_err(|e| to_py_err(py, e))
}

/// An ID as `{"epoch_ms", "node_id", "sequence"}` (`epoch_ms`: its Unix-ms timestamp).
fn decoded(py: Python<'_>, id: i128, layout: Layout, epoch_ms: i64) -> PyResult<Py<PyDict>> {
    let d = decode_id(py, id, layout, epoch_ms)?;
    let dict = PyDict::new(py);
    dict.set_item("epoch_ms", d.timestamp_ms)?;
    dict.set_item("node_id", d.node_id)?;
    dict.set_item("sequence", d.sequence)?;
    Ok(dict.unbind())
}

#[pymethods]
impl Snowflake {
    /// `Snowflake(node_id, *, ...)`; every default shown is the core's (`DEFAULT_*`). A fixed
    /// node id on the system clock keeps a mark in `state_dir` (its restart guard:
    /// `restart_guard` "auto", "required" or "off"; None: `POLYFLAKE_RESTART_GUARD`, else
    /// "auto"), claimed host-wide in `host_scope` (None: `POLYFLAKE_HOST_SCOPE`).
    #[new]
    #[pyo3(
        signature = (node_id, **settings),
        text_signature = "(node_id, *, epoch_ms=1704067200000, layout=None, max_wait_ms=5.0, max_forward_step_ms=60000, forward_confirm_ms=300000, clock=None, clock_source=None, max_clock_error_ms=None, restart_guard=None, state_dir=None, host_scope=None)"
    )]
    fn new(node_id: &Bound<'_, PyAny>, settings: Option<&Bound<'_, PyDict>>) -> PyResult<Self> {
        let source = |_: &_| Ok(NodeSource::Static(int_arg(node_id, "node_id")?));
        let (py, held, mode) = (node_id.py(), Held::Fixed, Mode::Strict);
        build(py, "Snowflake", source, held, mode, settings, false)
    }

    // `next_id()` and `anext_id()` are not here: `fast::register` installs them
    // (`next_id_first`, then `next_id_rest` or `anext_id_rest`).

    /// Issue one ID if that needs no wait; None where `next_id()` would sleep (on a
    /// `ScriptedClock`, having spent a reading).
    fn try_next_id(&self, py: Python<'_>) -> PyResult<Option<u64>> {
        try_next_id(&self.gen).map_err(|e| to_py_err(py, e))
    }

    /// Issue `count` consecutive IDs as an `array.array('q')` (filled with the GIL released).
    fn next_ids<'py>(
        &self,
        py: Python<'py>,
        count: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        self.next_ids_with(py, count, None)
    }

    /// `Snowflake.decode(x)`: the default layout and epoch (or `layout=`, `epoch_ms=`);
    /// `g.decode(x)`: that generator's.
    #[classattr]
    fn decode() -> DecodeMethod {
        DecodeMethod {
            function: "decode",
            method: "_decode",
        }
    }

    /// `Snowflake.decode_time(x)`, `g.decode_time(x)`: the ID's time as an aware UTC
    /// `datetime`, decoded as `decode` does.
    #[classattr]
    fn decode_time() -> DecodeMethod {
        DecodeMethod {
            function: "decode_time",
            method: "_decode_time",
        }
    }

    /// What `g.decode(x)` calls.
    fn _decode(&self, py: Python<'_>, id: &Bound<'_, PyAny>) -> PyResult<Py<PyDict>> {
        let (layout, epoch_ms) = (self.gen.layout(), self.gen.epoch_ms());
        decoded(py, id_arg(id, "id")?, layout, epoch_ms)
    }

    /// What `g.decode_time(x)` calls.
    fn _decode_time<'py>(
        &self,
        py: Python<'py>,
        id: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let (layout, epoch_ms) = (self.gen.layout(), self.gen.epoch_ms());
        let d = decode_id(py, id_arg(id, "id")?, layout, epoch_ms)?;
        utc_datetime(py, d.timestamp_ms)
    }

    /// Wait while a restart guard holds, a lease's or a fixed node id's mark (`timeout_ms=None`:
    /// as long as it needs; at the deadline, `LeaseNotReady`). Returns at once without one;
    /// Ctrl-C interrupts it.
    #[pyo3(signature = (timeout_ms = None))]
    fn wait_ready(&self, py: Python<'_>, timeout_ms: Option<&Bound<'_, PyAny>>) -> PyResult<()> {
        let deadline = match timeout_ms {
            Some(t) => {
                let ms = float_arg(t, "timeout_ms")?;
                let reason = format!("{ms} is not a finite number >= 0");
                let d = Duration::try_from_secs_f64(ms / 1000.0)
                    .map_err(|_| to_py_err(py, bad_argument("timeout_ms", reason)))?;
                Instant::now().checked_add(d)
            }
            None => None,
        };
        // One core wait, which Ctrl-C cuts short through `waiting`'s hook (so a lease that
        // heals is waited through: between its loss and its new slot the core says LeaseLost
        // only at the deadline). No deadline: rounds of a day, as long as the guard needs.
        loop {
            let wait = deadline.map_or(Duration::from_secs(86_400), |d| {
                d.saturating_duration_since(Instant::now())
            });
            let mut not_ready = false;
            let r = waiting(py, None, || {
                let r = self.gen.wait_ready(wait);
                not_ready = matches!(&r, Err(e) if e.kind() == ErrorKind::LeaseNotReady);
                r
            });
            if !(not_ready && deadline.is_none()) {
                return r;
            }
        }
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
        let clock = ["", ", clock=injected"][usize::from(g.has_injected_clock())];
        let layout = PyLayout(g.layout()).__repr__();
        let (node, epoch, mode) = (g.node_id(), g.epoch_ms(), g.mode().name());
        Ok(format!("{name}(node_id={node}, epoch_ms={epoch}, layout={layout}, mode='{mode}'{source}{clock})"))
    }
}

getters! { Snowflake, |s|
    /// True once `close()` has been called.
    closed: bool = s.gen.is_closed();
    /// This generator's node id: a lease's slot (in a forked child, its fresh one once taken).
    node_id: u32 = s.gen.node_id();
    /// Where the node id came from: `"static"`, `"env"`, `"file_lease"`, `"etcd"`, ...
    node_source: &'static str = s.gen.node_source().name();
    /// The epoch, Unix milliseconds.
    epoch_ms: i64 = s.gen.epoch_ms();
    /// The bit layout.
    layout: PyLayout = PyLayout(s.gen.layout());
    /// Strict mode's wait budget, milliseconds.
    max_wait_ms: f64 = s.gen.max_wait_ms();
    /// Monotonic mode's lead limit, milliseconds (None: unbounded; a strict generator never
    /// runs ahead, whatever this says).
    max_lead_ms: Option<i64> = s.gen.max_lead_ms();
    /// The bound on a forward step of the wall clock, milliseconds (None: the check is off).
    max_forward_step_ms: Option<u64> = s.gen.max_forward_step_ms();
    /// How long a stepped-ahead clock must hold before it is believed, milliseconds.
    forward_confirm_ms: u64 = s.gen.forward_confirm_ms();
    /// The clock reading in use: `"coarse"` only if asked for and fine enough (see `health()`).
    clock_source: &'static str = s.gen.clock_source().name();
    /// The kernel's largest maximum error of the clock the generator issues under, milliseconds
    /// (None: the kernel's word is reported in `health()`, never a reason to refuse).
    max_clock_error_ms: Option<u64> = s.gen.settings().max_clock_error_ms;
}

impl Snowflake {
    fn try_now(&self) -> polyflake::Result<Option<u64>> {
        try_next_id(&self.gen)
    }

    /// `next_id()`'s first step, which needs no Python token (`fast.rs` runs it outside PyO3's
    /// trampoline): the ID the core issues at once, or what the rest of the call needs
    /// (`next_id_rest`; None for an injected clock, whose reading a try would spend). Inlined,
    /// with the core's step, into its one caller, the C function: the ID stays in a register.
    /// Compiled on its own, the core's whole `Result` came back through memory (16-byte loads
    /// that missed store forwarding); returning `Option<u64>` but with the core's step out of
    /// line, or with a second caller (where LLVM put the step out of line for both), a call
    /// cost 2 to 4 ns more (BENCHMARKS.md, Python).
    #[inline(always)]
    pub(crate) fn next_id_first(&self) -> Result<u64, First> {
        self.first(|gen| gen.try_next_id())
    }

    /// `next_id_first` for `anext_id()`, on the core's step compiled once on its own
    /// (`try_next_id` below), so that `next_id_first` keeps its one caller.
    pub(crate) fn anext_id_first(&self) -> Result<u64, First> {
        self.first(try_next_id)
    }

    #[inline(always)]
    fn first(
        &self,
        step: impl FnOnce(&Generator) -> polyflake::Result<Option<u64>>,
    ) -> Result<u64, First> {
        if self.injected {
            return Err(None);
        }
        match step(&self.gen) {
            Ok(Some(id)) => Ok(id),
            other => Err(Some(other)),
        }
    }

    /// `next_id()` after a first step that issued nothing: the error it met, or, where the call
    /// would wait (or the clock is injected), the wait with the GIL released so other threads
    /// run meanwhile.
    pub(crate) fn next_id_rest(&self, py: Python<'_>, rest: First) -> PyResult<u64> {
        match rest {
            Some(Ok(Some(id))) => Ok(id),
            Some(Ok(None)) | None => self.next_id_waiting(py),
            Some(Err(e)) => Err(to_py_err(py, e)),
        }
    }

    /// `await g.anext_id()` after `next_id_first` found no ID at once (`first`: its `rest`; None:
    /// not tried, an injected clock): the error ready at once, or `next_id()` in a thread, never
    /// blocking the event loop. Not tried, a monotonic generator tries here (a strict one on
    /// an injected clock does not: a try would spend a scripted reading).
    pub(crate) fn anext_id_rest<'py>(
        &self,
        this: &Bound<'py, PyAny>,
        first: First,
    ) -> PyResult<Bound<'py, PyAny>> {
        let py = this.py();
        let to_py = |id| self.id_to_py(py, id);
        match first {
            Some(tried) => crate::aio::anext_id(this, false, || tried, to_py),
            None => {
                let skip = self.injected && self.gen.mode() == Mode::Strict;
                crate::aio::anext_id(this, skip, || self.try_now(), to_py)
            }
        }
    }

    fn id_to_py<'py>(&self, py: Python<'py>, id: u64) -> PyResult<Bound<'py, PyAny>> {
        Ok(id.into_pyobject(py)?.into_any())
    }

    #[cold]
    #[inline(never)]
    fn next_id_waiting(&self, py: Python<'_>) -> PyResult<u64> {
        self.next_id_with(py, None)
    }

    /// `next_id` with the GIL released, cut short by Ctrl-C (or `cancel`) while it waits.
    fn next_id_with(&self, py: Python<'_>, cancel: Option<&Cancel>) -> PyResult<u64> {
        waiting(py, cancel, || self.gen.next_id())
    }

    /// `next_ids(count)` as an `array.array('q')`, cut short as `next_id_with` (a batch cut short
    /// returns nothing).
    fn next_ids_with<'py>(
        &self,
        py: Python<'py>,
        count: &Bound<'py, PyAny>,
        cancel: Option<&Cancel>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let bytes = batch_bytes(count, cancel, |ids| self.gen.next_ids(ids), u64::from)?;
        static ARRAY: PyOnceLock<Py<PyType>> = PyOnceLock::new();
        ARRAY.import(py, "array", "array")?.call1(("q", bytes))
    }
}

/// The core's `try_next_id` for `try_next_id()` and `anext_id()`, compiled on its own: inlined
/// into a PyO3 method, LLVM moved the clock reading through a 16-byte load that missed store
/// forwarding (5 ns more a monotonic call). `next_id()` has its own path (`next_id_first`).
#[inline(never)]
fn try_next_id(gen: &Generator) -> polyflake::Result<Option<u64>> {
    gen.try_next_id()
}

#[pymethods]
impl MonotonicSnowflake {
    /// `MonotonicSnowflake(node_id, *, ..., max_lead_ms=5000)`: the settings of `Snowflake` and
    /// `max_lead_ms` (the core's `DEFAULT_MAX_LEAD_MS`; None: unbounded).
    #[new]
    #[pyo3(
        signature = (node_id, **settings),
        text_signature = "(node_id, *, epoch_ms=1704067200000, layout=None, max_wait_ms=5.0, max_forward_step_ms=60000, forward_confirm_ms=300000, clock=None, clock_source=None, max_lead_ms=5000, max_clock_error_ms=None, restart_guard=None, state_dir=None, host_scope=None)"
    )]
    fn new(
        node_id: &Bound<'_, PyAny>,
        settings: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<PyClassInitializer<Self>> {
        let source = |_: &_| Ok(NodeSource::Static(int_arg(node_id, "node_id")?));
        let (py, held, mode) = (node_id.py(), Held::Fixed, Mode::Monotonic);
        let base = build(py, "MonotonicSnowflake", source, held, mode, settings, true)?;
        Ok(PyClassInitializer::from(base).add_subclass(MonotonicSnowflake))
    }
}

/// `Snowflake.decode` (and `decode_time`): on the class, the module's `function`; on a
/// generator, its `method`, bound to its layout and epoch, so `g.decode(x)` never silently uses
/// the wrong layout.
#[pyclass(frozen, module = "polyflake")]
pub(crate) struct DecodeMethod {
    function: &'static str,
    method: &'static str,
}

#[pymethods]
impl DecodeMethod {
    fn __get__(
        &self,
        py: Python<'_>,
        instance: &Bound<'_, PyAny>,
        _owner: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        static MODULE: PyOnceLock<Py<PyModule>> = PyOnceLock::new();
        if instance.is_none() {
            let module = MODULE.get_or_try_init(py, || {
                Ok::<_, PyErr>(py.import("polyflake._polyflake")?.unbind())
            })?;
            return Ok(module.bind(py).getattr(self.function)?.unbind());
        }
        Ok(instance.getattr(self.method)?.unbind())
    }
}

/// Decode an ID: `{"epoch_ms", "node_id", "sequence"}` for a layout and epoch (default
/// 41/10/12 and 2024-01-01); `epoch_ms` is the ID's Unix-ms timestamp.
#[pyfunction]
#[pyo3(
    signature = (id, /, *, layout = None, epoch_ms = DEFAULT_EPOCH_MS),
    text_signature = "(id, /, *, layout=None, epoch_ms=1704067200000)"
)]
pub(crate) fn decode(
    py: Python<'_>,
    id: &Bound<'_, PyAny>,
    layout: Option<&Bound<'_, PyAny>>,
    #[pyo3(from_py_with = epoch_arg)] epoch_ms: i64,
) -> PyResult<Py<PyDict>> {
    let layout = layout.map_or(Ok(Layout::DEFAULT), layout_arg)?;
    decoded(py, id_arg(id, "id")?, layout, epoch_ms)
}

/// An ID's time as an aware UTC `datetime` (for a log line), decoded as `decode` does: its
/// Unix-ms timestamp, an upper bound on when it was made (monotonic mode may run ahead).
#[pyfunction]
#[pyo3(
    signature = (id, /, *, layout = None, epoch_ms = DEFAULT_EPOCH_MS),
    text_signature = "(id, /, *, layout=None, epoch_ms=1704067200000)"
)]
pub(crate) fn decode_time<'py>(
    py: Python<'py>,
    id: &Bound<'py, PyAny>,
    layout: Option<&Bound<'py, PyAny>>,
    #[pyo3(from_py_with = epoch_arg)] epoch_ms: i64,
) -> PyResult<Bound<'py, PyAny>> {
    let layout = layout.map_or(Ok(Layout::DEFAULT), layout_arg)?;
    let d = decode_id(py, id_arg(id, "id")?, layout, epoch_ms)?;
    utc_datetime(py, d.timestamp_ms)
}

/// The epoch of `decode`: it comes back out in the answer, so it is refused outside 64 bits.
fn epoch_arg(obj: &Bound<'_, PyAny>) -> PyResult<i64> {
    exact_i64_arg(obj, "epoch_ms", "epoch_ms")
}
