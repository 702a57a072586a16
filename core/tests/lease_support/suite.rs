//! One lease test suite, run against every store: `lease_suite!(FileStore)` in `file_lease.rs`,
//! `lease_suite!(EtcdStore)` in `etcd_lease.rs` and `lease_suite!(ZkStore)` in
//! `zookeeper_lease.rs` each make one test per function below, on a store of their own (a
//! temporary directory, a real etcd, a real ZooKeeper). A store is what `LeaseStore` says of it:
//! its options, its child processes' variables, how refusals name it, and what it keeps (its
//! R, its ID space) as another client reads them. What only one store has stays in that store's
//! file.

use super::*;
use polyflake::{
    Builder, ErrorKind, EtcdLeaseOptions, FileLeaseOptions, Generator, HealthStatus, LeaseKind,
    ManualClock, NodeSource, NodeSourceKind, ZooKeeperLeaseOptions, DEFAULT_EPOCH_MS,
};
use std::collections::HashSet;

/// A lease store under test, started fresh for one test.
pub trait LeaseStore: Sized {
    /// What health calls the store and the node source.
    const KIND: LeaseKind;
    const SOURCE: NodeSourceKind;
    /// Its name in messages.
    const NAME: &'static str;
    /// How many processes race for how many slots.
    const RACE: (usize, u32);
    /// How long a take in a layout of 2^32 node ids may last.
    const WIDE_LIMIT: Duration;
    fn start() -> Self;
    /// Leases of `slots` slots (`None`: the layout's node ids) at `name` (a directory under the
    /// store's, a key prefix `/name`), reserve 500 ms.
    fn source(&self, name: &str, slots: Option<u32>) -> NodeSource;
    /// The same for a child process (the variables `child_source` reads).
    fn child_env(&self, name: &str, slots: u32) -> Vec<(&'static str, String)>;
    /// How a refusal names the store at `name` (the directory, the prefix).
    fn shown(&self, name: &str) -> String;
    /// While `g` holds a slot at `name`: the store's layout checked, and R as stored.
    fn held_r(&self, name: &str, g: &Generator) -> i64;
    /// After the holder of `slot` at `name` closed: the slot free in the store, and R as stored.
    fn closed_r(&self, name: &str, slot: u32) -> i64;
    /// The store's ID-space record at `name`, as text.
    fn space(&self, name: &str) -> String;
    /// What an operator sees at `name` while two slots are held.
    fn inspected(&self, _name: &str) {}
}

/// A distinct epoch and host scope per test keeps the tests of one binary, which run side by
/// side in one process, out of each other's way in the node-id guards.
pub fn lease<S: LeaseStore>(store: &S, name: &str, slots: u32, test: i64) -> Builder {
    Generator::builder_from(store.source(name, Some(slots)))
        .epoch_ms(DEFAULT_EPOCH_MS + test)
        .host_scope(test_scope(test))
}

fn ms(g: &Generator, id: u64) -> i64 {
    g.decode(id).unwrap().timestamp_ms
}

/// Two holders take distinct slots, a third is refused, their IDs are unique and R is renewed;
/// closing frees the slot and leaves R at the last issued ms (never above), and the next holder
/// of the slot waits exactly past it.
pub fn slots_are_exclusive_and_freed_on_close<S: LeaseStore>(test: i64) {
    let store = S::start();
    let name = "pf-a";
    let build = || lease(&store, name, 2, test).build();
    let a = build().unwrap();
    // A new slot (no mark yet) is guarded for a full reserve: a holder nobody can see any more
    // may have reached that far. Checked before b is built: b's take can use most of the
    // 500 ms reserve on a loaded machine.
    assert_eq!(a.next_id().unwrap_err().kind(), ErrorKind::LeaseNotReady);
    assert_eq!(a.health().status, HealthStatus::RestartGuard);
    let b = build().unwrap();
    assert_ne!(a.node_id(), b.node_id());
    a.wait_ready(Duration::from_secs(5)).unwrap();
    b.wait_ready(Duration::from_secs(5)).unwrap();
    let e = build().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::NoFreeSlot);
    assert!(
        e.to_string().contains(&store.shown(name)) && e.to_string().contains("2 slots"),
        "{e}"
    );
    // Unique IDs across the two slots, and a healthy lease.
    let mut seen = HashSet::new();
    for _ in 0..5000 {
        assert!(seen.insert(a.next_id().unwrap()));
        assert!(seen.insert(b.next_id().unwrap()));
    }
    let h = a.health();
    assert!(h.ok, "{h:?}");
    assert_eq!(h.source, S::SOURCE);
    let l = h.lease.unwrap();
    assert_eq!(l.kind, S::KIND);
    assert_eq!(l.slot, a.node_id());
    assert!(l.high_water_ms > now_ms());
    // R is renewed in the background every reserve / 5.
    assert!(wait_until(Duration::from_secs(10), || a
        .health()
        .lease_renewals
        >= 3));
    let r = store.held_r(name, &a);
    let freed = a.node_id();
    let last_ms = a.health().last_issued_ms.unwrap();
    drop(a);
    // Closing freed the slot and left R = the last issued ms (never less, never above).
    let r_closed = store.closed_r(name, freed);
    assert!(r_closed >= last_ms, "R {r_closed} < last issued {last_ms}");
    assert!(
        r_closed <= r,
        "closing left R at the last issued ms, not above: {r_closed} > {r}"
    );
    let c = build().unwrap();
    assert_eq!(c.node_id(), freed);
    // The successor's guard is that R: a millisecond or two from here (a call within it is
    // LEASE_NOT_READY, as it must be).
    c.wait_ready(Duration::from_secs(5)).unwrap();
    let guard = c.health().lease.unwrap().guard_until_ms.unwrap();
    assert_eq!(guard, r_closed);
    assert!(ms(&c, c.next_id().unwrap()) > guard);
    store.inspected(name);
    drop(b);
}

