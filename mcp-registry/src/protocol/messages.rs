//! Typed MCP requests, results and notifications (lifecycle, tools, utilities): what the
//! server writes and reads, shared with the client side.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::{ProtocolVersion, RequestId};

/// The name and version of an MCP implementation (`serverInfo`, `clientInfo`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Implementation {
    /// The programmatic name.
    pub name: String,
    /// The version.
    pub version: String,
    /// A display name (2025-06-18 onward; left out for older clients).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
}

/// `capabilities.tools` of a server.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolsCapability {
    /// Whether the server sends `notifications/tools/list_changed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub list_changed: Option<bool>,
}

/// What a server offers. Members this crate does not serve yet are kept as JSON.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ServerCapabilities {
    /// Tools, if offered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<ToolsCapability>,
    /// Prompts, if offered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompts: Option<super::PromptsCapability>,
    /// Resources, if offered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resources: Option<super::ResourcesCapability>,
    /// Other capabilities (`logging`, `completions`, `experimental`, ...).
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

/// The params of `initialize` (legacy handshake). `protocolVersion` is kept as sent: an
/// unsupported one is answered with the newest supported version, not refused.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InitializeParams {
    /// The version the client asks for.
    #[serde(default)]
    pub protocol_version: Option<String>,
    /// The client's capabilities.
    #[serde(default)]
    pub capabilities: Map<String, Value>,
    /// Who the client is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_info: Option<Implementation>,
}

/// The result of `initialize`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InitializeResult {
    /// The version the session speaks.
    pub protocol_version: ProtocolVersion,
    /// What the server offers.
    pub capabilities: ServerCapabilities,
    /// Who the server is.
    pub server_info: Implementation,
    /// Guidance for the model using the server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
}

/// Who may cache a 2026-07-28 list or discover result (`cacheScope`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CacheScope {
    /// Any client or intermediary may cache and share it.
    Public,
    /// Only within the same authorization context.
    Private,
}

/// The caching hints of a 2026-07-28 cacheable result.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CacheHints {
    /// How long the result may be reused, in milliseconds.
    pub ttl_ms: u64,
    /// Who may reuse it.
    pub cache_scope: CacheScope,
}

/// The result of `server/discover` (2026-07-28).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DiscoverResult {
    /// Every version the server speaks, newest first (read leniently: versions this crate
    /// does not speak are left out).
    #[serde(deserialize_with = "super::client::known_versions")]
    pub supported_versions: Vec<ProtocolVersion>,
    /// What the server offers.
    pub capabilities: ServerCapabilities,
    /// Guidance for the model using the server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
    /// Caching hints (read leniently: missing members default to `ttlMs` 0, `private`).
    #[serde(flatten, deserialize_with = "super::client::lenient_cache")]
    pub cache: CacheHints,
}

/// The params of a request that pages (`tools/list`, `resources/list`, `prompts/list`, ...).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PaginatedParams {
    /// Where the previous page ended.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cursor: Option<String>,
}

/// The params of `tools/list`.
pub type ListToolsParams = PaginatedParams;

/// The params of `notifications/progress`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProgressNotificationParams {
    /// The token the request's `_meta.progressToken` gave.
    pub progress_token: Value,
    /// Progress so far; increases with each notification.
    pub progress: f64,
    /// The total, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total: Option<f64>,
    /// A human-readable description of the progress.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// The params of `notifications/cancelled`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CancelledNotificationParams {
    /// The request to cancel.
    pub request_id: RequestId,
    /// Why.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// The kind of a 2026-07-28 result (`resultType`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ResultType {
    /// The request completed; the result is final.
    Complete,
    /// The server needs more input from the client before it can complete.
    InputRequired,
    /// The request goes on as a task (the tasks extension): the result is a
    /// [`DetailedTask`](super::DetailedTask) to follow with `tasks/get`.
    Task,
}

