//! `polyflake`: mint and decode polyflake IDs from a shell, list the layouts, and serve IDs over
//! HTTP. Every rule about IDs is the core's (`polyflake` crate); this binary parses arguments,
//! calls the core and prints.

#![deny(missing_docs)]

mod inspect;

use clap::{error::ErrorKind as ClapErrorKind, Args, Parser, Subcommand, ValueEnum};
use polyflake::{format_id, Layout};
use polyflake_cli::errors::CliError;
use polyflake_cli::options::{DecodeArgs, GenArgs, NodeArgs};
use polyflake_cli::{errors, serve, timefmt};
use serde_json::json;
use std::io::{self, BufWriter, Write};
use std::process::ExitCode;
use std::time::Duration;

/// The longest `next` waits for a leased slot's restart guard before giving up.
const GUARD_WAIT_LIMIT: Duration = Duration::from_secs(30);

/// Unique, time-sortable 64-bit IDs: mint, decode, list layouts, serve over HTTP.
#[derive(Debug, Parser)]
#[command(name = "polyflake", version, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Mint IDs and print them, one per line (or as JSON).
    Next(NextArgs),
    /// Decode IDs: time (ISO-8601 UTC), Unix ms, node and sequence.
    Decode(DecodeCmd),
    /// List the layout presets: bits, years, nodes and IDs per millisecond.
    Layouts(LayoutsArgs),
    /// Serve IDs over HTTP (POST /v1/ids, GET /v1/ids/{id}, GET /v1/health, GET /metrics,
    /// GET /openapi.json).
    Serve(serve::ServeArgs),
    /// Look at a lease store: `polyflake lease inspect`.
    #[command(subcommand)]
    Lease(inspect::LeaseCommand),
    /// Print the service's OpenAPI 3.1 description (what `GET /openapi.json` answers).
    #[command(hide = true)]
    Openapi(OpenapiArgs),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Format {
    /// Human-readable text.
    Plain,
    /// JSON, with IDs as decimal strings.
    Json,
}

#[derive(Debug, Args)]
struct NextArgs {
    /// How many IDs to mint (one batch through the core's next_ids).
    #[arg(
        short = 'n',
        long = "count",
        value_name = "N",
        default_value_t = 1,
        allow_negative_numbers = true
    )]
    count: i128,
    #[command(flatten)]
    node: NodeArgs,
    #[command(flatten)]
    gen: GenArgs,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Plain)]
    format: Format,
}

#[derive(Debug, Args)]
struct DecodeCmd {
    /// The IDs to decode, in decimal.
    #[arg(value_name = "ID", required = true, allow_negative_numbers = true)]
    ids: Vec<String>,
    #[command(flatten)]
    opts: DecodeArgs,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Plain)]
    format: Format,
}

#[derive(Debug, Args)]
struct OpenapiArgs {
    /// The count cap to describe (the service's --max-count).
    #[arg(
        long,
        value_name = "N",
        default_value_t = 4096,
        allow_negative_numbers = true
    )]
    max_count: i128,
}

#[derive(Debug, Args)]
struct LayoutsArgs {
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Plain)]
    format: Format,
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => return clap_exit(e),
    };
    let result = match cli.command {
        Command::Next(a) => next(a),
        Command::Decode(a) => decode(a),
        Command::Layouts(a) => layouts(a),
        Command::Serve(a) => serve::run(a),
        Command::Lease(c) => inspect::run(c),
        Command::Openapi(a) => openapi(a),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("polyflake: error: {e}");
            ExitCode::from(e.exit_code())
        }
    }
}

/// Help and version go out as clap prints them; every other parse error is squeezed into one
/// line on stderr (clap's first line, without its usage block), exit code 2.
fn clap_exit(e: clap::Error) -> ExitCode {
    match e.kind() {
        ClapErrorKind::DisplayHelp | ClapErrorKind::DisplayVersion => {
            let _ = e.print();
            ExitCode::SUCCESS
        }
        _ => {
            let text = e.render().to_string();
            let mut lines = text.lines().map(str::trim).skip_while(|l| l.is_empty());
            let mut line = lines.next().unwrap_or("invalid arguments").to_string();
            if line.ends_with(':') {
                // "the following required arguments were not provided:" lists them below.
                let items: Vec<&str> = lines.take_while(|l| !l.is_empty()).collect();
                line = format!("{line} {}", items.join(", "));
            }
            let line = line.strip_prefix("error: ").unwrap_or(&line);
            let line = if line.starts_with("Usage:") || line.starts_with("Unique") {
                "a subcommand is required: next, decode, layouts, serve or lease"
            } else {
                line
            };
            eprintln!("polyflake: error: {line} (see polyflake --help)");
            ExitCode::from(2)
        }
    }
}

