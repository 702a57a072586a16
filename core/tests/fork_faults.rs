//! Fork faults: a child that closes its inherited descriptors (daemonizing code)
//! and leases again, a fork while another thread is inside a batch, a `close()` while a forked
//! child lives, and a parent that dies while such a child lives. One test that runs them in
//! order: forking while other test threads run would test the harness, not polyflake.

mod lease_support;

use lease_support::{now_ms, wait_until, TempDir};
use polyflake::{FileLeaseOptions, Generator, NodeSource, DEFAULT_EPOCH_MS};
use std::collections::HashSet;
use std::io::Read;
use std::os::unix::io::{AsRawFd, FromRawFd};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

fn opts(dir: &Path, slots: u32) -> FileLeaseOptions {
    let mut o = FileLeaseOptions::new(dir);
    o.common.slots = Some(slots);
    o.common.reserve_ms = 200;
    o
}

fn lease(dir: &Path, slots: u32, test: i64) -> Generator {
    let g = Generator::builder_from(NodeSource::FileLease(opts(dir, slots)))
        .epoch_ms(DEFAULT_EPOCH_MS + test)
        .host_scope(lease_support::test_scope(test))
        .build()
        .unwrap();
    g.wait_ready(Duration::from_secs(5)).unwrap();
    g
}

/// The child's end of its pipe to the test.
const PIPE_FD: i32 = 1023;

/// Fork; the child runs `body`, whose text goes back through a pipe, then `_exit(0)` (or 1 if
/// it panicked). Returns the child's pid and a reader of its text.
fn fork_child(body: impl FnOnce() -> String) -> (i32, std::fs::File) {
    let mut fds = [0i32; 2];
    assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0, "fork failed");
    if pid == 0 {
        // The pipe moves to a number above what a closing child closes (3..PIPE_FD).
        unsafe {
            libc::close(fds[0]);
            libc::dup2(fds[1], PIPE_FD);
            libc::close(fds[1]);
        }
        fds[1] = PIPE_FD;
        // A hang in the child must fail the test, not hold it forever.
        unsafe { libc::alarm(20) };
        let out = std::panic::catch_unwind(std::panic::AssertUnwindSafe(body));
        let (text, code) = match out {
            Ok(t) => (t, 0),
            Err(_) => ("PANIC".to_string(), 1),
        };
        let bytes = text.into_bytes();
        let mut written = 0;
        while written < bytes.len() {
            let n = unsafe {
                libc::write(
                    fds[1],
                    bytes[written..].as_ptr().cast(),
                    bytes.len() - written,
                )
            };
            if n <= 0 {
                break;
            }
            written += n as usize;
        }
        unsafe { libc::_exit(code) };
    }
    unsafe { libc::close(fds[1]) };
    (pid, unsafe { std::fs::File::from_raw_fd(fds[0]) })
}

fn finish(pid: i32, mut pipe: std::fs::File) -> String {
    let mut text = String::new();
    pipe.read_to_string(&mut text).unwrap();
    let mut status = 0;
    unsafe { libc::waitpid(pid, &mut status, 0) };
    assert!(
        libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        "child failed ({status}): {text}"
    );
    text
}

/// True when someone holds an exclusive lock on `path` (a shared lock is refused).
fn locked(path: &Path) -> bool {
    let f = std::fs::File::open(path).unwrap();
    let rc = unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_SH | libc::LOCK_NB) };
    rc != 0
}

#[test]
fn fork_faults() {
    child_that_closes_inherited_descriptors_and_leases_again();
    fork_while_another_thread_is_in_a_batch_then_close_in_the_child();
    close_frees_the_slot_while_a_forked_child_lives();
    a_parent_that_dies_leaves_no_slot_to_its_child();
    a_forked_child_does_not_repeat_its_parents_random_bits();
}

