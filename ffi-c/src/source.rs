//! Node-id sources: a generator whose node id comes from an environment variable, a hostname's
//! ordinal, an IPv4 address, a file lease or an etcd lease. Every rule (ranges, the /22
//! arithmetic, slot counts, the restart guard) is the core's; this module only turns C strings
//! and plain option structs into a `NodeSource` and hands it to `Generator::builder_from`.

use crate::boundary::{arg, boundary, out};
use crate::clock::{polyflake_manual_clock, polyflake_scripted_clock};
use crate::generator::{build_into, builder_from, polyflake_config, polyflake_generator};
use crate::result::polyflake_result;
use polyflake_core::{
    EtcdLeaseOptions, FileLeaseOptions, LeaseKind, NodeSource, NodeSourceKind,
    DEFAULT_ETCD_TIMEOUT_MS, DEFAULT_ETCD_TTL_S, DEFAULT_RESERVE_MS,
};
use std::ffi::{c_char, CStr, OsStr};
use std::net::Ipv4Addr;
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;

/// The high-water-mark reserve both lease kinds use by default, in ms (5,000).
pub const POLYFLAKE_DEFAULT_RESERVE_MS: u64 = 5_000;
const _: () = assert!(POLYFLAKE_DEFAULT_RESERVE_MS == DEFAULT_RESERVE_MS);
/// The default etcd lease TTL in seconds (10).
pub const POLYFLAKE_DEFAULT_ETCD_TTL_S: i64 = 10;
const _: () = assert!(POLYFLAKE_DEFAULT_ETCD_TTL_S == DEFAULT_ETCD_TTL_S);
/// The default etcd connect (and per-request) timeout in ms (2,000).
pub const POLYFLAKE_DEFAULT_ETCD_TIMEOUT_MS: u64 = 2_000;
const _: () = assert!(POLYFLAKE_DEFAULT_ETCD_TIMEOUT_MS == DEFAULT_ETCD_TIMEOUT_MS);

/// Where a generator's node id came from (the `source` of `polyflake_health_snapshot`).
#[repr(u32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum polyflake_node_source {
    /// `polyflake_config.node_id`.
    Static = 0,
    /// An environment variable (`polyflake_generator_new_from_env`).
    Env = 1,
    /// A hostname's ordinal (`polyflake_generator_new_from_hostname`).
    Hostname = 2,
    /// An IPv4 address in a stated subnet (`polyflake_generator_new_from_ipv4`).
    Ipv4 = 3,
    /// A slot of a file lease (`polyflake_generator_new_file_lease`).
    FileLease = 4,
    /// A slot of an etcd lease (`polyflake_generator_new_etcd`).
    Etcd = 5,
    /// A slot of a ZooKeeper lease (the core's `NodeSource::ZooKeeper`).
    ZooKeeper = 6,
}

/// The ONE map from the core's source kinds. Exhaustive: a new core kind breaks the build.
pub(crate) const fn source_of(k: NodeSourceKind) -> polyflake_node_source {
    match k {
        NodeSourceKind::Static => polyflake_node_source::Static,
        NodeSourceKind::Env => polyflake_node_source::Env,
        NodeSourceKind::Hostname => polyflake_node_source::Hostname,
        NodeSourceKind::Ipv4 => polyflake_node_source::Ipv4,
        NodeSourceKind::FileLease => polyflake_node_source::FileLease,
        NodeSourceKind::Etcd => polyflake_node_source::Etcd,
        NodeSourceKind::ZooKeeper => polyflake_node_source::ZooKeeper,
    }
}

/// Every core source kind, to answer `polyflake_node_source_name` from the core's own names.
const ALL_SOURCES: [NodeSourceKind; 7] = NodeSourceKind::ALL;

/// Which store a generator's lease lives in (the `lease_kind` of `polyflake_health_snapshot`).
#[repr(u32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum polyflake_lease_kind {
    /// The node id is not leased; the other `lease_` fields of the snapshot are zero.
    None = 0,
    /// A directory of slot files.
    File = 1,
    /// An etcd v3 cluster.
    Etcd = 2,
    /// A ZooKeeper ensemble.
    ZooKeeper = 3,
}

