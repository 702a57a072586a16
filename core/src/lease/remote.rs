//! What the two remote stores (etcd, ZooKeeper) share: the take and renewal algorithm
//! (`remote/protocol.rs`, over the `Store` and `Holder` interfaces), their option checks, errors
//! with timeouts, the runtime, the order free slots are tried in, the ID-space comparison, and
//! the operator's report of a store.

use super::creds::Credentials;
use super::inspect::{report, SlotReport, StoreReport};
use super::options::Common;
use super::order::{guard_of, SlotOrder, Surveyed};
use super::read_options::{Guards, Remote};
use super::record::{self, IdSpace};
use super::session::SlotContext;
pub(crate) use super::store::{slot_number, store_error};
use super::{slot_order, LeaseKind};
use crate::error::{Error, Result};
use std::collections::HashMap;
use std::future::Future;
use std::time::Duration;

mod protocol;
pub(crate) use protocol::{
    finish, renew_tick, start, take, Contents, Created, HeldSlot, Holder, Lost, Mark, Store,
};

/// A slot's two keys (etcd) or znodes (ZooKeeper).
pub(crate) struct Keys {
    /// `{prefix}/slot/NNNN`: held while it exists, by its holder's lease or session.
    pub slot: String,
    /// `{prefix}/hwm/NNNN`: the high-water mark R, durable.
    pub hwm: String,
    /// `{prefix}/fence`: the store's fence (`polyflake lease fence`, after a restore).
    pub fence: String,
}

pub(crate) fn keys(prefix: &str, slot: u32) -> Keys {
    Keys {
        slot: format!("{prefix}/slot/{}", record::slot_name(slot)),
        hwm: format!("{prefix}/hwm/{}", record::slot_name(slot)),
        fence: super::fence::fence_key(prefix),
    }
}

/// An error and every error under it, `a: b: c` (TLS and gRPC errors hide the cause deep down).
#[cfg_attr(not(feature = "etcd"), allow(dead_code))]
pub(crate) fn chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut next = e.source();
    while let Some(s) = next {
        let part = s.to_string();
        if !text.contains(&part) {
            text.push_str(": ");
            text.push_str(&part);
        }
        next = s.source();
    }
    text
}

/// Run `f` with a timeout; the error names what timed out.
#[cfg_attr(not(feature = "etcd"), allow(dead_code))]
pub(crate) async fn timed<T, E: std::fmt::Display>(
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

/// The marks a remote holder wrote without an answer since its last answered write (oldest
/// first, at most `Unsure::KEEP`): any of them may have been applied. When more go unanswered
/// the oldest are forgotten, which can only make a landed write look foreign (the lease is then
/// lost, never kept wrongly).
#[derive(Debug, Default)]
pub(crate) struct Unsure(Vec<i64>);

impl Unsure {
    /// How many unanswered marks are remembered.
    const KEEP: usize = 64;

    pub(crate) fn add(&mut self, r: i64) {
        if self.0.len() == Self::KEEP {
            self.0.remove(0);
        }
        self.0.push(r);
    }

    pub(crate) fn contains(&self, r: i64) -> bool {
        self.0.contains(&r)
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub(crate) fn clear(&mut self) {
        self.0.clear();
    }
}

/// The current-thread runtime a lease's background thread owns.
pub(crate) fn runtime(store: &str) -> Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| store_error(store, "cannot start the tokio runtime", e))
}

/// A remote store's options, checked.
pub(crate) struct Checked {
    /// The key prefix, without a trailing `/`.
    pub prefix: String,
    /// The store's name for messages (`etcd ENDPOINTS prefix PREFIX`).
    pub store: String,
    /// The credentials, read from their files.
    pub creds: Credentials,
}

impl Checked {
    /// The prefix, the store's name and the credentials.
    pub(crate) fn parts(&self) -> (&str, &str, &Credentials) {
        (&self.prefix, &self.store, &self.creds)
    }

    /// What the store's first step needs, from these options and the generator's context.
    pub(crate) fn opening<'a>(
        &'a self,
        common: &'a Common,
        ctx: &SlotContext,
        timeout: Duration,
    ) -> Opening<'a> {
        Opening {
            checked: self,
            identity: &common.identity,
            space: ctx.space(),
            timeout,
        }
    }
}

/// What a store's first step (connect, check the ID space, start its lease or session) needs.
pub(crate) struct Opening<'a> {
    /// The checked options.
    pub checked: &'a Checked,
    /// Our identity, for the holder token.
    pub identity: &'a str,
    /// The ID space to find in the store, or record in it.
    pub space: IdSpace,
    /// Every request's timeout.
    pub timeout: Duration,
}

