//! [`ClientBuilder`]: who the client is, what it answers, how it connects.

//! [`Client`]: the async MCP client, one type over every [`Transport`].

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value};
use tokio::sync::mpsc;

use super::ClientError;
use super::driver::{Callbacks, Client, Settings};
use super::handlers::{ElicitationHandler, Handlers, SamplingHandler};
use super::machine::{ClientConfig, VersionPreference};
use super::policy::Policies;
use super::policy::RequestPolicy;
use super::transport::{DEFAULT_MAX_MESSAGE_BYTES, InProcessTransport, Inbound, Transport};
use crate::protocol::{
    ClientCapabilities, CreateMessageParams, CreateMessageResult, ElicitParams, ElicitResult,
    ErrorObject, Implementation, ProtocolVersion, Root, RootsCapability, method,
};
use crate::registry::Registry;

/// How many of the server's requests a client answers at once unless
/// [`ClientBuilder::max_concurrent_callbacks`] says otherwise.
pub const DEFAULT_MAX_CONCURRENT_CALLBACKS: usize = 16;

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
    policies: Policies,
    tool_cache: Option<Duration>,
    /// How many of the server's requests are answered at once.
    max_concurrent_callbacks: usize,
    /// `capabilities.extensions` (SEP-2133): identifier -> settings.
    extensions: Map<String, Value>,
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
    /// Wraps the transport of every `connect_*` ([`wrap_transport`](Self::wrap_transport)).
    wrap: Option<Arc<TransportWrapper>>,
}

/// What [`ClientBuilder::wrap_transport`] takes: the transport a `connect_*` built and the
/// receiver of what it receives, in; the transport to use and its receiver, out.
type TransportWrapper = dyn Fn(
        Box<dyn Transport>,
        mpsc::UnboundedReceiver<Inbound>,
    ) -> (Box<dyn Transport>, mpsc::UnboundedReceiver<Inbound>)
    + Send
    + Sync;

