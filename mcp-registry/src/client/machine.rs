//! [`ClientMachine`]: the MCP client as a state machine with no I/O.
//!
//! The caller moves bytes and owns the clock (as with quinn-proto's `Connection`): every
//! request is built here (its id and the typed message to send), every incoming message is
//! handed here and comes back classified, and timeouts are checked against an [`Instant`] the
//! caller gives. The async `Client` is a thin driver over it; a host with
//! its own transport can drive it directly.
//!
//! ```
//! use std::time::Instant;
//! use mcp_registry::client::{ClientConfig, ClientMachine, Handshake, Incoming, ClientLifecycle};
//! use mcp_registry::protocol::{Implementation, ProtocolVersion};
//! use serde_json::json;
//!
//! let mut machine = ClientMachine::new(
//!     ClientConfig::new(Implementation { name: "host".into(), version: "1.0".into(), title: None })
//!         .protocol_version(ProtocolVersion::V2025_06_18),
//! );
//! let init = machine.initialize(Instant::now()).unwrap();
//! assert_eq!(machine.lifecycle(), &ClientLifecycle::Initializing);
//! let reply = json!({"jsonrpc": "2.0", "id": init.id.to_value(), "result": {
//!     "protocolVersion": "2025-06-18", "capabilities": {"tools": {}},
//!     "serverInfo": {"name": "s", "version": "1"}}});
//! assert!(matches!(machine.handle(reply), Incoming::Handshake(Handshake::Initialized(_))));
//! let _initialized = machine.initialized().unwrap();
//! assert!(machine.is_ready());
//! let list = machine.list_tools(None, Instant::now()).unwrap();
//! assert_eq!(list.request.method, "tools/list");
//! assert_eq!(machine.pending_count(), 1);
//! ```

use std::collections::HashMap;
use std::time::{Duration, Instant};

use serde::Serialize;
use serde_json::{Map, Value};

use crate::protocol::{
    CallToolParams, CancelledNotificationParams, ClientCapabilities, CompleteParams,
    CreateMessageParams, DiscoverResult, ElicitParams, ErrorCode, ErrorObject, ErrorResponse,
    GetPromptParams, Implementation, InitializeParams, InitializeResult, ListenParams,
    LoggingLevel, LoggingMessageParams, META_CLIENT_CAPABILITIES, META_CLIENT_INFO, META_LOG_LEVEL,
    META_PROTOCOL_VERSION, META_SERVER_INFO, Notification, PaginatedParams,
    ProgressNotificationParams, ProtocolEra, ProtocolVersion, Request, RequestId,
    ResourceUriParams, ResultResponse, ServerCapabilities, SetLevelParams, UnsupportedVersionData,
    exceeds_max_depth, method,
};

/// Which protocol version a client speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum VersionPreference {
    /// Both eras: probe with `server/discover` at 2026-07-28, fall back to the `initialize`
    /// handshake (at the newest legacy version) when the server is not modern.
    #[default]
    Auto,
    /// Exactly this version: 2026-07-28 connects with `server/discover`, a legacy version
    /// with `initialize`.
    Exactly(ProtocolVersion),
}

/// Who the client is and what it offers.
#[derive(Debug, Clone)]
pub struct ClientConfig {
    /// `clientInfo`.
    pub info: Implementation,
    /// The capabilities sent with `initialize`, or with every 2026-07-28 request.
    pub capabilities: ClientCapabilities,
    /// Which version to speak.
    pub version: VersionPreference,
}

impl ClientConfig {
    /// A client named by `info`, with no capabilities, speaking either era.
    pub fn new(info: Implementation) -> Self {
        ClientConfig {
            info,
            capabilities: ClientCapabilities::default(),
            version: VersionPreference::Auto,
        }
    }

    /// Speaks exactly `version`.
    pub fn protocol_version(mut self, version: ProtocolVersion) -> Self {
        self.version = VersionPreference::Exactly(version);
        self
    }

    /// Offers `capabilities`.
    pub fn capabilities(mut self, capabilities: ClientCapabilities) -> Self {
        self.capabilities = capabilities;
        self
    }
}

/// Where a client is in the MCP lifecycle.
///
/// | from | on | to |
/// |---|---|---|
/// | `Uninitialized` | [`ClientMachine::initialize`] or [`ClientMachine::discover`] | `Initializing` |
/// | `Initializing` | a `server/discover` result naming 2026-07-28 | `Ready` |
/// | `Initializing` | [`ClientMachine::initialized`], once `initialize` is answered | `Ready` |
/// | `Initializing` | the handshake fails, or the server is legacy ([`Handshake`]) | `Error` or `Uninitialized` |
/// | `Initializing`, `Ready` | [`ClientMachine::mark_disconnected`] | `Disconnected` |
/// | any but `ShuttingDown` | [`ClientMachine::mark_error`] | `Error` |
/// | `Error`, `Disconnected` | [`ClientMachine::reset`] | `Uninitialized` |
/// | any | [`ClientMachine::mark_shutting_down`] | `ShuttingDown` (final) |
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClientLifecycle {
    /// Nothing sent yet.
    Uninitialized,
    /// The handshake (`initialize` or `server/discover`) is under way.
    Initializing,
    /// Requests may be sent.
    Ready,
    /// Failed, with the reason: nothing can be sent until [`ClientMachine::reset`].
    Error(String),
    /// The transport was lost, with the reason: nothing can be sent until
    /// [`ClientMachine::reset`].
    Disconnected(String),
    /// Closing: nothing more is sent.
    ShuttingDown,
}

