//! `polyflake serve`: IDs over HTTP/1.1 (axum on tokio and hyper), for fleets that cannot embed
//! the library.
//!
//! - `POST /v1/ids` with `{"count": n}` (n from 1 to `--max-count`, default 4,096; an empty body
//!   or `{}` means 1) answers `{"ids": ["..."], "node_id": 37, "epoch_ms": 1704067200000}`, IDs
//!   as decimal strings (a JavaScript Number would round them) and `epoch_ms` the generator's
//!   epoch. A non-empty body must be `Content-Type: application/json` and at most 16 KiB; fields
//!   other than `count` are refused so a typo is not silently ignored.
//! - `GET /v1/ids/{id}` decodes with the service's layout and epoch.
//! - `GET /v1/health`: 200 with the core's health snapshot, or 503 with the reason.
//! - `GET /metrics`: Prometheus text (the core's counters plus the service's own).
//!
//! Every error is `{"error": {"code": "...", "message": "..."}}`: 4xx for bad requests, 503
//! (with `Retry-After`) while the generator refuses to issue.
//!
//! Waiting: a strict generator may sleep a few milliseconds (a small rewind, a spent
//! millisecond). One ID is first tried without waiting on the async worker (`try_next_id`); only
//! if that would wait, and for every strict batch (a batch of 4,096 usually spans a millisecond
//! boundary), the call moves to tokio's blocking pool, so no async worker ever sleeps.
//! Monotonic generators never wait and are called inline.

use crate::errors::{class, CliError};
use crate::options::{GenArgs, NodeArgs};
use crate::testclock::OffsetClock;
use crate::timefmt::iso_utc;
use axum::body::{Body, Bytes};
use axum::extract::rejection::{BytesRejection, PathRejection};
use axum::extract::{ConnectInfo, DefaultBodyLimit, Path, State};
use axum::http::{header, HeaderMap, HeaderValue, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use clap::Args;
use polyflake::{format_id, Clock, Generator, Mode};
use serde_json::{json, Value};
use std::fmt::Write as _;
use std::future::IntoFuture;
use std::io::Write as _;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// The largest request body accepted, in bytes.
pub const BODY_LIMIT: usize = 16 * 1024;

/// How long graceful shutdown waits for open requests before closing them.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(10);

/// The test clock's offset may not leave this range (ten years either way).
const MAX_TEST_OFFSET_MS: i64 = 10 * 366 * 86_400_000;

/// `polyflake serve` options.
#[derive(Debug, Clone, Args)]
pub struct ServeArgs {
    /// The address to listen on (port 0 picks a free port; the chosen address is printed).
    #[arg(long, value_name = "ADDR:PORT", default_value = "127.0.0.1:8080")]
    pub listen: SocketAddr,
    #[command(flatten)]
    pub node: NodeArgs,
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
    /// Testing only: read time from the system clock plus an offset that
    /// `POST /v1/admin/clock {"advance_ms": n}` or `{"offset_ms": n}` moves. Loopback only.
    #[arg(long, hide = true)]
    pub test_clock: bool,
}

/// What every handler shares.
struct AppState {
    gen: Generator,
    max_count: usize,
    test_clock: Option<OffsetClock>,
    /// Responses by status code (index = code - 100).
    responses: Vec<AtomicU64>,
    /// `POST /v1/ids` calls the generator refused.
    ids_refused: AtomicU64,
    /// Generator calls moved to the blocking pool because they might sleep.
    blocking_calls: AtomicU64,
}

impl AppState {
    fn count_response(&self, status: StatusCode) {
        if let Some(c) = self
            .responses
            .get(usize::from(status.as_u16()).wrapping_sub(100))
        {
            c.fetch_add(1, Ordering::Relaxed);
        }
    }
}

type Shared = Arc<AppState>;

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
    let gen = args.gen.build(&args.node, clock)?;
    let state = Arc::new(AppState {
        gen,
        max_count,
        test_clock,
        responses: (100..600).map(|_| AtomicU64::new(0)).collect(),
        ids_refused: AtomicU64::new(0),
        blocking_calls: AtomicU64::new(0),
    });
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| CliError::Runtime(format!("cannot start the async runtime: {e}")))?;
    let result = rt.block_on(serve(state.clone(), args.listen));
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

