//! The awaitables of `anext_id()` and `anext_ids(n)`: an outcome ready at once comes in `Ready`,
//! a native type made from a `PyType_Spec` (PyO3 has no `am_send`, which awaits it with no frame
//! and no exception; a coroutine costs more than the ID), given once; a wait, `asyncio.to_thread`
//! (through `polyflake._aio`, which cuts the wait short when the awaiting task is cancelled).

use crate::error::to_py_err;
use crate::interrupt::Cancel;
use pyo3::exceptions::{PyBaseException, PyRuntimeError, PyStopIteration, PyTypeError};
use pyo3::ffi;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyString, PyTuple, PyType};
use std::ffi::{c_int, c_uint, c_void};
use std::ptr;

/// A `Ready` object.
#[repr(C)]
struct Ready {
    ob_base: ffi::PyObject,
    /// The value, or the exception to raise when `failed`; null once taken.
    outcome: Obj,
    failed: bool,
}

type Obj = *mut ffi::PyObject;

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

/// The `Ready` type once made (`ready` makes it; so does the module's start, `fast::register`).
pub(crate) fn ready_type(py: Python<'_>) -> Option<&'static Py<PyType>> {
    READY.get(py)
}

/// Make the `Ready` type if it is not made yet.
pub(crate) fn make_ready_type(py: Python<'_>) -> PyResult<()> {
    READY.get_or_try_init(py, || make_type(py)).map(drop)
}

/// A `Ready` holding an ID issued at once, made outside PyO3's trampoline (`fast.rs`): a new
/// reference, or null with the error set.
///
/// # Safety
/// The GIL is held and `tp` is `ready_type`'s.
pub(crate) unsafe fn ready_id(tp: &Py<PyType>, id: u64) -> Obj {
    let value = ffi::PyLong_FromUnsignedLongLong(id);
    if value.is_null() {
        return value;
    }
    // GenericAlloc zeroes the struct (`failed` false) and sets its header.
    let obj = ffi::PyType_GenericAlloc(tp.as_ptr().cast(), 0);
    if obj.is_null() {
        ffi::Py_DECREF(value);
        return obj;
    }
    (*obj.cast::<Ready>()).outcome = value;
    obj
}

/// `tried` (a value or its error) ready at once, or if None, `obj.method(*args, cancel)` in a
/// thread (`polyflake._aio.in_thread`: `asyncio.to_thread`, and a cancelled task sets `cancel`,
/// which cuts the call's wait short instead of leaving the thread waiting for seconds).
pub(crate) fn now_or_in_thread<'py>(
    obj: &Bound<'py, PyAny>,
    tried: PyResult<Option<Bound<'py, PyAny>>>,
    method: &Bound<'py, PyString>,
    args: &[&Bound<'py, PyAny>],
) -> PyResult<Bound<'py, PyAny>> {
    match tried.transpose() {
        Some(outcome) => ready(obj.py(), outcome),
        None => {
            static IN_THREAD: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
            let (py, f) = (obj.py(), obj.getattr(method)?);
            let cancel = Bound::new(py, Cancel::default())?.into_any();
            let all: Vec<_> = [&f, &cancel]
                .into_iter()
                .chain(args.iter().copied())
                .collect();
            IN_THREAD
                .import(py, "polyflake._aio", "in_thread")?
                .call1(PyTuple::new(py, all)?)
        }
    }
}

/// `await g.anext_id()`: `try_now`'s ID (unless `skip_try`) now, or `obj.next_id()` in a thread.
pub(crate) fn anext_id<'py, T>(
    obj: &Bound<'py, PyAny>,
    skip_try: bool,
    try_now: impl FnOnce() -> polyflake::Result<Option<T>>,
    to_py: impl FnOnce(T) -> PyResult<Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyAny>> {
    let py = obj.py();
    let tried = (!skip_try).then(try_now).transpose().map(Option::flatten);
    let tried = tried
        .map_err(|e| to_py_err(py, e))
        .and_then(|id| id.map(to_py).transpose());
    now_or_in_thread(obj, tried, intern!(py, "_next_id_cancellable"), &[])
}

