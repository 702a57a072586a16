//! Where a generator's node id comes from: [`NodeSource`] and the options of the two lease kinds.

use crate::error::{Error, Result};
use crate::layout::Layout;
use std::ffi::OsString;
use std::net::Ipv4Addr;
use std::path::PathBuf;

/// The default high-water-mark reserve of both lease kinds: R is kept this far ahead of the
/// clock, so a successor of a crashed holder waits at most this long (5 s).
pub const DEFAULT_RESERVE_MS: u64 = 5_000;
/// The default etcd key prefix.
pub const DEFAULT_ETCD_PREFIX: &str = "/polyflake";
/// The default etcd lease TTL in seconds.
pub const DEFAULT_ETCD_TTL_S: i64 = 10;
/// The default etcd connect (and per-request) timeout in milliseconds.
pub const DEFAULT_ETCD_TIMEOUT_MS: u64 = 2_000;
/// The default ZooKeeper znode prefix.
pub const DEFAULT_ZOOKEEPER_PREFIX: &str = "/polyflake";
/// The default ZooKeeper session timeout in milliseconds: the lease's time to live (how long a
/// crashed holder's slot stays taken), like the etcd TTL.
pub const DEFAULT_ZOOKEEPER_SESSION_TIMEOUT_MS: u64 = 10_000;
/// The default ZooKeeper connect (and per-request) timeout in milliseconds.
pub const DEFAULT_ZOOKEEPER_TIMEOUT_MS: u64 = 2_000;
/// The default `max_guard_wait_ms` of every lease kind: a free slot whose restart guard is
/// longer than this (its previous holder issued that far in the future, after a clock stepped
/// ahead) is taken only when no other slot is free (60 s).
pub const DEFAULT_MAX_GUARD_WAIT_MS: u64 = 60_000;

/// The names of the TLS and authentication fields of both remote stores' options
/// ([`EtcdLeaseOptions`], [`ZooKeeperLeaseOptions`]), for their `set_credential`: three PEM file
/// paths, then the user name and its password.
///
/// ```
/// use polyflake::{EtcdLeaseOptions, LEASE_CREDENTIALS};
/// let mut o = EtcdLeaseOptions::default();
/// for name in LEASE_CREDENTIALS {
///     o.set_credential(name, Some(format!("{name}.x").into())).unwrap();
/// }
/// assert_eq!(o.key_file.as_deref(), Some(std::path::Path::new("key_file.x")));
/// assert_eq!(o.password.as_deref(), Some("password.x"));
/// assert!(o.set_credential("token", None).is_err());
/// ```
pub const LEASE_CREDENTIALS: [&str; 5] =
    ["ca_file", "cert_file", "key_file", "username", "password"];

/// `set_credential` of both remote stores' options (the same field names in both).
macro_rules! set_credential {
    () => {
        /// Set the TLS or authentication field `name` (one of [`LEASE_CREDENTIALS`]; a path for
        /// the `*_file` ones); `None` leaves it to its environment variable. Another name, or a
        /// user name or password that is not UTF-8, is [`Error::InvalidArgument`].
        pub fn set_credential(&mut self, name: &str, value: Option<OsString>) -> Result<()> {
            let bad = |reason: String| Error::InvalidArgument {
                name: "credential",
                reason,
            };
            let text = |v: OsString| {
                v.into_string()
                    .map_err(|_| bad(format!("{name} is not UTF-8 text")))
            };
            match name {
                "ca_file" => self.ca_file = value.map(PathBuf::from),
                "cert_file" => self.cert_file = value.map(PathBuf::from),
                "key_file" => self.key_file = value.map(PathBuf::from),
                "username" => self.username = value.map(text).transpose()?,
                "password" => self.password = value.map(text).transpose()?,
                _ => return Err(bad(format!("{name:?} is not one of {LEASE_CREDENTIALS:?}"))),
            }
            Ok(())
        }
    };
}