fn router(state: Shared) -> Router {
    let mut app = Router::new()
        .route("/v1/ids", post(issue))
        .route("/v1/ids/{id}", get(decode_one))
        .route("/v1/health", get(health))
        .route("/metrics", get(metrics));
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

async fn serve(state: Shared, listen: SocketAddr) -> Result<(), CliError> {
    let listener = tokio::net::TcpListener::bind(listen)
        .await
        .map_err(|e| CliError::Runtime(format!("cannot listen on {listen}: {e}")))?;
    let addr = listener
        .local_addr()
        .map_err(|e| CliError::Runtime(format!("cannot read the bound address: {e}")))?;
    let g = &state.gen;
    let layout = g.layout();
    let h = g.health();
    let source = match &h.lease {
        Some(l) => format!("{} lease {} slot {}", l.kind.name(), l.store, l.slot),
        None => h.source.name().to_string(),
    };
    println!(
        "polyflake serve: listening on http://{addr} (node {} from {source}, {}, layout {}, epoch_ms {}, max count {}{})",
        g.node_id(),
        g.mode().name(),
        layout.preset_name().map_or_else(|| layout.to_string(), str::to_string),
        g.epoch_ms(),
        state.max_count,
        if state.test_clock.is_some() { ", TEST CLOCK" } else { "" },
    );
    let _ = std::io::stdout().flush();

    let app = router(state.clone()).into_make_service_with_connect_info::<SocketAddr>();
    let signalled = Arc::new(tokio::sync::Notify::new());
    let notify = signalled.clone();
    let server = axum::serve(listener, app)
        .with_graceful_shutdown(async move {
            let name = shutdown_signal().await;
            eprintln!("polyflake serve: {name}: finishing open requests, then stopping");
            notify.notify_one();
        })
        .into_future();
    tokio::select! {
        r = server => r.map_err(|e| CliError::Runtime(format!("server error: {e}"))),
        _ = async { signalled.notified().await; tokio::time::sleep(SHUTDOWN_GRACE).await } => {
            eprintln!("polyflake serve: requests still open after {SHUTDOWN_GRACE:?}: closing them");
            Ok(())
        }
    }
}

/// Wait for SIGTERM or SIGINT; the name of the one that came.
async fn shutdown_signal() -> &'static str {
    use tokio::signal::unix::{signal, SignalKind};
    match signal(SignalKind::terminate()) {
        Ok(mut term) => tokio::select! {
            _ = term.recv() => "SIGTERM",
            _ = tokio::signal::ctrl_c() => "SIGINT",
        },
        Err(_) => {
            let _ = tokio::signal::ctrl_c().await;
            "SIGINT"
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Responses

/// An error answer: `{"error": {"code": ..., "message": ...}}` with its status (and
/// `Retry-After: 1` on a 503).
#[derive(Debug)]
struct ApiError {
    status: StatusCode,
    code: String,
    message: String,
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = json!({"error": {"code": self.code, "message": self.message}});
        let mut resp = (self.status, axum::Json(body)).into_response();
        if self.status == StatusCode::SERVICE_UNAVAILABLE {
            resp.headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
        }
        resp
    }
}

fn api_error(status: StatusCode, code: &str, message: impl Into<String>) -> ApiError {
    ApiError {
        status,
        code: code.to_string(),
        message: message.into(),
    }
}

/// The one error body, as a response.
fn error_response(status: StatusCode, code: &str, message: impl Into<String>) -> Response {
    api_error(status, code, message).into_response()
}

/// A core error, with the status its class maps to and the core's code and message.
fn core_error(e: &polyflake::Error) -> ApiError {
    let status = StatusCode::from_u16(class(e.kind()).http_status())
        .unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    api_error(status, e.code(), e.to_string())
}

fn json_text(status: StatusCode, text: String) -> Response {
    (
        status,
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        )],
        text,
    )
        .into_response()
}

fn is_json(value: Option<&HeaderValue>) -> bool {
    value
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|essence| essence.trim().eq_ignore_ascii_case("application/json"))
}

