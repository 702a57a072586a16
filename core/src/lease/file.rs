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
//!
//! Every name is opened relative to the directory's descriptor and never followed (`dir.rs`):
//! a symbolic link, a hard link, a FIFO, a directory or a device at a slot's name is skipped
//! and named in health, never read or written.
//!
//! The cost of taking a slot follows what the directory holds, never the layout's node ids:
//! the files present are surveyed, and the numbers with no file are new slots, tried lazily in
//! their rank (`order.rs`).
//!
//! ## Decisions
//!
//! - **A check that cannot be made** (an I/O error) is a failed renewal: R is not extended. A
//!   directory that disappears is a lost lease, as a deleted slot file is.
//! - **A file's mtime is used only beside the system clock** that stamps it (the guard of a
//!   damaged record on an injected clock does not read it).
//! - **Slot files are never deleted** by a holder: the record is the slot's memory of R (a slot
//!   whose record is gone has none: `lease/mod.rs`). The directory is created if missing; slot
//!   files are mode 0644.
//! - **The take reads the fence again after its first write of R**, as a remote take does
//!   (`remote/protocol.rs`), and fails when it moved (`LeaseStore`, "this take was under way:
//!   make the generator again"). Its first read comes before any slot file is locked, so a
//!   directory restored and fenced in between hands the take the restored record (an R below
//!   what a holder of the lost history issued) and the old fence: the lease model found the
//!   duplicate (`verify/model/trails/no-file-take-fence-read.txt`; `store_restore.rs` fences a
//!   directory under a take). The renewal reads no fence: the flock is the kernel's, which no
//!   restore takes back, and `check_held` sees a file replaced or a record that no longer names
//!   this holder. One more read of `polyflake-fence` per take.

use super::dir::{open_dir, LeaseDir, Opened, Unsafe};
use super::fence::{self, read_file_fence, FenceReport};
use super::host::{self, LeaseMarkTake};
use super::lockfile::{lock, mtime_ms, nonce, read_head, take_file, SlotFd, Take, READ_LIMIT};
use super::options::{Common, FileLeaseOptions};
use super::order::{guard_of, Surveyed};
use super::read_options::LeaseOptions;
use super::record::{self, IdSpace, SlotRecord};
use super::session::{renew_period, Plan, RenewNow, Session, SlotContext, Stop, Taken};
use super::store::{slot_number, store_error};
use super::{guard_note, slot_order};
use crate::error::{Error, Result};
use crate::fork::{self, RegisteredFd};
use crate::forklock::ForkLock;
use crate::window::Window;
use std::fs::File;
use std::io::ErrorKind as IoKind;
use std::os::unix::fs::{FileExt, MetadataExt};
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::Arc;

mod fencing;
pub use fencing::fence_file_lease;

/// The ID-space record's file name.
pub(crate) const SPACE_FILE: &str = "polyflake-space";
pub(crate) fn slot_path(dir: &Path, slot: u32) -> PathBuf {
    dir.join(slot_file_name(slot))
}

/// A slot file's name, `slot-NNNN`.
pub(crate) fn slot_file_name(slot: u32) -> String {
    format!("slot-{}", record::slot_name(slot))
}

/// The most unsafe names listed in a note or an error (the rest are counted): a hostile user
/// can make many.
const UNSAFE_LISTED: usize = 8;

/// Unsafe names found at slot names, for health and for a refusal.
#[derive(Default)]
pub(crate) struct Skipped {
    listed: Vec<String>,
    more: usize,
}

impl Skipped {
    pub(crate) fn add(&mut self, dir: &Path, name: &str, what: &Unsafe) {
        let entry = format!("{} is {what}", dir.join(name).display());
        if self.listed.contains(&entry) {
            return;
        }
        if self.listed.len() < UNSAFE_LISTED {
            self.listed.push(entry);
        } else {
            self.more += 1;
        }
    }

    fn is_empty(&self) -> bool {
        self.listed.is_empty()
    }

    /// `skipped unsafe slot names: A is a symbolic link (never followed); ...`, or empty.
    pub(crate) fn note(&self) -> String {
        if self.listed.is_empty() {
            return String::new();
        }
        let mut n = format!(
            "skipped unsafe slot names (another user may have planted them; nothing there was read or written): {}",
            self.listed.join("; ")
        );
        if self.more > 0 {
            n.push_str(&format!("; and {} more", self.more));
        }
        n
    }
}

