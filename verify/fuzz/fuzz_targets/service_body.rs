//! What the service reads from a request body and path (`polyflake_service::request`, the code the
//! handlers call): `POST /v1/ids` counts and formats, the test clock's body, the `{id}` segment, and the
//! JSON parser that refuses repeated keys, each checked against serde_json and the rules.
#![no_main]

use axum::http::{HeaderValue, StatusCode};
use libfuzzer_sys::arbitrary::{self, Arbitrary};
use libfuzzer_sys::fuzz_target;
use polyflake_service::timeid::IdFormat;
use polyflake_service::request::{
    clock_offset, ids_count, ids_request, is_json, parse_json_unique_keys, path_id, IdsRequest,
    JsonError, MAX_TEST_OFFSET_MS,
};
use serde_json::Value;

#[derive(Debug, Arbitrary)]
struct Input<'a> {
    content_type: Option<&'a [u8]>,
    max_count: u16,
    current_offset_ms: i64,
    path: &'a str,
    body: &'a [u8],
}

fuzz_target!(|input: Input| {
    let ct = match input.content_type.map(HeaderValue::from_bytes) {
        None => None,
        Some(Ok(v)) => Some(v),
        Some(Err(_)) => return, // hyper refuses such a header before any handler runs
    };
    let ct = ct.as_ref();
    let body = input.body;
    let lenient = serde_json::from_slice::<Value>(body);

    // The strict parser agrees with serde_json except that it refuses repeated keys.
    match parse_json_unique_keys(body) {
        Ok(v) => assert_eq!(lenient.as_ref().ok(), Some(&v)),
        Err(JsonError::Syntax(_)) => assert!(lenient.is_err(), "serde_json read {body:?}"),
        Err(JsonError::Duplicate(_)) => assert!(lenient.is_ok(), "not JSON: {body:?}"),
    }

    let max = usize::from(input.max_count.max(1));
    match ids_request(ct, body, max) {
        Ok(IdsRequest { format, count: n }) => {
            assert_eq!(ids_count(ct, body, max).ok(), Some(n));
            assert!((1..=max).contains(&n));
            if body.is_empty() {
                assert_eq!(n, 1);
                assert_eq!(format, IdFormat::Snowflake);
                assert!(ct.is_none() || is_json(ct));
            } else {
                assert!(is_json(ct));
                let Ok(Value::Object(m)) = &lenient else {
                    panic!("accepted a body that is not a JSON object: {body:?}");
                };
                assert!(m.keys().all(|k| k == "count" || k == "format"));
                // An integral JSON number in any form (5, 5.0, 5e0) is that integer (accepted
                // counts are at most 65,535: the float reading is exact).
                let want = m.get("count").map_or(Some(1), |c| {
                    c.as_u64()
                        .or_else(|| c.as_f64().filter(|f| f.fract() == 0.0).map(|f| f as u64))
                });
                assert_eq!(want, Some(n as u64));
                let named = m.get("format").map_or(Some("snowflake"), |f| f.as_str());
                assert_eq!(named, Some(format.name()));
            }
        }
        Err(e) => {
            assert!(
                e.status == StatusCode::BAD_REQUEST
                    || e.status == StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "{e}"
            );
            assert!(!e.message.is_empty());
            match e.code.as_str() {
                "UNSUPPORTED_MEDIA_TYPE" => assert!(!is_json(ct)),
                "MALFORMED_JSON" => assert!(lenient.is_err()),
                "DUPLICATE_KEY" | "INVALID_REQUEST" | "INVALID_COUNT" | "INVALID_FORMAT"
                | "INVALID_ARGUMENT" => {
                    assert!(lenient.is_ok(), "{e}")
                }
                other => panic!("unexpected code {other}: {e}"),
            }
        }
    }

    match clock_offset(ct, body, input.current_offset_ms) {
        Ok(offset) => assert!(offset.abs() <= MAX_TEST_OFFSET_MS),
        Err(e) => assert!(e.status.is_client_error(), "{e}"),
    }

    assert_eq!(
        path_id(input.path).ok(),
        polyflake::parse_id(input.path).ok()
    );
});
