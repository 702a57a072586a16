//! `polyflake._polyflake`: the Python face of the polyflake core, which holds every rule about IDs;
//! this module converts Python values, calls the core and maps its errors (`error.rs`).
//!
//! ## Decisions
//!
//! - **One class implementation.** `Snowflake` is the one pyclass over a `polyflake::Generator`;
//!   `MonotonicSnowflake` is a stateless subclass, and the mode comes from the class (each
//!   `from_*` classmethod is defined once and asks whether `cls` is the monotonic one). What both
//!   generator kinds share (`health`, `close`, `with`, `mode`, the async forms, close on drop) is
//!   one macro (`shared_methods!`) used by `Snowflake` and `TimeIdGenerator`; PyO3's
//!   `multiple-pymethods` lets it, the `from_*` classmethods and `getters!` each add a
//!   `#[pymethods]` block.
//!   The 128-bit formats are ONE pyclass too, `TimeIdGenerator` over the core's generator with a
//!   run-time format; `Uuid7Generator` and `UlidGenerator` are subclasses made at import with
//!   `type()`, and the format comes from the class as the mode does (`timeid.rs`).
//! - **Settings are keywords, their defaults the core's.** A setting that is absent is never set
//!   on the core's builder or options, so its default is the core's. The text signatures and the
//!   stubs show those defaults, pinned to the core's constants (const asserts in `generator.rs`,
//!   `make test-docs-defaults`, `mypy.stubtest`). An unknown or misplaced keyword (`max_lead_ms`
//!   on `Snowflake`) is a `TypeError`, as in Python. `max_forward_step_ms=None` turns the check
//!   off. The lease keywords are read by one function per nested core struct (`lease_common`,
//!   `remote_store`), so the stores cannot drift apart; credentials go through the core's
//!   `StoreCredentials::set` by name, and None leaves a field to the core's environment fallback
//!   (the binding never reads the environment itself).
//! - **Never clamped.** A value outside its Rust type (a negative `reserve_ms`, `slots=2**70`)
//!   cannot reach the core, so the binding refuses it as the core's kind would
//!   (`InvalidNodeSource` for lease options, `InvalidArgument` for generator settings), naming
//!   the value; every range, the ZooKeeper prefix's slash and `host:port` form are the core's.
//! - **No binding lock.** The pyclass holds the `Generator` itself; `close()` is the core's, run
//!   with the GIL released (its renewal thread may be reading a Python clock), so a fork while
//!   another thread is inside a call leaves nothing held that the child needs. After `close()`
//!   every call raises `GeneratorClosed` (also a `ValueError`), `health()` reports `closed`, and
//!   the descriptive properties and `decode` still work.
//! - **Errors** are classes made from `ErrorKind::ALL` (name, docstring, `code`, attributes from
//!   `Error::fields()`), with one built-in base each (`error.rs`): `TimestampOverflow` ->
//!   `OverflowError`; `GeneratorClosed` and configuration -> `ValueError`; the rest ->
//!   `RuntimeError`. `Health` and `LeaseHealth` answer attributes from the core's `fields()`, so a
//!   new core field reaches Python with no change here.
//! - **`wait_ready(timeout_ms=None)`** calls the core's `wait_ready` with the GIL released,
//!   interruptible (Ctrl-C), so a lease that heals is waited through in one call; `None` waits
//!   as long as the guard needs (in rounds of a day).
//! - **The fast paths** are `fast.rs` (`next_id` without PyO3's trampoline) and `aio.rs` (a
//!   native awaitable instead of a coroutine; only a call that would wait goes to a thread).
//! - **`uuid7()` returns a `uuid.UUID` made without `__init__`** (`timeid.rs`): ORMs and drivers
//!   take the stdlib type, and `uuid.UUID(int=...)` runs Python-level checks that cost more than
//!   the ID. `uuid7_str()`, `uuid7_bytes()` and `ulid_bytes()` make no object; a batch is one
//!   `bytes`, 16 big-endian bytes per ID. The module-level generators are process-wide and
//!   strict, made on first use, and go on in a forked child (they hold no node id).
//! - **`clock="coarse"`** is a value of the existing `clock=` keyword; `clock_source=` picks the
//!   coarse reading of a clock object, so the scenario files run on both sources.
//! - **Prometheus from the core's table**: `polyflake.prometheus.Collector` writes no metric name
//!   of its own (it walks `HEALTH_METRICS` and `Health.samples()`); `prometheus_client` is an
//!   optional extra, never imported by the core module.
//! - **Tested against real stores**: `make test-python` runs pytest inside
//!   `tests/stores/with_zookeeper.sh`. Every `python` code block of README.md and
//!   docs/python.md is a marked snippet that `test_readme.py` runs, so none goes stale unrun.

