//! `polyflake serve`, running as a real process on 127.0.0.1, driven over real TCP
//! connections: IDs as strings and unique, decode, health turning 503 during a rewind larger
//! than max_wait (through the hidden `--test-clock`) and back, metrics that move, every class of
//! bad input, a seeded fuzz run, and graceful shutdown.

mod common;

use common::{fields_default, layout_vectors, temp_dir, Resp, Rng, Server};
use serde_json::Value;
use std::collections::HashSet;
use std::time::Duration;

/// The IDs of a 200 answer to `POST /v1/ids`, checking they are decimal strings.
fn ids_of(r: &Resp) -> Vec<u64> {
    assert_eq!(r.status, 200, "{}", r.text());
    let v = r.json();
    v["ids"]
        .as_array()
        .expect("ids array")
        .iter()
        .map(|x| {
            let s = x
                .as_str()
                .unwrap_or_else(|| panic!("an ID that is not a string: {x}"));
            assert!(
                !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()),
                "{s:?}"
            );
            s.parse::<u64>().expect("fits u64")
        })
        .collect()
}

#[test]
fn ids_are_strings_and_unique_across_1000_requests() {
    let server = Server::start(&["--node-id", "37"]);
    let epoch = layout_vectors()["epoch_ms_default"].as_u64().unwrap();
    let addr = server.addr;
    // 4 client threads x 250 requests, counts 1..=100, against the one generator.
    let handles: Vec<_> = (0..4u64)
        .map(|t| {
            std::thread::spawn(move || {
                let mut rng = Rng(0xC0FFEE + t);
                let mut all = Vec::new();
                for _ in 0..250 {
                    let count = if rng.below(2) == 0 {
                        1
                    } else {
                        1 + rng.below(100)
                    };
                    let r = common::request(
                        addr,
                        "POST",
                        "/v1/ids",
                        &[("Content-Type", "application/json")],
                        format!("{{\"count\": {count}}}").as_bytes(),
                    );
                    let v = r.json();
                    assert_eq!(v["node_id"], 37);
                    assert_eq!(v["epoch_ms"].as_u64(), Some(epoch));
                    let ids = ids_of(&r);
                    assert_eq!(ids.len(), count);
                    assert!(ids.windows(2).all(|w| w[0] < w[1]), "a batch is sorted");
                    all.extend(ids);
                }
                all
            })
        })
        .collect();
    let mut seen = HashSet::new();
    let mut total = 0;
    for h in handles {
        for id in h.join().expect("client thread") {
            assert_eq!(fields_default(id).1, 37);
            assert!(seen.insert(id), "duplicate ID {id}");
            total += 1;
        }
    }
    assert!(total >= 1000);
    assert_eq!(server.metric("polyflake_ids_issued_total") as usize, total);
}

#[test]
fn empty_body_and_empty_object_mean_one_id() {
    let server = Server::start(&["--node-id", "5"]);
    assert_eq!(
        ids_of(&server.request("POST", "/v1/ids", &[], b"")).len(),
        1
    );
    assert_eq!(ids_of(&server.post_json("/v1/ids", "{}")).len(), 1);
    assert_eq!(
        ids_of(&server.post_json("/v1/ids", " {\"count\" : 7 } \n")).len(),
        7
    );
    assert_eq!(
        ids_of(&server.request(
            "POST",
            "/v1/ids",
            &[("Content-Type", "Application/JSON; charset=utf-8")],
            b"{\"count\":2}"
        ))
        .len(),
        2
    );
}

#[test]
fn count_cap_is_configurable_and_batches_fill_it() {
    let server = Server::start(&["--node-id", "6", "--max-count", "10000"]);
    let ids = ids_of(&server.post_json("/v1/ids", "{\"count\": 10000}"));
    assert_eq!(ids.len(), 10000);
    assert_eq!(ids.iter().collect::<HashSet<_>>().len(), 10000);
    let r = server.post_json("/v1/ids", "{\"count\": 10001}");
    assert_eq!((r.status, r.error_code().as_str()), (400, "INVALID_COUNT"));

    let default_cap = Server::start(&["--node-id", "7", "--monotonic"]);
    assert_eq!(
        ids_of(&default_cap.post_json("/v1/ids", "{\"count\": 4096}")).len(),
        4096
    );
    let r = default_cap.post_json("/v1/ids", "{\"count\": 4097}");
    assert_eq!((r.status, r.error_code().as_str()), (400, "INVALID_COUNT"));
}

