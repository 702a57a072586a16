//! A store that refuses a live holder's renewals for want of authorization (a permission revoked
//! in etcd, an ACL made read-only in ZooKeeper) is named as such once R runs out: the refusal,
//! health's reason and the lease's last error all say "not authorized" with the store's own
//! words, never "unreachable"; a store that is down says "unreachable", never "not authorized".
//! Against REAL stores (etcd with TLS and authentication, ZooKeeper with digest auth), no mock.

mod lease_support;

use lease_support::*;
use polyflake::{
    Builder, Error, ErrorKind, EtcdLeaseOptions, Generator, HealthStatus, NodeSource,
    ZooKeeperLeaseOptions, DEFAULT_EPOCH_MS,
};
use std::time::{Duration, Instant};
use zookeeper_client::{Acl, AuthId, Permission};

/// A distinct epoch per test keeps this binary's side-by-side tests out of each other's way in
/// the process-wide node-id guard.
fn lease(source: NodeSource, test: i64) -> Builder {
    Generator::builder_from(source)
        .epoch_ms(DEFAULT_EPOCH_MS + test)
        .host_scope(lease_support::test_scope(test))
}

/// Wait for a few renewals, so the holder is live and renewing when the store turns on it.
fn renewing(g: &Generator) {
    g.wait_ready(Duration::from_secs(10)).unwrap();
    g.next_id().unwrap();
    let before = g.health().lease_renewals;
    assert!(
        wait_until(Duration::from_secs(10), || g.health().lease_renewals
            >= before + 2),
        "{:?}",
        g.health()
    );
}