/// The ONE map from the core's lease kinds (`None` when there is no lease).
pub(crate) const fn lease_kind_of(k: Option<LeaseKind>) -> polyflake_lease_kind {
    match k {
        None => polyflake_lease_kind::None,
        Some(LeaseKind::File) => polyflake_lease_kind::File,
        Some(LeaseKind::Etcd) => polyflake_lease_kind::Etcd,
        Some(LeaseKind::ZooKeeper) => polyflake_lease_kind::ZooKeeper,
    }
}

/// The stable snake_case name of a node source ("static", "env", "hostname", "ipv4",
/// "file_lease", "etcd") as a static NUL-terminated string (`source` is a
/// `polyflake_node_source`); an unknown number gives "unknown". Never NULL; do not free.
/// Thread-safe.
#[no_mangle]
pub extern "C" fn polyflake_node_source_name(source: u32) -> *const c_char {
    crate::boundary::boundary_value(c"unknown".as_ptr(), || {
        static NAMES: std::sync::OnceLock<Vec<(u32, std::ffi::CString)>> =
            std::sync::OnceLock::new();
        let names = NAMES.get_or_init(|| {
            ALL_SOURCES
                .iter()
                .map(|k| {
                    let name = std::ffi::CString::new(k.name()).unwrap_or_default();
                    (source_of(*k) as u32, name)
                })
                .collect()
        });
        names
            .iter()
            .find(|(code, _)| *code == source)
            .map_or(c"unknown".as_ptr(), |(_, name)| name.as_ptr())
    })
}

/// Options of a file lease (`polyflake_generator_new_file_lease`). Fill it with
/// `polyflake_file_lease_options_init`, set `dir`, change what you need. The strings are only
/// read during the call (polyflake keeps its own copies).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct polyflake_file_lease_options {
    /// The lease directory, a NUL-terminated path (created if missing). Every process that
    /// shares node ids uses the same one, on a local file system. Required (NULL:
    /// POLYFLAKE_RESULT_NULL_PARAMETER).
    pub dir: *const c_char,
    /// How many slots to use, 1 to 2^node_bits; 0 (the default) means every node id of the
    /// layout.
    pub slots: u32,
    /// A stable identity, NUL-terminated UTF-8: the slot it held before is tried first. NULL
    /// (the default) means this host's name.
    pub identity: *const c_char,
    /// How far ahead of the clock the high-water mark R is kept, in ms (10 to 86,400,000): the
    /// longest a successor of a crashed holder waits. 0 means the default,
    /// POLYFLAKE_DEFAULT_RESERVE_MS.
    pub reserve_ms: u64,
}

/// Options of an etcd lease (`polyflake_generator_new_etcd`). Fill it with
/// `polyflake_etcd_options_init`, set the endpoints, change what you need. The strings are only
/// read during the call.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct polyflake_etcd_options {
    /// The cluster's client URLs (NUL-terminated UTF-8, such as "http://127.0.0.1:2379"):
    /// an array of `endpoint_count` strings. NULL (with a nonzero count) or a NULL entry:
    /// POLYFLAKE_RESULT_NULL_PARAMETER.
    pub endpoints: *const *const c_char,
    /// How many strings `endpoints` holds (at least 1).
    pub endpoint_count: usize,
    /// The key prefix, NUL-terminated UTF-8; NULL (the default) means "/polyflake".
    pub prefix: *const c_char,
    /// The etcd lease's time to live in seconds (1 to 3600); 0 means the default,
    /// POLYFLAKE_DEFAULT_ETCD_TTL_S.
    pub ttl_s: i64,
    /// How far ahead of the clock R is kept, in ms; 0 means POLYFLAKE_DEFAULT_RESERVE_MS.
    pub reserve_ms: u64,
    /// How many slots to use, 1 to 2^node_bits; 0 (the default) means every node id.
    pub slots: u32,
    /// A stable identity, NUL-terminated UTF-8; NULL (the default) means this host's name.
    pub identity: *const c_char,
    /// The timeout of connecting and of each request, in ms (1 to 600,000); 0 means
    /// POLYFLAKE_DEFAULT_ETCD_TIMEOUT_MS.
    pub connect_timeout_ms: u64,
}

