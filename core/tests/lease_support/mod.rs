//! Shared by the lease tests: temporary directories, child processes (the test binary itself,
//! re-run on one test with `POLYFLAKE_TEST_CHILD` set), a real etcd server (plain, or with TLS,
//! client certificates and authentication) and a real ZooKeeper server (Debian's, run on its
//! Java main) started and stopped by the tests, certificates made with `openssl`, and a TCP
//! relay that can go silent (to let a ZooKeeper session expire under a live client).
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
    /// With TLS: the certificates it serves and requires (`--client-cert-auth`).
    tls: Option<Certs>,
    /// With authentication on: the root user's password (etcdctl then logs in as root).
    root_password: Option<String>,
}

impl Etcd {
    pub fn start() -> Etcd {
        Etcd::start_with(None)
    }

    /// An etcd that speaks only TLS, requires a client certificate signed by `certs.ca`
    /// (`--client-cert-auth`), and has authentication enabled with a user `root` whose password
    /// is `root_password` (through etcdctl: `user add`, `auth enable`).
    pub fn start_secure(certs: Certs, root_password: &str) -> Etcd {
        let mut e = Etcd::start_with(Some(certs));
        e.etcdctl(&["user", "add", &format!("root:{root_password}")])
            .expect("etcdctl user add root");
        e.etcdctl(&["auth", "enable"]).expect("etcdctl auth enable");
        e.root_password = Some(root_password.to_string());
        e
    }

    fn start_with(tls: Option<Certs>) -> Etcd {
        for bin in [ETCD, ETCDCTL] {
            assert!(
                Path::new(bin).exists(),
                "{bin} is missing: `make deps-apt` installs Debian's etcd-server and etcd-client"
            );
        }
        let data = TempDir::new("etcd");
        let scheme = if tls.is_some() { "https" } else { "http" };
        let client_url = format!("{scheme}://127.0.0.1:{}", free_port());
        let peer_url = format!("http://127.0.0.1:{}", free_port());
        let mut e = Etcd {
            client_url,
            peer_url,
            data,
            child: None,
            tls,
            root_password: None,
        };
        e.run();
        e
    }