/// Where a generator's node id comes from. [`crate::Generator::builder`]`(n)` is
/// `Generator::builder_from(NodeSource::Static(n))`.
///
/// ```
/// use polyflake::{Generator, NodeSource};
/// std::env::set_var("MY_NODE_ID", "12");
/// let g = Generator::builder_from(NodeSource::Env { var: "MY_NODE_ID".into() }).build().unwrap();
/// assert_eq!(g.node_id(), 12);
/// let g = Generator::builder_from(NodeSource::Hostname { hostname: Some("ids-7".into()) })
///     .build().unwrap();
/// assert_eq!(g.node_id(), 7);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NodeSource {
    /// A node id given as a number (checked against the layout).
    Static(i128),
    /// A decimal integer read from an environment variable.
    Env {
        /// The variable's name.
        var: String,
    },
    /// The ordinal at the end of a StatefulSet-style hostname: `ids-7` -> 7.
    Hostname {
        /// The hostname to read; `None` reads this host's name.
        hostname: Option<String>,
    },
    /// The low `32 - prefix_len` bits of an IPv4 address. Refused unless they fit the node field
    /// (a /22 or narrower for 10 node bits): two addresses of one subnet never collide, but two
    /// subnets do, so every generator of a fleet must live in the one stated subnet.
    Ipv4 {
        /// The address.
        addr: Ipv4Addr,
        /// The subnet's prefix length, 0 to 32.
        prefix_len: u8,
    },
    /// A slot leased from a directory of slot files (one host, no server).
    FileLease(FileLeaseOptions),
    /// A slot leased from an etcd v3 cluster (a fleet).
    Etcd(EtcdLeaseOptions),
    /// A slot leased from a ZooKeeper ensemble (a fleet).
    ZooKeeper(ZooKeeperLeaseOptions),
}

/// The kind of a [`NodeSource`], as health reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum NodeSourceKind {
    /// [`NodeSource::Static`].
    Static,
    /// [`NodeSource::Env`].
    Env,
    /// [`NodeSource::Hostname`].
    Hostname,
    /// [`NodeSource::Ipv4`].
    Ipv4,
    /// [`NodeSource::FileLease`].
    FileLease,
    /// [`NodeSource::Etcd`].
    Etcd,
    /// [`NodeSource::ZooKeeper`].
    ZooKeeper,
}

impl NodeSourceKind {
    /// A stable snake_case name: `static`, `env`, `hostname`, `ipv4`, `file_lease`, `etcd`,
    /// `zookeeper`.
    pub const fn name(self) -> &'static str {
        match self {
            NodeSourceKind::Static => "static",
            NodeSourceKind::Env => "env",
            NodeSourceKind::Hostname => "hostname",
            NodeSourceKind::Ipv4 => "ipv4",
            NodeSourceKind::FileLease => "file_lease",
            NodeSourceKind::Etcd => "etcd",
            NodeSourceKind::ZooKeeper => "zookeeper",
        }
    }
    /// Every kind, in a fixed order (for tables and tests).
    pub const ALL: [NodeSourceKind; 7] = [
        NodeSourceKind::Static,
        NodeSourceKind::Env,
        NodeSourceKind::Hostname,
        NodeSourceKind::Ipv4,
        NodeSourceKind::FileLease,
        NodeSourceKind::Etcd,
        NodeSourceKind::ZooKeeper,
    ];

    /// True for the lease kinds (file, etcd, ZooKeeper).
    pub const fn is_lease(self) -> bool {
        matches!(
            self,
            NodeSourceKind::FileLease | NodeSourceKind::Etcd | NodeSourceKind::ZooKeeper
        )
    }
}

