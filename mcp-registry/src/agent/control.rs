//! The agent control protocol's side of in-process ("SDK") MCP servers.
//!
//! Shapes, as the Claude Agent SDK (Python `_internal/query.py`, TypeScript `sdkMcpServers`)
//! exchanges them with its CLI as JSON lines:
//!
//! ```text
//! runtime -> host  {"type":"control_request","request_id":"req_1",
//!                   "request":{"subtype":"mcp_message","server_name":"math","message":{<JSON-RPC>}}}
//! host -> runtime  {"type":"control_response",
//!                   "response":{"subtype":"success","request_id":"req_1","response":{"mcp_response":{<JSON-RPC>}}}}
//! host -> runtime  {"type":"control_response",
//!                   "response":{"subtype":"error","request_id":"req_1","error":"<why>"}}
//! ```
//!
//! The other way, a server's notifications (progress, `tools/list_changed`) travel as the
//! TypeScript Agent SDK sends them (`sendMcpServerMessageToCli`): a `control_request` of
//! subtype `mcp_message` from the host, which the runtime acknowledges with a
//! `control_response`.
//!
//! ```text
//! host -> runtime  {"type":"control_request","request_id":"mcp_notification_1",
//!                   "request":{"subtype":"mcp_message","server_name":"math","message":{<notification>}}}
//! ```

use std::fmt;
use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::{Value, json};

use super::permission::{PermissionDecision, PermissionRequest};
use crate::catalog::FilteredRegistry;
use crate::registry::{CallOptions, Registry};
use crate::tool::{BoxFuture, InputHandler, NotificationSink};

/// `type` of a control request.
pub const CONTROL_REQUEST: &str = "control_request";
/// `type` of a control response.
pub const CONTROL_RESPONSE: &str = "control_response";
/// `request.subtype` of a control request carrying an MCP message for an SDK server.
pub const MCP_MESSAGE: &str = "mcp_message";

/// The enabled servers of `registry` as an agent CLI's `--mcp-config` lists in-process servers:
/// `{"mcpServers": {"<name>": {"type": "sdk", "name": "<name>"}}}`.
///
/// ```
/// use mcp_registry::agent::sdk_mcp_servers_config;
/// use mcp_registry::{Registry, Server};
/// use serde_json::json;
/// let registry = Registry::from_servers([Server::new("math", None, []).unwrap()]);
/// assert_eq!(
///     sdk_mcp_servers_config(&registry),
///     json!({"mcpServers": {"math": {"type": "sdk", "name": "math"}}})
/// );
/// ```
pub fn sdk_mcp_servers_config(registry: &Registry) -> Value {
    let servers: serde_json::Map<String, Value> = sdk_server_names(registry)
        .into_iter()
        .map(|name| {
            let config = json!({ "type": "sdk", "name": name });
            (name, config)
        })
        .collect();
    json!({ "mcpServers": servers })
}

/// The names of the enabled servers of `registry`, sorted: what a host announces as
/// `sdkMcpServers` in its `initialize` control request.
pub fn sdk_server_names(registry: &Registry) -> Vec<String> {
    registry
        .server_status()
        .into_iter()
        .filter(|s| s.enabled)
        .map(|s| s.name)
        .collect()
}

/// A `control_response` of subtype `success` carrying `response`.
///
/// ```
/// use mcp_registry::agent::control_success;
/// use serde_json::json;
/// assert_eq!(
///     control_success("req_1", json!({"mcp_response": {}})),
///     json!({"type": "control_response",
///            "response": {"subtype": "success", "request_id": "req_1", "response": {"mcp_response": {}}}})
/// );
/// ```
pub fn control_success(request_id: &str, response: Value) -> Value {
    success(json!(request_id), response)
}

/// A `control_response` of subtype `error` carrying `error` as text.
pub fn control_error(request_id: &str, error: impl fmt::Display) -> Value {
    failure(json!(request_id), error)
}

fn success(request_id: Value, response: Value) -> Value {
    json!({
        "type": CONTROL_RESPONSE,
        "response": { "subtype": "success", "request_id": request_id, "response": response },
    })
}

fn failure(request_id: Value, error: impl fmt::Display) -> Value {
    json!({
        "type": CONTROL_RESPONSE,
        "response": { "subtype": "error", "request_id": request_id, "error": error.to_string() },
    })
}

