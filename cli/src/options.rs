//! Options shared by `next` and `serve`: where the node id comes from, and the generator's
//! settings. Every check on the values (node id range, layout, epoch, wait budget) is the core's:
//! this module only hands them to [`polyflake::Builder`].
//!
//! ## Decisions
//!
//! - **`--clock precise|coarse`** is the core's `ClockSource::from_name` (its error, exit 2);
//!   health, the banner and `next --output json` show the source in effect.
//! - **Store flags**: `--etcd-connect-timeout-ms` and `--zookeeper-connect-timeout-ms` (the
//!   core's 2,000 unless set) bound how long an unreachable store can hold a command or the
//!   service's start. Passwords have no flag of their own (`--etcd-password-file`,
//!   `--zookeeper-password-file`, or the core's environment variables: never the command line,
//!   which `ps` shows). The two stores' credential flags are read by one function
//!   (`credentials`).
//! - **Docs are executed**: `cli/tests/docs.rs` runs every session of docs/cli.md and the README,
//!   with minted numbers, UUIDs and ULIDs masked (every key, word, code and line still checked).

use crate::error::CliError;
use clap::Args;
use polyflake::{
    Builder, Clock, ClockSource, EtcdLeaseOptions, FileLeaseOptions, Generator, Layout,
    LeaseCommon, Mode, NodeSource, RemoteStore, RestartGuard, RestartGuardOptions, Settings,
    StoreCredentials, TimeIdBuilder, ZooKeeperLeaseOptions,
};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Where the generator's node id comes from: at most one of these; none means a file lease in
/// the core's default directory ([`polyflake::default_lease_dir`]).
#[derive(Debug, Clone, Args)]
#[group(skip)]
pub struct NodeArgs {
    /// A fixed node id (checked against the layout by the core).
    #[arg(
        long,
        value_name = "N",
        allow_negative_numbers = true,
        group = "node_source"
    )]
    pub node_id: Option<i128>,
    /// Read the node id from this environment variable (a decimal integer).
    #[arg(long, value_name = "VAR", group = "node_source")]
    pub node_id_env: Option<String>,
    /// The ordinal at the end of a StatefulSet-style hostname (`ids-7` -> 7): this host's name,
    /// or the one given with `=NAME`.
    #[arg(long, value_name = "NAME", num_args = 0..=1, require_equals = true,
          default_missing_value = "", group = "node_source")]
    pub node_id_from_hostname: Option<String>,
    /// The low bits of an IPv4 address in a stated subnet, `ADDR/PREFIX` (e.g. 10.1.7.9/22);
    /// refused unless the host bits fit the node field.
    #[arg(long, value_name = "ADDR/PREFIX", group = "node_source")]
    pub node_id_from_ipv4: Option<String>,
    /// Lease a node id from this directory of slot files (one host; the default source, in
    /// /var/tmp/polyflake-leases: see `polyflake lease inspect`).
    #[arg(long, value_name = "DIR", group = "node_source")]
    pub lease_dir: Option<PathBuf>,
    /// Lease a node id from this etcd v3 cluster (repeat for more endpoints), e.g.
    /// http://127.0.0.1:2379.
    #[arg(long = "etcd", value_name = "URL", num_args = 1.., group = "node_source")]
    pub etcd: Vec<String>,
    /// The etcd key prefix.
    #[arg(long, value_name = "PREFIX", default_value = polyflake::DEFAULT_ETCD_PREFIX, requires = "etcd")]
    pub etcd_prefix: String,
    /// The etcd lease's time to live in seconds (how long a crashed holder's slot stays taken).
    #[arg(long, value_name = "S", default_value_t = polyflake::DEFAULT_ETCD_TTL_S, requires = "etcd",
          allow_negative_numbers = true)]
    pub etcd_ttl_s: i64,
    /// The timeout of connecting to etcd and of each request, in ms: an unreachable cluster
    /// fails within it.
    #[arg(long, value_name = "MS", default_value_t = polyflake::DEFAULT_ETCD_TIMEOUT_MS,
          requires = "etcd")]
    pub etcd_connect_timeout_ms: u64,
    /// Lease a node id from this ZooKeeper ensemble: host:port servers separated by commas (or
    /// repeated), e.g. 10.0.0.5:2181,10.0.0.6:2181.
    #[arg(long = "zookeeper", value_name = "HOST:PORT,...", num_args = 1.., group = "node_source")]
    pub zookeeper: Vec<String>,
    /// The ZooKeeper znode prefix.
    #[arg(long, value_name = "PREFIX", default_value = polyflake::DEFAULT_ZOOKEEPER_PREFIX, requires = "zookeeper")]
    pub zookeeper_prefix: String,
    /// The ZooKeeper session timeout in ms: the lease's time to live (how long a crashed
    /// holder's slot stays taken).
    #[arg(long, value_name = "MS", default_value_t = polyflake::DEFAULT_ZOOKEEPER_SESSION_TIMEOUT_MS,
          requires = "zookeeper")]
    pub zookeeper_session_timeout_ms: u64,
    /// The timeout of connecting to the ensemble and of each request, in ms: an unreachable
    /// ensemble fails within it.
    #[arg(long, value_name = "MS", default_value_t = polyflake::DEFAULT_ZOOKEEPER_TIMEOUT_MS,
          requires = "zookeeper")]
    pub zookeeper_connect_timeout_ms: u64,
    /// TLS and authentication of the etcd or ZooKeeper store.
    #[command(flatten)]
    pub store_auth: StoreAuthArgs,
    /// Leases: how many slots (node ids 0..N-1) to use (default: every node id of the layout).
    #[arg(long, value_name = "N")]
    pub slots: Option<u32>,
    /// Leases: a stable identity whose previous slot is tried first (default: the hostname).
    #[arg(long, value_name = "NAME")]
    pub lease_identity: Option<String>,
    /// Leases: how far ahead of the clock the high-water mark is kept, in ms (the longest a
    /// successor of a crashed holder waits).
    #[arg(long, value_name = "MS", default_value_t = polyflake::DEFAULT_RESERVE_MS)]
    pub lease_reserve_ms: u64,
    /// Leases: a free slot whose restart guard is longer than this (its previous holder issued
    /// that far ahead, after a clock stepped forward) is taken only when nothing else is free.
    #[arg(long, value_name = "MS", default_value_t = polyflake::DEFAULT_MAX_GUARD_WAIT_MS)]
    pub max_guard_wait_ms: u64,
    /// Leases: a lost lease (revoked, expired, its slot deleted, the store restored from a
    /// backup) stops the 64-bit IDs for good instead of healing. By default a lost lease heals:
    /// a new slot is taken behind its restart guard (after a store rollback, once the clock has
    /// passed the old high-water mark) and IDs are issued from it.
    #[arg(long)]
    pub no_heal: bool,
    /// A fixed node id's restart guard: `auto` keeps a mark on this host where the state
    /// directory allows it, `required` refuses to start without one, `off` keeps none (default:
    /// POLYFLAKE_RESTART_GUARD, else auto).
    #[arg(long, value_name = "auto|required|off", value_parser = restart_guard)]
    pub restart_guard: Option<RestartGuard>,
    /// Where a fixed node id's mark is kept (default: POLYFLAKE_STATE_DIR, else the lease
    /// directory).
    #[arg(long, value_name = "DIR")]
    pub state_dir: Option<PathBuf>,
    /// The host scope of the node id's claim: generators in different scopes may hold the
    /// same node id and layout on one host, on purpose (default: POLYFLAKE_HOST_SCOPE).
    #[arg(long, value_name = "NAME")]
    pub host_scope: Option<String>,
}