impl NodeSource {
    /// The IPv4 source from an address in text and a prefix length as a binding received it,
    /// checked here once for every binding: the address must be dotted-quad text and the prefix
    /// 0 to 32 (whether it fits the node field is checked against the layout when the
    /// generator is built).
    ///
    /// ```
    /// use polyflake::{ErrorKind, NodeSource};
    /// assert!(NodeSource::ipv4("10.1.7.9", 22).is_ok());
    /// for bad in [33, 300, -1] {
    ///     let e = NodeSource::ipv4("10.1.7.9", bad).unwrap_err();
    ///     assert_eq!(e.kind(), ErrorKind::InvalidNodeSource);
    ///     assert!(e.to_string().contains(&format!("/{bad} is not a prefix length")), "{e}");
    /// }
    /// assert!(NodeSource::ipv4("10.1.7", 22).is_err());
    /// ```
    pub fn ipv4(addr: &str, prefix_len: i128) -> Result<NodeSource> {
        let addr: Ipv4Addr = addr.parse().map_err(|_| Error::InvalidNodeSource {
            reason: format!("{addr:?} is not an IPv4 address (dotted quad such as 10.1.7.9)"),
        })?;
        let prefix_len = u8::try_from(prefix_len)
            .ok()
            .filter(|p| *p <= 32)
            .ok_or_else(|| Error::InvalidNodeSource {
                reason: format!("IPv4 prefix /{prefix_len} is not a prefix length (0 to 32)"),
            })?;
        Ok(NodeSource::Ipv4 { addr, prefix_len })
    }

    /// This source's kind.
    pub fn kind(&self) -> NodeSourceKind {
        match self {
            NodeSource::Static(_) => NodeSourceKind::Static,
            NodeSource::Env { .. } => NodeSourceKind::Env,
            NodeSource::Hostname { .. } => NodeSourceKind::Hostname,
            NodeSource::Ipv4 { .. } => NodeSourceKind::Ipv4,
            NodeSource::FileLease(_) => NodeSourceKind::FileLease,
            NodeSource::Etcd(_) => NodeSourceKind::Etcd,
            NodeSource::ZooKeeper(_) => NodeSourceKind::ZooKeeper,
        }
    }

    /// The node id of a source that needs no lease (static, env, hostname, IPv4), checked
    /// against `layout`; `None` for the lease kinds.
    ///
    /// ```
    /// use polyflake::{Layout, NodeSource};
    /// let ip = |p| NodeSource::Ipv4 { addr: "10.1.7.9".parse().unwrap(), prefix_len: p };
    /// assert_eq!(ip(22).fixed_node_id(Layout::DEFAULT).unwrap(), Some(3 * 256 + 9));
    /// assert!(ip(21).fixed_node_id(Layout::DEFAULT).is_err()); // 11 host bits > 10 node bits
    /// ```
    pub fn fixed_node_id(&self, layout: Layout) -> Result<Option<u32>> {
        let invalid = |reason: String| Error::InvalidNodeSource { reason };
        let id = match self {
            NodeSource::Static(n) => *n,
            NodeSource::Env { var } => {
                let raw = std::env::var_os(var)
                    .ok_or_else(|| invalid(format!("the environment variable {var} is not set")))?;
                let text = raw.to_str().unwrap_or("").trim();
                if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) || text.len() > 30 {
                    return Err(invalid(format!(
                        "the environment variable {var} = {raw:?} is not a decimal node id"
                    )));
                }
                text.parse::<i128>()
                    .map_err(|_| invalid(format!("{var} = {raw:?} is not a number")))?
            }
            NodeSource::Hostname { hostname } => {
                let name = match hostname {
                    Some(h) => h.clone(),
                    None => this_hostname()?,
                };
                i128::from(hostname_ordinal(&name)?)
            }
            NodeSource::Ipv4 { addr, prefix_len } => {
                if *prefix_len > 32 {
                    return Err(invalid(format!(
                        "IPv4 prefix /{prefix_len} is not a prefix length (0 to 32)"
                    )));
                }
                let host_bits = 32 - u32::from(*prefix_len);
                let node_bits = layout.node_bits();
                if host_bits > node_bits {
                    return Err(invalid(format!(
                        "IPv4 prefix /{prefix_len} leaves {host_bits} host bits ({} addresses) but the node field has {node_bits} bits ({} node ids): two addresses would share a node id; use a /{} or narrower subnet",
                        1u64 << host_bits,
                        1u64 << node_bits,
                        32 - node_bits
                    )));
                }
                let mask = if host_bits == 32 {
                    u32::MAX
                } else {
                    (1u32 << host_bits) - 1
                };
                i128::from(u32::from(*addr) & mask)
            }
            NodeSource::FileLease(_) | NodeSource::Etcd(_) | NodeSource::ZooKeeper(_) => {
                return Ok(None)
            }
        };
        layout.check_node_id(id).map(Some)
    }
}

