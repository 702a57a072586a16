//! Interruptible waits: a core call that can wait is cut (`INTERRUPTED`) within one
//! of the core's 20 ms slices once the JS environment that made it is going away:
//! `Worker.terminate()`, `process.exit()` (which terminates every Worker first), a Worker's own
//! `process.exit()`.
//!
//! Node-API has no "is this environment terminating" call, but every Node-API call that may run
//! JavaScript starts with a check of the environment's `can_call_into_js` flag, which Node
//! lowers when an environment is told to stop (Node 20: before it asks V8 to terminate; teardown
//! always), and refuses with `napi_pending_exception` from then on. [`terminating`] and
//! [`stopping`] make such calls.
//!
//! - Synchronous calls (`nextId`, `nextIds`, the UUID/ULID forms, `waitReady`) run on the JS
//!   thread inside [`polyflake::interruptible`] with [`terminating`] as the hook ([`waiting`]);
//!   the core asks it at most once per slice.
//! - A wait on the libuv pool ([`pool_wait`]) cannot call Node-API. While one is in flight, a
//!   libuv timer on the environment's loop asks [`stopping`] every slice on the JS thread and
//!   raises the environment's stop flag, which the pool thread's hook reads. The timer fires
//!   during a terminating Worker's teardown too: Node first drains the loop until every
//!   thread-pool work has finished (and only then runs cleanup hooks), and that drain runs the
//!   loop, so the in-flight batch is cut within a slice instead of holding `terminate()` up. The
//!   timer is unref'd (it never keeps a process alive) and closed when the last wait returns.
//!   `process.exit()` raises the flag too, from a `process.on('exit')` listener added with the
//!   environment's first pool wait: in the main thread Node joins the pool's threads before the
//!   process exits, which would otherwise wait for the whole batch.

use std::cell::RefCell;
use std::collections::HashMap;
use std::ffi::{c_int, c_void};
use std::ptr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use napi::sys;

/// The status of one Node-API call `probe(env, scope's values)`, made inside a handle scope of
/// its own (on `env`'s thread); `None` when no scope could be opened.
fn probe(
    env: sys::napi_env,
    call: impl FnOnce(sys::napi_env) -> sys::napi_status,
) -> Option<sys::napi_status> {
    let mut scope = ptr::null_mut();
    // SAFETY: `env` is the current thread's environment (callers' contract); closed below.
    if unsafe { sys::napi_open_handle_scope(env, &mut scope) } != sys::Status::napi_ok {
        return None;
    }
    let status = call(env);
    // SAFETY: the scope opened above, on the same thread.
    unsafe { sys::napi_close_handle_scope(env, scope) };
    Some(status)
}

/// True for the status Node-API answers once an environment may no longer run JavaScript
/// (`napi_cannot_run_js` on Node-API version 10, `napi_pending_exception` before).
fn refused(status: Option<sys::napi_status>) -> bool {
    matches!(status, Some(s) if s == sys::Status::napi_pending_exception || s == sys::Status::napi_cannot_run_js)
}

/// True once `env` is stopping (its `can_call_into_js` flag is down), read WITHOUT running any
/// JavaScript: a property set on a fresh plain object, which Node-API refuses first thing in a
/// stopping environment. For the watch timer, which runs outside any call from JS (running a
/// script there could handle, and so end, a termination at the top of the stack).
fn stopping(env: sys::napi_env) -> bool {
    refused(probe(env, |env| {
        let (mut object, mut value) = (ptr::null_mut(), ptr::null_mut());
        // SAFETY: values of the scope `probe` opened; the name is NUL-terminated.
        unsafe {
            if sys::napi_create_object(env, &mut object) != sys::Status::napi_ok
                || sys::napi_get_undefined(env, &mut value) != sys::Status::napi_ok
            {
                return sys::Status::napi_ok;
            }
            sys::napi_set_named_property(env, object, c"probe".as_ptr(), value)
        }
    }))
}

/// The hook of a synchronous call (inside a call from JS, on `env`'s thread): true once `env`
/// is stopping, or once V8 was asked to terminate it. It runs the script `0`: Node-API refuses
/// to run it in a stopping environment (Node 20 lowers the flag before it asks V8 to
/// terminate), and where the flag is still up V8 handles its pending termination on entering the
/// script, which fails. That termination is left pending (never taken or cleared), so it goes
/// on up the stack when the call returns. About 2 µs, at most once per 20 ms slice.
pub(crate) fn terminating(env: sys::napi_env) -> bool {
    refused(probe(env, |env| {
        let (mut source, mut out) = (ptr::null_mut(), ptr::null_mut());
        // SAFETY: values of the scope `probe` opened; the text is 1 byte long.
        unsafe {
            if sys::napi_create_string_latin1(env, c"0".as_ptr(), 1, &mut source)
                != sys::Status::napi_ok
            {
                return sys::Status::napi_ok;
            }
            sys::napi_run_script(env, source, &mut out)
        }
    }))
}

