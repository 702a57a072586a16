//! Node-id sources: a generator whose node id comes from an environment variable, a hostname's
//! ordinal, an IPv4 address, or a file, etcd or ZooKeeper lease. Every rule and default is the
//! core's; this module only turns C strings and option structs into a `NodeSource`.

use crate::boundary::{arg, c_str, c_utf8, c_utf8_opt, write_out};
use crate::clock::polyflake_clock;
use crate::error::polyflake_result;
use crate::generator::{new_generator, polyflake_config, polyflake_generator};
use polyflake_core::{
    EtcdLeaseOptions, FileLeaseOptions, LeaseCommon, NodeSource, RemoteStore, StoreCredentials,
    ZooKeeperLeaseOptions,
};
use std::ffi::{c_char, OsStr};
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;
use std::ptr::null;

/// The `slots` value of the lease options meaning every node id of the layout (the default).
pub const POLYFLAKE_ALL_SLOTS: u32 = u32::MAX;

/// The settings every lease kind shares (the `common` of the file, etcd and ZooKeeper options).
/// Every number is judged by the core as written.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct polyflake_lease_common {
    /// How many slots to use, 1 to 2^node_bits; POLYFLAKE_ALL_SLOTS (the default): every node id.
    pub slots: u32,
    /// A stable identity, NUL-terminated UTF-8: the slot it held before is tried first. NULL
    /// (the default) means this host's name.
    pub identity: *const c_char,
    /// How far ahead of the clock the high-water mark R is kept, in ms (10 to 86,400,000;
    /// default 5,000): the longest a successor of a crashed holder waits.
    pub reserve_ms: u64,
    /// A free slot whose restart guard is longer than this (ms; default 60,000) is taken only
    /// when no other slot is free, and health then says why (`lease_guard_note`).
    pub max_guard_wait_ms: u64,
    /// Heal a lost lease (default false): take a new slot in the background, behind its
    /// restart guard, and go on issuing from it (the node id changes; the counters go on).
    /// After a store rollback, only once the clock has passed the lost slot's R.
    pub heal: bool,
}

/// Options of a file lease (`polyflake_generator_new_file_lease`). Fill it with
/// `polyflake_file_lease_options_init` (the core's defaults), set `dir`, change what you need.
/// The strings are only read during the call.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct polyflake_file_lease_options {
    /// The lease directory, a NUL-terminated path (created if missing), shared by every process
    /// that shares node ids, on a local file system. Required.
    pub dir: *const c_char,
    /// Slots, identity, reserve and guard wait.
    pub common: polyflake_lease_common,
}

/// TLS and authentication of a remote lease store (the `store.credentials` of the etcd and
/// ZooKeeper options), NUL-terminated strings. A NULL field (the default) is read from the
/// store's environment variable, POLYFLAKE_ETCD_<FIELD> or POLYFLAKE_ZOOKEEPER_<FIELD> (such as
/// POLYFLAKE_ETCD_CA_FILE), when that is set; else it is not used.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct polyflake_store_credentials {
    /// A PEM file of the CA certificate(s) the servers' certificates must chain to (turns TLS on).
    pub ca_file: *const c_char,
    /// A PEM file of this client's certificate (with `key_file`), for servers that require one.
    pub cert_file: *const c_char,
    /// A PEM file of the private key of `cert_file`.
    pub key_file: *const c_char,
    /// The user to authenticate as, UTF-8 (etcd authentication; ZooKeeper `digest`, and the
    /// znodes polyflake creates are then writable by this user only).
    pub username: *const c_char,
    /// The password of `username`, UTF-8. Prefer the environment variable (or a file you read)
    /// to a literal in code.
    pub password: *const c_char,
}

/// Where a remote store (etcd or ZooKeeper) keeps a lease's records and how it is reached (the
/// `store` of their options).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct polyflake_remote_store {
    /// The key or znode prefix, NUL-terminated UTF-8 (for ZooKeeper an absolute path); NULL (the
    /// default) means the core's "/polyflake". One prefix per ID space (epoch and layout).
    pub prefix: *const c_char,
    /// The timeout of connecting and of each request, in ms (1 to 600,000; default 2,000).
    pub connect_timeout_ms: u64,
    /// TLS and authentication (default: all NULL, the environment's).
    pub credentials: polyflake_store_credentials,
}

