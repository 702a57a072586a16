//! The three ID formats the CLI and the service mint (`snowflake`, the default; `uuidv7`;
//! `ulid`), and what `decode` reads from a text. Every rule (the bits, the text forms, the
//! version check) is the core's; this module only names the formats and picks one.

use polyflake::{
    format_ulid, format_uuid, parse_id, parse_ulid, parse_uuid, ulid_timestamp_ms,
    uuid7_timestamp_ms, Decoded, Layout, UlidGenerator, Uuid7Generator,
};
use std::fmt;

/// An ID format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IdFormat {
    /// The 64-bit time-sortable ID (the layout's timestamp, node and sequence), as decimal text.
    Snowflake,
    /// A UUID version 7 (RFC 9562), as canonical lower-case text.
    Uuid7,
    /// A ULID, as 26 characters of Crockford's base32.
    Ulid,
}

impl IdFormat {
    /// Every format, default first.
    pub const ALL: [IdFormat; 3] = [IdFormat::Snowflake, IdFormat::Uuid7, IdFormat::Ulid];

    /// `"snowflake"`, `"uuidv7"` or `"ulid"`.
    pub const fn name(self) -> &'static str {
        match self {
            IdFormat::Snowflake => "snowflake",
            IdFormat::Uuid7 => "uuidv7",
            IdFormat::Ulid => "ulid",
        }
    }

    /// The format with this name (exactly as [`IdFormat::name`] writes it).
    ///
    /// ```
    /// use polyflake_cli::idformat::IdFormat;
    /// assert_eq!(IdFormat::from_name("uuidv7"), Some(IdFormat::Uuid7));
    /// assert_eq!(IdFormat::from_name("UUID"), None);
    /// ```
    pub fn from_name(name: &str) -> Option<IdFormat> {
        IdFormat::ALL.into_iter().find(|f| f.name() == name)
    }

    /// `"snowflake", "uuidv7" or "ulid"`, for error messages.
    pub fn choices() -> String {
        let names: Vec<String> = IdFormat::ALL
            .iter()
            .map(|f| format!("{:?}", f.name()))
            .collect();
        format!("{}, {} or {}", names[0], names[1], names[2])
    }
}

impl fmt::Display for IdFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The UUIDv7 and ULID generators of one process (the service keeps one of each beside its
/// Snowflake generator; `next` makes the one it needs).
#[derive(Debug)]
pub enum TimeIdGenerator {
    /// A UUIDv7 generator.
    Uuid7(Uuid7Generator),
    /// A ULID generator.
    Ulid(UlidGenerator),
}

impl TimeIdGenerator {
    /// One ID without waiting: `None` where [`TimeIdGenerator::next_ids`] would sleep.
    pub fn try_next(&self) -> polyflake::Result<Option<u128>> {
        match self {
            TimeIdGenerator::Uuid7(g) => g.try_next_uuid(),
            TimeIdGenerator::Ulid(g) => g.try_next_ulid(),
        }
    }

    /// Fill `out` with increasing IDs (one batch through the core).
    pub fn next_ids(&self, out: &mut [u128]) -> polyflake::Result<()> {
        match self {
            TimeIdGenerator::Uuid7(g) => g.next_uuids(out),
            TimeIdGenerator::Ulid(g) => g.next_ulids(out),
        }
    }

    /// The generator's health snapshot.
    pub fn health(&self) -> polyflake::Health {
        match self {
            TimeIdGenerator::Uuid7(g) => g.health(),
            TimeIdGenerator::Ulid(g) => g.health(),
        }
    }

    /// The generator's mode.
    pub fn mode(&self) -> polyflake::Mode {
        match self {
            TimeIdGenerator::Uuid7(g) => g.mode(),
            TimeIdGenerator::Ulid(g) => g.mode(),
        }
    }

    /// Its format.
    pub fn format(&self) -> IdFormat {
        match self {
            TimeIdGenerator::Uuid7(_) => IdFormat::Uuid7,
            TimeIdGenerator::Ulid(_) => IdFormat::Ulid,
        }
    }

    /// An ID's text in this generator's format.
    pub fn text(&self, id: u128) -> String {
        match self {
            TimeIdGenerator::Uuid7(_) => format_uuid(id),
            TimeIdGenerator::Ulid(_) => format_ulid(id),
        }
    }
}

/// What `decode` found in one text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DecodedText {
    /// A 64-bit ID and its fields (with the given layout and epoch).
    Snowflake(u64, Decoded),
    /// A UUID version 7: the value and its Unix ms.
    Uuid7(u128, i64),
    /// A ULID: the value and its Unix ms.
    Ulid(u128, i64),
}

/// Read one ID text: 36 characters with a hyphen is a UUID (which must be version 7), 26
/// characters a ULID, anything else a decimal 64-bit ID decoded with `layout` and `epoch_ms`.
///
/// ```
/// use polyflake::{Layout, DEFAULT_EPOCH_MS};
/// use polyflake_cli::idformat::{decode_text, DecodedText};
/// let l = Layout::default();
/// let d = decode_text("017F22E2-79B0-7CC3-98C4-DC0C0C07398F", &l, DEFAULT_EPOCH_MS).unwrap();
/// assert_eq!(d, DecodedText::Uuid7(0x017F22E2_79B0_7CC3_98C4_DC0C0C07398F, 1_645_557_742_000));
/// assert!(matches!(decode_text("01ARZ3NDEKTSV4RRFFQ69G5FAV", &l, 0), Ok(DecodedText::Ulid(_, 1_469_922_850_259))));
/// assert!(matches!(decode_text("141264821508263936", &l, DEFAULT_EPOCH_MS), Ok(DecodedText::Snowflake(..))));
/// ```
pub fn decode_text(text: &str, layout: &Layout, epoch_ms: i64) -> polyflake::Result<DecodedText> {
    if text.len() == 36 && text.contains('-') {
        let u = parse_uuid(text)?;
        return Ok(DecodedText::Uuid7(u, uuid7_timestamp_ms(u)?));
    }
    if text.len() == 26 {
        let u = parse_ulid(text)?;
        return Ok(DecodedText::Ulid(u, ulid_timestamp_ms(u)));
    }
    let id = parse_id(text)?;
    Ok(DecodedText::Snowflake(id, layout.decode(id, epoch_ms)?))
}
