//! `polyflake lease inspect` on a hostile shared directory: another user (`nobody`) planted a
//! symbolic link to a root-only file, a hard link, a FIFO and a directory at slot names, and a
//! symbolic link at the ID-space record. The output names what is there and never a byte of the
//! target; a FIFO never blocks it. Skipped unless run as root (it must become another user).

mod common;

use common::{run, temp_dir};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;

fn is_root() -> bool {
    // SAFETY: no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// Run a command as nobody; true when it succeeded.
fn as_nobody(args: &[&str]) -> bool {
    Command::new("runuser")
        .args(["-u", "nobody", "--"])
        .args(args)
        .status()
        .map(|s| s.success())
        .unwrap_or(false)
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn inspect_names_plants_and_never_echoes_a_target() {
    if !is_root() {
        eprintln!("skipped: needs root (to become nobody)");
        return;
    }
    let root = temp_dir("hostile-inspect");
    let dir = root.join("leases");
    let secrets = root.join("secrets");
    for d in [&dir, &secrets] {
        std::fs::create_dir_all(d).unwrap();
    }
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o1777)).unwrap();
    std::fs::set_permissions(&root, std::fs::Permissions::from_mode(0o755)).unwrap();
    let secret = "TOPSECRET-cli-inspect-2f9d1c";
    let target = secrets.join("secret");
    std::fs::write(&target, format!("polyflake-slot v1\n{secret}\n")).unwrap();
    std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o600)).unwrap();
    let before = std::fs::read(&target).unwrap();

    // A real lease first, so the directory has a space record and a slot of its own.
    let g = run(&[
        "next",
        "--count",
        "1",
        "--lease-dir",
        s(&dir),
        "--lease-reserve-ms",
        "10",
    ]);
    assert!(g.status.success(), "{}", g.stderr);

    assert!(as_nobody(&[
        "ln",
        "-s",
        s(&target),
        s(&dir.join("slot-0001"))
    ]));
    // A hard link: nobody's own when fs.protected_hardlinks keeps nobody from linking root's.
    if !as_nobody(&["ln", s(&target), s(&dir.join("slot-0002"))]) {
        let theirs = secrets.join("nobodys");
        std::fs::write(&theirs, format!("polyflake-slot v1\n{secret}\n")).unwrap();
        std::os::unix::fs::chown(&theirs, Some(65534), Some(65534)).unwrap();
        std::fs::hard_link(&theirs, dir.join("slot-0002")).unwrap();
    }
    assert!(as_nobody(&["mkfifo", s(&dir.join("slot-0003"))]));
    assert!(as_nobody(&["mkdir", s(&dir.join("slot-0004"))]));

    for format in ["plain", "json"] {
        let r = run(&[
            "lease",
            "inspect",
            "--lease-dir",
            s(&dir),
            "--output",
            format,
        ]);
        assert!(r.status.success(), "{}", r.stderr);
        let all = format!("{}{}", r.stdout, r.stderr);
        assert!(!all.contains(secret), "{all}");
        for words in ["symbolic link", "hard link", "FIFO", "directory"] {
            assert!(r.stdout.contains(words), "{format}: {words}: {}", r.stdout);
        }
    }

    // The ID-space record replaced by a link to the target: refused, named, not quoted.
    let space = dir.join("polyflake-space");
    std::fs::remove_file(&space).unwrap();
    assert!(as_nobody(&["ln", "-s", s(&target), s(&space)]));
    let r = run(&["lease", "inspect", "--lease-dir", s(&dir)]);
    assert!(!r.status.success());
    assert!(
        r.stderr.contains("polyflake-space") && r.stderr.contains("symbolic link"),
        "{}",
        r.stderr
    );
    assert!(!format!("{}{}", r.stdout, r.stderr).contains(secret));
    assert_eq!(
        std::fs::read(&target).unwrap(),
        before,
        "the target is unchanged"
    );
    let _ = std::fs::remove_dir_all(&root);
}
