//! Layout names: a preset (`default`, `long_lived`, `big_fleet`, `short`) or `T/N/S` bits.
//! Whatever the text, `Layout::from_name` answers a layout or `UnknownLayout`/`InvalidLayout`;
//! an accepted `T/N/S` is three runs of digits whose values are each at least 1 and add up to
//! 63, node and sequence at most 32; and a layout's own text (`Display`) always reads back as itself.
#![no_main]

use libfuzzer_sys::fuzz_target;
use polyflake::{ErrorKind, Layout};

/// T/N/S by the rule, independently: three non-empty digit runs, each from 1, summing to 63,
/// the node and sequence runs at most 32.
fn bits(text: &str) -> Option<(u32, u32, u32)> {
    let parts: Vec<&str> = text.split('/').collect();
    if parts.len() != 3 {
        return None;
    }
    let mut v = [0u64; 3];
    for (slot, p) in v.iter_mut().zip(&parts) {
        if p.is_empty() || !p.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        // Saturating: any run that does not fit is far over 63 anyway.
        *slot = p.bytes().fold(0u64, |acc, b| {
            acc.saturating_mul(10).saturating_add(u64::from(b - b'0'))
        });
    }
    let fits = v.iter().all(|b| *b >= 1)
        && v.iter().fold(0u64, |a, b| a.saturating_add(*b)) == 63
        && v[1] <= 32
        && v[2] <= 32;
    fits.then(|| (v[0] as u32, v[1] as u32, v[2] as u32))
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let preset = Layout::PRESETS
        .iter()
        .find(|(n, _)| *n == text)
        .map(|(_, l)| *l);
    match Layout::from_name(text) {
        Ok(l) => {
            match preset {
                Some(p) => assert_eq!(l, p),
                None => {
                    let (t, n, s) = bits(text).unwrap_or_else(|| panic!("accepted {text:?}"));
                    assert_eq!(
                        (l.timestamp_bits(), l.node_bits(), l.sequence_bits()),
                        (t, n, s)
                    );
                }
            }
            assert_eq!(Layout::from_name(&l.to_string()).ok(), Some(l));
            assert_eq!(text.parse::<Layout>().ok(), Some(l));
            assert_eq!(l.timestamp_bits() + l.node_bits() + l.sequence_bits(), 63);
            assert_eq!(l.max_node_id(), (1u64 << l.node_bits()) - 1);
            assert_eq!(l.ids_per_ms(), 1u64 << l.sequence_bits());
            if let Some(name) = l.preset_name() {
                assert_eq!(Layout::from_name(name).ok(), Some(l));
            }
        }
        Err(e) => {
            assert!(preset.is_none(), "refused the preset {text:?}");
            assert!(bits(text).is_none(), "refused {text:?}: {e}");
            assert!(
                matches!(
                    e.kind(),
                    ErrorKind::UnknownLayout | ErrorKind::InvalidLayout
                ),
                "{text:?}: {:?}",
                e.kind()
            );
        }
    }
    // The same bytes as three numbers for Layout::new.
    if data.len() >= 12 {
        let w = |i: usize| u32::from_le_bytes(data[i..i + 4].try_into().unwrap_or([0; 4]));
        let (t, n, s) = (w(0), w(4), w(8));
        let ok = t >= 1
            && n >= 1
            && s >= 1
            && u64::from(t) + u64::from(n) + u64::from(s) == 63
            && n <= 32
            && s <= 32;
        match Layout::new(t, n, s) {
            Ok(l) => {
                assert!(ok);
                assert_eq!(l.to_string(), format!("{t}/{n}/{s}"));
            }
            Err(e) => {
                assert!(!ok);
                assert_eq!(e.kind(), ErrorKind::InvalidLayout);
            }
        }
    }
});
