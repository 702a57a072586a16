//! Node-id sources: a generator whose node id comes from an environment variable, a hostname's
//! ordinal, an IPv4 address, or a file, etcd or ZooKeeper lease. Every rule and default is the
//! core's; this module only turns C strings and option structs into a `NodeSource`.

use crate::boundary::{arg, c_str, c_utf8, c_utf8_opt, write_out};
use crate::clock::polyflake_clock;
use crate::error::polyflake_result;
use crate::generator::{new_generator, polyflake_config, polyflake_generator};
use polyflake_core::{EtcdLeaseOptions, FileLeaseOptions, NodeSource, ZooKeeperLeaseOptions};
use std::ffi::{c_char, OsStr};
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;
use std::ptr::null;

/// The `slots` value of the lease options meaning every node id of the layout (the default).
pub const POLYFLAKE_ALL_SLOTS: u32 = u32::MAX;

/// Options of a file lease (`polyflake_generator_new_file_lease`). Fill it with
/// `polyflake_file_lease_options_init` (the core's defaults), set `dir`, change what you need.
/// The strings are only read during the call. Every number is judged by the core as written.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct polyflake_file_lease_options {
    /// The lease directory, a NUL-terminated path (created if missing), shared by every process
    /// that shares node ids, on a local file system. Required.
    pub dir: *const c_char,
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
}

/// TLS and authentication of a remote lease store (the `credentials` of the etcd and ZooKeeper
/// options), NUL-terminated strings. A NULL field (the default) is read from the store's
/// environment variable, POLYFLAKE_ETCD_<FIELD> or POLYFLAKE_ZOOKEEPER_<FIELD> (such as
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

/// Options of an etcd lease (`polyflake_generator_new_etcd`). Fill it with
/// `polyflake_etcd_options_init` (the core's defaults), set the endpoints, change what you need;
/// the rest as `polyflake_file_lease_options`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct polyflake_etcd_options {
    /// The cluster's client URLs (NUL-terminated UTF-8, such as "http://127.0.0.1:2379"): an
    /// array of `endpoint_count` strings. NULL (with a nonzero count) or a NULL entry:
    /// POLYFLAKE_RESULT_NULL_PARAMETER.
    pub endpoints: *const *const c_char,
    /// How many strings `endpoints` holds (at least 1).
    pub endpoint_count: usize,
    /// The key prefix, NUL-terminated UTF-8; NULL (the default) means the core's "/polyflake".
    /// One prefix per ID space (epoch and layout).
    pub prefix: *const c_char,
    /// The etcd lease's time to live in seconds (1 to 3600; default 10).
    pub ttl_s: i64,
    /// How far ahead of the clock R is kept, in ms (default 5,000).
    pub reserve_ms: u64,
    /// As in `polyflake_file_lease_options`.
    pub slots: u32,
    /// As in `polyflake_file_lease_options`.
    pub identity: *const c_char,
    /// The timeout of connecting and of each request, in ms (1 to 600,000; default 2,000).
    pub connect_timeout_ms: u64,
    /// As in `polyflake_file_lease_options` (default 60,000).
    pub max_guard_wait_ms: u64,
    /// TLS and authentication (default: all NULL, the environment's).
    pub credentials: polyflake_store_credentials,
}

/// Options of a ZooKeeper lease (`polyflake_generator_new_zookeeper`). Fill it with
/// `polyflake_zookeeper_options_init` (the core's defaults), set `ensemble`, change what you
/// need; the rest as `polyflake_etcd_options`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct polyflake_zookeeper_options {
    /// The ensemble as ZooKeeper's connect string, NUL-terminated UTF-8: `"host:port"` or
    /// `"host:port,host:port,..."` (spaces around commas ignored). Required (no server in it:
    /// POLYFLAKE_RESULT_INVALID_NODE_SOURCE).
    pub ensemble: *const c_char,
    /// The znode prefix, an absolute path (NUL-terminated UTF-8); NULL (the default) means the
    /// core's "/polyflake". One prefix per ID space (epoch and layout).
    pub prefix: *const c_char,
    /// The session timeout asked of the ensemble, in ms (default 10,000): the lease's time to
    /// live. The ensemble bounds it (by default 2 to 20 ticks of its tickTime).
    pub session_timeout_ms: u64,
    /// How far ahead of the clock R is kept, in ms (default 5,000).
    pub reserve_ms: u64,
    /// As in `polyflake_file_lease_options`.
    pub slots: u32,
    /// As in `polyflake_file_lease_options`.
    pub identity: *const c_char,
    /// The timeout of connecting and of each request, in ms (default 2,000).
    pub connect_timeout_ms: u64,
    /// As in `polyflake_file_lease_options` (default 60,000).
    pub max_guard_wait_ms: u64,
    /// TLS and authentication (default: all NULL, the environment's).
    pub credentials: polyflake_store_credentials,
}

