//! ZooKeeper leases: `zookeeper-client` on a current-thread tokio runtime owned by the lease's
//! background thread (the same shape as etcd's).
//!
//! Znodes under the prefix:
//! - `{prefix}/slot/NNNN`: the slot, an EPHEMERAL znode created only if absent (a create that
//!   fails with "node exists" means taken); it lives as long as this holder's session; its data
//!   is this holder's token `identity/pid/session`.
//! - `{prefix}/hwm/NNNN`: the slot's high-water mark R, a persistent znode written only by a
//!   multi-op that checks the slot znode AND sets the mark at the version this holder last wrote
//!   (or creates it when there was none): R in the store only ever grows, and a mark written by
//!   anyone else (another version) loses the lease.
//! - `{prefix}/owner/{identity}`: the slot an identity held last (tried first next time).
//! - `{prefix}/space`: the store's ID space (epoch and layout), created only if absent.
//!
//! The session timeout is the lease's TTL. Session expiry, or the slot znode deleted or changed
//! (a watch on it), loses the lease at once. A lost connection is a failed renewal: the
//! generator issues up to R, then refuses (`LeaseExpired`) until the client reconnects within
//! the session, and then goes on. With a user name, every znode created carries the ACL "this
//! digest user: all; anyone: read".
//!
//! Fork: `zookeeper-client` does its I/O on `async-io`'s process-wide reactor thread, which a
//! forked child does not have (and whose lock and epoll descriptor it shares with the parent),
//! so a process forked after it used ZooKeeper cannot use it again: its re-lease (or a new
//! ZooKeeper generator) is refused with a `LeaseStore` error that says so, never a hang.

use super::creds::{explain, install_crypto_provider, probe_tls, Credentials};
use super::fence::{self, FenceReport};
use super::inspect::StoreReport;
use super::options::{Common, ZooKeeperLeaseOptions};
use super::record::{self, IdSpace};
use super::remote::{
    check_remote, compare_space, free_slot_order, guard_of, keys, runtime, slot_number,
    start_session, store_error, store_report, Keys, Taken,
};
use super::{guard_note, renew_period, LeaseKind, LeaseState, Session, SlotContext, Stop};
use crate::error::{Error, Result};
use std::collections::HashMap;
use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;
use zookeeper_client as zk;

mod admin;
pub(crate) use admin::{fence, inspect};

/// The fork generation in which this process first used the ZooKeeper client (`u64::MAX`:
/// never).
static USED_IN: AtomicU64 = AtomicU64::new(u64::MAX);

