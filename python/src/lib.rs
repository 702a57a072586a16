//! `polyflake._polyflake`: the Python face of the polyflake core, which holds every rule about IDs;
//! this module converts Python values, calls the core and maps its errors (`error.rs`).

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
