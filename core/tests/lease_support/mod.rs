//! Shared by the lease tests: temporary directories, child processes (the test binary itself,
//! re-run on one test with `POLYFLAKE_TEST_CHILD` set), a real etcd server (plain, or with TLS,
//! client certificates and authentication) and a real ZooKeeper server (Debian's, run on its
//! Java main) started and stopped by the tests, certificates made with `openssl`, a TCP relay
//! that can go silent (to let a ZooKeeper session expire under a live client), and the lease
//! suite every store runs (`suite.rs`: `lease_suite!`).
#![allow(dead_code, unused_imports, unused_macros)]

mod relay;
mod stores;
mod suite;
pub use relay::*;
pub use stores::*;
pub use suite::*;

use std::io::{BufRead, BufReader};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

pub fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64
}

/// A fresh directory under the system temp dir, removed on drop.
pub struct TempDir(pub PathBuf);

impl TempDir {
    pub fn new(tag: &str) -> TempDir {
        static N: AtomicU32 = AtomicU32::new(0);
        let p = std::env::temp_dir().join(format!(
            "polyflake-{tag}-{}-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed),
            now_ms()
        ));
        std::fs::create_dir_all(&p).unwrap();
        TempDir(p)
    }
    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The host scope of test `test` of this binary: the suite's scope (the Makefile gives each
/// target one) and the test's number. Tests run side by side in one process, each holding node
/// ids of its own stores; a node id is claimed host-wide whatever its store, so each test claims
/// in a scope of its own.
pub fn test_scope(test: i64) -> String {
    let base = std::env::var("POLYFLAKE_HOST_SCOPE").unwrap_or_default();
    format!("{}-t{test}", &base[..base.len().min(30)])
}

/// Start this test binary again, running only the test `entry`, in child mode `mode`, with
/// extra environment variables. Its stdout is piped (lines the child prints with `emit`). Each
/// child claims its node ids in a host scope of its own (see `test_scope`) unless `env` names one.
pub fn spawn_child(entry: &str, mode: &str, env: &[(&str, String)]) -> Child {
    use std::sync::atomic::{AtomicU32, Ordering};
    static CHILDREN: AtomicU32 = AtomicU32::new(0);
    let exe = std::env::current_exe().unwrap();
    let mut cmd = Command::new(exe);
    let n = CHILDREN.fetch_add(1, Ordering::Relaxed);
    cmd.args([entry, "--exact", "--nocapture", "--test-threads=1"])
        .env("POLYFLAKE_HOST_SCOPE", test_scope(1_000 + i64::from(n)))
        .env("POLYFLAKE_TEST_CHILD", mode)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.spawn()
        .expect("spawn the test binary as a child process")
}

/// The child mode this process runs in, if it is a child.
pub fn child_mode() -> Option<String> {
    std::env::var("POLYFLAKE_TEST_CHILD").ok()
}

/// What a child prints for the parent: one line with a marker the test harness never prints.
pub fn emit(line: &str) {
    use std::io::Write as _;
    let mut out = std::io::stdout().lock();
    // A newline first: libtest may have left "test NAME ... " unfinished on this line.
    // A parent that stopped reading is no error of the child's.
    let _ = write!(out, "\n@@ {line}\n");
    let _ = out.flush();
}

/// The child's `emit`ted lines, as they come. Keep the iterator until the child has exited
/// (dropping it closes the pipe, and the child's test harness would fail writing its summary).
pub fn lines(child: &mut Child) -> impl Iterator<Item = String> {
    let out = child.stdout.take().expect("piped stdout");
    BufReader::new(out)
        .lines()
        .map_while(Result::ok)
        .filter_map(|l| l.strip_prefix("@@ ").map(str::to_string))
}

/// Run a `hold` child (it leases a slot and prints `NODE n`, then `ID x` lines), let it issue
/// at least 3,000 IDs and renew a few times, then SIGKILL it mid-stream. Returns its node id
/// and the largest millisecond among the IDs it printed.
pub fn kill_holder_mid_stream(env: &[(&str, String)]) -> (u32, i64) {
    let mut holder = spawn_child("child_process_entry", "hold", env);
    let mut out = lines(&mut holder);
    let node: u32 = out
        .next()
        .unwrap()
        .strip_prefix("NODE ")
        .unwrap()
        .parse()
        .unwrap();
    let mut ids = Vec::new();
    for line in out.by_ref() {
        ids.push(line.strip_prefix("ID ").unwrap().parse::<u64>().unwrap());
        if ids.len() == 3000 {
            break;
        }
    }
    std::thread::sleep(Duration::from_millis(300));
    holder.kill().unwrap();
    holder.wait().unwrap();
    ids.extend(out.filter_map(|l| l.strip_prefix("ID ")?.parse::<u64>().ok()));
    let max_ms = ids
        .iter()
        .map(|&id| polyflake::decode(id).unwrap().timestamp_ms)
        .max()
        .unwrap();
    (node, max_ms)
}

/// Wait for `cond` (polled every 10 ms) at most `limit`; true if it held.
/// Cost follows what the store holds, never the layout's node ids: two leases on 30/32/1 with the
/// default slots (2^32 of them) from `source` each take a slot within `limit` (a store once
/// walked every number), get nodes 0 and 1, and mint distinct IDs.
pub fn assert_a_wide_layout_leases_quickly(store: &str, source: NodeSource, limit: Duration) {
    let layout = polyflake::Layout::new(30, 32, 1).unwrap();
    let epoch = now_ms() - 3_600_000;
    let build = || {
        polyflake::Generator::builder_from(source.clone())
            .layout(layout)
            .epoch_ms(epoch)
            .build()
            .unwrap()
    };
    let t = Instant::now();
    let a = build();
    let first = t.elapsed();
    let t = Instant::now();
    let b = build();
    let second = t.elapsed();
    assert_eq!((a.node_id(), b.node_id()), (0, 1));
    assert!(first < limit && second < limit, "{first:?}, {second:?}");
    eprintln!("{store} 30/32/1 lease: {first:?}, then {second:?}");
    a.wait_ready(Duration::from_secs(5)).unwrap();
    b.wait_ready(Duration::from_secs(5)).unwrap();
    assert_ne!(a.next_id().unwrap(), b.next_id().unwrap());
}

pub fn wait_until(limit: Duration, mut cond: impl FnMut() -> bool) -> bool {
    let start = Instant::now();
    while start.elapsed() < limit {
        if cond() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    cond()
}

/// Set `g`'s test clock to `to_ms` and renew at the new time: a lease issues no further than
/// one reserve past its last renewal's reading, and an etcd or ZooKeeper lease renews on its
/// own thread every reserve / 5 of real time, so after a test clock jumps ahead the first ID
/// needs a renewal that read the new time (`renew_lease` asks for one and waits for it). The
/// one helper for every test that moves a test clock under a lease's renewal thread.
pub fn jump_and_renew(g: &polyflake::Generator, clock: &polyflake::ManualClock, to_ms: i64) {
    clock.set(to_ms);
    g.renew_lease()
        .unwrap_or_else(|e| panic!("a renewal at the clock's new time: {e}; {:?}", g.health()));
}

/// A free TCP port on 127.0.0.1 (bound, then released).
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

use polyflake::{
    EtcdLeaseOptions, FileLeaseOptions, Generator, ManualClock, NodeSource, ZooKeeperLeaseOptions,
};

fn env(name: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| panic!("child needs {name}"))
}

fn env_or(name: &str, default: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| default.to_string())
}

