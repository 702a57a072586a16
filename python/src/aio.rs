//! The awaitables behind the async forms (`anext_id()`, `anext_ids(n)`).
//!
//! The fast path (the core issued without waiting) should cost little more than the synchronous
//! call, and a Python coroutine costs more than the ID itself (about 120 ns of frame and send on
//! CPython 3.11, measured), so its awaitable is a small native type, `Ready`, holding the
//! outcome: `await` takes it through the type's `am_send` slot with no frame and no exception
//! (CPython >= 3.10; 3.9 gets it from `StopIteration`). PyO3 has no `am_send`, so the type is
//! made here from a `PyType_Spec`. It is registered as a `collections.abc.Coroutine` (it has
//! `send`, `throw` and `close`), so `asyncio.create_task` takes it. Its outcome is given once:
//! awaiting it again raises RuntimeError, as a finished coroutine does, so one ID is never
//! handed out twice. (The GIL orders every access: abi3 modules do not load on a free-threaded
//! interpreter.)
//!
//! A call that would wait becomes `asyncio.to_thread(...)` of the blocking call, which releases
//! the GIL while it sleeps: a coroutine, run when it is awaited.

use crate::errors::to_py_err;
use pyo3::exceptions::{PyBaseException, PyRuntimeError, PyStopIteration};
use pyo3::ffi;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyString, PyTuple, PyType};
use std::ffi::{c_int, c_uint, c_void};
use std::ptr;

/// A `Ready` object: the Python object header, then the outcome.
#[repr(C)]
struct Ready {
    ob_base: ffi::PyObject,
    /// The value, or the exception to raise when `failed`; null once taken.
    outcome: *mut ffi::PyObject,
    failed: bool,
}

static READY: PyOnceLock<Py<PyType>> = PyOnceLock::new();

/// An awaitable that gives `outcome` when awaited: the value, or the error raised.
pub(crate) fn ready<'py>(
    py: Python<'py>,
    outcome: PyResult<Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyAny>> {
    let tp = READY.get_or_try_init(py, || make_type(py))?;
    let (value, failed) = match outcome {
        Ok(v) => (v, false),
        Err(e) => (e.into_value(py).into_bound(py).into_any(), true),
    };
    // SAFETY: `tp` is the Ready type, whose instances are `Ready` structs; GenericAlloc zeroes
    // the struct and sets its header, and the outcome is a reference we own.
    unsafe {
        let obj = ffi::PyType_GenericAlloc(tp.as_ptr().cast(), 0);
        let obj = Bound::from_owned_ptr_or_err(py, obj)?;
        let r = obj.as_ptr().cast::<Ready>();
        (*r).outcome = value.into_ptr();
        (*r).failed = failed;
        Ok(obj)
    }
}

/// The async form of a call that first tried without waiting: `tried` is `Some` outcome (ready
/// at once: the value, or its error) or `None` (the call would wait), and then
/// `obj.method(*args)` runs in a thread.
pub(crate) fn now_or_in_thread<'py>(
    obj: &Bound<'py, PyAny>,
    tried: PyResult<Option<Bound<'py, PyAny>>>,
    method: &Bound<'py, PyString>,
    args: &[&Bound<'py, PyAny>],
) -> PyResult<Bound<'py, PyAny>> {
    match tried.transpose() {
        Some(outcome) => ready(obj.py(), outcome),
        None => in_thread(obj.getattr(method)?, args),
    }
}

/// `await g.anext_id()` of either generator type: `try_now` (the core's try without waiting;
/// None where the call would wait) unless `skip_try`, `to_py` for its ID, then the ID (or its
/// error) ready at once, or `obj.next_id()` in a thread. `skip_try` is for a strict generator on
/// an injected clock, where a declined try would spend a scripted clock's reading.
pub(crate) fn anext_id<'py, T>(
    obj: &Bound<'py, PyAny>,
    skip_try: bool,
    try_now: impl FnOnce() -> polyflake::Result<Option<T>>,
    to_py: impl FnOnce(T) -> PyResult<Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyAny>> {
    let py = obj.py();
    let tried = if skip_try {
        Ok(None)
    } else {
        try_now().map_err(|e| to_py_err(py, e))
    };
    let tried = tried.and_then(|id| id.map(to_py).transpose());
    now_or_in_thread(obj, tried, intern!(py, "next_id"), &[])
}

/// `asyncio.to_thread(f, *args)`: a coroutine that runs `f` in the loop's default executor.
fn in_thread<'py>(
    f: Bound<'py, PyAny>,
    args: &[&Bound<'py, PyAny>],
) -> PyResult<Bound<'py, PyAny>> {
    static TO_THREAD: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    let py = f.py();
    let to_thread = TO_THREAD.import(py, "asyncio", "to_thread")?;
    let mut all = vec![f];
    all.extend(args.iter().map(|&a| a.clone()));
    let all = PyTuple::new(py, all)?;
    to_thread.call1(all)
}

/// Take the outcome: the value (a new reference), or null with its exception raised.
unsafe fn take(obj: *mut ffi::PyObject) -> *mut ffi::PyObject {
    let r = obj.cast::<Ready>();
    let v = std::mem::replace(&mut (*r).outcome, ptr::null_mut());
    if v.is_null() {
        let py = Python::assume_attached();
        PyRuntimeError::new_err("cannot reuse an already awaited polyflake awaitable").restore(py);
    } else if (*r).failed {
        ffi::PyErr_SetObject(ffi::Py_TYPE(v).cast(), v);
        ffi::Py_DECREF(v);
        return ptr::null_mut();
    }
    v
}

