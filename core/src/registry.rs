//! One live generator per node id and layout, whatever the epoch and whatever the source: in
//! this process (a table, which also keeps the last state word of each, so a successor never
//! repeats its predecessor) and on this host (an abstract Unix socket bound to a name made of the
//! scope, the layout and the node id: the kernel lets one process bind a name, and frees it when
//! that process dies, so a crash needs no cleanup; a forked child's inherited copy is closed by
//! the fork handler, so a child cannot take its parent's node id while the parent lives).
//!
//! **Any epoch.** Two generators with the same node id and layout issue the same 64 bits
//! whenever their elapsed times meet, whatever their epochs: an ID's bits carry the elapsed
//! milliseconds, not the epoch. So the epoch is not part of a claim; only an explicit scope
//! ([`HOST_SCOPE_ENV`]) separates two holders of one node id and layout on purpose.
//!
//! **Every source.** A static node id (a number, an environment variable, a hostname's ordinal,
//! an IPv4 address) and a lease's slot (file, etcd, ZooKeeper) claim the same name: a lease skips
//! a slot whose node id a live static holder has, and a static id a lease holder has is refused
//! with [`Error::NodeIdInUse`] naming the holding process. Generators on an injected clock are
//! exempt from the host-wide claim (see `Builder::clock`): their times are not the host's.
//!
//! ## Decisions
//!
//! - **An abstract Unix socket, not `flock` on a file in the shared lease directory**: the
//!   kernel frees the name the instant the holder dies (nothing to clean, nothing a hostile local
//!   user can plant), the refused process learns the holder's pid from `SO_PEERCRED` (a file
//!   lock does not give it), and the scope is the network namespace, which is what "this host"
//!   means to a container. The name is `polyflake/v2/<scope>/<T>-<N>-<S>/<node>`.
//! - **The epoch is not in the name** (above): two epochs 1 s apart repeated 2,064,384 IDs in
//!   1.5 s before. **Leases claim too**: a static id and a lease's slot of one node id on one host
//!   repeated 5.3 M IDs in 1.5 s before. A slot whose node id another live generator holds (same
//!   layout, any epoch) is skipped, never shared; two leases of different slots never block each
//!   other.
//! - **A successor continues after its predecessor.** The process table keeps, per key, the
//!   state word of the last ID issued, and a new generator of that key starts from it, so a
//!   `close()` (or drop) and a new generator within the same millisecond cannot repeat the
//!   predecessor's IDs (before, the successor restarted at sequence 0).
//! - **Who is exempt.** Only the test clocks (`ManualClock`, `ScriptedClock`:
//!   `Clock::is_test_clock`) are outside the process rule: a user's own clock (a Python callable
//!   wrapping `time.time`, a Node clock function) follows it, since two such generators in
//!   production would share a node id. The service's hidden `--test-clock` counts as a test
//!   clock (tests run one beside a real service on the same node id). So the Python tests of
//!   callable clocks that make several generators with one node id run one process per test, and
//!   the Node tests use one node id each. Injected clocks claim in their process only.
//! - **Scopes** ([`HOST_SCOPE_ENV`]): two services on one host that write to different tables may
//!   reuse a node id on purpose, each in its own scope (at most [`MAX_SCOPE_LEN`] bytes of ASCII
//!   letters, digits, `.`, `_`, `-`; anything else, a value that is not UTF-8 included, is
//!   refused rather than read as the default scope). Each language's test suite sets its own
//!   scope and state directory (the Makefile does), since they run side by side on one machine.
//! - **What a hostile local user can do**: bind a name first (an abstract socket needs no
//!   permission), which denies that node id to everyone on the host: a denial of service, never a
//!   duplicate. A service that must not be denied takes its node id from a lease in its own
//!   directory.

use crate::error::{Error, Result};
use crate::forklock::ForkLock;
use crate::layout::Layout;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Key {
    scope: String,
    node_id: u32,
    layout: Layout,
}

#[derive(Debug)]
struct Entry {
    /// The fork generation of the live holder (meaningless when not live).
    generation: u64,
    live: bool,
    /// The state word (`elapsed << seq_bits | seq`) of the last ID any generator of this key
    /// issued in this process: a successor continues after it, so dropping a generator and
    /// making a new one within the same millisecond cannot repeat its IDs. The state word is
    /// the ID's own bits (elapsed and sequence), so it holds across epochs.
    last_state: i64,
}

/// Node ids in use in this process (and the last state of the ones that were).
static LIVE: ForkLock<Option<HashMap<Key, Entry>>> = ForkLock::new(None);

/// A claim on (scope, node id, layout) in this process and, unless exempt, on this host;
/// released on drop.
#[derive(Debug)]
pub(crate) struct Claim {
    key: Key,
    generation: u64,
    released: AtomicU64,
    host: ForkLock<Option<HostHold>>,
}