/// An operation the current lifecycle state does not allow.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("cannot {operation} in the {state:?} state")]
#[non_exhaustive]
pub struct ClientStateError {
    /// What was asked, e.g. `"send tools/list"`.
    pub operation: String,
    /// The state the client was in (and still is).
    pub state: ClientLifecycle,
}

/// What the machine records with a request it builds (the async client's richer
/// [`RequestOptions`](super::RequestOptions) come down to these).
#[derive(Debug, Clone, Default)]
pub struct RequestSettings {
    /// Give up after this long ([`ClientMachine::check_timeouts`] reports it).
    pub timeout: Option<Duration>,
    /// Ask for `notifications/progress` under this token (`_meta.progressToken`).
    pub progress_token: Option<Value>,
}

/// A request built by the machine: its id, and the message to send.
#[derive(Debug, Clone, PartialEq)]
pub struct OutgoingRequest {
    /// The id its reply will carry.
    pub id: RequestId,
    /// The message.
    pub request: Request<Map<String, Value>>,
}

impl OutgoingRequest {
    /// The method called.
    pub fn method(&self) -> &str {
        &self.request.method
    }

    /// The message as JSON text.
    pub fn to_text(&self) -> String {
        to_text(&self.request)
    }

    /// The message as a JSON value.
    pub fn to_value(&self) -> Value {
        serde_json::to_value(&self.request).unwrap_or_default()
    }
}

/// A notification built by the machine.
pub type OutgoingNotification = Notification<Map<String, Value>>;

/// What a handshake reply means ([`Incoming::Handshake`]).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Handshake {
    /// `initialize` was answered with a version this crate speaks: send
    /// [`ClientMachine::initialized`] next.
    Initialized(Box<InitializeResult>),
    /// `server/discover` was answered and the server speaks 2026-07-28: the client is ready.
    Discovered(Box<DiscoverResult>),
    /// The server is legacy, or prefers a legacy version: the machine is back to
    /// `Uninitialized`; send [`ClientMachine::initialize`], which asks for `version`.
    FallBackToInitialize {
        /// The version `initialize` will ask for.
        version: ProtocolVersion,
        /// Why the modern probe did not succeed.
        reason: String,
    },
    /// The server refused the version but speaks 2026-07-28 too (-32022): the machine is
    /// back to `Uninitialized`; send [`ClientMachine::discover`] again.
    RetryDiscover,
    /// The handshake failed; the machine is in the `Error` state with this reason.
    Failed(String),
}

/// A request the server sent the client.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerRequest {
    /// Its id, to answer under ([`ClientMachine::response`], [`ClientMachine::error_response`]).
    pub id: RequestId,
    /// What it asks.
    pub kind: ServerRequestKind,
}

/// What a server asks of a client.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ServerRequestKind {
    /// `ping`: answer with an empty result.
    Ping,
    /// `sampling/createMessage`.
    CreateMessage(Box<CreateMessageParams>),
    /// `elicitation/create`.
    Elicit(Box<ElicitParams>),
    /// `roots/list`.
    ListRoots,
    /// A method the machine does not type (answer -32601 unless the host knows it).
    Other {
        /// The method.
        method: String,
        /// Its params.
        params: Map<String, Value>,
    },
    /// A known method whose params cannot be read: answer with this error (-32602).
    Invalid {
        /// The method.
        method: String,
        /// The error to answer with.
        error: ErrorObject,
    },
}

/// A notification from the server.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ServerNotification {
    /// `notifications/progress`.
    Progress(ProgressNotificationParams),
    /// `notifications/message` (a log message).
    Log(LoggingMessageParams),
    /// `notifications/tools/list_changed`.
    ToolsListChanged,
    /// `notifications/prompts/list_changed`.
    PromptsListChanged,
    /// `notifications/resources/list_changed`.
    ResourcesListChanged,
    /// `notifications/resources/updated`.
    ResourceUpdated(ResourceUriParams),
    /// `notifications/cancelled`: the server gave up on a request it sent.
    Cancelled(CancelledNotificationParams),
    /// Any other notification, or a known one whose params cannot be read.
    Other {
        /// The method.
        method: String,
        /// Its params.
        params: Map<String, Value>,
    },
}

/// Why a message was not for this client.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum NotOurs {
    /// A response to no pending request (late, after a timeout or cancellation, or unknown).
    UnknownId(RequestId),
    /// Not a JSON-RPC message this client can read.
    Malformed(String),
}

/// An incoming message, classified.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Incoming {
    /// The result of a pending request.
    Response {
        /// The request's id.
        id: RequestId,
        /// The request's method.
        method: String,
        /// Its result.
        result: Value,
    },
    /// An error reply, to a pending request (`id` and `method` known) or to something the
    /// server could not read (`id` `None`).
    Error {
        /// The request's id, when the server gave one that was pending.
        id: Option<RequestId>,
        /// The request's method, when pending.
        method: Option<String>,
        /// The error.
        error: ErrorObject,
    },
    /// The reply to `initialize` or `server/discover`.
    Handshake(Handshake),
    /// A request from the server.
    Request(ServerRequest),
    /// A notification from the server.
    Notification(ServerNotification),
    /// Not for this client.
    NotOurs(NotOurs),
}

