//! Converting JS values into the Rust types the core takes. Only types are converted here: a
//! Number must be a safe integer (so nothing is ever rounded), a bigint must be exact; whether a
//! value is a valid ID, node id, batch size or epoch is decided by the core.

use crate::errors::Fail;
use napi::sys;
use std::ffi::CString;
use std::ptr;

/// `Number.MAX_SAFE_INTEGER`: the largest integer a JS Number holds exactly, with its neighbours.
const MAX_SAFE: f64 = 9_007_199_254_740_991.0;

/// A JS value in the env of the current call.
#[derive(Clone, Copy)]
pub struct Val {
    pub env: sys::napi_env,
    pub raw: sys::napi_value,
}

/// The JS type of a value, as `typeof` (plus null and arrays) says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ty {
    Undefined,
    Null,
    Boolean,
    Number,
    String,
    Symbol,
    Object,
    Function,
    External,
    BigInt,
}

fn check(status: sys::napi_status, what: &str) -> Result<(), Fail> {
    if status == sys::Status::napi_ok {
        Ok(())
    } else {
        Err(Fail::Napi(napi::Error::new(
            napi::Status::from(status),
            format!("Node-API call failed: {what}"),
        )))
    }
}

impl Val {
    /// Wrap a raw value of `env`.
    pub fn new(env: sys::napi_env, raw: sys::napi_value) -> Val {
        Val { env, raw }
    }

    /// `typeof` this value.
    pub fn ty(self) -> Result<Ty, Fail> {
        let mut t = 0;
        // SAFETY: env and value come from the current callback.
        check(
            unsafe { sys::napi_typeof(self.env, self.raw, &mut t) },
            "typeof",
        )?;
        Ok(match t {
            sys::ValueType::napi_undefined => Ty::Undefined,
            sys::ValueType::napi_null => Ty::Null,
            sys::ValueType::napi_boolean => Ty::Boolean,
            sys::ValueType::napi_number => Ty::Number,
            sys::ValueType::napi_string => Ty::String,
            sys::ValueType::napi_symbol => Ty::Symbol,
            sys::ValueType::napi_function => Ty::Function,
            sys::ValueType::napi_external => Ty::External,
            sys::ValueType::napi_bigint => Ty::BigInt,
            _ => Ty::Object,
        })
    }

    /// True for `undefined`.
    pub fn is_undefined(self) -> Result<bool, Fail> {
        Ok(self.ty()? == Ty::Undefined)
    }

    /// The Number's value (the caller checked the type).
    pub fn f64(self) -> Result<f64, Fail> {
        let mut v = 0.0;
        // SAFETY: env and value come from the current callback.
        check(
            unsafe { sys::napi_get_value_double(self.env, self.raw, &mut v) },
            "read a Number",
        )?;
        Ok(v)
    }

    /// The bigint's exact value, or `None` when it does not fit an i128.
    pub fn bigint_i128(self) -> Result<Option<i128>, Fail> {
        // SAFETY: env and value come from the current callback; the value is a bigint.
        let big = unsafe {
            <napi::bindgen_prelude::BigInt as napi::bindgen_prelude::FromNapiValue>::from_napi_value(
                self.env, self.raw,
            )
        }?;
        // The sign-magnitude words, read exactly: napi's own `get_i128` flags some values
        // wrongly, so the two words are combined here.
        let magnitude: u128 = match big.words.as_slice() {
            [] => 0,
            [lo] => u128::from(*lo),
            [lo, hi] => u128::from(*lo) | (u128::from(*hi) << 64),
            // More words: exact only if the extra ones are zero.
            [lo, hi, rest @ ..] if rest.iter().all(|w| *w == 0) => {
                u128::from(*lo) | (u128::from(*hi) << 64)
            }
            _ => return Ok(None),
        };
        Ok(if big.sign_bit {
            if magnitude <= i128::MAX as u128 + 1 {
                Some((magnitude as i128).wrapping_neg())
            } else {
                None
            }
        } else {
            i128::try_from(magnitude).ok()
        })
    }