/// The last layer: any error answer that is not JSON yet (axum's own 405, a rejection the
/// handlers did not see) becomes the JSON error shape; every answer is counted.
async fn finish(State(state): State<Shared>, resp: Response) -> Response {
    let status = resp.status();
    let resp = if (status.is_client_error() || status.is_server_error())
        && !is_json(resp.headers().get(header::CONTENT_TYPE))
    {
        let (mut parts, body) = resp.into_parts();
        let text = axum::body::to_bytes(body, 4096)
            .await
            .map(|b| String::from_utf8_lossy(&b).trim().to_string())
            .unwrap_or_default();
        let reason = status.canonical_reason().unwrap_or("error");
        let code = reason.to_ascii_uppercase().replace([' ', '-'], "_");
        let message = if text.is_empty() {
            reason.to_string()
        } else {
            text
        };
        let body = json!({"error": {"code": code, "message": message}}).to_string();
        parts.headers.remove(header::CONTENT_LENGTH);
        parts.headers.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        Response::from_parts(parts, Body::from(body))
    } else {
        resp
    };
    state.count_response(resp.status());
    resp
}

async fn not_found(method: Method, uri: Uri) -> Response {
    error_response(
        StatusCode::NOT_FOUND,
        "NOT_FOUND",
        format!(
            "no route for {method} {}: try POST /v1/ids, GET /v1/ids/{{id}}, GET /v1/health, GET /metrics",
            uri.path()
        ),
    )
}

// ---------------------------------------------------------------------------------------------
// POST /v1/ids