/// A request that timed out ([`ClientMachine::check_timeouts`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TimedOut {
    /// Its id.
    pub id: RequestId,
    /// Its method.
    pub method: String,
    /// When it was sent.
    pub sent_at: Instant,
}

#[derive(Debug, Clone)]
struct Pending {
    method: String,
    sent_at: Instant,
    deadline: Option<Instant>,
}

/// The MCP client state machine: builds requests, classifies what comes back, keeps pending
/// requests, timeouts and the lifecycle. See the [module docs](self).
#[derive(Debug)]
pub struct ClientMachine {
    config: ClientConfig,
    lifecycle: ClientLifecycle,
    next_id: u64,
    pending: HashMap<RequestId, Pending>,
    /// The version `initialize` asks for next (after a fallback).
    legacy_request: ProtocolVersion,
    /// The version `server/discover` asks for next.
    modern_request: ProtocolVersion,
    negotiated: Option<ProtocolVersion>,
    server_info: Option<Implementation>,
    server_capabilities: Option<ServerCapabilities>,
    instructions: Option<String>,
    initialize_answered: bool,
    log_level: Option<LoggingLevel>,
}

fn to_text<T: Serialize>(message: &T) -> String {
    serde_json::to_string(message).unwrap_or_default()
}

fn to_map<T: Serialize>(params: &T) -> Map<String, Value> {
    match serde_json::to_value(params) {
        Ok(Value::Object(map)) => map,
        _ => Map::new(),
    }
}

impl ClientMachine {
    /// A machine for `config`, `Uninitialized`.
    pub fn new(config: ClientConfig) -> Self {
        let legacy_request = match config.version {
            VersionPreference::Exactly(v) if v.era() == ProtocolEra::Legacy => v,
            _ => ProtocolVersion::LATEST_LEGACY,
        };
        ClientMachine {
            config,
            lifecycle: ClientLifecycle::Uninitialized,
            next_id: 1,
            pending: HashMap::new(),
            legacy_request,
            modern_request: ProtocolVersion::MODERN,
            negotiated: None,
            server_info: None,
            server_capabilities: None,
            instructions: None,
            initialize_answered: false,
            log_level: None,
        }
    }

    /// The configuration.
    pub fn config(&self) -> &ClientConfig {
        &self.config
    }

    /// The lifecycle state.
    pub fn lifecycle(&self) -> &ClientLifecycle {
        &self.lifecycle
    }

    /// Whether requests may be sent.
    pub fn is_ready(&self) -> bool {
        self.lifecycle == ClientLifecycle::Ready
    }

    /// How the client should open: `server/discover` first (2026-07-28 or both eras) or
    /// straight to `initialize` (a pinned legacy version).
    pub fn starts_with_discover(&self) -> bool {
        match self.config.version {
            VersionPreference::Auto => true,
            VersionPreference::Exactly(v) => v.era() == ProtocolEra::Modern,
        }
    }

    /// The version agreed on, once ready.
    pub fn negotiated_version(&self) -> Option<ProtocolVersion> {
        self.negotiated
    }

    /// The era of the version agreed on.
    pub fn era(&self) -> Option<ProtocolEra> {
        self.negotiated.map(ProtocolVersion::era)
    }

    /// Who the server is (from `initialize`, or a 2026-07-28 result's `_meta`).
    pub fn server_info(&self) -> Option<&Implementation> {
        self.server_info.as_ref()
    }

    /// What the server offers.
    pub fn server_capabilities(&self) -> Option<&ServerCapabilities> {
        self.server_capabilities.as_ref()
    }

    /// The server's instructions for the model, if it gave any.
    pub fn instructions(&self) -> Option<&str> {
        self.instructions.as_deref()
    }

    /// How many requests await a reply.
    pub fn pending_count(&self) -> usize {
        self.pending.len()
    }

    /// The method of pending request `id`.
    pub fn pending_method(&self, id: &RequestId) -> Option<&str> {
        self.pending.get(id).map(|p| p.method.as_str())
    }

    /// The earliest deadline among pending requests: when to call
    /// [`check_timeouts`](Self::check_timeouts) next.
    pub fn next_deadline(&self) -> Option<Instant> {
        self.pending.values().filter_map(|p| p.deadline).min()
    }

    /// The log level 2026-07-28 requests carry in `_meta` (set by
    /// [`set_logging_level`](Self::set_logging_level)).
    pub fn log_level(&self) -> Option<LoggingLevel> {
        self.log_level
    }

    // ----- lifecycle transitions -------------------------------------------------------

    /// Marks the client failed (from any state but `ShuttingDown`): pending requests are
    /// forgotten; nothing can be sent until [`reset`](Self::reset).
    pub fn mark_error(&mut self, reason: impl Into<String>) -> Result<(), ClientStateError> {
        if self.lifecycle == ClientLifecycle::ShuttingDown {
            return Err(self.refuse("mark the client failed"));
        }
        self.lifecycle = ClientLifecycle::Error(reason.into());
        self.pending.clear();
        Ok(())
    }

    /// Marks the transport lost (from `Initializing` or `Ready`): pending requests are
    /// forgotten; nothing can be sent until [`reset`](Self::reset).
    pub fn mark_disconnected(&mut self, reason: impl Into<String>) -> Result<(), ClientStateError> {
        if !matches!(
            self.lifecycle,
            ClientLifecycle::Initializing | ClientLifecycle::Ready
        ) {
            return Err(self.refuse("mark the client disconnected"));
        }
        self.lifecycle = ClientLifecycle::Disconnected(reason.into());
        self.pending.clear();
        Ok(())
    }

