//! What an operator sees of a lease store: each slot's holder, R, how far R is ahead of now,
//! whether its guard is poisoned, and the store's ID space (`polyflake lease inspect`).

use super::dir::{LeaseDir, Opened};
use super::file::{read_space, record_guard, slot_file_name};
use super::lockfile::{mtime_ms, read_head};
use super::record::{self, IdSpace, SlotRecord};
use super::store::slot_number;
use super::{FileLeaseOptions, LeaseKind};
use crate::clock::SystemClock;
use crate::error::{Error, Result};
use std::os::unix::io::AsRawFd;

/// One slot of a store, as [`inspect_file_lease`] /
/// [`inspect_etcd_lease`](crate::inspect_etcd_lease) see it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SlotReport {
    /// The slot (= node id).
    pub slot: u32,
    /// True when a live generator holds it now.
    pub held: bool,
    /// The identity recorded by its last holder (file: `owner=`), if any.
    pub identity: Option<String>,
    /// The last holder's own token (file: `pid/nonce`; etcd: the slot key's value), if any.
    pub holder: Option<String>,
    /// The high-water mark R found, Unix ms (for a missing or damaged record: the guard a
    /// taker would assume, a full reserve past the later of its time and now).
    pub high_water_ms: Option<i64>,
    /// R minus now, in ms: how long a new holder would wait (negative when R has passed).
    pub guard_ms: Option<i64>,
    /// True when that wait exceeds `max_guard_wait_ms`: a new holder takes this slot only when
    /// nothing else is free. Also true for an R past the layout's window (never taken).
    pub poisoned: bool,
    /// The record's state: `complete`, `empty`, `missing`, `incomplete: <why>`, or (file
    /// leases) `unsafe: <what is there>` for a name that is not a regular file with one link
    /// (a symbolic link, a hard link, a FIFO, ...), which is never read nor taken.
    pub record: String,
}

/// A whole store, as an operator sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoreReport {
    /// File or etcd.
    pub kind: LeaseKind,
    /// The directory, or the endpoints and prefix.
    pub store: String,
    /// The store's ID space, if one is recorded.
    pub space: Option<IdSpace>,
    /// The wall clock when the store was read, Unix ms.
    pub now_ms: i64,
    /// Every slot that has a record (or a file), in order.
    pub slots: Vec<SlotReport>,
    /// The store's fence (`polyflake lease fence`), Unix ms: no new holder of any slot issues
    /// at or below it. `None` when the store has none (or it could not be read).
    pub fence_ms: Option<i64>,
    /// Which store answered, for telling a restored or replaced store from the one holders
    /// used: etcd's cluster and member ids; ZooKeeper's database epoch (the high 32 bits of a
    /// zxid). `None` for a file lease.
    pub store_identity: Option<String>,
    /// The highest revision (etcd: the store's revision when it answered) or zxid (ZooKeeper:
    /// the latest change among the lease's znodes) this read saw: after a restore from an older
    /// backup it is lower than before. `None` for a file lease.
    pub revision: Option<i64>,
}

