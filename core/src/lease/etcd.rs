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

use super::inspect::{report, SlotReport, StoreReport};
use super::record::{self, parse_ms, IdSpace};
use super::source::{check_common, Common, EtcdLeaseOptions};
use super::{
    guard_note, renew_period, slot_order, LeaseKind, LeaseState, Session, SlotContext, Stop,
};
use crate::error::{Error, Result};
use etcd_client::{
    Client, Compare, CompareOp, ConnectOptions, EventType, GetOptions, PutOptions, Txn, TxnOp,
    TxnOpResponse,
};
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

struct Keys {
    slot: String,
    hwm: String,
}

/// The guard a stored mark implies: `None` when it lies past the layout's window.
fn guard_of(value: Option<&[u8]>, now_ms: i64, reserve_ms: i64, window_end_ms: i64) -> Option<i64> {
    match value
        .and_then(|v| std::str::from_utf8(v).ok())
        .and_then(parse_ms)
    {
        Some(r) => (r <= window_end_ms).then_some(r),
        None => Some(now_ms.saturating_add(reserve_ms)),
    }
}

fn keys(prefix: &str, slot: u32) -> Keys {
    Keys {
        slot: format!("{prefix}/slot/{slot:04}"),
        hwm: format!("{prefix}/hwm/{slot:04}"),
    }
}

fn store_error(where_: &str, what: &str, e: impl std::fmt::Display) -> Error {
    Error::LeaseStore {
        reason: format!("{what} ({where_}): {e}"),
    }
}

/// Run `f` with a timeout; the error names what timed out.
async fn timed<T, E: std::fmt::Display>(
    d: Duration,
    what: &str,
    f: impl Future<Output = std::result::Result<T, E>>,
) -> std::result::Result<T, String> {
    match tokio::time::timeout(d, f).await {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(e)) => Err(format!("{what}: {e}")),
        Err(_) => Err(format!("{what}: timed out after {} ms", d.as_millis())),
    }
}

struct Held {
    client: Client,
    slot: u32,
    keys: Keys,
    token: String,
    lease_id: i64,
    common: Common,
    timeout: Duration,
    ttl_s: i64,
    store: String,
    /// The mod revision of the mark as we last wrote it (0: the key did not exist).
    hwm_revision: i64,
}

/// The checked prefix (no trailing `/`) and the store's name for messages.
fn check_options(o: &EtcdLeaseOptions) -> Result<(String, String)> {
    let invalid = |reason: String| Error::InvalidNodeSource { reason };
    if o.endpoints.is_empty() {
        return Err(invalid("etcd needs at least one endpoint".into()));
    }
    if !(1..=3600).contains(&o.ttl_s) {
        return Err(invalid(format!(
            "etcd ttl_s = {} is out of range: 1 to 3600",
            o.ttl_s
        )));
    }
    if !(1..=600_000).contains(&o.connect_timeout_ms) {
        return Err(invalid(format!(
            "etcd connect_timeout_ms = {} is out of range: 1 to 600000",
            o.connect_timeout_ms
        )));
    }
    let prefix = o.prefix.trim_end_matches('/').to_string();
    if prefix.is_empty() || !prefix.starts_with('/') {
        return Err(invalid(format!(
            "etcd prefix {:?} must start with '/' and name a directory such as /polyflake",
            o.prefix
        )));
    }
    let store = format!("etcd {} prefix {prefix}", o.endpoints.join(","));
    Ok((prefix, store))
}

fn runtime(store: &str) -> Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| store_error(store, "cannot start the tokio runtime", e))
}

async fn connect(o: &EtcdLeaseOptions, store: &str, timeout: Duration) -> Result<Client> {
    let options = ConnectOptions::new()
        .with_connect_timeout(timeout)
        .with_timeout(timeout)
        .with_keep_alive(Duration::from_secs(2), timeout);
    timed(
        timeout,
        "connect",
        Client::connect(o.endpoints.clone(), Some(options)),
    )
    .await
    .map_err(|e| store_error(store, "cannot reach etcd", e))
}

