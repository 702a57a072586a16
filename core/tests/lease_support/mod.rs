//! Shared by the lease tests: temporary directories, child processes (the test binary itself,
//! re-run on one test with `POLYFLAKE_TEST_CHILD` set), and a real etcd server started and
//! stopped by the tests.
#![allow(dead_code)]

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

/// Start this test binary again, running only the test `entry`, in child mode `mode`, with
/// extra environment variables. Its stdout is piped (lines the child prints with `emit`).
pub fn spawn_child(entry: &str, mode: &str, env: &[(&str, String)]) -> Child {
    let exe = std::env::current_exe().unwrap();
    let mut cmd = Command::new(exe);
    cmd.args([entry, "--exact", "--nocapture", "--test-threads=1"])
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

/// A free TCP port on 127.0.0.1 (bound, then released).
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

pub const ETCD: &str = "/usr/bin/etcd";
pub const ETCDCTL: &str = "/usr/bin/etcdctl";

/// A real etcd server on 127.0.0.1 with free ports and a temporary data dir; stopped on drop.
pub struct Etcd {
    pub client_url: String,
    peer_url: String,
    data: TempDir,
    child: Option<Child>,
}

impl Etcd {
    pub fn start() -> Etcd {
        for bin in [ETCD, ETCDCTL] {
            assert!(
                Path::new(bin).exists(),
                "{bin} is missing: `make deps-apt` installs Debian's etcd-server and etcd-client"
            );
        }
        let data = TempDir::new("etcd");
        let client_url = format!("http://127.0.0.1:{}", free_port());
        let peer_url = format!("http://127.0.0.1:{}", free_port());
        let mut e = Etcd {
            client_url,
            peer_url,
            data,
            child: None,
        };
        e.run();
        e
    }

    fn run(&mut self) {
        let log = std::fs::File::create(self.data.path().join("etcd.log")).unwrap();
        let child = Command::new(ETCD)
            .args([
                "--name",
                "polyflake-test",
                "--data-dir",
                self.data.path().join("data").to_str().unwrap(),
                "--listen-client-urls",
                &self.client_url,
                "--advertise-client-urls",
                &self.client_url,
                "--listen-peer-urls",
                &self.peer_url,
                "--initial-advertise-peer-urls",
                &self.peer_url,
                "--initial-cluster",
                &format!("polyflake-test={}", self.peer_url),
            ])
            .stdin(Stdio::null())
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .expect("start etcd");
        self.child = Some(child);
        let up = wait_until(Duration::from_secs(30), || {
            self.etcdctl(&["endpoint", "health"]).is_ok()
        });
        assert!(
            up,
            "etcd did not become healthy within 30 s; log:\n{}",
            std::fs::read_to_string(self.data.path().join("etcd.log")).unwrap_or_default()
        );
    }

    /// Stop the server (SIGKILL: as abrupt as a crash or a partition).
    pub fn stop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    /// Start it again on the same ports and data.
    pub fn restart(&mut self) {
        self.stop();
        self.run();
    }

    /// Run etcdctl (API v3) against this server; stdout on success.
    pub fn etcdctl(&self, args: &[&str]) -> Result<String, String> {
        let out = Command::new(ETCDCTL)
            .env("ETCDCTL_API", "3")
            .arg(format!("--endpoints={}", self.client_url))
            .arg("--dial-timeout=1s")
            .arg("--command-timeout=2s")
            .args(args)
            .output()
            .map_err(|e| e.to_string())?;
        if out.status.success() {
            Ok(String::from_utf8_lossy(&out.stdout).into_owned())
        } else {
            Err(String::from_utf8_lossy(&out.stderr).into_owned())
        }
    }
}

impl Drop for Etcd {
    fn drop(&mut self) {
        self.stop();
    }
}

use polyflake::{EtcdLeaseOptions, FileLeaseOptions, Generator, ManualClock, NodeSource};

fn env(name: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| panic!("child needs {name}"))
}

fn env_or(name: &str, default: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| default.to_string())
}

/// The lease source a child uses: `LEASE=file` with `DIR`, or `LEASE=etcd` with `ENDPOINT` and
/// `PREFIX`; `SLOTS`, `RESERVE_MS`, `TTL_S` optional.
pub fn child_source() -> NodeSource {
    let slots = std::env::var("SLOTS").ok().map(|s| s.parse().unwrap());
    let reserve_ms: u64 = env_or("RESERVE_MS", "500").parse().unwrap();
    match env("LEASE").as_str() {
        "file" => {
            let mut o = FileLeaseOptions::new(env("DIR"));
            o.slots = slots;
            o.reserve_ms = reserve_ms;
            NodeSource::FileLease(o)
        }
        "etcd" => {
            let mut o = EtcdLeaseOptions::new(vec![env("ENDPOINT")]);
            o.prefix = env("PREFIX");
            o.slots = slots;
            o.reserve_ms = reserve_ms;
            o.ttl_s = env_or("TTL_S", "2").parse().unwrap();
            o.connect_timeout_ms = 1000;
            NodeSource::Etcd(o)
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
        "stream" => {
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
