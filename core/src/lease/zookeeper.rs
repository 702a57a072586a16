//! ZooKeeper leases: `zookeeper-client` on a current-thread tokio runtime owned by the lease's
//! background thread (the same shape as etcd's).
//!
//! Znodes under the prefix:
//! - `{prefix}/slot/NNNN`: the slot, an EPHEMERAL znode created only if absent (a create that
//!   fails with "node exists" means taken); it lives as long as this holder's session; its data
//!   is this holder's token `identity/pid/session`.
//! - `{prefix}/held/NNNN-{nonce}`: this holder's own claim on the slot, an EPHEMERAL znode
//!   created in one multi-op with the slot znode; its name (a random nonce per take) is one no
//!   other holder creates, so it is what every write checks (a check of the slot znode's
//!   version 0 passes on ANY holder's slot znode: after a restore, a stale holder's write could
//!   land on its successor's mark; found by the lease model, `verify/model/trails/no-claim-check.txt`).
//! - `{prefix}/hwm/NNNN`: the slot's high-water mark R, a persistent znode written only by a
//!   multi-op that checks the slot znode and our claim AND sets the mark at the version this
//!   holder last wrote (or creates it when there was none): R in the store only ever grows, and
//!   a mark written by anyone else (another version) loses the lease.
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
//!
//! ## Decisions
//!
//! - **The client is `zookeeper-client` 0.9** (features `tokio`, `tls`): the maintained async
//!   Rust client (the `zookeeper` crate is synchronous, callback-based and unmaintained; the C
//!   binding would bring libzookeeper and its threads); it speaks the 3.5+ protocol needed
//!   (multi-op with version checks, `create2` stats, one-shot watches, session states as a
//!   stream), runs under tokio like etcd's, and its TLS is rustls. Its costs: I/O on `async-io`'s
//!   process-wide reactor thread (fork, above), and `rustls` with aws-lc-rs, which is why that is
//!   the one crypto provider (`creds.rs`).
//! - **The claim znode exists because the slot znode's check cannot tell holders apart**
//!   (version 0 is every fresh znode's, and after a restore the mark's versions repeat): the
//!   model found a holder that created its slot znode just before a restore and wrote its first R
//!   just after the fence and a successor's take, onto the successor's mark, with a version that
//!   matched by coincidence. A clean close and a slot given back delete the claim; a crash leaves
//!   it to the session's end. etcd needs none: its compare names our slot key's value and lease.
//! - **An unanswered write may have been applied**: a later version mismatch is first checked
//!   against it (the mark holds exactly what we wrote and the slot still holds our token: adopt
//!   its version) before the lease is declared lost.
//! - **Loss is seen three ways**: the session state stream (`Expired`, `AuthFailed`, `Closed`:
//!   lost at once), the one-shot watch on our slot znode (re-armed after each event, checking the
//!   znode still holds our token), and a failed multi. `Disconnected` is a failed renewal. There
//!   is no keep-alive of our own: the client pings within the session. The client declares the
//!   session expired itself when it cannot reconnect within 1.4 x the session timeout, a server
//!   after the timeout: either way the lease is lost for good. So an outage longer than the
//!   reserve stops issuing (as with etcd), and one longer than the session timeout also loses the
//!   slot (etcd instead refreshes TTLs when it restarts). The session timeout
//!   (`session_timeout_ms`, 10,000 unless set, like the etcd TTL) is bounded by the ensemble
//!   between 2 and 20 ticks; the tests give the server `tickTime=200`. Closing writes the final
//!   R, deletes the slot znode (version 0) and closes the session.

use super::creds::{explain, install_crypto_provider, probe_tls, Credentials};
use super::fence::{self, FenceReport};
use super::inspect::StoreReport;
use super::options::ZooKeeperLeaseOptions;
use super::read_options::{LeaseOptions, RemoteOptions};
use super::record::{self, IdSpace};
use super::remote::{
    self, check_remote, compare_space, runtime, slot_number, store_error, store_report, Checked,
    Contents, Created, HeldSlot, Holder, Keys, Lost, Mark, Opening, Store,
};
use super::session::{renew_period, Session, SlotContext, Stop};
use super::LeaseKind;
use crate::error::{Error, Result};
use crate::window::Window;
use std::collections::HashMap;
use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;
use zookeeper_client as zk;