    fn run(&mut self) {
        let log = std::fs::File::create(self.data.path().join("etcd.log")).unwrap();
        let mut cmd = Command::new(ETCD);
        if let Some(c) = &self.tls {
            cmd.arg("--cert-file")
                .arg(&c.server_cert)
                .arg("--key-file")
                .arg(&c.server_key)
                .arg("--trusted-ca-file")
                .arg(&c.ca)
                .arg("--client-cert-auth");
        }
        let child = cmd
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

    /// Save a snapshot of the live store (`etcdctl snapshot save`) into `file`.
    pub fn snapshot(&self, file: &Path) {
        self.etcdctl(&["snapshot", "save", file.to_str().unwrap()])
            .expect("etcdctl snapshot save");
    }

    /// Stop the server, replace its data with `file`'s (`etcdctl snapshot restore`, as an
    /// operator restores a backup), and start it again on the same ports.
    pub fn restore(&mut self, file: &Path) {
        self.stop();
        let data = self.data.path().join("data");
        std::fs::remove_dir_all(&data).unwrap();
        let out = Command::new(ETCDCTL)
            .env("ETCDCTL_API", "3")
            .args(["snapshot", "restore", file.to_str().unwrap()])
            .arg("--data-dir")
            .arg(&data)
            .args(["--name", "polyflake-test"])
            .arg(format!(
                "--initial-cluster=polyflake-test={}",
                self.peer_url
            ))
            .arg(format!("--initial-advertise-peer-urls={}", self.peer_url))
            .output()
            .expect("etcdctl snapshot restore");
        assert!(
            out.status.success(),
            "etcdctl snapshot restore: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        self.run();
    }

    /// Run etcdctl (API v3) against this server; stdout on success.
    pub fn etcdctl(&self, args: &[&str]) -> Result<String, String> {
        let mut cmd = Command::new(ETCDCTL);
        cmd.env("ETCDCTL_API", "3")
            .arg(format!("--endpoints={}", self.client_url))
            .arg("--dial-timeout=1s")
            .arg("--command-timeout=2s");
        if let Some(c) = &self.tls {
            cmd.arg(format!("--cacert={}", c.ca.display()))
                .arg(format!("--cert={}", c.client_cert.display()))
                .arg(format!("--key={}", c.client_key.display()));
        }
        if let Some(p) = &self.root_password {
            cmd.arg(format!("--user=root:{p}"));
        }
        let out = cmd.args(args).output().map_err(|e| e.to_string())?;
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

/// Certificates made for one test with `openssl` (RSA 2048): a CA, a server certificate for
/// 127.0.0.1 and localhost signed by it, a client certificate signed by it, and a second CA
/// that signed nothing here (the "wrong CA").
#[derive(Clone)]
pub struct Certs {
    dir: std::sync::Arc<TempDir>,
    pub ca: PathBuf,
    pub server_cert: PathBuf,
    pub server_key: PathBuf,
    /// The server's key and certificate in one PEM file (ZooKeeper's PEM key store).
    pub server_pem: PathBuf,
    pub client_cert: PathBuf,
    pub client_key: PathBuf,
    pub other_ca: PathBuf,
}

fn openssl(dir: &Path, args: &[&str]) {
    let out = Command::new("openssl")
        .current_dir(dir)
        .args(args)
        .output()
        .expect("run openssl (Debian package openssl)");
    assert!(
        out.status.success(),
        "openssl {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

impl Certs {
    pub fn generate() -> Certs {
        let dir = TempDir::new("certs");
        let d = dir.path().to_path_buf();
        let ca = |name: &str, cn: &str| {
            openssl(
                &d,
                &[
                    "req",
                    "-x509",
                    "-newkey",
                    "rsa:2048",
                    "-nodes",
                    "-days",
                    "2",
                    "-keyout",
                    &format!("{name}.key"),
                    "-out",
                    &format!("{name}.pem"),
                    "-subj",
                    &format!("/CN={cn}"),
                ],
            )
        };
        ca("ca", "polyflake test CA");
        ca("other-ca", "another CA");
        std::fs::write(
            d.join("leaf.ext"),
            "basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth,clientAuth\nsubjectAltName=IP:127.0.0.1,DNS:localhost\n",
        )
        .unwrap();
        for (name, cn) in [("server", "localhost"), ("client", "polyflake-client")] {
            openssl(
                &d,
                &[
                    "req",
                    "-newkey",
                    "rsa:2048",
                    "-nodes",
                    "-keyout",
                    &format!("{name}.key"),
                    "-out",
                    &format!("{name}.csr"),
                    "-subj",
                    &format!("/CN={cn}"),
                ],
            );
            openssl(
                &d,
                &[
                    "x509",
                    "-req",
                    "-in",
                    &format!("{name}.csr"),
                    "-CA",
                    "ca.pem",
                    "-CAkey",
                    "ca.key",
                    "-CAcreateserial",
                    "-days",
                    "2",
                    "-extfile",
                    "leaf.ext",
                    "-out",
                    &format!("{name}.pem"),
                ],
            );
        }
        let combined = [
            std::fs::read_to_string(d.join("server.key")).unwrap(),
            std::fs::read_to_string(d.join("server.pem")).unwrap(),
        ]
        .concat();
        std::fs::write(d.join("server-combined.pem"), combined).unwrap();
        Certs {
            ca: d.join("ca.pem"),
            server_cert: d.join("server.pem"),
            server_key: d.join("server.key"),
            server_pem: d.join("server-combined.pem"),
            client_cert: d.join("client.pem"),
            client_key: d.join("client.key"),
            other_ca: d.join("other-ca.pem"),
            dir: std::sync::Arc::new(dir),
        }
    }

    pub fn dir(&self) -> &Path {
        self.dir.path()
    }
}

pub const JAVA: &str = "/usr/bin/java";
/// Debian's ZooKeeper server (package zookeeper); its manifest names its dependencies' jars.
pub const ZOOKEEPER_JAR: &str = "/usr/share/java/zookeeper.jar";

/// A real ZooKeeper server (standalone) on 127.0.0.1 with free ports and a temporary data dir,
/// run on its Java main (`ZooKeeperServerMain`, what `zkServer.sh start-foreground` runs);
/// stopped on drop. `tickTime` is 200 ms, so sessions of 400 ms to 60 s are granted.
pub struct ZooKeeper {
    pub port: u16,
    /// With TLS: the secure client port (client certificates required).
    pub secure_port: Option<u16>,
    data: TempDir,
    child: Option<Child>,
    tls: Option<Certs>,
}

impl ZooKeeper {
    pub fn start() -> ZooKeeper {
        ZooKeeper::start_with(None)
    }

    /// A server that also listens for TLS on `secure_port` (Netty, PEM key and trust stores,
    /// `ssl.clientAuth=need`).
    pub fn start_tls(certs: Certs) -> ZooKeeper {
        ZooKeeper::start_with(Some(certs))
    }

    fn start_with(tls: Option<Certs>) -> ZooKeeper {
        for f in [JAVA, ZOOKEEPER_JAR] {
            assert!(
                Path::new(f).exists(),
                "{f} is missing: `make deps-apt` installs Debian's zookeeper (and a Java runtime)"
            );
        }
        let mut z = ZooKeeper {
            port: free_port(),
            secure_port: tls.as_ref().map(|_| free_port()),
            data: TempDir::new("zookeeper"),
            child: None,
            tls,
        };
        z.run();
        z
    }

    /// `127.0.0.1:port` (the plain client port).
    pub fn ensemble(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    /// `127.0.0.1:secure_port`.
    pub fn secure_ensemble(&self) -> String {
        format!("127.0.0.1:{}", self.secure_port.expect("a TLS server"))
    }

    fn run(&mut self) {
        let d = self.data.path();
        let mut cfg = format!(
            "tickTime=200\ndataDir={}\nclientPort={}\nclientPortAddress=127.0.0.1\nmaxSessionTimeout=60000\nadmin.enableServer=false\n4lw.commands.whitelist=ruok,srvr,cons\n",
            d.join("data").display(),
            self.port
        );
        if let (Some(c), Some(p)) = (&self.tls, self.secure_port) {
            cfg.push_str(&format!(
                "secureClientPort={p}\nsecureClientPortAddress=127.0.0.1\nserverCnxnFactory=org.apache.zookeeper.server.NettyServerCnxnFactory\nssl.keyStore.location={}\nssl.keyStore.type=PEM\nssl.trustStore.location={}\nssl.trustStore.type=PEM\nssl.clientAuth=need\nssl.hostnameVerification=false\nssl.clientHostnameVerification=false\n",
                c.server_pem.display(),
                c.ca.display()
            ));
        }
        std::fs::write(d.join("zoo.cfg"), cfg).unwrap();
        let log = std::fs::File::create(d.join("zookeeper.log")).unwrap();
        // Debian's jar names its dependencies in its manifest but for netty-codec, which the
        // TLS (Netty) server needs; slf4j-simple sends its log to the log file. Both come with
        // the zookeeper package's dependencies.
        let mut classpath = ZOOKEEPER_JAR.to_string();
        for extra in [
            "/usr/share/java/netty-codec.jar",
            "/usr/share/java/slf4j-simple.jar",
        ] {
            if Path::new(extra).exists() {
                classpath = format!("{classpath}:{extra}");
            }
        }
        let child = Command::new(JAVA)
            .args([
                "-Xmx128m",
                "-XX:+UseSerialGC",
                "-XX:TieredStopAtLevel=1",
                "-Dzookeeper.jmx.log4j.disable=true",
                "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
                "-cp",
                &classpath,
                "org.apache.zookeeper.server.ZooKeeperServerMain",
            ])
            .arg(d.join("zoo.cfg"))
            .stdin(Stdio::null())
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .expect("start ZooKeeper");
        self.child = Some(child);
        // `ruok` answers imok before the server takes sessions; `srvr` names a mode only once it
        // does (as tests/stores/with_zookeeper.sh waits). A first session on a cold JVM can
        // still be slow on a loaded machine: clients here get generous connect timeouts.
        let up = wait_until(Duration::from_secs(60), || {
            self.four_letter("srvr").contains("Mode:")
        });
        assert!(
            up,
            "ZooKeeper was not serving (srvr names no mode) within 60 s; log:\n{}",
            std::fs::read_to_string(d.join("zookeeper.log")).unwrap_or_default()
        );
    }

    /// A four-letter-word command on the plain port ("" if it cannot be reached).
    pub fn four_letter(&self, word: &str) -> String {
        use std::io::{Read, Write};
        let Ok(mut s) = std::net::TcpStream::connect(("127.0.0.1", self.port)) else {
            return String::new();
        };
        let _ = s.set_read_timeout(Some(Duration::from_secs(2)));
        let _ = s.write_all(word.as_bytes());
        let mut out = String::new();
        let _ = s.read_to_string(&mut out);
        out
    }

    /// Stop the server (SIGKILL: as abrupt as a crash or a partition).
    pub fn stop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    /// Start it again on the same ports and data (sessions survive in its data).
    pub fn restart(&mut self) {
        self.stop();
        self.run();
    }

    /// A backup: a copy of the data dir (taken while the server is stopped for a moment, so
    /// the copy is consistent), into `to`.
    pub fn backup(&mut self, to: &Path) {
        self.stop();
        copy_dir(&self.data.path().join("data"), to);
        self.run();
    }

    /// Restore a backup made by [`ZooKeeper::backup`]: stop, replace the data, start.
    pub fn restore(&mut self, from: &Path) {
        self.stop();
        let data = self.data.path().join("data");
        std::fs::remove_dir_all(&data).unwrap();
        copy_dir(from, &data);
        self.run();
    }
}

fn copy_dir(from: &Path, to: &Path) {
    let st = Command::new("cp")
        .arg("-a")
        .arg(from)
        .arg(to)
        .status()
        .expect("cp");
    assert!(st.success(), "cp -a {} {}", from.display(), to.display());
}

impl Drop for ZooKeeper {
    fn drop(&mut self) {
        self.stop();
    }
}

/// A plain ZooKeeper client for the tests to look at and tamper with a store (as an operator
/// or an intruder would), on a runtime of its own.
pub struct ZkClient {
    rt: tokio::runtime::Runtime,
    client: zookeeper_client::Client,
}

impl ZkClient {
    /// Connect, as digest user `auth` = (user, password) or unauthenticated.
    pub fn connect(ensemble: &str, auth: Option<(&str, &str)>) -> ZkClient {
        // The client builds a rustls configuration even for plain connections, on the
        // process default provider: install it (as polyflake itself does).
        let _ = rustls::crypto::aws_lc_rs::default_provider().install_default();
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        let client = rt.block_on(async {
            let mut c = zookeeper_client::Client::connector();
            c.session_timeout(Duration::from_secs(20));
            if let Some((u, p)) = auth {
                c.auth("digest".to_string(), format!("{u}:{p}").into_bytes());
            }
            c.connect(ensemble).await.expect("test client connects")
        });
        ZkClient { rt, client }
    }

    pub fn get(&self, path: &str) -> Option<Vec<u8>> {
        self.rt
            .block_on(self.client.get_data(path))
            .ok()
            .map(|(v, _)| v)
    }

    pub fn get_text(&self, path: &str) -> Option<String> {
        self.get(path)
            .map(|v| String::from_utf8_lossy(&v).into_owned())
    }

    pub fn set(&self, path: &str, data: &[u8]) -> Result<(), String> {
        self.rt
            .block_on(self.client.set_data(path, data, None))
            .map(|_| ())
            .map_err(|e| e.to_string())
    }

    pub fn delete(&self, path: &str) -> Result<(), String> {
        self.rt
            .block_on(self.client.delete(path, None))
            .map_err(|e| e.to_string())
    }

    pub fn create(&self, path: &str, data: &[u8]) -> Result<(), String> {
        let options = zookeeper_client::CreateMode::Persistent
            .with_acls(zookeeper_client::Acls::anyone_all());
        self.rt
            .block_on(self.client.create(path, data, &options))
            .map(|_| ())
            .map_err(|e| e.to_string())
    }

    pub fn children(&self, path: &str) -> Vec<String> {
        self.rt
            .block_on(self.client.list_children(path))
            .unwrap_or_default()
    }

    /// The ACL of a znode, as `scheme:id:perms` strings.
    pub fn acl(&self, path: &str) -> Vec<String> {
        self.rt
            .block_on(self.client.get_acl(path))
            .map(|(acls, _)| {
                acls.iter()
                    .map(|a| format!("{}:{}:{}", a.scheme(), a.id(), a.permission()))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// The ephemeral owner (session id) of a znode, 0 for a persistent one.
    pub fn ephemeral_owner(&self, path: &str) -> Option<i64> {
        self.rt
            .block_on(self.client.check_stat(path))
            .ok()
            .flatten()
            .map(|s| s.ephemeral_owner)
    }
}

/// A TCP relay on 127.0.0.1 to `target`: bytes pass both ways until `silence(true)`, after which
/// they are read and dropped (connections stay open, nothing arrives: a partition).
pub struct Relay {
    pub port: u16,
    silent: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

impl Relay {
    pub fn start(target: u16) -> Relay {
        use std::sync::atomic::AtomicBool;
        use std::sync::Arc;
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let silent = Arc::new(AtomicBool::new(false));
        let flag = silent.clone();
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                let Ok(inbound) = conn else { continue };
                let Ok(outbound) = std::net::TcpStream::connect(("127.0.0.1", target)) else {
                    continue;
                };
                for (from, to) in [
                    (inbound.try_clone().unwrap(), outbound.try_clone().unwrap()),
                    (outbound, inbound),
                ] {
                    let flag = flag.clone();
                    std::thread::spawn(move || pump(from, to, &flag));
                }
            }
        });
        Relay { port, silent }
    }

    pub fn silence(&self, on: bool) {
        self.silent.store(on, std::sync::atomic::Ordering::SeqCst);
    }
}

fn pump(
    mut from: std::net::TcpStream,
    mut to: std::net::TcpStream,
    silent: &std::sync::atomic::AtomicBool,
) {
    use std::io::{Read, Write};
    let mut buf = [0u8; 16 * 1024];
    loop {
        match from.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                if silent.load(std::sync::atomic::Ordering::SeqCst) {
                    continue;
                }
                if to.write_all(&buf[..n]).is_err() {
                    break;
                }
            }
        }
    }
    let _ = to.shutdown(std::net::Shutdown::Both);
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
        "zookeeper" => {
            let mut o = ZooKeeperLeaseOptions::from_ensemble(&env("ENSEMBLE"));
            o.prefix = env("PREFIX");
            o.slots = slots;
            o.reserve_ms = reserve_ms;
            o.session_timeout_ms = env_or("SESSION_MS", "2000").parse().unwrap();
            o.connect_timeout_ms = 3000;
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
