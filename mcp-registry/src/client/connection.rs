//! [`Client`]: the async MCP client, one type over every [`Transport`].

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};
use std::time::{Duration, Instant};

use serde::de::DeserializeOwned;
use serde_json::{Map, Value};
use tokio::sync::{broadcast, mpsc, oneshot};
use tokio_util::sync::CancellationToken;

use super::machine::{
    ClientConfig, ClientLifecycle, ClientMachine, ClientStateError, Handshake, Incoming,
    OutgoingNotification, OutgoingRequest, RequestSettings, ServerNotification, ServerRequestKind,
    VersionPreference,
};
use super::policy::{Approval, ApprovalRequest, CallPolicy, is_retryable};
use super::transport::{
    DEFAULT_MAX_MESSAGE_BYTES, InProcessTransport, Inbound, Outbound, OutboundKind, Transport,
    TransportError,
};
use crate::protocol::headers::{ParamHeader, param_headers, tool_param_headers};
use crate::protocol::{
    CallToolParams, CallToolResult, ClientCapabilities, CompleteParams, CompleteResult,
    CreateMessageParams, CreateMessageResult, ElicitAction, ElicitParams, ElicitResult, ErrorCode,
    ErrorObject, GetPromptParams, GetPromptResult, Implementation, InputRequiredResult,
    ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult, ListRootsResult,
    ListToolsResult, LoggingLevel, PromptDescriptor, ProtocolEra, ProtocolVersion,
    ReadResourceResult, ResourceDescriptor, ResourceTemplateDescriptor, Root, RootsCapability,
    ServerCapabilities, ToolDescriptor, UnsupportedVersionData, method,
};
use crate::protocol::{ListenParams, SubscriptionFilter};
use crate::registry::Registry;
use crate::tool::BoxFuture;

/// Why a client operation failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ClientError {
    /// The server program could not be started.
    #[error("cannot start MCP server `{program}`: {source}")]
    Spawn {
        /// The program.
        program: String,
        /// Why.
        source: std::io::Error,
    },
    /// The transport failed.
    #[error("transport: {0}")]
    Transport(#[from] TransportError),
    /// The connection closed before the reply came.
    #[error("the connection closed: {0}")]
    Closed(String),
    /// The handshake failed.
    #[error("MCP handshake failed: {0}")]
    Handshake(String),
    /// The server answered with an error.
    #[error("{method} failed: {error}")]
    Server {
        /// The request's method.
        method: String,
        /// The server's error.
        error: ErrorObject,
    },
    /// No reply in time (`notifications/cancelled` was sent).
    #[error("{method} timed out after {after:?}")]
    Timeout {
        /// The request's method.
        method: String,
        /// The limit.
        after: Duration,
    },
    /// The caller cancelled the request (`notifications/cancelled` was sent).
    #[error("{method} was cancelled")]
    Cancelled {
        /// The request's method.
        method: String,
    },
    /// The result could not be read.
    #[error("unreadable {method} result: {detail}")]
    InvalidResult {
        /// The request's method.
        method: String,
        /// What was wrong.
        detail: String,
    },
    /// The lifecycle state does not allow the operation.
    #[error(transparent)]
    State(#[from] ClientStateError),
    /// The [`CallPolicy`]'s approval callback refused the call; nothing was sent.
    #[error("calling {tool} was denied: {reason}")]
    Denied {
        /// The tool.
        tool: String,
        /// The callback's reason.
        reason: String,
    },
}

impl ClientError {
    /// The server's JSON-RPC error, when it answered with one.
    pub fn server_error(&self) -> Option<&ErrorObject> {
        match self {
            ClientError::Server { error, .. } => Some(error),
            _ => None,
        }
    }

    /// The URL-mode elicitations the user must complete before the request is retried, when
    /// the server refused it with -32042 (URLElicitationRequired).
    pub fn url_elicitations(&self) -> Option<Vec<ElicitParams>> {
        let error = self
            .server_error()
            .filter(|e| e.code == ErrorCode::URL_ELICITATION_REQUIRED)?;
        let data: crate::protocol::UrlElicitationRequiredData =
            serde_json::from_value(error.data.clone()?).ok()?;
        Some(data.elicitations)
    }
}

/// Answers `elicitation/create`: the form (or URL) the server asks the user to fill in.
pub type ElicitationHandler = Arc<
    dyn Fn(ElicitParams) -> BoxFuture<'static, Result<ElicitResult, ErrorObject>> + Send + Sync,
>;
/// Answers `sampling/createMessage` with the host's model.
pub type SamplingHandler = Arc<
    dyn Fn(CreateMessageParams) -> BoxFuture<'static, Result<CreateMessageResult, ErrorObject>>
        + Send
        + Sync,
>;

/// Per-request options of the client: timeout, cancellation, progress, policy. (The server
/// side's per-call options are [`crate::CallOptions`].)
#[derive(Debug, Clone, Default)]
pub struct RequestOptions {
    /// Overrides the client's default timeout.
    pub timeout: Option<Duration>,
    /// Cancels the request when cancelled.
    pub cancellation: Option<CancellationToken>,
    /// Asks for `notifications/progress` under this token (they arrive on
    /// [`Client::notifications`]).
    pub progress_token: Option<Value>,
    /// Overrides the client's [`CallPolicy`] (for [`Client::call_tool_with`]).
    pub policy: Option<CallPolicy>,
}

impl RequestOptions {
    /// Default options.
    pub fn new() -> Self {
        Self::default()
    }

    /// Gives up after `timeout`.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// Cancelled with `token`.
    pub fn cancellation(mut self, token: CancellationToken) -> Self {
        self.cancellation = Some(token);
        self
    }

    /// Asks for progress under `token`.
    pub fn progress_token(mut self, token: impl Into<Value>) -> Self {
        self.progress_token = Some(token.into());
        self
    }

    /// Retries, backoff and approval for this call, instead of the client's.
    pub fn policy(mut self, policy: CallPolicy) -> Self {
        self.policy = Some(policy);
        self
    }
}

/// Builds a [`Client`]: who it is, what it answers, which version it speaks.
#[derive(Clone)]
pub struct ClientBuilder {
    info: Implementation,
    version: VersionPreference,
    timeout: Option<Duration>,
    handshake_timeout: Duration,
    elicitation: Option<ElicitationHandler>,
    url_elicitation: bool,
    sampling: Option<SamplingHandler>,
    roots: Option<Vec<Root>>,
    policy: CallPolicy,
    tool_cache: Option<Duration>,
    #[cfg_attr(
        not(any(feature = "client-http", feature = "client-stdio")),
        allow(dead_code)
    )]
    max_message_bytes: usize,
    #[cfg_attr(not(feature = "client-http"), allow(dead_code))]
    redirects_across_origins: bool,
    #[cfg_attr(not(feature = "client-http"), allow(dead_code))]
    pub(crate) headers: Vec<(String, String)>,
    #[cfg(feature = "client-auth")]
    oauth: Option<super::auth::OAuth>,
}

