//! File leases: a directory of slot files `slot-0000`, `slot-0001`, ..., each claimed with an
//! exclusive non-blocking `flock`. The kernel drops the lock when the holder's last descriptor
//! of the open file closes, which includes the process dying.
//!
//! A slot file is one fixed-size text record (256 bytes, written with one `pwrite` at offset 0
//! and `fsync`ed):
//!
//! ```text
//! polyflake-slot v1
//! slot=7
//! owner=host-a
//! high_water_ms=1737747363021
//! ```

use super::source::{check_common, FileLeaseOptions};
use super::{renew_period, Session, SlotContext, Stop};
use crate::error::{Error, Result};
use std::fs::{File, OpenOptions};
use std::io::{ErrorKind as IoKind, Read};
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::UNIX_EPOCH;

const RECORD_LEN: usize = 256;

fn slot_path(dir: &Path, slot: u32) -> PathBuf {
    dir.join(format!("slot-{slot:04}"))
}

fn store_error(dir: &Path, what: &str, e: std::io::Error) -> Error {
    Error::LeaseStore {
        reason: format!("{what} in lease directory {}: {e}", dir.display()),
    }
}

/// What a slot file says.
#[derive(Debug, Default)]
struct Record {
    owner: Option<String>,
    high_water_ms: Option<i64>,
}

fn parse(text: &str) -> Record {
    let mut r = Record::default();
    for line in text.lines() {
        if let Some((k, v)) = line.split_once('=') {
            match k.trim() {
                "owner" => r.owner = Some(v.trim().to_string()),
                "high_water_ms" => r.high_water_ms = v.trim().parse().ok(),
                _ => {}
            }
        }
    }
    r
}

fn render(slot: u32, owner: &str, high_water_ms: i64) -> Vec<u8> {
    let mut text =
        format!("polyflake-slot v1\nslot={slot}\nowner={owner}\nhigh_water_ms={high_water_ms}\n");
    // Pad to a fixed size so a rewrite replaces the whole record and never needs a truncate.
    while text.len() < RECORD_LEN - 1 {
        text.push(' ');
    }
    text.push('\n');
    text.into_bytes()
}

/// Write R durably: one write of the whole record, then fsync.
fn write_record(file: &File, slot: u32, owner: &str, high_water_ms: i64) -> std::io::Result<()> {
    file.write_all_at(&render(slot, owner, high_water_ms), 0)?;
    file.sync_data()
}

fn try_lock(file: &File) -> std::io::Result<bool> {
    // SAFETY: flock on a descriptor we own.
    let rc = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
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

fn mtime_ms(file: &File) -> Option<i64> {
    let m = file.metadata().ok()?.modified().ok()?;
    Some(m.duration_since(UNIX_EPOCH).ok()?.as_millis() as i64)
}

pub(crate) fn acquire(o: &FileLeaseOptions, ctx: SlotContext) -> Result<Session> {
    let common = check_common(ctx.layout, o.slots, &o.identity, o.reserve_ms)?;
    let dir = o.dir.as_path();
    std::fs::create_dir_all(dir).map_err(|e| store_error(dir, "cannot create the directory", e))?;
    // Slots this identity held before come first.
    let mut order: Vec<u32> = Vec::with_capacity(common.slots as usize);
    let entries = std::fs::read_dir(dir).map_err(|e| store_error(dir, "cannot list", e))?;
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(n) = name
            .to_str()
            .and_then(|n| n.strip_prefix("slot-"))
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        if n >= common.slots {
            continue;
        }
        if let Ok(text) = std::fs::read_to_string(entry.path()) {
            if parse(&text).owner.as_deref() == Some(common.identity.as_str()) {
                order.push(n);
            }
        }
    }
    order.sort_unstable();
    let preferred = order.len();
    let rest: Vec<u32> = (0..common.slots)
        .filter(|n| !order[..preferred].contains(n))
        .collect();
    order.extend(rest);

    for slot in order {
        let path = slot_path(dir, slot);
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .mode(0o644)
            .open(&path)
            .map_err(|e| store_error(dir, &format!("cannot open {}", path.display()), e))?;
        if !try_lock(&file).map_err(|e| store_error(dir, "flock failed", e))? {
            continue;
        }
        // Ours now. Another generator of this process on the system clock may hold this node
        // id through another source: leave the slot and try the next.
        let Some(claim) = ctx.claim(slot) else {
            continue;
        };
        let mut text = String::new();
        (&file)
            .read_to_string(&mut text)
            .map_err(|e| store_error(dir, &format!("cannot read {}", path.display()), e))?;
        let now = ctx.now_ms()?;
        let record = parse(&text);
        let previous = match record.high_water_ms {
            Some(r) => Some(r),
            None if text.trim().is_empty() => None,
            // A record we cannot read: assume the worst a holder could have reached, a full
            // reserve past the last write we can see.
            None => Some(mtime_ms(&file).unwrap_or(now).max(now) + common.reserve_ms),
        };
        let r = previous.unwrap_or(now).max(now) + common.reserve_ms;
        write_record(&file, slot, &common.identity, r)
            .map_err(|e| store_error(dir, &format!("cannot write {}", path.display()), e))?;
        // The directory entry of a new slot file must survive a crash too.
        if let Ok(d) = File::open(dir) {
            let _ = d.sync_all();
        }
        ctx.state.start(previous, r);
        let fd = file.as_raw_fd();
        let stop = Stop::new();
        let thread = spawn_renewal(
            file,
            slot,
            common.identity.clone(),
            common.reserve_ms,
            dir.to_path_buf(),
            ctx,
            stop.clone(),
        )?;
        return Ok(Session {
            slot,
            stop,
            thread: Some(thread),
            fd: Some(fd),
            _claim: claim,
        });
    }
    Err(Error::NoFreeSlot {
        dir_or_prefix: dir.display().to_string(),
        slots: common.slots,
    })
}

fn spawn_renewal(
    file: File,
    slot: u32,
    owner: String,
    reserve_ms: i64,
    dir: PathBuf,
    ctx: SlotContext,
    stop: Arc<Stop>,
) -> Result<std::thread::JoinHandle<()>> {
    let period = renew_period(reserve_ms);
    std::thread::Builder::new()
        .name(format!("polyflake-lease-{slot}"))
        .spawn(move || {
            let state = &ctx.state;
            while !stop.wait(period) {
                let now = match ctx.now_ms() {
                    Ok(n) => n,
                    Err(e) => {
                        state.failed(e.to_string());
                        continue;
                    }
                };
                let r = (now + reserve_ms).max(state.r_ms());
                match write_record(&file, slot, &owner, r) {
                    Ok(()) => {
                        state.publish(r);
                        state.renewed();
                    }
                    Err(e) => state.failed(format!(
                        "cannot extend the high-water mark of slot {slot} in {}: {e}",
                        dir.display()
                    )),
                }
            }
            if let Some(r) = stop.final_r_ms() {
                let _ = write_record(&file, slot, &owner, r);
            }
            // Dropping the file closes the descriptor, which frees the flock.
            drop(file);
        })
        .map_err(|e| Error::LeaseStore {
            reason: format!("cannot start the lease renewal thread: {e}"),
        })
}
