//! etcd leases: the etcd v3 API through `etcd-client`, on a current-thread tokio runtime owned by
//! the lease's background thread.
//!
//! Keys under the prefix:
//! - `{prefix}/slot/NNNN`: the slot, created only if absent (a transaction on
//!   `create_revision == 0`) and attached to an etcd lease kept alive in the background; its value
//!   is this holder's token.
//! - `{prefix}/hwm/NNNN`: the slot's high-water mark R, a durable key (no lease), written only by
//!   a transaction that compares the slot key's value and lease with ours AND the mark's own
//!   revision with the one we last wrote: R in the store only ever grows, and a write that
//!   arrives late cannot lower it.
//! - `{prefix}/owner/{identity}`: the slot an identity held last (tried first next time).
//! - `{prefix}/space`: the store's ID space (epoch and layout), created only if absent.
//!
//! A mark that is missing or not a plain number of ms is read as a full reserve past now (a
//! holder we cannot see may have reached that far); one past the layout's window leaves that
//! slot unused.
//!
//! ## Decisions
//!
//! - **The mark's own revision is compared too**, besides the slot key's value and lease, so a
//!   delayed or replayed write cannot lower R and a mark changed by anyone else loses the lease.
//! - **One background thread** owns a current-thread tokio runtime: it keeps the etcd lease alive
//!   every ttl / 3 (at least 200 ms), renews R every reserve / 5, and WATCHES the slot key. A
//!   delete (revoke, expiry) or a put by someone else loses the lease at once (`LeaseLost`, for
//!   good: a new slot would be a different node id, so a new generator is needed); so does an
//!   expired keep-alive answer (TTL 0) or a failed compare. Keep-alive and watch streams are
//!   reopened after an outage; etcd refreshes lease TTLs when it restarts, so a short outage
//!   keeps the slot. Closing writes the final R and revokes the lease (deleting the slot key).
//! - **etcd is a cargo feature** (`etcd`, on by default), left out under `--cfg loom` (tokio has
//!   loom code paths of its own); without it an etcd source is `InvalidNodeSource`. Building it
//!   needs `protoc` (`.build/mk/lease.mk`). `etcd-client` 0.21 declares rust-version 1.80, above the
//!   workspace's 1.75.

use super::creds::{explain, install_crypto_provider, probe_tls, Credentials};
use super::fence::{self, FenceReport};
use super::options::EtcdLeaseOptions;
use super::read_options::{LeaseOptions, RemoteOptions};
use super::record::{self, IdSpace};
use super::remote::{
    self, chain, check_remote, compare_space, runtime, slot_number, store_error, store_report,
    timed, Checked, Contents, Created, HeldSlot, Holder, Keys, Lost, Mark, Opening, Store,
};
use super::session::{renew_period, Session, SlotContext, Stop};
use super::LeaseKind;
use crate::error::{Error, Result};
use crate::window::Window;
use etcd_client::{
    Certificate, Client, Compare, CompareOp, ConnectOptions, EventType, GetOptions, Identity,
    PutOptions, ResponseHeader, TlsOptions, Txn, TxnOp, TxnOpResponse,
};
use std::sync::Arc;
use std::time::Duration;

mod admin;
pub(crate) use admin::{fence, inspect};

struct Held {
    client: Client,
    /// The slot, its keys, the reserve.
    at: HeldSlot,
    token: String,
    lease_id: i64,
    timeout: Duration,
    ttl_s: i64,
    store: String,
    /// The etcd user we authenticate as (for what a refusal tells to check).
    user: Option<String>,
    /// The mod revision of the mark as we last wrote it (0: the key did not exist).
    hwm_revision: i64,
    /// Marks whose write got no answer since the last answered one (a timeout, a dropped
    /// connection): etcd may have applied any of them. A failed compare is checked against
    /// them before the lease is declared lost (see `write_hwm`).
    unsure: super::remote::Unsure,
    /// The highest store revision and the cluster id our transactions' answers carried (they
    /// are sequential, each answered after the last, unlike the watch and keep-alive streams):
    /// a store's revision only grows, so a lower one (or another cluster) means the store went
    /// back in time.
    seen: Seen,
    /// Set when an answer showed the store went back in time.
    rolled_back: Option<String>,
}

impl Held {
    /// A failed renewal request (`what` was being done) as the lease state's note.
    fn note(&self, what: &str, e: &str) -> String {
        cause(&format!("{what} ({})", self.store), self.user.as_deref(), e)
    }

