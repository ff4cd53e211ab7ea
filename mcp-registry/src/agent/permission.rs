//! The runtime's permission requests (`control_request` of subtype `can_use_tool`) and the
//! host's decisions.
//!
//! ```text
//! runtime -> host  {"type":"control_request","request_id":"..","request":{"subtype":"can_use_tool",
//!                   "tool_name":"mcp__demo__add","input":{..},"tool_use_id":"toolu_..",..}}
//! host -> runtime  {"type":"control_response","response":{"subtype":"success","request_id":"..",
//!                   "response":{"behavior":"allow","updatedInput":{..}}}}
//!              or  ..."response":{"behavior":"deny","message":"<seen by the model>"}}}
//! ```

use serde_json::{Value, json};

/// `request.subtype` of a runtime's permission request.
pub const CAN_USE_TOOL: &str = "can_use_tool";

/// A runtime asking whether a tool may run (`can_use_tool`).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct PermissionRequest {
    /// The control request's id, echoed in the response.
    pub request_id: String,
    /// The tool the model wants to run, as the runtime names it (`mcp__<server>__<tool>`
    /// for MCP tools).
    pub tool_name: String,
    /// The input the model gave it.
    pub input: Value,
    /// The model's `tool_use` block id, when the runtime sent it.
    pub tool_use_id: Option<String>,
    /// The whole `request` object, for fields this type does not name
    /// (`permission_suggestions`, `mcp_server`, ...).
    pub request: Value,
}

impl PermissionRequest {
    /// Reads a control message: `None` when it is not a `control_request` of subtype
    /// `can_use_tool` or lacks a string `request_id` and `tool_name`.
    pub fn parse(message: &Value) -> Option<Self> {
        if message.get("type").and_then(Value::as_str) != Some(super::CONTROL_REQUEST) {
            return None;
        }
        let request = message.get("request")?;
        if request.get("subtype").and_then(Value::as_str) != Some(CAN_USE_TOOL) {
            return None;
        }
        Some(PermissionRequest {
            request_id: message.get("request_id")?.as_str()?.to_owned(),
            tool_name: request.get("tool_name")?.as_str()?.to_owned(),
            input: request.get("input").cloned().unwrap_or_else(|| json!({})),
            tool_use_id: request
                .get("tool_use_id")
                .and_then(Value::as_str)
                .map(str::to_owned),
            request: request.clone(),
        })
    }
}

/// The host's answer to a [`PermissionRequest`].
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum PermissionDecision {
    /// Run the tool, with `updated_input` in place of the model's input when given.
    Allow {
        /// The input to run the tool with instead of the model's.
        updated_input: Option<Value>,
    },
    /// Refuse: the model sees `message` as the tool's error result.
    Deny {
        /// Why, for the model.
        message: String,
        /// Whether the runtime should also stop the turn.
        interrupt: bool,
    },
}

impl PermissionDecision {
    /// Run the tool as the model asked.
    pub fn allow() -> Self {
        PermissionDecision::Allow {
            updated_input: None,
        }
    }

    /// Refuse with `message`, which the model sees.
    pub fn deny(message: impl Into<String>) -> Self {
        PermissionDecision::Deny {
            message: message.into(),
            interrupt: false,
        }
    }

    /// The `response` of the `control_response` answering `request`, in the shape the Agent
    /// SDKs send (`updatedInput` is always present on an allow: the CLI runs the tool with it).
    pub fn to_response(&self, request: &PermissionRequest) -> Value {
        let mut response = match self {
            PermissionDecision::Allow { updated_input } => json!({
                "behavior": "allow",
                "updatedInput": updated_input.as_ref().unwrap_or(&request.input),
            }),
            PermissionDecision::Deny { message, interrupt } => {
                let mut deny = json!({ "behavior": "deny", "message": message });
                if *interrupt {
                    deny["interrupt"] = Value::Bool(true);
                }
                deny
            }
        };
        if let Some(id) = &request.tool_use_id {
            response["toolUseID"] = Value::String(id.clone());
        }
        response
    }
}