/// Daemonizing code closes every inherited descriptor; the child then makes its own lease
/// generator G2 (whose slot file may get the number the parent's slot file had) and uses the
/// inherited generator G, which re-leases. G's re-lease must not close or unlock anything of
/// G2's, nor a log file the child opened on a reused number.
fn child_that_closes_inherited_descriptors_and_leases_again() {
    let dir = TempDir::new("fork-closerange");
    let g = lease(dir.path(), 4, 1);
    let parent_node = g.node_id();
    let mut parent_ids: Vec<u64> = (0..1000).map(|_| g.next_id().unwrap()).collect();
    let log_path = dir.path().join("child.log");
    let (pid, pipe) = fork_child(|| {
        // What python-daemon, Celery's detach and closerange() do.
        for fd in 3..PIPE_FD {
            unsafe { libc::close(fd) };
        }
        let g2 = lease(dir.path(), 4, 1);
        let g2_slot = dir.path().join(format!("slot-{:04}", g2.node_id()));
        let mut log = std::fs::File::create(&log_path).unwrap();
        // The inherited generator takes its own fresh slot now.
        g.wait_ready(Duration::from_secs(5)).unwrap();
        let mut ids: Vec<u64> = (0..1000).map(|_| g.next_id().unwrap()).collect();
        ids.extend((0..1000).map(|_| g2.next_id().unwrap()));
        let renewals = g2.health().lease_renewals;
        // G2's lock and renewals are untouched: its record keeps moving and stays its own.
        assert!(locked(&g2_slot), "G2's slot was unlocked");
        assert!(wait_until(Duration::from_secs(5), || g2
            .health()
            .lease_renewals
            > renewals + 2));
        let h2 = g2.health();
        assert!(h2.ok && !h2.lease.as_ref().unwrap().lost, "{h2:?}");
        // Closing the inherited generator closes nothing of the child's.
        let (g_node, g2_node) = (g.node_id(), g2.node_id());
        g.close();
        std::io::Write::write_all(&mut log, b"still open\n").expect("the log survived");
        assert!(locked(&g2_slot));
        ids.extend((0..1000).map(|_| g2.next_id().unwrap()));
        let mut out = format!("{g_node} {g2_node}\n");
        for id in ids {
            out.push_str(&format!("{id}\n"));
        }
        out
    });
    parent_ids.extend((0..1000).map(|_| g.next_id().unwrap()));
    let text = finish(pid, pipe);
    let mut lines = text.lines();
    let nodes: Vec<u32> = lines
        .next()
        .unwrap()
        .split(' ')
        .map(|n| n.parse().unwrap())
        .collect();
    let distinct: HashSet<u32> = [parent_node, nodes[0], nodes[1]].into_iter().collect();
    assert_eq!(distinct.len(), 3, "three holders, three slots: {nodes:?}");
    let mut all = HashSet::new();
    for id in parent_ids
        .into_iter()
        .chain(lines.map(|l| l.parse::<u64>().unwrap()))
    {
        assert!(all.insert(id), "duplicate {id}");
    }
    assert_eq!(all.len(), 5000);
    assert_eq!(std::fs::read_to_string(&log_path).unwrap(), "still open\n");
    assert!(g.health().ok);
    assert!(locked(&dir.path().join(format!("slot-{parent_node:04}"))));
}

/// A thread loops on batches while the main thread forks: in the child every call, `close()`
/// included, returns (no lock can be inherited held by a thread that does not exist there).
fn fork_while_another_thread_is_in_a_batch_then_close_in_the_child() {
    let dir = TempDir::new("fork-batch");
    let g = Arc::new(lease(dir.path(), 4, 2));
    let stop = Arc::new(AtomicBool::new(false));
    let worker = {
        let (g, stop) = (g.clone(), stop.clone());
        std::thread::spawn(move || {
            let mut buf = vec![0u64; 1_000_000];
            while !stop.load(Ordering::Relaxed) {
                g.next_ids(&mut buf).unwrap();
            }
        })
    };
    std::thread::sleep(Duration::from_millis(100));
    for _ in 0..3 {
        let (pid, pipe) = fork_child(|| {
            g.wait_ready(Duration::from_secs(5)).unwrap();
            let id = g.next_id().unwrap();
            g.close();
            assert_eq!(
                g.next_id().unwrap_err().kind(),
                polyflake::ErrorKind::GeneratorClosed
            );
            format!("{id}")
        });
        let text = finish(pid, pipe);
        assert!(text.parse::<u64>().is_ok(), "{text}");
        std::thread::sleep(Duration::from_millis(50));
    }
    stop.store(true, Ordering::Relaxed);
    worker.join().unwrap();
}

