//! The `polyflake` commands, run as real processes: `next`, `decode`, `layouts`, help on every
//! subcommand, and one-line errors with a non-zero exit for bad arguments. Expected values come
//! from `tests/vectors/layouts.json` and the bit layout's arithmetic.

mod common;

use common::{fields_default, layout_vectors, run};
use serde_json::Value;

const EPOCH_DEFAULT: u64 = 1_704_067_200_000;

/// A failed run: non-zero exit, nothing on stdout, exactly one line on stderr.
fn assert_one_line_error(args: &[&str]) -> String {
    let r = run(args);
    assert!(!r.status.success(), "{args:?} succeeded: {}", r.stdout);
    assert_eq!(r.stdout, "", "{args:?} printed to stdout");
    let lines: Vec<&str> = r.stderr.lines().collect();
    assert_eq!(
        lines.len(),
        1,
        "{args:?} stderr is not one line: {:?}",
        r.stderr
    );
    assert!(lines[0].starts_with("polyflake: error: "), "{:?}", lines[0]);
    lines[0].to_string()
}

#[test]
fn next_prints_increasing_ids_of_the_node() {
    let r = run(&["next", "-n", "5000", "--node-id", "37"]);
    assert!(r.status.success(), "{}", r.stderr);
    let ids: Vec<u64> = r
        .stdout
        .lines()
        .map(|l| l.parse().expect("a decimal ID"))
        .collect();
    assert_eq!(ids.len(), 5000);
    assert!(ids.windows(2).all(|w| w[0] < w[1]), "IDs increase");
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64;
    for id in &ids {
        let (elapsed, node, _) = fields_default(*id);
        assert_eq!(node, 37);
        // Strict mode: never ahead of the wall clock; and made within the last minute.
        let ms = EPOCH_DEFAULT + elapsed;
        assert!(
            ms <= now + 1 && ms + 60_000 > now,
            "timestamp {ms} vs now {now}"
        );
    }
}

#[test]
fn next_json_carries_ids_as_strings() {
    let r = run(&[
        "next",
        "-n",
        "3",
        "--node-id",
        "9",
        "--monotonic",
        "--format",
        "json",
    ]);
    assert!(r.status.success(), "{}", r.stderr);
    let v: Value = serde_json::from_str(r.stdout.trim()).expect("JSON");
    let ids = v["ids"].as_array().expect("ids array");
    assert_eq!(ids.len(), 3);
    for id in ids {
        let s = id.as_str().expect("each ID is a string");
        assert_eq!(fields_default(s.parse().unwrap()).1, 9);
    }
    assert_eq!(v["node_id"], 9);
    assert_eq!(
        v["epoch_ms"].as_u64(),
        layout_vectors()["epoch_ms_default"].as_u64()
    );
}

#[test]
fn next_honours_layout_and_epoch() {
    // big_fleet is 41/12/10: node 4000 fits only there.
    let r = run(&[
        "next",
        "--node-id",
        "4000",
        "--layout",
        "big_fleet",
        "--epoch-ms",
        "1600000000000",
    ]);
    assert!(r.status.success(), "{}", r.stderr);
    let id: u64 = r.stdout.trim().parse().unwrap();
    assert_eq!((id >> 10) & 4095, 4000);
    let d = run(&[
        "decode",
        "--layout",
        "41/12/10",
        "--epoch-ms",
        "1600000000000",
        "--format",
        "json",
        r.stdout.trim(),
    ]);
    let v: Value = serde_json::from_str(d.stdout.trim()).unwrap();
    assert_eq!(v[0]["node_id"], 4000);
    assert_eq!(
        v[0]["unix_ms"].as_u64().unwrap(),
        1_600_000_000_000 + (id >> 22)
    );
}

