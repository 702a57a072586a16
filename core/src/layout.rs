//! The bit layout: `0 | timestamp | node | sequence`, and everything that converts between an ID
//! and its three fields.
//!
//! ## Decisions
//!
//! - **Node and sequence fields are at most 32 bits each** ([`MAX_NODE_OR_SEQUENCE_BITS`]). Node
//!   ids and sequences are 32-bit numbers everywhere (`Decoded`, `check_node_id`, the C ABI's
//!   `uint32_t`, every binding); a wider field cut them (under `28/33/2` node id 2^32 became 0
//!   and issued node 0's IDs; found by fuzzing). Fleets of more than 4 billion nodes or IDs per
//!   millisecond are not real, so such layouts are `InvalidLayout` when made, not wider types;
//!   `tests/vectors/layouts.json` lists two as invalid, so every binding checks the refusal.
//! - **`decode` never clamps.** An epoch so late that the ID's time does not fit an i64 is
//!   `InvalidArgument (epoch_ms)`, not `i64::MAX`. The bindings refuse rather than clamp what is
//!   read back (Python's `decode` epoch, a test clock's values); a value that is only judged (a
//!   generator's epoch, a callable clock's reading) may become the nearest bound, since the core
//!   refuses it anyway.
//! - **Decimal text** ([`parse_id`]) is ASCII digits only, below 2^63: no sign, no spaces, no
//!   `0x`; leading zeros are accepted (`"007"` is 7).
//! - **A decoded timestamp is Unix milliseconds**: `timestamp_ms` in Rust and C, `timestampMs`
//!   in Node (which also gives the `Date` as `time`), `epoch_ms` in Python's dict.

use crate::error::{Error, Result};
use std::fmt;
use std::str::FromStr;

/// The default epoch, 2024-01-01T00:00:00Z, in Unix milliseconds.
pub const DEFAULT_EPOCH_MS: i64 = 1_704_067_200_000;

/// The largest valid ID, 2^63 - 1: the sign bit is always 0, so every ID is a positive BIGINT.
pub const MAX_ID: u64 = (1 << 63) - 1;

/// Milliseconds in a Julian year (365.25 days), used for the `years` a layout lasts.
const MS_PER_YEAR: f64 = 365.25 * 86_400_000.0;

/// The most bits the node field or the sequence field may have: node ids and sequences are
/// 32-bit numbers in the core and in every binding (`Decoded`, the C ABI's `uint32_t`), so a
/// wider field could hold a node id or a sequence that would be cut to 32 bits (two node ids
/// issuing the same IDs). 2^32 nodes and 2^32 IDs per millisecond are far past any real fleet.
pub const MAX_NODE_OR_SEQUENCE_BITS: u32 = 32;

/// How the 63 usable bits of an ID are split between timestamp, node and sequence.
///
/// Every field has at least 1 bit, the node and sequence fields have at most
/// [`MAX_NODE_OR_SEQUENCE_BITS`] (32) each, and the three add up to 63; anything else is refused
/// when the layout is made, never later.
///
/// ```
/// use polyflake::Layout;
/// let l = Layout::DEFAULT;
/// assert_eq!((l.timestamp_bits(), l.node_bits(), l.sequence_bits()), (41, 10, 12));
/// assert_eq!(l.max_node_id(), 1023);
/// assert_eq!(l.max_sequence(), 4095);
/// assert_eq!(format!("{:.2}", l.years()), "69.68");
/// assert!(Layout::new(41, 10, 13).is_err());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Layout {
    timestamp_bits: u8,
    node_bits: u8,
    sequence_bits: u8,
}

impl Layout {
    /// The engine of the time-ordered 128-bit formats (UUIDv7, ULID): 48 bits of Unix ms, no
    /// node, 15 bits below the millisecond. Not a Snowflake layout (node bits 0): internal.
    pub(crate) const TIME_ORDERED: Layout = Layout::preset(48, 0, 15);
    /// 41/10/12: 69.68 years, 1,024 nodes, 4,096 IDs per ms per node.
    pub const DEFAULT: Layout = Layout::preset(41, 10, 12);
    /// 42/8/13: 139.37 years, 256 nodes, 8,192 IDs per ms per node.
    pub const LONG_LIVED: Layout = Layout::preset(42, 8, 13);
    /// 41/12/10: 69.68 years, 4,096 nodes, 1,024 IDs per ms per node.
    pub const BIG_FLEET: Layout = Layout::preset(41, 12, 10);
    /// 39/12/12: 17.42 years, 4,096 nodes, 4,096 IDs per ms per node.
    pub const SHORT: Layout = Layout::preset(39, 12, 12);

