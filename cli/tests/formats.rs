//! UUIDv7 and ULID, the clock source and the core's metric table through the running binary:
//! `next --format`, `decode` of either text, `POST /v1/ids {"format": ...}`, `--clock`, health,
//! and `/metrics` parsed back against `polyflake::HEALTH_METRICS`.

mod common;

use common::{run, Resp, Server};
use polyflake::{parse_ulid, parse_uuid, ulid_timestamp_ms, uuid7_timestamp_ms, MetricKind};
use serde_json::Value;
use std::collections::{HashMap, HashSet};

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64
}

/// The UUIDs or ULIDs of a text, parsed by the core; their timestamps are recent and not ahead
/// of `until` (strict mode).
fn parse_all(format: &str, texts: &[&str], until: i64) -> Vec<u128> {
    texts
        .iter()
        .map(|t| {
            let (u, ms) = match format {
                "uuidv7" => {
                    assert_eq!(t.len(), 36, "{t}");
                    assert_eq!(
                        *t,
                        t.to_ascii_lowercase(),
                        "canonical UUID text is lower case"
                    );
                    let u = parse_uuid(t).unwrap();
                    (u, uuid7_timestamp_ms(u).expect("a version-7 UUID"))
                }
                "ulid" => {
                    assert_eq!(t.len(), 26, "{t}");
                    assert_eq!(*t, t.to_ascii_uppercase(), "ULID text is upper case");
                    let u = parse_ulid(t).unwrap();
                    (u, ulid_timestamp_ms(u))
                }
                other => panic!("format {other}"),
            };
            assert!(ms <= until && ms + 60_000 > until, "{t}: {ms} vs {until}");
            u
        })
        .collect()
}

fn assert_increasing(ids: &[u128]) {
    assert!(ids.windows(2).all(|w| w[0] < w[1]), "IDs increase");
}

/// A failed run: the exit code and the one line on stderr.
fn failure(args: &[&str]) -> (i32, String) {
    let r = run(args);
    assert!(!r.status.success(), "{args:?} succeeded: {}", r.stdout);
    assert_eq!(r.stdout, "", "{args:?}");
    let lines: Vec<&str> = r.stderr.lines().collect();
    assert_eq!(lines.len(), 1, "{args:?}: {:?}", r.stderr);
    (r.status.code().unwrap_or(-1), lines[0].to_string())
}

/// A run refused as bad input (exit 2): its one line on stderr.
fn bad_input(args: &[&str]) -> String {
    let (code, line) = failure(args);
    assert_eq!(code, 2, "{args:?}: {line}");
    line
}

/// `polyflake ARGS --output json`, which must succeed: its answer.
fn json_of(args: &[&str]) -> Value {
    let mut all = args.to_vec();
    all.extend_from_slice(&["--output", "json"]);
    let r = run(&all);
    assert!(r.status.success(), "{all:?}: {}", r.stderr);
    serde_json::from_str(&r.stdout).unwrap_or_else(|e| panic!("{all:?}: {e}: {}", r.stdout))
}

#[test]
fn next_mints_uuidv7_and_ulid_without_a_node_id() {
    for format in ["uuidv7", "ulid"] {
        let r = run(&["next", "--format", format, "-n", "5000"]);
        assert!(r.status.success(), "{format}: {}", r.stderr);
        let lines: Vec<&str> = r.stdout.lines().collect();
        assert_eq!(lines.len(), 5000);
        let ids = parse_all(format, &lines, now_ms());
        assert_increasing(&ids);

        let r = run(&["next", "--format", format, "-n", "3", "--output", "json"]);
        assert!(r.status.success(), "{}", r.stderr);
        let v: Value = serde_json::from_str(&r.stdout).unwrap();
        assert_eq!(v["format"], format);
        assert_eq!(v["clock_source"], "precise");
        let texts: Vec<&str> = v["ids"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_str().unwrap())
            .collect();
        assert_eq!(texts.len(), 3);
        assert_increasing(&parse_all(format, &texts, now_ms()));
        assert!(v.get("node_id").is_none(), "{v}");
    }
    // The 64-bit ID stays the default, and `--format snowflake` names it.
    for args in [
        &["next", "--node-id", "5"][..],
        &["next", "--format", "snowflake", "--node-id", "5"],
    ] {
        let r = run(args);
        assert!(r.status.success(), "{}", r.stderr);
        let id: u64 = r.stdout.trim().parse().expect("a decimal ID");
        assert_eq!(common::fields_default(id).1, 5);
    }
}