    /// Closing (final): pending requests are forgotten and nothing more can be sent.
    pub fn mark_shutting_down(&mut self) {
        self.lifecycle = ClientLifecycle::ShuttingDown;
        self.pending.clear();
    }

    /// From `Error` or `Disconnected` back to `Uninitialized`: the server's version,
    /// capabilities and info are forgotten, for a new handshake.
    pub fn reset(&mut self) -> Result<(), ClientStateError> {
        if !matches!(
            self.lifecycle,
            ClientLifecycle::Error(_) | ClientLifecycle::Disconnected(_)
        ) {
            return Err(self.refuse("reset"));
        }
        self.forget_server();
        Ok(())
    }

    /// A live session the server no longer knows (HTTP 404 on a legacy session): back to
    /// `Uninitialized` from `Ready` or `Initializing`, pending requests kept, for a new
    /// `initialize`.
    pub fn session_expired(&mut self) -> Result<(), ClientStateError> {
        if !matches!(
            self.lifecycle,
            ClientLifecycle::Initializing | ClientLifecycle::Ready
        ) {
            return Err(self.refuse("re-initialize"));
        }
        self.lifecycle = ClientLifecycle::Uninitialized;
        self.initialize_answered = false;
        Ok(())
    }

    fn forget_server(&mut self) {
        self.lifecycle = ClientLifecycle::Uninitialized;
        self.pending.clear();
        self.negotiated = None;
        self.server_info = None;
        self.server_capabilities = None;
        self.instructions = None;
        self.initialize_answered = false;
    }

    fn refuse(&self, operation: impl Into<String>) -> ClientStateError {
        ClientStateError {
            operation: operation.into(),
            state: self.lifecycle.clone(),
        }
    }

    // ----- the handshake ----------------------------------------------------------------

    /// The `initialize` request (legacy handshake): `Uninitialized` → `Initializing`.
    pub fn initialize(&mut self, now: Instant) -> Result<OutgoingRequest, ClientStateError> {
        if self.lifecycle != ClientLifecycle::Uninitialized {
            return Err(self.refuse("send initialize"));
        }
        let params = InitializeParams {
            protocol_version: Some(self.legacy_request.as_str().to_owned()),
            capabilities: to_map(&self.config.capabilities),
            client_info: Some(self.config.info.clone()),
        };
        self.lifecycle = ClientLifecycle::Initializing;
        Ok(self.push(
            method::INITIALIZE,
            Some(to_map(&params)),
            &RequestSettings::default(),
            now,
            false,
        ))
    }

    /// The `server/discover` probe (2026-07-28): `Uninitialized` → `Initializing`.
    pub fn discover(&mut self, now: Instant) -> Result<OutgoingRequest, ClientStateError> {
        if self.lifecycle != ClientLifecycle::Uninitialized {
            return Err(self.refuse("send server/discover"));
        }
        self.lifecycle = ClientLifecycle::Initializing;
        Ok(self.push(
            method::DISCOVER,
            None,
            &RequestSettings::default(),
            now,
            true,
        ))
    }

    /// `notifications/initialized`, once `initialize` is answered: `Initializing` → `Ready`.
    pub fn initialized(&mut self) -> Result<OutgoingNotification, ClientStateError> {
        if self.lifecycle != ClientLifecycle::Initializing || !self.initialize_answered {
            return Err(self.refuse("send notifications/initialized"));
        }
        self.lifecycle = ClientLifecycle::Ready;
        Ok(Notification::new(method::INITIALIZED, None))
    }

    // ----- requests ---------------------------------------------------------------------

    fn ready(&self, method: &str) -> Result<(), ClientStateError> {
        if self.lifecycle == ClientLifecycle::Ready {
            Ok(())
        } else {
            Err(self.refuse(format!("send {method}")))
        }
    }

    /// Registers and builds a request. `modern_meta` forces the 2026-07-28 `_meta` (the
    /// discover probe, before a version is agreed).
    fn push(
        &mut self,
        method: &str,
        params: Option<Map<String, Value>>,
        options: &RequestSettings,
        now: Instant,
        modern_meta: bool,
    ) -> OutgoingRequest {
        let id = RequestId::from(self.next_id);
        self.next_id += 1;
        let mut params = params;
        let modern = modern_meta || self.era() == Some(ProtocolEra::Modern);
        if modern || options.progress_token.is_some() {
            let params = params.get_or_insert_with(Map::new);
            let mut meta = match params.remove("_meta") {
                Some(Value::Object(meta)) => meta,
                _ => Map::new(),
            };
            if let Some(token) = &options.progress_token {
                meta.insert("progressToken".into(), token.clone());
            }
            if modern {
                let version = self.negotiated.unwrap_or(self.modern_request);
                meta.insert(META_PROTOCOL_VERSION.into(), version.as_str().into());
                meta.insert(
                    META_CLIENT_INFO.into(),
                    serde_json::to_value(&self.config.info).unwrap_or_default(),
                );
                meta.insert(
                    META_CLIENT_CAPABILITIES.into(),
                    Value::Object(to_map(&self.config.capabilities)),
                );
                if let Some(level) = self.log_level {
                    meta.insert(
                        META_LOG_LEVEL.into(),
                        serde_json::to_value(level).unwrap_or_default(),
                    );
                }
            }
            params.insert("_meta".into(), Value::Object(meta));
        }
        self.pending.insert(
            id.clone(),
            Pending {
                method: method.to_owned(),
                sent_at: now,
                deadline: options.timeout.map(|t| now + t),
            },
        );
        OutgoingRequest {
            id: id.clone(),
            request: Request::new(id, method.to_owned(), params),
        }
    }

