//! The service `polyflake serve` runs: IDs over HTTP/1.1 (axum on tokio and hyper), for fleets
//! that cannot embed the library. The endpoints, limits and error shape are in `docs/cli.md`
//! and in the OpenAPI description the `#[utoipa::path]` annotations below generate
//! (`GET /openapi.json`).
//!
//! Waiting: one ID is first tried without waiting on the async worker (`try_next_id`); only if
//! that would wait, and for every strict batch, the call moves to tokio's blocking pool, so no
//! async worker ever sleeps. Monotonic generators never wait and are called inline.
//!
//! Shutdown (SIGTERM, SIGINT) cuts every waiting call: each blocking call runs under the core's
//! `interruptible` hook, which answers "stop" once shutdown has begun (asked at least every
//! 20 ms while the call waits, and at its first wait, so a call that starts later never waits),
//! and the 64-bit generator's `interrupt_waits` is called at once. A cut call answers 503
//! `INTERRUPTED`, having issued nothing; the runtime, which waits for blocking calls when it is
//! dropped, then stops at once.
//! Connections (header-read and idle timeouts, the connection cap) are `conns.rs`'s.
//!
//! ## Decisions
//!
//! - **One UUIDv7 and one ULID generator beside the 64-bit one, made at start** with the same
//!   mode, wait budget, forward-step settings and clock (the test clock included), so a bad
//!   setting fails at start and the first request pays no construction; they take no lease.
//!   `POST /v1/ids` takes `"format"` beside `"count"` (the same cap and waiting rules) and
//!   answers `{"format", "ids"}`; the 64-bit answer is unchanged, so old clients see no
//!   difference. `/v1/health` and `/metrics` describe the 64-bit generator (the others have no
//!   node id, lease or layout; their refusals count in `polyflake_ids_refused_total`).
//! - **The service is a translation**: it issues through the core's `Issuer` (one generic `mint`,
//!   not one per format); `/v1/health` is the core's `Health::fields()` with the counters nested
//!   and the lease's `phase` as `state`; statuses come from `ErrorKind::category()`; every error
//!   body is `ApiError::body()`, whoever writes it (the router, the fallback, the connection
//!   layer).

