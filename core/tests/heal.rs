//! A lost lease that heals (`LeaseCommon::heal`): the slot file deleted, the etcd lease revoked,
//! the ZooKeeper session expired, the etcd store restored from an older snapshot. Each time the
//! generator takes a new slot by itself, behind its restart guard, and goes on issuing, while
//! threads mint through the loss and the heal: no ID repeats, the counters go on, and health
//! counts the heal. With `heal` off, the same loss stops the generator for good.

mod lease_support;

use lease_support::*;
use polyflake::{
    Builder, ErrorKind, EtcdLeaseOptions, FileLeaseOptions, Generator, HealthStatus, NodeSource,
    ZooKeeperLeaseOptions, DEFAULT_EPOCH_MS,
};
use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Not a test: the entry point of the child processes the lease helpers start.
#[test]
fn child_process_entry() {
    if let Some(mode) = child_mode() {
        child_main(&mode);
    }
}

/// A distinct epoch and host scope per test keeps side-by-side tests apart.
fn build(source: NodeSource, test: i64) -> Generator {
    let b: Builder = Generator::builder_from(source)
        .epoch_ms(DEFAULT_EPOCH_MS + test)
        .host_scope(test_scope(test));
    b.build().unwrap()
}

fn file(dir: &std::path::Path, heal: bool) -> NodeSource {
    let mut o = FileLeaseOptions::new(dir);
    o.common.slots = Some(2);
    o.common.reserve_ms = 500;
    o.common.heal = heal;
    NodeSource::FileLease(o)
}

fn etcd(etcd: &Etcd, prefix: &str) -> NodeSource {
    let mut o = EtcdLeaseOptions::new(vec![etcd.client_url.clone()]);
    o.store.prefix = prefix.into();
    o.common.slots = Some(4);
    o.common.reserve_ms = 500;
    o.common.heal = true;
    o.ttl_s = 2;
    o.store.connect_timeout_ms = 1000;
    NodeSource::Etcd(o)
}

/// Two threads minting from `g` until stopped; each returns every ID it got.
struct Minting {
    stop: Arc<AtomicBool>,
    threads: Vec<JoinHandle<Vec<u64>>>,
}

impl Minting {
    fn start(g: &Arc<Generator>) -> Minting {
        let stop = Arc::new(AtomicBool::new(false));
        let threads = (0..2)
            .map(|_| {
                let (g, stop) = (g.clone(), stop.clone());
                std::thread::spawn(move || {
                    let mut ids = Vec::new();
                    while !stop.load(Ordering::Relaxed) {
                        match g.next_id() {
                            Ok(id) => ids.push(id),
                            Err(e) => {
                                assert!(
                                    matches!(
                                        e.kind(),
                                        ErrorKind::LeaseLost
                                            | ErrorKind::LeaseNotReady
                                            | ErrorKind::LeaseExpired
                                    ),
                                    "{e}"
                                );
                                std::thread::sleep(Duration::from_micros(200));
                            }
                        }
                    }
                    ids
                })
            })
            .collect();
        Minting { stop, threads }
    }

    /// Stop, and every ID minted, checked unique.
    fn finish(self) -> Vec<u64> {
        self.stop.store(true, Ordering::Relaxed);
        let mut all = Vec::new();
        for t in self.threads {
            all.extend(t.join().unwrap());
        }
        let unique: HashSet<u64> = all.iter().copied().collect();
        assert_eq!(unique.len(), all.len(), "a duplicate ID across the heal");
        all
    }
}

/// Mint through `lose` (which makes the store disown the slot) and the heal that follows;
/// returns the node ids before and after. Checks: healed within `within`, no duplicate, every
/// ID counted in `ids_issued`, one heal in health, and IDs minted after the heal.
fn heals_through(g: Generator, within: Duration, lose: impl FnOnce(&Generator)) -> (u32, u32) {
    let g = Arc::new(g);
    g.wait_ready(Duration::from_secs(10)).unwrap();
    let before = g.node_id();
    let minting = Minting::start(&g);
    std::thread::sleep(Duration::from_millis(200));
    lose(&g);
    let t = Instant::now();
    assert!(
        wait_until(within, || g.health().lease.unwrap().heals == 1),
        "no heal within {within:?}: {:?}",
        g.health()
    );
    let healed_after = t.elapsed();
    g.wait_ready(Duration::from_secs(10)).unwrap();
    let h = g.health();
    assert!(h.ok, "{h:?}");
    let lease = h.lease.unwrap();
    assert!(lease.last_heal.contains("took node"), "{}", lease.last_heal);
    // Mint a while on the new slot.
    let issued_before_stop = g.health().ids_issued;
    assert!(wait_until(Duration::from_secs(5), || g.health().ids_issued
        > issued_before_stop + 100));
    let ids = minting.finish();
    // The counters went on: every ID minted (before and after the heal) is counted once.
    assert_eq!(g.health().ids_issued, ids.len() as u64);
    let after = g.node_id();
    eprintln!(
        "healed {healed_after:?} after the loss: node {before} -> {after}, {} IDs, {}",
        ids.len(),
        lease.last_heal
    );
    (before, after)
}

