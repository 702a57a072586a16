//! The operator's side of an etcd lease store: `lease inspect` (every slot, the cluster and its
//! revision) and `lease fence`, apart from the holders' protocol.

use super::super::remote::Found;
use super::*;

/// Read every slot under the prefix without taking anything.
pub(crate) fn inspect(o: &EtcdLeaseOptions) -> Result<super::super::inspect::StoreReport> {
    let checked = check_options(o)?;
    let (prefix, store, creds) = (checked.prefix, checked.store, checked.creds);
    let rt = runtime(&store)?;
    let timeout = o.remote().timeout();
    rt.block_on(async {
        let mut client = connect(o, &creds, &store, timeout).await?;
        let space_reply = timed(timeout, "get", client.get(format!("{prefix}/space"), None))
            .await
            .map_err(|e| store_error(&store, "cannot read the ID space", e))?;
        let header = space_reply
            .header()
            .map(|h| (h.cluster_id(), h.member_id(), h.revision()));
        let space_value = space_reply.kvs().first().map(|kv| kv.value().to_vec());
        let space = match space_value {
            Some(v) => Some(
                record::parse_space(&v)
                    .map_err(|why| store_error(&store, "cannot read the ID-space record", why))?,
            ),
            None => None,
        };
        let contents = read_store(&mut client, &prefix, &store, creds.username(), timeout).await?;
        let fence_ms = timed(timeout, "get", client.get(fence::fence_key(&prefix), None))
            .await
            .ok()
            .and_then(|r| r.kvs().first().and_then(|kv| fence::parse(kv.value())));
        let found = Found {
            space,
            contents,
            fence_ms,
        };
        let mut report = store_report(LeaseKind::Etcd, &store, &found, o.guards());
        if let Some((cluster, member, revision)) = header {
            report.store_identity = Some(format!("etcd cluster {cluster:x}, member {member:x}"));
            report.revision = Some(revision);
        }
        Ok(report)
    })
}

/// Raise the store's fence to `now + margin_ms` (a compare-and-swap on the fence key, so two
/// operators fencing at once both leave the higher value).
pub(crate) fn fence(o: &EtcdLeaseOptions, margin_ms: u64) -> Result<FenceReport> {
    let checked = check_options(o)?;
    let (prefix, store, creds) = (checked.prefix, checked.store, checked.creds);
    let rt = runtime(&store)?;
    let timeout = o.remote().timeout();
    let key = fence::fence_key(&prefix);
    rt.block_on(async {
        let mut client = connect(o, &creds, &store, timeout).await?;
        loop {
            let got = timed(timeout, "get", client.get(key.clone(), None))
                .await
                .map_err(|e| store_error(&store, "cannot read the fence", e))?;
            let (previous, unchanged) = match got.kvs().first() {
                None => (
                    None,
                    Compare::create_revision(key.clone(), CompareOp::Equal, 0),
                ),
                Some(kv) => (
                    // An unreadable fence is replaced by a readable one.
                    fence::parse(kv.value()),
                    Compare::mod_revision(key.clone(), CompareOp::Equal, kv.mod_revision()),
                ),
            };
            let value = fence::next(previous, margin_ms)?;
            let txn = Txn::new().when([unchanged]).and_then([TxnOp::put(
                key.clone(),
                value.to_string(),
                None,
            )]);
            let resp = timed(timeout, "txn", client.txn(txn))
                .await
                .map_err(|e| store_error(&store, "cannot write the fence", e))?;
            if resp.succeeded() {
                return Ok(FenceReport {
                    store: store.clone(),
                    fence_ms: value,
                    previous_ms: previous,
                });
            }
        }
    })
}
