//! Process-wide rules: one live system-clock generator per (node id, epoch, layout), and the fork
//! generation that makes a generator created before `fork()` refuse in the child.

use crate::error::{Error, Result};
use crate::layout::Layout;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, Once};

/// Bumped in every child process by a `pthread_atfork` handler. A generator remembers the value it
/// was made under; a different value means "this is a forked child".
static FORK_GENERATION: AtomicU64 = AtomicU64::new(0);
static REGISTER_ATFORK: Once = Once::new();

extern "C" fn on_fork_child() {
    // Only an atomic increment: the child of a multi-threaded parent may run nothing that locks.
    FORK_GENERATION.fetch_add(1, Ordering::SeqCst);
}

/// The current fork generation, registering the child handler on first use.
pub(crate) fn fork_generation() -> u64 {
    REGISTER_ATFORK.call_once(|| {
        // SAFETY: registering a handler that only touches an atomic is async-signal-safe.
        unsafe { libc::pthread_atfork(None, None, Some(on_fork_child)) };
    });
    FORK_GENERATION.load(Ordering::SeqCst)
}

/// The fork generation without registering anything (the hot path's check).
#[inline]
pub(crate) fn current_fork_generation() -> u64 {
    FORK_GENERATION.load(Ordering::Relaxed)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct Key {
    node_id: u32,
    epoch_ms: i64,
    layout: Layout,
}

/// Live system-clock generators: key -> fork generation they were made under. An entry from an
/// older generation belongs to the parent process and does not block the child.
static LIVE: Mutex<Option<HashMap<Key, u64>>> = Mutex::new(None);

/// A claim on (node id, epoch, layout) in this process, released on drop.
#[derive(Debug)]
pub(crate) struct Claim {
    key: Key,
    generation: u64,
}

pub(crate) fn claim(node_id: u32, epoch_ms: i64, layout: Layout, generation: u64) -> Result<Claim> {
    let key = Key {
        node_id,
        epoch_ms,
        layout,
    };
    let mut live = LIVE.lock().unwrap_or_else(|p| p.into_inner());
    let map = live.get_or_insert_with(HashMap::new);
    if map.get(&key) == Some(&generation) {
        return Err(Error::NodeIdInUse { node_id });
    }
    map.insert(key, generation);
    Ok(Claim { key, generation })
}

impl Drop for Claim {
    fn drop(&mut self) {
        let mut live = LIVE.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(map) = live.as_mut() {
            if map.get(&self.key) == Some(&self.generation) {
                map.remove(&self.key);
            }
        }
    }
}
