//! The service's HTTP/1.1 connections: the accept loop, the connection cap, the header-read and
//! idle timeouts (their rules are `docs/cli.md`'s "Limits"), and JSON for the errors hyper
//! answers by itself. hyper's http1 server runs each connection; the axum router answers.
//!
//! A watchdog per connection closes it at either timeout, reading the times [`Tracked`] notes
//! as bytes move. At the cap the open connection quiet longest with no request being answered
//! is closed to make room, else the newcomer is answered 503. hyper answers a request it cannot
//! parse (400, 414, 431) with an empty body before the router sees it; [`Tracked`] replaces
//! that answer with the service's JSON error shape, so every error the service sends is JSON.
//!
//! ## Decisions
//!
//! - **Our own accept loop**: `axum::serve` offers no header-read timeout, idle timeout or
//!   connection cap. Graceful shutdown is unchanged: stop accepting, let each connection finish
//!   the request it is answering, at most 10 s.
//! - **The header-read timeout counts from a head's first byte to its last**, so a keep-alive
//!   connection may sit quietly between requests (the idle timeout governs it). hyper's own
//!   `header_read_timeout` counts from when it starts waiting for a head (closing quiet
//!   keep-alive connections after 10 s), so it is off. **The idle timeout** (no byte either way)
//!   closes whatever the connection is doing; the service's own answers take milliseconds, so a
//!   request being answered never comes near it.
//! - **At the cap a newcomer does not wait**: the connection quiet longest with no request being
//!   answered is closed to make room; only when every connection is answering is the newcomer
//!   answered 503 `TOO_MANY_CONNECTIONS` (`Retry-After: 1`). So 2,000 idle or half-sent
//!   connections cost a legitimate client nothing, under any file limit, and a busy server
//!   sheds load instead of queueing it. At most 32 evictions may be pending (a newcomer beyond
//!   them is answered 503 too: on a loaded machine the evicted connections' tasks can lag behind
//!   a burst) and 32 refusals being written; beyond that a newcomer is closed without an answer.
//!   At startup the service raises its soft open-file limit to the hard one and lowers the cap to
//!   fit (the limit minus 64 descriptors), and its banner says so.
//! - **hyper's bare answers become JSON**: the connection's I/O wrapper recognises exactly that
//!   answer (an error status, no Content-Type, `content-length: 0`, no body: every router answer
//!   has a Content-Type) and writes the JSON error shape instead, counted in
//!   `polyflake_http_responses_total`. Heads are at most 64 KiB and 100 headers (`431`). An
//!   HTTP/2 prior-knowledge preface is closed without an answer (HTTP/1.1 JSON means nothing
//!   to that client).

use crate::metrics::Metrics;
use crate::request::ApiError;
use axum::extract::ConnectInfo;
use axum::http::StatusCode;
use axum::Router;
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use std::collections::HashMap;
use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{ready, Context, Poll};
use std::time::{Duration, Instant};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{mpsc, watch, Notify, Semaphore};
use tower::ServiceExt;

/// The largest request head (request line and headers) read, in bytes.
pub(crate) const HEAD_LIMIT: usize = 64 * 1024;

/// Connections being closed to make room may push the open count this far over the cap
/// (until their tasks run); past it, a newcomer is refused rather than evicting more.
const EVICTING_MAX: usize = 32;

/// At most this many refusals (503 at the cap) are being written at once; past it, a refused
/// connection is closed without an answer.
const REFUSING_MAX: usize = 32;

/// How long a refusal may take to write and drain.
const REFUSAL_TIME: Duration = Duration::from_secs(1);

/// The connection limits (`--max-connections`, `--header-read-timeout-ms`, `--idle-timeout-ms`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Limits {
    /// Connections open at once.
    pub max_connections: usize,
    /// From a request head's first byte to its last.
    pub header_read_timeout: Duration,
    /// No byte in either direction.
    pub idle_timeout: Duration,
}

