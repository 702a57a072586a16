//! A static node id keeps the promises a lease keeps, tried with real processes on one host:
//! a handover between processes, a restart with the clock stepped back (libfaketime), a
//! monotonic holder that ran ahead, a forked child taking over from its parent, a lease and a
//! static id of the same node id, a mark deleted under its holder, a directory that cannot keep
//! a mark. Every case counts duplicates across the holders' IDs: zero.
//!
//! The holders are this test binary run again with `PF_STATIC_CHILD` set (see `child`); each
//! writes its IDs to a file as little-endian u64s and says what happened on stdout.

use polyflake::{
    ErrorKind, FileLeaseOptions, Generator, HealthStatus, LeaseKind, Mode, NodeSource,
    RestartGuard, RestartGuardOptions,
};
use std::collections::HashSet;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const CHILD: &str = "PF_STATIC_CHILD";

fn env(name: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| panic!("{name} is not set"))
}

fn env_or(name: &str, default: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| default.to_string())
}

/// A directory of this test's own, removed at the end.
struct TempDir(PathBuf);

impl TempDir {
    fn new(tag: &str) -> TempDir {
        let p = std::env::temp_dir().join(format!(
            "pf-static-{tag}-{}-{}",
            std::process::id(),
            polyflake::SystemClock::read_ns()
        ));
        std::fs::create_dir_all(&p).unwrap();
        TempDir(p)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn guard(state: &Path, reserve_ms: u64) -> RestartGuardOptions {
    RestartGuardOptions {
        mode: Some(RestartGuard::Required),
        state_dir: Some(state.to_path_buf()),
        reserve_ms,
        ..RestartGuardOptions::default()
    }
}

/// The body of a holder process. Environment: `NODE`, `MODE` (strict | monotonic), `STATE`
/// (the state directory), `RESERVE`, `OUT` (where its IDs go), `COUNT` (IDs to mint, one by
/// one), `BURST` (a batch minted first: a monotonic holder runs ahead by it), `MS` (mint for
/// this long instead of `COUNT`), `RETRY` (retry the build while the node id is in use), `END`:
/// `close` (drop the generator, then return), `exit` (`std::process::exit` with it open),
/// `hang` (print `DONE`, then wait to be killed), `fork` (see `forker`).
#[test]
fn child() {
    let Ok(mode) = std::env::var(CHILD) else {
        return; // not a holder run
    };
    if mode == "forker" {
        return forker();
    }
    let node: i128 = env("NODE").parse().unwrap();
    let state = PathBuf::from(env("STATE"));
    let reserve: u64 = env_or("RESERVE", "5000").parse().unwrap();
    let gen_mode = match env_or("MODE", "strict").as_str() {
        "monotonic" => Mode::Monotonic,
        _ => Mode::Strict,
    };
    let build = || {
        Generator::builder(node)
            .mode(gen_mode)
            .max_lead_ms(Some(60_000))
            .restart_guard(guard(&state, reserve))
            .build()
    };
    let t = Instant::now();
    let g = loop {
        match build() {
            Ok(g) => break g,
            Err(e) if e.kind() == ErrorKind::NodeIdInUse && env_or("RETRY", "") == "1" => {
                assert!(t.elapsed() < Duration::from_secs(20), "{e}");
                std::thread::sleep(Duration::from_micros(200));
            }
            Err(e) => panic!("build: {e}"),
        }
    };
    println!("READY {}", g.node_id());
    std::io::stdout().flush().unwrap();
    let mut out = std::io::BufWriter::new(std::fs::File::create(env("OUT")).unwrap());
    let mut put = |id: u64| out.write_all(&id.to_le_bytes()).unwrap();
    let burst: usize = env_or("BURST", "0").parse().unwrap();
    if burst > 0 {
        let mut buf = vec![0u64; burst];
        g.next_ids(&mut buf).unwrap();
        buf.iter().for_each(|&id| put(id));
    }
    let count: u64 = env_or("COUNT", "0").parse().unwrap();
    let ms: u64 = env_or("MS", "0").parse().unwrap();
    let until = Instant::now() + Duration::from_millis(ms);
    let mut n = 0;
    let mut refused = String::new();
    while n < count || Instant::now() < until {
        match g.next_id() {
            Ok(id) => put(id),
            Err(e) => {
                refused = format!("REFUSED {} {e}", e.code());
                break;
            }
        }
        n += 1;
    }
    out.flush().unwrap();
    drop(out);
    let h = g.health();
    println!(
        "DONE waits={} status={} {refused}",
        h.restart_waits,
        h.status.name()
    );
    std::io::stdout().flush().unwrap();
    match env_or("END", "close").as_str() {
        "exit" => std::process::exit(0),
        "hang" => loop {
            std::thread::sleep(Duration::from_secs(1));
        },
        _ => drop(g),
    }
}

/// A holder that forks: the parent mints (a monotonic burst first), writes its IDs, and exits
/// with its generator open; the child waits for it to be gone, then takes the same node id and
/// mints. Both write their IDs (`OUT` and `OUT.child`).
fn forker() {
    let node: i128 = env("NODE").parse().unwrap();
    let state = PathBuf::from(env("STATE"));
    let g = Generator::builder(node)
        .mode(Mode::Monotonic)
        .max_lead_ms(Some(60_000))
        .restart_guard(guard(&state, 5_000))
        .build()
        .unwrap();
    let mut buf = vec![0u64; 409_600]; // 100 ms of IDs at once: the parent runs ahead
    g.next_ids(&mut buf).unwrap();
    let write = |path: String, ids: &[u64]| {
        let bytes: Vec<u8> = ids.iter().flat_map(|id| id.to_le_bytes()).collect();
        std::fs::write(path, bytes).unwrap();
    };
    write(env("OUT"), &buf);
    // SAFETY: the child only waits, then makes its own generator and writes a file.
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0);
    if pid == 0 {
        let parent = unsafe { libc::getppid() };
        while unsafe { libc::getppid() } == parent {
            std::thread::sleep(Duration::from_millis(1));
        }
        let failed = |why: String| {
            let _ = std::fs::write(format!("{}.child.err", env("OUT")), why);
        };
        let code = match Generator::builder(node)
            .restart_guard(guard(&state, 5_000))
            .build()
        {
            Ok(g2) => {
                let mut ids = Vec::with_capacity(20_000);
                for _ in 0..20_000 {
                    match g2.next_id() {
                        Ok(id) => ids.push(id),
                        Err(e) => {
                            failed(format!("next_id: {e}"));
                            break;
                        }
                    }
                }
                write(format!("{}.child", env("OUT")), &ids);
                if ids.len() == 20_000 {
                    0
                } else {
                    2
                }
            }
            Err(e) => {
                failed(format!("build: {e}"));
                3
            }
        };
        unsafe { libc::_exit(code) };
    }
    println!("CHILD {pid}");
    std::io::stdout().flush().unwrap();
    // Exit with the generator open: the process's exit leaves its mark.
    std::process::exit(0);
}

/// A holder process: killed when dropped (a failing test leaves no process behind holding its
/// node id, or the test harness's output pipe open).
struct Kid {
    child: Child,
    out: Option<BufReader<std::process::ChildStdout>>,
}

impl Kid {
    /// Read its lines until one starts with `prefix`; returns it.
    fn line(&mut self, prefix: &str) -> String {
        let child = &mut self.child;
        let r = self
            .out
            .get_or_insert_with(|| BufReader::new(child.stdout.take().unwrap()));
        let mut line = String::new();
        loop {
            line.clear();
            assert!(
                r.read_line(&mut line).unwrap() > 0,
                "the holder ended before saying {prefix:?}"
            );
            // The test harness prints `test child ... ` before the holder's first line.
            if let Some(at) = line.find(prefix) {
                return line[at..].trim().to_string();
            }
        }
    }

