//! `polyflake lease inspect`: what an operator sees of a lease store (the core reads it; this
//! prints it).

use crate::error::CliError;
use crate::{emit, Format};
use clap::{Args, Subcommand};
use polyflake::{EtcdLeaseOptions, FileLeaseOptions, LeaseCommon, StoreReport};
use polyflake_cli::options::{zookeeper_options, StoreAuthArgs};
use polyflake_service::timefmt;
use serde_json::json;
use std::path::PathBuf;

/// `polyflake lease ...`
#[derive(Debug, Subcommand)]
pub enum LeaseCommand {
    /// Print each slot of a lease store without taking anything: held or not, the identity and
    /// holder that wrote it, its high-water mark R, R minus now (how long a new holder would
    /// wait), whether that guard is poisoned (past --max-guard-wait-ms), the store's fence and
    /// its ID space.
    Inspect(InspectArgs),
    /// After restoring a store from a backup, before any new holder starts: raise the store's
    /// fence to now + --margin-ms, so no new holder of any slot issues at or below it (the
    /// restored store has forgotten what holders issued since the backup). Only ever raises it.
    Fence(FenceArgs),
}

/// Which store (the same flags as `serve`'s lease flags).
#[derive(Debug, Args)]
pub struct StoreArgs {
    /// A file lease directory (default: the core's default lease directory).
    #[arg(long, value_name = "DIR", conflicts_with_all = ["etcd", "zookeeper"])]
    lease_dir: Option<PathBuf>,
    /// An etcd v3 cluster (repeat for more endpoints).
    #[arg(long = "etcd", value_name = "URL", num_args = 1.., conflicts_with = "zookeeper")]
    etcd: Vec<String>,
    /// The etcd key prefix.
    #[arg(long, value_name = "PREFIX", default_value = polyflake::DEFAULT_ETCD_PREFIX, requires = "etcd")]
    etcd_prefix: String,
    /// A ZooKeeper ensemble: host:port servers separated by commas (or repeated).
    #[arg(long = "zookeeper", value_name = "HOST:PORT,...", num_args = 1..)]
    zookeeper: Vec<String>,
    /// The ZooKeeper znode prefix.
    #[arg(long, value_name = "PREFIX", default_value = polyflake::DEFAULT_ZOOKEEPER_PREFIX, requires = "zookeeper")]
    zookeeper_prefix: String,
    /// TLS and authentication of the etcd or ZooKeeper store.
    #[command(flatten)]
    store_auth: StoreAuthArgs,
    /// The lease reserve in ms: what a missing or damaged record is assumed to hide (as a new
    /// holder assumes), and part of the fence's default margin.
    #[arg(long, value_name = "MS", default_value_t = polyflake::DEFAULT_RESERVE_MS)]
    lease_reserve_ms: u64,
}

/// One store's options, as the core takes them.
enum Store {
    File(FileLeaseOptions),
    Etcd(EtcdLeaseOptions),
    ZooKeeper(polyflake::ZooKeeperLeaseOptions),
}

impl StoreArgs {
    /// What inspecting and fencing judge by: the reserve a damaged record hides and the guard
    /// that counts as poisoned (slots and identity play no part).
    fn common(&self, max_guard_wait_ms: u64) -> LeaseCommon {
        LeaseCommon {
            reserve_ms: self.lease_reserve_ms,
            max_guard_wait_ms,
            ..LeaseCommon::default()
        }
    }

    fn store(&self, max_guard_wait_ms: u64) -> Result<Store, CliError> {
        Ok(if !self.zookeeper.is_empty() {
            let mut o = zookeeper_options(&self.zookeeper);
            o.store.prefix = self.zookeeper_prefix.clone();
            o.store.credentials = self.store_auth.zookeeper()?;
            o.common = self.common(max_guard_wait_ms);
            Store::ZooKeeper(o)
        } else if self.etcd.is_empty() {
            let dir = self.lease_dir.clone();
            Store::File(FileLeaseOptions {
                dir: dir.unwrap_or_else(polyflake::default_lease_dir),
                common: self.common(max_guard_wait_ms),
            })
        } else {
            let mut o = EtcdLeaseOptions::new(self.etcd.clone());
            o.store.prefix = self.etcd_prefix.clone();
            o.store.credentials = self.store_auth.etcd()?;
            o.common = self.common(max_guard_wait_ms);
            Store::Etcd(o)
        })
    }
}

/// Which store to read, and how to judge it.
#[derive(Debug, Args)]
pub struct InspectArgs {
    #[command(flatten)]
    store: StoreArgs,
    /// A guard longer than this is reported as poisoned.
    #[arg(long, value_name = "MS", default_value_t = polyflake::DEFAULT_MAX_GUARD_WAIT_MS)]
    max_guard_wait_ms: u64,
    /// Output style (`--format` is the old spelling).
    #[arg(long = "output", alias = "format", value_enum, default_value_t = Format::Plain)]
    format: Format,
}