/// Write everything, treating a closed pipe (`polyflake next -n 1000000 | head`) as success.
fn emit(f: impl FnOnce(&mut dyn Write) -> io::Result<()>) -> Result<(), CliError> {
    let stdout = io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    match f(&mut out).and_then(|()| out.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Ok(()),
        Err(e) => Err(CliError::Runtime(format!("cannot write to stdout: {e}"))),
    }
}

fn next(a: NextArgs) -> Result<(), CliError> {
    let n = polyflake::batch_len(a.count)?;
    let g = a.gen.build(&a.node, None)?;
    let mut ids = vec![0u64; n];
    // A freshly leased slot may sit behind its previous holder's high-water mark (the restart
    // guard): the core refuses until the clock passes it, and a one-shot command waits that out.
    g.wait_ready(GUARD_WAIT_LIMIT)?;
    g.next_ids(&mut ids)?;
    emit(|out| match a.format {
        Format::Plain => ids.iter().try_for_each(|id| writeln!(out, "{id}")),
        Format::Json => {
            let ids: Vec<String> = ids.iter().map(|id| format_id(*id)).collect();
            let v = json!({"ids": ids, "node_id": g.node_id(), "epoch_ms": g.epoch_ms()});
            writeln!(out, "{v}")
        }
    })
}

fn decode(a: DecodeCmd) -> Result<(), CliError> {
    let layout = Layout::from_name(&a.opts.layout)?;
    // Check every ID before printing any, so a bad one leaves no partial output.
    let mut rows = Vec::with_capacity(a.ids.len());
    for text in &a.ids {
        let id = polyflake::parse_id(text)?;
        rows.push((id, layout.decode(id, a.opts.epoch_ms)?));
    }
    emit(|out| match a.format {
        Format::Plain => rows.iter().try_for_each(|(id, d)| {
            writeln!(
                out,
                "{id}  time={}  unix_ms={}  node={}  sequence={}",
                timefmt::iso_utc(d.timestamp_ms),
                d.timestamp_ms,
                d.node_id,
                d.sequence
            )
        }),
        Format::Json => {
            let v: Vec<_> = rows
                .iter()
                .map(|(id, d)| {
                    json!({
                        "id": format_id(*id),
                        "time": timefmt::iso_utc(d.timestamp_ms),
                        "unix_ms": d.timestamp_ms,
                        "node_id": d.node_id,
                        "sequence": d.sequence,
                    })
                })
                .collect();
            writeln!(out, "{}", serde_json::Value::Array(v))
        }
    })
}

fn openapi(a: OpenapiArgs) -> Result<(), CliError> {
    let max_count = polyflake::batch_len(a.max_count)?.max(1);
    let doc = serve::openapi_document(max_count);
    let text = serde_json::to_string_pretty(&doc)
        .map_err(|e| CliError::Runtime(format!("cannot write the OpenAPI document: {e}")))?;
    emit(|out| writeln!(out, "{text}"))
}

fn layouts(a: LayoutsArgs) -> Result<(), CliError> {
    emit(|out| match a.format {
        Format::Plain => {
            writeln!(
                out,
                "{:<12} {:<10} {:>8} {:>7} {:>10}",
                "NAME", "T/N/S", "YEARS", "NODES", "IDS/MS"
            )?;
            for (name, l) in Layout::PRESETS {
                writeln!(
                    out,
                    "{:<12} {:<10} {:>8.2} {:>7} {:>10}",
                    name,
                    l.to_string(),
                    l.years(),
                    l.max_node_id() + 1,
                    l.ids_per_ms()
                )?;
            }
            Ok(())
        }
        Format::Json => {
            let v: Vec<_> = Layout::PRESETS
                .iter()
                .map(|(name, l)| {
                    json!({
                        "name": name,
                        "timestamp_bits": l.timestamp_bits(),
                        "node_bits": l.node_bits(),
                        "sequence_bits": l.sequence_bits(),
                        "years": l.years(),
                        "nodes": l.max_node_id() + 1,
                        "ids_per_ms": l.ids_per_ms(),
                        "max_elapsed_ms": l.max_elapsed_ms(),
                    })
                })
                .collect();
            writeln!(out, "{}", serde_json::Value::Array(v))
        }
    })
}
