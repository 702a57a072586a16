//! `polyflake lease inspect`: what an operator sees of a lease store (the core reads it; this
//! prints it).

use crate::errors::CliError;
use crate::{emit, timefmt, Format};
use clap::{Args, Subcommand};
use polyflake::{EtcdLeaseOptions, FileLeaseOptions, StoreReport};
use polyflake_cli::options::{zookeeper_options, StoreAuthArgs};
use serde_json::json;
use std::path::PathBuf;

/// `polyflake lease ...`
#[derive(Debug, Subcommand)]
pub enum LeaseCommand {
    /// Print each slot of a lease store without taking anything: held or not, the identity and
    /// holder that wrote it, its high-water mark R, R minus now (how long a new holder would
    /// wait), whether that guard is poisoned (past --max-guard-wait-ms), and the store's ID space.
    Inspect(InspectArgs),
}

/// Which store to read, and how to judge it.
#[derive(Debug, Args)]
pub struct InspectArgs {
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
    /// What a missing or damaged record is assumed to hide, in ms (as a new holder assumes).
    #[arg(long, value_name = "MS", default_value_t = polyflake::DEFAULT_RESERVE_MS)]
    lease_reserve_ms: u64,
    /// A guard longer than this is reported as poisoned.
    #[arg(long, value_name = "MS", default_value_t = polyflake::DEFAULT_MAX_GUARD_WAIT_MS)]
    max_guard_wait_ms: u64,
    /// Output style (`--format` is the old spelling).
    #[arg(long = "output", alias = "format", value_enum, default_value_t = Format::Plain)]
    format: Format,
}

/// Run a `lease` subcommand.
pub fn run(cmd: LeaseCommand) -> Result<(), CliError> {
    let LeaseCommand::Inspect(a) = cmd;
    let report = if !a.zookeeper.is_empty() {
        let mut o = zookeeper_options(&a.zookeeper);
        o.prefix = a.zookeeper_prefix.clone();
        o.reserve_ms = a.lease_reserve_ms;
        o.max_guard_wait_ms = a.max_guard_wait_ms;
        a.store_auth.apply_zookeeper(&mut o)?;
        polyflake::inspect_zookeeper_lease(&o)?
    } else if a.etcd.is_empty() {
        let mut o = FileLeaseOptions::new(
            a.lease_dir
                .clone()
                .unwrap_or_else(polyflake::default_lease_dir),
        );
        o.reserve_ms = a.lease_reserve_ms;
        o.max_guard_wait_ms = a.max_guard_wait_ms;
        polyflake::inspect_file_lease(&o)?
    } else {
        let mut o = EtcdLeaseOptions::new(a.etcd.clone());
        o.prefix = a.etcd_prefix.clone();
        o.reserve_ms = a.lease_reserve_ms;
        o.max_guard_wait_ms = a.max_guard_wait_ms;
        a.store_auth.apply_etcd(&mut o)?;
        polyflake::inspect_etcd_lease(&o)?
    };
    emit(|out| match a.format {
        Format::Json => writeln!(out, "{}", as_json(&report)),
        Format::Plain => {
            let space = report
                .space
                .map_or("none recorded".to_string(), |s| s.to_string());
            writeln!(
                out,
                "{} store {}\nID space: {space}\nnow: {} ({} ms)",
                report.kind.name(),
                report.store,
                timefmt::iso_utc(report.now_ms),
                report.now_ms
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
        "slots": slots,
    })
}