/// A `control_request` of subtype `mcp_message`: one MCP message for one SDK server.
#[derive(Debug, Clone, PartialEq)]
pub struct McpMessageRequest {
    /// The control request's id, echoed in the response.
    pub request_id: String,
    /// The SDK server the message is for.
    pub server_name: String,
    /// The MCP JSON-RPC message.
    pub message: Value,
}

impl McpMessageRequest {
    /// Reads a control message: `None` when it is not a `control_request` of subtype
    /// `mcp_message` (the host handles those itself), `Err` with the error `control_response`
    /// to send when it is one but malformed.
    pub fn parse(message: &Value) -> Option<Result<Self, Value>> {
        if message.get("type").and_then(Value::as_str) != Some(CONTROL_REQUEST) {
            return None;
        }
        let request = message.get("request")?;
        if request.get("subtype").and_then(Value::as_str) != Some(MCP_MESSAGE) {
            return None;
        }
        let raw_id = message.get("request_id").cloned().unwrap_or(Value::Null);
        let Some(request_id) = raw_id.as_str().map(str::to_owned) else {
            return Some(Err(failure(
                raw_id,
                "mcp_message control request needs a string `request_id`",
            )));
        };
        let Some(server_name) = request.get("server_name").and_then(Value::as_str) else {
            return Some(Err(control_error(
                &request_id,
                "mcp_message control request needs a string `request.server_name`",
            )));
        };
        let Some(message) = request
            .get("message")
            .filter(|m| m.is_object() || m.is_array())
        else {
            return Some(Err(control_error(
                &request_id,
                format!(
                    "mcp_message control request for server {server_name:?} needs a JSON-RPC `request.message`"
                ),
            )));
        };
        Some(Ok(McpMessageRequest {
            request_id,
            server_name: server_name.to_owned(),
            message: message.clone(),
        }))
    }

    /// The request as a control message (what an agent runtime sends).
    pub fn to_value(&self) -> Value {
        json!({
            "type": CONTROL_REQUEST,
            "request_id": self.request_id,
            "request": {
                "subtype": MCP_MESSAGE,
                "server_name": self.server_name,
                "message": self.message,
            },
        })
    }
}

/// Answers an agent runtime's `mcp_message` control requests from a registry, in-process.
///
/// The reply is always a `control_response`: the server's JSON-RPC reply as `mcp_response`
/// (an unknown or disabled server is a JSON-RPC error naming it, a notification is
/// acknowledged with `{"jsonrpc":"2.0","result":{},"id":0}` as the TypeScript Agent SDK
/// does), or an `error` response for a malformed request. Built on a [`FilteredRegistry`], so
/// a [`ToolFilter`] holds on this path too: filtered tools are missing from `tools/list` and
/// refused by `tools/call`.
///
/// Two optional parts make it a whole host side:
/// - [`with_outgoing`](Self::with_outgoing): where the router's own control messages go (to
///   the runtime's stdin). Tools' notifications (progress) are then relayed while a call runs,
///   [`relay_changes`](Self::relay_changes) tells the runtime when a server's tools change,
///   and a disabled server lists no tools instead of an error (the runtime keeps its last list
///   when `tools/list` fails, so a disabled server's tools would stay offered).
/// - [`on_permission_request`](Self::on_permission_request): a host callback answering the
///   runtime's `can_use_tool` requests (allow, or deny with a message the model sees).
///
/// [`ToolFilter`]: crate::catalog::ToolFilter
///
/// ```
/// use mcp_registry::agent::ControlRouter;
/// use mcp_registry::{Registry, Server, Tool};
/// use serde_json::json;
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let add = Tool::new("add", "Add", json!({"type": "object"}), |a: serde_json::Value| async move {
///     (a["a"].as_i64().unwrap_or(0) + a["b"].as_i64().unwrap_or(0)).to_string()
/// })
/// .unwrap();
/// let router = ControlRouter::new(Registry::from_servers([Server::new("math", None, [add]).unwrap()]));
/// let reply = router
///     .handle_control_request(&json!({
///         "type": "control_request",
///         "request_id": "req_7",
///         "request": {"subtype": "mcp_message", "server_name": "math", "message": {
///             "jsonrpc": "2.0", "id": 3, "method": "tools/call",
///             "params": {"name": "add", "arguments": {"a": 2, "b": 3}}}}
///     }))
///     .await
///     .unwrap();
/// assert_eq!(reply["response"]["subtype"], "success");
/// assert_eq!(reply["response"]["request_id"], "req_7");
/// assert_eq!(reply["response"]["response"]["mcp_response"]["result"]["content"][0]["text"], "5");
/// # }
/// ```
#[derive(Clone)]
pub struct ControlRouter {
    servers: FilteredRegistry,
    outgoing: Option<NotificationSink>,
    permissions: Option<Arc<PermissionHandler>>,
    input: Option<Arc<dyn InputHandler>>,
    next_request: Arc<AtomicU64>,
}

/// The host's permission callback.
type PermissionHandler =
    dyn Fn(PermissionRequest) -> BoxFuture<'static, PermissionDecision> + Send + Sync;

impl fmt::Debug for ControlRouter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ControlRouter")
            .field("servers", &self.servers)
            .field("outgoing", &self.outgoing.is_some())
            .field("permissions", &self.permissions.is_some())
            .field("input", &self.input.is_some())
            .finish()
    }
}