/// The ordinal of a StatefulSet-style hostname: the digits after the last `-` of its first
/// label (`ids-7.ids.default.svc` -> 7).
///
/// ```
/// assert_eq!(polyflake::hostname_ordinal("ids-7").unwrap(), 7);
/// assert!(polyflake::hostname_ordinal("ids").is_err());
/// ```
pub fn hostname_ordinal(hostname: &str) -> Result<u64> {
    let label = hostname.split('.').next().unwrap_or("");
    let digits = label.rsplit_once('-').map(|(_, d)| d).unwrap_or("");
    if digits.is_empty() || digits.len() > 18 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(Error::InvalidNodeSource {
            reason: format!(
                "hostname {hostname:?} has no ordinal: expected a StatefulSet-style name such as \"ids-7\""
            ),
        });
    }
    Ok(digits.parse().unwrap_or(u64::MAX))
}

/// This host's name (`gethostname`).
pub(crate) fn this_hostname() -> Result<String> {
    let mut buf = [0u8; 256];
    // SAFETY: the buffer is valid for its length; gethostname NUL-terminates within it or fails.
    let rc = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len() - 1) };
    if rc != 0 {
        return Err(Error::InvalidNodeSource {
            reason: format!("gethostname failed: {}", std::io::Error::last_os_error()),
        });
    }
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    Ok(String::from_utf8_lossy(&buf[..end]).into_owned())
}

/// Options of a file lease: a directory of slot files `slot-0000`, `slot-0001`, ... on one host.
///
/// ```no_run
/// use polyflake::{FileLeaseOptions, Generator, NodeSource};
/// let g = Generator::builder_from(NodeSource::FileLease(FileLeaseOptions::new("/var/lib/ids")))
///     .build()?;
/// println!("leased node {}", g.node_id());
/// # Ok::<(), polyflake::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileLeaseOptions {
    /// The lease directory (created if missing). Every process that shares node ids must use
    /// the same one, on a local file system (`flock` on NFS is not reliable).
    pub dir: PathBuf,
    /// How many slots to use, 1 to 2^node_bits (default: every node id of the layout).
    pub slots: Option<u32>,
    /// A stable identity: the slot it held before is tried first (default: the hostname).
    pub identity: Option<String>,
    /// How far ahead of the clock the high-water mark R is kept, in ms (default 5,000): the
    /// longest a successor of a crashed holder waits. Use one reserve for every holder of a
    /// store: a slot found without a complete record is guarded for the taker's own reserve.
    pub reserve_ms: u64,
    /// A free slot whose restart guard is longer than this is taken only when no other slot is
    /// free (default 60,000 ms), and health then says why.
    pub max_guard_wait_ms: u64,
}

impl FileLeaseOptions {
    /// Options with this directory and every other field at its default.
    pub fn new(dir: impl Into<PathBuf>) -> FileLeaseOptions {
        FileLeaseOptions {
            dir: dir.into(),
            slots: None,
            identity: None,
            reserve_ms: DEFAULT_RESERVE_MS,
            max_guard_wait_ms: DEFAULT_MAX_GUARD_WAIT_MS,
        }
    }
}

impl Default for FileLeaseOptions {
    /// The [`default_lease_dir`].
    fn default() -> Self {
        FileLeaseOptions::new(default_lease_dir())
    }
}

