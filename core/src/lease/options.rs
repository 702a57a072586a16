//! The options of the three lease kinds, nested as the stores share them: every lease kind has a
//! [`LeaseCommon`] (slots, identity, reserve, guard wait), and the two remote stores a
//! [`RemoteStore`] (prefix, connect timeout, [`StoreCredentials`]).

use crate::error::{Error, Result};
use crate::layout::Layout;
use std::ffi::OsString;
use std::path::PathBuf;

/// The default high-water-mark reserve of every lease kind: R is kept this far ahead of the
/// clock, so a successor of a crashed holder waits at most this long (5 s). The docs' statements
/// of it are checked against this line (`make test-docs-facts`).
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

/// The names of the fields of [`StoreCredentials`], for [`StoreCredentials::set`]: three PEM
/// file paths, then the user name and its password.
///
/// ```
/// use polyflake::{EtcdLeaseOptions, LEASE_CREDENTIALS};
/// let mut o = EtcdLeaseOptions::default();
/// for name in LEASE_CREDENTIALS {
///     o.store.credentials.set(name, Some(format!("{name}.x").into())).unwrap();
/// }
/// let c = &o.store.credentials;
/// assert_eq!(c.key_file.as_deref(), Some(std::path::Path::new("key_file.x")));
/// assert_eq!(c.password.as_deref(), Some("password.x"));
/// assert!(o.store.credentials.set("token", None).is_err());
/// ```
pub const LEASE_CREDENTIALS: [&str; 5] =
    ["ca_file", "cert_file", "key_file", "username", "password"];

/// The settings every lease kind shares: how many slots, who holds one, how far ahead R is kept,
/// and how long a restart guard may be before a slot is a last resort.
///
/// ```
/// use polyflake::{LeaseCommon, DEFAULT_MAX_GUARD_WAIT_MS, DEFAULT_RESERVE_MS};
/// let c = LeaseCommon::default();
/// assert_eq!((c.slots, c.identity), (None, None));
/// assert_eq!((c.reserve_ms, c.max_guard_wait_ms), (DEFAULT_RESERVE_MS, DEFAULT_MAX_GUARD_WAIT_MS));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeaseCommon {
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
    /// Heal a lost lease (default off): when the store says the slot is no longer ours (an
    /// etcd lease revoked or expired, a ZooKeeper session expired, a slot file deleted or
    /// replaced, the store restored from an older backup), take a new slot in the background,
    /// behind its restart guard, and go on issuing from it, as a restarted process would;
    /// after a store rollback, only once the clock has passed the lost slot's R. The node id
    /// changes; the counters go on. Off: the generator stops for good, as before. See
    /// `lease/heal.rs`.
    pub heal: bool,
}

impl Default for LeaseCommon {
    /// Every slot of the layout, the hostname as identity, [`DEFAULT_RESERVE_MS`],
    /// [`DEFAULT_MAX_GUARD_WAIT_MS`], and no healing.
    fn default() -> Self {
        LeaseCommon {
            slots: None,
            identity: None,
            reserve_ms: DEFAULT_RESERVE_MS,
            max_guard_wait_ms: DEFAULT_MAX_GUARD_WAIT_MS,
            heal: false,
        }
    }
}