use crate::clock::OffsetClock;
use crate::conns::{self, Limits};
use crate::error::ServiceError;
use crate::guardwait::GuardWatch;
use crate::metrics::Metrics;
use crate::openapi;
use crate::request::{self, ApiError, BODY_LIMIT};
use crate::timefmt::iso_utc;
use crate::timeid::IdFormat;
use axum::body::{Body, Bytes};
use axum::extract::rejection::{BytesRejection, PathRejection};
use axum::extract::{ConnectInfo, DefaultBodyLimit, Path, State};
use axum::http::{header, HeaderMap, HeaderValue, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use polyflake::{
    format_id, Clock, Generator, Issuer, Mode, TimeIdBuilder, UlidGenerator, Uuid7Generator,
};
use serde_json::json;
use std::io::Write as _;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;
use utoipa::OpenApi;

/// How long graceful shutdown waits for open requests before closing them.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(10);

/// How often the service looks at its generator's health for a heal or a restart-guard wait to
/// report.
const WATCH_PERIOD: Duration = Duration::from_millis(250);

/// Descriptors kept back from the connection cap for everything else the process opens
/// (standard streams, the listener, the runtime, lease files, etcd connections, a refusal).
const RESERVED_FDS: u64 = 64;

/// The longest timeout [`Config`] accepts (a day, in ms), so deadlines never overflow.
pub const MAX_TIMEOUT_MS: u64 = 86_400_000;

/// The service's settings (the generators come apart, in [`Generators`]).
#[derive(Debug, Clone)]
pub struct Config {
    /// The address to listen on (port 0 picks a free port; the chosen address is printed).
    pub listen: SocketAddr,
    /// The largest `count` one request may ask for: from 1 to the core's `MAX_BATCH`.
    pub max_count: usize,
    /// The most connections open at once (lowered to fit the open-file limit, which is first
    /// raised to its hard limit). At the cap, the connection quiet the longest with no request
    /// being answered is closed to make room; if every connection is answering a request, the
    /// newcomer gets 503.
    pub max_connections: u64,
    /// Once a request's first byte arrives, its head must be complete within this time, or the
    /// connection is closed. At most [`MAX_TIMEOUT_MS`].
    pub header_read_timeout: Duration,
    /// A connection on which no byte moves either way for this long is closed. At most
    /// [`MAX_TIMEOUT_MS`].
    pub idle_timeout: Duration,
    /// Testing only: the clock the generators were built on, which `POST /v1/admin/clock`
    /// moves (that route exists only with it). Loopback addresses only.
    pub test_clock: Option<OffsetClock>,
    /// The lease's reserve in ms (what a new slot's restart guard waits), for the notice said
    /// on stderr when that guard holds requests back.
    pub reserve_ms: u64,
}

/// The generators the service issues from: the 64-bit one and one UUIDv7 and one ULID generator
/// beside it, made before the service starts (so a bad setting fails at start and the first
/// request pays no construction) with the 64-bit one's mode, wait budget and clock.
pub struct Generators {
    /// The 64-bit generator (`/v1/health` and `/metrics` describe it).
    pub snowflake: Generator,
    /// The UUIDv7 generator.
    pub uuid7: Uuid7Generator,
    /// The ULID generator.
    pub ulid: UlidGenerator,
}

impl Generators {
    /// The 64-bit generator `snowflake`, and the UUIDv7 and ULID generators `time_ids` makes
    /// (the UUIDv7 one first: its error is the one returned when both would fail).
    pub fn new(snowflake: Generator, time_ids: TimeIdBuilder) -> polyflake::Result<Generators> {
        Ok(Generators {
            snowflake,
            uuid7: time_ids.clone().build_uuid7()?,
            ulid: time_ids.build_ulid()?,
        })
    }
}

/// What every handler shares.
struct AppState {
    /// The 64-bit generator (a lost lease heals in the core unless `--no-heal`).
    gen: Arc<Generator>,
    uuid7: Uuid7Generator,
    ulid: UlidGenerator,
    max_count: usize,
    test_clock: Option<OffsetClock>,
    metrics: Arc<Metrics>,
    /// `GET /openapi.json`, with this service's count cap.
    openapi: String,
    /// Set when shutdown begins: every waiting generator call is then cut (see the module docs).
    stopping: AtomicBool,
    /// The lease's reserve in ms (for the restart-guard notice).
    reserve_ms: u64,
}

type Shared = Arc<AppState>;

impl AppState {
    /// The state for these generators.
    fn new(
        gens: Generators,
        max_count: usize,
        test_clock: Option<OffsetClock>,
        reserve_ms: u64,
    ) -> AppState {
        let gen = Arc::new(gens.snowflake);
        AppState {
            metrics: Arc::new(Metrics::new(gen.clone())),
            gen,
            uuid7: gens.uuid7,
            ulid: gens.ulid,
            max_count,
            test_clock,
            openapi: openapi_document(max_count).to_string(),
            stopping: AtomicBool::new(false),
            reserve_ms,
        }
    }

    /// Shutdown has begun: cut every generator call waiting now, and make later ones fail at
    /// their first wait instead of waiting.
    fn begin_stopping(&self) {
        self.stopping.store(true, Ordering::SeqCst);
        // The 64-bit generator's calls stop at once; the UUIDv7 and ULID generators' at the
        // hook's next check, within 20 ms.
        self.gen.interrupt_waits();
    }

    /// True once shutdown has begun (the hook every blocking call runs under).
    fn is_stopping(&self) -> bool {
        self.stopping.load(Ordering::SeqCst)
    }
}

/// The OpenAPI 3.1 description of the service, with this count cap, as JSON.
///
/// `cli/openapi.json` (checked in with the CLI, `polyflake openapi`) is this document for the default cap (4,096), pretty-printed.
pub fn openapi_document(max_count: usize) -> serde_json::Value {
    let doc = serde_json::to_value(ApiDoc::openapi()).unwrap_or_default();
    openapi::finish(doc, max_count)
}

/// The description the `#[utoipa::path]` annotations below generate.
#[derive(OpenApi)]
#[openapi(
    info(
        title = "polyflake",
        description = "Unique, time-sortable 64-bit IDs over HTTP (`polyflake serve`). IDs are decimal strings; every error is `{\"error\": {\"code\", \"message\"}}`.",
        license(name = "MIT OR Apache-2.0"),
    ),
    paths(issue, decode_one, health, metrics, openapi_json),
    components(schemas(
        openapi::IdsRequest,
        openapi::IdsResponse,
        openapi::IdText,
        openapi::Uuid7IdsResponse,
        openapi::Uuid7Text,
        openapi::UlidIdsResponse,
        openapi::UlidText,
        openapi::DecodedId,
        openapi::HealthResponse,
        openapi::ClockSyncStatus,
        openapi::LeaseStatus,
        openapi::Counters,
        openapi::ErrorResponse,
        openapi::ErrorDetail,
    ))
)]
struct ApiDoc;

