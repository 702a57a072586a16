//! What the service reads from a request, as plain functions of the request's bytes: the
//! Content-Type check, the JSON body (refusing a repeated key), `{"count": n}` for
//! `POST /v1/ids`, `{"advance_ms": n}` / `{"offset_ms": n}` for the test clock, and the ID in
//! `GET /v1/ids/{id}`. The handlers in `serve.rs` call these, and so do the fuzz targets,
//! so what is fuzzed is exactly what answers.
//!
//! Every refusal is an [`ApiError`]: a 4xx status, a stable code and a message.
//!
//! ## Decisions
//!
//! - **A repeated JSON key** (`{"count": 5, "count": 6}`, at any depth, also spelled with
//!   escapes) is `400 DUPLICATE_KEY`: serde_json keeps the last, another parser the first, and a
//!   request must not mean two things.
//! - **A count written with an integral value in any form** (`5.0`, `5e0`) is accepted, read
//!   exactly from its digits, because JSON Schema calls `5.0` an integer and schemathesis sends
//!   it (it was refused, and a schemathesis hook hid that; the hook is gone); `5.5` is refused.
//! - **A format name is exact** (`"ULID"`, `"uuid"`, `null` are 400 `INVALID_FORMAT`).

use crate::error::http_status;
use crate::timeid::IdFormat;
use axum::http::{HeaderValue, StatusCode};
use serde::de::{self, DeserializeSeed, Deserializer as _, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};
use std::fmt;

/// The largest request body accepted, in bytes.
pub const BODY_LIMIT: usize = 16 * 1024;

/// The test clock's offset may not leave this range (ten years either way).
pub const MAX_TEST_OFFSET_MS: i64 = 10 * 366 * 86_400_000;

/// An error answer: its status, a stable upper-case code and a message for people.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiError {
    /// The HTTP status (4xx for a bad request, 503 while the generator refuses).
    pub status: StatusCode,
    /// A stable code such as `INVALID_COUNT` or the core's `CLOCK_MOVED_BACKWARDS`.
    pub code: String,
    /// What was wrong, in words.
    pub message: String,
}

impl ApiError {
    /// An error with this status, code and message.
    pub fn new(status: StatusCode, code: &str, message: impl Into<String>) -> ApiError {
        ApiError {
            status,
            code: code.to_string(),
            message: message.into(),
        }
    }

    /// A core error: the status of its category, the core's code and message.
    pub fn core(e: &polyflake::Error) -> ApiError {
        ApiError::new(http_status(e.kind()), e.code(), e.to_string())
    }

    fn bad(code: &str, message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::BAD_REQUEST, code, message)
    }

    /// An error coded after its status's reason (405: `METHOD_NOT_ALLOWED`), with `message` or,
    /// when that is empty, the reason itself.
    pub fn from_status(status: StatusCode, message: String) -> ApiError {
        let reason = status.canonical_reason().unwrap_or("error");
        let code = reason.to_ascii_uppercase().replace([' ', '-'], "_");
        let message = if message.is_empty() {
            reason.to_string()
        } else {
            message
        };
        ApiError::new(status, &code, message)
    }

    /// The one error body: `{"error": {"code": ..., "message": ...}}`.
    pub fn body(&self) -> String {
        serde_json::json!({"error": {"code": self.code, "message": self.message}}).to_string()
    }
}

impl fmt::Display for ApiError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} {}: {}",
            self.status.as_u16(),
            self.code,
            self.message
        )
    }
}

/// True when a Content-Type names JSON: `application/json`, any case, parameters allowed.
pub fn is_json(value: Option<&HeaderValue>) -> bool {
    value
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|essence| essence.trim().eq_ignore_ascii_case("application/json"))
}

