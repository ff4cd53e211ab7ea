//! Streamable HTTP, as an axum [`Router`] to mount in your own app or a one-call server.
//!
//! - `POST /mcp` takes one JSON-RPC message. A request gets a JSON reply, or an SSE stream
//!   when the call sends notifications (progress) before its reply; a notification or response
//!   gets `202 Accepted`. Closing the stream cancels the call, except in a legacy session,
//!   whose SSE streams are resumable: every event carries an id, is kept in a bounded buffer
//!   ([`HttpConfig::resume_buffer`]), and a `GET` with `Last-Event-ID` replays what followed
//!   it (`410 Gone` when those events are no longer kept); the call runs on meanwhile.
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
//!   at once when its `Content-Length` says so; a body that takes longer than
//!   [`HttpConfig::body_read_timeout`] to arrive is refused with `408`.
//! - [`serve`] holds connections to [`HttpConfig::header_read_timeout`] (a request head
//!   trickled in), [`HttpConfig::idle_timeout`] (a connection with no request on it) and
//!   [`HttpConfig::max_connections`]: a slow or silent peer cannot hold the server's sockets.
//! - With [`HttpConfig::auth`], the endpoint is an OAuth 2.1 resource server (MCP
//!   authorization): see [`auth`].
//! - Health routes beside the endpoint ([`HttpConfig::health_paths`]): `GET /healthz`
//!   (liveness: `200` while the process serves) and `GET /readyz` (readiness: an in-process
//!   `tools/list` through the same dispatch as a client's, and the session and task stores
//!   pinged; `200`, or `503` naming the failed check, or `503` `"draining"`). They take no
//!   token and skip the Host and Origin checks, so that a load balancer probes by address:
//!   see [`health`].
//!
//! ## Graceful shutdown
//!
//! Give every router of the process one [`Shutdown`] ([`HttpConfig::shutdown`]) and trigger
//! it on `SIGTERM`. At once, readiness answers `503` `"draining"` and each legacy `GET`
//! stream ends with an SSE `retry:` hint ([`DRAIN_RETRY`]) so its client reconnects, through
//! the load balancer, to another replica. [`serve`] goes on serving for
//! [`HttpConfig::drain_delay`] (none by default: give the load balancer time to take the
//! replica out), then stops accepting (a router of your own: axum's
//! `with_graceful_shutdown(shutdown.draining())`, with your own delay after it). Legacy sessions are saved to
//! the session store when there is one ([`Shutdown::hand_over`], which [`serve`] calls), so
//! another replica serves them. Calls in flight, and the registry's tasks, get
//! [`HttpConfig::drain_timeout`] (30 s) to finish; past it each call still running is
//! cancelled and answered with an error saying the server shut down (the client calls again,
//! and another replica answers), and each task still under way is recorded `failed` at once
//! (rather than when its lease in a shared task store runs out). [`serve`] then returns.
//!
//! Behind HAProxy, check readiness so that a draining or broken replica is taken out:
//!
//! ```text
//! backend replicas
//!     option httpchk GET /readyz
//!     http-check expect status 200
//!     default-server check inter 1s fall 2 rise 1
//! ```
//!
//! Stateless (2026-07-28) traffic needs no sticky sessions, so N replicas can sit behind any
//! load balancer. Legacy sessions live in the replica that minted them, unless the replicas
//! share them through a [`SessionStore`] ([`HttpConfig::session_store`]; with the feature
//! `redis`, `replicas::RedisSessions`): then any replica serves any session, round-robin.
//! Changes reach the streams of every replica when the registry has a change bus
//! ([`RegistryBuilder::change_bus`](crate::RegistryBuilder::change_bus)). Per replica:
//!
//! ```text
//! let bus = RedisBus::new(&Redis::new(url)?.prefix("notes"));
//! let registry = Registry::builder().servers(servers).change_bus(bus.clone()).build();
//! let config = HttpConfig::default().session_store(RedisSessions::new(&bus));
//! ```

use std::net::SocketAddr;
use std::sync::Arc;

use axum::Router;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::Value;

use crate::dispatch::error_value;
use crate::protocol::{ErrorCode, ErrorObject, RequestId};
use crate::registry::{CallOptions, Registry};
use auth::AccessClaims;

