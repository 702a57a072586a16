//! The ZooKeeper client as the lease uses it: connecting (TLS, digest credentials, the fork
//! check), calls with a timeout, what a failed call says, the checked options and the ACL of
//! every znode created.

use super::*;

/// The fork generation in which this process first used the ZooKeeper client (`u64::MAX`:
/// never).
pub(super) static USED_IN: AtomicU64 = AtomicU64::new(u64::MAX);

/// Refuse in a process forked after the client was used (see the module's notes on fork).
pub(super) fn check_fork(store: &str) -> Result<()> {
    let now = crate::fork::fork_generation();
    let used = match USED_IN.compare_exchange(u64::MAX, now, Ordering::SeqCst, Ordering::SeqCst) {
        Ok(_) => now,
        Err(used) => used,
    };
    if used != now {
        return Err(store_error(
            store,
            "cannot use ZooKeeper in this process",
            "it is a fork of a process that already used the ZooKeeper client, whose I/O thread \
             (async-io's reactor) does not exist after fork; make ZooKeeper-leased generators \
             after forking (in each worker), or start workers with spawn instead of fork",
        ));
    }
    Ok(())
}

/// Runs zookeeper-client's spawned tasks on the current tokio runtime. The client spawns through
/// `spawns-core`, whose tokio support registers itself at link time (`linkme`); a C program
/// linking `libpolyflake.a` never references that registration, so the linker drops it and the
/// client panics with "no spawner". Naming the spawner on every poll does not depend on the link.
pub(super) struct TokioSpawner;

impl spawns_core::Spawn for TokioSpawner {
    fn spawn(&self, task: spawns_core::Task) {
        tokio::spawn(Box::into_pin(task.future));
    }
}

/// `f` with `TokioSpawner` entered around each of its polls (on whichever thread polls it).
pub(super) fn with_spawner<F: Future>(f: F) -> impl Future<Output = F::Output> {
    let mut f = Box::pin(f);
    std::future::poll_fn(move |cx| {
        let _scope = spawns_core::enter(&TokioSpawner);
        f.as_mut().poll(cx)
    })
}

/// A ZooKeeper call that failed or timed out.
pub(super) enum Fail {
    Zk(zk::Error),
    TimedOut(Duration),
}

impl std::fmt::Display for Fail {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Fail::Zk(e) => write!(f, "{e}"),
            Fail::TimedOut(d) => write!(f, "timed out after {} ms", d.as_millis()),
        }
    }
}

pub(super) async fn call<T, E: Into<zk::Error>>(
    d: Duration,
    f: impl Future<Output = std::result::Result<T, E>>,
) -> std::result::Result<T, Fail> {
    match tokio::time::timeout(d, f).await {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(e)) => Err(Fail::Zk(e.into())),
        Err(_) => Err(Fail::TimedOut(d)),
    }
}

/// What a failed call says (`at`: what was being done, on which store), for an error or a
/// renewal's note: ZooKeeper refusing our credentials or an ACL ("not authorized: ", with what
/// to check), no answer at all ("unreachable: "), or its other answer as it is.
pub(super) fn cause(at: &str, user: Option<&str>, e: &Fail) -> String {
    match e {
        Fail::Zk(z @ (zk::Error::NoAuth | zk::Error::AuthFailed)) => {
            let check = match user {
                Some(u) => format!(
                    "check the ACL of the znodes under the prefix (getAcl): digest user {u:?} needs all permissions on them (they belong to another ZooKeeper user, or their ACL was changed), and check the password of digest user {u:?}"
                ),
                None => "the znodes are protected by an ACL; set username and password (digest)"
                    .to_string(),
            };
            format!("not authorized: {at}: ZooKeeper answered {z:?} ({z}); {check}")
        }
        Fail::TimedOut(_)
        | Fail::Zk(zk::Error::ConnectionLoss | zk::Error::NoHosts | zk::Error::Timeout) => {
            format!("unreachable: {at}: {e}")
        }
        Fail::Zk(_) => format!("{at}: {e}"),
    }
}