/// The body as a JSON object, or the 4xx that explains why not; `None` for an empty body.
///
/// A non-empty body needs `Content-Type: application/json` (415 otherwise), a Content-Type
/// that is there must be JSON even for an empty body, the text must be one JSON value with
/// nothing after it (400 `MALFORMED_JSON`), no object in it may repeat a key (400
/// `DUPLICATE_KEY`: two parsers in front of the service could otherwise read one request two
/// ways), and the value must be an object (400 `INVALID_REQUEST`).
pub fn json_object(
    content_type: Option<&HeaderValue>,
    body: &[u8],
) -> Result<Option<Map<String, Value>>, ApiError> {
    let wrong_type = match content_type {
        Some(ct) if !is_json(Some(ct)) => format!(
            "Content-Type must be application/json, not {:?}",
            String::from_utf8_lossy(ct.as_bytes())
        ),
        None if !body.is_empty() => "a request body needs Content-Type: application/json".into(),
        _ => String::new(),
    };
    if !wrong_type.is_empty() {
        let status = StatusCode::UNSUPPORTED_MEDIA_TYPE;
        return Err(ApiError::new(status, "UNSUPPORTED_MEDIA_TYPE", wrong_type));
    }
    if body.is_empty() {
        return Ok(None);
    }
    match parse_json_unique_keys(body) {
        Ok(Value::Object(map)) => Ok(Some(map)),
        Ok(_) => Err(ApiError::bad(
            "INVALID_REQUEST",
            "the body must be a JSON object such as {\"count\": 100}",
        )),
        Err(JsonError::Duplicate(e)) => Err(ApiError::bad(
            "DUPLICATE_KEY",
            format!("the body repeats a key: {e}"),
        )),
        Err(JsonError::Syntax(e)) => Err(ApiError::bad(
            "MALFORMED_JSON",
            match number_out_of_range(body, &e) {
                Some(sent) => format!(
                    "the body has a number past what the service reads (about +/-1.8e308): {sent} ({e})"
                ),
                None => format!("the body is not valid JSON: {e}"),
            },
        )),
    }
}

/// The text of the number serde_json stopped at as out of range (`1e400`: JSON allows it, an
/// `f64` does not), as the client wrote it; `None` for any other error.
fn number_out_of_range<'a>(body: &'a [u8], e: &serde_json::Error) -> Option<&'a str> {
    if !e.to_string().starts_with("number out of range") {
        return None;
    }
    // serde_json's line and column (in bytes, from 1) are those of the number's last byte.
    let line_start = if e.line() <= 1 {
        0
    } else {
        body.iter()
            .enumerate()
            .filter(|(_, b)| **b == b'\n')
            .nth(e.line() - 2)?
            .0
            + 1
    };
    let end = (line_start + e.column()).min(body.len());
    let is_number_byte = |b: &u8| b.is_ascii_digit() || b"+-.eE".contains(b);
    let start = body[..end]
        .iter()
        .rposition(|b| !is_number_byte(b))
        .map_or(0, |i| i + 1);
    std::str::from_utf8(&body[start..end])
        .ok()
        .filter(|t| !t.is_empty())
}

/// Why [`parse_json_unique_keys`] refused a text.
#[derive(Debug)]
pub enum JsonError {
    /// Not JSON (or more than one value, or nested deeper than serde_json's limit of 128).
    Syntax(serde_json::Error),
    /// Valid JSON in which an object repeats a key (at any depth).
    Duplicate(serde_json::Error),
}

/// Parse one JSON value like `serde_json::from_slice::<Value>`, except that an object with a
/// repeated key (after unescaping: `{"a":1,"\u0061":2}` repeats `a`) is refused instead of
/// keeping the last value.
/// A text that is not JSON is [`JsonError::Syntax`] even when a key repeats before the point
/// where it stops being JSON (`{"a":1,"a":2} x`): not JSON is the first thing wrong with it.
pub fn parse_json_unique_keys(text: &[u8]) -> Result<Value, JsonError> {
    let parsed = (|| {
        let mut de = serde_json::Deserializer::from_slice(text);
        let value = de.deserialize_any(UniqueKeys)?;
        de.end()?;
        Ok::<Value, serde_json::Error>(value)
    })();
    parsed.map_err(|e| {
        // The visitor accepts every JSON type, so the only data error it raises is a repeated
        // key; the parse stopped there, so check the rest is JSON before saying so.
        if e.classify() != serde_json::error::Category::Data {
            return JsonError::Syntax(e);
        }
        match serde_json::from_slice::<de::IgnoredAny>(text) {
            Ok(_) => JsonError::Duplicate(e),
            Err(syntax) => JsonError::Syntax(syntax),
        }
    })
}

/// Builds a `serde_json::Value`, refusing repeated object keys.
struct UniqueKeys;

