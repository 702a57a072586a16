//! The restart guard of a fixed node id (static, environment, hostname, IPv4): a mark per node
//! id, layout and scope on the host, kept as a lease keeps its R, so that whoever holds the node
//! id next on this host (a restart, a forked child after its parent exits, a second copy of the
//! library in one process, a new generator in the same process) starts above everything its
//! predecessor could have issued, a monotonic lead included, whatever the clock did in between.
//!
//! The take, in order (each step after the host-wide claim, `registry::claim`, which keeps every
//! other holder of the node id on this host out while this one lives):
//!
//! 1. open the state directory under the lease directory's rules (`dir.rs`: no link followed,
//!    only this user's own files written or trusted) and read its fence (`polyflake lease
//!    fence` after a restore raises every guard, marks included);
//! 2. open and `flock` the mark `node-<T>-<N>-<S>-<NNNN>[-<scope>]` (a lock another process holds
//!    is a holder the claim cannot see: one in another network namespace sharing the directory);
//! 3. read the clock (after the claim and the lock: the reading that decides the handover);
//! 4. read the mark (`mark.rs`): after a clean close, the last ID's state to continue after;
//!    after a crash, R; a damaged mark, one reserve past the later of its time and now; an empty
//!    or new one, nothing (a holder writes R before its first ID);
//! 5. write our R = max(guard, now) + reserve, durably, before the first ID;
//! 6. renew every reserve / 5 in a background thread, as a file lease does.
//!
//! Why a mark and not only the claim: the claim ends with its holder, so on its own it tells a
//! successor nothing of what was issued (a clock stepped back 200 ms between two holders repeats
//! every ID of those 200 ms). Why in the lease directory by default: one place on the host with
//! hostile-ground rules already, a fence an operator already knows, and `lease inspect` beside
//! it. Why a mark deleted under a live holder is made again, not a reason to stop: unlike a
//! lease's slot file, the mark is memory, not the lock (the claim is); the holder still knows
//! everything it issued.
//!
//! Where the directory cannot be used (a read-only container, another user's file at the
//! mark's name), [`RestartGuard::Auto`] issues without a mark (the clock read after the claim
//! still keeps a successor out of its predecessor's last millisecond), says so once on stderr
//! and in health; [`RestartGuard::Required`] refuses to build.
//!
//! ## Decisions
//!
//! - **Why a mark**, measured: with the claim alone, a restart with the clock stepped back
//!   200 ms repeated 745,472 IDs, and a monotonic holder 100 ms ahead handed its whole lead to
//!   the next process.
//! - **The reading that decides a handover is taken after the claim** (step 3): taken before,
//!   15 to 31 of 2,000 to 3,000 handovers repeated IDs.
//! - **Strict calls wait for the guard rather than refuse** (up to
//!   [`DEFAULT_MAX_RESTART_WAIT_MS`] by default, interruptible), because a static node id's users
//!   never had to wait for one; leases keep refusing (`LeaseNotReady`, `wait_ready`).

mod mark;

use super::dir::{open_dir, LeaseDir};
use super::fence::read_file_fence;
use super::lockfile::{mtime_ms, nonce, read_head, take_file, SlotFd, Take};
#[cfg(doc)]
use super::restart_guard::DEFAULT_MAX_RESTART_WAIT_MS;
use super::restart_guard::{Resolved, RestartGuard, STATE_DIR_ENV};
use super::session::{renew_period, Plan, RenewNow, Session, SlotContext, Stop, Taken};
use crate::error::{Error, Result};
use crate::forklock::ForkLock;
use crate::registry::Claim;
use crate::window::Window;
use mark::{Mark, MarkKey, MarkRecord, Succession};
use std::os::unix::fs::{FileExt, MetadataExt};
use std::path::PathBuf;
use std::sync::Arc;

/// A mark taken: the session renewing it, where the generator starts, and the guard.
pub(crate) struct Held {
    pub session: Session,
    /// The state word to continue after (-1: none).
    pub start_state: i64,
    /// The mark's path, for health.
    pub store: String,
}

/// What taking a mark came to.
pub(crate) enum Outcome {
    Held(Held),
    /// The directory cannot keep a mark: why, in words (auto mode issues without one), and the
    /// claim back.
    Unavailable(String, Claim),
}

