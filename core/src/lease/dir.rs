//! A lease directory as hostile ground. The default directory is shared by every user of the
//! host (mode 1777): any of them may plant something at a slot's name before a generator comes,
//! a symbolic link to a root-only file, a hard link to another user's file, a FIFO, a directory.
//! So the directory is opened once, and every name in it is opened relative to that descriptor
//! (`openat`) with `O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK | O_NOCTTY`, looked at (`fstatat`
//! without following) before it is opened, and checked (`fstat`) after: only a regular file with
//! one link is read; only one that this user owns and nobody else may write is written to or
//! trusted as a slot (group write aside). Anything else is [`Unsafe`]: skipped, reported by what it is, never read,
//! never written, and never quoted.
//!
//! ## Decisions
//!
//! - **Ownership and group write.** A file another user can write lets them lower R after a
//!   crash, which would let the next holder reissue IDs; so a slot is written to or trusted only
//!   when it is this process's effective uid's and not o+w. Group write is allowed: a umask of
//!   002 is common, and the group is the operator's. For root (which may open anything) another
//!   user's slot file is skipped instead of taken over.
//! - **Skipped, and refused.** A symlink, a hard link, a FIFO, a directory, a device or a socket
//!   at a slot's name is skipped (listed as present, so never "created" either) and noted in
//!   `LeaseHealth::guard_note` (at most 8 named, the rest counted, since a hostile user can make
//!   many; the note field was reused rather than a field added that every binding copies). When
//!   nothing else is free the refusal is `LeaseStore` (not `NoFreeSlot`, which has no room for a
//!   reason) naming each path and what is there. Anything at `polyflake-space` but a regular
//!   one-link file is refused (the store's space cannot be known); its owner is not checked (the
//!   first user of a shared directory writes it; a forged one can only deny service).
//! - **Nothing read from a planted file is quoted**: parse errors say what is wrong (`an unknown
//!   key`), not the text; `inspect_file_lease` reports a planted name as `unsafe: <what>; not
//!   read, never taken`, without opening it.
//! - **The directory itself is the operator's configuration**: symlinks in its path are followed,
//!   the last component too (`/srv/leases -> /data/leases` works). The one exception is the
//!   default shared directory (see `default_lease_dir`), which any user could have made first:
//!   it is opened with `O_NOFOLLOW` and must be owned by root or by this user (a directory's
//!   owner may remove or swap anyone's files in it, sticky bit or not); a new one gets mode 1777
//!   through its descriptor (`fchmod`), not by name. The space record is renamed into place with
//!   `renameat2(RENAME_NOREPLACE)`, so it never has two links; where the filesystem cannot, it is
//!   linked and unlinked, and a reader that sees two links retries for 100 ms before calling it a
//!   hard link. A renewal checks its slot with `lstat` of the path.
//! - **What a cleaner may delete** in a lease directory: slot files of dead holders whose R has
//!   passed, and the whole directory when no generator uses it. **Not**: a slot file or the
//!   directory under a live holder (it stops with `lease_lost`, the next taker waits a full
//!   reserve: no ID repeats, but that holder is done), nor `polyflake-space` while a generator of
//!   another space could start. Restoring an OLD copy of a slot file under a live holder is never
//!   safe: the check cannot tell it from the holder's own record until the next renewal.

use super::store::store_error;
use crate::error::{Error, Result};
use std::ffi::CString;
use std::fs::File;
use std::io::ErrorKind as IoKind;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};

/// The default shared directory (mode 1777, like /var/tmp itself).
pub(crate) const SHARED_DIR: &str = "/var/tmp/polyflake-leases";

/// Open the directory, creating it if missing (the default one open to every user of the
/// host, with the sticky bit, like /var/tmp itself).
pub(crate) fn open_dir(dir: &Path) -> Result<LeaseDir> {
    let shared = dir == Path::new(SHARED_DIR);
    let mut created = false;
    if std::fs::symlink_metadata(dir).is_err() {
        let mut b = std::fs::DirBuilder::new();
        b.recursive(true);
        if shared {
            b.mode(0o1777);
        }
        match b.create(dir) {
            Ok(()) => created = true,
            Err(e) if e.kind() == IoKind::AlreadyExists => {}
            Err(e) => return Err(store_error(dir, "cannot create the directory", e)),
        }
    }
    let d = LeaseDir::open(dir)?;
    if shared && created {
        // Through the descriptor: the mode goes on the directory just made, whatever the name
        // names by now.
        d.chmod(0o1777);
    }
    Ok(d)
}

