//! TLS and authentication for the remote stores (etcd, ZooKeeper): each field from the options,
//! else from its environment variable; files read and checked here, before anything connects,
//! so a missing file or a certificate that does not parse is a clear `InvalidNodeSource` naming
//! the file, never a vague handshake failure later.
//!
//! ## Decisions
//!
//! - **Each field left `None` is read from the environment**
//!   (`POLYFLAKE_ETCD_{CA_FILE,CERT_FILE,KEY_FILE,USERNAME,PASSWORD}`, `POLYFLAKE_ZOOKEEPER_...`,
//!   not empty), here and only here: a binding forwards the fields and a deployment keeps secrets
//!   out of code. The CLI takes every setting as a flag except passwords (a file, or the
//!   environment: never the command line, which `ps` shows). The password never appears in
//!   `Debug` output.
//! - **Checked before connecting**: unreadable, not PEM, a certificate that does not parse, a CA
//!   rustls will not use, a key that is not the certificate's, one of a certificate and key (or
//!   of a user and password) without the other: `InvalidNodeSource` naming the file or field.
//! - **What each store does with them.** etcd: TLS (`https://` endpoints required when TLS options
//!   are set), client certificates, user/password authentication with automatic token refresh.
//!   ZooKeeper: TLS to the secure client port (every server of the ensemble), client certificates
//!   and `digest` authentication; with a user name every znode polyflake creates carries the ACL
//!   `auth:ALL` + `world:anyone:READ` (anyone can inspect, only the user can take a slot or move
//!   R), without one `world:anyone:ALL`. Digest auth never fails by itself (any password makes an
//!   identity): a wrong password shows as "not authorized" on the first protected znode, and the
//!   error says so.
//! - **Errors name the cause**, likely cause first ("the server's certificate is not signed by
//!   ca_file", "the user name or password was refused"). gRPC and the ZooKeeper client hide TLS
//!   failures ("transport error", "no available hosts"), so after a failed TLS connection one
//!   handshake of our own with the same certificates (within `connect_timeout_ms`) appends what
//!   rustls reports. Every connection attempt is bounded by `connect_timeout_ms` (the ZooKeeper
//!   client retries the ensemble within it, each set-up at most 3/5 of the session): an
//!   unreachable store is an error in that time, never a hang.
//! - **One crypto provider: aws-lc-rs**, installed as the process's default rustls provider when
//!   a store uses TLS. `zookeeper-client` depends on `rustls` and `futures-rustls` with their
//!   default features, which are aws-lc-rs, and no feature of ours can switch them off: choosing
//!   ring compiled two providers. `etcd-client` offers `tls-aws-lc`, and the core's own `rustls`
//!   asks for `aws_lc_rs`, so `cargo tree -i ring` prints nothing. The cost: more linked code than
//!   ring (sizes in docs/releasing.md) and a C compiler for its build. Patching or vendoring
//!   `zookeeper-client` was ruled out.

use super::options::CredentialOptions;
use crate::error::{Error, Result};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// What a store client needs, read and checked.
#[derive(Clone)]
pub(crate) struct Credentials {
    /// The CA certificates, PEM.
    pub ca_pem: Option<String>,
    /// The client certificate chain and its key, PEM.
    pub identity: Option<(String, String)>,
    /// User name and password.
    pub user: Option<(String, String)>,
}

impl Credentials {
    /// True when the store is reached over TLS.
    pub fn tls(&self) -> bool {
        self.ca_pem.is_some() || self.identity.is_some()
    }

    /// The user name, if any.
    #[cfg_attr(not(feature = "zookeeper"), allow(dead_code))]
    pub fn username(&self) -> Option<&str> {
        self.user.as_ref().map(|(u, _)| u.as_str())
    }
}

/// The process's rustls provider: aws-lc-rs (the one provider compiled in), installed once as
/// the process default, which both store clients build their TLS configurations on.
pub(crate) fn install_crypto_provider() {
    let _ = rustls::crypto::aws_lc_rs::default_provider().install_default();
}