/// Take the mark of `node_id` (claimed by `claim`) in `cfg.dir`.
// Modelled in verify/model/host.pml: StaticHolder, the take (R_MARK, R_AFTERCLAIM) (make model).
pub(crate) fn hold(
    node_id: u32,
    cfg: &Resolved,
    ctx: SlotContext,
    generation: u64,
    claim: Claim,
) -> Result<Outcome> {
    let unavailable = |why: String, claim: Claim| Ok(Outcome::Unavailable(why, claim));
    let in_state_dir = |e: Error| {
        format!(
            "the state directory {} cannot keep it: {e}",
            cfg.dir.display()
        )
    };
    let dir = match open_dir(&cfg.dir) {
        Ok(d) => d,
        Err(e) => return unavailable(in_state_dir(e), claim),
    };
    let fence = match read_file_fence(&dir) {
        Ok(f) => f,
        Err(e) => return unavailable(in_state_dir(e), claim),
    };
    let key = MarkKey {
        node_id,
        layout: ctx.layout,
        scope: claim.scope().to_string(),
    };
    let name = key.file_name();
    let path = cfg.dir.join(&name);
    let fd = match take_file(&dir, &name)? {
        Take::Taken(fd) => fd,
        Take::Busy => {
            return match dir.stat(&name) {
                Ok(Some(st)) if st.st_uid != super::dir::euid() => unavailable(format!(
                    "the mark {} belongs to uid {}, not this process's uid {}: give this service a state directory of its own ({STATE_DIR_ENV})",
                    path.display(),
                    st.st_uid,
                    super::dir::euid()
                ), claim),
                _ => Err(Error::NodeIdInUse {
                    node_id,
                    holder_pid: Some(0),
                    holder: format!(
                        "a process that holds its mark {} but not its host-wide claim here (one in another network namespace sharing the state directory)",
                        path.display()
                    ),
                }),
            }
        }
        Take::Unsafe(u) => {
            return unavailable(format!(
                "{} is {u}: it was not read or written (another user may have planted it; give this service a state directory of its own, {STATE_DIR_ENV})",
                path.display()
            ), claim)
        }
        Take::CannotCreate(e) => {
            return unavailable(format!(
                "cannot make the mark {}: {e}",
                path.display()
            ), claim)
        }
    };
    let bytes = read_head(&fd.file).map_err(|e| Error::LeaseStore {
        reason: format!("cannot read the mark {}: {e}", path.display()),
    })?;
    let record = mark::parse(&bytes, &key);
    let mtime = fd.file.metadata().ok().as_ref().and_then(mtime_ms);
    // After the claim and the lock: a predecessor that let go a moment ago issued nothing after
    // this reading is taken.
    let now = ctx.now_ms()?;
    let seq_bits = ctx.layout.sequence_bits();
    let epoch = ctx.epoch_ms;
    let (succ, mut note) = match &record {
        MarkRecord::Complete(m) => (mark::succession(m, seq_bits), String::new()),
        MarkRecord::Empty => (
            Succession {
                floor: -1,
                start: -1,
            },
            String::new(),
        ),
        MarkRecord::Incomplete(why) => {
            let from = mtime.unwrap_or(now).max(now);
            (
                Succession {
                    floor: from.saturating_add(cfg.reserve_ms).saturating_sub(epoch),
                    start: -1,
                },
                format!(
                    "the mark {} is damaged ({why}): guarded one reserve_ms past its last write",
                    path.display()
                ),
            )
        }
    };
    let own_guard = succ.floor.saturating_add(epoch);
    if let MarkRecord::Complete(m) = &record {
        // Another epoch with this node id and layout: its IDs' bits meet ours once our elapsed
        // time reaches theirs. Not a wait (it can be years): a conflict of ID spaces.
        if m.epoch_ms != epoch && own_guard - now > cfg.max_wait_ms as i64 {
            return Err(Error::IdSpaceMismatch {
                store: format!(
                    "{} (node id {node_id} on this host: its IDs up to {} ms of elapsed time would be issued again {} days from now)",
                    path.display(),
                    m.high_water_elapsed(),
                    (own_guard - now) / 86_400_000
                ),
                store_space: format!("layout {} epoch {} ms", ctx.layout, m.epoch_ms),
                our_space: format!("layout {} epoch {epoch} ms", ctx.layout),
            });
        }
        if own_guard >= now {
            note = format!(
                "node id {node_id}'s previous holder on this host may have issued IDs up to {own_guard} (its mark {}: {})",
                path.display(),
                if m.last_state >= 0 {
                    "its last ID, closed cleanly"
                } else {
                    "its R, kept one reserve ahead: it was killed, or the clock stepped back since"
                }
            );
        }
    }
    let guard = super::fence::floor(own_guard, fence);
    note = super::fence::note(note, own_guard, fence);
    let window_end = ctx.window_end_ms();
    if guard >= window_end {
        return Err(Error::LeaseStore {
            reason: format!(
                "the mark {} (or the directory's fence) lies at {guard}, at or past the layout's last millisecond {window_end}: node id {node_id} cannot issue in this layout on this host again",
                path.display()
            ),
        });
    }
    let start_ms = if succ.start >= 0 {
        epoch + (succ.start >> seq_bits)
    } else {
        i64::MIN
    };
    let r = guard
        .max(now)
        .max(start_ms)
        .saturating_add(cfg.reserve_ms)
        .min(window_end);
    let holder = format!("{}/{:016x}", std::process::id(), nonce());
    let held = Arc::new(MarkFile {
        dir,
        key,
        name,
        path: path.clone(),
        holder,
        epoch_ms: epoch,
        reserve_ms: cfg.reserve_ms,
        window_end_ms: window_end,
        lease_floor: crate::window::NONE,
        fd: ForkLock::new(fd),
    });
    held.write_now(r, -1).map_err(|e| Error::LeaseStore {
        reason: format!("cannot write the mark {}: {e}", path.display()),
    })?;
    // A new mark's directory entry must survive a crash too.
    held.dir.sync();
    let file = held.clone();
    let plan = Plan {
        slot: node_id,
        generation,
        thread_name: format!("polyflake-mark-{node_id}"),
        file: Some(held.clone()),
    };
    let taken = Taken {
        held,
        claim: Some(claim),
        guard_ms: guard,
        r_ms: r,
        checked_ms: now,
        reserve_ms: cfg.reserve_ms,
        guard_note: note,
        // The mark is this holder's own; its start state is the builder's (which counts the
        // reading after the claim as spent).
        mark: None,
        spent_ms: None,
    };
    let window = ctx.state.clone();
    let session = Session::start(plan, taken, ctx, renew).map_err(|e| Error::LeaseStore {
        reason: format!("cannot start the restart guard's renewal thread: {e}"),
    })?;
    at_exit::register(&window, &file, guard, epoch, seq_bits, generation);
    Ok(Outcome::Held(Held {
        session,
        start_state: succ.start,
        store: path.display().to_string(),
    }))
}

