//! # polyflake C ABI
//!
//! The whole polyflake core through one C header, `include/polyflake.h` (generated from this
//! crate by cbindgen). Every rule about IDs lives in the core; this crate only converts types.
//!
//! Conventions, after rustls-ffi:
//! - every symbol is prefixed `polyflake_`; handles are opaque and come in `_new`/`_free` pairs;
//!   `_free` accepts NULL;
//! - fallible functions return a `polyflake_result`; out-params are written only on success;
//!   a NULL pointer argument gives `POLYFLAKE_RESULT_NULL_PARAMETER`, never a crash;
//! - no panic crosses the boundary: each entry point catches unwinds and returns
//!   `POLYFLAKE_RESULT_PANIC`;
//! - handles are thread-safe: one generator may be shared by any number of threads (only
//!   `_free` needs the caller to know no other thread still uses the handle).

#![deny(missing_docs)]
#![allow(non_camel_case_types)]
// Every entry point takes raw pointers from C, checks them for NULL and documents its contract in
// the header; marking them `unsafe fn` would change nothing for C callers.
#![allow(clippy::not_unsafe_ptr_arg_deref)]

mod boundary;
mod clock;
mod generator;
mod id;
mod result;
mod source;

pub use clock::*;
pub use generator::*;
pub use id::*;
pub use result::polyflake_result;
pub use source::*;

use boundary::boundary_value;
use std::ffi::c_char;

/// polyflake's version as a static NUL-terminated string, e.g. "0.1.0". Never NULL; do not free.
/// Thread-safe.
#[no_mangle]
pub extern "C" fn polyflake_version() -> *const c_char {
    const VERSION: &str = concat!(env!("CARGO_PKG_VERSION"), "\0");
    boundary_value(c"?".as_ptr(), || VERSION.as_ptr().cast())
}

/// The stable name of a result code as a static NUL-terminated string: "OK",
/// "CLOCK_MOVED_BACKWARDS", "NULL_PARAMETER", ... (for core errors, the same code names every
/// binding uses). An unknown number gives "unknown polyflake_result". Never NULL; do not free.
/// Thread-safe.
#[no_mangle]
pub extern "C" fn polyflake_result_name(result: u32) -> *const c_char {
    boundary_value(c"PANIC".as_ptr(), || {
        result::static_text(result, polyflake_result::name)
    })
}

/// A static English sentence describing a result code (`result` is a `polyflake_result`). An
/// unknown number gives "unknown polyflake_result". Never NULL; do not free. Thread-safe.
/// For the message of a particular error with its numbers, see `polyflake_last_error_message`.
#[no_mangle]
pub extern "C" fn polyflake_result_message(result: u32) -> *const c_char {
    boundary_value(c"internal error".as_ptr(), || {
        result::static_text(result, polyflake_result::message)
    })
}

/// Copy the full message of the last core error on the calling thread (for example "node id 1024
/// is out of range: it must be in [0, 1023]") into `buf` as a NUL-terminated string, and its
/// length without the NUL into `*out_len`. The message is "" when no error happened yet on this
/// thread. Results that are not core errors (NULL_PARAMETER, BUFFER_TOO_SMALL, PANIC) do not
/// change it.
///
/// NULL `buf` or `out_len`: POLYFLAKE_RESULT_NULL_PARAMETER. `len` too small for the message and
/// its NUL: POLYFLAKE_RESULT_BUFFER_TOO_SMALL, nothing written (a 1024-byte buffer always
/// suffices for polyflake's messages). Thread-safe (the message is per thread).
#[no_mangle]
pub extern "C" fn polyflake_last_error_message(
    buf: *mut c_char,
    len: usize,
    out_len: *mut usize,
) -> polyflake_result {
    boundary::boundary(|| {
        let out_len = boundary::out(out_len)?;
        let buf = boundary::out(buf)?;
        let text = result::last_error();
        boundary::write_c_string(buf, len, text.as_bytes())?;
        // SAFETY: `out_len` is non-NULL and the caller promises it is writable.
        unsafe { out_len.write(text.len()) };
        Ok(())
    })
}
