//! The Rust participant of the cross-language uniqueness run (`tests/polyglot/`):
//! `participant LEASE_DIR SECONDS OUT_PATH`. It leases a slot from LEASE_DIR, mints with single
//! `next_id` calls for SECONDS, and writes the IDs (raw little-endian u64, in issue order) to
//! OUT_PATH and a summary to OUT_PATH.json. A LEASE_DIR of the form
//! `zk://HOST:PORT[,HOST:PORT...]/PREFIX` leases from that ZooKeeper ensemble under the znode
//! prefix `/PREFIX` instead of a lease directory.

use polyflake::{FileLeaseOptions, Generator, NodeSource, ZooKeeperLeaseOptions};
use std::io::Write;
use std::time::{Duration, Instant};

fn fail(msg: String) -> ! {
    eprintln!("participant (rust): {msg}");
    std::process::exit(1)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() != 4 && !(args.len() == 5 && args[4] == "uuidv7") {
        fail("usage: participant LEASE_DIR SECONDS OUT_PATH [uuidv7]".into());
    }
    let seconds: f64 = args[2]
        .parse()
        .unwrap_or_else(|_| fail(format!("SECONDS {:?} is not a number", args[2])));
    if args.len() == 5 {
        return uuidv7(seconds, &args[3]);
    }
    let g = Generator::builder_from(node_source(&args[1]))
        .build()
        .unwrap_or_else(|e| fail(e.to_string()));
    // A new slot (or one whose previous holder left a high-water mark ahead of our clock) is
    // guarded: the core refuses (LeaseNotReady) for up to the reserve. Wait that out, bounded.
    g.wait_ready(Duration::from_secs(15))
        .unwrap_or_else(|e| fail(e.to_string()));
    let mut ids: Vec<u64> = Vec::with_capacity(1 << 22);
    let first = g.next_id().unwrap_or_else(|e| fail(e.to_string()));
    ids.push(first);
    let start = Instant::now();
    let limit = Duration::from_secs_f64(seconds);
    while start.elapsed() < limit {
        for _ in 0..1024 {
            ids.push(g.next_id().unwrap_or_else(|e| fail(e.to_string())));
        }
    }
    let elapsed = start.elapsed().as_secs_f64();
    let mut bytes = Vec::with_capacity(ids.len() * 8);
    for id in &ids {
        bytes.extend_from_slice(&id.to_le_bytes());
    }
    let out = &args[3];
    std::fs::write(out, &bytes).unwrap_or_else(|e| fail(format!("writing {out}: {e}")));
    let summary = format!(
        "{{\"language\": \"rust\", \"node_id\": {}, \"count\": {}, \"seconds\": {elapsed}, \"first\": \"{}\", \"last\": \"{}\"}}\n",
        g.node_id(),
        ids.len(),
        ids[0],
        ids[ids.len() - 1]
    );
    std::fs::File::create(format!("{out}.json"))
        .and_then(|mut f| f.write_all(summary.as_bytes()))
        .unwrap_or_else(|e| fail(format!("writing {out}.json: {e}")));
}

/// Where the node id is leased from: a ZooKeeper ensemble and prefix for `zk://...`, else the
/// lease directory; the identity is the language either way.
fn node_source(lease: &str) -> NodeSource {
    let Some(rest) = lease.strip_prefix("zk://") else {
        let mut opts = FileLeaseOptions::new(lease);
        opts.common.identity = Some("rust".into());
        return NodeSource::FileLease(opts);
    };
    let (ensemble, prefix) = rest
        .split_once('/')
        .unwrap_or_else(|| fail(format!("{lease:?}: expected zk://HOST:PORT,.../PREFIX")));
    let mut opts = ZooKeeperLeaseOptions::from_ensemble(ensemble);
    opts.store.prefix = format!("/{prefix}");
    opts.common.identity = Some("rust".into());
    NodeSource::ZooKeeper(opts)
}

/// The UUIDv7 run: single calls for SECONDS, 16 bytes big-endian each.
fn uuidv7(seconds: f64, out: &str) {
    let g = polyflake::Uuid7Generator::strict().unwrap_or_else(|e| fail(e.to_string()));
    let mut ids: Vec<u128> = Vec::with_capacity(1 << 22);
    let start = Instant::now();
    let limit = Duration::from_secs_f64(seconds);
    while start.elapsed() < limit {
        for _ in 0..1024 {
            ids.push(g.next_uuid().unwrap_or_else(|e| fail(e.to_string())));
        }
    }
    let elapsed = start.elapsed().as_secs_f64();
    let bytes: Vec<u8> = ids.iter().flat_map(|u| u.to_be_bytes()).collect();
    std::fs::write(out, &bytes).unwrap_or_else(|e| fail(format!("writing {out}: {e}")));
    let summary = format!(
        "{{\"language\": \"rust\", \"format\": \"uuidv7\", \"node_id\": null, \"count\": {}, \"seconds\": {elapsed}, \"first\": \"{}\", \"last\": \"{}\"}}\n",
        ids.len(),
        ids[0],
        ids[ids.len() - 1]
    );
    std::fs::write(format!("{out}.json"), summary)
        .unwrap_or_else(|e| fail(format!("writing {out}.json: {e}")));
}
