//! A static node id is held host-wide: a second live process asking for it is refused with the
//! holder's pid, and the holder's death frees it with no cleanup. The holder is this test binary
//! run again with `POLYFLAKE_TEST_HOLD` set (its own process, as a second service would be).

use polyflake::{Error, Generator};
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

const HOLD: &str = "POLYFLAKE_TEST_HOLD";

/// Run as the holder: take the node id named in the environment, say so, wait for stdin to close.
#[test]
fn holder() {
    let Ok(node) = std::env::var(HOLD) else {
        return; // not the holder run
    };
    let g = Generator::strict(node.parse::<i128>().unwrap()).unwrap();
    g.next_id().unwrap();
    println!("ready");
    std::io::stdout().flush().unwrap();
    let mut line = String::new();
    let _ = std::io::stdin().read_line(&mut line);
    // On "last": mint once more, say what, and exit at once (a holder dying mid-millisecond).
    if line.trim() == "last" {
        println!("last {}", g.next_id().unwrap());
        std::io::stdout().flush().unwrap();
        std::process::exit(0);
    }
}

fn spawn_holder(node: u32, scope: Option<&str>) -> (Child, BufReader<ChildStdout>) {
    let mut cmd = Command::new(std::env::current_exe().unwrap());
    cmd.args(["--exact", "holder", "--nocapture", "--test-threads=1"])
        .env(HOLD, node.to_string())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped());
    // The holder shares our scope (the Makefile gives each test suite one), unless told another.
    if let Some(s) = scope {
        let ours = std::env::var("POLYFLAKE_HOST_SCOPE").unwrap_or_default();
        cmd.env("POLYFLAKE_HOST_SCOPE", format!("{ours}{s}"));
    }
    let mut child = cmd.spawn().unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    while !line.contains("ready") {
        line.clear();
        assert!(
            out.read_line(&mut line).unwrap() > 0,
            "the holder exited early"
        );
    }
    (child, out)
}

#[test]
fn a_second_process_is_refused_until_the_holder_dies() {
    let (mut child, _out) = spawn_holder(942, None);
    let err = Generator::strict(942).unwrap_err();
    assert!(
        matches!(err, Error::NodeIdInUse { node_id: 942, holder_pid: Some(p), .. } if p == child.id()),
        "{err:?}"
    );
    let text = err.to_string();
    assert!(text.contains(&format!("process {}", child.id())), "{text}");
    assert!(text.contains("lease"), "{text}");
    // Another layout is another set of bits: no conflict.
    Generator::builder(942)
        .layout(polyflake::Layout::new(41, 13, 9).unwrap())
        .build()
        .unwrap();
    // Another epoch is not: the same node id and layout issue the same bits whenever the two
    // elapsed times meet.
    let err = Generator::builder(942)
        .epoch_ms(polyflake::DEFAULT_EPOCH_MS + 1_000)
        .build()
        .unwrap_err();
    assert_eq!(err.kind(), polyflake::ErrorKind::NodeIdInUse, "{err}");
    // A kill -9 needs no cleanup: the kernel frees the name with the process.
    child.kill().unwrap();
    child.wait().unwrap();
    let t = Instant::now();
    let g = Generator::strict(942).unwrap();
    assert!(g.next_id().is_ok());
    assert!(t.elapsed() < Duration::from_secs(5));
}

#[test]
fn a_named_scope_is_another_space_on_the_host() {
    let (mut child, _out) = spawn_holder(943, Some("-billing"));
    let g = Generator::strict(943).unwrap();
    assert!(g.next_id().is_ok());
    drop(child.stdin.take());
    child.wait().unwrap();
}

#[test]
fn a_handover_never_repeats_the_previous_holders_millisecond() {
    // The holder mints and exits at once; we take the name the moment it is free. Without the
    // "count this millisecond as spent" rule our first ID would often share its millisecond and
    // repeat one of its sequence numbers.
    for _ in 0..50 {
        let (mut child, mut out) = spawn_holder(944, None);
        let mut stdin = child.stdin.take().unwrap();
        writeln!(stdin, "last").unwrap();
        let mut line = String::new();
        while !line.starts_with("last ") {
            line.clear();
            assert!(
                out.read_line(&mut line).unwrap() > 0,
                "the holder said nothing"
            );
        }
        let theirs: u64 = line["last ".len()..].trim().parse().unwrap();
        let t = Instant::now();
        let g = loop {
            match Generator::strict(944) {
                Ok(g) => break g,
                Err(e) => {
                    assert!(t.elapsed() < Duration::from_secs(10), "{e}");
                    std::hint::spin_loop();
                }
            }
        };
        let ours = g.next_id().unwrap();
        assert!(ours > theirs, "ours {ours} <= theirs {theirs}");
        child.wait().unwrap();
    }
}
