//! A mutex that a `fork()` cannot leave locked.
//!
//! A thread that holds an ordinary mutex when another thread forks does not exist in the child,
//! so the child's copy stays locked forever and the next `lock()` hangs. A [`ForkLock`] records
//! the fork generation of its holder: in a child (a later generation) a lock held by an older
//! generation belongs to a thread of the parent and is taken over. What it guards must then be
//! safe to find half-updated, which is true of everything the core keeps behind one (a lease
//! session the child abandons anyway, the node-id table whose entries carry their generation).

use crate::fork::current_fork_generation;
use std::cell::UnsafeCell;
use std::ops::{Deref, DerefMut};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// A mutex whose lock, inherited held across `fork()`, is free in the child.
pub(crate) struct ForkLock<T> {
    /// 0 when free, else the holder's fork generation + 1.
    owner: AtomicU64,
    data: UnsafeCell<T>,
}

// SAFETY: access to `data` is serialised by `owner` (one holder at a time per process).
unsafe impl<T: Send> Sync for ForkLock<T> {}
// SAFETY: moving the lock moves the data; no thread holds a guard while it moves.
unsafe impl<T: Send> Send for ForkLock<T> {}

impl<T> ForkLock<T> {
    pub(crate) const fn new(value: T) -> ForkLock<T> {
        ForkLock {
            owner: AtomicU64::new(0),
            data: UnsafeCell::new(value),
        }
    }

    /// Lock, waiting (spin, then yield, then short sleeps) while a live thread holds it.
    pub(crate) fn lock(&self) -> ForkGuard<'_, T> {
        let me = current_fork_generation() + 1;
        let mut round = 0u32;
        loop {
            let cur = self.owner.load(Ordering::Acquire);
            // Free, or held by a thread of an ancestor process, which does not exist here.
            if (cur == 0 || cur < me)
                && self
                    .owner
                    .compare_exchange(cur, me, Ordering::Acquire, Ordering::Relaxed)
                    .is_ok()
            {
                return ForkGuard { lock: self };
            }
            round += 1;
            if round < 64 {
                std::hint::spin_loop();
            } else if round < 256 {
                std::thread::yield_now();
            } else {
                std::thread::sleep(Duration::from_micros(50));
            }
        }
    }
}

/// Holds a [`ForkLock`]; unlocks on drop.
pub(crate) struct ForkGuard<'a, T> {
    lock: &'a ForkLock<T>,
}

impl<T> Deref for ForkGuard<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        // SAFETY: this guard is the only holder.
        unsafe { &*self.lock.data.get() }
    }
}

impl<T> DerefMut for ForkGuard<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: this guard is the only holder.
        unsafe { &mut *self.lock.data.get() }
    }
}

impl<T> Drop for ForkGuard<'_, T> {
    fn drop(&mut self) {
        self.lock.owner.store(0, Ordering::Release);
    }
}

impl<T> std::fmt::Debug for ForkLock<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ForkLock { .. }")
    }
}