    /// The presets with their names, in a fixed order.
    pub const PRESETS: [(&'static str, Layout); 4] = [
        ("default", Layout::DEFAULT),
        ("long_lived", Layout::LONG_LIVED),
        ("big_fleet", Layout::BIG_FLEET),
        ("short", Layout::SHORT),
    ];

    const fn preset(t: u8, n: u8, s: u8) -> Layout {
        Layout {
            timestamp_bits: t,
            node_bits: n,
            sequence_bits: s,
        }
    }

    /// A custom layout: three fields of at least 1 bit each that add up to 63, the node and
    /// sequence fields at most [`MAX_NODE_OR_SEQUENCE_BITS`] (32) bits each.
    ///
    /// ```
    /// use polyflake::{Layout, ErrorKind};
    /// assert_eq!(Layout::new(42, 8, 13).unwrap(), Layout::LONG_LIVED);
    /// assert_eq!(Layout::new(41, 0, 22).unwrap_err().kind(), ErrorKind::InvalidLayout);
    /// assert!(Layout::new(1, 30, 32).is_ok());
    /// assert_eq!(Layout::new(1, 29, 33).unwrap_err().kind(), ErrorKind::InvalidLayout);
    /// assert_eq!(Layout::new(20, 40, 3).unwrap_err().kind(), ErrorKind::InvalidLayout);
    /// ```
    pub fn new(timestamp_bits: u32, node_bits: u32, sequence_bits: u32) -> Result<Layout> {
        let bad = Error::InvalidLayout {
            timestamp_bits,
            node_bits,
            sequence_bits,
        };
        if timestamp_bits == 0 || node_bits == 0 || sequence_bits == 0 {
            return Err(bad);
        }
        if u64::from(timestamp_bits) + u64::from(node_bits) + u64::from(sequence_bits) != 63 {
            return Err(bad);
        }
        if node_bits > MAX_NODE_OR_SEQUENCE_BITS || sequence_bits > MAX_NODE_OR_SEQUENCE_BITS {
            return Err(bad);
        }
        // Each is now in 1..=61, so the narrowing cannot lose anything.
        Ok(Layout::preset(
            timestamp_bits as u8,
            node_bits as u8,
            sequence_bits as u8,
        ))
    }

    /// A preset by name (`default`, `long_lived`, `big_fleet`, `short`) or a custom layout
    /// written `T/N/S`.
    ///
    /// ```
    /// use polyflake::Layout;
    /// assert_eq!(Layout::from_name("big_fleet").unwrap(), Layout::BIG_FLEET);
    /// assert_eq!(Layout::from_name("40/11/12").unwrap().node_bits(), 11);
    /// assert!(Layout::from_name("nope").is_err());
    /// ```
    pub fn from_name(name: &str) -> Result<Layout> {
        if let Some((_, l)) = Layout::PRESETS.iter().find(|(n, _)| *n == name) {
            return Ok(*l);
        }
        let parts: Vec<&str> = name.split('/').collect();
        if parts.len() == 3 {
            let mut bits = [0u32; 3];
            for (slot, part) in bits.iter_mut().zip(&parts) {
                if part.is_empty() || !part.bytes().all(|b| b.is_ascii_digit()) {
                    return Err(Error::UnknownLayout { name: name.into() });
                }
                *slot = part
                    .parse()
                    .map_err(|_| Error::UnknownLayout { name: name.into() })?;
            }
            return Layout::new(bits[0], bits[1], bits[2]);
        }
        Err(Error::UnknownLayout { name: name.into() })
    }

    /// The preset name of this layout, if it is one.
    pub fn preset_name(&self) -> Option<&'static str> {
        Layout::PRESETS
            .iter()
            .find(|(_, l)| l == self)
            .map(|(n, _)| *n)
    }

