#![doc = include_str!("../README.md")]
#![warn(missing_docs)]

mod dispatch;
pub mod agent;
pub mod client;
pub mod protocol;
pub mod registry;
pub mod schema;
pub mod server;
pub mod tool;

pub use protocol::{CallToolResult, Content};
pub use registry::{
    CallError, CallOptions, Registry, RegistryBuilder, RegistryChange, RegistryError,
    ServerStatus, ToolDefinition, qualified_name,
};
pub use server::{Server, ServerBuildError, ServerBuilder, ServerRegistration};
pub use tool::{
    Extensions, IntoToolResult, Json, NotificationSink, ProgressError, Tool, ToolBuildError,
    ToolBuilder, ToolContext, ToolError,
};
pub use tokio_util::sync::CancellationToken;

pub use mcp_registry_macros::{mcp_tool, server};

/// Items the macros expand to. Not public API: no stability guarantees.
#[doc(hidden)]
pub mod __private {
    pub use inventory;
    pub use schemars;
    pub use serde;
    pub use serde_json;

    pub use crate::tool::param::support::*;
}
