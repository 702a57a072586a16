//! The kernel's word on the clock: health reports it, and `max_clock_error_ms` refuses to issue
//! while the clock is unsynchronized or its maximum error is over the bound, and issues again
//! once it is back, within the monitor's second. The kernel's state is moved under a live
//! process by a stand-in for `adjtimex` (`support/fake_adjtimex.c`, preloaded), never the real
//! clock's.

use polyflake::{ClockSyncState, ErrorKind, Generator, HealthStatus};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

/// Build the stand-in once per test run; its path.
fn shim() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("pf-adjtimex-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let so = dir.join("fake_adjtimex.so");
    if !so.exists() {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/support/fake_adjtimex.c");
        let ok = Command::new("cc")
            .args(["-shared", "-fPIC", "-O2", "-o"])
            .arg(&so)
            .arg(&src)
            .status()
            .expect("a C compiler (cc)")
            .success();
        assert!(ok, "building {}", src.display());
    }
    so
}

/// The child: a strict generator bound to 50 ms of error and one without a bound, answering
/// `check` with what each does now.
#[test]
fn child() {
    if std::env::var("PF_SYNC_CHILD").is_err() {
        return;
    }
    let bound = Generator::builder(970)
        .max_clock_error_ms(Some(50))
        .build()
        .unwrap();
    let free = Generator::builder(971).build().unwrap();
    let stdin = std::io::stdin();
    for line in stdin.lock().lines() {
        if line.unwrap() != "check" {
            break;
        }
        let h = bound.health();
        let bound_says = match bound.next_id() {
            Ok(_) => "ID".to_string(),
            Err(e) => format!("{} [{e}]", e.code()),
        };
        let free_says = if free.next_id().is_ok() {
            "ID"
        } else {
            "REFUSED"
        };
        println!(
            "ANSWER bound={bound_says} free={free_says} status={} state={} max_error_us={}",
            h.status.name(),
            h.clock_sync.state.name(),
            h.clock_sync.max_error_us
        );
        std::io::stdout().flush().unwrap();
    }
}

#[test]
fn the_kernels_word_refuses_and_releases_a_bound_generator() {
    let so = shim();
    let state = so.with_file_name("state");
    let set = |s: &str| std::fs::write(&state, s).unwrap();
    set("0 0 5000 1000"); // synchronized, 5 ms of maximum error
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "child", "--nocapture", "--test-threads=1"])
        .env("PF_SYNC_CHILD", "1")
        .env("PF_FAKE_ADJTIMEX", &state)
        .env("LD_PRELOAD", &so)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    let mut output = BufReader::new(child.stdout.take().unwrap());
    let mut ask = || {
        writeln!(input, "check").unwrap();
        let mut line = String::new();
        loop {
            line.clear();
            assert!(output.read_line(&mut line).unwrap() > 0, "the child ended");
            if let Some(at) = line.find("ANSWER") {
                return line[at..].trim().to_string();
            }
        }
    };
    // The monitor reads the kernel once a second: 2.5 s covers it on a loaded machine too.
    let settle = || std::thread::sleep(Duration::from_millis(2_500));
    let a = ask();
    assert!(a.contains("bound=ID") && a.contains("status=ok"), "{a}");
    assert!(
        a.contains("state=ok") && a.contains("max_error_us=5000"),
        "{a}"
    );
    set("5 64 16000000 16000000"); // unsynchronized (TIME_ERROR, STA_UNSYNC)
    settle();
    let a = ask();
    assert!(a.contains("bound=CLOCK_UNSYNCHRONIZED"), "{a}");
    assert!(a.contains("not synchronized"), "{a}");
    assert!(a.contains("free=ID"), "{a}");
    assert!(a.contains("status=clock_unsynchronized"), "{a}");
    assert!(a.contains("state=unsynchronized"), "{a}");
    set("0 0 80000 1000"); // synchronized, but 80 ms of maximum error: over the 50 ms bound
    settle();
    let a = ask();
    assert!(a.contains("bound=CLOCK_UNSYNCHRONIZED"), "{a}");
    assert!(a.contains("80.0 ms, over max_clock_error_ms = 50"), "{a}");
    set("1 0 2000 500"); // synchronized, a leap second to insert tonight
    settle();
    let a = ask();
    assert!(
        a.contains("bound=ID") && a.contains("state=insert_leap"),
        "{a}"
    );
    drop(input);
    child.wait().unwrap();
}

#[test]
fn the_setting_is_checked() {
    for bad in [0, 16_001] {
        let e = Generator::builder(972)
            .max_clock_error_ms(Some(bad))
            .build()
            .unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument);
        assert!(e.to_string().contains(&bad.to_string()), "{e}");
    }
    let e = Generator::builder(972)
        .max_clock_error_ms(Some(100))
        .clock(polyflake::ManualClock::new(1_737_747_358_021))
        .build()
        .unwrap_err();
    assert!(e.to_string().contains("injected clock"), "{e}");
}

#[test]
fn health_reports_the_kernels_word_without_a_bound() {
    let g = Generator::strict(973).unwrap();
    let h = g.health();
    // Whatever this host's clock is, an unbound generator issues and says what the kernel says.
    assert!(h.ok, "{h:?}");
    assert_ne!(h.status, HealthStatus::ClockUnsynchronized);
    let direct = polyflake::clock_sync();
    assert_eq!(
        h.clock_sync.state == ClockSyncState::Unavailable,
        direct.state == ClockSyncState::Unavailable
    );
    assert!(h.fields().iter().any(|(name, _)| *name == "clock_sync"));
}
