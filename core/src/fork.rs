//! `fork()`: the generation counter that makes a generator created before `fork()` refuse in
//! the child (or re-lease), and the lease descriptors a forked child lets go of at once.
//!
//! ## Decisions
//!
//! - **The handlers do the least a child needs.** A `pthread_atfork` child handler bumps the
//!   generation and closes the child's copies of every lease descriptor (slot files, the lease
//!   directory), after checking with `fstat` that each number still names the registered file
//!   (device and inode): fstat and close are async-signal-safe, and nothing else runs there. The
//!   prepare handler waits for any thread between opening a lease file and registering it. So a
//!   forked child (a `multiprocessing` worker that never touches the generator) never keeps the
//!   parent's `flock` alive, and the parent's close or crash frees the slot at once; the parent's
//!   close also unlocks explicitly (`LOCK_UN`), which frees the slot even from a child of a
//!   `fork` that bypassed the handlers.
//! - **A generator of an older generation refuses** with `UsedAfterFork` (or re-leases, with a
//!   lease: `lease/runtime.rs`). Its entry in the process table no longer blocks the child; the
//!   parent's host-wide claim does (`registry.rs`), so a child cannot take its parent's node id
//!   while the parent lives.
//! - **Never a descriptor by number alone.** Every lease descriptor is an owned `File`; a child
//!   lets go of the parent's session by forgetting it (the handler already closed its checked
//!   copies), never by closing a stored number, which after `closerange` and a re-open may name
//!   the child's own slot file or log.
//! - **No lock a fork can leave held**: the core's locks around lease sessions, the node-id table
//!   and the window's writers are `ForkLock`s (`forklock.rs`); the hot path takes no lock at all.

use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::Once;

/// Bumped in every child process by a `pthread_atfork` handler. A generator remembers the value it
/// was made under; a different value means "this is a forked child".
static FORK_GENERATION: AtomicU64 = AtomicU64::new(0);
static REGISTER_ATFORK: Once = Once::new();

/// The descriptors of held lease slots (and their directories), so that a forked child closes
/// its inherited copies at once: otherwise a child that never touches the generator (a
/// `multiprocessing` worker) keeps the parent's `flock` alive for its whole life.
const FD_TABLE: usize = 256;
struct LeaseFd {
    /// -1: empty; -2: being written; otherwise the descriptor.
    fd: AtomicI64,
    dev: AtomicU64,
    ino: AtomicU64,
}
#[allow(clippy::declare_interior_mutable_const)]
const EMPTY_FD: LeaseFd = LeaseFd {
    fd: AtomicI64::new(-1),
    dev: AtomicU64::new(0),
    ino: AtomicU64::new(0),
};
static LEASE_FDS: [LeaseFd; FD_TABLE] = [EMPTY_FD; FD_TABLE];

/// Sections that open and register a lease descriptor run inside this gate; `fork()` waits for
/// them (the prepare handler) so a child never inherits a descriptor that is not yet registered.
/// Bit 63: a fork is in progress; the rest: sections inside.
static GATE: AtomicU64 = AtomicU64::new(0);
const FORKING: u64 = 1 << 63;

extern "C" fn on_fork_prepare() {
    GATE.fetch_or(FORKING, Ordering::SeqCst);
    while GATE.load(Ordering::SeqCst) & !FORKING != 0 {
        std::thread::yield_now();
    }
}

extern "C" fn on_fork_parent() {
    GATE.fetch_and(!FORKING, Ordering::SeqCst);
}

// Modelled in verify/model/file.pml: Holder, the fork step (R_FSTAT); verify/model/fork.pml: the fork step (make
// model).
extern "C" fn on_fork_child() {
    // Only async-signal-safe work: the child of a multi-threaded parent may not take locks.
    FORK_GENERATION.fetch_add(1, Ordering::SeqCst);
    for entry in &LEASE_FDS {
        let fd = entry.fd.load(Ordering::SeqCst);
        if fd < 0 {
            continue;
        }
        let fd = fd as i32;
        // Close only what is still the registered file: never a number alone.
        // SAFETY: fstat into a zeroed stat buffer; close of a descriptor this process has.
        unsafe {
            let mut st: libc::stat = std::mem::zeroed();
            if libc::fstat(fd, &mut st) == 0
                && st.st_dev == entry.dev.load(Ordering::SeqCst)
                && st.st_ino == entry.ino.load(Ordering::SeqCst)
            {
                libc::close(fd);
            }
        }
        entry.fd.store(-1, Ordering::SeqCst);
    }
    GATE.store(0, Ordering::SeqCst);
}

/// The current fork generation, registering the fork handlers on first use.
pub(crate) fn fork_generation() -> u64 {
    REGISTER_ATFORK.call_once(|| {
        // SAFETY: the handlers touch only atomics, fstat and close (async-signal-safe).
        unsafe {
            libc::pthread_atfork(
                Some(on_fork_prepare),
                Some(on_fork_parent),
                Some(on_fork_child),
            )
        };
    });
    FORK_GENERATION.load(Ordering::SeqCst)
}

/// The fork generation without registering anything (the hot path's check).
#[inline]
pub(crate) fn current_fork_generation() -> u64 {
    FORK_GENERATION.load(Ordering::Relaxed)
}

/// Run `f` (which opens a lease descriptor and registers it) so that no `fork()` can happen in
/// between.
pub(crate) fn without_fork<R>(f: impl FnOnce() -> R) -> R {
    fork_generation();
    loop {
        let g = GATE.load(Ordering::SeqCst);
        if g & FORKING != 0 {
            std::thread::yield_now();
            continue;
        }
        if GATE
            .compare_exchange(g, g + 1, Ordering::SeqCst, Ordering::SeqCst)
            .is_ok()
        {
            break;
        }
    }
    struct Leave;
    impl Drop for Leave {
        fn drop(&mut self) {
            GATE.fetch_sub(1, Ordering::SeqCst);
        }
    }
    let _leave = Leave;
    f()
}

/// A lease descriptor known to the fork handler; forgotten on drop.
#[derive(Debug)]
pub(crate) struct RegisteredFd {
    index: Option<usize>,
}

/// Register `fd` (with the device and inode it refers to) for closing in forked children.
/// With the table full, the descriptor is simply not registered (a child then keeps it open
/// until it exits: capacity, never uniqueness).
pub(crate) fn register_fd(fd: i32, dev: u64, ino: u64) -> RegisteredFd {
    for (i, entry) in LEASE_FDS.iter().enumerate() {
        if entry
            .fd
            .compare_exchange(-1, -2, Ordering::SeqCst, Ordering::SeqCst)
            .is_ok()
        {
            entry.dev.store(dev, Ordering::SeqCst);
            entry.ino.store(ino, Ordering::SeqCst);
            entry.fd.store(i64::from(fd), Ordering::SeqCst);
            return RegisteredFd { index: Some(i) };
        }
    }
    RegisteredFd { index: None }
}

impl Drop for RegisteredFd {
    fn drop(&mut self) {
        if let Some(i) = self.index {
            LEASE_FDS[i].fd.store(-1, Ordering::SeqCst);
        }
    }
}