/// `am_send`: the value returned as such (PYGEN_RETURN, 0), or PYGEN_ERROR (-1).
unsafe extern "C" fn am_send(
    obj: *mut ffi::PyObject,
    _arg: *mut ffi::PyObject,
    result: *mut *mut ffi::PyObject,
) -> c_int {
    *result = take(obj);
    if (*result).is_null() {
        -1
    } else {
        0
    }
}

/// `__next__` (and `send`): the value as `StopIteration(value)`, as an iterator gives it.
unsafe extern "C" fn next(obj: *mut ffi::PyObject) -> *mut ffi::PyObject {
    let v = take(obj);
    if !v.is_null() {
        let py = Python::assume_attached();
        let value = Bound::from_owned_ptr(py, v).unbind();
        PyStopIteration::new_err((value,)).restore(py);
    }
    ptr::null_mut()
}

unsafe extern "C" fn send(obj: *mut ffi::PyObject, _arg: *mut ffi::PyObject) -> *mut ffi::PyObject {
    next(obj)
}

/// `throw(exc)` or `throw(type[, value])`: as for a coroutine not yet started, the exception is
/// raised at once and the outcome dropped (an ID not handed out is a gap, never a duplicate).
unsafe extern "C" fn throw(
    obj: *mut ffi::PyObject,
    args: *mut ffi::PyObject,
) -> *mut ffi::PyObject {
    ffi::Py_XDECREF(std::mem::replace(
        &mut (*obj.cast::<Ready>()).outcome,
        ptr::null_mut(),
    ));
    let py = Python::assume_attached();
    let args = Bound::from_borrowed_ptr(py, args);
    let first = args
        .get_item(0)
        .unwrap_or_else(|_| py.None().into_bound(py));
    let err = if first.is_instance_of::<PyBaseException>() {
        PyErr::from_value(first)
    } else {
        match first.cast::<PyType>() {
            Ok(t) if t.is_subclass_of::<PyBaseException>().unwrap_or(false) => {
                let value = args.get_item(1).ok().filter(|v| !v.is_none());
                match value {
                    Some(v) if v.is_instance(t).unwrap_or(false) => PyErr::from_value(v),
                    Some(v) => PyErr::from_type(t.clone(), (v.unbind(),)),
                    None => PyErr::from_type(t.clone(), ()),
                }
            }
            _ => pyo3::exceptions::PyTypeError::new_err(
                "throw() takes an exception or an exception class",
            ),
        }
    };
    err.restore(py);
    ptr::null_mut()
}

unsafe extern "C" fn close(
    obj: *mut ffi::PyObject,
    _arg: *mut ffi::PyObject,
) -> *mut ffi::PyObject {
    ffi::Py_XDECREF(std::mem::replace(
        &mut (*obj.cast::<Ready>()).outcome,
        ptr::null_mut(),
    ));
    let none = ffi::Py_None();
    ffi::Py_INCREF(none);
    none
}

unsafe extern "C" fn await_(obj: *mut ffi::PyObject) -> *mut ffi::PyObject {
    ffi::Py_INCREF(obj);
    obj
}

unsafe extern "C" fn dealloc(obj: *mut ffi::PyObject) {
    let tp = ffi::Py_TYPE(obj);
    ffi::Py_XDECREF((*obj.cast::<Ready>()).outcome);
    let free: ffi::freefunc = std::mem::transmute(ffi::PyType_GetSlot(tp, ffi::Py_tp_free));
    free(obj.cast());
    // A heap type's instances hold a reference to it.
    ffi::Py_DECREF(tp.cast());
}

fn method(name: &'static std::ffi::CStr, f: ffi::PyCFunction, flags: c_int) -> ffi::PyMethodDef {
    ffi::PyMethodDef {
        ml_name: name.as_ptr(),
        ml_meth: ffi::PyMethodDefPointer { PyCFunction: f },
        ml_flags: flags,
        ml_doc: ptr::null(),
    }
}

fn make_type(py: Python<'_>) -> PyResult<Py<PyType>> {
    // The type keeps pointing at its methods: made once, never freed.
    let methods = Box::leak(Box::new([
        method(c"send", send, ffi::METH_O),
        method(c"throw", throw, ffi::METH_VARARGS),
        method(c"close", close, ffi::METH_NOARGS),
        // SAFETY: a zeroed entry ends the table.
        unsafe { std::mem::zeroed() },
    ]));
    let slot = |slot, pfunc: *mut c_void| ffi::PyType_Slot { slot, pfunc };
    let mut slots = vec![
        slot(ffi::Py_tp_dealloc, dealloc as *mut c_void),
        slot(ffi::Py_am_await, await_ as *mut c_void),
        slot(ffi::Py_tp_iternext, next as *mut c_void),
        slot(ffi::Py_tp_methods, methods.as_mut_ptr().cast()),
        slot(
            ffi::Py_tp_doc,
            c"The outcome of a call that did not have to wait: awaiting it gives it, once."
                .as_ptr()
                .cast_mut()
                .cast(),
        ),
    ];
    if py.version_info() >= (3, 10) {
        slots.push(slot(ffi::Py_am_send, am_send as *mut c_void));
    }
    slots.push(ffi::PyType_Slot::default());
    let mut spec = ffi::PyType_Spec {
        name: c"polyflake.Ready".as_ptr(),
        basicsize: std::mem::size_of::<Ready>() as c_int,
        itemsize: 0,
        flags: ffi::Py_TPFLAGS_DEFAULT as c_uint,
        slots: slots.as_mut_ptr(),
    };
    // SAFETY: the spec, its slots and the functions above match CPython's declarations.
    let tp = unsafe { Bound::from_owned_ptr_or_err(py, ffi::PyType_FromSpec(&mut spec))? };
    let coroutine = py.import("collections.abc")?.getattr("Coroutine")?;
    coroutine.call_method1("register", (&tp,))?;
    Ok(tp.cast_into::<PyType>()?.unbind())
}