/// Issue until refused (R runs out a reserve after the last renewal); the refusal.
fn refusal(g: &Generator) -> Error {
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(15) {
        if let Err(e) = g.next_id() {
            return e;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    panic!("still issuing 15 s on: {:?}", g.health());
}

/// The refusal is LEASE_EXPIRED and says all of `want` and none of `never`; health says
/// lease_expired with the same cause, and the lease's last error (the store's last answer)
/// starts with `want[0]`. Returns the refusal's text.
fn assert_cause(g: &Generator, e: &Error, want: &[&str], never: &str) -> String {
    assert_eq!(e.kind(), ErrorKind::LeaseExpired, "{e}");
    let text = e.to_string();
    for w in want {
        assert!(text.contains(w), "{w:?} missing: {text}");
    }
    assert!(!text.contains(never), "{never:?} in: {text}");
    let h = g.health();
    assert!(!h.ok);
    assert_eq!(h.status, HealthStatus::LeaseExpired, "{}", h.reason);
    for w in want {
        assert!(
            h.reason.contains(w),
            "{w:?} missing in health: {}",
            h.reason
        );
    }
    assert!(
        !h.reason.contains(never),
        "{never:?} in health: {}",
        h.reason
    );
    let lease = h.lease.unwrap();
    assert!(lease.failures > 0);
    assert!(
        lease.last_error.starts_with(&format!("{}: ", want[0])),
        "{}",
        lease.last_error
    );
    assert!(!lease.last_error.contains(never), "{}", lease.last_error);
    text
}

/// Once the store answers again, the holder renews (its mark was never changed: the refused
/// writes were not applied) and issues again, healthy.
fn recovers(g: &Generator) -> Duration {
    let start = Instant::now();
    let back = wait_until(Duration::from_secs(15), || g.next_id().is_ok());
    assert!(back, "no recovery: {:?}", g.health());
    assert!(
        wait_until(Duration::from_secs(5), || g.health().ok),
        "{:?}",
        g.health()
    );
    start.elapsed()
}

/// etcd with TLS and authentication: a user whose role grants readwrite on the prefix holds a
/// slot; the role's permission is revoked (as root). Renewals are refused with "etcdserver:
/// permission denied" (the etcd lease itself stays alive: keep-alives need no key permission),
/// so once R passes the refusal names the refused authorization. Granted back, the holder
/// renews and issues again.
#[test]
fn etcd_a_revoked_permission_is_named_not_authorized() {
    let certs = Certs::generate();
    let etcd = Etcd::start_secure(certs.clone(), "root-password");
    for args in [
        &["user", "add", "holder:holder-password"][..],
        &["role", "add", "ids"],
        &[
            "role",
            "grant-permission",
            "ids",
            "--prefix=true",
            "readwrite",
            "/pf-auth/",
        ],
        &["user", "grant-role", "holder", "ids"],
    ] {
        etcd.etcdctl(args).unwrap();
    }
    let mut o = EtcdLeaseOptions::new(vec![etcd.client_url.clone()]);
    o.store.prefix = "/pf-auth".into();
    o.common.slots = Some(1);
    o.common.reserve_ms = 500;
    o.ttl_s = 3;
    o.store.connect_timeout_ms = 1000;
    o.store.credentials.ca_file = Some(certs.ca.clone());
    o.store.credentials.cert_file = Some(certs.client_cert.clone());
    o.store.credentials.key_file = Some(certs.client_key.clone());
    o.store.credentials.username = Some("holder".into());
    o.store.credentials.password = Some("holder-password".into());
    let g = lease(NodeSource::Etcd(o), 1).build().unwrap();
    renewing(&g);

    etcd.etcdctl(&[
        "role",
        "revoke-permission",
        "ids",
        "--prefix=true",
        "/pf-auth/",
    ])
    .unwrap();
    let revoked = Instant::now();
    let e = refusal(&g);
    let took = revoked.elapsed();
    let text = assert_cause(
        &g,
        &e,
        &["not authorized", "permission denied", "\"holder\""],
        "unreachable",
    );
    eprintln!("etcd refusal {took:?} after the revoke: {text}");

    etcd.etcdctl(&[
        "role",
        "grant-permission",
        "ids",
        "--prefix=true",
        "readwrite",
        "/pf-auth/",
    ])
    .unwrap();
    let took = recovers(&g);
    let h = g.health();
    assert!(!h.lease.unwrap().lost);
    eprintln!("etcd: issuing again {took:?} after the grant");
}

/// ZooKeeper with digest auth: the holder's high-water-mark znode (what every renewal writes,
/// in a multi-op that checks the slot znode) is made read-only for the holder's digest user by
/// an operator (`setAcl`, keeping admin so it can be undone). Renewals are refused with NoAuth,
/// so once R passes the refusal names the refused authorization. With the ACL restored the
/// holder renews (the session lived on) and issues again.
#[test]
fn zookeeper_a_read_only_acl_is_named_not_authorized() {
    let zk = ZooKeeper::start();
    let mut o = ZooKeeperLeaseOptions::new(vec![zk.ensemble()]);
    o.store.prefix = "/pf-auth".into();
    o.common.slots = Some(1);
    o.common.reserve_ms = 500;
    o.session_timeout_ms = 4000;
    o.store.connect_timeout_ms = 3000;
    o.store.credentials.username = Some("ids".into());
    o.store.credentials.password = Some("ids-password".into());
    let g = lease(NodeSource::ZooKeeper(o), 2).build().unwrap();
    renewing(&g);
    let hwm = format!("/pf-auth/hwm/{:04}", g.node_id());
    let operator = ZkClient::connect(&zk.ensemble(), Some(("ids", "ids-password")));
    let acl = |ours: Permission| {
        [
            Acl::new(ours, AuthId::authed()),
            Acl::new(Permission::READ, AuthId::anyone()),
        ]
    };

    operator
        .set_acl(&hwm, &acl(Permission::READ | Permission::ADMIN))
        .unwrap();
    let restricted = Instant::now();
    let e = refusal(&g);
    let took = restricted.elapsed();
    let text = assert_cause(
        &g,
        &e,
        &["not authorized", "NoAuth", &hwm, "\"ids\""],
        "unreachable",
    );
    eprintln!("zookeeper refusal {took:?} after the setAcl: {text}");

    operator.set_acl(&hwm, &acl(Permission::ALL)).unwrap();
    let took = recovers(&g);
    let h = g.health();
    assert!(!h.lease.unwrap().lost);
    eprintln!("zookeeper: issuing again {took:?} after the ACL was restored");
}

/// The control: an etcd that is down (killed) is "unreachable", never "not authorized".
#[test]
fn etcd_stopped_is_named_unreachable_not_unauthorized() {
    let mut etcd = Etcd::start();
    let mut o = EtcdLeaseOptions::new(vec![etcd.client_url.clone()]);
    o.store.prefix = "/pf-down".into();
    o.common.slots = Some(1);
    o.common.reserve_ms = 500;
    o.ttl_s = 3;
    o.store.connect_timeout_ms = 500;
    let g = lease(NodeSource::Etcd(o), 3).build().unwrap();
    renewing(&g);
    etcd.stop();
    let e = refusal(&g);
    let text = assert_cause(&g, &e, &["unreachable"], "not authorized");
    eprintln!("etcd down: {text}");
}