mod admin;
mod client;
pub(crate) use admin::{fence, inspect};
use client::{acl_list, call, cause, check_options, connect, fail, with_spawner, Fail};

/// What a holder keeps.
struct Held {
    client: zk::Client,
    /// The slot, its keys, the reserve.
    at: HeldSlot,
    /// Our claim znode `{prefix}/held/NNNN-{nonce}` (see the module's notes).
    claim: String,
    token: String,
    acls: Vec<zk::Acl>,
    user: Option<String>,
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
    reconnect: Reconnect,
    /// Since when our session has been cut off from the ensemble (for the rollback probe).
    cut_off: Option<tokio::time::Instant>,
}

/// What a fresh client needs: the options and the credentials resolved from them.
#[derive(Clone)]
struct Reconnect {
    options: ZooKeeperLeaseOptions,
    creds: Credentials,
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
    let Reconnect { options, creds } = &h.reconnect;
    let client = connect(options, creds, &h.store, h.timeout).await.ok()?;
    let states = client.state_watcher();
    let seen = call(h.timeout, client.get_data(&h.at.keys.hwm)).await;
    close(client, states).await;
    let found = match seen {
        Ok((_, stat)) => Some(stat.version),
        Err(Fail::Zk(zk::Error::NoNode)) => None,
        Err(_) => return None,
    };
    (found.map_or(true, |v| v < ours)).then(|| {
        format!(
            "the ZooKeeper store went back in time: the high-water mark {} is at version {}, and this holder wrote version {ours} (the store was restored from an older backup?); fence it (`polyflake lease fence`) before new holders start",
            h.at.keys.hwm,
            found.map_or_else(|| "none (missing)".to_string(), |v| v.to_string())
        )
    })
}

pub(crate) fn acquire(
    o: &ZooKeeperLeaseOptions,
    ctx: SlotContext,
    generation: u64,
) -> Result<Session> {
    let common = o.common(ctx.layout)?;
    let checked = check_options(o)?;
    let rt = runtime(&checked.store)?;
    let taken = rt.block_on(with_spawner(async {
        let taking = open(o, checked.opening(&common, &ctx, o.remote().timeout())).await?;
        remote::take(taking, &checked.prefix, &checked.store, &common, &ctx).await
    }))?;
    remote::start(
        rt,
        "zookeeper",
        &checked.store,
        generation,
        taken,
        ctx,
        |h, ctx, stop| with_spawner(renew(h, ctx, stop)),
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
    for sub in ["slot", "held", "hwm", "owner"] {
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
        .filter_map(|n| Some((slot_number(n, "")?, client.get_data(&format!("{dir}/{n}")))))
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
) -> Result<Contents> {
    let taken = children(client, &format!("{prefix}/slot"), timeout)
        .await
        .map_err(|e| fail(store, "cannot list the slots", user, e))?
        .into_iter()
        .map(|(n, v)| (n, String::from_utf8_lossy(&v).into_owned()))
        .collect();
    let marks = children(client, &format!("{prefix}/hwm"), timeout)
        .await
        .map_err(|e| fail(store, "cannot list the high-water marks", user, e))?;
    Ok(Contents { taken, marks })
}

/// A ZooKeeper store while a slot is taken: the client, whose session our token names.
struct Taking<'a> {
    client: zk::Client,
    prefix: &'a str,
    store: &'a str,
    user: Option<String>,
    acls: Vec<zk::Acl>,
    timeout: Duration,
    token: String,
    reconnect: Reconnect,
    /// The claim znode made with the last slot znode created (see the module's notes).
    claim: Option<String>,
}

/// Connect (the session), create the directories and check the store's ID space (the take's
/// first step).
// Modelled in verify/model/remote.pml: Holder, the start step (the session) (make model).
async fn open<'a>(o: &ZooKeeperLeaseOptions, at: Opening<'a>) -> Result<Taking<'a>> {
    let (prefix, store, creds) = at.checked.parts();
    let timeout = at.timeout;
    let client = connect(o, creds, store, timeout).await?;
    let acls = acl_list(creds);
    let user = creds.username().map(str::to_string);
    prepare(
        &client,
        prefix,
        store,
        &acls,
        user.as_deref(),
        at.space,
        timeout,
    )
    .await?;
    let token = record::render_token(at.identity, std::process::id(), client.session_id().0);
    Ok(Taking {
        client,
        prefix,
        store,
        user,
        acls,
        timeout,
        token,
        reconnect: Reconnect {
            options: o.clone(),
            creds: creds.clone(),
        },
        claim: None,
    })
}