/// The parent's `close()` frees its slot while a forked child that never touched the generator
/// (a multiprocessing worker) lives.
fn close_frees_the_slot_while_a_forked_child_lives() {
    let dir = TempDir::new("fork-close");
    let g = lease(dir.path(), 1, 3);
    g.next_id().unwrap();
    // The child lives until it is killed below (30 s at most): a fixed 3 s could run out on a
    // loaded machine before the re-lease, which would then pass with no child alive.
    let (pid, pipe) = fork_child(|| {
        std::thread::sleep(Duration::from_secs(30));
        String::new()
    });
    g.close();
    let again = Generator::builder_from(NodeSource::FileLease(opts(dir.path(), 1)))
        .epoch_ms(DEFAULT_EPOCH_MS + 3)
        .host_scope(lease_support::test_scope(3))
        .build();
    assert!(
        again.is_ok(),
        "re-lease with a live child: {:?}",
        again.err()
    );
    unsafe { libc::kill(pid, libc::SIGKILL) };
    let mut status = 0;
    unsafe { libc::waitpid(pid, &mut status, 0) };
    drop(pipe);
}

/// A holder that forks a long-lived child and then dies without closing: its slot is free at
/// once, although the child (which inherited the slot file's descriptor) still lives.
fn a_parent_that_dies_leaves_no_slot_to_its_child() {
    let dir = TempDir::new("fork-orphan");
    let grandchild = dir.path().join("grandchild.pid");
    let (pid, pipe) = fork_child(|| {
        let g = lease(dir.path(), 1, 4);
        g.next_id().unwrap();
        let q = unsafe { libc::fork() };
        if q == 0 {
            // Not the test's pipe: the test must see its parent finish, not wait for it.
            unsafe { libc::close(PIPE_FD) };
            // Until it is killed at the end (30 s at most, not 5: a loaded machine must not let
            // it exit before the checks that it lives).
            std::thread::sleep(Duration::from_secs(30));
            unsafe { libc::_exit(0) };
        }
        std::fs::write(&grandchild, q.to_string()).unwrap();
        // Die like a crash: no close, no destructor.
        unsafe { libc::_exit(0) };
    });
    let _ = finish(pid, pipe);
    let q: i32 = std::fs::read_to_string(&grandchild)
        .unwrap()
        .parse()
        .unwrap();
    // Alive: running or sleeping (a loaded machine may still be running it out of fork when
    // this looks; it sleeps 30 s after), never a zombie or gone.
    let state = std::fs::read_to_string(format!("/proc/{q}/status")).unwrap();
    assert!(
        unsafe { libc::kill(q, 0) } == 0
            && (state.contains("State:\tS") || state.contains("State:\tR")),
        "the grandchild lives: {state}"
    );
    let t = now_ms();
    let g = Generator::builder_from(NodeSource::FileLease(opts(dir.path(), 1)))
        .epoch_ms(DEFAULT_EPOCH_MS + 4)
        .host_scope(lease_support::test_scope(4))
        .build();
    assert!(
        g.is_ok(),
        "slot still held by the dead holder's child: {:?}",
        g.err()
    );
    assert!(now_ms() - t < 2000);
    unsafe { libc::kill(q, libc::SIGKILL) };
}

/// UUIDv7 and ULID generators have no node id: a forked child goes on issuing from the state it
/// inherited, so its IDs differ from its parent's only by their random parts, which the child
/// must not repeat.
fn a_forked_child_does_not_repeat_its_parents_random_bits() {
    use polyflake::{ManualClock, TimeIdBuilder};
    let clock = ManualClock::new(1_737_747_358_021);
    let u = TimeIdBuilder::new()
        .clock(clock.clone())
        .build_uuid7()
        .unwrap();
    let l = TimeIdBuilder::new()
        .clock(clock.clone())
        .build_ulid()
        .unwrap();
    u.next_uuid().unwrap();
    l.next_ulid().unwrap();
    let (pid, pipe) =
        fork_child(|| format!("{} {}", u.next_uuid().unwrap(), l.next_ulid().unwrap()));
    // The parent's next IDs come from the same states the child used.
    let (pu, pl) = (u.next_uuid().unwrap(), l.next_ulid().unwrap());
    let text = finish(pid, pipe);
    let mut parts = text.split(' ');
    let cu: u128 = parts.next().unwrap().parse().unwrap();
    let cl: u128 = parts.next().unwrap().parse().unwrap();
    // The same state: the same millisecond and sub-millisecond bits (the counter's start in a
    // tick is random, so rand_b is compared only as a whole).
    let mask = (1u128 << 62) - 1;
    assert_eq!(
        cu & !mask,
        pu & !mask,
        "same state: same time and sub-ms bits"
    );
    assert_ne!(cu, pu, "the child's random bits are its own");
    assert_eq!(cl >> 80, pl >> 80);
    assert_ne!(cl, pl, "the child's ULID base is its own");
}
