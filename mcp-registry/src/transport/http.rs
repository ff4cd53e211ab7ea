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
//! - `Host` and `Origin` are checked on every request against DNS rebinding: `403` unless the
//!   host is a loopback name (`localhost`, `127.0.0.1`, `[::1]`, any port) or listed in
//!   [`HttpConfig::allowed_hosts`], and the origin, when sent, is a localhost origin (allowed
//!   by default) or listed in [`HttpConfig::allowed_origins`].
//! - A POST must be `Content-Type: application/json` (`415` otherwise) and accept both
//!   `application/json` and `text/event-stream` (`406` otherwise); a `GET` must accept
//!   `text/event-stream`.
//! - A body over [`HttpConfig::max_body_bytes`] is refused with `413` without being buffered,
//!   at once when its `Content-Length` says so.
//! - With [`HttpConfig::auth`], the endpoint is an OAuth 2.1 resource server (MCP
//!   authorization): see [`auth`].
//!
//! Stateless (2026-07-28) traffic needs no sticky sessions, so N replicas can sit behind any
//! load balancer; legacy sessions live in the replica that minted them, so legacy clients need
//! routing by the `Mcp-Session-Id` header (see the README).

use std::collections::HashMap;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, FromRequest as _, Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, Uri, header};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use futures_util::StreamExt as _;
use futures_util::stream::{self, Stream};
use serde_json::Value;
use tokio::sync::mpsc;
use tokio::time::Instant;
use tokio_util::sync::{CancellationToken, DropGuard};

use crate::dispatch::{ServerSession, error_value, parse_error};
use crate::protocol::headers::decode_header_value;
use crate::protocol::{
    ErrorCode, ErrorObject, META_PROTOCOL_VERSION, MODERN_VERSION, ProtocolEra, ProtocolVersion,
    RequestId, method, require_modern_meta,
};
use crate::registry::{CallOptions, Registry};
use crate::tool::NotificationSink;

pub mod auth;

use auth::{AccessClaims, Auth};

/// The `Mcp-Session-Id` header.
pub const SESSION_HEADER: &str = "mcp-session-id";
/// The `MCP-Protocol-Version` header.
pub const VERSION_HEADER: &str = "mcp-protocol-version";
/// The JSON-RPC error code for headers that do not match the body (2026-07-28).
pub const HEADER_MISMATCH: ErrorCode = ErrorCode::HEADER_MISMATCH;

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
    allowed_hosts: Vec<String>,
    check_host: bool,
    max_body_bytes: usize,
    legacy_sessions: bool,
    max_sessions: usize,
    session_idle_timeout: Duration,
    auth: Option<Auth>,
}

