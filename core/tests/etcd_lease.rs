//! etcd leases against a REAL etcd (Debian's etcd-server, started here on 127.0.0.1 with free
//! ports and a temporary data dir, stopped afterwards; `make deps-apt` installs it). No mock.
//! The lease suite (`lease_support/suite.rs`) on etcd, then what only etcd has: an outage, a
//! revoked etcd lease, option errors, an edited mark, TLS with authentication.

mod lease_support;

use lease_support::*;
use polyflake::{
    Builder, ErrorKind, EtcdLeaseOptions, Generator, HealthStatus, NodeSource, DEFAULT_EPOCH_MS,
};
use std::time::{Duration, Instant};

lease_suite!(EtcdStore);

/// Not a test: the entry point of the child processes the tests below start.
#[test]
fn child_process_entry() {
    if let Some(mode) = child_mode() {
        child_main(&mode);
    }
}

fn opts(etcd: &Etcd, prefix: &str, slots: u32) -> EtcdLeaseOptions {
    let mut o = EtcdLeaseOptions::new(vec![etcd.client_url.clone()]);
    o.store.prefix = prefix.into();
    o.common.slots = Some(slots);
    o.common.reserve_ms = 500;
    o.ttl_s = 2;
    o.store.connect_timeout_ms = 500;
    o
}

/// A distinct epoch per test keeps this binary's side-by-side tests out of each other's way in
/// the process-wide node-id guard.
fn lease(o: EtcdLeaseOptions, test: i64) -> Builder {
    Generator::builder_from(NodeSource::Etcd(o))
        .epoch_ms(DEFAULT_EPOCH_MS + test)
        .host_scope(lease_support::test_scope(test))
}

fn ms(g: &Generator, id: u64) -> i64 {
    g.decode(id).unwrap().timestamp_ms
}

#[test]
fn etcd_stopped_issues_up_to_r_then_refuses_and_recovers_when_back() {
    let mut etcd = Etcd::start();
    let g = lease(opts(&etcd, "/pf-stop", 4), 2).build().unwrap();
    g.wait_ready(Duration::from_secs(5)).unwrap();
    assert!(wait_until(Duration::from_secs(10), || g
        .health()
        .lease_renewals
        >= 2));
    etcd.stop();
    // Keep issuing: IDs continue only up to R, then refusals.
    let start = Instant::now();
    let mut last_ok_ms = 0;
    let mut refusal = None;
    while start.elapsed() < Duration::from_secs(15) {
        match g.next_id() {
            Ok(id) => last_ok_ms = ms(&g, id),
            Err(e) => {
                refusal = Some(e);
                break;
            }
        }
        std::thread::sleep(Duration::from_micros(200));
    }
    let e = refusal.expect("refused once R was reached");
    assert_eq!(e.kind(), ErrorKind::LeaseExpired, "{e}");
    let h = g.health();
    let r = h.lease.as_ref().unwrap().high_water_ms;
    assert!(last_ok_ms <= r, "issued {last_ok_ms} past R {r}");
    assert!(!h.ok);
    assert_eq!(h.status, HealthStatus::LeaseExpired);
    // The outage is counted once a call fails or times out: that can come after R passes.
    assert!(
        wait_until(Duration::from_secs(10), || g.health().lease_failures > 0),
        "{:?}",
        g.health()
    );
    // Still refused a while later: nothing past R while the store is down.
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(g.next_id().unwrap_err().kind(), ErrorKind::LeaseExpired);

    etcd.restart();
    let back = wait_until(Duration::from_secs(30), || g.next_id().is_ok());
    assert!(back, "no recovery: {:?}", g.health());
    assert!(g.health().ok, "{:?}", g.health());
    let id = g.next_id().unwrap();
    assert!(ms(&g, id) > last_ok_ms - 10);
}

#[test]
fn revoking_the_lease_stops_the_generator_at_once() {
    let etcd = Etcd::start();
    let g = lease(opts(&etcd, "/pf-revoke", 4), 3).build().unwrap();
    g.wait_ready(Duration::from_secs(5)).unwrap();
    g.next_id().unwrap();
    etcd.revoke_the_lease();
    let revoked = Instant::now();
    // The watch on the slot key sees the delete: no renewal period to wait out.
    assert!(
        wait_until(Duration::from_secs(5), || g
            .next_id()
            .is_err_and(|e| e.kind() == ErrorKind::LeaseLost)),
        "still issuing after the revoke"
    );
    let took = revoked.elapsed();
    let h = g.health();
    assert_eq!(h.status, HealthStatus::LeaseLost);
    assert!(!h.ok && h.lease.unwrap().lost);
    // For good: nothing is issued again.
    std::thread::sleep(Duration::from_millis(600));
    for _ in 0..100 {
        assert_eq!(g.next_id().unwrap_err().kind(), ErrorKind::LeaseLost);
    }
    eprintln!("revoke seen after {took:?}");
}

#[test]
fn bad_etcd_options_and_an_unreachable_cluster_are_clear_errors() {
    let mut o = EtcdLeaseOptions::new(vec![format!("http://127.0.0.1:{}", free_port())]);
    o.store.connect_timeout_ms = 300;
    o.common.slots = Some(2);
    let e = lease(o.clone(), 4).build().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::LeaseStore, "{e}");
    assert!(e.to_string().contains("etcd"), "{e}");
    o.ttl_s = 0;
    assert_eq!(
        lease(o.clone(), 4).build().unwrap_err().kind(),
        ErrorKind::InvalidNodeSource
    );
    o.ttl_s = 2;
    o.store.prefix = "nope".into();
    assert_eq!(
        lease(o.clone(), 4).build().unwrap_err().kind(),
        ErrorKind::InvalidNodeSource
    );
    o.store.prefix = "/ok".into();
    o.endpoints.clear();
    assert_eq!(
        lease(o, 4).build().unwrap_err().kind(),
        ErrorKind::InvalidNodeSource
    );
}