pub(crate) fn acquire(o: &EtcdLeaseOptions, ctx: SlotContext, generation: u64) -> Result<Session> {
    let common = check_common(
        ctx.layout,
        o.slots,
        &o.identity,
        o.reserve_ms,
        o.max_guard_wait_ms,
    )?;
    let (prefix, store) = check_options(o)?;
    let rt = runtime(&store)?;
    let timeout = Duration::from_millis(o.connect_timeout_ms);
    let (held, claim, guard, r, note) =
        rt.block_on(take(o, &prefix, &store, common, timeout, &ctx))?;
    ctx.state.start(guard, r, note);
    let stop = Stop::new();
    let slot = held.slot;
    let thread_stop = stop.clone();
    let thread = std::thread::Builder::new()
        .name(format!("polyflake-etcd-{slot}"))
        .spawn(move || {
            rt.block_on(renew(held, ctx, thread_stop));
        })
        .map_err(|e| store_error(&store, "cannot start the lease renewal thread", e))?;
    Ok(Session {
        slot,
        generation,
        stop,
        thread: Some(thread),
        file: None,
        claim,
    })
}

type Taken = (Held, Option<crate::registry::Claim>, i64, i64, String);

/// Check the store's ID space, recording ours if it has none (created only if absent).
async fn check_space(
    client: &mut Client,
    prefix: &str,
    store: &str,
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
        .map_err(|e| store_error(store, "cannot check the ID space", e))?;
    if resp.succeeded() {
        return Ok(());
    }
    let value = resp.op_responses().into_iter().find_map(|r| match r {
        TxnOpResponse::Get(g) => g.kvs().first().map(|kv| kv.value().to_vec()),
        _ => None,
    });
    let theirs = record::parse_space(value.as_deref().unwrap_or(b"")).map_err(|why| {
        store_error(
            store,
            &format!("cannot read the ID-space record {key}"),
            format!("{why} (delete it only when no generator uses this prefix)"),
        )
    })?;
    if theirs != ours {
        return Err(Error::IdSpaceMismatch {
            store: store.to_string(),
            store_space: theirs.to_string(),
            our_space: ours.to_string(),
        });
    }
    Ok(())
}

/// Every slot's key (taken or not) and mark, as stored.
async fn read_store(
    client: &mut Client,
    prefix: &str,
    store: &str,
    timeout: Duration,
) -> Result<(Vec<(u32, String)>, std::collections::HashMap<u32, Vec<u8>>)> {
    let err = |what: &str, e: String| store_error(store, what, e);
    let number = |key: &str| key.rsplit('/').next()?.parse::<u32>().ok();
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
    Ok((taken, marks))
}