/// Refuse in a process forked after the client was used (see the module's notes on fork).
fn check_fork(store: &str) -> Result<()> {
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
struct TokioSpawner;

impl spawns_core::Spawn for TokioSpawner {
    fn spawn(&self, task: spawns_core::Task) {
        tokio::spawn(Box::into_pin(task.future));
    }
}

/// `f` with `TokioSpawner` entered around each of its polls (on whichever thread polls it).
fn with_spawner<F: Future>(f: F) -> impl Future<Output = F::Output> {
    let mut f = Box::pin(f);
    std::future::poll_fn(move |cx| {
        let _scope = spawns_core::enter(&TokioSpawner);
        f.as_mut().poll(cx)
    })
}

/// A ZooKeeper call that failed or timed out.
enum Fail {
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

async fn call<T, E: Into<zk::Error>>(
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
fn cause(at: &str, user: Option<&str>, e: &Fail) -> String {
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
fn fail(store: &str, what: &str, user: Option<&str>, e: Fail) -> Error {
    Error::LeaseStore {
        reason: cause(&format!("{what} ({store})"), user, &e),
    }
}

/// The checked prefix, the store's name, and the credentials.
fn check_options(o: &ZooKeeperLeaseOptions) -> Result<(String, String, Credentials)> {
    let prefix = check_remote(
        "zookeeper",
        &o.ensemble,
        "server (host:port)",
        &o.store.prefix,
        o.store.connect_timeout_ms,
    )?;
    let invalid = |reason: String| Error::InvalidNodeSource { reason };
    for server in &o.ensemble {
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
    let store = format!("zookeeper {} prefix {prefix}", o.ensemble.join(","));
    Ok((prefix, store, creds))
}

/// The ACL of every znode polyflake creates.
fn acl_list(creds: &Credentials) -> Vec<zk::Acl> {
    match creds.user {
        Some(_) => vec![
            zk::Acl::new(zk::Permission::ALL, zk::AuthId::authed()),
            zk::Acl::new(zk::Permission::READ, zk::AuthId::anyone()),
        ],
        None => vec![zk::Acl::new(zk::Permission::ALL, zk::AuthId::anyone())],
    }
}

async fn connect(
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
    let cluster = o.ensemble.join(",");
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
            if let Some(why) = probe_tls(&o.ensemble[0], creds, timeout) {
                text = format!("{text} (TLS: {why})");
            }
        }
        store_error(store, "cannot reach ZooKeeper", explain(creds.tls(), text))
    })
}

/// What a holder keeps.
struct Held {
    client: zk::Client,
    slot: u32,
    keys: Keys,
    token: String,
    acls: Vec<zk::Acl>,
    user: Option<String>,
    common: Common,
    timeout: Duration,
    store: String,
    /// The mark's version as we last wrote it (`None`: there was no mark).
    hwm_version: Option<i32>,
    /// Marks whose write got no answer since the last answered one (the connection dropped, or
    /// it timed out): any of them may have been applied. A version mismatch is then checked
    /// against them before the lease is lost.
    unsure: super::remote::Unsure,
    /// Why the last write found the lease lost (set with `Ok(false)` from `write_hwm`).
    lost_why: Option<String>,
    /// What a fresh client needs to look at the store while our session cannot reach it.
    reconnect: (ZooKeeperLeaseOptions, Credentials),
}

impl Held {
    /// A failed renewal call (`what` was being done) as the lease state's note.
    fn note(&self, what: &str, e: &Fail) -> String {
        cause(&format!("{what} ({})", self.store), self.user.as_deref(), e)
    }
}

/// Our session cannot reach the ensemble: has the store gone back in time (restored from a
/// backup)? A fresh client (a new session, which a restored server accepts while it refuses
/// ours for having seen a later zxid) reads our mark: a version below the one we last wrote
/// means the store has forgotten our writes. `Some(reason)` then; `None` when it cannot tell.
async fn rolled_back(h: &Held) -> Option<String> {
    let ours = h.hwm_version?;
    let (o, creds) = &h.reconnect;
    let client = connect(o, creds, &h.store, h.timeout).await.ok()?;
    let states = client.state_watcher();
    let seen = call(h.timeout, client.get_data(&h.keys.hwm)).await;
    close(client, states).await;
    let found = match seen {
        Ok((_, stat)) => Some(stat.version),
        Err(Fail::Zk(zk::Error::NoNode)) => None,
        Err(_) => return None,
    };
    (found.map_or(true, |v| v < ours)).then(|| {
        format!(
            "the ZooKeeper store went back in time: the high-water mark {} is at version {}, and this holder wrote version {ours} (the store was restored from an older backup?); fence it (`polyflake lease fence`) before new holders start",
            h.keys.hwm,
            found.map_or_else(|| "none (missing)".to_string(), |v| v.to_string())
        )
    })
}

pub(crate) fn acquire(
    o: &ZooKeeperLeaseOptions,
    ctx: SlotContext,
    generation: u64,
) -> Result<Session> {
    let common = o.common.check(ctx.layout)?;
    let (prefix, store, creds) = check_options(o)?;
    let rt = runtime(&store)?;
    let timeout = Duration::from_millis(o.store.connect_timeout_ms);
    let taken = rt.block_on(with_spawner(take(
        o, &creds, &prefix, &store, common, timeout, &ctx,
    )))?;
    let slot = taken.0.slot;
    start_session(
        rt,
        format!("polyflake-zookeeper-{slot}"),
        &store,
        slot,
        taken,
        ctx,
        generation,
        |held, ctx, stop| with_spawner(renew(held, ctx, stop)),
    )
}

/// Create the directories and check the store's ID space (recording ours if it has none).
async fn prepare(
    client: &zk::Client,
    prefix: &str,
    store: &str,
    acls: &[zk::Acl],
    user: Option<&str>,
    ours: IdSpace,
    timeout: Duration,
) -> Result<()> {
    let dir = zk::CreateMode::Persistent.with_acls(zk::Acls::new(acls));
    for sub in ["slot", "hwm", "owner"] {
        let path = format!("{prefix}/{sub}");
        call(timeout, client.mkdir(&path, &dir))
            .await
            .map_err(|e| fail(store, &format!("cannot create {path}"), user, e))?;
    }
    let key = format!("{prefix}/space");
    let text = record::render_space(ours);
    match call(timeout, client.create(&key, text.as_bytes(), &dir)).await {
        Ok(_) => Ok(()),
        Err(Fail::Zk(zk::Error::NodeExists)) => {
            let (value, _) = call(timeout, client.get_data(&key))
                .await
                .map_err(|e| fail(store, "cannot read the ID space", user, e))?;
            compare_space(store, &key, &value, ours)
        }
        Err(e) => Err(fail(store, "cannot record the ID space", user, e)),
    }
}

/// The data of every child of `dir` (a missing directory has none), by slot number.
async fn children(
    client: &zk::Client,
    dir: &str,
    timeout: Duration,
) -> std::result::Result<HashMap<u32, Vec<u8>>, Fail> {
    let names = match call(timeout, client.list_children(dir)).await {
        Ok(n) => n,
        Err(Fail::Zk(zk::Error::NoNode)) => return Ok(HashMap::new()),
        Err(e) => return Err(e),
    };
    // Every request is sent when its future is made: make them all, then wait in turn.
    let pending: Vec<_> = names
        .iter()
        .filter_map(|n| Some((slot_number(n)?, client.get_data(&format!("{dir}/{n}")))))
        .collect();
    let mut out = HashMap::new();
    for (slot, reply) in pending {
        match call(timeout, reply).await {
            Ok((data, _)) => {
                out.insert(slot, data);
            }
            Err(Fail::Zk(zk::Error::NoNode)) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(out)
}

/// Every held slot (with its holder's token) and every mark.
async fn read_store(
    client: &zk::Client,
    prefix: &str,
    store: &str,
    user: Option<&str>,
    timeout: Duration,
) -> Result<(Vec<(u32, String)>, HashMap<u32, Vec<u8>>)> {
    let taken = children(client, &format!("{prefix}/slot"), timeout)
        .await
        .map_err(|e| fail(store, "cannot list the slots", user, e))?
        .into_iter()
        .map(|(n, v)| (n, String::from_utf8_lossy(&v).into_owned()))
        .collect();
    let marks = children(client, &format!("{prefix}/hwm"), timeout)
        .await
        .map_err(|e| fail(store, "cannot list the high-water marks", user, e))?;
    Ok((taken, marks))
}

// Modelled in model/remote.pml: Holder, the two take steps (STORE=3) (make model).
async fn take(
    o: &ZooKeeperLeaseOptions,
    creds: &Credentials,
    prefix: &str,
    store: &str,
    common: Common,
    timeout: Duration,
    ctx: &SlotContext,
) -> Result<Taken<Held>> {
    let client = connect(o, creds, store, timeout).await?;
    let acls = acl_list(creds);
    let user = creds.username().map(str::to_string);
    let user_ref = user.as_deref();
    prepare(
        &client,
        prefix,
        store,
        &acls,
        user_ref,
        ctx.space(),
        timeout,
    )
    .await?;
    let token = record::render_token(&common.identity, std::process::id(), client.session_id().0);
    let owner_key = format!("{prefix}/owner/{}", common.identity);
    let fence_key = fence::fence_key(prefix);
    let own = match call(timeout, client.get_data(&owner_key)).await {
        Ok((v, _)) => record::parse_owner_slot(&v),
        Err(_) => None,
    };
    let (taken, marks) = read_store(&client, prefix, store, user_ref, timeout).await?;
    let window_end = ctx.window_end_ms();
    let order = free_slot_order(&common, &taken, &marks, own, ctx.now_ms()?, window_end);
    let ephemeral = zk::CreateMode::Ephemeral.with_acls(zk::Acls::new(&acls));

    for slot in order {
        let Some(claim) = ctx.claim(slot) else {
            continue;
        };
        let k = keys(prefix, slot);
        match call(
            timeout,
            client.create(&k.slot, token.as_bytes(), &ephemeral),
        )
        .await
        {
            Ok(_) => {}
            Err(Fail::Zk(zk::Error::NodeExists)) => continue,
            Err(e) => return Err(fail(store, "cannot take a slot", user_ref, e)),
        }
        let mark = match call(timeout, client.get_data(&k.hwm)).await {
            Ok((v, stat)) => Some((v, stat.version)),
            Err(Fail::Zk(zk::Error::NoNode)) => None,
            Err(e) => return Err(fail(store, "cannot read the high-water mark", user_ref, e)),
        };
        // The fence, read after the slot is ours: a floor under every slot's guard.
        let fence_ms = match call(timeout, client.get_data(&fence_key)).await {
            Ok((v, _)) => match fence::parse(&v) {
                Some(f) => Some(f),
                None => {
                    let _ = call(timeout, client.delete(&k.slot, Some(0))).await;
                    return Err(fence::unreadable(store, &fence_key));
                }
            },
            Err(Fail::Zk(zk::Error::NoNode)) => None,
            Err(e) => {
                let _ = call(timeout, client.delete(&k.slot, Some(0))).await;
                return Err(fail(store, "cannot read the fence", user_ref, e));
            }
        };
        if let Err(e) = fence::check_window(store, fence_ms, window_end) {
            let _ = call(timeout, client.delete(&k.slot, Some(0))).await;
            return Err(e);
        }
        let now = ctx.now_ms()?;
        let Some(own_guard) = guard_of(
            mark.as_ref().map(|(v, _)| v.as_slice()),
            now,
            common.reserve_ms,
            window_end,
        ) else {
            // A mark past the layout's window: give the slot back, try the next.
            let _ = call(timeout, client.delete(&k.slot, Some(0))).await;
            continue;
        };
        let guard = fence::floor(own_guard, fence_ms);
        let r = guard.max(now).saturating_add(common.reserve_ms);
        let note = fence::note(
            guard_note(slot, guard, now, common.max_guard_wait_ms),
            own_guard,
            fence_ms,
        );
        let mut held = Held {
            client,
            slot,
            keys: k,
            token,
            acls,
            user,
            common,
            timeout,
            store: store.to_string(),
            hwm_version: mark.map(|(_, v)| v),
            unsure: Default::default(),
            lost_why: None,
            reconnect: (o.clone(), creds.clone()),
        };
        match write_hwm(&mut held, r).await {
            Ok(true) => {}
            Ok(false) => {
                return Err(store_error(
                    store,
                    "lost the slot while taking it",
                    "the slot znode or its high-water mark changed",
                ))
            }
            Err(e) => {
                return Err(fail(
                    store,
                    "cannot write the high-water mark",
                    held.user.as_deref(),
                    e,
                ))
            }
        }
        let owner = slot.to_string();
        if let Err(Fail::Zk(zk::Error::NoNode)) = call(
            timeout,
            held.client.set_data(&owner_key, owner.as_bytes(), None),
        )
        .await
        {
            let dir = zk::CreateMode::Persistent.with_acls(zk::Acls::new(&held.acls));
            let _ = call(
                timeout,
                held.client.create(&owner_key, owner.as_bytes(), &dir),
            )
            .await;
        }
        return Ok((held, claim, guard, r, note));
    }
    Err(Error::NoFreeSlot {
        dir_or_prefix: store.to_string(),
        slots: common.slots,
    })
}

/// Write R in one multi-op that checks our slot znode (it exists, unchanged) and sets the mark
/// at the version we last wrote (or creates it): R in the store only grows, and only the
/// holder moves it. `Ok(false)`: either check failed (the lease is lost).
// Modelled in model/remote.pml: WRITE_OK, BUMP and the adoption of an unsure write (STORE=3;
// R_CHECK) (make model).
async fn write_hwm(h: &mut Held, r: i64) -> std::result::Result<bool, Fail> {
    let data = r.to_string();
    let create = zk::CreateMode::Persistent.with_acls(zk::Acls::new(&h.acls));
    let mut w = h.client.new_multi_writer();
    let added = w
        .add_check_version(&h.keys.slot, 0)
        .and_then(|_| match h.hwm_version {
            Some(v) => w.add_set_data(&h.keys.hwm, data.as_bytes(), Some(v)),
            None => w.add_create(&h.keys.hwm, data.as_bytes(), &create),
        });
    added.map_err(Fail::Zk)?;
    match call(h.timeout, w.commit()).await {
        Ok(results) => {
            h.hwm_version = Some(match results.last() {
                Some(zk::MultiWriteResult::SetData { stat }) => stat.version,
                _ => 0,
            });
            h.unsure.clear();
            Ok(true)
        }
        Err(Fail::Zk(zk::Error::BadVersion | zk::Error::NodeExists)) if !h.unsure.is_empty() => {
            // An earlier write may have been applied without an answer: if the mark holds one
            // of our unanswered values (and the slot is still ours), adopt its version.
            let mark = call(h.timeout, h.client.get_data(&h.keys.hwm)).await?;
            let slot = call(h.timeout, h.client.get_data(&h.keys.slot)).await?;
            let landed = crate::lease::record::parse_mark(&mark.0)
                .is_some_and(|v| h.unsure.contains(v) && v.to_string().as_bytes() == mark.0);
            if landed && slot.0 == h.token.as_bytes() {
                h.hwm_version = Some(mark.1.version);
                h.unsure.clear();
                return Err(Fail::Zk(zk::Error::UnexpectedError(
                    "an earlier write of the mark was applied without an answer; adopted it"
                        .to_string(),
                )));
            }
            Ok(false)
        }
        Err(Fail::Zk(
            e @ (zk::Error::NoNode
            | zk::Error::BadVersion
            | zk::Error::NodeExists
            | zk::Error::SessionExpired),
        )) => {
            // The cause, as far as the refusal tells it: a check on a deleted znode fails with
            // NoNode (the renewal can see a delete before the watch does).
            h.lost_why = Some(match e {
                zk::Error::NoNode => format!(
                    "the slot znode {} (or its high-water mark {}) was deleted (the ZooKeeper session expired, or someone deleted it)",
                    h.keys.slot, h.keys.hwm
                ),
                zk::Error::SessionExpired => "the ZooKeeper session expired".to_string(),
                _ => format!(
                    "the slot znode {} is no longer ours, or its high-water mark {} was changed by someone else (the ZooKeeper session expired, or the znodes were edited)",
                    h.keys.slot, h.keys.hwm
                ),
            });
            Ok(false)
        }
        Err(e) => {
            h.unsure.add(r);
            Err(e)
        }
    }
}

/// Why a slot watch's event means the lease is lost (`None`: it does not).
// Modelled in model/remote.pml: Holder, the loss step (STORE=3) (make model).
fn lost_by(event: &zk::WatchedEvent, slot: &str) -> Option<String> {
    match event.event_type {
        zk::EventType::NodeDeleted => Some(format!(
            "the slot znode {slot} was deleted (the ZooKeeper session expired, or someone deleted it)"
        )),
        zk::EventType::Session => match event.session_state {
            zk::SessionState::Expired => Some("the ZooKeeper session expired".to_string()),
            zk::SessionState::AuthFailed => {
                Some("ZooKeeper refused the session's authentication".to_string())
            }
            zk::SessionState::Closed => Some("the ZooKeeper client was closed".to_string()),
            _ => None,
        },
        _ => None,
    }
}

// Modelled in model/remote.pml: Holder, the renewal, late write, loss and close steps (STORE=3)
// (make model).
async fn renew(mut h: Held, ctx: SlotContext, stop: Arc<Stop>) {
    let state: &LeaseState = &ctx.state;
    let mut renew_tick = tokio::time::interval(renew_period(h.common.reserve_ms));
    renew_tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut states = h.client.state_watcher();
    let mut watch: Option<zk::OneshotWatcher> = None;
    // Since when our session has been cut off from the ensemble (for the rollback probe).
    let mut cut_off: Option<tokio::time::Instant> = None;
    loop {
        if stop.is_stopped() {
            break;
        }
        // (Re)arm the watch on our slot znode, checking it is still ours.
        if watch.is_none() {
            match call(h.timeout, h.client.get_and_watch_data(&h.keys.slot)).await {
                Ok((data, _, w)) if data == h.token.as_bytes() => watch = Some(w),
                Ok(_) => {
                    state.lose(format!(
                        "the slot znode {} now holds another holder's token",
                        h.keys.slot
                    ));
                    break;
                }
                Err(Fail::Zk(zk::Error::NoNode)) => {
                    state.lose(format!("the slot znode {} was deleted", h.keys.slot));
                    break;
                }
                Err(Fail::Zk(zk::Error::SessionExpired)) => {
                    state.lose("the ZooKeeper session expired".to_string());
                    break;
                }
                Err(e) => state
                    .failed(h.note(&format!("cannot watch the slot znode {}", h.keys.slot), &e)),
            }
        }
        let lost = tokio::select! {
            _ = stop.notify.notified() => break,
            _ = renew_tick.tick() => {
                let now = match ctx.now_ms() {
                    Ok(n) => n,
                    Err(e) => { state.failed(e.to_string()); continue; }
                };
                let r = (now + h.common.reserve_ms).max(state.r_ms());
                // Cut off for a renewal period: look with a fresh session first.
                let probe = match cut_off {
                    Some(since) if since.elapsed() >= renew_period(h.common.reserve_ms) => {
                        rolled_back(&h).await
                    }
                    _ => None,
                };
                if probe.is_some() {
                    state.rolled_back();
                    probe
                } else { match write_hwm(&mut h, r).await {
                    Ok(true) => { state.publish(r); state.renewed(); cut_off = None; None }
                    Ok(false) => Some(h.lost_why.take().unwrap_or_else(|| format!(
                        "the slot znode {} is no longer ours, or its high-water mark {} was changed by someone else",
                        h.keys.slot, h.keys.hwm
                    ))),
                    Err(e) => {
                        state.failed(h.note(&format!("cannot write the high-water mark {}", h.keys.hwm), &e));
                        // Cut off only when the ensemble did not answer (a refusal, NoAuth, is an
                        // answer: no fresh-session probe for a rollback every period).
                        if !matches!(e, Fail::Zk(zk::Error::NoAuth | zk::Error::AuthFailed)) {
                            cut_off.get_or_insert_with(tokio::time::Instant::now);
                        }
                        None
                    }
                } }
            }
            s = states.changed() => match s {
                zk::SessionState::Expired => Some("the ZooKeeper session expired".to_string()),
                zk::SessionState::AuthFailed => Some("ZooKeeper refused the session's authentication".to_string()),
                zk::SessionState::Closed => Some("the ZooKeeper client was closed".to_string()),
                zk::SessionState::Disconnected => {
                    state.failed(format!("unreachable: disconnected from the ensemble ({})", h.store));
                    cut_off.get_or_insert_with(tokio::time::Instant::now);
                    None
                }
                _ => None,
            },
            ev = async { watch.take().expect("checked").changed().await }, if watch.is_some() => {
                lost_by(&ev, &h.keys.slot)
            }
        };
        if let Some(reason) = lost {
            state.lose(reason);
            break;
        }
    }
    if state.is_lost() {
        // Nothing more to do: the slot is not ours. Wait for the generator to close, then let
        // the session go (its ephemeral, if any is left, goes with it).
        stop.notify.notified().await;
        close(h.client, states).await;
        return;
    }
    // A clean close: leave the final R, then free the slot.
    if let Some(r) = stop.final_r_ms() {
        let _ = write_hwm(&mut h, r).await;
    }
    let _ = call(h.timeout, h.client.delete(&h.keys.slot, Some(0))).await;
    close(h.client, states).await;
}

/// Drop the client and give its session task a moment to tell the ensemble.
async fn close(client: zk::Client, mut states: zk::StateWatcher) {
    drop(client);
    let _ = tokio::time::timeout(Duration::from_millis(500), async {
        loop {
            if matches!(
                states.changed().await,
                zk::SessionState::Closed | zk::SessionState::Expired | zk::SessionState::AuthFailed
            ) {
                break;
            }
        }
    })
    .await;
}