#[test]
fn the_mark_in_etcd_only_grows_and_an_edited_mark_loses_the_lease() {
    let etcd = Etcd::start();
    let g = lease(opts(&etcd, "/pf-mark", 1), 7).build().unwrap();
    g.wait_ready(Duration::from_secs(5)).unwrap();
    let last = g.next_id().unwrap();
    let key = "/pf-mark/hwm/0000";
    let read = || -> i64 {
        etcd.etcdctl(&["get", key, "--print-value-only"])
            .unwrap()
            .trim()
            .parse()
            .unwrap()
    };
    let r1 = read();
    assert!(wait_until(Duration::from_secs(5), || read() > r1));
    // Someone lowers the mark behind the holder's back (a stale write, an operator): the holder's
    // next renewal compares the mark's revision with its own last write and stops, rather than
    // going on as if R were still what it wrote.
    etcd.etcdctl(&["put", key, "1"]).unwrap();
    assert!(
        wait_until(Duration::from_secs(5), || g.health().status
            == HealthStatus::LeaseLost),
        "{:?}",
        g.health()
    );
    assert_eq!(g.next_id().unwrap_err().kind(), ErrorKind::LeaseLost);
    assert!(ms(&g, last) > 1);
    drop(g);
    // A successor finds the (lowered) mark and takes it at face value: the fault was the edit.
    // A mark that is not a number is treated as a full reserve instead.
    etcd.etcdctl(&["put", key, "garbage"]).unwrap();
    let before = now_ms();
    let s = lease(opts(&etcd, "/pf-mark", 1), 7).build().unwrap();
    let guard = s.health().lease.unwrap().guard_until_ms.unwrap();
    assert!(
        guard >= before + 500,
        "a damaged mark gives a full reserve: {}",
        guard - before
    );
}

/// A production-shaped etcd: TLS only, client certificates required (`--client-cert-auth`), and
/// authentication on (user root, `auth enable`). The right credentials lease; a wrong CA, a
/// missing client certificate and a wrong password each give a clear LEASE_STORE error naming
/// the cause, quickly.
#[test]
fn tls_client_certificates_and_authentication() {
    let certs = Certs::generate();
    let etcd = Etcd::start_secure(certs.clone(), "root-password");
    assert!(etcd.client_url.starts_with("https://"));
    let mut o = opts(&etcd, "/pf-tls", 2);
    o.store.connect_timeout_ms = 2000;
    o.store.credentials.ca_file = Some(certs.ca.clone());
    o.store.credentials.cert_file = Some(certs.client_cert.clone());
    o.store.credentials.key_file = Some(certs.client_key.clone());
    o.store.credentials.username = Some("root".into());
    o.store.credentials.password = Some("root-password".into());
    let g = lease(o.clone(), 8).build().unwrap();
    g.wait_ready(Duration::from_secs(5)).unwrap();
    let ready = now_ms();
    g.next_id().unwrap();
    let renewals = g.health().lease_renewals;
    assert!(wait_until(Duration::from_secs(10), || g
        .health()
        .lease_renewals
        >= renewals + 2));
    let hwm = etcd
        .etcdctl(&[
            "get",
            &format!("/pf-tls/hwm/{:04}", g.node_id()),
            "--print-value-only",
        ])
        .unwrap();
    // A renewal that started after `ready` wrote the mark over TLS (R = its now + reserve).
    // Compared with `ready`, not with "now - 1 s": etcdctl's start and a loaded machine's
    // scheduling sit between the write and any later reading of now.
    assert!(
        hwm.trim().parse::<i64>().unwrap() > ready,
        "{hwm}, ready at {ready}"
    );

    let refused = |o: EtcdLeaseOptions, want: &str| {
        let start = Instant::now();
        let e = lease(o, 8).build().unwrap_err();
        assert_eq!(e.kind(), ErrorKind::LeaseStore, "{e}");
        assert!(e.to_string().contains(want), "{want}: {e}");
        assert!(
            start.elapsed() < Duration::from_secs(8),
            "{:?}",
            start.elapsed()
        );
        eprintln!("{want}: {e}");
    };
    let mut wrong_ca = o.clone();
    wrong_ca.store.credentials.ca_file = Some(certs.other_ca.clone());
    refused(wrong_ca, "not signed by ca_file");
    let mut no_cert = o.clone();
    no_cert.store.credentials.cert_file = None;
    no_cert.store.credentials.key_file = None;
    refused(no_cert, "requires a client certificate");
    let mut wrong_password = o.clone();
    wrong_password.store.credentials.password = Some("wrong".into());
    refused(wrong_password, "the user name or password was refused");
    // TLS options with a plain-HTTP endpoint: refused before connecting.
    let mut plain = o;
    plain.endpoints = vec![plain.endpoints[0].replace("https://", "http://")];
    let e = lease(plain, 8).build().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidNodeSource, "{e}");
    assert!(e.to_string().contains("use https://"), "{e}");
    drop(g);
}