async fn take(
    o: &EtcdLeaseOptions,
    prefix: &str,
    store: &str,
    common: Common,
    timeout: Duration,
    ctx: &SlotContext,
) -> Result<Taken> {
    let err = |what: &str, e: String| store_error(store, what, e);
    let mut client = connect(o, store, timeout).await?;
    check_space(&mut client, prefix, store, ctx.space(), timeout).await?;
    let lease_id = timed(timeout, "lease grant", client.lease_grant(o.ttl_s, None))
        .await
        .map_err(|e| err("cannot create an etcd lease", e))?
        .id();
    let token = format!("{}/{}/{lease_id:x}", common.identity, std::process::id());
    // Free slots whose mark has passed first (the slot this identity held before ahead of
    // the rest), then the nearest guard; poisoned ones last.
    let owner_key = format!("{prefix}/owner/{}", common.identity);
    let mut own = None;
    if let Ok(resp) = timed(timeout, "get", client.get(owner_key.clone(), None)).await {
        own = resp
            .kvs()
            .first()
            .and_then(|kv| kv.value_str().ok())
            .and_then(|v| v.parse::<u32>().ok());
    }
    let (taken, marks) = read_store(&mut client, prefix, store, timeout).await?;
    let window_end = ctx.window_end_ms();
    let now = ctx.now_ms()?;
    let order = slot_order(
        (0..common.slots)
            .filter(|n| !taken.iter().any(|(t, _)| t == n))
            .filter_map(|n| {
                let g = guard_of(
                    marks.get(&n).map(Vec::as_slice),
                    now,
                    common.reserve_ms,
                    window_end,
                )?;
                Some((n, Some(g - now).filter(|w| *w > 0), own == Some(n)))
            }),
        common.max_guard_wait_ms,
    );

    for slot in order {
        let Some(claim) = ctx.claim(slot) else {
            continue;
        };
        let k = keys(prefix, slot);
        let txn = Txn::new()
            .when([Compare::create_revision(
                k.slot.clone(),
                CompareOp::Equal,
                0,
            )])
            .and_then([
                TxnOp::put(
                    k.slot.clone(),
                    token.clone(),
                    Some(PutOptions::new().with_lease(lease_id)),
                ),
                TxnOp::get(k.hwm.clone(), None),
            ]);
        let resp = timed(timeout, "txn", client.txn(txn))
            .await
            .map_err(|e| err("cannot take a slot", e))?;
        if !resp.succeeded() {
            continue;
        }
        let mark = resp.op_responses().into_iter().find_map(|r| match r {
            TxnOpResponse::Get(g) => g
                .kvs()
                .first()
                .map(|kv| (kv.value().to_vec(), kv.mod_revision())),
            _ => None,
        });
        let now = ctx.now_ms()?;
        let Some(guard) = guard_of(
            mark.as_ref().map(|(v, _)| v.as_slice()),
            now,
            common.reserve_ms,
            window_end,
        ) else {
            // A mark past the layout's window: give the slot back, try the next.
            let _ = timed(
                timeout,
                "txn",
                client.txn(
                    Txn::new()
                        .when([Compare::value(
                            k.slot.clone(),
                            CompareOp::Equal,
                            token.clone(),
                        )])
                        .and_then([TxnOp::delete(k.slot.clone(), None)]),
                ),
            )
            .await;
            continue;
        };
        let r = guard.max(now).saturating_add(common.reserve_ms);
        let note = guard_note(slot, guard, now, common.max_guard_wait_ms);
        let held = Held {
            client,
            slot,
            keys: k,
            token,
            lease_id,
            common,
            timeout,
            ttl_s: o.ttl_s,
            store: store.to_string(),
            hwm_revision: mark.map(|(_, rev)| rev).unwrap_or(0),
        };
        let mut held = held;
        match write_hwm(&mut held, r).await {
            Ok(true) => {}
            Ok(false) => {
                return Err(err(
                    "lost the slot while taking it",
                    "the slot key changed".into(),
                ))
            }
            Err(e) => return Err(err("cannot write the high-water mark", e)),
        }
        let _ = timed(
            timeout,
            "put owner",
            held.client.put(owner_key, slot.to_string(), None),
        )
        .await;
        return Ok((held, claim, guard, r, note));
    }
    let _ = timed(timeout, "lease revoke", client.lease_revoke(lease_id)).await;
    Err(Error::NoFreeSlot {
        dir_or_prefix: store.to_string(),
        slots: common.slots,
    })
}

/// Write R in a transaction that proves we still own the slot and that the mark is the one we
/// last wrote (so R in the store only grows). `Ok(false)`: either is no longer true.
async fn write_hwm(h: &mut Held, r: i64) -> std::result::Result<bool, String> {
    let mark_unchanged = if h.hwm_revision == 0 {
        Compare::create_revision(h.keys.hwm.clone(), CompareOp::Equal, 0)
    } else {
        Compare::mod_revision(h.keys.hwm.clone(), CompareOp::Equal, h.hwm_revision)
    };
    let txn = Txn::new()
        .when([
            Compare::value(h.keys.slot.clone(), CompareOp::Equal, h.token.clone()),
            Compare::lease(h.keys.slot.clone(), CompareOp::Equal, h.lease_id),
            mark_unchanged,
        ])
        .and_then([TxnOp::put(h.keys.hwm.clone(), r.to_string(), None)]);
    let resp = timed(h.timeout, "txn", h.client.txn(txn)).await?;
    if resp.succeeded() {
        if let Some(rev) = resp.header().map(|hd| hd.revision()) {
            h.hwm_revision = rev;
        }
    }
    Ok(resp.succeeded())
}

