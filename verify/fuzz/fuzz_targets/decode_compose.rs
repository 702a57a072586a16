//! Decode and compose round trips on every layout (presets and T/N/S), any epoch: a decoded
//! valid ID composes back to itself, a composed ID decodes back to its fields, every refusal is
//! the right one (in the order compose checks), and IDs sort exactly like (time, node, seq).
#![no_main]

use libfuzzer_sys::arbitrary::{self, Arbitrary};
use libfuzzer_sys::fuzz_target;
use polyflake::{ErrorKind, Layout, DEFAULT_EPOCH_MS, MAX_ID};

#[derive(Debug, Arbitrary)]
struct Input {
    timestamp_bits: u8,
    node_bits: u8,
    epoch_ms: i64,
    id: u64,
    a: (i64, u64, u64),
    b: (i64, u64, u64),
}

fuzz_target!(|input: Input| {
    // A layout from the two bit counts (the third makes 63); the default when that is not one
    // (a field over 32 bits is refused: node ids and sequences are 32-bit numbers).
    let t = u32::from(input.timestamp_bits % 62) + 1;
    let n = u32::from(input.node_bits % 62) + 1;
    let layout = if t + n < 63 {
        let s = 63 - t - n;
        match Layout::new(t, n, s) {
            Ok(l) => {
                assert!(n <= 32 && s <= 32, "{t}/{n}/{s} accepted");
                l
            }
            Err(e) => {
                assert!(n > 32 || s > 32, "{t}/{n}/{s} refused: {e}");
                Layout::DEFAULT
            }
        }
    } else {
        Layout::DEFAULT
    };
    let epoch = input.epoch_ms;
    let shift = layout.node_bits() + layout.sequence_bits();

    // decode -> compose
    match layout.decode(input.id, epoch) {
        Ok(d) => {
            assert!(input.id <= MAX_ID);
            assert!(u64::from(d.node_id) <= layout.max_node_id());
            assert!(u64::from(d.sequence) <= layout.max_sequence());
            let elapsed = (input.id >> shift) as i64;
            let ms = epoch
                .checked_add(elapsed)
                .expect("decode refuses what does not fit");
            assert_eq!(d.timestamp_ms, ms);
            let back = layout.compose(ms, d.node_id.into(), d.sequence.into(), epoch);
            assert_eq!(back.ok(), Some(input.id), "{layout} epoch {epoch}");
        }
        Err(e) if input.id > MAX_ID => assert_eq!(e.kind(), ErrorKind::InvalidId),
        // An epoch so late the ID's time is past i64: refused, never clamped.
        Err(e) => {
            assert_eq!(e.kind(), ErrorKind::InvalidArgument);
            assert!(epoch.checked_add((input.id >> shift) as i64).is_none());
        }
    }
    if layout == Layout::DEFAULT && epoch == DEFAULT_EPOCH_MS {
        assert_eq!(
            polyflake::decode(input.id).ok(),
            layout.decode(input.id, epoch).ok()
        );
    }

    // compose -> decode, with the refusals in compose's order
    let compose = |(ms, node, seq): (i64, u64, u64)| {
        let elapsed = i128::from(ms) - i128::from(epoch);
        let r = layout.compose(ms, node, seq, epoch);
        if elapsed < 0 || elapsed > i128::from(layout.max_elapsed_ms()) {
            assert_eq!(
                r.as_ref().map_err(|e| e.kind()).err(),
                Some(ErrorKind::TimestampOverflow)
            );
        } else if node > layout.max_node_id() {
            assert_eq!(
                r.as_ref().map_err(|e| e.kind()).err(),
                Some(ErrorKind::InvalidNodeId)
            );
        } else if seq > layout.max_sequence() {
            assert_eq!(
                r.as_ref().map_err(|e| e.kind()).err(),
                Some(ErrorKind::InvalidArgument)
            );
        } else {
            let id = *r.as_ref().expect("every field in range");
            assert!(id <= MAX_ID);
            let d = layout.decode(id, epoch).expect("a composed ID decodes");
            assert_eq!(
                (d.timestamp_ms, u64::from(d.node_id), u64::from(d.sequence)),
                (ms, node, seq)
            );
        }
        r.ok()
    };
    if let (Some(x), Some(y)) = (compose(input.a), compose(input.b)) {
        // Time-sortable: IDs order exactly as their (time, node, sequence).
        assert_eq!(
            x.cmp(&y),
            input.a.cmp(&input.b),
            "{:?} vs {:?}",
            input.a,
            input.b
        );
    }
});
