//! What the CLI and service tests share: the built binary, a running `polyflake serve` on
//! loopback, a raw HTTP/1.1 client (so tests can send exactly the bytes they mean, malformed
//! ones included), the project's vector file, and a seeded random source.
#![allow(dead_code)]

use serde_json::Value;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// The `polyflake` binary cargo built for these tests (target/release/polyflake under
/// `cargo test --release`).
pub fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_polyflake")
}

/// The repository root (the project's own vectors live under it; nothing is read from outside).
pub fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// `tests/vectors/layouts.json`.
pub fn layout_vectors() -> Value {
    let path = repo_root().join("tests/vectors/layouts.json");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).expect("layouts.json is JSON")
}

/// A fresh, empty directory under the system's temporary directory for this test process.
pub fn temp_dir(tag: &str) -> PathBuf {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static N: AtomicUsize = AtomicUsize::new(0);
    let d = std::env::temp_dir().join(format!(
        "polyflake-cli-test-{}-{tag}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("make temp dir");
    d
}

/// The `POLYFLAKE_HOST_SCOPE` every `polyflake` this test starts runs in (unless the test gives
/// its own): one scope per test and test process, so tests running side by side in one binary
/// (cargo runs them on parallel threads, and several use `--node-id 1`) never hold the same
/// static node id host-wide, while two processes of one test with the same node id still
/// collide as they would on a real host. libtest runs each test on a thread named after it.
pub fn test_scope() -> String {
    use std::hash::{Hash, Hasher};
    let thread = std::thread::current();
    let mut h = std::collections::hash_map::DefaultHasher::new();
    thread.name().unwrap_or("unnamed").hash(&mut h);
    if thread.name().is_none() {
        thread.id().hash(&mut h);
    }
    // At most 40 bytes (the core's limit): "t<pid>-<16 hex digits>".
    format!("t{}-{:016x}", std::process::id(), h.finish())
}

/// The environment for a spawned `polyflake`: this test's host scope unless `env` names one.
fn with_scope<'a>(cmd: &'a mut Command, env: &[(&str, &std::ffi::OsStr)]) -> &'a mut Command {
    if !env.iter().any(|(k, _)| *k == "POLYFLAKE_HOST_SCOPE") {
        cmd.env("POLYFLAKE_HOST_SCOPE", test_scope());
    }
    cmd.envs(env.iter().copied())
}

/// A `polyflake` command (no stdin) in this test's host scope (see [`test_scope`]).
pub fn command() -> Command {
    let mut cmd = Command::new(bin());
    cmd.env("POLYFLAKE_HOST_SCOPE", test_scope())
        .stdin(Stdio::null());
    cmd
}

/// The output of a finished `polyflake` run.
pub struct Run {
    pub status: ExitStatus,
    pub stdout: String,
    pub stderr: String,
}

/// Run `polyflake ARGS...` to completion with no stdin.
pub fn run(args: &[&str]) -> Run {
    run_env(args, &[])
}

/// Run `polyflake ARGS...` with extra environment variables.
pub fn run_env(args: &[&str], env: &[(&str, &str)]) -> Run {
    let env: Vec<(&str, &std::ffi::OsStr)> = env.iter().map(|(k, v)| (*k, v.as_ref())).collect();
    let mut cmd = Command::new(bin());
    let out = with_scope(cmd.args(args), &env)
        .stdin(Stdio::null())
        .output()
        .expect("run polyflake");
    Run {
        status: out.status,
        stdout: String::from_utf8(out.stdout).expect("stdout is UTF-8"),
        stderr: String::from_utf8(out.stderr).expect("stderr is UTF-8"),
    }
}

/// A running `polyflake serve --listen 127.0.0.1:0 ...` (unless the test gives `--listen`), stopped with SIGTERM when dropped.
pub struct Server {
    pub child: Child,
    pub addr: SocketAddr,
    pub banner: String,
    stderr: Arc<Mutex<String>>,
    /// The thread collecting stderr; it ends at the pipe's end of file (the process gone).
    stderr_reader: Option<JoinHandle<()>>,
}