/// Is this one of the default directories any user of the host may have made first
/// (`/var/tmp/polyflake-leases`, or the temporary directory's where /var/tmp is missing)?
fn is_shared(path: &Path) -> bool {
    path == Path::new(SHARED_DIR) || path == std::env::temp_dir().join("polyflake-leases")
}

/// What was found at a name that is not a file this process may use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Unsafe {
    Symlink,
    /// A regular file with this many links: another name (maybe outside the directory)
    /// shares it.
    HardLinked(u64),
    Fifo,
    Directory,
    Device,
    Socket,
    /// A regular file owned by another user (uid) than this process's effective one.
    Owner(u32),
    /// A regular file others may write (its mode): its record could be forged.
    Writable(u32),
}

impl std::fmt::Display for Unsafe {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Unsafe::Symlink => write!(f, "a symbolic link (never followed)"),
            Unsafe::HardLinked(n) => write!(
                f,
                "a hard link (a regular file with {n} links: another name shares it)"
            ),
            Unsafe::Fifo => write!(f, "a FIFO"),
            Unsafe::Directory => write!(f, "a directory"),
            Unsafe::Device => write!(f, "a device node"),
            Unsafe::Socket => write!(f, "a socket"),
            Unsafe::Owner(uid) => write!(
                f,
                "a file owned by uid {uid}, not by this process's uid {}",
                euid()
            ),
            Unsafe::Writable(mode) => {
                write!(
                    f,
                    "a file other users may write (mode {:04o})",
                    mode & 0o7777
                )
            }
        }
    }
}

/// How a name opened.
pub(crate) enum Opened {
    /// A regular file with one link (and, when opened to write, this user's own, writable by
    /// no one else): its descriptor and `fstat`.
    File(File, libc::stat),
    /// Something else is there: never read or written.
    Unsafe(Unsafe),
    /// Nothing is there (and it was not to be created).
    Absent,
}

pub(crate) fn euid() -> u32 {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() }
}

fn cname(name: &str) -> std::io::Result<CString> {
    CString::new(name).map_err(|_| std::io::Error::from(IoKind::InvalidInput))
}

/// What a `stat` says of a file's kind, when it is not a regular file.
fn kind(st: &libc::stat) -> Option<Unsafe> {
    match st.st_mode & libc::S_IFMT {
        libc::S_IFREG => None,
        libc::S_IFLNK => Some(Unsafe::Symlink),
        libc::S_IFIFO => Some(Unsafe::Fifo),
        libc::S_IFDIR => Some(Unsafe::Directory),
        libc::S_IFSOCK => Some(Unsafe::Socket),
        _ => Some(Unsafe::Device),
    }
}

/// Is this (regular) file usable: one link; to write, this user's and not writable by every
/// user (group write is the operator's business: a umask of 002 is common).
fn judge(st: &libc::stat, write: bool) -> Option<Unsafe> {
    if let Some(k) = kind(st) {
        return Some(k);
    }
    if st.st_nlink != 1 {
        // nlink_t is u64 on x86_64, u32 on some other targets.
        #[allow(clippy::unnecessary_cast)]
        return Some(Unsafe::HardLinked(st.st_nlink as u64));
    }
    if write && st.st_uid != euid() {
        return Some(Unsafe::Owner(st.st_uid));
    }
    if write && st.st_mode & 0o002 != 0 {
        return Some(Unsafe::Writable(st.st_mode));
    }
    None
}

fn fstat(fd: libc::c_int) -> std::io::Result<libc::stat> {
    // SAFETY: a zeroed stat is a valid out-buffer; fd is open.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    if unsafe { libc::fstat(fd, &mut st) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(st)
}

/// A lease directory, open.
pub(crate) struct LeaseDir {
    fd: OwnedFd,
    path: PathBuf,
}