#[test]
fn next_format_old_spelling_and_bad_names() {
    // `--format json` / `plain` is the old spelling of --output.
    let r = run(&["next", "--node-id", "9", "-n", "2", "--format", "json"]);
    assert!(r.status.success(), "{}", r.stderr);
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(v["node_id"], 9);
    assert_eq!(v["ids"].as_array().unwrap().len(), 2);
    // Given with --output too, it must agree.
    let old = ["next", "--node-id", "9", "--format", "json", "--output"];
    assert_eq!(json_of(&old[..5])["node_id"], 9);
    assert!(run(&[&old[..], &["json"]].concat()).status.success());
    let line = bad_input(&[&old[..], &["plain"]].concat());
    assert!(line.contains("--output"), "{line}");
    // decode and layouts: --output, and --format as the old spelling.
    for flag in ["--output", "--format"] {
        let r = run(&["layouts", flag, "json"]);
        assert!(r.status.success(), "{}", r.stderr);
        assert!(serde_json::from_str::<Value>(&r.stdout).unwrap().is_array());
    }
    for bad in ["uuid", "UUIDV7", "ulid ", "", "v7"] {
        let line = bad_input(&["next", "--format", bad]);
        assert!(
            line.contains("snowflake") && line.contains("uuidv7") && line.contains("ulid"),
            "{bad:?}: {line}"
        );
    }
    // The 128-bit formats take no node id, no layout, no epoch: a clear refusal, not ignored.
    for extra in [
        &["--node-id", "3"][..],
        &["--lease-dir", "/tmp/nowhere"],
        &["--layout", "short"],
        &["--epoch-ms", "0"],
        &["--zookeeper", "127.0.0.1:1"],
    ] {
        let mut args = vec!["next", "--format", "ulid"];
        args.extend_from_slice(extra);
        let line = bad_input(&args);
        assert!(line.contains("needs no node id"), "{line}");
    }
    // Count limits are the core's, for every format.
    for format in ["snowflake", "uuidv7", "ulid"] {
        let node: &[&str] = if format == "snowflake" {
            &["--node-id", "1"]
        } else {
            &[]
        };
        let line = bad_input(&[&["next", "--format", format, "-n", "-1"], node].concat());
        assert!(line.contains("out of range"), "{format}: {line}");
        let r = run(&[&["next", "--format", format, "-n", "0"], node].concat());
        assert!(
            r.status.success() && r.stdout.is_empty(),
            "{format}: {}",
            r.stderr
        );
    }
    let line = bad_input(&["next", "--format", "uuidv7", "-n", "99999999999"]);
    assert!(line.contains("out of range"), "{line}");
}

#[test]
fn decode_tells_the_format_from_the_text() {
    // RFC 9562's appendix example (any case in, canonical out) and the ULID spec's example.
    let r = run(&[
        "decode",
        "017F22E2-79B0-7CC3-98C4-DC0C0C07398F",
        "01arz3ndektsv4rrffq69g5fav",
        "141264821508263936",
    ]);
    assert!(r.status.success(), "{}", r.stderr);
    let lines: Vec<&str> = r.stdout.lines().collect();
    assert_eq!(
        lines,
        [
            "017f22e2-79b0-7cc3-98c4-dc0c0c07398f  format=uuidv7  time=2022-02-22T19:22:22.000Z  unix_ms=1645557742000",
            "01ARZ3NDEKTSV4RRFFQ69G5FAV  format=ulid  time=2016-07-30T23:54:10.259Z  unix_ms=1469922850259",
            "141264821508263936  time=2025-01-24T19:35:58.021Z  unix_ms=1737747358021  node=37  sequence=0",
        ]
    );
    let r = run(&[
        "decode",
        "--output",
        "json",
        "017f22e2-79b0-7cc3-98c4-dc0c0c07398f",
        "01ARZ3NDEKTSV4RRFFQ69G5FAV",
        "141264821508263936",
    ]);
    assert!(r.status.success(), "{}", r.stderr);
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(v[0]["format"], "uuidv7");
    assert_eq!(v[0]["unix_ms"], 1_645_557_742_000i64);
    assert_eq!(v[0]["time"], "2022-02-22T19:22:22.000Z");
    assert_eq!(v[1]["format"], "ulid");
    assert_eq!(v[1]["id"], "01ARZ3NDEKTSV4RRFFQ69G5FAV");
    assert_eq!(v[1]["unix_ms"], 1_469_922_850_259i64);
    assert_eq!(v[2]["format"], "snowflake");
    assert_eq!(v[2]["node_id"], 37);
    // What `next` mints, `decode` reads back.
    for format in ["uuidv7", "ulid"] {
        let minted = run(&["next", "--format", format]);
        let text = minted.stdout.trim();
        let r = run(&["decode", "--output", "json", text]);
        let v: Value = serde_json::from_str(&r.stdout).unwrap();
        assert_eq!(v[0]["format"], format);
        assert_eq!(v[0]["id"], text);
    }
    // Bad text in either form: one line, the core's INVALID_ID, exit 2, nothing printed.
    for bad in [
        "017f22e2-79b0-6cc3-98c4-dc0c0c07398f", // version 6
        "017f22e2-79b0-7cc3-18c4-dc0c0c07398f", // not the RFC 9562 variant
        "017f22e2+79b0-7cc3-98c4-dc0c0c07398f",
        "017f22e2-79b0-7cc3-98c4-dc0c0c07398g",
        "81ARZ3NDEKTSV4RRFFQ69G5FAV", // overflows 128 bits
        "01ARZ3NDEKTSV4RRFFQ69G5FAU", // U is not a digit
        "01ARZ3NDEKTSV4RRFFQ69G5FA",
    ] {
        let line = bad_input(&["decode", "141264821508263936", bad]);
        assert!(line.ends_with("[INVALID_ID]"), "{bad}: {line}");
    }
}

