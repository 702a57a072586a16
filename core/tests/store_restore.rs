//! A store restored from an older backup: the fence and rollback detection probed beside a real
//! etcd (`etcdctl snapshot save` / `snapshot restore`) and a real ZooKeeper (a copy of its data
//! dir).
//! Holder C leaves an R and closes; the backup is taken; holder A takes the slot and mints
//! further ahead; the store is restored (it forgets A's R); the operator fences it
//! (`fence_*_lease`, what `polyflake lease fence` runs); holder B, its clock where A's was,
//! takes the slot. B must not issue until its clock passes the fence, so no ID of B's equals
//! one of A's.
//!
//! The second probe is a holder D whose own writes the restore kept: the backup holds its
//! session (ZooKeeper) or etcd lease and the mark it last wrote, so no version or revision it can
//! compare shows the rollback; but the restore may have lost its session's end and another
//! holder's use of its slot. The fence the operator raised is what D sees: its next renewal
//! finds the fence moved since its take and D lets the slot go (found by the nemesis on
//! ZooKeeper: a holder cut off from the backup until after the restore kept issuing).

mod lease_support;

use lease_support::*;
use polyflake::{
    fence_etcd_lease, fence_file_lease, fence_zookeeper_lease, Builder, Clock, ClockError,
    ErrorKind, EtcdLeaseOptions, FileLeaseOptions, Generator, ManualClock, NodeSource, StoreReport,
    ZooKeeperLeaseOptions, DEFAULT_EPOCH_MS,
};
use std::collections::HashSet;
use std::time::Duration;

#[test]
fn child_process_entry() {
    if let Some(mode) = child_mode() {
        child_main(&mode);
    }
}

/// The probe, whatever the store: `make` builds a generator on a clock, `backup` and
/// `restore` act on the store, `fence` fences it (Unix ms of the fence), `inspect` reads it.
fn probe(
    make: &dyn Fn(&ManualClock) -> Builder,
    backup: &mut dyn FnMut(),
    restore: &mut dyn FnMut(),
    fence: &dyn Fn() -> i64,
    inspect: &dyn Fn() -> StoreReport,
) {
    let t0 = now_ms();
    // C: a fresh slot waits one reserve (500 ms here) and a renewal at the clock's new time
    // (a fresh slot's window opens at its first renewal), mints, closes: R = its last ms.
    let c_clock = ManualClock::new(t0);
    let c = make(&c_clock).build().unwrap();
    jump_and_renew(&c, &c_clock, t0 + 1_000);
    c.next_id().unwrap();
    c.close();
    drop(c);
    backup();

    // A: takes the slot after C's R and mints at t0 + 10 s (its renewals publish R ahead).
    let a_clock = ManualClock::new(t0 + 2_000);
    let a = make(&a_clock).build().unwrap();
    jump_and_renew(&a, &a_clock, t0 + 10_000);
    a.next_id().unwrap();
    let mut theirs = HashSet::new();
    for _ in 0..200 {
        theirs.insert(a.next_id().unwrap());
    }
    let a_last_ms = theirs
        .iter()
        .map(|&id| a.decode(id).unwrap().timestamp_ms)
        .max()
        .unwrap();

    let seen_before = inspect();
    assert!(
        seen_before.store_identity.is_some() && seen_before.revision.is_some(),
        "{seen_before:?}"
    );
    restore();
    let restored = std::time::Instant::now();
    // A, live across the restore, notices that the store went back in time and stops.
    let noticed = wait_until(Duration::from_secs(20), || {
        let h = a.health();
        h.status == polyflake::HealthStatus::StoreRolledBack && h.reason.contains("back in time")
    });
    assert!(
        noticed,
        "A did not notice the rollback: {:?} {}",
        a.health().status,
        a.health().reason
    );
    eprintln!(
        "A noticed the rollback {:?} after the store came back: {}",
        restored.elapsed(),
        a.health().reason
    );
    assert_eq!(a.next_id().unwrap_err().kind(), ErrorKind::LeaseLost);
    // The restored store forgot A's R: its mark is C's, below what A issued.
    let before = inspect();
    // `lease inspect` shows it: the highest revision (etcd) or zxid (ZooKeeper) went back.
    assert!(
        before.revision < seen_before.revision,
        "revision {:?} after the restore, {:?} before",
        before.revision,
        seen_before.revision
    );
    eprintln!(
        "inspect: {} at revision {:?} before the restore, {} at {:?} after",
        seen_before.store_identity.as_deref().unwrap_or("-"),
        seen_before.revision,
        before.store_identity.as_deref().unwrap_or("-"),
        before.revision
    );
    let mark = before
        .slots
        .iter()
        .find(|s| s.slot == 0)
        .and_then(|s| s.high_water_ms);
    assert!(
        mark.is_some_and(|m| m < a_last_ms),
        "mark {mark:?}, A issued up to {a_last_ms}"
    );

    let fence_ms = fence();
    assert!(
        fence_ms > a_last_ms,
        "the margin covers A's lead: {fence_ms} <= {a_last_ms}"
    );
    assert_eq!(inspect().fence_ms, Some(fence_ms));

    // B: its clock where A's is. Refused until it passes the fence, then nothing it issues
    // equals anything A issued.
    let b_clock = ManualClock::new(t0 + 10_000);
    let b = make(&b_clock).build().unwrap();
    assert_eq!(b.node_id(), 0, "one slot: B has A's node id");
    let guard = b.health().lease.unwrap().guard_until_ms.unwrap();
    assert!(
        guard >= fence_ms,
        "guard {guard} below the fence {fence_ms}"
    );
    assert_eq!(b.next_id().unwrap_err().kind(), ErrorKind::LeaseNotReady);
    jump_and_renew(&b, &b_clock, fence_ms + 1);
    b.next_id().unwrap();
    let mut dupes = 0;
    for _ in 0..200 {
        if theirs.contains(&b.next_id().unwrap()) {
            dupes += 1;
        }
    }
    assert_eq!(dupes, 0);
    // A, still live on the restored store: whatever it issues now is below the fence or
    // refused, never one of B's.
    let mine: Vec<u64> = (0..50).filter_map(|_| b.next_id().ok()).collect();
    for _ in 0..50 {
        if let Ok(id) = a.next_id() {
            assert!(!mine.contains(&id));
            assert!(a.decode(id).unwrap().timestamp_ms < fence_ms);
        }
    }
}