#[test]
fn decode_endpoint_matches_the_vectors() {
    let server = Server::start(&["--node-id", "1"]);
    for lit in layout_vectors()["literals"].as_array().unwrap() {
        let id = lit["id"].as_str().unwrap();
        let r = server.get(&format!("/v1/ids/{id}"));
        assert_eq!(r.status, 200, "{}", r.text());
        let v = r.json();
        assert_eq!(v["id"], lit["id"]);
        assert_eq!(v["unix_ms"], lit["epoch_ms"]);
        assert_eq!(v["node_id"], lit["node_id"]);
        assert_eq!(v["sequence"], lit["sequence"]);
        assert_eq!(v["time"], "2025-01-24T19:35:58.021Z");
    }
    // The invalid vectors, percent-encoded where a raw request line could not carry them.
    for bad in layout_vectors()["invalid"]["decode_default_layout"]
        .as_array()
        .unwrap()
    {
        let bad = bad.as_str().unwrap();
        if bad.is_empty() {
            continue; // `/v1/ids/` is another path: see unknown_paths_and_methods
        }
        let path = format!("/v1/ids/{}", bad.replace(' ', "%20"));
        let r = server.get(&path);
        assert_eq!(
            (r.status, r.error_code().as_str()),
            (400, "INVALID_ID"),
            "{bad:?}"
        );
    }
    // Percent-encoded bytes that are not UTF-8.
    let r = server.get("/v1/ids/%FF%FE");
    assert_eq!(r.status, 400);
    r.error_code();
}

#[test]
fn health_turns_503_during_a_large_rewind_and_back() {
    let server = Server::start(&["--node-id", "37", "--test-clock"]);
    assert!(server.banner.contains("TEST CLOCK"));
    assert_eq!(
        ids_of(&server.post_json("/v1/ids", "{\"count\": 3}")).len(),
        3
    );
    let h = server.get("/v1/health");
    assert_eq!(h.status, 200);
    assert_eq!(h.json()["ok"], true);
    let refused_before = server.metric("polyflake_rewinds_refused_total");

    // Put the clock 600 ms behind the IDs already issued: more than max_wait_ms (5).
    let r = server.post_json("/v1/admin/clock", "{\"advance_ms\": -600}");
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.json()["offset_ms"], -600);
    let h = server.get("/v1/health");
    assert_eq!(h.status, 503, "{}", h.text());
    let v = h.json();
    assert_eq!(v["ok"], false);
    assert_eq!(v["status"], "clock_behind");
    assert!(v["reason"].as_str().unwrap().contains("behind"), "{v}");
    assert!(v["lead_ms"].as_i64().unwrap() > 5, "{v}");
    assert_eq!(server.metric("polyflake_healthy"), 0.0);

    // Issuing is refused with 503 and the core's code, and counted.
    let r = server.post_json("/v1/ids", "{\"count\": 1}");
    assert_eq!(
        (r.status, r.error_code().as_str()),
        (503, "CLOCK_MOVED_BACKWARDS")
    );
    assert_eq!(r.header("retry-after"), Some("1"));
    let r = server.post_json("/v1/ids", "{\"count\": 50}");
    assert_eq!(
        (r.status, r.error_code().as_str()),
        (503, "CLOCK_MOVED_BACKWARDS")
    );
    assert!(server.metric("polyflake_rewinds_refused_total") >= refused_before + 2.0);
    assert!(server.metric("polyflake_ids_refused_total") >= 2.0);

    // Restore the clock: healthy again, and issuing resumes after the IDs already issued.
    let r = server.post_json("/v1/admin/clock", "{\"offset_ms\": 0}");
    assert_eq!(r.status, 200);
    let h = server.get("/v1/health");
    assert_eq!(h.status, 200, "{}", h.text());
    assert_eq!(server.metric("polyflake_healthy"), 1.0);
    assert_eq!(ids_of(&server.post_json("/v1/ids", "{}")).len(), 1);

    // Bad admin requests are 4xx JSON too.
    for body in [
        "{}",
        "{\"advance_ms\": 1.5}",
        "{\"bogus\": 1}",
        "{\"advance_ms\": 1, \"offset_ms\": 2}",
        "{\"offset_ms\": 999999999999999}",
    ] {
        let r = server.post_json("/v1/admin/clock", body);
        assert_eq!(r.status, 400, "{body}: {}", r.text());
        r.error_code();
    }
}