/// Visitor methods that take a scalar as `serde_json::Value` does (`Value::from`: a
/// non-finite float, which serde_json never yields, would be `Null`).
macro_rules! scalars {
    ($($visit:ident($t:ty)),*) => {
        $(fn $visit<E>(self, v: $t) -> Result<Value, E> {
            Ok(Value::from(v))
        })*
    };
}

impl<'de> DeserializeSeed<'de> for UniqueKeys {
    type Value = Value;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(UniqueKeys)
    }
}

impl<'de> Visitor<'de> for UniqueKeys {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }
    scalars!(
        visit_bool(bool),
        visit_i64(i64),
        visit_u64(u64),
        visit_f64(f64),
        visit_str(&str),
        visit_string(String)
    );
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut out = Vec::new();
        while let Some(v) = seq.next_element_seed(UniqueKeys)? {
            out.push(v);
        }
        Ok(Value::Array(out))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut out = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            if out.contains_key(&key) {
                return Err(de::Error::custom(format_args!("key {key:?} appears twice")));
            }
            let value = map.next_value_seed(UniqueKeys)?;
            out.insert(key, value);
        }
        Ok(Value::Object(out))
    }
}

/// The JSON text of the top-level field `key` of `body` exactly as the client wrote it (a number
/// keeps its digits: `18446744073709551616`, `1e3`, `-0`), so a refusal can echo what was sent
/// rather than serde_json's reading of it (`1.8446744073709552e19`). Only error paths call this.
fn sent_text(body: &[u8], key: &str, value: &Value) -> String {
    serde_json::from_slice::<std::collections::HashMap<String, Box<serde_json::value::RawValue>>>(
        body,
    )
    .ok()
    .and_then(|m| m.get(key).map(|raw| raw.get().trim().to_string()))
    .unwrap_or_else(|| value.to_string())
}

/// An integer field's value, read from the text the client sent (`sent`, see `sent_text`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Integer {
    /// An integer that fits `i128`.
    Fits(i128),
    /// An integer with too many digits for `i128`: out of every range the service accepts.
    TooWide,
}

/// The integer that the text of a JSON number (`sent`) is, when its value has no fractional
/// part, however it is written: `3664`, `3664.0`, `3.664e3`, `1E3`, `-0.0`. The value is read
/// from the digits exactly, never through an `f64` (`9007199254740993.0` is
/// 9,007,199,254,740,993). `None` for a value with a fractional part (`3664.5`, `1e-400`) or a
/// text that is not a JSON number.
///
/// ```
/// use polyflake_service::request::{integral_number, Integer};
/// assert_eq!(integral_number("3664.0"), Some(Integer::Fits(3664)));
/// assert_eq!(integral_number("36.64e2"), Some(Integer::Fits(3664)));
/// assert_eq!(integral_number("3664.5"), None);
/// assert_eq!(integral_number("1e300"), Some(Integer::TooWide));
/// ```
pub fn integral_number(sent: &str) -> Option<Integer> {
    let (negative, rest) = match sent.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, sent),
    };
    let (mantissa, exponent) = match rest.find(['e', 'E']) {
        Some(i) => (&rest[..i], Some(&rest[i + 1..])),
        None => (rest, None),
    };
    let (whole, fraction) = match mantissa.split_once('.') {
        Some((w, f)) => (w, Some(f)),
        None => (mantissa, None),
    };
    let all_digits = |t: &str| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit());
    if !all_digits(whole) || fraction.is_some_and(|f| !all_digits(f)) {
        return None;
    }
    let fraction = fraction.unwrap_or("");
    // The value is digits x 10^scale.
    let digits: String = [whole, fraction].concat();
    let digits = digits.trim_start_matches('0');
    let significant = digits.trim_end_matches('0');
    if significant.is_empty() {
        // Zero, whatever the exponent (if the exponent is well formed).
        return match exponent {
            Some(e) if !all_digits(e.strip_prefix(['+', '-']).unwrap_or(e)) => None,
            _ => Some(Integer::Fits(0)),
        };
    }
    let trailing_zeros = (digits.len() - significant.len()) as i128;
    let exponent: i128 = match exponent {
        None => 0,
        Some(e) => {
            let magnitude = e.strip_prefix(['+', '-']).unwrap_or(e);
            if !all_digits(magnitude) {
                return None;
            }
            // Past 30 digits only the sign matters: +huge is too wide, -huge a fraction.
            let magnitude = magnitude.trim_start_matches('0');
            let magnitude: i128 = if magnitude.len() > 30 {
                10i128.pow(30)
            } else {
                magnitude.parse().unwrap_or(0)
            };
            if e.starts_with('-') {
                -magnitude
            } else {
                magnitude
            }
        }
    };
    // significant x 10^zeros, where zeros may be negative (a fractional part).
    let zeros = exponent - fraction.len() as i128 + trailing_zeros;
    if zeros < 0 {
        return None;
    }
    // i128 holds every integer of up to 38 digits.
    if significant.len() as i128 + zeros > 38 {
        return Some(Integer::TooWide);
    }
    let magnitude: i128 = significant.parse::<i128>().ok()? * 10i128.pow(zeros as u32);
    Some(Integer::Fits(if negative { -magnitude } else { magnitude }))
}