/// Which store to fence, and by how much.
#[derive(Debug, Args)]
pub struct FenceArgs {
    #[command(flatten)]
    store: StoreArgs,
    /// The fence is now + this many ms: more than the clock skew between the hosts plus the
    /// reserve (default: 60,000 ms of skew plus --lease-reserve-ms).
    #[arg(long, value_name = "MS")]
    margin_ms: Option<u64>,
    /// Output style.
    #[arg(long = "output", value_enum, default_value_t = Format::Plain)]
    format: Format,
}

/// Run a `lease` subcommand.
pub fn run(cmd: LeaseCommand) -> Result<(), CliError> {
    match cmd {
        LeaseCommand::Inspect(a) => inspect(a),
        LeaseCommand::Fence(a) => fence(a),
    }
}

fn fence(a: FenceArgs) -> Result<(), CliError> {
    let margin = a
        .margin_ms
        .unwrap_or(polyflake::DEFAULT_FENCE_SKEW_MS + a.store.lease_reserve_ms);
    let r = match a.store.store(polyflake::DEFAULT_MAX_GUARD_WAIT_MS)? {
        Store::File(o) => polyflake::fence_file_lease(&o, margin)?,
        Store::Etcd(o) => polyflake::fence_etcd_lease(&o, margin)?,
        Store::ZooKeeper(o) => polyflake::fence_zookeeper_lease(&o, margin)?,
    };
    emit(|out| {
        match a.format {
        Format::Json => writeln!(
            out,
            "{}",
            json!({
                "store": r.store,
                "fence_ms": r.fence_ms,
                "previous_ms": r.previous_ms,
                "margin_ms": margin,
            })
        ),
        Format::Plain => writeln!(
            out,
            "fenced {}: no new holder of any slot issues at or below {} ({} ms; margin {margin} ms; previous fence: {})",
            r.store,
            timefmt::iso_utc(r.fence_ms),
            r.fence_ms,
            r.previous_ms
                .map_or("none".to_string(), |p| format!("{} ms", p)),
        ),
    }
    })
}

fn inspect(a: InspectArgs) -> Result<(), CliError> {
    let report = match a.store.store(a.max_guard_wait_ms)? {
        Store::ZooKeeper(o) => polyflake::inspect_zookeeper_lease(&o)?,
        Store::File(o) => polyflake::inspect_file_lease(&o)?,
        Store::Etcd(o) => polyflake::inspect_etcd_lease(&o)?,
    };
    emit(|out| match a.format {
        Format::Json => writeln!(out, "{}", as_json(&report)),
        Format::Plain => {
            let space = report
                .space
                .map_or("none recorded".to_string(), |s| s.to_string());
            writeln!(
                out,
                "{} store {}{}\nID space: {space}\nnow: {} ({} ms)\nfence: {}",
                report.kind.name(),
                report.store,
                match (&report.store_identity, report.revision) {
                    (Some(id), Some(rev)) => format!(" ({id}; highest revision seen: {rev})"),
                    _ => String::new(),
                },
                timefmt::iso_utc(report.now_ms),
                report.now_ms,
                report.fence_ms.map_or("none".to_string(), |f| format!(
                    "{} ({f} ms): no new holder issues at or below it",
                    timefmt::iso_utc(f)
                ))
            )?;
            writeln!(
                out,
                "{:<6} {:<5} {:<20} {:<28} {:<26} {:>14} {:<8} RECORD",
                "SLOT", "HELD", "IDENTITY", "HOLDER", "R", "R-NOW(ms)", "POISONED"
            )?;
            for s in &report.slots {
                writeln!(
                    out,
                    "{:<6} {:<5} {:<20} {:<28} {:<26} {:>14} {:<8} {}",
                    format!("{:04}", s.slot),
                    if s.held { "yes" } else { "no" },
                    s.identity.as_deref().unwrap_or("-"),
                    s.holder.as_deref().unwrap_or("-"),
                    s.high_water_ms.map_or("-".into(), timefmt::iso_utc),
                    s.guard_ms.map_or("-".into(), |g| format!("{g:+}")),
                    if s.poisoned { "yes" } else { "no" },
                    s.record
                )?;
            }
            Ok(())
        }
    })
}

fn as_json(r: &StoreReport) -> serde_json::Value {
    let slots: Vec<_> = r
        .slots
        .iter()
        .map(|s| {
            json!({
                "slot": s.slot,
                "held": s.held,
                "identity": s.identity,
                "holder": s.holder,
                "high_water_ms": s.high_water_ms,
                "guard_ms": s.guard_ms,
                "poisoned": s.poisoned,
                "record": s.record,
            })
        })
        .collect();
    json!({
        "kind": r.kind.name(),
        "store": r.store,
        "space": r.space.map(|s| json!({"epoch_ms": s.epoch_ms, "layout": s.layout.to_string()})),
        "now_ms": r.now_ms,
        "fence_ms": r.fence_ms,
        "store_identity": r.store_identity,
        "revision": r.revision,
        "slots": slots,
    })
}