fn restart_guard(text: &str) -> Result<RestartGuard, String> {
    RestartGuard::from_name(text).map_err(|e| e.to_string())
}

impl NodeArgs {
    /// The lease flags every store's options share.
    fn lease_common(&self) -> LeaseCommon {
        LeaseCommon {
            slots: self.slots,
            identity: self.lease_identity.clone(),
            reserve_ms: self.lease_reserve_ms,
            max_guard_wait_ms: self.max_guard_wait_ms,
            heal: !self.no_heal,
        }
    }

    /// True when a node id source other than a lease was named.
    fn names_node_id(&self) -> bool {
        self.node_id.is_some()
            || self.node_id_env.is_some()
            || self.node_id_from_hostname.is_some()
            || self.node_id_from_ipv4.is_some()
    }

    /// True when a lease setting was moved from its default.
    fn tunes_lease(&self) -> bool {
        self.slots.is_some()
            || self.lease_identity.is_some()
            || self.lease_reserve_ms != polyflake::DEFAULT_RESERVE_MS
            || self.max_guard_wait_ms != polyflake::DEFAULT_MAX_GUARD_WAIT_MS
            || self.no_heal
    }

    /// The node source these options name (the file lease in the default directory if none).
    pub fn source(&self) -> Result<NodeSource, CliError> {
        // The sources are one clap group, so naming a node id means no lease.
        if self.names_node_id() && self.tunes_lease() {
            return Err(CliError::Usage(
                "--slots, --lease-identity, --lease-reserve-ms, --max-guard-wait-ms and --no-heal apply to a lease (--lease-dir, --etcd or --zookeeper) only".into(),
            ));
        }
        if let Some(n) = self.node_id {
            return Ok(NodeSource::Static(n));
        }
        if let Some(var) = &self.node_id_env {
            return Ok(NodeSource::Env { var: var.clone() });
        }
        if let Some(h) = &self.node_id_from_hostname {
            let hostname = (!h.is_empty()).then(|| h.clone());
            return Ok(NodeSource::Hostname { hostname });
        }
        if let Some(text) = &self.node_id_from_ipv4 {
            let bad = || {
                CliError::Usage(format!(
                    "--node-id-from-ipv4 {text:?}: expected ADDR/PREFIX such as 10.1.7.9/22"
                ))
            };
            let (addr, prefix) = text.split_once('/').ok_or_else(bad)?;
            return Ok(NodeSource::ipv4(addr, prefix.parse().map_err(|_| bad())?)?);
        }
        if !self.etcd.is_empty() {
            return Ok(NodeSource::Etcd(EtcdLeaseOptions {
                ttl_s: self.etcd_ttl_s,
                store: RemoteStore {
                    prefix: self.etcd_prefix.clone(),
                    connect_timeout_ms: self.etcd_connect_timeout_ms,
                    credentials: self.store_auth.etcd()?,
                },
                common: self.lease_common(),
                ..EtcdLeaseOptions::new(self.etcd.clone())
            }));
        }
        if !self.zookeeper.is_empty() {
            return Ok(NodeSource::ZooKeeper(ZooKeeperLeaseOptions {
                session_timeout_ms: self.zookeeper_session_timeout_ms,
                store: RemoteStore {
                    prefix: self.zookeeper_prefix.clone(),
                    connect_timeout_ms: self.zookeeper_connect_timeout_ms,
                    credentials: self.store_auth.zookeeper()?,
                },
                common: self.lease_common(),
                ..zookeeper_options(&self.zookeeper)
            }));
        }
        let dir = self.lease_dir.clone();
        Ok(NodeSource::FileLease(FileLeaseOptions {
            dir: dir.unwrap_or_else(polyflake::default_lease_dir),
            common: self.lease_common(),
        }))
    }