/// A held mark, shared by the session and its renewal thread.
pub(crate) struct MarkFile {
    dir: LeaseDir,
    key: MarkKey,
    name: String,
    path: PathBuf,
    holder: String,
    epoch_ms: i64,
    reserve_ms: i64,
    window_end_ms: i64,
    /// A lease's copy: the floor the mark put under its take (never written lower), else `NONE`.
    lease_floor: i64,
    /// The locked mark (replaced when it is made again); also serialises the writes.
    fd: ForkLock<SlotFd>,
}

impl RenewNow for MarkFile {
    fn renew_now(&self, state: &Window, now_ms: i64) {
        self.renew(state, now_ms);
    }
}

impl Drop for MarkFile {
    fn drop(&mut self) {
        // Unlock explicitly, as a slot file does (a descriptor another process still has must
        // not keep the mark).
        // SAFETY: flock on a descriptor we own.
        unsafe {
            libc::flock(
                std::os::unix::io::AsRawFd::as_raw_fd(&self.fd.lock().file),
                libc::LOCK_UN,
            )
        };
    }
}

/// Why the mark needs attention.
enum Check {
    /// The name no longer names our locked file (deleted or replaced): make it again.
    Gone(String),
    /// It could not be looked at.
    Failed(String),
}

impl MarkFile {
    fn write(&self, fd: &SlotFd, high_water_ms: i64, last_state: i64) -> std::io::Result<()> {
        let m = Mark {
            epoch_ms: self.epoch_ms,
            holder: self.holder.clone(),
            high_water_ms,
            last_state,
        };
        fd.file.write_all_at(&mark::render(&self.key, &m), 0)?;
        fd.file.sync_data()
    }

    fn write_now(&self, high_water_ms: i64, last_state: i64) -> std::io::Result<()> {
        let fd = self.fd.lock();
        self.write(&fd, high_water_ms, last_state)
    }