/// Fill `*out_options` with the defaults: `dir` NULL (set it), every slot of the layout, the
/// hostname as identity, reserve POLYFLAKE_DEFAULT_RESERVE_MS.
/// NULL: POLYFLAKE_RESULT_NULL_PARAMETER. Thread-safe.
#[no_mangle]
pub extern "C" fn polyflake_file_lease_options_init(
    out_options: *mut polyflake_file_lease_options,
) -> polyflake_result {
    boundary(|| {
        let dst = out(out_options)?;
        let o = polyflake_file_lease_options {
            dir: std::ptr::null(),
            slots: 0,
            identity: std::ptr::null(),
            reserve_ms: DEFAULT_RESERVE_MS,
        };
        // SAFETY: `dst` is non-NULL and the caller promises it is writable.
        unsafe { dst.write(o) };
        Ok(())
    })
}

/// Fill `*out_options` with the defaults: no endpoints (set them), prefix "/polyflake" (NULL),
/// TTL POLYFLAKE_DEFAULT_ETCD_TTL_S, reserve POLYFLAKE_DEFAULT_RESERVE_MS, every slot, the
/// hostname as identity, timeout POLYFLAKE_DEFAULT_ETCD_TIMEOUT_MS.
/// NULL: POLYFLAKE_RESULT_NULL_PARAMETER. Thread-safe.
#[no_mangle]
pub extern "C" fn polyflake_etcd_options_init(
    out_options: *mut polyflake_etcd_options,
) -> polyflake_result {
    boundary(|| {
        let dst = out(out_options)?;
        let o = polyflake_etcd_options {
            endpoints: std::ptr::null(),
            endpoint_count: 0,
            prefix: std::ptr::null(),
            ttl_s: DEFAULT_ETCD_TTL_S,
            reserve_ms: DEFAULT_RESERVE_MS,
            slots: 0,
            identity: std::ptr::null(),
            connect_timeout_ms: DEFAULT_ETCD_TIMEOUT_MS,
        };
        // SAFETY: `dst` is non-NULL and the caller promises it is writable.
        unsafe { dst.write(o) };
        Ok(())
    })
}

/// A required NUL-terminated string's bytes (NULL: NULL_PARAMETER).
fn c_bytes<'a>(p: *const c_char) -> Result<&'a [u8], polyflake_result> {
    let first = arg(p)?;
    // SAFETY: non-NULL, and the caller promises a NUL-terminated string that outlives the call.
    Ok(unsafe { CStr::from_ptr(first) }.to_bytes())
}

/// A required NUL-terminated UTF-8 string. Text that is not UTF-8 is refused, never repaired
/// (a repaired etcd prefix or identity would silently name another key).
fn c_utf8(p: *const c_char, what: &str) -> Result<String, polyflake_result> {
    let bytes = c_bytes(p)?;
    match std::str::from_utf8(bytes) {
        Ok(s) => Ok(s.to_string()),
        Err(_) => Err(not_utf8(what)),
    }
}

/// A nullable NUL-terminated UTF-8 string.
fn c_utf8_opt(p: *const c_char, what: &str) -> Result<Option<String>, polyflake_result> {
    if p.is_null() {
        Ok(None)
    } else {
        c_utf8(p, what).map(Some)
    }
}

fn not_utf8(what: &str) -> polyflake_result {
    polyflake_core::Error::InvalidNodeSource {
        reason: format!("{what} is not valid UTF-8"),
    }
    .into()
}

/// 0 means "the core's default" for the option fields that say so.
fn or_default<T: PartialEq + Default>(v: T, default: T) -> T {
    if v == T::default() {
        default
    } else {
        v
    }
}

fn slots_of(slots: u32) -> Option<u32> {
    (slots != 0).then_some(slots)
}

fn file_source(o: &polyflake_file_lease_options) -> Result<NodeSource, polyflake_result> {
    // A path is bytes on Unix: taken as given, UTF-8 or not.
    let dir = PathBuf::from(OsStr::from_bytes(c_bytes(o.dir)?));
    let mut opts = FileLeaseOptions::new(dir);
    opts.slots = slots_of(o.slots);
    opts.identity = c_utf8_opt(o.identity, "the lease identity")?;
    opts.reserve_ms = or_default(o.reserve_ms, DEFAULT_RESERVE_MS);
    Ok(NodeSource::FileLease(opts))
}