/// Run the service until SIGTERM or SIGINT, then drop the generators (freeing a leased node
/// id). The banner (the address bound, the generator's settings) is printed on stdout; heals,
/// restart-guard waits and the stop on stderr.
pub fn run(gens: Generators, config: Config) -> Result<(), ServiceError> {
    polyflake::batch_len(i128::try_from(config.max_count).unwrap_or(i128::MAX))
        .map_err(|e| ServiceError::Config(e.to_string()))?;
    if config.max_count == 0 {
        return Err(ServiceError::Config(
            "max_count must be at least 1".to_string(),
        ));
    }
    if config.test_clock.is_some() && !config.listen.ip().is_loopback() {
        return Err(ServiceError::Config(format!(
            "the test clock listens on loopback only, not {}",
            config.listen
        )));
    }
    let longest = Duration::from_millis(MAX_TIMEOUT_MS);
    if config.header_read_timeout > longest || config.idle_timeout > longest {
        return Err(ServiceError::Config(format!(
            "the header-read and idle timeouts are at most {MAX_TIMEOUT_MS} ms"
        )));
    }
    let (max_connections, fd_note) = connection_cap(config.max_connections);
    let limits = Limits {
        max_connections,
        header_read_timeout: config.header_read_timeout,
        idle_timeout: config.idle_timeout,
    };
    let state = AppState::new(gens, config.max_count, config.test_clock, config.reserve_ms);
    let state = Arc::new(state);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| ServiceError::Io(format!("cannot start the async runtime: {e}")))?;
    let result = rt.block_on(serve(state.clone(), config.listen, limits, fd_note));
    // Every connection is closed: the router and the handlers have let go of the state, so this
    // drop is the generator's last (a leased node id is freed here).
    drop(rt);
    let node = state.gen.node_id();
    drop(state);
    if result.is_ok() {
        eprintln!("polyflake serve: stopped; generator for node {node} dropped");
    }
    result
}

/// The connection cap that fits the open-file limit (raised to its hard limit first, as a
/// server should), and a note for the banner when the requested cap had to be lowered.
fn connection_cap(requested: u64) -> (usize, String) {
    let limit = raise_open_file_limit();
    let cap = limit.map_or(requested, |l| {
        requested.min(l.saturating_sub(RESERVED_FDS).max(1))
    });
    let note = match limit {
        Some(l) if cap < requested => {
            format!(" (lowered from {requested}: the open-file limit is {l})")
        }
        _ => String::new(),
    };
    (usize::try_from(cap).unwrap_or(usize::MAX), note)
}

/// Raise the soft RLIMIT_NOFILE to the hard one; the soft limit in force afterwards.
fn raise_open_file_limit() -> Option<u64> {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes into the struct we own.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) } != 0 {
        return None;
    }
    // RLIM_INFINITY is not a valid descriptor count (the kernel caps at nr_open).
    let target = lim.rlim_max.min(1 << 20);
    if lim.rlim_cur < target {
        let raised = libc::rlimit {
            rlim_cur: target,
            rlim_max: lim.rlim_max,
        };
        // SAFETY: setrlimit reads the struct we own.
        if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &raised) } == 0 {
            return Some(target);
        }
    }
    Some(lim.rlim_cur)
}