/// The environment variable that names a scope for host-wide claims: processes in different
/// scopes may hold the same node id and layout (services that write to different tables).
pub const HOST_SCOPE_ENV: &str = "POLYFLAKE_HOST_SCOPE";
/// The longest scope name, in bytes.
pub const MAX_SCOPE_LEN: usize = 40;

/// The host scope: `explicit` when given, else [`HOST_SCOPE_ENV`] (empty: the host's one
/// scope). A scope is at most [`MAX_SCOPE_LEN`] bytes of ASCII letters, digits, `.`, `_` and
/// `-`; anything else (a value that is not UTF-8 included) is refused, never read as the default
/// scope.
///
/// ```
/// assert_eq!(polyflake::host_scope(Some("billing-v2")).unwrap(), "billing-v2");
/// let e = polyflake::host_scope(Some("two words")).unwrap_err();
/// assert!(e.to_string().contains("\"two words\""), "{e}");
/// ```
pub fn host_scope(explicit: Option<&str>) -> Result<String> {
    let name = if explicit.is_some() {
        "host_scope"
    } else {
        HOST_SCOPE_ENV
    };
    let bad = |shown: String, why: &str| Error::InvalidArgument {
        name,
        reason: format!("{shown} is not a scope name: {why}"),
    };
    let scope = match explicit {
        Some(s) => s.to_string(),
        None => match std::env::var_os(HOST_SCOPE_ENV) {
            None => String::new(),
            Some(raw) => raw.into_string().map_err(|raw| {
                bad(
                    format!("{raw:?}"),
                    "it is not valid UTF-8 (a scope that cannot be read is never taken as the default one)",
                )
            })?,
        },
    };
    if scope.len() > MAX_SCOPE_LEN {
        return Err(bad(
            format!("{scope:?}"),
            &format!("at most {MAX_SCOPE_LEN} bytes (it is {})", scope.len()),
        ));
    }
    if let Some(c) = scope
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-')))
    {
        return Err(bad(
            format!("{scope:?}"),
            &format!("{c:?} is not allowed (ASCII letters, digits, '.', '_' and '-' only)"),
        ));
    }
    Ok(scope)
}

/// The abstract socket name of a key: `polyflake/v2/<scope>/<T>-<N>-<S>/<node>`.
fn host_name(key: &Key) -> Vec<u8> {
    let l = key.layout;
    format!(
        "polyflake/v2/{}/{}-{}-{}/{}",
        key.scope,
        l.timestamp_bits(),
        l.node_bits(),
        l.sequence_bits(),
        key.node_id
    )
    .into_bytes()
}

/// A bound abstract socket: the host-wide hold on a node id.
#[derive(Debug)]
struct HostHold {
    fd: i32,
    generation: u64,
    _reg: crate::fork::RegisteredFd,
}

impl Drop for HostHold {
    fn drop(&mut self) {
        // In a forked child the fork handler has closed this process's copy already, and the
        // number may name another file by now: close only in the process that bound it.
        if crate::fork::current_fork_generation() == self.generation {
            // SAFETY: a descriptor this process opened and still owns.
            unsafe { libc::close(self.fd) };
        }
    }
}

/// An abstract-namespace address for `name`.
fn abstract_addr(name: &[u8]) -> (libc::sockaddr_un, libc::socklen_t) {
    // SAFETY: sockaddr_un is plain data; all zeroes is a valid value.
    let mut addr: libc::sockaddr_un = unsafe { std::mem::zeroed() };
    addr.sun_family = libc::AF_UNIX as libc::sa_family_t;
    // sun_path[0] stays 0: the abstract namespace. The name is short (see `host_name`).
    for (dst, &b) in addr.sun_path[1..].iter_mut().zip(name) {
        *dst = b as libc::c_char;
    }
    let len =
        std::mem::size_of::<libc::sa_family_t>() + 1 + name.len().min(addr.sun_path.len() - 1);
    (addr, len as libc::socklen_t)
}