/// Options of an etcd lease (`polyflake_generator_new_etcd`). Fill it with
/// `polyflake_etcd_options_init` (the core's defaults), set the endpoints, change what you need.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct polyflake_etcd_options {
    /// The cluster's client URLs (NUL-terminated UTF-8, such as "http://127.0.0.1:2379"): an
    /// array of `endpoint_count` strings. NULL (with a nonzero count) or a NULL entry:
    /// POLYFLAKE_RESULT_NULL_PARAMETER.
    pub endpoints: *const *const c_char,
    /// How many strings `endpoints` holds (at least 1).
    pub endpoint_count: usize,
    /// The etcd lease's time to live in seconds (1 to 3600; default 10).
    pub ttl_s: i64,
    /// Prefix, connect timeout and credentials.
    pub store: polyflake_remote_store,
    /// Slots, identity, reserve and guard wait.
    pub common: polyflake_lease_common,
}

/// Options of a ZooKeeper lease (`polyflake_generator_new_zookeeper`). Fill it with
/// `polyflake_zookeeper_options_init` (the core's defaults), set `ensemble`, change what you
/// need.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct polyflake_zookeeper_options {
    /// The ensemble as ZooKeeper's connect string, NUL-terminated UTF-8: `"host:port"` or
    /// `"host:port,host:port,..."` (spaces around commas ignored). Required (no server in it:
    /// POLYFLAKE_RESULT_INVALID_NODE_SOURCE).
    pub ensemble: *const c_char,
    /// The session timeout asked of the ensemble, in ms (default 10,000): the lease's time to
    /// live. The ensemble bounds it (by default 2 to 20 ticks of its tickTime).
    pub session_timeout_ms: u64,
    /// Prefix (an absolute path), connect timeout and credentials.
    pub store: polyflake_remote_store,
    /// Slots, identity, reserve and guard wait.
    pub common: polyflake_lease_common,
}

/// A required path; a path is bytes on Unix: taken as given, UTF-8 or not.
fn path(p: *const c_char) -> Result<PathBuf, polyflake_result> {
    Ok(OsStr::from_bytes(c_str(p)?.to_bytes()).into())
}

/// An optional path (NULL: None).
fn path_opt(p: *const c_char) -> Result<Option<PathBuf>, polyflake_result> {
    (!p.is_null()).then(|| path(p)).transpose()
}

/// The C form of the core's `common` defaults (the identity NULL: the hostname).
fn lease_common_defaults(d: &LeaseCommon) -> polyflake_lease_common {
    polyflake_lease_common {
        slots: d.slots.unwrap_or(POLYFLAKE_ALL_SLOTS),
        identity: null(),
        reserve_ms: d.reserve_ms,
        max_guard_wait_ms: d.max_guard_wait_ms,
        heal: d.heal,
    }
}

/// The core's `common` from the C one, numbers as written (a zero stays a zero, for the core to
/// refuse).
fn lease_common(c: &polyflake_lease_common) -> Result<LeaseCommon, polyflake_result> {
    Ok(LeaseCommon {
        slots: (c.slots != POLYFLAKE_ALL_SLOTS).then_some(c.slots),
        identity: c_utf8_opt(c.identity, "the lease identity")?,
        reserve_ms: c.reserve_ms,
        max_guard_wait_ms: c.max_guard_wait_ms,
        heal: c.heal,
    })
}

/// The C form of a remote store's defaults: the prefix NULL (the core's), no credentials (the
/// core reads its environment variables).
fn remote_store_defaults(d: &RemoteStore) -> polyflake_remote_store {
    polyflake_remote_store {
        prefix: null(),
        connect_timeout_ms: d.connect_timeout_ms,
        credentials: polyflake_store_credentials {
            ca_file: null(),
            cert_file: null(),
            key_file: null(),
            username: null(),
            password: null(),
        },
    }
}

/// The core's remote store from the C one over the store's defaults `d`: a NULL prefix keeps
/// the default (named `prefix_what` in errors); a NULL credential is `None`.
fn remote_store(
    c: &polyflake_remote_store,
    mut d: RemoteStore,
    prefix_what: &'static str,
) -> Result<RemoteStore, polyflake_result> {
    if let Some(prefix) = c_utf8_opt(c.prefix, prefix_what)? {
        d.prefix = prefix;
    }
    let k = &c.credentials;
    Ok(RemoteStore {
        prefix: d.prefix,
        connect_timeout_ms: c.connect_timeout_ms,
        credentials: StoreCredentials {
            ca_file: path_opt(k.ca_file)?,
            cert_file: path_opt(k.cert_file)?,
            key_file: path_opt(k.key_file)?,
            username: c_utf8_opt(k.username, "the user name")?,
            password: c_utf8_opt(k.password, "the password")?,
        },
    })
}

