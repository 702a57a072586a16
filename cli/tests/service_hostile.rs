//! `polyflake serve` against hostile clients, over real TCP on 127.0.0.1: a JSON body with a
//! repeated key, protocol-level garbage (bad request lines, huge heads, broken framing),
//! thousands of idle and half-sent connections (under a raised and under a 1,024 open-file
//! limit), heads sent a byte at a time, stalled bodies, every connection busy at the cap; and
//! the OpenAPI description checked in as `cli/openapi.json` against what the binary generates.

mod common;

use common::{repo_root, Server};
use serde_json::Value;
use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

/// Raise this test process's soft open-file limit to the hard one (children inherit it) and
/// check that `need` descriptors fit.
fn raise_fd_limit(need: u64) {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit/setrlimit on a struct we own.
    unsafe {
        assert_eq!(libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim), 0);
        lim.rlim_cur = lim.rlim_max.min(1 << 20);
        assert_eq!(libc::setrlimit(libc::RLIMIT_NOFILE, &lim), 0);
    }
    assert!(
        lim.rlim_cur >= need,
        "this test needs {need} open files; the hard limit is {} (raise it: ulimit -Hn)",
        lim.rlim_cur
    );
}

/// Open `n` connections and send `bytes` on each (nothing if empty), keeping them open.
fn open_idle(addr: SocketAddr, n: usize, bytes: &[u8]) -> Vec<TcpStream> {
    (0..n)
        .map(|i| {
            let mut s =
                TcpStream::connect(addr).unwrap_or_else(|e| panic!("connection {i} of {n}: {e}"));
            if !bytes.is_empty() {
                s.write_all(bytes).expect("send a partial request");
            }
            s
        })
        .collect()
}

/// Send raw bytes on a fresh connection and read until the server closes it (at most 10 s).
fn raw(addr: SocketAddr, bytes: &[u8]) -> Vec<u8> {
    let mut s = TcpStream::connect(addr).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    // The server may answer and close before reading everything: ignore write errors.
    let _ = s.write_all(bytes);
    let mut out = Vec::new();
    let mut buf = [0u8; 65536];
    loop {
        match s.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => out.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == ErrorKind::ConnectionReset => break,
            Err(e) => panic!(
                "reading the answer to {:?}: {e}",
                String::from_utf8_lossy(&bytes[..bytes.len().min(80)])
            ),
        }
    }
    out
}

/// Status code and JSON body of a raw HTTP/1.1 answer.
fn status_and_json(answer: &[u8]) -> (u16, Value) {
    let text = String::from_utf8_lossy(answer);
    let (head, body) = text
        .split_once("\r\n\r\n")
        .unwrap_or_else(|| panic!("no head in {text:?}"));
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no status in {head:?}"));
    assert!(
        head.to_ascii_lowercase()
            .contains("content-type: application/json"),
        "not JSON: {head:?}"
    );
    let v: Value =
        serde_json::from_str(body).unwrap_or_else(|e| panic!("body not JSON ({e}): {body:?}"));
    (status, v)
}

/// True once the server has closed `s` (EOF or reset) within `within`.
fn closed_within(s: &mut TcpStream, within: Duration) -> bool {
    let deadline = Instant::now() + within;
    let mut buf = [0u8; 4096];
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return false;
        }
        s.set_read_timeout(Some(left)).unwrap();
        match s.read(&mut buf) {
            Ok(0) => return true,
            Ok(_) => continue, // an answer before the close
            Err(e) if e.kind() == ErrorKind::ConnectionReset => return true,
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                return false
            }
            Err(e) => panic!("read: {e}"),
        }
    }
}

