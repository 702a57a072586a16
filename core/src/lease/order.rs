//! The order slots are tried in, at a cost in proportion to what the store holds.
//!
//! A store is surveyed (slot files, keys, znodes): each slot present gets a rank from its
//! guard. A slot number with nothing in the store is a NEW slot: no record, so a taker waits a
//! full reserve; every absent number ranks the same. So the order is the present slots, sorted
//! by rank, with the absent numbers (in increasing order) merged in where a new slot's rank
//! falls. The merge is lazy: a layout with 2^32 node ids costs no more than one with 16, and
//! the first absent numbers are produced only as they are tried.
//!
//! ## Decisions
//!
//! - **The order**: free slots whose R has passed (this identity's own first), then this
//!   identity's own slot, then the rest by nearest guard. A slot whose guard exceeds
//!   `max_guard_wait_ms` (default 60 s: its previous holder issued that far in the future, after a
//!   clock stepped ahead) is taken only when nothing else is free, and health then says why
//!   (`LeaseHealth::guard_note`, the `restart_guard` reason). A record whose R lies past the
//!   layout's window leaves that slot unused (never wrapped); the other slots are used.
//! - **Cost in proportion to what exists**, never `slots` entries walked or allocated: the lazy
//!   merge gives exactly the documented order (a unit test compares it with the full walk), and a
//!   30/32/1 lease with the default slots costs what a 16-slot one does. When a new slot file
//!   cannot be created (EACCES at an absent name: the directory is not writable by this user),
//!   absent numbers are no longer tried and the refusal says why (it once ended in `NoFreeSlot`
//!   after trying every number).

/// How a slot looked when surveyed, for choosing which to try first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Rank {
    /// The record's R has passed and it names this identity.
    OursPassed,
    /// R has passed.
    Passed,
    /// This identity's slot, with a guard of this many ms within `max_guard_wait_ms`.
    OursWait(i64),
    /// A guard of this many ms, within `max_guard_wait_ms`.
    Wait(i64),
    /// A guard past `max_guard_wait_ms`: taken only when nothing else is free.
    Poisoned(i64),
}

fn rank(wait: Option<i64>, ours: bool, max_guard_wait_ms: i64) -> Rank {
    match wait {
        None | Some(i64::MIN..=0) if ours => Rank::OursPassed,
        None | Some(i64::MIN..=0) => Rank::Passed,
        Some(w) if w <= max_guard_wait_ms && ours => Rank::OursWait(w),
        Some(w) if w <= max_guard_wait_ms => Rank::Wait(w),
        Some(w) => Rank::Poisoned(w),
    }
}

/// The slots to try, in order: an iterator that yields the present slots by rank and the absent
/// numbers (new slots) where their rank falls, each at most once.
pub(crate) struct SlotOrder {
    ranked: std::iter::Peekable<std::vec::IntoIter<(Rank, u32)>>,
    /// Every number present in the store (sorted, no repeats): never produced as absent.
    present: Vec<u32>,
    /// Index into `present` of the first number not below `next_new`.
    skip: usize,
    /// The next absent number to consider (maybe present: `absent` moves past those).
    next_new: u64,
    slots: u64,
    new_rank: Rank,
    /// False once the caller has said new slots cannot be made (`no_new_slots`).
    new_allowed: bool,
}

impl SlotOrder {
    /// The next absent number, without consuming it.
    fn absent(&mut self) -> Option<u32> {
        if !self.new_allowed {
            return None;
        }
        while let Some(&p) = self.present.get(self.skip) {
            match u64::from(p).cmp(&self.next_new) {
                std::cmp::Ordering::Less => self.skip += 1,
                std::cmp::Ordering::Equal => {
                    self.skip += 1;
                    self.next_new += 1;
                }
                std::cmp::Ordering::Greater => break,
            }
        }
        (self.next_new < self.slots).then_some(self.next_new as u32)
    }

    /// Produce no more absent numbers (a new slot cannot be made in this store: the rest of
    /// the present slots are still produced).
    pub(crate) fn no_new_slots(&mut self) {
        self.new_allowed = false;
    }
}

impl Iterator for SlotOrder {
    type Item = u32;

    fn next(&mut self) -> Option<u32> {
        let absent = self.absent();
        let take_absent = match (self.ranked.peek(), absent) {
            (Some(&(r, s)), Some(a)) => (self.new_rank, a) < (r, s),
            (None, Some(_)) => true,
            (_, None) => false,
        };
        if take_absent {
            self.next_new += 1;
            absent
        } else {
            self.ranked.next().map(|(_, slot)| slot)
        }
    }
}

/// A present slot worth trying, as surveyed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Surveyed {
    pub slot: u32,
    /// How long its guard still waits, in ms from now (`None`, or not above 0: it has passed).
    pub wait_ms: Option<i64>,
    /// The slot was this identity's.
    pub ours: bool,
}

