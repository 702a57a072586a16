//! `next_id()` and `anext_id()` of `Snowflake` as plain `METH_NOARGS` C functions, without
//! PyO3's trampoline.
//!
//! These are the binding's hottest and cheapest calls: a CPython call (about 18 ns here), the
//! core's step (the clock read and a compare-and-swap) and an int (9 ns). PyO3's trampoline and
//! method wrapper add about 9 ns around them (`BENCHMARKS.md`, Python: a profile, and an empty
//! method measured both ways): its attach count is a thread-local reached through
//! `__tls_get_addr`, twice a call, then the deferred-decref check, the receiver's type check and
//! the conversion's own call. None of that is needed to hand back an ID the core has at once:
//! - the receiver is already checked: CPython's method descriptor calls the function only with
//!   an instance of the class it was made for, or of a subclass (and the specialised call of
//!   CPython 3.11+ only with an exact match);
//! - the first step touches no Python object: the attach count and the deferred decrefs, which
//!   guard `Py<T>` drops, are not in play, and the GIL (held by the caller) is never let go;
//! - a panic is caught here, as the trampoline would (an unwind out of `extern "C"` aborts).
//!
//! Everything else (a wait, an error, an injected clock) is attached as PyO3 attaches and goes
//! to `Snowflake::next_id_rest` or `anext_id_rest`, where the rules are: this file only changes
//! how the call arrives.

use crate::aio;
use crate::generator::{First, MonotonicSnowflake, Snowflake};
use pyo3::ffi;
use pyo3::panic::PanicException;
use pyo3::prelude::*;
use pyo3::types::PyType;
use std::any::Any;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr::null_mut;
use std::thread;

type Obj = *mut ffi::PyObject;

/// A method's definition: its name and `help()` text (with the text signature PyO3 writes).
/// CPython keeps a pointer to it in each descriptor, hence static.
struct MethodDef(ffi::PyMethodDef);
// SAFETY: read-only after construction; the pointers are to static C strings.
unsafe impl Sync for MethodDef {}

const fn noargs(
    name: &'static std::ffi::CStr,
    f: ffi::PyCFunction,
    doc: &'static std::ffi::CStr,
) -> MethodDef {
    MethodDef(ffi::PyMethodDef {
        ml_name: name.as_ptr(),
        ml_meth: ffi::PyMethodDefPointer { PyCFunction: f },
        ml_flags: ffi::METH_NOARGS,
        ml_doc: doc.as_ptr(),
    })
}

static METHODS: [MethodDef; 2] = [
    noargs(c"next_id", next_id, c"next_id($self)\n--\n\nIssue one ID."),
    noargs(
        c"anext_id",
        anext_id,
        c"anext_id($self)\n--\n\n`await g.anext_id()`: an ID issued without waiting is ready at \
          once; a call that would wait runs `next_id()` in a thread, never blocking the event \
          loop.",
    ),
];

/// `g.next_id()`.
///
/// # Safety
/// Called by CPython's method descriptor only (see `receiver`).
unsafe extern "C" fn next_id(slf: Obj, _: Obj) -> Obj {
    // SAFETY: called by the descriptor.
    let g = unsafe { receiver(slf) };
    match first_step(g, Snowflake::next_id_first) {
        // SAFETY: the GIL is held; a failed allocation returns NULL with MemoryError set.
        Ok(Ok(id)) => unsafe { ffi::PyLong_FromUnsignedLongLong(id) },
        first => finish(first.map(no_id), |py, first| {
            Ok(g.next_id_rest(py, first)?.into_pyobject(py)?.into_any())
        }),
    }
}

/// `g.anext_id()`: an ID issued at once comes in a `Ready` awaitable (`aio.rs`).
///
/// # Safety
/// Called by CPython's method descriptor only (see `receiver`).
unsafe extern "C" fn anext_id(slf: Obj, _: Obj) -> Obj {
    // SAFETY: called by the descriptor.
    let (g, py) = unsafe { (receiver(slf), Python::assume_attached()) };
    // The type is made at the module's start (`register`); without it, PyO3's way from the top.
    let (tp, first) = match aio::ready_type(py) {
        Some(tp) => (Some(tp), first_step(g, Snowflake::anext_id_first)),
        None => (None, Ok(Err(None))),
    };
    match (tp, first) {
        // SAFETY: the GIL is held and `tp` is the `Ready` type.
        (Some(tp), Ok(Ok(id))) => unsafe { aio::ready_id(tp, id) },
        (_, first) => finish(first.map(no_id), |py, first| {
            // SAFETY: `slf` is this call's receiver, alive for the call.
            let this = unsafe { pyo3::Borrowed::from_ptr(py, slf) };
            g.anext_id_rest(&this, first)
        }),
    }
}