/// The default lease directory: `$POLYFLAKE_LEASE_DIR` when that is set and not empty, else
/// `/var/tmp/polyflake-leases` (the system's temporary directory where there is no `/var/tmp`).
///
/// Why there: it is one directory for every process of the host whoever runs it (a lease
/// directory must be shared by every generator of an ID space), it survives reboots (so the
/// restart guard's records do too), and cleaners leave it alone while it is in use: `/var/tmp`
/// is cleaned only by age (30 days by systemd's default), a live holder rewrites its slot file
/// every `reserve / 5`, and every holder keeps a shared `flock` on the directory, which
/// `systemd-tmpfiles` honours by skipping it. `/tmp` may be a tmpfs that forgets at reboot,
/// and `$XDG_RUNTIME_DIR` is removed when its user logs out.
///
/// ```
/// assert!(polyflake::default_lease_dir().ends_with("polyflake-leases"));
/// ```
pub fn default_lease_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("POLYFLAKE_LEASE_DIR").filter(|d| !d.is_empty()) {
        return PathBuf::from(dir);
    }
    let var_tmp = std::path::Path::new("/var/tmp");
    if var_tmp.is_dir() {
        var_tmp.join("polyflake-leases")
    } else {
        std::env::temp_dir().join("polyflake-leases")
    }
}

/// Options of an etcd lease: slot keys under `prefix` in an etcd v3 cluster.
///
/// TLS and authentication: `ca_file` (the CA that signed the servers' certificates),
/// `cert_file` and `key_file` (a client certificate, for `--client-cert-auth` clusters) and
/// `username` and `password` (etcd's own authentication). Each field left `None` is read from
/// its environment variable when that is set and not empty: `POLYFLAKE_ETCD_CA_FILE`,
/// `POLYFLAKE_ETCD_CERT_FILE`, `POLYFLAKE_ETCD_KEY_FILE`, `POLYFLAKE_ETCD_USERNAME`,
/// `POLYFLAKE_ETCD_PASSWORD`. With a CA or a client certificate, every endpoint must be an
/// `https://` URL (or a bare `host:port`). The password never appears in `Debug` output.
///
/// ```
/// use polyflake::EtcdLeaseOptions;
/// let o = EtcdLeaseOptions::new(vec!["http://10.0.0.5:2379".into()]);
/// assert_eq!((o.prefix.as_str(), o.ttl_s, o.reserve_ms), ("/polyflake", 10, 5000));
/// let mut o = EtcdLeaseOptions::new(vec!["https://10.0.0.5:2379".into()]);
/// o.username = Some("ids".into());
/// o.password = Some("s3cret".into());
/// assert!(!format!("{o:?}").contains("s3cret"));
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct EtcdLeaseOptions {
    /// The cluster's client URLs, such as `http://127.0.0.1:2379`.
    pub endpoints: Vec<String>,
    /// The key prefix (default `/polyflake`): slot keys are `{prefix}/slot/NNNN`, high-water
    /// marks `{prefix}/hwm/NNNN`, identities `{prefix}/owner/{identity}`.
    pub prefix: String,
    /// The etcd lease's time to live in seconds (default 10): how long a crashed holder's slot
    /// stays taken.
    pub ttl_s: i64,
    /// How far ahead of the clock R is kept, in ms (default 5,000).
    pub reserve_ms: u64,
    /// How many slots to use, 1 to 2^node_bits (default: every node id of the layout).
    pub slots: Option<u32>,
    /// A stable identity: the slot it held before is tried first (default: the hostname).
    pub identity: Option<String>,
    /// The timeout of connecting and of each request, in ms (default 2,000).
    pub connect_timeout_ms: u64,
    /// A free slot whose restart guard is longer than this is taken only when no other slot is
    /// free (default 60,000 ms), and health then says why.
    pub max_guard_wait_ms: u64,
    /// A PEM file of the CA certificate(s) the servers' certificates must chain to (TLS).
    pub ca_file: Option<PathBuf>,
    /// A PEM file of this client's certificate (with `key_file`), for clusters that require one.
    pub cert_file: Option<PathBuf>,
    /// A PEM file of the private key of `cert_file`.
    pub key_file: Option<PathBuf>,
    /// The etcd user to authenticate as (with `password`).
    pub username: Option<String>,
    /// The password of `username`. Prefer `POLYFLAKE_ETCD_PASSWORD` (or a file the caller
    /// reads) to a literal in code or on a command line.
    pub password: Option<String>,
}