/// One open connection, as the accept loop and the watchdog see it.
#[derive(Debug, Default)]
struct Conn {
    /// When a byte last moved either way (ms on the server's clock).
    last_io_ms: AtomicU64,
    /// When the first byte of a request head not yet complete arrived; 0 when none is.
    head_since_ms: AtomicU64,
    /// Requests being answered on it (0 or 1: HTTP/1.1 answers in order).
    busy: AtomicUsize,
    /// Set once this connection is chosen to make room.
    evicted: AtomicBool,
    /// Tells the connection's task to close (it was chosen to make room).
    evict: Notify,
    /// Tells the watchdog a request head has started (to arm the header-read timer).
    head_started: Notify,
}

/// What every connection of one server shares: the router, the metrics, the limits, and the
/// table of open connections.
struct Server {
    app: Router,
    metrics: Arc<Metrics>,
    limits: Limits,
    start: Instant,
    next_id: AtomicU64,
    open: Mutex<HashMap<u64, Arc<Conn>>>,
}

impl Server {
    /// Milliseconds since the server started, from 1 (0 means "never" in [`Conn`]).
    fn now_ms(&self) -> u64 {
        u64::try_from(self.start.elapsed().as_millis()).unwrap_or(u64::MAX - 1) + 1
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<u64, Arc<Conn>>> {
        self.open.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn insert(&self) -> (u64, Arc<Conn>) {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let conn = Arc::new(Conn::default());
        conn.last_io_ms.store(self.now_ms(), Ordering::Relaxed);
        self.lock().insert(id, conn.clone());
        (id, conn)
    }

    fn remove(&self, id: u64) {
        self.lock().remove(&id);
    }

    /// Make room for one more connection if the table is at `cap`: true when there is room
    /// (possibly after choosing a connection to close), false when the newcomer must be refused.
    fn make_room(&self, cap: usize) -> Room {
        let open = self.lock();
        let evicting = open
            .values()
            .filter(|c| c.evicted.load(Ordering::Relaxed))
            .count();
        if open.len() - evicting < cap {
            return Room::Free;
        }
        if evicting >= EVICTING_MAX {
            return Room::Full(FullBecause::Evicting);
        }
        let victim = open
            .values()
            .filter(|c| c.busy.load(Ordering::Relaxed) == 0 && !c.evicted.load(Ordering::Relaxed))
            .min_by_key(|c| c.last_io_ms.load(Ordering::Relaxed));
        match victim {
            Some(c) => {
                c.evicted.store(true, Ordering::Relaxed);
                c.evict.notify_one();
                Room::Evicted
            }
            None => Room::Full(FullBecause::AllBusy),
        }
    }
}

/// Why a newcomer cannot have a connection now (the refusal says which).
#[derive(Clone, Copy)]
enum FullBecause {
    /// Every connection is answering a request.
    AllBusy,
    /// As many connections as allowed are already being closed to make room.
    Evicting,
}

/// What [`Server::make_room`] did.
enum Room {
    Free,
    Evicted,
    Full(FullBecause),
}

/// Accept connections on `listener` and answer them with `app` until `shutdown` resolves; then
/// stop accepting, let every connection finish the request it is answering (hyper's graceful
/// shutdown) and return once all are closed.
pub(crate) async fn serve(
    listener: TcpListener,
    app: Router,
    metrics: Arc<Metrics>,
    limits: Limits,
    shutdown: impl Future<Output = ()>,
) {
    let srv = Arc::new(Server {
        app,
        metrics,
        limits,
        start: Instant::now(),
        next_id: AtomicU64::new(0),
        open: Mutex::default(),
    });
    // Each connection task holds a sender; recv() answers None once every one has ended.
    let (alive_tx, mut alive_rx) = mpsc::channel::<()>(1);
    let (stop_tx, stop_rx) = watch::channel(false);
    let refusing = Arc::new(Semaphore::new(REFUSING_MAX));
    tokio::pin!(shutdown);
    loop {
        let (stream, peer) = tokio::select! {
            biased;
            _ = &mut shutdown => break,
            accepted = listener.accept() => match accepted {
                Ok(a) => a,
                // Out of descriptors or a connection reset before accept: let the table drain
                // for a moment, then go on (what axum::serve does too).
                Err(_) => {
                    tokio::time::sleep(Duration::from_millis(20)).await;
                    continue;
                }
            },
        };
        match srv.make_room(limits.max_connections) {
            Room::Free => {}
            Room::Evicted => srv.metrics.count_closed("evicted"),
            Room::Full(why) => {
                srv.metrics.count_closed("refused");
                refuse(stream, why, &refusing, &srv.metrics);
                continue;
            }
        }
        let _ = stream.set_nodelay(true);
        let (id, conn) = srv.insert();
        let (stop, alive) = (stop_rx.clone(), alive_tx.clone());
        tokio::spawn(connection(srv.clone(), stream, peer, id, conn, stop, alive));
    }
    drop(listener);
    let _ = stop_tx.send(true);
    drop(alive_tx);
    let _ = alive_rx.recv().await;
}

/// Removes the connection from the table and the open-connections gauge, however it ends.
struct Registered(Arc<Server>, u64);

impl Drop for Registered {
    fn drop(&mut self) {
        self.0.remove(self.1);
        self.0.metrics.connections_open.dec();
    }
}

/// A request being answered: holds the connection busy (not idle, not evictable, no head timer).
struct Busy(Arc<Conn>);

impl Busy {
    fn start(conn: &Arc<Conn>) -> Busy {
        conn.head_since_ms.store(0, Ordering::Relaxed);
        conn.busy.fetch_add(1, Ordering::Relaxed);
        Busy(conn.clone())
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        self.0.busy.fetch_sub(1, Ordering::Relaxed);
    }
}

async fn connection(
    srv: Arc<Server>,
    stream: TcpStream,
    peer: SocketAddr,
    id: u64,
    conn: Arc<Conn>,
    mut stop: watch::Receiver<bool>,
    _alive: mpsc::Sender<()>,
) {
    srv.metrics.connections_open.inc();
    let _registered = Registered(srv.clone(), id);
    let io = TokioIo::new(Tracked {
        stream,
        conn: conn.clone(),
        srv: srv.clone(),
        replacement: None,
    });
    let (app, for_requests) = (srv.app.clone(), conn.clone());
    let service = hyper::service::service_fn(move |mut req: hyper::Request<Incoming>| {
        req.extensions_mut().insert(ConnectInfo(peer));
        let busy = Busy::start(&for_requests);
        let app = app.clone();
        async move {
            let answer = app.oneshot(req).await;
            drop(busy);
            answer
        }
    });
    let mut http = hyper::server::conn::http1::Builder::new();
    http.max_header_size(HEAD_LIMIT)
        .writev(false)
        .header_read_timeout(None);
    let served = http.serve_connection(io, service);
    tokio::pin!(served);
    let watchdog = watchdog(&conn, &srv);
    tokio::pin!(watchdog);
    let mut stopping = *stop.borrow();
    if stopping {
        served.as_mut().graceful_shutdown();
    }
    loop {
        tokio::select! {
            _ = served.as_mut() => break,
            reason = watchdog.as_mut() => {
                srv.metrics.count_closed(reason);
                break;
            }
            _ = conn.evict.notified() => break,
            _ = stop.changed(), if !stopping => {
                stopping = true;
                served.as_mut().graceful_shutdown();
            }
        }
    }
}

/// Resolves with the reason when the connection has overstayed a timeout.
async fn watchdog(conn: &Conn, srv: &Server) -> &'static str {
    let limits = srv.limits;
    let idle_ms = u64::try_from(limits.idle_timeout.as_millis()).unwrap_or(u64::MAX / 4);
    let head_ms = u64::try_from(limits.header_read_timeout.as_millis()).unwrap_or(u64::MAX / 4);
    loop {
        let now = srv.now_ms();
        let idle_deadline = conn
            .last_io_ms
            .load(Ordering::Relaxed)
            .saturating_add(idle_ms);
        let head_since = conn.head_since_ms.load(Ordering::Relaxed);
        let head_deadline = if head_since != 0 && conn.busy.load(Ordering::Relaxed) == 0 {
            head_since.saturating_add(head_ms)
        } else {
            u64::MAX
        };
        if now >= head_deadline {
            return "header_timeout";
        }
        if now >= idle_deadline {
            return "idle_timeout";
        }
        let wait = idle_deadline.min(head_deadline) - now;
        // A head starting wakes us early to arm its timer; a later byte only moves the idle
        // deadline, which the next pass reads.
        tokio::select! {
            _ = tokio::time::sleep(Duration::from_millis(wait)) => {}
            _ = conn.head_started.notified() => {}
        }
    }
}

/// Answer `503 TOO_MANY_CONNECTIONS` and close, without holding up the accept loop.
fn refuse(
    mut stream: TcpStream,
    why: FullBecause,
    refusing: &Arc<Semaphore>,
    metrics: &Arc<Metrics>,
) {
    let Ok(permit) = refusing.clone().try_acquire_owned() else {
        return; // dropped: closed without an answer
    };
    metrics.count_response(503);
    tokio::spawn(async move {
        let _permit = permit;
        let answer = json_answer(
            &ApiError::new(
                StatusCode::SERVICE_UNAVAILABLE,
                "TOO_MANY_CONNECTIONS",
                match why {
                    FullBecause::AllBusy => {
                        "every connection is answering a request: retry shortly"
                    }
                    FullBecause::Evicting => {
                        "idle connections are being closed to make room: retry shortly"
                    }
                },
            ),
            "retry-after: 1\r\n",
        );
        let _ = tokio::time::timeout(REFUSAL_TIME, async move {
            stream.write_all(&answer).await?;
            stream.shutdown().await?;
            // Read what the client sent until it closes, so the close is not a reset that
            // could destroy the answer in flight.
            let mut sink = [0u8; 4096];
            while stream.read(&mut sink).await? > 0 {}
            Ok::<(), io::Error>(())
        })
        .await;
    });
}

/// A whole `Connection: close` answer with the JSON error body.
fn json_answer(e: &ApiError, extra_header: &str) -> Vec<u8> {
    let body = e.body();
    format!(
        "HTTP/1.1 {} {}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n{extra_header}\r\n{body}",
        e.status.as_u16(),
        e.status.canonical_reason().unwrap_or("Error"),
        body.len()
    )
    .into_bytes()
}

/// If `buf` is exactly one of hyper's own error answers (an error status, no Content-Type,
/// `content-length: 0`, no body: what hyper writes for a request it could not parse; every
/// answer of the router has a Content-Type), its status code.
pub(crate) fn bare_error_answer(buf: &[u8]) -> Option<u16> {
    let end = buf.windows(4).position(|w| w == b"\r\n\r\n")?;
    if end + 4 != buf.len() {
        return None;
    }
    let head = std::str::from_utf8(&buf[..end]).ok()?;
    let mut lines = head.split("\r\n");
    let status = lines.next()?.strip_prefix("HTTP/1.1 ")?;
    let code: u16 = status.get(..3)?.parse().ok()?;
    if !(400..600).contains(&code) {
        return None;
    }
    let mut empty = false;
    for line in lines {
        let (name, value) = line.split_once(':')?;
        let name = name.trim();
        if name.eq_ignore_ascii_case("content-type") {
            return None;
        }
        if name.eq_ignore_ascii_case("content-length") {
            empty = value.trim() == "0";
        }
    }
    empty.then_some(code)
}

/// The JSON answer that replaces hyper's empty one for this status.
pub(crate) fn malformed_request_answer(code: u16) -> Vec<u8> {
    let status = StatusCode::from_u16(code).unwrap_or(StatusCode::BAD_REQUEST);
    let message = match code {
        400 => "the request is not valid HTTP/1.1 (request line, a header, or the body's framing)"
            .to_string(),
        431 => format!("the request head is over {HEAD_LIMIT} bytes or has over 100 headers"),
        414 => "the request target is too long".to_string(),
        _ => String::new(),
    };
    json_answer(&ApiError::from_status(status, message), "")
}

/// The TCP stream under hyper, noting every byte that moves (for the timeouts) and swapping
/// hyper's empty error answers for JSON ones.
struct Tracked {
    stream: TcpStream,
    conn: Arc<Conn>,
    srv: Arc<Server>,
    /// A replacement answer being written, and how much of it is written.
    replacement: Option<(Vec<u8>, usize)>,
}

impl Tracked {
    fn moved(&self) {
        self.conn
            .last_io_ms
            .store(self.srv.now_ms(), Ordering::Relaxed);
    }

