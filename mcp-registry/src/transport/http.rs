//! Streamable HTTP, as an axum [`Router`] to mount in your own app or a one-call server.
//!
//! - `POST /mcp` takes one JSON-RPC message. A request gets a JSON reply, or an SSE stream
//!   when the call sends notifications (progress) before its reply; a notification or response
//!   gets `202 Accepted`. Closing the stream cancels the call.
//! - Legacy clients (2025-03-26 … 2025-11-25) `initialize` and get an `Mcp-Session-Id`; later
//!   requests must carry it (`404` for an unknown one, `400` when missing), `GET` opens the
//!   session's stream of `notifications/tools/list_changed`, `DELETE` ends the session.
//! - 2026-07-28 requests (version in `_meta`) are stateless: the `MCP-Protocol-Version`,
//!   `Mcp-Method` and `Mcp-Name` headers must match the body (`400` with -32020 otherwise), an
//!   unsupported version is `400` with -32022, an unknown method `404` with -32601.
//! - `Origin` is checked on every request: `403` unless it is a localhost origin (allowed by
//!   default) or listed in [`HttpConfig::allowed_origins`].
//! - A body over [`HttpConfig::max_body_bytes`] is refused with `413` without being buffered.
//!
//! Stateless (2026-07-28) traffic needs no sticky sessions, so N replicas can sit behind any
//! load balancer; legacy sessions live in the replica that minted them, so legacy clients need
//! routing by the `Mcp-Session-Id` header (see the README).

use std::collections::HashMap;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use futures_util::StreamExt as _;
use futures_util::stream::{self, Stream};
use serde_json::Value;
use tokio::sync::mpsc;
use tokio_util::sync::{CancellationToken, DropGuard};

use crate::dispatch::{ServerSession, check_modern_meta, envelope};
use crate::protocol::{
    ErrorCode, ErrorObject, META_PROTOCOL_VERSION, MODERN_VERSION, ProtocolEra, ProtocolVersion,
};
use crate::registry::{CallOptions, Registry};
use crate::tool::NotificationSink;

/// The `Mcp-Session-Id` header.
pub const SESSION_HEADER: &str = "mcp-session-id";
/// The `MCP-Protocol-Version` header.
pub const VERSION_HEADER: &str = "mcp-protocol-version";
/// The JSON-RPC error code for headers that do not match the body (2026-07-28).
pub const HEADER_MISMATCH: i32 = -32020;

/// Settings of the HTTP transport.
///
/// ```
/// use mcp_registry::transport::http::HttpConfig;
/// let config = HttpConfig::default()
///     .allowed_origins(["https://app.example.com"])
///     .max_body_bytes(1 << 20);
/// ```
#[derive(Debug, Clone)]
pub struct HttpConfig {
    path: String,
    allowed_origins: Vec<String>,
    allow_localhost: bool,
    max_body_bytes: usize,
    legacy_sessions: bool,
    max_sessions: usize,
    session_idle_timeout: Duration,
}

impl Default for HttpConfig {
    fn default() -> Self {
        HttpConfig {
            path: "/mcp".to_owned(),
            allowed_origins: Vec::new(),
            allow_localhost: true,
            max_body_bytes: 4 * 1024 * 1024,
            legacy_sessions: true,
            max_sessions: 10_000,
            session_idle_timeout: Duration::from_secs(30 * 60),
        }
    }
}

impl HttpConfig {
    /// The endpoint path (default `/mcp`).
    pub fn path(mut self, path: impl Into<String>) -> Self {
        self.path = path.into();
        self
    }

    /// Origins allowed besides localhost, compared exactly (`scheme://host[:port]`).
    pub fn allowed_origins<S: Into<String>>(
        mut self,
        origins: impl IntoIterator<Item = S>,
    ) -> Self {
        self.allowed_origins = origins.into_iter().map(Into::into).collect();
        self
    }

    /// Whether `http(s)://localhost`, `127.0.0.1` and `[::1]` origins are allowed (default yes).
    pub fn allow_localhost(mut self, yes: bool) -> Self {
        self.allow_localhost = yes;
        self
    }

    /// The largest accepted request body (default 4 MiB); larger ones get `413`.
    pub fn max_body_bytes(mut self, bytes: usize) -> Self {
        self.max_body_bytes = bytes;
        self
    }

