//! Where a generator's node id comes from: Python arguments and the lease's keyword settings to
//! the core's `NodeSource`. Type conversion only: every range and rule is the core's.

use crate::args::{bool_arg, i64_arg, int_arg, opt_str_arg, str_arg, unsigned_arg, wrong_type};
use crate::error::to_py_err;
use crate::settings::Settings;
use polyflake::LEASE_CREDENTIALS;
use polyflake::{
    Error, EtcdLeaseOptions, FileLeaseOptions, LeaseCommon, NodeSource, RemoteStore,
    ZooKeeperLeaseOptions,
};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyString};
use std::path::PathBuf;

/// An unsigned lease setting (out of the Rust type: `InvalidNodeSource`).
fn unsigned<T: TryFrom<i128>>(v: &Bound<'_, PyAny>, key: &'static str) -> PyResult<T> {
    let bad = |name, reason| Error::InvalidNodeSource {
        reason: format!("{name} = {reason}"),
    };
    unsigned_arg(v, key, bad)
}

/// The settings every lease kind takes: `slots` (None: every slot), `identity` (None: the
/// hostname), `reserve_ms`, `max_guard_wait_ms`, `heal` (a lost lease takes a new slot by
/// itself); absent ones at the core's defaults.
fn lease_common(s: &Settings<'_>) -> PyResult<LeaseCommon> {
    let mut c = LeaseCommon::default();
    let slots = |v: &Bound<'_, PyAny>, k| (!v.is_none()).then(|| unsigned(v, k)).transpose();
    s.set("slots", &mut c.slots, slots)?;
    c.identity = opt_str_arg(s.take("identity")?.as_ref(), "identity")?;
    s.set("reserve_ms", &mut c.reserve_ms, unsigned)?;
    s.set("max_guard_wait_ms", &mut c.max_guard_wait_ms, unsigned)?;
    s.set("heal", &mut c.heal, |v, k| bool_arg(v, k))?;
    Ok(c)
}

/// What both remote stores take over their defaults `store`: `prefix`, `connect_timeout_ms`
/// and the TLS and authentication settings (None or absent: the core reads its environment
/// variable).
fn remote_store(s: &Settings<'_>, mut store: RemoteStore) -> PyResult<RemoteStore> {
    s.set("prefix", &mut store.prefix, |v, k| str_arg(v, k))?;
    s.set(
        "connect_timeout_ms",
        &mut store.connect_timeout_ms,
        unsigned,
    )?;
    for key in LEASE_CREDENTIALS {
        if let Some(v) = s.take(key)?.filter(|v| !v.is_none()) {
            let text = match key.ends_with("_file") {
                true => path_arg(&v, key)?.into_os_string(),
                false => str_arg(&v, key)?.into(),
            };
            let set = store.credentials.set(key, Some(text));
            set.map_err(|e| to_py_err(v.py(), e))?;
        }
    }
    Ok(store)
}

/// A file system path: a `str` or an `os.PathLike` (what `open()` takes; `bytes` is refused).
pub(crate) fn path_arg(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<PathBuf> {
    match obj.extract::<PathBuf>() {
        Ok(path) if !obj.is_instance_of::<PyBytes>() => Ok(path),
        _ => Err(wrong_type(obj, what, "a str or an os.PathLike")),
    }
}

/// A `str`, or an iterable of `str` (not a `bytes`), as a list; `want` describes it.
fn str_list(obj: &Bound<'_, PyAny>, what: &str, want: &str) -> PyResult<Vec<String>> {
    let wrong = || wrong_type(obj, what, want);
    if obj.is_instance_of::<PyString>() {
        return Ok(vec![str_arg(obj, what)?]);
    }
    if obj.is_instance_of::<PyBytes>() {
        return Err(wrong());
    }
    let items = obj.try_iter().map_err(|_| wrong())?;
    items
        .map(|item| str_arg(&item?, &format!("each item of {what}")))
        .collect()
}

/// `from_file_lease(dir, ...)`.
pub(crate) fn file_lease(dir: &Bound<'_, PyAny>, s: &Settings<'_>) -> PyResult<NodeSource> {
    Ok(NodeSource::FileLease(FileLeaseOptions {
        dir: path_arg(dir, "dir")?,
        common: lease_common(s)?,
    }))
}

/// `from_etcd(endpoints, ...)`: one URL or an iterable of them.
pub(crate) fn etcd_lease(endpoints: &Bound<'_, PyAny>, s: &Settings<'_>) -> PyResult<NodeSource> {
    let urls = str_list(
        endpoints,
        "endpoints",
        "a str URL or an iterable of str URLs",
    )?;
    let mut o = EtcdLeaseOptions::new(urls);
    s.set("ttl_s", &mut o.ttl_s, |v, k| i64_arg(v, k))?;
    o.store = remote_store(s, o.store)?;
    o.common = lease_common(s)?;
    Ok(NodeSource::Etcd(o))
}

/// `from_zookeeper(ensemble, ...)`: a connect string (split by the core) or an iterable.
pub(crate) fn zookeeper_lease(
    ensemble: &Bound<'_, PyAny>,
    s: &Settings<'_>,
) -> PyResult<NodeSource> {
    let mut o = if ensemble.is_instance_of::<PyString>() {
        ZooKeeperLeaseOptions::from_ensemble(&str_arg(ensemble, "ensemble")?)
    } else {
        let want = "a \"host:port,host:port\" str or an iterable of \"host:port\" strs";
        ZooKeeperLeaseOptions::new(str_list(ensemble, "ensemble", want)?)
    };
    s.set("session_timeout_ms", &mut o.session_timeout_ms, unsigned)?;
    o.store = remote_store(s, o.store)?;
    o.common = lease_common(s)?;
    Ok(NodeSource::ZooKeeper(o))
}

/// `from_ipv4(addr, prefix_len)`: `addr` is a `str` or an `ipaddress.IPv4Address`.
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