impl CredentialOptions<'_> {
    fn env(&self, field: &str) -> Option<String> {
        std::env::var(format!("{}_{field}", self.env_prefix))
            .ok()
            .filter(|v| !v.is_empty())
    }

    fn path(&self, given: Option<&Path>, field: &str) -> Option<(PathBuf, String)> {
        let name = field.to_ascii_lowercase();
        match given {
            Some(p) => Some((p.to_path_buf(), name)),
            None => self.env(field).map(|p| {
                (
                    PathBuf::from(p),
                    format!("{name} (from {}_{field})", self.env_prefix),
                )
            }),
        }
    }

    /// Read every field (options first, then the environment) and check it.
    pub(crate) fn resolve(&self) -> Result<Credentials> {
        let store = self.store;
        let invalid = |reason: String| Error::InvalidNodeSource {
            reason: format!("{store}: {reason}"),
        };
        let read = |(path, name): &(PathBuf, String)| -> Result<String> {
            let bytes = std::fs::read(path)
                .map_err(|e| invalid(format!("{name} {}: cannot read it: {e}", path.display())))?;
            String::from_utf8(bytes)
                .map_err(|_| invalid(format!("{name} {}: not a PEM text file", path.display())))
        };
        let certs =
            |pem: &str, (path, name): &(PathBuf, String)| -> Result<Vec<CertificateDer<'static>>> {
                let bad = |why: String| invalid(format!("{name} {}: {why}", path.display()));
                let certs: Vec<CertificateDer<'static>> =
                    CertificateDer::pem_slice_iter(pem.as_bytes())
                        .collect::<std::result::Result<_, _>>()
                        .map_err(|e| bad(format!("not a PEM certificate file: {e:?}")))?;
                if certs.is_empty() {
                    return Err(bad("no PEM CERTIFICATE block in it".into()));
                }
                for c in &certs {
                    rustls::server::ParsedCertificate::try_from(c)
                        .map_err(|e| bad(format!("a certificate that does not parse: {e}")))?;
                }
                Ok(certs)
            };

        let ca = self.path(self.ca_file, "CA_FILE");
        let ca_pem = match &ca {
            Some(f) => {
                let pem = read(f)?;
                let mut roots = rustls::RootCertStore::empty();
                for c in certs(&pem, f)? {
                    roots.add(c).map_err(|e| {
                        invalid(format!(
                            "{} {}: not a usable CA certificate: {e}",
                            f.1,
                            f.0.display()
                        ))
                    })?;
                }
                Some(pem)
            }
            None => None,
        };

        let cert = self.path(self.cert_file, "CERT_FILE");
        let key = self.path(self.key_file, "KEY_FILE");
        let identity = match (&cert, &key) {
            (None, None) => None,
            (Some(c), None) => {
                return Err(invalid(format!(
                    "{} {} needs key_file (the client certificate's private key)",
                    c.1,
                    c.0.display()
                )))
            }
            (None, Some(k)) => {
                return Err(invalid(format!(
                    "{} {} needs cert_file (the client certificate)",
                    k.1,
                    k.0.display()
                )))
            }
            (Some(c), Some(k)) => {
                let cert_pem = read(c)?;
                let chain = certs(&cert_pem, c)?;
                let key_pem = read(k)?;
                let key = PrivateKeyDer::from_pem_slice(key_pem.as_bytes()).map_err(|e| {
                    invalid(format!(
                        "{} {}: no PEM private key in it: {e:?}",
                        k.1,
                        k.0.display()
                    ))
                })?;
                // The key must be one rustls can sign with, and belong to the certificate.
                install_crypto_provider();
                let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
                rustls::ClientConfig::builder_with_provider(provider)
                    .with_safe_default_protocol_versions()
                    .map_err(|e| invalid(format!("TLS set-up: {e}")))?
                    .with_root_certificates(rustls::RootCertStore::empty())
                    .with_client_auth_cert(chain, key)
                    .map_err(|e| {
                        invalid(format!(
                            "{} {} and {} {} are not a certificate and its private key: {e}",
                            c.1,
                            c.0.display(),
                            k.1,
                            k.0.display()
                        ))
                    })?;
                Some((cert_pem, key_pem))
            }
        };

        let username = self
            .username
            .map(str::to_string)
            .or_else(|| self.env("USERNAME"));
        let password = self
            .password
            .map(str::to_string)
            .or_else(|| self.env("PASSWORD"));
        let user = match (username, password) {
            (None, None) => None,
            (Some(u), Some(p)) => {
                if u.is_empty() || u.chars().any(|c| c.is_control() || c == ':') {
                    return Err(invalid(format!(
                        "user name {u:?} must be 1 or more characters without ':' or control characters"
                    )));
                }
                Some((u, p))
            }
            (Some(u), None) => {
                return Err(invalid(format!(
                    "user {u:?} has no password: set password, or {}_PASSWORD",
                    self.env_prefix
                )))
            }
            (None, Some(_)) => {
                return Err(invalid(format!(
                    "a password without a user name: set username, or {}_USERNAME",
                    self.env_prefix
                )))
            }
        };
        Ok(Credentials {
            ca_pem,
            identity,
            user,
        })
    }
}

