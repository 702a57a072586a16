//! A network stall shorter than the TTL never costs an etcd lease, against a
//! REAL etcd reached through a relay that holds every byte for 1.5-2.5 s and then delivers it: a
//! renewal sent meanwhile times out at the holder and is applied by etcd when the link comes back,
//! so the holder no longer knows its mark's revision. It must re-read the mark, find its own
//! unanswered value there, and keep the lease.

mod lease_support;

use lease_support::*;
use polyflake::{Builder, EtcdLeaseOptions, Generator, HealthStatus, NodeSource, DEFAULT_EPOCH_MS};
use std::collections::HashSet;
use std::time::{Duration, Instant};

/// Not a test: the entry point of child processes (shared support; none are started here).
#[test]
fn child_process_entry() {
    if let Some(mode) = child_mode() {
        child_main(&mode);
    }
}

const TRIALS: usize = 20;

/// Trial `i`: even trials run the defaults (TTL 10 s, 2 s request timeout, 5 s reserve); odd ones
/// a 1 s request timeout (so every stall times a renewal out) and a 6 s TTL.
fn holder(etcd_port: u16, i: usize) -> (Relay, Builder) {
    let relay = Relay::start(etcd_port);
    let mut o = EtcdLeaseOptions::new(vec![format!("http://127.0.0.1:{}", relay.port)]);
    o.store.prefix = "/pf-stall".into();
    o.common.slots = Some(TRIALS as u32);
    if i % 2 == 1 {
        o.store.connect_timeout_ms = 1000;
        o.ttl_s = 6;
    }
    let b = Generator::builder_from(NodeSource::Etcd(o))
        .epoch_ms(DEFAULT_EPOCH_MS + 26)
        .host_scope(lease_support::test_scope(26));
    (relay, b)
}

#[test]
fn a_stall_under_the_ttl_never_loses_the_lease() {
    let etcd = Etcd::start();
    let port: u16 = etcd.client_url.rsplit(':').next().unwrap().parse().unwrap();
    let mut relays = Vec::new();
    let mut gens = Vec::new();
    for i in 0..TRIALS {
        let (relay, b) = holder(port, i);
        relays.push(relay);
        gens.push(b.build().unwrap());
    }
    for g in &gens {
        // A new slot is guarded for one reserve (5 s).
        g.wait_ready(Duration::from_secs(30)).unwrap();
    }
    let before: Vec<(u64, u64)> = gens
        .iter()
        .map(|g| {
            let h = g.health();
            (h.lease_renewals, h.lease_failures)
        })
        .collect();
    // Trial i stalls its link for 1.5 s + i/19 s, starting i * 53 ms in: the stalls cover every
    // phase of the 1 s renewal period and the 2 s (or 1 s) request timeout.
    let stalls: Vec<Duration> = (0..TRIALS)
        .map(|i| Duration::from_millis(1500 + (i as u64 * 1000) / (TRIALS as u64 - 1)))
        .collect();
    let t0 = Instant::now();
    std::thread::scope(|s| {
        for (i, relay) in relays.iter().enumerate() {
            let stall = stalls[i];
            s.spawn(move || {
                std::thread::sleep(Duration::from_millis(i as u64 * 53));
                relay.stall(true);
                std::thread::sleep(stall);
                relay.stall(false);
            });
        }
        // Mint on every holder while the links stall and for 8 s after (several renewals, and
        // the 6 s TTL's keep-alives): no holder may ever report its lease lost, and the reserve
        // (5 s) covers the stall, so every call issues.
        let mut seen = HashSet::new();
        while t0.elapsed() < Duration::from_millis(20 * 53 + 2500 + 8000) {
            for (i, g) in gens.iter().enumerate() {
                let h = g.health();
                assert_ne!(
                    h.status,
                    HealthStatus::LeaseLost,
                    "trial {i} (a {:?} stall) lost its lease after {:?}: {}",
                    stalls[i],
                    t0.elapsed(),
                    h.reason
                );
                let id = g
                    .next_id()
                    .unwrap_or_else(|e| panic!("trial {i} after {:?}: {e}", t0.elapsed()));
                assert!(seen.insert(id), "a duplicate ID {id}");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    });
    let mut timed_out = 0;
    for (i, g) in gens.iter().enumerate() {
        let h = g.health();
        assert_eq!(h.status, HealthStatus::Ok, "trial {i}: {}", h.reason);
        let (renewals, failures) = before[i];
        if h.lease_failures > failures {
            timed_out += 1;
        }
        assert!(
            h.lease_renewals >= renewals + 4,
            "trial {i}: renewals {renewals} -> {} (failures {failures} -> {}): the lease stopped renewing after the stall",
            h.lease_renewals,
            h.lease_failures
        );
    }
    eprintln!(
        "{TRIALS} stalls of 1.5-2.5 s under the TTL: {timed_out} holders saw a renewal time out, none lost its lease"
    );
    // The 1 s request timeout times out a renewal in an odd trial's stall when its renewal
    // thread runs during it: all 10 idle, 7 beside stress-ng. The stalls must have bitten.
    assert!(
        timed_out >= 3,
        "only {timed_out} holders saw a request time out: the stall did not stall"
    );
}