    /// Look at an answer's header: the revision and cluster id only move forward.
    fn saw(&mut self, header: Option<&ResponseHeader>) {
        if let Some(hd) = header {
            self.saw_at(Seen::of(hd));
        }
    }

    fn saw_at(
        &mut self,
        Seen {
            revision: rev,
            cluster,
        }: Seen,
    ) {
        if self.rolled_back.is_none() {
            if rev < self.seen.revision {
                self.rolled_back = Some(format!(
                    "the etcd store went back in time: it answered at revision {rev} after revision {} (restored from an older backup?); fence it (`polyflake lease fence`) before new holders start",
                    self.seen.revision
                ));
            } else if self.seen.cluster != 0 && cluster != 0 && cluster != self.seen.cluster {
                self.rolled_back = Some(format!(
                    "the etcd store was replaced: cluster id {cluster:x} after {:x} (restored from a backup?); fence it (`polyflake lease fence`) before new holders start",
                    self.seen.cluster
                ));
            }
        }
        self.seen.revision = self.seen.revision.max(rev);
        if self.seen.cluster == 0 {
            self.seen.cluster = cluster;
        }
    }
}

/// The highest store revision and the cluster id an answer carried (0: none yet).
#[derive(Debug, Clone, Copy, Default)]
struct Seen {
    revision: i64,
    cluster: u64,
}

impl Seen {
    fn of(header: &ResponseHeader) -> Seen {
        Seen {
            revision: header.revision(),
            cluster: header.cluster_id(),
        }
    }
}

/// What a failed request's words `e` say (`at`: what was being done, on which store), for an
/// error or a renewal's note: etcd refusing our credentials or permissions ("not authorized: ",
/// with what to check), no answer at all ("unreachable: "), or etcd's other answer as it is.
fn cause(at: &str, user: Option<&str>, e: &str) -> String {
    // etcd's own words, then gRPC's for PermissionDenied and Unauthenticated.
    const REFUSED: [&str; 7] = [
        "permission denied",
        "user name is empty",
        "invalid auth token",
        "authentication failed",
        "user name not found",
        "does not have permission",
        "authentication credentials",
    ];
    let lower = e.to_ascii_lowercase();
    if REFUSED.iter().any(|w| lower.contains(w)) {
        let check = match user {
            Some(u) => format!(
                "check that etcd user {u:?} has a role granting readwrite on every key under the prefix (`etcdctl user get {u}`, `etcdctl role get ROLE`), and its password"
            ),
            None => "etcd has authentication on: set username and password, for a user whose role grants readwrite on every key under the prefix".to_string(),
        };
        format!("not authorized: {at}: {e}; {check}")
    } else if lower.contains("etcdserver:") {
        format!("{at}: {e}")
    } else {
        format!("unreachable: {at}: {e}")
    }
}

/// A failed request as a store error (see `cause`).
fn refused(store: &str, what: &str, user: Option<&str>, e: &str) -> Error {
    Error::LeaseStore {
        reason: cause(&format!("{what} ({store})"), user, e),
    }
}

/// The checked prefix (no trailing `/`), the store's name for messages, and the credentials.
fn check_options(o: &EtcdLeaseOptions) -> Result<Checked> {
    let prefix = check_remote("etcd", o.remote(), "endpoint")?;
    if !(1..=3600).contains(&o.ttl_s) {
        return Err(Error::InvalidNodeSource {
            reason: format!("etcd ttl_s = {} is out of range: 1 to 3600", o.ttl_s),
        });
    }
    let creds = o.credentials().resolve()?;
    if creds.tls() {
        if let Some(plain) = o.remote().servers.iter().find(|e| e.starts_with("http://")) {
            return Err(Error::InvalidNodeSource {
                reason: format!(
                    "etcd endpoint {plain} is plain HTTP but TLS is configured (ca_file or cert_file): use https://"
                ),
            });
        }
    }
    let store = format!("etcd {} prefix {prefix}", o.remote().servers.join(","));
    Ok(Checked {
        prefix,
        store,
        creds,
    })
}