impl LeaseCommon {
    /// These settings checked against `layout`, with the defaults filled in (every slot, this
    /// host's name).
    pub(crate) fn check(&self, layout: Layout) -> Result<Common> {
        let invalid = |reason: String| Error::InvalidNodeSource { reason };
        let all = layout.max_node_id() + 1;
        let slots = match self.slots {
            None => u32::try_from(all).unwrap_or(u32::MAX),
            Some(n) if n == 0 || u64::from(n) > all => {
                return Err(invalid(format!(
                    "slots = {n} is out of range: 1 to {all} (the layout's node ids)"
                )))
            }
            Some(n) => n,
        };
        let (reserve_ms, max_guard_wait_ms) = (self.reserve_ms, self.max_guard_wait_ms);
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
        let identity = match &self.identity {
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
}

/// The settings every lease kind shares, checked ([`LeaseCommon::check`]).
#[derive(Debug, Clone)]
pub(crate) struct Common {
    pub slots: u32,
    pub identity: String,
    pub reserve_ms: i64,
    pub max_guard_wait_ms: i64,
}

/// This host's name (`gethostname`): the default lease identity, and the name
/// `NodeSource::Hostname { hostname: None }` reads.
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

/// The TLS and authentication fields of a remote store (etcd or ZooKeeper). Each field left
/// `None` is read from its environment variable when that is set and not empty
/// (`POLYFLAKE_ETCD_*` or `POLYFLAKE_ZOOKEEPER_*`: `CA_FILE`, `CERT_FILE`, `KEY_FILE`,
/// `USERNAME`, `PASSWORD`). The password never appears in `Debug` output.
///
/// ```
/// use polyflake::StoreCredentials;
/// let c = StoreCredentials { username: Some("ids".into()), password: Some("s3cret".into()), ..Default::default() };
/// assert!(!format!("{c:?}").contains("s3cret"));
/// ```
#[derive(Clone, Default, PartialEq, Eq)]
pub struct StoreCredentials {
    /// A PEM file of the CA certificate(s) the servers' certificates must chain to (TLS).
    pub ca_file: Option<PathBuf>,
    /// A PEM file of this client's certificate (with `key_file`), for stores that require one.
    pub cert_file: Option<PathBuf>,
    /// A PEM file of the private key of `cert_file`.
    pub key_file: Option<PathBuf>,
    /// The user to authenticate as (with `password`): etcd's own authentication, or
    /// ZooKeeper's `digest` scheme.
    pub username: Option<String>,
    /// The password of `username`. Prefer the environment variable (or a file the caller
    /// reads) to a literal in code or on a command line.
    pub password: Option<String>,
}

impl std::fmt::Debug for StoreCredentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StoreCredentials")
            .field("ca_file", &self.ca_file)
            .field("cert_file", &self.cert_file)
            .field("key_file", &self.key_file)
            .field("username", &self.username)
            .field("password", &self.password.as_ref().map(|_| "<hidden>"))
            .finish()
    }
}

impl StoreCredentials {
    /// Set the field `name` (one of [`LEASE_CREDENTIALS`]; a path for the `*_file` ones);
    /// `None` leaves it to its environment variable. Another name, or a user name or password
    /// that is not UTF-8, is [`Error::InvalidArgument`].
    pub fn set(&mut self, name: &str, value: Option<OsString>) -> Result<()> {
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

    /// These fields as the store clients read them, for `store` (`etcd` or `zookeeper`) and
    /// its environment variables' prefix.
    #[cfg_attr(
        not(all(any(feature = "etcd", feature = "zookeeper"), not(loom))),
        allow(dead_code)
    )]
    fn view(&self, store: &'static str, env_prefix: &'static str) -> CredentialOptions<'_> {
        CredentialOptions {
            store,
            env_prefix,
            ca_file: self.ca_file.as_deref(),
            cert_file: self.cert_file.as_deref(),
            key_file: self.key_file.as_deref(),
            username: self.username.as_deref(),
            password: self.password.as_deref(),
        }
    }
}

/// Where a remote store keeps a lease's records and how it is reached: the key or znode prefix,
/// the connect timeout and the credentials. The etcd and ZooKeeper options each hold one, with
/// their own defaults ([`EtcdLeaseOptions::new`], [`ZooKeeperLeaseOptions::new`]).
///
/// ```
/// use polyflake::{RemoteStore, DEFAULT_ETCD_PREFIX, DEFAULT_ETCD_TIMEOUT_MS};
/// let s = RemoteStore::new(DEFAULT_ETCD_PREFIX, DEFAULT_ETCD_TIMEOUT_MS);
/// assert_eq!((s.prefix.as_str(), s.connect_timeout_ms), ("/polyflake", 2000));
/// assert_eq!(s.credentials, Default::default());
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoteStore {
    /// The key or znode prefix (default `/polyflake`), one per ID space: slot keys are
    /// `{prefix}/slot/NNNN`, high-water marks `{prefix}/hwm/NNNN`, identities
    /// `{prefix}/owner/{identity}`. For ZooKeeper an absolute path.
    pub prefix: String,
    /// The timeout of connecting and of each request, in ms (default 2,000).
    pub connect_timeout_ms: u64,
    /// TLS and authentication (default: each from its environment variable, else none).
    pub credentials: StoreCredentials,
}

