//! Unix milliseconds as an aware `datetime.datetime` in UTC: an ID's time for a log line. The
//! abi3 build has no datetime C API, so the stdlib's classes are called; the arithmetic is exact
//! (whole days, seconds and microseconds: no float on the way).

use pyo3::exceptions::PyOverflowError;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyDict;

/// `datetime(1970, 1, 1, tzinfo=timezone.utc)` and `timedelta`, fetched once.
struct Utc {
    epoch: Py<PyAny>,
    timedelta: Py<PyAny>,
}

static UTC: PyOnceLock<Utc> = PyOnceLock::new();

/// What a `datetime` holds: 0001-01-01T00:00:00Z to 9999-12-31T23:59:59.999Z, in Unix ms.
const DATETIME_MS: std::ops::RangeInclusive<i64> = -62_135_596_800_000..=253_402_300_799_999;

/// `unix_ms` as an aware UTC `datetime`; outside the years 1 to 9999, an `OverflowError`.
pub(crate) fn utc_datetime(py: Python<'_>, unix_ms: i64) -> PyResult<Bound<'_, PyAny>> {
    if !DATETIME_MS.contains(&unix_ms) {
        return Err(PyOverflowError::new_err(format!(
            "Unix ms {unix_ms} is outside the years 1 to 9999 a datetime holds"
        )));
    }
    let utc = UTC.get_or_try_init(py, || -> PyResult<Utc> {
        let m = py.import("datetime")?;
        let kwargs = PyDict::new(py);
        kwargs.set_item("tzinfo", m.getattr("timezone")?.getattr("utc")?)?;
        let epoch = m.getattr("datetime")?.call((1970, 1, 1), Some(&kwargs))?;
        let timedelta = m.getattr("timedelta")?;
        Ok(Utc {
            epoch: epoch.unbind(),
            timedelta: timedelta.unbind(),
        })
    })?;
    const DAY_MS: i64 = 86_400_000;
    let (days, ms) = (unix_ms.div_euclid(DAY_MS), unix_ms.rem_euclid(DAY_MS));
    let delta = utc
        .timedelta
        .bind(py)
        .call1((days, ms / 1000, ms % 1000 * 1000))?;
    utc.epoch.bind(py).add(delta)
}
