//! File leases: a directory of slot files `slot-0000`, `slot-0001`, ..., each claimed with an
//! exclusive non-blocking `flock`. The kernel drops the lock when the last descriptor of the
//! open file closes, which includes the process dying; a forked child closes its copies at
//! once (the fork handler), and a holder unlocks explicitly when it closes.
//!
//! A slot file is one fixed-size text record (512 bytes, written with one `pwrite` at offset 0
//! and `fdatasync`ed; see `record.rs`):
//!
//! ```text
//! polyflake-slot v1
//! slot=7
//! owner=host-a
//! holder=4242/9f3c2a1b5e6d7c8a
//! high_water_ms=1737747363021
//! sum=...
//! ```
//!
//! A lock is only as good as the name it is on: a lock on a file that has been deleted (a /tmp
//! cleaner, an operator's `rm`, the whole directory removed) protects nothing, because the next
//! process creates a new file under the old name and locks that. So after locking, and before
//! every renewal, the holder checks that the path still names its locked file (same device and
//! inode, a link count above 0) and that the record still names it; otherwise the lease is
//! lost at once. A taker that finds no complete record (a new file, or one deleted and made
//! again) waits a full reserve: whoever held the old file can have issued that far, and no
//! further, because it renews R only after that check.
//!
//! Beside the slot files, `polyflake-space` records the ID space (epoch and layout) the store
//! belongs to, created by the first generator and checked by every later one.

