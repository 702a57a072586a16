//! Fork with ZooKeeper leases. The ZooKeeper client (zookeeper-client) does its I/O on
//! async-io's process-wide reactor thread, which a forked child does not have: so a generator
//! made AFTER fork works in the child, and a child forked after the process used ZooKeeper gets
//! a clear LEASE_STORE error at once (never a hang, never the parent's node id), while the
//! parent goes on. Its own test binary: forking a process that runs other test threads is
//! unsafe.

mod lease_support;

use lease_support::*;
use polyflake::{Generator, NodeSource, ZooKeeperLeaseOptions};
use std::collections::HashSet;
use std::time::{Duration, Instant};

#[test]
fn zookeeper_leases_across_fork() {
    let zk = ZooKeeper::start();
    let mut o = ZooKeeperLeaseOptions::new(vec![zk.ensemble()]);
    o.store.prefix = "/pf-fork".into();
    o.common.slots = Some(4);
    o.common.reserve_ms = 500;
    o.session_timeout_ms = 2000;

    // 1. This process has not used ZooKeeper yet: a child makes its own generator and leases.
    let first = in_forked_child(|| {
        let g = match Generator::builder_from(NodeSource::ZooKeeper(o.clone())).build() {
            Ok(g) => g,
            Err(e) => return format!("ERR {e}"),
        };
        if let Err(e) = g.wait_ready(Duration::from_secs(10)) {
            return format!("ERR {e}");
        }
        let ids: Vec<String> = (0..1000)
            .map(|_| {
                g.next_id()
                    .map_or_else(|e| e.to_string(), |i| i.to_string())
            })
            .collect();
        format!("ok {}\n{}", g.node_id(), ids.join("\n"))
    });
    assert!(first.starts_with("ok "), "{first:.300}");
    let child_ids: Vec<u64> = first.lines().skip(1).map(|l| l.parse().unwrap()).collect();
    assert_eq!(child_ids.len(), 1000);

    // 2. The parent leases, then forks: the child's re-lease is refused at once, clearly.
    let g = Generator::builder_from(NodeSource::ZooKeeper(o.clone()))
        .build()
        .unwrap();
    g.wait_ready(Duration::from_secs(5)).unwrap();
    let parent_node = g.node_id();
    let mut parent_ids: Vec<u64> = (0..2000).map(|_| g.next_id().unwrap()).collect();
    let second = in_forked_child(|| {
        let start = Instant::now();
        let inherited = match g.next_id() {
            Ok(id) => format!("ISSUED {id}"),
            Err(e) => format!("{} {e}", e.code()),
        };
        let took = start.elapsed().as_millis();
        let fresh = match Generator::builder_from(NodeSource::ZooKeeper(o.clone())).build() {
            Ok(f) => format!("BUILT {}", f.node_id()),
            Err(e) => format!("{} {e}", e.code()),
        };
        format!("{took}\n{inherited}\n{fresh}")
    });
    let mut lines = second.lines();
    let took: u128 = lines.next().unwrap().parse().unwrap();
    let inherited = lines.next().unwrap();
    let fresh = lines.next().unwrap();
    assert!(took < 1000, "the refusal took {took} ms");
    for answer in [inherited, fresh] {
        assert!(
            answer.starts_with("LEASE_STORE ") && answer.contains("fork"),
            "{answer}"
        );
    }
    // The parent is unaffected.
    parent_ids.extend((0..2000).map(|_| g.next_id().unwrap()));
    assert!(g.health().ok, "{:?}", g.health());
    assert_eq!(g.node_id(), parent_node);
    let all: HashSet<u64> = parent_ids.iter().chain(&child_ids).copied().collect();
    assert_eq!(all.len(), parent_ids.len() + child_ids.len());
    // And still leases more from ZooKeeper.
    let more = Generator::builder_from(NodeSource::ZooKeeper(o))
        .build()
        .unwrap_or_else(|e| panic!("the parent still uses ZooKeeper: {e} ({:?})", e.kind()));
    assert_ne!(more.node_id(), parent_node);
}