/// No credentials given: the core reads its environment variables.
const NO_CREDENTIALS: polyflake_store_credentials = polyflake_store_credentials {
    ca_file: null(),
    cert_file: null(),
    key_file: null(),
    username: null(),
    password: null(),
};

/// A required path; a path is bytes on Unix: taken as given, UTF-8 or not.
fn path(p: *const c_char) -> Result<PathBuf, polyflake_result> {
    Ok(OsStr::from_bytes(c_str(p)?.to_bytes()).into())
}

/// An optional path (NULL: None).
fn path_opt(p: *const c_char) -> Result<Option<PathBuf>, polyflake_result> {
    (!p.is_null()).then(|| path(p)).transpose()
}

/// A C options struct `$t` holding the core's defaults `$d`: the fields every lease shares (and
/// with `remote`, those of etcd and ZooKeeper) with its strings NULL, then the named fields.
macro_rules! with_defaults {
    (remote $t:ident, $d:ident = $e:expr, $($f:ident: $v:expr),*) => {
        with_defaults!($t, $d = $e, prefix: null(), connect_timeout_ms: $d.connect_timeout_ms,
            credentials: NO_CREDENTIALS, $($f: $v),*)
    };
    ($t:ident, $d:ident = $e:expr, $($f:ident: $v:expr),*) => {{
        let $d = $e;
        $t { slots: $d.slots.unwrap_or(POLYFLAKE_ALL_SLOTS), identity: null(),
            reserve_ms: $d.reserve_ms, max_guard_wait_ms: $d.max_guard_wait_ms, $($f: $v),* }
    }};
}

/// Copy the fields every lease shares (and with `remote`, those of etcd and ZooKeeper) from the
/// C options `$o` onto the core's options `$core`. A NULL prefix keeps the core's default; a
/// NULL credential is `None` (the core then reads its environment variables).
macro_rules! copy_fields {
    (remote $core:ident, $o:ident, $prefix:literal) => {
        if let Some(prefix) = c_utf8_opt($o.prefix, $prefix)? {
            $core.prefix = prefix;
        }
        $core.connect_timeout_ms = $o.connect_timeout_ms;
        let c = &$o.credentials;
        $core.ca_file = path_opt(c.ca_file)?;
        $core.cert_file = path_opt(c.cert_file)?;
        $core.key_file = path_opt(c.key_file)?;
        $core.username = c_utf8_opt(c.username, "the user name")?;
        $core.password = c_utf8_opt(c.password, "the password")?;
        copy_fields!($core, $o);
    };
    ($core:ident, $o:ident) => {
        $core.slots = ($o.slots != POLYFLAKE_ALL_SLOTS).then_some($o.slots);
        $core.identity = c_utf8_opt($o.identity, "the lease identity")?;
        $core.reserve_ms = $o.reserve_ms;
        $core.max_guard_wait_ms = $o.max_guard_wait_ms;
    };
}

/// Fill `*out_options` with the core's defaults: `dir` NULL (set it), POLYFLAKE_ALL_SLOTS, the
/// hostname as identity (NULL), reserve 5,000 ms, max_guard_wait_ms 60,000.
#[no_mangle]
pub extern "C" fn polyflake_file_lease_options_init(
    out_options: *mut polyflake_file_lease_options,
) -> polyflake_result {
    write_out(out_options, || {
        let o = with_defaults!(polyflake_file_lease_options, d = FileLeaseOptions::new(""),
            dir: null());
        Ok(o)
    })
}

/// Fill `*out_options` with the core's defaults: no endpoints (set them), prefix NULL
/// ("/polyflake"), TTL 10 s, reserve 5,000 ms, POLYFLAKE_ALL_SLOTS, the hostname as identity,
/// timeout 2,000 ms, max_guard_wait_ms 60,000, credentials NULL.
#[no_mangle]
pub extern "C" fn polyflake_etcd_options_init(
    out_options: *mut polyflake_etcd_options,
) -> polyflake_result {
    write_out(out_options, || {
        Ok(
            with_defaults!(remote polyflake_etcd_options, d = EtcdLeaseOptions::new(Vec::new()),
            endpoints: null(), endpoint_count: 0, ttl_s: d.ttl_s),
        )
    })
}