#[test]
fn clock_flag_and_what_health_reports() {
    let v = json_of(&["next", "--node-id", "4", "--clock", "coarse"]);
    // Coarse where the system's coarse clock is fine enough (Linux: a tick of 10 ms or less),
    // else the core falls back to precise and says why in health.
    assert!(
        v["clock_source"] == "coarse" || v["clock_source"] == "precise",
        "{v}"
    );
    let coarse_in_use = v["clock_source"] == "coarse";
    for format in ["snowflake", "uuidv7", "ulid"] {
        let mut args = vec![
            "next", "--format", format, "--clock", "coarse", "-n", "3000",
        ];
        if format == "snowflake" {
            args.extend_from_slice(&["--node-id", "4"]);
        }
        let v = json_of(&args);
        assert_eq!(v["ids"].as_array().unwrap().len(), 3000);
        assert_eq!(v["clock_source"] == "coarse", coarse_in_use, "{v}");
    }
    let v = json_of(&["next", "--node-id", "4", "--clock", "precise"]);
    assert_eq!(v["clock_source"], "precise");
    // A bad name: the core's error, exit 2.
    for bad in ["fast", "Coarse", ""] {
        let line = bad_input(&["next", "--node-id", "4", "--clock", bad]);
        assert!(
            line.contains("not a clock source") && line.contains("coarse"),
            "{line}"
        );
        let e = Server::try_start(&["--node-id", "4", "--clock", bad]).err();
        assert!(
            e.is_some_and(|e| e.contains("not a clock source")),
            "{bad:?}"
        );
    }
    // The service: health names the clock, and the banner too.
    let server = Server::start(&["--node-id", "6", "--clock", "coarse"]);
    let h = server.get("/v1/health").json();
    assert_eq!(h["clock_source"] == "coarse", coarse_in_use, "{h}");
    assert!(h["clock_tick_ns"].as_u64().is_some_and(|t| t > 0), "{h}");
    assert_eq!(
        h["clock_note"].as_str().unwrap().is_empty(),
        coarse_in_use,
        "{h}"
    );
    assert!(
        server.banner.contains("clock coarse") == coarse_in_use,
        "{}",
        server.banner
    );
    // The first service must stop first: node 6 is held host-wide while it runs.
    drop(server);
    let server = Server::start(&["--node-id", "6"]);
    let h = server.get("/v1/health").json();
    assert_eq!(h["clock_source"], "precise");
    assert_eq!(h["clock_note"], "");
    assert!(server.banner.contains("clock precise"), "{}", server.banner);
}

fn texts(r: &Resp) -> Vec<String> {
    assert_eq!(r.status, 200, "{}", r.text());
    r.json()["ids"]
        .as_array()
        .expect("ids")
        .iter()
        .map(|x| x.as_str().expect("IDs are strings").to_string())
        .collect()
}