/// A holder killed with SIGKILL mid-stream, and a successor whose clock is 2 s behind its R:
/// nothing is issued until the clock passes R, then IDs above everything the holder issued.
pub fn sigkilled_holder_and_a_successor_behind_its_high_water_mark<S: LeaseStore>() {
    let store = S::start();
    let name = "pf-kill";
    // Let a few renewals happen, then kill it mid-stream.
    let (node, holder_max) = kill_holder_mid_stream(&store.child_env(name, 1));
    // A slot file's lock goes with the process; a remote slot stays taken until the dead
    // holder's etcd lease or ZooKeeper session expires (2 s).
    let clock = ManualClock::new(now_ms());
    let start = Instant::now();
    let g = loop {
        match Generator::builder_from(store.source(name, Some(1)))
            .clock(clock.clone())
            .build()
        {
            Ok(g) => break g,
            Err(e) if e.kind() == ErrorKind::NoFreeSlot => {
                assert!(
                    start.elapsed() < Duration::from_secs(20),
                    "slot never freed"
                );
                std::thread::sleep(Duration::from_millis(100));
            }
            Err(e) => panic!("{e}"),
        }
    };
    eprintln!("slot free after {:?}", start.elapsed());
    assert_eq!(g.node_id(), node);
    let r = g
        .health()
        .lease
        .unwrap()
        .guard_until_ms
        .expect("the holder's R");
    assert!(r >= holder_max, "R {r} covers every issued ms {holder_max}");
    // The successor's clock is 2 s behind R: nothing is issued until it passes R.
    clock.set(r - 2000);
    let h = g.health();
    assert_eq!(h.status, HealthStatus::RestartGuard);
    assert!(!h.ok);
    let lease = h.lease.unwrap();
    assert!(lease.guard_waiting);
    assert_eq!(lease.guard_remaining_ms, 2001);
    for step in [0, 1000, 1999, 2000] {
        clock.set(r - 2000 + step);
        let e = g.next_id().unwrap_err();
        assert_eq!(e.kind(), ErrorKind::LeaseNotReady, "{e}");
        let mut buf = [0u64; 8];
        assert_eq!(
            g.next_ids(&mut buf).unwrap_err().kind(),
            ErrorKind::LeaseNotReady
        );
    }
    jump_and_renew(&g, &clock, r + 1);
    let first = g.next_id().unwrap();
    let d = g.decode(first).unwrap();
    assert_eq!(d.node_id, node);
    assert!(d.timestamp_ms > r && d.timestamp_ms > holder_max);
    assert!(g.health().ok, "{:?}", g.health());
    // And it continues with larger timestamps.
    jump_and_renew(&g, &clock, r + 4);
    assert!(g.next_id().unwrap() > first);
}