/// Check what both remote stores' options share; the prefix without a trailing `/`.
pub(crate) fn check_remote(kind: &str, options: Remote<'_>, what_servers: &str) -> Result<String> {
    let Remote {
        servers,
        prefix,
        connect_timeout_ms,
    } = options;
    let invalid = |reason: String| Error::InvalidNodeSource { reason };
    if servers.iter().all(|s| s.trim().is_empty()) {
        return Err(invalid(format!("{kind} needs at least one {what_servers}")));
    }
    if !(1..=600_000).contains(&connect_timeout_ms) {
        return Err(invalid(format!(
            "{kind} connect_timeout_ms = {connect_timeout_ms} is out of range: 1 to 600000"
        )));
    }
    let trimmed = prefix.trim_end_matches('/').to_string();
    if trimmed.is_empty()
        || !trimmed.starts_with('/')
        || trimmed.contains("//")
        || trimmed.chars().any(char::is_control)
    {
        return Err(invalid(format!(
            "{kind} prefix {prefix:?} must start with '/' and name a directory such as /polyflake"
        )));
    }
    Ok(trimmed)
}

/// The free slots to try, in order (see `slot_order`): `taken` are the held ones, `marks` the
/// stored marks, `own` the slot this identity held last. Costs what the store holds: a number
/// with neither a slot key nor a mark is a new slot, produced only when it is reached.
pub(crate) fn free_slot_order(
    common: &Common,
    taken: &HashMap<u32, String>,
    marks: &HashMap<u32, Vec<u8>>,
    own: Option<u32>,
    now: i64,
    window_end: i64,
) -> SlotOrder {
    let mut held: Vec<u32> = taken.keys().copied().collect();
    held.sort_unstable();
    let mut candidates: Vec<u32> = marks.keys().copied().chain(own).collect();
    candidates.sort_unstable();
    candidates.dedup();
    let mut present = held.clone();
    let survey = candidates
        .into_iter()
        .filter(|n| held.binary_search(n).is_err())
        .filter_map(|n| {
            let mark = marks.get(&n).and_then(|v| record::parse_mark(v));
            let g = guard_of(mark, now, common.reserve_ms, window_end);
            let Some(g) = g else {
                // Past the layout's window: never taken, not new either.
                present.push(n);
                return None;
            };
            Some(Surveyed {
                slot: n,
                wait_ms: Some(g - now).filter(|w| *w > 0),
                ours: own == Some(n),
            })
        })
        .collect::<Vec<_>>();
    slot_order(
        survey,
        present,
        common.slots,
        common.reserve_ms,
        common.max_guard_wait_ms,
    )
}

/// Compare the store's ID-space record (`value`, as found at `key`) with ours.
pub(crate) fn compare_space(store: &str, key: &str, value: &[u8], ours: IdSpace) -> Result<()> {
    let theirs = record::parse_space(value).map_err(|why| {
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

/// What the operator's look at a remote store found: its ID space, its slots and marks, its
/// fence.
pub(crate) struct Found {
    pub space: Option<IdSpace>,
    pub contents: Contents,
    pub fence_ms: Option<i64>,
}

/// The operator's view of a remote store: each slot's holder (the slot key's or znode's value,
/// `identity/pid/...`) and mark.
pub(crate) fn store_report(
    kind: LeaseKind,
    store: &str,
    found: &Found,
    guards: Guards,
) -> StoreReport {
    let Guards {
        reserve_ms,
        max_guard_wait_ms,
    } = guards;
    let Found {
        space,
        contents: Contents { taken, marks },
        fence_ms,
    } = found;
    let space = *space;
    let fence_ms = *fence_ms;
    let now = crate::clock::SystemClock::read_ms();
    let window_end = space
        .map(|s| s.epoch_ms.saturating_add(s.layout.max_elapsed_ms() as i64))
        .unwrap_or(i64::MAX);
    let mut numbers: Vec<u32> = taken.keys().chain(marks.keys()).copied().collect();
    numbers.sort_unstable();
    numbers.dedup();
    let slots: Vec<SlotReport> = numbers
        .into_iter()
        .map(|n| {
            let holder = taken.get(&n).cloned();
            let mark = marks.get(&n);
            let parsed = mark.and_then(|v| record::parse_mark(v));
            let guard = guard_of(parsed, now, reserve_ms as i64, window_end);
            let state = match (mark, parsed) {
                (None, _) => "missing".to_string(),
                (Some(_), Some(_)) => "complete".to_string(),
                (Some(_), None) => "incomplete: not a number of ms".to_string(),
            };
            let identity = holder
                .as_ref()
                .and_then(|h| record::parse_token(h.as_bytes()))
                .map(|t| t.identity.to_string());
            report(
                n,
                holder.is_some(),
                identity,
                holder,
                parsed.or(guard),
                guard.is_none(),
                now,
                max_guard_wait_ms,
                state,
            )
        })
        .collect();
    StoreReport {
        kind,
        store: store.to_string(),
        space,
        now_ms: now,
        slots,
        fence_ms,
        store_identity: None,
        revision: None,
    }
}