async fn connect(
    o: &EtcdLeaseOptions,
    creds: &Credentials,
    store: &str,
    timeout: Duration,
) -> Result<Client> {
    let mut options = ConnectOptions::new()
        .with_connect_timeout(timeout)
        .with_timeout(timeout)
        .with_keep_alive(Duration::from_secs(2), timeout);
    if creds.tls() {
        install_crypto_provider();
        let mut tls = TlsOptions::new();
        if let Some(ca) = &creds.ca_pem {
            tls = tls.ca_certificate(Certificate::from_pem(ca));
        }
        if let Some((cert, key)) = &creds.identity {
            tls = tls.identity(Identity::from_pem(cert, key));
        }
        options = options.with_tls(tls);
    }
    if let Some((user, password)) = &creds.user {
        options = options
            .with_user(user.clone(), password.clone())
            .with_auto_token_refresh(true);
    }
    let connecting = async {
        Client::connect(o.remote().servers.to_vec(), Some(options))
            .await
            .map_err(|e| chain(&e))
    };
    match timed(timeout, "connect", connecting).await {
        Ok(c) => Ok(c),
        Err(e) => {
            let e = match creds
                .tls()
                .then(|| probe_tls(&o.remote().servers[0], creds, timeout))
            {
                Some(Some(why)) if !e.contains(&why) => format!("{e} (TLS: {why})"),
                _ => e,
            };
            Err(store_error(
                store,
                "cannot reach etcd",
                explain(creds.tls(), e),
            ))
        }
    }
}

pub(crate) fn acquire(o: &EtcdLeaseOptions, ctx: SlotContext, generation: u64) -> Result<Session> {
    let common = o.common(ctx.layout)?;
    let checked = check_options(o)?;
    let (prefix, store) = (checked.prefix.as_str(), checked.store.as_str());
    let rt = runtime(store)?;
    let taken = rt.block_on(async {
        let taking = open(o, checked.opening(&common, &ctx, o.remote().timeout())).await?;
        remote::take(taking, prefix, store, &common, &ctx).await
    })?;
    remote::start(rt, "etcd", store, generation, taken, ctx, renew)
}

/// Check the store's ID space, recording ours if it has none (created only if absent).
async fn check_space(
    client: &mut Client,
    prefix: &str,
    store: &str,
    user: Option<&str>,
    ours: IdSpace,
    timeout: Duration,
) -> Result<()> {
    let key = format!("{prefix}/space");
    let txn = Txn::new()
        .when([Compare::create_revision(key.clone(), CompareOp::Equal, 0)])
        .and_then([TxnOp::put(key.clone(), record::render_space(ours), None)])
        .or_else([TxnOp::get(key.clone(), None)]);
    let resp = timed(timeout, "txn", client.txn(txn))
        .await
        .map_err(|e| refused(store, "cannot check the ID space", user, &e))?;
    if resp.succeeded() {
        return Ok(());
    }
    let value = resp.op_responses().into_iter().find_map(|r| match r {
        TxnOpResponse::Get(g) => g.kvs().first().map(|kv| kv.value().to_vec()),
        _ => None,
    });
    compare_space(store, &key, value.as_deref().unwrap_or(b""), ours)
}

/// Every slot's key (taken or not) and mark, as stored.
async fn read_store(
    client: &mut Client,
    prefix: &str,
    store: &str,
    user: Option<&str>,
    timeout: Duration,
) -> Result<Contents> {
    let err = |what: &str, e: String| refused(store, what, user, &e);
    let number = |key: &str| slot_number(key, "");
    let taken = timed(
        timeout,
        "list slots",
        client.get(
            format!("{prefix}/slot/"),
            Some(GetOptions::new().with_prefix()),
        ),
    )
    .await
    .map_err(|e| err("cannot list the slots", e))?
    .kvs()
    .iter()
    .filter_map(|kv| {
        Some((
            number(kv.key_str().ok()?)?,
            String::from_utf8_lossy(kv.value()).into_owned(),
        ))
    })
    .collect();
    let marks = timed(
        timeout,
        "list marks",
        client.get(
            format!("{prefix}/hwm/"),
            Some(GetOptions::new().with_prefix()),
        ),
    )
    .await
    .map_err(|e| err("cannot list the high-water marks", e))?
    .kvs()
    .iter()
    .filter_map(|kv| Some((number(kv.key_str().ok()?)?, kv.value().to_vec())))
    .collect();
    Ok(Contents { taken, marks })
}

/// An etcd store while a slot is taken: the client, and our etcd lease with the token naming it.
struct Taking<'a> {
    client: Client,
    prefix: &'a str,
    store: &'a str,
    user: Option<&'a str>,
    timeout: Duration,
    ttl_s: i64,
    lease_id: i64,
    token: String,
    /// What the last slot creation's answer carried (the held slot's first `Held::saw`).
    seen: Option<Seen>,
}