    /// Bits of elapsed milliseconds.
    pub const fn timestamp_bits(&self) -> u32 {
        self.timestamp_bits as u32
    }
    /// Bits of node id.
    pub const fn node_bits(&self) -> u32 {
        self.node_bits as u32
    }
    /// Bits of per-millisecond sequence.
    pub const fn sequence_bits(&self) -> u32 {
        self.sequence_bits as u32
    }
    /// The largest node id, `2^node_bits - 1`.
    pub const fn max_node_id(&self) -> u64 {
        (1 << self.node_bits) - 1
    }
    /// The largest sequence value, `2^sequence_bits - 1`.
    pub const fn max_sequence(&self) -> u64 {
        (1 << self.sequence_bits) - 1
    }
    /// IDs one node can issue in one millisecond, `2^sequence_bits`.
    pub const fn ids_per_ms(&self) -> u64 {
        1 << self.sequence_bits
    }
    /// The largest elapsed milliseconds since the epoch, `2^timestamp_bits - 1`.
    pub const fn max_elapsed_ms(&self) -> u64 {
        (1 << self.timestamp_bits) - 1
    }
    /// How many years of milliseconds the timestamp field holds (Julian years of 365.25 days).
    pub fn years(&self) -> f64 {
        (self.max_elapsed_ms() as f64 + 1.0) / MS_PER_YEAR
    }

    /// Check a node id against this layout.
    ///
    /// ```
    /// use polyflake::Layout;
    /// assert_eq!(Layout::DEFAULT.check_node_id(1023).unwrap(), 1023);
    /// assert!(Layout::DEFAULT.check_node_id(1024).is_err());
    /// assert!(Layout::DEFAULT.check_node_id(-1).is_err());
    /// ```
    pub fn check_node_id(&self, node_id: i128) -> Result<u32> {
        if node_id < 0 || node_id > i128::from(self.max_node_id()) {
            return Err(Error::InvalidNodeId {
                node_id,
                max: self.max_node_id(),
            });
        }
        Ok(node_id as u32)
    }

    /// Pack a Unix-ms timestamp, node id and sequence into an ID, checking every field.
    ///
    /// ```
    /// use polyflake::{Layout, DEFAULT_EPOCH_MS};
    /// let id = Layout::DEFAULT.compose(1_737_747_358_021, 37, 0, DEFAULT_EPOCH_MS).unwrap();
    /// assert_eq!(id, 141264821508263936);
    /// ```
    pub fn compose(&self, unix_ms: i64, node_id: u64, sequence: u64, epoch_ms: i64) -> Result<u64> {
        let elapsed = i128::from(unix_ms) - i128::from(epoch_ms);
        if elapsed < 0 || elapsed > i128::from(self.max_elapsed_ms()) {
            return Err(Error::TimestampOverflow {
                unix_ms,
                epoch_ms,
                max_elapsed_ms: self.max_elapsed_ms(),
            });
        }
        let node = self.check_node_id(i128::from(node_id))?;
        if sequence > self.max_sequence() {
            return Err(Error::InvalidArgument {
                name: "sequence",
                reason: format!("{sequence} is out of range [0, {}]", self.max_sequence()),
            });
        }
        Ok(self.pack(elapsed as u64, u64::from(node), sequence))
    }

    /// Pack already-checked fields. `elapsed`, `node` and `seq` must fit their fields.
    #[inline]
    pub(crate) const fn pack(&self, elapsed: u64, node: u64, seq: u64) -> u64 {
        (elapsed << (self.node_bits + self.sequence_bits)) | (node << self.sequence_bits) | seq
    }

    /// Split an ID into its Unix-ms timestamp, node id and sequence for this layout and epoch.
    ///
    /// IDs of 2^63 and above are rejected (the sign bit of a valid ID is always 0). The decoded
    /// timestamp is an upper bound on when the ID was made: a monotonic generator may run ahead
    /// of the wall clock, never behind it.
    ///
    /// ```
    /// use polyflake::{Layout, DEFAULT_EPOCH_MS};
    /// let d = Layout::DEFAULT.decode(141264821510144037, DEFAULT_EPOCH_MS).unwrap();
    /// assert_eq!((d.timestamp_ms, d.node_id, d.sequence), (1_737_747_358_021, 496, 37));
    /// assert!(Layout::DEFAULT.decode(1 << 63, DEFAULT_EPOCH_MS).is_err());
    /// // An epoch so late that the ID's time does not fit in an i64 is refused, not clamped.
    /// assert!(Layout::DEFAULT.decode(1 << 62, i64::MAX - 5).is_err());
    /// ```
    pub fn decode(&self, id: u64, epoch_ms: i64) -> Result<Decoded> {
        let id = check_id(id)?;
        let shift = self.node_bits + self.sequence_bits;
        let elapsed = (id >> shift) as i64;
        let timestamp_ms = epoch_ms.checked_add(elapsed).ok_or_else(|| Error::InvalidArgument {
            name: "epoch_ms",
            reason: format!(
                "epoch {epoch_ms} ms plus the ID's {elapsed} ms does not fit a signed 64-bit Unix time"
            ),
        })?;
        Ok(Decoded {
            timestamp_ms,
            node_id: ((id >> self.sequence_bits) & self.max_node_id()) as u32,
            sequence: (id & self.max_sequence()) as u32,
        })
    }
}