impl ControlRouter {
    /// A router answering for `servers` (a [`Registry`], or a [`FilteredRegistry`] to enforce
    /// a tool filter).
    pub fn new(servers: impl Into<FilteredRegistry>) -> Self {
        ControlRouter {
            servers: servers.into(),
            outgoing: None,
            permissions: None,
            input: None,
            next_request: Arc::new(AtomicU64::new(0)),
        }
    }

    /// Sends the router's own control messages to `sink`, each a complete message to write
    /// to the runtime as one JSON line: tools' notifications during a call (progress, for a
    /// request carrying a `progressToken`) and, with [`relay_changes`](Self::relay_changes)
    /// running, `notifications/tools/list_changed`, each wrapped by
    /// [`notification_request`](Self::notification_request).
    pub fn with_outgoing(mut self, sink: NotificationSink) -> Self {
        self.outgoing = Some(sink);
        self
    }

    /// Answers the runtime's `can_use_tool` control requests with `decide` (without one,
    /// [`handle_control_request`](Self::handle_control_request) leaves them to the host).
    ///
    /// ```
    /// use mcp_registry::agent::{ControlRouter, PermissionDecision};
    /// use mcp_registry::Registry;
    /// let router = ControlRouter::new(Registry::new()).on_permission_request(|request| async move {
    ///     if request.tool_name == "mcp__math__divide" {
    ///         PermissionDecision::deny("no dividing today")
    ///     } else {
    ///         PermissionDecision::allow()
    ///     }
    /// });
    /// ```
    pub fn on_permission_request<F, Fut>(mut self, decide: F) -> Self
    where
        F: Fn(PermissionRequest) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = PermissionDecision> + Send + 'static,
    {
        self.permissions = Some(Arc::new(move |request| Box::pin(decide(request))));
        self
    }

    /// Answers the tools' requests for input ([`ToolContext::elicit`], `sample`, `roots`)
    /// with `handler`: the host asking its user. Without one, a tool that asks gets
    /// [`InputError::NoClient`](crate::tool::InputError::NoClient), which names this method.
    ///
    /// [`ToolContext::elicit`]: crate::ToolContext::elicit
    pub fn with_input_handler(mut self, handler: impl InputHandler) -> Self {
        self.input = Some(Arc::new(handler));
        self
    }

    /// `notification` (a JSON-RPC notification of `server`) as the control request that
    /// carries it to the runtime, under a fresh `request_id`.
    pub fn notification_request(&self, server: &str, notification: Value) -> Value {
        let n = self.next_request.fetch_add(1, Ordering::Relaxed) + 1;
        McpMessageRequest {
            request_id: format!("mcp_notification_{n}"),
            server_name: server.to_owned(),
            message: notification,
        }
        .to_value()
    }

