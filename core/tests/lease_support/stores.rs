//! Real stores for the lease tests: etcd (plain, or with TLS, client certificates and
//! authentication), certificates made with `openssl`, and ZooKeeper (Debian's, on its Java main)
//! with a small client, each started on 127.0.0.1 with free ports and temporary data dirs.

use super::*;

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

    /// Revoke the one lease this server holds (`etcdctl lease list`, then `lease revoke`), as
    /// an operator or an expiry would end it.
    pub fn revoke_the_lease(&self) {
        let leases = self.etcdctl(&["lease", "list"]).unwrap();
        // "found 1 leases" then one hex id per line.
        let id = leases
            .lines()
            .map(str::trim)
            .find(|l| !l.is_empty() && l.chars().all(|c| c.is_ascii_hexdigit()))
            .unwrap_or_else(|| panic!("no lease listed: {leases}"))
            .to_string();
        self.etcdctl(&["lease", "revoke", &id]).unwrap();
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

    /// Replace the ACL of a znode (as its owner or an operator would, `setAcl`).
    pub fn set_acl(&self, path: &str, acl: &[zookeeper_client::Acl]) -> Result<(), String> {
        self.rt
            .block_on(self.client.set_acl(path, acl, None))
            .map(|_| ())
            .map_err(|e| e.to_string())
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
