//! A file lease directory's fence (`polyflake lease fence`): one file, `polyflake-fence`, every
//! taker reads as a floor under every slot's guard; raised, never lowered.

use super::*;
use crate::lease::fence::FENCE_FILE;

/// Raise a file lease directory's fence to `now + margin_ms` (never lowering it): written to a
/// new file, made durable, then renamed over the old one, so a taker reads the old fence or
/// the new one, never a torn one.
///
/// ```
/// use polyflake::{fence_file_lease, FileLeaseOptions, Generator, NodeSource, ErrorKind};
/// let dir = std::env::temp_dir().join(format!("polyflake-fence-doc-{}", std::process::id()));
/// let o = FileLeaseOptions::new(&dir);
/// let fence = fence_file_lease(&o, 60_000).unwrap();
/// // A new holder waits until its clock passes the fence.
/// let g = Generator::builder_from(NodeSource::FileLease(o)).build().unwrap();
/// assert_eq!(g.next_id().unwrap_err().kind(), ErrorKind::LeaseNotReady);
/// assert!(g.health().lease.unwrap().guard_until_ms.unwrap() >= fence.fence_ms);
/// # drop(g); std::fs::remove_dir_all(&dir).unwrap();
/// ```
pub fn fence_file_lease(options: &FileLeaseOptions, margin_ms: u64) -> Result<FenceReport> {
    let dir = open_dir(options.dir.as_path())?;
    let store = dir.path().display().to_string();
    let previous = read_file_fence(&dir)?;
    let fence = fence::next(previous, margin_ms)?;
    let tmp = format!(
        ".{FENCE_FILE}.{}.{:x}",
        std::process::id(),
        crate::clock::SystemClock::read_ms()
    );
    let write = || -> std::io::Result<()> {
        let mut f = dir.create_new(&tmp)?;
        std::io::Write::write_all(&mut f, fence.to_string().as_bytes())?;
        f.sync_all()?;
        dir.rename_over(&tmp, FENCE_FILE)?;
        dir.sync();
        Ok(())
    };
    write().map_err(|e| {
        dir.remove(&tmp);
        Error::LeaseStore {
            reason: format!(
                "cannot write the fence {}: {e}",
                dir.path().join(FENCE_FILE).display()
            ),
        }
    })?;
    Ok(FenceReport {
        store,
        fence_ms: fence,
        previous_ms: previous,
    })
}