/// A call's first step, a panic caught: the ID, or what the rest of the call needs.
#[inline(always)]
fn first_step(
    g: &Snowflake,
    step: impl FnOnce(&Snowflake) -> Result<u64, First>,
) -> thread::Result<Result<u64, First>> {
    catch_unwind(AssertUnwindSafe(|| step(g)))
}

/// The rest of a call whose first step issued nothing.
fn no_id(first: Result<u64, First>) -> First {
    first.err().flatten()
}

/// The rest of a call (a wait, an error, an injected clock, a panic): `rest` attached as PyO3
/// attaches, its outcome handed back as the trampoline would.
#[cold]
#[inline(never)]
fn finish<F>(first: thread::Result<First>, rest: F) -> Obj
where
    F: for<'py> FnOnce(Python<'py>, First) -> PyResult<Bound<'py, PyAny>>,
{
    Python::attach(|py| {
        let out = first
            .and_then(|first| catch_unwind(AssertUnwindSafe(|| rest(py, first))))
            .unwrap_or_else(|payload| Err(panic_error(payload)));
        match out {
            Ok(v) => v.into_ptr(),
            Err(e) => {
                e.restore(py);
                null_mut()
            }
        }
    })
}

/// The `Snowflake` behind a receiver CPython has checked.
///
/// # Safety
/// The GIL is held and `slf` is an instance of `Snowflake` or a subclass (`MonotonicSnowflake`,
/// or a Python subclass: each lays `Snowflake` out first, as PyO3's `as_super` relies on), alive
/// for the call.
unsafe fn receiver<'a>(slf: Obj) -> &'a Snowflake {
    // SAFETY: caller upholds the requirements; `Snowflake` is frozen, so `get` takes no borrow.
    unsafe {
        let py = Python::assume_attached();
        let any = pyo3::Borrowed::from_ptr(py, slf);
        let g: *const Snowflake = any.cast_unchecked::<Snowflake>().get();
        &*g
    }
}

/// A panic's payload as the `PanicException` PyO3 raises for one.
fn panic_error(payload: Box<dyn Any + Send>) -> PyErr {
    let text = match (
        payload.downcast_ref::<String>(),
        payload.downcast_ref::<&str>(),
    ) {
        (Some(s), _) => s.clone(),
        (None, Some(s)) => (*s).to_owned(),
        (None, None) => "panic from Rust code".to_owned(),
    };
    PanicException::new_err((text,))
}

/// Install the methods on both generator classes (a descriptor per class, so the specialised
/// call, an exact type match, applies to each), and make the `Ready` type they hand back.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    aio::make_ready_type(py)?;
    for class in [
        py.get_type::<Snowflake>(),
        py.get_type::<MonotonicSnowflake>(),
    ] {
        for def in &METHODS {
            add_method(&class, def)?;
        }
    }
    Ok(())
}

/// A method descriptor for `def` on `class`, set as the class's attribute of that name.
fn add_method(class: &Bound<'_, PyType>, def: &'static MethodDef) -> PyResult<()> {
    // SAFETY: `ml_name` is a static C string.
    let name = unsafe { std::ffi::CStr::from_ptr(def.0.ml_name) }.to_string_lossy();
    // CPython only reads the definition (the pointer is `*mut` for historical reasons).
    let def = std::ptr::from_ref(&def.0).cast_mut();
    // SAFETY: the GIL is held; the class and the (static) definition outlive the descriptor.
    let descr = unsafe {
        Bound::from_owned_ptr_or_err(class.py(), ffi::PyDescr_NewMethod(class.as_type_ptr(), def))?
    };
    class.setattr(&*name, descr)
}