use super::record::{self, IdSpace, SlotRecord};
use super::source::{check_common, FileLeaseOptions};
use super::{guard_note, renew_period, slot_order, LeaseState, Session, SlotContext, Stop};
use crate::error::{Error, Result};
use crate::fork::{self, RegisteredFd};
use crate::forklock::ForkLock;
use std::fs::{File, OpenOptions};
use std::io::{ErrorKind as IoKind, Read};
use std::os::unix::fs::{DirBuilderExt, FileExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::UNIX_EPOCH;

/// The ID-space record's file name.
pub(crate) const SPACE_FILE: &str = "polyflake-space";
/// A slot file is never read past this many bytes (a record is 512).
const READ_LIMIT: u64 = 4096;

pub(crate) fn slot_path(dir: &Path, slot: u32) -> PathBuf {
    dir.join(format!("slot-{}", record::slot_name(slot)))
}

/// The slot number of a directory entry named `slot-NNNN`.
pub(crate) fn slot_number(name: &std::ffi::OsStr) -> Option<u32> {
    record::parse_slot_name(name.to_str()?.strip_prefix("slot-")?)
}

fn store_error(dir: &Path, what: &str, e: impl std::fmt::Display) -> Error {
    Error::LeaseStore {
        reason: format!("{what} in lease directory {}: {e}", dir.display()),
    }
}

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

/// The restart guard a record implies: its R when complete; otherwise a full reserve past the
/// later of the file's mtime and now (the worst a holder we cannot see could have reached).
/// `None` when the record's R lies past the layout's window: the slot cannot be used.
// Modelled in model/file.pml: inline file_take (the record's R, or max(mtime, now) + reserve) (make
// model).
pub(crate) fn guard_of(
    rec: &SlotRecord,
    mtime_ms: Option<i64>,
    now_ms: i64,
    reserve_ms: i64,
    window_end_ms: i64,
) -> Option<i64> {
    match rec {
        SlotRecord::Complete { high_water_ms, .. } => {
            (*high_water_ms <= window_end_ms).then_some(*high_water_ms)
        }
        SlotRecord::Empty | SlotRecord::Incomplete(_) => Some(
            mtime_ms
                .unwrap_or(now_ms)
                .max(now_ms)
                .saturating_add(reserve_ms),
        ),
    }
}

fn lock(file: &File, op: libc::c_int) -> std::io::Result<bool> {
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

/// Open `path` and register the descriptor with the fork handler, with no fork in between.
fn open_registered(
    path: &Path,
    options: &OpenOptions,
) -> std::io::Result<(File, RegisteredFd, u64, u64)> {
    fork::without_fork(|| {
        let file = options.open(path)?;
        let meta = file.metadata()?;
        let reg = fork::register_fd(file.as_raw_fd(), meta.dev(), meta.ino());
        Ok((file, reg, meta.dev(), meta.ino()))
    })
}

/// A held slot file, owned. Shared by the session and its renewal thread.
pub(crate) struct SlotFile {
    // Registrations first: fields drop in order, so a fork handler never sees a registration
    // of a descriptor already closed.
    _reg: RegisteredFd,
    _dir_reg: Option<RegisteredFd>,
    file: File,
    /// A shared lock on the directory, which `systemd-tmpfiles` honours by not cleaning it.
    dir_lock: Option<File>,
    slot: u32,
    path: PathBuf,
    dir: PathBuf,
    dev: u64,
    ino: u64,
    owner: String,
    holder: String,
    reserve_ms: i64,
    /// Serialises record writes (renewal thread, a synchronous renewal, the final write).
    io: ForkLock<()>,
}

impl Drop for SlotFile {
    fn drop(&mut self) {
        // Unlock explicitly: a descriptor another process still has of this open file (a child
        // forked by a program that bypasses the fork handler) must not keep the slot.
        // SAFETY: flock on descriptors we own.
        unsafe {
            libc::flock(self.file.as_raw_fd(), libc::LOCK_UN);
            if let Some(d) = &self.dir_lock {
                libc::flock(d.as_raw_fd(), libc::LOCK_UN);
            }
        }
    }
}

/// Why the slot is not ours any more, or why that could not be checked.
enum Check {
    Lost(String),
    Failed(String),
}

impl SlotFile {
    fn write(&self, high_water_ms: i64) -> std::io::Result<()> {
        let bytes = record::render_slot(self.slot, &self.owner, &self.holder, high_water_ms);
        self.file.write_all_at(&bytes, 0)?;
        self.file.sync_data()
    }

    /// Is the slot still ours: the path names our locked file and the record names us?
    // Modelled in model/file.pml: Holder, the renewal's first half (R_CHECK) (make model).
    fn check_held(&self) -> std::result::Result<(), Check> {
        let path = self.path.display();
        match self.file.metadata() {
            Ok(m) if m.nlink() == 0 => {
                return Err(Check::Lost(format!(
                    "the slot file {path} was deleted under this holder"
                )))
            }
            Ok(_) => {}
            Err(e) => return Err(Check::Failed(format!("cannot stat {path}: {e}"))),
        }
        match std::fs::metadata(&self.path) {
            Ok(m) if (m.dev(), m.ino()) == (self.dev, self.ino) => {}
            Ok(_) => {
                return Err(Check::Lost(format!(
                    "{path} now names another file (the slot file was deleted or replaced)"
                )))
            }
            Err(e) if e.kind() == IoKind::NotFound => {
                return Err(Check::Lost(format!(
                    "{path} no longer exists (the slot file or the lease directory was removed)"
                )))
            }
            Err(e) => return Err(Check::Failed(format!("cannot stat {path}: {e}"))),
        }
        let mut buf = vec![0u8; READ_LIMIT as usize];
        let n = self
            .file
            .read_at(&mut buf, 0)
            .map_err(|e| Check::Failed(format!("cannot read {path}: {e}")))?;
        match record::parse_slot(&buf[..n], self.slot) {
            SlotRecord::Complete {
                holder: Some(h), ..
            } if h == self.holder => Ok(()),
            _ => Err(Check::Lost(format!(
                "the record in {path} no longer names this holder (it was overwritten)"
            ))),
        }
    }

    /// One renewal: check the slot is still ours, then write R = max(now + reserve, R) and
    /// publish it. A slot that is not ours is lost at once; a check or a write that fails
    /// leaves R where it was (the generator issues up to it, then waits for the next try).
    // Modelled in model/file.pml: Holder, the renewal's two halves (check_held, then write and
    // publish) (make model).
    pub(crate) fn renew(&self, state: &LeaseState, now_ms: i64) {
        let _io = self.io.lock();
        if state.is_lost() || state.is_closed() {
            return;
        }
        match self.check_held() {
            Ok(()) => {}
            Err(Check::Lost(reason)) => return state.lose(reason),
            Err(Check::Failed(reason)) => return state.failed(reason),
        }
        let r = now_ms.saturating_add(self.reserve_ms).max(state.r_ms());
        match self.write(r) {
            Ok(()) => {
                state.publish(r);
                state.renewed();
            }
            Err(e) => state.failed(format!(
                "cannot extend the high-water mark of slot {} in {}: {e}",
                self.slot,
                self.dir.display()
            )),
        }
    }

    /// The final write of a clean close (only while the slot is still ours).
    // Modelled in model/file.pml: Holder, the clean close step (make model).
    fn finish(&self, state: &LeaseState, final_r_ms: i64) {
        let _io = self.io.lock();
        if !state.is_lost() && self.check_held().is_ok() {
            let _ = self.write(final_r_ms);
        }
    }
}

/// Create the directory if missing (the default one open to every user of the host, with the
/// sticky bit, like /var/tmp itself).
fn ensure_dir(dir: &Path) -> Result<()> {
    if dir.is_dir() {
        return Ok(());
    }
    let shared = dir == std::path::Path::new("/var/tmp/polyflake-leases");
    let mut b = std::fs::DirBuilder::new();
    b.recursive(true);
    if shared {
        b.mode(0o1777);
    }
    b.create(dir)
        .map_err(|e| store_error(dir, "cannot create the directory", e))?;
    if shared {
        let _ = std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o1777));
    }
    Ok(())
}

