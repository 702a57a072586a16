//! Where a generator's node id comes from: [`NodeSource`], its kinds, and the fixed sources
//! (static, environment, hostname, IPv4). The lease kinds' options live in `options.rs`.
//!
//! ## Decisions
//!
//! - **One enum of sources**, and no guesses: `Env` reads plain decimal digits only (unset or not
//!   a number is `InvalidNodeSource`, out of range `InvalidNodeId`); `Hostname` takes the digits
//!   after the last `-` of the first label (`ids-7.ids.svc` -> 7; no ordinal is
//!   `InvalidNodeSource`); `Ipv4` takes the low `32 - prefix_len` bits, refused unless they fit
//!   the node field (a /22 for 10 bits).
//! - **The IPv4 prefix reaches the core as the integer received** (C's `int64_t`, Node's Number
//!   or bigint, Python's int, as `i128`): `/300`, `/33` and `/-1` are the core's
//!   `InvalidNodeSource` with its message in every binding, never clamped by a binding.

use super::options::{this_hostname, EtcdLeaseOptions, FileLeaseOptions, ZooKeeperLeaseOptions};
use crate::error::{Error, Result};
use crate::layout::Layout;
use std::net::Ipv4Addr;

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
