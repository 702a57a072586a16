//! One live generator per (node id, epoch, layout) unless it runs on a test clock: in this
//! process (a table, which also keeps the last state word of each, so a successor never repeats
//! its predecessor) and on this host (an abstract Unix socket bound to a name made of the three:
//! the kernel lets one process bind a name, and frees it when that process dies, so a crash
//! needs no cleanup; a forked child's inherited copy is closed by the fork handler, so a child
//! cannot take its parent's node id while the parent lives).

use crate::error::{Error, Result};
use crate::forklock::ForkLock;
use crate::layout::Layout;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct Key {
    node_id: u32,
    epoch_ms: i64,
    layout: Layout,
}

#[derive(Debug)]
struct Entry {
    /// The fork generation of the live holder (meaningless when not live).
    generation: u64,
    live: bool,
    /// The state word (`elapsed << seq_bits | seq`) of the last ID any generator of this key
    /// issued in this process: a successor continues after it, so dropping a generator and
    /// making a new one within the same millisecond cannot repeat its IDs.
    last_state: i64,
}

/// Node ids in use in this process (and the last state of the ones that were).
static LIVE: ForkLock<Option<HashMap<Key, Entry>>> = ForkLock::new(None);

/// A claim on (node id, epoch, layout) in this process and on this host, released on drop.
#[derive(Debug)]
pub(crate) struct Claim {
    key: Key,
    generation: u64,
    released: AtomicU64,
    host: ForkLock<Option<HostHold>>,
}

/// The environment variable that names a scope for host-wide claims: processes in different
/// scopes may hold the same static node id (services that write to different tables).
pub const HOST_SCOPE_ENV: &str = "POLYFLAKE_HOST_SCOPE";
const MAX_SCOPE: usize = 40;

/// The abstract socket name of a key: `polyflake/v1/<scope>/<epoch>/<T>-<N>-<S>/<node>`.
fn host_name(key: &Key) -> Result<Vec<u8>> {
    let scope = std::env::var(HOST_SCOPE_ENV).unwrap_or_default();
    if scope.len() > MAX_SCOPE || scope.contains('\0') {
        return Err(Error::InvalidArgument {
            name: HOST_SCOPE_ENV,
            reason: format!(
                "{scope:?} is not a scope name: at most {MAX_SCOPE} bytes, no NUL (it is {} bytes)",
                scope.len()
            ),
        });
    }
    let l = key.layout;
    Ok(format!(
        "polyflake/v1/{scope}/{}/{}-{}-{}/{}",
        key.epoch_ms,
        l.timestamp_bits(),
        l.node_bits(),
        l.sequence_bits(),
        key.node_id
    )
    .into_bytes())
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

/// Bind the key's name on this host: `Ok(None)` when another process holds it (with its pid
/// when the kernel tells it).
fn hold_on_host(key: &Key, generation: u64) -> Result<std::result::Result<HostHold, u32>> {
    let name = host_name(key)?;
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
                    return Ok(Err(holder_pid(&addr, len)));
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

/// Claim the node id. Returns the claim and the state word a new generator must start from
/// (-1 when this process never issued from the key).
// Modelled in model/fork.pml: inline claim (R_FORKREG: the fork-aware rule, here the host-wide
// hold) (make model).
pub(crate) fn claim(
    node_id: u32,
    epoch_ms: i64,
    layout: Layout,
    generation: u64,
    host_wide: bool,
) -> Result<(Claim, i64)> {
    let key = Key {
        node_id,
        epoch_ms,
        layout,
    };
    let mut live = LIVE.lock();
    let map = live.get_or_insert_with(HashMap::new);
    let entry = map.entry(key).or_insert(Entry {
        generation,
        live: false,
        last_state: -1,
    });
    if entry.live && entry.generation == generation {
        return Err(Error::NodeIdInUse {
            node_id,
            holder_pid: None,
        });
    }
    // An entry of an older fork generation is the parent's: the host-wide hold decides whether
    // the parent still lives.
    // (A leased slot is exclusive through its store: only static node ids need this.)
    let host = if host_wide {
        match hold_on_host(&key, generation)? {
            Ok(hold) => Some(hold),
            Err(pid) => {
                return Err(Error::NodeIdInUse {
                    node_id,
                    holder_pid: Some(pid),
                })
            }
        }
    } else {
        None
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
    // Modelled in model/fork.pml: inline release (make model).
    pub(crate) fn release(&self, last_state: i64) {
        if self.released.swap(1, Ordering::SeqCst) != 0 {
            return;
        }
        // Another process that takes the name next cannot see our last state: it starts after
        // the millisecond it took the name in (see `claim`'s caller).
        *self.host.lock() = None;
        let mut live = LIVE.lock();
        if let Some(entry) = live.as_mut().and_then(|m| m.get_mut(&self.key)) {
            entry.last_state = entry.last_state.max(last_state);
            if entry.generation == self.generation {
                entry.live = false;
            }
        }
    }
}

impl Drop for Claim {
    fn drop(&mut self) {
        self.release(-1);
    }
}