#[test]
fn service_mints_every_format() {
    let server = Server::start(&["--node-id", "21", "--max-count", "5000"]);
    for format in ["uuidv7", "ulid"] {
        let mut all = Vec::new();
        for count in [1usize, 2, 4096, 5000] {
            let r = server.post_json(
                "/v1/ids",
                &format!("{{\"format\": \"{format}\", \"count\": {count}}}"),
            );
            let v = r.json();
            assert_eq!(v["format"], format, "{v}");
            assert!(v.get("node_id").is_none(), "{v}");
            let t = texts(&r);
            assert_eq!(t.len(), count);
            let refs: Vec<&str> = t.iter().map(String::as_str).collect();
            let ids = parse_all(format, &refs, now_ms());
            assert_increasing(&ids); // in order within the batch
            all.extend(ids);
        }
        // ... and across requests, from one generator.
        assert_increasing(&all);
        let r = server.post_json("/v1/ids", &format!("{{\"format\": \"{format}\"}}"));
        assert_eq!(texts(&r).len(), 1);
    }
    // The 64-bit ID stays the default, and "snowflake" names it.
    for body in ["{}", "{\"format\": \"snowflake\", \"count\": 2}"] {
        let r = server.post_json("/v1/ids", body);
        let v = r.json();
        assert_eq!(v["node_id"], 21, "{v}");
        assert!(v.get("format").is_none(), "{v}");
    }
    // Bad format names and counts: 400 with a stable code, nothing minted.
    for (body, code) in [
        ("{\"format\": \"uuid\"}", "INVALID_FORMAT"),
        ("{\"format\": \"ULID\"}", "INVALID_FORMAT"),
        ("{\"format\": \"\"}", "INVALID_FORMAT"),
        ("{\"format\": 7}", "INVALID_FORMAT"),
        ("{\"format\": null}", "INVALID_FORMAT"),
        ("{\"format\": [\"ulid\"]}", "INVALID_FORMAT"),
        ("{\"format\": \"ulid\", \"count\": 0}", "INVALID_COUNT"),
        ("{\"format\": \"ulid\", \"count\": 5001}", "INVALID_COUNT"),
        ("{\"format\": \"uuidv7\", \"count\": -1}", "INVALID_COUNT"),
        ("{\"format\": \"uuidv7\", \"count\": 1.5}", "INVALID_COUNT"),
        (
            "{\"format\": \"uuidv7\", \"format\": \"ulid\"}",
            "DUPLICATE_KEY",
        ),
        ("{\"format\": \"uuidv7\", \"fromat\": 1}", "INVALID_REQUEST"),
    ] {
        let r = server.post_json("/v1/ids", body);
        assert_eq!(
            (r.status, r.error_code().as_str()),
            (400, code),
            "{body}: {}",
            r.text()
        );
    }
    let r = server.post_json("/v1/ids", "{\"format\": \"uuid\"}");
    let msg = r.json()["error"]["message"].as_str().unwrap().to_string();
    assert!(
        msg.contains("\"uuidv7\"") && msg.contains("\"ulid\""),
        "{msg}"
    );
}

#[test]
fn service_time_ids_refuse_a_rewind_like_snowflake_ids() {
    // The UUIDv7 and ULID generators share the service's (test) clock and strict mode: a
    // 600 ms rewind is a 503 with the core's code, and they issue again once it is undone.
    let server = Server::start(&["--node-id", "22", "--test-clock"]);
    for format in ["uuidv7", "ulid"] {
        let body = format!("{{\"format\": \"{format}\", \"count\": 3}}");
        texts(&server.post_json("/v1/ids", &body));
        let r = server.post_json("/v1/admin/clock", "{\"advance_ms\": -600}");
        assert_eq!(r.status, 200);
        let r = server.post_json("/v1/ids", &body);
        assert_eq!(
            (r.status, r.error_code().as_str()),
            (503, "CLOCK_MOVED_BACKWARDS"),
            "{}",
            r.text()
        );
        assert_eq!(r.header("retry-after"), Some("1"));
        server.post_json("/v1/admin/clock", "{\"offset_ms\": 0}");
        assert_eq!(texts(&server.post_json("/v1/ids", &body)).len(), 3);
    }
}

/// One metric family of a Prometheus text: its TYPE, HELP and samples (name with labels).
#[derive(Debug, Default)]
struct Family {
    kind: String,
    help: String,
    samples: Vec<(String, HashMap<String, String>, f64)>,
}

/// A family's name: a counter's `_total` (which prometheus-client writes on its HELP and TYPE
/// lines as well as on its samples) taken off.
fn family_name(name: &str) -> String {
    name.strip_suffix("_total").unwrap_or(name).to_string()
}