    /// Any request, by method and params (`ready` required; `ping` also while
    /// initializing).
    pub fn request(
        &mut self,
        method: &str,
        params: Option<Map<String, Value>>,
        options: &RequestSettings,
        now: Instant,
    ) -> Result<OutgoingRequest, ClientStateError> {
        let allowed = self.is_ready()
            || (method == crate::protocol::method::PING
                && self.lifecycle == ClientLifecycle::Initializing);
        if !allowed {
            return Err(self.refuse(format!("send {method}")));
        }
        Ok(self.push(method, params, options, now, false))
    }

    fn typed<P: Serialize>(
        &mut self,
        method: &str,
        params: &P,
        options: &RequestSettings,
        now: Instant,
    ) -> Result<OutgoingRequest, ClientStateError> {
        self.ready(method)?;
        let params = to_map(params);
        let params = (!params.is_empty()).then_some(params);
        Ok(self.push(method, params, options, now, false))
    }

    /// `ping`.
    pub fn ping(&mut self, now: Instant) -> Result<OutgoingRequest, ClientStateError> {
        self.request(method::PING, None, &RequestSettings::default(), now)
    }

    /// `tools/list`, from `cursor`.
    pub fn list_tools(
        &mut self,
        cursor: Option<String>,
        now: Instant,
    ) -> Result<OutgoingRequest, ClientStateError> {
        self.typed(
            method::TOOLS_LIST,
            &PaginatedParams { cursor },
            &RequestSettings::default(),
            now,
        )
    }

    /// `tools/call`.
    pub fn call_tool(
        &mut self,
        params: &CallToolParams,
        options: &RequestSettings,
        now: Instant,
    ) -> Result<OutgoingRequest, ClientStateError> {
        self.typed(method::TOOLS_CALL, params, options, now)
    }

    /// `resources/list`, from `cursor`.
    pub fn list_resources(
        &mut self,
        cursor: Option<String>,
        now: Instant,
    ) -> Result<OutgoingRequest, ClientStateError> {
        self.typed(
            method::RESOURCES_LIST,
            &PaginatedParams { cursor },
            &RequestSettings::default(),
            now,
        )
    }

    /// `resources/templates/list`, from `cursor`.
    pub fn list_resource_templates(
        &mut self,
        cursor: Option<String>,
        now: Instant,
    ) -> Result<OutgoingRequest, ClientStateError> {
        self.typed(
            method::RESOURCES_TEMPLATES_LIST,
            &PaginatedParams { cursor },
            &RequestSettings::default(),
            now,
        )
    }

    /// `resources/read`.
    pub fn read_resource(
        &mut self,
        uri: &str,
        options: &RequestSettings,
        now: Instant,
    ) -> Result<OutgoingRequest, ClientStateError> {
        let params = ResourceUriParams { uri: uri.into() };
        self.typed(method::RESOURCES_READ, &params, options, now)
    }

    /// `resources/subscribe`.
    pub fn subscribe(
        &mut self,
        uri: &str,
        now: Instant,
    ) -> Result<OutgoingRequest, ClientStateError> {
        let params = ResourceUriParams { uri: uri.into() };
        self.typed(
            method::RESOURCES_SUBSCRIBE,
            &params,
            &RequestSettings::default(),
            now,
        )
    }

    /// `resources/unsubscribe`.
    pub fn unsubscribe(
        &mut self,
        uri: &str,
        now: Instant,
    ) -> Result<OutgoingRequest, ClientStateError> {
        let params = ResourceUriParams { uri: uri.into() };
        self.typed(
            method::RESOURCES_UNSUBSCRIBE,
            &params,
            &RequestSettings::default(),
            now,
        )
    }

    /// `prompts/list`, from `cursor`.
    pub fn list_prompts(
        &mut self,
        cursor: Option<String>,
        now: Instant,
    ) -> Result<OutgoingRequest, ClientStateError> {
        self.typed(
            method::PROMPTS_LIST,
            &PaginatedParams { cursor },
            &RequestSettings::default(),
            now,
        )
    }

    /// `prompts/get`.
    pub fn get_prompt(
        &mut self,
        params: &GetPromptParams,
        options: &RequestSettings,
        now: Instant,
    ) -> Result<OutgoingRequest, ClientStateError> {
        self.typed(method::PROMPTS_GET, params, options, now)
    }

    /// `completion/complete`.
    pub fn complete(
        &mut self,
        params: &CompleteParams,
        now: Instant,
    ) -> Result<OutgoingRequest, ClientStateError> {
        self.typed(
            method::COMPLETION_COMPLETE,
            params,
            &RequestSettings::default(),
            now,
        )
    }

    /// The log level: `logging/setLevel` on a legacy server; on 2026-07-28 the level is kept
    /// and carried in every later request's `_meta` (there is no request: `None`).
    pub fn set_logging_level(
        &mut self,
        level: LoggingLevel,
        now: Instant,
    ) -> Result<Option<OutgoingRequest>, ClientStateError> {
        self.ready(method::LOGGING_SET_LEVEL)?;
        if self.era() == Some(ProtocolEra::Modern) {
            self.log_level = Some(level);
            return Ok(None);
        }
        self.typed(
            method::LOGGING_SET_LEVEL,
            &SetLevelParams { level },
            &RequestSettings::default(),
            now,
        )
        .map(Some)
    }

