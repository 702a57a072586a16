//! The lease stores' record readers and writers, for `verify/fuzz/` only (cargo feature `fuzzing`,
//! hidden from the docs, not a stable API): the same functions the leases call, unchanged.
//! Nothing else enables the feature, so the public API and the bindings do not change.

pub use super::record::IdSpace;
use super::record::{self, SlotRecord};

/// A slot file's content as [`read_slot`] reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Slot {
    /// No bytes at all.
    Empty,
    /// A whole, checked record.
    Complete {
        /// The identity of the holder that wrote it.
        owner: String,
        /// That holder's token (`pid/nonce`); absent in records of older versions.
        holder: Option<String>,
        /// R, Unix ms.
        high_water_ms: i64,
    },
    /// Anything else, with why.
    Incomplete(String),
}

/// The size of a slot record the current version writes.
pub const RECORD_LEN: usize = record::RECORD_LEN;

/// Read slot file `slot`'s bytes (the file lease's parser).
pub fn read_slot(bytes: &[u8], slot: u32) -> Slot {
    match record::parse_slot(bytes, slot) {
        SlotRecord::Empty => Slot::Empty,
        SlotRecord::Complete {
            owner,
            holder,
            high_water_ms,
        } => Slot::Complete {
            owner,
            holder,
            high_water_ms,
        },
        SlotRecord::Incomplete(why) => Slot::Incomplete(why),
    }
}

/// The record a file lease's holder writes.
pub fn write_slot(slot: u32, owner: &str, holder: &str, high_water_ms: i64) -> Vec<u8> {
    record::render_slot(slot, owner, holder, high_water_ms)
}

/// The record older versions wrote (still read).
pub fn write_slot_v0(slot: u32, owner: &str, high_water_ms: i64) -> Vec<u8> {
    record::render_slot_v0(slot, owner, high_water_ms)
}

/// Read an ID-space record (every store kind).
pub fn read_space(bytes: &[u8]) -> Result<IdSpace, String> {
    record::parse_space(bytes)
}

/// The ID-space record a store is given.
pub fn write_space(space: IdSpace) -> String {
    record::render_space(space)
}

/// Read a remote store's high-water mark value.
pub fn read_mark(value: &[u8]) -> Option<i64> {
    record::parse_mark(value)
}

/// Read a remote store's `owner/{identity}` value.
pub fn read_owner_slot(value: &[u8]) -> Option<u32> {
    record::parse_owner_slot(value)
}

/// How a slot number is spelled in key, znode and file names.
pub fn slot_name(slot: u32) -> String {
    record::slot_name(slot)
}

/// Read a slot number from a name.
pub fn read_slot_name(digits: &str) -> Option<u32> {
    record::parse_slot_name(digits)
}

/// Read a remote slot's token: `(identity, pid, session)`.
pub fn read_token(value: &[u8]) -> Option<(String, u32, u64)> {
    record::parse_token(value).map(|t| (t.identity.to_string(), t.pid, t.session))
}

/// The token a remote holder writes into its slot.
pub fn write_token(identity: &str, pid: u32, session: i64) -> String {
    record::render_token(identity, pid, session)
}