/// The service's router over this generator (and the UUIDv7 and ULID generators `time_ids`
/// makes), without the test clock: what [`run`] answers with, for the fuzz targets (which
/// drive it in process) and for embedding.
pub fn router_for(
    gen: Generator,
    time_ids: TimeIdBuilder,
    max_count: usize,
) -> Result<Router, polyflake::Error> {
    let gens = Generators::new(gen, time_ids)?;
    let state = AppState::new(gens, max_count.max(1), None, polyflake::DEFAULT_RESERVE_MS);
    Ok(router(Arc::new(state)))
}

fn router(state: Shared) -> Router {
    let mut app = Router::new()
        .route("/v1/ids", post(issue))
        .route("/v1/ids/{id}", get(decode_one))
        .route("/v1/health", get(health))
        .route("/metrics", get(metrics))
        .route("/openapi.json", get(openapi_json));
    if state.test_clock.is_some() {
        app = app.route("/v1/admin/clock", post(admin_clock));
    }
    app.fallback(not_found)
        .layer(DefaultBodyLimit::max(BODY_LIMIT))
        .layer(axum::middleware::map_response_with_state(
            state.clone(),
            finish,
        ))
        .with_state(state)
}

async fn serve(
    state: Shared,
    listen: SocketAddr,
    limits: Limits,
    fd_note: String,
) -> Result<(), ServiceError> {
    let listener = tokio::net::TcpListener::bind(listen)
        .await
        .map_err(|e| ServiceError::Io(format!("cannot listen on {listen}: {e}")))?;
    let addr = listener
        .local_addr()
        .map_err(|e| ServiceError::Io(format!("cannot read the bound address: {e}")))?;
    // Signals are caught from before the banner: a client may signal as soon as it reads it.
    let signal = shutdown_signal();
    let g = &state.gen;
    let layout = g.layout();
    let h = g.health();
    let source = match &h.lease {
        Some(l) if l.kind == polyflake::LeaseKind::Host => {
            format!("{} (restart guard: mark {})", h.source.name(), l.store)
        }
        Some(l) => format!("{} lease {} slot {}", l.kind.name(), l.store, l.slot),
        None if !h.restart_guard_note.is_empty() => {
            format!("{} (no restart guard)", h.source.name())
        }
        None => h.source.name().to_string(),
    };
    println!(
        "polyflake serve: listening on http://{addr} (node {} from {source}, {}, clock {}, layout {}, epoch_ms {}, max count {}, max connections {}{fd_note}{})",
        g.node_id(),
        g.mode().name(),
        h.clock_source.name(),
        layout.preset_name().map_or_else(|| layout.to_string(), str::to_string),
        g.epoch_ms(),
        state.max_count,
        limits.max_connections,
        if state.test_clock.is_some() { ", TEST CLOCK" } else { "" },
    );
    let _ = std::io::stdout().flush();

    let app = router(state.clone());
    // A restart-guard wait of over half a second (503 meanwhile) is said on stderr, once per
    // wait: now, after a heal, and when the clock steps back under the slot (seen within a
    // quarter of a second).
    let mut guard_watch = GuardWatch::default();
    let reserve_ms = state.reserve_ms;
    if let Some(line) = guard_watch.check(&state.gen, "serve", reserve_ms) {
        eprintln!("{line}");
    }
    // A lost lease heals in the core (the new slot's restart guard answers 503 until the clock
    // passes it): each heal is said on stderr, as is each long guard wait.
    let watcher = state.clone();
    tokio::spawn(async move {
        let mut heals = 0;
        loop {
            tokio::time::sleep(WATCH_PERIOD).await;
            if watcher.is_stopping() {
                break;
            }
            if let Some(l) = watcher.gen.health().lease {
                if l.heals > heals {
                    heals = l.heals;
                    eprintln!("polyflake serve: {}", l.last_heal);
                    guard_watch.reset();
                }
            }
            if let Some(line) = guard_watch.check(&watcher.gen, "serve", reserve_ms) {
                eprintln!("{line}");
            }
        }
    });
    let signalled = Arc::new(tokio::sync::Notify::new());
    let notify = signalled.clone();
    let stopping = state.clone();
    let server = conns::serve(listener, app, state.metrics.clone(), limits, async move {
        let name = signal.await;
        stopping.begin_stopping();
        eprintln!("polyflake serve: {name}: finishing open requests (a call waiting for the clock is cut: 503 INTERRUPTED), then stopping");
        notify.notify_one();
    });
    tokio::select! {
        () = server => Ok(()),
        _ = async { signalled.notified().await; tokio::time::sleep(SHUTDOWN_GRACE).await } => {
            eprintln!("polyflake serve: requests still open after {SHUTDOWN_GRACE:?}: closing them");
            Ok(())
        }
    }
}

