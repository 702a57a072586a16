//! Process-wide rules: one live generator per (node id, epoch, layout) unless it runs on a test
//! clock, the fork generation that makes a generator created before `fork()` refuse in the child,
//! and the lease descriptors a forked child must let go of.

use crate::error::{Error, Result};
use crate::forklock::ForkLock;
use crate::layout::Layout;
use std::collections::HashMap;
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

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct Key {
    node_id: u32,
    epoch_ms: i64,
    layout: Layout,
}

#[derive(Debug)]
struct Entry {
    /// The fork generation of the live holder (meaningless when not live).
    generation: u64,
    live: bool,
    /// The state word (`elapsed << seq_bits | seq`) of the last ID any generator of this key
    /// issued in this process: a successor continues after it, so dropping a generator and
    /// making a new one within the same millisecond cannot repeat its IDs.
    last_state: i64,
}

/// Node ids in use in this process (and the last state of the ones that were).
static LIVE: ForkLock<Option<HashMap<Key, Entry>>> = ForkLock::new(None);

/// A claim on (node id, epoch, layout) in this process, released on drop.
#[derive(Debug)]
pub(crate) struct Claim {
    key: Key,
    generation: u64,
    released: AtomicU64,
}

/// Claim the node id. Returns the claim and the state word a new generator must start from
/// (-1 when this process never issued from the key).
pub(crate) fn claim(
    node_id: u32,
    epoch_ms: i64,
    layout: Layout,
    generation: u64,
) -> Result<(Claim, i64)> {
    let key = Key {
        node_id,
        epoch_ms,
        layout,
    };
    let mut live = LIVE.lock();
    let map = live.get_or_insert_with(HashMap::new);
    let entry = map.entry(key).or_insert(Entry {
        generation,
        live: false,
        last_state: -1,
    });
    if entry.live && entry.generation == generation {
        return Err(Error::NodeIdInUse { node_id });
    }
    entry.live = true;
    entry.generation = generation;
    Ok((
        Claim {
            key,
            generation,
            released: AtomicU64::new(0),
        },
        entry.last_state,
    ))
}

impl Claim {
    /// Give the node id back, recording the state of the last ID issued under it.
    pub(crate) fn release(&self, last_state: i64) {
        if self.released.swap(1, Ordering::SeqCst) != 0 {
            return;
        }
        let mut live = LIVE.lock();
        if let Some(entry) = live.as_mut().and_then(|m| m.get_mut(&self.key)) {
            entry.last_state = entry.last_state.max(last_state);
            if entry.generation == self.generation {
                entry.live = false;
            }
        }
    }
}

impl Drop for Claim {
    fn drop(&mut self) {
        self.release(-1);
    }
}