/// Check the store's ID space, recording ours if the store has none yet (created only if
/// absent: written whole to a temporary name, then linked into place).
pub(crate) fn check_space(dir: &Path, ours: IdSpace) -> Result<()> {
    let path = dir.join(SPACE_FILE);
    loop {
        match std::fs::read(&path) {
            Ok(bytes) => {
                let theirs = record::parse_space(&bytes).map_err(|why| {
                    store_error(
                        dir,
                        &format!("cannot read the ID-space record {}", path.display()),
                        format!("{why} (remove it only when no generator uses this directory)"),
                    )
                })?;
                if theirs != ours {
                    return Err(Error::IdSpaceMismatch {
                        store: dir.display().to_string(),
                        store_space: theirs.to_string(),
                        our_space: ours.to_string(),
                    });
                }
                return Ok(());
            }
            Err(e) if e.kind() == IoKind::NotFound => {}
            Err(e) => {
                return Err(store_error(
                    dir,
                    &format!("cannot read {}", path.display()),
                    e,
                ))
            }
        }
        let tmp = dir.join(format!(
            ".{SPACE_FILE}.{}.{:x}",
            std::process::id(),
            nonce()
        ));
        let written = (|| -> std::io::Result<()> {
            let f = OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o644)
                .open(&tmp)?;
            f.write_all_at(record::render_space(ours).as_bytes(), 0)?;
            f.sync_all()
        })();
        if let Err(e) = written {
            let _ = std::fs::remove_file(&tmp);
            return Err(store_error(dir, "cannot write the ID-space record", e));
        }
        let linked = std::fs::hard_link(&tmp, &path);
        let _ = std::fs::remove_file(&tmp);
        match linked {
            Ok(()) => {
                if let Ok(d) = File::open(dir) {
                    let _ = d.sync_all();
                }
                return Ok(());
            }
            // Someone else recorded a space first: read theirs.
            Err(e) if e.kind() == IoKind::AlreadyExists => continue,
            Err(e) => return Err(store_error(dir, "cannot record the ID space", e)),
        }
    }
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

/// Every slot's guard as far as can be seen without locking: `(slot, ms until its guard
/// passes (None if it has), whether it is this identity's)`; slots whose R lies past the
/// layout's window are left out.
fn survey(
    ctx: &SlotContext,
    dir: &Path,
    slots: u32,
    identity: &str,
    now_ms: i64,
    reserve_ms: i64,
    window_end_ms: i64,
) -> Vec<(u32, Option<i64>, bool)> {
    let mut seen = vec![None; slots as usize];
    if let Ok(entries) = std::fs::read_dir(dir) {
        for entry in entries.flatten() {
            let Some(n) = slot_number(&entry.file_name()) else {
                continue;
            };
            if n >= slots {
                continue;
            }
            let Ok(f) = File::open(entry.path()) else {
                continue;
            };
            let rec = read_head(&f)
                .map(|b| record::parse_slot(&b, n))
                .unwrap_or(SlotRecord::Incomplete("unreadable".into()));
            let mtime = f
                .metadata()
                .ok()
                .as_ref()
                .and_then(mtime_ms)
                .filter(|_| ctx.system_clock);
            let ours = matches!(&rec, SlotRecord::Complete { owner, .. } if owner == identity);
            seen[n as usize] = Some(
                guard_of(&rec, mtime, now_ms, reserve_ms, window_end_ms)
                    .map(|g| (Some(g - now_ms).filter(|w| *w > 0), ours)),
            );
        }
    }
    (0..slots)
        .filter_map(|n| match seen[n as usize] {
            // No file yet: it will be new, so a full reserve.
            None => Some((n, Some(reserve_ms), false)),
            Some(None) => None,
            Some(Some((wait, ours))) => Some((n, wait, ours)),
        })
        .collect()
}

