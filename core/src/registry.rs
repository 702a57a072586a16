//! Process-wide rule: one live generator per (node id, epoch, layout) unless it runs on a test
//! clock, and the last state word of each, so a successor never repeats its predecessor.

use crate::error::{Error, Result};
use crate::forklock::ForkLock;
use crate::layout::Layout;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};

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
// Modelled in model/fork.pml: inline claim (R_FORKREG: issue 25's fork-aware rule, not yet in this
// code) (make model).
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
    // Modelled in model/fork.pml: inline release (make model).
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