mod all;
pub mod auth;
mod auth_wire;
mod checks;
mod claims;
mod config;
#[cfg(feature = "http-dpop")]
pub mod dpop;
mod drain;
pub mod health;
mod kept;
mod post;
mod resume;
mod serve;
mod sessions;
mod shared;
mod stream;

pub use all::{router_all, serve_all, serve_all_listener};
pub use config::HttpConfig;
pub use drain::{DRAIN_RETRY, Shutdown};
pub use shared::{
    KeptEvent, KeptEvents, Presence, SessionEvent, SessionEvents, SessionRecord, SessionStore,
    SessionStoreError,
};

use checks::check_host;
use post::handle_post;
use sessions::AppState;
use stream::{handle_delete, handle_get};

/// The `Mcp-Session-Id` header.
pub const SESSION_HEADER: &str = "mcp-session-id";
/// The `MCP-Protocol-Version` header.
pub const VERSION_HEADER: &str = "mcp-protocol-version";
/// The header names the transport reads, parsed once rather than on every lookup.
static SESSION_NAME: header::HeaderName = header::HeaderName::from_static(SESSION_HEADER);
static VERSION_NAME: header::HeaderName = header::HeaderName::from_static(VERSION_HEADER);
static METHOD_NAME: header::HeaderName = header::HeaderName::from_static("mcp-method");
static NAME_NAME: header::HeaderName = header::HeaderName::from_static("mcp-name");

/// The JSON-RPC error code for headers that do not match the body (2026-07-28).
pub const HEADER_MISMATCH: ErrorCode = ErrorCode::HEADER_MISMATCH;

/// An axum router serving `server` of `registry` at the configured path (default `/mcp`),
/// its health routes ([`HttpConfig::health_paths`], defaults `/healthz` and `/readyz`),
/// and, with [`HttpConfig::auth`], the protected resource metadata at its well-known paths.
/// It drains when [`HttpConfig::shutdown`]'s handle is triggered (see
/// [Graceful shutdown](self#graceful-shutdown)).
/// ([`router_all`] serves every server of the registry, as one and each at its own path.)
///
/// The router enforces the body's limits ([`HttpConfig::max_body_bytes`],
/// [`HttpConfig::body_read_timeout`]) wherever it is mounted. The connection limits are the
/// server's: mounted in your own app, set them there, or slow and silent peers hold your
/// sockets for ever (`axum::serve` has none of them):
/// - a time limit on reading a request's head (hyper's `http1::Builder::header_read_timeout`,
///   which needs a timer such as `hyper_util::rt::TokioTimer`);
/// - a limit on idle keep-alive connections (the same hyper setting also covers them);
/// - a cap on open connections (a semaphore around `accept`, as [`serve`] does).
///
/// ```
/// use mcp_registry::{Registry, transport::http::{router, HttpConfig}};
/// let app: axum::Router = router(Registry::new(), "math", HttpConfig::default());
/// ```
pub fn router(registry: Registry, server: &str, config: HttpConfig) -> Router {
    endpoint(registry, server, config).router
}