/// D's reserve: its first renewal comes a fifth of it (30 s) after the take, well after the
/// backup, the restore and the fence (a few seconds), so the restore loses no write of D's.
const D_RESERVE_MS: i64 = 150_000;

/// The second probe (see the module's notes): `expect` is what D's reason must say.
fn kept_writes_probe(
    make: &dyn Fn(&ManualClock) -> Builder,
    backup: &mut dyn FnMut(),
    restore: &mut dyn FnMut(),
    fence: &dyn Fn() -> i64,
    expect: &[&str],
) {
    let t0 = now_ms();
    let d_clock = ManualClock::new(t0);
    // D's clock jumps past a fresh slot's guard (one reserve): no forward-step guard.
    let d = make(&d_clock).max_forward_step_ms(None).build().unwrap();
    jump_and_renew(&d, &d_clock, t0 + D_RESERVE_MS + 1_000);
    d.next_id().unwrap();
    // The renewal's first tick comes at once; the next one a period later. Back up after the
    // first, so that no write of D's falls between the backup and the restore.
    assert!(
        wait_until(Duration::from_secs(10), || d
            .health()
            .lease
            .is_some_and(|l| l.renewals >= 1)),
        "D never renewed: {:?}",
        d.health().lease
    );
    let taken = std::time::Instant::now();
    backup();
    restore();
    fence();
    let first_renewal = Duration::from_millis(D_RESERVE_MS as u64 / 5);
    assert!(
        taken.elapsed() < first_renewal,
        "the backup, the restore and the fence took {:?}, past D's first renewal ({first_renewal:?}): the probe needs them done before it",
        taken.elapsed()
    );
    let noticed = wait_until(first_renewal + Duration::from_secs(20), || {
        d.health().status == polyflake::HealthStatus::StoreRolledBack
    });
    let reason = d.health().reason;
    assert!(noticed, "D did not notice the restore: {reason}");
    assert!(
        expect.iter().any(|e| reason.contains(e)),
        "D's reason: {reason}"
    );
    eprintln!(
        "D let its slot go {:?} after its take: {reason}",
        taken.elapsed()
    );
    assert_eq!(d.next_id().unwrap_err().kind(), ErrorKind::LeaseLost);
}