/// Fill `*out_options` with the core's defaults: `dir` NULL (set it), POLYFLAKE_ALL_SLOTS, the
/// hostname as identity (NULL), reserve 5,000 ms, max_guard_wait_ms 60,000.
#[no_mangle]
pub extern "C" fn polyflake_file_lease_options_init(
    out_options: *mut polyflake_file_lease_options,
) -> polyflake_result {
    write_out(out_options, || {
        let d = FileLeaseOptions::new("");
        Ok(polyflake_file_lease_options {
            dir: null(),
            common: lease_common_defaults(&d.common),
        })
    })
}

/// Fill `*out_options` with the core's defaults: no endpoints (set them), TTL 10 s, store prefix
/// NULL ("/polyflake"), timeout 2,000 ms, credentials NULL, POLYFLAKE_ALL_SLOTS, the hostname as
/// identity, reserve 5,000 ms, max_guard_wait_ms 60,000.
#[no_mangle]
pub extern "C" fn polyflake_etcd_options_init(
    out_options: *mut polyflake_etcd_options,
) -> polyflake_result {
    write_out(out_options, || {
        let d = EtcdLeaseOptions::new(Vec::new());
        Ok(polyflake_etcd_options {
            endpoints: null(),
            endpoint_count: 0,
            ttl_s: d.ttl_s,
            store: remote_store_defaults(&d.store),
            common: lease_common_defaults(&d.common),
        })
    })
}

/// Fill `*out_options` with the core's defaults: `ensemble` NULL (set it), session timeout
/// 10,000 ms, store prefix NULL ("/polyflake"), timeout 2,000 ms, credentials NULL,
/// POLYFLAKE_ALL_SLOTS, the hostname as identity, reserve 5,000 ms, max_guard_wait_ms 60,000.
#[no_mangle]
pub extern "C" fn polyflake_zookeeper_options_init(
    out_options: *mut polyflake_zookeeper_options,
) -> polyflake_result {
    write_out(out_options, || {
        let d = ZooKeeperLeaseOptions::new(Vec::new());
        Ok(polyflake_zookeeper_options {
            ensemble: null(),
            session_timeout_ms: d.session_timeout_ms,
            store: remote_store_defaults(&d.store),
            common: lease_common_defaults(&d.common),
        })
    })
}

fn file_source(o: &polyflake_file_lease_options) -> Result<NodeSource, polyflake_result> {
    Ok(NodeSource::FileLease(FileLeaseOptions {
        dir: path(o.dir)?,
        common: lease_common(&o.common)?,
    }))
}

fn etcd_source(o: &polyflake_etcd_options) -> Result<NodeSource, polyflake_result> {
    let endpoints = match o.endpoint_count {
        0 => &[][..],
        // SAFETY: non-NULL (checked), and the caller promises `endpoint_count` pointers there.
        n => unsafe { std::slice::from_raw_parts(arg(o.endpoints)?, n) },
    };
    let endpoints = endpoints.iter().map(|p| c_utf8(*p, "an etcd endpoint"));
    let d = EtcdLeaseOptions::new(endpoints.collect::<Result<_, _>>()?);
    Ok(NodeSource::Etcd(EtcdLeaseOptions {
        ttl_s: o.ttl_s,
        store: remote_store(&o.store, d.store, "the etcd prefix")?,
        common: lease_common(&o.common)?,
        ..d
    }))
}

fn zookeeper_source(o: &polyflake_zookeeper_options) -> Result<NodeSource, polyflake_result> {
    let ensemble = c_utf8(o.ensemble, "the ZooKeeper ensemble")?;
    let d = ZooKeeperLeaseOptions::from_ensemble(&ensemble);
    Ok(NodeSource::ZooKeeper(ZooKeeperLeaseOptions {
        session_timeout_ms: o.session_timeout_ms,
        store: remote_store(&o.store, d.store, "the ZooKeeper prefix")?,
        common: lease_common(&o.common)?,
        ..d
    }))
}