impl fmt::Debug for ClientBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClientBuilder")
            .field("info", &self.info)
            .field("version", &self.version)
            .field("timeout", &self.timeout)
            .field("policy", &self.policy)
            .finish_non_exhaustive()
    }
}

impl Default for ClientBuilder {
    fn default() -> Self {
        ClientBuilder {
            info: Implementation {
                name: "mcp-registry".into(),
                version: env!("CARGO_PKG_VERSION").into(),
                title: None,
            },
            version: VersionPreference::Auto,
            timeout: Some(Duration::from_secs(60)),
            handshake_timeout: Duration::from_secs(10),
            elicitation: None,
            url_elicitation: false,
            sampling: None,
            roots: None,
            policy: CallPolicy::default(),
            tool_cache: None,
            max_message_bytes: DEFAULT_MAX_MESSAGE_BYTES,
            redirects_across_origins: false,
            headers: Vec::new(),
            #[cfg(feature = "client-auth")]
            oauth: None,
        }
    }
}

impl ClientBuilder {
    /// The `clientInfo` name and version.
    pub fn info(mut self, name: impl Into<String>, version: impl Into<String>) -> Self {
        self.info.name = name.into();
        self.info.version = version.into();
        self
    }

    /// Speaks exactly `version` (by default: 2026-07-28 when the server does, else the
    /// `initialize` handshake).
    pub fn protocol_version(mut self, version: ProtocolVersion) -> Self {
        self.version = VersionPreference::Exactly(version);
        self
    }

    /// The default per-request timeout (60 s unless set; `None` waits forever).
    pub fn timeout(mut self, timeout: Option<Duration>) -> Self {
        self.timeout = timeout;
        self
    }

    /// How long the handshake may take (10 s unless set); a legacy stdio server silent on
    /// `server/discover` is given up on after this and `initialize`d.
    pub fn handshake_timeout(mut self, timeout: Duration) -> Self {
        self.handshake_timeout = timeout;
        self
    }

    /// Answers `elicitation/create` (declares the `elicitation` capability). Defaults the
    /// schema gives are filled into an accepted form's missing fields (SEP-1034).
    pub fn on_elicitation<F, Fut>(mut self, handler: F) -> Self
    where
        F: Fn(ElicitParams) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<ElicitResult, ErrorObject>> + Send + 'static,
    {
        self.elicitation = Some(Arc::new(move |p| Box::pin(handler(p))));
        self
    }

    /// Declares URL-mode elicitation too (`elicitation: {"form": {}, "url": {}}`): the
    /// [`on_elicitation`](Self::on_elicitation) handler then also gets URL-mode requests
    /// ([`ElicitParams::is_url`]): show the URL and its host, ask the user's consent, and
    /// answer `accept`, `decline` or `cancel`.
    pub fn url_elicitation(mut self) -> Self {
        self.url_elicitation = true;
        self
    }

    /// Answers `sampling/createMessage` (declares the `sampling` capability).
    pub fn on_sampling<F, Fut>(mut self, handler: F) -> Self
    where
        F: Fn(CreateMessageParams) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<CreateMessageResult, ErrorObject>> + Send + 'static,
    {
        self.sampling = Some(Arc::new(move |p| Box::pin(handler(p))));
        self
    }

    /// Answers `roots/list` with `roots` (declares the `roots` capability).
    pub fn roots(mut self, roots: Vec<Root>) -> Self {
        self.roots = Some(roots);
        self
    }

    /// Retries, backoff and approval for every [`Client::call_tool`] (default:
    /// [`CallPolicy::new`], 3 retries of retryable failures, no approval).
    pub fn call_policy(mut self, policy: CallPolicy) -> Self {
        self.policy = policy;
        self
    }

    /// Keeps [`Client::list_tools`]'s answer for up to `ttl`: calls within it send nothing.
    /// The server's `notifications/tools/list_changed` (and
    /// [`Client::invalidate_tool_cache`]) empties the cache at once. Off unless set.
    pub fn tool_cache(mut self, ttl: Duration) -> Self {
        self.tool_cache = Some(ttl);
        self
    }

    /// The longest message accepted from the server (a stdio line, an HTTP JSON body, an SSE
    /// line or event), in bytes; [`DEFAULT_MAX_MESSAGE_BYTES`] (16 MiB) unless set. A longer
    /// one is dropped as it arrives, never buffered whole, and the request it answers fails
    /// with [`TransportError::TooLarge`] when the client can tell which one it was.
    pub fn max_message_bytes(mut self, limit: usize) -> Self {
        self.max_message_bytes = limit;
        self
    }

    /// Whether HTTP redirects to another origin (scheme, host and port) are followed; off
    /// unless set, when such a redirect fails the request with
    /// [`TransportError::Redirected`]. When on, only `307`/`308` are followed there, and
    /// without the client's own headers, its `Mcp-Session-Id` or its authorization.
    pub fn redirects_across_origins(mut self, follow: bool) -> Self {
        self.redirects_across_origins = follow;
        self
    }

    /// A header sent with every HTTP request (e.g. `Authorization`); never to another origin.
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// Authorizes HTTP requests with OAuth 2.1 when the server asks (401, or 403
    /// `insufficient_scope`): see [`auth`](super::auth). A user authorizing in a browser takes
    /// longer than the default handshake timeout: raise it with
    /// [`handshake_timeout`](Self::handshake_timeout).
    #[cfg(feature = "client-auth")]
    pub fn oauth(mut self, oauth: super::auth::OAuth) -> Self {
        self.oauth = Some(oauth);
        self
    }

    fn config(&self) -> ClientConfig {
        let mut capabilities = ClientCapabilities::default();
        if self.roots.is_some() {
            capabilities.roots = Some(RootsCapability {
                list_changed: Some(false),
            });
        }
        if self.sampling.is_some() {
            capabilities.sampling = Some(Map::new());
        }
        if self.elicitation.is_some() {
            let mut modes = Map::new();
            modes.insert("form".into(), Value::Object(Map::new()));
            if self.url_elicitation {
                modes.insert("url".into(), Value::Object(Map::new()));
            }
            capabilities.elicitation = Some(modes);
        }
        let mut config = ClientConfig::new(self.info.clone()).capabilities(capabilities);
        config.version = self.version;
        config
    }

    /// Connects over `transport`, whose incoming messages arrive on `incoming`, and runs
    /// the handshake.
    pub async fn connect_with(
        self,
        transport: impl Transport,
        incoming: mpsc::UnboundedReceiver<Inbound>,
    ) -> Result<Client, ClientError> {
        let client = Client::start(self, Box::new(transport), incoming);
        client.handshake().await?;
        Ok(client)
    }