impl std::fmt::Debug for EtcdLeaseOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut d = f.debug_struct("EtcdLeaseOptions");
        d.field("endpoints", &self.endpoints)
            .field("prefix", &self.prefix)
            .field("ttl_s", &self.ttl_s)
            .field("reserve_ms", &self.reserve_ms)
            .field("slots", &self.slots)
            .field("identity", &self.identity)
            .field("connect_timeout_ms", &self.connect_timeout_ms)
            .field("max_guard_wait_ms", &self.max_guard_wait_ms);
        self.credentials().debug_fields(&mut d);
        d.finish()
    }
}

impl EtcdLeaseOptions {
    set_credential!();

    /// The TLS and authentication fields, as the store clients read them.
    pub(crate) fn credentials(&self) -> CredentialOptions<'_> {
        CredentialOptions {
            store: "etcd",
            env_prefix: "POLYFLAKE_ETCD",
            ca_file: self.ca_file.as_deref(),
            cert_file: self.cert_file.as_deref(),
            key_file: self.key_file.as_deref(),
            username: self.username.as_deref(),
            password: self.password.as_deref(),
        }
    }
    /// Options with these endpoints and every other field at its default.
    pub fn new(endpoints: Vec<String>) -> EtcdLeaseOptions {
        EtcdLeaseOptions {
            endpoints,
            prefix: DEFAULT_ETCD_PREFIX.to_string(),
            ttl_s: DEFAULT_ETCD_TTL_S,
            reserve_ms: DEFAULT_RESERVE_MS,
            slots: None,
            identity: None,
            connect_timeout_ms: DEFAULT_ETCD_TIMEOUT_MS,
            max_guard_wait_ms: DEFAULT_MAX_GUARD_WAIT_MS,
            ca_file: None,
            cert_file: None,
            key_file: None,
            username: None,
            password: None,
        }
    }
}

impl Default for EtcdLeaseOptions {
    /// One endpoint, `http://127.0.0.1:2379`.
    fn default() -> Self {
        EtcdLeaseOptions::new(vec!["http://127.0.0.1:2379".to_string()])
    }
}

