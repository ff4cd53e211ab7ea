use std::time::Duration;

use serde::{Deserialize, Deserializer, Serialize};

use crate::protocol::CallToolResult;

/// Why `call_tool_by_name` produced no result, told apart so a host can react to each.
///
/// [`into_call_tool_result`](Self::into_call_tool_result) turns any of them into the
/// `isError: true` result a model reads. It serialises (tagged by `kind`) so a task kept
/// in a shared store keeps how its call failed for a handle on another replica.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
#[non_exhaustive]
pub enum CallError {
    /// No enabled or disabled server has a tool of that name.
    #[error("unknown tool {name:?}")]
    UnknownTool {
        /// The name asked for.
        name: String,
    },
    /// A qualified name (`mcp__<server>__<tool>`) names a server the registry does not have.
    #[error("unknown server {server:?} in tool name {name:?}")]
    UnknownServer {
        /// The server named.
        server: String,
        /// The name asked for.
        name: String,
    },
    /// The plain name is found in several enabled servers.
    #[error(
        "tool name {name:?} is ambiguous: it is provided by servers {servers:?}; call it as mcp__<server>__{name}"
    )]
    AmbiguousTool {
        /// The name asked for.
        name: String,
        /// Every enabled server that has it, sorted.
        servers: Vec<String>,
    },
    /// The tool's server is disabled.
    #[error("tool {tool:?} belongs to server {server:?}, which is disabled")]
    ServerDisabled {
        /// The server.
        server: String,
        /// The tool.
        tool: String,
    },
    /// The arguments do not match the tool's input schema.
    #[error("invalid arguments for tool {tool:?}: {message}")]
    InvalidArguments {
        /// The tool.
        tool: String,
        /// What is wrong, naming the field.
        message: String,
    },
    /// The tool ran and reported a failure.
    #[error("tool {tool:?} failed: {message}")]
    ToolFailed {
        /// The tool.
        tool: String,
        /// The tool's own message.
        message: String,
    },
    /// The tool did not finish in time; its future was dropped.
    #[error("tool {tool:?} timed out after {limit:?}")]
    Timeout {
        /// The tool.
        tool: String,
        /// The limit in force.
        limit: Duration,
    },
    /// The call has a time limit, but it waited where no timer can keep one: outside a Tokio
    /// runtime, or in a runtime built without `enable_time`. Its future was dropped rather
    /// than run unlimited. A call that finishes without waiting is not affected.
    ///
    /// Poll the call inside a Tokio runtime with time enabled, or call without a limit:
    /// [`CallOptions::without_timeout`](crate::CallOptions::without_timeout) or
    /// [`RegistryBuilder::without_default_timeout`](crate::RegistryBuilder::without_default_timeout).
    #[error(
        "tool {tool:?} has a time limit of {limit:?} but waited outside a Tokio runtime with time enabled, where no timer can keep it; run the call inside one, or without a timeout"
    )]
    NoTimer {
        /// The tool.
        tool: String,
        /// The limit in force.
        limit: Duration,
    },
    /// The tool panicked; the panic was caught and the registry is unaffected.
    #[error("tool {tool:?} panicked: {message}")]
    Panicked {
        /// The tool.
        tool: String,
        /// The panic payload, when it was a string.
        message: String,
    },
    /// The tool needs URL-mode elicitations completed first
    /// ([`ToolError::UrlElicitationRequired`](crate::ToolError::UrlElicitationRequired)).
    #[error("tool {tool:?} needs the user elsewhere first: {message}")]
    UrlElicitationRequired {
        /// The tool.
        tool: String,
        /// What the tool said.
        message: String,
        /// The URL-mode elicitations to complete.
        elicitations: Vec<crate::protocol::ElicitParams>,
    },
    /// The registry's approval callback
    /// ([`RegistryBuilder::approval`](crate::RegistryBuilder::approval)) refused the call;
    /// the tool did not run.
    #[error("calling tool {tool:?} was denied: {reason}")]
    Denied {
        /// The tool.
        tool: String,
        /// The callback's reason.
        reason: String,
    },
    /// A layer rejected the call with this JSON-RPC error (the tool did not run); on the
    /// wire the caller gets the error itself.
    #[error("calling tool {tool:?} was rejected: {} (code {})", .error.message, .error.code.0)]
    Rejected {
        /// The tool.
        tool: String,
        /// The layer's error.
        error: crate::protocol::ErrorObject,
    },
    /// The caller cancelled the call; the tool's future was dropped.
    #[error("tool {tool:?} was cancelled")]
    Cancelled {
        /// The tool.
        tool: String,
    },
    /// The tool needs a client capability the client did not declare
    /// ([`ToolError::MissingClientCapability`](crate::ToolError::MissingClientCapability)).
    #[error("tool {tool:?} needs a client capability: {message}")]
    MissingClientCapability {
        /// The tool.
        tool: String,
        /// The capability (`sampling`, `elicitation`, `roots`).
        #[serde(deserialize_with = "capability_name")]
        capability: Capability,
        /// What the tool was told.
        message: String,
    },
    /// The tool does not run as a task
    /// ([`ToolBuilder::task_support`](crate::ToolBuilder::task_support) is not set).
    #[error(
        "tool {tool:?} does not run as a task: give it ToolBuilder::task_support or #[mcp_tool(task = \"optional\")], or call it without as_task()"
    )]
    NotATask {
        /// The tool.
        tool: String,
    },
    /// No such task: it never existed, has expired (its time to live is over), or belongs to
    /// another requestor.
    #[error(
        "unknown task {task:?}: it does not exist, has expired, or belongs to another requestor"
    )]
    UnknownTask {
        /// The task's id.
        task: String,
    },
    /// The registry's task store refused or failed (too many tasks under way, its backend
    /// unreachable).
    #[error("the task store refused: {message}")]
    TaskStore {
        /// Why.
        message: String,
    },
}