    /// Whether legacy clients may open `initialize` sessions (default yes). Without them the
    /// endpoint is purely stateless (2026-07-28 only).
    pub fn legacy_sessions(mut self, yes: bool) -> Self {
        self.legacy_sessions = yes;
        self
    }

    /// The most legacy sessions kept at once (default 10,000); `initialize` beyond that gets
    /// `503`.
    pub fn max_sessions(mut self, n: usize) -> Self {
        self.max_sessions = n;
        self
    }

    /// How long a legacy session may stay unused before it is ended (default 30 minutes); a
    /// client coming back later gets `404` and initializes again, as the spec prescribes.
    pub fn session_idle_timeout(mut self, idle: Duration) -> Self {
        self.session_idle_timeout = idle;
        self
    }

    fn origin_allowed(&self, origin: &str) -> bool {
        if self.allowed_origins.iter().any(|o| o == origin) {
            return true;
        }
        if !self.allow_localhost {
            return false;
        }
        let Some(rest) = origin
            .strip_prefix("http://")
            .or_else(|| origin.strip_prefix("https://"))
        else {
            return false;
        };
        let host = if let Some(v6) = rest.strip_prefix('[') {
            v6.split(']').next().map(|h| format!("[{h}]"))
        } else {
            rest.split(':').next().map(str::to_owned)
        };
        matches!(host.as_deref(), Some("localhost" | "127.0.0.1" | "[::1]"))
    }
}

struct SessionSlot {
    session: ServerSession,
    pushed: Mutex<Option<mpsc::UnboundedReceiver<Value>>>,
    last_used: Mutex<Instant>,
}

impl SessionSlot {
    fn touch(&self) {
        *self
            .last_used
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Instant::now();
    }

    fn idle_for(&self) -> Duration {
        self.last_used
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .elapsed()
    }
}

struct AppState {
    registry: Registry,
    server: String,
    config: HttpConfig,
    sessions: Mutex<HashMap<String, Arc<SessionSlot>>>,
}

impl AppState {
    fn session(&self, id: &str) -> Option<Arc<SessionSlot>> {
        let slot = self
            .sessions
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(id)
            .cloned()?;
        slot.touch();
        Some(slot)
    }

    /// Ends legacy sessions idle for longer than the configured limit (checked whenever a new
    /// session is opened, so abandoned sessions cannot pile up).
    fn expire_idle_sessions(&self) {
        let limit = self.config.session_idle_timeout;
        self.sessions
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .retain(|_, slot| {
                let keep = slot.idle_for() < limit;
                if !keep {
                    slot.session.shutdown();
                }
                keep
            });
    }
}

/// An axum router serving `server` of `registry` at the configured path (default `/mcp`).
///
/// ```
/// use mcp_registry::{Registry, transport::http::{router, HttpConfig}};
/// let app: axum::Router = router(Registry::new(), "math", HttpConfig::default());
/// ```
pub fn router(registry: Registry, server: &str, config: HttpConfig) -> Router {
    let state = Arc::new(AppState {
        registry,
        server: server.to_owned(),
        config: config.clone(),
        sessions: Mutex::new(HashMap::new()),
    });
    Router::new()
        .route(
            &config.path,
            post(handle_post).get(handle_get).delete(handle_delete),
        )
        .layer(DefaultBodyLimit::max(config.max_body_bytes))
        .with_state(state)
}

/// Serves `server` of `registry` on `addr` until the process ends.
///
/// ```no_run
/// # async fn run(registry: mcp_registry::Registry) -> std::io::Result<()> {
/// use mcp_registry::transport::http::{serve, HttpConfig};
/// serve(registry, "math", "127.0.0.1:8000".parse().unwrap(), HttpConfig::default()).await
/// # }
/// ```
pub async fn serve(
    registry: Registry,
    server: &str,
    addr: SocketAddr,
    config: HttpConfig,
) -> std::io::Result<()> {
    let listener = tokio::net::TcpListener::bind(addr).await?;
    tracing::info!(%addr, server, "serving MCP over Streamable HTTP");
    axum::serve(listener, router(registry, server, config)).await
}

fn json_response(status: StatusCode, body: &Value) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
        .into_response()
}

fn error_response(
    status: StatusCode,
    id: Option<&Value>,
    code: i32,
    message: impl Into<String>,
) -> Response {
    let error = ErrorObject {
        code,
        message: message.into(),
        data: None,
    };
    json_response(
        status,
        &envelope::error_reply(id.cloned().unwrap_or(Value::Null), error),
    )
}

fn header_str<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

