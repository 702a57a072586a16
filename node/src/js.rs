//! The value layer: JS values in and out through Node-API, and [`Fail`], what a conversion or a
//! core call fails with before it is thrown. Only types are converted here: a Number must be a
//! safe integer (so nothing is ever rounded), a bigint must be exact; whether a value is a valid
//! ID, node id, batch size or epoch is decided by the core. Going out, an integer is a Number
//! when a Number holds it exactly and a bigint otherwise.

use napi::bindgen_prelude::{
    BigInt, BigInt64ArraySlice, ClassInstance, Env, FromNapiValue, JavaScriptClassExt,
    MaybeTypeTag, Unknown,
};
use napi::{sys, JsValue};
use polyflake::Value;
use std::ffi::{c_void, CString};
use std::ptr;

/// `Number.MAX_SAFE_INTEGER`: the largest integer a JS Number holds exactly, with its neighbours.
const MAX_SAFE: f64 = 9_007_199_254_740_991.0;

/// Everything a binding call can fail with, before it is thrown (see `error.rs`).
#[derive(Debug)]
pub enum Fail {
    /// A rule of the core refused (configuration, IDs, clock faults, a closed generator).
    Core(polyflake::Error),
    /// A JS value of the wrong type: `TypeError`, code `ERR_INVALID_ARG_TYPE`.
    Type(String),
    /// A JS value that cannot be converted exactly: `RangeError`, code `ERR_OUT_OF_RANGE`.
    Range(String),
    /// A Node-API call failed (for example, a getter on an options object threw).
    Napi(napi::Error),
    /// Rust code panicked (a bug): an `Error` with code `INTERNAL_PANIC` and the panic's text.
    Panic(String),
}

impl From<polyflake::Error> for Fail {
    fn from(e: polyflake::Error) -> Self {
        Fail::Core(e)
    }
}

impl Fail {
    /// This failure about element `i` of a list (its message says which).
    pub fn in_element(self, i: usize) -> Fail {
        match self {
            Fail::Type(m) => Fail::Type(format!("{m} (element {i})")),
            Fail::Range(m) => Fail::Range(format!("{m} (element {i})")),
            Fail::Core(polyflake::Error::InvalidArgument { name, reason }) => {
                Fail::Core(polyflake::Error::InvalidArgument {
                    name,
                    reason: format!("{reason} (element {i})"),
                })
            }
            other => other,
        }
    }
}

impl From<napi::Error> for Fail {
    fn from(e: napi::Error) -> Self {
        Fail::Napi(e)
    }
}

impl std::fmt::Display for Fail {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Fail::Core(e) => e.fmt(f),
            Fail::Type(m) | Fail::Range(m) | Fail::Panic(m) => f.write_str(m),
            Fail::Napi(e) => f.write_str(&e.reason),
        }
    }
}

/// THE check of a Node-API status: `what` names the call in the error. Inlined (every hot call
/// makes one or two): the error is built out of line.
#[inline]
pub fn check(status: sys::napi_status, what: &str) -> Result<(), Fail> {
    if status == sys::Status::napi_ok {
        Ok(())
    } else {
        Err(failed(status, what))
    }
}

#[cold]
#[inline(never)]
fn failed(status: sys::napi_status, what: &str) -> Fail {
    Fail::Napi(napi::Error::new(
        napi::Status::from(status),
        format!("Node-API call failed: {what}"),
    ))
}

/// One Node-API call `$f(args)`, its status checked (`$what` names it in the error).
///
/// SAFETY, for every use: the arguments are the env of the current callback (on its own thread),
/// values of that call, NUL-terminated names, and pointers to live locals of the right type; a
/// call that needs more says so where it is made.
macro_rules! napi_call {
    ($what:expr => $f:ident($($arg:expr),* $(,)?)) => {
        $crate::js::check(unsafe { napi::sys::$f($($arg),*) }, $what)
    };
}

/// The value one Node-API call makes through its last argument (see [`napi_call!`]).
macro_rules! napi_make {
    ($env:expr, $what:expr => $f:ident($($arg:expr),* $(,)?)) => {{
        let (env, mut out) = ($env, std::ptr::null_mut());
        napi_call!($what => $f(env, $($arg,)* &mut out)).map(|()| $crate::js::Val::new(env, out))
    }};
}
pub(crate) use {napi_call, napi_make};