/// Options of a ZooKeeper lease: znodes under `prefix` in a ZooKeeper ensemble (3.5 or later).
///
/// The slot is an ephemeral znode `{prefix}/slot/NNNN` (it lives as long as this holder's
/// session), R a persistent znode `{prefix}/hwm/NNNN`, the identity's last slot
/// `{prefix}/owner/{identity}`, the store's ID space `{prefix}/space`.
///
/// TLS and authentication: `ca_file`, `cert_file` and `key_file` as for etcd (with a CA or a
/// client certificate, every server is reached over TLS: give the ensemble's secure client
/// ports), and `username` and `password` for ZooKeeper's `digest` scheme. With a user name,
/// every znode polyflake creates carries the ACL "this user: all; anyone: read", so clients
/// without the credentials can read the store (`polyflake lease inspect`) but cannot take a
/// slot, delete a znode or move R. Each field left `None` is read from its environment variable
/// when that is set and not empty: `POLYFLAKE_ZOOKEEPER_CA_FILE`,
/// `POLYFLAKE_ZOOKEEPER_CERT_FILE`, `POLYFLAKE_ZOOKEEPER_KEY_FILE`,
/// `POLYFLAKE_ZOOKEEPER_USERNAME`, `POLYFLAKE_ZOOKEEPER_PASSWORD`.
///
/// ```
/// use polyflake::ZooKeeperLeaseOptions;
/// let o = ZooKeeperLeaseOptions::new(vec!["10.0.0.5:2181".into(), "10.0.0.6:2181".into()]);
/// assert_eq!((o.prefix.as_str(), o.session_timeout_ms, o.reserve_ms), ("/polyflake", 10000, 5000));
/// let o = ZooKeeperLeaseOptions::from_ensemble("10.0.0.5:2181,10.0.0.6:2181");
/// assert_eq!(o.ensemble.len(), 2);
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct ZooKeeperLeaseOptions {
    /// The ensemble's servers, each `host:port` (2181 is ZooKeeper's usual client port).
    pub ensemble: Vec<String>,
    /// The znode prefix (default `/polyflake`): an absolute path, one per ID space.
    pub prefix: String,
    /// The session timeout asked of the ensemble, in ms (default 10,000): the lease's time to
    /// live. The ensemble bounds it (by default 2 to 20 ticks of its `tickTime`).
    pub session_timeout_ms: u64,
    /// How far ahead of the clock R is kept, in ms (default 5,000).
    pub reserve_ms: u64,
    /// How many slots to use, 1 to 2^node_bits (default: every node id of the layout).
    pub slots: Option<u32>,
    /// A stable identity: the slot it held before is tried first (default: the hostname).
    pub identity: Option<String>,
    /// The timeout of connecting and of each request, in ms (default 2,000).
    pub connect_timeout_ms: u64,
    /// A free slot whose restart guard is longer than this is taken only when no other slot is
    /// free (default 60,000 ms), and health then says why.
    pub max_guard_wait_ms: u64,
    /// A PEM file of the CA certificate(s) the servers' certificates must chain to (TLS).
    pub ca_file: Option<PathBuf>,
    /// A PEM file of this client's certificate (with `key_file`), for ensembles that require one.
    pub cert_file: Option<PathBuf>,
    /// A PEM file of the private key of `cert_file`.
    pub key_file: Option<PathBuf>,
    /// The `digest` user to authenticate as (with `password`); the znodes polyflake creates are
    /// then writable by this user only.
    pub username: Option<String>,
    /// The password of `username`. Prefer `POLYFLAKE_ZOOKEEPER_PASSWORD` (or a file the caller
    /// reads) to a literal in code or on a command line.
    pub password: Option<String>,
}

impl std::fmt::Debug for ZooKeeperLeaseOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut d = f.debug_struct("ZooKeeperLeaseOptions");
        d.field("ensemble", &self.ensemble)
            .field("prefix", &self.prefix)
            .field("session_timeout_ms", &self.session_timeout_ms)
            .field("reserve_ms", &self.reserve_ms)
            .field("slots", &self.slots)
            .field("identity", &self.identity)
            .field("connect_timeout_ms", &self.connect_timeout_ms)
            .field("max_guard_wait_ms", &self.max_guard_wait_ms);
        self.credentials().debug_fields(&mut d);
        d.finish()
    }
}

impl ZooKeeperLeaseOptions {
    set_credential!();

    /// Options with these servers (`host:port` each) and every other field at its default.
    pub fn new(ensemble: Vec<String>) -> ZooKeeperLeaseOptions {
        ZooKeeperLeaseOptions {
            ensemble,
            prefix: DEFAULT_ZOOKEEPER_PREFIX.to_string(),
            session_timeout_ms: DEFAULT_ZOOKEEPER_SESSION_TIMEOUT_MS,
            reserve_ms: DEFAULT_RESERVE_MS,
            slots: None,
            identity: None,
            connect_timeout_ms: DEFAULT_ZOOKEEPER_TIMEOUT_MS,
            max_guard_wait_ms: DEFAULT_MAX_GUARD_WAIT_MS,
            ca_file: None,
            cert_file: None,
            key_file: None,
            username: None,
            password: None,
        }
    }