/// An integer field as an [`Integer`], or the 400 (with `code`) that says it is not one,
/// echoing `sent`, the field's JSON text as the client wrote it. A number is an integer when its
/// value is one, as in JSON Schema: `1.0` and `1e3` are 1 and 1000 ([`integral_number`]);
/// `1.5`, `"5"`, `true` and `null` are not integers; `18446744073709551616` is one (too wide for
/// the core's types).
pub fn integer_field(
    value: &Value,
    sent: &str,
    name: &str,
    code: &str,
) -> Result<Integer, ApiError> {
    if let Some(n) = value
        .as_i64()
        .map(i128::from)
        .or_else(|| value.as_u64().map(i128::from))
    {
        return Ok(Integer::Fits(n));
    }
    if let Some(n) = value.is_number().then(|| integral_number(sent)).flatten() {
        return Ok(n);
    }
    Err(ApiError::bad(
        code,
        format!("{name} must be an integer, not {sent}"),
    ))
}

/// What a `POST /v1/ids` asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IdsRequest {
    /// The ID format (`snowflake` when the body does not say).
    pub format: IdFormat,
    /// How many IDs, from 1 to the service's cap.
    pub count: usize,
}

/// How many IDs a `POST /v1/ids` asks for (see [`ids_request`]; the format is not looked at
/// beyond being valid).
pub fn ids_count(
    content_type: Option<&HeaderValue>,
    body: &[u8],
    max_count: usize,
) -> Result<usize, ApiError> {
    ids_request(content_type, body, max_count).map(|r| r.count)
}

/// What a `POST /v1/ids` asks for: an empty body or `{}` (one 64-bit ID), or an object with
/// `"count": n` (n from 1 to `max_count`) and `"format": "snowflake" | "uuidv7" | "ulid"`, both
/// optional; any other field is refused so a typo is not silently ignored.
pub fn ids_request(
    content_type: Option<&HeaderValue>,
    body: &[u8],
    max_count: usize,
) -> Result<IdsRequest, ApiError> {
    let Some(obj) = json_object(content_type, body)? else {
        return Ok(IdsRequest {
            format: IdFormat::Snowflake,
            count: 1,
        });
    };
    if let Some(k) = obj.keys().find(|k| *k != "count" && *k != "format") {
        return Err(ApiError::bad(
            "INVALID_REQUEST",
            format!("unknown field {k:?}: the fields are \"count\" and \"format\""),
        ));
    }
    let format = match obj.get("format") {
        None => IdFormat::Snowflake,
        Some(value) => value
            .as_str()
            .and_then(IdFormat::from_name)
            .ok_or_else(|| {
                let sent = sent_text(body, "format", value);
                ApiError::bad(
                    "INVALID_FORMAT",
                    format!("format must be {}, not {sent}", IdFormat::choices()),
                )
            })?,
    };
    let count = match obj.get("count") {
        None => 1,
        // The cap is the service's policy; the core's batch check (which the cap passed at
        // startup) converts the value.
        // A number written with a fraction or an exponent (`5.0`, `5e0`) is read from its text
        // (JSON Schema's integer: any number whose value has no fractional part).
        Some(v) => {
            let n = match v.as_u64() {
                Some(n) => Integer::Fits(i128::from(n)),
                None => integer_field(v, &sent_text(body, "count", v), "count", "INVALID_COUNT")?,
            };
            match n {
                Integer::Fits(n) if (1..=max_count as i128).contains(&n) => {
                    polyflake::batch_len(n).map_err(|e| ApiError::core(&e))?
                }
                _ => {
                    return Err(ApiError::bad(
                        "INVALID_COUNT",
                        format!(
                            "count must be from 1 to {max_count}, not {}",
                            sent_text(body, "count", v)
                        ),
                    ))
                }
            }
        }
    };
    Ok(IdsRequest { format, count })
}