#[test]
fn a_repeated_json_key_is_refused_with_400() {
    let server = Server::start(&["--node-id", "20", "--test-clock"]);
    for body in [
        r#"{"count": 5, "count": 6}"#,
        r#"{"count": 5, "count": 5}"#,
        r#"{"count": 5, "co\u0075nt": 6}"#,
    ] {
        let r = server.post_json("/v1/ids", body);
        assert_eq!(
            (r.status, r.error_code().as_str()),
            (400, "DUPLICATE_KEY"),
            "{body}"
        );
    }
    let r = server.post_json("/v1/admin/clock", r#"{"offset_ms": 0, "offset_ms": -600}"#);
    assert_eq!((r.status, r.error_code().as_str()), (400, "DUPLICATE_KEY"));
    // Nothing was issued for them; a plain count still works.
    assert_eq!(server.metric("polyflake_ids_issued_total"), 0.0);
    let r = server.post_json("/v1/ids", r#"{"count": 5}"#);
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.json()["ids"].as_array().unwrap().len(), 5);
}

#[test]
fn protocol_garbage_gets_a_json_error_and_the_server_lives_on() {
    let server = Server::start(&["--node-id", "21"]);
    let addr = server.addr;
    let big_header = [
        &b"GET /v1/health HTTP/1.1\r\nHost: x\r\nX-Big: "[..],
        &vec![b'a'; 100_000],
        b"\r\n\r\n",
    ]
    .concat();
    let many_headers = {
        let mut r = b"GET /v1/health HTTP/1.1\r\nHost: x\r\n".to_vec();
        for i in 0..150 {
            r.extend_from_slice(format!("X-H{i}: 1\r\n").as_bytes());
        }
        r.extend_from_slice(b"\r\n");
        r
    };
    let long_target = [
        &b"GET /v1/ids/"[..],
        &vec![b'1'; 70_000],
        b" HTTP/1.1\r\nHost: x\r\n\r\n",
    ]
    .concat();
    let cases: Vec<(&str, Vec<u8>, u16, &str)> = vec![
        ("not HTTP", b"GARBAGE\r\n\r\n".to_vec(), 400, "BAD_REQUEST"),
        ("no version", b"GET /v1/health\r\n\r\n".to_vec(), 400, "BAD_REQUEST"),
        ("bad version", b"GET /v1/health HTTP/9.9\r\n\r\n".to_vec(), 400, "BAD_REQUEST"),
        ("space in target", b"GET /v1/ health HTTP/1.1\r\nHost: x\r\n\r\n".to_vec(), 400, "BAD_REQUEST"),
        ("NUL in target", b"GET /v1/\0 HTTP/1.1\r\nHost: x\r\n\r\n".to_vec(), 400, "BAD_REQUEST"),
        ("header without colon", b"GET /v1/health HTTP/1.1\r\nHost: x\r\nBroken header\r\n\r\n".to_vec(), 400, "BAD_REQUEST"),
        ("TLS hello", [&[0x16u8, 0x03, 0x01, 0x02, 0x00, 0x01][..], &[0xAB; 64], b"\r\n\r\n"].concat(), 400, "BAD_REQUEST"),
        ("two lengths", b"POST /v1/ids HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}".to_vec(), 400, "BAD_REQUEST"),
        ("bad chunk size", b"POST /v1/ids HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nZZ\r\n{}\r\n0\r\n\r\n".to_vec(), 400, "BAD_BODY"),
        ("a 100 KB header", big_header, 431, "REQUEST_HEADER_FIELDS_TOO_LARGE"),
        ("150 headers", many_headers, 431, "REQUEST_HEADER_FIELDS_TOO_LARGE"),
        ("a 70 KB target", long_target, 431, "REQUEST_HEADER_FIELDS_TOO_LARGE"),
    ];
    for (name, bytes, status, code) in &cases {
        let answer = raw(addr, bytes);
        assert!(!answer.is_empty(), "{name}: closed without an answer");
        let (got, v) = status_and_json(&answer);
        assert_eq!(got, *status, "{name}: {v}");
        assert_eq!(v["error"]["code"], *code, "{name}: {v}");
        assert!(
            v["error"]["message"]
                .as_str()
                .is_some_and(|m| !m.is_empty()),
            "{name}"
        );
    }
    // An HTTP/2 client with prior knowledge cannot read an HTTP/1.1 answer: hyper closes the
    // connection without one (the one case with no JSON), and nothing else happens.
    assert!(raw(addr, b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n").is_empty());
    // Half a request, then the client closes: nothing to answer, nothing broken.
    drop(open_idle(addr, 20, b"POST /v1/ids HTTP/1.1\r\nContent-Le"));
    // Random bytes, seeded.
    let mut rng = common::Rng(0x6A4B_A6E5);
    for _ in 0..200 {
        let len = 1 + rng.below(300);
        let mut bytes = rng.bytes(len);
        bytes.extend_from_slice(b"\r\n\r\n");
        let answer = raw(addr, &bytes);
        if !answer.is_empty() {
            let (status, _) = status_and_json(&answer);
            assert!((400..500).contains(&status), "{status} for {bytes:?}");
        }
    }
    // Still alive and healthy, and hyper's own answers were counted like the router's.
    assert_eq!(server.get("/v1/health").status, 200);
    assert!(server.metric("polyflake_http_responses_total{code=\"431\"}") >= 3.0);
}

/// The issue's scenario: idle and half-sent connections must not lock other clients out.
#[test]
fn a_normal_request_succeeds_with_2000_idle_connections_open() {
    raise_fd_limit(2_000 + 200);
    let server = Server::start(&["--node-id", "22"]);
    let silent = open_idle(server.addr, 1000, b"");
    let half_sent = open_idle(
        server.addr,
        1000,
        b"POST /v1/ids HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n",
    );
    let started = Instant::now();
    let r = server.post_json("/v1/ids", "{\"count\": 3}");
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.json()["ids"].as_array().unwrap().len(), 3);
    // The 2,000 were really open on the server's side while it answered.
    let open = server.metric("polyflake_http_connections");
    assert!(open >= 2000.0, "only {open} connections open on the server");
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "the request waited for the idle ones to time out"
    );
    drop((silent, half_sent));
}

/// The same under a 1,024 open-file limit (a common service manager default): the cap is
/// lowered to fit, and newcomers push out the quietest idle connections instead of waiting.
#[test]
fn under_a_1024_file_limit_idle_connections_make_room() {
    raise_fd_limit(2_000 + 200);
    let server = Server::start_with_fd_limit(&["--node-id", "23"], 1024);
    assert!(
        server
            .banner
            .contains("max connections 960 (lowered from 4096: the open-file limit is 1024)"),
        "{}",
        server.banner
    );
    let half_sent = open_idle(server.addr, 2000, b"GET /v1/health HTTP/1.1\r\nHo");
    // A newcomer gets in, at once or after retrying the 503 the server answers while it is
    // still closing the connections it evicted (at most 32 at a time: on a loaded machine
    // their tasks lag behind 2,000 arrivals). Retried as its retry-after says, for 20 s at most.
    for _ in 0..3 {
        let deadline = Instant::now() + Duration::from_secs(20);
        let mut r = server.post_json("/v1/ids", "{}");
        while r.status == 503 && Instant::now() < deadline {
            assert!(
                r.text().contains("being closed to make room"),
                "{}",
                r.text()
            );
            std::thread::sleep(Duration::from_millis(250));
            r = server.post_json("/v1/ids", "{}");
        }
        assert_eq!(r.status, 200, "{}", r.text());
    }
    // Some of the 2,000 may still wait in the listen backlog, or in their kernel's SYN retry
    // when the backlog overflowed (on a busy machine, seconds later); most are accepted and
    // pushed out. Waited for, not read once, so the check does not race the retries.
    let evicted_metric = "polyflake_http_connections_closed_total{reason=\"evicted\"}";
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut evicted = server.metric(evicted_metric);
    while evicted < 500.0 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(200));
        evicted = server.metric(evicted_metric);
    }
    assert!(evicted >= 500.0, "evicted {evicted}");
    let open = server.metric("polyflake_http_connections");
    assert!(open <= 960.0 + 32.0, "{open} open over the cap");
    drop(half_sent);
}

