//! A node id's mark on the host: one fixed-size text record (512 bytes, one `pwrite` at offset
//! 0, `fdatasync`ed before the mark is used), in the state directory under the name
//! `node-<T>-<N>-<S>-<NNNN>` (and `-<scope>` when a scope is set):
//!
//! ```text
//! polyflake-node v1
//! node=37
//! layout=41/10/12
//! scope=
//! epoch_ms=1704067200000
//! holder=4242/9f3c2a1b5e6d7c8a
//! high_water_ms=1737747363021
//! last_state=-1
//! sum=...
//! ```
//!
//! `high_water_ms` is R in the holder's epoch: what it may issue up to. `last_state` is the state
//! word (`elapsed << seq_bits | seq`) of the last ID of a holder that closed cleanly, -1 while a
//! holder lives (a crash leaves R to go by). Both are kept as the ID's own bits (elapsed ms and
//! sequence) so a successor with another epoch still starts above them: two epochs share the
//! IDs' bits whenever their elapsed times meet.
//!
//! Parsing is total and strict, as for slot records: a record is complete and exactly as a
//! holder writes it, or it is not, and the taker assumes the worst.

use crate::layout::Layout;

const HEADER: &str = "polyflake-node v1";
/// The length of a mark record (the same as a slot record's).
pub(crate) const MARK_LEN: usize = super::super::record::RECORD_LEN;

/// What a mark names: the node id, its layout and scope.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct MarkKey {
    pub node_id: u32,
    pub layout: Layout,
    pub scope: String,
}

impl MarkKey {
    /// The mark's file name: `node-41-10-12-0037`, `node-41-10-12-0037-billing`.
    pub(crate) fn file_name(&self) -> String {
        let l = self.layout;
        let mut name = format!(
            "node-{}-{}-{}-{}",
            l.timestamp_bits(),
            l.node_bits(),
            l.sequence_bits(),
            super::super::record::slot_name(self.node_id)
        );
        if !self.scope.is_empty() {
            name.push('-');
            name.push_str(&self.scope);
        }
        name
    }
}

/// A mark as written by a holder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Mark {
    /// The holder's epoch, Unix ms.
    pub epoch_ms: i64,
    /// The holder's token, `pid/nonce`.
    pub holder: String,
    /// R, Unix ms in the holder's epoch.
    pub high_water_ms: i64,
    /// The state word of the last ID of a clean close; -1 while held (or after a crash).
    pub last_state: i64,
}

impl Mark {
    /// R as elapsed ms: the ID bits a successor must start above.
    pub(crate) fn high_water_elapsed(&self) -> i64 {
        self.high_water_ms.saturating_sub(self.epoch_ms)
    }
}

/// A mark file's content, read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum MarkRecord {
    /// No bytes: a file made but never written (its maker issued nothing: R is written before
    /// any ID), or emptied by someone.
    Empty,
    /// A whole, checked record.
    Complete(Mark),
    /// Anything else, with why.
    Incomplete(String),
}

fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// The record a holder writes.
pub(crate) fn render(key: &MarkKey, mark: &Mark) -> Vec<u8> {
    let mut text = format!(
        "{HEADER}\nnode={}\nlayout={}\nscope={}\nepoch_ms={}\nholder={}\nhigh_water_ms={}\nlast_state={}\n",
        key.node_id,
        key.layout,
        key.scope,
        mark.epoch_ms,
        mark.holder,
        mark.high_water_ms,
        mark.last_state
    );
    let sum = fnv1a(text.as_bytes());
    text.push_str(&format!("sum={sum:016x}\n"));
    // Padded to a fixed size: a rewrite replaces the whole record with no truncate, and the
    // padding line marks the end, so a truncated record is never read as complete.
    while text.len() < MARK_LEN - 1 {
        text.push(' ');
    }
    text.push('\n');
    text.into_bytes()
}

/// Read a mark file's bytes; `key` is what its name says it holds.
pub(crate) fn parse(bytes: &[u8], key: &MarkKey) -> MarkRecord {
    if bytes.is_empty() {
        return MarkRecord::Empty;
    }
    let bad = |why: &str| MarkRecord::Incomplete(why.to_string());
    let Ok(text) = std::str::from_utf8(bytes) else {
        return bad("not UTF-8");
    };
    let mut fields = std::collections::HashMap::new();
    for line in text.split('\n').skip(1) {
        if let Some((k, v)) = line.split_once('=') {
            if fields.insert(k, v).is_some() {
                return bad("a duplicated key");
            }
        }
    }
    let num = |k: &str| {
        fields
            .get(k)
            .and_then(|v| super::super::record::parse_ms(v))
    };
    let (Some(epoch_ms), Some(high_water_ms)) = (num("epoch_ms"), num("high_water_ms")) else {
        return bad("no epoch_ms or high_water_ms that is a number of ms");
    };
    let last_state = match fields.get("last_state") {
        Some(&"-1") => -1,
        Some(v) => match super::super::record::parse_ms(v) {
            Some(n) => n,
            None => return bad("a last_state that is not -1 or a number"),
        },
        None => return bad("no last_state"),
    };
    let Some(holder) = fields.get("holder").filter(|h| !h.is_empty()) else {
        return bad("no holder");
    };
    let mark = Mark {
        epoch_ms,
        holder: holder.to_string(),
        high_water_ms,
        last_state,
    };
    // Only a record exactly as a holder writes it, for exactly this key (a file copied or
    // renamed from another node id, layout or scope is not this one's), with its checksum.
    if render(key, &mark) != bytes {
        return bad("not exactly as a holder of this node id, layout and scope writes it");
    }
    MarkRecord::Complete(mark)
}

