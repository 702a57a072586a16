//! Every command session in `docs/cli.md` and the README's CLI snippet, run as shown.
//!
//! A block between `<!-- snippet:NAME -->` and `<!-- /snippet -->` holds `$ COMMAND` lines, each
//! followed by what it prints (stdout, then stderr). `cli-session` (docs) and `cli-readme`
//! (README) must match exactly. `cli-minted` and `service-session` mint from the clock, so both
//! sides are masked first: every UUID, ULID and run of digits becomes a placeholder, the HTTP
//! `date` header is dropped, and the service's address is the test's. Everything else (keys,
//! words, codes, order) must match.

mod common;

use common::{repo_root, run, Server};
use regex::Regex;
use std::process::Command;

/// The `(command, expected lines)` pairs of one snippet.
fn session(file: &str, name: &str) -> Vec<(String, Vec<String>)> {
    let text = std::fs::read_to_string(repo_root().join(file)).unwrap();
    let marker = format!("<!-- snippet:{name} -->");
    let start = text
        .find(&marker)
        .unwrap_or_else(|| panic!("{file}: no {marker}"));
    let end = start
        + text[start..]
            .find("<!-- /snippet -->")
            .expect("snippet end marker");
    let mut commands: Vec<(String, Vec<String>)> = Vec::new();
    for line in text[start..end].lines() {
        if let Some(cmd) = line.strip_prefix("$ ") {
            commands.push((cmd.to_string(), Vec::new()));
        } else if line.starts_with("```") || line.starts_with("<!--") {
            continue;
        } else if let Some((_, out)) = commands.last_mut() {
            out.push(line.to_string());
        }
    }
    assert!(
        commands.len() >= 2,
        "{file} {name}: the snippet holds commands"
    );
    commands
}

/// `polyflake ARGS` as a line of words (the snippets quote nothing).
fn polyflake_lines(cmd: &str) -> Vec<String> {
    let mut words = cmd.split_whitespace();
    assert_eq!(words.next(), Some("polyflake"), "{cmd}");
    let args: Vec<&str> = words.collect();
    let r = run(&args);
    r.stdout
        .lines()
        .chain(r.stderr.lines())
        .map(str::to_string)
        .collect()
}

/// Numbers, UUIDs and ULIDs as placeholders; the `date` header and the lowered-cap note gone.
fn mask(lines: &[String]) -> Vec<String> {
    let uuid =
        Regex::new(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
            .unwrap();
    let ulid = Regex::new(r"\b[0-9A-HJKMNP-TV-Z]{26}\b").unwrap();
    let lowered = Regex::new(r" \(lowered from \d+: the open-file limit is \d+\)").unwrap();
    // A static node id's mark lives where the state directory is (the tests give each its own).
    let mark = Regex::new(r"\(restart guard: mark [^)]*\)").unwrap();
    // The kernel's word on the clock is this host's: the docs show a synchronized one.
    let kernel = Regex::new(r#""clock_sync":\{[^}]*\}"#).unwrap();
    let kernel_metric =
        Regex::new(r"^polyflake_clock_(synchronized|max_error_seconds) \S+$").unwrap();
    let store = Regex::new(r#"store(":"|=")[^"]*""#).unwrap();
    let digits = Regex::new(r"\d+").unwrap();
    lines
        .iter()
        .filter(|l| !l.to_ascii_lowercase().starts_with("date:"))
        .map(|l| {
            let l = lowered.replace_all(l, "");
            let l = mark.replace_all(&l, "(restart guard: mark <path>)");
            let l = kernel.replace_all(&l, r#""clock_sync":{<kernel>}"#);
            let l = kernel_metric.replace_all(&l, "polyflake_clock_$1 <kernel>");
            let l = store.replace_all(&l, "store${1}<store>\"");
            let l = uuid.replace_all(&l, "<uuid>");
            let l = ulid.replace_all(&l, "<ulid>");
            digits.replace_all(&l, "<n>").into_owned()
        })
        .collect()
}

fn check_exact(file: &str, name: &str) {
    for (cmd, want) in session(file, name) {
        assert_eq!(polyflake_lines(&cmd), want, "{file}: $ {cmd}");
    }
}

#[test]
fn readme_cli_snippet_runs_as_shown() {
    check_exact("README.md", "cli-readme");
}

#[test]
fn docs_cli_session_runs_as_shown() {
    check_exact("docs/cli.md", "cli-session");
}

#[test]
fn docs_minted_session_runs_as_shown() {
    for (cmd, want) in session("docs/cli.md", "cli-minted") {
        let got = polyflake_lines(&cmd);
        let (mut got_m, mut want_m) = (mask(&got), mask(&want));
        if cmd.contains("/metrics") {
            // The samples of one labelled family (the HTTP answers by code) come in no set order.
            got_m.sort();
            want_m.sort();
        }
        assert_eq!(got_m, want_m, "docs/cli.md: $ {cmd}\n{got:#?}");
    }
}

#[test]
fn docs_service_session_runs_as_shown() {
    let mut steps = session("docs/cli.md", "service-session").into_iter();
    let (serve, banner) = steps.next().unwrap();
    let args: Vec<&str> = serve
        .strip_prefix("polyflake serve")
        .expect("the session starts the service")
        .split_whitespace()
        .collect();
    let server = Server::start(&args);
    let shown = "127.0.0.1:8080";
    let addr = server.addr.to_string();
    let banner_got = vec![server.banner.trim_end().replace(&addr, shown)];
    assert_eq!(mask(&banner_got), mask(&banner), "the banner");
    for (cmd, want) in steps {
        assert!(cmd.starts_with("curl "), "{cmd}");
        let out = Command::new("bash")
            .arg("-c")
            .arg(cmd.replace(shown, &addr))
            .output()
            .expect("bash and curl");
        assert!(out.status.success(), "$ {cmd}: {out:?}");
        let got: Vec<String> = String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .map(str::to_string)
            .collect();
        let (mut got_m, mut want_m) = (mask(&got), mask(&want));
        if cmd.contains("/metrics") {
            // The samples of one labelled family (the HTTP answers by code) come in no set order.
            got_m.sort();
            want_m.sort();
        }
        assert_eq!(got_m, want_m, "docs/cli.md: $ {cmd}\n{got:#?}");
    }
}