/// Parse the exposition text (format 0.0.4) back: `# HELP`, `# TYPE` and sample lines, label
/// values unescaped. Anything else is a test failure.
fn parse_exposition(text: &str) -> HashMap<String, Family> {
    let mut out: HashMap<String, Family> = HashMap::new();
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("# HELP ") {
            let (name, help) = rest.split_once(' ').expect("HELP name text");
            out.entry(family_name(name)).or_default().help =
                help.replace("\\n", "\n").replace("\\\\", "\\");
        } else if let Some(rest) = line.strip_prefix("# TYPE ") {
            let (name, kind) = rest.split_once(' ').expect("TYPE name kind");
            let f = out.entry(family_name(name)).or_default();
            assert!(f.kind.is_empty(), "two TYPE lines for {name}");
            f.kind = kind.to_string();
        } else if line == "# EOF" || line.is_empty() {
            continue;
        } else {
            assert!(!line.starts_with('#'), "unexpected comment {line:?}");
            let (series, value) = line.rsplit_once(' ').expect("a sample line");
            let value: f64 = value
                .parse()
                .unwrap_or_else(|_| panic!("value in {line:?}"));
            let (name, labels) = match series.split_once('{') {
                None => (series.to_string(), HashMap::new()),
                Some((name, rest)) => {
                    let body = rest.strip_suffix('}').expect("closing brace");
                    (name.to_string(), parse_labels(body))
                }
            };
            out.entry(family_name(&name))
                .or_default()
                .samples
                .push((name, labels, value));
        }
    }
    out
}

fn parse_labels(body: &str) -> HashMap<String, String> {
    let mut labels = HashMap::new();
    let mut chars = body.chars().peekable();
    while chars.peek().is_some() {
        let key: String = chars.by_ref().take_while(|c| *c != '=').collect();
        assert_eq!(chars.next(), Some('"'), "label {key} is quoted");
        let mut value = String::new();
        while let Some(c) = chars.next() {
            match c {
                '\\' => match chars.next() {
                    Some('n') => value.push('\n'),
                    Some(c) => value.push(c),
                    None => panic!("dangling escape"),
                },
                '"' => break,
                c => value.push(c),
            }
        }
        labels.insert(key.trim_start_matches(',').to_string(), value);
        if chars.peek() == Some(&',') {
            chars.next();
        }
    }
    labels
}

#[test]
fn metrics_are_the_cores_table() {
    // A file lease, so the lease metrics are there too: every entry of HEALTH_METRICS.
    let dir = common::temp_dir("metrics-table");
    let server = Server::start(&["--lease-dir", dir.to_str().unwrap()]);
    server.wait_health(200, std::time::Duration::from_secs(15));
    texts(&server.post_json("/v1/ids", "{\"count\": 7}"));
    let text = server.get("/metrics").text();
    let families = parse_exposition(&text);
    let mut seen = HashSet::new();
    for m in &polyflake::HEALTH_METRICS {
        let f = families
            .get(m.name)
            .unwrap_or_else(|| panic!("{} missing from the scrape:\n{text}", m.name));
        assert_eq!(f.kind, m.kind.name(), "{}", m.name);
        assert_eq!(f.help, m.help, "{}", m.name);
        let sample_name = match m.kind {
            MetricKind::Counter => format!("{}_total", m.name),
            MetricKind::Gauge => m.name.to_string(),
        };
        assert!(!f.samples.is_empty(), "{} has no sample", m.name);
        for (name, labels, _) in &f.samples {
            assert_eq!(name, &sample_name);
            let mut got: Vec<&str> = labels.keys().map(String::as_str).collect();
            let mut want = m.labels.to_vec();
            got.sort_unstable();
            want.sort_unstable();
            assert_eq!(got, want, "{}", m.name);
        }
        seen.insert(m.name);
    }
    // The values are the generator's.
    let value = |family: &str| families[family].samples[0].2;
    assert_eq!(value("polyflake_ids_issued"), 7.0);
    assert_eq!(value("polyflake_healthy"), 1.0);
    let lease = &families["polyflake_lease_info"].samples[0].1;
    assert_eq!(lease["kind"], "file");
    assert_eq!(lease["store"], dir.to_str().unwrap());
    assert_eq!(lease["slot"], value("polyflake_node_id").to_string());
    // Every other family is the service's own.
    let own: HashSet<&str> = families
        .keys()
        .map(String::as_str)
        .filter(|n| !seen.contains(n))
        .collect();
    let want: HashSet<&str> = [
        "polyflake_ids_refused",
        "polyflake_blocking_calls",
        "polyflake_http_responses",
        "polyflake_http_connections",
        "polyflake_http_connections_closed",
    ]
    .into_iter()
    .collect();
    assert!(own.is_subset(&want), "{own:?}");
    drop(server);
    let _ = std::fs::remove_dir_all(&dir);
}