impl CallError {
    /// Whether the tool was never found (the wire answers these with a JSON-RPC error,
    /// -32602, rather than a result).
    pub fn is_lookup_error(&self) -> bool {
        matches!(
            self,
            CallError::UnknownTool { .. }
                | CallError::UnknownServer { .. }
                | CallError::AmbiguousTool { .. }
        )
    }

    /// The error as a result with `isError: true` whose text names the problem.
    pub fn into_call_tool_result(self) -> CallToolResult {
        match self {
            // The tool's own words, unprefixed: they are what the model should read.
            CallError::ToolFailed { message, .. }
            | CallError::MissingClientCapability { message, .. } => CallToolResult::error(message),
            other => CallToolResult::error(other.to_string()),
        }
    }
}

/// `&'static str`, spelled so serde's derive does not borrow it from the input (which would
/// tie deserialising to `'static` input); [`capability_name`] reads it back.
type Capability = &'static str;

/// A client capability's name, read back as the `&'static str` a tool names it by.
fn capability_name<'de, D: Deserializer<'de>>(deserializer: D) -> Result<&'static str, D::Error> {
    let name = String::deserialize(deserializer)?;
    ["elicitation", "elicitation.url", "sampling", "roots"]
        .into_iter()
        .find(|known| *known == name)
        .ok_or_else(|| serde::de::Error::custom(format!("unknown client capability {name:?}")))
}

/// Errors of registry management operations.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RegistryError {
    /// The registry has no server of that name.
    #[error("unknown server {0:?}")]
    UnknownServer(String),
    /// Two collected `server!` invocations share a name.
    #[error(
        "two servers are named {name:?}: one at {first}, one at {second}; server names must be unique"
    )]
    DuplicateServer {
        /// The name.
        name: String,
        /// Where the first is defined.
        first: String,
        /// Where the second is defined.
        second: String,
    },
}
