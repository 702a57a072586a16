//! Where a generator's node id comes from: Python arguments to the core's `NodeSource` (file
//! lease, etcd lease, environment variable, hostname ordinal, IPv4 address), and the lease part
//! of `health()`. Only type conversion lives here: every range and every rule (slot counts,
//! reserves, TTLs, prefix lengths, identities) is the core's, reached by passing the value
//! through (numbers past the Rust type's range are clamped to its bound, which the core refuses).

use crate::args::int_arg;
use crate::errors::to_py_err;
use polyflake::{Error, EtcdLeaseOptions, FileLeaseOptions, LeaseHealth, NodeSource};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyString};
use std::net::Ipv4Addr;
use std::path::PathBuf;

fn type_name(obj: &Bound<'_, PyAny>) -> String {
    obj.get_type()
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "?".into())
}

/// An int clamped into `T`'s range (below it: its minimum, above it: its maximum).
fn clamped<T: TryFrom<i128> + Bounded>(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<T> {
    let v = int_arg(obj, what)?;
    Ok(T::try_from(v).unwrap_or(if v < 0 { T::MIN } else { T::MAX }))
}

/// The bounds [`clamped`] needs.
trait Bounded {
    const MIN: Self;
    const MAX: Self;
}
macro_rules! bounded {
    ($($t:ty),*) => {$(impl Bounded for $t { const MIN: Self = <$t>::MIN; const MAX: Self = <$t>::MAX; })*};
}
bounded!(u8, u32, u64, i64);

/// A `str` argument (no other type, not even bytes).
pub(crate) fn str_arg(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<String> {
    match obj.cast::<PyString>() {
        Ok(s) => Ok(s.to_cow()?.into_owned()),
        Err(_) => Err(PyTypeError::new_err(format!(
            "{what} must be a str, not {}",
            type_name(obj)
        ))),
    }
}

fn opt_str_arg(obj: Option<&Bound<'_, PyAny>>, what: &str) -> PyResult<Option<String>> {
    obj.filter(|o| !o.is_none())
        .map(|o| str_arg(o, what))
        .transpose()
}

fn slots_arg(obj: Option<&Bound<'_, PyAny>>) -> PyResult<Option<u32>> {
    obj.filter(|o| !o.is_none())
        .map(|o| clamped::<u32>(o, "slots"))
        .transpose()
}

/// `from_py_with` helpers for signatures.
pub(crate) fn reserve_arg(obj: &Bound<'_, PyAny>) -> PyResult<u64> {
    clamped(obj, "reserve_ms")
}
pub(crate) fn ttl_arg(obj: &Bound<'_, PyAny>) -> PyResult<i64> {
    clamped(obj, "ttl_s")
}
pub(crate) fn timeout_arg(obj: &Bound<'_, PyAny>) -> PyResult<u64> {
    clamped(obj, "connect_timeout_ms")
}
pub(crate) fn prefix_len_arg(obj: &Bound<'_, PyAny>) -> PyResult<u8> {
    clamped(obj, "prefix_len")
}

/// `from_file_lease(dir, slots=, identity=, reserve_ms=)`: `dir` is a `str` or an
/// `os.PathLike` (what `open()` takes).
pub(crate) fn file_lease(
    dir: &Bound<'_, PyAny>,
    slots: Option<&Bound<'_, PyAny>>,
    identity: Option<&Bound<'_, PyAny>>,
    reserve_ms: u64,
) -> PyResult<NodeSource> {
    if dir.is_instance_of::<PyBytes>() {
        return Err(PyTypeError::new_err(
            "dir must be a str or an os.PathLike, not bytes",
        ));
    }
    let path: PathBuf = dir.extract().map_err(|_| {
        PyTypeError::new_err(format!(
            "dir must be a str or an os.PathLike, not {}",
            type_name(dir)
        ))
    })?;
    let mut o = FileLeaseOptions::new(path);
    o.slots = slots_arg(slots)?;
    o.identity = opt_str_arg(identity, "identity")?;
    o.reserve_ms = reserve_ms;
    Ok(NodeSource::FileLease(o))
}

/// The settings of `from_etcd` besides the generator's own.
pub(crate) struct EtcdArgs<'a, 'py> {
    pub endpoints: &'a Bound<'py, PyAny>,
    pub prefix: String,
    pub ttl_s: i64,
    pub reserve_ms: u64,
    pub slots: Option<&'a Bound<'py, PyAny>>,
    pub identity: Option<&'a Bound<'py, PyAny>>,
    pub connect_timeout_ms: u64,
}

/// `from_etcd(endpoints, ...)`: `endpoints` is one URL (`str`) or an iterable of them.
pub(crate) fn etcd_lease(a: EtcdArgs<'_, '_>) -> PyResult<NodeSource> {
    let endpoints = if let Ok(s) = a.endpoints.cast::<PyString>() {
        vec![s.to_cow()?.into_owned()]
    } else {
        let not_urls = || {
            PyTypeError::new_err(format!(
                "endpoints must be a str URL or an iterable of str URLs, not {}",
                type_name(a.endpoints)
            ))
        };
        let mut v = Vec::new();
        for item in a.endpoints.try_iter().map_err(|_| not_urls())? {
            v.push(str_arg(&item?, "each endpoint")?);
        }
        v
    };
    let mut o = EtcdLeaseOptions::new(endpoints);
    o.prefix = a.prefix;
    o.ttl_s = a.ttl_s;
    o.reserve_ms = a.reserve_ms;
    o.slots = slots_arg(a.slots)?;
    o.identity = opt_str_arg(a.identity, "identity")?;
    o.connect_timeout_ms = a.connect_timeout_ms;
    Ok(NodeSource::Etcd(o))
}

/// `from_env(var)`.
pub(crate) fn env(var: &Bound<'_, PyAny>) -> PyResult<NodeSource> {
    Ok(NodeSource::Env {
        var: str_arg(var, "var")?,
    })
}

/// `from_hostname(hostname=None)`.
pub(crate) fn hostname(hostname: Option<&Bound<'_, PyAny>>) -> PyResult<NodeSource> {
    Ok(NodeSource::Hostname {
        hostname: opt_str_arg(hostname, "hostname")?,
    })
}

/// `from_ipv4(addr, prefix_len)`: `addr` is a dotted-quad `str` or an `ipaddress.IPv4Address`.
/// Text that is not an IPv4 address is the core's `InvalidNodeSource` (a value error, like every
/// other bad source).
pub(crate) fn ipv4(
    py: Python<'_>,
    addr: &Bound<'_, PyAny>,
    prefix_len: u8,
) -> PyResult<NodeSource> {
    let is_ipv4_object = addr
        .get_type()
        .fully_qualified_name()
        .is_ok_and(|n| n.to_cow().is_ok_and(|n| n == "ipaddress.IPv4Address"));
    let text = if is_ipv4_object {
        addr.str()?.to_cow()?.into_owned()
    } else {
        str_arg(addr, "addr (a str or an ipaddress.IPv4Address)")?
    };
    let addr: Ipv4Addr = text.parse().map_err(|_| {
        to_py_err(
            py,
            Error::InvalidNodeSource {
                reason: format!("{text:?} is not an IPv4 address (a.b.c.d)"),
            },
        )
    })?;
    Ok(NodeSource::Ipv4 { addr, prefix_len })
}

/// The lease part of a `Health` snapshot (`Health.lease`; None when the node id is not leased).
#[pyclass(frozen, get_all, module = "polyflake", name = "LeaseHealth")]
pub(crate) struct PyLeaseHealth {
    /// `"file"` or `"etcd"`.
    kind: &'static str,
    /// The lease directory, or the etcd endpoints and key prefix.
    store: String,
    /// The slot held, which is the node id.
    slot: u32,
    /// The high-water mark R, Unix ms: no ID carries a later timestamp until R is extended.
    high_water_ms: i64,
    /// The previous holder's R found when the slot was taken, if any (the restart guard).
    guard_until_ms: Option<i64>,
    /// True while the restart guard waits.
    guard_waiting: bool,
    /// How long the restart guard still waits, ms (0 when it does not).
    guard_remaining_ms: u64,
    /// True once the lease is lost: the generator has stopped for good.
    lost: bool,
    /// Successful extensions of R.
    renewals: u64,
    /// Failed extensions (store unreachable, I/O errors).
    failures: u64,
    /// The last store error, or why the lease was lost; empty if none.
    last_error: String,
}

impl From<LeaseHealth> for PyLeaseHealth {
    fn from(l: LeaseHealth) -> Self {
        PyLeaseHealth {
            kind: l.kind.name(),
            store: l.store,
            slot: l.slot,
            high_water_ms: l.high_water_ms,
            guard_until_ms: l.guard_until_ms,
            guard_waiting: l.guard_waiting,
            guard_remaining_ms: l.guard_remaining_ms,
            lost: l.lost,
            renewals: l.renewals,
            failures: l.failures,
            last_error: l.last_error,
        }
    }
}

#[pymethods]
impl PyLeaseHealth {
    /// Every field as a dict.
    pub(crate) fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        d.set_item("kind", self.kind)?;
        d.set_item("store", &self.store)?;
        d.set_item("slot", self.slot)?;
        d.set_item("high_water_ms", self.high_water_ms)?;
        d.set_item("guard_until_ms", self.guard_until_ms)?;
        d.set_item("guard_waiting", self.guard_waiting)?;
        d.set_item("guard_remaining_ms", self.guard_remaining_ms)?;
        d.set_item("lost", self.lost)?;
        d.set_item("renewals", self.renewals)?;
        d.set_item("failures", self.failures)?;
        d.set_item("last_error", &self.last_error)?;
        Ok(d)
    }

    fn __repr__(&self) -> String {
        format!(
            "LeaseHealth(kind='{}', slot={}, high_water_ms={}, guard_waiting={}, lost={})",
            self.kind,
            self.slot,
            self.high_water_ms,
            if self.guard_waiting { "True" } else { "False" },
            if self.lost { "True" } else { "False" },
        )
    }
}
