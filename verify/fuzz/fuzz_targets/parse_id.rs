//! `polyflake::parse_id` (decimal ID text), against a reference written here from the rule
//! (ASCII digits only, at least one, value below 2^63, leading zeros allowed), and the round
//! trip through `format_id`. Also `id_from_i128` and `check_id` on the same bytes as numbers.
#![no_main]

use libfuzzer_sys::fuzz_target;
use polyflake::{check_id, format_id, id_from_i128, parse_id, ErrorKind, MAX_ID};

/// The rule, independently: digits only, and without its leading zeros the text is shorter
/// than "9223372036854775807" or as long and not greater.
fn accepted(text: &str) -> bool {
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return false;
    }
    let significant = text.trim_start_matches('0');
    let max = MAX_ID.to_string();
    significant.len() < max.len() || (significant.len() == max.len() && significant <= max.as_str())
}

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        match parse_id(text) {
            Ok(id) => {
                assert!(accepted(text), "accepted {text:?}");
                assert!(id <= MAX_ID);
                let canonical = format_id(id);
                let significant = text.trim_start_matches('0');
                assert_eq!(
                    canonical,
                    if significant.is_empty() {
                        "0"
                    } else {
                        significant
                    }
                );
                assert_eq!(parse_id(&canonical).ok(), Some(id));
                assert_eq!(check_id(id).ok(), Some(id));
            }
            Err(e) => {
                assert!(!accepted(text), "refused {text:?}: {e}");
                assert_eq!(e.kind(), ErrorKind::InvalidId);
                assert!(!e.to_string().is_empty());
            }
        }
    }
    if data.len() >= 16 {
        let n = i128::from_le_bytes(data[..16].try_into().unwrap_or([0; 16]));
        match id_from_i128(n) {
            Ok(id) => assert!(n >= 0 && n <= i128::from(MAX_ID) && id as i128 == n),
            Err(e) => {
                assert!(n < 0 || n > i128::from(MAX_ID));
                assert_eq!(e.kind(), ErrorKind::InvalidId);
            }
        }
        let raw = u64::from_le_bytes(data[..8].try_into().unwrap_or([0; 8]));
        assert_eq!(check_id(raw).is_ok(), raw <= MAX_ID);
    }
});
