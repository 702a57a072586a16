//! The service heals: a `polyflake serve` whose lease is lost (its etcd slot key
//! deleted, as an expired lease or an operator would) answers 503 `lease_lost`, takes a new slot
//! by itself, waits out that slot's restart guard (503 `restart_guard`), and serves again: no
//! restart, and no ID repeated across the change. Under a store restored from an older backup it
//! answers 503 `store_rolled_back`, then heals the same way.

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

    // The slot key goes (an operator's `etcdctl del`, an expiry): the lease is lost.
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
    // The same generator healed: its counters went on (every ID minted, before and after).
    assert_eq!(
        server.metric("polyflake_ids_issued_total") as usize,
        seen.len(),
        "{}",
        server.get("/metrics").text()
    );
    assert!(
        server.stderr().contains("took node"),
        "the service says what it did: {}",
        server.stderr()
    );
    let h = server.get("/v1/health").json();
    assert_eq!(h["lease"]["slot"], second);
}

#[test]
fn a_service_under_a_store_restored_from_a_backup_reports_it_and_heals() {
    let mut etcd = Etcd::start();
    let server = Server::start(&[
        "--etcd",
        &etcd.client_url,
        "--etcd-prefix",
        "/heal-restore",
        "--slots",
        "4",
        "--lease-reserve-ms",
        "500",
    ]);
    assert_eq!(server.wait_health(200, Duration::from_secs(20)).status, 200);
    let mut seen = HashSet::new();
    mint(&server, &mut seen);
    let backup = std::env::temp_dir().join(format!("heal-restore-{}.db", std::process::id()));
    etcd.snapshot(&backup);
    // The service mints on after the backup: its R (and the store's revision) run ahead of it.
    let until = Instant::now() + Duration::from_millis(1500);
    while Instant::now() < until {
        mint(&server, &mut seen);
        std::thread::sleep(Duration::from_millis(50));
    }
    etcd.restore(&backup);
    let _ = std::fs::remove_file(&backup);
    // The holder sees a revision below the one it had seen: store_rolled_back, not issuing. The
    // R it held ran out while etcd was down for the restore, so it may heal before a poll here
    // sees the 503: its stderr line names the status and the reason either way.
    let t = Instant::now();
    let mut polled = None;
    let said = |s: &Server| {
        s.stderr()
            .lines()
            .find(|l| l.contains("lease lost on node") && l.contains("store_rolled_back"))
            .map(str::to_string)
    };
    while t.elapsed() < Duration::from_secs(20) && said(&server).is_none() {
        let h = server.get("/v1/health");
        if polled.is_none() && h.status == 503 && h.json()["status"] == "store_rolled_back" {
            polled = Some(t.elapsed());
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let line = said(&server).unwrap_or_else(|| {
        panic!(
            "the service never reported store_rolled_back: {} / {}",
            server.get("/v1/health").text(),
            server.stderr()
        )
    });
    assert!(line.contains("went back in time"), "{line}");
    eprintln!(
        "store_rolled_back healed {:?} after the restore (503 seen by a poll: {polled:?}): {line}",
        t.elapsed()
    );
    // It heals: a new slot once the clock has passed the old R, then 200, with no ID repeated.
    let back = server.wait_health(200, Duration::from_secs(30));
    assert_eq!(back.status, 200, "{}", back.text());
    eprintln!("served again {:?} after the restore", t.elapsed());
    for _ in 0..10 {
        mint(&server, &mut seen);
    }
    assert!(server.stderr().contains("took node"), "{}", server.stderr());
}
