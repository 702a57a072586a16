//! The fence: one store-wide floor under every slot's restart guard (`polyflake lease fence`).
//!
//! A store restored from an older backup has forgotten every mark written since the backup, so
//! a new holder of a slot would take the slot's old R and issue IDs that a holder of the lost
//! history already issued. The operator fences the store after restoring it: the fence is a
//! time `now + margin` (a margin above the clock skew the fleet can have plus the reserve) that
//! every taker reads and treats as a mark under every slot, present or not, so no new holder
//! issues at or below it. One value for the whole store, so it costs the same on a 1-bit and a
//! 32-bit node field. It only ever grows.
//!
//! ## Decisions
//!
//! - **One fence per store, not a raised R per slot**: the slots a restored store has no mark for
//!   (taken after the backup) are exactly the dangerous ones, and a mark for every possible slot
//!   costs 2^node_bits. The fence is `polyflake-fence` in a lease directory, `{prefix}/fence` in
//!   etcd and ZooKeeper; etcd reads it in the transaction that takes the slot, ZooKeeper after
//!   creating the slot znode, the file lease before locking a slot file; every take reads it
//!   again after its first write of R and fails when it moved (`remote/protocol.rs`, `file.rs`:
//!   a restore and its fence may fall inside a take). A fence that is there but is not a
//!   number refuses the take (an operator's fence is never ignored). It is written by
//!   compare-and-swap (etcd mod revision, ZooKeeper version) or a rename over the old file.
//! - **The default margin is [`DEFAULT_FENCE_SKEW_MS`] plus the reserve**: the skew between hosts
//!   the fence must cover (a holder of the lost history may have issued up to its own clock plus
//!   the reserve). An operator who knows better passes `--margin-ms`.
//! - **A fence raised on a store that was not restored** costs every holder one re-take (a moved
//!   fence is a rollback: `remote/protocol.rs`), which is why fencing is an operator's command
//!   for after a restore only.
//! - **What no holder's rule can close**: clients that reach a restored store BEFORE its fence (a
//!   live holder of the snapshot and a holder of the lost history each issue in one range until
//!   they next look). So the procedure fences the restored store before any client reaches it
//!   (docs/node-ids.md, "Backup and restore"); the model's environment does so in one step, and
//!   `finding-unfenced-window` keeps the counterexample of the other order. The model's
//!   R_ROLLBACK and R_FENCE are the code; `no-rollback-detection` and `no-fence` stay as mutations
//!   that must fail.

use super::dir::{LeaseDir, Opened};
use super::lockfile::read_head;
use crate::clock::SystemClock;
use crate::error::{Error, Result};

/// The largest difference between two clocks of a fleet that the default fence margin allows
/// for (NTP-synchronised hosts are within milliseconds; a minute covers a host whose NTP has
/// failed for days). The CLI's default margin is this plus the reserve.
pub const DEFAULT_FENCE_SKEW_MS: u64 = 60_000;

/// What fencing a store did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FenceReport {
    /// The directory, or the endpoints and prefix.
    pub store: String,
    /// The fence now in the store, Unix ms.
    pub fence_ms: i64,
    /// The fence that was there before, if any.
    pub previous_ms: Option<i64>,
}

/// The file of a file lease directory that holds the fence (`polyflake lease fence`).
pub(crate) const FENCE_FILE: &str = "polyflake-fence";

/// A file lease directory's fence (`None`: there is none).
pub(crate) fn read_file_fence(dir: &LeaseDir) -> Result<Option<i64>> {
    let path = dir.path().join(FENCE_FILE);
    let store = dir.path().display().to_string();
    match dir.open_name(FENCE_FILE, false, false) {
        Ok(Opened::Absent) => Ok(None),
        Ok(Opened::File(f, _)) => {
            let bytes = read_head(&f).map_err(|e| Error::LeaseStore {
                reason: format!("cannot read {}: {e}", path.display()),
            })?;
            parse(&bytes)
                .map(Some)
                .ok_or_else(|| unreadable(&store, &path.display().to_string()))
        }
        Ok(Opened::Unsafe(u)) => Err(Error::LeaseStore {
            reason: format!(
                "the fence {} is {u}: it was not read (another user may have planted it: remove it, or give this service a directory of its own)",
                path.display()
            ),
        }),
        Err(e) => Err(Error::LeaseStore {
            reason: format!("cannot read {}: {e}", path.display()),
        }),
    }
}

/// The key (etcd) or znode (ZooKeeper) of a remote store's fence.
#[cfg_attr(not(any(feature = "etcd", feature = "zookeeper")), allow(dead_code))]
pub(crate) fn fence_key(prefix: &str) -> String {
    format!("{prefix}/fence")
}

/// A stored fence value: plain decimal ms. Anything else is not a fence a taker can trust.
pub(crate) fn parse(value: &[u8]) -> Option<i64> {
    std::str::from_utf8(value)
        .ok()
        .and_then(|t| super::record::parse_ms(t.trim_end()))
}

/// A fence past the layout's window leaves no millisecond to issue in: refused once, up front,
/// rather than slot by slot.
pub(crate) fn check_window(store: &str, fence: Option<i64>, window_end_ms: i64) -> Result<()> {
    match fence {
        Some(f) if f > window_end_ms => Err(Error::LeaseStore {
            reason: format!(
                "{store}: the fence {f} lies past the layout's last millisecond {window_end_ms}: no slot can issue"
            ),
        }),
        _ => Ok(()),
    }
}

/// The guard note of a slot whose guard the fence raised (`own`: the slot's own guard).
pub(crate) fn note(note: String, own: i64, fence: Option<i64>) -> String {
    match fence {
        Some(f) if f > own => {
            let fenced = format!(
                "the store's fence {f} (`polyflake lease fence`, after a restore) is above the slot's own guard {own}"
            );
            if note.is_empty() {
                fenced
            } else {
                format!("{note}; {fenced}")
            }
        }
        _ => note,
    }
}

/// A guard raised to the fence.
pub(crate) fn floor(guard: i64, fence: Option<i64>) -> i64 {
    fence.map_or(guard, |f| guard.max(f))
}

/// The fence to write: `now + margin`, never below what is there.
pub(crate) fn next(previous: Option<i64>, margin_ms: u64) -> Result<i64> {
    if margin_ms > 365 * 24 * 3_600_000 {
        return Err(Error::InvalidArgument {
            name: "margin_ms",
            reason: format!("{margin_ms} is out of range: at most a year (31536000000 ms)"),
        });
    }
    let now = SystemClock::read_ms();
    Ok(previous.unwrap_or(i64::MIN).max(now + margin_ms as i64))
}

/// A value that is there but is not a fence: refuse, naming it (never a planted file's bytes).
pub(crate) fn unreadable(store: &str, what: &str) -> Error {
    Error::LeaseStore {
        reason: format!(
            "{store}: the fence {what} is not a number of ms: refusing to take a slot (write a new one with `polyflake lease fence`)"
        ),
    }
}