/// Run `f` (a core call that may wait, on `env`'s JS thread) so that its waits are cut once
/// `env` is terminating.
#[inline]
pub(crate) fn waiting<R>(env: sys::napi_env, f: impl FnOnce() -> R) -> R {
    polyflake::interruptible(&|| terminating(env), f)
}

// libuv, which the node binary exports to addons (Node-API hands out its loop).
#[allow(non_camel_case_types)]
type uv_timer_cb = unsafe extern "C" fn(*mut c_void);
#[allow(non_camel_case_types)]
type uv_close_cb = unsafe extern "C" fn(*mut c_void);
extern "C" {
    fn uv_handle_size(kind: c_int) -> usize;
    fn uv_timer_init(event_loop: *mut sys::uv_loop_s, timer: *mut c_void) -> c_int;
    fn uv_timer_start(timer: *mut c_void, cb: uv_timer_cb, timeout: u64, repeat: u64) -> c_int;
    fn uv_timer_stop(timer: *mut c_void) -> c_int;
    fn uv_unref(handle: *mut c_void);
    fn uv_close(handle: *mut c_void, cb: uv_close_cb);
}
/// `UV_TIMER` in libuv's `uv_handle_type`.
const UV_TIMER: c_int = 13;

/// One environment's pool waits: how many are in flight, the timer that watches for
/// termination while any is, and the flag their hooks read.
struct Watch {
    in_flight: usize,
    /// A `uv_timer_t` (its `data`, the first field, is the env), or null when none runs.
    timer: *mut c_void,
    stop: Arc<AtomicBool>,
}

thread_local! {
    /// The watches of the environments on this thread (one per Worker thread, in practice).
    static WATCHES: RefCell<HashMap<usize, Watch>> = RefCell::new(HashMap::new());
}

/// The memory of one `uv_timer_t`, aligned for any of its fields.
fn timer_layout() -> std::alloc::Layout {
    // SAFETY: a pure libuv query.
    let size = unsafe { uv_handle_size(UV_TIMER) }.max(std::mem::size_of::<*mut c_void>());
    std::alloc::Layout::from_size_align(size, 16).expect("a uv_timer_t's size")
}

unsafe extern "C" fn tick(timer: *mut c_void) {
    // SAFETY: `data`, the first field of every libuv handle, was set to the env by `start`.
    let env = unsafe { *(timer as *mut sys::napi_env) };
    if stopping(env) {
        WATCHES.with(|w| {
            if let Some(watch) = w.borrow().get(&(env as usize)) {
                watch.stop.store(true, Ordering::Relaxed);
            }
        });
    }
}

unsafe extern "C" fn free_timer(timer: *mut c_void) {
    // SAFETY: allocated by `start` with this layout; libuv is done with it (close callback).
    unsafe { std::alloc::dealloc(timer as *mut u8, timer_layout()) };
}

/// Start `env`'s timer (every slice, unref'd); null when libuv refuses.
fn start(env: sys::napi_env) -> *mut c_void {
    let mut event_loop = ptr::null_mut();
    // SAFETY: on `env`'s thread, inside a call from JS.
    if unsafe { sys::napi_get_uv_event_loop(env, &mut event_loop) } != sys::Status::napi_ok {
        return ptr::null_mut();
    }
    // SAFETY: a fresh allocation of a uv_timer_t's size, initialised by libuv before any use; on
    // failure it is freed here, otherwise by `free_timer` after `uv_close`.
    unsafe {
        let timer = std::alloc::alloc_zeroed(timer_layout()) as *mut c_void;
        if timer.is_null() {
            return timer;
        }
        if uv_timer_init(event_loop, timer) != 0 {
            std::alloc::dealloc(timer as *mut u8, timer_layout());
            return ptr::null_mut();
        }
        *(timer as *mut sys::napi_env) = env;
        let slice = polyflake::INTERRUPT_SLICE.as_millis() as u64;
        uv_timer_start(timer, tick, slice, slice);
        uv_unref(timer);
        timer
    }
}

/// One wait on the libuv pool, counted while it lives: made on the JS thread when the work is
/// queued, dropped on the JS thread when it has completed (or was never queued).
pub(crate) struct PoolWait {
    env: sys::napi_env,
    /// The environment's stop flag, for the pool thread's hook.
    pub(crate) stop: Arc<AtomicBool>,
}