fn etcd_source(o: &polyflake_etcd_options) -> Result<NodeSource, polyflake_result> {
    let endpoints = if o.endpoint_count == 0 {
        Vec::new()
    } else {
        arg(o.endpoints)?;
        // SAFETY: non-NULL, and the caller promises `endpoint_count` readable pointers there.
        let list = unsafe { std::slice::from_raw_parts(o.endpoints, o.endpoint_count) };
        list.iter()
            .map(|p| c_utf8(*p, "an etcd endpoint"))
            .collect::<Result<Vec<_>, _>>()?
    };
    let mut opts = EtcdLeaseOptions::new(endpoints);
    if let Some(prefix) = c_utf8_opt(o.prefix, "the etcd prefix")? {
        opts.prefix = prefix;
    }
    opts.ttl_s = or_default(o.ttl_s, DEFAULT_ETCD_TTL_S);
    opts.reserve_ms = or_default(o.reserve_ms, DEFAULT_RESERVE_MS);
    opts.slots = slots_of(o.slots);
    opts.identity = c_utf8_opt(o.identity, "the lease identity")?;
    opts.connect_timeout_ms = or_default(o.connect_timeout_ms, DEFAULT_ETCD_TIMEOUT_MS);
    Ok(NodeSource::Etcd(opts))
}

/// Make a generator on the system clock whose node id is a slot leased from a directory of slot
/// files (one host, no server), and store the new handle in `*out_generator`. `config` gives
/// everything but the node id (`config->node_id` is ignored: the slot is the node id).
///
/// The slot this identity held before is tried first; the lease keeps a high-water mark R in
/// the slot file ahead of the clock from a background thread, and a new holder issues nothing
/// until its clock passes the R it found (`polyflake_next_id` gives
/// POLYFLAKE_RESULT_LEASE_NOT_READY meanwhile; health says "restart_guard" and how long).
/// `polyflake_generator_free` frees the slot. Two lease generators in one process get two
/// different slots.
///
/// Errors (nothing written): POLYFLAKE_RESULT_INVALID_NODE_SOURCE (slots or reserve_ms out of
/// range, a bad identity), _NO_FREE_SLOT (every slot held; the message names the directory and
/// the slot count), _LEASE_STORE (the directory cannot be created or written), and the errors
/// of `polyflake_generator_new`. NULL `config`, `options`, `options->dir` or `out_generator`:
/// POLYFLAKE_RESULT_NULL_PARAMETER. Thread-safe.
#[no_mangle]
pub extern "C" fn polyflake_generator_new_file_lease(
    config: *const polyflake_config,
    options: *const polyflake_file_lease_options,
    out_generator: *mut *mut polyflake_generator,
) -> polyflake_result {
    boundary(|| {
        let cfg = arg(config)?;
        let opts = arg(options)?;
        out(out_generator)?;
        let source = file_source(opts)?;
        build_into(builder_from(source, cfg)?, out_generator)
    })
}

/// Make a file-lease generator (as `polyflake_generator_new_file_lease`) that reads time from a
/// manual clock (tests, simulations: the restart guard, R renewals), and store the new handle in
/// `*out_generator`. The generator shares the clock and keeps its own reference, so the clock
/// handle may be freed first. The lease (its restart guard and R) reads the same clock.
///
/// Errors as `polyflake_generator_new_file_lease`. NULL `config`, `options`, `options->dir`,
/// `clock` or `out_generator`: POLYFLAKE_RESULT_NULL_PARAMETER. Thread-safe.
#[no_mangle]
pub extern "C" fn polyflake_generator_new_file_lease_with_manual_clock(
    config: *const polyflake_config,
    options: *const polyflake_file_lease_options,
    clock: *const polyflake_manual_clock,
    out_generator: *mut *mut polyflake_generator,
) -> polyflake_result {
    boundary(|| {
        let cfg = arg(config)?;
        let opts = arg(options)?;
        let clock = arg(clock)?;
        out(out_generator)?;
        let source = file_source(opts)?;
        build_into(
            builder_from(source, cfg)?.clock(clock.inner.clone()),
            out_generator,
        )
    })
}

