//! The service heals (issue 26): a `polyflake serve` whose lease is lost (its etcd slot key
//! deleted, as an expired lease or an operator would) answers 503 `lease_lost`, takes a new slot
//! by itself, waits out that slot's restart guard (503 `restart_guard`), and serves again: no
//! restart, and no ID repeated across the change.

mod common;
#[path = "../../core/tests/lease_support/mod.rs"]
mod lease_support;

use common::Server;
use lease_support::Etcd;
use std::collections::HashSet;
use std::time::{Duration, Instant};

fn mint(server: &Server, seen: &mut HashSet<u64>) -> u64 {
    let r = server.post_json("/v1/ids", r#"{"count": 100}"#);
    assert_eq!(r.status, 200, "{}", r.text());
    let v = r.json();
    for id in v["ids"].as_array().unwrap() {
        let id: u64 = id.as_str().unwrap().parse().unwrap();
        assert!(seen.insert(id), "duplicate {id}");
    }
    v["node_id"].as_u64().unwrap()
}

#[test]
fn a_service_whose_lease_is_lost_takes_a_new_one_and_serves_again() {
    let etcd = Etcd::start();
    let server = Server::start(&[
        "--etcd",
        &etcd.client_url,
        "--etcd-prefix",
        "/heal",
        "--slots",
        "4",
        "--lease-reserve-ms",
        "500",
    ]);
    assert_eq!(server.wait_health(200, Duration::from_secs(20)).status, 200);
    let mut seen = HashSet::new();
    let first = mint(&server, &mut seen);

    // The slot key goes (an operator's `etcdctl del`, an expiry): the lease is lost for good.
    etcd.etcdctl(&["del", &format!("/heal/slot/{first:04}")])
        .expect("etcdctl del");
    let lost = server.wait_health(503, Duration::from_secs(10));
    assert_eq!(lost.status, 503, "{}", lost.text());
    let t = Instant::now();
    // A new slot, behind its restart guard, then 200 again: no restart.
    let back = server.wait_health(200, Duration::from_secs(30));
    assert_eq!(back.status, 200, "{}", back.text());
    eprintln!("served again {:?} after the loss was seen", t.elapsed());
    let second = mint(&server, &mut seen);
    assert!(
        server.stderr().contains("took node"),
        "the service says what it did: {}",
        server.stderr()
    );
    let h = server.get("/v1/health").json();
    assert_eq!(h["lease"]["slot"], second);
}