/// Method names of the messages this crate reads and writes.
pub mod method {
    /// `initialize` (legacy handshake).
    pub const INITIALIZE: &str = "initialize";
    /// `notifications/initialized`.
    pub const INITIALIZED: &str = "notifications/initialized";
    /// `ping`.
    pub const PING: &str = "ping";
    /// `server/discover` (2026-07-28).
    pub const DISCOVER: &str = "server/discover";
    /// `tools/list`.
    pub const TOOLS_LIST: &str = "tools/list";
    /// `tools/call`.
    pub const TOOLS_CALL: &str = "tools/call";
    /// `notifications/progress`.
    pub const PROGRESS: &str = "notifications/progress";
    /// `notifications/cancelled`.
    pub const CANCELLED: &str = "notifications/cancelled";
    /// `notifications/tools/list_changed`.
    pub const TOOLS_LIST_CHANGED: &str = "notifications/tools/list_changed";
    /// `prompts/list`.
    pub const PROMPTS_LIST: &str = "prompts/list";
    /// `prompts/get`.
    pub const PROMPTS_GET: &str = "prompts/get";
    /// `notifications/prompts/list_changed`.
    pub const PROMPTS_LIST_CHANGED: &str = "notifications/prompts/list_changed";
    /// `resources/list`.
    pub const RESOURCES_LIST: &str = "resources/list";
    /// `resources/templates/list`.
    pub const RESOURCES_TEMPLATES_LIST: &str = "resources/templates/list";
    /// `resources/read`.
    pub const RESOURCES_READ: &str = "resources/read";
    /// `resources/subscribe` (legacy revisions; 2026-07-28 subscribes through
    /// `subscriptions/listen`).
    pub const RESOURCES_SUBSCRIBE: &str = "resources/subscribe";
    /// `resources/unsubscribe` (legacy revisions).
    pub const RESOURCES_UNSUBSCRIBE: &str = "resources/unsubscribe";
    /// `notifications/resources/list_changed`.
    pub const RESOURCES_LIST_CHANGED: &str = "notifications/resources/list_changed";
    /// `notifications/resources/updated`.
    pub const RESOURCES_UPDATED: &str = "notifications/resources/updated";
    /// `completion/complete`.
    pub const COMPLETION_COMPLETE: &str = "completion/complete";
    /// `logging/setLevel` (legacy revisions; 2026-07-28 sets the level per request in
    /// `_meta`).
    pub const LOGGING_SET_LEVEL: &str = "logging/setLevel";
    /// `notifications/message`: a log message.
    pub const LOGGING_MESSAGE: &str = "notifications/message";
    /// `sampling/createMessage` (server to client).
    pub const SAMPLING_CREATE_MESSAGE: &str = "sampling/createMessage";
    /// `elicitation/create` (server to client).
    pub const ELICITATION_CREATE: &str = "elicitation/create";
    /// `roots/list` (server to client).
    pub const ROOTS_LIST: &str = "roots/list";
    /// `notifications/roots/list_changed`.
    pub const ROOTS_LIST_CHANGED: &str = "notifications/roots/list_changed";
    /// `subscriptions/listen` (2026-07-28).
    pub const SUBSCRIPTIONS_LISTEN: &str = "subscriptions/listen";
    /// `notifications/subscriptions/acknowledged` (2026-07-28).
    pub const SUBSCRIPTIONS_ACKNOWLEDGED: &str = "notifications/subscriptions/acknowledged";
    /// `tasks/get`: a task's state (2026-07-28: with its result inlined).
    pub const TASKS_GET: &str = "tasks/get";
    /// `tasks/result` (2025-11-25): a task's result, once it has ended.
    pub const TASKS_RESULT: &str = "tasks/result";
    /// `tasks/list` (2025-11-25): the requestor's tasks.
    pub const TASKS_LIST: &str = "tasks/list";
    /// `tasks/cancel`.
    pub const TASKS_CANCEL: &str = "tasks/cancel";
    /// `tasks/update` (2026-07-28): answers to a task's input requests.
    pub const TASKS_UPDATE: &str = "tasks/update";
    /// `notifications/tasks/status` (2025-11-25): a task changed status.
    pub const TASKS_STATUS: &str = "notifications/tasks/status";
}