/// As `polyflake_generator_new`, the node id being a slot leased from a directory of slot files
/// (one host, no server; `config->node_id` is ignored; a test `clock` drives R and the guard).
///
/// The slot this identity held before is tried first, then free slots whose guard has passed.
/// A background thread keeps a high-water mark R in the slot file ahead of the clock; a new
/// holder issues nothing until its clock passes the R it found (a slot without a complete
/// record is guarded for a full reserve): `polyflake_wait_ready` waits that out (meanwhile:
/// POLYFLAKE_RESULT_LEASE_NOT_READY). A slot file deleted or replaced loses the lease
/// (_LEASE_LOST; with `common.heal`, a new slot is taken in the background). Closing or freeing the generator frees the slot. More errors:
/// _INVALID_NODE_SOURCE (options out of range, a bad identity), _NO_FREE_SLOT,
/// _ID_SPACE_MISMATCH (another epoch or layout), _LEASE_STORE (the directory cannot be written).
#[no_mangle]
pub extern "C" fn polyflake_generator_new_file_lease(
    config: *const polyflake_config,
    options: *const polyflake_file_lease_options,
    clock: *const polyflake_clock,
    out_generator: *mut *mut polyflake_generator,
) -> polyflake_result {
    new_generator(config, clock, out_generator, |_| file_source(arg(options)?))
}

/// As `polyflake_generator_new_file_lease`, the slot leased from an etcd v3 cluster: a key
/// attached to an etcd lease kept alive in the background, R a key moved ahead by a transaction
/// that proves the slot is still owned. etcd unreachable: IDs continue up to R, then
/// POLYFLAKE_RESULT_LEASE_EXPIRED until it is back; the etcd lease lost: _LEASE_LOST for good
/// (with `common.heal`: until a new slot is taken).
/// Blocks while it connects (about `connect_timeout_ms` per request). _LEASE_STORE: etcd
/// unreachable or failing.
#[no_mangle]
pub extern "C" fn polyflake_generator_new_etcd(
    config: *const polyflake_config,
    options: *const polyflake_etcd_options,
    clock: *const polyflake_clock,
    out_generator: *mut *mut polyflake_generator,
) -> polyflake_result {
    new_generator(config, clock, out_generator, |_| etcd_source(arg(options)?))
}

/// As `polyflake_generator_new_etcd`, the slot leased from a ZooKeeper ensemble (3.5+): an
/// ephemeral znode `{prefix}/slot/NNNN` that lives as long as this process's session, R a
/// persistent znode `{prefix}/hwm/NNNN` written by a multi-op that checks both. The session
/// expired or the slot znode deleted: _LEASE_LOST for good (with `common.heal`: until a new
/// slot is taken). _LEASE_STORE names the cause
/// (unreachable, credentials or TLS refused); _INVALID_NODE_SOURCE: an empty ensemble, a prefix
/// that is not an absolute path, options out of range.
#[no_mangle]
pub extern "C" fn polyflake_generator_new_zookeeper(
    config: *const polyflake_config,
    options: *const polyflake_zookeeper_options,
    clock: *const polyflake_clock,
    out_generator: *mut *mut polyflake_generator,
) -> polyflake_result {
    new_generator(config, clock, out_generator, |_| {
        zookeeper_source(arg(options)?)
    })
}

/// As `polyflake_generator_new`, the node id being the decimal integer in the environment
/// variable `var` (NUL-terminated UTF-8; `config->node_id` is ignored). More errors:
/// POLYFLAKE_RESULT_INVALID_NODE_SOURCE (unset, not a decimal number).
#[no_mangle]
pub extern "C" fn polyflake_generator_new_from_env(
    config: *const polyflake_config,
    var: *const c_char,
    clock: *const polyflake_clock,
    out_generator: *mut *mut polyflake_generator,
) -> polyflake_result {
    new_generator(config, clock, out_generator, |_| {
        let var = c_utf8(var, "the environment variable's name")?;
        Ok(NodeSource::Env { var })
    })
}

/// As `polyflake_generator_new_from_env`, the node id being the ordinal at the end of a
/// StatefulSet-style `hostname` (`ids-7.ids.default.svc` gives 7; NULL: this host's name).
#[no_mangle]
pub extern "C" fn polyflake_generator_new_from_hostname(
    config: *const polyflake_config,
    hostname: *const c_char,
    clock: *const polyflake_clock,
    out_generator: *mut *mut polyflake_generator,
) -> polyflake_result {
    new_generator(config, clock, out_generator, |_| {
        let hostname = c_utf8_opt(hostname, "the hostname")?;
        Ok(NodeSource::Hostname { hostname })
    })
}

