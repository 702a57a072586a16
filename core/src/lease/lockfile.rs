//! A file held by an exclusive `flock` in a lease directory: what a file lease's slot
//! (`file.rs`) and a fixed node id's mark (`host.rs`) are both made of. Opened relative to the
//! directory's descriptor under its rules (`dir.rs`), registered with the fork handler with no
//! fork in between, locked without blocking, and kept only when the name still names the file
//! locked; its head read; a nonce for holder tokens.

use super::dir::{LeaseDir, Opened, Unsafe};
use super::record;
use super::store::store_error;
use crate::error::Result;
use crate::fork::{self, RegisteredFd};
use std::fs::File;
use std::io::{ErrorKind as IoKind, Read};
use std::os::unix::io::AsRawFd;
use std::time::UNIX_EPOCH;

/// A slot file or a mark is never read past this many bytes (a record is 512).
pub(crate) const READ_LIMIT: u64 = 4096;

/// Read at most `READ_LIMIT` bytes from the start of a file.
pub(crate) fn read_head(file: &File) -> std::io::Result<Vec<u8>> {
    let mut buf = Vec::with_capacity(record::RECORD_LEN);
    file.take(READ_LIMIT).read_to_end(&mut buf)?;
    Ok(buf)
}

pub(crate) fn mtime_ms(meta: &std::fs::Metadata) -> Option<i64> {
    let m = meta.modified().ok()?;
    Some(m.duration_since(UNIX_EPOCH).ok()?.as_millis() as i64)
}

pub(crate) fn lock(file: &File, op: libc::c_int) -> std::io::Result<bool> {
    // SAFETY: flock on a descriptor we own.
    let rc = unsafe { libc::flock(file.as_raw_fd(), op | libc::LOCK_NB) };
    if rc == 0 {
        return Ok(true);
    }
    let e = std::io::Error::last_os_error();
    if e.kind() == IoKind::WouldBlock {
        Ok(false)
    } else {
        Err(e)
    }
}

/// A slot file opened to take it: its descriptor registered with the fork handler, and the
/// device and inode it was opened at.
pub(crate) struct SlotFd {
    // The registration first: fields drop in order, so a fork handler never sees a
    // registration of a descriptor already closed.
    pub(crate) reg: RegisteredFd,
    pub(crate) file: File,
    pub(crate) dev: u64,
    pub(crate) ino: u64,
}

/// What opening a slot file to take it found.
enum Open {
    Registered(SlotFd),
    Unsafe(Unsafe),
}

/// Open a slot file to read and write (creating it if absent) and register the descriptor with
/// the fork handler, with no fork in between.
fn open_registered(dir: &LeaseDir, name: &str) -> std::io::Result<Open> {
    fork::without_fork(|| match dir.open_name(name, true, true)? {
        Opened::File(file, st) => {
            let reg = fork::register_fd(file.as_raw_fd(), st.st_dev, st.st_ino);
            Ok(Open::Registered(SlotFd {
                reg,
                file,
                dev: st.st_dev,
                ino: st.st_ino,
            }))
        }
        Opened::Unsafe(u) => Ok(Open::Unsafe(u)),
        Opened::Absent => Err(IoKind::NotFound.into()),
    })
}

/// What trying one slot file came to.
pub(crate) enum Take {
    /// Opened and locked.
    Taken(SlotFd),
    /// Held by someone else, or another user's file.
    Busy,
    /// Something other than a usable slot file is at the name.
    Unsafe(Unsafe),
    /// The name is free, but this user may not make a file in the directory.
    CannotCreate(std::io::Error),
}

/// Open and lock one slot file, making sure the lock is on the file the name names (it may
/// have been deleted or replaced between the open and the lock).
// Modelled in verify/model/file.pml: inline file_lock (the flock on the inode the path names) (make
// model).
pub(crate) fn take_file(dir: &LeaseDir, name: &str) -> Result<Take> {
    let d = dir.path();
    for _ in 0..8 {
        let fd = match open_registered(dir, name) {
            Ok(Open::Registered(fd)) => fd,
            Ok(Open::Unsafe(u)) => return Ok(Take::Unsafe(u)),
            // Another user's slot file in a shared directory: not ours to take. Nothing at the
            // name: the directory is not ours to write.
            Err(e) if e.kind() == IoKind::PermissionDenied => {
                return Ok(match dir.stat(name) {
                    Ok(None) => Take::CannotCreate(e),
                    _ => Take::Busy,
                })
            }
            // Removed between the look and the open: look again.
            Err(e) if e.kind() == IoKind::NotFound => continue,
            Err(e) => {
                return Err(store_error(
                    d,
                    &format!("cannot open {}", d.join(name).display()),
                    e,
                ))
            }
        };
        if !lock(&fd.file, libc::LOCK_EX).map_err(|e| store_error(d, "flock failed", e))? {
            return Ok(Take::Busy);
        }
        match dir.stat(name) {
            Ok(Some(st)) if (st.st_dev, st.st_ino) == (fd.dev, fd.ino) => {
                return Ok(Take::Taken(fd))
            }
            // Replaced or deleted between the open and the lock: try the name again.
            _ => {
                // SAFETY: flock on a descriptor we own.
                unsafe { libc::flock(fd.file.as_raw_fd(), libc::LOCK_UN) };
            }
        }
    }
    Err(store_error(
        d,
        &format!("cannot hold {}", d.join(name).display()),
        "it keeps being replaced",
    ))
}

/// A random-enough 64-bit value for holder tokens and temporary names (no cryptography needed:
/// it only has to differ between holders).
pub(crate) fn nonce() -> u64 {
    let mut x: u64 = 0;
    // SAFETY: getrandom into a valid 8-byte buffer; on failure the fallback below is used.
    let n = unsafe { libc::getrandom((&mut x as *mut u64).cast(), 8, libc::GRND_NONBLOCK) };
    if n != 8 {
        let t = std::time::SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(0);
        x = t ^ (u64::from(std::process::id()) << 32) ^ (&x as *const u64 as u64);
    }
    x
}
