//! `_floor`: what a call from Python costs through the binding's two mechanisms, with nothing
//! (or only the clock, or the clock and one compare-and-swap) behind it. Not shipped: built by
//! `make bench-python-floor` for `python/bench/floor.py`.
//!
//! - `Floor.pyo3_*`: `#[pymethods]`, as most of the binding is (PyO3's trampoline and wrapper);
//! - `Floor.raw_*`: plain `METH_NOARGS` functions in method descriptors, as `next_id()` is
//!   (`python/src/fast.rs`).

use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::PyType;
use std::hint::black_box;
use std::sync::atomic::{AtomicI64, Ordering};

/// An ID-sized int: two 30-bit digits, as a polyflake ID has today (`time.time_ns()`: three).
const ID: u64 = 0x0d8f_1234_5678_9abc;

#[pyclass(frozen)]
struct Floor;

#[pymethods]
impl Floor {
    #[new]
    fn new() -> Self {
        Floor
    }

    /// PyO3's method, returning a constant ID-sized int.
    fn pyo3_int(&self) -> u64 {
        black_box(ID)
    }

    /// PyO3's method, returning None.
    fn pyo3_none(&self) {}
}

/// A constant ID-sized int.
unsafe extern "C" fn raw_int(_: *mut ffi::PyObject, _: *mut ffi::PyObject) -> *mut ffi::PyObject {
    // SAFETY: called by CPython with the GIL held.
    unsafe { ffi::PyLong_FromUnsignedLongLong(black_box(ID)) }
}

/// None.
unsafe extern "C" fn raw_none(_: *mut ffi::PyObject, _: *mut ffi::PyObject) -> *mut ffi::PyObject {
    // SAFETY: called by CPython with the GIL held.
    unsafe {
        let none = ffi::Py_None();
        ffi::Py_IncRef(none);
        none
    }
}

fn realtime() -> libc::timespec {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: a valid clock id and out-pointer.
    unsafe { libc::clock_gettime(libc::CLOCK_REALTIME, &mut ts) };
    ts
}

/// `time.time_ns()` again: the system clock's nanoseconds.
unsafe extern "C" fn raw_clock(_: *mut ffi::PyObject, _: *mut ffi::PyObject) -> *mut ffi::PyObject {
    let ts = realtime();
    let ns = ts.tv_sec * 1_000_000_000 + ts.tv_nsec;
    // SAFETY: called by CPython with the GIL held.
    unsafe { ffi::PyLong_FromLongLong(ns) }
}

static STATE: AtomicI64 = AtomicI64::new(0);

/// The least a lock-free generator does: the clock's millisecond, then one compare-and-swap of
/// `max(last + 1, ms << 12)` into the state word (no window, fork or lead checks).
unsafe extern "C" fn raw_clock_cas(
    _: *mut ffi::PyObject,
    _: *mut ffi::PyObject,
) -> *mut ffi::PyObject {
    let ts = realtime();
    let floor = (ts.tv_sec * 1000 + ts.tv_nsec / 1_000_000) << 12;
    let mut p = STATE.load(Ordering::Acquire);
    let id = loop {
        let next = (p + 1).max(floor);
        match STATE.compare_exchange_weak(p, next, Ordering::AcqRel, Ordering::Acquire) {
            Ok(_) => break next,
            Err(now) => p = now,
        }
    };
    // SAFETY: called by CPython with the GIL held.
    unsafe { ffi::PyLong_FromLongLong(id) }
}

struct MethodDef(ffi::PyMethodDef);
// SAFETY: read-only; the pointers are to static C strings.
unsafe impl Sync for MethodDef {}

macro_rules! raw_methods {
    ($($name:ident),*) => {
        [$(MethodDef(ffi::PyMethodDef {
            ml_name: concat!(stringify!($name), "\0").as_ptr().cast(),
            ml_meth: ffi::PyMethodDefPointer { PyCFunction: $name },
            ml_flags: ffi::METH_NOARGS,
            ml_doc: std::ptr::null(),
        })),*]
    };
}

static RAW: [MethodDef; 4] = raw_methods!(raw_int, raw_none, raw_clock, raw_clock_cas);

#[pymodule]
fn _floor(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Floor>()?;
    let class: Bound<'_, PyType> = m.py().get_type::<Floor>();
    for def in &RAW {
        let ptr = std::ptr::from_ref(&def.0).cast_mut();
        // SAFETY: the GIL is held; the class and the static definition outlive the descriptor.
        let descr = unsafe {
            Bound::from_owned_ptr_or_err(m.py(), ffi::PyDescr_NewMethod(class.as_type_ptr(), ptr))?
        };
        // SAFETY: `ml_name` is a static C string.
        let name = unsafe { std::ffi::CStr::from_ptr(def.0.ml_name) }.to_string_lossy();
        class.setattr(&*name, descr)?;
    }
    Ok(())
}
