//! [`ServerSession`]: one connection's view of one server, with the legacy lifecycle,
//! concurrent requests, cancellation, `notifications/{tools,prompts,resources}/list_changed`,
//! resource subscriptions (`notifications/resources/updated`), and the requests a tool makes
//! of the client (elicitation, sampling, roots) with the client's replies matched to them.

use std::collections::HashSet;
use std::fmt;
use std::future::IntoFuture;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use serde::Deserialize as _;
use serde_json::{Map, Value};

mod answer;
mod effects;
mod in_flight;
mod shared;

#[cfg(feature = "http")]
pub(crate) use answer::Started;
#[cfg(feature = "stdio")]
pub(crate) use in_flight::Registered;
pub use shared::SessionSnapshot;

use super::changes::ServerChanges;
use super::client_requests::ClientRequests;
use super::outbox::{self, Outgoing};
use crate::protocol::{ClientCapabilities, LoggingLevel, Notification, ProtocolVersion, method};
use crate::registry::{Registry, UpdateHook, WithOptions};
use crate::sync::MutexExt;
use crate::tool::{BoxFuture, Caller, NotificationSink};
use in_flight::InFlightTable;

/// Where a session is in the MCP lifecycle.
///
/// The transitions are the modelled server dispatch state machine's:
///
/// | from | on | to |
/// |---|---|---|
/// | `Uninitialized` | `initialize` answered | `Initializing` |
/// | `Initializing` | `notifications/initialized` | `Ready` |
/// | any but `ShuttingDown` | [`ServerSession::mark_error`] | `Error` |
/// | `Error` | `initialize` answered (a re-initialization) | `Initializing` |
/// | `Error` | [`ServerSession::reset`] | `Uninitialized` |
/// | any | [`ServerSession::shutdown`] | `ShuttingDown` (final) |
///
/// `reset` from any other state is refused with a [`LifecycleError`]; `mark_error` once shut
/// down is ignored (shutdown is final).
///
/// Legacy requests by state: `Uninitialized` and `Error` serve only `ping` and `initialize`,
/// `Initializing` and `Ready` everything but `initialize`, `ShuttingDown` only `ping`.
/// Where this departs from the model, on purpose: 2026-07-28 requests are stateless (they
/// carry their version and need no handshake), so they are served in every state but
/// `ShuttingDown`, `Error` included; and `Initializing` serves requests, as the MCP lifecycle
/// lets a client send them once `initialize` is answered.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Lifecycle {
    /// No `initialize` yet: only `ping`, `initialize` and modern requests are served.
    Uninitialized,
    /// `initialize` answered; waiting for `notifications/initialized` (requests are served).
    Initializing,
    /// Fully initialized.
    Ready,
    /// Marked failed: legacy requests other than `ping` and `initialize` (which
    /// re-initializes) are refused with the reason, until then or [`ServerSession::reset`].
    Error(String),
    /// Closing: only `ping` is served, and the requests in flight were cancelled.
    ShuttingDown,
}

/// A lifecycle transition the session's state machine does not allow.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("cannot {transition} a session in the {from:?} state")]
#[non_exhaustive]
pub struct LifecycleError {
    /// What was asked, e.g. `"reset"`.
    pub transition: &'static str,
    /// The state the session was in (and still is).
    pub from: Lifecycle,
}

/// The most URIs one session may subscribe to: a peer cannot grow the set without bound.
pub const MAX_SUBSCRIPTIONS: usize = 4096;

struct State {
    lifecycle: Lifecycle,
    version: Option<ProtocolVersion>,
    /// What `logging/setLevel` asked for.
    log_level: Option<LoggingLevel>,
    /// What the client declared in `initialize`, shared with its calls' input handlers.
    client: Option<Arc<ClientCapabilities>>,
}