/// SIGTERM and SIGINT, caught from now on (so a signal that comes before the returned future is
/// first polled is not fatal): the future answers the name of the first to come.
fn shutdown_signal() -> impl std::future::Future<Output = &'static str> {
    use tokio::signal::unix::{signal, SignalKind};
    let term = signal(SignalKind::terminate());
    let int = signal(SignalKind::interrupt());
    async move {
        match (term, int) {
            (Ok(mut term), Ok(mut int)) => tokio::select! {
                _ = term.recv() => "SIGTERM",
                _ = int.recv() => "SIGINT",
            },
            _ => {
                let _ = tokio::signal::ctrl_c().await;
                "SIGINT"
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Responses

impl IntoResponse for ApiError {
    /// `{"error": {"code": ..., "message": ...}}` with its status (and `Retry-After: 1` on a 503).
    fn into_response(self) -> Response {
        let mut resp = (self.status, JSON, self.body()).into_response();
        if self.status == StatusCode::SERVICE_UNAVAILABLE {
            resp.headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
        }
        resp
    }
}

/// A JSON answer's Content-Type.
const JSON: [(header::HeaderName, &str); 1] = [(header::CONTENT_TYPE, "application/json")];

/// The last layer: any error answer that is not JSON yet (axum's own 405, a rejection the
/// handlers did not see) becomes the JSON error shape; every answer is counted.
async fn finish(State(state): State<Shared>, resp: Response) -> Response {
    let status = resp.status();
    let resp = if (status.is_client_error() || status.is_server_error())
        && !request::is_json(resp.headers().get(header::CONTENT_TYPE))
    {
        let (mut parts, body) = resp.into_parts();
        let text = axum::body::to_bytes(body, 4096)
            .await
            .map(|b| String::from_utf8_lossy(&b).trim().to_string())
            .unwrap_or_default();
        let body = ApiError::from_status(status, text).body();
        parts.headers.remove(header::CONTENT_LENGTH);
        parts.headers.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        Response::from_parts(parts, Body::from(body))
    } else {
        resp
    };
    state.metrics.count_response(resp.status().as_u16());
    resp
}

async fn not_found(method: Method, uri: Uri) -> Response {
    ApiError::new(
        StatusCode::NOT_FOUND,
        "NOT_FOUND",
        format!(
            "no route for {method} {}: try POST /v1/ids, GET /v1/ids/{{id}}, GET /v1/health, GET /metrics, GET /openapi.json",
            uri.path()
        ),
    )
    .into_response()
}

// ---------------------------------------------------------------------------------------------
// POST /v1/ids

/// The body, or the 413/400 for a body axum could not read (over the limit, a broken stream).
fn body_bytes(body: Result<Bytes, BytesRejection>) -> Result<Bytes, ApiError> {
    body.map_err(|rej| {
        if rej.status() == StatusCode::PAYLOAD_TOO_LARGE {
            ApiError::new(
                StatusCode::PAYLOAD_TOO_LARGE,
                "PAYLOAD_TOO_LARGE",
                format!("the request body is over the {BODY_LIMIT}-byte limit"),
            )
        } else {
            ApiError::new(StatusCode::BAD_REQUEST, "BAD_BODY", rej.body_text())
        }
    })
}

/// `count` IDs, as text, from the generator `pick` chooses: one is tried inline first, a
/// monotonic batch is made inline, and anything that may sleep runs on the blocking pool.
async fn mint<G, P>(state: &Shared, count: usize, pick: P) -> Result<Vec<String>, ApiError>
where
    G: Issuer + 'static,
    P: Fn(&AppState) -> &G + Send + 'static,
{
    let g = pick(state);
    let refused = |e: polyflake::Error| {
        state.metrics.ids_refused.inc();
        ApiError::core(&e)
    };
    type Call<Id> = Box<dyn FnOnce(&AppState) -> polyflake::Result<Vec<Id>> + Send>;
    let blocking: Call<G::Id> = if count == 1 {
        if let Some(id) = g.try_next_id().map_err(refused)? {
            return Ok(vec![G::format_id(id)]);
        }
        Box::new(move |s| pick(s).next_id().map(|id| vec![id]))
    } else {
        let mut ids = vec![G::Id::default(); count];
        if g.mode() == Mode::Monotonic {
            g.next_ids(&mut ids).map_err(refused)?;
            return Ok(ids.into_iter().map(G::format_id).collect());
        }
        Box::new(move |s| pick(s).next_ids(&mut ids).map(|()| ids))
    };
    state.metrics.blocking_calls.inc();
    let s = state.clone();
    let call = move || polyflake::interruptible(&|| s.is_stopping(), || blocking(&s));
    match tokio::task::spawn_blocking(call).await {
        Ok(r) => Ok(r.map_err(refused)?.into_iter().map(G::format_id).collect()),
        Err(e) => Err(ApiError::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "INTERNAL",
            format!("the generator call failed: {e}"),
        )),
    }
}

/// Mint IDs.
///
/// An empty body or `{}` asks for one 64-bit ID; `"format": "uuidv7"` or `"ulid"` asks for
/// UUIDv7s (RFC 9562) or ULIDs instead. A non-empty body needs `Content-Type:
/// application/json`, at most 16 KiB, no field but `count` and `format`, and no repeated key.
#[utoipa::path(
    post,
    path = "/v1/ids",
    request_body(content = openapi::IdsRequest, content_type = "application/json",
        description = "`{\"count\": n, \"format\": \"snowflake\"|\"uuidv7\"|\"ulid\"}` with n from 1 to the service's `--max-count`; optional"),
    responses(
        (status = 200, description = "The IDs: 64-bit IDs with their node id and epoch, or UUIDv7s or ULIDs with their format", body = openapi::IdsResponse),
        (status = 400, description = "Malformed JSON, not an object, an unknown field, a repeated key, a format that is not one of the three, or a count that is not an integer from 1 to the cap", body = openapi::ErrorResponse),
        (status = 413, description = "The body is over 16 KiB", body = openapi::ErrorResponse),
        (status = 415, description = "A body without `Content-Type: application/json`", body = openapi::ErrorResponse),
        (status = 503, description = "The generator refuses to issue now (clock behind or stuck, lead limit, lease not ready, expired or lost), or the service is stopping and cut the call while it waited (`INTERRUPTED`)", body = openapi::ErrorResponse,
            headers(("Retry-After" = String, description = "Seconds to wait: 1"))),
    ),
    tag = "ids"
)]
async fn issue(
    State(state): State<Shared>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, ApiError> {
    let req = body_bytes(body).and_then(|b| {
        request::ids_request(headers.get(header::CONTENT_TYPE), &b, state.max_count)
    })?;
    let ids = match req.format {
        IdFormat::Snowflake => mint(&state, req.count, |s| &*s.gen).await?,
        IdFormat::Uuid7 => mint(&state, req.count, |s| &s.uuid7).await?,
        IdFormat::Ulid => mint(&state, req.count, |s| &s.ulid).await?,
    };
    if req.format != IdFormat::Snowflake {
        let v = json!({"format": req.format.name(), "ids": ids});
        return Ok(axum::Json(v).into_response());
    }
    // The node id the IDs carry (the generator may have been replaced since they were minted).
    let g = &state.gen;
    let node_id = match ids.first().and_then(|t| t.parse::<u64>().ok()) {
        Some(id) => g.decode(id).map_or(g.node_id(), |d| d.node_id),
        None => g.node_id(),
    };
    let epoch_ms = g.epoch_ms();
    let ids = ids.into_iter().map(openapi::IdText).collect();
    let v = openapi::IdsResponse {
        ids,
        node_id,
        epoch_ms,
    };
    Ok(axum::Json(v).into_response())
}

// ---------------------------------------------------------------------------------------------
// GET /v1/ids/{id}, /v1/health, /metrics, /openapi.json

/// Decode an ID with the service's layout and epoch.
#[utoipa::path(
    get,
    path = "/v1/ids/{id}",
    params(("id" = String, Path, description = "The ID in decimal: digits only (leading zeros allowed), below 2^63")),
    responses(
        (status = 200, description = "The ID's fields", body = openapi::DecodedId),
        (status = 400, description = "Not an ID: not decimal digits, or 2^63 or more", body = openapi::ErrorResponse),
        (status = 404, description = "No ID in the path (`/v1/ids/`)", body = openapi::ErrorResponse),
    ),
    tag = "ids"
)]
async fn decode_one(
    State(state): State<Shared>,
    path: Result<Path<String>, PathRejection>,
) -> Result<Response, ApiError> {
    let Path(text) =
        path.map_err(|rej| ApiError::new(StatusCode::BAD_REQUEST, "INVALID_ID", rej.body_text()))?;
    let id = request::path_id(&text)?;
    let d = state.gen.decode(id).map_err(|e| ApiError::core(&e))?;
    let v = json!({
        "id": format_id(id),
        "time": iso_utc(d.timestamp_ms),
        "unix_ms": d.timestamp_ms,
        "node_id": d.node_id,
        "sequence": d.sequence,
    });
    Ok(axum::Json(v).into_response())
}