    /// True when any node-source or lease flag was given (the UUIDv7 and ULID formats take
    /// none: they need no node id).
    pub fn is_given(&self) -> bool {
        self.names_node_id()
            || self.lease_dir.is_some()
            || !self.etcd.is_empty()
            || !self.zookeeper.is_empty()
            || self.tunes_lease()
    }

    /// A builder for the chosen node source, with the restart guard and host scope flags.
    pub fn builder(&self) -> Result<Builder, CliError> {
        let mut b = Generator::builder_from(self.source()?).restart_guard(RestartGuardOptions {
            mode: self.restart_guard,
            state_dir: self.state_dir.clone(),
            ..RestartGuardOptions::default()
        });
        if let Some(scope) = &self.host_scope {
            b = b.host_scope(scope.clone());
        }
        Ok(b)
    }
}

/// `--zookeeper` values: each may hold several servers separated by commas.
pub fn zookeeper_options(servers: &[String]) -> ZooKeeperLeaseOptions {
    ZooKeeperLeaseOptions::from_ensemble(&servers.join(","))
}

/// TLS and authentication of a remote lease store. Passwords are never taken on the command
/// line: from a file (`--etcd-password-file`, `--zookeeper-password-file`) or from the
/// environment (`POLYFLAKE_ETCD_PASSWORD`, `POLYFLAKE_ZOOKEEPER_PASSWORD`; the other settings
/// have variables too, read by the core when the flag is absent).
#[derive(Debug, Clone, Args)]
pub struct StoreAuthArgs {
    /// etcd: the CA certificate(s) (PEM) the servers' certificates must chain to
    #[arg(long, value_name = "FILE", requires = "etcd")]
    etcd_ca_file: Option<PathBuf>,
    /// etcd: this client's certificate (PEM), with --etcd-key-file
    #[arg(long, value_name = "FILE", requires = "etcd")]
    etcd_cert_file: Option<PathBuf>,
    /// etcd: the private key (PEM) of --etcd-cert-file
    #[arg(long, value_name = "FILE", requires = "etcd")]
    etcd_key_file: Option<PathBuf>,
    /// etcd: the user to authenticate as
    #[arg(long, value_name = "NAME", requires = "etcd")]
    etcd_username: Option<String>,
    /// etcd: a file holding the password (one line), or set POLYFLAKE_ETCD_PASSWORD
    #[arg(long, value_name = "FILE", requires = "etcd")]
    etcd_password_file: Option<PathBuf>,
    /// ZooKeeper: the CA certificate(s) (PEM) the servers' certificates must chain to (the
    /// ensemble's secure client port)
    #[arg(long, value_name = "FILE", requires = "zookeeper")]
    zookeeper_ca_file: Option<PathBuf>,
    /// ZooKeeper: this client's certificate (PEM), with --zookeeper-key-file
    #[arg(long, value_name = "FILE", requires = "zookeeper")]
    zookeeper_cert_file: Option<PathBuf>,
    /// ZooKeeper: the private key (PEM) of --zookeeper-cert-file
    #[arg(long, value_name = "FILE", requires = "zookeeper")]
    zookeeper_key_file: Option<PathBuf>,
    /// ZooKeeper: the digest user to authenticate as; the znodes polyflake creates are then
    /// writable by this user only
    #[arg(long, value_name = "NAME", requires = "zookeeper")]
    zookeeper_username: Option<String>,
    /// ZooKeeper: a file holding the password (one line), or set POLYFLAKE_ZOOKEEPER_PASSWORD
    #[arg(long, value_name = "FILE", requires = "zookeeper")]
    zookeeper_password_file: Option<PathBuf>,
}