    fn id(&self) -> u32 {
        self.child.id()
    }

    fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    fn wait(&mut self) {
        self.child.wait().unwrap();
    }
}

impl Drop for Kid {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Spawn a holder, under `faketime -f OFFSET` when given.
fn spawn(vars: &[(&str, String)], faketime: Option<&str>) -> Kid {
    let exe = std::env::current_exe().unwrap();
    let mut cmd = match faketime {
        Some(offset) => {
            let mut c = Command::new("faketime");
            c.args(["-f", offset]).arg(exe);
            c
        }
        None => Command::new(exe),
    };
    cmd.args(["--exact", "child", "--nocapture", "--test-threads=1"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    if faketime.is_some() {
        // The wall clock only: elapsed time (the waits' deadlines) stays true.
        cmd.env("FAKETIME_DONT_FAKE_MONOTONIC", "1");
    }
    for (k, v) in vars {
        cmd.env(k, v);
    }
    Kid {
        child: cmd.spawn().expect("spawn a holder"),
        out: None,
    }
}

fn read_ids(path: &Path) -> Vec<u64> {
    let mut bytes = Vec::new();
    if let Ok(mut f) = std::fs::File::open(path) {
        f.read_to_end(&mut bytes).unwrap();
    }
    bytes
        .chunks_exact(8)
        .map(|c| u64::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

/// Every ID of every holder once: returns how many there were.
fn assert_no_duplicates(sets: &[Vec<u64>]) -> usize {
    let mut seen = HashSet::new();
    let mut dups = 0;
    for ids in sets {
        for &id in ids {
            if !seen.insert(id) {
                dups += 1;
            }
        }
    }
    assert_eq!(dups, 0, "{dups} duplicate IDs among {} holders", sets.len());
    seen.len()
}

fn holder_vars(
    node: u32,
    state: &Path,
    out: &Path,
    extra: &[(&str, &str)],
) -> Vec<(&'static str, String)> {
    let mut v = vec![
        (CHILD, "mint".to_string()),
        ("NODE", node.to_string()),
        ("STATE", state.display().to_string()),
        ("OUT", out.display().to_string()),
    ];
    for (k, val) in extra {
        let k: &'static str = Box::leak(k.to_string().into_boxed_str());
        v.push((k, val.to_string()));
    }
    v
}

#[test]
fn a_handover_between_processes_repeats_nothing() {
    // A holder mints and lets go (a close, an exit with it open, a kill); a successor already
    // waiting for the node id takes it the moment it is free and mints at once.
    let dir = TempDir::new("handover");
    let mut all = Vec::new();
    for round in 0..60 {
        let end = ["close", "exit", "hang"][round % 3];
        let a_out = dir.0.join(format!("a{round}"));
        let b_out = dir.0.join(format!("b{round}"));
        let mut a = spawn(
            &holder_vars(
                960,
                &dir.0,
                &a_out,
                &[("COUNT", "3000"), ("END", end), ("RESERVE", "300")],
            ),
            None,
        );
        a.line("READY");
        let mut b = spawn(
            &holder_vars(960, &dir.0, &b_out, &[("COUNT", "3000"), ("RETRY", "1")]),
            None,
        );
        a.line("DONE");
        if end == "hang" {
            a.kill();
        }
        a.wait();
        let done = b.line("DONE");
        assert!(!done.contains("REFUSED"), "{done}");
        b.wait();
        let (ai, bi) = (read_ids(&a_out), read_ids(&b_out));
        assert_eq!((ai.len(), bi.len()), (3000, 3000), "round {round}");
        all.push(ai);
        all.push(bi);
    }
    assert_eq!(assert_no_duplicates(&all), 60 * 6000);
}

fn faketime_present() -> bool {
    Command::new("faketime")
        .args(["-f", "-1s", "true"])
        .status()
        .map(|s| s.success())
        .unwrap_or(false)
}

/// A holder mints on the true clock and goes (`end`); its successor starts at once with its
/// clock `offset` behind (libfaketime). Returns the successor's DONE line and the two ID sets.
fn restart_behind(tag: &str, offset: &str, end: &str, reserve: &str) -> (String, Vec<Vec<u64>>) {
    let dir = TempDir::new(tag);
    let (a_out, b_out) = (dir.0.join("a"), dir.0.join("b"));
    let mut a = spawn(
        &holder_vars(
            961,
            &dir.0,
            &a_out,
            &[("MS", "300"), ("END", end), ("RESERVE", reserve)],
        ),
        None,
    );
    a.line("DONE");
    if end == "hang" {
        a.kill();
    }
    a.wait();
    let mut b = spawn(
        &holder_vars(961, &dir.0, &b_out, &[("MS", "300"), ("RESERVE", reserve)]),
        Some(offset),
    );
    let done = b.line("DONE");
    b.wait();
    (done, vec![read_ids(&a_out), read_ids(&b_out)])
}

#[test]
fn a_restart_with_the_clock_stepped_back_waits_and_repeats_nothing() {
    if !faketime_present() {
        panic!("faketime is missing: make deps-apt installs it");
    }
    // Killed (R stays one reserve ahead), successor 3 s behind: it waits out the guard.
    let (done, ids) = restart_behind("kill3s", "-3s", "hang", "1000");
    assert!(done.contains("waits=1"), "{done}");
    assert!(!done.contains("REFUSED"), "{done}");
    assert!(!ids[1].is_empty());
    assert_no_duplicates(&ids);
    // A clean close, successor 1 s behind (an ntpd step): it waits up to 1 s, less its own
    // start (1 s, not 200 ms: a successor that took longer to start than the step would not wait).
    let (done, ids) = restart_behind("close1s", "-1s", "close", "5000");
    assert!(done.contains("waits=1"), "{done}");
    assert_no_duplicates(&ids);
    // An exit with the generator open, 1 s behind.
    let (done, ids) = restart_behind("exit1s", "-1s", "exit", "5000");
    assert!(!done.contains("REFUSED"), "{done}");
    assert_no_duplicates(&ids);
    // Further behind than a call waits (the default 10 s): refused with the reason, nothing
    // issued.
    let (done, ids) = restart_behind("kill30s", "-30s", "hang", "1000");
    assert!(done.contains("REFUSED LEASE_NOT_READY"), "{done}");
    assert!(done.contains("longer than a call waits"), "{done}");
    assert!(ids[1].is_empty());
}

#[test]
fn a_monotonic_holder_ahead_hands_its_lead_on() {
    // 409,600 IDs at once put a monotonic holder 100 ms ahead of its clock; it goes at once
    // (an exit with the generator open, then a kill), and a strict and a monotonic successor
    // start at once.
    for (round, end) in ["exit", "hang"].into_iter().enumerate() {
        let dir = TempDir::new(&format!("ahead{round}"));
        let outs: Vec<PathBuf> = (0..3).map(|i| dir.0.join(format!("o{i}"))).collect();
        let mut a = spawn(
            &holder_vars(
                962,
                &dir.0,
                &outs[0],
                &[
                    ("MODE", "monotonic"),
                    ("BURST", "409600"),
                    ("END", end),
                    ("RESERVE", "1000"),
                ],
            ),
            None,
        );
        a.line("DONE");
        if end == "hang" {
            a.kill();
        }
        a.wait();
        for (i, mode) in [(1, "strict"), (2, "monotonic")] {
            let mut b = spawn(
                &holder_vars(
                    962,
                    &dir.0,
                    &outs[i],
                    &[("MODE", mode), ("COUNT", "20000"), ("RESERVE", "1000")],
                ),
                None,
            );
            let done = b.line("DONE");
            assert!(!done.contains("REFUSED"), "{done}");
            b.wait();
        }
        let ids: Vec<Vec<u64>> = outs.iter().map(|o| read_ids(o)).collect();
        assert_eq!(ids[0].len(), 409_600);
        assert_no_duplicates(&ids);
    }
}

#[test]
fn a_forked_child_takes_over_above_its_parent() {
    let dir = TempDir::new("fork");
    let out = dir.0.join("parent");
    let mut p = spawn(
        &[
            (CHILD, "forker".to_string()),
            ("NODE", "963".to_string()),
            ("STATE", dir.0.display().to_string()),
            ("OUT", out.display().to_string()),
        ],
        None,
    );
    let child: i32 = p.line("CHILD")[6..].parse().unwrap();
    p.wait();
    // The forked child is not ours to wait for: poll its file.
    let child_out = PathBuf::from(format!("{}.child", out.display()));
    let t = Instant::now();
    while read_ids(&child_out).len() < 20_000 {
        let err = std::fs::read_to_string(format!("{}.child.err", out.display()));
        assert!(err.is_err(), "the forked child {child}: {}", err.unwrap());
        assert!(
            t.elapsed() < Duration::from_secs(20),
            "the forked child {child} wrote nothing"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let ids = vec![read_ids(&out), read_ids(&child_out)];
    assert_eq!(ids[0].len(), 409_600);
    assert_no_duplicates(&ids);
    // The child started above everything the parent issued, its lead included.
    assert!(ids[1].iter().min() > ids[0].iter().max());
}

fn file_lease(dir: &Path, slots: u32) -> FileLeaseOptions {
    let mut o = FileLeaseOptions::new(dir);
    o.common.slots = Some(slots);
    o.common.reserve_ms = 50;
    o
}

#[test]
fn a_lease_and_a_static_id_share_one_claim() {
    let state = TempDir::new("claim-state");
    let leases = TempDir::new("claim-leases");
    let g = |n: u32| {
        Generator::builder(n)
            .layout(polyflake::Layout::new(41, 3, 19).unwrap())
            .restart_guard(guard(&state.0, 5_000))
            .build()
    };
    let lease = || {
        Generator::builder_from(NodeSource::FileLease(file_lease(&leases.0, 8)))
            .layout(polyflake::Layout::new(41, 3, 19).unwrap())
            .restart_guard(guard(&state.0, 5_000))
            .build()
    };
    // A static holder of 0: the lease skips slot 0.
    let s0 = g(0).unwrap();
    let l = lease().unwrap();
    assert_ne!(l.node_id(), 0);
    // A lease holds slot 1: a static 1 is refused, naming this process.
    assert_eq!(l.node_id(), 1);
    let e = g(1).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::NodeIdInUse, "{e}");
    // Another process: a static id a lease holds there is refused naming that process; a
    // lease here skips the static id a process there holds.
    drop(l);
    drop(s0);
    let out = state.0.join("ids");
    let mut holder = spawn(
        &holder_vars(0, &state.0, &out, &[("COUNT", "10"), ("END", "hang")]),
        None,
    );
    holder.line("DONE");
    // The holder's layout is the default one: the claim is per layout.
    let e = Generator::builder(0)
        .restart_guard(guard(&state.0, 5_000))
        .build()
        .unwrap_err();
    assert!(
        matches!(&e, polyflake::Error::NodeIdInUse { holder_pid: Some(p), holder: who, .. } if *p == holder.id() && who.contains(&format!("process {p}"))),
        "{e:?}"
    );
    let other = TempDir::new("claim-leases-default");
    let l = Generator::builder_from(NodeSource::FileLease(file_lease(&other.0, 8)))
        .restart_guard(guard(&state.0, 5_000))
        .build()
        .unwrap();
    assert_ne!(l.node_id(), 0, "the lease took the slot of a static holder");
    holder.kill();
}

#[test]
fn a_lease_and_a_static_id_hand_the_node_id_over_both_ways() {
    // One node id, one state directory: a static holder, then a lease of that slot, then a
    // static holder again, each after the other let go, and the clock is the same: the mark
    // carries what each issued to the next.
    let state = TempDir::new("cross-state");
    let leases = TempDir::new("cross-leases");
    let layout = polyflake::Layout::new(41, 1, 21).unwrap();
    let stat = || {
        Generator::builder(0)
            .layout(layout)
            .mode(Mode::Monotonic)
            .max_lead_ms(Some(60_000))
            .restart_guard(guard(&state.0, 5_000))
            .build()
            .unwrap()
    };
    let mut all = Vec::new();
    let a = stat();
    let mut buf = vec![0u64; 2_000_000]; // a lead of about a second
    a.next_ids(&mut buf).unwrap();
    all.push(buf.clone());
    drop(a);
    let mut o = file_lease(&leases.0, 1);
    o.common.reserve_ms = 2_000;
    let l = Generator::builder_from(NodeSource::FileLease(o))
        .layout(layout)
        .restart_guard(guard(&state.0, 5_000))
        .build()
        .unwrap();
    assert_eq!(l.node_id(), 0);
    l.wait_ready(Duration::from_secs(10)).unwrap();
    let ids: Vec<u64> = (0..10_000).map(|_| l.next_id().unwrap()).collect();
    assert!(
        ids[0] > *buf.last().unwrap(),
        "the lease started under the static holder's lead"
    );
    all.push(ids);
    drop(l);
    let b = stat();
    let ids: Vec<u64> = (0..10_000).map(|_| b.next_id().unwrap()).collect();
    all.push(ids);
    assert_no_duplicates(&all);
}

#[test]
fn a_mark_deleted_under_its_holder_is_made_again() {
    let state = TempDir::new("deleted");
    let g = Generator::builder(964)
        .restart_guard(guard(&state.0, 5_000))
        .build()
        .unwrap();
    let first = g.next_id().unwrap();
    let h = g.health();
    let lease = h.lease.expect("a mark");
    assert_eq!(lease.kind, LeaseKind::Host);
    let mark = PathBuf::from(&lease.store);
    assert!(mark.exists());
    std::fs::remove_file(&mark).unwrap();
    g.renew_lease().unwrap();
    assert!(mark.exists(), "the mark was not made again");
    let h = g.health();
    assert!(h.ok, "{h:?}");
    assert!(h.lease.unwrap().last_error.contains("made again"));
    assert!(g.next_id().unwrap() > first);
    // Overwritten with junk: the holder writes its own record again at the next renewal.
    std::fs::write(&mark, b"junk").unwrap();
    g.renew_lease().unwrap();
    assert!(std::fs::read_to_string(&mark)
        .unwrap()
        .starts_with("polyflake-node v1"));
}

#[test]
fn a_directory_that_cannot_keep_a_mark_is_said_or_refused() {
    let state = TempDir::new("nodir");
    let not_a_dir = state.0.join("file");
    std::fs::write(&not_a_dir, b"").unwrap();
    let bad = |mode| RestartGuardOptions {
        mode: Some(mode),
        state_dir: Some(not_a_dir.clone()),
        ..RestartGuardOptions::default()
    };
    let e = Generator::builder(965)
        .restart_guard(bad(RestartGuard::Required))
        .build()
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::LeaseStore);
    let text = e.to_string();
    assert!(text.contains(&not_a_dir.display().to_string()), "{text}");
    assert!(text.contains("POLYFLAKE_STATE_DIR"), "{text}");
    let g = Generator::builder(965)
        .restart_guard(bad(RestartGuard::Auto))
        .build()
        .unwrap();
    let h = g.health();
    assert!(h.ok && h.lease.is_none(), "{h:?}");
    assert!(h.restart_guard_note.contains("no restart guard"), "{h:?}");
    assert!(g.next_id().is_ok());
    drop(g);
    let g = Generator::builder(965)
        .restart_guard(bad(RestartGuard::Off))
        .build()
        .unwrap();
    assert!(g.health().restart_guard_note.starts_with("off"));
}

/// A user's clock (not a test clock): exempt from the host-wide claim and the mark.
struct UserClock;
impl polyflake::Clock for UserClock {
    fn now_ms(&self) -> Result<i64, polyflake::ClockError> {
        Ok(polyflake::SystemClock::read_ms())
    }
}

#[test]
fn an_injected_clock_is_exempt_from_the_host_claim() {
    let state = TempDir::new("injected");
    let out = state.0.join("ids");
    let mut holder = spawn(
        &holder_vars(966, &state.0, &out, &[("COUNT", "10"), ("END", "hang")]),
        None,
    );
    holder.line("DONE");
    // The system clock is refused: the holder has node 966 on this host.
    assert_eq!(
        Generator::strict(966).unwrap_err().kind(),
        ErrorKind::NodeIdInUse
    );
    // A user's clock is not the host's: it claims in this process only, and keeps no mark.
    let g = Generator::builder(966).clock(UserClock).build().unwrap();
    assert!(g.next_id().is_ok());
    assert!(g.health().lease.is_none());
    // In this process the rule holds.
    assert_eq!(
        Generator::builder(966)
            .clock(UserClock)
            .build()
            .unwrap_err()
            .kind(),
        ErrorKind::NodeIdInUse
    );
    holder.kill();
}

#[test]
fn a_scope_that_is_not_utf8_is_an_error_not_the_default() {
    use std::os::unix::ffi::OsStrExt;
    let exe = std::env::current_exe().unwrap();
    let out = Command::new(exe)
        .args(["--exact", "scope_probe", "--nocapture", "--test-threads=1"])
        .env("PF_SCOPE_PROBE", "1")
        .env(
            "POLYFLAKE_HOST_SCOPE",
            std::ffi::OsStr::from_bytes(b"billing\xff"),
        )
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("PROBE INVALID_ARGUMENT"), "{text}");
    assert!(text.contains("not valid UTF-8"), "{text}");
}

#[test]
fn scope_probe() {
    if std::env::var("PF_SCOPE_PROBE").is_err() {
        return;
    }
    match Generator::strict(967) {
        Ok(_) => println!("PROBE OK"),
        Err(e) => println!("PROBE {} {e}", e.code()),
    }
}

#[test]
fn a_strict_restart_wait_is_reported_and_interruptible() {
    // A holder killed with its mark one reserve (3 s) ahead; the successor's call waits, health
    // says restart_guard meanwhile, and interrupt_waits cuts the wait short.
    let dir = TempDir::new("interrupt");
    let out = dir.0.join("a");
    let mut a = spawn(
        &holder_vars(
            968,
            &dir.0,
            &out,
            &[("MS", "50"), ("END", "hang"), ("RESERVE", "3000")],
        ),
        None,
    );
    a.line("DONE");
    a.kill();
    a.wait();
    let g = std::sync::Arc::new(
        Generator::builder(968)
            .restart_guard(guard(&dir.0, 3_000))
            .build()
            .unwrap(),
    );
    let h = g.health();
    assert_eq!(h.status, HealthStatus::RestartGuard, "{h:?}");
    assert!(
        h.lease.as_ref().unwrap().guard_remaining_ms > 1_000,
        "{h:?}"
    );
    let waiter = {
        let g = g.clone();
        std::thread::spawn(move || g.next_id())
    };
    std::thread::sleep(Duration::from_millis(200));
    g.interrupt_waits();
    let e = waiter.join().unwrap().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Interrupted, "{e}");
    // try_next_id says "would wait" rather than sleeping.
    assert_eq!(g.try_next_id().unwrap(), None);
    // And the wait ends with an ID above everything the holder issued.
    let id = g.next_id().unwrap();
    assert!(read_ids(&out).iter().all(|&x| x < id));
    assert!(g.health().restart_waits >= 1);
}

#[test]
fn another_epoch_on_a_node_id_the_host_used_is_a_conflict_not_a_wait() {
    // Node 5 (41/3/19) mints on the default epoch; a later epoch would issue the same bits again once
    // its elapsed time reaches theirs (years from now): refused as another ID space, at once.
    let state = TempDir::new("epochs");
    let layout = polyflake::Layout::new(41, 3, 19).unwrap();
    let g = Generator::builder(5)
        .layout(layout)
        .restart_guard(guard(&state.0, 5_000))
        .build()
        .unwrap();
    g.next_id().unwrap();
    drop(g);
    let later = polyflake::SystemClock::read_ms() - 1_000;
    let e = Generator::builder(5)
        .layout(layout)
        .epoch_ms(later)
        .restart_guard(guard(&state.0, 5_000))
        .build()
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::IdSpaceMismatch, "{e}");
    let text = e.to_string();
    assert!(
        text.contains("node-41-3-19-0005") && text.contains("days from now"),
        "{text}"
    );
    // An earlier epoch: its elapsed times are larger, so they never meet the old IDs.
    let earlier = Generator::builder(5)
        .layout(layout)
        .epoch_ms(polyflake::DEFAULT_EPOCH_MS - 86_400_000)
        .restart_guard(guard(&state.0, 5_000))
        .build()
        .unwrap();
    assert!(earlier.next_id().is_ok());
    drop(earlier);
    // A lease with the later epoch leaves that slot to the next: with slots 0 to 5 and 0 to 4
    // held, none is left.
    let leases = TempDir::new("epochs-leases");
    let lease = || {
        Generator::builder_from(NodeSource::FileLease(file_lease(&leases.0, 6)))
            .layout(layout)
            .epoch_ms(later)
            .restart_guard(guard(&state.0, 5_000))
            .build()
    };
    let held: Vec<Generator> = (0..5).map(|_| lease().unwrap()).collect();
    assert!(held.iter().all(|g| g.node_id() != 5));
    let e = lease().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::NoFreeSlot, "{e}");
}

#[test]
fn a_required_guard_on_an_injected_clock_is_refused() {
    let e = Generator::builder(974)
        .clock(polyflake::ManualClock::new(1_737_747_358_021))
        .restart_guard(RestartGuardOptions {
            mode: Some(RestartGuard::Required),
            ..RestartGuardOptions::default()
        })
        .build()
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    assert!(e.to_string().contains("injected clock"), "{e}");
}

#[test]
fn ids_issued_counts_from_the_first_id_after_a_take() {
    // A take counts the millisecond of its reading as spent: that is not issuing.
    let state = TempDir::new("count");
    let leases = TempDir::new("count-leases");
    let l = Generator::builder_from(NodeSource::FileLease(file_lease(&leases.0, 4)))
        .restart_guard(guard(&state.0, 5_000))
        .build()
        .unwrap();
    l.wait_ready(Duration::from_secs(10)).unwrap();
    l.next_id().unwrap();
    assert_eq!(l.health().ids_issued, 1);
    let s = Generator::builder(975)
        .restart_guard(guard(&state.0, 5_000))
        .build()
        .unwrap();
    s.next_id().unwrap();
    assert_eq!(s.health().ids_issued, 1);
}

/// A node id given back and taken again in one process while another thread spawns processes:
/// a child being spawned holds a copy of every descriptor until its exec closes it, the
/// host-wide name included, for a moment after the release. The next claim waits that moment
/// out instead of refusing the node id as held by "another copy of the library".
#[test]
fn a_node_id_taken_again_while_another_thread_spawns_processes() {
    let state = TempDir::new("respawn");
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let spawner = {
        let stop = stop.clone();
        std::thread::spawn(move || {
            let mut spawned = 0u32;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                if let Ok(mut c) = Command::new("true").spawn() {
                    let _ = c.wait();
                    spawned += 1;
                }
            }
            spawned
        })
    };
    let mut last = 0;
    for round in 0..300 {
        let g = Generator::builder(967)
            .restart_guard(guard(&state.0, 200))
            .build()
            .unwrap_or_else(|e| panic!("round {round}: {e}"));
        let id = g.next_id().unwrap();
        assert!(id > last, "round {round}: {id} after {last}");
        last = id;
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let spawned = spawner.join().unwrap();
    println!("300 takes of node 967 beside {spawned} spawned processes, none refused");
    assert!(spawned > 0);
}
