//! Where a generator's node id comes from: Python arguments to the core's `NodeSource` (file
//! lease, etcd lease, environment variable, hostname ordinal, IPv4 address), and the keyword
//! settings every constructor takes. Only type conversion lives here: every range and every rule
//! (slot counts, reserves, TTLs, prefix lengths, identities) is the core's.

use crate::args::{i64_arg, int_arg, opt_str_arg, str_arg, type_name, unsigned_arg};
use crate::errors::to_py_err;
use polyflake::{Error, EtcdLeaseOptions, FileLeaseOptions, NodeSource};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyString};
use std::path::PathBuf;

/// The keyword settings of a constructor (`**settings`), taken out by name; one left over is a
/// TypeError, as for any unexpected keyword argument. Absent settings keep the core's defaults.
pub(crate) struct Settings<'py>(pub(crate) Option<Bound<'py, PyDict>>);

impl<'py> Settings<'py> {
    /// The setting `key`, if given.
    pub(crate) fn take(&self, key: &str) -> PyResult<Option<Bound<'py, PyAny>>> {
        let Some(d) = &self.0 else { return Ok(None) };
        let value = d.get_item(key)?;
        if value.is_some() {
            d.del_item(key)?;
        }
        Ok(value)
    }

    /// Refuse what no `take` asked for.
    pub(crate) fn finish(&self, what: &str) -> PyResult<()> {
        match self.0.as_ref().and_then(|d| d.keys().iter().next()) {
            Some(key) => Err(PyTypeError::new_err(format!(
                "{what}() got an unexpected keyword argument {}",
                key.repr()?
            ))),
            None => Ok(()),
        }
    }
}

fn bad_source(name: &'static str, reason: String) -> Error {
    Error::InvalidNodeSource {
        reason: format!("{name} = {reason}"),
    }
}

/// The options both lease kinds share, from the settings (the same field names in both).
macro_rules! lease_settings {
    ($o:ident, $s:ident) => {
        if let Some(v) = $s.take("slots")? {
            $o.slots = (!v.is_none())
                .then(|| unsigned_arg(&v, "slots", bad_source))
                .transpose()?;
        }
        $o.identity = opt_str_arg($s.take("identity")?.as_ref(), "identity")?;
        let ms = [
            ("reserve_ms", &mut $o.reserve_ms),
            ("max_guard_wait_ms", &mut $o.max_guard_wait_ms),
        ];
        for (key, field) in ms {
            if let Some(v) = $s.take(key)? {
                *field = unsigned_arg(&v, key, bad_source)?;
            }
        }
    };
}

/// `from_file_lease(dir, ...)`: `dir` is a `str` or an `os.PathLike` (what `open()` takes).
pub(crate) fn file_lease(dir: &Bound<'_, PyAny>, s: &Settings<'_>) -> PyResult<NodeSource> {
    let not_a_path = || {
        PyTypeError::new_err(format!(
            "dir must be a str or an os.PathLike, not {}",
            type_name(dir)
        ))
    };
    if dir.is_instance_of::<PyBytes>() {
        return Err(not_a_path());
    }
    let mut o = FileLeaseOptions::new(dir.extract::<PathBuf>().map_err(|_| not_a_path())?);
    lease_settings!(o, s);
    Ok(NodeSource::FileLease(o))
}

/// `from_etcd(endpoints, ...)`: `endpoints` is one URL (`str`) or an iterable of them.
pub(crate) fn etcd_lease(endpoints: &Bound<'_, PyAny>, s: &Settings<'_>) -> PyResult<NodeSource> {
    let urls = if endpoints.is_instance_of::<PyString>() {
        vec![str_arg(endpoints, "endpoints")?]
    } else {
        let not_urls = |_| {
            PyTypeError::new_err(format!(
                "endpoints must be a str URL or an iterable of str URLs, not {}",
                type_name(endpoints)
            ))
        };
        let items = endpoints.try_iter().map_err(not_urls)?;
        items
            .map(|item| str_arg(&item?, "each endpoint"))
            .collect::<PyResult<_>>()?
    };
    let mut o = EtcdLeaseOptions::new(urls);
    if let Some(v) = s.take("prefix")? {
        o.prefix = str_arg(&v, "prefix")?;
    }
    if let Some(v) = s.take("ttl_s")? {
        o.ttl_s = i64_arg(&v, "ttl_s")?;
    }
    if let Some(v) = s.take("connect_timeout_ms")? {
        o.connect_timeout_ms = unsigned_arg(&v, "connect_timeout_ms", bad_source)?;
    }
    lease_settings!(o, s);
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

/// `from_ipv4(addr, prefix_len)`: `addr` is a dotted-quad `str` or an `ipaddress.IPv4Address`;
/// the core checks both (the same error and message in every binding).
pub(crate) fn ipv4(addr: &Bound<'_, PyAny>, prefix_len: &Bound<'_, PyAny>) -> PyResult<NodeSource> {
    let is_ipv4_object = addr
        .get_type()
        .fully_qualified_name()
        .is_ok_and(|n| n.to_cow().is_ok_and(|n| n == "ipaddress.IPv4Address"));
    let text = if is_ipv4_object {
        addr.str()?.to_cow()?.into_owned()
    } else {
        str_arg(addr, "addr (a str or an ipaddress.IPv4Address)")?
    };
    NodeSource::ipv4(&text, int_arg(prefix_len, "prefix_len")?).map_err(|e| to_py_err(addr.py(), e))
}
