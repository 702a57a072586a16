//! The core's errors as Java exceptions: one class per [`ErrorKind`], named after the kind
//! (`dev.polyflake.<Name>Exception`, a `PolyflakeException`), made from one string: the code,
//! the message and the error's fields ([`crate::encode_fields`]). The one mapping every call
//! uses.

use crate::wire::{encode_fields, SEP};
use jni::errors::Error as JniError;
use jni::strings::JNIString;
use jni::Env;
use polyflake::{Error, ErrorKind};

/// What an entry point's body returns: a core error is thrown as its Java exception, a JNI
/// error (an exception already pending) is left to the JVM.
pub(crate) enum Fail {
    /// A core error, to throw as its class.
    Core(Error),
    /// A JNI call failed (a Java exception may be pending).
    Jni(JniError),
}

impl From<Error> for Fail {
    fn from(e: Error) -> Fail {
        Fail::Core(e)
    }
}

impl From<JniError> for Fail {
    fn from(e: JniError) -> Fail {
        Fail::Jni(e)
    }
}

/// The exception's one constructor argument: `code SEP message SEP fields...`.
fn encoded(err: &Error) -> String {
    let mut text = format!("{}{SEP}{err}", err.kind().code());
    let fields = encode_fields(&err.fields());
    if !fields.is_empty() {
        text.push(SEP);
        text.push_str(&fields);
    }
    text
}

/// The Java class of a kind: `dev/polyflake/<Name>Exception`.
pub(crate) fn class_of(kind: ErrorKind) -> String {
    format!("dev/polyflake/{}Exception", kind.name())
}

/// Throw `err` as its Java exception (the base `PolyflakeException` if its class is missing,
/// which the Java tests rule out for every kind).
pub(crate) fn throw_core(env: &mut Env<'_>, err: &Error) {
    let text = JNIString::from(encoded(err));
    // `throw_new` reports the exception it leaves pending as an `Err`: success is checked by
    // finding the class first.
    match env.find_class(JNIString::from(class_of(err.kind()))) {
        Ok(class) => {
            let _ = env.throw_new(&class, &text);
        }
        Err(_) => {
            env.exception_clear();
            let _ = env.throw_new(JNIString::from("dev/polyflake/PolyflakeException"), &text);
        }
    }
}

/// Throw what `fail` stands for, unless a Java exception is pending already.
pub(crate) fn throw(env: &mut Env<'_>, fail: Fail) {
    if env.exception_check() {
        return;
    }
    match fail {
        Fail::Core(err) => throw_core(env, &err),
        Fail::Jni(err) => {
            let msg = JNIString::from(format!("polyflake: JNI call failed: {err}"));
            let _ = env.throw_new(JNIString::from("java/lang/IllegalStateException"), msg);
        }
    }
}

/// Run an entry point's `body`: its value, or (after throwing) `T::default()`. Panics are
/// caught by `with_env` and thrown as a `RuntimeException`, never unwound into the JVM.
pub(crate) fn run<'local, T: Default>(
    unowned: &mut jni::EnvUnowned<'local>,
    body: impl FnOnce(&mut Env<'local>) -> Result<T, Fail>,
) -> T {
    unowned
        .with_env(|env| -> Result<T, JniError> {
            match body(env) {
                Ok(v) => Ok(v),
                Err(fail) => {
                    throw(env, fail);
                    Ok(T::default())
                }
            }
        })
        .resolve::<jni::errors::ThrowRuntimeExAndDefault>()
}

/// The hot calls' shape (`nextId`, a batch): `body` needs no `Env`, so the `jni` crate's
/// per-call attachment bookkeeping that `run` does (an `AttachGuard` made and dropped twice, a
/// thread-local guard level through `__tls_get_addr`: about 40% of a strict `nextId`'s time in
/// `perf`) is skipped while the call succeeds; a core error takes `run`'s path to be thrown, and
/// a panic is caught here and re-raised inside `run`, which throws it as a `RuntimeException`.
pub(crate) fn run_fast<'local, T: Default>(
    unowned: &mut jni::EnvUnowned<'local>,
    body: impl FnOnce() -> Result<T, Error>,
) -> T {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(body)) {
        Ok(Ok(v)) => v,
        Ok(Err(e)) => run(unowned, |_| Err(Fail::Core(e))),
        Err(panic) => run(unowned, |_| std::panic::resume_unwind(panic)),
    }
}

/// Every kind as `Name:CODE,Name:CODE,...`, for the Java test that finds a class for each.
pub(crate) fn kinds() -> String {
    let all = ErrorKind::ALL
        .iter()
        .map(|k| format!("{}:{}", k.name(), k.code()));
    all.collect::<Vec<_>>().join(",")
}
