//! In-process MCP (Model Context Protocol) tool registry.
//!
//! Annotate plain async functions with [`macro@mcp_tool`] (and [`macro@mcp_prompt`],
//! [`macro@mcp_resource`]), group
//! them with [`server!`], and a [`Registry`] calls them by name
//! ([`Registry::call_tool_by_name`]) or answers MCP JSON-RPC for them
//! ([`Registry::handle_mcp_message`]) with no subprocess, socket or transport.
//!
//! Tools can also be built at run time without macros:
//!
//! ```
//! use mcp_registry::{Json, Registry, Server, Tool};
//! use serde_json::json;
//!
//! #[derive(serde::Deserialize, schemars::JsonSchema)]
//! struct AddArgs { a: i64, b: i64 }
//! #[derive(serde::Serialize, schemars::JsonSchema)]
//! struct Sum { value: i64 }
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! let add = Tool::builder("add")
//!     .description("Add two integers")
//!     .typed(|args: AddArgs| async move { Json(Sum { value: args.a + args.b }) })
//!     .unwrap();
//! let registry = Registry::from_servers([Server::new("math", Some("1.0.0"), [add]).unwrap()]);
//! let result = registry.call_tool_by_name("add", json!({"a": 1, "b": 2})).await.unwrap();
//! assert_eq!(result.structured_content, Some(json!({"value": 3})));
//! # }
//! ```
//!
//! ## Errors on the wire
//!
//! | situation | reply |
//! |---|---|
//! | unparseable text | -32700 |
//! | not an object, `jsonrpc` not `"2.0"`, method not a string, bad id | -32600 |
//! | unknown method | -32601 |
//! | unknown tool, missing tool name, arguments not an object, bad cursor | -32602 |
//! | unknown prompt, missing required prompt argument, a prompt argument not a string | -32602 |
//! | a prompt that fails or panics | -32603 |
//! | unknown resource URI | -32002 with `data.uri`; -32602 with `data.uri` in 2026-07-28 |
//! | a resource function that fails or panics | -32603 |
//! | unsupported `_meta` protocol version (2026-07-28) | -32022 with `data: {supported, requested}` |
//! | unknown or disabled server | -32601 naming the server |
//! | invalid arguments, tool failure, timeout, panic | a result with `isError: true` naming the problem |
//! | a message nested deeper than [`protocol::MAX_DEPTH`] levels | -32600 |
//! | a response, or a notification (even a malformed one) | no reply |
#![cfg_attr(docsrs, feature(doc_cfg))]
#![forbid(unsafe_code)]
#![warn(missing_docs)]

#[cfg(feature = "agent")]
pub mod agent;
pub mod apps;
pub mod catalog;
pub mod client;
pub mod completion;
pub mod dispatch;
mod name;
mod private;
mod private_prompt;
mod private_resource;
pub mod prompt;
pub mod protocol;
mod random;
pub mod registry;
#[cfg(feature = "redis")]
pub mod replicas;
pub mod resource;
pub mod schema;
pub mod server;
pub mod skill;
pub mod task;
pub mod telemetry;
#[cfg(feature = "testing")]
pub mod testing;
pub mod tool;
pub mod transport;

pub use dispatch::{Lifecycle, LifecycleError, ServerSession};
pub use prompt::{IntoPromptResult, Prompt, PromptBuildError, PromptBuilder, PromptError};
pub use protocol::{
    CallToolResult, Content, GetPromptResult, PromptMessage, ReadResourceResult, ResourceContents,
};
pub use registry::layer;
pub use registry::quota;
pub use registry::{
    ALL_SERVERS, Approval, ApprovalRequest, CallError, CallOptions, CallRequest, GetPromptError,
    PromptDefinition, PromptRequest, ReadRequest, ReadResourceError, Registry, RegistryBuilder,
    RegistryChange, RegistryError, ResourceDefinition, ResourceTemplateDefinition, ServerStatus,
    TaskHandle, TaskStart, ToolDefinition, WithOptions, qualified_name,
};
pub use resource::{
    IntoResourceContents, Resource, ResourceBuildError, ResourceBuilder, ResourceError,
    ResourceTemplate, ResourceTemplateBuilder,
};
pub use server::{
    ConnectionState, DEFAULT_SERVER_VERSION, Server, ServerBuildError, ServerBuilder,
    ServerRegistration,
};
pub use tokio_util::sync::CancellationToken;
pub use tool::{
    Caller, Elicitation, Extensions, InputCallbacks, InputError, InputHandler, IntoToolResult,
    Json, NotificationSink, Principal, ProgressError, SamplingRequest, State, Tool, ToolBuildError,
    ToolBuilder, ToolContext, ToolError, run_blocking,
};

pub use mcp_registry_macros::{mcp_prompt, mcp_resource, mcp_server, mcp_tool, server};

/// Items the macros expand to. Not public API: no stability guarantees.
#[doc(hidden)]
pub mod __private {
    pub use inventory;
    pub use linkme;
    pub use schemars;
    pub use serde;
    pub use serde_json;

    pub use crate::name::{Message, prompt_name_error, server_name_error, tool_name_error};
    pub use crate::private::*;
    pub use crate::private_prompt::*;
    pub use crate::private_resource::*;
}

/// The crate's crates.io page (`README.md`), its code compiled and run as a doctest.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
