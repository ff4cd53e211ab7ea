//! The machine's vocabulary: configuration, lifecycle, outgoing and incoming messages.

use std::time::{Duration, Instant};

use serde_json::{Map, Value};

use crate::protocol::{
    CancelledNotificationParams, ClientCapabilities, CreateMessageParams, DiscoverResult,
    ElicitParams, ErrorObject, Implementation, InitializeResult, JsonRpcRequest,
    LoggingMessageParams, Notification, ProgressNotificationParams, ProtocolVersion, RequestId,
    ResourceUriParams,
};

use super::to_text;

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
    /// How long `initialize` and `server/discover` may go unanswered
    /// ([`check_timeouts`](super::ClientMachine::check_timeouts) reports them); none unless set.
    pub handshake_timeout: Option<Duration>,
    /// The extensions (SEP-2133) the client follows, by identifier: declared under
    /// `extensions` in every 2026-07-28 request's capabilities (a legacy `initialize` does
    /// not carry them). [`Client`](crate::client::Client) declares the tasks extension.
    pub extensions: serde_json::Map<String, serde_json::Value>,
}

impl ClientConfig {
    /// A client named by `info`, with no capabilities, speaking either era.
    pub fn new(info: Implementation) -> Self {
        ClientConfig {
            info,
            capabilities: ClientCapabilities::default(),
            version: VersionPreference::Auto,
            handshake_timeout: None,
            extensions: serde_json::Map::new(),
        }
    }

    /// Gives up on the handshake's requests after `timeout`.
    pub fn handshake_timeout(mut self, timeout: Duration) -> Self {
        self.handshake_timeout = Some(timeout);
        self
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
/// | `Uninitialized` | [`ClientMachine::initialize`](super::ClientMachine::initialize) or [`ClientMachine::discover`](super::ClientMachine::discover) | `Initializing` |
/// | `Initializing` | a `server/discover` result naming 2026-07-28 | `Ready` |
/// | `Initializing` | [`ClientMachine::initialized`](super::ClientMachine::initialized), once `initialize` is answered | `Ready` |
/// | `Initializing` | the handshake fails, or the server is legacy ([`Handshake`]) | `Error` or `Uninitialized` |
/// | `Initializing`, `Ready` | [`ClientMachine::mark_disconnected`](super::ClientMachine::mark_disconnected) | `Disconnected` |
/// | any but `ShuttingDown` | [`ClientMachine::mark_error`](super::ClientMachine::mark_error) | `Error` |
/// | `Error`, `Disconnected` | [`ClientMachine::reset`](super::ClientMachine::reset) | `Uninitialized` |
/// | any | [`ClientMachine::mark_shutting_down`](super::ClientMachine::mark_shutting_down) | `ShuttingDown` (final) |
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ClientLifecycle {
    /// Nothing sent yet.
    Uninitialized,
    /// The handshake (`initialize` or `server/discover`) is under way.
    Initializing,
    /// Requests may be sent.
    Ready,
    /// Failed, with the reason: nothing can be sent until [`ClientMachine::reset`](super::ClientMachine::reset).
    Error(String),
    /// The transport was lost, with the reason: nothing can be sent until
    /// [`ClientMachine::reset`](super::ClientMachine::reset).
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
/// [`RequestOptions`](crate::client::RequestOptions) come down to these).
#[derive(Debug, Clone, Default)]
pub struct RequestSettings {
    /// Give up after this long ([`ClientMachine::check_timeouts`](super::ClientMachine::check_timeouts) reports it).
    pub timeout: Option<Duration>,
    /// Ask for `notifications/progress` under this token (`_meta.progressToken`).
    pub progress_token: Option<Value>,
}

/// A request built by the machine: its id, and the message to send.
#[derive(Debug, Clone, PartialEq)]
pub struct OutgoingRequest {
    /// The id its reply will carry.
    pub id: RequestId,
    /// What it names: `params.name` of `tools/call` and `prompts/get`, `params.uri` of
    /// `resources/read` (Streamable HTTP mirrors it as `Mcp-Name`).
    pub name: Option<String>,
    /// The message.
    pub request: JsonRpcRequest<Map<String, Value>>,
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
    /// [`ClientMachine::initialized`](super::ClientMachine::initialized) next.
    Initialized(Box<InitializeResult>),
    /// `server/discover` was answered and the server speaks 2026-07-28: the client is ready.
    Discovered(Box<DiscoverResult>),
    /// The server is legacy, or prefers a legacy version: the machine is back to
    /// `Uninitialized`; send [`ClientMachine::initialize`](super::ClientMachine::initialize), which asks for `version`.
    FallBackToInitialize {
        /// The version `initialize` will ask for.
        version: ProtocolVersion,
        /// Why the modern probe did not succeed.
        reason: String,
    },
    /// The server refused the version but speaks 2026-07-28 too (-32022): the machine is
    /// back to `Uninitialized`; send [`ClientMachine::discover`](super::ClientMachine::discover) again.
    RetryDiscover,
    /// The handshake failed; the machine is in the `Error` state with this reason.
    Failed(String),
}

/// A request the server sent the client.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ServerRequest {
    /// Its id, to answer under ([`ClientMachine::response`](super::ClientMachine::response), [`ClientMachine::error_response`](super::ClientMachine::error_response)).
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
    Handshake {
        /// The handshake request's id.
        id: RequestId,
        /// What the reply means.
        step: Handshake,
    },
    /// A request from the server.
    Request(ServerRequest),
    /// A notification from the server.
    Notification(ServerNotification),
    /// Not for this client.
    NotOurs(NotOurs),
}

/// A request that timed out ([`ClientMachine::check_timeouts`](super::ClientMachine::check_timeouts)).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct TimedOut {
    /// Its id.
    pub id: RequestId,
    /// Its method.
    pub method: String,
    /// When it was sent.
    pub sent_at: Instant,
}