/// The router of [`router`], and what [`serve`] calls without it: the endpoint's `POST`
/// (no response layer runs on it; DPoP's nonces need theirs).
fn endpoint(registry: Registry, server: &str, config: HttpConfig) -> serve::App {
    let state = Arc::new(AppState::new(registry, server, config.clone()));
    if let Some(store) = &config.session_store {
        store.attach(SessionEvents::new(&state));
    }
    config.shutdown.register(&state);
    let mut app = Router::new().route(
        &config.path,
        post(handle_post).get(handle_get).delete(handle_delete),
    );
    if let Some(path) = &config.liveness_path {
        app = app.route(path, get(health::handle_live));
    }
    if let Some(path) = &config.readiness_path {
        app = app.route(path, get(health::handle_ready));
    }
    if let Some(auth) = &config.auth {
        for path in auth.metadata_paths(&config.path) {
            app = app.route(
                &path,
                get(handle_metadata).options(|| async { auth::metadata_preflight() }),
            );
        }
    }
    #[cfg_attr(not(feature = "http-dpop"), allow(unused_mut))]
    let mut direct = Some(state.clone());
    #[cfg(feature = "http-dpop")]
    if let Some(dpop) = config
        .auth
        .as_ref()
        .and_then(|a| a.dpop_settings())
        .cloned()
    {
        // Every response carries the current DPoP nonce (none when nonces are off).
        direct = None;
        app = app.layer(axum::middleware::map_response(
            move |mut response: Response| {
                let dpop = dpop.clone();
                async move {
                    dpop.add_nonce(&mut response);
                    response
                }
            },
        ));
    }
    // The body's limits are the `POST` handler's own (`read_body`), so they hold on both ways
    // in, with no layer for them.
    let router = app.with_state(state);
    serve::App { router, direct }
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

/// Serves `server` of `registry` on `addr`, over HTTP/1.1 with the connection limits of
/// `config`: [`HttpConfig::header_read_timeout`], [`HttpConfig::idle_timeout`] and
/// [`HttpConfig::max_connections`] (and, as everywhere, [`HttpConfig::body_read_timeout`]),
/// until [`HttpConfig::shutdown`]'s handle is triggered: it then drains (see
/// [Graceful shutdown](self#graceful-shutdown)) and returns.
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
    serve_listener(listener, registry, server, config).await
}

/// [`serve`] on a listener already bound (to port 0, say, or handed over by a supervisor).
///
/// ```no_run
/// # async fn run(registry: mcp_registry::Registry) -> std::io::Result<()> {
/// use mcp_registry::transport::http::{serve_listener, HttpConfig};
/// let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
/// println!("listening on {}", listener.local_addr()?);
/// serve_listener(listener, registry, "math", HttpConfig::default()).await
/// # }
/// ```
pub async fn serve_listener(
    listener: tokio::net::TcpListener,
    registry: Registry,
    server: &str,
    config: HttpConfig,
) -> std::io::Result<()> {
    let addr = listener.local_addr()?;
    tracing::info!(%addr, server, "serving MCP over Streamable HTTP");
    let app = endpoint(registry, server, config.clone());
    serve::accept_loop(listener, app, &config).await;
    Ok(())
}

fn json_response(status: StatusCode, body: &Value) -> Response {
    text_response(status, body.to_string())
}

/// A response with JSON `text` as its body.
fn text_response(status: StatusCode, text: String) -> Response {
    (status, [(header::CONTENT_TYPE, "application/json")], text).into_response()
}

/// A refusal: the JSON-RPC error `code` with `message` (which says what to change), under
/// `status`, and logged. Refusals an operator can act on (`403` by Host or Origin, `503`) are
/// warnings; limits a peer ran into (`408`, `413`) are info; a client's own mistakes are
/// debug, so that a misbehaving client cannot fill the log.
fn error_response(
    status: StatusCode,
    id: Option<&RequestId>,
    code: ErrorCode,
    message: impl Into<String>,
) -> Response {
    let message = message.into();
    log_refusal(status, &message);
    let error = ErrorObject::new(code, message);
    json_response(status, &error_value(id.cloned(), error))
}

/// Logs a refusal at the level [`error_response`] describes.
fn log_refusal(status: StatusCode, message: &str) {
    let status = status.as_u16();
    match status {
        403 | 503 => tracing::warn!(status, "MCP over HTTP: refused: {message}"),
        408 | 413 => tracing::info!(status, "MCP over HTTP: refused: {message}"),
        _ => tracing::debug!(status, "MCP over HTTP: refused: {message}"),
    }
}

fn header_str<'a>(headers: &'a HeaderMap, name: &header::HeaderName) -> Option<&'a str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

/// The options of one request, and its [`Caller`](crate::Caller): the token's principal
/// when authorized (its claims also go to the extensions, for tools to read), else the
/// legacy session named by `session`, else anonymous.
fn call_options(claims: Option<AccessClaims>, session: Option<&Arc<str>>) -> CallOptions {
    match (claims, session) {
        (Some(claims), _) => CallOptions::new().caller(claims.caller()).extension(claims),
        // The session's id shared, not copied (issue #41).
        (None, Some(session)) => {
            CallOptions::new().caller(crate::Caller::session_of(Arc::clone(session)))
        }
        (None, None) => CallOptions::new(),
    }
}