impl StoreAuthArgs {
    /// The `--etcd-*` TLS and authentication flags (absent ones stay `None`: the core reads
    /// the environment).
    pub fn etcd(&self) -> Result<StoreCredentials, CliError> {
        credentials(
            [
                &self.etcd_ca_file,
                &self.etcd_cert_file,
                &self.etcd_key_file,
            ],
            &self.etcd_username,
            &self.etcd_password_file,
            "--etcd-password-file",
        )
    }

    /// The `--zookeeper-*` TLS and authentication flags (absent ones stay `None`: the core
    /// reads the environment).
    pub fn zookeeper(&self) -> Result<StoreCredentials, CliError> {
        credentials(
            [
                &self.zookeeper_ca_file,
                &self.zookeeper_cert_file,
                &self.zookeeper_key_file,
            ],
            &self.zookeeper_username,
            &self.zookeeper_password_file,
            "--zookeeper-password-file",
        )
    }
}

/// One store's credentials from its flags: the CA, certificate and key files, the user name,
/// and the password read from the file given to `password_flag`.
fn credentials(
    [ca_file, cert_file, key_file]: [&Option<PathBuf>; 3],
    username: &Option<String>,
    password_file: &Option<PathBuf>,
    password_flag: &str,
) -> Result<StoreCredentials, CliError> {
    Ok(StoreCredentials {
        ca_file: ca_file.clone(),
        cert_file: cert_file.clone(),
        key_file: key_file.clone(),
        username: username.clone(),
        password: match password_file {
            Some(p) => Some(read_password(password_flag, p)?),
            None => None,
        },
    })
}

/// A password file's content: its first line, without the line ending.
fn read_password(flag: &str, path: &Path) -> Result<String, CliError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| CliError::Usage(format!("{flag} {}: cannot read it: {e}", path.display())))?;
    let line = text.lines().next().unwrap_or("");
    if line.is_empty() {
        return Err(CliError::Usage(format!(
            "{flag} {}: the file is empty",
            path.display()
        )));
    }
    Ok(line.to_string())
}