/// `Some(403 response)` when the request's `Origin` is not allowed.
fn check_origin(state: &AppState, headers: &HeaderMap) -> Option<Response> {
    match headers.get(header::ORIGIN) {
        None => None,
        Some(origin) => match origin.to_str() {
            Ok(o) if state.config.origin_allowed(o) => None,
            _ => Some(error_response(
                StatusCode::FORBIDDEN,
                None,
                ErrorCode::INVALID_REQUEST.0,
                format!("origin {origin:?} is not allowed"),
            )),
        },
    }
}

/// Decodes `=?base64?…?=` header values (2026-07-28 value encoding).
fn decode_header_value(raw: &str) -> Option<String> {
    use base64::Engine as _;
    match raw
        .strip_prefix("=?base64?")
        .and_then(|r| r.strip_suffix("?="))
    {
        Some(b64) => base64::engine::general_purpose::STANDARD
            .decode(b64)
            .ok()
            .and_then(|b| String::from_utf8(b).ok()),
        None => Some(raw.to_owned()),
    }
}

/// Checks a modern request's mirrored headers against its body.
fn check_modern_headers(
    headers: &HeaderMap,
    message: &Value,
    version: Option<&str>,
) -> Result<(), String> {
    let method = message
        .get("method")
        .and_then(Value::as_str)
        .unwrap_or_default();
    match header_str(headers, VERSION_HEADER) {
        None => {
            return Err("Header mismatch: the MCP-Protocol-Version header is missing".to_owned());
        }
        Some(h) if version.is_some_and(|v| v != h) => {
            let version = version.unwrap_or_default();
            return Err(format!(
                "Header mismatch: MCP-Protocol-Version header value {h:?} does not match body value {version:?}"
            ));
        }
        Some(_) => {}
    }
    let is_request = message.get("id").is_some();
    match header_str(headers, "mcp-method") {
        None if is_request => {
            return Err("Header mismatch: the Mcp-Method header is missing".to_owned());
        }
        Some(h) if h != method => {
            return Err(format!(
                "Header mismatch: Mcp-Method header value {h:?} does not match body value {method:?}"
            ));
        }
        _ => {}
    }
    if matches!(method, "tools/call" | "resources/read" | "prompts/get") {
        let params = message.get("params");
        let body_name = params
            .and_then(|p| p.get("name").or_else(|| p.get("uri")))
            .and_then(Value::as_str)
            .unwrap_or_default();
        match headers
            .get("mcp-name")
            .map(|v| v.to_str().ok().and_then(decode_header_value))
        {
            None => return Err("Header mismatch: the Mcp-Name header is missing".to_owned()),
            Some(None) => {
                return Err("Header mismatch: the Mcp-Name header is not valid".to_owned());
            }
            Some(Some(h)) if h != body_name => {
                return Err(format!(
                    "Header mismatch: Mcp-Name header value {h:?} does not match body value {body_name:?}"
                ));
            }
            Some(Some(_)) => {}
        }
    }
    Ok(())
}

enum Flow {
    Notification(Value),
    Reply(Option<Value>),
}

