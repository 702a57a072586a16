//! The text of UUIDs and ULIDs, both ways, and their timestamps: total functions on the 128-bit
//! value (each format's parse refuses every text its format does not write or read).

use crate::error::{Error, Result};

const HEX: &[u8; 16] = b"0123456789abcdef";

/// The canonical text of a UUID: 36 characters, lower-case hex, hyphens after 8, 12, 16 and 20
/// digits.
///
/// ```
/// assert_eq!(
///     polyflake::format_uuid(0x017F22E2_79B0_7CC3_98C4_DC0C0C07398F),
///     "017f22e2-79b0-7cc3-98c4-dc0c0c07398f"
/// );
/// ```
pub fn format_uuid(u: u128) -> String {
    let mut out = String::with_capacity(36);
    for i in 0..32 {
        if matches!(i, 8 | 12 | 16 | 20) {
            out.push('-');
        }
        out.push(HEX[((u >> (124 - 4 * i)) & 0xf) as usize] as char);
    }
    out
}

fn bad_id(input: &str, reason: &'static str) -> Error {
    Error::InvalidId {
        input: input.chars().take(64).collect(),
        reason,
    }
}

/// Parse a UUID's text: the 36-character hyphenated form, hex digits in any case.
///
/// ```
/// let u = polyflake::parse_uuid("017F22E2-79B0-7CC3-98C4-DC0C0C07398F").unwrap();
/// assert_eq!(u, 0x017F22E2_79B0_7CC3_98C4_DC0C0C07398F);
/// assert!(polyflake::parse_uuid("017F22E2-79B0-7CC3-98C4-DC0C0C07398").is_err());
/// ```
pub fn parse_uuid(text: &str) -> Result<u128> {
    let b = text.as_bytes();
    if b.len() != 36 {
        return Err(bad_id(
            text,
            "a UUID is 36 characters: 8-4-4-4-12 hex digits",
        ));
    }
    let mut u: u128 = 0;
    for (i, &c) in b.iter().enumerate() {
        if matches!(i, 8 | 13 | 18 | 23) {
            if c != b'-' {
                return Err(bad_id(
                    text,
                    "a UUID has hyphens after 8, 12, 16 and 20 digits",
                ));
            }
            continue;
        }
        let d = (c as char)
            .to_digit(16)
            .ok_or_else(|| bad_id(text, "a UUID's digits are hexadecimal"))?;
        u = (u << 4) | u128::from(d);
    }
    Ok(u)
}

/// The Unix ms of a UUID version 7 (its first 48 bits); refused unless its version is 7 and its
/// variant is RFC 9562's.
///
/// ```
/// let u = polyflake::parse_uuid("017f22e2-79b0-7cc3-98c4-dc0c0c07398f").unwrap();
/// assert_eq!(polyflake::uuid7_timestamp_ms(u).unwrap(), 1_645_557_742_000);
/// ```
pub fn uuid7_timestamp_ms(u: u128) -> Result<i64> {
    if (u >> 76) & 0xf != 7 || (u >> 62) & 0b11 != 0b10 {
        return Err(Error::InvalidId {
            input: format_uuid(u),
            reason: "not a UUID version 7 (version 7, variant 0b10)",
        });
    }
    Ok((u >> 80) as i64)
}

const CROCKFORD: &[u8; 32] = b"0123456789ABCDEFGHJKMNPQRSTVWXYZ";

/// The text of a ULID: 26 characters of Crockford's base32, upper case.
///
/// ```
/// assert_eq!(polyflake::format_ulid(0), "00000000000000000000000000");
/// assert_eq!(polyflake::format_ulid(u128::MAX), "7ZZZZZZZZZZZZZZZZZZZZZZZZZ");
/// ```
pub fn format_ulid(u: u128) -> String {
    (0..26)
        .map(|i| CROCKFORD[((u >> (125 - 5 * i)) & 0x1f) as usize] as char)
        .collect()
}

/// Parse a ULID's text: 26 characters of Crockford's base32, any case, `I` and `L` read as 1 and
/// `O` as 0 (`U` is not a digit); a first character above `7` would overflow 128 bits and is
/// refused.
///
/// ```
/// let u = polyflake::parse_ulid("01arz3ndektsv4rrffq69g5fav").unwrap();
/// assert_eq!(polyflake::format_ulid(u), "01ARZ3NDEKTSV4RRFFQ69G5FAV");
/// assert!(polyflake::parse_ulid("81ARZ3NDEKTSV4RRFFQ69G5FAV").is_err());
/// ```
pub fn parse_ulid(text: &str) -> Result<u128> {
    let b = text.as_bytes();
    if b.len() != 26 {
        return Err(bad_id(
            text,
            "a ULID is 26 characters of Crockford's base32",
        ));
    }
    let mut u: u128 = 0;
    for (i, &c) in b.iter().enumerate() {
        let d: u128 = match c.to_ascii_uppercase() {
            c @ b'0'..=b'9' => u128::from(c - b'0'),
            b'I' | b'L' => 1,
            b'O' => 0,
            c => match CROCKFORD.iter().position(|&x| x == c) {
                Some(p) => p as u128,
                None => return Err(bad_id(text, "not a Crockford base32 digit (U is not one)")),
            },
        };
        if i == 0 && d > 7 {
            return Err(bad_id(
                text,
                "a ULID's first character is at most 7 (128 bits)",
            ));
        }
        u = (u << 5) | d;
    }
    Ok(u)
}

/// The Unix ms of a ULID (its first 48 bits).
///
/// ```
/// let u = polyflake::parse_ulid("01ARZ3NDEKTSV4RRFFQ69G5FAV").unwrap();
/// assert_eq!(polyflake::ulid_timestamp_ms(u), 1_469_922_850_259);
/// ```
pub fn ulid_timestamp_ms(u: u128) -> i64 {
    (u >> 80) as i64
}