impl Default for HttpConfig {
    fn default() -> Self {
        HttpConfig {
            path: "/mcp".to_owned(),
            allowed_origins: Vec::new(),
            allow_localhost: true,
            allowed_hosts: Vec::new(),
            check_host: true,
            max_body_bytes: 4 * 1024 * 1024,
            legacy_sessions: true,
            max_sessions: 10_000,
            session_idle_timeout: Duration::from_secs(30 * 60),
            auth: None,
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

    /// Hosts allowed in the `Host` header besides the loopback names (`localhost`,
    /// `127.0.0.1`, `[::1]`, always allowed), compared without case. A name alone allows any
    /// port; `name:port` allows that port only. Any other host gets `403`: a page that
    /// rebinds its own domain name to 127.0.0.1 still sends that name as `Host`.
    ///
    /// ```
    /// use mcp_registry::transport::http::HttpConfig;
    /// // Behind a proxy that forwards `Host: mcp.example.com`.
    /// let config = HttpConfig::default().allowed_hosts(["mcp.example.com"]);
    /// ```
    pub fn allowed_hosts<S: Into<String>>(mut self, hosts: impl IntoIterator<Item = S>) -> Self {
        self.allowed_hosts = hosts.into_iter().map(Into::into).collect();
        self
    }

    /// Whether the `Host` header is checked against DNS rebinding (default yes, see
    /// [`allowed_hosts`](Self::allowed_hosts)). Turn it off only when something in front of
    /// the server (a reverse proxy) checks the host already.
    pub fn check_host(mut self, yes: bool) -> Self {
        self.check_host = yes;
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

    /// Protects the endpoint with OAuth 2.1 bearer tokens (MCP authorization): every `POST`,
    /// `GET` and `DELETE` needs a valid token for [`Auth`]'s resource, and the protected
    /// resource metadata is served at the well-known paths. See [`auth`].
    pub fn auth(mut self, auth: Auth) -> Self {
        self.auth = Some(auth);
        self
    }

    /// Whether a request for `host` (`name[:port]`) may be served.
    fn host_allowed(&self, host: &str) -> bool {
        if !self.check_host {
            return true;
        }
        let name = match host.find(']') {
            Some(end) if host.starts_with('[') => &host[..=end],
            _ => host.split(':').next().unwrap_or_default(),
        };
        let loopback = ["localhost", "127.0.0.1", "[::1]"];
        loopback
            .iter()
            .any(|allowed| name.eq_ignore_ascii_case(allowed))
            || self.allowed_hosts.iter().any(|allowed| {
                allowed.eq_ignore_ascii_case(host) || allowed.eq_ignore_ascii_case(name)
            })
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

/// How often, at most, requests sweep away idle legacy sessions.
const SWEEP_EVERY: Duration = Duration::from_secs(1);

struct SessionSlot {
    session: ServerSession,
    /// The subject whose token opened the session (with [`HttpConfig::auth`]): only that
    /// subject may use it.
    owner: Option<String>,
    pushed: Mutex<Option<mpsc::UnboundedReceiver<Value>>>,
}

/// A kept legacy session and when it was last used.
struct LiveSession {
    slot: Arc<SessionSlot>,
    last_used: Instant,
}

/// The legacy sessions, behind one lock for lookups, the cap and sweeps.
struct Sessions {
    live: HashMap<String, LiveSession>,
    last_sweep: Instant,
}

impl Sessions {
    /// Ends the sessions idle for longer than `limit`.
    fn sweep(&mut self, now: Instant, limit: Duration) {
        self.last_sweep = now;
        self.live.retain(|_, live| {
            let keep = now.duration_since(live.last_used) <= limit;
            if !keep {
                live.slot.session.shutdown();
            }
            keep
        });
    }

    /// Removes the session `id`, ending it; `None` when there is none or it has been idle
    /// for longer than `limit` (it is gone all the same).
    fn remove(&mut self, id: &str, now: Instant, limit: Duration) -> Option<Arc<SessionSlot>> {
        let live = self.live.remove(id)?;
        live.slot.session.shutdown();
        (now.duration_since(live.last_used) <= limit).then_some(live.slot)
    }
}

struct AppState {
    registry: Registry,
    server: String,
    config: HttpConfig,
    sessions: Mutex<Sessions>,
}

impl AppState {
    fn sessions(&self) -> MutexGuard<'_, Sessions> {
        self.sessions.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Ends idle sessions when the last sweep is [`SWEEP_EVERY`] old; every request calls
    /// this, so abandoned sessions go away without waiting for an `initialize`.
    fn sweep_if_due(&self) {
        let now = Instant::now();
        let mut sessions = self.sessions();
        if now.duration_since(sessions.last_sweep) >= SWEEP_EVERY {
            sessions.sweep(now, self.config.session_idle_timeout);
        }
    }

    /// The session `id`, marked used; `None` when unknown, opened by another subject than
    /// `caller`'s (a session id is no credential), or idle for longer than the configured
    /// limit (then it is ended and removed).
    fn session(&self, id: &str, caller: Option<&AccessClaims>) -> Option<Arc<SessionSlot>> {
        let now = Instant::now();
        let limit = self.config.session_idle_timeout;
        let mut sessions = self.sessions();
        let live = sessions.live.get_mut(id)?;
        if !owned_by(&live.slot, caller) {
            return None;
        }
        if now.duration_since(live.last_used) > limit {
            sessions.remove(id, now, limit);
            return None;
        }
        live.last_used = now;
        Some(live.slot.clone())
    }

    /// Ends the session `id`; `false` when there was no live one of `caller`'s.
    fn end_session(&self, id: &str, caller: Option<&AccessClaims>) -> bool {
        let limit = self.config.session_idle_timeout;
        let mut sessions = self.sessions();
        if !sessions
            .live
            .get(id)
            .is_some_and(|live| owned_by(&live.slot, caller))
        {
            return false;
        }
        sessions.remove(id, Instant::now(), limit).is_some()
    }

    /// The caller's claims, or the refusal (`401`, `403`, `503`), when the endpoint is
    /// protected; `Ok(None)` when it is not.
    async fn authenticate(&self, headers: &HeaderMap) -> Result<Option<AccessClaims>, Response> {
        match &self.config.auth {
            Some(auth) => match auth.authenticate(headers).await {
                Ok(claims) => Ok(Some(claims)),
                Err(refusal) => Err(auth.refuse(refusal)),
            },
            None => Ok(None),
        }
    }

    /// Keeps `slot` as a new session and returns its id, or `None` when the session cap is
    /// reached. Idle sessions are ended first, and the cap check and the insert happen under
    /// one lock, so concurrent `initialize`s cannot overshoot the cap.
    fn open_session(&self, slot: SessionSlot) -> Option<String> {
        let now = Instant::now();
        let mut sessions = self.sessions();
        sessions.sweep(now, self.config.session_idle_timeout);
        if sessions.live.len() >= self.config.max_sessions {
            return None;
        }
        let session_id = uuid::Uuid::new_v4().simple().to_string();
        let live = LiveSession {
            slot: Arc::new(slot),
            last_used: now,
        };
        sessions.live.insert(session_id.clone(), live);
        Some(session_id)
    }
}

/// Whether `caller` (the subject of its token; nobody without authorization) opened `slot`.
fn owned_by(slot: &SessionSlot, caller: Option<&AccessClaims>) -> bool {
    slot.owner.as_deref() == caller.map(|c| c.subject.as_str())
}

/// An axum router serving `server` of `registry` at the configured path (default `/mcp`),
/// and, with [`HttpConfig::auth`], the protected resource metadata at its well-known paths.
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
        sessions: Mutex::new(Sessions {
            live: HashMap::new(),
            last_sweep: Instant::now(),
        }),
    });
    let mut app = Router::new().route(
        &config.path,
        post(handle_post).get(handle_get).delete(handle_delete),
    );
    if let Some(auth) = &config.auth {
        for path in auth.metadata_paths(&config.path) {
            app = app.route(
                &path,
                get(handle_metadata).options(|| async { auth::metadata_preflight() }),
            );
        }
    }
    app.layer(DefaultBodyLimit::max(config.max_body_bytes))
        .with_state(state)
}

/// The protected resource metadata (RFC 9728). Public, so no token and no origin check; the
/// `Host` check against DNS rebinding still applies.
async fn handle_metadata(
    State(state): State<Arc<AppState>>,
    uri: Uri,
    headers: HeaderMap,
) -> Response {
    if let Some(denied) = check_host(&state, &uri, &headers) {
        return denied;
    }
    match &state.config.auth {
        Some(auth) => auth::metadata_response(auth),
        None => StatusCode::NOT_FOUND.into_response(),
    }
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
    code: ErrorCode,
    message: impl Into<String>,
) -> Response {
    let error = ErrorObject::new(code, message);
    json_response(
        status,
        &error_value(id.and_then(RequestId::from_value), error),
    )
}

fn header_str<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

/// `Some(403 response)` when the request's `Host` or `Origin` is not allowed. The host is
/// the `Host` header, or the URI's authority (HTTP/2); a request with neither comes from no
/// browser, so no rebinding page, and is let through.
fn check_host_and_origin(state: &AppState, uri: &Uri, headers: &HeaderMap) -> Option<Response> {
    check_host(state, uri, headers).or_else(|| check_origin(state, headers))
}

/// `Some(403 response)` when the request's `Host` is not allowed (see
/// [`check_host_and_origin`]).
fn check_host(state: &AppState, uri: &Uri, headers: &HeaderMap) -> Option<Response> {
    let host = match headers.get(header::HOST) {
        Some(host) => Some(host.to_str().unwrap_or_default()),
        None => uri.authority().map(|a| a.as_str()),
    };
    if let Some(host) = host
        && !state.config.host_allowed(host.trim())
    {
        return Some(error_response(
            StatusCode::FORBIDDEN,
            None,
            ErrorCode::INVALID_REQUEST,
            format!("host {host:?} is not allowed"),
        ));
    }
    None
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
                ErrorCode::INVALID_REQUEST,
                format!("origin {origin:?} is not allowed"),
            )),
        },
    }
}