/// Bind the key's name on this host: `Ok(Err(pid))` when another process holds it (its pid when
/// the kernel tells it, else 0).
/// The host-wide name for `key`, or who holds it: its pid when `ask` (a connection to the
/// holder's listening socket, which stays in its queue: ask once per claim), else 0.
fn hold_on_host(
    key: &Key,
    generation: u64,
    ask: bool,
) -> Result<std::result::Result<HostHold, u32>> {
    let name = host_name(key);
    let (addr, len) = abstract_addr(&name);
    let io_err = |what: &str| Error::LeaseStore {
        reason: format!(
            "could not {what} the host-wide claim on node id {} ({}): {}",
            key.node_id,
            String::from_utf8_lossy(&name),
            std::io::Error::last_os_error()
        ),
    };
    crate::fork::without_fork(|| {
        // SAFETY: plain socket calls on a descriptor this function owns until it returns it.
        unsafe {
            let fd = libc::socket(libc::AF_UNIX, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0);
            if fd < 0 {
                return Err(io_err("open a socket for"));
            }
            if libc::bind(fd, &addr as *const _ as *const libc::sockaddr, len) != 0 {
                let e = std::io::Error::last_os_error();
                libc::close(fd);
                if e.raw_os_error() == Some(libc::EADDRINUSE) {
                    return Ok(Err(if ask { holder_pid(&addr, len) } else { 0 }));
                }
                return Err(Error::LeaseStore {
                    reason: format!(
                        "could not bind the host-wide claim on node id {}: {e}",
                        key.node_id
                    ),
                });
            }
            // Listening lets a refused process ask the kernel who holds the name.
            libc::listen(fd, 64);
            let mut st: libc::stat = std::mem::zeroed();
            libc::fstat(fd, &mut st);
            let reg = crate::fork::register_fd(fd, st.st_dev, st.st_ino);
            Ok(Ok(HostHold {
                fd,
                generation,
                _reg: reg,
            }))
        }
    })
}

/// The pid of the process listening on `addr` (0 when it cannot be told).
fn holder_pid(addr: &libc::sockaddr_un, len: libc::socklen_t) -> u32 {
    // SAFETY: a non-blocking connect and SO_PEERCRED on a descriptor closed before returning.
    unsafe {
        let fd = libc::socket(
            libc::AF_UNIX,
            libc::SOCK_STREAM | libc::SOCK_CLOEXEC | libc::SOCK_NONBLOCK,
            0,
        );
        if fd < 0 {
            return 0;
        }
        let mut pid = 0;
        if libc::connect(fd, addr as *const _ as *const libc::sockaddr, len) == 0 {
            let mut cred: libc::ucred = std::mem::zeroed();
            let mut clen = std::mem::size_of::<libc::ucred>() as libc::socklen_t;
            if libc::getsockopt(
                fd,
                libc::SOL_SOCKET,
                libc::SO_PEERCRED,
                &mut cred as *mut _ as *mut libc::c_void,
                &mut clen,
            ) == 0
            {
                pid = cred.pid.max(0) as u32;
            }
        }
        libc::close(fd);
        pid
    }
}

/// How a refusal names the holding process: `process 4242 (polyflake)` (its command name from
/// `/proc` when it can be read), or `another process on this host`.
pub(crate) fn describe_holder(pid: u32) -> String {
    if pid == 0 {
        return "another process on this host".to_string();
    }
    if pid == std::process::id() {
        return format!(
            "this process ({pid}: another copy of the polyflake library loaded in it, such as a second class loader)"
        );
    }
    match std::fs::read_to_string(format!("/proc/{pid}/comm")) {
        Ok(comm) if !comm.trim().is_empty() => {
            let comm: String = comm.trim().chars().filter(|c| !c.is_control()).collect();
            format!("process {pid} ({comm}) on this host")
        }
        _ => format!("process {pid} on this host"),
    }
}

/// The claim's wish: in this process only, or on the host too.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Reach {
    /// This process's table only (an injected clock).
    Process,
    /// This process's table and the host-wide name.
    Host,
}

/// How long a claim tries again a name whose holder is on its way out (see `claim`).
const RELEASE_WAIT: std::time::Duration = std::time::Duration::from_millis(500);

/// Whether a holder the kernel named may be a name about to be released rather than a live
/// holder: this process (a descriptor copy a spawning thread's child keeps until its exec), a
/// holder that could not be told (its listening socket already shut), or a process that has
/// exited (its last thread's descriptors are closed after its children are reparented: a forked
/// child that waited for its parent to go can find the name still bound for a moment).
fn may_be_releasing(pid: u32) -> bool {
    if pid == 0 || pid == std::process::id() {
        return true;
    }
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        // The state is the first field after the command name's closing parenthesis.
        Ok(stat) => stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().next())
            .is_some_and(|state| state == "Z" || state == "X"),
        Err(_) => true,
    }
}

