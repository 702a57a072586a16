//! The panic boundary, the pointer checks and the one out-param writer every entry point goes
//! through, and the conversions of C strings and static names.

use crate::error::polyflake_result;
use std::ffi::{c_char, CStr};
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

/// The ONE out-param writer: NULL `dst` is NULL_PARAMETER before `f` runs (so nothing is done
/// for a caller who cannot receive it), and `*dst` is written only when `f` succeeds.
#[inline(always)]
pub(crate) fn write_out<T>(
    dst: *mut T,
    f: impl FnOnce() -> Result<T, polyflake_result>,
) -> polyflake_result {
    boundary(|| {
        let dst = out(dst)?;
        let value = f()?;
        // SAFETY: `dst` is non-NULL and the caller promises it is writable.
        unsafe { dst.write(value) };
        Ok(())
    })
}

/// Box `value` as a new handle written to `*dst` (on success only; see `write_out`).
pub(crate) fn new_handle<T>(
    dst: *mut *mut T,
    f: impl FnOnce() -> Result<T, polyflake_result>,
) -> polyflake_result {
    write_out(dst, || Ok(Box::into_raw(Box::new(f()?))))
}

/// For entry points that cannot fail and return a value: `fallback` if the body panics.
#[inline(always)]
pub(crate) fn boundary_value<T>(fallback: T, f: impl FnOnce() -> T) -> T {
    catch_unwind(AssertUnwindSafe(f)).unwrap_or(fallback)
}

/// The body of every `_free`: NULL does nothing; a panic while dropping is swallowed (there is
/// no result to report).
pub(crate) fn free_handle<T>(handle: *mut T) {
    let _ = catch_unwind(AssertUnwindSafe(|| {
        if !handle.is_null() {
            // SAFETY: a non-NULL handle came from its `_new` function (Box::into_raw) and the
            // caller frees it once.
            drop(unsafe { Box::from_raw(handle) });
        }
    }));
}

/// A required input pointer as a reference, or NULL_PARAMETER.
#[inline(always)]
pub(crate) fn arg<'a, T>(p: *const T) -> Result<&'a T, polyflake_result> {
    // SAFETY: non-NULL pointers passed to polyflake must point to a live, aligned T (the
    // contract every function's doc comment states); NULL is checked here.
    unsafe { p.as_ref() }.ok_or(polyflake_result::NullParameter)
}

/// A required output pointer, or NULL_PARAMETER.
#[inline(always)]
pub(crate) fn out<T>(p: *mut T) -> Result<NonNull<T>, polyflake_result> {
    NonNull::new(p).ok_or(polyflake_result::NullParameter)
}

/// A required NUL-terminated string (NULL: NULL_PARAMETER).
pub(crate) fn c_str<'a>(p: *const c_char) -> Result<&'a CStr, polyflake_result> {
    let first = arg(p)?;
    // SAFETY: non-NULL, and the caller promises a NUL-terminated string that outlives the call.
    Ok(unsafe { CStr::from_ptr(first) })
}

/// A required NUL-terminated UTF-8 string. Text that is not UTF-8 is refused with the core's
/// INVALID_NODE_SOURCE, never repaired (a repaired prefix or identity would name another key).
pub(crate) fn c_utf8(p: *const c_char, what: &str) -> Result<String, polyflake_result> {
    match c_str(p)?.to_str() {
        Ok(s) => Ok(s.to_string()),
        Err(_) => Err(polyflake_core::Error::InvalidNodeSource {
            reason: format!("{what} is not valid UTF-8"),
        }
        .into()),
    }
}

/// A nullable NUL-terminated UTF-8 string (NULL: `None`).
pub(crate) fn c_utf8_opt(p: *const c_char, what: &str) -> Result<Option<String>, polyflake_result> {
    (!p.is_null()).then(|| c_utf8(p, what)).transpose()
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
pub(crate) mod tests {
    use super::*;

    /// What an `_init` function writes (the other modules' tests).
    pub(crate) fn init<T>(f: extern "C" fn(*mut T) -> polyflake_result) -> T {
        let mut v = std::mem::MaybeUninit::<T>::uninit();
        assert_eq!(f(v.as_mut_ptr()), polyflake_result::Ok);
        // SAFETY: the init function returned OK, so it wrote the whole value.
        unsafe { v.assume_init() }
    }

    #[test]
    fn a_panic_becomes_the_panic_result() {
        let prev = std::panic::take_hook();
        std::panic::set_hook(Box::new(|_| {}));
        let r = boundary(|| panic!("a bug"));
        assert_eq!(r, polyflake_result::Panic);
        assert_eq!(boundary_value(7, || panic!("a bug")), 7);
        let mut x = 5u64;
        assert_eq!(
            write_out(&mut x, || panic!("a bug")),
            polyflake_result::Panic
        );
        assert_eq!(x, 5, "nothing written on a panic");
        std::panic::set_hook(prev);
    }

    #[test]
    fn write_out_writes_only_on_success() {
        let mut x = 5u64;
        assert_eq!(write_out(&mut x, || Ok(9)), polyflake_result::Ok);
        assert_eq!(x, 9);
        let r = write_out(&mut x, || Err(polyflake_result::InvalidId));
        assert_eq!((r, x), (polyflake_result::InvalidId, 9));
        let mut ran = false;
        let r = write_out(std::ptr::null_mut::<u64>(), || {
            ran = true;
            Ok(1)
        });
        assert_eq!(r, polyflake_result::NullParameter);
        assert!(!ran, "nothing is done for a NULL out-param");
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