    /// `subscriptions/listen` (2026-07-28 only).
    pub fn listen(
        &mut self,
        params: &ListenParams,
        now: Instant,
    ) -> Result<OutgoingRequest, ClientStateError> {
        if self.era() != Some(ProtocolEra::Modern) {
            return Err(self.refuse("send subscriptions/listen to a legacy server"));
        }
        self.typed(
            method::SUBSCRIPTIONS_LISTEN,
            params,
            &RequestSettings::default(),
            now,
        )
    }

    /// The retry of an `input_required` request (2026-07-28): the original `params` with
    /// `inputResponses`, and `requestState` exactly as the server gave it (left out when it
    /// gave none), under a new id.
    pub fn retry_with_input(
        &mut self,
        method: &str,
        mut params: Map<String, Value>,
        input_responses: Map<String, Value>,
        request_state: Option<String>,
        options: &RequestSettings,
        now: Instant,
    ) -> Result<OutgoingRequest, ClientStateError> {
        self.ready(method)?;
        params.remove("_meta");
        params.insert("inputResponses".into(), Value::Object(input_responses));
        match request_state {
            Some(state) => params.insert("requestState".into(), Value::String(state)),
            None => params.remove("requestState"),
        };
        Ok(self.push(method, Some(params), options, now, false))
    }

    // ----- notifications ----------------------------------------------------------------

    /// `notifications/cancelled` for pending request `id`, which is forgotten (a late reply
    /// to it is [`NotOurs::UnknownId`]).
    pub fn cancel(&mut self, id: &RequestId, reason: Option<String>) -> OutgoingNotification {
        self.pending.remove(id);
        let params = CancelledNotificationParams {
            request_id: id.clone(),
            reason,
        };
        Notification::new(method::CANCELLED, Some(to_map(&params)))
    }

    /// `notifications/progress` (for a request the server sent the client).
    pub fn progress(&self, params: &ProgressNotificationParams) -> OutgoingNotification {
        Notification::new(method::PROGRESS, Some(to_map(params)))
    }

    /// `notifications/roots/list_changed`.
    pub fn roots_list_changed(&self) -> OutgoingNotification {
        Notification::new(method::ROOTS_LIST_CHANGED, None)
    }

    /// The result replying to server request `id`.
    pub fn response<T: Serialize>(id: RequestId, result: &T) -> ResultResponse<Value> {
        ResultResponse::new(id, serde_json::to_value(result).unwrap_or_default())
    }

    /// The error replying to server request `id`.
    pub fn error_response(id: RequestId, error: ErrorObject) -> ErrorResponse {
        ErrorResponse::new(Some(id), error)
    }

    // ----- timeouts ---------------------------------------------------------------------

    /// Forgets and returns every pending request whose deadline is at or before `now` (a late
    /// reply to one is [`NotOurs::UnknownId`]).
    pub fn check_timeouts(&mut self, now: Instant) -> Vec<TimedOut> {
        let expired: Vec<RequestId> = self
            .pending
            .iter()
            .filter(|(_, p)| p.deadline.is_some_and(|d| d <= now))
            .map(|(id, _)| id.clone())
            .collect();
        let mut out: Vec<TimedOut> = expired
            .into_iter()
            .filter_map(|id| {
                self.pending.remove(&id).map(|p| TimedOut {
                    id,
                    method: p.method,
                    sent_at: p.sent_at,
                })
            })
            .collect();
        out.sort_by_key(|t| t.sent_at);
        out
    }

    /// Forgets pending request `id` without telling the server (its transport cancelled it
    /// another way); whether it was pending.
    pub fn forget(&mut self, id: &RequestId) -> bool {
        self.pending.remove(id).is_some()
    }

    // ----- incoming ---------------------------------------------------------------------

    /// Classifies a message given as JSON text. Never panics.
    pub fn handle_text(&mut self, text: &str) -> Incoming {
        match serde_json::from_str::<Value>(text) {
            Ok(value) => self.handle(value),
            Err(e) => Incoming::NotOurs(NotOurs::Malformed(format!("not JSON: {e}"))),
        }
    }