/// The request body as a JSON object, or the 4xx that explains why not. `None` for an empty body.
fn json_object(
    headers: &HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Result<Option<serde_json::Map<String, Value>>, ApiError> {
    let body = body.map_err(|rej| {
        if rej.status() == StatusCode::PAYLOAD_TOO_LARGE {
            api_error(
                StatusCode::PAYLOAD_TOO_LARGE,
                "PAYLOAD_TOO_LARGE",
                format!("the request body is over the {BODY_LIMIT}-byte limit"),
            )
        } else {
            api_error(StatusCode::BAD_REQUEST, "BAD_BODY", rej.body_text())
        }
    })?;
    match headers.get(header::CONTENT_TYPE) {
        Some(ct) if !is_json(Some(ct)) => {
            return Err(api_error(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "UNSUPPORTED_MEDIA_TYPE",
                format!(
                    "Content-Type must be application/json, not {:?}",
                    String::from_utf8_lossy(ct.as_bytes())
                ),
            ))
        }
        None if !body.is_empty() => {
            return Err(api_error(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "UNSUPPORTED_MEDIA_TYPE",
                "a request body needs Content-Type: application/json",
            ))
        }
        _ => {}
    }
    if body.is_empty() {
        return Ok(None);
    }
    let value: Value = serde_json::from_slice(&body).map_err(|e| {
        api_error(
            StatusCode::BAD_REQUEST,
            "MALFORMED_JSON",
            format!("the body is not valid JSON: {e}"),
        )
    })?;
    match value {
        Value::Object(map) => Ok(Some(map)),
        _ => Err(api_error(
            StatusCode::BAD_REQUEST,
            "INVALID_REQUEST",
            "the body must be a JSON object such as {\"count\": 100}",
        )),
    }
}

/// An integer field as `i128`, or the 400 that says it is not one.
fn integer_field(value: &Value, name: &str, code: &str) -> Result<i128, ApiError> {
    let n = value
        .as_i64()
        .map(i128::from)
        .or_else(|| value.as_u64().map(i128::from));
    n.ok_or_else(|| {
        api_error(
            StatusCode::BAD_REQUEST,
            code,
            format!("{name} must be an integer, not {value}"),
        )
    })
}

fn requested_count(
    state: &AppState,
    headers: &HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Result<usize, ApiError> {
    let Some(obj) = json_object(headers, body)? else {
        return Ok(1);
    };
    if let Some(k) = obj.keys().find(|k| *k != "count") {
        return Err(api_error(
            StatusCode::BAD_REQUEST,
            "INVALID_REQUEST",
            format!("unknown field {k:?}: the only field is \"count\""),
        ));
    }
    let Some(value) = obj.get("count") else {
        return Ok(1);
    };
    let n = integer_field(value, "count", "INVALID_COUNT")?;
    // The cap is the service's policy; the core's batch check (which the cap passed at
    // startup) converts the value.
    if n < 1 || n > state.max_count as i128 {
        return Err(api_error(
            StatusCode::BAD_REQUEST,
            "INVALID_COUNT",
            format!("count must be from 1 to {}, not {n}", state.max_count),
        ));
    }
    polyflake::batch_len(n).map_err(|e| core_error(&e))
}

/// Run a generator call that may sleep on the blocking pool.
async fn on_blocking_pool<F>(state: &Shared, f: F) -> Result<Vec<u64>, ApiError>
where
    F: FnOnce(&Generator) -> polyflake::Result<Vec<u64>> + Send + 'static,
{
    state.blocking_calls.fetch_add(1, Ordering::Relaxed);
    let s = state.clone();
    match tokio::task::spawn_blocking(move || f(&s.gen)).await {
        Ok(r) => r.map_err(|e| refused(state, &e)),
        Err(e) => Err(api_error(
            StatusCode::INTERNAL_SERVER_ERROR,
            "INTERNAL",
            format!("the generator call failed: {e}"),
        )),
    }
}

fn refused(state: &AppState, e: &polyflake::Error) -> ApiError {
    state.ids_refused.fetch_add(1, Ordering::Relaxed);
    core_error(e)
}

async fn issue(
    State(state): State<Shared>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    let count = match requested_count(&state, &headers, body) {
        Ok(n) => n,
        Err(e) => return e.into_response(),
    };
    let g = &state.gen;
    let ids = if count == 1 {
        match g.try_next_id() {
            Ok(Some(id)) => Ok(vec![id]),
            Ok(None) => on_blocking_pool(&state, |g| g.next_id().map(|id| vec![id])).await,
            Err(e) => Err(refused(&state, &e)),
        }
    } else if g.mode() == Mode::Monotonic {
        let mut ids = vec![0u64; count];
        g.next_ids(&mut ids)
            .map(|()| ids)
            .map_err(|e| refused(&state, &e))
    } else {
        on_blocking_pool(&state, move |g| {
            let mut ids = vec![0u64; count];
            g.next_ids(&mut ids).map(|()| ids)
        })
        .await
    };
    let ids = match ids {
        Ok(ids) => ids,
        Err(e) => return e.into_response(),
    };
    let mut text = String::with_capacity(ids.len() * 22 + 64);
    text.push_str("{\"ids\":[");
    for (i, id) in ids.iter().enumerate() {
        if i > 0 {
            text.push(',');
        }
        text.push('"');
        text.push_str(&format_id(*id));
        text.push('"');
    }
    let _ = write!(
        text,
        "],\"node_id\":{},\"epoch_ms\":{}}}",
        g.node_id(),
        g.epoch_ms()
    );
    json_text(StatusCode::OK, text)
}

// ---------------------------------------------------------------------------------------------
// GET /v1/ids/{id}, /v1/health, /metrics

async fn decode_one(
    State(state): State<Shared>,
    path: Result<Path<String>, PathRejection>,
) -> Response {
    let text = match path {
        Ok(Path(text)) => text,
        Err(rej) => return error_response(StatusCode::BAD_REQUEST, "INVALID_ID", rej.body_text()),
    };
    match polyflake::parse_id(&text).and_then(|id| state.gen.decode(id).map(|d| (id, d))) {
        Ok((id, d)) => axum::Json(json!({
            "id": format_id(id),
            "time": iso_utc(d.timestamp_ms),
            "unix_ms": d.timestamp_ms,
            "node_id": d.node_id,
            "sequence": d.sequence,
        }))
        .into_response(),
        Err(e) => core_error(&e).into_response(),
    }
}

async fn health(State(state): State<Shared>) -> Response {
    let g = &state.gen;
    let h = g.health();
    let status = if h.ok {
        StatusCode::OK
    } else {
        StatusCode::SERVICE_UNAVAILABLE
    };
    let body = json!({
        "ok": h.ok,
        "status": h.status.name(),
        "reason": h.reason,
        "node_id": h.node_id,
        "mode": h.mode.name(),
        "layout": g.layout().to_string(),
        "epoch_ms": g.epoch_ms(),
        "last_issued_ms": h.last_issued_ms,
        "wall_ms": h.wall_ms,
        "lead_ms": h.lead_ms,
        "source": h.source.name(),
        "lease": h.lease.as_ref().map(|l| json!({
            "kind": l.kind.name(),
            "store": l.store,
            "slot": l.slot,
            "state": lease_state(&h),
            "high_water_ms": l.high_water_ms,
            "guard_until_ms": l.guard_until_ms,
            "guard_waiting": l.guard_waiting,
            "guard_remaining_ms": l.guard_remaining_ms,
            "lost": l.lost,
            "last_error": l.last_error,
        })),
        "counters": {
            "ids_issued": h.ids_issued,
            "rewinds_waited": h.rewinds_waited,
            "rewinds_refused": h.rewinds_refused,
            "sequence_exhaustions": h.sequence_exhaustions,
            "wait_sleeps": h.wait_sleeps,
            "ms_borrowed": h.ms_borrowed,
            "lead_refused": h.lead_refused,
            "lease_renewals": h.lease_renewals,
            "lease_failures": h.lease_failures,
        },
    });
    let mut resp = (status, axum::Json(body)).into_response();
    if !h.ok {
        resp.headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
    }
    resp
}

async fn metrics(State(state): State<Shared>) -> Response {
    let h = state.gen.health();
    let mut out = String::with_capacity(4096);
    let counters = [
        ("polyflake_ids_issued_total", "IDs issued by this service's generator.", h.ids_issued),
        ("polyflake_ids_refused_total", "POST /v1/ids requests the generator refused (clock behind or stuck, lead limit, lease).", state.ids_refused.load(Ordering::Relaxed)),
        ("polyflake_rewinds_waited_total", "Calls that waited out a small clock rewind.", h.rewinds_waited),
        ("polyflake_rewinds_refused_total", "Calls refused because the clock was behind or stuck past the wait budget.", h.rewinds_refused),
        ("polyflake_sequence_exhaustions_total", "Times a millisecond's sequence was spent and a strict call waited.", h.sequence_exhaustions),
        ("polyflake_wait_sleeps_total", "Sleeps taken while waiting (strict mode never spins).", h.wait_sleeps),
        ("polyflake_ms_borrowed_total", "Milliseconds a monotonic generator moved ahead of the wall clock.", h.ms_borrowed),
        ("polyflake_lead_refused_total", "Monotonic calls refused by max_lead_ms.", h.lead_refused),
        ("polyflake_lease_renewals_total", "Lease renewals (0 without a lease).", h.lease_renewals),
        ("polyflake_lease_failures_total", "Failed lease renewals (0 without a lease).", h.lease_failures),
        ("polyflake_blocking_calls_total", "Generator calls run on the blocking pool because they might sleep.", state.blocking_calls.load(Ordering::Relaxed)),
    ];
    for (name, help, value) in counters {
        metric(&mut out, name, "counter", help, value.to_string());
    }
    metric(
        &mut out,
        "polyflake_lead_ms",
        "gauge",
        "How far the last issued millisecond is ahead of the wall clock.",
        h.lead_ms.to_string(),
    );
    metric(
        &mut out,
        "polyflake_last_issued_ms",
        "gauge",
        "Unix ms of the last issued ID (0 before the first).",
        h.last_issued_ms.unwrap_or(0).to_string(),
    );
    metric(
        &mut out,
        "polyflake_node_id",
        "gauge",
        "This service's node id.",
        h.node_id.to_string(),
    );
    metric(
        &mut out,
        "polyflake_healthy",
        "gauge",
        "1 when the generator can issue now (GET /v1/health answers 200), else 0.",
        u8::from(h.ok).to_string(),
    );
    let _ = writeln!(
        out,
        "# HELP polyflake_health_status The generator's health status (1 for the current one)."
    );
    let _ = writeln!(out, "# TYPE polyflake_health_status gauge");
    let _ = writeln!(
        out,
        "polyflake_health_status{{status=\"{}\"}} 1",
        h.status.name()
    );
    if let Some(l) = &h.lease {
        let _ = writeln!(
            out,
            "# HELP polyflake_lease_info The leased slot (1 while a lease is held or last held)."
        );
        let _ = writeln!(out, "# TYPE polyflake_lease_info gauge");
        let _ = writeln!(
            out,
            "polyflake_lease_info{{kind=\"{}\",store=\"{}\",slot=\"{}\"}} 1",
            l.kind.name(),
            label_value(&l.store),
            l.slot
        );
        let _ = writeln!(out, "# HELP polyflake_lease_state The lease's state: held, restart_guard, expired or lost (1 for the current one).");
        let _ = writeln!(out, "# TYPE polyflake_lease_state gauge");
        let _ = writeln!(
            out,
            "polyflake_lease_state{{state=\"{}\"}} 1",
            lease_state(&h)
        );
        metric(
            &mut out,
            "polyflake_lease_high_water_ms",
            "gauge",
            "The lease's high-water mark R (Unix ms): no ID is issued past it.",
            l.high_water_ms.to_string(),
        );
        metric(
            &mut out,
            "polyflake_lease_guard_remaining_ms",
            "gauge",
            "How long the restart guard still waits (0 when it does not).",
            l.guard_remaining_ms.to_string(),
        );
    }
    let _ = writeln!(
        out,
        "# HELP polyflake_http_responses_total HTTP responses by status code."
    );
    let _ = writeln!(out, "# TYPE polyflake_http_responses_total counter");
    for (i, c) in state.responses.iter().enumerate() {
        let n = c.load(Ordering::Relaxed);
        if n > 0 {
            let _ = writeln!(
                out,
                "polyflake_http_responses_total{{code=\"{}\"}} {n}",
                i + 100
            );
        }
    }
    (
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("text/plain; version=0.0.4; charset=utf-8"),
        )],
        out,
    )
        .into_response()
}