/// Checks a 2026-07-28 `tools/call`'s `Mcp-Param-{Name}` headers against its arguments, for
/// the parameters the tool annotates with `x-mcp-header`: each value the body has must come
/// in its header, decoded equal (a header that cannot be decoded is refused too). A tool this
/// server does not have is left to dispatch to refuse.
fn check_param_headers(
    registry: &Registry,
    server: &str,
    headers: &HeaderMap,
    message: &Value,
) -> Result<(), String> {
    let Some(params) = message.get("params") else {
        return Ok(());
    };
    let Some(tool) = params
        .get("name")
        .and_then(Value::as_str)
        .and_then(|name| Some(registry.server(server)?.tool(name)?.clone()))
    else {
        return Ok(());
    };
    // A server's own annotation it got wrong is not the client's fault: nothing to check.
    let annotated = tool.param_headers();
    if annotated.is_empty() {
        return Ok(());
    }
    let empty = serde_json::Map::new();
    let arguments = params
        .get("arguments")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    for param in annotated {
        let header = format!("mcp-param-{}", param.name());
        let sent = match headers.get(header.as_str()) {
            None => None,
            Some(raw) => match raw.to_str().ok().and_then(decode_header_value) {
                Some(decoded) => Some(decoded),
                None => {
                    return Err(format!(
                        "Header mismatch: the Mcp-Param-{} header is not a valid value",
                        param.name()
                    ));
                }
            },
        };
        let body = param.value_in(arguments);
        if sent != body {
            return Err(match (sent, body) {
                (None, Some(_)) => {
                    format!(
                        "Header mismatch: the Mcp-Param-{} header is missing",
                        param.name()
                    )
                }
                (sent, body) => format!(
                    "Header mismatch: Mcp-Param-{} header value {sent:?} does not match body value {body:?}",
                    param.name()
                ),
            });
        }
    }
    Ok(())
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
    uri: Uri,
    headers: HeaderMap,
    request: Request,
) -> Response {
    state.sweep_if_due();
    if let Some(denied) = check_host_and_origin(&state, &uri, &headers) {
        return denied;
    }
    let caller = match state.authenticate(&headers).await {
        Ok(caller) => caller,
        Err(refused) => return refused,
    };
    if let Some(refused) = check_post_headers(&state, &headers) {
        return refused;
    }
    // The streaming limit (`DefaultBodyLimit`) still holds for bodies without a length.
    let body = match Bytes::from_request(request, &()).await {
        Ok(body) => body,
        Err(e) => {
            return error_response(e.status(), None, ErrorCode::INVALID_REQUEST, e.body_text());
        }
    };
    let message: Value = match serde_json::from_slice(&body) {
        Ok(m) => m,
        Err(e) => return json_response(StatusCode::BAD_REQUEST, &parse_error(e)),
    };
    if let (Some(auth), Some(claims)) = (&state.config.auth, &caller)
        && let Err(refusal) = auth.check_scopes(claims, called_tools(&message))
    {
        return auth.refuse(refusal);
    }
    if message.is_array()
        && let Some(slot) =
            header_str(&headers, SESSION_HEADER).and_then(|id| state.session(id, caller.as_ref()))
        && slot.session.accepts_batches()
    {
        // A legacy session whose negotiated version has batches (2025-03-26) is served them.
        return match slot
            .session
            .handle_with(message, call_options(caller))
            .await
        {
            Some(reply) => json_response(StatusCode::OK, &reply),
            None => StatusCode::ACCEPTED.into_response(),
        };
    }
    if !message.is_object() {
        return error_response(
            StatusCode::BAD_REQUEST,
            None,
            ErrorCode::INVALID_REQUEST,
            "the body must be one JSON-RPC message (an object); batches are accepted only in a session whose protocol version has them (2025-03-26)",
        );
    }
    let body_version = message_meta(&message)
        .and_then(|m| m.get(META_PROTOCOL_VERSION))
        .and_then(Value::as_str)
        .map(str::to_owned);
    if body_version.is_some() || header_str(&headers, VERSION_HEADER) == Some(MODERN_VERSION) {
        post_modern(&state, &headers, message, body_version.as_deref(), caller).await
    } else {
        post_legacy(&state, &headers, message, caller).await
    }
}