/// A conversion of a named value (`int_arg`, `narrow`, `string_arg`, ...).
pub type Conv<T> = fn(Val, &'static str) -> Result<T, Fail>;

/// A JS value in the env of the current call.
#[derive(Clone, Copy)]
pub struct Val {
    pub env: sys::napi_env,
    pub raw: sys::napi_value,
}

/// The JS type of a value, as `typeof` says (null apart).
pub use napi::ValueType as Ty;

/// True while a JS exception is on its way.
pub fn pending_exception(env: sys::napi_env) -> bool {
    let mut pending = false;
    napi_call!("" => napi_is_exception_pending(env, &mut pending)).is_ok() && pending
}

/// The pending JS exception, taken (so cleared), if there is one.
pub fn take_exception(env: sys::napi_env) -> Option<Val> {
    let take = || napi_make!(env, "take the exception" => napi_get_and_clear_last_exception());
    pending_exception(env).then(|| take().ok())?
}

impl Val {
    /// Wrap a raw value of `env`.
    pub fn new(env: sys::napi_env, raw: sys::napi_value) -> Val {
        Val { env, raw }
    }

    /// An argument of the current call.
    pub fn of(env: Env, v: &Unknown<'_>) -> Val {
        Val::new(env.raw(), v.raw())
    }

    /// An optional argument (`undefined` when it was not passed).
    pub fn opt(env: Env, v: &Option<Unknown<'_>>) -> Result<Val, Fail> {
        v.as_ref()
            .map_or_else(|| Val::undefined(env.raw()), |u| Ok(Val::of(env, u)))
    }

    /// `undefined`.
    pub fn undefined(env: sys::napi_env) -> Result<Val, Fail> {
        napi_make!(env, "undefined" => napi_get_undefined())
    }

    /// `null`.
    pub fn null(env: sys::napi_env) -> Result<Val, Fail> {
        napi_make!(env, "null" => napi_get_null())
    }

    /// `typeof` this value.
    pub fn ty(self) -> Result<Ty, Fail> {
        let mut t = 0;
        napi_call!("typeof" => napi_typeof(self.env, self.raw, &mut t)).map(|()| Ty::from(t))
    }

    /// True for `undefined`.
    pub fn is_undefined(self) -> Result<bool, Fail> {
        Ok(self.ty()? == Ty::Undefined)
    }

    /// True for a plain object: not an array, not a function, not null.
    pub fn is_object(self) -> Result<bool, Fail> {
        Ok(self.ty()? == Ty::Object && !self.is_array()?)
    }

    /// True for a JS array.
    pub fn is_array(self) -> Result<bool, Fail> {
        let mut yes = false;
        napi_call!("Array.isArray" => napi_is_array(self.env, self.raw, &mut yes)).map(|()| yes)
    }

    /// The Number's value (the caller checked the type).
    pub fn f64(self) -> Result<f64, Fail> {
        let mut v = 0.0;
        napi_call!("read a Number" => napi_get_value_double(self.env, self.raw, &mut v)).map(|()| v)
    }

    /// The bigint's exact value, or `None` when it does not fit an i128.
    pub fn bigint_i128(self) -> Result<Option<i128>, Fail> {
        // SAFETY: env and value come from the current callback; the value is a bigint.
        let big = unsafe { BigInt::from_napi_value(self.env, self.raw) }?;
        // The sign-magnitude words, read exactly: napi's own `get_i128` flags some values
        // wrongly, so the words are combined here (extra words must be zero).
        let magnitude: u128 = match big.words.as_slice() {
            [] => 0,
            [lo] => u128::from(*lo),
            [lo, hi, rest @ ..] if rest.iter().all(|w| *w == 0) => {
                u128::from(*lo) | (u128::from(*hi) << 64)
            }
            _ => return Ok(None),
        };
        Ok(if big.sign_bit {
            (magnitude <= i128::MAX as u128 + 1).then(|| (magnitude as i128).wrapping_neg())
        } else {
            i128::try_from(magnitude).ok()
        })
    }

    /// The bigint's sign (true for negative).
    fn bigint_negative(self) -> Result<bool, Fail> {
        // SAFETY: env and value come from the current callback; the value is a bigint.
        Ok(unsafe { BigInt::from_napi_value(self.env, self.raw) }?.sign_bit)
    }

    /// The string's UTF-8 text.
    pub fn string(self) -> Result<String, Fail> {
        // SAFETY: env and value come from the current callback; the value is a string.
        Ok(unsafe { String::from_napi_value(self.env, self.raw) }?)
    }

    /// What this value is, for messages about values of the wrong type.
    pub fn describe(self) -> String {
        match self.ty() {
            Ok(Ty::Number) => self.f64().map(|v| format!("the Number {v}")),
            Ok(Ty::String) => self.string().map(|s| format!("the string {s:?}")),
            Ok(Ty::Undefined) => Ok("undefined".into()),
            Ok(Ty::Null) => Ok("null".into()),
            Ok(Ty::Boolean) => Ok("a boolean".into()),
            Ok(Ty::Object) => Ok("an object".into()),
            Ok(Ty::Function) => Ok("a function".into()),
            Ok(Ty::BigInt) => Ok("a bigint".into()),
            Ok(t) => Ok(format!("a value of type {t}")),
            Err(e) => Err(e),
        }
        .unwrap_or_else(|_| "a value".into())
    }

    /// `String(value)`, best effort: a thrown value's text, a Number as JS writes it (`1e+21`,
    /// `Infinity`), a bigint's exact decimal digits.
    pub fn to_text(self) -> String {
        let s = napi_make!(self.env, "String()" => napi_coerce_to_string(self.raw));
        s.and_then(|s| s.string()).unwrap_or_else(|_| {
            take_exception(self.env);
            self.describe()
        })
    }

    /// The named property (`undefined` when absent).
    pub fn get(self, name: &str) -> Result<Val, Fail> {
        let key = cstring(name)?;
        napi_make!(self.env, "read a property" => napi_get_named_property(self.raw, key.as_ptr()))
    }

    /// The named property, `None` when it is `undefined`.
    pub fn get_opt(self, name: &str) -> Result<Option<Val>, Fail> {
        let v = self.get(name)?;
        Ok(if v.is_undefined()? { None } else { Some(v) })
    }

    /// Set `*to` from the named property through `conv` (given the name), when it is present.
    pub fn read<T>(self, name: &'static str, conv: Conv<T>, to: &mut T) -> Result<(), Fail> {
        if let Some(v) = self.get_opt(name)? {
            *to = conv(v, name)?;
        }
        Ok(())
    }

    /// As [`Val::read`], into an `Option`: `Some` of the value when it is present.
    pub fn read_some<T>(
        self,
        name: &'static str,
        conv: Conv<T>,
        to: &mut Option<T>,
    ) -> Result<(), Fail> {
        if let Some(v) = self.get_opt(name)? {
            *to = Some(conv(v, name)?);
        }
        Ok(())
    }

    /// Set a property.
    pub fn set(self, name: &str, v: Val) -> Result<(), Fail> {
        let key = cstring(name)?;
        let (env, key) = (self.env, key.as_ptr());
        napi_call!("set a property" => napi_set_named_property(env, self.raw, key, v.raw))
    }

    /// Set one property per field (a `Null` field is left out).
    pub fn set_fields<'a>(
        self,
        fields: impl IntoIterator<Item = (String, &'a Value)>,
    ) -> Result<(), Fail> {
        for (name, v) in fields {
            if let Some(v) = Val::value(self.env, v)? {
                self.set(&name, v)?;
            }
        }
        Ok(())
    }

    /// The elements of an array.
    pub fn elements(self) -> Result<Vec<Val>, Fail> {
        let mut n = 0;
        napi_call!("array length" => napi_get_array_length(self.env, self.raw, &mut n))?;
        let at = |i| napi_make!(self.env, "read an element" => napi_get_element(self.raw, i));
        (0..n).map(at).collect()
    }

    /// The own enumerable string keys of an object.
    pub fn keys(self) -> Result<Vec<String>, Fail> {
        use sys::{KeyCollectionMode as Mode, KeyConversion as Keys, KeyFilter as Filter};
        let (own, only) = (Mode::own_only, Filter::enumerable | Filter::skip_symbols);
        let (what, conv) = ("list an object's keys", Keys::numbers_to_strings);
        let names =
            napi_make!(self.env, what => napi_get_all_property_names(self.raw, own, only, conv))?;
        names.elements()?.into_iter().map(|k| k.string()).collect()
    }

    /// If this is a BigInt64Array, its elements (valid while the current call holds it).
    pub fn bigint64_array<'a>(self) -> Option<BigInt64ArraySlice<'a>> {
        // SAFETY: env and value come from the current callback; any other value is refused.
        unsafe { BigInt64ArraySlice::from_napi_value(self.env, self.raw) }.ok()
    }

    /// If this is a Uint8Array (a Buffer is one), its bytes (valid while the current call holds
    /// it).
    pub fn bytes<'a>(self) -> Result<Option<&'a [u8]>, Fail> {
        let mut is = false;
        napi_call!("is a typed array" => napi_is_typedarray(self.env, self.raw, &mut is))?;
        if !is {
            return Ok(None);
        }
        let (mut ty, mut len, mut data, mut offset) = (0, 0usize, ptr::null_mut(), 0usize);
        let none = ptr::null_mut();
        let info = (&mut ty, &mut len, &mut data, none, &mut offset);
        let (what, (a, b, c, d, e)) = ("read a typed array", info);
        napi_call!(what => napi_get_typedarray_info(self.env, self.raw, a, b, c, d, e))?;
        Ok(match (ty, len) {
            (sys::TypedarrayType::uint8_array, 0) => Some(&[]),
            // SAFETY: `data` points at `len` bytes of the array (already offset), alive while
            // the current call holds the array.
            (sys::TypedarrayType::uint8_array, _) if !data.is_null() => {
                Some(unsafe { std::slice::from_raw_parts(data as *const u8, len) })
            }
            (sys::TypedarrayType::uint8_array, _) => Some(&[]),
            _ => None,
        })
    }

    /// A string value.
    pub fn text(env: sys::napi_env, s: &str) -> Result<Val, Fail> {
        let (text, len) = (s.as_ptr().cast(), s.len() as isize);
        napi_make!(env, "create a string" => napi_create_string_utf8(text, len))
    }

    /// A string of ASCII text (a UUID's or ULID's), made without UTF-8 decoding.
    pub fn ascii(env: sys::napi_env, text: &[u8]) -> Result<Val, Fail> {
        let (text, len) = (text.as_ptr().cast(), text.len() as isize);
        napi_make!(env, "create a string" => napi_create_string_latin1(text, len))
    }

    /// An integer: a Number when a Number holds it exactly, a bigint otherwise.
    pub fn int(env: sys::napi_env, x: i128) -> Result<Val, Fail> {
        if x.unsigned_abs() <= MAX_SAFE as u128 {
            return Val::number(env, x as f64);
        }
        let m = x.unsigned_abs();
        let words = [m as u64, (m >> 64) as u64];
        let (sign, words) = (i32::from(x < 0), words.as_ptr());
        napi_make!(env, "create a bigint" => napi_create_bigint_words(sign, 2, words))
    }

    /// A Number.
    pub fn number(env: sys::napi_env, x: f64) -> Result<Val, Fail> {
        napi_make!(env, "create a Number" => napi_create_double(x))
    }

    /// An ID as a bigint.
    pub fn id(env: sys::napi_env, id: u64) -> Result<Val, Fail> {
        napi_make!(env, "create a bigint" => napi_create_bigint_uint64(id))
    }

    /// A `Date` at Unix ms `ms`; refused (`RangeError`) outside the range a Date holds (100
    /// million days either side of 1970), where it would be an Invalid Date.
    pub fn date(env: sys::napi_env, ms: i64) -> Result<Val, Fail> {
        const DATE_RANGE_MS: u64 = 8_640_000_000_000_000;
        if ms.unsigned_abs() > DATE_RANGE_MS {
            return Err(Fail::Range(format!(
                "the time {ms} ms is outside the range of a JavaScript Date"
            )));
        }
        napi_make!(env, "create a Date" => napi_create_date(ms as f64))
    }

    /// True for an object made by `Error` or one of its subclasses (`util.types.isNativeError`).
    pub fn is_error(self) -> Result<bool, Fail> {
        let mut yes = false;
        napi_call!("is an Error" => napi_is_error(self.env, self.raw, &mut yes)).map(|()| yes)
    }

    /// A plain object `{}`.
    pub fn object(env: sys::napi_env) -> Result<Val, Fail> {
        napi_make!(env, "create an object" => napi_create_object())
    }

    /// One of the core's values (`None` for `Null`: the property is left out).
    pub fn value(env: sys::napi_env, v: &Value) -> Result<Option<Val>, Fail> {
        Ok(Some(match v {
            Value::Int(i) => Val::int(env, *i)?,
            Value::Float(f) => Val::number(env, *f)?,
            Value::Bool(b) => napi_make!(env, "create a boolean" => napi_get_boolean(*b))?,
            Value::Text(t) => Val::text(env, t)?,
            Value::Null => return Ok(None),
            Value::Fields(fields) => Val::record(env, fields)?,
        }))
    }

    /// An object of the core's named fields (a health snapshot), with camelCase keys.
    pub fn record(env: sys::napi_env, fields: &[(&str, Value)]) -> Result<Val, Fail> {
        let obj = Val::object(env)?;
        obj.set_fields(fields.iter().map(|(k, v)| (camel(k), v)))?;
        Ok(obj)
    }

    /// A JS array of `items`.
    pub fn array(
        env: sys::napi_env,
        items: impl ExactSizeIterator<Item = Result<Val, Fail>>,
    ) -> Result<Val, Fail> {
        let n = items.len();
        let array = napi_make!(env, "create an array" => napi_create_array_with_length(n))?;
        for (i, item) in items.enumerate() {
            napi_call!("set an element" => napi_set_element(env, array.raw, i as u32, item?.raw))?;
        }
        Ok(array)
    }

    /// A new BigInt64Array of `n` IDs that `fill` writes in place (no per-ID allocation).
    pub fn id_array(
        env: sys::napi_env,
        n: usize,
        fill: impl FnOnce(&mut [u64]) -> Result<(), Fail>,
    ) -> Result<Val, Fail> {
        let mut data: *mut c_void = ptr::null_mut();
        let what = "allocate an ArrayBuffer for the IDs";
        let buffer = napi_make!(env, what => napi_create_arraybuffer(n * 8, &mut data))?;
        filled(
            data,
            n,
            "the ArrayBuffer's memory is not 8-byte aligned",
            fill,
        )?;
        let ty = sys::TypedarrayType::bigint64_array;
        napi_make!(env, "create the BigInt64Array" => napi_create_typedarray(ty, n, buffer.raw, 0))
    }

    /// 128-bit IDs as one new Buffer, 16 bytes big-endian each.
    pub fn bytes_of(env: sys::napi_env, ids: &[u128]) -> Result<Val, Fail> {
        let (mut data, n) = (ptr::null_mut(), ids.len() * 16);
        let buffer = napi_make!(env, "allocate a Buffer" => napi_create_buffer(n, &mut data))?;
        filled(data, n, "the Buffer has no memory", |out: &mut [u8]| {
            let chunks = out.chunks_exact_mut(16).zip(ids);
            chunks.for_each(|(chunk, id)| chunk.copy_from_slice(&id.to_be_bytes()));
            Ok(())
        })
        .map(|()| buffer)
    }

    /// This value as an instance of the napi class `C`, if it is one.
    pub fn instance<'a, C>(self, env: &Env) -> Result<Option<ClassInstance<'a, C>>, Fail>
    where
        C: JavaScriptClassExt + MaybeTypeTag + 'a,
    {
        if !C::instance_of(env, &self.unknown())? {
            return Ok(None);
        }
        // SAFETY: checked to be a `C` just above.
        Ok(Some(unsafe {
            ClassInstance::<C>::from_napi_value(self.env, self.raw)
        }?))
    }

    /// As napi-rs's `Unknown` (to return from a `#[napi]` function).
    pub fn unknown<'a>(self) -> Unknown<'a> {
        // SAFETY: a value of the current call.
        unsafe { Unknown::from_raw_unchecked(self.env, self.raw) }
    }
}

/// Let `fill` write `n` elements at `data`, the memory of a buffer the current call just made
/// (`bad` says what is wrong if that memory is missing or not aligned).
fn filled<T>(
    data: *mut c_void,
    n: usize,
    bad: &str,
    fill: impl FnOnce(&mut [T]) -> Result<(), Fail>,
) -> Result<(), Fail> {
    if n == 0 {
        return Ok(());
    }
    if data.is_null() || !(data as usize).is_multiple_of(std::mem::align_of::<T>()) {
        return Err(Fail::Range(bad.into()));
    }
    // SAFETY: `data` points at `n` writable, aligned elements of a buffer the current handle
    // scope keeps alive; nothing else sees it yet.
    fill(unsafe { std::slice::from_raw_parts_mut(data as *mut T, n) })
}

fn cstring(name: &str) -> Result<CString, Fail> {
    CString::new(name).map_err(|_| Fail::Type(format!("bad property name {name:?}")))
}

/// The core's snake_case field names as JS's camelCase: `last_issued_ms` -> `lastIssuedMs`.
pub fn camel(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let mut upper = false;
    for c in name.chars() {
        match c {
            '_' => upper = true,
            c if upper => {
                out.extend(c.to_uppercase());
                upper = false;
            }
            c => out.push(c),
        }
    }
    out
}

/// An integer setting or argument as the core's wide type (the core checks its range). Every
/// refusal echoes what the caller sent: a Number as JS writes it, a bigint too wide for any
/// setting in its exact decimal digits (the core's `too_wide`, never a clamped bound).
pub fn int_arg(v: Val, name: &'static str) -> Result<i128, Fail> {
    match v.ty()? {
        Ty::Number => {
            let x = v.f64()?;
            if !x.is_finite() || x.fract() != 0.0 {
                return Err(Fail::Type(format!(
                    "{name} must be an integer (a Number or a bigint), got {}",
                    v.to_text()
                )));
            }
            if x.abs() > MAX_SAFE {
                return Err(Fail::Range(format!(
                    "{name} = {} is not a safe integer: a Number above 2^53 may already be rounded; pass a bigint",
                    v.to_text()
                )));
            }
            Ok(x as i128)
        }
        Ty::BigInt => match v.bigint_i128()? {
            Some(x) => Ok(x),
            None => Err(polyflake::Error::too_wide(name, &v.to_text()).into()),
        },
        _ => Err(Fail::Type(format!(
            "{name} must be an integer (a Number or a bigint), got {}",
            v.describe()
        ))),
    }
}

/// An integer argument that must fit the Rust type `T` the core takes (the core checks the
/// range it allows), refused with its exact value: a negative one for an unsigned setting as
/// out of range (`ERR_OUT_OF_RANGE`, naming the range), one too wide for `T` through the core's
/// `too_wide` (`epochMs: 2n ** 63n`), never a clamped bound.
pub fn narrow<T: TryFrom<i128>>(v: Val, name: &'static str) -> Result<T, Fail> {
    let x = int_arg(v, name)?;
    T::try_from(x).map_err(|_| {
        if x < 0 && T::try_from(-1).is_err() {
            let range = match std::any::type_name::<T>() {
                "u8" => "[0, 2^8)",
                "u32" => "[0, 2^32)",
                "u64" => "[0, 2^64)",
                _ => "the non-negative integers",
            };
            Fail::Range(format!("{name} = {x} is not in {range}"))
        } else {
            polyflake::Error::too_wide(name, &x.to_string()).into()
        }
    })
}

/// A Number argument (any value; the core checks it).
pub fn f64_arg(v: Val, name: &str) -> Result<f64, Fail> {
    match v.ty()? {
        Ty::Number => v.f64(),
        _ => Err(Fail::Type(format!(
            "{name} must be a Number, got {}",
            v.describe()
        ))),
    }
}

/// A string argument.
pub fn string_arg(v: Val, name: &str) -> Result<String, Fail> {
    if v.ty()? != Ty::String {
        return Err(Fail::Type(format!(
            "{name} must be a string, got {}",
            v.describe()
        )));
    }
    v.string()
}

/// A boolean argument (no other type: `heal: 1` is a TypeError, not a truthy guess).
pub fn bool_arg(v: Val, name: &str) -> Result<bool, Fail> {
    if v.ty()? != Ty::Boolean {
        return Err(Fail::Type(format!(
            "{name} must be a boolean, got {}",
            v.describe()
        )));
    }
    let mut b = false;
    napi_call!("read a boolean" => napi_get_value_bool(v.env, v.raw, &mut b)).map(|()| b)
}

/// A batch size: an integer (a safe Number or a bigint) that the core's `batch_len` accepts
/// (0 to `MAX_BATCH`).
pub fn count_arg(v: Val) -> Result<usize, Fail> {
    Ok(polyflake::batch_len(int_arg(v, "count")?)?)
}

/// An ID: a bigint or a decimal string, never a Number (which may already have been rounded).
pub fn id_arg(v: Val) -> Result<u64, Fail> {
    match v.ty()? {
        Ty::BigInt => match v.bigint_i128()? {
            Some(x) => Ok(polyflake::id_from_i128(x)?),
            // Beyond i128: refused with its exact digits (never a clamped bound).
            None => Err(Fail::Core(polyflake::Error::InvalidId {
                input: v.to_text(),
                reason: if v.bigint_negative()? {
                    "an ID is never negative"
                } else {
                    "an ID must be below 2^63"
                },
            })),
        },
        Ty::String => Ok(polyflake::parse_id(&v.string()?)?),
        Ty::Number => Err(Fail::Type(format!(
            "an ID must be a bigint or a decimal string, not a Number ({} here): Numbers above 2^53 are silently rounded, so 123n or '123' is required",
            v.f64()?
        ))),
        _ => Err(Fail::Type(format!(
            "an ID must be a bigint or a decimal string, got {}",
            v.describe()
        ))),
    }
}