#[test]
fn the_header_timer_starts_at_the_first_byte_and_closes_a_trickled_head() {
    let server = Server::start(&[
        "--node-id",
        "24",
        "--header-read-timeout-ms",
        "400",
        "--idle-timeout-ms",
        "60000",
    ]);
    let mut trickle = TcpStream::connect(server.addr).unwrap();
    let mut quiet = TcpStream::connect(server.addr).unwrap();
    // A byte every 100 ms: never idle, but the head never completes.
    let head = b"GET /v1/health HTTP/1.1\r\nHost: x\r\nX-Slow: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
    let started = Instant::now();
    let mut closed = false;
    for b in head {
        if trickle.write_all(&[*b]).is_err() {
            closed = true;
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
        if started.elapsed() > Duration::from_secs(20) {
            break;
        }
    }
    assert!(
        closed || closed_within(&mut trickle, Duration::from_secs(10)),
        "a head trickled over 7 s was not cut"
    );
    // The quiet connection sent nothing for that long: only the idle timeout (60 s) applies,
    // so it still answers a whole request.
    quiet
        .write_all(b"GET /v1/health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        .unwrap();
    let mut answer = Vec::new();
    quiet
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    quiet.read_to_end(&mut answer).unwrap();
    assert!(
        answer.starts_with(b"HTTP/1.1 200"),
        "{}",
        String::from_utf8_lossy(&answer)
    );
    assert!(
        server.metric("polyflake_http_connections_closed_total{reason=\"header_timeout\"}") >= 1.0
    );
}

#[test]
fn the_idle_timeout_closes_silent_kept_alive_and_stalled_connections() {
    let server = Server::start(&["--node-id", "25", "--idle-timeout-ms", "300"]);
    let mut silent = TcpStream::connect(server.addr).unwrap();
    // Kept alive after an answer.
    let mut kept = TcpStream::connect(server.addr).unwrap();
    kept.write_all(b"GET /v1/health HTTP/1.1\r\nHost: x\r\n\r\n")
        .unwrap();
    // A body that stops coming.
    let mut stalled = TcpStream::connect(server.addr).unwrap();
    stalled
        .write_all(b"POST /v1/ids HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 20\r\n\r\n{\"co")
        .unwrap();
    for (name, s) in [
        ("silent", &mut silent),
        ("kept alive", &mut kept),
        ("stalled body", &mut stalled),
    ] {
        assert!(
            closed_within(s, Duration::from_secs(10)),
            "{name} was not closed"
        );
    }
    assert!(
        server.metric("polyflake_http_connections_closed_total{reason=\"idle_timeout\"}") >= 3.0
    );
    // A slow but steady body (a byte every 100 ms, 1.2 s in all) is never idle for 300 ms.
    let body = b"{\"count\": 2}";
    let mut steady = TcpStream::connect(server.addr).unwrap();
    steady
        .write_all(format!("POST /v1/ids HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n", body.len()).as_bytes())
        .unwrap();
    for b in body {
        std::thread::sleep(Duration::from_millis(100));
        steady.write_all(&[*b]).unwrap();
    }
    let mut answer = Vec::new();
    steady
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    steady.read_to_end(&mut answer).unwrap();
    let (status, v) = status_and_json(&answer);
    assert_eq!(status, 200, "{v}");
    assert_eq!(v["ids"].as_array().unwrap().len(), 2);
}

#[test]
fn at_the_cap_with_every_connection_busy_a_newcomer_gets_503() {
    let server = Server::start(&["--node-id", "26", "--max-connections", "2"]);
    // Two requests being answered: their heads are in, their bodies are not (yet). Only once the
    // server has read a head is the connection busy; before that it is idle, and a newcomer
    // rightly evicts it and is served. A fixed 300 ms for the server to read the two heads can run
    // out on a loaded machine, and asking sooner evicts them, so: if the newcomer was served, the
    // two were not busy yet; open two more and wait twice as long, up to 20 s in all.
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut wait = Duration::from_millis(300);
    let (busy, answer, status, v) = loop {
        let busy: Vec<TcpStream> = (0..2)
            .map(|_| {
                let mut s = TcpStream::connect(server.addr).unwrap();
                s.write_all(b"POST /v1/ids HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 12\r\n\r\n{\"count\"")
                    .unwrap();
                s
            })
            .collect();
        std::thread::sleep(wait);
        let answer = raw(
            server.addr,
            b"GET /v1/health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
        );
        let (status, v) = status_and_json(&answer);
        if status == 503 || Instant::now() > deadline {
            break (busy, answer, status, v);
        }
        wait *= 2;
    };
    assert_eq!(
        (status, v["error"]["code"].as_str()),
        (503, Some("TOO_MANY_CONNECTIONS")),
        "{v}"
    );
    assert!(String::from_utf8_lossy(&answer)
        .to_ascii_lowercase()
        .contains("retry-after: 1"));
    // The busy ones finish normally, and then there is room again.
    for mut s in busy {
        s.write_all(b": 1}").unwrap();
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let mut buf = [0u8; 4096];
        let n = s.read(&mut buf).unwrap();
        assert!(
            buf[..n].starts_with(b"HTTP/1.1 200"),
            "{}",
            String::from_utf8_lossy(&buf[..n])
        );
    }
    assert_eq!(server.wait_health(200, Duration::from_secs(10)).status, 200);
    assert!(server.metric("polyflake_http_connections_closed_total{reason=\"refused\"}") >= 1.0);
}

#[test]
fn limit_flags_are_checked() {
    for args in [
        vec!["--node-id", "1", "--max-connections", "0"],
        vec!["--node-id", "1", "--header-read-timeout-ms", "0"],
        vec!["--node-id", "1", "--idle-timeout-ms", "-5"],
        vec!["--node-id", "1", "--idle-timeout-ms", "99999999999999"],
    ] {
        let e = Server::try_start(&args)
            .err()
            .unwrap_or_else(|| panic!("{args:?} started"));
        assert_eq!(e.lines().count(), 1, "{args:?}: {e:?}");
        assert!(e.starts_with("polyflake: error: "), "{e}");
    }
}

#[test]
fn the_checked_in_openapi_json_is_what_the_code_generates() {
    let path = repo_root().join("cli/openapi.json");
    let checked_in = std::fs::read_to_string(&path).expect("cli/openapi.json");
    let generated = common::run(&["openapi"]);
    assert!(generated.status.success(), "{}", generated.stderr);
    assert!(
        generated.stdout == checked_in,
        "cli/openapi.json is stale: run `make openapi-cli` and commit it"
    );
    let doc: Value = serde_json::from_str(&checked_in).unwrap();
    assert_eq!(doc["openapi"], "3.1.0");
    // The running service serves the same document (with its own count cap).
    let server = Server::start(&["--node-id", "27"]);
    let served = server.get("/openapi.json");
    assert_eq!(served.status, 200);
    assert_eq!(served.json(), doc);
    let capped = Server::start(&["--node-id", "28", "--max-count", "10"]);
    let v = capped.get("/openapi.json").json();
    assert_eq!(
        v["components"]["schemas"]["IdsRequest"]["properties"]["count"]["maximum"],
        10
    );
    // Every route the router answers is described.
    for p in [
        "/v1/ids",
        "/v1/ids/{id}",
        "/v1/health",
        "/metrics",
        "/openapi.json",
    ] {
        assert!(doc["paths"][p].is_object(), "{p} missing");
    }
}