async fn handle_post(
    State(state): State<Arc<AppState>>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    if let Some(denied) = check_origin(&state, &headers) {
        return denied;
    }
    let message: Value = match serde_json::from_slice(&body) {
        Ok(m) => m,
        Err(e) => return json_response(StatusCode::BAD_REQUEST, &envelope::parse_error(e)),
    };
    if message.is_array()
        && let Some(slot) = header_str(&headers, SESSION_HEADER).and_then(|id| state.session(id))
        && slot.session.accepts_batches()
    {
        // A legacy session whose negotiated version has batches (2025-03-26) is served them.
        return match slot.session.handle(message).await {
            Some(reply) => json_response(StatusCode::OK, &reply),
            None => StatusCode::ACCEPTED.into_response(),
        };
    }
    if !message.is_object() {
        return error_response(
            StatusCode::BAD_REQUEST,
            None,
            ErrorCode::INVALID_REQUEST.0,
            "the body must be one JSON-RPC message (an object); batches are accepted only in a session whose protocol version has them (2025-03-26)",
        );
    }
    let id = message.get("id").cloned();
    let is_request = id.is_some() && message.get("method").is_some();
    let meta = message.get("params").and_then(|p| p.get("_meta"));
    let body_version = meta
        .and_then(|m| m.get(META_PROTOCOL_VERSION))
        .and_then(Value::as_str)
        .map(str::to_owned);
    let header_modern = header_str(&headers, VERSION_HEADER) == Some(MODERN_VERSION);

    if body_version.is_some() || header_modern {
        // Order of checks: mirrored headers (-32020), required _meta (-32602), version (-32022).
        if let Err(mismatch) = check_modern_headers(&headers, &message, body_version.as_deref()) {
            return error_response(
                StatusCode::BAD_REQUEST,
                id.as_ref(),
                HEADER_MISMATCH,
                mismatch,
            );
        }
        let modern = body_version
            .as_deref()
            .and_then(ProtocolVersion::parse)
            .is_some_and(|v| v.era() == ProtocolEra::Modern);
        if body_version.is_none() || modern {
            if let Err(e) = check_modern_meta(meta.and_then(Value::as_object)) {
                return json_response(
                    StatusCode::BAD_REQUEST,
                    &envelope::error_reply(id.clone().unwrap_or(Value::Null), e),
                );
            }
        }
        if !modern {
            // Unknown versions get -32022; a legacy version in `_meta` is answered statelessly.
            return match state
                .registry
                .handle_mcp_message(&state.server, message)
                .await
            {
                Some(reply) if reply.get("error").is_some() => {
                    json_response(StatusCode::BAD_REQUEST, &reply)
                }
                Some(reply) => json_response(StatusCode::OK, &reply),
                None => StatusCode::ACCEPTED.into_response(),
            };
        }
        if !is_request {
            // Modern notifications carry no state to act on here.
            return StatusCode::ACCEPTED.into_response();
        }
        let registry = state.registry.clone();
        let server = state.server.clone();
        return respond(true, move |options| async move {
            registry
                .handle_mcp_message_with(&server, message, options)
                .await
        })
        .await;
    }

    // Legacy era.
    if let Some(v) = header_str(&headers, VERSION_HEADER)
        && ProtocolVersion::parse(v).is_none()
    {
        return error_response(
            StatusCode::BAD_REQUEST,
            id.as_ref(),
            ErrorCode::INVALID_REQUEST.0,
            format!("unsupported MCP-Protocol-Version {v:?}"),
        );
    }
    let method = message
        .get("method")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if method == "initialize" && is_request {
        if !state.config.legacy_sessions {
            return error_response(
                StatusCode::BAD_REQUEST,
                id.as_ref(),
                ErrorCode::INVALID_REQUEST.0,
                "this endpoint serves only protocol version 2026-07-28 (stateless); initialize is not supported",
            );
        }
        state.expire_idle_sessions();
        if state
            .sessions
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
            >= state.config.max_sessions
        {
            return error_response(
                StatusCode::SERVICE_UNAVAILABLE,
                id.as_ref(),
                ErrorCode::INTERNAL_ERROR.0,
                "too many open sessions",
            );
        }
        let (session, pushed) = ServerSession::new(state.registry.clone(), state.server.clone());
        let reply = session.handle(message).await;
        let Some(reply) = reply else {
            return StatusCode::ACCEPTED.into_response();
        };
        if reply.get("error").is_some() {
            return json_response(StatusCode::OK, &reply);
        }
        let session_id = uuid::Uuid::new_v4().simple().to_string();
        state
            .sessions
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(
                session_id.clone(),
                Arc::new(SessionSlot {
                    session,
                    pushed: Mutex::new(Some(pushed)),
                    last_used: Mutex::new(Instant::now()),
                }),
            );
        let mut response = json_response(StatusCode::OK, &reply);
        if let Ok(v) = HeaderValue::from_str(&session_id) {
            response.headers_mut().insert(SESSION_HEADER, v);
        }
        return response;
    }
    let Some(session_id) = header_str(&headers, SESSION_HEADER) else {
        return error_response(
            StatusCode::BAD_REQUEST,
            id.as_ref(),
            ErrorCode::INVALID_REQUEST.0,
            "missing Mcp-Session-Id header: send initialize first, or use protocol version 2026-07-28 (stateless)",
        );
    };
    let Some(slot) = state.session(session_id) else {
        return error_response(
            StatusCode::NOT_FOUND,
            id.as_ref(),
            ErrorCode::INVALID_REQUEST.0,
            format!("unknown session {session_id:?}; initialize a new one"),
        );
    };
    if !is_request {
        let _ = slot.session.handle(message).await;
        return StatusCode::ACCEPTED.into_response();
    }
    respond(false, move |options| async move {
        slot.session.handle_with(message, options).await
    })
    .await
}