/// The test clock's new offset from a `POST /v1/admin/clock` body: exactly one of
/// `{"advance_ms": n}` (relative to `current_offset_ms`) or `{"offset_ms": n}`, landing within
/// [`MAX_TEST_OFFSET_MS`] either way.
pub fn clock_offset(
    content_type: Option<&HeaderValue>,
    body: &[u8],
    current_offset_ms: i64,
) -> Result<i64, ApiError> {
    let obj = json_object(content_type, body)?.unwrap_or_default();
    if obj.len() != 1 {
        return Err(ApiError::bad(
            "INVALID_REQUEST",
            "give exactly one of {\"advance_ms\": n} or {\"offset_ms\": n}",
        ));
    }
    let (key, value) = obj
        .iter()
        .next()
        .map(|(k, v)| (k.as_str(), v))
        .unwrap_or(("", &Value::Null));
    if key != "advance_ms" && key != "offset_ms" {
        return Err(ApiError::bad(
            "INVALID_REQUEST",
            format!("unknown field {key:?}: use advance_ms or offset_ms"),
        ));
    }
    let sent = sent_text(body, key, value);
    let beyond = |to: &str| {
        ApiError::bad(
            "INVALID_REQUEST",
            format!("{key} {sent} {to} beyond the test clock's +/-{MAX_TEST_OFFSET_MS} ms"),
        )
    };
    let n = match integer_field(value, &sent, key, "INVALID_REQUEST")? {
        Integer::Fits(n) => n,
        Integer::TooWide => return Err(beyond("is")),
    };
    let offset = if key == "advance_ms" {
        i128::from(current_offset_ms) + n
    } else {
        n
    };
    if offset.abs() > i128::from(MAX_TEST_OFFSET_MS) {
        return Err(if key == "advance_ms" {
            beyond(&format!("would move the offset to {offset} ms,"))
        } else {
            beyond("is")
        });
    }
    // In range, so the narrowing cannot lose anything.
    Ok(offset as i64)
}