impl Default for Layout {
    fn default() -> Self {
        Layout::DEFAULT
    }
}

impl fmt::Display for Layout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}/{}/{}",
            self.timestamp_bits, self.node_bits, self.sequence_bits
        )
    }
}

impl FromStr for Layout {
    type Err = Error;
    fn from_str(s: &str) -> Result<Layout> {
        Layout::from_name(s)
    }
}

/// The three fields of a decoded ID.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Decoded {
    /// When the ID was made at the latest, in Unix milliseconds.
    pub timestamp_ms: i64,
    /// The node that made it.
    pub node_id: u32,
    /// Its position within that node's millisecond.
    pub sequence: u32,
}

impl Decoded {
    /// The ID's time as a [`SystemTime`](std::time::SystemTime), for a log line.
    ///
    /// ```
    /// use std::time::{Duration, UNIX_EPOCH};
    /// let d = polyflake::decode(1 << 22).unwrap(); // 1 ms after the default epoch
    /// assert_eq!(d.time(), UNIX_EPOCH + Duration::from_millis(1_704_067_200_001));
    /// ```
    pub fn time(&self) -> std::time::SystemTime {
        unix_ms_time(self.timestamp_ms)
    }
}

/// Unix milliseconds as a [`SystemTime`](std::time::SystemTime) (before 1970 too).
pub fn unix_ms_time(unix_ms: i64) -> std::time::SystemTime {
    let at = std::time::Duration::from_millis(unix_ms.unsigned_abs());
    if unix_ms >= 0 {
        std::time::UNIX_EPOCH + at
    } else {
        std::time::UNIX_EPOCH - at
    }
}

/// Check that a number is a valid ID: below 2^63.
///
/// ```
/// assert!(polyflake::check_id(5).is_ok());
/// assert!(polyflake::check_id(1 << 63).is_err());
/// ```
pub fn check_id(id: u64) -> Result<u64> {
    if id > MAX_ID {
        return Err(Error::InvalidId {
            input: id.to_string(),
            reason: "an ID must be below 2^63",
        });
    }
    Ok(id)
}

/// Convert any integer a binding receives (a Python int, a JavaScript bigint) into an ID:
/// negative values and values of 2^63 and above are refused.
///
/// ```
/// assert_eq!(polyflake::id_from_i128(7).unwrap(), 7);
/// assert!(polyflake::id_from_i128(-1).is_err());
/// assert!(polyflake::id_from_i128(1 << 63).is_err());
/// ```
pub fn id_from_i128(value: i128) -> Result<u64> {
    if value < 0 {
        return Err(Error::InvalidId {
            input: value.to_string(),
            reason: "an ID is never negative",
        });
    }
    if value > i128::from(MAX_ID) {
        return Err(Error::InvalidId {
            input: value.to_string(),
            reason: "an ID must be below 2^63",
        });
    }
    Ok(value as u64)
}

/// Parse a decimal ID: ASCII digits only (no sign, no spaces, no `0x`), below 2^63.
///
/// ```
/// assert_eq!(polyflake::parse_id("141264821508263936").unwrap(), 141264821508263936);
/// for bad in ["", "-1", " 1", "0x10", "12a", "9223372036854775808"] {
///     assert!(polyflake::parse_id(bad).is_err(), "{bad}");
/// }
/// ```
pub fn parse_id(text: &str) -> Result<u64> {
    let bad = |reason| Error::InvalidId {
        input: text.into(),
        reason,
    };
    if text.is_empty() {
        return Err(bad("empty string"));
    }
    if !text.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad("an ID is written in decimal digits only"));
    }
    let mut value: u64 = 0;
    for b in text.bytes() {
        value = value
            .checked_mul(10)
            .and_then(|v| v.checked_add(u64::from(b - b'0')))
            .filter(|v| *v <= MAX_ID)
            .ok_or_else(|| bad("an ID must be below 2^63"))?;
    }
    Ok(value)
}

/// Format an ID as decimal text (what JSON carries, since JavaScript Numbers round above 2^53).
///
/// ```
/// assert_eq!(polyflake::format_id(141264821508263936), "141264821508263936");
/// ```
pub fn format_id(id: u64) -> String {
    id.to_string()
}