/// Runs one request, answering with JSON when the reply comes first, or with an SSE stream
/// (notifications, then the reply) when a notification comes first. Dropping the response —
/// the client going away — cancels the call. A modern unknown method is `404` (2026-07-28).
async fn respond<F, Fut>(modern: bool, run: F) -> Response
where
    F: FnOnce(CallOptions) -> Fut,
    Fut: Future<Output = Option<Value>> + Send + 'static,
{
    let (tx, mut rx) = mpsc::unbounded_channel::<Flow>();
    let token = CancellationToken::new();
    let guard = token.clone().drop_guard();
    let sink = {
        let tx = tx.clone();
        NotificationSink::new(move |n| {
            let _ = tx.send(Flow::Notification(n));
        })
    };
    let fut = run(CallOptions::new().notifications(sink).cancellation(token));
    tokio::spawn(async move {
        let reply = fut.await;
        let _ = tx.send(Flow::Reply(reply));
    });
    match rx.recv().await {
        None | Some(Flow::Reply(None)) => StatusCode::ACCEPTED.into_response(),
        Some(Flow::Reply(Some(reply))) => {
            drop(guard.disarm());
            let status = match reply["error"]["code"].as_i64() {
                Some(-32601) if modern => StatusCode::NOT_FOUND,
                _ => StatusCode::OK,
            };
            json_response(status, &reply)
        }
        Some(Flow::Notification(first)) => Sse::new(sse_stream(first, rx, guard))
            .keep_alive(KeepAlive::default())
            .into_response(),
    }
}

fn sse_stream(
    first: Value,
    rx: mpsc::UnboundedReceiver<Flow>,
    guard: DropGuard,
) -> impl Stream<Item = Result<Event, Infallible>> {
    let head =
        stream::once(async move { Ok(Event::default().event("message").data(first.to_string())) });
    let rest = stream::unfold((rx, Some(guard)), |(mut rx, guard)| async move {
        guard.as_ref()?;
        match rx.recv().await? {
            Flow::Notification(n) => Some((
                Ok(Event::default().event("message").data(n.to_string())),
                (rx, guard),
            )),
            Flow::Reply(reply) => {
                // The call is over: ending the stream must not cancel anything.
                if let Some(g) = guard {
                    g.disarm();
                }
                reply.map(|r| {
                    (
                        Ok(Event::default().event("message").data(r.to_string())),
                        (rx, None),
                    )
                })
            }
        }
    });
    head.chain(rest)
}

async fn handle_get(State(state): State<Arc<AppState>>, headers: HeaderMap) -> Response {
    if let Some(denied) = check_origin(&state, &headers) {
        return denied;
    }
    let Some(session_id) = header_str(&headers, SESSION_HEADER) else {
        return StatusCode::METHOD_NOT_ALLOWED.into_response();
    };
    let Some(slot) = state.session(session_id) else {
        return error_response(
            StatusCode::NOT_FOUND,
            None,
            ErrorCode::INVALID_REQUEST.0,
            format!("unknown session {session_id:?}"),
        );
    };
    let Some(pushed) = slot
        .pushed
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .take()
    else {
        return error_response(
            StatusCode::CONFLICT,
            None,
            ErrorCode::INVALID_REQUEST.0,
            "this session's notification stream is already open",
        );
    };
    let events = stream::unfold(pushed, |mut rx| async move {
        let n = rx.recv().await?;
        Some((
            Ok::<_, Infallible>(Event::default().event("message").data(n.to_string())),
            rx,
        ))
    });
    Sse::new(events)
        .keep_alive(KeepAlive::default())
        .into_response()
}

async fn handle_delete(State(state): State<Arc<AppState>>, headers: HeaderMap) -> Response {
    if let Some(denied) = check_origin(&state, &headers) {
        return denied;
    }
    let Some(session_id) = header_str(&headers, SESSION_HEADER) else {
        return StatusCode::METHOD_NOT_ALLOWED.into_response();
    };
    let removed = state
        .sessions
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .remove(session_id);
    match removed {
        Some(slot) => {
            slot.session.shutdown();
            StatusCode::OK.into_response()
        }
        None => error_response(
            StatusCode::NOT_FOUND,
            None,
            ErrorCode::INVALID_REQUEST.0,
            format!("unknown session {session_id:?}"),
        ),
    }
}