/// More processes than slots take a slot at once: exactly one winner per slot, distinct slots,
/// and every other process refused with NO_FREE_SLOT naming the store and its slots.
pub fn processes_race_for_slots<S: LeaseStore>() {
    let store = S::start();
    let name = "pf-race";
    let (procs, slots) = S::RACE;
    let env = store.child_env(name, slots);
    let mut children: Vec<_> = (0..procs)
        .map(|_| spawn_child("child_process_entry", "race", &env))
        .collect();
    // Every child answers while the winners still hold their slots (they wait for stdin).
    let mut outputs: Vec<_> = children.iter_mut().map(lines).collect();
    let (mut won, mut refused) = (Vec::new(), Vec::new());
    for out in outputs.iter_mut() {
        let line = out.next().expect("child answered");
        match line.strip_prefix("WON ") {
            Some(n) => won.push(n.parse::<u32>().unwrap()),
            None => refused.push(line),
        }
    }
    for c in children.iter_mut() {
        drop(c.stdin.take());
    }
    for (mut c, out) in children.into_iter().zip(outputs) {
        assert_eq!(out.count(), 0, "nothing more to say");
        assert!(c.wait().unwrap().success());
    }
    assert_eq!(
        won.len(),
        slots as usize,
        "exactly {slots} winners: {won:?} {refused:?}"
    );
    let distinct: HashSet<_> = won.iter().collect();
    assert_eq!(
        distinct.len(),
        slots as usize,
        "winners hold distinct slots: {won:?}"
    );
    assert!(won.iter().all(|&n| n < slots));
    assert_eq!(refused.len(), procs - slots as usize);
    let shown = store.shown(name);
    for r in &refused {
        assert!(r.starts_with("ERR NO_FREE_SLOT "), "{r}");
        assert!(
            r.contains(&shown) && r.contains(&format!("{slots} slots")),
            "{r}"
        );
    }
}

/// A store serves one ID space: another layout or another epoch is refused, naming the store.
pub fn a_store_serves_one_id_space<S: LeaseStore>(test: i64) {
    let store = S::start();
    let name = "pf-space";
    let a = lease(&store, name, 4, test).build().unwrap();
    let e = lease(&store, name, 4, test)
        .layout(polyflake::Layout::BIG_FLEET)
        .build()
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::IdSpaceMismatch, "{e}");
    assert!(e.to_string().contains(&store.shown(name)), "{e}");
    let e = lease(&store, name, 4, test + 1).build().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::IdSpaceMismatch, "another epoch: {e}");
    let space = store.space(name);
    assert!(space.contains("layout=41/10/12"), "{space}");
    drop(a);
}

/// Cost follows what the store holds, never the layout's node ids (see the helper).
pub fn a_wide_layout_with_default_slots_takes_a_slot_quickly<S: LeaseStore>() {
    let store = S::start();
    assert_a_wide_layout_leases_quickly(S::NAME, store.source("pf-wide", None), S::WIDE_LIMIT);
}

/// The suite's tests, one per function above, against the store `$store`.
macro_rules! lease_suite {
    ($store:ty) => {
        #[test]
        fn slots_are_exclusive_and_freed_on_close() {
            $crate::lease_support::slots_are_exclusive_and_freed_on_close::<$store>(101);
        }

        #[test]
        fn sigkilled_holder_and_a_successor_behind_its_high_water_mark() {
            $crate::lease_support::sigkilled_holder_and_a_successor_behind_its_high_water_mark::<
                $store,
            >();
        }

        #[test]
        fn processes_race_for_slots() {
            $crate::lease_support::processes_race_for_slots::<$store>();
        }

        #[test]
        fn a_store_serves_one_id_space() {
            $crate::lease_support::a_store_serves_one_id_space::<$store>(103);
        }

        #[test]
        fn a_wide_layout_with_default_slots_takes_a_slot_quickly() {
            $crate::lease_support::a_wide_layout_with_default_slots_takes_a_slot_quickly::<$store>(
            );
        }
    };
}
pub(crate) use lease_suite;

/// A lease directory under a temporary directory of its own.
pub struct FileStore(TempDir);

fn read_r(text: &str) -> i64 {
    text.lines()
        .find_map(|l| l.strip_prefix("high_water_ms="))
        .unwrap()
        .trim()
        .parse()
        .unwrap()
}

impl LeaseStore for FileStore {
    const KIND: LeaseKind = LeaseKind::File;
    const SOURCE: NodeSourceKind = NodeSourceKind::FileLease;
    const NAME: &'static str = "file";
    const RACE: (usize, u32) = (50, 16);
    const WIDE_LIMIT: Duration = Duration::from_secs(3);

    fn start() -> Self {
        FileStore(TempDir::new("leases"))
    }