#[test]
fn a_small_rewind_is_waited_out_off_the_async_workers() {
    // A budget of 300 ms; a 100 ms step back right after issuing is inside it.
    let server = Server::start(&["--node-id", "2", "--test-clock", "--max-wait-ms", "300"]);
    let first = ids_of(&server.post_json("/v1/ids", "{}"))[0];
    server.post_json("/v1/admin/clock", "{\"advance_ms\": -100}");
    let second = ids_of(&server.post_json("/v1/ids", "{}"))[0];
    assert!(second > first);
    assert!(server.metric("polyflake_rewinds_waited_total") >= 1.0);
    assert!(server.metric("polyflake_blocking_calls_total") >= 1.0);
}

#[test]
fn admin_clock_exists_only_with_the_flag() {
    let server = Server::start(&["--node-id", "3"]);
    let r = server.post_json("/v1/admin/clock", "{\"advance_ms\": -600}");
    assert_eq!((r.status, r.error_code().as_str()), (404, "NOT_FOUND"));
    // And the flag refuses a non-loopback address.
    let e = Server::try_start(&["--node-id", "3", "--test-clock", "--listen", "0.0.0.0:0"]).err();
    assert!(e.is_some_and(|e| e.contains("loopback")));
}

#[test]
fn metrics_counters_move() {
    let server = Server::start(&["--node-id", "11", "--max-count", "5000"]);
    let m = server.get("/metrics");
    assert_eq!(m.status, 200);
    assert!(m
        .header("content-type")
        .unwrap()
        .starts_with("text/plain; version=0.0.4"));
    let text = m.text();
    for name in [
        "polyflake_ids_issued_total",
        "polyflake_ids_refused_total",
        "polyflake_rewinds_waited_total",
        "polyflake_rewinds_refused_total",
        "polyflake_sequence_exhaustions_total",
        "polyflake_lead_ms",
        "polyflake_healthy",
    ] {
        assert!(text.contains(&format!("# TYPE {name} ")), "{name} missing");
    }
    let before = server.metric("polyflake_ids_issued_total");
    ids_of(&server.post_json("/v1/ids", "{\"count\": 10}"));
    ids_of(&server.post_json("/v1/ids", "{\"count\": 1}"));
    server.post_json("/v1/ids", "{\"count\": 0}");
    assert_eq!(server.metric("polyflake_ids_issued_total"), before + 11.0);
    assert!(server.metric("polyflake_http_responses_total{code=\"200\"}") >= 2.0);
    assert!(server.metric("polyflake_http_responses_total{code=\"400\"}") >= 1.0);
    // 5,000 strict IDs cannot fit one millisecond (4,096 per ms): the batch waits for the next
    // one at least once, and the wait is counted.
    assert_eq!(server.metric("polyflake_sequence_exhaustions_total"), 0.0);
    assert_eq!(
        ids_of(&server.post_json("/v1/ids", "{\"count\": 5000}")).len(),
        5000
    );
    assert!(server.metric("polyflake_sequence_exhaustions_total") >= 1.0);
}

/// A bad request: name, headers, body, expected status and error code.
type BadCase<'a> = (&'a str, &'a [(&'a str, &'a str)], Vec<u8>, u16, &'a str);

