//! etcd leases: the etcd v3 API through `etcd-client`, on a current-thread tokio runtime owned by
//! the lease's background thread.
//!
//! Keys under the prefix:
//! - `{prefix}/slot/NNNN`: the slot, created only if absent (a transaction on
//!   `create_revision == 0`) and attached to an etcd lease kept alive in the background; its value
//!   is this holder's token.
//! - `{prefix}/hwm/NNNN`: the slot's high-water mark R, a durable key (no lease), written only by
//!   a transaction that compares the slot key's value and lease with ours.
//! - `{prefix}/owner/{identity}`: the slot an identity held last (tried first next time).

use super::source::{check_common, Common, EtcdLeaseOptions};
use super::{renew_period, LeaseState, Session, SlotContext, Stop};
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
}

pub(crate) fn acquire(o: &EtcdLeaseOptions, ctx: SlotContext) -> Result<Session> {
    let common = check_common(ctx.layout, o.slots, &o.identity, o.reserve_ms)?;
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
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| store_error(&store, "cannot start the tokio runtime", e))?;
    let timeout = Duration::from_millis(o.connect_timeout_ms);
    let (held, claim, previous, r) =
        rt.block_on(take(o, &prefix, &store, common, timeout, &ctx))?;
    ctx.state.start(previous, r);
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
        stop,
        thread: Some(thread),
        fd: None,
        _claim: claim,
    })
}

type Taken = (Held, Option<crate::registry::Claim>, Option<i64>, i64);

async fn take(
    o: &EtcdLeaseOptions,
    prefix: &str,
    store: &str,
    common: Common,
    timeout: Duration,
    ctx: &SlotContext,
) -> Result<Taken> {
    let err = |what: &str, e: String| store_error(store, what, e);
    let options = ConnectOptions::new()
        .with_connect_timeout(timeout)
        .with_timeout(timeout)
        .with_keep_alive(Duration::from_secs(2), timeout);
    let mut client = timed(
        timeout,
        "connect",
        Client::connect(o.endpoints.clone(), Some(options)),
    )
    .await
    .map_err(|e| err("cannot reach etcd", e))?;
    let lease_id = timed(timeout, "lease grant", client.lease_grant(o.ttl_s, None))
        .await
        .map_err(|e| err("cannot create an etcd lease", e))?
        .id();
    let token = format!("{}/{}/{lease_id:x}", common.identity, std::process::id());
    // The slot this identity held before, then the free ones in order.
    let owner_key = format!("{prefix}/owner/{}", common.identity);
    let mut order = Vec::new();
    if let Ok(resp) = timed(timeout, "get", client.get(owner_key.clone(), None)).await {
        if let Some(n) = resp
            .kvs()
            .first()
            .and_then(|kv| kv.value_str().ok())
            .and_then(|v| v.parse::<u32>().ok())
        {
            if n < common.slots {
                order.push(n);
            }
        }
    }
    let taken: Vec<u32> = timed(
        timeout,
        "list slots",
        client.get(
            format!("{prefix}/slot/"),
            Some(GetOptions::new().with_prefix().with_keys_only()),
        ),
    )
    .await
    .map_err(|e| err("cannot list the slots", e))?
    .kvs()
    .iter()
    .filter_map(|kv| kv.key_str().ok()?.rsplit('/').next()?.parse().ok())
    .collect();
    let first = order.first().copied();
    order.extend((0..common.slots).filter(|n| !taken.contains(n) && first != Some(*n)));

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
        let previous = resp.op_responses().into_iter().find_map(|r| match r {
            TxnOpResponse::Get(g) => g
                .kvs()
                .first()
                .and_then(|kv| kv.value_str().ok()?.trim().parse::<i64>().ok()),
            _ => None,
        });
        let now = ctx.now_ms()?;
        let r = previous.unwrap_or(now).max(now) + common.reserve_ms;
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
        return Ok((held, claim, previous, r));
    }
    let _ = timed(timeout, "lease revoke", client.lease_revoke(lease_id)).await;
    Err(Error::NoFreeSlot {
        dir_or_prefix: store.to_string(),
        slots: common.slots,
    })
}

/// Write R in a transaction that proves we still own the slot. `Ok(false)`: we do not.
async fn write_hwm(h: &mut Held, r: i64) -> std::result::Result<bool, String> {
    let txn = Txn::new()
        .when([
            Compare::value(h.keys.slot.clone(), CompareOp::Equal, h.token.clone()),
            Compare::lease(h.keys.slot.clone(), CompareOp::Equal, h.lease_id),
        ])
        .and_then([TxnOp::put(h.keys.hwm.clone(), r.to_string(), None)]);
    timed(h.timeout, "txn", h.client.txn(txn))
        .await
        .map(|resp| resp.succeeded())
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
                        "the slot key {} is no longer ours (the etcd lease expired or was revoked)",
                        h.keys.slot
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
            // Nothing more to do: the slot is not ours. Wait for the generator to close.
            stop.notify.notified().await;
            return;
        }
    }
    // A clean close: leave the final R, then free the slot (revoking deletes the slot key).
    if let Some(r) = stop.final_r_ms() {
        let _ = write_hwm(&mut h, r).await;
    }
    let _ = timed(h.timeout, "lease revoke", h.client.lease_revoke(h.lease_id)).await;
}
