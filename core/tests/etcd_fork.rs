//! Fork with an etcd lease: the child of a process holding an etcd lease takes a fresh slot (a
//! new etcd client, lease and runtime) before its first ID, the parent keeps its own, and their
//! IDs never collide; the child's close frees its slot. Its own test binary: forking a process
//! that runs other test threads is unsafe.

mod lease_support;

use lease_support::*;
use polyflake::{EtcdLeaseOptions, Generator, NodeSource};
use std::collections::HashSet;
use std::time::Duration;

#[test]
fn forked_child_re_leases_from_etcd_and_ids_never_collide() {
    let etcd = Etcd::start();
    let mut o = EtcdLeaseOptions::new(vec![etcd.client_url.clone()]);
    o.store.prefix = "/pf-fork".into();
    o.common.slots = Some(4);
    o.common.reserve_ms = 500;
    o.ttl_s = 2;
    let g = Generator::builder_from(NodeSource::Etcd(o))
        .build()
        .unwrap();
    g.wait_ready(Duration::from_secs(5)).unwrap();
    let parent_node = g.node_id();
    let mut parent_ids: Vec<u64> = (0..2000).map(|_| g.next_id().unwrap()).collect();

    let text = in_forked_child(|| {
        let mut out = Vec::new();
        let ok = (|| -> Result<(), polyflake::Error> {
            g.wait_ready(Duration::from_secs(10))?;
            let mut buf = vec![0u64; 3000];
            g.next_ids(&mut buf)?;
            out.extend(buf);
            for _ in 0..2000 {
                out.push(g.next_id()?);
            }
            Ok(())
        })();
        let head = format!(
            "{} {} {}",
            ok.map(|_| "ok".to_string())
                .unwrap_or_else(|e| e.to_string()),
            g.node_id(),
            g.health().ok
        );
        // The child's close revokes its own etcd lease: its slot is free at once.
        g.close();
        let ids: Vec<String> = out.iter().map(u64::to_string).collect();
        format!("{head}\n{}", ids.join("\n"))
    });
    parent_ids.extend((0..2000).map(|_| g.next_id().unwrap()));

    let mut lines = text.lines();
    let head: Vec<&str> = lines.next().unwrap().split(' ').collect();
    assert_eq!(head[0], "ok", "child: {text:.300}");
    let child_node: u32 = head[1].parse().unwrap();
    assert_eq!(head[2], "true", "child health");
    assert_ne!(child_node, parent_node, "the child took a fresh slot");
    let child_ids: Vec<u64> = lines.map(|l| l.parse().unwrap()).collect();
    assert_eq!(child_ids.len(), 5000);
    assert!(child_ids
        .iter()
        .all(|&id| g.decode(id).unwrap().node_id == child_node));
    let mut all = HashSet::new();
    for id in parent_ids.iter().chain(&child_ids) {
        assert!(all.insert(*id), "duplicate {id}");
    }
    // The parent is unaffected and still holds its slot; the child's slot key is gone.
    assert!(g.health().ok, "{:?}", g.health());
    g.next_id().unwrap();
    let keys = etcd
        .etcdctl(&["get", "--prefix", "/pf-fork/slot/", "--keys-only"])
        .unwrap();
    assert!(
        keys.contains(&format!("/pf-fork/slot/{parent_node:04}")),
        "{keys}"
    );
    assert!(
        !keys.contains(&format!("/pf-fork/slot/{child_node:04}")),
        "{keys}"
    );
}