impl Server {
    /// Start a server with these extra arguments and wait for its "listening on" line.
    pub fn start(args: &[&str]) -> Server {
        Server::try_start(args).unwrap_or_else(|e| panic!("serve {args:?} did not start: {e}"))
    }

    /// Like `start`, but an early exit is returned as the error text (stderr).
    pub fn try_start(args: &[&str]) -> Result<Server, String> {
        Server::try_start_env(args, &[])
    }

    /// Like `try_start`, with extra environment variables.
    pub fn try_start_env(
        args: &[&str],
        env: &[(&str, &std::ffi::OsStr)],
    ) -> Result<Server, String> {
        Server::try_start_full(args, env, None)
    }

    /// Like `start`, with the server's open-file limit (soft and hard) set to `nofile`, as
    /// under a service manager's `LimitNOFILE=`.
    pub fn start_with_fd_limit(args: &[&str], nofile: u64) -> Server {
        Server::try_start_full(args, &[], Some(nofile))
            .unwrap_or_else(|e| panic!("serve {args:?} did not start: {e}"))
    }

    fn try_start_full(
        args: &[&str],
        env: &[(&str, &std::ffi::OsStr)],
        nofile: Option<u64>,
    ) -> Result<Server, String> {
        use std::os::unix::process::CommandExt;
        let listen: &[&str] = if args.contains(&"--listen") {
            &[]
        } else {
            &["--listen", "127.0.0.1:0"]
        };
        let mut cmd = Command::new(bin());
        with_scope(cmd.arg("serve").args(listen).args(args), env)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        if let Some(n) = nofile {
            let lim = libc::rlimit {
                rlim_cur: n,
                rlim_max: n,
            };
            // SAFETY: setrlimit is async-signal-safe; the closure touches nothing else.
            unsafe {
                cmd.pre_exec(move || {
                    if libc::setrlimit(libc::RLIMIT_NOFILE, &lim) == 0 {
                        Ok(())
                    } else {
                        Err(std::io::Error::last_os_error())
                    }
                });
            }
        }
        let mut child = cmd.spawn().expect("spawn polyflake serve");
        let stderr = Arc::new(Mutex::new(String::new()));
        let mut err_pipe = child.stderr.take().expect("stderr piped");
        let sink = stderr.clone();
        let stderr_reader = std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n) = err_pipe.read(&mut buf) {
                if n == 0 {
                    break;
                }
                sink.lock()
                    .unwrap()
                    .push_str(&String::from_utf8_lossy(&buf[..n]));
            }
        });
        let mut out = BufReader::new(child.stdout.take().expect("stdout piped"));
        let mut banner = String::new();
        let _ = out.read_line(&mut banner);
        // Keep draining stdout so the server never blocks on a full pipe.
        std::thread::spawn(move || {
            let mut sink = Vec::new();
            let _ = out.read_to_end(&mut sink);
        });
        let Some(addr) = banner
            .split_whitespace()
            .find_map(|w| w.strip_prefix("http://"))
            .and_then(|a| a.parse().ok())
        else {
            let _ = child.wait();
            // Every line the process wrote, up to the pipe's end of file.
            let _ = stderr_reader.join();
            let e = stderr.lock().unwrap().clone();
            return Err(e);
        };
        Ok(Server {
            child,
            addr,
            banner,
            stderr,
            stderr_reader: Some(stderr_reader),
        })
    }

    /// Everything the server wrote to stderr so far.
    pub fn stderr(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }

    /// Once the process has exited: wait for the reader to reach the pipe's end of file, so
    /// `stderr()` holds the last lines (a sleep would race a loaded machine).
    pub fn collect_stderr(&mut self) {
        if let Some(reader) = self.stderr_reader.take() {
            let _ = reader.join();
        }
    }

    /// Send a signal and wait (up to `within`) for the exit.
    pub fn stop_with(&mut self, signal: i32, within: Duration) -> Option<ExitStatus> {
        // SAFETY: kill(2) on our own child's pid.
        unsafe { libc::kill(self.child.id() as i32, signal) };
        let deadline = Instant::now() + within;
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                self.collect_stderr();
                return Some(status);
            }
            if Instant::now() > deadline {
                return None;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Poll `GET /v1/health` until it answers `status` (bounded by `within`); the last answer.
    pub fn wait_health(&self, status: u16, within: Duration) -> Resp {
        let deadline = Instant::now() + within;
        loop {
            let r = self.get("/v1/health");
            if r.status == status || Instant::now() > deadline {
                return r;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// One request on a fresh connection.
    pub fn request(&self, method: &str, path: &str, headers: &[(&str, &str)], body: &[u8]) -> Resp {
        request(self.addr, method, path, headers, body)
    }

    /// `POST path` with a JSON body.
    pub fn post_json(&self, path: &str, body: &str) -> Resp {
        self.request(
            "POST",
            path,
            &[("Content-Type", "application/json")],
            body.as_bytes(),
        )
    }

    /// `GET path`.
    pub fn get(&self, path: &str) -> Resp {
        self.request("GET", path, &[], b"")
    }

    /// One metric's value from `GET /metrics` (the sample line `name value`).
    pub fn metric(&self, name: &str) -> f64 {
        let m = self.get("/metrics");
        assert_eq!(m.status, 200);
        m.text()
            .lines()
            .find_map(|l| l.strip_prefix(name).and_then(|rest| rest.strip_prefix(' ')))
            .unwrap_or_else(|| panic!("metric {name} missing from:\n{}", m.text()))
            .trim()
            .parse()
            .expect("a number")
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if self.child.try_wait().ok().flatten().is_none()
            && self
                .stop_with(libc::SIGTERM, Duration::from_secs(15))
                .is_none()
        {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// An HTTP response.
#[derive(Debug)]
pub struct Resp {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Resp {
    /// A header's value (case-insensitive name).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    /// The body as JSON, after checking the Content-Type says so.
    pub fn json(&self) -> Value {
        let ct = self.header("content-type").unwrap_or("");
        assert!(
            ct.starts_with("application/json"),
            "status {} content-type {ct:?} body {:?}",
            self.status,
            self.text()
        );
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {:?}", self.text()))
    }

    /// The `error.code` of a JSON error body, after checking its shape.
    pub fn error_code(&self) -> String {
        let v = self.json();
        let e = &v["error"];
        assert!(e["message"].as_str().is_some_and(|m| !m.is_empty()), "{v}");
        e["code"]
            .as_str()
            .unwrap_or_else(|| panic!("no error.code in {v}"))
            .to_string()
    }
}

/// Send one raw HTTP/1.1 request (`Connection: close`, `Content-Length` unless the caller gives
/// `Transfer-Encoding`) and read the whole answer.
pub fn request(
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> Resp {
    let mut s = TcpStream::connect(addr).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    let mut head = format!("{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n");
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    let chunked = headers
        .iter()
        .any(|(k, _)| k.eq_ignore_ascii_case("transfer-encoding"));
    if !chunked {
        head.push_str(&format!("Content-Length: {}\r\n", body.len()));
    }
    head.push_str("\r\n");
    s.write_all(head.as_bytes()).expect("write head");
    // The server may answer (413) and close before reading a large body: ignore write errors.
    let _ = s.write_all(body);
    let mut raw = Vec::new();
    let _ = s.read_to_end(&mut raw);
    parse_response(&raw, method == "HEAD").unwrap_or_else(|e| {
        panic!(
            "bad response to {method} {path}: {e}: {:?}",
            String::from_utf8_lossy(&raw)
        )
    })
}

fn parse_response(raw: &[u8], head_request: bool) -> Result<Resp, String> {
    let end = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .ok_or("no end of headers")?;
    let head = std::str::from_utf8(&raw[..end]).map_err(|e| e.to_string())?;
    let mut lines = head.split("\r\n");
    let status_line = lines.next().ok_or("empty")?;
    let status: u16 = status_line
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .ok_or("no status")?;
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
        .collect();
    let rest = &raw[end + 4..];
    let is_chunked = headers.iter().any(|(k, v)| {
        k.eq_ignore_ascii_case("transfer-encoding") && v.eq_ignore_ascii_case("chunked")
    });
    let body = if head_request {
        Vec::new() // an answer to HEAD has headers only
    } else if is_chunked {
        let mut out = Vec::new();
        let mut r = rest;
        loop {
            let nl = r
                .windows(2)
                .position(|w| w == b"\r\n")
                .ok_or("chunk size")?;
            let size = usize::from_str_radix(
                std::str::from_utf8(&r[..nl])
                    .map_err(|e| e.to_string())?
                    .trim(),
                16,
            )
            .map_err(|e| e.to_string())?;
            r = &r[nl + 2..];
            if size == 0 {
                break;
            }
            out.extend_from_slice(r.get(..size).ok_or("short chunk")?);
            r = &r[size + 2..];
        }
        out
    } else {
        let len = headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case("content-length"))
            .and_then(|(_, v)| v.parse::<usize>().ok());
        match len {
            Some(n) => rest.get(..n).ok_or("short body")?.to_vec(),
            None => rest.to_vec(),
        }
    };
    Ok(Resp {
        status,
        headers,
        body,
    })
}

/// SplitMix64: a small seeded generator, so a failing fuzz case is reproducible from its seed.
pub struct Rng(pub u64);

impl Rng {
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (n > 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }

    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }

    pub fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.next_u64() as u8).collect()
    }
}

/// The default layout's fields of an ID (41/10/12), computed from the bit layout itself.
pub fn fields_default(id: u64) -> (u64, u64, u64) {
    (id >> 22, (id >> 12) & 1023, id & 4095)
}

/// A free TCP port on 127.0.0.1 (bound, then released).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

/// A real etcd v3 server (Debian's `etcd-server`) on loopback with a temporary data directory;
/// killed on drop.
pub struct EtcdServer {
    pub client_url: String,
    child: Option<Child>,
    data: PathBuf,
}

impl EtcdServer {
    pub const BIN: &'static str = "/usr/bin/etcd";

    pub fn start() -> EtcdServer {
        assert!(
            std::path::Path::new(Self::BIN).exists(),
            "{} is missing: `make deps-apt` installs Debian's etcd-server",
            Self::BIN
        );
        let data = temp_dir("etcd");
        let client_port = free_port();
        let client_url = format!("http://127.0.0.1:{client_port}");
        let peer_url = format!("http://127.0.0.1:{}", free_port());
        let log = std::fs::File::create(data.join("etcd.log")).unwrap();
        let child = Command::new(Self::BIN)
            .args(["--name", "polyflake-cli-test", "--data-dir"])
            .arg(data.join("data"))
            .args([
                "--listen-client-urls",
                &client_url,
                "--advertise-client-urls",
                &client_url,
            ])
            .args([
                "--listen-peer-urls",
                &peer_url,
                "--initial-advertise-peer-urls",
                &peer_url,
            ])
            .arg("--initial-cluster")
            .arg(format!("polyflake-cli-test={peer_url}"))
            .stdin(Stdio::null())
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .expect("start etcd");
        let e = EtcdServer {
            client_url,
            child: Some(child),
            data,
        };
        // etcd answers GET /health with {"health":"true"} once it serves requests.
        let addr: SocketAddr = format!("127.0.0.1:{client_port}").parse().unwrap();
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let up = TcpStream::connect(addr).is_ok()
                && request(addr, "GET", "/health", &[], b"")
                    .text()
                    .contains("true");
            if up {
                return e;
            }
            assert!(
                Instant::now() < deadline,
                "etcd did not come up within 30 s: {}",
                std::fs::read_to_string(e.data.join("etcd.log")).unwrap_or_default()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Kill the server (as abrupt as a crash or a partition).
    pub fn kill(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

impl Drop for EtcdServer {
    fn drop(&mut self) {
        self.kill();
        let _ = std::fs::remove_dir_all(&self.data);
    }
}