    fn source(&self, name: &str, slots: Option<u32>) -> NodeSource {
        let mut o = FileLeaseOptions::new(self.0.path().join(name));
        o.common.slots = slots;
        o.common.reserve_ms = 500;
        NodeSource::FileLease(o)
    }

    fn child_env(&self, name: &str, slots: u32) -> Vec<(&'static str, String)> {
        vec![
            ("LEASE", "file".into()),
            ("DIR", self.0.path().join(name).display().to_string()),
            ("SLOTS", slots.to_string()),
            ("RESERVE_MS", "500".into()),
        ]
    }

    fn shown(&self, name: &str) -> String {
        self.0.path().join(name).display().to_string()
    }

    fn held_r(&self, name: &str, g: &Generator) -> i64 {
        self.closed_r(name, g.node_id())
    }

    fn closed_r(&self, name: &str, slot: u32) -> i64 {
        let path = self.0.path().join(name).join(format!("slot-{slot:04}"));
        read_r(&std::fs::read_to_string(path).unwrap())
    }

    fn space(&self, name: &str) -> String {
        std::fs::read_to_string(self.0.path().join(name).join("polyflake-space")).unwrap()
    }
}

/// A real etcd of its own.
pub struct EtcdStore(pub Etcd);

impl EtcdStore {
    fn etcdctl(&self, args: &[&str]) -> String {
        self.0.etcdctl(args).unwrap()
    }

    fn hwm(&self, name: &str, slot: u32) -> i64 {
        self.etcdctl(&[
            "get",
            &format!("/{name}/hwm/{slot:04}"),
            "--print-value-only",
        ])
        .trim()
        .parse()
        .unwrap()
    }
}

impl LeaseStore for EtcdStore {
    const KIND: LeaseKind = LeaseKind::Etcd;
    const SOURCE: NodeSourceKind = NodeSourceKind::Etcd;
    const NAME: &'static str = "etcd";
    const RACE: (usize, u32) = (12, 4);
    const WIDE_LIMIT: Duration = Duration::from_secs(3);

    fn start() -> Self {
        EtcdStore(Etcd::start())
    }

    fn source(&self, name: &str, slots: Option<u32>) -> NodeSource {
        let mut o = EtcdLeaseOptions::new(vec![self.0.client_url.clone()]);
        o.store.prefix = format!("/{name}");
        o.common.slots = slots;
        o.common.reserve_ms = 500;
        o.ttl_s = 2;
        o.store.connect_timeout_ms = 500;
        NodeSource::Etcd(o)
    }

    fn child_env(&self, name: &str, slots: u32) -> Vec<(&'static str, String)> {
        vec![
            ("LEASE", "etcd".to_string()),
            ("ENDPOINT", self.0.client_url.clone()),
            ("PREFIX", format!("/{name}")),
            ("SLOTS", slots.to_string()),
            ("RESERVE_MS", "500".to_string()),
            ("TTL_S", "2".to_string()),
        ]
    }

    fn shown(&self, name: &str) -> String {
        format!("/{name}")
    }

    /// The slot key carries an etcd lease; the high-water mark is a durable key of its own.
    fn held_r(&self, name: &str, g: &Generator) -> i64 {
        let keys = self.etcdctl(&["get", "--prefix", &format!("/{name}/"), "--keys-only"]);
        let slot_key = format!("/{name}/slot/{:04}", g.node_id());
        let hwm_key = format!("/{name}/hwm/{:04}", g.node_id());
        assert!(
            keys.contains(&slot_key) && keys.contains(&hwm_key),
            "{keys}"
        );
        let r = self.hwm(name, g.node_id());
        assert!(r > now_ms() - 1000);
        r
    }

    /// The slot key went with the revoked etcd lease; R stays.
    fn closed_r(&self, name: &str, slot: u32) -> i64 {
        let keys = self.etcdctl(&["get", "--prefix", &format!("/{name}/"), "--keys-only"]);
        let slot_key = format!("/{name}/slot/{slot:04}");
        let hwm_key = format!("/{name}/hwm/{slot:04}");
        assert!(
            !keys.contains(&slot_key) && keys.contains(&hwm_key),
            "{keys}"
        );
        self.hwm(name, slot)
    }

    fn space(&self, name: &str) -> String {
        self.etcdctl(&["get", &format!("/{name}/space"), "--print-value-only"])
    }
}

/// A real ZooKeeper of its own, and a plain client that looks at it as an operator would.
pub struct ZkStore(pub ZooKeeper);