/// Read a file lease directory (`options.dir`) without taking anything: each slot file's
/// record, whether a live holder has it locked, and the recorded ID space.
/// `options.common.reserve_ms` is what a damaged or missing record is assumed to hide (as a taker
/// would assume it), and `options.common.max_guard_wait_ms` what counts as poisoned. Names are
/// read as a generator reads them: never followed, and only from a regular file with one link (anything else is reported
/// as `unsafe: ...` without a byte of it read). Costs the directory's entries.
///
/// ```
/// use polyflake::{inspect_file_lease, FileLeaseOptions, Generator, NodeSource};
/// let dir = std::env::temp_dir().join(format!("polyflake-inspect-doc-{}", std::process::id()));
/// let mut o = FileLeaseOptions::new(&dir);
/// o.common.slots = Some(2);
/// let g = Generator::builder_from(NodeSource::FileLease(o.clone())).build().unwrap();
/// let report = inspect_file_lease(&o).unwrap();
/// assert!(report.slots.iter().any(|s| s.slot == g.node_id() && s.held));
/// # drop(g); std::fs::remove_dir_all(&dir).unwrap();
/// ```
pub fn inspect_file_lease(options: &FileLeaseOptions) -> Result<StoreReport> {
    let dir = options.dir.as_path();
    let (reserve_ms, max_guard_wait_ms) =
        (options.common.reserve_ms, options.common.max_guard_wait_ms);
    let err = |what: &str, e: std::io::Error| Error::LeaseStore {
        reason: format!("{what} in lease directory {}: {e}", dir.display()),
    };
    let now = SystemClock::read_ms();
    let d = LeaseDir::open(dir)?;
    let space = match read_space(&d)? {
        Some(bytes) => Some(
            record::parse_space(&bytes).map_err(|why| Error::LeaseStore {
                reason: format!(
                    "the ID-space record in {} cannot be read: {why}",
                    dir.display()
                ),
            })?,
        ),
        None => None,
    };
    let window_end = space
        .map(|s| s.epoch_ms.saturating_add(s.layout.max_elapsed_ms() as i64))
        .unwrap_or(i64::MAX);
    let mut slots = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(|e| err("cannot list", e))? {
        let entry = entry.map_err(|e| err("cannot list", e))?;
        let Some(slot) = entry
            .file_name()
            .to_str()
            .and_then(|n| slot_number(n, "slot-"))
        else {
            continue;
        };
        let name = slot_file_name(slot);
        if entry.file_name().to_str() != Some(name.as_str()) {
            continue;
        }
        let file = match d
            .open_name(&name, false, false)
            .map_err(|e| err("cannot open", e))?
        {
            Opened::File(f, _) => f,
            Opened::Absent => continue,
            Opened::Unsafe(u) => {
                slots.push(report(
                    slot,
                    false,
                    None,
                    None,
                    None,
                    false,
                    now,
                    max_guard_wait_ms,
                    format!("unsafe: {u}; not read, never taken"),
                ));
                continue;
            }
        };
        // A shared lock succeeds unless a holder has its exclusive one (released at once).
        // SAFETY: flock on a descriptor we own.
        let held = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_SH | libc::LOCK_NB) } != 0;
        let bytes = read_head(&file).map_err(|e| err("cannot read", e))?;
        let mtime = file.metadata().ok().as_ref().and_then(mtime_ms);
        drop(file);
        let rec = record::parse_slot(&bytes, slot);
        let guard = record_guard(&rec, mtime, now, reserve_ms as i64, window_end);
        let (identity, holder, state) = match &rec {
            SlotRecord::Complete { owner, holder, .. } => {
                (Some(owner.clone()), holder.clone(), "complete".to_string())
            }
            SlotRecord::Empty => (None, None, "empty".to_string()),
            SlotRecord::Incomplete(why) => (None, None, format!("incomplete: {why}")),
        };
        let r = match &rec {
            SlotRecord::Complete { high_water_ms, .. } => Some(*high_water_ms),
            _ => guard,
        };
        slots.push(report(
            slot,
            held,
            identity,
            holder,
            r,
            guard.is_none(),
            now,
            max_guard_wait_ms,
            state,
        ));
    }
    slots.sort_by_key(|s| s.slot);
    Ok(StoreReport {
        kind: LeaseKind::File,
        store: dir.display().to_string(),
        space,
        now_ms: now,
        slots,
        fence_ms: super::fence::read_file_fence(&d).ok().flatten(),
        store_identity: None,
        revision: None,
    })
}

#[allow(clippy::too_many_arguments)]
pub(crate) fn report(
    slot: u32,
    held: bool,
    identity: Option<String>,
    holder: Option<String>,
    high_water_ms: Option<i64>,
    past_window: bool,
    now: i64,
    max_guard_wait_ms: u64,
    record: String,
) -> SlotReport {
    let guard_ms = high_water_ms.map(|r| r.saturating_sub(now));
    SlotReport {
        slot,
        held,
        identity,
        holder,
        high_water_ms,
        guard_ms,
        poisoned: past_window || guard_ms.is_some_and(|g| g > max_guard_wait_ms as i64),
        record,
    }
}