/// Fill `*out_options` with the core's defaults: `ensemble` NULL (set it), prefix NULL
/// ("/polyflake"), session timeout 10,000 ms, reserve 5,000 ms, POLYFLAKE_ALL_SLOTS, the
/// hostname as identity, timeout 2,000 ms, max_guard_wait_ms 60,000, credentials NULL.
#[no_mangle]
pub extern "C" fn polyflake_zookeeper_options_init(
    out_options: *mut polyflake_zookeeper_options,
) -> polyflake_result {
    write_out(out_options, || {
        Ok(with_defaults!(remote polyflake_zookeeper_options,
            d = ZooKeeperLeaseOptions::new(Vec::new()),
            ensemble: null(), session_timeout_ms: d.session_timeout_ms))
    })
}

fn file_source(o: &polyflake_file_lease_options) -> Result<NodeSource, polyflake_result> {
    let mut f = FileLeaseOptions::new(path(o.dir)?);
    copy_fields!(f, o);
    Ok(NodeSource::FileLease(f))
}

fn etcd_source(o: &polyflake_etcd_options) -> Result<NodeSource, polyflake_result> {
    let endpoints = match o.endpoint_count {
        0 => &[][..],
        // SAFETY: non-NULL (checked), and the caller promises `endpoint_count` pointers there.
        n => unsafe { std::slice::from_raw_parts(arg(o.endpoints)?, n) },
    };
    let endpoints = endpoints.iter().map(|p| c_utf8(*p, "an etcd endpoint"));
    let mut e = EtcdLeaseOptions::new(endpoints.collect::<Result<_, _>>()?);
    e.ttl_s = o.ttl_s;
    copy_fields!(remote e, o, "the etcd prefix");
    Ok(NodeSource::Etcd(e))
}

fn zookeeper_source(o: &polyflake_zookeeper_options) -> Result<NodeSource, polyflake_result> {
    let ensemble = c_utf8(o.ensemble, "the ZooKeeper ensemble")?;
    let mut z = ZooKeeperLeaseOptions::from_ensemble(&ensemble);
    z.session_timeout_ms = o.session_timeout_ms;
    copy_fields!(remote z, o, "the ZooKeeper prefix");
    Ok(NodeSource::ZooKeeper(z))
}
/// As `polyflake_generator_new`, the node id being a slot leased from a directory of slot files
/// (one host, no server; `config->node_id` is ignored; a test `clock` drives R and the guard).
///
/// The slot this identity held before is tried first, then free slots whose guard has passed.
/// A background thread keeps a high-water mark R in the slot file ahead of the clock; a new
/// holder issues nothing until its clock passes the R it found (a slot without a complete
/// record is guarded for a full reserve): `polyflake_wait_ready` waits that out (meanwhile:
/// POLYFLAKE_RESULT_LEASE_NOT_READY). A slot file deleted or replaced loses the lease
/// (_LEASE_LOST). Closing or freeing the generator frees the slot. More errors:
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
/// POLYFLAKE_RESULT_LEASE_EXPIRED until it is back; the etcd lease lost: _LEASE_LOST for good.
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
/// expired or the slot znode deleted: _LEASE_LOST for good. _LEASE_STORE names the cause
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
        f.reserve_ms = 0;
        f.slots = 0;
        let NodeSource::FileLease(fl) = file_source(&f).unwrap() else {
            panic!("not a file lease")
        };
        assert_eq!((fl.reserve_ms, fl.slots), (0, Some(0)));
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
        z.prefix = c"ids".as_ptr();
        z.credentials.ca_file = c"/ca.pem".as_ptr();
        z.credentials.username = c"u".as_ptr();
        z.credentials.password = c"p".as_ptr();
        let NodeSource::ZooKeeper(o) = zookeeper_source(&z).unwrap() else {
            panic!("not ZooKeeper")
        };
        assert_eq!(o.prefix, "ids"); // refused by the core, not rewritten here
        assert_eq!(o.ca_file, Some(PathBuf::from("/ca.pem")));
        assert_eq!(
            (o.username.as_deref(), o.password.as_deref()),
            (Some("u"), Some("p"))
        );
        assert_eq!((o.cert_file, o.key_file), (None, None));
        z.ensemble = std::ptr::null();
        assert_eq!(
            zookeeper_source(&z).unwrap_err(),
            polyflake_result::NullParameter
        );
        let mut e = crate::boundary::tests::init(polyflake_etcd_options_init);
        e.credentials.key_file = c"/k.pem".as_ptr();
        e.credentials.cert_file = c"/c.pem".as_ptr();
        let NodeSource::Etcd(o) = etcd_source(&e).unwrap() else {
            panic!("not etcd")
        };
        assert_eq!(o.key_file, Some(PathBuf::from("/k.pem")));
        assert_eq!(o.cert_file, Some(PathBuf::from("/c.pem")));
    }
}