    /// The string's UTF-8 text.
    pub fn string(self) -> Result<String, Fail> {
        // SAFETY: env and value come from the current callback; the value is a string.
        Ok(unsafe {
            <String as napi::bindgen_prelude::FromNapiValue>::from_napi_value(self.env, self.raw)
        }?)
    }

    /// `String(value)`, for messages about values of the wrong type.
    pub fn describe(self) -> String {
        let ty = match self.ty() {
            Ok(t) => t,
            Err(_) => return "a value".into(),
        };
        match ty {
            Ty::Number => match self.f64() {
                Ok(v) => format!("the Number {v}"),
                Err(_) => "a Number".into(),
            },
            Ty::String => match self.string() {
                Ok(s) => format!("the string {s:?}"),
                Err(_) => "a string".into(),
            },
            Ty::BigInt => "a bigint".into(),
            Ty::Undefined => "undefined".into(),
            Ty::Null => "null".into(),
            Ty::Boolean => "a boolean".into(),
            Ty::Symbol => "a symbol".into(),
            Ty::Function => "a function".into(),
            Ty::External => "an external".into(),
            Ty::Object => "an object".into(),
        }
    }

    /// The named property (`undefined` when absent).
    pub fn get(self, name: &str) -> Result<Val, Fail> {
        let key =
            CString::new(name).map_err(|_| Fail::Type(format!("bad property name {name:?}")))?;
        let mut out = ptr::null_mut();
        // SAFETY: env and object come from the current callback; `key` is NUL-terminated.
        check(
            unsafe { sys::napi_get_named_property(self.env, self.raw, key.as_ptr(), &mut out) },
            "read a property",
        )?;
        Ok(Val::new(self.env, out))
    }

    /// The element at `index` of an array.
    pub fn index(self, index: u32) -> Result<Val, Fail> {
        let mut out = ptr::null_mut();
        // SAFETY: env and array come from the current callback.
        check(
            unsafe { sys::napi_get_element(self.env, self.raw, index, &mut out) },
            "read an element",
        )?;
        Ok(Val::new(self.env, out))
    }

    /// True for a JS array.
    pub fn is_array(self) -> Result<bool, Fail> {
        let mut yes = false;
        // SAFETY: env and value come from the current callback.
        check(
            unsafe { sys::napi_is_array(self.env, self.raw, &mut yes) },
            "Array.isArray",
        )?;
        Ok(yes)
    }

    /// The length of an array.
    pub fn array_len(self) -> Result<u32, Fail> {
        let mut n = 0;
        // SAFETY: env and array come from the current callback.
        check(
            unsafe { sys::napi_get_array_length(self.env, self.raw, &mut n) },
            "array length",
        )?;
        Ok(n)
    }

    /// The own enumerable string keys of an object.
    pub fn keys(self) -> Result<Vec<String>, Fail> {
        let mut names = ptr::null_mut();
        // SAFETY: env and object come from the current callback.
        check(
            unsafe {
                sys::napi_get_all_property_names(
                    self.env,
                    self.raw,
                    sys::KeyCollectionMode::own_only,
                    sys::KeyFilter::enumerable | sys::KeyFilter::skip_symbols,
                    sys::KeyConversion::numbers_to_strings,
                    &mut names,
                )
            },
            "list an object's keys",
        )?;
        let names = Val::new(self.env, names);
        (0..names.array_len()?)
            .map(|i| names.index(i)?.string())
            .collect()
    }