/// Connect, check the store's ID space, and create our etcd lease (the take's first step).
// Modelled in verify/model/remote.pml: Holder, the start step (the lease grant) (make model).
async fn open<'a>(o: &EtcdLeaseOptions, at: Opening<'a>) -> Result<Taking<'a>> {
    let (prefix, store, creds) = at.checked.parts();
    let (user, timeout) = (creds.username(), at.timeout);
    let mut client = connect(o, creds, store, timeout).await?;
    check_space(&mut client, prefix, store, user, at.space, timeout).await?;
    let lease_id = timed(timeout, "lease grant", client.lease_grant(o.ttl_s, None))
        .await
        .map_err(|e| refused(store, "cannot create an etcd lease", user, &e))?
        .id();
    let token = record::render_token(at.identity, std::process::id(), lease_id);
    Ok(Taking {
        client,
        prefix,
        store,
        user,
        timeout,
        ttl_s: o.ttl_s,
        lease_id,
        token,
        seen: None,
    })
}

impl Store for Taking<'_> {
    type Held = Held;

    async fn owner_slot(&mut self, key: &str) -> Option<u32> {
        let resp = timed(self.timeout, "get", self.client.get(key, None))
            .await
            .ok()?;
        resp.kvs()
            .first()
            .and_then(|kv| record::parse_owner_slot(kv.value()))
    }

    async fn contents(&mut self) -> Result<Contents> {
        read_store(
            &mut self.client,
            self.prefix,
            self.store,
            self.user,
            self.timeout,
        )
        .await
    }

    /// One transaction: create the slot key on our etcd lease if absent, and read the mark and
    /// the fence with it.
    // Modelled in verify/model/remote.pml: Holder, the first take step (STORE=2) (make model).
    async fn create_slot(&mut self, k: &Keys) -> Result<Option<Created>> {
        let txn = Txn::new()
            .when([Compare::create_revision(
                k.slot.clone(),
                CompareOp::Equal,
                0,
            )])
            .and_then([
                TxnOp::put(
                    k.slot.clone(),
                    self.token.clone(),
                    Some(PutOptions::new().with_lease(self.lease_id)),
                ),
                TxnOp::get(k.hwm.clone(), None),
                TxnOp::get(k.fence.clone(), None),
            ]);
        let resp = timed(self.timeout, "txn", self.client.txn(txn))
            .await
            .map_err(|e| refused(self.store, "cannot take a slot", self.user, &e))?;
        if !resp.succeeded() {
            return Ok(None);
        }
        self.seen = resp.header().map(Seen::of);
        let mut gets = resp.op_responses().into_iter().filter_map(|r| match r {
            TxnOpResponse::Get(g) => Some(g.kvs().first().map(|kv| Mark {
                value: kv.value().to_vec(),
                version: kv.mod_revision(),
            })),
            _ => None,
        });
        let mark = gets.next().flatten();
        let fence = gets.next().flatten().map(|f| f.value);
        Ok(Some(Created {
            mark,
            fence: Ok(fence),
        }))
    }

    async fn give_back(&mut self, k: &Keys) {
        give_back(&mut self.client, &k.slot, &self.token, self.timeout).await;
    }

    async fn abandon(&mut self) {
        let lease = self.client.lease_revoke(self.lease_id);
        let _ = timed(self.timeout, "lease revoke", lease).await;
    }

    fn hold(self, at: HeldSlot, version: Option<i64>) -> Held {
        let mut held = Held {
            client: self.client,
            at,
            token: self.token,
            lease_id: self.lease_id,
            timeout: self.timeout,
            ttl_s: self.ttl_s,
            store: self.store.to_string(),
            user: self.user.map(str::to_string),
            hwm_revision: version.unwrap_or(0),
            unsure: Default::default(),
            seen: Seen::default(),
            rolled_back: None,
        };
        if let Some(seen) = self.seen {
            held.saw_at(seen);
        }
        held
    }
}

impl Holder for Held {
    type Fail = String;