/// The names of the tools a message (or a batch) calls.
fn called_tools(message: &Value) -> impl Iterator<Item = &str> {
    let messages = match message {
        Value::Array(batch) => batch.as_slice(),
        one => std::slice::from_ref(one),
    };
    messages
        .iter()
        .filter(|m| m.get("method").and_then(Value::as_str) == Some("tools/call"))
        .filter_map(|m| m.get("params")?.get("name")?.as_str())
}

/// The options of one call: the caller's claims, when authorized, for tools to read.
fn call_options(caller: Option<AccessClaims>) -> CallOptions {
    match caller {
        Some(claims) => CallOptions::new().extension(claims),
        None => CallOptions::new(),
    }
}

/// Checks a POST's headers (after `Host`, `Origin` and the token) before its body is read:
/// `Some(refusal)` when they fail.
fn check_post_headers(state: &AppState, headers: &HeaderMap) -> Option<Response> {
    if !accepts(headers, "application/json") || !accepts(headers, "text/event-stream") {
        return Some(error_response(
            StatusCode::NOT_ACCEPTABLE,
            None,
            ErrorCode::INVALID_REQUEST,
            "the Accept header must list both application/json and text/event-stream",
        ));
    }
    if !is_json(headers) {
        return Some(error_response(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            None,
            ErrorCode::INVALID_REQUEST,
            "the Content-Type must be application/json",
        ));
    }
    let max = state.config.max_body_bytes;
    let declared = header_str(headers, header::CONTENT_LENGTH.as_str())
        .and_then(|len| len.trim().parse::<u64>().ok());
    if declared.is_some_and(|len| len > max as u64) {
        return Some(error_response(
            StatusCode::PAYLOAD_TOO_LARGE,
            None,
            ErrorCode::INVALID_REQUEST,
            format!("the body is over the limit of {max} bytes"),
        ));
    }
    None
}