impl Store for Taking<'_> {
    type Held = Held;

    async fn owner_slot(&mut self, key: &str) -> Option<u32> {
        match call(self.timeout, self.client.get_data(key)).await {
            Ok((v, _)) => record::parse_owner_slot(&v),
            Err(_) => None,
        }
    }

    async fn contents(&mut self) -> Result<Contents> {
        let user = self.user.as_deref();
        read_store(&self.client, self.prefix, self.store, user, self.timeout).await
    }

    /// Create the EPHEMERAL slot znode if absent, with our claim znode in the same multi-op,
    /// then read the mark and the fence.
    // Modelled in verify/model/remote.pml: Holder, the first take step (STORE=3: skey, cl) (make model).
    async fn create_slot(&mut self, k: &Keys) -> Result<Option<Created>> {
        let (timeout, store, user) = (self.timeout, self.store, self.user.as_deref());
        let ephemeral = zk::CreateMode::Ephemeral.with_acls(zk::Acls::new(&self.acls));
        let name = k.slot.rsplit('/').next().unwrap_or_default();
        let claim = format!(
            "{}/held/{name}-{:016x}",
            self.prefix,
            super::lockfile::nonce()
        );
        let mut w = self.client.new_multi_writer();
        w.add_create(&k.slot, self.token.as_bytes(), &ephemeral)
            .and_then(|_| w.add_create(&claim, b"", &ephemeral))
            .map_err(|e| fail(store, "cannot take a slot", user, Fail::Zk(e)))?;
        match call(timeout, w.commit()).await {
            Ok(_) => self.claim = Some(claim),
            Err(Fail::Zk(zk::Error::NodeExists)) => return Ok(None),
            Err(e) => return Err(fail(store, "cannot take a slot", user, e)),
        }
        let mark = match call(timeout, self.client.get_data(&k.hwm)).await {
            Ok((value, stat)) => Some(Mark {
                value,
                version: i64::from(stat.version),
            }),
            Err(Fail::Zk(zk::Error::NoNode)) => None,
            Err(e) => return Err(fail(store, "cannot read the high-water mark", user, e)),
        };
        let fence = match call(timeout, self.client.get_data(&k.fence)).await {
            Ok((v, _)) => Ok(Some(v)),
            Err(Fail::Zk(zk::Error::NoNode)) => Ok(None),
            Err(e) => Err(fail(store, "cannot read the fence", user, e)),
        };
        Ok(Some(Created { mark, fence }))
    }

    async fn give_back(&mut self, k: &Keys) {
        let _ = call(self.timeout, self.client.delete(&k.slot, Some(0))).await;
        if let Some(claim) = self.claim.take() {
            let _ = call(self.timeout, self.client.delete(&claim, Some(0))).await;
        }
    }

    async fn abandon(&mut self) {
        // The session ends with the client: nothing to give back before.
    }

    fn hold(self, at: HeldSlot, version: Option<i64>) -> Held {
        Held {
            client: self.client,
            at,
            claim: self.claim.unwrap_or_default(),
            token: self.token,
            acls: self.acls,
            user: self.user,
            timeout: self.timeout,
            store: self.store.to_string(),
            // Read from ZooKeeper as an i32.
            hwm_version: version.map(|v| v as i32),
            unsure: Default::default(),
            lost_why: None,
            reconnect: self.reconnect,
            cut_off: None,
        }
    }
}

impl Holder for Held {
    type Fail = Fail;