    /// Tells the runtime, through [`with_outgoing`](Self::with_outgoing)'s sink, whenever the
    /// tools of an announced server change (registered, replaced, toggled, unregistered): a
    /// `notifications/tools/list_changed` for that server, after which the runtime lists its
    /// tools again on its next turn. Runs until the registry is dropped; spawn it. Returns at
    /// once without an outgoing sink.
    ///
    /// Servers announced to the runtime are those of [`sdk_server_names`](Self::sdk_server_names)
    /// when this starts; a server the runtime was never told about cannot be added this way.
    pub fn relay_changes(&self) -> impl Future<Output = ()> + Send + 'static {
        let router = self.clone();
        let announced = self.sdk_server_names();
        let mut changes = self.servers.registry().subscribe();
        async move {
            let Some(outgoing) = router.outgoing.clone() else {
                return;
            };
            let mut seen = changes.borrow_and_update().generation;
            while changes.changed().await.is_ok() {
                let touched: Vec<&String> = {
                    let change = changes.borrow_and_update();
                    let touched = announced
                        .iter()
                        .filter(|server| change.changed_since(server, seen))
                        .collect();
                    seen = change.generation;
                    touched
                };
                for server in touched {
                    let changed =
                        json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"});
                    outgoing.send(router.notification_request(server, changed));
                }
            }
        }
    }

    /// The servers it answers for.
    pub fn servers(&self) -> &FilteredRegistry {
        &self.servers
    }

    /// [`sdk_mcp_servers_config`] of the registry.
    pub fn mcp_servers_config(&self) -> Value {
        sdk_mcp_servers_config(self.servers.registry())
    }

    /// [`sdk_server_names`] of the registry.
    pub fn sdk_server_names(&self) -> Vec<String> {
        sdk_server_names(self.servers.registry())
    }

    /// An `initialize` control request announcing the SDK servers:
    /// `{"type":"control_request","request_id":..,"request":{"subtype":"initialize","sdkMcpServers":[..]}}`.
    /// Hosts add their other fields (hooks, system prompt, …) to `request`.
    pub fn initialize_request(&self, request_id: &str) -> Value {
        json!({
            "type": CONTROL_REQUEST,
            "request_id": request_id,
            "request": { "subtype": "initialize", "sdkMcpServers": self.sdk_server_names() },
        })
    }

    /// Answers `message` if it is a `control_request` of subtype `mcp_message`, or of subtype
    /// `can_use_tool` when a permission callback is set; `None` for any other message (the
    /// host handles those).
    pub async fn handle_control_request(&self, message: &Value) -> Option<Value> {
        if let Some(decide) = &self.permissions
            && let Some(request) = PermissionRequest::parse(message)
        {
            let decision = decide(request.clone()).await;
            return Some(control_success(
                &request.request_id,
                decision.to_response(&request),
            ));
        }
        let request = match McpMessageRequest::parse(message)? {
            Ok(request) => request,
            Err(error_response) => return Some(error_response),
        };
        Some(self.answer(request).await)
    }

    /// Answers a parsed `mcp_message` request.
    pub async fn answer(&self, request: McpMessageRequest) -> Value {
        let McpMessageRequest {
            request_id,
            server_name,
            message,
        } = request;
        let reply = match self.lists_nothing(&server_name, &message) {
            Some(id) => Some(json!({ "jsonrpc": "2.0", "id": id, "result": { "tools": [] } })),
            None => {
                let mut options = CallOptions::new();
                if let Some(input) = &self.input {
                    options = options.input_shared(input.clone());
                }
                if let Some(outgoing) = &self.outgoing {
                    let router = self.clone();
                    let outgoing = outgoing.clone();
                    let server = server_name.clone();
                    options = options.notifications(NotificationSink::new(move |notification| {
                        outgoing.send(router.notification_request(&server, notification));
                    }));
                }
                self.servers
                    .handle_mcp_message(&server_name, message)
                    .options(options)
                    .await
            }
        };
        // The TypeScript Agent SDK acknowledges a notification with this exact reply.
        let reply = reply.unwrap_or_else(|| json!({ "jsonrpc": "2.0", "result": {}, "id": 0 }));
        control_success(&request_id, json!({ "mcp_response": reply }))
    }

    /// The id of a `tools/list` request for a server that is disabled or gone, when the
    /// router relays changes: such a server lists no tools.
    fn lists_nothing(&self, server: &str, message: &Value) -> Option<Value> {
        self.outgoing.as_ref()?;
        if message.get("method").and_then(Value::as_str) != Some("tools/list") {
            return None;
        }
        let id = message
            .get("id")
            .filter(|id| id.is_string() || id.is_number())?;
        (self.servers.registry().is_enabled(server) != Some(true)).then(|| id.clone())
    }

    /// [`handle_control_request`](Self::handle_control_request) for one JSON line; `None` for
    /// a line that is not JSON or not an `mcp_message` control request.
    pub async fn handle_control_line(&self, line: &str) -> Option<String> {
        let message: Value = serde_json::from_str(line).ok()?;
        self.handle_control_request(&message)
            .await
            .map(|reply| reply.to_string())
    }
}