impl RemoteStore {
    /// A store under `prefix` reached within `connect_timeout_ms`, credentials from the
    /// environment.
    pub fn new(prefix: impl Into<String>, connect_timeout_ms: u64) -> RemoteStore {
        RemoteStore {
            prefix: prefix.into(),
            connect_timeout_ms,
            credentials: StoreCredentials::default(),
        }
    }
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
    /// Slots, identity, reserve and guard wait.
    pub common: LeaseCommon,
}

impl FileLeaseOptions {
    /// Options with this directory and every other field at its default.
    pub fn new(dir: impl Into<PathBuf>) -> FileLeaseOptions {
        FileLeaseOptions {
            dir: dir.into(),
            common: LeaseCommon::default(),
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

/// Options of an etcd lease: slot keys under `store.prefix` in an etcd v3 cluster.
///
/// TLS and authentication ([`StoreCredentials`]): `ca_file` (the CA that signed the servers'
/// certificates), `cert_file` and `key_file` (a client certificate, for `--client-cert-auth`
/// clusters) and `username` and `password` (etcd's own authentication). Each field left `None`
/// is read from its environment variable when that is set and not empty:
/// `POLYFLAKE_ETCD_CA_FILE`, `POLYFLAKE_ETCD_CERT_FILE`, `POLYFLAKE_ETCD_KEY_FILE`,
/// `POLYFLAKE_ETCD_USERNAME`, `POLYFLAKE_ETCD_PASSWORD`. With a CA or a client certificate,
/// every endpoint must be an `https://` URL (or a bare `host:port`). The password never appears
/// in `Debug` output.
///
/// ```
/// use polyflake::EtcdLeaseOptions;
/// let o = EtcdLeaseOptions::new(vec!["http://10.0.0.5:2379".into()]);
/// assert_eq!((o.store.prefix.as_str(), o.ttl_s, o.common.reserve_ms), ("/polyflake", 10, 5000));
/// let mut o = EtcdLeaseOptions::new(vec!["https://10.0.0.5:2379".into()]);
/// o.store.credentials.username = Some("ids".into());
/// o.store.credentials.password = Some("s3cret".into());
/// assert!(!format!("{o:?}").contains("s3cret"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EtcdLeaseOptions {
    /// The cluster's client URLs, such as `http://127.0.0.1:2379`.
    pub endpoints: Vec<String>,
    /// The etcd lease's time to live in seconds (default 10): how long a crashed holder's slot
    /// stays taken.
    pub ttl_s: i64,
    /// Prefix (default `/polyflake`), connect timeout (default 2,000 ms) and credentials.
    pub store: RemoteStore,
    /// Slots, identity, reserve and guard wait.
    pub common: LeaseCommon,
}

impl EtcdLeaseOptions {
    /// Options with these endpoints and every other field at its default.
    pub fn new(endpoints: Vec<String>) -> EtcdLeaseOptions {
        EtcdLeaseOptions {
            endpoints,
            ttl_s: DEFAULT_ETCD_TTL_S,
            store: RemoteStore::new(DEFAULT_ETCD_PREFIX, DEFAULT_ETCD_TIMEOUT_MS),
            common: LeaseCommon::default(),
        }
    }

    /// The TLS and authentication fields, as the store clients read them.
    #[cfg_attr(not(all(feature = "etcd", not(loom))), allow(dead_code))]
    pub(crate) fn credentials(&self) -> CredentialOptions<'_> {
        self.store.credentials.view("etcd", "POLYFLAKE_ETCD")
    }
}

impl Default for EtcdLeaseOptions {
    /// One endpoint, `http://127.0.0.1:2379`.
    fn default() -> Self {
        EtcdLeaseOptions::new(vec!["http://127.0.0.1:2379".to_string()])
    }
}

/// Options of a ZooKeeper lease: znodes under `store.prefix` in a ZooKeeper ensemble (3.5 or
/// later).
///
/// The slot is an ephemeral znode `{prefix}/slot/NNNN` (it lives as long as this holder's
/// session), R a persistent znode `{prefix}/hwm/NNNN`, the identity's last slot
/// `{prefix}/owner/{identity}`, the store's ID space `{prefix}/space`.
///
/// TLS and authentication ([`StoreCredentials`]): `ca_file`, `cert_file` and `key_file` as for
/// etcd (with a CA or a client certificate, every server is reached over TLS: give the
/// ensemble's secure client ports), and `username` and `password` for ZooKeeper's `digest`
/// scheme. With a user name, every znode polyflake creates carries the ACL "this user: all;
/// anyone: read", so clients without the credentials can read the store (`polyflake lease
/// inspect`) but cannot take a slot, delete a znode or move R. Each field left `None` is read
/// from its environment variable when that is set and not empty:
/// `POLYFLAKE_ZOOKEEPER_CA_FILE`, `POLYFLAKE_ZOOKEEPER_CERT_FILE`,
/// `POLYFLAKE_ZOOKEEPER_KEY_FILE`, `POLYFLAKE_ZOOKEEPER_USERNAME`,
/// `POLYFLAKE_ZOOKEEPER_PASSWORD`.
///
/// ```
/// use polyflake::ZooKeeperLeaseOptions;
/// let o = ZooKeeperLeaseOptions::new(vec!["10.0.0.5:2181".into(), "10.0.0.6:2181".into()]);
/// let got = (o.store.prefix.as_str(), o.session_timeout_ms, o.common.reserve_ms);
/// assert_eq!(got, ("/polyflake", 10000, 5000));
/// let o = ZooKeeperLeaseOptions::from_ensemble("10.0.0.5:2181,10.0.0.6:2181");
/// assert_eq!(o.ensemble.len(), 2);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ZooKeeperLeaseOptions {
    /// The ensemble's servers, each `host:port` (2181 is ZooKeeper's usual client port).
    pub ensemble: Vec<String>,
    /// The session timeout asked of the ensemble, in ms (default 10,000): the lease's time to
    /// live. The ensemble bounds it (by default 2 to 20 ticks of its `tickTime`).
    pub session_timeout_ms: u64,
    /// Prefix (default `/polyflake`, an absolute path), connect timeout (default 2,000 ms) and
    /// credentials (with a user name, the znodes polyflake creates are writable by that user
    /// only).
    pub store: RemoteStore,
    /// Slots, identity, reserve and guard wait.
    pub common: LeaseCommon,
}

impl ZooKeeperLeaseOptions {
    /// Options with these servers (`host:port` each) and every other field at its default.
    pub fn new(ensemble: Vec<String>) -> ZooKeeperLeaseOptions {
        ZooKeeperLeaseOptions {
            ensemble,
            session_timeout_ms: DEFAULT_ZOOKEEPER_SESSION_TIMEOUT_MS,
            store: RemoteStore::new(DEFAULT_ZOOKEEPER_PREFIX, DEFAULT_ZOOKEEPER_TIMEOUT_MS),
            common: LeaseCommon::default(),
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
    #[cfg_attr(not(all(feature = "zookeeper", not(loom))), allow(dead_code))]
    pub(crate) fn credentials(&self) -> CredentialOptions<'_> {
        self.store
            .credentials
            .view("zookeeper", "POLYFLAKE_ZOOKEEPER")
    }
}

impl Default for ZooKeeperLeaseOptions {
    /// One server, `127.0.0.1:2181`.
    fn default() -> Self {
        ZooKeeperLeaseOptions::new(vec!["127.0.0.1:2181".to_string()])
    }
}

/// The TLS and authentication fields of a remote store's options (borrowed), with the store's
/// name and environment prefix. Without the `etcd` and `zookeeper` features nothing reads them.
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