/// The order to try slots in: free slots whose R has passed (this identity's first), then this
/// identity's own slot, then the nearest guard, and slots whose guard exceeds
/// `max_guard_wait_ms` last. `survey` holds the present slots worth trying; `present` every
/// number the store has something at (tried or not: a slot left out of `survey` is skipped,
/// never taken as new). Every other number below `slots` is a new slot, guarded for
/// `new_wait_ms` (a full reserve).
pub(crate) fn slot_order(
    survey: impl IntoIterator<Item = Surveyed>,
    mut present: Vec<u32>,
    slots: u32,
    new_wait_ms: i64,
    max_guard_wait_ms: i64,
) -> SlotOrder {
    let mut ranked: Vec<(Rank, u32)> = survey
        .into_iter()
        .filter(|s| s.slot < slots)
        .map(|s| (rank(s.wait_ms, s.ours, max_guard_wait_ms), s.slot))
        .collect();
    ranked.sort();
    present.extend(ranked.iter().map(|(_, slot)| *slot));
    present.sort_unstable();
    present.dedup();
    SlotOrder {
        ranked: ranked.into_iter().peekable(),
        present,
        skip: 0,
        next_new: 0,
        slots: u64::from(slots),
        new_rank: rank(Some(new_wait_ms), false, max_guard_wait_ms),
        new_allowed: true,
    }
}

/// The restart guard a stored mark implies: its R when the store holds a readable one, else a
/// full reserve past `unknown_from_ms` (now, or a slot file's later modification time: a holder
/// we cannot see may have reached that far). `None` when R lies past the layout's window: the
/// slot is left unused.
// Modelled in verify/model/remote.pml: RGUARD, and verify/model/file.pml: inline file_take (the record's R, or
// max(mtime, now) + reserve) (make model).
pub(crate) fn guard_of(
    mark: Option<i64>,
    unknown_from_ms: i64,
    reserve_ms: i64,
    window_end_ms: i64,
) -> Option<i64> {
    match mark {
        Some(r) => (r <= window_end_ms).then_some(r),
        None => Some(unknown_from_ms.saturating_add(reserve_ms)),
    }
}

/// The note health shows when a slot was taken with a guard past `max_guard_wait_ms`.
pub(crate) fn guard_note(
    slot: u32,
    guard_until_ms: i64,
    now_ms: i64,
    max_guard_wait_ms: i64,
) -> String {
    let wait = guard_until_ms.saturating_sub(now_ms);
    if wait > max_guard_wait_ms {
        format!(
            "slot {slot} was taken with a restart guard of {wait} ms, over max_guard_wait_ms = {max_guard_wait_ms}, because no slot with a shorter guard was free (its previous holder issued IDs that far in the future: a clock stepped ahead)"
        )
    } else {
        String::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn surveyed(survey: &[(u32, Option<i64>, bool)]) -> Vec<Surveyed> {
        survey
            .iter()
            .map(|&(slot, wait_ms, ours)| Surveyed {
                slot,
                wait_ms,
                ours,
            })
            .collect()
    }

    /// The order as it was computed before absent numbers were merged lazily: every number
    /// below `slots` ranked, absent ones as new slots.
    fn reference(
        survey: &[(u32, Option<i64>, bool)],
        skipped: &[u32],
        slots: u32,
        new_wait: i64,
        max: i64,
    ) -> Vec<u32> {
        let mut ranked: Vec<(Rank, u32)> = (0..slots)
            .filter(|n| !skipped.contains(n))
            .map(|n| match survey.iter().find(|(s, _, _)| *s == n) {
                Some(&(_, wait, ours)) => (rank(wait, ours, max), n),
                None => (rank(Some(new_wait), false, max), n),
            })
            .collect();
        ranked.sort();
        ranked.into_iter().map(|(_, n)| n).collect()
    }

    #[test]
    fn passed_slots_come_first_then_the_nearest_guard_then_poisoned_ones() {
        let order: Vec<u32> = slot_order(
            surveyed(&[
                (0, Some(31_536_000_000), false),
                (1, Some(4_000), false),
                (2, None, false),
                (3, Some(-5), true),
                (4, Some(200), false),
                (5, Some(-1), false),
                (6, Some(3_000), true),
            ]),
            Vec::new(),
            7,
            4_000,
            60_000,
        )
        .collect();
        assert_eq!(order, [3, 2, 5, 6, 4, 1, 0]);
    }

    #[test]
    fn absent_numbers_rank_as_new_slots_exactly_as_a_full_walk_would() {
        let survey = [
            (1, Some(31_536_000_000), false),
            (3, Some(4_000), false),
            (4, Some(3_999), false),
            (6, Some(4_001), true),
            (7, None, false),
            (9, Some(4_000), true),
            (12, Some(70_000), false),
        ];
        let skipped = [2, 10];
        for slots in [1, 5, 8, 13, 20] {
            for new_wait in [10, 3_999, 4_000, 4_001, 90_000] {
                let got: Vec<u32> =
                    slot_order(surveyed(&survey), skipped.to_vec(), slots, new_wait, 60_000)
                        .collect();
                assert_eq!(
                    got,
                    reference(&survey, &skipped, slots, new_wait, 60_000),
                    "slots {slots}, new wait {new_wait}"
                );
            }
        }
    }

    #[test]
    fn four_billion_slots_cost_nothing_until_tried() {
        let mut order = slot_order(
            surveyed(&[(0, Some(100), false)]),
            vec![1],
            u32::MAX,
            1_000,
            60_000,
        );
        assert_eq!(order.next(), Some(0));
        assert_eq!(order.next(), Some(2));
        assert_eq!(order.next(), Some(3));
        order.no_new_slots();
        assert_eq!(order.next(), None);
    }
}
