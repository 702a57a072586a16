//! The event queue: a timing wheel of 1 ms slots for the next few seconds (where nearly every
//! event falls: the next request of a node is a fraction of a second away) and a heap for the
//! rest. Events pop in (time, insertion order) order, exactly as from one binary heap, at a
//! fraction of the cost.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

const SLOT_US: i64 = 1_000;
const WHEEL: i64 = 4_096;

/// An event at simulated time `t` (µs); `seq` breaks ties in insertion order.
#[derive(Debug)]
pub struct Item<E> {
    /// When, µs.
    pub t: i64,
    seq: u64,
    /// What.
    pub ev: E,
}

impl<E> PartialEq for Item<E> {
    fn eq(&self, o: &Self) -> bool {
        (self.t, self.seq) == (o.t, o.seq)
    }
}
impl<E> Eq for Item<E> {}
impl<E> PartialOrd for Item<E> {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl<E> Ord for Item<E> {
    // Reversed: BinaryHeap is a max-heap, the queue pops the earliest.
    fn cmp(&self, o: &Self) -> Ordering {
        (o.t, o.seq).cmp(&(self.t, self.seq))
    }
}

/// Events in time order.
#[derive(Debug)]
pub struct Queue<E> {
    /// The slot being processed: its events, ordered.
    cur: BinaryHeap<Item<E>>,
    /// The next WHEEL - 1 slots, unordered within a slot.
    wheel: Vec<Vec<Item<E>>>,
    in_wheel: usize,
    /// Everything further ahead.
    far: BinaryHeap<Item<E>>,
    /// The current slot (t / SLOT_US).
    base: i64,
    seq: u64,
}

impl<E> Queue<E> {
    /// An empty queue at time 0.
    pub fn new() -> Queue<E> {
        Queue {
            cur: BinaryHeap::new(),
            wheel: (0..WHEEL).map(|_| Vec::new()).collect(),
            in_wheel: 0,
            far: BinaryHeap::new(),
            base: 0,
            seq: 0,
        }
    }

    /// Add an event at `t` (not before the last one popped).
    pub fn push(&mut self, t: i64, ev: E) {
        self.seq += 1;
        let item = Item {
            t,
            seq: self.seq,
            ev,
        };
        let slot = t.div_euclid(SLOT_US);
        if slot <= self.base {
            self.cur.push(item);
        } else if slot < self.base + WHEEL {
            self.wheel[slot.rem_euclid(WHEEL) as usize].push(item);
            self.in_wheel += 1;
        } else {
            self.far.push(item);
        }
    }

    /// The earliest event, if any.
    pub fn pop(&mut self) -> Option<Item<E>> {
        loop {
            if let Some(item) = self.cur.pop() {
                return Some(item);
            }
            if self.in_wheel == 0 {
                // Nothing in the next few seconds: jump to the far heap's first slot.
                let next = self.far.peek()?.t.div_euclid(SLOT_US);
                self.base = self.base.max(next - 1);
            }
            self.base += 1;
            let horizon = self.base + WHEEL;
            while self
                .far
                .peek()
                .is_some_and(|i| i.t.div_euclid(SLOT_US) < horizon)
            {
                let item = self.far.pop().expect("peeked");
                let slot = item.t.div_euclid(SLOT_US);
                if slot <= self.base {
                    self.cur.push(item);
                } else {
                    self.wheel[slot.rem_euclid(WHEEL) as usize].push(item);
                    self.in_wheel += 1;
                }
            }
            let bucket = &mut self.wheel[self.base.rem_euclid(WHEEL) as usize];
            self.in_wheel -= bucket.len();
            self.cur.extend(bucket.drain(..));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Queue;
    use crate::rng::Rng;
    use std::collections::BinaryHeap;

    #[test]
    fn pops_in_time_then_insertion_order_like_a_heap() {
        let mut q = Queue::new();
        let mut reference = BinaryHeap::new();
        let mut r = Rng::new(11);
        let mut seq = 0u64;
        let mut now = 0i64;
        for round in 0..200_000u64 {
            if r.unit() < 0.55 {
                let gap = match r.range(0, 3) {
                    0 => 0,
                    1 => r.range(0, 2_000) as i64,
                    2 => r.range(0, 5_000_000) as i64,
                    _ => r.range(0, 3_600_000_000) as i64,
                };
                seq += 1;
                q.push(now + gap, round);
                reference.push(std::cmp::Reverse((now + gap, seq, round)));
            } else {
                let a = q.pop().map(|i| (i.t, i.ev));
                let b = reference.pop().map(|std::cmp::Reverse((t, _, e))| (t, e));
                assert_eq!(a, b);
                if let Some((t, _)) = a {
                    now = t;
                }
            }
        }
    }
}