/// A rustls client configuration for these credentials (ring provider).
fn client_config(creds: &Credentials) -> std::result::Result<rustls::ClientConfig, String> {
    install_crypto_provider();
    let mut roots = rustls::RootCertStore::empty();
    if let Some(ca) = &creds.ca_pem {
        for c in CertificateDer::pem_slice_iter(ca.as_bytes()).flatten() {
            roots.add(c).map_err(|e| e.to_string())?;
        }
    }
    let builder = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::aws_lc_rs::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .map_err(|e| e.to_string())?
    .with_root_certificates(roots);
    match &creds.identity {
        Some((cert, key)) => {
            let chain = CertificateDer::pem_slice_iter(cert.as_bytes())
                .collect::<std::result::Result<Vec<_>, _>>()
                .map_err(|e| format!("{e:?}"))?;
            let key =
                PrivateKeyDer::from_pem_slice(key.as_bytes()).map_err(|e| format!("{e:?}"))?;
            builder
                .with_client_auth_cert(chain, key)
                .map_err(|e| e.to_string())
        }
        None => Ok(builder.with_no_client_auth()),
    }
}

/// Why a TLS connection to `server` (`host:port`) fails, if it does: a handshake of our own with
/// the same certificates, for the store clients whose errors do not say (a ZooKeeper client
/// reports only "no available hosts"). `None` when the handshake succeeds or the server cannot
/// be reached at all. Blocking, bounded by `timeout` per step.
pub(crate) fn probe_tls(
    server: &str,
    creds: &Credentials,
    timeout: std::time::Duration,
) -> Option<String> {
    use std::io::Read;
    use std::net::ToSocketAddrs;
    let hostport = server
        .split_once("://")
        .map_or(server, |(_, rest)| rest)
        .trim_end_matches('/');
    let (host, _) = hostport.rsplit_once(':')?;
    let host = host
        .trim_start_matches('[')
        .trim_end_matches(']')
        .to_string();
    let addr = hostport.to_socket_addrs().ok()?.next()?;
    let mut sock = std::net::TcpStream::connect_timeout(&addr, timeout).ok()?;
    let _ = sock.set_read_timeout(Some(timeout.min(std::time::Duration::from_millis(500))));
    let _ = sock.set_write_timeout(Some(timeout));
    let config = match client_config(creds) {
        Ok(c) => c,
        Err(e) => return Some(e),
    };
    let name = rustls::pki_types::ServerName::try_from(host).ok()?;
    let mut conn = rustls::ClientConnection::new(Arc::new(config), name).ok()?;
    while conn.is_handshaking() {
        if let Err(e) = conn.complete_io(&mut sock) {
            return Some(e.to_string());
        }
    }
    // With TLS 1.3 a server that refuses our certificate says so after the handshake: read.
    let mut byte = [0u8; 1];
    match rustls::Stream::new(&mut conn, &mut sock).read(&mut byte) {
        Err(e)
            if !matches!(
                e.kind(),
                std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
            ) =>
        {
            Some(e.to_string())
        }
        _ => None,
    }
}

/// A store connection error with the likely cause named first (TLS and RPC errors rarely say
/// it plainly).
pub(crate) fn explain(tls: bool, e: String) -> String {
    let lower = e.to_ascii_lowercase();
    let hint = if lower.contains("authentication failed") || lower.contains("invalid user") {
        "the user name or password was refused"
    } else if lower.contains("unknownissuer") || lower.contains("unknown issuer") {
        "the server's certificate is not signed by ca_file"
    } else if lower.contains("certificaterequired")
        || lower.contains("certificate required")
        || lower.contains("bad certificate")
        || lower.contains("badcertificate")
    {
        "the server requires a client certificate it accepts (cert_file and key_file)"
    } else if lower.contains("notvalidforname") || lower.contains("not valid for name") {
        "the server's certificate does not name the host connected to"
    } else if tls && (lower.contains("corrupt") || lower.contains("invalidcontenttype")) {
        "TLS to a server that does not speak TLS on this port"
    } else {
        ""
    };
    if hint.is_empty() {
        e
    } else {
        format!("{hint}: {e}")
    }
}