    /// Write what is left of a replacement answer.
    fn drain(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        while let Some((bytes, written)) = &mut self.replacement {
            if *written == bytes.len() {
                self.replacement = None;
                break;
            }
            match ready!(Pin::new(&mut self.stream).poll_write(cx, &bytes[*written..])) {
                Ok(0) => return Poll::Ready(Err(io::ErrorKind::WriteZero.into())),
                Ok(n) => {
                    *written += n;
                    self.moved();
                }
                Err(e) => return Poll::Ready(Err(e)),
            }
        }
        Poll::Ready(Ok(()))
    }
}

impl AsyncRead for Tracked {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        let r = Pin::new(&mut self.stream).poll_read(cx, buf);
        if matches!(r, Poll::Ready(Ok(()))) && buf.filled().len() > before {
            let now = self.srv.now_ms();
            let c = &self.conn;
            c.last_io_ms.store(now, Ordering::Relaxed);
            if c.busy.load(Ordering::Relaxed) == 0 && c.head_since_ms.load(Ordering::Relaxed) == 0 {
                c.head_since_ms.store(now, Ordering::Relaxed);
                c.head_started.notify_one();
            }
        }
        r
    }
}

impl AsyncWrite for Tracked {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        ready!(self.drain(cx))?;
        if let Some(code) = bare_error_answer(buf) {
            self.srv.metrics.count_response(code);
            self.replacement = Some((malformed_request_answer(code), 0));
            // Taken whole; the rest is written by the next poll_write, poll_flush or
            // poll_shutdown (hyper flushes and shuts down after this answer).
            if let Poll::Ready(Err(e)) = self.drain(cx) {
                return Poll::Ready(Err(e));
            }
            return Poll::Ready(Ok(buf.len()));
        }
        let r = Pin::new(&mut self.stream).poll_write(cx, buf);
        if matches!(r, Poll::Ready(Ok(n)) if n > 0) {
            self.moved();
        }
        r
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        ready!(self.drain(cx))?;
        Pin::new(&mut self.stream).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        ready!(self.drain(cx))?;
        Pin::new(&mut self.stream).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hypers_bare_error_answers_are_recognised() {
        // hyper's own answers are bare; anything with a Content-Type, a body, a success status
        // or a non-zero length is the router's own answer and passes untouched.
        for (answer, bare) in [
            (&b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\ndate: Sun, 29 Nov 2026 21:26:53 GMT\r\n\r\n"[..], Some(400)),
            (b"HTTP/1.1 431 Request Header Fields Too Large\r\ncontent-length: 0\r\n\r\n", Some(431)),
            (b"HTTP/1.1 400 Bad Request\r\ncontent-type: application/json\r\ncontent-length: 0\r\n\r\n", None),
            (b"HTTP/1.1 400 Bad Request\r\ncontent-length: 2\r\n\r\n{}", None),
            (b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n", None),
            (b"HTTP/1.1 404 Not Found\r\ncontent-length: 12\r\n\r\n", None),
            (b"{\"ids\":[]}", None),
            (b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\n", None),
        ] {
            let text = String::from_utf8_lossy(answer);
            assert_eq!(bare_error_answer(answer), bare, "{text:?}");
        }
    }

    #[test]
    fn replacement_answers_are_complete_json() {
        for code in [400u16, 414, 431, 505] {
            let a = malformed_request_answer(code);
            let text = String::from_utf8(a).unwrap();
            let (head, body) = text.split_once("\r\n\r\n").unwrap();
            assert!(head.starts_with(&format!("HTTP/1.1 {code} ")), "{head}");
            assert!(head.contains("content-type: application/json"));
            assert!(head.contains(&format!("content-length: {}", body.len())));
            let v: serde_json::Value = serde_json::from_str(body).unwrap();
            assert!(v["error"]["code"].is_string() && v["error"]["message"].is_string());
        }
    }
}
