//! Handing servers to agent sessions.
//!
//! An agent runtime (the Claude Agent SDK's CLI, for one) routes MCP messages for "SDK servers"
//! back to the host process as control requests; the host answers them in-process. This module
//! has what such a host needs:
//!
//! - [`GlobalServers`]: the process-wide set of servers, seeded with every `server!`.
//! - [`SessionRegistries`]: one [`Registry`](crate::Registry) per session id, isolated.
//! - [`ControlRouter`]: answers `control_request`s of subtype `mcp_message` (and `can_use_tool`
//!   through a host callback), relays tools' progress and list changes to the runtime, and
//!   projects the `mcpServers` configuration and the `sdkMcpServers` names an agent CLI expects.
//! - [`ModelApi`] and [`FilteredRegistry::export_tools`](crate::catalog::FilteredRegistry::export_tools):
//!   the tools in the function-calling formats of model APIs, and the way back from a model's
//!   tool-use block to a tool result.

mod control;
mod export;
mod global;
mod permission;
mod sessions;

pub use control::{
    CONTROL_REQUEST, CONTROL_RESPONSE, ControlRouter, MCP_MESSAGE, McpMessageRequest,
    control_error, control_success, sdk_mcp_servers_config, sdk_server_names,
};
pub use export::{ModelApi, ToolExport, ToolUse, ToolUseCall, ToolUseError, ToolUseRequest};
pub use global::GlobalServers;
pub use permission::{CAN_USE_TOOL, PermissionDecision, PermissionRequest};
pub use sessions::{SessionError, SessionRegistries};
