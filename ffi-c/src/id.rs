//! Layouts, decoding, composing, and IDs as decimal text.

use crate::boundary::{boundary_value, c_str, out, write_c_string, write_out};
use crate::error::polyflake_result;
use polyflake_core::{check_id, format_id, parse_id, Decoded, Layout};
use std::ffi::c_char;

/// The default epoch, 2024-01-01T00:00:00Z, in Unix milliseconds.
pub const POLYFLAKE_DEFAULT_EPOCH_MS: i64 = 1_704_067_200_000;
const _: () = assert!(POLYFLAKE_DEFAULT_EPOCH_MS == polyflake_core::DEFAULT_EPOCH_MS);

/// The largest batch one `polyflake_next_ids` call accepts (2^24 IDs).
pub const POLYFLAKE_MAX_BATCH: usize = 16_777_216;
const _: () = assert!(POLYFLAKE_MAX_BATCH == polyflake_core::MAX_BATCH);

/// Bytes a buffer needs for any ID as decimal text with its NUL: 19 digits + 1.
pub const POLYFLAKE_ID_TEXT_LEN: usize = 20;
const _: () = assert!(POLYFLAKE_ID_TEXT_LEN == polyflake_core::MAX_ID.ilog10() as usize + 2);

/// How the 63 usable bits of an ID are split: every field at least 1 bit, 63 in all (else
/// POLYFLAKE_RESULT_INVALID_LAYOUT). Presets from `polyflake_layout_default()` and friends, or
/// by name from `polyflake_layout_from_name`.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct polyflake_layout {
    /// Bits of elapsed milliseconds since the epoch.
    pub timestamp_bits: u32,
    /// Bits of node id.
    pub node_bits: u32,
    /// Bits of per-millisecond sequence.
    pub sequence_bits: u32,
}

impl From<Layout> for polyflake_layout {
    fn from(l: Layout) -> Self {
        polyflake_layout {
            timestamp_bits: l.timestamp_bits(),
            node_bits: l.node_bits(),
            sequence_bits: l.sequence_bits(),
        }
    }
}

impl polyflake_layout {
    /// The core layout, checked by the core.
    pub(crate) fn to_core(self) -> Result<Layout, polyflake_result> {
        let l = self;
        Ok(Layout::new(l.timestamp_bits, l.node_bits, l.sequence_bits)?)
    }
}

/// What a layout holds, as computed by the core (`polyflake_layout_describe`).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct polyflake_layout_info {
    /// The layout described.
    pub layout: polyflake_layout,
    /// The largest node id, 2^node_bits - 1.
    pub max_node_id: u64,
    /// The largest sequence value, 2^sequence_bits - 1.
    pub max_sequence: u64,
    /// IDs one node can issue in one millisecond, 2^sequence_bits.
    pub ids_per_ms: u64,
    /// The largest elapsed milliseconds since the epoch, 2^timestamp_bits - 1.
    pub max_elapsed_ms: u64,
    /// How many (Julian) years the timestamp field lasts.
    pub years: f64,
}

/// The three fields of a decoded ID.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct polyflake_decoded {
    /// When the ID was made at the latest, Unix ms (a monotonic generator may run ahead of the
    /// wall clock, never behind it).
    pub timestamp_ms: i64,
    /// The node that made it.
    pub node_id: u32,
    /// Its position within that node's millisecond.
    pub sequence: u32,
}

impl From<Decoded> for polyflake_decoded {
    fn from(d: Decoded) -> Self {
        polyflake_decoded {
            timestamp_ms: d.timestamp_ms,
            node_id: d.node_id,
            sequence: d.sequence,
        }
    }
}

/// What a preset getter returns if it ever panicked: all zero, which every function refuses
/// with POLYFLAKE_RESULT_INVALID_LAYOUT, so a fault cannot become a wrong ID.
const NO_LAYOUT: polyflake_layout = polyflake_layout {
    timestamp_bits: 0,
    node_bits: 0,
    sequence_bits: 0,
};

/// The default layout, 41/10/12: 69.68 years, 1,024 nodes, 4,096 IDs per ms per node.
#[no_mangle]
pub extern "C" fn polyflake_layout_default() -> polyflake_layout {
    boundary_value(NO_LAYOUT, || Layout::DEFAULT.into())
}

/// The long-lived preset, 42/8/13: 139.37 years, 256 nodes, 8,192 IDs per ms per node.
#[no_mangle]
pub extern "C" fn polyflake_layout_long_lived() -> polyflake_layout {
    boundary_value(NO_LAYOUT, || Layout::LONG_LIVED.into())
}

