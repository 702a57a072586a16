//! `polyflake`: mint and decode polyflake IDs from a shell, list the layouts, and serve IDs over
//! HTTP. Every rule about IDs is the core's (`polyflake` crate); this binary parses arguments,
//! calls the core and prints.

#![deny(missing_docs)]

mod inspect;

use clap::{error::ErrorKind as ClapErrorKind, Args, Parser, Subcommand, ValueEnum};
use polyflake::{Issuer, Layout};
use polyflake_cli::error::CliError;
use polyflake_cli::options::{DecodeArgs, GenArgs, NodeArgs};
use polyflake_cli::{error, serve};
use polyflake_service::timeid::{decode_text, IdFormat};
use polyflake_service::{guardwait, timefmt};
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
    /// Mint IDs (64-bit by default, or UUIDv7 or ULID) and print them, one per line (or as
    /// JSON).
    Next(NextArgs),
    /// Decode IDs: time (ISO-8601 UTC), Unix ms, and node and sequence (64-bit IDs) or the
    /// random fields (UUIDv7, ULID); the format is told from the text.
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

/// The output style of every command (`--output`).
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
    /// The ID format: snowflake (the 64-bit ID), uuidv7 (RFC 9562) or ulid. The last two need
    /// no node id: they take no node source, --layout or --epoch-ms. (`--format plain|json`,
    /// the old spelling of --output, is still read as --output.)
    #[arg(long, value_name = "snowflake|uuidv7|ulid", value_parser = next_format,
          default_value = "snowflake")]
    format: NextFormat,
    /// Output style.
    #[arg(long, value_enum)]
    output: Option<Format>,
}

/// `next --format`: an ID format, or (the old spelling) an output style.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum NextFormat {
    Id(IdFormat),
    Style(Format),
}

fn next_format(text: &str) -> Result<NextFormat, String> {
    if let Some(f) = IdFormat::from_name(text) {
        return Ok(NextFormat::Id(f));
    }
    match text {
        "plain" => Ok(NextFormat::Style(Format::Plain)),
        "json" => Ok(NextFormat::Style(Format::Json)),
        _ => Err(format!(
            "{text:?} is not an ID format: use {} (the output style is --output plain|json)",
            IdFormat::choices()
        )),
    }
}

#[derive(Debug, Args)]
struct DecodeCmd {
    /// The IDs to decode: 64-bit IDs in decimal, UUIDv7 texts (36 characters, any case) or
    /// ULID texts (26 characters of Crockford's base32, any case), mixed as you like.
    #[arg(value_name = "ID", required = true, allow_negative_numbers = true)]
    ids: Vec<String>,
    #[command(flatten)]
    opts: DecodeArgs,
    /// Output style (`--format` is the old spelling).
    #[arg(long = "output", alias = "format", value_enum, default_value_t = Format::Plain)]
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
    /// Output style (`--format` is the old spelling).
    #[arg(long = "output", alias = "format", value_enum, default_value_t = Format::Plain)]
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
    let (format, output) = match (a.format, a.output) {
        (NextFormat::Id(f), out) => (f, out.unwrap_or(Format::Plain)),
        (NextFormat::Style(style), None) => (IdFormat::Snowflake, style),
        (NextFormat::Style(style), Some(out)) if style == out => (IdFormat::Snowflake, out),
        (NextFormat::Style(_), Some(_)) => {
            return Err(CliError::Usage(
                "--format plain|json (the old spelling of --output) disagrees with --output: give --output only".into(),
            ))
        }
    };
    let n = polyflake::batch_len(a.count)?;
    let (texts, json) = if format == IdFormat::Snowflake {
        let g = a.gen.build(&a.node, None)?;
        // A freshly leased slot may sit behind its previous holder's high-water mark (the
        // restart guard): the core refuses until the clock passes it; a command waits it out.
        // A guard longer than the wait limit (a fenced store, a clock far behind) is refused at
        // once rather than after the whole limit.
        // A wait a person would notice (over half a second: a new slot waits one whole
        // reserve, 5 s by default) is said on stderr, with why and how to avoid it.
        let h = g.health();
        let remaining = h.lease.as_ref().map_or(0, |l| l.guard_remaining_ms);
        if Duration::from_millis(remaining) > GUARD_WAIT_LIMIT {
            g.next_id()?;
        }
        if let Some(line) = guardwait::notice_from(&h, "next", a.node.lease_reserve_ms) {
            eprintln!("{line}");
        }
        g.wait_ready(GUARD_WAIT_LIMIT)?;
        let (ids, clock) = mint(&g, n)?;
        let v = json!({"ids": ids, "node_id": g.node_id(), "epoch_ms": g.epoch_ms(), "clock_source": clock});
        (ids, v)
    } else {
        if a.node.is_given() || a.gen.layout_given() {
            return Err(CliError::Usage(format!(
                "--format {format} takes no node source, lease flag, --layout or --epoch-ms: a {format} needs no node id"
            )));
        }
        let b = a.gen.time_id_builder(None)?;
        let typed = |e| a.gen.as_typed(e);
        let (ids, clock) = match format {
            IdFormat::Ulid => mint(&b.build_ulid().map_err(typed)?, n)?,
            _ => mint(&b.build_uuid7().map_err(typed)?, n)?,
        };
        let v = json!({"format": format.name(), "ids": ids, "clock_source": clock});
        (ids, v)
    };
    emit(|out| match output {
        Format::Plain => texts.iter().try_for_each(|id| writeln!(out, "{id}")),
        Format::Json => writeln!(out, "{json}"),
    })
}

/// `n` IDs as text (one batch through the core), and the generator's clock source.
fn mint<G: Issuer>(g: &G, n: usize) -> Result<(Vec<String>, &'static str), CliError> {
    let mut ids = vec![G::Id::default(); n];
    g.next_ids(&mut ids)?;
    let texts = ids.into_iter().map(G::format_id).collect();
    Ok((texts, g.health().clock_source.name()))
}

fn decode(a: DecodeCmd) -> Result<(), CliError> {
    let layout = Layout::from_name(&a.opts.layout)?;
    // Check every ID before printing any, so a bad one leaves no partial output.
    let rows = a
        .ids
        .iter()
        .map(|text| decode_text(text, &layout, a.opts.epoch_ms))
        .collect::<Result<Vec<_>, _>>()?;
    emit(|out| match a.format {
        Format::Plain => rows.iter().try_for_each(|r| {
            let time = timefmt::iso_utc(r.unix_ms);
            match &r.fields {
                Some(d) => writeln!(
                    out,
                    "{}  time={time}  unix_ms={}  node={}  sequence={}",
                    r.text, r.unix_ms, d.node_id, d.sequence
                ),
                None => writeln!(
                    out,
                    "{}  format={}  time={time}  unix_ms={}",
                    r.text, r.format, r.unix_ms
                ),
            }
        }),
        Format::Json => {
            let v: Vec<_> = rows
                .iter()
                .map(|r| {
                    let mut v = json!({"format": r.format.name(), "id": r.text, "time": timefmt::iso_utc(r.unix_ms), "unix_ms": r.unix_ms});
                    if let Some(d) = &r.fields {
                        v["node_id"] = d.node_id.into();
                        v["sequence"] = d.sequence.into();
                    }
                    v
                })
                .collect();
            writeln!(out, "{}", serde_json::Value::Array(v))
        }
    })
}

fn openapi(a: OpenapiArgs) -> Result<(), CliError> {
    let max_count = polyflake::batch_len(a.max_count)?.max(1);
    let doc = polyflake_service::openapi_document(max_count);
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