/// The generator's health: 200 when it can issue now, else 503 with the same body.
#[utoipa::path(
    get,
    path = "/v1/health",
    responses(
        (status = 200, description = "Healthy: the generator can issue now", body = openapi::HealthResponse),
        (status = 503, description = "Not now: the clock is behind or stuck, the lease is lost or expired, or the restart guard waits", body = openapi::HealthResponse,
            headers(("Retry-After" = String, description = "Seconds to wait: 1"))),
    ),
    tag = "service"
)]
async fn health(State(state): State<Shared>) -> Response {
    let g = &state.gen;
    let h = g.health();
    let mut body = json_value(polyflake::Value::Fields(h.fields()));
    // The snapshot's counters (the core's counter metrics, by field name) are nested.
    let counters: serde_json::Map<_, _> = polyflake::HEALTH_METRICS
        .iter()
        .filter(|m| m.kind == polyflake::MetricKind::Counter)
        .filter_map(|m| {
            body.as_object_mut()?
                .remove_entry(m.name.strip_prefix("polyflake_")?)
        })
        .collect();
    body["counters"] = counters.into();
    body["layout"] = g.layout().to_string().into();
    body["epoch_ms"] = g.epoch_ms().into();
    if let Some(lease) = body["lease"].as_object_mut() {
        lease.retain(|k, _| !LEASE_HIDDEN.contains(&k.as_str()));
        let phase = lease.remove("phase").unwrap_or_default();
        lease.insert("state".to_string(), phase);
    }
    let status = if h.ok {
        StatusCode::OK
    } else {
        StatusCode::SERVICE_UNAVAILABLE
    };
    let mut resp = (status, axum::Json(body)).into_response();
    if !h.ok {
        resp.headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
    }
    resp
}