/// The big-fleet preset, 41/12/10: 69.68 years, 4,096 nodes, 1,024 IDs per ms per node.
#[no_mangle]
pub extern "C" fn polyflake_layout_big_fleet() -> polyflake_layout {
    boundary_value(NO_LAYOUT, || Layout::BIG_FLEET.into())
}

/// The short preset, 39/12/12: 17.42 years, 4,096 nodes, 4,096 IDs per ms per node.
#[no_mangle]
pub extern "C" fn polyflake_layout_short() -> polyflake_layout {
    boundary_value(NO_LAYOUT, || Layout::SHORT.into())
}

/// Look up a layout by name, a preset ("default", "long_lived", "big_fleet", "short") or "T/N/S"
/// such as "41/10/12" (NUL-terminated; bytes that are not UTF-8 never match), into
/// `*out_layout`. Errors: POLYFLAKE_RESULT_UNKNOWN_LAYOUT, _INVALID_LAYOUT.
#[no_mangle]
pub extern "C" fn polyflake_layout_from_name(
    name: *const c_char,
    out_layout: *mut polyflake_layout,
) -> polyflake_result {
    write_out(out_layout, || {
        Ok(Layout::from_name(&c_str(name)?.to_string_lossy())?.into())
    })
}

/// Check `layout` and store what it holds in `*out_info`. Errors: POLYFLAKE_RESULT_INVALID_LAYOUT.
#[no_mangle]
pub extern "C" fn polyflake_layout_describe(
    layout: polyflake_layout,
    out_info: *mut polyflake_layout_info,
) -> polyflake_result {
    write_out(out_info, || {
        let l = layout.to_core()?;
        Ok(polyflake_layout_info {
            layout: l.into(),
            max_node_id: l.max_node_id(),
            max_sequence: l.max_sequence(),
            ids_per_ms: l.ids_per_ms(),
            max_elapsed_ms: l.max_elapsed_ms(),
            years: l.years(),
        })
    })
}

/// Split `id` for `layout` and `epoch_ms` into `*out_decoded`. Errors:
/// POLYFLAKE_RESULT_INVALID_LAYOUT; _INVALID_ID for `id` >= 2^63.
#[no_mangle]
pub extern "C" fn polyflake_decode(
    layout: polyflake_layout,
    epoch_ms: i64,
    id: u64,
    out_decoded: *mut polyflake_decoded,
) -> polyflake_result {
    write_out(out_decoded, || {
        Ok(layout.to_core()?.decode(id, epoch_ms)?.into())
    })
}

/// Pack a Unix-ms timestamp, node id and sequence into `*out_id` for `layout` and `epoch_ms`
/// (the inverse of `polyflake_decode`). Errors: POLYFLAKE_RESULT_INVALID_LAYOUT,
/// _TIMESTAMP_OVERFLOW (outside the window), _INVALID_NODE_ID, _INVALID_ARGUMENT (sequence).
#[no_mangle]
pub extern "C" fn polyflake_compose(
    layout: polyflake_layout,
    epoch_ms: i64,
    unix_ms: i64,
    node_id: u64,
    sequence: u64,
    out_id: *mut u64,
) -> polyflake_result {
    write_out(out_id, || {
        let l = layout.to_core()?;
        Ok(l.compose(unix_ms, node_id, sequence, epoch_ms)?)
    })
}

/// Parse a decimal ID (ASCII digits only: no sign, spaces or "0x"; below 2^63) from the
/// NUL-terminated `text` into `*out_id`. Errors: POLYFLAKE_RESULT_INVALID_ID.
#[no_mangle]
pub extern "C" fn polyflake_parse_id(text: *const c_char, out_id: *mut u64) -> polyflake_result {
    // Bytes that are not UTF-8 reach the core's parser, which refuses them.
    write_out(out_id, || Ok(parse_id(&c_str(text)?.to_string_lossy())?))
}

/// Write `id` as decimal text with a NUL into `buf` (`len` bytes; POLYFLAKE_ID_TEXT_LEN
/// suffices), and the number of digits into `*out_len`. Errors: POLYFLAKE_RESULT_INVALID_ID
/// (`id` >= 2^63), _BUFFER_TOO_SMALL (nothing written).
#[no_mangle]
pub extern "C" fn polyflake_format_id(
    id: u64,
    buf: *mut c_char,
    len: usize,
    out_len: *mut usize,
) -> polyflake_result {
    write_out(out_len, || {
        let text = format_id(check_id(id)?);
        write_c_string(out(buf)?, len, text.as_bytes())?;
        Ok(text.len())
    })
}