#[test]
fn decode_the_design_literals() {
    let r = run(&["decode", "141264821508263936", "141264821510144037"]);
    assert!(r.status.success(), "{}", r.stderr);
    let lines: Vec<&str> = r.stdout.lines().collect();
    assert_eq!(lines.len(), 2);
    // The reference literal: node 37, sequence 0, at 2025-01-24T19:35:58.021Z.
    assert_eq!(
        lines[0],
        "141264821508263936  time=2025-01-24T19:35:58.021Z  unix_ms=1737747358021  node=37  sequence=0"
    );
    // And both literals against the vector file, through the JSON form.
    let j = run(&[
        "decode",
        "--format",
        "json",
        "141264821508263936",
        "141264821510144037",
    ]);
    let got: Value = serde_json::from_str(j.stdout.trim()).unwrap();
    let literals = layout_vectors()["literals"].clone();
    for (g, want) in got
        .as_array()
        .unwrap()
        .iter()
        .zip(literals.as_array().unwrap())
    {
        assert_eq!(g["id"], want["id"]);
        assert_eq!(g["unix_ms"], want["epoch_ms"]);
        assert_eq!(g["node_id"], want["node_id"]);
        assert_eq!(g["sequence"], want["sequence"]);
        assert_eq!(g["time"], "2025-01-24T19:35:58.021Z");
    }
}

#[test]
fn decode_every_layout_vector() {
    let v = layout_vectors();
    for (key, layout) in v["layouts"].as_object().unwrap() {
        let bits = format!(
            "{}/{}/{}",
            layout["timestamp_bits"], layout["node_bits"], layout["sequence_bits"]
        );
        let cases = layout["cases"].as_array().unwrap();
        let mut args = vec!["decode", "--format", "json", "--layout", bits.as_str()];
        args.extend(cases.iter().map(|c| c["id"].as_str().unwrap()));
        let r = run(&args);
        assert!(r.status.success(), "{key}: {}", r.stderr);
        let got: Value = serde_json::from_str(r.stdout.trim()).unwrap();
        for (g, c) in got.as_array().unwrap().iter().zip(cases) {
            assert_eq!(g["unix_ms"], c["epoch_ms"], "{key} {c}");
            assert_eq!(g["node_id"], c["node_id"], "{key} {c}");
            assert_eq!(g["sequence"], c["sequence"], "{key} {c}");
        }
    }
}

#[test]
fn decode_refuses_invalid_ids_in_one_line() {
    let v = layout_vectors();
    for bad in v["invalid"]["decode_default_layout"].as_array().unwrap() {
        let bad = bad.as_str().unwrap();
        let line = assert_one_line_error(&["decode", bad]);
        assert!(line.contains("INVALID_ID"), "{bad:?}: {line}");
    }
    // A bad ID among good ones: no partial output.
    assert_one_line_error(&["decode", "141264821508263936", "12a"]);
}

#[test]
fn layouts_match_the_vectors() {
    let r = run(&["layouts"]);
    assert!(r.status.success(), "{}", r.stderr);
    let rows: Vec<Vec<&str>> = r
        .stdout
        .lines()
        .skip(1)
        .map(|l| l.split_whitespace().collect())
        .collect();
    let v = layout_vectors();
    let layouts = v["layouts"].as_object().unwrap();
    assert_eq!(rows.len(), layouts.len());
    for row in &rows {
        // The vector keys are `<name>_<t>_<n>_<s>`.
        let (key, want) = layouts
            .iter()
            .find(|(k, _)| {
                k.starts_with(&format!("{}_", row[0]))
                    && !k[row[0].len() + 1..].contains(char::is_alphabetic)
            })
            .unwrap_or_else(|| panic!("no vector for {row:?}"));
        let bits = format!(
            "{}/{}/{}",
            want["timestamp_bits"], want["node_bits"], want["sequence_bits"]
        );
        assert_eq!(row[1], bits, "{key}");
        assert_eq!(
            row[2],
            format!("{:.2}", want["years"].as_f64().unwrap()),
            "{key}"
        );
        assert_eq!(
            row[3].parse::<u64>().unwrap(),
            want["max_node_id"].as_u64().unwrap() + 1,
            "{key}"
        );
        assert_eq!(
            row[4].parse::<u64>().unwrap(),
            want["max_sequence"].as_u64().unwrap() + 1,
            "{key}"
        );
    }
    let j = run(&["layouts", "--format", "json"]);
    let got: Value = serde_json::from_str(j.stdout.trim()).unwrap();
    assert_eq!(got.as_array().unwrap().len(), layouts.len());
    for g in got.as_array().unwrap() {
        let want = layouts
            .values()
            .find(|w| {
                w["timestamp_bits"] == g["timestamp_bits"] && w["node_bits"] == g["node_bits"]
            })
            .unwrap();
        assert_eq!(g["max_elapsed_ms"], want["max_elapsed_ms"]);
        assert!((g["years"].as_f64().unwrap() - want["years"].as_f64().unwrap()).abs() < 0.005);
    }
}

