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

use std::fmt;

use serde_json::{Value, json};

use crate::client::FilteredRegistry;
use crate::registry::Registry;

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
/// acknowledged with `{"jsonrpc":"2.0","result":{}}` as the Python SDK does), or an `error`
/// response for a malformed request. Built on a [`FilteredRegistry`], so a [`ToolFilter`]
/// holds on this path too: filtered tools are missing from `tools/list` and refused by
/// `tools/call`.
///
/// [`ToolFilter`]: crate::client::ToolFilter
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
#[derive(Debug, Clone)]
pub struct ControlRouter {
    servers: FilteredRegistry,
}

impl ControlRouter {
    /// A router answering for `servers` (a [`Registry`], or a [`FilteredRegistry`] to enforce
    /// a tool filter).
    pub fn new(servers: impl Into<FilteredRegistry>) -> Self {
        ControlRouter {
            servers: servers.into(),
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

    /// Answers `message` if it is a `control_request` of subtype `mcp_message`; `None` for any
    /// other message (the host handles those).
    pub async fn handle_control_request(&self, message: &Value) -> Option<Value> {
        let request = match McpMessageRequest::parse(message)? {
            Ok(request) => request,
            Err(error_response) => return Some(error_response),
        };
        Some(self.answer(request).await)
    }

    /// Answers a parsed `mcp_message` request.
    pub async fn answer(&self, request: McpMessageRequest) -> Value {
        let reply = self
            .servers
            .handle_mcp_message(&request.server_name, request.message)
            .await
            .unwrap_or_else(|| json!({ "jsonrpc": "2.0", "result": {} }));
        control_success(&request.request_id, json!({ "mcp_response": reply }))
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