#[test]
fn a_deleted_slot_file_heals_with_no_duplicate() {
    let dir = TempDir::new("heal-file");
    let g = build(file(dir.path(), true), 1);
    let slot_file = dir.path().join(format!("slot-{:04}", g.node_id()));
    heals_through(g, Duration::from_secs(5), |_| {
        std::fs::remove_file(&slot_file).unwrap();
    });
}

#[test]
fn without_heal_a_deleted_slot_file_stops_the_generator_for_good() {
    let dir = TempDir::new("heal-off");
    let g = build(file(dir.path(), false), 2);
    g.wait_ready(Duration::from_secs(5)).unwrap();
    g.next_id().unwrap();
    std::fs::remove_file(dir.path().join(format!("slot-{:04}", g.node_id()))).unwrap();
    assert!(wait_until(Duration::from_secs(5), || g
        .next_id()
        .is_err_and(|e| e.kind() == ErrorKind::LeaseLost)));
    std::thread::sleep(Duration::from_millis(800));
    assert_eq!(g.next_id().unwrap_err().kind(), ErrorKind::LeaseLost);
    let h = g.health();
    assert_eq!(h.status, HealthStatus::LeaseLost);
    assert_eq!(h.lease.unwrap().heals, 0);
    // wait_ready does not wait for a heal that will not come.
    let t = Instant::now();
    assert_eq!(
        g.wait_ready(Duration::from_secs(5)).unwrap_err().kind(),
        ErrorKind::LeaseLost
    );
    assert!(t.elapsed() < Duration::from_secs(1));
}

#[test]
fn closing_while_the_heal_cannot_take_a_slot_stops_it() {
    // Both slots of the directory are held by others once the lease is lost: the heal keeps
    // trying; a close ends it at once and leaves the others' slots alone.
    let dir = TempDir::new("heal-close");
    let g = build(file(dir.path(), true), 3);
    g.wait_ready(Duration::from_secs(5)).unwrap();
    let other = build(file(dir.path(), false), 3);
    std::fs::remove_file(dir.path().join(format!("slot-{:04}", g.node_id()))).unwrap();
    // A third holder takes the freed slot before the heal can.
    let third = Generator::builder_from(file(dir.path(), false))
        .epoch_ms(DEFAULT_EPOCH_MS + 3)
        .host_scope(test_scope(33))
        .build();
    assert!(wait_until(Duration::from_secs(5), || g.health().status
        == HealthStatus::LeaseLost));
    std::thread::sleep(Duration::from_millis(300));
    let h = g.health();
    if third.is_ok() {
        assert_eq!(h.lease.as_ref().unwrap().heals, 0, "{h:?}");
        assert!(
            h.lease.as_ref().unwrap().last_error.contains("healing"),
            "{h:?}"
        );
    }
    let t = Instant::now();
    g.close();
    assert!(t.elapsed() < Duration::from_secs(3), "{:?}", t.elapsed());
    assert_eq!(g.next_id().unwrap_err().kind(), ErrorKind::GeneratorClosed);
    other.wait_ready(Duration::from_secs(5)).unwrap();
    other.next_id().unwrap();
}

#[test]
fn a_revoked_etcd_lease_heals_with_no_duplicate() {
    let store = Etcd::start();
    let g = build(etcd(&store, "/heal-revoke"), 4);
    heals_through(g, Duration::from_secs(10), |_| store.revoke_the_lease());
}