/// Make a file-lease generator (as `polyflake_generator_new_file_lease`) that reads time from a
/// scripted clock, and store the new handle in `*out_generator`. The generator keeps its own
/// reference, so the clock handle may be freed first. The lease reads the same clock.
///
/// Errors as `polyflake_generator_new_file_lease`. NULL `config`, `options`, `options->dir`,
/// `clock` or `out_generator`: POLYFLAKE_RESULT_NULL_PARAMETER. Thread-safe.
#[no_mangle]
pub extern "C" fn polyflake_generator_new_file_lease_with_scripted_clock(
    config: *const polyflake_config,
    options: *const polyflake_file_lease_options,
    clock: *const polyflake_scripted_clock,
    out_generator: *mut *mut polyflake_generator,
) -> polyflake_result {
    boundary(|| {
        let cfg = arg(config)?;
        let opts = arg(options)?;
        let clock = arg(clock)?;
        out(out_generator)?;
        let source = file_source(opts)?;
        build_into(
            builder_from(source, cfg)?.shared_clock(clock.inner.clone()),
            out_generator,
        )
    })
}

/// Make a generator on the system clock whose node id is a slot leased from an etcd v3 cluster
/// (a fleet), and store the new handle in `*out_generator`. `config->node_id` is ignored.
///
/// The slot key is created only if absent, attached to an etcd lease kept alive in the
/// background; R is a separate key moved ahead of the clock by a transaction that proves the
/// slot is still owned. etcd unreachable: IDs continue up to R, then
/// POLYFLAKE_RESULT_LEASE_EXPIRED until it is back. The etcd lease lost or revoked:
/// POLYFLAKE_RESULT_LEASE_LOST for good. This call blocks while it connects (at most about
/// `connect_timeout_ms` per request).
///
/// Errors (nothing written): POLYFLAKE_RESULT_INVALID_NODE_SOURCE (no endpoint, a bad prefix,
/// ttl_s, timeout, slots, reserve or identity, text that is not UTF-8), _NO_FREE_SLOT,
/// _LEASE_STORE (etcd unreachable or failing), and the errors of `polyflake_generator_new`.
/// NULL `config`, `options`, `options->endpoints` (with a nonzero count), one of its entries or
/// `out_generator`: POLYFLAKE_RESULT_NULL_PARAMETER. Thread-safe.
#[no_mangle]
pub extern "C" fn polyflake_generator_new_etcd(
    config: *const polyflake_config,
    options: *const polyflake_etcd_options,
    out_generator: *mut *mut polyflake_generator,
) -> polyflake_result {
    boundary(|| {
        let cfg = arg(config)?;
        let opts = arg(options)?;
        out(out_generator)?;
        let source = etcd_source(opts)?;
        build_into(builder_from(source, cfg)?, out_generator)
    })
}

/// Make a generator on the system clock whose node id is the decimal integer in the
/// environment variable `var` (NUL-terminated UTF-8), checked against the layout, and store the
/// new handle in `*out_generator`. `config->node_id` is ignored.
///
/// Errors (nothing written): POLYFLAKE_RESULT_INVALID_NODE_SOURCE (unset, not a decimal
/// number), _INVALID_NODE_ID (out of range for the layout), and the errors of
/// `polyflake_generator_new`. NULL `config`, `var` or `out_generator`:
/// POLYFLAKE_RESULT_NULL_PARAMETER. Thread-safe.
#[no_mangle]
pub extern "C" fn polyflake_generator_new_from_env(
    config: *const polyflake_config,
    var: *const c_char,
    out_generator: *mut *mut polyflake_generator,
) -> polyflake_result {
    boundary(|| {
        let cfg = arg(config)?;
        let var = c_utf8(var, "the environment variable's name")?;
        out(out_generator)?;
        build_into(builder_from(NodeSource::Env { var }, cfg)?, out_generator)
    })
}