impl fmt::Debug for ClientBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClientBuilder")
            .field("info", &self.info)
            .field("version", &self.version)
            .field("timeout", &self.timeout)
            .field("policies", &self.policies)
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
            policies: Policies::default(),
            tool_cache: None,
            max_concurrent_callbacks: DEFAULT_MAX_CONCURRENT_CALLBACKS,
            extensions: Map::new(),
            max_message_bytes: DEFAULT_MAX_MESSAGE_BYTES,
            redirects_across_origins: false,
            headers: Vec::new(),
            #[cfg(feature = "client-auth")]
            oauth: None,
            wrap: None,
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

    /// How many of the server's requests (`elicitation/create`, `sampling/createMessage`,
    /// `roots/list`) are answered at once: [`DEFAULT_MAX_CONCURRENT_CALLBACKS`] unless set,
    /// at least 1. Up to three times as many more wait their turn; past that, a request is
    /// refused at once (-32603, "the client is busy"), so a server cannot make the client
    /// run, or hold, any number of them.
    pub fn max_concurrent_callbacks(mut self, cap: usize) -> Self {
        self.max_concurrent_callbacks = cap.max(1);
        self
    }

    /// Answers `roots/list` with `roots` (declares the `roots` capability).
    pub fn roots(mut self, roots: Vec<Root>) -> Self {
        self.roots = Some(roots);
        self
    }

    /// Deprecated: `policy("tools/call", policy)`.
    #[deprecated(since = "0.1.0", note = "use `policy(\"tools/call\", policy)`")]
    #[doc(hidden)]
    pub fn call_policy(self, policy: RequestPolicy) -> Self {
        self.policy(method::TOOLS_CALL, policy)
    }

    /// Retries, backoff, approval and telemetry for every request of `method` (e.g.
    /// `"prompts/get"`, `"resources/read"`); requests of other methods than `tools/call` get
    /// none unless set. `tools/call` has [`RequestPolicy::new`] unless set (3 retries of retryable
    /// failures, no approval).
    pub fn policy(mut self, method: impl Into<String>, policy: RequestPolicy) -> Self {
        self.policies.set(method, policy);
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
    /// with [`TransportError::TooLarge`](super::transport::TransportError::TooLarge) when the client can tell which one it was.
    pub fn max_message_bytes(mut self, limit: usize) -> Self {
        self.max_message_bytes = limit;
        self
    }

    /// Whether HTTP redirects to another origin (scheme, host and port) are followed; off
    /// unless set, when such a redirect fails the request with
    /// [`TransportError::Redirected`](super::transport::TransportError::Redirected). When on, only `307`/`308` are followed there, and
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

    /// Declares support for extension `id` with its `settings` in the client's
    /// `capabilities.extensions` (SEP-2133; `{}`: no settings). Extensions are off until
    /// declared.
    pub fn extension(mut self, id: impl Into<String>, settings: Value) -> Self {
        self.extensions.insert(id.into(), settings);
        self
    }

    /// Declares the Skills extension (SEP-2640, `io.modelcontextprotocol/skills`): the
    /// client lists, loads and verifies skills ([`Client::list_skills`] and what follows).
    pub fn skills(self) -> Self {
        self.extension(crate::skill::EXTENSION_ID, Value::Object(Map::new()))
    }

    /// Declares MCP Apps (SEP-1865, `io.modelcontextprotocol/ui`) for HTML apps: a server
    /// then lists its tools' apps (`_meta.ui`), which the host renders (see
    /// [`crate::apps`]).
    pub fn apps(self) -> Self {
        let settings = serde_json::to_value(crate::apps::ClientUiSettings::html())
            .unwrap_or_else(|_| Value::Object(Map::new()));
        self.extension(crate::apps::EXTENSION_ID, settings)
    }

    /// Wraps the transport every `connect_*` builds (stdio, Streamable HTTP, in-process, or
    /// [`connect_transport`](Self::connect_transport)'s) before the handshake: `wrap` gets the transport
    /// and the receiver of what it receives, and returns the ones the client uses. For
    /// looking at or changing the messages as they pass, e.g. recording them
    /// (`testing::Cassette`, feature `testing`). A second call replaces the first.
    pub fn wrap_transport<F>(mut self, wrap: F) -> Self
    where
        F: Fn(
                Box<dyn Transport>,
                mpsc::UnboundedReceiver<Inbound>,
            ) -> (Box<dyn Transport>, mpsc::UnboundedReceiver<Inbound>)
            + Send
            + Sync
            + 'static,
    {
        self.wrap = Some(Arc::new(wrap));
        self
    }

    fn config(&self) -> ClientConfig {
        let mut capabilities = ClientCapabilities::default();
        if !self.extensions.is_empty() {
            let extensions = Value::Object(self.extensions.clone());
            capabilities.other.insert("extensions".into(), extensions);
        }
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
        let mut config = ClientConfig::new(self.info.clone())
            .capabilities(capabilities)
            .handshake_timeout(self.handshake_timeout);
        config.version = self.version;
        // call_tool follows a task the server makes of a call (tasks.rs).
        config.extensions.insert(
            crate::protocol::TASKS_EXTENSION.to_owned(),
            Value::Object(Map::new()),
        );
        config
    }

    /// What the driver keeps.
    fn settings(&self) -> Settings {
        Settings {
            timeout: self.timeout,
            policies: self.policies.clone(),
            tool_cache: self.tool_cache,
            handlers: Handlers {
                elicitation: self.elicitation.clone(),
                sampling: self.sampling.clone(),
                roots: self.roots.clone(),
            },
            callbacks: Callbacks::new(self.max_concurrent_callbacks),
        }
    }

    /// Connects over `transport`, whose incoming messages arrive on `incoming`, and runs
    /// the handshake.
    pub async fn connect_transport(
        self,
        transport: impl Transport,
        incoming: mpsc::UnboundedReceiver<Inbound>,
    ) -> Result<Client, ClientError> {
        let transport: Box<dyn Transport> = Box::new(transport);
        let (transport, incoming) = match &self.wrap {
            Some(wrap) => wrap(transport, incoming),
            None => (transport, incoming),
        };
        let client = Client::start(self.config(), self.settings(), transport, incoming);
        client.handshake().await?;
        Ok(client)
    }

    /// Deprecated: renamed [`connect_transport`](Self::connect_transport).
    #[deprecated(since = "0.1.0", note = "renamed `connect_transport`")]
    #[doc(hidden)]
    pub async fn connect_with(
        self,
        transport: impl Transport,
        incoming: mpsc::UnboundedReceiver<Inbound>,
    ) -> Result<Client, ClientError> {
        self.connect_transport(transport, incoming).await
    }

    /// Connects to `server` of `registry` in-process and runs the handshake.
    pub async fn connect_in_process(
        self,
        registry: Registry,
        server: &str,
    ) -> Result<Client, ClientError> {
        let (tx, rx) = mpsc::unbounded_channel();
        let transport = InProcessTransport::new(registry, server, tx);
        self.connect_transport(transport, rx).await
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
        self.connect_transport(transport, rx).await
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
        self.connect_transport(transport, rx).await
    }
}