    /// If this is a BigInt64Array, its elements.
    pub fn bigint64_array(self) -> Result<Option<&'static [i64]>, Fail> {
        let mut is_typed = false;
        // SAFETY: env and value come from the current callback.
        check(
            unsafe { sys::napi_is_typedarray(self.env, self.raw, &mut is_typed) },
            "is typed array",
        )?;
        if !is_typed {
            return Ok(None);
        }
        let mut kind = 0;
        let mut len = 0usize;
        let mut data = ptr::null_mut();
        let mut buffer = ptr::null_mut();
        let mut offset = 0usize;
        // SAFETY: as above; the value is a typed array.
        check(
            unsafe {
                sys::napi_get_typedarray_info(
                    self.env,
                    self.raw,
                    &mut kind,
                    &mut len,
                    &mut data,
                    &mut buffer,
                    &mut offset,
                )
            },
            "read a typed array",
        )?;
        if kind != sys::TypedarrayType::bigint64_array {
            return Ok(None);
        }
        if len == 0 || data.is_null() {
            return Ok(Some(&[]));
        }
        // SAFETY: a BigInt64Array's data is `len` aligned i64 values, alive while the array is
        // (the caller uses the slice only within the current call, which holds the array).
        Ok(Some(unsafe {
            std::slice::from_raw_parts(data as *const i64, len)
        }))
    }
}

/// How an integer setting is named in messages.
fn int_value(v: Val, name: &str) -> Result<i128, Fail> {
    match v.ty()? {
        Ty::Number => {
            let x = v.f64()?;
            if !x.is_finite() || x.fract() != 0.0 {
                return Err(Fail::Type(format!(
                    "{name} must be an integer (a Number or a bigint), got {x}"
                )));
            }
            if x.abs() > MAX_SAFE {
                return Err(Fail::Range(format!(
                    "{name} = {x} is not a safe integer: a Number above 2^53 may already be rounded; pass a bigint"
                )));
            }
            Ok(x as i128)
        }
        Ty::BigInt => v
            .bigint_i128()?
            .ok_or_else(|| Fail::Range(format!("{name} is a bigint far outside any valid range"))),
        _ => Err(Fail::Type(format!(
            "{name} must be an integer (a Number or a bigint), got {}",
            v.describe()
        ))),
    }
}

/// An integer argument as the core's wide type (the core checks its range).
pub fn int_arg(v: Val, name: &str) -> Result<i128, Fail> {
    int_value(v, name)
}

/// An integer argument that must fit an i64 (Unix milliseconds and the like).
pub fn i64_arg(v: Val, name: &str) -> Result<i64, Fail> {
    let x = int_value(v, name)?;
    i64::try_from(x).map_err(|_| Fail::Range(format!("{name} = {x} does not fit a 64-bit integer")))
}

/// An integer argument that must fit a u32 (bit counts).
pub fn u32_arg(v: Val, name: &str) -> Result<u32, Fail> {
    let x = int_value(v, name)?;
    u32::try_from(x).map_err(|_| Fail::Range(format!("{name} = {x} is not in [0, 2^32)")))
}

/// An integer argument that must fit a u64 (durations in ms; the core checks their range).
pub fn u64_arg(v: Val, name: &str) -> Result<u64, Fail> {
    let x = int_value(v, name)?;
    u64::try_from(x).map_err(|_| Fail::Range(format!("{name} = {x} is not in [0, 2^64)")))
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

/// An ID: a bigint or a decimal string, never a Number (which may already have been rounded).
pub fn id_arg(v: Val) -> Result<u64, Fail> {
    match v.ty()? {
        Ty::BigInt => match v.bigint_i128()? {
            Some(x) => Ok(polyflake::id_from_i128(x)?),
            // Beyond i128: saturate by sign so the core's range check refuses it.
            None => {
                let negative = unsafe_sign(v)?;
                Ok(polyflake::id_from_i128(if negative { i128::MIN } else { i128::MAX })?)
            }
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

fn unsafe_sign(v: Val) -> Result<bool, Fail> {
    // SAFETY: env and value come from the current callback; the value is a bigint.
    let big = unsafe {
        <napi::bindgen_prelude::BigInt as napi::bindgen_prelude::FromNapiValue>::from_napi_value(
            v.env, v.raw,
        )
    }?;
    Ok(big.sign_bit)
}