    /// Classifies one incoming message. Never panics, whatever the peer sent.
    pub fn handle(&mut self, message: Value) -> Incoming {
        if exceeds_max_depth(&message) {
            crate::protocol::drop_flat(message);
            return malformed("the message nests too deeply");
        }
        let Value::Object(mut map) = message else {
            return malformed("a JSON-RPC message must be an object");
        };
        if map.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
            return malformed("`jsonrpc` must be \"2.0\"");
        }
        let id = map.remove("id");
        match map.remove("method") {
            Some(Value::String(method)) => {
                let params = match map.remove("params") {
                    None | Some(Value::Null) => Map::new(),
                    Some(Value::Object(p)) => p,
                    Some(_) => {
                        return match id.as_ref().and_then(RequestId::from_value) {
                            Some(id) => Incoming::Request(ServerRequest {
                                id,
                                kind: ServerRequestKind::Invalid {
                                    error: ErrorObject::new(
                                        ErrorCode::INVALID_PARAMS,
                                        format!("`params` of {method} must be an object"),
                                    ),
                                    method,
                                },
                            }),
                            None => malformed("`params` must be an object"),
                        };
                    }
                };
                match id {
                    None => Incoming::Notification(notification(method, params)),
                    Some(raw) => match RequestId::from_value(&raw) {
                        Some(id) => Incoming::Request(ServerRequest {
                            id,
                            kind: server_request(method, params),
                        }),
                        None => malformed("a request id must be a string or an integer"),
                    },
                }
            }
            Some(_) => malformed("`method` must be a string"),
            None => self.reply(id, map),
        }
    }

    fn reply(&mut self, id: Option<Value>, mut map: Map<String, Value>) -> Incoming {
        let id = id.as_ref().and_then(RequestId::from_value);
        if let Some(error) = map.remove("error") {
            let error = match serde_json::from_value::<ErrorObject>(error) {
                Ok(e) => e,
                Err(e) => return malformed(format!("unreadable `error`: {e}")),
            };
            let Some(id) = id else {
                return Incoming::Error {
                    id: None,
                    method: None,
                    error,
                };
            };
            let Some(pending) = self.pending.remove(&id) else {
                return Incoming::NotOurs(NotOurs::UnknownId(id));
            };
            if self.in_handshake(&pending.method) {
                return Incoming::Handshake(self.handshake_error(&pending.method, error));
            }
            return Incoming::Error {
                id: Some(id),
                method: Some(pending.method),
                error,
            };
        }
        let Some(result) = map.remove("result") else {
            return malformed("a message with no `method`, `result` or `error`");
        };
        let Some(id) = id else {
            return malformed("a result with no readable id");
        };
        let Some(pending) = self.pending.remove(&id) else {
            return Incoming::NotOurs(NotOurs::UnknownId(id));
        };
        match pending.method.as_str() {
            method::INITIALIZE if self.in_handshake(method::INITIALIZE) => {
                Incoming::Handshake(self.initialize_result(result))
            }
            method::DISCOVER if self.in_handshake(method::DISCOVER) => {
                Incoming::Handshake(self.discover_result(result))
            }
            _ => {
                self.learn_server_info(&result);
                Incoming::Response {
                    id,
                    method: pending.method,
                    result,
                }
            }
        }
    }

    /// Whether a reply to `method` is a handshake step (a `server/discover` once ready is a
    /// plain request: the 2026-07-28 liveness check).
    fn in_handshake(&self, method: &str) -> bool {
        self.lifecycle == ClientLifecycle::Initializing
            && (method == method::INITIALIZE || method == method::DISCOVER)
    }

    /// A 2026-07-28 result names the server in `_meta`: keep the latest.
    fn learn_server_info(&mut self, result: &Value) {
        if self.era() != Some(ProtocolEra::Modern) {
            return;
        }
        if let Some(info) = result
            .get("_meta")
            .and_then(|m| m.get(META_SERVER_INFO))
            .and_then(|i| serde_json::from_value::<Implementation>(i.clone()).ok())
        {
            self.server_info = Some(info);
        }
    }

    fn fail(&mut self, reason: String) -> Handshake {
        self.lifecycle = ClientLifecycle::Error(reason.clone());
        Handshake::Failed(reason)
    }

    fn initialize_result(&mut self, result: Value) -> Handshake {
        if self.lifecycle != ClientLifecycle::Initializing {
            return Handshake::Failed("an initialize result outside the handshake".into());
        }
        let offered = result
            .get("protocolVersion")
            .and_then(Value::as_str)
            .map(str::to_owned);
        let parsed = match serde_json::from_value::<InitializeResult>(result) {
            Ok(r) => r,
            Err(e) => {
                let reason = match offered {
                    Some(v) if ProtocolVersion::parse(&v).is_none() => {
                        format!(
                            "the server speaks protocol version {v:?}, which this client does not"
                        )
                    }
                    _ => format!("unreadable initialize result: {e}"),
                };
                return self.fail(reason);
            }
        };
        let version = parsed.protocol_version;
        let pinned = matches!(self.config.version, VersionPreference::Exactly(v) if v.era() == ProtocolEra::Legacy);
        if version.era() != ProtocolEra::Legacy || (pinned && version > self.legacy_request) {
            return self.fail(format!(
                "the server answered initialize with protocol version {version}, not one asked for"
            ));
        }
        self.negotiated = Some(version);
        self.server_info = Some(parsed.server_info.clone());
        self.server_capabilities = Some(parsed.capabilities.clone());
        self.instructions = parsed.instructions.clone();
        self.initialize_answered = true;
        Handshake::Initialized(Box::new(parsed))
    }

    fn discover_result(&mut self, result: Value) -> Handshake {
        if self.lifecycle != ClientLifecycle::Initializing {
            return Handshake::Failed("a server/discover result outside the handshake".into());
        }
        let server_info = result
            .get("_meta")
            .and_then(|m| m.get(META_SERVER_INFO))
            .or_else(|| result.get("serverInfo"))
            .and_then(|i| serde_json::from_value::<Implementation>(i.clone()).ok());
        let parsed = match serde_json::from_value::<DiscoverResult>(result) {
            Ok(r) => r,
            Err(e) => {
                return self.fall_back(format!("unreadable server/discover result: {e}"));
            }
        };
        if parsed.supported_versions.contains(&self.modern_request) {
            self.negotiated = Some(self.modern_request);
            self.server_info = server_info;
            self.server_capabilities = Some(parsed.capabilities.clone());
            self.instructions = parsed.instructions.clone();
            self.lifecycle = ClientLifecycle::Ready;
            return Handshake::Discovered(Box::new(parsed));
        }
        match parsed
            .supported_versions
            .iter()
            .copied()
            .filter(|v| v.era() == ProtocolEra::Legacy)
            .max()
        {
            Some(v) if self.config.version == VersionPreference::Auto => {
                self.legacy_request = v;
                self.fall_back(format!("the server prefers legacy version {v}"))
            }
            _ => self.fail("the server supports no protocol version this client speaks".into()),
        }
    }

    fn fall_back(&mut self, reason: String) -> Handshake {
        if self.config.version != VersionPreference::Auto {
            return self.fail(reason);
        }
        self.lifecycle = ClientLifecycle::Uninitialized;
        Handshake::FallBackToInitialize {
            version: self.legacy_request,
            reason,
        }
    }

    fn handshake_error(&mut self, method: &str, error: ErrorObject) -> Handshake {
        if method == method::INITIALIZE {
            return self.fail(format!("initialize failed: {error}"));
        }
        // A recognized modern error means a modern server: never fall back on it.
        if error.code == ErrorCode::UNSUPPORTED_PROTOCOL_VERSION {
            let data: UnsupportedVersionData = error
                .data
                .clone()
                .and_then(|d| serde_json::from_value(d).ok())
                .unwrap_or_default();
            let supported: Vec<ProtocolVersion> = data
                .supported
                .iter()
                .filter_map(|v| ProtocolVersion::parse(v))
                .collect();
            if supported.contains(&ProtocolVersion::MODERN) {
                self.modern_request = ProtocolVersion::MODERN;
                self.lifecycle = ClientLifecycle::Uninitialized;
                return Handshake::RetryDiscover;
            }
            return match supported
                .into_iter()
                .filter(|v| v.era() == ProtocolEra::Legacy)
                .max()
            {
                Some(v) if self.config.version == VersionPreference::Auto => {
                    self.legacy_request = v;
                    self.fall_back(format!("the server supports legacy version {v}"))
                }
                _ => self.fail(format!(
                    "the server supports no protocol version this client speaks: {:?}",
                    data.supported
                )),
            };
        }
        if error.code == ErrorCode::HEADER_MISMATCH {
            return self.fail(format!("server/discover refused: {error}"));
        }
        self.fall_back(format!("server/discover refused: {error}"))
    }

    /// A handshake request that got no answer in time (the stdio probe): legacy servers may
    /// stay silent on `server/discover`. Falls back to `initialize` (both eras) or fails.
    pub fn handshake_timed_out(&mut self, id: &RequestId) -> Handshake {
        let method = self.pending.remove(id).map(|p| p.method);
        match method.as_deref() {
            Some(method::DISCOVER) => self.fall_back("server/discover went unanswered".into()),
            _ => self.fail("the handshake went unanswered".into()),
        }
    }
}