    /// Does the name still name our locked file?
    fn check(&self, fd: &SlotFd) -> std::result::Result<(), Check> {
        let path = self.path.display();
        match fd.file.metadata() {
            Ok(m) if m.nlink() == 0 => {
                return Err(Check::Gone(format!(
                    "the mark {path} was deleted under this holder"
                )))
            }
            Ok(_) => {}
            Err(e) => return Err(Check::Failed(format!("cannot stat {path}: {e}"))),
        }
        match self.dir.stat(&self.name) {
            Ok(Some(st)) if (st.st_dev, st.st_ino) == (fd.dev, fd.ino) => Ok(()),
            Ok(Some(_)) => Err(Check::Gone(format!(
                "{path} now names another file (the mark was replaced)"
            ))),
            Ok(None) => Err(Check::Gone(format!("{path} no longer exists"))),
            Err(e) => Err(Check::Failed(format!("cannot stat {path}: {e}"))),
        }
    }

    /// Make the mark again at its name and lock it: `Err` with why when another holder has it
    /// (the lease is lost then) or it cannot be made (the renewal failed).
    fn remake(&self) -> std::result::Result<SlotFd, (bool, String)> {
        let path = self.path.display();
        match take_file(&self.dir, &self.name) {
            Ok(Take::Taken(fd)) => Ok(fd),
            Ok(Take::Busy) => Err((
                true,
                format!("another holder locked a new mark at {path} while this one lived"),
            )),
            Ok(Take::Unsafe(u)) => Err((false, format!("{path} is {u}: not written"))),
            Ok(Take::CannotCreate(e)) => Err((false, format!("cannot make {path} again: {e}"))),
            Err(e) => Err((false, e.to_string())),
        }
    }

    /// One renewal: see that the mark is still ours (making it again if it was deleted or
    /// replaced), then write R = max(now + reserve, R) (never past the layout's window) durably
    /// and publish it.
    // Modelled in verify/model/host.pml: StaticHolder, the renewal (R_BEFORE) (make model).
    fn renew(&self, state: &Window, now_ms: i64) {
        let mut fd = self.fd.lock();
        if state.is_lost() || state.is_closed() {
            return;
        }
        match self.check(&fd) {
            Ok(()) => {}
            Err(Check::Failed(why)) => return state.failed(why),
            Err(Check::Gone(why)) => match self.remake() {
                Ok(new) => {
                    *fd = new;
                    state.failed(format!("{why}: made again"));
                }
                Err((true, lost)) => return state.lose(format!("{why}; {lost}")),
                Err((false, failed)) => return state.failed(format!("{why}; {failed}")),
            },
        }
        let r = now_ms
            .saturating_add(self.reserve_ms)
            .min(self.window_end_ms)
            .max(state.r_ms());
        match self.write(&fd, r, -1) {
            Ok(()) => {
                state.publish(r, now_ms);
                state.renewed();
            }
            Err(e) => state.failed(format!(
                "cannot extend the mark {}: {e}",
                self.path.display()
            )),
        }
    }

    /// The write of a process exiting with this mark open (`at_exit`): as a clean close's.
    fn exit_write(&self, r: i64, last_state: i64) {
        let fd = self.fd.lock();
        if self.check(&fd).is_ok() {
            let _ = self.write(&fd, r, last_state);
        }
    }

    /// The final write of a clean close: R at the last issued millisecond (or the guard) and the
    /// last ID's state word, so a successor continues after it. Written even when the mark was
    /// deleted meanwhile (made again), since the successor goes by it.
    fn finish(&self, state: &Window, final_r_ms: i64, last_state: i64) {
        let mut fd = self.fd.lock();
        if state.is_lost() {
            return;
        }
        if let Err(Check::Gone(_)) = self.check(&fd) {
            match self.remake() {
                Ok(new) => *fd = new,
                Err(_) => return,
            }
        }
        let _ = self.write(&fd, final_r_ms, last_state);
    }
}

/// A process that exits (`exit()`, a return from `main`, `System.exit`, `sys.exit`, Node's
/// end) with a generator still open leaves its mark as a clean close would, not as a crash:
/// each live mark of this process has its window shut and its state word taken (so no call in
/// flight issues after), then R comes down to the last issued millisecond (never below the
/// guard) with that ID's state word to continue after. A successor then starts at once instead
/// of one reserve later. A kill, a crash or Go's `os.Exit` (which skips the C library's exit
/// handlers) runs no handler: R stays, as it should.
mod at_exit {
    use super::MarkFile;
    use crate::sync::Ordering;
    use crate::window::{Window, CLOSED_STATE};
    use std::sync::{Arc, Mutex, Once, Weak};

