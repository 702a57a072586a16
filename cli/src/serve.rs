//! `polyflake serve`: its flags, and the adapter that builds the generators from them and runs
//! the HTTP service (the `polyflake-service` crate, service/). The endpoints, limits and error
//! shape are in `docs/cli.md`; how the service works is in that crate's docs.
//!
//! The flags are checked here, in their own words, before any generator is built (a lease is
//! taken only for a command line that can serve); the service checks its settings again for
//! other callers.

use crate::error::CliError;
use crate::options::{GenArgs, NodeArgs};
use clap::Args;
use polyflake::Clock;
use polyflake_service::clock::OffsetClock;
use polyflake_service::{Config, Generators, ServiceError, MAX_TIMEOUT_MS};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

/// `polyflake serve` options.
#[derive(Debug, Clone, Args)]
pub struct ServeArgs {
    /// The address to listen on (port 0 picks a free port; the chosen address is printed).
    #[arg(long, value_name = "ADDR:PORT", default_value = "127.0.0.1:8080")]
    pub listen: SocketAddr,
    /// Where the node id comes from.
    #[command(flatten)]
    pub node: NodeArgs,
    /// The generator's settings.
    #[command(flatten)]
    pub gen: GenArgs,
    /// The largest `count` one request may ask for.
    #[arg(
        long,
        value_name = "N",
        default_value_t = 4096,
        allow_negative_numbers = true
    )]
    pub max_count: i128,
    /// The most connections open at once (lowered to fit the open-file limit). At the cap, the
    /// connection quiet the longest with no request being answered is closed to make room; if
    /// every connection is answering a request, the newcomer gets 503.
    #[arg(long, value_name = "N", default_value_t = 4096,
          value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    pub max_connections: u64,
    /// Once a request's first byte arrives, its head (request line and headers) must be
    /// complete within this many ms, or the connection is closed.
    #[arg(long, value_name = "MS", default_value_t = 10_000,
          value_parser = clap::value_parser!(u64).range(1..=MAX_TIMEOUT_MS))]
    pub header_read_timeout_ms: u64,
    /// A connection on which no byte moves either way for this many ms is closed (before or
    /// between requests, a stalled body, a client that stopped reading).
    #[arg(long, value_name = "MS", default_value_t = 60_000,
          value_parser = clap::value_parser!(u64).range(1..=MAX_TIMEOUT_MS))]
    pub idle_timeout_ms: u64,
    /// Testing only: read time from the system clock plus an offset that
    /// `POST /v1/admin/clock {"advance_ms": n}` or `{"offset_ms": n}` moves. Loopback only.
    #[arg(long, hide = true)]
    pub test_clock: bool,
}

/// Run the service until SIGTERM or SIGINT, then drop the generator (freeing a leased node id).
pub fn run(args: ServeArgs) -> Result<(), CliError> {
    // The cap must itself be a batch size the core accepts, and at least 1.
    let max_count = polyflake::batch_len(args.max_count)?;
    if max_count == 0 {
        return Err(CliError::Usage(
            "--max-count must be at least 1".to_string(),
        ));
    }
    if args.test_clock && !args.listen.ip().is_loopback() {
        return Err(CliError::Usage(format!(
            "--test-clock listens on loopback only, not {}",
            args.listen
        )));
    }
    let test_clock = args.test_clock.then(OffsetClock::default);
    let clock = test_clock.clone().map(|c| Arc::new(c) as Arc<dyn Clock>);
    let time_ids = args.gen.time_id_builder(clock.clone())?;
    let gen = args.gen.build(&args.node, clock)?;
    let gens = Generators::new(gen, time_ids).map_err(|e| args.gen.as_typed(e))?;
    let config = Config {
        listen: args.listen,
        max_count,
        max_connections: args.max_connections,
        header_read_timeout: Duration::from_millis(args.header_read_timeout_ms),
        idle_timeout: Duration::from_millis(args.idle_timeout_ms),
        test_clock,
        reserve_ms: args.node.lease_reserve_ms,
    };
    polyflake_service::run(gens, config).map_err(|e| match e {
        ServiceError::Config(m) => CliError::Usage(m),
        ServiceError::Io(m) => CliError::Runtime(m),
    })
}