/// The lease source a child uses: `LEASE=file` with `DIR`, `LEASE=etcd` with `ENDPOINT` and
/// `PREFIX`, or `LEASE=zookeeper` with `ENSEMBLE` and `PREFIX`; `SLOTS`, `RESERVE_MS`, `TTL_S`,
/// `SESSION_MS` optional.
pub fn child_source() -> NodeSource {
    let slots = std::env::var("SLOTS").ok().map(|s| s.parse().unwrap());
    let reserve_ms: u64 = env_or("RESERVE_MS", "500").parse().unwrap();
    match env("LEASE").as_str() {
        "file" => {
            let mut o = FileLeaseOptions::new(env("DIR"));
            o.common.slots = slots;
            o.common.reserve_ms = reserve_ms;
            NodeSource::FileLease(o)
        }
        "etcd" => {
            let mut o = EtcdLeaseOptions::new(vec![env("ENDPOINT")]);
            o.store.prefix = env("PREFIX");
            o.common.slots = slots;
            o.common.reserve_ms = reserve_ms;
            o.ttl_s = env_or("TTL_S", "2").parse().unwrap();
            o.store.connect_timeout_ms = 1000;
            NodeSource::Etcd(o)
        }
        "zookeeper" => {
            let mut o = ZooKeeperLeaseOptions::from_ensemble(&env("ENSEMBLE"));
            o.store.prefix = env("PREFIX");
            o.common.slots = slots;
            o.common.reserve_ms = reserve_ms;
            o.session_timeout_ms = env_or("SESSION_MS", "2000").parse().unwrap();
            o.store.connect_timeout_ms = 3000;
            NodeSource::ZooKeeper(o)
        }
        other => panic!("unknown LEASE {other}"),
    }
}