fn malformed(reason: impl Into<String>) -> Incoming {
    Incoming::NotOurs(NotOurs::Malformed(reason.into()))
}

pub(crate) fn server_request(method: String, params: Map<String, Value>) -> ServerRequestKind {
    fn typed<T: serde::de::DeserializeOwned>(
        method: String,
        params: Map<String, Value>,
        wrap: impl FnOnce(T) -> ServerRequestKind,
    ) -> ServerRequestKind {
        match serde_json::from_value::<T>(Value::Object(params)) {
            Ok(p) => wrap(p),
            Err(e) => ServerRequestKind::Invalid {
                error: ErrorObject::new(
                    ErrorCode::INVALID_PARAMS,
                    format!("invalid params of {method}: {e}"),
                ),
                method,
            },
        }
    }
    match method.as_str() {
        method::PING => ServerRequestKind::Ping,
        method::ROOTS_LIST => ServerRequestKind::ListRoots,
        method::SAMPLING_CREATE_MESSAGE => typed(method, params, |p| {
            ServerRequestKind::CreateMessage(Box::new(p))
        }),
        method::ELICITATION_CREATE => {
            typed(method, params, |p| ServerRequestKind::Elicit(Box::new(p)))
        }
        _ => ServerRequestKind::Other { method, params },
    }
}

fn notification(method: String, params: Map<String, Value>) -> ServerNotification {
    fn typed<T: serde::de::DeserializeOwned>(
        method: String,
        params: Map<String, Value>,
        wrap: impl FnOnce(T) -> ServerNotification,
    ) -> ServerNotification {
        match serde_json::from_value::<T>(Value::Object(params.clone())) {
            Ok(p) => wrap(p),
            Err(_) => ServerNotification::Other { method, params },
        }
    }
    match method.as_str() {
        method::PROGRESS => typed(method, params, ServerNotification::Progress),
        method::LOGGING_MESSAGE => typed(method, params, ServerNotification::Log),
        method::TOOLS_LIST_CHANGED => ServerNotification::ToolsListChanged,
        method::PROMPTS_LIST_CHANGED => ServerNotification::PromptsListChanged,
        method::RESOURCES_LIST_CHANGED => ServerNotification::ResourcesListChanged,
        method::RESOURCES_UPDATED => typed(method, params, ServerNotification::ResourceUpdated),
        method::CANCELLED => typed(method, params, ServerNotification::Cancelled),
        _ => ServerNotification::Other { method, params },
    }
}

#[cfg(test)]
mod tests;