struct Inner {
    registry: Registry,
    server: String,
    /// `mcp.server.session.duration` (feature `otel`), recorded when the session ends.
    _timer: crate::telemetry::SessionTimer,
    /// Who the session's requests come from when the transport names no one else: the
    /// session itself, by an id of its own, made when first needed (an HTTP session's calls
    /// name its `Mcp-Session-Id`, so an idle one holds no second id: issue #41).
    caller: OnceLock<Caller>,
    state: Mutex<State>,
    /// The requests being answered, for `notifications/cancelled`, `reset` and `shutdown`.
    in_flight: Mutex<InFlightTable>,
    /// Requests sent to the client, waiting for its replies.
    requests: Arc<ClientRequests>,
    outbox: outbox::Sender,
    /// Calls' notifications, into `outbox` (built once, cloned per request).
    notifications: NotificationSink,
    /// The URIs `resources/subscribe`d to.
    subscriptions: Mutex<HashSet<String>>,
    /// Sends `notifications/resources/updated`; the registry holds it weakly.
    _update_hook: Arc<UpdateHook>,
    watcher: Option<tokio::task::JoinHandle<()>>,
}

impl Drop for Inner {
    fn drop(&mut self) {
        if let Some(w) = &self.watcher {
            w.abort();
        }
        // Whoever still waits for the client hears that it is gone.
        self.requests.clear();
    }
}

/// One client connection to one server of a [`Registry`].
///
/// Requests may be handled concurrently (call [`handle`](Self::handle) from several tasks on
/// clones of the session). Everything the server sends on its own (progress,
/// `notifications/tools/list_changed`) goes to the receiver returned by
/// [`new`](Self::new), in order, bounded whether or not it is read (see [`Outgoing`]); a
/// call's notifications are queued before its reply is returned. Transports (stdio, HTTP) sit on this type.
///
/// ```
/// use mcp_registry::{Registry, Server, Tool, dispatch::ServerSession};
/// use serde_json::json;
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// # let t = Tool::new("t", "x", json!({"type": "object"}), |_| async { "ok" }).unwrap();
/// let registry = Registry::from_servers([Server::new("s", None, [t]).unwrap()]);
/// let (session, _outgoing) = ServerSession::new(registry, "s");
/// let early = session.handle(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})).await.unwrap();
/// assert_eq!(early["error"]["code"], -32600, "initialize comes first");
/// session.handle(json!({"jsonrpc": "2.0", "id": 2, "method": "initialize", "params": {
///     "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}}})).await;
/// session.handle(json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).await;
/// let list = session.handle(json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list"})).await.unwrap();
/// assert_eq!(list["result"]["tools"][0]["name"], "t");
/// # }
/// ```
#[derive(Clone)]
pub struct ServerSession {
    inner: Arc<Inner>,
}

impl fmt::Debug for ServerSession {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ServerSession")
            .field("server", &self.inner.server)
            .field("lifecycle", &self.lifecycle())
            .finish()
    }
}

impl ServerSession {
    /// A session on `server` of `registry`, and the receiver of what the server sends on its
    /// own. Inside a Tokio runtime, a background task watches the registry and sends
    /// `notifications/tools/list_changed` (once the session is initialized) whenever this
    /// server's tools change: registered, replaced, toggled or unregistered; and
    /// `notifications/prompts/list_changed` too when the server has prompts, before or after
    /// the change. Created outside a runtime, the session has no such task and advertises
    /// `listChanged: false`.
    pub fn new(registry: Registry, server: impl Into<String>) -> (ServerSession, Outgoing) {
        let server = server.into();
        let (outbox, outgoing) = outbox::channel();
        let session = Arc::new_cyclic(|weak: &std::sync::Weak<Inner>| {
            let watcher = tokio::runtime::Handle::try_current().ok().map(|handle| {
                let mut changes =
                    ServerChanges::new(&registry, &server, registry.served(&server).as_ref());
                let weak = weak.clone();
                let name = server.clone();
                handle.spawn(async move {
                    while changes.changed().await {
                        let touched = changes.touched();
                        let Some(inner) = weak.upgrade() else { break };
                        if !touched {
                            continue;
                        }
                        let lists = changes.lists(inner.registry.served(&name).as_ref());
                        if ServerSession::lifecycle_of(&inner).is_initialized() {
                            let mut methods = vec![method::TOOLS_LIST_CHANGED];
                            if lists.prompts {
                                methods.push(method::PROMPTS_LIST_CHANGED);
                            }
                            if lists.resources {
                                methods.push(method::RESOURCES_LIST_CHANGED);
                            }
                            for method in methods {
                                let changed = Notification::<()>::new(method, None);
                                let _ = inner
                                    .outbox
                                    .send(serde_json::to_value(changed).unwrap_or_default());
                            }
                        }
                    }
                })
            });
            let update_hook: Arc<UpdateHook> = {
                let weak = weak.clone();
                Arc::new(move |uri: &str| {
                    weak.upgrade()
                        .is_some_and(|inner| ServerSession::send_update(&inner, uri))
                })
            };
            registry.on_resource_updated(&update_hook);
            Inner {
                registry,
                server,
                _timer: crate::telemetry::SessionTimer::server(),
                caller: OnceLock::new(),
                state: Mutex::new(State {
                    lifecycle: Lifecycle::Uninitialized,
                    version: None,
                    log_level: None,
                    client: None,
                }),
                in_flight: Mutex::default(),
                requests: Arc::default(),
                notifications: outbox.sink(),
                subscriptions: Mutex::new(HashSet::new()),
                _update_hook: update_hook,
                outbox,
                watcher,
            }
        });
        (ServerSession { inner: session }, outgoing)
    }