/// As `polyflake_generator_new_from_env`, the node id being the low `32 - prefix_len` bits of
/// the IPv4 address `addr` ("10.1.7.9"). POLYFLAKE_RESULT_INVALID_NODE_SOURCE unless `addr` is
/// an address, `prefix_len` 0 to 32 (never wrapped) and the host bits fit the node field (a /22
/// or narrower for 10 node bits): every generator of the fleet lives in the one stated subnet.
#[no_mangle]
pub extern "C" fn polyflake_generator_new_from_ipv4(
    config: *const polyflake_config,
    addr: *const c_char,
    prefix_len: i64,
    clock: *const polyflake_clock,
    out_generator: *mut *mut polyflake_generator,
) -> polyflake_result {
    new_generator(config, clock, out_generator, |_| {
        // Bytes that are not UTF-8 reach the core's parser, which refuses them.
        let text = c_str(addr)?.to_string_lossy();
        Ok(NodeSource::ipv4(&text, prefix_len.into())?)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn init_gives_the_core_defaults_and_they_round_trip() {
        let mut o = crate::boundary::tests::init(polyflake_etcd_options_init);
        let ep = c"http://127.0.0.1:1";
        let list = [ep.as_ptr()];
        o.endpoints = list.as_ptr();
        o.endpoint_count = 1;
        let NodeSource::Etcd(e) = etcd_source(&o).unwrap() else {
            panic!("not etcd")
        };
        assert_eq!(
            e,
            EtcdLeaseOptions::new(vec!["http://127.0.0.1:1".to_string()])
        );
        let mut f = crate::boundary::tests::init(polyflake_file_lease_options_init);
        f.dir = c"/tmp/x".as_ptr();
        let NodeSource::FileLease(fl) = file_source(&f).unwrap() else {
            panic!("not a file lease")
        };
        assert_eq!(fl, FileLeaseOptions::new("/tmp/x"));
        // A zero the caller wrote stays a zero: the core refuses it, never a default.
        f.common.reserve_ms = 0;
        f.common.slots = 0;
        let NodeSource::FileLease(fl) = file_source(&f).unwrap() else {
            panic!("not a file lease")
        };
        assert_eq!((fl.common.reserve_ms, fl.common.slots), (0, Some(0)));
    }

    #[test]
    fn zookeeper_init_gives_the_core_defaults_and_credentials_pass_through() {
        let mut z = crate::boundary::tests::init(polyflake_zookeeper_options_init);
        z.ensemble = c"127.0.0.1:1, 127.0.0.1:2".as_ptr();
        let NodeSource::ZooKeeper(o) = zookeeper_source(&z).unwrap() else {
            panic!("not ZooKeeper")
        };
        assert_eq!(
            o,
            ZooKeeperLeaseOptions::from_ensemble("127.0.0.1:1,127.0.0.1:2")
        );
        z.store.prefix = c"ids".as_ptr();
        let zc = &mut z.store.credentials;
        zc.ca_file = c"/ca.pem".as_ptr();
        zc.username = c"u".as_ptr();
        zc.password = c"p".as_ptr();
        let NodeSource::ZooKeeper(o) = zookeeper_source(&z).unwrap() else {
            panic!("not ZooKeeper")
        };
        assert_eq!(o.store.prefix, "ids"); // refused by the core, not rewritten here
        let c = o.store.credentials;
        assert_eq!(c.ca_file, Some(PathBuf::from("/ca.pem")));
        assert_eq!(
            (c.username.as_deref(), c.password.as_deref()),
            (Some("u"), Some("p"))
        );
        assert_eq!((c.cert_file, c.key_file), (None, None));
        z.ensemble = std::ptr::null();
        assert_eq!(
            zookeeper_source(&z).unwrap_err(),
            polyflake_result::NullParameter
        );
        let mut e = crate::boundary::tests::init(polyflake_etcd_options_init);
        e.store.credentials.key_file = c"/k.pem".as_ptr();
        e.store.credentials.cert_file = c"/c.pem".as_ptr();
        let NodeSource::Etcd(o) = etcd_source(&e).unwrap() else {
            panic!("not etcd")
        };
        assert_eq!(o.store.credentials.key_file, Some(PathBuf::from("/k.pem")));
        assert_eq!(o.store.credentials.cert_file, Some(PathBuf::from("/c.pem")));
    }
}