/// One slot under `prefix` of a real etcd, with this reserve and TTL.
fn etcd_options(etcd: &Etcd, prefix: &str, reserve_ms: u64, ttl_s: i64) -> EtcdLeaseOptions {
    let mut o = EtcdLeaseOptions::new(vec![etcd.client_url.clone()]);
    o.store.prefix = prefix.into();
    o.common.slots = Some(1);
    o.common.reserve_ms = reserve_ms;
    o.ttl_s = ttl_s;
    o.store.connect_timeout_ms = 2_000;
    o
}

/// One slot under `prefix` of a real ZooKeeper, with this reserve and session timeout.
fn zookeeper_options(
    zk: &ZooKeeper,
    prefix: &str,
    reserve_ms: u64,
    session_timeout_ms: u64,
) -> ZooKeeperLeaseOptions {
    let mut o = ZooKeeperLeaseOptions::new(vec![zk.ensemble()]);
    o.store.prefix = prefix.into();
    o.common.slots = Some(1);
    o.common.reserve_ms = reserve_ms;
    o.session_timeout_ms = session_timeout_ms;
    o.store.connect_timeout_ms = 2_000;
    o
}

/// A generator of `source` on a test's clock, in an epoch of the test's own.
fn maker(source: NodeSource, epoch_offset: i64) -> impl Fn(&ManualClock) -> Builder {
    move |clock: &ManualClock| {
        Generator::builder_from(source.clone())
            .epoch_ms(DEFAULT_EPOCH_MS + epoch_offset)
            .host_scope(lease_support::test_scope(epoch_offset))
            .clock(clock.clone())
    }
}

#[test]
fn etcd_restored_from_a_snapshot_then_fenced_gives_no_duplicate() {
    let mut etcd = Etcd::start();
    let snap = TempDir::new("etcd-snap");
    let file = snap.path().join("backup.db");
    let o = etcd_options(&etcd, "/pf-restore", 500, 2);
    let make = maker(NodeSource::Etcd(o.clone()), 26);
    let etcd_cell = std::cell::RefCell::new(&mut etcd);
    probe(
        &make,
        &mut || etcd_cell.borrow().snapshot(&file),
        &mut || etcd_cell.borrow_mut().restore(&file),
        &|| fence_etcd_lease(&o, 20_000).unwrap().fence_ms,
        &|| polyflake::inspect_etcd_lease(&o).unwrap(),
    );
}

#[test]
fn zookeeper_restored_from_a_data_dir_copy_then_fenced_gives_no_duplicate() {
    let mut zk = ZooKeeper::start();
    let snap = TempDir::new("zk-backup");
    let copy = snap.path().join("data");
    // The default session timeout's order (10 s): the rollback must be noticed well before the
    // session would expire.
    let o = zookeeper_options(&zk, "/pf-restore", 500, 10_000);
    let make = maker(NodeSource::ZooKeeper(o.clone()), 27);
    let zk_cell = std::cell::RefCell::new(&mut zk);
    probe(
        &make,
        &mut || zk_cell.borrow_mut().backup(&copy),
        &mut || zk_cell.borrow_mut().restore(&copy),
        &|| fence_zookeeper_lease(&o, 20_000).unwrap().fence_ms,
        &|| polyflake::inspect_zookeeper_lease(&o).unwrap(),
    );
}