/// One metric with its HELP and TYPE lines.
fn metric(out: &mut String, name: &str, kind: &str, help: &str, value: String) {
    let _ = writeln!(out, "# HELP {name} {help}");
    let _ = writeln!(out, "# TYPE {name} {kind}");
    let _ = writeln!(out, "{name} {value}");
}

/// The lease's state in one word, for health and metrics (the core's phase).
fn lease_state(h: &polyflake::Health) -> &'static str {
    h.lease.as_ref().map_or("none", |l| l.phase().name())
}

/// A Prometheus label value with `\\`, `"` and newlines escaped.
fn label_value(s: &str) -> String {
    s.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

// ---------------------------------------------------------------------------------------------
// POST /v1/admin/clock (only with --test-clock)

async fn admin_clock(
    State(state): State<Shared>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    let Some(clock) = &state.test_clock else {
        return not_found(Method::POST, Uri::from_static("/v1/admin/clock")).await;
    };
    if !peer.ip().is_loopback() {
        return error_response(
            StatusCode::FORBIDDEN,
            "FORBIDDEN",
            "the test clock answers loopback clients only",
        );
    }
    let obj = match json_object(&headers, body) {
        Ok(Some(obj)) => obj,
        Ok(None) => serde_json::Map::new(),
        Err(e) => return e.into_response(),
    };
    let bad = |m: String| error_response(StatusCode::BAD_REQUEST, "INVALID_REQUEST", m);
    if obj.len() != 1 {
        return bad("give exactly one of {\"advance_ms\": n} or {\"offset_ms\": n}".into());
    }
    let (key, value) = obj
        .iter()
        .next()
        .map(|(k, v)| (k.as_str(), v))
        .unwrap_or(("", &Value::Null));
    let n = match integer_field(value, key, "INVALID_REQUEST") {
        Ok(n) => n,
        Err(e) => return e.into_response(),
    };
    let offset = match key {
        "advance_ms" => i128::from(clock.offset_ms()) + n,
        "offset_ms" => n,
        other => {
            return bad(format!(
                "unknown field {other:?}: use advance_ms or offset_ms"
            ))
        }
    };
    if offset.abs() > i128::from(MAX_TEST_OFFSET_MS) {
        return bad(format!(
            "offset {offset} ms is beyond the test clock's +/-{MAX_TEST_OFFSET_MS} ms"
        ));
    }
    clock.set_offset_ms(offset as i64);
    axum::Json(json!({
        "offset_ms": clock.offset_ms(),
        "now_ms": clock.now_ms().unwrap_or(0),
    }))
    .into_response()
}