/// The generator's settings.
#[derive(Debug, Clone, Args)]
pub struct GenArgs {
    /// Monotonic mode: never wait; borrow from the next millisecond on a rewind or a burst
    /// (timestamps may run ahead of the wall clock). Default: strict.
    #[arg(long)]
    pub monotonic: bool,
    /// A preset (default, long_lived, big_fleet, short; see `polyflake layouts`) or T/N/S bits
    /// such as 41/10/12.
    #[arg(long, value_name = "NAME", default_value = "default")]
    pub layout: String,
    /// The epoch in Unix milliseconds (default 2024-01-01T00:00:00Z).
    #[arg(long, value_name = "MS", default_value_t = polyflake::DEFAULT_EPOCH_MS, allow_negative_numbers = true)]
    pub epoch_ms: i64,
    /// Strict mode's wait budget in ms: smaller rewinds are waited out, larger ones refused.
    #[arg(long, value_name = "MS", value_parser = typed_ms, allow_negative_numbers = true,
          default_value_t = TypedMs::from(polyflake::DEFAULT_MAX_WAIT_MS))]
    pub max_wait_ms: TypedMs,
    /// Monotonic mode's limit on running ahead of the wall clock, in ms, or `off` (unbounded).
    #[arg(long, value_name = "MS|off", value_parser = lead_limit, allow_negative_numbers = true,
          default_value_t = LeadLimit(Some(polyflake::DEFAULT_MAX_LEAD_MS)))]
    pub max_lead_ms: LeadLimit,
    /// Refuse to issue while the kernel says the system clock is not synchronized or its
    /// maximum error is over this many ms (default: reported in health only).
    #[arg(long, value_name = "MS")]
    pub max_clock_error_ms: Option<u64>,
    /// How far the wall clock may read ahead of the time elapsed since it was last trusted
    /// before it is a forward step that nothing is issued from, in ms, or `off`.
    #[arg(long, value_name = "MS|off", value_parser = forward_step,
          default_value_t = ForwardStep(Some(polyflake::DEFAULT_MAX_FORWARD_STEP_MS)))]
    pub max_forward_step_ms: ForwardStep,
    /// How long a stepped-ahead clock must hold before it is believed, in ms.
    #[arg(long, value_name = "MS", default_value_t = polyflake::DEFAULT_FORWARD_CONFIRM_MS)]
    pub forward_confirm_ms: u64,
    /// Which clock reading each ID takes: `precise` (the default) or `coarse` (the last tick:
    /// cheaper, never ahead of the wall clock, timestamps up to one tick older; health says
    /// when the system's coarse clock is unusable and the precise one is used instead).
    #[arg(long, value_name = "precise|coarse", default_value = "precise")]
    pub clock: String,
}

/// A number of ms as typed (`--max-wait-ms`): its value, and its text, so a refusal says what
/// was typed (`1e308`, not the 309 digits of the `f64`).
#[derive(Debug, Clone, PartialEq)]
pub struct TypedMs {
    /// The value.
    pub value: f64,
    /// The text typed (or the default's).
    pub text: String,
}

impl From<f64> for TypedMs {
    fn from(value: f64) -> TypedMs {
        TypedMs {
            value,
            text: value.to_string(),
        }
    }
}

impl std::fmt::Display for TypedMs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text)
    }
}

fn typed_ms(text: &str) -> Result<TypedMs, String> {
    match text.parse::<f64>() {
        Ok(value) if value.is_finite() => Ok(TypedMs {
            value,
            text: text.to_string(),
        }),
        Ok(_) => Err(format!("{text:?} is not a finite number of ms")),
        Err(_) => Err(format!("{text:?} is not a number of ms")),
    }
}

/// `--max-lead-ms`: a number of ms, or `off` (unbounded).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LeadLimit(pub Option<i64>);

impl std::fmt::Display for LeadLimit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0 {
            Some(ms) => write!(f, "{ms}"),
            None => f.write_str("off"),
        }
    }
}

fn lead_limit(text: &str) -> Result<LeadLimit, String> {
    if text == "off" {
        return Ok(LeadLimit(None));
    }
    text.parse()
        .map(|ms| LeadLimit(Some(ms)))
        .map_err(|_| format!("{text:?} is not a number of ms or `off`"))
}

