//! The shared lease directory is hostile ground: another user (`nobody`, through a child process
//! that drops to its uid) plants a symbolic link to a root-only file, a hard link, a FIFO, a
//! directory, a device node or a file of its own at a slot's name, or at the ID-space record's.
//! The generator (root here) never writes outside the directory (the target's bytes and mtime
//! are unchanged), takes another slot or refuses naming the path and what it found, says why in
//! health, and neither its errors nor `inspect_file_lease` quote the target's bytes. The plants
//! are made by the tests themselves, so the library's own checks are exercised whatever
//! fs.protected_symlinks / protected_hardlinks say.
//!
//! Skipped unless run as root (it must become another user).

mod lease_support;

use lease_support::*;
use polyflake::{
    inspect_file_lease, Builder, ErrorKind, FileLeaseOptions, Generator, NodeSource,
    DEFAULT_EPOCH_MS,
};
use std::ffi::CString;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;

fn is_root() -> bool {
    // SAFETY: no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// nobody's uid and gid.
fn nobody() -> (u32, u32) {
    let name = CString::new("nobody").unwrap();
    // SAFETY: a valid C string; the entry is read at once.
    let pw = unsafe { libc::getpwnam(name.as_ptr()) };
    assert!(!pw.is_null(), "no user nobody");
    // SAFETY: non-null entry from getpwnam.
    unsafe { ((*pw).pw_uid, (*pw).pw_gid) }
}

/// Run a command as nobody (the child drops root before it execs); true when it succeeded.
fn as_nobody(program: &str, args: &[&Path]) -> bool {
    let (uid, gid) = nobody();
    let mut c = Command::new(program);
    c.args(args).stderr(std::process::Stdio::null());
    // SAFETY: only async-signal-safe calls between fork and exec.
    unsafe {
        c.pre_exec(move || {
            if libc::setgroups(0, std::ptr::null()) != 0
                || libc::setgid(gid) != 0
                || libc::setuid(uid) != 0
            {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    c.status().map(|s| s.success()).unwrap_or(false)
}

/// A root-only 0600 file outside the lease directory, with secret bytes, and its mtime.
struct Target {
    _dir: TempDir,
    path: PathBuf,
    secret: String,
    mtime: (i64, i64),
}

impl Target {
    fn new(tag: &str, owner: Option<(u32, u32)>) -> Target {
        let dir = TempDir::new(&format!("hostile-target-{tag}"));
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        let path = dir.path().join("secret");
        // Bytes that start like a record, so a reader that quoted what it read would show them.
        let secret = format!(
            "polyflake-slot v1\nTOPSECRET-{tag}-{}\n",
            std::process::id()
        );
        std::fs::write(&path, &secret).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        if let Some((uid, gid)) = owner {
            std::os::unix::fs::chown(&path, Some(uid), Some(gid)).unwrap();
        }
        // An mtime in the past, so a write now would show.
        let old = libc::timespec {
            tv_sec: 1_000_000_000,
            tv_nsec: 0,
        };
        let c = CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: valid path and times.
        assert_eq!(
            unsafe { libc::utimensat(libc::AT_FDCWD, c.as_ptr(), [old, old].as_ptr(), 0) },
            0
        );
        let m = std::fs::metadata(&path).unwrap();
        Target {
            _dir: dir,
            path,
            secret,
            mtime: (m.mtime(), m.mtime_nsec()),
        }
    }

    fn assert_unchanged(&self) {
        assert_eq!(std::fs::read_to_string(&self.path).unwrap(), self.secret);
        let m = std::fs::metadata(&self.path).unwrap();
        assert_eq!(
            (m.mtime(), m.mtime_nsec()),
            self.mtime,
            "the target was touched"
        );
    }

    fn secret_line(&self) -> &str {
        self.secret.lines().nth(1).unwrap()
    }
}

/// A lease directory open to every user, with the sticky bit, like the default one.
fn shared_dir(tag: &str) -> TempDir {
    let d = TempDir::new(&format!("hostile-{tag}"));
    std::fs::set_permissions(d.path(), std::fs::Permissions::from_mode(0o1777)).unwrap();
    d
}

fn lease(dir: &Path, slots: Option<u32>, test: i64) -> Builder {
    let mut o = FileLeaseOptions::new(dir);
    o.common.slots = slots;
    o.common.reserve_ms = 50;
    Generator::builder_from(NodeSource::FileLease(o))
        .epoch_ms(DEFAULT_EPOCH_MS + 500 + test)
        .host_scope(lease_support::test_scope(500 + test))
}

/// What each test plants at a name.
#[derive(Clone, Copy, Debug)]
enum Plant {
    Symlink,
    HardLink,
    Fifo,
    Directory,
    Device,
}

/// Plant `what` at `dir/name` as nobody (a device node: as root, then given to nobody, since
/// nobody cannot make one; a hard link to a root file when protected_hardlinks forbids nobody
/// one: as root, to a file of nobody's). Returns the target that must stay unchanged, and the
/// words health and errors must use.
fn plant(what: Plant, dir: &Path, name: &str, tag: &str) -> (Option<Target>, &'static str) {
    let at = dir.join(name);
    match what {
        Plant::Symlink => {
            let t = Target::new(tag, None);
            assert!(as_nobody("ln", &[Path::new("-s"), &t.path, &at]));
            assert!(std::fs::symlink_metadata(&at)
                .unwrap()
                .file_type()
                .is_symlink());
            (Some(t), "symbolic link")
        }
        Plant::HardLink => {
            let mut t = Target::new(tag, None);
            if !as_nobody("ln", &[&t.path, &at]) {
                // fs.protected_hardlinks: nobody may not link root's file. Link one of nobody's.
                t = Target::new(&format!("{tag}-nobodys"), Some(nobody()));
                std::fs::hard_link(&t.path, &at).unwrap();
            }
            assert_eq!(std::fs::metadata(&at).unwrap().nlink(), 2);
            (Some(t), "hard link")
        }
        Plant::Fifo => {
            assert!(as_nobody("mkfifo", &[&at]));
            (None, "FIFO")
        }
        Plant::Directory => {
            assert!(as_nobody("mkdir", &[&at]));
            (None, "directory")
        }
        Plant::Device => {
            let c = CString::new(at.as_os_str().as_encoded_bytes()).unwrap();
            // SAFETY: valid path; the numbers of /dev/null.
            let rc = unsafe { libc::mknod(c.as_ptr(), libc::S_IFCHR | 0o666, libc::makedev(1, 3)) };
            assert_eq!(rc, 0, "mknod: {}", std::io::Error::last_os_error());
            let (uid, gid) = nobody();
            std::os::unix::fs::lchown(&at, Some(uid), Some(gid)).unwrap();
            (None, "device node")
        }
    }
}

const PLANTS: [Plant; 5] = [
    Plant::Symlink,
    Plant::HardLink,
    Plant::Fifo,
    Plant::Directory,
    Plant::Device,
];

#[test]
fn a_plant_at_a_slot_name_is_skipped_named_in_health_and_never_written() {
    if !is_root() {
        eprintln!("skipped: needs root (to become nobody)");
        return;
    }
    for (i, what) in PLANTS.into_iter().enumerate() {
        // With a bounded number of slots and with the default (every node id).
        for (j, slots) in [Some(4), None].into_iter().enumerate() {
            let dir = shared_dir("skip");
            let tag = format!("skip-{i}-{j}");
            let (target, words) = plant(what, dir.path(), "slot-0000", &tag);
            let g = lease(dir.path(), slots, (i * 2 + j) as i64)
                .build()
                .unwrap_or_else(|e| panic!("{what:?}: {e}"));
            assert_eq!(g.node_id(), 1, "{what:?}: slot 0 skipped");
            let h = g.health();
            let note = &h.lease.as_ref().unwrap().guard_note;
            assert!(
                note.contains("slot-0000") && note.contains(words),
                "{what:?}: {note}"
            );
            if let Some(t) = &target {
                assert!(!note.contains(t.secret_line()));
            }
            g.wait_ready(std::time::Duration::from_secs(5)).unwrap();
            g.next_id().unwrap();
            g.renew_lease().unwrap();
            drop(g);
            if let Some(t) = &target {
                t.assert_unchanged();
            }
            // What is there is still what was planted: nothing replaced it.
            let m = std::fs::symlink_metadata(dir.path().join("slot-0000")).unwrap();
            assert!(
                m.uid() == nobody().0 || matches!(what, Plant::HardLink),
                "{what:?}"
            );
            let report = inspect_file_lease(&FileLeaseOptions::new(dir.path())).unwrap();
            let s0 = report.slots.iter().find(|s| s.slot == 0).unwrap();
            assert!(
                s0.record.starts_with("unsafe: ") && s0.record.contains(words),
                "{s0:?}"
            );
            assert!(!s0.held && s0.identity.is_none() && s0.holder.is_none());
            if let Some(t) = &target {
                assert!(!format!("{report:?}").contains(t.secret_line()));
                t.assert_unchanged();
            }
        }
    }
}

#[test]
fn with_nothing_else_free_the_refusal_names_the_path_and_what_is_there() {
    if !is_root() {
        eprintln!("skipped: needs root (to become nobody)");
        return;
    }
    for (i, what) in PLANTS.into_iter().enumerate() {
        let dir = shared_dir("refuse");
        let (target, words) = plant(what, dir.path(), "slot-0000", &format!("refuse-{i}"));
        let e = lease(dir.path(), Some(1), 20 + i as i64)
            .build()
            .unwrap_err();
        let text = e.to_string();
        assert_eq!(e.kind(), ErrorKind::LeaseStore, "{what:?}: {text}");
        let path = dir.path().join("slot-0000").display().to_string();
        assert!(
            text.contains(&path) && text.contains(words),
            "{what:?}: {text}"
        );
        if let Some(t) = &target {
            assert!(!text.contains(t.secret_line()), "{text}");
            t.assert_unchanged();
        }
    }
}

#[test]
fn another_users_own_file_at_a_slot_name_is_not_written() {
    if !is_root() {
        eprintln!("skipped: needs root (to become nobody)");
        return;
    }
    let dir = shared_dir("owned");
    let at = dir.path().join("slot-0000");
    assert!(as_nobody("touch", &[&at]));
    std::fs::set_permissions(&at, std::fs::Permissions::from_mode(0o666)).unwrap();
    let g = lease(dir.path(), Some(2), 30).build().unwrap();
    assert_eq!(g.node_id(), 1);
    let note = g.health().lease.unwrap().guard_note;
    assert!(
        note.contains("slot-0000") && note.contains("owned by uid 65534"),
        "{note}"
    );
    drop(g);
    assert_eq!(
        std::fs::metadata(&at).unwrap().len(),
        0,
        "nobody's file was written"
    );
}

#[test]
fn a_plant_at_the_space_record_is_refused_without_quoting_it() {
    if !is_root() {
        eprintln!("skipped: needs root (to become nobody)");
        return;
    }
    for (i, what) in PLANTS.into_iter().enumerate() {
        let dir = shared_dir("space");
        let (target, words) = plant(what, dir.path(), "polyflake-space", &format!("space-{i}"));
        let e = lease(dir.path(), None, 40 + i as i64).build().unwrap_err();
        let text = e.to_string();
        let path = dir.path().join("polyflake-space").display().to_string();
        assert!(
            text.contains(&path) && text.contains(words),
            "{what:?}: {text}"
        );
        let inspected = inspect_file_lease(&FileLeaseOptions::new(dir.path()))
            .unwrap_err()
            .to_string();
        assert!(inspected.contains(words), "{inspected}");
        if let Some(t) = &target {
            assert!(!text.contains(t.secret_line()) && !inspected.contains(t.secret_line()));
            t.assert_unchanged();
        }
        // No slot file was made beside it.
        assert!(!dir.path().join("slot-0000").exists());
    }
}

#[test]
fn a_lease_directory_named_through_the_operators_own_symlink_is_followed() {
    let real = TempDir::new("hostile-real");
    let links = TempDir::new("hostile-links");
    let link = links.path().join("leases");
    std::os::unix::fs::symlink(real.path(), &link).unwrap();
    let g = lease(&link, Some(2), 50).build().unwrap();
    assert_eq!(g.node_id(), 0);
    assert!(real.path().join("slot-0000").is_file());
    drop(g);
}

/// Not a test: the entry point of the child process below (run with `TMPDIR` set, so the
/// temporary directory's default `polyflake-leases` is one the parent prepared).
#[test]
fn child_process_entry() {
    if child_mode().as_deref() == Some("shared") {
        let dir = std::env::temp_dir().join("polyflake-leases");
        match lease(&dir, Some(2), 60).build() {
            Ok(g) => emit(&format!("NODE {}", g.node_id())),
            Err(e) => emit(&format!("ERR {e}")),
        }
    }
}

/// The default shared directory (here the temporary directory's, as where /var/tmp is
/// missing) made first by another user, or planted as a symlink, is refused, naming why.
#[test]
fn a_default_directory_made_first_by_another_user_is_refused() {
    if !is_root() {
        eprintln!("skipped: needs root (to become nobody)");
        return;
    }
    let run = |tmp: &Path| {
        let mut c = spawn_child(
            "child_process_entry",
            "shared",
            &[("TMPDIR", tmp.display().to_string())],
        );
        let mut out = lines(&mut c);
        let line = out.next().expect("the child answered");
        // Read to the end: the child's harness must not meet a closed pipe.
        out.for_each(drop);
        assert!(c.wait().unwrap().success());
        line
    };
    // nobody's directory.
    let tmp = shared_dir("default-owner");
    let shared = tmp.path().join("polyflake-leases");
    assert!(as_nobody("mkdir", &[&shared]));
    let line = run(tmp.path());
    assert!(
        line.starts_with("ERR ")
            && line.contains("owned by uid 65534")
            && line.contains("lease_dir"),
        "{line}"
    );
    assert!(!shared.join("slot-0000").exists());
    // A symlink nobody planted there, to a directory of root's.
    let tmp = shared_dir("default-link");
    let elsewhere = TempDir::new("hostile-elsewhere");
    let shared = tmp.path().join("polyflake-leases");
    assert!(as_nobody(
        "ln",
        &[Path::new("-s"), elsewhere.path(), &shared]
    ));
    let line = run(tmp.path());
    assert!(
        line.starts_with("ERR ") && line.contains("not a directory"),
        "{line}"
    );
    assert!(std::fs::read_dir(elsewhere.path())
        .unwrap()
        .next()
        .is_none());
    // Root's own (or this user's) default directory is used.
    let tmp = shared_dir("default-ok");
    assert_eq!(run(tmp.path()), "NODE 0");
}