/// The lease fields of the core's snapshot that `GET /v1/health` leaves out (its `phase` is
/// the answer's `state`).
const LEASE_HIDDEN: [&str; 4] = ["guard_note", "expired", "renewals", "failures"];

/// A core value as JSON.
fn json_value(v: polyflake::Value) -> serde_json::Value {
    use polyflake::Value as V;
    match v {
        V::Int(n) => serde_json::Number::from_i128(n).map_or(serde_json::Value::Null, Into::into),
        V::Float(x) => x.into(),
        V::Bool(b) => b.into(),
        V::Text(t) => t.into(),
        V::Null => serde_json::Value::Null,
        V::Fields(f) => f
            .into_iter()
            .map(|(k, v)| (k.to_string(), json_value(v)))
            .collect(),
    }
}

/// Prometheus text (exposition format 0.0.4): the generator's counters and gauges, the lease,
/// responses by status and connections.
#[utoipa::path(get, path = "/metrics", tag = "service", responses((status = 200,
    description = "The metrics", body = String, content_type = "text/plain; version=0.0.4; charset=utf-8")))]
async fn metrics(State(state): State<Shared>) -> Result<Response, ApiError> {
    let text = state.metrics.text().map_err(|_| {
        let message = "the metrics could not be encoded";
        ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "INTERNAL", message)
    })?;
    Ok(([(header::CONTENT_TYPE, crate::metrics::CONTENT_TYPE)], text).into_response())
}