    /// Write R in a transaction that proves we still own the slot and that the mark is the one we
    /// last wrote (so R in the store only grows). `Ok(false)`: either is no longer true.
    ///
    /// A write that got no answer may still have been applied (the link stalled, etcd applied it
    /// when the link came back): the holder then no longer knows the mark's revision, and its next
    /// compare fails although nobody else wrote. So every unanswered value is kept, and a failed
    /// compare re-reads the slot key and the mark: when the slot key is still ours (our token, our
    /// etcd lease) and the mark holds one of our unanswered values, that write landed. Nobody else
    /// can have written it, since every writer's transaction requires the slot key to carry its own
    /// token; the holder adopts the mark's revision and writes again. Anything else loses the
    /// lease.
    // Modelled in verify/model/remote.pml: WRITE_OK and BUMP (STORE=2; R_CHECK) (make model).
    async fn write_hwm(&mut self, r: i64) -> std::result::Result<bool, String> {
        match write_hwm_once(self, r).await {
            Ok(false) if !self.unsure.is_empty() && adopt_landed_write(self).await? => {
                write_hwm_once(self, r).await
            }
            other => other,
        }
    }

    fn lost(&mut self) -> Lost {
        match self.rolled_back.take() {
            Some(reason) => Lost {
                reason,
                rolled_back: true,
            },
            None => Lost {
                reason: format!(
                    "the slot key {} is no longer ours, or its high-water mark {} was changed by someone else (the etcd lease expired or was revoked, or the keys were edited)",
                    self.at.keys.slot, self.at.keys.hwm
                ),
                rolled_back: false,
            },
        }
    }

    fn note(&self, what: &str, e: &String) -> String {
        Held::note(self, what, e)
    }

    fn refused(&self, what: &str, e: String) -> Error {
        refused(&self.store, what, self.user.as_deref(), &e)
    }

    fn lost_while_taking(&self) -> Error {
        self.refused(
            "lost the slot while taking it",
            "the slot key changed".into(),
        )
    }

    async fn record_owner(&mut self, key: &str, slot: u32) {
        let put = self.client.put(key, slot.to_string(), None);
        let _ = timed(self.timeout, "put owner", put).await;
    }

    async fn rolled_back(&mut self) -> Option<String> {
        // Seen in the answers themselves (`saw`): `write_hwm` then finds the lease lost.
        None
    }

    async fn read_fence(&mut self) -> std::result::Result<Option<Vec<u8>>, String> {
        let get = self.client.get(self.at.keys.fence.clone(), None);
        let resp = timed(self.timeout, "get", get).await?;
        self.saw(resp.header());
        Ok(resp.kvs().first().map(|kv| kv.value().to_vec()))
    }

    fn wrote(&mut self, _failed: Option<&String>) {}

    fn at(&self) -> &HeldSlot {
        &self.at
    }
}

/// Give back a slot just taken (deleted only while it still carries our token).
async fn give_back(client: &mut Client, slot_key: &str, token: &str, timeout: Duration) {
    let txn = Txn::new()
        .when([Compare::value(slot_key, CompareOp::Equal, token)])
        .and_then([TxnOp::delete(slot_key, None)]);
    let _ = timed(timeout, "txn", client.txn(txn)).await;
}

async fn write_hwm_once(h: &mut Held, r: i64) -> std::result::Result<bool, String> {
    let mark_unchanged = if h.hwm_revision == 0 {
        Compare::create_revision(h.at.keys.hwm.clone(), CompareOp::Equal, 0)
    } else {
        Compare::mod_revision(h.at.keys.hwm.clone(), CompareOp::Equal, h.hwm_revision)
    };
    let txn = Txn::new()
        .when([
            Compare::value(h.at.keys.slot.clone(), CompareOp::Equal, h.token.clone()),
            Compare::lease(h.at.keys.slot.clone(), CompareOp::Equal, h.lease_id),
            mark_unchanged,
        ])
        .and_then([TxnOp::put(h.at.keys.hwm.clone(), r.to_string(), None)]);
    let resp = match timed(h.timeout, "txn", h.client.txn(txn)).await {
        Ok(resp) => resp,
        Err(e) => {
            h.unsure.add(r);
            return Err(e);
        }
    };
    h.saw(resp.header());
    if h.rolled_back.is_some() {
        return Ok(false);
    }
    if resp.succeeded() {
        if let Some(rev) = resp.header().map(|hd| hd.revision()) {
            h.hwm_revision = rev;
        }
        h.unsure.clear();
    }
    Ok(resp.succeeded())
}