/// Take the outcome: the value (a new reference), or null with its exception raised.
unsafe fn take(obj: Obj) -> Obj {
    let v = outcome(obj);
    if v.is_null() {
        let py = Python::assume_attached();
        PyRuntimeError::new_err("cannot reuse an already awaited polyflake awaitable").restore(py);
    } else if (*obj.cast::<Ready>()).failed {
        ffi::PyErr_SetObject(ffi::Py_TYPE(v).cast(), v);
        ffi::Py_DECREF(v);
        return ptr::null_mut();
    }
    v
}

/// `am_send`: PYGEN_RETURN (0) with the value, or PYGEN_ERROR (-1).
unsafe extern "C" fn am_send(obj: Obj, _arg: Obj, result: *mut Obj) -> c_int {
    *result = take(obj);
    -c_int::from((*result).is_null())
}

/// `__next__` (and `send`): the value as `StopIteration(value)`.
unsafe extern "C" fn next(obj: Obj) -> Obj {
    let v = take(obj);
    if !v.is_null() {
        let py = Python::assume_attached();
        let value = Bound::from_owned_ptr(py, v).unbind();
        PyStopIteration::new_err((value,)).restore(py);
    }
    ptr::null_mut()
}

unsafe extern "C" fn send(obj: Obj, _arg: Obj) -> Obj {
    next(obj)
}

/// `throw(exc)` or `throw(type[, value])`: raised at once, the outcome dropped (as `close()`).
unsafe extern "C" fn throw(obj: Obj, args: Obj) -> Obj {
    ffi::Py_XDECREF(outcome(obj));
    let py = Python::assume_attached();
    let args = Bound::from_borrowed_ptr(py, args);
    let first = args.get_item(0).unwrap_or(py.None().into_bound(py));
    let value = args.get_item(1).ok().filter(|v| !v.is_none());
    let err = match first.cast::<PyType>() {
        _ if first.is_instance_of::<PyBaseException>() => PyErr::from_value(first.clone()),
        Ok(t) if t.is_subclass_of::<PyBaseException>().unwrap_or(false) => match value {
            Some(v) if v.is_instance(t).unwrap_or(false) => PyErr::from_value(v),
            Some(v) => PyErr::from_type(t.clone(), (v.unbind(),)),
            None => PyErr::from_type(t.clone(), ()),
        },
        _ => PyTypeError::new_err("throw() takes an exception or an exception class"),
    };
    err.restore(py);
    ptr::null_mut()
}

/// `close()`: the outcome dropped (a gap, never a duplicate).
unsafe extern "C" fn close(obj: Obj, _arg: Obj) -> Obj {
    ffi::Py_XDECREF(outcome(obj));
    Python::assume_attached().None().into_ptr()
}

/// Take the outcome out (null if it was taken).
unsafe fn outcome(obj: Obj) -> Obj {
    std::mem::replace(&mut (*obj.cast::<Ready>()).outcome, ptr::null_mut())
}

unsafe extern "C" fn await_(obj: Obj) -> Obj {
    ffi::compat::Py_NewRef(obj)
}

unsafe extern "C" fn dealloc(obj: Obj) {
    let tp = ffi::Py_TYPE(obj);
    ffi::Py_XDECREF(outcome(obj));
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
    let doc = c"The outcome of a call that did not have to wait: awaiting it gives it, once.";
    let mut slots = vec![
        slot(ffi::Py_tp_dealloc, dealloc as *mut c_void),
        slot(ffi::Py_am_await, await_ as *mut c_void),
        slot(ffi::Py_tp_iternext, next as *mut c_void),
        slot(ffi::Py_tp_methods, methods.as_mut_ptr().cast()),
        slot(ffi::Py_tp_doc, doc.as_ptr().cast_mut().cast()),
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
