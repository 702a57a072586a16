//! # polyflake C ABI
//!
//! The whole polyflake core (Snowflake IDs, UUIDv7 and ULID) through one C header, `include/polyflake.h` (generated from this
//! crate by cbindgen). Every rule about IDs, every default and every message lives in the core;
//! this crate only converts types.
//!
//! Conventions (after rustls-ffi; stated for C users at the top of the header): the prefix
//! `polyflake_`; opaque handles in `_new`/`_free` pairs (`_free` accepts NULL); a
//! `polyflake_result` from every fallible call; out-params written only on success, through the
//! one `boundary::write_out`; NULL arguments refused; no panic across the boundary; one
//! constructor per node-id source, each taking an optional clock; thread-safe handles.
//!
//! Modules, arrows only downwards: `source` -> `generator` -> `clock`, `id`; `timeid` (UUIDv7
//! and ULID) -> `health` -> `generator`; everything -> `boundary` -> `result`.

#![deny(missing_docs)]
#![allow(non_camel_case_types)]
// Every entry point takes raw pointers from C, checks them for NULL and documents its contract in
// the header; marking them `unsafe fn` would change nothing for C callers.
#![allow(clippy::not_unsafe_ptr_arg_deref)]

mod boundary;
mod clock;
mod generator;
mod health;
mod id;
mod result;
mod source;
mod timeid;

pub use clock::*;
pub use generator::*;
pub use health::*;
pub use id::*;
pub use result::polyflake_result;
pub use source::*;
pub use timeid::*;

use boundary::{boundary_value, out, write_c_string, write_out};
use std::ffi::c_char;

/// polyflake's version as a static NUL-terminated string, e.g. "0.1.0". Never NULL; do not free.
#[no_mangle]
pub extern "C" fn polyflake_version() -> *const c_char {
    const VERSION: &str = concat!(env!("CARGO_PKG_VERSION"), "\0");
    boundary_value(c"?".as_ptr(), || VERSION.as_ptr().cast())
}

/// The stable name of a result code as a static NUL-terminated string: "OK",
/// "CLOCK_MOVED_BACKWARDS", "NULL_PARAMETER", ... (for core errors, the core's code, which every
/// binding uses). An unknown number gives "unknown polyflake_result". Never NULL; do not free.
#[no_mangle]
pub extern "C" fn polyflake_result_name(result: u32) -> *const c_char {
    boundary_value(c"PANIC".as_ptr(), || result::text_of(result, false))
}

/// A static English sentence describing a result code (`result` is a `polyflake_result`; for core
/// errors, the core's description). An unknown number gives "unknown polyflake_result". Never NULL;
/// do not free. For the message of a particular error with its numbers, see
/// `polyflake_last_error_message`.
#[no_mangle]
pub extern "C" fn polyflake_result_message(result: u32) -> *const c_char {
    boundary_value(c"internal error".as_ptr(), || result::text_of(result, true))
}

/// Copy the full message of the last core error on the calling thread (the core's text, for
/// example "node id 1024 is out of range: it must be in [0, 1023]") into
/// `buf` as a NUL-terminated string, and its length without the NUL into `*out_len`. The
/// message is "" when no error happened yet on this thread. Results that are not core errors
/// (NULL_PARAMETER, BUFFER_TOO_SMALL, PANIC) do not change it.
///
/// `len` too small for the message and its NUL: POLYFLAKE_RESULT_BUFFER_TOO_SMALL, nothing written
/// (a 1024-byte buffer always suffices for polyflake's messages).
#[no_mangle]
pub extern "C" fn polyflake_last_error_message(
    buf: *mut c_char,
    len: usize,
    out_len: *mut usize,
) -> polyflake_result {
    write_out(out_len, || {
        let text = result::last_error();
        write_c_string(out(buf)?, len, text.as_bytes())?;
        Ok(text.len())
    })
}