/// After a failed compare with unanswered writes behind us: did one of them land? `Ok(true)`:
/// yes, its revision is adopted (the caller writes again).
async fn adopt_landed_write(h: &mut Held) -> std::result::Result<bool, String> {
    let slot = timed(h.timeout, "get", h.client.get(h.at.keys.slot.clone(), None)).await?;
    let ours = slot
        .kvs()
        .first()
        .is_some_and(|kv| kv.value() == h.token.as_bytes() && kv.lease() == h.lease_id);
    if !ours {
        return Ok(false);
    }
    let mark = timed(h.timeout, "get", h.client.get(h.at.keys.hwm.clone(), None)).await?;
    let Some(kv) = mark.kvs().first() else {
        return Ok(false);
    };
    match record::parse_mark(kv.value()) {
        Some(v) if h.unsure.contains(v) => {
            h.hwm_revision = kv.mod_revision();
            h.unsure.clear();
            Ok(true)
        }
        _ => Ok(false),
    }
}

// Modelled in verify/model/remote.pml: Holder, the renewal, late write, loss and close steps (STORE=2)
// (make model).
async fn renew(mut h: Held, ctx: SlotContext, stop: Arc<Stop>) {
    let state: &Window = &ctx.state;
    let mut renew_tick = tokio::time::interval(renew_period(h.at.reserve_ms));
    renew_tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let ka_every = Duration::from_millis(((h.ttl_s * 1000) / 3).max(200) as u64);
    let mut ka_tick = tokio::time::interval(ka_every);
    ka_tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut keeper = None;
    let mut watch = None;
    loop {
        if stop.is_stopped() {
            break;
        }
        // (Re)open the keep-alive and watch streams when they are down (after an outage).
        if keeper.is_none() {
            match timed(
                h.timeout,
                "keep-alive",
                h.client.lease_keep_alive(h.lease_id),
            )
            .await
            {
                Ok(k) => keeper = Some(k),
                Err(e) => state.failed(h.note("cannot keep the etcd lease alive", &e)),
            }
        }
        if watch.is_none() {
            match timed(
                h.timeout,
                "watch",
                h.client.watch(h.at.keys.slot.clone(), None),
            )
            .await
            {
                Ok(w) => watch = Some(w),
                Err(e) => state
                    .failed(h.note(&format!("cannot watch the slot key {}", h.at.keys.slot), &e)),
            }
        }
        let lost = tokio::select! {
            _ = stop.notify.notified() => break,
            _ = renew_tick.tick() => remote::renew_tick(&mut h, &ctx).await,
            // A renewal asked for now (`Generator::renew_lease`), on this task as every other.
            _ = stop.renew.notified() => remote::renew_tick(&mut h, &ctx).await,
            _ = ka_tick.tick() => {
                if let Some((k, _)) = keeper.as_mut() {
                    if let Err(e) = timed(h.timeout, "keep-alive", k.keep_alive()).await {
                        state.failed(h.note("cannot keep the etcd lease alive", &e));
                        keeper = None;
                    }
                }
                None
            }
            msg = async { keeper.as_mut().expect("checked").1.message().await }, if keeper.is_some() => {
                match msg {
                    Ok(Some(resp)) if resp.ttl() <= 0 => Some(format!(
                        "etcd lease {:x} expired or was revoked", h.lease_id
                    )),
                    Ok(Some(_)) => None,
                    Ok(None) | Err(_) => { keeper = None; None }
                }
            }
            msg = async { watch.as_mut().expect("checked").message().await }, if watch.is_some() => {
                match msg {
                    Ok(Some(resp)) => resp.events().iter().find_map(|ev| {
                        let ours = ev.kv().is_some_and(|kv| kv.value() == h.token.as_bytes());
                        match ev.event_type() {
                            EventType::Delete => Some(format!(
                                "the slot key {} was deleted (the etcd lease expired or was revoked)",
                                h.at.keys.slot
                            )),
                            EventType::Put if !ours => Some(format!(
                                "the slot key {} was overwritten by another holder",
                                h.at.keys.slot
                            )),
                            EventType::Put => None,
                        }
                    }),
                    Ok(None) | Err(_) => { watch = None; None }
                }
            }
        };
        if let Some(reason) = lost {
            state.lose(reason);
            // Nothing more to do: the slot is not ours. Wait for the generator to close, then
            // give our etcd lease back (if the slot key still hangs on it, that frees the slot
            // now rather than after the TTL; a lease already revoked is no error).
            stop.notify.notified().await;
            let _ = timed(h.timeout, "lease revoke", h.client.lease_revoke(h.lease_id)).await;
            return;
        }
    }
    // A clean close: leave the final R, then free the slot (revoking deletes the slot key).
    remote::finish(&mut h, &stop).await;
    let _ = timed(h.timeout, "lease revoke", h.client.lease_revoke(h.lease_id)).await;
}