#[test]
fn every_class_of_bad_input_is_a_json_4xx() {
    let server = Server::start(&["--node-id", "12"]);
    let json = [("Content-Type", "application/json")];
    let cases: Vec<BadCase> = vec![
        (
            "malformed JSON",
            &json,
            b"{\"count\":".to_vec(),
            400,
            "MALFORMED_JSON",
        ),
        (
            "trailing garbage",
            &json,
            b"{\"count\":1} x".to_vec(),
            400,
            "MALFORMED_JSON",
        ),
        (
            "not UTF-8",
            &json,
            vec![0xff, 0xfe, b'{'],
            400,
            "MALFORMED_JSON",
        ),
        (
            "not an object",
            &json,
            b"[1]".to_vec(),
            400,
            "INVALID_REQUEST",
        ),
        ("bare number", &json, b"5".to_vec(), 400, "INVALID_REQUEST"),
        (
            "unknown field",
            &json,
            b"{\"cout\":5}".to_vec(),
            400,
            "INVALID_REQUEST",
        ),
        (
            "count 0",
            &json,
            b"{\"count\":0}".to_vec(),
            400,
            "INVALID_COUNT",
        ),
        (
            "negative",
            &json,
            b"{\"count\":-1}".to_vec(),
            400,
            "INVALID_COUNT",
        ),
        (
            "huge negative",
            &json,
            b"{\"count\":-9223372036854775808}".to_vec(),
            400,
            "INVALID_COUNT",
        ),
        (
            "fraction",
            &json,
            b"{\"count\":1.5}".to_vec(),
            400,
            "INVALID_COUNT",
        ),
        (
            "float zero",
            &json,
            b"{\"count\":0.0}".to_vec(),
            400,
            "INVALID_COUNT",
        ),
        (
            "exponent over the cap",
            &json,
            b"{\"count\":1e4}".to_vec(),
            400,
            "INVALID_COUNT",
        ),
        (
            "negative exponent",
            &json,
            b"{\"count\":15e-1}".to_vec(),
            400,
            "INVALID_COUNT",
        ),
        (
            "string",
            &json,
            b"{\"count\":\"5\"}".to_vec(),
            400,
            "INVALID_COUNT",
        ),
        (
            "null",
            &json,
            b"{\"count\":null}".to_vec(),
            400,
            "INVALID_COUNT",
        ),
        (
            "bool",
            &json,
            b"{\"count\":true}".to_vec(),
            400,
            "INVALID_COUNT",
        ),
        (
            "over the cap",
            &json,
            b"{\"count\":4097}".to_vec(),
            400,
            "INVALID_COUNT",
        ),
        (
            "over u64",
            &json,
            b"{\"count\":99999999999999999999999}".to_vec(),
            400,
            "INVALID_COUNT",
        ),
        (
            "text/plain",
            &[("Content-Type", "text/plain")],
            b"{\"count\":1}".to_vec(),
            415,
            "UNSUPPORTED_MEDIA_TYPE",
        ),
        (
            "form",
            &[("Content-Type", "application/x-www-form-urlencoded")],
            b"count=1".to_vec(),
            415,
            "UNSUPPORTED_MEDIA_TYPE",
        ),
        (
            "json-ish",
            &[("Content-Type", "application/jsonx")],
            b"{}".to_vec(),
            415,
            "UNSUPPORTED_MEDIA_TYPE",
        ),
        (
            "no content type",
            &[],
            b"{\"count\":1}".to_vec(),
            415,
            "UNSUPPORTED_MEDIA_TYPE",
        ),
        (
            "16 KiB + 1",
            &json,
            vec![b' '; 16 * 1024 + 1],
            413,
            "PAYLOAD_TOO_LARGE",
        ),
        (
            "1 MiB",
            &json,
            vec![b'{'; 1 << 20],
            413,
            "PAYLOAD_TOO_LARGE",
        ),
    ];
    for (name, headers, body, status, code) in &cases {
        let r = server.request("POST", "/v1/ids", headers, body);
        assert_eq!(r.status, *status, "{name}: {}", r.text());
        assert_eq!(r.error_code(), *code, "{name}");
    }
    // Exactly 16 KiB of whitespace around a valid object is accepted.
    let mut body = b"{\"count\":2}".to_vec();
    body.resize(16 * 1024, b' ');
    assert_eq!(
        ids_of(&server.request("POST", "/v1/ids", &json, &body)).len(),
        2
    );
    // An oversize chunked body (no Content-Length up front) is refused too.
    let mut chunked = Vec::new();
    for _ in 0..20 {
        chunked.extend_from_slice(b"400\r\n");
        chunked.extend_from_slice(&[b' '; 0x400]);
        chunked.extend_from_slice(b"\r\n");
    }
    chunked.extend_from_slice(b"0\r\n\r\n");
    let r = server.request(
        "POST",
        "/v1/ids",
        &[
            ("Content-Type", "application/json"),
            ("Transfer-Encoding", "chunked"),
        ],
        &chunked,
    );
    assert_eq!(
        (r.status, r.error_code().as_str()),
        (413, "PAYLOAD_TOO_LARGE")
    );
    // The server is still fine.
    assert_eq!(server.get("/v1/health").status, 200);
}

#[test]
fn unknown_paths_and_methods() {
    let server = Server::start(&["--node-id", "13"]);
    for (method, path, status) in [
        ("GET", "/", 404),
        ("GET", "/v2/ids", 404),
        ("GET", "/v1/ids/", 404),
        ("POST", "/v1/ids/1/2", 404),
        ("GET", "/v1/ids", 405),
        ("PUT", "/v1/ids", 405),
        ("DELETE", "/v1/health", 405),
        ("POST", "/metrics", 405),
        ("PATCH", "/v1/ids/5", 405),
        ("BREW", "/v1/ids", 405),
    ] {
        let r = server.request(method, path, &[], b"");
        assert_eq!(r.status, status, "{method} {path}: {}", r.text());
        let code = r.error_code();
        assert_eq!(
            code,
            if status == 404 {
                "NOT_FOUND"
            } else {
                "METHOD_NOT_ALLOWED"
            }
        );
    }
}