    /// Connects to `server` of `registry` in-process and runs the handshake.
    pub async fn connect_in_process(
        self,
        registry: Registry,
        server: &str,
    ) -> Result<Client, ClientError> {
        let (tx, rx) = mpsc::unbounded_channel();
        let transport = InProcessTransport::new(registry, server, tx);
        self.connect_with(transport, rx).await
    }

    /// Spawns `command` and speaks MCP over its stdin/stdout (stderr goes to `tracing`).
    #[cfg(feature = "client-stdio")]
    pub async fn connect_stdio(
        self,
        command: tokio::process::Command,
    ) -> Result<Client, ClientError> {
        let (tx, rx) = mpsc::unbounded_channel();
        let transport =
            super::stdio::StdioTransport::spawn_with_limit(command, tx, self.max_message_bytes)?;
        self.connect_with(transport, rx).await
    }

    /// Speaks MCP over Streamable HTTP to `url`.
    #[cfg(feature = "client-http")]
    pub async fn connect_http(self, url: &str) -> Result<Client, ClientError> {
        let (tx, rx) = mpsc::unbounded_channel();
        use super::http::{HttpSettings, HttpTransport};
        let settings = HttpSettings {
            max_message_bytes: self.max_message_bytes,
            redirects_across_origins: self.redirects_across_origins,
        };
        #[cfg(feature = "client-auth")]
        let oauth = self.oauth.clone();
        #[cfg(not(feature = "client-auth"))]
        let oauth = None;
        let transport = HttpTransport::build(url, &self.headers, tx, oauth, settings)?;
        self.connect_with(transport, rx).await
    }
}

enum Reply {
    Result(Value),
    Error(ErrorObject),
    Handshake(Handshake),
    Closed(String),
    /// The transport could get no reply (too large, an HTTP failure).
    Failed(TransportError),
}

struct Inner {
    machine: Mutex<ClientMachine>,
    waiters: Mutex<HashMap<crate::protocol::RequestId, oneshot::Sender<Reply>>>,
    transport: Box<dyn Transport>,
    builder: ClientBuilder,
    notifications: broadcast::Sender<ServerNotification>,
    /// Per tool (listed over a transport that mirrors parameters): its `x-mcp-header`s.
    tool_headers: Mutex<HashMap<String, Vec<ParamHeader>>>,
    reader: Mutex<Option<tokio::task::JoinHandle<()>>>,
    closed: Mutex<Option<String>>,
    /// Cancelled once the connection is gone (`closed` then says why).
    gone: CancellationToken,
    /// The last full tool listing and when it was fetched ([`ClientBuilder::tool_cache`]).
    tool_cache: Mutex<Option<(tokio::time::Instant, Vec<ToolDescriptor>)>>,
    /// Bumped by every invalidation, so a listing under way when one came is not cached.
    tool_cache_generation: AtomicU64,
    /// The id of the handshake request in flight, whose reply comes back as a
    /// [`Handshake`].
    handshake_id: Mutex<Option<crate::protocol::RequestId>>,
}

