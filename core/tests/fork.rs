//! A generator made before `fork()` refuses in the child ("used after fork"), and keeps working in
//! the parent. Its own test binary: forking a process that runs other test threads is unsafe.

use polyflake::{ErrorKind, Generator, HealthStatus};

#[test]
fn child_refuses_parent_continues() {
    let g = Generator::strict(77).unwrap();
    let m = Generator::monotonic(78).unwrap();
    let before = g.next_id().unwrap();
    // SAFETY: the child only calls into the generator (atomics, the clock) and then `_exit`s.
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0, "fork failed");
    if pid == 0 {
        let strict_refused = matches!(g.next_id(), Err(e) if e.kind() == ErrorKind::UsedAfterFork);
        let mut buf = [0u64; 4];
        let batch_refused =
            matches!(m.next_ids(&mut buf), Err(e) if e.kind() == ErrorKind::UsedAfterFork);
        let mono_refused = matches!(m.next_id(), Err(e) if e.kind() == ErrorKind::UsedAfterFork);
        let unhealthy = g.health().status == HealthStatus::UsedAfterFork;
        // A fresh generator in the child, with the same node id, is allowed: the parent's entry
        // in the process guard belongs to another process.
        let fresh = Generator::strict(77).and_then(|f| f.next_id()).is_ok();
        let code = if strict_refused && batch_refused && mono_refused && unhealthy && fresh {
            0
        } else {
            1
        };
        unsafe { libc::_exit(code) };
    }
    let mut status = 0;
    unsafe { libc::waitpid(pid, &mut status, 0) };
    assert!(libc::WIFEXITED(status), "child did not exit normally");
    assert_eq!(
        libc::WEXITSTATUS(status),
        0,
        "child did not see UsedAfterFork everywhere"
    );
    // The parent is unaffected.
    assert!(g.next_id().unwrap() > before);
    assert!(g.health().ok);
}