    /// Options from a connect string, `"host:port,host:port"` (spaces around the commas are
    /// ignored; empty parts are dropped, so `""` gives an empty ensemble, refused when the
    /// generator is built).
    pub fn from_ensemble(ensemble: &str) -> ZooKeeperLeaseOptions {
        ZooKeeperLeaseOptions::new(
            ensemble
                .split(',')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_string)
                .collect(),
        )
    }

    /// The TLS and authentication fields, as the store clients read them.
    pub(crate) fn credentials(&self) -> CredentialOptions<'_> {
        CredentialOptions {
            store: "zookeeper",
            env_prefix: "POLYFLAKE_ZOOKEEPER",
            ca_file: self.ca_file.as_deref(),
            cert_file: self.cert_file.as_deref(),
            key_file: self.key_file.as_deref(),
            username: self.username.as_deref(),
            password: self.password.as_deref(),
        }
    }
}

impl Default for ZooKeeperLeaseOptions {
    /// One server, `127.0.0.1:2181`.
    fn default() -> Self {
        ZooKeeperLeaseOptions::new(vec!["127.0.0.1:2181".to_string()])
    }
}

/// The TLS and authentication fields of a remote store's options (borrowed). Without the
/// `etcd` and `zookeeper` features only `Debug` reads them.
#[derive(Clone, Copy)]
#[cfg_attr(
    not(all(any(feature = "etcd", feature = "zookeeper"), not(loom))),
    allow(dead_code)
)]
pub(crate) struct CredentialOptions<'a> {
    /// `etcd` or `zookeeper`, for messages.
    pub store: &'static str,
    /// The environment variables' prefix: `POLYFLAKE_ETCD` or `POLYFLAKE_ZOOKEEPER`.
    pub env_prefix: &'static str,
    pub ca_file: Option<&'a std::path::Path>,
    pub cert_file: Option<&'a std::path::Path>,
    pub key_file: Option<&'a std::path::Path>,
    pub username: Option<&'a str>,
    pub password: Option<&'a str>,
}

impl CredentialOptions<'_> {
    fn debug_fields(&self, d: &mut std::fmt::DebugStruct<'_, '_>) {
        d.field("ca_file", &self.ca_file)
            .field("cert_file", &self.cert_file)
            .field("key_file", &self.key_file)
            .field("username", &self.username)
            .field("password", &self.password.map(|_| "<hidden>"));
    }
}

/// The settings every lease kind shares, checked.
#[derive(Debug, Clone)]
pub(crate) struct Common {
    pub slots: u32,
    pub identity: String,
    pub reserve_ms: i64,
    pub max_guard_wait_ms: i64,
}

pub(crate) fn check_common(
    layout: Layout,
    slots: Option<u32>,
    identity: &Option<String>,
    reserve_ms: u64,
    max_guard_wait_ms: u64,
) -> Result<Common> {
    let invalid = |reason: String| Error::InvalidNodeSource { reason };
    let all = layout.max_node_id() + 1;
    let slots = match slots {
        None => u32::try_from(all).unwrap_or(u32::MAX),
        Some(n) if n == 0 || u64::from(n) > all => {
            return Err(invalid(format!(
                "slots = {n} is out of range: 1 to {all} (the layout's node ids)"
            )))
        }
        Some(n) => n,
    };
    if !(10..=86_400_000).contains(&reserve_ms) {
        return Err(invalid(format!(
            "reserve_ms = {reserve_ms} is out of range: 10 to 86400000"
        )));
    }
    if max_guard_wait_ms > 31_536_000_000 {
        return Err(invalid(format!(
            "max_guard_wait_ms = {max_guard_wait_ms} is out of range: 0 to 31536000000 (a year)"
        )));
    }
    let identity = match identity {
        Some(i) => i.clone(),
        None => this_hostname()?,
    };
    if identity.is_empty()
        || identity.len() > 160
        || identity.chars().any(|c| c.is_control() || c == '/')
    {
        return Err(invalid(format!(
            "identity {identity:?} must be 1 to 160 bytes without control characters or '/'"
        )));
    }
    Ok(Common {
        slots,
        identity,
        reserve_ms: reserve_ms as i64,
        max_guard_wait_ms: max_guard_wait_ms as i64,
    })
}
