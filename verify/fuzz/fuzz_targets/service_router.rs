//! The service's router in process (`polyflake_service::router_for`, what `serve` answers
//! with) on a monotonic generator over a manual clock: any method, any request target (paths,
//! percent escapes, query strings), any Content-Type and body. Every answer is a 2xx or 4xx,
//! every error is the JSON error shape, and the IDs handed out increase across the whole run.
#![no_main]

use axum::body::Body;
use axum::http::{header, Method, Request, Uri};
use axum::Router;
use libfuzzer_sys::arbitrary::{self, Arbitrary};
use libfuzzer_sys::fuzz_target;
use polyflake::{Generator, ManualClock, Mode, TimeIdBuilder, DEFAULT_EPOCH_MS};
use serde_json::Value;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};
use tower::ServiceExt;

const MAX_COUNT: usize = 64;

fn app() -> &'static (Router, tokio::runtime::Runtime) {
    static APP: OnceLock<(Router, tokio::runtime::Runtime)> = OnceLock::new();
    APP.get_or_init(|| {
        let clock = ManualClock::new(DEFAULT_EPOCH_MS + 86_400_000);
        let gen = Generator::builder(7)
            .mode(Mode::Monotonic)
            .clock(clock.clone())
            .build()
            .expect("a generator on a manual clock");
        let time_ids = TimeIdBuilder::new().mode(Mode::Monotonic).clock(clock);
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime");
        (
            polyflake_service::router_for(gen, time_ids, MAX_COUNT)
                .expect("the service's generators on a manual clock"),
            rt,
        )
    })
}

/// The largest ID handed out so far.
static LAST_ID: AtomicU64 = AtomicU64::new(0);
/// The largest UUIDv7 and ULID handed out so far.
static LAST_UUID7: Mutex<u128> = Mutex::new(0);
static LAST_ULID: Mutex<u128> = Mutex::new(0);

const METHODS: [Method; 7] = [
    Method::GET,
    Method::POST,
    Method::PUT,
    Method::DELETE,
    Method::HEAD,
    Method::OPTIONS,
    Method::PATCH,
];
const BASES: [&str; 7] = [
    "/v1/ids",
    "/v1/ids/",
    "/v1/health",
    "/metrics",
    "/openapi.json",
    "/",
    "",
];

#[derive(Debug, Arbitrary)]
struct Input<'a> {
    method: u8,
    other_method: &'a str,
    base: u8,
    target: &'a str,
    content_type: Option<&'a str>,
    body: &'a [u8],
}

fuzz_target!(|input: Input| {
    let method = match METHODS.get(usize::from(input.method)) {
        Some(m) => m.clone(),
        None => match Method::from_bytes(input.other_method.as_bytes()) {
            Ok(m) => m,
            Err(_) => return,
        },
    };
    let target = format!(
        "{}{}",
        BASES[usize::from(input.base) % BASES.len()],
        input.target
    );
    // A target hyper cannot parse never reaches the router (tests/service_hostile.rs covers
    // what hyper answers then).
    let Ok(uri) = target.parse::<Uri>() else {
        return;
    };
    let mut req = Request::builder().method(method.clone()).uri(uri.clone());
    if let Some(ct) = input.content_type {
        req = req.header(header::CONTENT_TYPE, ct);
    }
    let Ok(req) = req.body(Body::from(input.body.to_vec())) else {
        return; // not a valid header value: hyper would refuse it too
    };
    let (router, rt) = app();
    let what = format!(
        "{method} {target} {:?} {:?}",
        input.content_type,
        String::from_utf8_lossy(input.body)
    );
    let (status, headers, body) = rt.block_on(async {
        let resp = router
            .clone()
            .oneshot(req)
            .await
            .expect("the router is infallible");
        let (parts, body) = resp.into_parts();
        let bytes = axum::body::to_bytes(body, 64 << 20)
            .await
            .expect("a whole body");
        (parts.status, parts.headers, bytes)
    });
    assert!(
        status.is_success() || status.is_client_error(),
        "{what} -> {status}"
    );
    if method == Method::HEAD {
        return;
    }
    let ct = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    if status.is_success() && uri.path() == "/metrics" {
        assert!(ct.starts_with("text/plain; version=0.0.4"), "{what}: {ct}");
        return;
    }
    assert!(
        ct.starts_with("application/json"),
        "{what} -> {status} {ct:?}"
    );
    let v: Value = serde_json::from_slice(&body).unwrap_or_else(|e| panic!("{what}: {e}"));
    if status.is_client_error() {
        assert!(
            v["error"]["code"].is_string() && v["error"]["message"].is_string(),
            "{what}: {v}"
        );
    } else if method == Method::POST && uri.path() == "/v1/ids" && v["format"].is_string() {
        // UUIDv7s or ULIDs: their text is the core's, and each generator's IDs increase.
        let (parse, last): (fn(&str) -> polyflake::Result<u128>, _) = match v["format"].as_str() {
            Some("uuidv7") => (polyflake::parse_uuid, &LAST_UUID7),
            Some("ulid") => (polyflake::parse_ulid, &LAST_ULID),
            other => panic!("{what}: format {other:?}"),
        };
        let ids = v["ids"].as_array().unwrap_or_else(|| panic!("{what}: {v}"));
        assert!((1..=MAX_COUNT).contains(&ids.len()), "{what}: {v}");
        let mut prev = last.lock().unwrap_or_else(|e| e.into_inner());
        for x in ids {
            let id = x
                .as_str()
                .and_then(|t| parse(t).ok())
                .unwrap_or_else(|| panic!("{what}: {x}"));
            assert!(id > *prev, "{what}: {x} after {:#x}", *prev);
            *prev = id;
        }
    } else if method == Method::POST && uri.path() == "/v1/ids" {
        let ids: Vec<u64> = v["ids"]
            .as_array()
            .unwrap_or_else(|| panic!("{what}: {v}"))
            .iter()
            .map(|x| {
                x.as_str()
                    .and_then(|s| s.parse().ok())
                    .unwrap_or_else(|| panic!("{what}: {x}"))
            })
            .collect();
        assert!(
            (1..=MAX_COUNT).contains(&ids.len()),
            "{what}: {} IDs",
            ids.len()
        );
        let mut last = LAST_ID.load(Ordering::Relaxed);
        for id in ids {
            assert!(id > last, "{what}: ID {id} after {last}");
            last = id;
        }
        LAST_ID.store(last, Ordering::Relaxed);
    }
});