// Modelled in model/file.pml: inline file_take, called by the two take steps of Holder (make
// model).
pub(crate) fn acquire(o: &FileLeaseOptions, ctx: SlotContext, generation: u64) -> Result<Session> {
    let common = check_common(
        ctx.layout,
        o.slots,
        &o.identity,
        o.reserve_ms,
        o.max_guard_wait_ms,
    )?;
    let dir = o.dir.as_path();
    ensure_dir(dir)?;
    check_space(dir, ctx.space())?;
    let window_end = ctx.window_end_ms();
    let now = ctx.now_ms()?;
    let order = slot_order(
        survey(
            &ctx,
            dir,
            common.slots,
            &common.identity,
            now,
            common.reserve_ms,
            window_end,
        ),
        common.max_guard_wait_ms,
    );
    let holder = format!("{}/{:016x}", std::process::id(), nonce());
    let mut options = OpenOptions::new();
    options
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o644);

    for slot in order {
        let path = slot_path(dir, slot);
        let Some((file, reg, dev, ino)) = take_file(dir, &path, &options)? else {
            continue;
        };
        // Ours now. Another generator of this process on the system clock may hold this node
        // id through another source: leave the slot and try the next.
        let Some(claim) = ctx.claim(slot) else {
            continue;
        };
        let bytes = read_head(&file)
            .map_err(|e| store_error(dir, &format!("cannot read {}", path.display()), e))?;
        let rec = record::parse_slot(&bytes, slot);
        let now = ctx.now_ms()?;
        // The file's time is the system clock's: meaningful only beside the system clock.
        let mtime = file
            .metadata()
            .ok()
            .as_ref()
            .and_then(mtime_ms)
            .filter(|_| ctx.system_clock);
        let Some(guard) = guard_of(&rec, mtime, now, common.reserve_ms, window_end) else {
            // R past the layout's window: this slot cannot be used, the others can.
            continue;
        };
        let r = guard.max(now).saturating_add(common.reserve_ms);
        let dir_lock = File::open(dir).ok();
        let dir_reg = dir_lock.as_ref().and_then(|d| {
            let m = d.metadata().ok()?;
            let _ = lock(d, libc::LOCK_SH);
            Some(fork::register_fd(d.as_raw_fd(), m.dev(), m.ino()))
        });
        let held = Arc::new(SlotFile {
            _reg: reg,
            _dir_reg: dir_reg,
            file,
            dir_lock,
            slot,
            path: path.clone(),
            dir: dir.to_path_buf(),
            dev,
            ino,
            owner: common.identity.clone(),
            holder: holder.clone(),
            reserve_ms: common.reserve_ms,
            io: ForkLock::new(()),
        });
        held.write(r)
            .map_err(|e| store_error(dir, &format!("cannot write {}", path.display()), e))?;
        // The directory entry of a new slot file must survive a crash too.
        if let Ok(d) = File::open(dir) {
            let _ = d.sync_all();
        }
        ctx.state.start(
            guard,
            r,
            guard_note(slot, guard, now, common.max_guard_wait_ms),
        );
        let stop = Stop::new();
        let thread = spawn_renewal(held.clone(), ctx, stop.clone())?;
        return Ok(Session {
            slot,
            generation,
            stop,
            thread: Some(thread),
            file: Some(held),
            claim,
        });
    }
    Err(Error::NoFreeSlot {
        dir_or_prefix: dir.display().to_string(),
        slots: common.slots,
    })
}

/// Open and lock one slot file, making sure the lock is on the file the path names (it may
/// have been deleted or replaced between the open and the lock). `None`: the slot is held by
/// someone else, or this user may not open it.
// Modelled in model/file.pml: inline file_take (the flock on the inode the path names) (make
// model).
fn take_file(
    dir: &Path,
    path: &Path,
    options: &OpenOptions,
) -> Result<Option<(File, RegisteredFd, u64, u64)>> {
    for _ in 0..8 {
        let (file, reg, dev, ino) = match open_registered(path, options) {
            Ok(v) => v,
            // Another user's slot file in a shared directory: not ours to take.
            Err(e) if e.kind() == IoKind::PermissionDenied => return Ok(None),
            Err(e) => {
                return Err(store_error(
                    dir,
                    &format!("cannot open {}", path.display()),
                    e,
                ))
            }
        };
        if !lock(&file, libc::LOCK_EX).map_err(|e| store_error(dir, "flock failed", e))? {
            return Ok(None);
        }
        match std::fs::metadata(path) {
            Ok(m) if (m.dev(), m.ino()) == (dev, ino) => return Ok(Some((file, reg, dev, ino))),
            // Replaced or deleted between the open and the lock: try the name again.
            _ => {
                // SAFETY: flock on a descriptor we own.
                unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_UN) };
            }
        }
    }
    Err(store_error(
        dir,
        &format!("cannot hold {}", path.display()),
        "it keeps being replaced",
    ))
}

fn spawn_renewal(
    held: Arc<SlotFile>,
    ctx: SlotContext,
    stop: Arc<Stop>,
) -> Result<std::thread::JoinHandle<()>> {
    let period = renew_period(held.reserve_ms);
    std::thread::Builder::new()
        .name(format!("polyflake-lease-{}", held.slot))
        .spawn(move || {
            let state = &ctx.state;
            while !stop.wait(period) {
                match ctx.now_ms() {
                    Ok(now) => held.renew(state, now),
                    Err(e) => state.failed(e.to_string()),
                }
            }
            if let Some(r) = stop.final_r_ms() {
                held.finish(state, r);
            }
        })
        .map_err(|e| Error::LeaseStore {
            reason: format!("cannot start the lease renewal thread: {e}"),
        })
}