/// The ID of `GET /v1/ids/{id}` (already percent-decoded by the router): decimal digits below
/// 2^63, else 400 with the core's `INVALID_ID`.
pub fn path_id(text: &str) -> Result<u64, ApiError> {
    polyflake::parse_id(text).map_err(|e| ApiError::core(&e))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn json() -> HeaderValue {
        HeaderValue::from_static("application/json")
    }

    #[test]
    fn repeated_keys_are_refused_at_any_depth() {
        for body in [
            r#"{"count": 5, "count": 6}"#,
            r#"{"count": 5, "co\u0075nt": 6}"#,
            r#"{"a": {"b": 1, "b": 2}}"#,
            r#"[{"x": 1, "x": 1}]"#,
        ] {
            let e = json_object(Some(&json()), body.as_bytes()).unwrap_err();
            assert_eq!(
                (e.status.as_u16(), e.code.as_str()),
                (400, "DUPLICATE_KEY"),
                "{body}"
            );
        }
        let e = ids_count(Some(&json()), br#"{"count": 5, "count": 6}"#, 4096).unwrap_err();
        assert_eq!(e.code, "DUPLICATE_KEY");
        // Not JSON after the repeat (found by the service_body fuzz target): not JSON it is.
        for body in [
            &br#"{"count": 5, "count": 6} x"#[..],
            b"{\"mms\"\r\r: -6,\"mms\"\r: -6,\r\n6,}97",
            br#"[{"a": 1, "a": 2}"#,
        ] {
            let e = json_object(Some(&json()), body).unwrap_err();
            assert_eq!(
                e.code,
                "MALFORMED_JSON",
                "{}",
                String::from_utf8_lossy(body)
            );
        }
        // The same key in two different objects is fine.
        let v = parse_json_unique_keys(br#"[{"x": 1}, {"x": 2}]"#).unwrap();
        assert_eq!(v, serde_json::json!([{"x": 1}, {"x": 2}]));
    }

    #[test]
    fn parses_like_serde_json_otherwise() {
        for text in [
            "{}",
            " {\"count\" : 7 } \n",
            "[1, 2.5, -3, \"x\", null, true, {\"a\": [ ]}]",
            "99999999999999999999999",
            "-9223372036854775808",
            "18446744073709551615",
            "1e3",
            "\"\\u00e9\\ud83d\\ude00\"",
        ] {
            let want: Value = serde_json::from_str(text).unwrap();
            assert_eq!(
                parse_json_unique_keys(text.as_bytes()).unwrap(),
                want,
                "{text}"
            );
        }
        for bad in ["", "{", "{\"count\":1} x", "[1,]", "\u{1}", "nul"] {
            assert!(
                matches!(
                    parse_json_unique_keys(bad.as_bytes()),
                    Err(JsonError::Syntax(_))
                ),
                "{bad:?}"
            );
        }
        let deep = "[".repeat(200) + &"]".repeat(200);
        assert!(matches!(
            parse_json_unique_keys(deep.as_bytes()),
            Err(JsonError::Syntax(_))
        ));
    }

    #[test]
    fn counts() {
        assert_eq!(ids_count(None, b"", 10), Ok(1));
        assert_eq!(ids_count(Some(&json()), b"{}", 10), Ok(1));
        assert_eq!(ids_count(Some(&json()), b"{\"count\": 10}", 10), Ok(10));
        // JSON Schema's integer: a number whose value has no fractional part, however written.
        for body in [
            "1.0",
            "1e0",
            "0.1e1",
            "100e-2",
            "1.000000000000000000000000000000000",
        ] {
            let body = format!("{{\"count\": {body}}}");
            assert_eq!(
                ids_count(Some(&json()), body.as_bytes(), 10),
                Ok(1),
                "{body}"
            );
        }
        assert_eq!(
            ids_count(Some(&json()), b"{\"count\": 3664.0}", 4096),
            Ok(3664)
        );
        for (body, code) in [
            (&b"{\"count\": 11}"[..], "INVALID_COUNT"),
            (b"{\"count\": 0}", "INVALID_COUNT"),
            (b"{\"count\": 1.5}", "INVALID_COUNT"),
            (b"{\"count\": 10.5e0}", "INVALID_COUNT"),
            (b"{\"count\": 11.0}", "INVALID_COUNT"),
            (b"{\"count\": -0.0}", "INVALID_COUNT"),
            (b"{\"cout\": 1}", "INVALID_REQUEST"),
            (b"{\"format\": \"uuid\"}", "INVALID_FORMAT"),
            (b"{\"format\": 7}", "INVALID_FORMAT"),
            (b"{\"format\": null}", "INVALID_FORMAT"),
            (b"{\"format\": \"ULID\"}", "INVALID_FORMAT"),
            (b"{\"format\": \"ulid\", \"count\": 11}", "INVALID_COUNT"),
            (b"[1]", "INVALID_REQUEST"),
            (b"{", "MALFORMED_JSON"),
        ] {
            assert_eq!(ids_count(Some(&json()), body, 10).unwrap_err().code, code);
        }
        let e = ids_count(None, b"{}", 10).unwrap_err();
        assert_eq!(e.status, StatusCode::UNSUPPORTED_MEDIA_TYPE);
        let text = HeaderValue::from_static("text/plain");
        let e = ids_count(Some(&text), b"", 10).unwrap_err();
        assert_eq!(e.status, StatusCode::UNSUPPORTED_MEDIA_TYPE);
    }

    #[test]
    fn formats() {
        let j = Some(json());
        for (body, format, count) in [
            (&b"{\"format\": \"uuidv7\"}"[..], IdFormat::Uuid7, 1),
            (b"{\"format\": \"ulid\", \"count\": 10}", IdFormat::Ulid, 10),
            (
                b"{\"count\": 3, \"format\": \"snowflake\"}",
                IdFormat::Snowflake,
                3,
            ),
            (b"{\"count\": 3}", IdFormat::Snowflake, 3),
        ] {
            assert_eq!(
                ids_request(j.as_ref(), body, 10),
                Ok(IdsRequest { format, count })
            );
        }
        assert_eq!(
            ids_request(None, b"", 10).map(|r| r.format),
            Ok(IdFormat::Snowflake)
        );
    }

    #[test]
    fn clock_offsets() {
        let j = Some(json());
        assert_eq!(
            clock_offset(j.as_ref(), b"{\"advance_ms\": -600}", 100),
            Ok(-500)
        );
        assert_eq!(clock_offset(j.as_ref(), b"{\"offset_ms\": 0}", 100), Ok(0));
        for body in [
            &b"{}"[..],
            b"",
            b"{\"advance_ms\": 1.5}",
            b"{\"bogus\": 1}",
            b"{\"advance_ms\": 1, \"offset_ms\": 2}",
            b"{\"offset_ms\": 999999999999999}",
            b"{\"advance_ms\": 9223372036854775807}",
        ] {
            let e = clock_offset(j.as_ref(), body, i64::MAX / 2).unwrap_err();
            assert_eq!(e.status, StatusCode::BAD_REQUEST, "{body:?}");
        }
    }

    #[test]
    fn refusals_echo_the_text_sent() {
        let j = Some(json());
        for (body, want) in [
            (
                &br#"{"count": 18446744073709551616}"#[..],
                "not 18446744073709551616",
            ),
            (br#"{"count":1E3 }"#, "from 1 to 10, not 1E3"),
            (br#"{"count": 3664.5}"#, "an integer, not 3664.5"),
            (br#"{"count": -1}"#, "from 1 to 10, not -1"),
            (br#"{"count": 1e-400}"#, "an integer, not 1e-400"),
            (
                br#"{"count": -9223372036854775809}"#,
                "not -9223372036854775809",
            ),
            (br#"{"format": "ULID"}"#, r#"not "ULID""#),
            (
                b"{\n\"count\":\n  1e999}",
                "reads (about +/-1.8e308): 1e999 (number out of range at line 3 column 7)",
            ),
        ] {
            let e = ids_request(j.as_ref(), body, 10).unwrap_err();
            assert!(e.message.contains(want), "{e}");
        }
        let e = clock_offset(j.as_ref(), br#"{"offset_ms": -1e-2}"#, 0).unwrap_err();
        assert!(e.message.ends_with("not -1e-2"), "{e}");
        assert_eq!(
            clock_offset(j.as_ref(), br#"{"offset_ms": -1e2}"#, 0),
            Ok(-100)
        );
        // Integers wider than any Rust integer are still integers (and out of range).
        let wide = format!("{{\"offset_ms\": {}}}", "7".repeat(50));
        let e = clock_offset(j.as_ref(), wide.as_bytes(), 0).unwrap_err();
        assert!(e.message.contains(&"7".repeat(50)), "{e}");
        assert!(e.message.contains("is beyond"), "{e}");
    }

    #[test]
    fn integral_numbers() {
        use Integer::{Fits, TooWide};
        for (text, want) in [
            ("0", Some(Fits(0))),
            ("-0", Some(Fits(0))),
            ("-0.0e-99999999999999999999999999999999999", Some(Fits(0))),
            ("3664", Some(Fits(3664))),
            ("3664.0", Some(Fits(3664))),
            ("3664.000", Some(Fits(3664))),
            ("3.664e3", Some(Fits(3664))),
            ("3.664E+3", Some(Fits(3664))),
            ("366400e-2", Some(Fits(3664))),
            ("-1", Some(Fits(-1))),
            ("-1.0", Some(Fits(-1))),
            ("9007199254740993.0", Some(Fits(9_007_199_254_740_993))),
            ("18446744073709551616", Some(Fits(1 << 64))),
            ("1e37", Some(Fits(10i128.pow(37)))),
            ("1e38", Some(TooWide)),
            ("1e300", Some(TooWide)),
            ("-1e99999999999999999999999999999999999", Some(TooWide)),
            ("3664.5", None),
            ("3664.05e1", None),
            ("1e-1", None),
            ("1e-400", None),
            ("1e-99999999999999999999999999999999999", None),
            ("", None),
            ("-", None),
            ("1.", None),
            (".5", None),
            ("1e", None),
            ("\"5\"", None),
            ("true", None),
        ] {
            assert_eq!(integral_number(text), want, "{text}");
        }
    }

    #[test]
    fn path_ids() {
        assert_eq!(path_id("141264821508263936"), Ok(141264821508263936));
        assert_eq!(path_id("007"), Ok(7));
        for bad in ["", "-1", "1 ", "9223372036854775808", "\u{e9}", "1/2"] {
            assert_eq!(path_id(bad).unwrap_err().code, "INVALID_ID", "{bad:?}");
        }
    }
}