async fn renew(mut h: Held, ctx: SlotContext, stop: Arc<Stop>) {
    let state: &LeaseState = &ctx.state;
    let mut renew_tick = tokio::time::interval(renew_period(h.common.reserve_ms));
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
                Err(e) => state.failed(format!("{}: {e}", h.store)),
            }
        }
        if watch.is_none() {
            match timed(
                h.timeout,
                "watch",
                h.client.watch(h.keys.slot.clone(), None),
            )
            .await
            {
                Ok(w) => watch = Some(w),
                Err(e) => state.failed(format!("{}: {e}", h.store)),
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
                match write_hwm(&mut h, r).await {
                    Ok(true) => { state.publish(r); state.renewed(); None }
                    Ok(false) => Some(format!(
                        "the slot key {} is no longer ours, or its high-water mark {} was changed by someone else (the etcd lease expired or was revoked, or the keys were edited)",
                        h.keys.slot, h.keys.hwm
                    )),
                    Err(e) => { state.failed(format!("{}: {e}", h.store)); None }
                }
            }
            _ = ka_tick.tick() => {
                if let Some((k, _)) = keeper.as_mut() {
                    if let Err(e) = timed(h.timeout, "keep-alive", k.keep_alive()).await {
                        state.failed(format!("{}: {e}", h.store));
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
                                h.keys.slot
                            )),
                            EventType::Put if !ours => Some(format!(
                                "the slot key {} was overwritten by another holder",
                                h.keys.slot
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
    if let Some(r) = stop.final_r_ms() {
        let _ = write_hwm(&mut h, r).await;
    }
    let _ = timed(h.timeout, "lease revoke", h.client.lease_revoke(h.lease_id)).await;
}

/// Read every slot under the prefix without taking anything.
pub(crate) fn inspect(o: &EtcdLeaseOptions) -> Result<StoreReport> {
    let (prefix, store) = check_options(o)?;
    let rt = runtime(&store)?;
    let timeout = Duration::from_millis(o.connect_timeout_ms);
    rt.block_on(async {
        let mut client = connect(o, &store, timeout).await?;
        let space_value = timed(timeout, "get", client.get(format!("{prefix}/space"), None))
            .await
            .map_err(|e| store_error(&store, "cannot read the ID space", e))?
            .kvs()
            .first()
            .map(|kv| kv.value().to_vec());
        let space = match space_value {
            Some(v) => Some(
                record::parse_space(&v)
                    .map_err(|why| store_error(&store, "cannot read the ID-space record", why))?,
            ),
            None => None,
        };
        let (taken, marks) = read_store(&mut client, &prefix, &store, timeout).await?;
        let now = crate::clock::SystemClock::read_ms();
        let window_end = space
            .map(|s| s.epoch_ms.saturating_add(s.layout.max_elapsed_ms() as i64))
            .unwrap_or(i64::MAX);
        let mut numbers: Vec<u32> = taken
            .iter()
            .map(|(n, _)| *n)
            .chain(marks.keys().copied())
            .collect();
        numbers.sort_unstable();
        numbers.dedup();
        let slots: Vec<SlotReport> = numbers
            .into_iter()
            .map(|n| {
                let holder = taken.iter().find(|(t, _)| *t == n).map(|(_, v)| v.clone());
                let mark = marks.get(&n);
                let guard = guard_of(
                    mark.map(Vec::as_slice),
                    now,
                    o.reserve_ms as i64,
                    window_end,
                );
                let parsed = mark
                    .and_then(|v| std::str::from_utf8(v).ok())
                    .and_then(parse_ms);
                let state = match (mark, parsed) {
                    (None, _) => "missing".to_string(),
                    (Some(_), Some(_)) => "complete".to_string(),
                    (Some(_), None) => "incomplete: not a number of ms".to_string(),
                };
                let identity = holder
                    .as_ref()
                    .and_then(|h| h.split('/').next())
                    .map(str::to_string);
                report(
                    n,
                    holder.is_some(),
                    identity,
                    holder,
                    parsed.or(guard),
                    guard.is_none(),
                    now,
                    o.max_guard_wait_ms,
                    state,
                )
            })
            .collect();
        Ok(StoreReport {
            kind: LeaseKind::Etcd,
            store: store.clone(),
            space,
            now_ms: now,
            slots,
        })
    })
}