/// The restart guard a slot record implies (see `order::guard_of`): its R when complete;
/// otherwise a full reserve past the later of the file's mtime and now. `None` when the
/// record's R lies past the layout's window: the slot cannot be used.
// Modelled in verify/model/file.pml: inline file_lock (the record's R, or max(mtime, now) + reserve)
// (make model).
pub(crate) fn record_guard(
    rec: &SlotRecord,
    mtime_ms: Option<i64>,
    now_ms: i64,
    reserve_ms: i64,
    window_end_ms: i64,
) -> Option<i64> {
    let mark = match rec {
        SlotRecord::Complete { high_water_ms, .. } => Some(*high_water_ms),
        SlotRecord::Empty | SlotRecord::Incomplete(_) => None,
    };
    let unknown_from = mtime_ms.unwrap_or(now_ms).max(now_ms);
    guard_of(mark, unknown_from, reserve_ms, window_end_ms)
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

impl RenewNow for SlotFile {
    fn renew_now(&self, state: &Window, now_ms: i64) {
        self.renew(state, now_ms);
    }
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
    // Modelled in verify/model/file.pml: Holder, the renewal's first half (R_CHECK) (make model).
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
        // The path as configured, its last name (the slot's) not followed.
        match std::fs::symlink_metadata(&self.path) {
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
    // Modelled in verify/model/file.pml: Holder, the renewal's two halves (check_held, then write and
    // publish) (make model).
    pub(crate) fn renew(&self, state: &Window, now_ms: i64) {
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
                // `now_ms` was read before check_held: the cap's reading (R_CAP).
                state.publish(r, now_ms);
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
    // Modelled in verify/model/file.pml: Holder, the clean close step (make model).
    fn finish(&self, state: &Window, final_r_ms: i64) {
        let _io = self.io.lock();
        if !state.is_lost() && self.check_held().is_ok() {
            let _ = self.write(final_r_ms);
        }
    }
}

/// Read the ID-space record's bytes (`None`: there is none), only from a regular file with one
/// link: anything else at its name is refused, naming what it is.
pub(crate) fn read_space(dir: &LeaseDir) -> Result<Option<Vec<u8>>> {
    let path = dir.path().join(SPACE_FILE);
    let d = dir.path();
    let mut tries = 0;
    loop {
        match dir.open_name(SPACE_FILE, false, false) {
            Ok(Opened::File(f, _)) => {
                return read_head(&f)
                    .map(Some)
                    .map_err(|e| store_error(d, &format!("cannot read {}", path.display()), e))
            }
            Ok(Opened::Absent) => return Ok(None),
            // A record being put in place where the filesystem cannot rename without replacing
            // has two names for a moment: look again before calling it a hard link.
            Ok(Opened::Unsafe(Unsafe::HardLinked(2))) if tries < 20 => {
                tries += 1;
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
            Ok(Opened::Unsafe(u)) => {
                return Err(store_error(
                    d,
                    &format!("the ID-space record {} is {u}", path.display()),
                    "it was not read (another user may have planted it: remove it, or give this service a directory of its own)",
                ))
            }
            Err(e) => return Err(store_error(d, &format!("cannot read {}", path.display()), e)),
        }
    }
}

/// Check the store's ID space, recording ours if the store has none yet (created only if
/// absent: written whole to a temporary name, then renamed into place without replacing).
pub(crate) fn check_space(dir: &LeaseDir, ours: IdSpace) -> Result<()> {
    let d = dir.path();
    let path = d.join(SPACE_FILE);
    loop {
        if let Some(bytes) = read_space(dir)? {
            let theirs = record::parse_space(&bytes).map_err(|why| {
                store_error(
                    d,
                    &format!("cannot read the ID-space record {}", path.display()),
                    format!("{why} (remove it only when no generator uses this directory)"),
                )
            })?;
            if theirs != ours {
                return Err(Error::IdSpaceMismatch {
                    store: d.display().to_string(),
                    store_space: theirs.to_string(),
                    our_space: ours.to_string(),
                });
            }
            return Ok(());
        }
        let tmp = format!(".{SPACE_FILE}.{}.{:x}", std::process::id(), nonce());
        let written = (|| -> std::io::Result<()> {
            let f = dir.create_new(&tmp)?;
            f.write_all_at(record::render_space(ours).as_bytes(), 0)?;
            f.sync_all()
        })();
        if let Err(e) = written {
            dir.remove(&tmp);
            return Err(store_error(d, "cannot write the ID-space record", e));
        }
        match dir.rename_new(&tmp, SPACE_FILE) {
            Ok(()) => {
                dir.sync();
                return Ok(());
            }
            // Someone else recorded a space first (or planted something): read that.
            Err(e) if e.kind() == IoKind::AlreadyExists => dir.remove(&tmp),
            Err(e) => {
                dir.remove(&tmp);
                return Err(store_error(d, "cannot record the ID space", e));
            }
        }
    }
}

/// What the directory holds, as far as can be seen without locking: every slot file below
/// `slots`; slots whose R lies past the layout's window and unsafe names are left out of it but
/// listed in `present` (never taken, new or not). Costs the directory's entries.
struct Survey {
    slots: Vec<Surveyed>,
    present: Vec<u32>,
}

fn survey(
    ctx: &SlotContext,
    dir: &LeaseDir,
    common: &Common,
    now_ms: i64,
    skipped: &mut Skipped,
) -> Survey {
    let (slots, identity) = (common.slots, common.identity.as_str());
    let (reserve_ms, window_end_ms) = (common.reserve_ms, ctx.window_end_ms());
    let mut out = Survey {
        slots: Vec::new(),
        present: Vec::new(),
    };
    let Ok(entries) = std::fs::read_dir(dir.path()) else {
        return out;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(n) = name.to_str().and_then(|n| slot_number(n, "slot-")) else {
            continue;
        };
        // Spelled as we spell it: another spelling of the number is not this slot's file.
        let Some(name) = name
            .to_str()
            .filter(|s| n < slots && *s == slot_file_name(n))
        else {
            continue;
        };
        out.present.push(n);
        let f = match dir.open_name(name, false, false) {
            Ok(Opened::File(f, _)) => f,
            Ok(Opened::Unsafe(u)) => {
                skipped.add(dir.path(), name, &u);
                continue;
            }
            _ => continue,
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
        if let Some(g) = record_guard(&rec, mtime, now_ms, reserve_ms, window_end_ms) {
            out.slots.push(Surveyed {
                slot: n,
                wait_ms: Some(g - now_ms).filter(|w| *w > 0),
                ours,
            });
        }
    }
    out
}

// Modelled in verify/model/file.pml: Holder, the take's steps: the fence read, then inline file_lock
// (a slot file locked, its record read), then inline file_write (R written, the fence read
// again: R_TAKEFENCE) (make model).
pub(crate) fn acquire(o: &FileLeaseOptions, ctx: SlotContext, generation: u64) -> Result<Session> {
    let common = o.common(ctx.layout)?;
    let dir = open_dir(o.dir.as_path())?;
    let dpath = o.dir.as_path();
    check_space(&dir, ctx.space())?;
    // The fence (`polyflake lease fence`): a floor under every slot's guard.
    let fence_ms = read_file_fence(&dir)?;
    let window_end = ctx.window_end_ms();
    fence::check_window(&dpath.display().to_string(), fence_ms, window_end)?;
    let now = ctx.now_ms()?;
    let mut skipped = Skipped::default();
    let found = survey(&ctx, &dir, &common, now, &mut skipped);
    let mut order = slot_order(
        found.slots,
        found.present,
        common.slots,
        common.reserve_ms,
        common.max_guard_wait_ms,
    );
    let holder = format!("{}/{:016x}", std::process::id(), nonce());
    let mut cannot_create = None;

    while let Some(slot) = order.next() {
        let name = slot_file_name(slot);
        let path = slot_path(dpath, slot);
        // The clock before the lock: the first limit is one reserve past it (R_CAP).
        let checked = ctx.now_ms()?;
        // Bound in this order, dropped in the reverse: the registration before the descriptor.
        let SlotFd {
            file,
            reg,
            dev,
            ino,
        } = match take_file(&dir, &name)? {
            Take::Taken(fd) => fd,
            Take::Busy => continue,
            Take::Unsafe(u) => {
                skipped.add(dpath, &name, &u);
                continue;
            }
            Take::CannotCreate(e) => {
                // The directory takes no new file from this user: only the slot files that
                // exist are left to try.
                cannot_create = Some(e);
                order.no_new_slots();
                continue;
            }
        };
        // Ours now. Another generator of this process on the system clock may hold this node
        // id through another source: leave the slot and try the next.
        let Some(claim) = ctx.claim(slot) else {
            continue;
        };
        let bytes = read_head(&file)
            .map_err(|e| store_error(dpath, &format!("cannot read {}", path.display()), e))?;
        let rec = record::parse_slot(&bytes, slot);
        let now = ctx.now_ms()?;
        // The file's time is the system clock's: meaningful only beside the system clock.
        let mtime = file
            .metadata()
            .ok()
            .as_ref()
            .and_then(mtime_ms)
            .filter(|_| ctx.system_clock);
        let Some(own_guard) = record_guard(&rec, mtime, now, common.reserve_ms, window_end) else {
            // R past the layout's window: this slot cannot be used, the others can.
            continue;
        };
        let guard = fence::floor(own_guard, fence_ms);
        // The node id's mark on this host: a static holder (or an earlier lease) may have
        // issued up to it. A mark held elsewhere, or far ahead (another epoch's, which this
        // one's IDs would meet in years), leaves the slot to the next.
        let mark = match host::take_mark(&ctx, slot, now) {
            LeaseMarkTake::Busy => continue,
            LeaseMarkTake::Unavailable => None,
            LeaseMarkTake::Taken(m) => Some(m),
        };
        let host = mark.as_ref().and_then(|m| m.floor);
        if host.is_some_and(|h| h - now > common.max_guard_wait_ms) {
            continue;
        }
        let guard = host.map_or(guard, |h| guard.max(h));
        let r = guard.max(now).saturating_add(common.reserve_ms);
        let dir_lock = dir.reopen();
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
            dir: dpath.to_path_buf(),
            dev,
            ino,
            owner: common.identity.clone(),
            holder: holder.clone(),
            reserve_ms: common.reserve_ms,
            io: ForkLock::new(()),
        });
        held.write(r)
            .map_err(|e| store_error(dpath, &format!("cannot write {}", path.display()), e))?;
        // The directory entry of a new slot file must survive a crash too.
        dir.sync();
        // The fence again, after the first write (R_TAKEFENCE, as a remote take): one that moved
        // since the read above means the directory was restored and fenced while this take was
        // under way, and the record read may be the restored one, below what the lost history
        // issued: the guard is void. The slot file goes back unlocked (with our R in it: a
        // higher R only makes its next taker wait longer). Found by the lease model
        // (no-file-take-fence-read).
        let again = read_file_fence(&dir)?;
        if again != fence_ms {
            let shown = |f: Option<i64>| f.map_or_else(|| "none".to_string(), |f| f.to_string());
            return Err(Error::LeaseStore {
                reason: format!(
                    "the lease directory {} went back in time: its fence is {} and was {} when this take began (`polyflake lease fence`, after a restore from an older backup); this take was under way: make the generator again",
                    dpath.display(),
                    shown(again),
                    shown(fence_ms)
                ),
            });
        }
        // The host's copy of R, durable before the first ID (without it, the lease runs as one
        // that keeps no mark: the store's R still guards its own successors).
        let mark = mark
            .filter(|m| {
                crate::window::MarkMirror::mirror(&*m.file, r.min(checked + common.reserve_ms))
                    .is_ok()
            })
            .map(|m| m.file as Arc<dyn crate::window::MarkMirror>);
        let note = [
            fence::note(
                guard_note(slot, guard, now, common.max_guard_wait_ms),
                own_guard,
                fence_ms,
            ),
            skipped.note(),
        ]
        .into_iter()
        .filter(|n| !n.is_empty())
        .collect::<Vec<_>>()
        .join("; ");
        let plan = Plan {
            slot,
            generation,
            thread_name: format!("polyflake-lease-{slot}"),
            file: Some(held.clone()),
        };
        let taken = Taken {
            held,
            claim,
            guard_ms: guard,
            r_ms: r,
            checked_ms: checked,
            reserve_ms: common.reserve_ms,
            guard_note: note,
            mark,
            spent_ms: ctx.spent(now),
        };
        return Session::start(plan, taken, ctx, renew).map_err(|e| Error::LeaseStore {
            reason: format!("cannot start the lease renewal thread: {e}"),
        });
    }
    if let Some(e) = cannot_create {
        return Err(store_error(
            dpath,
            &format!(
                "no free slot of {} and no new slot file can be made",
                common.slots
            ),
            e,
        ));
    }
    if !skipped.is_empty() {
        return Err(Error::LeaseStore {
            reason: format!(
                "no free slot in lease directory {} ({} slots): every slot is held or unsafe; {}",
                dpath.display(),
                common.slots,
                skipped.note()
            ),
        });
    }
    Err(Error::NoFreeSlot {
        dir_or_prefix: dpath.display().to_string(),
        slots: common.slots,
    })
}

/// The renewal thread of a file lease: a renewal every period until stopped, then the final
/// write of a clean close.
fn renew(held: Arc<SlotFile>, ctx: SlotContext, stop: Arc<Stop>) {
    let period = renew_period(held.reserve_ms);
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
}