#![deny(missing_docs)]

/// `m.add(NAME, NAME)` for each constant: its Rust name is its Python name.
macro_rules! add_constants {
    ($m:ident: $($c:ident),*) => { $($m.add(stringify!($c), $c)?;)* };
}

/// Add each `#[pyfunction]` to the module.
macro_rules! add_functions {
    ($m:ident: $($f:path),*) => { $($m.add_function(wrap_pyfunction!($f, $m)?)?;)* };
}

mod aio;
mod args;
mod clock;
mod error;
mod fast;
mod generator;
mod health;
mod interrupt;
mod layout;
mod settings;
mod source;
mod timeid;
mod utc;

use crate::args::{id_arg, str_arg};
use crate::error::to_py_err;
use polyflake::{
    DEFAULT_EPOCH_MS, DEFAULT_FORWARD_CONFIRM_MS, DEFAULT_MAX_FORWARD_STEP_MS,
    DEFAULT_MAX_GUARD_WAIT_MS, DEFAULT_MAX_LEAD_MS, DEFAULT_MAX_RESTART_WAIT_MS,
    DEFAULT_MAX_WAIT_MS, DEFAULT_RESERVE_MS, MAX_BATCH, MAX_ID,
};
use pyo3::prelude::*;

/// Parse a decimal ID (ASCII digits only, below 2**63) into an int.
#[pyfunction]
fn parse_id(py: Python<'_>, text: &Bound<'_, PyAny>) -> PyResult<u64> {
    let text = str_arg(text, "parse_id's text (decimal digits)")?;
    polyflake::parse_id(&text).map_err(|e| to_py_err(py, e))
}

/// Format an ID as decimal text (what JSON should carry), checking it is a valid ID.
#[pyfunction]
fn format_id(py: Python<'_>, id: &Bound<'_, PyAny>) -> PyResult<String> {
    polyflake::id_from_i128(id_arg(id, "id")?)
        .map(polyflake::format_id)
        .map_err(|e| to_py_err(py, e))
}

/// The native module (`gil_used = false`: every class is frozen and `Sync`).
#[pymodule(gil_used = false)]
fn _polyflake(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add_class::<generator::Snowflake>()?;
    m.add_class::<generator::MonotonicSnowflake>()?;
    fast::register(m)?;
    m.add_class::<health::PyHealth>()?;
    m.add_class::<health::PyLeaseHealth>()?;
    m.add_class::<health::PyClockSync>()?;
    m.add_class::<layout::PyLayout>()?;
    add_functions! { m: generator::decode, generator::decode_time, parse_id, format_id }
    timeid::register(m)?;
    error::register(m)?;
    m.add("HEALTH_METRICS", health::metric_table(py)?)?;
    let layout = py.get_type::<layout::PyLayout>();
    for (name, preset) in polyflake::Layout::PRESETS {
        layout.setattr(name.to_ascii_uppercase(), layout::PyLayout(preset))?;
    }
    add_constants! { m: DEFAULT_EPOCH_MS, DEFAULT_MAX_WAIT_MS, DEFAULT_RESERVE_MS, MAX_BATCH,
    MAX_ID, DEFAULT_MAX_GUARD_WAIT_MS, DEFAULT_MAX_FORWARD_STEP_MS, DEFAULT_FORWARD_CONFIRM_MS,
    DEFAULT_MAX_LEAD_MS, DEFAULT_MAX_RESTART_WAIT_MS }
    m.add("CORE_VERSION", polyflake::VERSION)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    // The test clocks belong to `polyflake.testing`: not in `__all__`, which `m.add` keeps.
    m.setattr("ManualClock", py.get_type::<clock::PyManualClock>())?;
    m.setattr("ScriptedClock", py.get_type::<clock::PyScriptedClock>())?;
    Ok(())
}