// SAFETY: `env` is only used in `Drop`, which runs on the env's own thread (napi-rs drops a task
// in its completion callback, or on the spot when queueing fails); the pool thread reads `stop`.
unsafe impl Send for PoolWait {}

thread_local! {
    /// The environments on this thread whose `process` has the 'exit' listener [`on_exit`].
    static EXIT_LISTENERS: RefCell<Vec<usize>> = const { RefCell::new(Vec::new()) };
}

/// `process.on('exit')` listener: `process.exit()` (in the main thread: Node then joins the libuv
/// pool's threads, so a pool wait would hold the exit up for as long as it lasts) cuts this
/// environment's pool waits.
unsafe extern "C" fn on_exit(
    env: sys::napi_env,
    _info: sys::napi_callback_info,
) -> sys::napi_value {
    WATCHES.with(|w| {
        if let Some(watch) = w.borrow().get(&(env as usize)) {
            watch.stop.store(true, Ordering::Relaxed);
        }
    });
    ptr::null_mut()
}

/// Add [`on_exit`] to `process`'s 'exit' listeners, once per environment (inside a call from JS).
fn listen_for_exit(env: sys::napi_env) {
    if EXIT_LISTENERS.with(|l| l.borrow().contains(&(env as usize))) {
        return;
    }
    let added = probe(env, |env| {
        let (mut global, mut process, mut on, mut event, mut f, mut out) = (
            ptr::null_mut(),
            ptr::null_mut(),
            ptr::null_mut(),
            ptr::null_mut(),
            ptr::null_mut(),
            ptr::null_mut(),
        );
        let (name, len) = (c"exit".as_ptr(), 4);
        // SAFETY: values of the scope `probe` opened, names NUL-terminated; each status checked.
        unsafe {
            let steps = [
                sys::napi_get_global(env, &mut global),
                sys::napi_get_named_property(env, global, c"process".as_ptr(), &mut process),
                sys::napi_get_named_property(env, process, c"on".as_ptr(), &mut on),
                sys::napi_create_string_latin1(env, name, len, &mut event),
                sys::napi_create_function(env, name, len, Some(on_exit), ptr::null_mut(), &mut f),
            ];
            if let Some(failed) = steps.into_iter().find(|s| *s != sys::Status::napi_ok) {
                return failed;
            }
            let args = [event, f];
            sys::napi_call_function(env, process, on, 2, args.as_ptr(), &mut out)
        }
    });
    if added == Some(sys::Status::napi_ok) {
        EXIT_LISTENERS.with(|l| l.borrow_mut().push(env as usize));
    } else {
        // A getter or Proxy on `process` that threw: leave the exception to no one (this is
        // best effort; the wait itself is still cut by a terminating Worker's timer).
        let mut pending = false;
        // SAFETY: on `env`'s thread, inside a call from JS.
        if unsafe { sys::napi_is_exception_pending(env, &mut pending) } == sys::Status::napi_ok
            && pending
        {
            let mut exc = ptr::null_mut();
            // SAFETY: as above.
            unsafe { sys::napi_get_and_clear_last_exception(env, &mut exc) };
        }
    }
}

/// Count one pool wait of `env` (on its JS thread, inside a call from JS), starting the watch
/// timer if none runs and listening for `process.exit()`.
pub(crate) fn pool_wait(env: sys::napi_env) -> PoolWait {
    listen_for_exit(env);
    let stop = WATCHES.with(|w| {
        let mut w = w.borrow_mut();
        let watch = w.entry(env as usize).or_insert_with(|| Watch {
            in_flight: 0,
            timer: ptr::null_mut(),
            stop: Arc::new(AtomicBool::new(false)),
        });
        watch.in_flight += 1;
        if watch.timer.is_null() {
            watch.timer = start(env);
        }
        Arc::clone(&watch.stop)
    });
    PoolWait { env, stop }
}

impl PoolWait {
    /// Run `f` (on a pool thread) with its waits cut once the environment is terminating.
    pub(crate) fn run<R>(&self, f: impl FnOnce() -> R) -> R {
        let stop = &self.stop;
        polyflake::interruptible(&|| stop.load(Ordering::Relaxed), f)
    }
}

impl Drop for PoolWait {
    fn drop(&mut self) {
        let _ = WATCHES.try_with(|w| {
            let mut w = w.borrow_mut();
            let Some(watch) = w.get_mut(&(self.env as usize)) else {
                return;
            };
            watch.in_flight -= 1;
            if watch.in_flight == 0 {
                if !watch.timer.is_null() {
                    // SAFETY: the timer `start` made, on its loop's thread; freed once closed.
                    unsafe {
                        uv_timer_stop(watch.timer);
                        uv_close(watch.timer, free_timer);
                    }
                }
                w.remove(&(self.env as usize));
            }
        });
    }
}