#[test]
fn help_on_every_subcommand() {
    for args in [
        vec!["--help"],
        vec!["next", "--help"],
        vec!["decode", "--help"],
        vec!["layouts", "--help"],
        vec!["serve", "--help"],
        vec!["help", "serve"],
    ] {
        let r = run(&args);
        assert!(r.status.success(), "{args:?}: {}", r.stderr);
        assert!(
            r.stdout.contains("Usage: polyflake"),
            "{args:?}: {}",
            r.stdout
        );
    }
    // The test clock is hidden from help.
    assert!(!run(&["serve", "--help"]).stdout.contains("test-clock"));
    let v = run(&["--version"]);
    assert!(v.status.success() && v.stdout.starts_with("polyflake "));
}

#[test]
fn bad_arguments_are_one_line_and_non_zero() {
    let cases: &[&[&str]] = &[
        &[],
        &["bogus"],
        &["next", "--node-id", "1", "--slots", "2"], // lease options without a lease
        &["next", "--node-id", "1", "--lease-dir", "/tmp"], // two node sources
        &["next", "--etcd-prefix", "/x"],            // etcd options without --etcd
        &["next", "--node-id-env", "POLYFLAKE_TEST_UNSET_VAR"],
        &["next", "--node-id-from-hostname=web"], // no ordinal
        &["next", "--node-id-from-ipv4", "10.0.0.1/21"], // 11 host bits > 10 node bits
        &["next", "--node-id-from-ipv4", "10.0.0.1"],
        &[
            "next",
            "--lease-dir",
            "/tmp/polyflake-cli-unused",
            "--slots",
            "0",
        ],
        &["next", "--node-id", "1024"], // out of range for 41/10/12
        &["next", "--node-id", "-1"],
        &["next", "--node-id", "abc"],
        &["next", "--node-id", "1", "-n", "-1"],
        &["next", "--node-id", "1", "-n", "99999999999"], // over the core's batch limit
        &["next", "--node-id", "1", "--layout", "nope"],
        &["next", "--node-id", "1", "--layout", "41/10/13"],
        &["next", "--node-id", "1", "--epoch-ms", "99999999999999"], // in the future
        &["next", "--node-id", "1", "--max-wait-ms", "-5"],
        &["next", "--node-id", "1", "--format", "xml"],
        &["next", "--node-id", "1", "--no-such-flag"],
        &["decode"],
        &["decode", "--layout", "0/10/53", "1"],
        &["layouts", "extra"],
        &["serve", "--listen", "not-an-address", "--node-id", "1"],
        &["serve", "--node-id", "1", "--max-count", "0"],
    ];
    for args in cases {
        let line = assert_one_line_error(args);
        let code = run(args).status.code();
        assert!(
            matches!(code, Some(1) | Some(2)),
            "{args:?}: exit {code:?}: {line}"
        );
    }
}

#[test]
fn next_zero_prints_nothing() {
    let r = run(&["next", "--node-id", "3", "-n", "0"]);
    assert!(r.status.success(), "{}", r.stderr);
    assert_eq!(r.stdout, "");
}

#[test]
fn other_node_sources() {
    let env = common::command()
        .args(["next", "--node-id-env", "POLYFLAKE_TEST_NODE"])
        .env("POLYFLAKE_TEST_NODE", "321")
        .output()
        .unwrap();
    assert!(env.status.success());
    let id: u64 = String::from_utf8(env.stdout)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert_eq!(fields_default(id).1, 321);
    let r = run(&["next", "--node-id-from-hostname=ids-7"]);
    assert_eq!(fields_default(r.stdout.trim().parse().unwrap()).1, 7);
    // 10.1.7.9 in a /22: host bits 3 * 256 + 9.
    let r = run(&["next", "--node-id-from-ipv4", "10.1.7.9/22"]);
    assert_eq!(
        fields_default(r.stdout.trim().parse().unwrap()).1,
        3 * 256 + 9
    );
}

