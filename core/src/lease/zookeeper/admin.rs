//! The operator's side of a ZooKeeper lease store: `lease inspect` (every slot, the store's
//! database epoch and latest zxid) and `lease fence`, apart from the holders' protocol.

use super::super::remote::{keys, Found};
use super::*;

/// Read every slot under the prefix without taking anything.
pub(crate) fn inspect(o: &ZooKeeperLeaseOptions) -> Result<StoreReport> {
    let checked = check_options(o)?;
    let (prefix, store, creds) = (checked.prefix, checked.store, checked.creds);
    let rt = runtime(&store)?;
    let timeout = o.remote().timeout();
    let user = creds.username();
    rt.block_on(with_spawner(async {
        let client = connect(o, &creds, &store, timeout).await?;
        let states = client.state_watcher();
        let space = match call(timeout, client.get_data(&format!("{prefix}/space"))).await {
            Ok((v, _)) => Some(
                record::parse_space(&v)
                    .map_err(|why| store_error(&store, "cannot read the ID-space record", why))?,
            ),
            Err(Fail::Zk(zk::Error::NoNode)) => None,
            Err(e) => return Err(fail(&store, "cannot read the ID space", user, e)),
        };
        let contents = read_store(&client, &prefix, &store, user, timeout).await?;
        let fence_ms = match call(timeout, client.get_data(&fence::fence_key(&prefix))).await {
            Ok((v, _)) => fence::parse(&v),
            Err(_) => None,
        };
        let found = Found {
            space,
            contents,
            fence_ms,
        };
        let mut report = store_report(LeaseKind::ZooKeeper, &store, &found, o.guards());
        let marks = found.contents.marks.keys();
        let zxid = latest_zxid(&client, &prefix, marks, timeout).await;
        if zxid > 0 {
            report.store_identity = Some(format!("ZooKeeper database epoch {}", zxid >> 32));
            report.revision = Some(zxid);
        }
        close(client, states).await;
        Ok(report)
    }))
}

/// The latest zxid among the lease's znodes: the prefix, its slot and mark directories (their
/// children's creations and deletions) and each mark present (its writes). Costs one request per
/// mark; 0 when nothing could be read.
async fn latest_zxid<'a>(
    client: &zk::Client,
    prefix: &str,
    marks: impl Iterator<Item = &'a u32>,
    timeout: Duration,
) -> i64 {
    let paths: Vec<String> = [
        prefix.to_string(),
        format!("{prefix}/slot"),
        format!("{prefix}/hwm"),
        fence::fence_key(prefix),
    ]
    .into_iter()
    .chain(marks.map(|&n| keys(prefix, n).hwm))
    .collect();
    // Every request is sent when its future is made: make them all, then wait in turn.
    let pending: Vec<_> = paths.iter().map(|p| client.check_stat(p)).collect();
    let mut latest = 0;
    for reply in pending {
        if let Ok(Some(stat)) = call(timeout, reply).await {
            latest = latest.max(stat.mzxid).max(stat.pzxid).max(stat.czxid);
        }
    }
    latest
}

/// Raise the store's fence to `now + margin_ms` (created if absent, else set on the version
/// read, so two operators fencing at once both leave the higher value).
pub(crate) fn fence(o: &ZooKeeperLeaseOptions, margin_ms: u64) -> Result<FenceReport> {
    let checked = check_options(o)?;
    let (prefix, store, creds) = (checked.prefix, checked.store, checked.creds);
    let rt = runtime(&store)?;
    let timeout = o.remote().timeout();
    let user = creds.username();
    let acls = acl_list(&creds);
    let key = fence::fence_key(&prefix);
    rt.block_on(with_spawner(async {
        let client = connect(o, &creds, &store, timeout).await?;
        let states = client.state_watcher();
        let result = async {
            let dir = zk::CreateMode::Persistent.with_acls(zk::Acls::new(&acls));
            call(timeout, client.mkdir(&prefix, &dir))
                .await
                .map_err(|e| fail(&store, &format!("cannot create {prefix}"), user, e))?;
            loop {
                let (previous, version) = match call(timeout, client.get_data(&key)).await {
                    Ok((v, stat)) => (fence::parse(&v), Some(stat.version)),
                    Err(Fail::Zk(zk::Error::NoNode)) => (None, None),
                    Err(e) => return Err(fail(&store, "cannot read the fence", user, e)),
                };
                let value = fence::next(previous, margin_ms)?;
                let text = value.to_string();
                let wrote = match version {
                    None => match call(timeout, client.create(&key, text.as_bytes(), &dir)).await {
                        Ok(_) => true,
                        Err(Fail::Zk(zk::Error::NodeExists)) => false,
                        Err(e) => return Err(fail(&store, "cannot write the fence", user, e)),
                    },
                    Some(v) => {
                        match call(timeout, client.set_data(&key, text.as_bytes(), Some(v))).await {
                            Ok(_) => true,
                            Err(Fail::Zk(zk::Error::BadVersion)) => false,
                            Err(e) => return Err(fail(&store, "cannot write the fence", user, e)),
                        }
                    }
                };
                if wrote {
                    return Ok(FenceReport {
                        store: store.clone(),
                        fence_ms: value,
                        previous_ms: previous,
                    });
                }
            }
        }
        .await;
        close(client, states).await;
        result
    }))
}
