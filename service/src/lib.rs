//! The polyflake HTTP service, what `polyflake serve` runs: the router and its handlers
//! (`POST /v1/ids`, `GET /v1/ids/{id}`, `GET /v1/health`, `GET /metrics`, `GET /openapi.json`),
//! the shared state, the accept loop with its connection limits, request parsing, the OpenAPI
//! description, the Prometheus metrics and the test clock. The fuzz targets (`verify/fuzz/`) call the
//! same request parsing ([`request`]) and the same router ([`router_for`]) the running service
//! uses.
//!
//! Every rule about IDs is the core's (`polyflake` crate); this crate reads requests, calls the
//! core and answers.
//!
//! ## Decisions
//!
//! - **The service takes generators already built** ([`Generators`]: the 64-bit
//!   `polyflake::Generator`, and the UUIDv7 and ULID generators a `polyflake::TimeIdBuilder`
//!   makes) and its settings as a plain struct ([`Config`]); [`run`] serves until SIGTERM or
//!   SIGINT. Where the node id comes from (leases, stores, flags) is the caller's business: this
//!   crate takes the core without its remote stores and has no argument parser (no clap).
//! - **The CLI depends on this crate, never the reverse.** What both need has its one copy here:
//!   the ID formats ([`timeid::IdFormat`], `decode`'s format detection), the ISO-8601 formatter
//!   ([`timefmt::iso_utc`]), the restart-guard notice ([`guardwait`], said by `next` and by the
//!   service), and the core-error-to-HTTP-status mapping ([`error::http_status`]). The CLI
//!   keeps its arguments (`ServeArgs` with clap), its error type and exit codes, and maps
//!   [`ServiceError`] onto them.
//! - **Messages stay the command's**: the banner, the heal and restart-guard notices and the
//!   stop line say `polyflake serve:` as they did before the split, and the CLI checks its
//!   flags (with their names in the message) before calling [`run`], which checks the same
//!   settings again in its own words ([`ServiceError::Config`]) for other callers.
//! - **The test clock is this crate's** ([`clock::OffsetClock`]): the caller builds the
//!   generators on it and passes it in [`Config::test_clock`], which also adds
//!   `POST /v1/admin/clock` (loopback only).
//! - **The workspace hack** (.build/hack/) is an optional dependency behind the `workspace-hack`
//!   feature (off by default, as in the Python, Node and Java crates), which also takes the
//!   core's default features: `cargo build -p polyflake-service --features
//!   polyflake-service/workspace-hack` compiles the workspace's one set of features. The CLI
//!   (whose `stores` feature brings both) and the fuzz build (no remote store, no gRPC or TLS
//!   stack on nightly) take this crate without it.

#![deny(missing_docs)]

pub mod clock;
mod conns;
pub mod error;
pub mod guardwait;
mod metrics;
pub mod openapi;
pub mod request;
mod serve;
pub mod timefmt;
pub mod timeid;

pub use error::{http_status, ServiceError};
pub use request::{ApiError, BODY_LIMIT};
pub use serve::{openapi_document, router_for, run, Config, Generators, MAX_TIMEOUT_MS};