/// A failed call as a store error (see `cause`).
pub(super) fn fail(store: &str, what: &str, user: Option<&str>, e: Fail) -> Error {
    Error::LeaseStore {
        reason: cause(&format!("{what} ({store})"), user, &e),
    }
}

/// The checked prefix, the store's name, and the credentials.
pub(super) fn check_options(o: &ZooKeeperLeaseOptions) -> Result<Checked> {
    let prefix = check_remote("zookeeper", o.remote(), "server (host:port)")?;
    let invalid = |reason: String| Error::InvalidNodeSource { reason };
    for server in o.remote().servers {
        let (host, port) = server.rsplit_once(':').unwrap_or((server.as_str(), ""));
        if host.trim().is_empty()
            || server.contains('/')
            || server.contains(',')
            || port.parse::<u16>().map_or(true, |p| p == 0)
        {
            return Err(invalid(format!(
                "zookeeper server {server:?} is not host:port (such as 10.0.0.5:2181)"
            )));
        }
    }
    if !(100..=600_000).contains(&o.session_timeout_ms) {
        return Err(invalid(format!(
            "zookeeper session_timeout_ms = {} is out of range: 100 to 600000",
            o.session_timeout_ms
        )));
    }
    let creds = o.credentials().resolve()?;
    let store = format!("zookeeper {} prefix {prefix}", o.remote().servers.join(","));
    Ok(Checked {
        prefix,
        store,
        creds,
    })
}

/// The ACL of every znode polyflake creates.
pub(super) fn acl_list(creds: &Credentials) -> Vec<zk::Acl> {
    match creds.user {
        Some(_) => vec![
            zk::Acl::new(zk::Permission::ALL, zk::AuthId::authed()),
            zk::Acl::new(zk::Permission::READ, zk::AuthId::anyone()),
        ],
        None => vec![zk::Acl::new(zk::Permission::ALL, zk::AuthId::anyone())],
    }
}

pub(super) async fn connect(
    o: &ZooKeeperLeaseOptions,
    creds: &Credentials,
    store: &str,
    timeout: Duration,
) -> Result<zk::Client> {
    check_fork(store)?;
    // The client builds a rustls configuration even for plain connections.
    install_crypto_provider();
    let mut c = zk::Client::connector();
    let session = Duration::from_millis(o.session_timeout_ms);
    c.session_timeout(session);
    // Each connection attempt may take up to the connect timeout (a loaded server, a TLS
    // handshake), within the client's limit of 3/5 of the session; the client retries the
    // ensemble until `timeout` ends the whole attempt.
    c.connection_timeout(timeout.min(session * 3 / 5));
    if let Some((user, password)) = &creds.user {
        c.auth(
            "digest".to_string(),
            format!("{user}:{password}").into_bytes(),
        );
    }
    let cluster = o.remote().servers.join(",");
    let connected = if creds.tls() {
        let mut tls = zk::TlsOptions::no_ca();
        let bad = |e: zk::Error| store_error(store, "cannot set up TLS", e);
        if let Some(ca) = &creds.ca_pem {
            tls = tls.with_pem_ca_certs(ca).map_err(bad)?;
        }
        if let Some((cert, key)) = &creds.identity {
            tls = tls.with_pem_identity(cert, key).map_err(bad)?;
        }
        c.tls(tls);
        call(timeout, c.secure_connect(&cluster)).await
    } else {
        call(timeout, c.connect(&cluster)).await
    };
    connected.map_err(|e| {
        let mut text = e.to_string();
        if creds.tls() {
            if let Some(why) = probe_tls(&o.remote().servers[0], creds, timeout) {
                text = format!("{text} (TLS: {why})");
            }
        }
        store_error(store, "cannot reach ZooKeeper", explain(creds.tls(), text))
    })
}