/// Make a generator on the system clock whose node id is the ordinal at the end of a
/// StatefulSet-style hostname (`ids-7` and `ids-7.ids.default.svc` give 7), and store the new
/// handle in `*out_generator`. `hostname` (NUL-terminated UTF-8) may be NULL: this host's name.
/// `config->node_id` is ignored.
///
/// Errors (nothing written): POLYFLAKE_RESULT_INVALID_NODE_SOURCE (no ordinal),
/// _INVALID_NODE_ID (out of range), and the errors of `polyflake_generator_new`. NULL `config`
/// or `out_generator`: POLYFLAKE_RESULT_NULL_PARAMETER. Thread-safe.
#[no_mangle]
pub extern "C" fn polyflake_generator_new_from_hostname(
    config: *const polyflake_config,
    hostname: *const c_char,
    out_generator: *mut *mut polyflake_generator,
) -> polyflake_result {
    boundary(|| {
        let cfg = arg(config)?;
        let hostname = c_utf8_opt(hostname, "the hostname")?;
        out(out_generator)?;
        build_into(
            builder_from(NodeSource::Hostname { hostname }, cfg)?,
            out_generator,
        )
    })
}

/// Make a generator on the system clock whose node id is the low `32 - prefix_len` bits of the
/// IPv4 address `addr` (dotted text such as "10.1.7.9"), and store the new handle in
/// `*out_generator`. Refused unless the host bits fit the node field (a /22 or narrower for
/// 10 node bits): every generator of the fleet must live in the one stated subnet.
/// `config->node_id` is ignored.
///
/// Errors (nothing written): POLYFLAKE_RESULT_INVALID_NODE_SOURCE (not an IPv4 address, a prefix
/// over 32, a subnet too wide for the node field), and the errors of `polyflake_generator_new`.
/// NULL `config`, `addr` or `out_generator`: POLYFLAKE_RESULT_NULL_PARAMETER. Thread-safe.
#[no_mangle]
pub extern "C" fn polyflake_generator_new_from_ipv4(
    config: *const polyflake_config,
    addr: *const c_char,
    prefix_len: u32,
    out_generator: *mut *mut polyflake_generator,
) -> polyflake_result {
    boundary(|| {
        let cfg = arg(config)?;
        let text = c_utf8(addr, "the IPv4 address")?;
        out(out_generator)?;
        let addr: Ipv4Addr = text.parse().map_err(|_| {
            polyflake_result::from(polyflake_core::Error::InvalidNodeSource {
                reason: format!("{text:?} is not an IPv4 address (dotted decimal, a.b.c.d)"),
            })
        })?;
        // The core checks the prefix (0 to 32); a number that does not even fit its u8 is
        // refused here, never wrapped.
        let prefix_len = u8::try_from(prefix_len).map_err(|_| {
            polyflake_result::from(polyflake_core::Error::InvalidNodeSource {
                reason: format!("IPv4 prefix /{prefix_len} is not a prefix length (0 to 32)"),
            })
        })?;
        build_into(
            builder_from(NodeSource::Ipv4 { addr, prefix_len }, cfg)?,
            out_generator,
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn source_names_come_from_the_core() {
        for k in ALL_SOURCES {
            let name = unsafe { CStr::from_ptr(polyflake_node_source_name(source_of(k) as u32)) };
            assert_eq!(name.to_str().unwrap(), k.name());
        }
        let unknown = unsafe { CStr::from_ptr(polyflake_node_source_name(99)) };
        assert_eq!(unknown.to_str().unwrap(), "unknown");
    }

    #[test]
    fn zero_means_the_core_default() {
        let mut o = std::mem::MaybeUninit::<polyflake_etcd_options>::uninit();
        assert_eq!(
            polyflake_etcd_options_init(o.as_mut_ptr()),
            polyflake_result::Ok
        );
        let mut o = unsafe { o.assume_init() };
        let ep = c"http://127.0.0.1:1";
        let list = [ep.as_ptr()];
        o.endpoints = list.as_ptr();
        o.endpoint_count = 1;
        o.ttl_s = 0;
        o.reserve_ms = 0;
        o.connect_timeout_ms = 0;
        let NodeSource::Etcd(e) = etcd_source(&o).unwrap() else {
            panic!("not etcd")
        };
        assert_eq!(
            e,
            EtcdLeaseOptions::new(vec!["http://127.0.0.1:1".to_string()])
        );
    }
}
