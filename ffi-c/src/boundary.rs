//! The panic boundary and the pointer checks every entry point goes through.

use crate::result::polyflake_result;
use std::ffi::c_char;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr::NonNull;

/// Run an entry point's body: `Ok(())` is `POLYFLAKE_RESULT_OK`, an error its result, and a panic
/// `POLYFLAKE_RESULT_PANIC` (unwinding into C is undefined behaviour, so it stops here).
#[inline(always)]
pub(crate) fn boundary(f: impl FnOnce() -> Result<(), polyflake_result>) -> polyflake_result {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(())) => polyflake_result::Ok,
        Ok(Err(r)) => r,
        Err(_) => polyflake_result::Panic,
    }
}

/// For entry points that cannot fail and return a value: `fallback` if the body panics.
#[inline(always)]
pub(crate) fn boundary_value<T>(fallback: T, f: impl FnOnce() -> T) -> T {
    catch_unwind(AssertUnwindSafe(f)).unwrap_or(fallback)
}

/// For `_free` functions: a panic while dropping is swallowed (there is no result to report).
pub(crate) fn boundary_void(f: impl FnOnce()) {
    let _ = catch_unwind(AssertUnwindSafe(f));
}

/// A required input pointer as a reference, or NULL_PARAMETER.
#[inline(always)]
pub(crate) fn arg<'a, T>(p: *const T) -> Result<&'a T, polyflake_result> {
    // SAFETY: non-NULL pointers passed to polyflake must point to a live, aligned T (the
    // contract every function's doc comment states); NULL is checked here.
    unsafe { p.as_ref() }.ok_or(polyflake_result::NullParameter)
}

/// A required output pointer, or NULL_PARAMETER. Written with `.write()` only on success.
#[inline(always)]
pub(crate) fn out<T>(p: *mut T) -> Result<NonNull<T>, polyflake_result> {
    NonNull::new(p).ok_or(polyflake_result::NullParameter)
}

/// Write `bytes` and a NUL into `buf[..len]`, or BUFFER_TOO_SMALL with nothing written.
pub(crate) fn write_c_string(
    buf: NonNull<c_char>,
    len: usize,
    bytes: &[u8],
) -> Result<(), polyflake_result> {
    if bytes.len() >= len {
        return Err(polyflake_result::BufferTooSmall);
    }
    // SAFETY: the caller promises `buf` has `len` writable bytes; we write len(bytes) + 1 <= len.
    unsafe {
        std::ptr::copy_nonoverlapping(bytes.as_ptr(), buf.as_ptr().cast::<u8>(), bytes.len());
        buf.as_ptr().add(bytes.len()).write(0);
    }
    Ok(())
}

/// Copy `text` into a fixed char array, cut at a UTF-8 character boundary so it stays valid,
/// NUL-terminated.
pub(crate) fn fill_char_array<const N: usize>(text: &str) -> [c_char; N] {
    let mut out = [0 as c_char; N];
    let mut end = text.len().min(N - 1);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    for (slot, b) in out.iter_mut().zip(&text.as_bytes()[..end]) {
        *slot = *b as c_char;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_becomes_the_panic_result() {
        let prev = std::panic::take_hook();
        std::panic::set_hook(Box::new(|_| {}));
        let r = boundary(|| panic!("a bug"));
        assert_eq!(r, polyflake_result::Panic);
        assert_eq!(boundary_value(7, || panic!("a bug")), 7);
        boundary_void(|| panic!("a bug"));
        std::panic::set_hook(prev);
    }

    #[test]
    fn char_arrays_are_cut_on_a_character_boundary() {
        let a: [c_char; 4] = fill_char_array("aé€");
        // "a" (1 byte) + "é" (2 bytes) fills 3 bytes; "€" (3 bytes) does not fit.
        assert_eq!(a[3], 0);
        assert_eq!(a[0] as u8, b'a');
        let b: [c_char; 2] = fill_char_array("é");
        assert_eq!(b, [0, 0]);
    }
}