/// Where a successor starts: the clock must be above `floor` (elapsed ms, -1: anywhere) and the
/// state word continues after `start` (-1: nothing to continue).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Succession {
    pub floor: i64,
    pub start: i64,
}

/// What a complete mark leaves its successor (in ID bits, whatever either epoch is): after a
/// clean close, the last ID's state word to continue after (so even the same millisecond goes
/// on at the next sequence), and R as the floor unless R is that very millisecond; after a crash,
/// R (the holder never issued past it).
///
/// ```text
/// crash at R = 1000 elapsed:          floor 1000, start -1   (wait until the clock passes 1000)
/// clean close, last ID at 995 seq 7:  R = 995 -> floor 994, start (995 << s | 7)
/// clean close with nothing issued but a guard of 1000: R = 1000 -> floor 1000
/// ```
pub(crate) fn succession(mark: &Mark, seq_bits: u32) -> Succession {
    let r = mark.high_water_elapsed();
    if mark.last_state >= 0 {
        let last_ms = mark.last_state >> seq_bits;
        let floor = if r <= last_ms { last_ms - 1 } else { r };
        Succession {
            floor,
            start: mark.last_state,
        }
    } else {
        Succession {
            floor: r,
            start: -1,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key() -> MarkKey {
        MarkKey {
            node_id: 37,
            layout: Layout::DEFAULT,
            scope: String::new(),
        }
    }

    fn mark(r: i64, last: i64) -> Mark {
        Mark {
            epoch_ms: 1_704_067_200_000,
            holder: "4242/9f3c2a1b5e6d7c8a".into(),
            high_water_ms: r,
            last_state: last,
        }
    }

    #[test]
    fn a_mark_reads_back_only_for_its_own_key() {
        let m = mark(1_737_747_363_021, -1);
        let bytes = render(&key(), &m);
        assert_eq!(bytes.len(), MARK_LEN);
        assert_eq!(parse(&bytes, &key()), MarkRecord::Complete(m.clone()));
        let other = MarkKey {
            node_id: 38,
            ..key()
        };
        assert!(matches!(parse(&bytes, &other), MarkRecord::Incomplete(_)));
        let scoped = MarkKey {
            scope: "billing".into(),
            ..key()
        };
        assert!(matches!(parse(&bytes, &scoped), MarkRecord::Incomplete(_)));
        assert_eq!(scoped.file_name(), "node-41-10-12-0037-billing");
        assert_eq!(parse(b"", &key()), MarkRecord::Empty);
    }

    #[test]
    fn every_damaged_mark_is_incomplete() {
        let bytes = render(&key(), &mark(1_737_747_363_021, 77));
        for cut in [1, 40, 200, MARK_LEN - 1] {
            assert!(
                matches!(parse(&bytes[..cut], &key()), MarkRecord::Incomplete(_)),
                "{cut}"
            );
        }
        let text = String::from_utf8(bytes.clone()).unwrap();
        for (from, to) in [
            ("high_water_ms=1737747363021", "high_water_ms=1737747363029"),
            ("last_state=77", "last_state=-77"),
            ("last_state=77", "last_state=077"),
            ("holder=4242", "holder=4243"),
            ("epoch_ms=1704067200000", "epoch_ms=+1704067200000"),
        ] {
            let forged = text.replacen(from, to, 1);
            assert!(
                matches!(parse(forged.as_bytes(), &key()), MarkRecord::Incomplete(_)),
                "{to}"
            );
        }
    }

    #[test]
    fn a_successor_starts_above_everything_in_id_bits() {
        let s = 12;
        // A crash: R is the floor.
        let crashed = mark(1_704_067_201_000, -1);
        assert_eq!(
            succession(&crashed, s),
            Succession {
                floor: 1000,
                start: -1
            }
        );
        // A clean close at 995 seq 7: continue in 995.
        let last = (995 << s) | 7;
        let clean = mark(1_704_067_200_995, last);
        assert_eq!(
            succession(&clean, s),
            Succession {
                floor: 994,
                start: last
            }
        );
        // A clean close that issued nothing but kept its own guard of 1000.
        let guarded = mark(1_704_067_201_000, (995 << s) | 7);
        assert_eq!(succession(&guarded, s).floor, 1000);
        // Another epoch, one second later: the same bits, so the same floor in elapsed ms.
        let later_epoch = Mark {
            epoch_ms: 1_704_067_201_000,
            high_water_ms: 1_704_067_202_000,
            ..crashed
        };
        assert_eq!(succession(&later_epoch, s).floor, 1000);
    }
}