/// The body of a child process. Modes:
/// - `race`: take a slot, print `WON <node>` or `ERR <code>`, hold it until stdin closes;
/// - `hold`: take a slot on the system clock, print `NODE <n>`, then issue IDs printing
///   `ID <id>` until killed;
/// - `stream`: take a slot on the system clock, wait out its guard, print `NODE <n>`, then issue
///   batches of 1,000 IDs into the file `OUT` (raw little-endian u64) for `MS` milliseconds or
///   until refused; then print `END <code or OK> <health status>`;
/// - `until_lost`: like `stream`, but on a refusal other than `LEASE_LOST` it sleeps 1 ms and
///   tries again, until the lease is lost (or `MS` passes); prints `END <code> <status>`;
/// - `seq`: take a slot on a ManualClock starting at `START` ms, wait out the restart guard by
///   advancing that clock 10 ms per refusal, issue `COUNT` IDs (the clock 1 ms on per ID),
///   print them, and close the generator.
pub fn child_main(mode: &str) {
    match mode {
        "race" => match Generator::builder_from(child_source()).build() {
            Ok(g) => {
                emit(&format!("WON {}", g.node_id()));
                let mut sink = String::new();
                let _ = std::io::Read::read_to_string(&mut std::io::stdin(), &mut sink);
                drop(g);
            }
            Err(e) => emit(&format!("ERR {} {e}", e.code())),
        },
        "hold" => {
            let g = Generator::builder_from(child_source())
                .build()
                .expect("holder takes a slot");
            g.wait_ready(Duration::from_secs(30))
                .expect("the restart guard passes");
            emit(&format!("NODE {}", g.node_id()));
            loop {
                match g.next_id() {
                    Ok(id) => emit(&format!("ID {id}")),
                    Err(e) => panic!("holder refused: {e}"),
                }
            }
        }
        "stream" | "until_lost" => {
            let patient = mode == "until_lost";
            let g = Generator::builder_from(child_source())
                .build()
                .expect("take a slot");
            g.wait_ready(Duration::from_secs(30))
                .expect("the restart guard passes");
            emit(&format!("NODE {}", g.node_id()));
            let mut out = std::io::BufWriter::new(std::fs::File::create(env("OUT")).unwrap());
            let until = Instant::now() + Duration::from_millis(env("MS").parse().unwrap());
            let mut buf = vec![0u64; 1000];
            let end = loop {
                if Instant::now() >= until {
                    break "OK".to_string();
                }
                match g.next_ids(&mut buf) {
                    Ok(()) => {
                        for id in &buf {
                            std::io::Write::write_all(&mut out, &id.to_le_bytes()).unwrap();
                        }
                    }
                    Err(e) if patient && e.code() != "LEASE_LOST" => {
                        std::thread::sleep(Duration::from_millis(1));
                    }
                    Err(e) => break e.code().to_string(),
                }
            };
            std::io::Write::flush(&mut out).unwrap();
            emit(&format!("END {end} {}", g.health().status.name()));
        }
        "seq" => {
            let clock = ManualClock::new(env("START").parse().unwrap());
            let count: usize = env("COUNT").parse().unwrap();
            let g = Generator::builder_from(child_source())
                .clock(clock.clone())
                .build()
                .expect("take the slot");
            let mut ids = Vec::with_capacity(count);
            let mut refusals = 0u64;
            let mut renewal_waits = 0u32;
            while ids.len() < count {
                match g.next_id() {
                    Ok(id) => {
                        ids.push(id);
                        clock.elapse(1);
                    }
                    Err(e) if e.code() == "LEASE_NOT_READY" => {
                        refusals += 1;
                        clock.elapse(10);
                    }
                    // Past one reserve from the last renewal's check: the renewal thread (every
                    // reserve/5 of real time) confirms the slot at the test clock's new time.
                    Err(e) if e.code() == "LEASE_EXPIRED" && renewal_waits < 500 => {
                        renewal_waits += 1;
                        std::thread::sleep(std::time::Duration::from_millis(10));
                    }
                    Err(e) => panic!("seq child refused: {e}"),
                }
            }
            emit(&format!("REFUSALS {refusals}"));
            emit(&format!("NODE {}", g.node_id()));
            for id in ids {
                emit(&format!("ID {id}"));
            }
            drop(g);
            emit("CLOSED");
        }
        other => panic!("unknown child mode {other}"),
    }
}

/// The IDs a `stream` child wrote.
pub fn read_ids(path: &Path) -> Vec<u64> {
    std::fs::read(path)
        .unwrap()
        .chunks_exact(8)
        .map(|c| u64::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

/// Fork; run `f` in the child, send what it returns to the parent through a pipe, `_exit(0)`.
/// Returns the child's text. Call only from a test binary with one test (forking a process that
/// runs other test threads is unsafe).
pub fn in_forked_child(f: impl FnOnce() -> String) -> String {
    use std::io::Read;
    let mut fds = [0i32; 2];
    assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
    // SAFETY: the child runs `f`, writes to a pipe, then `_exit`s.
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0, "fork failed");
    if pid == 0 {
        unsafe { libc::close(fds[0]) };
        let msg = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f))
            .unwrap_or_else(|_| "child panicked".to_string())
            .into_bytes();
        let mut written = 0;
        while written < msg.len() {
            let n =
                unsafe { libc::write(fds[1], msg[written..].as_ptr().cast(), msg.len() - written) };
            if n <= 0 {
                break;
            }
            written += n as usize;
        }
        unsafe { libc::_exit(0) };
    }
    unsafe { libc::close(fds[1]) };
    let mut text = String::new();
    let mut pipe = unsafe { <std::fs::File as std::os::unix::io::FromRawFd>::from_raw_fd(fds[0]) };
    pipe.read_to_string(&mut text).unwrap();
    let mut status = 0;
    unsafe { libc::waitpid(pid, &mut status, 0) };
    assert!(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0);
    text
}