    struct Live {
        window: Weak<Window>,
        file: Weak<MarkFile>,
        guard_ms: i64,
        epoch_ms: i64,
        seq_bits: u32,
        generation: u64,
    }

    static LIVE: Mutex<Vec<Live>> = Mutex::new(Vec::new());
    static REGISTER: Once = Once::new();

    pub(super) fn register(
        window: &Arc<Window>,
        file: &Arc<MarkFile>,
        guard_ms: i64,
        epoch_ms: i64,
        seq_bits: u32,
        generation: u64,
    ) {
        REGISTER.call_once(|| {
            // SAFETY: registering a plain extern "C" fn with no arguments.
            unsafe { libc::atexit(on_exit) };
        });
        let mut live = LIVE.lock().unwrap_or_else(|p| p.into_inner());
        live.retain(|l| l.window.strong_count() > 0 && l.file.strong_count() > 0);
        live.push(Live {
            window: Arc::downgrade(window),
            file: Arc::downgrade(file),
            guard_ms,
            epoch_ms,
            seq_bits,
            generation,
        });
    }

    // Modelled in verify/model/host.pml: StaticHolder, the exit step (R_EXIT) (make model).
    extern "C" fn on_exit() {
        // A lock held by a thread that no longer runs (a forked child): leave the marks alone.
        let Ok(live) = LIVE.try_lock() else {
            return;
        };
        let generation = crate::fork::current_fork_generation();
        for l in live.iter().filter(|l| l.generation == generation) {
            let (Some(window), Some(file)) = (l.window.upgrade(), l.file.upgrade()) else {
                continue;
            };
            if window.is_lost() {
                continue;
            }
            // As `Generator::release`: shut the window, then take the state word.
            window.close();
            let p = window.state.0.swap(CLOSED_STATE, Ordering::AcqRel);
            if p == CLOSED_STATE {
                continue; // closed already: its own close wrote the mark
            }
            let last_ms = (p >= 0).then(|| l.epoch_ms + (p >> l.seq_bits));
            let r = last_ms
                .unwrap_or(i64::MIN)
                .max(l.guard_ms)
                .min(window.r_ms());
            file.exit_write(r, p);
        }
    }
}

/// The mark's renewal thread: a renewal every period until stopped, then the final write of a
/// clean close.
fn renew(held: Arc<MarkFile>, ctx: SlotContext, stop: Arc<Stop>) {
    let period = renew_period(held.reserve_ms);
    let state = &ctx.state;
    while !stop.wait(period) {
        match ctx.now_ms() {
            Ok(now) => held.renew(state, now),
            Err(e) => state.failed(e.to_string()),
        }
    }
    if let Some(r) = stop.final_r_ms() {
        held.finish(state, r, stop.final_state());
    }
}

/// A lease's hold on its node id's mark on the host: the holder of a slot keeps the mark as a
/// static holder does, so that whoever takes the node id next on this host, static or lease,
/// starts above what the lease could have issued, even after a kill (the lease's own store keeps
/// its R too; the mark is the host's copy). Found by the host model: a lease that only read the
/// mark at its take and wrote it at a clean close left a static successor nothing to go by after
/// a kill (`finding-lease-killed-*`).
pub(crate) struct LeaseMark {
    /// The mark, locked (written at the take, at every renewal, at the close).
    pub file: Arc<MarkFile>,
    /// The floor the mark puts under the lease's guard (Unix ms in the lease's epoch).
    pub floor: Option<i64>,
}

/// What a lease's take found at its node id's mark.
pub(crate) enum LeaseMarkTake {
    Taken(LeaseMark),
    /// Another process holds the mark (one the claim cannot see: another network namespace
    /// sharing the state directory): the slot is left to the next.
    Busy,
    /// No mark can be kept here (the restart guard off, the directory unusable): the lease runs
    /// without one.
    Unavailable,
}

/// The node id's mark on this host, taken after the claim by a lease that holds the slot: the
/// floor it puts under the lease's guard (what a static holder of the same node id, or an
/// earlier lease, issued before it let go), kept by the lease from now on. None on an injected
/// clock, or with the restart guard's settings absent.
pub(crate) fn take_mark(ctx: &SlotContext, slot: u32, now_ms: i64) -> LeaseMarkTake {
    match (&ctx.host, ctx.system_clock) {
        (Some(cfg), true) => take_for_lease(cfg, ctx, slot, &ctx.scope, now_ms),
        _ => LeaseMarkTake::Unavailable,
    }
}