/// Whether the `Content-Type` is `application/json` (parameters such as `charset` allowed).
fn is_json(headers: &HeaderMap) -> bool {
    header_str(headers, header::CONTENT_TYPE.as_str())
        .and_then(|ct| ct.split(';').next())
        .is_some_and(|ct| ct.trim().eq_ignore_ascii_case("application/json"))
}

/// Whether the `Accept` header allows `media_type` (`type/subtype`): listed as such, as
/// `type/*` or as `*/*`, and not with `q=0`. A missing `Accept` allows nothing: the transport
/// spec requires clients to send one.
fn accepts(headers: &HeaderMap, media_type: &str) -> bool {
    let family = media_type.split('/').next().unwrap_or_default();
    headers
        .get_all(header::ACCEPT)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|range| {
            let mut parts = range.split(';').map(str::trim);
            let name = parts.next().unwrap_or_default().to_ascii_lowercase();
            let refused = parts.any(|p| {
                let (key, value) = p.split_once('=').unwrap_or((p, ""));
                key.trim().eq_ignore_ascii_case("q") && value.trim().parse() == Ok(0.0_f32)
            });
            let matches = match name.split_once('/') {
                Some(("*", "*")) => true,
                Some((ty, "*")) => ty == family,
                _ => name == media_type,
            };
            matches && !refused
        })
}

/// The `params._meta` of a message.
fn message_meta(message: &Value) -> Option<&Value> {
    message.get("params").and_then(|p| p.get("_meta"))
}

/// Whether a message is a request (it has an `id` and a `method`).
fn is_request(message: &Value) -> bool {
    message.get("id").is_some() && message.get("method").is_some()
}

/// The error code of a JSON-RPC error reply.
fn reply_error_code(reply: &Value) -> Option<ErrorCode> {
    let code = reply.get("error")?.get("code")?.as_i64()?;
    i32::try_from(code).ok().map(ErrorCode)
}