#[test]
fn next_defaults_to_a_file_lease() {
    // With POLYFLAKE_LEASE_DIR set, that is the default lease directory (else
    // /var/tmp/polyflake-leases).
    let runtime = common::temp_dir("xdg");
    let out = common::command()
        .args(["next", "-n", "3", "--format", "json"])
        .env("POLYFLAKE_LEASE_DIR", runtime.join("polyflake"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let slots: Vec<_> = std::fs::read_dir(runtime.join("polyflake"))
        .expect("lease directory made")
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert!(slots.iter().any(|n| n.starts_with("slot-")), "{slots:?}");
    // The lease is freed at exit: a second run leases again and waits at most its guard.
    let again = common::command()
        .args(["next", "--lease-dir"])
        .arg(runtime.join("polyflake"))
        .args(["--slots", "1"])
        .output()
        .unwrap();
    assert!(
        again.status.success(),
        "{}",
        String::from_utf8_lossy(&again.stderr)
    );
    let id: u64 = String::from_utf8(again.stdout)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert_eq!(fields_default(id).1, 0);
    let _ = std::fs::remove_dir_all(&runtime);
}

#[test]
fn refusals_echo_what_was_typed() {
    // (flag and value, the text the one-line error must hold, exit code)
    let big = "9".repeat(45);
    let cases: Vec<(Vec<&str>, String)> = vec![
        (
            vec!["--node-id", "99999999999999999999999"],
            "node id 99999999999999999999999 is out of range".into(),
        ),
        (
            vec!["--node-id", &big],
            format!("'{big}' for '--node-id <N>'"),
        ),
        (
            vec!["--node-id", "1", "--epoch-ms", "99999999999999999999"],
            "'99999999999999999999' for '--epoch-ms <MS>'".into(),
        ),
        (
            vec!["--node-id", "1", "--epoch-ms", "9223372036854775807"],
            "invalid epoch 9223372036854775807 ms".into(),
        ),
        (
            vec!["--node-id", "1", "-n", "99999999999999999999999"],
            "99999999999999999999999 is out of range".into(),
        ),
        (
            vec!["--node-id", "1", "--max-wait-ms", "1e308"],
            "max_wait_ms: 1e308 ms is over the 60000 ms limit".into(),
        ),
        (
            vec!["--node-id", "1", "--max-wait-ms", "6e4.5"],
            "'6e4.5' for '--max-wait-ms <MS>'".into(),
        ),
        (
            vec!["--node-id", "1", "--max-wait-ms", "1e999"],
            "\"1e999\" is not a finite number of ms".into(),
        ),
        (
            vec!["--node-id", "1", "--max-wait-ms", "-0.50"],
            "max_wait_ms: -0.50 is not".into(),
        ),
        (
            vec!["--format", "ulid", "--max-wait-ms", "7e4"],
            "max_wait_ms: 7e4 ms is over".into(),
        ),
        (
            vec![
                "--node-id",
                "1",
                "--max-forward-step-ms",
                "99999999999999999999999",
            ],
            "\"99999999999999999999999\" is too large".into(),
        ),
        (
            vec!["--node-id", "1", "--max-lead-ms", "99999999999999999999"],
            "'99999999999999999999' for '--max-lead-ms <MS|off>'".into(),
        ),
    ];
    for (args, want) in &cases {
        let mut all = vec!["next"];
        all.extend(args);
        let line = assert_one_line_error(&all);
        assert!(line.contains(want.as_str()), "{all:?}: {line}");
        assert_eq!(run(&all).status.code(), Some(2), "{all:?}");
    }
    let r = common::run_env(
        &["next", "--node-id-env", "POLYFLAKE_TEST_NODE"],
        &[("POLYFLAKE_TEST_NODE", "18446744073709551616")],
    );
    assert!(r.stderr.contains("18446744073709551616"), "{}", r.stderr);
    let r = run(&["serve", "--node-id", "1", "--max-wait-ms", "1e308"]);
    assert!(r.stderr.contains("max_wait_ms: 1e308 ms"), "{}", r.stderr);
}
