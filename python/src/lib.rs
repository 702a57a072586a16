//! `polyflake._polyflake`: the Python face of the polyflake core. Every rule about IDs lives in
//! the core crate; this module converts Python values, calls the core, and maps its errors
//! (see `errors.rs`) to Python exceptions. The public package is `polyflake` (pure Python,
//! re-exporting this module), which also ships the type stubs.

#![deny(missing_docs)]

mod args;
mod clock;
mod errors;
mod generator;
mod layout;
mod source;

use crate::args::id_arg;
use crate::errors::to_py_err;
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::PyString;

/// Parse a decimal ID (ASCII digits only, below 2**63) into an int.
#[pyfunction]
fn parse_id(py: Python<'_>, text: &Bound<'_, PyAny>) -> PyResult<u64> {
    let text = text.cast::<PyString>().map_err(|_| {
        PyTypeError::new_err(format!(
            "parse_id takes a str of decimal digits, not {}",
            text.get_type()
                .name()
                .map(|n| n.to_string())
                .unwrap_or_default()
        ))
    })?;
    polyflake::parse_id(&text.to_cow()?).map_err(|e| to_py_err(py, e))
}

/// Format an ID as decimal text (what JSON should carry), checking it is a valid ID.
#[pyfunction]
fn format_id(py: Python<'_>, #[pyo3(from_py_with = id_arg)] id: i128) -> PyResult<String> {
    polyflake::id_from_i128(id)
        .map(polyflake::format_id)
        .map_err(|e| to_py_err(py, e))
}

/// The native module. `gil_used = false`: every class is frozen and `Sync`, so it is also safe
/// on a free-threaded interpreter.
#[pymodule(gil_used = false)]
fn _polyflake(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<generator::Snowflake>()?;
    m.add_class::<generator::MonotonicSnowflake>()?;
    m.add_class::<generator::PyHealth>()?;
    m.add_class::<source::PyLeaseHealth>()?;
    m.add_class::<layout::PyLayout>()?;
    m.add_class::<clock::PyManualClock>()?;
    m.add_class::<clock::PyScriptedClock>()?;
    m.add_function(wrap_pyfunction!(generator::decode, m)?)?;
    m.add_function(wrap_pyfunction!(parse_id, m)?)?;
    m.add_function(wrap_pyfunction!(format_id, m)?)?;
    errors::register(m)?;
    m.add("DEFAULT_EPOCH_MS", polyflake::DEFAULT_EPOCH_MS)?;
    m.add("DEFAULT_MAX_WAIT_MS", polyflake::DEFAULT_MAX_WAIT_MS)?;
    m.add("MAX_ID", polyflake::MAX_ID)?;
    m.add("MAX_BATCH", polyflake::MAX_BATCH)?;
    m.add("DEFAULT_RESERVE_MS", polyflake::DEFAULT_RESERVE_MS)?;
    m.add("CORE_VERSION", polyflake::VERSION)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