#[test]
fn etcd_holder_whose_writes_the_restore_kept_lets_go_at_the_fence() {
    let mut etcd = Etcd::start();
    let snap = TempDir::new("etcd-snap-kept");
    let file = snap.path().join("backup.db");
    let mut o = etcd_options(&etcd, "/pf-restore-kept", D_RESERVE_MS as u64, 40);
    o.common.max_guard_wait_ms = 2 * D_RESERVE_MS as u64;
    let make = maker(NodeSource::Etcd(o.clone()), 28);
    let etcd_cell = std::cell::RefCell::new(&mut etcd);
    // etcd's restore may also give the store a new cluster id, which D sees first.
    kept_writes_probe(
        &make,
        &mut || etcd_cell.borrow().snapshot(&file),
        &mut || etcd_cell.borrow_mut().restore(&file),
        &|| fence_etcd_lease(&o, 20_000).unwrap().fence_ms,
        &["fence", "cluster id"],
    );
}

#[test]
fn zookeeper_holder_whose_writes_the_restore_kept_lets_go_at_the_fence() {
    let mut zk = ZooKeeper::start();
    let snap = TempDir::new("zk-backup-kept");
    let copy = snap.path().join("data");
    let mut o = zookeeper_options(&zk, "/pf-restore-kept", D_RESERVE_MS as u64, 40_000);
    o.common.max_guard_wait_ms = 2 * D_RESERVE_MS as u64;
    let make = maker(NodeSource::ZooKeeper(o.clone()), 29);
    let zk_cell = std::cell::RefCell::new(&mut zk);
    kept_writes_probe(
        &make,
        &mut || zk_cell.borrow_mut().backup(&copy),
        &mut || zk_cell.borrow_mut().restore(&copy),
        &|| fence_zookeeper_lease(&o, 20_000).unwrap().fence_ms,
        &["fence"],
    );
}

/// The system clock, that fences a lease directory once, at the first reading taken while the
/// slot file `slot-0000` exists: the reading a file take makes right after it locked the slot
/// file (a new one) and read its record, between its first read of the fence and its write of R.
#[derive(Clone)]
struct FencingClock {
    options: FileLeaseOptions,
    fenced: std::sync::Arc<std::sync::Mutex<Option<i64>>>,
}

impl Clock for FencingClock {
    fn now_ms(&self) -> Result<i64, ClockError> {
        let mut fenced = self.fenced.lock().unwrap();
        if fenced.is_none() && self.options.dir.join("slot-0000").exists() {
            *fenced = Some(fence_file_lease(&self.options, 20_000).unwrap().fence_ms);
        }
        Ok(now_ms())
    }
}

/// A lease directory restored and fenced while a take is under way (the take read the fence
/// before the restore, then locks the restored slot file and reads its restored record, whose R
/// is below what a holder of the lost history issued): the take reads the fence again after its
/// first write of R, finds it moved and fails (`LeaseStore`, "make the generator again"); the
/// generator made again waits for the fence. Found by the lease model
/// (`verify/model/trails/no-file-take-fence-read.txt`).
#[test]
fn a_file_take_under_way_when_the_directory_is_fenced_fails() {
    let dir = TempDir::new("file-fence-take");
    let mut o = FileLeaseOptions::new(dir.path());
    o.common.slots = Some(1);
    o.common.reserve_ms = 500;
    let clock = FencingClock {
        options: o.clone(),
        fenced: Default::default(),
    };
    let make = || {
        Generator::builder_from(NodeSource::FileLease(o.clone()))
            .epoch_ms(DEFAULT_EPOCH_MS + 30)
            .host_scope(lease_support::test_scope(30))
            .clock(clock.clone())
            .build()
    };
    let e = make().unwrap_err();
    let fence_ms = clock
        .fenced
        .lock()
        .unwrap()
        .expect("fenced during the take");
    assert_eq!(e.kind(), ErrorKind::LeaseStore, "{e}");
    assert!(
        e.to_string().contains("under way") && e.to_string().contains(&fence_ms.to_string()),
        "{e}"
    );
    // Made again: the take reads the fence, and nothing is issued until the clock passes it.
    let g = make().unwrap();
    let guard = g.health().lease.unwrap().guard_until_ms.unwrap();
    assert!(
        guard >= fence_ms,
        "guard {guard} below the fence {fence_ms}"
    );
    assert_eq!(g.next_id().unwrap_err().kind(), ErrorKind::LeaseNotReady);
}