    /// Write R in one multi-op that checks our slot znode (it exists, unchanged) and our claim
    /// znode (a name only we create: the slot znode's check alone passes on a successor's) and
    /// sets the mark at the version we last wrote (or creates it): R in the store only grows,
    /// and only the holder moves it. `Ok(false)`: a check failed (the lease is lost).
    // Modelled in verify/model/remote.pml: WRITE_OK, BUMP and the adoption of an unsure write (STORE=3;
    // R_CHECK) (make model).
    async fn write_hwm(&mut self, r: i64) -> std::result::Result<bool, Fail> {
        let data = r.to_string();
        let create = zk::CreateMode::Persistent.with_acls(zk::Acls::new(&self.acls));
        let mut w = self.client.new_multi_writer();
        let added = w
            .add_check_version(&self.at.keys.slot, 0)
            .and_then(|_| w.add_check_version(&self.claim, 0))
            .and_then(|_| match self.hwm_version {
                Some(v) => w.add_set_data(&self.at.keys.hwm, data.as_bytes(), Some(v)),
                None => w.add_create(&self.at.keys.hwm, data.as_bytes(), &create),
            });
        added.map_err(Fail::Zk)?;
        match call(self.timeout, w.commit()).await {
            Ok(results) => {
                self.hwm_version = Some(match results.last() {
                    Some(zk::MultiWriteResult::SetData { stat }) => stat.version,
                    _ => 0,
                });
                self.unsure.clear();
                Ok(true)
            }
            Err(Fail::Zk(zk::Error::BadVersion | zk::Error::NodeExists))
                if !self.unsure.is_empty() =>
            {
                // An earlier write may have been applied without an answer: if the mark holds one
                // of our unanswered values (and the slot is still ours), adopt its version.
                let mark = call(self.timeout, self.client.get_data(&self.at.keys.hwm)).await?;
                let slot = call(self.timeout, self.client.get_data(&self.at.keys.slot)).await?;
                let landed = crate::lease::record::parse_mark(&mark.0)
                    .is_some_and(|v| self.unsure.contains(v) && v.to_string().as_bytes() == mark.0);
                if landed && slot.0 == self.token.as_bytes() {
                    self.hwm_version = Some(mark.1.version);
                    self.unsure.clear();
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
                self.lost_why = Some(match e {
                    zk::Error::NoNode => format!(
                        "the slot znode {}, this holder's claim {} or the high-water mark {} is gone (the ZooKeeper session expired, the store was restored from an older backup, or someone deleted it)",
                        self.at.keys.slot, self.claim, self.at.keys.hwm
                    ),
                    zk::Error::SessionExpired => "the ZooKeeper session expired".to_string(),
                    _ => format!(
                        "the slot znode {} is no longer ours, or its high-water mark {} was changed by someone else (the ZooKeeper session expired, or the znodes were edited)",
                        self.at.keys.slot, self.at.keys.hwm
                    ),
                });
                Ok(false)
            }
            Err(e) => {
                self.unsure.add(r);
                Err(e)
            }
        }
    }

    fn lost(&mut self) -> Lost {
        let reason = self.lost_why.take().unwrap_or_else(|| {
            format!(
                "the slot znode {} is no longer ours, or its high-water mark {} was changed by someone else",
                self.at.keys.slot, self.at.keys.hwm
            )
        });
        Lost {
            reason,
            rolled_back: false,
        }
    }

    fn note(&self, what: &str, e: &Fail) -> String {
        Held::note(self, what, e)
    }

    fn refused(&self, what: &str, e: Fail) -> Error {
        fail(&self.store, what, self.user.as_deref(), e)
    }

    fn lost_while_taking(&self) -> Error {
        store_error(
            &self.store,
            "lost the slot while taking it",
            "the slot znode or its high-water mark changed",
        )
    }

    async fn record_owner(&mut self, key: &str, slot: u32) {
        let owner = slot.to_string();
        let set = self.client.set_data(key, owner.as_bytes(), None);
        if let Err(Fail::Zk(zk::Error::NoNode)) = call(self.timeout, set).await {
            let dir = zk::CreateMode::Persistent.with_acls(zk::Acls::new(&self.acls));
            let _ = call(
                self.timeout,
                self.client.create(key, owner.as_bytes(), &dir),
            )
            .await;
        }
    }

    /// Cut off for a renewal period: look with a fresh session first.
    async fn rolled_back(&mut self) -> Option<String> {
        match self.cut_off {
            Some(since) if since.elapsed() >= renew_period(self.at.reserve_ms) => {
                rolled_back(self).await
            }
            _ => None,
        }
    }

    async fn read_fence(&mut self) -> std::result::Result<Option<Vec<u8>>, Fail> {
        match call(self.timeout, self.client.get_data(&self.at.keys.fence)).await {
            Ok((value, _)) => Ok(Some(value)),
            Err(Fail::Zk(zk::Error::NoNode)) => Ok(None),
            Err(e) => Err(e),
        }
    }

    fn wrote(&mut self, failed: Option<&Fail>) {
        match failed {
            None => self.cut_off = None,
            // Cut off only when the ensemble did not answer (a refusal, NoAuth, is an answer:
            // no fresh-session probe for a rollback every period).
            Some(Fail::Zk(zk::Error::NoAuth | zk::Error::AuthFailed)) => {}
            Some(_) => {
                self.cut_off.get_or_insert_with(tokio::time::Instant::now);
            }
        }
    }

    fn at(&self) -> &HeldSlot {
        &self.at
    }
}

/// Why a slot watch's event means the lease is lost (`None`: it does not).
// Modelled in verify/model/remote.pml: Holder, the loss step (STORE=3) (make model).
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

// Modelled in verify/model/remote.pml: Holder, the renewal, late write, loss and close steps (STORE=3)
// (make model).
async fn renew(mut h: Held, ctx: SlotContext, stop: Arc<Stop>) {
    let state: &Window = &ctx.state;
    let mut renew_tick = tokio::time::interval(renew_period(h.at.reserve_ms));
    renew_tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut states = h.client.state_watcher();
    let mut watch: Option<zk::OneshotWatcher> = None;
    loop {
        if stop.is_stopped() {
            break;
        }
        // (Re)arm the watch on our slot znode, checking it is still ours.
        if watch.is_none() {
            match call(h.timeout, h.client.get_and_watch_data(&h.at.keys.slot)).await {
                Ok((data, _, w)) if data == h.token.as_bytes() => watch = Some(w),
                Ok(_) => {
                    state.lose(format!(
                        "the slot znode {} now holds another holder's token",
                        h.at.keys.slot
                    ));
                    break;
                }
                Err(Fail::Zk(zk::Error::NoNode)) => {
                    state.lose(format!("the slot znode {} was deleted", h.at.keys.slot));
                    break;
                }
                Err(Fail::Zk(zk::Error::SessionExpired)) => {
                    state.lose("the ZooKeeper session expired".to_string());
                    break;
                }
                Err(e) => state.failed(h.note(
                    &format!("cannot watch the slot znode {}", h.at.keys.slot),
                    &e,
                )),
            }
        }
        let lost = tokio::select! {
            _ = stop.notify.notified() => break,
            _ = renew_tick.tick() => remote::renew_tick(&mut h, &ctx).await,
            // A renewal asked for now (`Generator::renew_lease`), on this task as every other.
            _ = stop.renew.notified() => remote::renew_tick(&mut h, &ctx).await,
            s = states.changed() => match s {
                zk::SessionState::Expired => Some("the ZooKeeper session expired".to_string()),
                zk::SessionState::AuthFailed => Some("ZooKeeper refused the session's authentication".to_string()),
                zk::SessionState::Closed => Some("the ZooKeeper client was closed".to_string()),
                zk::SessionState::Disconnected => {
                    state.failed(format!("unreachable: disconnected from the ensemble ({})", h.store));
                    h.cut_off.get_or_insert_with(tokio::time::Instant::now);
                    None
                }
                _ => None,
            },
            ev = async { watch.take().expect("checked").changed().await }, if watch.is_some() => {
                lost_by(&ev, &h.at.keys.slot)
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
    remote::finish(&mut h, &stop).await;
    let _ = call(h.timeout, h.client.delete(&h.at.keys.slot, Some(0))).await;
    let _ = call(h.timeout, h.client.delete(&h.claim, Some(0))).await;
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
