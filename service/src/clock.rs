//! The service's test clock (`serve --test-clock`, hidden and off by default): the system clock
//! plus an offset that `POST /v1/admin/clock` moves, so a test can put the running service's
//! clock behind the IDs it already issued (a rewind larger than `max_wait_ms`) and back.
//!
//! It follows real time (unlike a `ManualClock`, which stands still and would make a strict
//! generator refuse once a millisecond's sequence is spent), so the service behaves normally
//! between shifts.

use polyflake::{Clock, ClockError, SystemClock};
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// The system clock shifted by an adjustable offset. Clones share the offset.
#[derive(Debug, Clone, Default)]
pub struct OffsetClock {
    offset_ms: Arc<AtomicI64>,
}

impl OffsetClock {
    /// The current offset in milliseconds.
    pub fn offset_ms(&self) -> i64 {
        self.offset_ms.load(Ordering::SeqCst)
    }

    /// Set the offset in milliseconds (0 restores the system clock).
    pub fn set_offset_ms(&self, offset_ms: i64) {
        self.offset_ms.store(offset_ms, Ordering::SeqCst);
    }
}

impl Clock for OffsetClock {
    fn now_ms(&self) -> Result<i64, ClockError> {
        SystemClock::read_ms()
            .checked_add(self.offset_ms())
            .ok_or_else(|| ClockError("test clock offset overflows".into()))
    }

    fn until_next_ms(&self) -> Duration {
        // The offset is whole milliseconds, so millisecond boundaries are the system clock's.
        SystemClock.until_next_ms()
    }

    /// A test clock: like the core's own test clocks, exempt from the rule that a static node
    /// id is held once per host (a `--test-clock` service beside a real one on the same node
    /// id is a test's business; the IDs of a shifted clock are test IDs).
    fn is_test_clock(&self) -> bool {
        true
    }
}