    /// The session as a caller, for requests no transport named a caller of.
    pub(super) fn own_caller(&self) -> &Caller {
        // Without randomness the session cannot be told apart: anonymous (its tasks
        // reachable by id only, never listed), never a guessable id.
        self.inner
            .caller
            .get_or_init(|| crate::random::token().map_or(Caller::Anonymous, Caller::session_of))
    }

    /// Sends `notifications/resources/updated` for `uri` when this initialized session
    /// subscribed to it; says whether it did.
    fn send_update(inner: &Inner, uri: &str) -> bool {
        let subscribed = inner.subscriptions.lock_unpoisoned().contains(uri);
        if !subscribed || !Self::lifecycle_of(inner).is_initialized() {
            return false;
        }
        let params = crate::protocol::ResourceUpdatedParams {
            uri: uri.to_owned(),
        };
        let updated = Notification::new(method::RESOURCES_UPDATED, Some(params));
        inner
            .outbox
            .send(serde_json::to_value(updated).unwrap_or_default())
    }

    /// The URIs this session subscribed to, sorted.
    pub fn subscriptions(&self) -> Vec<String> {
        let mut uris: Vec<String> = self.subscribed().iter().cloned().collect();
        uris.sort();
        uris
    }

    fn subscribed(&self) -> MutexGuard<'_, HashSet<String>> {
        self.inner.subscriptions.lock_unpoisoned()
    }

    fn lifecycle_of(inner: &Inner) -> Lifecycle {
        inner.state.lock_unpoisoned().lifecycle.clone()
    }

    /// The server this session talks to.
    pub fn server_name(&self) -> &str {
        &self.inner.server
    }

    /// The current lifecycle state.
    pub fn lifecycle(&self) -> Lifecycle {
        Self::lifecycle_of(&self.inner)
    }

    /// The level a legacy client asked for with `logging/setLevel`: tools' log messages at it
    /// or above are sent ([`ToolContext::log`](crate::ToolContext::log)); none before it asks.
    pub fn log_level(&self) -> Option<LoggingLevel> {
        self.state().log_level
    }

    /// The legacy protocol version negotiated by `initialize`, if any.
    pub fn protocol_version(&self) -> Option<ProtocolVersion> {
        self.state().version
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.inner.state.lock_unpoisoned()
    }

    /// Puts the session in the error state: legacy requests other than `ping` and
    /// `initialize` are refused with `reason` until the client re-initializes or
    /// [`reset`](Self::reset). Ignored once shut down (shutdown is final).
    pub fn mark_error(&self, reason: impl Into<String>) {
        let mut state = self.state();
        if state.lifecycle != Lifecycle::ShuttingDown {
            state.lifecycle = Lifecycle::Error(reason.into());
        }
    }

    /// From the error state back to `Uninitialized` (a new `initialize` is expected): the
    /// negotiated version is forgotten and the requests in flight are cancelled. From any other state
    /// nothing changes and a [`LifecycleError`] says so.
    pub fn reset(&self) -> Result<(), LifecycleError> {
        {
            let mut state = self.state();
            if !matches!(state.lifecycle, Lifecycle::Error(_)) {
                return Err(LifecycleError {
                    transition: "reset",
                    from: state.lifecycle.clone(),
                });
            }
            state.lifecycle = Lifecycle::Uninitialized;
            state.version = None;
            state.log_level = None;
            state.client = None;
        }
        self.subscribed().clear();
        self.cancel_all();
        Ok(())
    }

    /// Shuts the session down: every request in flight, whatever its kind, is cancelled (no
    /// reply is sent for it) and every later request but `ping` is refused.
    pub fn shutdown(&self) {
        self.state().lifecycle = Lifecycle::ShuttingDown;
        self.cancel_all();
    }

    /// The client can no longer reply (its input ended): requests waiting for its replies
    /// end with [`InputError::Disconnected`](crate::tool::InputError::Disconnected), and so do those made later.
    #[cfg(feature = "stdio")]
    pub(crate) fn client_gone(&self) {
        self.inner.requests.close();
    }

    /// Handles one message: returns the request to configure (per-request options, see
    /// [`WithOptions`]) and `.await`, giving `Some(reply)` for a request (unless it was
    /// cancelled) and `None` for a notification or a response. When the options carry no
    /// notification sink, the call's notifications go to the session's outgoing channel (a
    /// transport with per-request streams, like Streamable HTTP, passes its own).
    ///
    /// A JSON-RPC batch (an array) is served when [`accepts_batches`](Self::accepts_batches):
    /// its messages are handled concurrently and the replies come back as one array (`None`
    /// when it held only notifications and responses; one -32600 when empty). Otherwise it is
    /// refused with one -32600.
    pub fn handle(&self, message: Value) -> SessionRequest<'_, Value> {
        WithOptions::new(SessionMessage {
            session: self,
            input: message,
        })
    }

    /// [`handle`](Self::handle) for a JSON text, answering as JSON text (what a transport
    /// reads and writes). Unparseable text is answered with -32700. A `tools/call` is read in
    /// place, its arguments deserialized by the tool straight from the text; a `tools/list`
    /// reply splices the listing serialized once per registry change.
    pub fn handle_text<'a>(&'a self, text: &'a str) -> SessionRequest<'a, &'a str> {
        WithOptions::new(SessionMessage {
            session: self,
            input: text,
        })
    }
}