/// Thousands of random requests (seeded, so a failure is reproducible): every answer is a
/// well-formed 2xx or 4xx with a JSON body (the Prometheus text of `GET /metrics` aside), and
/// the IDs handed out along the way are unique.
#[test]
fn fuzz_random_requests_get_well_formed_answers() {
    let server = Server::start(&["--node-id", "14", "--max-count", "64"]);
    let seed = 0x5EED_2025;
    let mut rng = Rng(seed);
    let methods = [
        "GET", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "HEAD", "FOO",
    ];
    let paths = [
        "/v1/ids",
        "/v1/ids",
        "/v1/ids",
        "/v1/ids/141264821508263936",
        "/v1/ids/-1",
        "/v1/ids/%00",
        "/v1/ids/99999999999999999999",
        "/v1/health",
        "/metrics",
        "/v1/admin/clock",
        "/",
        "/v1",
        "/v1/ids?count=5",
        "/v1/ids/%E2%82%AC",
        "/v1//ids",
        "/V1/IDS",
    ];
    let types = [
        Some("application/json"),
        Some("application/json"),
        Some("application/json; charset=utf-8"),
        Some("text/plain"),
        Some("application/xml"),
        Some("multipart/form-data; boundary=x"),
        Some(""),
        Some(";;;"),
        None,
    ];
    let fragments = [
        "{\"count\":",
        "}",
        "{",
        "[",
        "]",
        "\"count\"",
        ":",
        ",",
        "1",
        "-1",
        "0",
        "4096",
        "64",
        "65",
        "1.5",
        "1e2",
        "null",
        "true",
        "\"x\"",
        " ",
        "\n",
        "{}",
        "{\"count\":3}",
        "\u{e9}",
        "\\u0000",
    ];
    let mut seen = HashSet::new();
    let n = 3000;
    for i in 0..n {
        let method = *rng.pick(&methods);
        let mut path = rng.pick(&paths).to_string();
        if rng.below(8) == 0 {
            // A random path segment from URL-safe characters and percent escapes.
            let alphabet = b"abcXYZ019-._~%2F%FF";
            let len = 1 + rng.below(12);
            let seg: String = (0..len).map(|_| *rng.pick(alphabet) as char).collect();
            path = format!("/v1/ids/{seg}");
        }
        let body: Vec<u8> = match rng.below(6) {
            0 => Vec::new(),
            1 => format!("{{\"count\": {}}}", rng.below(80) as i64 - 5).into_bytes(),
            2 => {
                let len = rng.below(64);
                rng.bytes(len)
            }
            3 => (0..rng.below(10))
                .flat_map(|_| rng.pick(&fragments).bytes())
                .collect(),
            4 => {
                let v = rng.below(3);
                let filler = rng.below(20_000);
                let mut b = format!("{{\"count\": {}}}", v + 1).into_bytes();
                b.resize(b.len() + filler, b' ');
                b
            }
            _ => format!("{{\"count\": {}, \"x\": {}}}", rng.below(5), rng.below(5)).into_bytes(),
        };
        let ct = *rng.pick(&types);
        let headers: Vec<(&str, &str)> = ct.map(|c| ("Content-Type", c)).into_iter().collect();
        let r = server.request(method, &path, &headers, &body);
        let what = format!(
            "request {i} (seed {seed:#x}): {method} {path} {ct:?} {:?}",
            String::from_utf8_lossy(&body)
        );
        assert!(
            (200..300).contains(&r.status) || (400..500).contains(&r.status),
            "{what} -> {} {}",
            r.status,
            r.text()
        );
        if method == "HEAD" {
            continue; // no body by definition
        }
        let ct = r.header("content-type").unwrap_or("").to_string();
        if r.status == 200 && path == "/metrics" {
            assert!(ct.starts_with("text/plain"), "{what}");
            continue;
        }
        assert!(
            ct.starts_with("application/json"),
            "{what} -> {} {ct:?}",
            r.status
        );
        let v: Value =
            serde_json::from_slice(&r.body).unwrap_or_else(|e| panic!("{what}: {e}: {}", r.text()));
        if r.status >= 400 {
            assert!(
                v["error"]["code"].is_string() && v["error"]["message"].is_string(),
                "{what}: {v}"
            );
        } else if let Some(ids) = v.get("ids") {
            for id in ids.as_array().unwrap() {
                let id: u64 = id.as_str().expect("string ID").parse().unwrap();
                assert!(seen.insert(id), "{what}: duplicate {id}");
            }
        }
    }
    assert_eq!(
        server.get("/v1/health").status,
        200,
        "still healthy after {n} requests"
    );
}