/// `--max-forward-step-ms`: a number of ms, or `off` (no check).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ForwardStep(pub Option<u64>);

impl std::fmt::Display for ForwardStep {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0 {
            Some(ms) => write!(f, "{ms}"),
            None => f.write_str("off"),
        }
    }
}

fn forward_step(text: &str) -> Result<ForwardStep, String> {
    if text == "off" {
        return Ok(ForwardStep(None));
    }
    text.parse()
        .map(|ms| ForwardStep(Some(ms)))
        .map_err(|e: std::num::ParseIntError| match e.kind() {
            std::num::IntErrorKind::PosOverflow => {
                format!("{text:?} is too large: at most {} ms, or `off`", u64::MAX)
            }
            _ => format!("{text:?} is not a number of ms or `off`"),
        })
}

impl GenArgs {
    /// The layout named by `--layout`.
    pub fn layout(&self) -> Result<Layout, CliError> {
        Ok(Layout::from_name(&self.layout)?)
    }

    /// The clock source named by `--clock` (the core's names and its error for any other).
    pub fn clock_source(&self) -> Result<ClockSource, CliError> {
        Ok(ClockSource::from_name(&self.clock)?)
    }

    fn mode(&self) -> Mode {
        if self.monotonic {
            Mode::Monotonic
        } else {
            Mode::Strict
        }
    }

    /// The ONE core `Settings` every format's builder takes, from `--clock`, `--monotonic`,
    /// `--max-wait-ms`, `--max-lead-ms` and the forward-step flags, and an injected clock if any
    /// (the service's test clock).
    pub fn settings(&self, clock: Option<Arc<dyn Clock>>) -> Result<Settings, CliError> {
        Ok(Settings {
            clock_source: self.clock_source()?,
            mode: self.mode(),
            max_wait_ms: self.max_wait_ms.value,
            max_lead_ms: self.max_lead_ms.0,
            max_forward_step_ms: self.max_forward_step_ms.0,
            forward_confirm_ms: self.forward_confirm_ms,
            clock,
            max_clock_error_ms: self.max_clock_error_ms,
        })
    }

    /// The settings of a UUIDv7 or ULID generator: these flags less the layout and epoch
    /// (which are the Snowflake format's), optionally on an injected clock.
    pub fn time_id_builder(
        &self,
        clock: Option<Arc<dyn Clock>>,
    ) -> Result<TimeIdBuilder, CliError> {
        Ok(TimeIdBuilder::new().settings(self.settings(clock)?))
    }

    /// True when `--layout` or `--epoch-ms` was moved from its default (they describe the
    /// Snowflake format only).
    pub fn layout_given(&self) -> bool {
        self.layout != "default" || self.epoch_ms != polyflake::DEFAULT_EPOCH_MS
    }

    /// Make the generator, optionally on an injected clock (the service's test clock).
    pub fn build(
        &self,
        node: &NodeArgs,
        clock: Option<Arc<dyn Clock>>,
    ) -> Result<Generator, CliError> {
        let b = node.builder()?.settings(self.settings(clock)?);
        let b = b.layout(self.layout()?).epoch_ms(self.epoch_ms);
        b.build().map_err(|e| self.as_typed(e).into())
    }

    /// The core's refusal of `--max-wait-ms`, saying the value as it was typed (the core
    /// writes the `f64`: `1e308` would be 309 digits); any other error as it is.
    pub fn as_typed(&self, e: polyflake::Error) -> polyflake::Error {
        let typed = &self.max_wait_ms;
        match e {
            polyflake::Error::InvalidArgument { name, reason } if name == "max_wait_ms" => {
                polyflake::Error::InvalidArgument {
                    name,
                    reason: reason.replacen(&typed.value.to_string(), &typed.text, 1),
                }
            }
            e => e,
        }
    }
}

/// `--layout` and `--epoch-ms` for commands that only decode.
#[derive(Debug, Clone, Args)]
pub struct DecodeArgs {
    /// The layout the IDs were made with: a preset name or T/N/S.
    #[arg(long, value_name = "NAME", default_value = "default")]
    pub layout: String,
    /// The epoch the IDs were made with, Unix milliseconds.
    #[arg(long, value_name = "MS", default_value_t = polyflake::DEFAULT_EPOCH_MS, allow_negative_numbers = true)]
    pub epoch_ms: i64,
}