/// Take the mark of a lease's node id, after its claim, and read the floor it puts under the
/// lease's guard (the same rules as a static taker's, except that a lease cannot continue a
/// state word: a clean close's last millisecond is the floor).
// Modelled in verify/model/host.pml: LeaseTaker, the mark's take (R_CROSS, LEASE_MARK) (make model).
fn take_for_lease(
    cfg: &Resolved,
    ctx: &SlotContext,
    node_id: u32,
    scope: &str,
    now: i64,
) -> LeaseMarkTake {
    if cfg.mode == RestartGuard::Off {
        return LeaseMarkTake::Unavailable;
    }
    let Ok(dir) = open_dir(&cfg.dir) else {
        return LeaseMarkTake::Unavailable;
    };
    let key = MarkKey {
        node_id,
        layout: ctx.layout,
        scope: scope.to_string(),
    };
    let name = key.file_name();
    let fd = match take_file(&dir, &name) {
        Ok(Take::Taken(fd)) => fd,
        Ok(Take::Busy) => {
            return match dir.stat(&name) {
                Ok(Some(st)) if st.st_uid != super::dir::euid() => LeaseMarkTake::Unavailable,
                _ => LeaseMarkTake::Busy,
            }
        }
        _ => return LeaseMarkTake::Unavailable,
    };
    let bytes = read_head(&fd.file).unwrap_or_default();
    let mtime = fd.file.metadata().ok().as_ref().and_then(mtime_ms);
    let s = ctx.layout.sequence_bits();
    let floor = match mark::parse(&bytes, &key) {
        MarkRecord::Complete(m) => {
            let succ = mark::succession(&m, s);
            let floor = if succ.start >= 0 {
                succ.floor.max(succ.start >> s)
            } else {
                succ.floor
            };
            Some(floor.saturating_add(ctx.epoch_ms))
        }
        MarkRecord::Empty => None,
        MarkRecord::Incomplete(_) => {
            Some(mtime.unwrap_or(now).max(now).saturating_add(cfg.reserve_ms))
        }
    };
    let path = cfg.dir.join(&name);
    let file = Arc::new(MarkFile {
        dir,
        key,
        name,
        path,
        holder: format!("{}/{:016x}", std::process::id(), nonce()),
        epoch_ms: ctx.epoch_ms,
        reserve_ms: cfg.reserve_ms,
        window_end_ms: ctx.window_end_ms(),
        lease_floor: floor.unwrap_or(crate::window::NONE),
        fd: ForkLock::new(fd),
    });
    LeaseMarkTake::Taken(LeaseMark { file, floor })
}

impl crate::window::MarkMirror for MarkFile {
    /// Keep the mark at what a lease may issue up to now (its window's limit: R capped one
    /// reserve past its last check), never below the floor the mark put under its take, durably,
    /// before the lease's window opens to it; state -1 (a holder that lives). Made again if it
    /// was deleted. Not R itself: a lease's guard may hold its store's history (a fence after a
    /// restore, a slot's previous holder on another host), which the host's mark has no part in;
    /// what this host's holders issued is all the mark carries.
    fn mirror(&self, limit_ms: i64) -> std::result::Result<(), String> {
        let mut fd = self.fd.lock();
        if let Err(Check::Gone(why)) = self.check(&fd) {
            match self.remake() {
                Ok(new) => *fd = new,
                Err((_, failed)) => return Err(format!("{why}; {failed}")),
            }
        }
        let r = limit_ms.max(self.lease_floor).min(self.window_end_ms);
        self.write(&fd, r, -1).map_err(|e| {
            format!(
                "cannot write the node id's mark {}: {e}",
                self.path.display()
            )
        })
    }

    /// A lease's clean close: R at its last issued millisecond (at least the floor its take
    /// found; with nothing issued and none found, the time of closing), and the last ID's state.
    fn finish_lease(&self, last_ms: Option<i64>, last_state: i64, now_ms: i64) {
        let mut fd = self.fd.lock();
        if let Err(Check::Gone(_)) = self.check(&fd) {
            match self.remake() {
                Ok(new) => *fd = new,
                Err(_) => return,
            }
        }
        let r = match (last_ms, self.lease_floor) {
            (None, crate::window::NONE) => now_ms,
            (last, floor) => last.unwrap_or(floor).max(floor),
        };
        let _ = self.write(&fd, r, last_state);
    }
}