/// This description (OpenAPI 3.1), with the service's count cap.
#[utoipa::path(get, path = "/openapi.json", tag = "service", responses((status = 200,
    description = "The OpenAPI 3.1 document", body = Object, content_type = "application/json")))]
async fn openapi_json(State(state): State<Shared>) -> Response {
    (JSON, state.openapi.clone()).into_response()
}

// ---------------------------------------------------------------------------------------------
// POST /v1/admin/clock (only with --test-clock; not in the OpenAPI description)

async fn admin_clock(
    State(state): State<Shared>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, ApiError> {
    let Some(clock) = &state.test_clock else {
        return Ok(not_found(Method::POST, Uri::from_static("/v1/admin/clock")).await);
    };
    if !peer.ip().is_loopback() {
        let message = "the test clock answers loopback clients only";
        return Err(ApiError::new(StatusCode::FORBIDDEN, "FORBIDDEN", message));
    }
    let b = body_bytes(body)?;
    let offset = request::clock_offset(headers.get(header::CONTENT_TYPE), &b, clock.offset_ms())?;
    clock.set_offset_ms(offset);
    let v = json!({"offset_ms": clock.offset_ms(), "now_ms": clock.now_ms().unwrap_or(0)});
    Ok(axum::Json(v).into_response())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gens() -> Generators {
        // Node ids apart from the other test's: a static node id is claimed on the host.
        let gen = Generator::builder(11)
            .build()
            .expect("a generator on node 11");
        Generators::new(gen, TimeIdBuilder::new()).expect("the time-ID generators")
    }

    fn config() -> Config {
        Config {
            listen: "127.0.0.1:0".parse().unwrap(),
            max_count: 4096,
            max_connections: 16,
            header_read_timeout: Duration::from_secs(1),
            idle_timeout: Duration::from_secs(1),
            test_clock: None,
            reserve_ms: polyflake::DEFAULT_RESERVE_MS,
        }
    }

    // Each refusal comes before anything is bound or started.
    #[test]
    fn run_refuses_settings_out_of_range() {
        let refused = |c: Config| match run(gens(), c) {
            Err(ServiceError::Config(m)) => m,
            other => panic!("expected a Config error, got {other:?}"),
        };
        let m = refused(Config {
            max_count: 0,
            ..config()
        });
        assert_eq!(m, "max_count must be at least 1");
        let m = refused(Config {
            max_count: usize::MAX,
            ..config()
        });
        assert!(!m.is_empty());
        let m = refused(Config {
            listen: "0.0.0.0:0".parse().unwrap(),
            test_clock: Some(OffsetClock::default()),
            ..config()
        });
        assert_eq!(m, "the test clock listens on loopback only, not 0.0.0.0:0");
        let m = refused(Config {
            idle_timeout: Duration::from_millis(MAX_TIMEOUT_MS + 1),
            ..config()
        });
        assert!(m.contains("at most 86400000 ms"), "{m}");
    }

    #[test]
    fn router_for_answers_from_the_generators() {
        let gen = Generator::builder(12).build().unwrap();
        let app = router_for(gen, TimeIdBuilder::new(), 0).unwrap();
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let req = axum::http::Request::post("/v1/ids")
            .body(Body::empty())
            .unwrap();
        let resp = rt.block_on(tower::ServiceExt::oneshot(app, req)).unwrap();
        assert_eq!(resp.status(), StatusCode::OK);
        let body = rt
            .block_on(axum::body::to_bytes(resp.into_body(), 4096))
            .unwrap();
        let v: serde_json::Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(v["node_id"], 12);
        assert_eq!(v["ids"].as_array().map(Vec::len), Some(1));
    }
}