/// A message to a session, configured and `.await`ed: what [`ServerSession::handle`] (`I` a
/// `Value`) and [`ServerSession::handle_text`] (`I` JSON text) return.
pub type SessionRequest<'a, I> = WithOptions<SessionMessage<'a, I>>;

/// What a [`SessionRequest`] answers: one message to one session.
pub struct SessionMessage<'a, I> {
    session: &'a ServerSession,
    input: I,
}

impl<'a> IntoFuture for SessionRequest<'a, Value> {
    type Output = Option<Value>;
    type IntoFuture = BoxFuture<'a, Option<Value>>;

    fn into_future(self) -> Self::IntoFuture {
        let SessionMessage { session, input } = self.target;
        Box::pin(session.answer_value(input, self.options))
    }
}

impl<'a> IntoFuture for SessionRequest<'a, &'a str> {
    type Output = Option<String>;
    type IntoFuture = BoxFuture<'a, Option<String>>;

    fn into_future(self) -> Self::IntoFuture {
        let SessionMessage { session, input } = self.target;
        Box::pin(session.answer_text(input, self.options))
    }
}

impl Lifecycle {
    /// Whether `initialize` has been answered (Initializing or Ready).
    pub fn is_initialized(&self) -> bool {
        matches!(self, Lifecycle::Initializing | Lifecycle::Ready)
    }
}

/// The capabilities of an `initialize` request (none when they cannot be read).
fn client_capabilities(params: &Map<String, Value>) -> ClientCapabilities {
    params
        .get("capabilities")
        .and_then(|c| ClientCapabilities::deserialize(c).ok())
        .unwrap_or_default()
}