/// A POST in the 2026-07-28 shape (a version in `_meta`, or the 2026-07-28 version header):
/// checked in order for mirrored headers (-32020), required `_meta` (-32602) and version
/// (-32022), then answered statelessly.
async fn post_modern(
    state: &AppState,
    headers: &HeaderMap,
    message: Value,
    body_version: Option<&str>,
    caller: Option<AccessClaims>,
) -> Response {
    let id = message.get("id").cloned();
    let checked =
        check_modern_headers(headers, &message, body_version).and_then(|()| {
            match message.get("method").and_then(Value::as_str) {
                Some(method::TOOLS_CALL) => {
                    check_param_headers(&state.registry, &state.server, headers, &message)
                }
                _ => Ok(()),
            }
        });
    if let Err(mismatch) = checked {
        return error_response(
            StatusCode::BAD_REQUEST,
            id.as_ref(),
            ErrorCode::HEADER_MISMATCH,
            mismatch,
        );
    }
    let modern = body_version
        .and_then(ProtocolVersion::parse)
        .is_some_and(|v| v.era() == ProtocolEra::Modern);
    if (body_version.is_none() || modern)
        && let Err(e) = require_modern_meta(message_meta(&message).and_then(Value::as_object))
    {
        return json_response(
            StatusCode::BAD_REQUEST,
            &error_value(id.as_ref().and_then(RequestId::from_value), e),
        );
    }
    if !modern {
        // Unknown versions get -32022; a legacy version in `_meta` is answered statelessly.
        return match state
            .registry
            .handle_mcp_message(&state.server, message)
            .options(call_options(caller))
            .await
        {
            Some(reply) if reply.get("error").is_some() => {
                json_response(StatusCode::BAD_REQUEST, &reply)
            }
            Some(reply) => json_response(StatusCode::OK, &reply),
            None => StatusCode::ACCEPTED.into_response(),
        };
    }
    if !is_request(&message) {
        // Modern notifications carry no state to act on here.
        return StatusCode::ACCEPTED.into_response();
    }
    let registry = state.registry.clone();
    let server = state.server.clone();
    respond(true, caller, move |options| async move {
        registry
            .handle_mcp_message(&server, message)
            .options(options)
            .await
    })
    .await
}

/// A POST from a legacy (2025-xx) client: `initialize` opens a session, anything else
/// belongs to one.
async fn post_legacy(
    state: &AppState,
    headers: &HeaderMap,
    message: Value,
    caller: Option<AccessClaims>,
) -> Response {
    if let Some(v) = header_str(headers, VERSION_HEADER)
        && ProtocolVersion::parse(v).is_none()
    {
        return error_response(
            StatusCode::BAD_REQUEST,
            message.get("id"),
            ErrorCode::INVALID_REQUEST,
            format!("unsupported MCP-Protocol-Version {v:?}"),
        );
    }
    if is_request(&message) && message.get("method").and_then(Value::as_str) == Some("initialize") {
        post_initialize(state, message, caller).await
    } else {
        post_in_session(state, headers, message, caller).await
    }
}

/// A legacy `initialize`: answered by a new session, kept (and its id sent back) when it
/// succeeds.
async fn post_initialize(
    state: &AppState,
    message: Value,
    caller: Option<AccessClaims>,
) -> Response {
    let id = message.get("id").cloned();
    if !state.config.legacy_sessions {
        return error_response(
            StatusCode::BAD_REQUEST,
            id.as_ref(),
            ErrorCode::INVALID_REQUEST,
            "this endpoint serves only protocol version 2026-07-28 (stateless); initialize is not supported",
        );
    }
    let (session, pushed) = ServerSession::new(state.registry.clone(), state.server.clone());
    let Some(reply) = session.handle(message).await else {
        return StatusCode::ACCEPTED.into_response();
    };
    if reply.get("error").is_some() {
        return json_response(StatusCode::OK, &reply);
    }
    let slot = SessionSlot {
        session,
        owner: caller.map(|c| c.subject),
        pushed: Mutex::new(Some(pushed)),
    };
    let Some(session_id) = state.open_session(slot) else {
        return error_response(
            StatusCode::SERVICE_UNAVAILABLE,
            id.as_ref(),
            ErrorCode::INTERNAL_ERROR,
            "too many open sessions",
        );
    };
    let mut response = json_response(StatusCode::OK, &reply);
    if let Ok(v) = HeaderValue::from_str(&session_id) {
        response.headers_mut().insert(SESSION_HEADER, v);
    }
    response
}