impl ZkStore {
    fn client(&self) -> ZkClient {
        ZkClient::connect(&self.0.ensemble(), None)
    }
}

impl LeaseStore for ZkStore {
    const KIND: LeaseKind = LeaseKind::ZooKeeper;
    const SOURCE: NodeSourceKind = NodeSourceKind::ZooKeeper;
    const NAME: &'static str = "zookeeper";
    const RACE: (usize, u32) = (12, 4);
    const WIDE_LIMIT: Duration = Duration::from_secs(5);

    fn start() -> Self {
        ZkStore(ZooKeeper::start())
    }

    fn source(&self, name: &str, slots: Option<u32>) -> NodeSource {
        let mut o = ZooKeeperLeaseOptions::new(vec![self.0.ensemble()]);
        o.store.prefix = format!("/{name}");
        o.common.slots = slots;
        o.common.reserve_ms = 500;
        o.session_timeout_ms = 2000;
        o.store.connect_timeout_ms = 3000;
        NodeSource::ZooKeeper(o)
    }

    fn child_env(&self, name: &str, slots: u32) -> Vec<(&'static str, String)> {
        vec![
            ("LEASE", "zookeeper".to_string()),
            ("ENSEMBLE", self.0.ensemble()),
            ("PREFIX", format!("/{name}")),
            ("SLOTS", slots.to_string()),
            ("RESERVE_MS", "500".to_string()),
            ("SESSION_MS", "2000".to_string()),
        ]
    }

    fn shown(&self, name: &str) -> String {
        format!("/{name}")
    }

    /// The slot is an ephemeral znode; the mark a persistent one; the space and owner recorded;
    /// each holder's claim an ephemeral znode named for its slot and a nonce of its take.
    fn held_r(&self, name: &str, g: &Generator) -> i64 {
        let store = g.health().lease.unwrap().store;
        assert!(
            store.contains(&self.0.ensemble()) && store.contains(&format!("/{name}")),
            "{store}"
        );
        let c = self.client();
        let slot = format!("/{name}/slot/{:04}", g.node_id());
        let hwm = format!("/{name}/hwm/{:04}", g.node_id());
        assert!(c.ephemeral_owner(&slot).unwrap() != 0, "slot is ephemeral");
        assert_eq!(c.ephemeral_owner(&hwm), Some(0), "mark is persistent");
        assert!(c.get_text(&slot).unwrap().contains('/'));
        let r: i64 = c.get_text(&hwm).unwrap().parse().unwrap();
        assert!(r > now_ms() - 1000);
        assert!(c
            .get_text(&format!("/{name}/space"))
            .unwrap()
            .contains("layout=41/10/12"));
        assert!(!c.children(&format!("/{name}/owner")).is_empty());
        let claims = c.children(&format!("/{name}/held"));
        assert_eq!(claims.len(), 2, "{claims:?}");
        let mine = format!("{:04}-", g.node_id());
        let claim = claims
            .iter()
            .find(|n| n.starts_with(&mine))
            .expect("the holder's claim");
        assert!(c.ephemeral_owner(&format!("/{name}/held/{claim}")).unwrap() != 0);
        r
    }

    /// The slot znode is deleted; R stays, lowered to what was issued.
    fn closed_r(&self, name: &str, slot: u32) -> i64 {
        let c = self.client();
        assert_eq!(c.get(&format!("/{name}/slot/{slot:04}")), None);
        c.get_text(&format!("/{name}/hwm/{slot:04}"))
            .unwrap()
            .parse()
            .unwrap()
    }

    fn space(&self, name: &str) -> String {
        self.client().get_text(&format!("/{name}/space")).unwrap()
    }

    /// `lease inspect`'s report: the space, two slots held, every mark complete.
    fn inspected(&self, name: &str) {
        let NodeSource::ZooKeeper(o) = self.source(name, Some(2)) else {
            unreachable!()
        };
        let report = polyflake::inspect_zookeeper_lease(&o).unwrap();
        assert_eq!(report.kind, LeaseKind::ZooKeeper);
        assert_eq!(
            report.space.unwrap().layout.to_string(),
            "41/10/12",
            "{report:?}"
        );
        let held: Vec<u32> = report
            .slots
            .iter()
            .filter(|s| s.held)
            .map(|s| s.slot)
            .collect();
        assert_eq!(held.len(), 2, "{report:?}");
        assert!(report.slots.iter().all(|s| s.record == "complete"));
    }
}
