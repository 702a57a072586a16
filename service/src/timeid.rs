//! The three ID formats the CLI and the service mint (`snowflake`, the default; `uuidv7`;
//! `ulid`), and what `decode` reads from a text. Every rule (the bits, the text forms, the
//! version check) is the core's; this module only names the formats and picks one.
//!
//! ## Decisions
//!
//! - **`--format` names the ID format, `--output` the output style.** `next --format json` (and
//!   `plain`) is still read as `--output` (refused only when an `--output` given too disagrees),
//!   and `decode`, `layouts` and `lease inspect` take `--format` as a hidden alias of `--output`,
//!   so scripts written against the old flags run unchanged and a new name is never a style.
//! - **UUIDv7 and ULID take no node id, and say so**: a node source, a lease flag, `--layout` or
//!   `--epoch-ms` with them is a usage error (exit 2), not a flag silently ignored.
//! - **`decode` tells the format from the text**: 36 characters with a hyphen is a UUID (version
//!   7 with the RFC 9562 variant only), 26 characters a ULID, anything else a decimal 64-bit ID.
//!   The only overlap, a decimal ID zero-padded to 26 digits, reads as a ULID (no tool writes
//!   one). Random fields are not decoded: their bits mean nothing to a reader.

use polyflake::{format_id, parse_id, Decoded, Layout, Result, TimeFormat};
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
    /// use polyflake_service::timeid::IdFormat;
    /// assert_eq!(IdFormat::from_name("uuidv7"), Some(IdFormat::Uuid7));
    /// assert_eq!(IdFormat::from_name("UUID"), None);
    /// ```
    pub fn from_name(name: &str) -> Option<IdFormat> {
        IdFormat::ALL.into_iter().find(|f| f.name() == name)
    }

    /// The core's 128-bit format this is, if it is one.
    pub const fn time(self) -> Option<TimeFormat> {
        match self {
            IdFormat::Snowflake => None,
            IdFormat::Uuid7 => Some(TimeFormat::Uuid7),
            IdFormat::Ulid => Some(TimeFormat::Ulid),
        }
    }

    /// `"snowflake", "uuidv7" or "ulid"`, for error messages.
    pub fn choices() -> String {
        let [a, b, c] = IdFormat::ALL.map(|f| format!("{:?}", f.name()));
        format!("{a}, {b} or {c}")
    }
}

impl fmt::Display for IdFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// What `decode` found in one text: its format, its text as the core writes it, its time, and
/// (a 64-bit ID only) its fields with the given layout and epoch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecodedText {
    /// The format told from the text.
    pub format: IdFormat,
    /// The ID in the core's text form (decimal without leading zeros, lower-case UUID, ULID).
    pub text: String,
    /// Its time, Unix ms.
    pub unix_ms: i64,
    /// A 64-bit ID's timestamp, node id and sequence.
    pub fields: Option<Decoded>,
}

/// Read one ID text: 36 characters with a hyphen is a UUID (which must be version 7), 26
/// characters a ULID, anything else a decimal 64-bit ID decoded with `layout` and `epoch_ms`.
///
/// ```
/// use polyflake::{Layout, DEFAULT_EPOCH_MS};
/// use polyflake_service::timeid::{decode_text, IdFormat};
/// let l = Layout::default();
/// let d = decode_text("017F22E2-79B0-7CC3-98C4-DC0C0C07398F", &l, DEFAULT_EPOCH_MS).unwrap();
/// assert_eq!((d.format, d.text.as_str(), d.unix_ms), (IdFormat::Uuid7, "017f22e2-79b0-7cc3-98c4-dc0c0c07398f", 1_645_557_742_000));
/// assert_eq!(decode_text("01ARZ3NDEKTSV4RRFFQ69G5FAV", &l, 0).unwrap().unix_ms, 1_469_922_850_259);
/// assert!(decode_text("141264821508263936", &l, DEFAULT_EPOCH_MS).unwrap().fields.is_some());
/// ```
pub fn decode_text(text: &str, layout: &Layout, epoch_ms: i64) -> Result<DecodedText> {
    let time = match text.len() {
        36 if text.contains('-') => IdFormat::Uuid7,
        26 => IdFormat::Ulid,
        _ => IdFormat::Snowflake,
    };
    if let Some(f) = time.time() {
        // One path for both 128-bit formats: the core's text and timestamp of the format.
        let u = f.parse_id(text)?;
        return Ok(DecodedText {
            format: time,
            text: f.format_id(u),
            unix_ms: f.timestamp_ms(u)?,
            fields: None,
        });
    }
    let id = parse_id(text)?;
    let d = layout.decode(id, epoch_ms)?;
    Ok(DecodedText {
        format: IdFormat::Snowflake,
        text: format_id(id),
        unix_ms: d.timestamp_ms,
        fields: Some(d),
    })
}
