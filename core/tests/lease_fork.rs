//! Fork with a lease: the child of a process holding a file lease takes a fresh slot (a
//! different node id) before its first ID, the parent keeps its own, and the union of their IDs
//! has no duplicate. Its own test binary: forking a process that runs other test threads is
//! unsafe.

mod lease_support;

use lease_support::TempDir;
use polyflake::{FileLeaseOptions, Generator, Mode, NodeSource};
use std::collections::HashSet;
use std::io::Read;
use std::time::Duration;

#[test]
fn forked_child_takes_a_fresh_slot_and_ids_never_collide() {
    let dir = TempDir::new("fork");
    let mut o = FileLeaseOptions::new(dir.path());
    o.common.slots = Some(4);
    o.common.reserve_ms = 500;
    for mode in [Mode::Strict, Mode::Monotonic] {
        let g = Generator::builder_from(NodeSource::FileLease(o.clone()))
            .mode(mode)
            .build()
            .unwrap();
        // A new slot file: its restart guard is a full reserve.
        g.wait_ready(Duration::from_secs(5)).unwrap();
        let parent_node = g.node_id();
        let mut parent_ids: Vec<u64> = (0..2000).map(|_| g.next_id().unwrap()).collect();

        let mut fds = [0i32; 2];
        assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
        // SAFETY: the child calls into the generator and writes to a pipe, then `_exit`s.
        let pid = unsafe { libc::fork() };
        assert!(pid >= 0, "fork failed");
        if pid == 0 {
            unsafe { libc::close(fds[0]) };
            let mut out = Vec::new();
            let ok = (|| -> Result<(), polyflake::Error> {
                // The child's first call takes its own slot, a new one: wait out its guard.
                g.wait_ready(Duration::from_secs(5))?;
                let mut buf = vec![0u64; 3000];
                g.next_ids(&mut buf)?;
                out.extend(buf);
                for _ in 0..2000 {
                    out.push(g.next_id()?);
                }
                Ok(())
            })();
            let node = g.node_id();
            let healthy = g.health().ok;
            drop(g);
            let mut msg = format!(
                "{} {} {}\n",
                ok.as_ref()
                    .map(|_| "ok".to_string())
                    .unwrap_or_else(|e| e.to_string()),
                node,
                healthy
            )
            .into_bytes();
            for id in out {
                msg.extend_from_slice(format!("{id}\n").as_bytes());
            }
            let mut written = 0;
            while written < msg.len() {
                let n = unsafe {
                    libc::write(fds[1], msg[written..].as_ptr().cast(), msg.len() - written)
                };
                if n <= 0 {
                    break;
                }
                written += n as usize;
            }
            unsafe { libc::_exit(0) };
        }
        unsafe { libc::close(fds[1]) };
        // The parent keeps issuing on its own slot while the child runs.
        parent_ids.extend((0..2000).map(|_| g.next_id().unwrap()));
        let mut text = String::new();
        let mut pipe =
            unsafe { <std::fs::File as std::os::unix::io::FromRawFd>::from_raw_fd(fds[0]) };
        pipe.read_to_string(&mut text).unwrap();
        let mut status = 0;
        unsafe { libc::waitpid(pid, &mut status, 0) };
        assert!(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0);

        let mut lines = text.lines();
        let head: Vec<&str> = lines.next().unwrap().split(' ').collect();
        assert_eq!(head[0], "ok", "child: {}", head.join(" "));
        let child_node: u32 = head[1].parse().unwrap();
        assert_eq!(head[2], "true", "child health");
        assert_ne!(child_node, parent_node, "the child took a fresh slot");
        let child_ids: Vec<u64> = lines.map(|l| l.parse().unwrap()).collect();
        assert_eq!(child_ids.len(), 5000);
        assert!(child_ids
            .iter()
            .all(|&id| g.decode(id).unwrap().node_id == child_node));
        assert!(parent_ids
            .iter()
            .all(|&id| g.decode(id).unwrap().node_id == parent_node));
        let mut all = HashSet::new();
        for id in parent_ids.iter().chain(&child_ids) {
            assert!(all.insert(*id), "duplicate {id}");
        }
        // The parent is unaffected, and its slot stayed its own: the child (now gone) did not
        // unlock it, so two more leases get the two remaining free slots only.
        assert!(g.health().ok);
        assert_eq!(g.node_id(), parent_node);
        let others: Vec<_> = (0..3)
            .map(|_| Generator::builder_from(NodeSource::FileLease(o.clone())).build())
            .collect();
        let taken: HashSet<u32> = others.iter().flatten().map(|x| x.node_id()).collect();
        assert!(!taken.contains(&parent_node));
        assert_eq!(taken.len(), 3, "the child's slot was freed when it exited");
        drop(others);
        drop(g);
    }
}