impl LeaseDir {
    /// Open the directory the operator named. Its path is configuration, so a symbolic link
    /// in it (the last component too) is followed, except for the default shared directory,
    /// which any user of the host could have made first: that one must be a real directory
    /// owned by root or by this user.
    pub(crate) fn open(path: &Path) -> Result<LeaseDir> {
        let shared = is_shared(path);
        let c = CString::new(path.as_os_str().as_bytes()).map_err(|_| Error::LeaseStore {
            reason: format!("the lease directory {} contains a NUL byte", path.display()),
        })?;
        let mut flags = libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC;
        if shared {
            flags |= libc::O_NOFOLLOW;
        }
        // SAFETY: a valid C string; the descriptor is owned at once.
        let fd = unsafe { libc::open(c.as_ptr(), flags) };
        if fd < 0 {
            let e = std::io::Error::last_os_error();
            let why = match e.raw_os_error() {
                Some(libc::ELOOP) | Some(libc::ENOTDIR) if shared => {
                    "it is not a directory (a symbolic link or a file there is not followed: another user may have made it)".to_string()
                }
                _ => e.to_string(),
            };
            return Err(Error::LeaseStore {
                reason: format!("cannot open the lease directory {}: {why}", path.display()),
            });
        }
        // SAFETY: fd was just opened and is owned by nothing else.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        if shared {
            let st = fstat(fd.as_raw_fd()).map_err(|e| Error::LeaseStore {
                reason: format!("cannot stat the lease directory {}: {e}", path.display()),
            })?;
            if st.st_uid != 0 && st.st_uid != euid() {
                return Err(Error::LeaseStore {
                    reason: format!(
                        "the shared lease directory {} is owned by uid {}, neither root nor this process's uid {}: its owner could remove or swap other users' slot files; give this service a directory of its own (lease_dir), or have root create this one with mode 1777",
                        path.display(),
                        st.st_uid,
                        euid()
                    ),
                });
            }
        }
        Ok(LeaseDir {
            fd,
            path: path.to_path_buf(),
        })
    }

    /// The path the directory was opened by.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// `lstat` of a name in the directory (never following it). `Ok(None)`: nothing there.
    pub(crate) fn stat(&self, name: &str) -> std::io::Result<Option<libc::stat>> {
        let c = cname(name)?;
        // SAFETY: valid descriptor, C string and out-buffer.
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        let rc = unsafe {
            libc::fstatat(
                self.fd.as_raw_fd(),
                c.as_ptr(),
                &mut st,
                libc::AT_SYMLINK_NOFOLLOW,
            )
        };
        if rc == 0 {
            return Ok(Some(st));
        }
        let e = std::io::Error::last_os_error();
        if e.kind() == IoKind::NotFound {
            Ok(None)
        } else {
            Err(e)
        }
    }

    fn open_raw(
        &self,
        name: &str,
        flags: libc::c_int,
        mode: libc::mode_t,
    ) -> std::io::Result<File> {
        let c = cname(name)?;
        let flags = flags | libc::O_NOFOLLOW | libc::O_CLOEXEC | libc::O_NONBLOCK | libc::O_NOCTTY;
        // SAFETY: valid descriptor and C string; the result is owned at once.
        let fd =
            unsafe { libc::openat(self.fd.as_raw_fd(), c.as_ptr(), flags, mode as libc::c_uint) };
        if fd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        // SAFETY: just opened, owned by nothing else.
        let file = unsafe { File::from_raw_fd(fd) };
        // A regular file ignores O_NONBLOCK; clear it anyway so the descriptor is plain.
        // SAFETY: fcntl on a descriptor we own.
        unsafe {
            let fl = libc::fcntl(fd, libc::F_GETFL);
            if fl >= 0 {
                libc::fcntl(fd, libc::F_SETFL, fl & !libc::O_NONBLOCK);
            }
        }
        Ok(file)
    }

    /// Open a name: to read only, or to read and write (`create`: making it, mode 0644, if
    /// nothing is there). Whatever is there is looked at before it is opened (a FIFO or a
    /// device is never opened) and checked after (the name may have changed in between).
    pub(crate) fn open_name(
        &self,
        name: &str,
        write: bool,
        create: bool,
    ) -> std::io::Result<Opened> {
        match self.stat(name)? {
            Some(st) => {
                if let Some(u) = judge(&st, write) {
                    return Ok(Opened::Unsafe(u));
                }
            }
            None if !create => return Ok(Opened::Absent),
            None => {}
        }
        let mut flags = if write { libc::O_RDWR } else { libc::O_RDONLY };
        if create {
            flags |= libc::O_CREAT;
        }
        let file = match self.open_raw(name, flags, 0o644) {
            Ok(f) => f,
            Err(e) => {
                return match e.raw_os_error() {
                    Some(libc::ELOOP) => Ok(Opened::Unsafe(Unsafe::Symlink)),
                    Some(libc::EISDIR) => Ok(Opened::Unsafe(Unsafe::Directory)),
                    Some(libc::ENXIO) => Ok(Opened::Unsafe(Unsafe::Device)),
                    _ if e.kind() == IoKind::NotFound && !create => Ok(Opened::Absent),
                    _ => Err(e),
                }
            }
        };
        let st = fstat(file.as_raw_fd())?;
        Ok(match judge(&st, write) {
            Some(u) => Opened::Unsafe(u),
            None => Opened::File(file, st),
        })
    }

    /// Create a new file (never an existing name), to write.
    pub(crate) fn create_new(&self, name: &str) -> std::io::Result<File> {
        self.open_raw(name, libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL, 0o644)
    }

    /// Give `from` the name `to` unless `to` exists (`AlreadyExists` then). The file never has
    /// two names where a reader can see them, where the filesystem can rename without
    /// replacing; elsewhere it is linked, then its old name removed.
    pub(crate) fn rename_new(&self, from: &str, to: &str) -> std::io::Result<()> {
        let (f, t) = (cname(from)?, cname(to)?);
        let d = self.fd.as_raw_fd();
        // SAFETY: valid descriptor and C strings.
        let rc = unsafe {
            libc::syscall(
                libc::SYS_renameat2,
                d,
                f.as_ptr(),
                d,
                t.as_ptr(),
                libc::RENAME_NOREPLACE,
            )
        };
        if rc == 0 {
            return Ok(());
        }
        let e = std::io::Error::last_os_error();
        if !matches!(e.raw_os_error(), Some(libc::EINVAL) | Some(libc::ENOSYS)) {
            return Err(e);
        }
        // SAFETY: as above.
        let rc = unsafe { libc::linkat(d, f.as_ptr(), d, t.as_ptr(), 0) };
        let linked = if rc == 0 {
            Ok(())
        } else {
            Err(std::io::Error::last_os_error())
        };
        self.remove(from);
        linked
    }

    /// Give `from` the name `to`, replacing what `to` names (a symbolic link planted there is
    /// replaced itself, never followed; a directory there is an error).
    pub(crate) fn rename_over(&self, from: &str, to: &str) -> std::io::Result<()> {
        let (f, t) = (cname(from)?, cname(to)?);
        let d = self.fd.as_raw_fd();
        // SAFETY: valid descriptor and C strings.
        if unsafe { libc::renameat(d, f.as_ptr(), d, t.as_ptr()) } == 0 {
            Ok(())
        } else {
            Err(std::io::Error::last_os_error())
        }
    }

    /// Remove a name (a file; errors ignored).
    pub(crate) fn remove(&self, name: &str) {
        if let Ok(c) = cname(name) {
            // SAFETY: valid descriptor and C string.
            unsafe { libc::unlinkat(self.fd.as_raw_fd(), c.as_ptr(), 0) };
        }
    }

    /// Make the directory's entries durable.
    pub(crate) fn sync(&self) {
        // SAFETY: fsync on a descriptor we own.
        unsafe { libc::fsync(self.fd.as_raw_fd()) };
    }

    /// A new open of the directory (its own open file description, for the shared `flock`
    /// that keeps tmpfiles away).
    pub(crate) fn reopen(&self) -> Option<File> {
        let dot = cname(".").ok()?;
        // SAFETY: valid descriptor and C string; the result is owned at once.
        let fd = unsafe {
            libc::openat(
                self.fd.as_raw_fd(),
                dot.as_ptr(),
                libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC,
            )
        };
        // SAFETY: just opened, owned by nothing else.
        (fd >= 0).then(|| unsafe { File::from_raw_fd(fd) })
    }

    /// Give the directory this mode (the shared one, just made: 1777 whatever the umask).
    pub(crate) fn chmod(&self, mode: libc::mode_t) {
        // SAFETY: fchmod on a descriptor we own.
        unsafe { libc::fchmod(self.fd.as_raw_fd(), mode) };
    }
}