/// A legacy message after `initialize`, for the session its `Mcp-Session-Id` names.
async fn post_in_session(
    state: &AppState,
    headers: &HeaderMap,
    message: Value,
    caller: Option<AccessClaims>,
) -> Response {
    let id = message.get("id");
    let Some(session_id) = header_str(headers, SESSION_HEADER) else {
        return error_response(
            StatusCode::BAD_REQUEST,
            id,
            ErrorCode::INVALID_REQUEST,
            "missing Mcp-Session-Id header: send initialize first, or use protocol version 2026-07-28 (stateless)",
        );
    };
    let Some(slot) = state.session(session_id, caller.as_ref()) else {
        return error_response(
            StatusCode::NOT_FOUND,
            id,
            ErrorCode::INVALID_REQUEST,
            format!("unknown session {session_id:?}; initialize a new one"),
        );
    };
    if !is_request(&message) {
        let _ = slot.session.handle(message).await;
        return StatusCode::ACCEPTED.into_response();
    }
    respond(false, caller, move |options| async move {
        slot.session.handle_with(message, options).await
    })
    .await
}

/// Runs one request, answering with JSON when the reply comes first, or with an SSE stream
/// (notifications, then the reply) when a notification comes first. Dropping the response —
/// the client going away — cancels the call. A modern unknown method is `404` (2026-07-28).
/// The caller's claims, when authorized, go to the call's extensions.
async fn respond<F, Fut>(modern: bool, caller: Option<AccessClaims>, run: F) -> Response
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
    let fut = run(call_options(caller).notifications(sink).cancellation(token));
    tokio::spawn(async move {
        let reply = fut.await;
        let _ = tx.send(Flow::Reply(reply));
    });
    match rx.recv().await {
        None | Some(Flow::Reply(None)) => StatusCode::ACCEPTED.into_response(),
        Some(Flow::Reply(Some(reply))) => {
            drop(guard.disarm());
            let status = match reply_error_code(&reply) {
                Some(ErrorCode::METHOD_NOT_FOUND) if modern => StatusCode::NOT_FOUND,
                Some(ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY) if modern => {
                    StatusCode::BAD_REQUEST
                }
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

async fn handle_get(State(state): State<Arc<AppState>>, uri: Uri, headers: HeaderMap) -> Response {
    state.sweep_if_due();
    if let Some(denied) = check_host_and_origin(&state, &uri, &headers) {
        return denied;
    }
    let caller = match state.authenticate(&headers).await {
        Ok(caller) => caller,
        Err(refused) => return refused,
    };
    let Some(session_id) = header_str(&headers, SESSION_HEADER) else {
        return StatusCode::METHOD_NOT_ALLOWED.into_response();
    };
    if !accepts(&headers, "text/event-stream") {
        return error_response(
            StatusCode::NOT_ACCEPTABLE,
            None,
            ErrorCode::INVALID_REQUEST,
            "the Accept header must list text/event-stream",
        );
    }
    let Some(slot) = state.session(session_id, caller.as_ref()) else {
        return error_response(
            StatusCode::NOT_FOUND,
            None,
            ErrorCode::INVALID_REQUEST,
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
            ErrorCode::INVALID_REQUEST,
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

async fn handle_delete(
    State(state): State<Arc<AppState>>,
    uri: Uri,
    headers: HeaderMap,
) -> Response {
    state.sweep_if_due();
    if let Some(denied) = check_host_and_origin(&state, &uri, &headers) {
        return denied;
    }
    let caller = match state.authenticate(&headers).await {
        Ok(caller) => caller,
        Err(refused) => return refused,
    };
    let Some(session_id) = header_str(&headers, SESSION_HEADER) else {
        return StatusCode::METHOD_NOT_ALLOWED.into_response();
    };
    if state.end_session(session_id, caller.as_ref()) {
        StatusCode::OK.into_response()
    } else {
        error_response(
            StatusCode::NOT_FOUND,
            None,
            ErrorCode::INVALID_REQUEST,
            format!("unknown session {session_id:?}"),
        )
    }
}