#[test]
fn an_expired_zookeeper_session_heals_with_no_duplicate() {
    let zk = ZooKeeper::start();
    // Reached through a relay that can go silent: the session expires on the server while
    // ZooKeeper stays up.
    let relay = Relay::start(zk.port);
    let mut o = ZooKeeperLeaseOptions::new(vec![format!("127.0.0.1:{}", relay.port)]);
    o.store.prefix = "/heal-expire".into();
    o.common.slots = Some(2);
    o.common.reserve_ms = 500;
    o.common.heal = true;
    o.session_timeout_ms = 2000;
    o.store.connect_timeout_ms = 3000;
    let g = build(NodeSource::ZooKeeper(o), 5);
    let c = ZkClient::connect(&zk.ensemble(), None);
    let slot = format!("/heal-expire/slot/{:04}", g.node_id());
    heals_through(g, Duration::from_secs(30), |_| {
        relay.silence(true);
        assert!(
            wait_until(Duration::from_secs(15), || c.get(&slot).is_none()),
            "the session never expired"
        );
        relay.silence(false);
    });
}

#[test]
fn an_etcd_store_restored_from_a_snapshot_heals_past_the_old_high_water_mark() {
    let mut store = Etcd::start();
    let g = build(etcd(&store, "/heal-restore"), 6);
    let backup = std::env::temp_dir().join(format!("heal-restore-{}.db", std::process::id()));
    let mut lost_r = 0;
    heals_through(g, Duration::from_secs(40), |g| {
        store.snapshot(&backup);
        // Mint on past the snapshot: R (and the store's revision) run ahead of it.
        std::thread::sleep(Duration::from_millis(1500));
        lost_r = g.health().lease.unwrap().high_water_ms;
        store.restore(&backup);
    });
    let _ = std::fs::remove_file(&backup);
    assert!(lost_r > 0);
}

#[test]
fn monotonic_batches_through_three_heals_stay_unique_and_increasing() {
    // Each thread's IDs must increase across every heal (the state word moves past every ID
    // issued before the new node id is used), and none repeats across threads.
    let dir = TempDir::new("heal-batches");
    let g: Generator = Generator::builder_from(file(dir.path(), true))
        .mode(polyflake::Mode::Monotonic)
        .epoch_ms(DEFAULT_EPOCH_MS + 7)
        .host_scope(test_scope(7))
        .build()
        .unwrap();
    let g = Arc::new(g);
    g.wait_ready(Duration::from_secs(5)).unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let threads: Vec<_> = (0..3)
        .map(|i| {
            let (g, stop) = (g.clone(), stop.clone());
            std::thread::spawn(move || {
                let mut ids = Vec::new();
                let mut buf = [0u64; 64];
                while !stop.load(Ordering::Relaxed) {
                    let got = if i == 0 {
                        g.next_id().map(|id| ids.push(id))
                    } else {
                        g.next_ids(&mut buf).map(|()| ids.extend_from_slice(&buf))
                    };
                    if got.is_err() {
                        std::thread::sleep(Duration::from_micros(200));
                    }
                }
                assert!(
                    ids.windows(2).all(|w| w[0] < w[1]),
                    "thread {i}: IDs went backwards"
                );
                ids
            })
        })
        .collect();
    for n in 1..=3 {
        std::thread::sleep(Duration::from_millis(150));
        let slot = dir.path().join(format!("slot-{:04}", g.node_id()));
        std::fs::remove_file(&slot).unwrap();
        assert!(
            wait_until(Duration::from_secs(5), || g.health().lease.unwrap().heals
                == n),
            "heal {n}: {:?}",
            g.health()
        );
        g.wait_ready(Duration::from_secs(5)).unwrap();
    }
    std::thread::sleep(Duration::from_millis(150));
    stop.store(true, Ordering::Relaxed);
    let mut all = Vec::new();
    for t in threads {
        all.extend(t.join().unwrap());
    }
    let unique: HashSet<u64> = all.iter().copied().collect();
    assert_eq!(unique.len(), all.len(), "a duplicate ID across three heals");
    assert_eq!(g.health().ids_issued, all.len() as u64);
    eprintln!("{} IDs through 3 heals", all.len());
}

#[test]
fn a_heal_that_cannot_take_its_own_slot_again_takes_another_node_id() {
    // The slot file is replaced by a directory (an unsafe name, never read or written): the heal
    // takes the next free slot, so the node id changes under threads that mint all along.
    let dir = TempDir::new("heal-other");
    let mut o = FileLeaseOptions::new(dir.path());
    o.common.slots = Some(3);
    o.common.reserve_ms = 500;
    o.common.heal = true;
    let g = build(NodeSource::FileLease(o), 8);
    let (before, after) = heals_through(g, Duration::from_secs(5), |g| {
        let slot = dir.path().join(format!("slot-{:04}", g.node_id()));
        std::fs::remove_file(&slot).unwrap();
        std::fs::create_dir(&slot).unwrap();
    });
    assert_ne!(before, after, "the heal took its old node id again");
}
