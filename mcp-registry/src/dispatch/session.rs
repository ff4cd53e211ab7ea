//! [`ServerSession`]: one connection's view of one server, with the legacy lifecycle,
//! concurrent requests, cancellation, `notifications/{tools,prompts,resources}/list_changed`,
//! resource subscriptions (`notifications/resources/updated`), and the requests a tool makes
//! of the client (elicitation, sampling, roots) with the client's replies matched to them.

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::future::IntoFuture;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use serde::Deserialize as _;
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

mod effects;
mod shared;

pub use shared::SessionSnapshot;

use super::changes::ServerChanges;
use super::client_requests::{ClientRequests, SessionInput};
use super::outbox::{self, Outgoing};
use super::{
    Answer, Connection, Dispatcher, Effect, empty_batch, error_value, parse_error, refuse_too_deep,
    reply_text, reply_value,
};
use crate::protocol::decode::{
    Incoming, IncomingRequest, Invalid, TextMessage, decode, decode_text,
};
use crate::protocol::{
    ClientCapabilities, Era, ErrorCode, ErrorObject, LoggingLevel, Notification, ProtocolVersion,
    RequestId, drop_flat, exceeds_max_depth, method,
};
use crate::registry::{CallOptions, Registry, UpdateHook, WithOptions};
use crate::tool::{BoxFuture, Caller, NotificationSink};

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
    /// Closing: only `ping` is served, and in-flight calls were cancelled.
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
    /// Who the session's requests come from when the transport names no one else: the
    /// session itself, by an id of its own.
    caller: Caller,
    state: Mutex<State>,
    in_flight: Mutex<HashMap<RequestId, CancellationToken>>,
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
        self.requests.waiting().clear();
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
                caller: Caller::session_of(crate::random::token()),
                state: Mutex::new(State {
                    lifecycle: Lifecycle::Uninitialized,
                    version: None,
                    log_level: None,
                    client: None,
                }),
                in_flight: Mutex::new(HashMap::new()),
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

    /// Sends `notifications/resources/updated` for `uri` when this initialized session
    /// subscribed to it; says whether it did.
    fn send_update(inner: &Inner, uri: &str) -> bool {
        let subscribed = inner
            .subscriptions
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .contains(uri);
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
        self.inner
            .subscriptions
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    fn lifecycle_of(inner: &Inner) -> Lifecycle {
        inner
            .state
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .lifecycle
            .clone()
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
        self.inner
            .state
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
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
    /// negotiated version is forgotten and in-flight calls are cancelled. From any other state
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

    /// Shuts the session down: every in-flight call is cancelled (no reply is sent for it) and
    /// every later request but `ping` is refused.
    pub fn shutdown(&self) {
        self.state().lifecycle = Lifecycle::ShuttingDown;
        self.cancel_all();
    }

    fn cancel_all(&self) {
        let in_flight = std::mem::take(&mut *self.in_flight());
        for token in in_flight.values() {
            token.cancel();
        }
    }

    /// The client can no longer reply (its input ended): requests waiting for its replies
    /// end with [`InputError::Disconnected`](crate::tool::InputError::Disconnected), and so do those made later.
    #[cfg(feature = "stdio")]
    pub(crate) fn client_gone(&self) {
        self.inner
            .requests
            .closed
            .store(true, std::sync::atomic::Ordering::Release);
        self.inner.requests.waiting().clear();
    }

    /// Cancels the in-flight request `id`, as `notifications/cancelled` does. Returns whether
    /// such a request was running.
    pub fn cancel(&self, id: &RequestId) -> bool {
        let token = self.in_flight().remove(id);
        token.map(|t| t.cancel()).is_some()
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

    async fn answer_value(&self, message: Value, options: CallOptions) -> Option<Value> {
        match message {
            // A batch too deep is refused whole (as its text would be), dropped flat.
            Value::Array(_) if exceeds_max_depth(&message) => refuse_too_deep(message),
            Value::Array(batch) => self.handle_batch(batch, options).await,
            message => self.answer_value_of(decode(message), options).await,
        }
    }

    /// Whether a JSON-RPC batch is served now: the session is initialized under a protocol
    /// version that has batches ([`ProtocolVersion::has_batches`]: 2025-03-26).
    pub fn accepts_batches(&self) -> bool {
        let state = self.state();
        state.lifecycle.is_initialized() && state.version.is_some_and(ProtocolVersion::has_batches)
    }

    /// Serves (or refuses) a batch. Boxed: a batch is rare, and its future would otherwise
    /// size every single message's.
    fn handle_batch(
        &self,
        batch: Vec<Value>,
        options: CallOptions,
    ) -> BoxFuture<'_, Option<Value>> {
        Box::pin(async move {
            let refuse = |message: String| {
                Some(error_value(
                    None,
                    ErrorObject::new(ErrorCode::INVALID_REQUEST, message),
                ))
            };
            if !self.accepts_batches() {
                // Dropped flat: a refused batch can be nested as deep as a caller made it.
                batch.into_iter().for_each(drop_flat);
                let version = self
                    .protocol_version()
                    .map_or("none yet".to_owned(), |v| v.to_string());
                return refuse(format!(
                    "JSON-RPC batches are served only in a session initialized with a protocol version that has them (2025-03-26); negotiated: {version}"
                ));
            }
            if batch.is_empty() {
                return Some(error_value(None, empty_batch()));
            }
            // An element that is itself an array is refused by `respond` (not an object).
            let replies = futures_util::future::join_all(
                batch
                    .into_iter()
                    .map(|message| self.answer_value_of(decode(message), options.clone())),
            )
            .await;
            let replies: Vec<Value> = replies.into_iter().flatten().collect();
            (!replies.is_empty()).then_some(Value::Array(replies))
        })
    }

    async fn answer_value_of(&self, message: Incoming<'_>, options: CallOptions) -> Option<Value> {
        let (id, answer) = self.answer(message, options).await?;
        reply_value(id, answer)
    }

    async fn answer_text(&self, text: &str, options: CallOptions) -> Option<String> {
        let message = match decode_text(text) {
            Ok(TextMessage::One(message)) => message,
            Ok(TextMessage::Batch(batch)) => {
                return self
                    .handle_batch(batch, options)
                    .await
                    .map(|v| v.to_string());
            }
            Err(e) => return Some(parse_error(e).to_string()),
        };
        self.answer_as_text(message, options).await
    }

    /// [`answer`](Self::answer), written as JSON text (what stdio and [`handle_text`]
    /// send).
    ///
    /// [`handle_text`]: Self::handle_text
    pub(crate) async fn answer_as_text(
        &self,
        message: Incoming<'_>,
        options: CallOptions,
    ) -> Option<String> {
        let (id, answer) = self.answer(message, options).await?;
        reply_text(id, answer)
    }

    /// The session's part of handling one message: its lifecycle, cancellation and
    /// notifications. The answer (`None`: nothing to send) is left for the caller to write
    /// as a value or as text, or for a transport to map to its status.
    pub(crate) async fn answer(
        &self,
        message: Incoming<'_>,
        options: CallOptions,
    ) -> Option<(Option<RequestId>, Answer)> {
        self.answer_noting_change(message, options).await.0
    }

    /// [`answer`](Self::answer), and whether the message changed the session's
    /// [`snapshot`](Self::snapshot) (a shared session is then saved for the other replicas):
    /// a request dispatch returned an [`Effect`] for, or `notifications/initialized`.
    pub(crate) async fn answer_noting_change(
        &self,
        message: Incoming<'_>,
        options: CallOptions,
    ) -> (Option<(Option<RequestId>, Answer)>, bool) {
        let request = match message {
            Incoming::Invalid(Invalid { id, error }) => {
                return (Some((id, Answer::Error(error))), false);
            }
            Incoming::Silent => return (None, false),
            Incoming::Response(response) => {
                // Once shut down, the calls that asked are cancelled: nothing is delivered.
                if self.lifecycle() != Lifecycle::ShuttingDown {
                    self.inner.requests.answer(response);
                }
                return (None, false);
            }
            Incoming::Notification(n) => return (None, self.on_notification(&n.method, &n.params)),
            Incoming::Request(request) => request,
        };
        let id = Some(request.id.clone());
        let admitted_in = match self.admit(&request.method, &request.era) {
            Ok(lifecycle) => lifecycle,
            Err(refusal) => return (Some((id, Answer::Error(refusal))), false),
        };
        let client =
            (request.method == method::INITIALIZE).then(|| client_capabilities(&request.params));
        let (answer, effect) = self.dispatch(request, options).await;
        let changed = effect.is_some();
        let answer = match effect {
            None => answer,
            Some(effect) => self.apply(effect, &admitted_in, client, answer),
        };
        (Some((id, answer)), changed)
    }

    /// The lifecycle gate: whether the session serves `method` in its current state. Returns
    /// the state it was admitted in.
    fn admit(
        &self,
        method: &str,
        era: &Result<Era, Box<ErrorObject>>,
    ) -> Result<Lifecycle, ErrorObject> {
        // Only a legacy request goes through the handshake's gate. The others are served
        // statelessly (2026-07-28) or refused by dispatch whatever the state (an unsupported
        // version gets -32022, which a modern client's probe relies on).
        let legacy = matches!(era, Ok(Era::Legacy(_)));
        let lifecycle = self.lifecycle();
        let refusal = match (&lifecycle, method, legacy) {
            (Lifecycle::ShuttingDown, "ping", _) => return Ok(lifecycle),
            (Lifecycle::ShuttingDown, _, _) => {
                ErrorObject::new(ErrorCode::INVALID_REQUEST, "the session is shutting down")
            }
            (_, _, false) => return Ok(lifecycle),
            (Lifecycle::Uninitialized | Lifecycle::Error(_), "initialize" | "ping", true) => {
                return Ok(lifecycle);
            }
            (Lifecycle::Error(reason), _, true) => ErrorObject::new(
                ErrorCode::INTERNAL_ERROR,
                format!("the session is in an error state: {reason}"),
            ),
            (Lifecycle::Uninitialized, _, true) => ErrorObject::new(
                ErrorCode::INVALID_REQUEST,
                format!(
                    "{method} received before initialize; the session must be initialized first"
                ),
            ),
            (Lifecycle::Initializing | Lifecycle::Ready, "initialize", true) => ErrorObject::new(
                ErrorCode::INVALID_REQUEST,
                "the session is already initialized",
            ),
            (Lifecycle::Initializing | Lifecycle::Ready, _, true) => return Ok(lifecycle),
        };
        Err(refusal)
    }

    /// The registry's answer to an admitted request. A `tools/call` is in the in-flight table
    /// while it runs, so `notifications/cancelled` can stop it.
    async fn dispatch(
        &self,
        request: IncomingRequest<'_>,
        mut options: CallOptions,
    ) -> (Answer, Option<Effect>) {
        // A call, or a listen stream (which only ends when cancelled).
        let cancellable = matches!(
            &*request.method,
            method::TOOLS_CALL | method::SUBSCRIPTIONS_LISTEN
        );
        let _in_flight = cancellable.then(|| self.track(&request.id, &mut options));
        if options.caller.is_anonymous() {
            options.caller = self.inner.caller.clone();
        }
        if options.notifications.is_none() {
            options = options.notifications(self.inner.notifications.clone());
        }
        let (legacy_version, log_level, client) = {
            let state = self.state();
            (state.version, state.log_level, state.client.clone())
        };
        let apps = super::apps::session_declares(client.as_deref());
        // A legacy call asks the client with requests on the call's own stream.
        if request.method == method::TOOLS_CALL
            && matches!(request.era, Ok(Era::Legacy(_)))
            && options.input.is_none()
            && let (Some(client), Some(sink)) = (client, &options.notifications)
        {
            // A call run as a task (2025-11-25 `task`) outlives its stream: it asks on the
            // session's own (HTTP: the GET stream).
            // Its requests name the task (`related-task`).
            let (sink, related_task) = match request.params.contains_key("task") {
                true => {
                    let own = self.inner.notifications.clone();
                    let slot = crate::task::TaskIdSlot::default();
                    options = options
                        .extension(crate::task::SessionStream(own.clone()))
                        .extension(slot.clone());
                    (own, Some(slot))
                }
                false => (sink.clone(), None),
            };
            options.input = Some(Arc::new(SessionInput {
                client,
                sink,
                requests: self.inner.requests.clone(),
                related_task,
            }));
        }
        let connection = Connection {
            legacy_version,
            // Advertised only when the watcher that sends it runs.
            list_changed: self.inner.watcher.is_some(),
            subscriptions: true,
            logging: true,
            log_level,
            apps,
        };
        Dispatcher::new(&self.inner.registry)
            .request(&self.inner.server, request, options, connection)
            .await
    }

    /// Enters call `id` in the in-flight table with a cancellation token (a child of the
    /// caller's own, so an HTTP stream closing still cancels it), until the guard drops.
    fn track(&self, id: &RequestId, options: &mut CallOptions) -> InFlight<'_> {
        let token = options
            .cancellation
            .as_ref()
            .map_or_else(CancellationToken::new, CancellationToken::child_token);
        self.in_flight().insert(id.clone(), token.clone());
        *options = std::mem::take(options).cancellation(token);
        InFlight {
            session: self,
            id: id.clone(),
        }
    }

    fn in_flight(&self) -> MutexGuard<'_, HashMap<RequestId, CancellationToken>> {
        self.inner
            .in_flight
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
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

/// A call in the in-flight table; leaves it when dropped (answered, or abandoned by its caller).
struct InFlight<'a> {
    session: &'a ServerSession,
    id: RequestId,
}

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.session.in_flight().remove(&self.id);
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