impl Drop for Inner {
    fn drop(&mut self) {
        if let Some(reader) = lock(&self.reader).take() {
            reader.abort();
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// An MCP client connected to one server: in-process ([`Client::in_process`]), over stdio
/// ([`Client::stdio`]) or Streamable HTTP ([`Client::http`]). Cheap to clone; clones share
/// the connection, and several requests may be in flight at once.
///
/// ```
/// use mcp_registry::{Registry, Server, Tool, client::Client};
/// use serde_json::json;
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let echo = Tool::new("echo", "Echo", json!({"type": "object"}), |args| async move {
///     args.to_string()
/// }).unwrap();
/// let registry = Registry::from_servers([Server::new("s", Some("1.0"), [echo]).unwrap()]);
/// let client = Client::in_process(registry, "s").await.unwrap();
/// assert_eq!(client.server_info().unwrap().name, "s");
/// let tools = client.list_tools().await.unwrap();
/// assert_eq!(tools[0].name, "echo");
/// let result = client.call_tool("echo", json!({"x": 1})).await.unwrap();
/// assert_eq!(result.first_text(), Some(r#"{"x":1}"#));
/// client.close().await;
/// # }
/// ```
#[derive(Clone)]
pub struct Client {
    inner: Arc<Inner>,
}

impl fmt::Debug for Client {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let machine = lock(&self.inner.machine);
        f.debug_struct("Client")
            .field("lifecycle", machine.lifecycle())
            .field("version", &machine.negotiated_version())
            .field("server", &machine.server_info())
            .finish()
    }
}

impl Client {
    /// A builder, to set the client's identity, handlers and version.
    pub fn builder() -> ClientBuilder {
        ClientBuilder::default()
    }

    /// Connects in-process to `server` of `registry` with default settings.
    pub async fn in_process(registry: Registry, server: &str) -> Result<Client, ClientError> {
        Self::builder().connect_in_process(registry, server).await
    }

    /// Spawns `command` and connects over its stdio with default settings.
    #[cfg(feature = "client-stdio")]
    pub async fn stdio(command: tokio::process::Command) -> Result<Client, ClientError> {
        Self::builder().connect_stdio(command).await
    }

    /// Connects to the Streamable HTTP endpoint `url` with default settings.
    #[cfg(feature = "client-http")]
    pub async fn http(url: &str) -> Result<Client, ClientError> {
        Self::builder().connect_http(url).await
    }

    fn start(
        builder: ClientBuilder,
        transport: Box<dyn Transport>,
        incoming: mpsc::UnboundedReceiver<Inbound>,
    ) -> Client {
        let (notifications, _) = broadcast::channel(256);
        let inner = Arc::new(Inner {
            machine: Mutex::new(ClientMachine::new(builder.config())),
            waiters: Mutex::new(HashMap::new()),
            transport,
            builder,
            notifications,
            tool_headers: Mutex::new(HashMap::new()),
            reader: Mutex::new(None),
            closed: Mutex::new(None),
            gone: CancellationToken::new(),
            tool_cache: Mutex::new(None),
            tool_cache_generation: AtomicU64::new(0),
            handshake_id: Mutex::new(None),
        });
        let reader = tokio::spawn(read_loop(Arc::downgrade(&inner), incoming));
        *lock(&inner.reader) = Some(reader);
        Client { inner }
    }

    // ----- state ------------------------------------------------------------------------

    /// The lifecycle state.
    pub fn lifecycle(&self) -> ClientLifecycle {
        self.machine().lifecycle().clone()
    }

    /// The protocol version agreed on.
    pub fn protocol_version(&self) -> Option<ProtocolVersion> {
        self.machine().negotiated_version()
    }

    /// Who the server is.
    pub fn server_info(&self) -> Option<Implementation> {
        self.machine().server_info().cloned()
    }

    /// What the server offers.
    pub fn server_capabilities(&self) -> Option<ServerCapabilities> {
        self.machine().server_capabilities().cloned()
    }

    /// The server's instructions for the model.
    pub fn instructions(&self) -> Option<String> {
        self.machine().instructions().map(str::to_owned)
    }

    /// How many requests await a reply.
    pub fn pending_count(&self) -> usize {
        self.machine().pending_count()
    }

    /// Notifications from the server from now on: progress, log messages, list changes,
    /// resource updates.
    pub fn notifications(&self) -> broadcast::Receiver<ServerNotification> {
        self.inner.notifications.subscribe()
    }

    /// Completes when the connection is gone (the server exited or hung up, the transport
    /// failed, or [`close`](Self::close) was called), with the reason.
    pub async fn closed(&self) -> String {
        self.inner.gone.cancelled().await;
        lock(&self.inner.closed)
            .clone()
            .unwrap_or_else(|| "the connection closed".into())
    }

    fn machine(&self) -> MutexGuard<'_, ClientMachine> {
        lock(&self.inner.machine)
    }

    // ----- the handshake ----------------------------------------------------------------

    async fn handshake(&self) -> Result<(), ClientError> {
        let timeout = self.inner.builder.handshake_timeout;
        let mut discover = self.machine().starts_with_discover();
        for _ in 0..4 {
            let request = {
                let mut machine = self.machine();
                if discover {
                    machine.discover(Instant::now())?
                } else {
                    machine.initialize(Instant::now())?
                }
            };
            let id = request.id.clone();
            *lock(&self.inner.handshake_id) = Some(id.clone());
            let step = match self.exchange(request, Some(timeout), None).await {
                Ok(Reply::Handshake(step)) => step,
                Ok(Reply::Closed(reason)) | Err(ClientError::Closed(reason)) => {
                    let _ = self.machine().mark_error(reason.clone());
                    return Err(ClientError::Closed(reason));
                }
                Err(ClientError::Timeout { .. }) => self.machine().handshake_timed_out(&id),
                Err(e) => return Err(e),
                Ok(_) => return Err(ClientError::Handshake("an unexpected reply".into())),
            };
            match step {
                Handshake::Discovered(_) => return Ok(()),
                Handshake::Initialized(_) => {
                    let note = self.machine().initialized()?;
                    self.notify(note).await?;
                    self.inner
                        .transport
                        .connected(self.protocol_version())
                        .await;
                    return Ok(());
                }
                Handshake::FallBackToInitialize { reason, .. } => {
                    tracing::debug!(%reason, "MCP server is legacy: falling back to initialize");
                    discover = false;
                }
                Handshake::RetryDiscover => discover = true,
                Handshake::Failed(reason) => return Err(ClientError::Handshake(reason)),
            }
        }
        Err(ClientError::Handshake("no protocol version agreed".into()))
    }

    // ----- sending ----------------------------------------------------------------------

    fn outbound(&self, request: &OutgoingRequest, params: Vec<(String, String)>) -> Outbound {
        let args = request.request.params.as_ref();
        let name = args
            .and_then(|p| p.get("name").or_else(|| p.get("uri")))
            .and_then(Value::as_str)
            .filter(|_| {
                matches!(
                    request.method(),
                    method::TOOLS_CALL | method::PROMPTS_GET | method::RESOURCES_READ
                )
            })
            .map(str::to_owned);
        Outbound {
            message: request.to_value(),
            kind: OutboundKind::Request {
                id: request.id.clone(),
                method: request.method().to_owned(),
                name,
                params,
            },
            protocol_version: self.protocol_version(),
        }
    }

    async fn notify(&self, note: OutgoingNotification) -> Result<(), ClientError> {
        let outbound = Outbound {
            message: serde_json::to_value(&note).unwrap_or_default(),
            kind: OutboundKind::Notification {
                method: note.method.to_string(),
            },
            protocol_version: self.protocol_version(),
        };
        self.inner.transport.send(outbound).await?;
        Ok(())
    }

    /// Sends `request` and waits for its reply, the timeout or the cancellation.
    async fn exchange(
        &self,
        request: OutgoingRequest,
        timeout: Option<Duration>,
        cancellation: Option<&CancellationToken>,
    ) -> Result<Reply, ClientError> {
        self.exchange_with(request, timeout, cancellation, Vec::new())
            .await
    }

    async fn exchange_with(
        &self,
        request: OutgoingRequest,
        timeout: Option<Duration>,
        cancellation: Option<&CancellationToken>,
        params: Vec<(String, String)>,
    ) -> Result<Reply, ClientError> {
        let id = request.id.clone();
        let method = request.method().to_owned();
        let (tx, rx) = oneshot::channel();
        lock(&self.inner.waiters).insert(id.clone(), tx);
        if let Some(reason) = lock(&self.inner.closed).clone() {
            lock(&self.inner.waiters).remove(&id);
            self.machine().forget(&id);
            return Err(ClientError::Closed(reason));
        }
        let outbound = self.outbound(&request, params);
        // The send is raced too: an HTTP POST answered with plain JSON is in flight until the
        // reply, and dropping it closes the connection (the cancellation 2026-07-28 asks for).
        let exchange = async {
            self.inner.transport.send(outbound).await?;
            Ok::<_, TransportError>(
                rx.await
                    .unwrap_or_else(|_| Reply::Closed("the client closed".into())),
            )
        };
        let never = CancellationToken::new();
        let cancelled = cancellation.unwrap_or(&never).cancelled();
        let sleep = async {
            match timeout {
                Some(t) => tokio::time::sleep(t).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            reply = exchange => match reply {
                Ok(Reply::Failed(e)) => Err(e.into()),
                Ok(reply) => Ok(reply),
                Err(e) => {
                    lock(&self.inner.waiters).remove(&id);
                    self.machine().forget(&id);
                    Err(e.into())
                }
            },
            () = sleep => {
                self.give_up(&id, "timed out").await;
                Err(ClientError::Timeout { method, after: timeout.unwrap_or_default() })
            }
            () = cancelled => {
                self.give_up(&id, "cancelled by the client").await;
                Err(ClientError::Cancelled { method })
            }
        }
    }

    /// Forgets request `id` and tells the server (`notifications/cancelled`, or the
    /// transport's own way).
    async fn give_up(&self, id: &crate::protocol::RequestId, reason: &str) {
        lock(&self.inner.waiters).remove(id);
        self.inner.transport.cancelled(id);
        let (note, handshake) = {
            let mut machine = self.machine();
            let handshake = matches!(
                machine.pending_method(id),
                Some(method::INITIALIZE | method::DISCOVER)
            );
            let note = machine.cancel(id, Some(reason.to_owned()));
            (note, handshake)
        };
        // The handshake itself is never cancelled by notification (the spec forbids it for
        // initialize; a silent discover probe is simply abandoned).
        let version = self.protocol_version();
        if !handshake && self.inner.transport.sends_cancelled_notifications(version) {
            let _ = self.notify(note).await;
        }
    }

    /// Sends a request built by `build`, and returns its result; retries once with the
    /// server's version after a -32022 naming one this client speaks, and re-initializes
    /// once when the server lost the session.
    async fn call(
        &self,
        options: &RequestOptions,
        params: Vec<(String, String)>,
        build: impl Fn(
            &mut ClientMachine,
            &RequestSettings,
            Instant,
        ) -> Result<OutgoingRequest, ClientStateError>,
    ) -> Result<(String, Value), ClientError> {
        let request_options = RequestSettings {
            timeout: options.timeout.or(self.inner.builder.timeout),
            progress_token: options.progress_token.clone(),
        };
        let mut retried = false;
        loop {
            let request = build(&mut self.machine(), &request_options, Instant::now())?;
            let method = request.method().to_owned();
            let id = request.id.clone();
            let reply = self
                .exchange_with(
                    request,
                    request_options.timeout,
                    options.cancellation.as_ref(),
                    params.clone(),
                )
                .await;
            match reply {
                Ok(Reply::Result(result)) => return Ok((method, result)),
                Ok(Reply::Error(error)) => {
                    if !retried && self.version_retry(&error) {
                        retried = true;
                        continue;
                    }
                    return Err(ClientError::Server { method, error });
                }
                Ok(Reply::Closed(reason)) => return Err(ClientError::Closed(reason)),
                Ok(Reply::Failed(e)) => return Err(e.into()),
                Ok(Reply::Handshake(_)) => {
                    return Err(ClientError::Handshake(
                        "an unexpected handshake reply".into(),
                    ));
                }
                Err(ClientError::Transport(TransportError::SessionExpired)) if !retried => {
                    retried = true;
                    self.machine().forget(&id);
                    self.reinitialize().await?;
                }
                Err(e) => return Err(e),
            }
        }
    }

    /// Whether a -32022 names this client's modern version (some servers reject a first
    /// request to test negotiation): then the request is retried with it.
    fn version_retry(&self, error: &ErrorObject) -> bool {
        if error.code != ErrorCode::UNSUPPORTED_PROTOCOL_VERSION
            || self.machine().era() != Some(ProtocolEra::Modern)
        {
            return false;
        }
        let data: UnsupportedVersionData = error
            .data
            .clone()
            .and_then(|d| serde_json::from_value(d).ok())
            .unwrap_or_default();
        data.supported
            .iter()
            .any(|v| v == ProtocolVersion::MODERN.as_str())
    }

    async fn reinitialize(&self) -> Result<(), ClientError> {
        self.machine().session_expired()?;
        let request = self.machine().initialize(Instant::now())?;
        *lock(&self.inner.handshake_id) = Some(request.id.clone());
        let timeout = self.inner.builder.handshake_timeout;
        match self.exchange(request, Some(timeout), None).await? {
            Reply::Handshake(Handshake::Initialized(_)) => {
                let note = self.machine().initialized()?;
                self.notify(note).await
            }
            Reply::Handshake(Handshake::Failed(reason)) => Err(ClientError::Handshake(reason)),
            Reply::Closed(reason) => Err(ClientError::Closed(reason)),
            _ => Err(ClientError::Handshake("re-initialization failed".into())),
        }
    }

    /// A request whose result may be `input_required` (2026-07-28): the client's handlers
    /// answer the server's input requests and the request is retried, `requestState` echoed
    /// exactly, until the result is complete.
    async fn call_with_input(
        &self,
        method_name: &'static str,
        params: Map<String, Value>,
        options: &RequestOptions,
        headers: Vec<(String, String)>,
    ) -> Result<Value, ClientError> {
        let (mut method, mut result) = {
            let p = params.clone();
            self.call(options, headers.clone(), move |m, o, now| {
                m.request(method_name, Some(p.clone()), o, now)
            })
            .await?
        };
        for _ in 0..16 {
            if result.get("resultType").and_then(Value::as_str) != Some("input_required") {
                return Ok(result);
            }
            let input: InputRequiredResult = parse(&method, result)?;
            let mut responses = Map::new();
            for (key, request) in input.input_requests.unwrap_or_default() {
                let answer =
                    self.answer(&request.method, request.params)
                        .await
                        .map_err(|error| ClientError::Server {
                            method: request.method.clone(),
                            error,
                        })?;
                responses.insert(key, answer);
            }
            let state = input.request_state;
            let p = params.clone();
            (method, result) = self
                .call(options, headers.clone(), move |m, o, now| {
                    m.retry_with_input(
                        method_name,
                        p.clone(),
                        responses.clone(),
                        state.clone(),
                        o,
                        now,
                    )
                })
                .await?;
        }
        Err(ClientError::InvalidResult {
            method,
            detail: "the server kept asking for input".into(),
        })
    }

    /// The client's answer to a server request (legacy: sent on the wire; 2026-07-28: an
    /// `inputResponses` entry).
    async fn answer(
        &self,
        method_name: &str,
        params: Map<String, Value>,
    ) -> Result<Value, ErrorObject> {
        let kind = super::machine::server_request(method_name.to_owned(), params);
        answer_kind(&self.inner.builder, kind).await
    }

    // ----- operations -------------------------------------------------------------------

    /// Checks the server is alive: `ping` (legacy), or `server/discover` on 2026-07-28,
    /// which has no `ping`.
    pub async fn ping(&self) -> Result<(), ClientError> {
        let method_name = match self.machine().era() {
            Some(ProtocolEra::Modern) => method::DISCOVER,
            _ => method::PING,
        };
        self.call(&RequestOptions::default(), Vec::new(), |m, o, now| {
            m.request(method_name, None, o, now)
        })
        .await
        .map(|_| ())
    }

    /// Every tool, following `nextCursor` to the end. Over Streamable HTTP, tools with an
    /// invalid `x-mcp-header` annotation are left out (with a warning), as the spec
    /// requires. With [`ClientBuilder::tool_cache`], a listing younger than its TTL is
    /// answered from the cache.
    pub async fn list_tools(&self) -> Result<Vec<ToolDescriptor>, ClientError> {
        if let Some(ttl) = self.inner.builder.tool_cache
            && let Some((at, tools)) = lock(&self.inner.tool_cache).as_ref()
            && at.elapsed() < ttl
        {
            return Ok(tools.clone());
        }
        let fetched = tokio::time::Instant::now();
        let generation = self.inner.tool_cache_generation.load(Ordering::Acquire);
        let all = self.list_all_tools().await?;
        // A list change told while the listing was under way makes it stale already.
        if self.inner.builder.tool_cache.is_some()
            && self.inner.tool_cache_generation.load(Ordering::Acquire) == generation
        {
            *lock(&self.inner.tool_cache) = Some((fetched, all.clone()));
        }
        Ok(all)
    }

    /// Forgets the cached tool listing ([`ClientBuilder::tool_cache`]).
    pub fn invalidate_tool_cache(&self) {
        invalidate_tool_cache(&self.inner);
    }

    /// The server's tools that `filter` lets through, as tools of a server named `server`:
    /// each with its qualified name (`mcp__<server>__<tool>`). Several servers' definitions
    /// make one model-facing catalog with [`ToolCatalog::new`](crate::catalog::ToolCatalog::new).
    pub async fn tool_definitions(
        &self,
        server: &str,
        filter: &crate::catalog::ToolFilter,
    ) -> Result<Vec<crate::registry::ToolDefinition>, ClientError> {
        Ok(self
            .list_tools()
            .await?
            .into_iter()
            .filter(|tool| filter.decide_tool(server, tool).is_allowed())
            .map(|tool| crate::registry::ToolDefinition {
                server: server.to_owned(),
                qualified_name: crate::registry::qualified_name(server, &tool.name),
                tool,
            })
            .collect())
    }

    async fn list_all_tools(&self) -> Result<Vec<ToolDescriptor>, ClientError> {
        let mut all = Vec::new();
        let mut cursor = None;
        loop {
            let page = self.list_tools_page(cursor).await?;
            all.extend(page.tools);
            match page.next_cursor {
                Some(next) if !next.is_empty() => cursor = Some(next),
                _ => return Ok(all),
            }
        }
    }

    /// One page of tools, from `cursor`.
    pub async fn list_tools_page(
        &self,
        cursor: Option<String>,
    ) -> Result<ListToolsResult, ClientError> {
        let (method, result) = self
            .call(&RequestOptions::default(), Vec::new(), |m, _, now| {
                m.list_tools(cursor.clone(), now)
            })
            .await?;
        let mut page: ListToolsResult = parse(&method, result)?;
        if self.inner.transport.mirrors_tool_params() {
            let mut headers = lock(&self.inner.tool_headers);
            page.tools.retain(|tool| match tool_param_headers(&tool.input_schema) {
                Ok(found) => {
                    headers.insert(tool.name.clone(), found);
                    true
                }
                Err(reason) => {
                    tracing::warn!(tool = %tool.name, %reason, "MCP tool left out: invalid x-mcp-header");
                    false
                }
            });
        }
        Ok(page)
    }

    /// Calls tool `name` with `arguments` (an object, or `null` for none).
    pub async fn call_tool(
        &self,
        name: &str,
        arguments: Value,
    ) -> Result<CallToolResult, ClientError> {
        self.call_tool_with(name, arguments, RequestOptions::default())
            .await
    }

    /// [`call_tool`](Self::call_tool) with a timeout, cancellation, progress token or
    /// [`CallPolicy`].
    ///
    /// The policy (the options' or else the client's) runs first: its approval callback,
    /// then up to its retry count of further attempts for retryable failures, waiting its
    /// backoff between them (a cancellation during the wait ends the call). The call is
    /// traced as the policy describes.
    pub async fn call_tool_with(
        &self,
        name: &str,
        arguments: Value,
        options: RequestOptions,
    ) -> Result<CallToolResult, ClientError> {
        let policy = options
            .policy
            .clone()
            .unwrap_or_else(|| self.inner.builder.policy.clone());
        let server = self.server_info().map(|i| i.name).unwrap_or_default();
        let span = tracing::info_span!(target: "mcp_registry::client", "mcp.tool_call", server = %server, tool = %name);
        let started = tokio::time::Instant::now();
        let elapsed = || u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
        let request = ApprovalRequest::tool(server, name, arguments);
        let attempts = async {
            let arguments = match policy.approve(request.clone()).await {
                Approval::Allow => request.arguments,
                Approval::Deny(reason) => {
                    tracing::info!(target: "mcp_registry::client", outcome = "denied", attempt = 0u32, duration_ms = elapsed(), error = %reason, "tool call denied");
                    return Err(ClientError::Denied {
                        tool: name.to_owned(),
                        reason,
                    });
                }
            };
            let mut attempt = 1;
            loop {
                tracing::debug!(target: "mcp_registry::client", attempt, "tool call attempt");
                match self.call_tool_once(name, arguments.clone(), &options).await {
                    Ok(result) => {
                        let outcome = if result.is_error == Some(true) {
                            "tool_error"
                        } else {
                            "success"
                        };
                        tracing::info!(target: "mcp_registry::client", outcome, attempt, duration_ms = elapsed(), "tool call finished");
                        return Ok(result);
                    }
                    Err(error) if attempt <= policy.retry_count() && is_retryable(&error) => {
                        let wait = policy.delay(attempt, &error);
                        tracing::debug!(target: "mcp_registry::client", attempt, error = %error, retry_in_ms = u64::try_from(wait.as_millis()).unwrap_or(u64::MAX), "tool call attempt failed; retrying");
                        let never = CancellationToken::new();
                        let cancellation = options.cancellation.as_ref().unwrap_or(&never);
                        tokio::select! {
                            () = tokio::time::sleep(wait) => {}
                            () = cancellation.cancelled() => {
                                return Err(ClientError::Cancelled { method: method::TOOLS_CALL.into() });
                            }
                        }
                        attempt += 1;
                    }
                    Err(error) => {
                        tracing::warn!(target: "mcp_registry::client", outcome = "failure", attempt, duration_ms = elapsed(), error = %error, "tool call failed");
                        return Err(error);
                    }
                }
            }
        };
        tracing::Instrument::instrument(attempts, span).await
    }

    /// One attempt of a tool call.
    async fn call_tool_once(
        &self,
        name: &str,
        arguments: Value,
        options: &RequestOptions,
    ) -> Result<CallToolResult, ClientError> {
        let arguments = match arguments {
            Value::Null => None,
            Value::Object(map) => Some(map),
            other => {
                return Err(ClientError::State(ClientStateError {
                    operation: format!(
                        "call {name} with arguments that are not an object: {other}"
                    ),
                    state: self.lifecycle(),
                }));
            }
        };
        let headers = match (&arguments, lock(&self.inner.tool_headers).get(name)) {
            (Some(args), Some(found)) => param_headers(found, args),
            _ => Vec::new(),
        };
        let params = CallToolParams {
            name: name.to_owned(),
            arguments,
            ..Default::default()
        };
        let params = match serde_json::to_value(&params) {
            Ok(Value::Object(map)) => map,
            _ => Map::new(),
        };
        let result = self
            .call_with_input(method::TOOLS_CALL, params, options, headers)
            .await?;
        parse(method::TOOLS_CALL, result)
    }

    /// Every prompt, following `nextCursor` to the end.
    pub async fn list_prompts(&self) -> Result<Vec<PromptDescriptor>, ClientError> {
        let mut all = Vec::new();
        let mut cursor = None;
        loop {
            let page = self.list_prompts_page(cursor).await?;
            all.extend(page.prompts);
            match page.next_cursor {
                Some(next) if !next.is_empty() => cursor = Some(next),
                _ => return Ok(all),
            }
        }
    }

    /// One page of prompts, from `cursor`.
    pub async fn list_prompts_page(
        &self,
        cursor: Option<String>,
    ) -> Result<ListPromptsResult, ClientError> {
        let (method, result) = self
            .call(&RequestOptions::default(), Vec::new(), |m, _, now| {
                m.list_prompts(cursor.clone(), now)
            })
            .await?;
        parse(&method, result)
    }

    /// Gets prompt `name` with string `arguments`.
    pub async fn get_prompt(
        &self,
        name: &str,
        arguments: BTreeMap<String, String>,
    ) -> Result<GetPromptResult, ClientError> {
        let params = GetPromptParams {
            name: name.to_owned(),
            arguments: (!arguments.is_empty()).then_some(arguments),
        };
        let params = match serde_json::to_value(&params) {
            Ok(Value::Object(map)) => map,
            _ => Map::new(),
        };
        let result = self
            .call_with_input(
                method::PROMPTS_GET,
                params,
                &RequestOptions::default(),
                Vec::new(),
            )
            .await?;
        parse(method::PROMPTS_GET, result)
    }

    /// Every resource, following `nextCursor` to the end.
    pub async fn list_resources(&self) -> Result<Vec<ResourceDescriptor>, ClientError> {
        let mut all = Vec::new();
        let mut cursor: Option<String> = None;
        loop {
            let (method, result) = self
                .call(&RequestOptions::default(), Vec::new(), |m, _, now| {
                    m.list_resources(cursor.clone(), now)
                })
                .await?;
            let page: ListResourcesResult = parse(&method, result)?;
            all.extend(page.resources);
            match page.next_cursor {
                Some(next) if !next.is_empty() => cursor = Some(next),
                _ => return Ok(all),
            }
        }
    }

    /// Every resource template, following `nextCursor` to the end.
    pub async fn list_resource_templates(
        &self,
    ) -> Result<Vec<ResourceTemplateDescriptor>, ClientError> {
        let mut all = Vec::new();
        let mut cursor: Option<String> = None;
        loop {
            let (method, result) = self
                .call(&RequestOptions::default(), Vec::new(), |m, _, now| {
                    m.list_resource_templates(cursor.clone(), now)
                })
                .await?;
            let page: ListResourceTemplatesResult = parse(&method, result)?;
            all.extend(page.resource_templates);
            match page.next_cursor {
                Some(next) if !next.is_empty() => cursor = Some(next),
                _ => return Ok(all),
            }
        }
    }

    /// Reads resource `uri`.
    pub async fn read_resource(&self, uri: &str) -> Result<ReadResourceResult, ClientError> {
        let mut params = Map::new();
        params.insert("uri".into(), Value::String(uri.to_owned()));
        let result = self
            .call_with_input(
                method::RESOURCES_READ,
                params,
                &RequestOptions::default(),
                Vec::new(),
            )
            .await?;
        parse(method::RESOURCES_READ, result)
    }

    /// Subscribes to updates of resource `uri` (`notifications/resources/updated`).
    pub async fn subscribe_resource(&self, uri: &str) -> Result<(), ClientError> {
        self.call(&RequestOptions::default(), Vec::new(), |m, _, now| {
            m.subscribe(uri, now)
        })
        .await
        .map(|_| ())
    }

    /// Unsubscribes from resource `uri`.
    pub async fn unsubscribe_resource(&self, uri: &str) -> Result<(), ClientError> {
        self.call(&RequestOptions::default(), Vec::new(), |m, _, now| {
            m.unsubscribe(uri, now)
        })
        .await
        .map(|_| ())
    }

    /// `completion/complete`.
    pub async fn complete(&self, params: CompleteParams) -> Result<CompleteResult, ClientError> {
        let (method, result) = self
            .call(&RequestOptions::default(), Vec::new(), |m, _, now| {
                m.complete(&params, now)
            })
            .await?;
        parse(&method, result)
    }

    /// Sets the log level: `logging/setLevel` on a legacy server; on 2026-07-28 the level
    /// travels in every later request's `_meta`.
    pub async fn set_logging_level(&self, level: LoggingLevel) -> Result<(), ClientError> {
        if self.machine().era() == Some(ProtocolEra::Modern) {
            self.machine().set_logging_level(level, Instant::now())?;
            return Ok(());
        }
        self.call(&RequestOptions::default(), Vec::new(), |m, _, now| {
            m.set_logging_level(level, now)?
                .ok_or_else(|| ClientStateError {
                    operation: "send logging/setLevel".into(),
                    state: m.lifecycle().clone(),
                })
        })
        .await
        .map(|_| ())
    }

    /// Any request by method and params; its raw result.
    pub async fn request(
        &self,
        method_name: &str,
        params: Option<Map<String, Value>>,
        options: RequestOptions,
    ) -> Result<Value, ClientError> {
        self.call(&options, Vec::new(), |m, o, now| {
            m.request(method_name, params.clone(), o, now)
        })
        .await
        .map(|(_, result)| result)
    }

    /// Listens for the server's notifications of the kinds `filter` opts in to (list
    /// changes, resource updates): they arrive on [`notifications`](Self::notifications).
    ///
    /// On 2026-07-28 this is a `subscriptions/listen` request, open until the server ends
    /// it (this then returns `Ok`), the connection goes, or `cancellation` is cancelled
    /// (the request is then cancelled on the wire and this returns
    /// [`ClientError::Cancelled`]); no timeout applies. A legacy server sends these
    /// notifications unasked (resource updates after
    /// [`subscribe_resource`](Self::subscribe_resource)): this then returns `Ok` at once.
    pub async fn listen(
        &self,
        filter: SubscriptionFilter,
        cancellation: CancellationToken,
    ) -> Result<(), ClientError> {
        if self.machine().era() != Some(ProtocolEra::Modern) {
            return Ok(());
        }
        let params = ListenParams {
            notifications: filter,
        };
        let request = self.machine().listen(&params, Instant::now())?;
        let method = request.method().to_owned();
        match self.exchange(request, None, Some(&cancellation)).await? {
            Reply::Result(_) => Ok(()),
            Reply::Error(error) => Err(ClientError::Server { method, error }),
            Reply::Closed(reason) => Err(ClientError::Closed(reason)),
            Reply::Failed(e) => Err(e.into()),
            Reply::Handshake(_) => Err(ClientError::Handshake(
                "an unexpected handshake reply".into(),
            )),
        }
    }

    /// Tells the server the client's roots changed (`notifications/roots/list_changed`).
    pub async fn roots_list_changed(&self) -> Result<(), ClientError> {
        let note = self.machine().roots_list_changed();
        self.notify(note).await
    }

    /// Closes the connection: pending requests fail, the transport is closed (a child
    /// process is reaped).
    pub async fn close(&self) {
        self.machine().mark_shutting_down();
        *lock(&self.inner.closed) = Some("the client closed".into());
        self.inner.gone.cancel();
        for (_, waiter) in lock(&self.inner.waiters).drain() {
            let _ = waiter.send(Reply::Closed("the client closed".into()));
        }
        self.inner.transport.close().await;
        if let Some(reader) = lock(&self.inner.reader).take() {
            reader.abort();
        }
    }
}

fn parse<T: DeserializeOwned>(method: &str, result: Value) -> Result<T, ClientError> {
    serde_json::from_value(result).map_err(|e| ClientError::InvalidResult {
        method: method.to_owned(),
        detail: e.to_string(),
    })
}

/// Fills the defaults the form's schema gives into an accepted form's missing fields
/// (SEP-1034).
fn apply_elicitation_defaults(params: &ElicitParams, result: &mut ElicitResult) {
    if result.action != ElicitAction::Accept {
        return;
    }
    let Some(properties) = params
        .requested_schema
        .as_ref()
        .and_then(|s| s.get("properties"))
        .and_then(Value::as_object)
    else {
        return;
    };
    let content = result.content.get_or_insert_with(Map::new);
    for (name, schema) in properties {
        if let Some(default) = schema.get("default")
            && !content.contains_key(name)
        {
            content.insert(name.clone(), default.clone());
        }
    }
}

async fn answer_kind(
    builder: &ClientBuilder,
    kind: ServerRequestKind,
) -> Result<Value, ErrorObject> {
    let to_value = |v: Result<Value, serde_json::Error>| {
        v.map_err(|e| ErrorObject::new(ErrorCode::INTERNAL_ERROR, e.to_string()))
    };
    match kind {
        ServerRequestKind::Ping => Ok(Value::Object(Map::new())),
        ServerRequestKind::ListRoots => match &builder.roots {
            Some(roots) => to_value(serde_json::to_value(ListRootsResult {
                roots: roots.clone(),
            })),
            None => Err(ErrorObject::new(
                ErrorCode::METHOD_NOT_FOUND,
                "the client offers no roots",
            )),
        },
        ServerRequestKind::Elicit(params) => match &builder.elicitation {
            Some(handler) => {
                let mut result = handler((*params).clone()).await?;
                apply_elicitation_defaults(&params, &mut result);
                to_value(serde_json::to_value(result))
            }
            None => Err(ErrorObject::new(
                ErrorCode::METHOD_NOT_FOUND,
                "the client does not answer elicitation",
            )),
        },
        ServerRequestKind::CreateMessage(params) => match &builder.sampling {
            Some(handler) => to_value(serde_json::to_value(handler(*params).await?)),
            None => Err(ErrorObject::new(
                ErrorCode::METHOD_NOT_FOUND,
                "the client does not answer sampling",
            )),
        },
        ServerRequestKind::Invalid { error, .. } => Err(error),
        ServerRequestKind::Other { method, .. } => Err(ErrorObject::new(
            ErrorCode::METHOD_NOT_FOUND,
            format!("the client does not answer {method}"),
        )),
    }
}

/// Reads what the transport receives until it closes, handing replies to their waiters,
/// answering server requests and passing notifications on. Holds the client weakly: a
/// dropped client ends it.
async fn read_loop(inner: Weak<Inner>, mut incoming: mpsc::UnboundedReceiver<Inbound>) {
    while let Some(inbound) = incoming.recv().await {
        let Some(inner) = inner.upgrade() else { return };
        let message = match inbound {
            Inbound::Message(message) => message,
            Inbound::Closed(reason) => {
                close_all(&inner, reason);
                continue;
            }
            Inbound::Failed { id, error } => {
                lock(&inner.machine).forget(&id);
                deliver(&inner, &id, Reply::Failed(error));
                continue;
            }
        };
        let classified = lock(&inner.machine).handle(message);
        match classified {
            Incoming::Response { id, result, .. } => deliver(&inner, &id, Reply::Result(result)),
            Incoming::Error {
                id: Some(id),
                error,
                ..
            } => deliver(&inner, &id, Reply::Error(error)),
            Incoming::Error {
                id: None, error, ..
            } => {
                tracing::warn!(%error, "MCP server sent an error with no request id");
            }
            Incoming::Handshake(step) => {
                let id = lock(&inner.handshake_id).take();
                if let Some(id) = id {
                    deliver(&inner, &id, Reply::Handshake(step));
                }
            }
            Incoming::Request(request) => {
                let inner = Arc::clone(&inner);
                tokio::spawn(async move {
                    let id = request.id.clone();
                    let reply = match answer_kind(&inner.builder, request.kind).await {
                        Ok(result) => serde_json::to_value(ClientMachine::response(id, &result)),
                        Err(error) => {
                            serde_json::to_value(ClientMachine::error_response(id, error))
                        }
                    };
                    let outbound = Outbound {
                        message: reply.unwrap_or_default(),
                        kind: OutboundKind::Response,
                        protocol_version: lock(&inner.machine).negotiated_version(),
                    };
                    if let Err(e) = inner.transport.send(outbound).await {
                        tracing::warn!(error = %e, "could not answer an MCP server request");
                    }
                });
            }
            Incoming::Notification(note) => {
                if matches!(note, ServerNotification::ToolsListChanged) {
                    invalidate_tool_cache(&inner);
                }
                let _ = inner.notifications.send(note);
            }
            Incoming::NotOurs(why) => {
                tracing::debug!(?why, "MCP message ignored");
            }
        }
    }
    if let Some(inner) = inner.upgrade() {
        close_all(&inner, "the transport closed".into());
    }
}

fn deliver(inner: &Inner, id: &crate::protocol::RequestId, reply: Reply) {
    if let Some(waiter) = lock(&inner.waiters).remove(id) {
        let _ = waiter.send(reply);
    }
}

fn invalidate_tool_cache(inner: &Inner) {
    inner.tool_cache_generation.fetch_add(1, Ordering::AcqRel);
    *lock(&inner.tool_cache) = None;
}

fn close_all(inner: &Inner, reason: String) {
    let _ = lock(&inner.machine).mark_disconnected(reason.clone());
    *lock(&inner.closed) = Some(reason.clone());
    inner.gone.cancel();
    for (_, waiter) in lock(&inner.waiters).drain() {
        let _ = waiter.send(Reply::Closed(reason.clone()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn elicitation_defaults_fill_missing_fields_only() {
        let params = ElicitParams {
            message: "m".into(),
            mode: None,
            requested_schema: Some(json!({"type": "object", "properties": {
                "name": {"type": "string", "default": "John"},
                "age": {"type": "integer", "default": 30},
                "free": {"type": "string"}
            }})),
            url: None,
            elicitation_id: None,
        };
        let mut accepted = ElicitResult::accept(json!({"age": 5}).as_object().unwrap().clone());
        apply_elicitation_defaults(&params, &mut accepted);
        assert_eq!(
            Value::Object(accepted.content.unwrap()),
            json!({"name": "John", "age": 5})
        );
        let mut declined = ElicitResult::decline();
        apply_elicitation_defaults(&params, &mut declined);
        assert!(declined.content.is_none());
    }
}