/// Claim the node id. Returns the claim and the state word a new generator must start from
/// (-1 when this process never issued from the key).
// Modelled in verify/model/fork.pml: inline claim (R_FORKREG: the fork-aware rule, here the host-wide
// hold) and verify/model/host.pml: inline claim (R_ONECLAIM: every source, one name) (make model).
pub(crate) fn claim(
    node_id: u32,
    layout: Layout,
    scope: &str,
    generation: u64,
    reach: Reach,
) -> Result<(Claim, i64)> {
    let key = Key {
        scope: scope.to_string(),
        node_id,
        layout,
    };
    let mut live = LIVE.lock();
    let map = live.get_or_insert_with(HashMap::new);
    let entry = map.entry(key.clone()).or_insert(Entry {
        generation,
        live: false,
        last_state: -1,
    });
    if entry.live && entry.generation == generation {
        return Err(Error::NodeIdInUse {
            node_id,
            holder_pid: None,
            holder: String::new(),
        });
    }
    // An entry of an older fork generation is the parent's: the host-wide hold decides whether
    // the parent still lives.
    let host = match reach {
        Reach::Host => {
            // A name this process bound but no live claim of this table holds is either another
            // copy of the library (a second class loader: held for good) or a descriptor a
            // child keeps for a moment: a process another thread is spawning holds a copy of
            // every descriptor until its exec closes them (close-on-exec; a spawn runs no fork
            // handler), so a claim released just before is still bound. A name whose holder has
            // exited is released by the kernel a moment after (see `may_be_releasing`). Such
            // names go within milliseconds; they are tried again for up to RELEASE_WAIT before
            // the refusal. Only a bind decides: a retry never takes a name still bound.
            // The holder is asked once: every question leaves a connection in its queue.
            let started = std::time::Instant::now();
            let mut holder = None;
            loop {
                match hold_on_host(&key, generation, holder.is_none())? {
                    Ok(hold) => break Some(hold),
                    Err(pid) => {
                        let (pid, releasing) =
                            *holder.get_or_insert_with(|| (pid, may_be_releasing(pid)));
                        if !releasing || started.elapsed() >= RELEASE_WAIT {
                            return Err(Error::NodeIdInUse {
                                node_id,
                                holder_pid: Some(pid),
                                holder: describe_holder(pid),
                            });
                        }
                        std::thread::sleep(std::time::Duration::from_millis(5));
                    }
                }
            }
        }
        Reach::Process => None,
    };
    entry.live = true;
    entry.generation = generation;
    Ok((
        Claim {
            key,
            generation,
            released: AtomicU64::new(0),
            host: ForkLock::new(host),
        },
        entry.last_state,
    ))
}

impl Claim {
    /// Give the node id back, recording the state of the last ID issued under it.
    // Modelled in verify/model/fork.pml: inline release (make model).
    pub(crate) fn release(&self, last_state: i64) {
        if self.released.swap(1, Ordering::SeqCst) != 0 {
            return;
        }
        // Another process that takes the name next cannot see our last state here: it reads
        // the node id's mark on the host (see `lease::host`), written before this release.
        *self.host.lock() = None;
        let mut live = LIVE.lock();
        if let Some(entry) = live.as_mut().and_then(|m| m.get_mut(&self.key)) {
            entry.last_state = entry.last_state.max(last_state);
            if entry.generation == self.generation {
                entry.live = false;
            }
        }
    }

    /// The scope the claim was made in.
    pub(crate) fn scope(&self) -> &str {
        &self.key.scope
    }
}

impl Drop for Claim {
    fn drop(&mut self) {
        self.release(-1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scopes_are_checked_not_defaulted() {
        assert_eq!(host_scope(Some("")).unwrap(), "");
        assert_eq!(host_scope(Some("a.b_c-9")).unwrap(), "a.b_c-9");
        for bad in ["x/y", "caf\u{e9}", "a b", &"x".repeat(41)] {
            let e = host_scope(Some(bad)).unwrap_err();
            assert!(e.to_string().contains(&format!("{bad:?}")), "{e}");
        }
    }

    #[test]
    fn the_epoch_is_not_part_of_the_name() {
        let key = Key {
            scope: "s".into(),
            node_id: 7,
            layout: Layout::DEFAULT,
        };
        assert_eq!(host_name(&key), b"polyflake/v2/s/41-10-12/7".to_vec());
    }

    #[test]
    fn only_a_live_other_process_is_a_holder_for_good() {
        // This process, an untold holder, a zombie and a reaped process may be releasing.
        assert!(may_be_releasing(std::process::id()));
        assert!(may_be_releasing(0));
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        let zombie = std::time::Instant::now();
        while !std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .unwrap()
            .contains(") Z ")
        {
            assert!(zombie.elapsed().as_secs() < 30, "the child never exited");
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        assert!(may_be_releasing(pid), "a zombie");
        child.wait().unwrap();
        assert!(may_be_releasing(pid), "a reaped process");
        // A process that runs is a holder.
        let mut sleeper = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .unwrap();
        assert!(!may_be_releasing(sleeper.id()));
        sleeper.kill().unwrap();
        sleeper.wait().unwrap();
    }
}
