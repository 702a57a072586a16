//! Every wait can be cut short: by the hook a binding installs for a call ([`interruptible`]) or
//! by [`Generator::interrupt_waits`]. A strict batch cut short writes nothing to the caller's
//! buffer, and the IDs it had reserved are never issued afterwards.

use polyflake::{interruptible, ErrorKind, Generator, Layout, ManualClock, Mode};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A margin for a loaded machine: the wait is cut within a slice (20 ms); we allow a second.
const MARGIN: Duration = Duration::from_secs(1);

fn stop_after(d: Duration) -> impl Fn() -> bool {
    let t = Instant::now();
    move || t.elapsed() >= d
}

#[test]
fn a_long_strict_batch_on_a_one_bit_sequence_stops_and_issues_nothing() {
    // 41/21/1: two IDs a millisecond, so 20,000 IDs would wait about 10 s.
    let layout = Layout::new(41, 21, 1).unwrap();
    let g = Generator::builder(951).layout(layout).build().unwrap();
    let mut out = vec![0u64; 20_000];
    let start_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64;
    let t = Instant::now();
    let err = interruptible(&stop_after(Duration::from_millis(100)), || {
        g.next_ids(&mut out)
    })
    .unwrap_err();
    let took = t.elapsed();
    assert_eq!(err.kind(), ErrorKind::Interrupted, "{err}");
    assert!(took < Duration::from_millis(100) + MARGIN, "{took:?}");
    assert!(out.iter().all(|&id| id == 0), "a cut batch wrote IDs");
    // It had reserved every ID of about 100 ms (two a millisecond): none is issued again, so the
    // next ID lies after them all.
    let next = g.next_id().unwrap();
    let ts = layout
        .decode(next, polyflake::DEFAULT_EPOCH_MS)
        .unwrap()
        .timestamp_ms;
    assert!(
        ts >= start_ms + 90,
        "next ID at {ts}, the batch began at {start_ms}"
    );
    let h = g.health();
    assert!(h.ok, "{:?}", h.status);
}

#[test]
fn a_cut_batch_never_hands_out_its_reserved_ids_again() {
    // On a manual clock: the batch reserves the current millisecond's IDs, then waits on a
    // frozen clock; the cut call gives nothing, and the next IDs start after the reservation.
    let clock = ManualClock::new(1_704_167_201_000);
    let layout = Layout::new(41, 20, 2).unwrap();
    let g = Generator::builder(1)
        .layout(layout)
        .max_wait_ms(60_000.0)
        .clock(clock.clone())
        .build()
        .unwrap();
    let mut out = vec![0u64; 10];
    let err = interruptible(&stop_after(Duration::from_millis(30)), || {
        g.next_ids(&mut out)
    });
    // A frozen clock: the spent millisecond is waited on for max(budget, 1 ms), so the call
    // ends as stuck or as interrupted, and either way it issued nothing.
    let kind = err.unwrap_err().kind();
    assert!(
        matches!(
            kind,
            ErrorKind::Interrupted | ErrorKind::ClockMovedBackwards
        ),
        "{kind:?}"
    );
    assert!(out.iter().all(|&id| id == 0));
    clock.advance(1);
    let next = g.next_id().unwrap();
    let decoded = layout.decode(next, polyflake::DEFAULT_EPOCH_MS).unwrap();
    assert_eq!(decoded.timestamp_ms, 1_704_167_201_001);
    assert_eq!(decoded.sequence, 0);
}

#[test]
fn a_rewind_wait_inside_a_twenty_second_budget_is_cut() {
    let clock = ManualClock::new(1_704_167_201_000);
    let g = Generator::builder(7)
        .max_wait_ms(20_000.0)
        .clock(clock.clone())
        .build()
        .unwrap();
    g.next_id().unwrap();
    clock.advance(-19_500);
    let t = Instant::now();
    let err = interruptible(&stop_after(Duration::from_millis(50)), || g.next_id()).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Interrupted);
    assert!(
        t.elapsed() < Duration::from_millis(50) + MARGIN,
        "{:?}",
        t.elapsed()
    );
    assert!(
        err.to_string().contains("interrupted after waiting"),
        "{err}"
    );
    // The hook is gone with the call: a call outside it waits (here: a clock put right).
    clock.advance(19_500);
    assert!(g.next_id().is_ok());
}

#[test]
fn interrupt_waits_cuts_every_waiting_call_and_only_those() {
    let clock = ManualClock::new(1_704_167_201_000);
    let g = Arc::new(
        Generator::builder(8)
            .mode(Mode::Strict)
            .max_wait_ms(20_000.0)
            .clock(clock.clone())
            .build()
            .unwrap(),
    );
    g.next_id().unwrap();
    clock.advance(-10_000);
    let started = Arc::new(AtomicBool::new(false));
    let waiters: Vec<_> = (0..4)
        .map(|_| {
            let (g, started) = (g.clone(), started.clone());
            std::thread::spawn(move || {
                started.store(true, Ordering::SeqCst);
                let t = Instant::now();
                (g.next_id(), t)
            })
        })
        .collect();
    while !started.load(Ordering::SeqCst) {
        std::thread::yield_now();
    }
    std::thread::sleep(Duration::from_millis(100));
    let cut = Instant::now();
    g.interrupt_waits();
    for w in waiters {
        let (res, _) = w.join().unwrap();
        assert_eq!(res.unwrap_err().kind(), ErrorKind::Interrupted);
    }
    assert!(cut.elapsed() < MARGIN, "{:?}", cut.elapsed());
    // A call that begins afterwards is not cut: it waits as usual (the clock comes back here).
    let g2 = g.clone();
    let later = std::thread::spawn(move || g2.next_id());
    std::thread::sleep(Duration::from_millis(100));
    clock.advance(10_000);
    assert!(later.join().unwrap().is_ok());
}

#[test]
fn the_restart_guard_wait_is_cut_too() {
    // A holder leaves R in the slot; a successor whose clock is 20 s behind waits in wait_ready.
    let dir =
        std::env::temp_dir().join(format!("polyflake-interrupt-guard-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut o = polyflake::FileLeaseOptions::new(&dir);
    o.common.slots = Some(1);
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64;
    let first = ManualClock::new(now);
    let a = Generator::builder_from(polyflake::NodeSource::FileLease(o.clone()))
        .clock(first.clone())
        .build()
        .unwrap();
    first.advance(6_000); // past a fresh slot's guard of one reserve
    a.next_id().unwrap();
    drop(a);
    let behind = ManualClock::new(now - 20_000);
    let b = Generator::builder_from(polyflake::NodeSource::FileLease(o))
        .clock(behind)
        .build()
        .unwrap();
    let t = Instant::now();
    let err = interruptible(&stop_after(Duration::from_millis(50)), || {
        b.wait_ready(Duration::from_secs(60))
    })
    .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Interrupted, "{err}");
    assert!(
        t.elapsed() < Duration::from_millis(50) + MARGIN,
        "{:?}",
        t.elapsed()
    );
    // Cut from another thread as well.
    let b = Arc::new(b);
    let waiter = {
        let b = b.clone();
        std::thread::spawn(move || b.wait_ready(Duration::from_secs(60)))
    };
    std::thread::sleep(Duration::from_millis(100));
    b.interrupt_waits();
    assert_eq!(
        waiter.join().unwrap().unwrap_err().kind(),
        ErrorKind::Interrupted
    );
    drop(b);
    std::fs::remove_dir_all(&dir).unwrap();
}