#[test]
fn sigterm_shuts_down_gracefully() {
    for signal in [libc::SIGTERM, libc::SIGINT] {
        let mut server = Server::start(&["--node-id", "15"]);
        ids_of(&server.post_json("/v1/ids", "{}"));
        let status = server
            .stop_with(signal, Duration::from_secs(15))
            .expect("exits within 15 s");
        assert!(status.success(), "exit {status:?}: {}", server.stderr());
        assert!(server.stderr().contains("dropped"), "{}", server.stderr());
    }
}

#[test]
fn startup_errors_are_one_line() {
    for args in [
        vec!["--node-id", "4096"],
        vec!["--node-id", "1", "--layout", "bogus"],
        vec!["--node-id", "1", "--max-count", "0"],
        vec!["--node-id", "1", "--max-count", "99999999999"],
    ] {
        let e = Server::try_start(&args)
            .err()
            .unwrap_or_else(|| panic!("{args:?} started"));
        assert_eq!(e.lines().count(), 1, "{args:?}: {e:?}");
        assert!(e.starts_with("polyflake: error: "), "{e}");
    }
    // A port already taken.
    let first = Server::start(&["--node-id", "16"]);
    let port = first.addr.to_string();
    let out = common::run(&["serve", "--node-id", "17", "--listen", &port]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(out.stderr.lines().count(), 1, "{}", out.stderr);
    assert!(out.stderr.contains("cannot listen"));
}

#[test]
fn serve_defaults_to_a_file_lease() {
    let runtime = temp_dir("xdg-serve");
    let server = Server::try_start_env(&[], &[("POLYFLAKE_LEASE_DIR", runtime.as_os_str())])
        .expect("serve with no node source starts");
    assert!(server.banner.contains("file lease"), "{}", server.banner);
    let h = server.wait_health(200, Duration::from_secs(10));
    assert_eq!(h.status, 200, "{}", h.text());
    let v = h.json();
    assert_eq!(v["source"], "file_lease");
    let store = v["lease"]["store"].as_str().unwrap().to_string();
    assert!(store.starts_with(runtime.to_str().unwrap()), "{store}");
    let slot = v["lease"]["slot"].as_u64().unwrap();
    let ids = ids_of(&server.post_json("/v1/ids", "{\"count\": 3}"));
    assert!(ids.iter().all(|id| fields_default(*id).1 == slot));
    drop(server);
    let _ = std::fs::remove_dir_all(&runtime);
}

#[test]
fn sigterm_frees_the_lease_for_the_next_service() {
    let dir = temp_dir("lease");
    let d = dir.to_str().unwrap();
    let args = ["--lease-dir", d, "--slots", "1"];
    let mut first = Server::start(&args);
    assert_eq!(first.wait_health(200, Duration::from_secs(10)).status, 200);
    let before = ids_of(&first.post_json("/v1/ids", "{\"count\": 5}"));
    assert!(before.iter().all(|id| fields_default(*id).1 == 0));
    let v = first.get("/v1/health").json();
    assert_eq!(
        (v["lease"]["slot"].as_u64(), v["lease"]["state"].as_str()),
        (Some(0), Some("held"))
    );
    let m = first.get("/metrics").text();
    assert!(m.contains("polyflake_lease_state{state=\"held\"} 1"), "{m}");
    assert!(m.contains("polyflake_lease_info{kind=\"file\""), "{m}");

    // The one slot is held: a second service cannot start, in one line.
    let e = Server::try_start(&args)
        .err()
        .expect("a second holder is refused");
    assert_eq!(e.lines().count(), 1, "{e}");
    assert!(e.contains("NO_FREE_SLOT"), "{e}");

    // SIGTERM drops the generator, which frees the slot.
    let status = first
        .stop_with(libc::SIGTERM, Duration::from_secs(15))
        .expect("exits");
    assert!(status.success());
    let second = Server::start(&args);
    assert_eq!(second.wait_health(200, Duration::from_secs(10)).status, 200);
    let after = ids_of(&second.post_json("/v1/ids", "{\"count\": 5}"));
    assert!(
        after[0] > *before.last().unwrap(),
        "the successor issues after its predecessor"
    );
    drop(second);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn after_a_crash_health_is_503_while_the_restart_guard_waits() {
    let dir = temp_dir("guard");
    let d = dir.to_str().unwrap();
    let args = [
        "--lease-dir",
        d,
        "--slots",
        "1",
        "--lease-reserve-ms",
        "3000",
    ];
    let mut first = Server::start(&args);
    assert_eq!(first.wait_health(200, Duration::from_secs(10)).status, 200);
    let before = ids_of(&first.post_json("/v1/ids", "{\"count\": 3}"));
    // A crash: the kernel frees the flock, but the slot's high-water mark R stays ahead.
    first
        .stop_with(libc::SIGKILL, Duration::from_secs(10))
        .expect("killed");

    let second = Server::start(&args);
    let h = second.get("/v1/health");
    assert_eq!(h.status, 503, "{}", h.text());
    let v = h.json();
    assert_eq!(v["status"], "restart_guard", "{v}");
    assert_eq!(v["lease"]["state"], "restart_guard", "{v}");
    assert!(
        v["lease"]["guard_remaining_ms"].as_u64().unwrap() > 0,
        "{v}"
    );
    let r = second.post_json("/v1/ids", "{}");
    assert_eq!(
        (r.status, r.error_code().as_str()),
        (503, "LEASE_NOT_READY")
    );
    assert!(second
        .get("/metrics")
        .text()
        .contains("polyflake_lease_state{state=\"restart_guard\"} 1"));

    // Once the clock passes R the service is healthy and issues after its predecessor.
    let h = second.wait_health(200, Duration::from_secs(15));
    assert_eq!(h.status, 200, "{}", h.text());
    let after = ids_of(&second.post_json("/v1/ids", "{}"));
    assert!(after[0] > *before.last().unwrap());
    // The wait was said on stderr, once, with the crashed holder's guard as the reason.
    let said: Vec<String> = second
        .stderr()
        .lines()
        .filter(|l| l.contains("answer 503 (restart_guard) for"))
        .map(str::to_string)
        .collect();
    assert_eq!(said.len(), 1, "{}", second.stderr());
    assert!(said[0].contains("previous holder"), "{}", said[0]);
    drop(second);
    let _ = std::fs::remove_dir_all(&dir);
}

/// The service on a real etcd lease: healthy and issuing while etcd is up; with etcd gone, it
/// issues no further than its high-water mark R and then answers 503 (health and issuing).
#[test]
fn etcd_lease_stops_issuing_at_r_when_etcd_goes_away() {
    let mut etcd = common::EtcdServer::start();
    let url = etcd.client_url.clone();
    let server = Server::start(&[
        "--etcd",
        &url,
        "--etcd-prefix",
        "/polyflake-cli-test",
        "--slots",
        "8",
        "--lease-reserve-ms",
        "1500",
    ]);
    assert!(server.banner.contains("etcd lease"), "{}", server.banner);
    let h = server.wait_health(200, Duration::from_secs(15));
    assert_eq!(h.status, 200, "{}", h.text());
    let v = h.json();
    assert_eq!(v["source"], "etcd");
    assert_eq!(v["lease"]["kind"], "etcd");
    let slot = v["lease"]["slot"].as_u64().unwrap();
    let ids = ids_of(&server.post_json("/v1/ids", "{\"count\": 10}"));
    assert!(ids.iter().all(|id| fields_default(*id).1 == slot));

    etcd.kill();
    // R was at most 1.5 s ahead when etcd went away; the renewal cannot extend it now.
    let h = server.wait_health(503, Duration::from_secs(20));
    assert_eq!(h.status, 503, "{}", h.text());
    let v = h.json();
    let status = v["status"].as_str().unwrap().to_string();
    assert!(status == "lease_expired" || status == "lease_lost", "{v}");
    let r = server.post_json("/v1/ids", "{}");
    assert_eq!(r.status, 503, "{}", r.text());
    let code = r.error_code();
    assert!(code == "LEASE_EXPIRED" || code == "LEASE_LOST", "{code}");
    // Nothing past R: the last issued millisecond is not after the high-water mark.
    let last = v["last_issued_ms"].as_i64().unwrap();
    let r_ms = v["lease"]["high_water_ms"].as_i64().unwrap();
    assert!(last <= r_ms, "issued at {last} past R = {r_ms}");
    assert!(server
        .get("/metrics")
        .text()
        .contains("polyflake_lease_state{state=\""));
}

#[test]
fn refusals_echo_the_json_text_sent() {
    // The JSON text of a number as the client wrote it, never serde_json's f64 reading of it
    // (18446744073709551616 used to come back as 1.8446744073709552e+19).
    let server = Server::start(&["--node-id", "18", "--test-clock"]);
    let wide = "1".to_string() + &"0".repeat(60);
    let cases: Vec<(String, &str, String)> = vec![
        (
            "18446744073709551616".into(),
            "INVALID_COUNT",
            "count must be from 1 to 4096, not 18446744073709551616".into(),
        ),
        (
            "-18446744073709551617".into(),
            "INVALID_COUNT",
            "not -18446744073709551617".into(),
        ),
        (wide.clone(), "INVALID_COUNT", format!("not {wide}")),
        (
            "1e30".into(),
            "INVALID_COUNT",
            "count must be from 1 to 4096, not 1e30".into(),
        ),
        (
            "3664.5".into(),
            "INVALID_COUNT",
            "count must be an integer, not 3664.5".into(),
        ),
        (
            "-1".into(),
            "INVALID_COUNT",
            "count must be from 1 to 4096, not -1".into(),
        ),
        (
            "-0.0e0".into(),
            "INVALID_COUNT",
            "count must be from 1 to 4096, not -0.0e0".into(),
        ),
        (
            "\"\\u0035\"".into(),
            "INVALID_COUNT",
            "count must be an integer, not \"\\u0035\"".into(),
        ),
        (
            "1e400".into(),
            "MALFORMED_JSON",
            "number past what the service reads (about +/-1.8e308): 1e400".into(),
        ),
    ];
    for (sent, code, want) in &cases {
        let r = server.post_json("/v1/ids", &format!("{{\"count\":  {sent} }}"));
        assert_eq!(r.status, 400, "{sent}: {}", r.text());
        assert_eq!(r.error_code(), *code, "{sent}: {}", r.text());
        let message = r.json()["error"]["message"].as_str().unwrap().to_string();
        assert!(message.contains(want.as_str()), "{sent}: {message}");
        assert!(!message.contains("e+"), "{sent}: {message}");
    }
    let r = server.post_json("/v1/ids", r#"{"format": "\u0075lid2"}"#);
    assert_eq!(r.error_code(), "INVALID_FORMAT");
    assert!(r.text().contains(r#"not \"\\u0075lid2\""#), "{}", r.text());
    // The test clock's fields too.
    for (body, want) in [
        (
            r#"{"offset_ms": 18446744073709551616}"#,
            "offset_ms 18446744073709551616 is beyond",
        ),
        (
            format!("{{\"advance_ms\": -{wide}}}").as_str(),
            &format!("advance_ms -{wide} is beyond"),
        ),
        (
            r#"{"advance_ms": 316224000001}"#,
            "advance_ms 316224000001 would move the offset to 316224000001 ms, beyond",
        ),
        (
            r#"{"offset_ms": 5.5E0}"#,
            "offset_ms must be an integer, not 5.5E0",
        ),
    ] {
        let r = server.post_json("/v1/admin/clock", body);
        assert_eq!(
            (r.status, r.error_code().as_str()),
            (400, "INVALID_REQUEST"),
            "{body}"
        );
        assert!(r.text().contains(want), "{body}: {}", r.text());
    }
    // A number whose value is an integer is that integer, however written (JSON Schema's
    // integer, which the OpenAPI document uses).
    for (body, n) in [
        (r#"{"count": 3664.0}"#, 3664),
        (r#"{"count": 3.664e3, "format": "ulid"}"#, 3664),
        (r#"{"count": 1E1, "format": "uuidv7"}"#, 10),
        (r#"{"count": 4096.000}"#, 4096),
    ] {
        let r = server.post_json("/v1/ids", body);
        assert_eq!(r.status, 200, "{body}: {}", r.text());
        assert_eq!(r.json()["ids"].as_array().unwrap().len(), n, "{body}");
    }
    let r = server.post_json("/v1/admin/clock", r#"{"advance_ms": 0.0}"#);
    assert_eq!(r.status, 200, "{}", r.text());
    // Still serving.
    assert_eq!(server.post_json("/v1/ids", r#"{"count": 3}"#).status, 200);
}
