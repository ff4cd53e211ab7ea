//! Plain async Rust functions as MCP (Model Context Protocol) tools, prompts and resources.
//!
//! Annotate a function with [`macro@mcp_tool`] (or [`macro@mcp_prompt`],
//! [`macro@mcp_resource`], or [`macro@mcp_server`] on an impl block), group items with
//! [`server!`], and a [`Registry`] calls them by name ([`Registry::call_tool_by_name`]) or
//! answers MCP JSON-RPC for them ([`Registry::handle_mcp_message`]) in-process, with no
//! subprocess, socket or transport:
//!
//! ```
//! use mcp_registry::{Json, Registry, mcp_tool, server};
//! use serde_json::json;
//!
//! #[derive(serde::Serialize, schemars::JsonSchema)]
//! struct Sum {
//!     value: i64,
//! }
//!
//! /// Add two integers.
//! ///
//! /// # Arguments
//! /// * `a` - the first addend
//! /// * `b` - the second addend
//! #[mcp_tool(read_only)]
//! async fn add(a: i64, b: i64) -> Json<Sum> {
//!     Json(Sum { value: a + b })
//! }
//!
//! server!(name = "math", version = "1.0.0", tools = [add], fn = math);
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! let registry = Registry::from_servers([math()]);
//! let result = registry.call_tool_by_name("add", json!({"a": 2, "b": 3})).await.unwrap();
//! assert_eq!(result.structured_content, Some(json!({"value": 5})));
//!
//! let reply = registry
//!     .handle_mcp_message("math", json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}))
//!     .await
//!     .unwrap();
//! assert_eq!(reply["result"]["tools"][0]["name"], "add");
//! # }
//! ```
//!
//! The same registry is served to MCP clients over stdio or Streamable HTTP ([`transport`]),
//! handed to agents, or mixed with remote MCP servers through the [`client`].
//!
//! # Guides
//!
//! Topic by topic, every example compiled and run as a test ([`guide`]):
//!
//! - [Tools, prompts and resources](guide::tools): the macros, `server!`, builders without
//!   macros, answering MCP in-process, completion, subscriptions.
//! - [Testing](guide::testing): unit tests, listing snapshots, typed call stubs, cassettes.
//! - [Layers and state](guide::layers_and_state): the one pipeline every request takes,
//!   approval, host state ([`State`]), time limits.
//! - [Tasks](guide::tasks): tools run as tasks, over MCP and in-process ([`TaskHandle`]).
//! - [Serving](guide::serving): stdio, Streamable HTTP, a whole registry as one server,
//!   authorization.
//! - [Replicas](guide::replicas): several replicas behind a load balancer.
//! - [Client and auth](guide::client_and_auth): the MCP client, request policies, traces, remote
//!   servers, OAuth 2.1.
//! - [Agents](guide::agents): your own loop against a model API, agent runtimes.
//! - [Extensions](guide::extensions): Skills and MCP Apps.
//! - [Security](guide::security): the security model: the caller of each request, what
//!   decides on what, what is bound to whom.
//!
//! # Features
//!
//! None is on by default. The minimum supported Rust version is 1.88.
//!
//! | feature | what it adds |
//! |---|---|
//! | `stdio` | `transport::stdio`: serve a server on stdin and stdout |
//! | `http` | `transport::http`: Streamable HTTP on axum, with sessions, OAuth bearer tokens and connection limits |
//! | `http-dpop` | DPoP-bound access tokens on the HTTP server (RFC 9449) |
//! | `agent` | `agent`: the Claude Code control protocol, per-session registries, tools exported in model APIs' formats |
//! | `client-stdio` | [`client::Client`] over a child process's stdio |
//! | `client-http` | [`client::Client`] over Streamable HTTP (reqwest, rustls) |
//! | `client-auth` | OAuth 2.1 for the HTTP client: discovery, registration, PKCE, refresh, client credentials, DPoP |
//! | `testing` | `testing`: listing snapshots that fail when a schema changes, and cassettes that record and replay a session |
//! | `otel` | W3C trace context in `_meta`, so client and server spans join one OpenTelemetry trace, and the MCP conventions' duration histograms ([`telemetry`]) |
//! | `redis` | `replicas`: tasks, change notifications and legacy sessions shared by replicas through Redis |
//!
//! How each MCP error reaches the wire is tabled in the
//! [tools guide](guide::tools#answering-mcp-in-process).
#![cfg_attr(docsrs, feature(doc_cfg))]
#![forbid(unsafe_code)]
#![warn(missing_docs)]

#[cfg(feature = "agent")]
pub mod agent;
pub mod apps;
pub mod catalog;
pub mod client;
pub mod completion;
#[doc(hidden)]
pub mod dispatch;
pub mod guide;
mod macro_support;
mod name;
pub mod prompt;
pub mod protocol;
mod random;
#[doc(hidden)]
pub mod registry;
#[cfg(feature = "redis")]
pub mod replicas;
pub mod resource;
pub mod schema;
#[doc(hidden)]
pub mod server;
pub mod skill;
mod sync;
pub mod task;
pub mod telemetry;
#[cfg(feature = "testing")]
pub mod testing;
pub mod tool;
pub mod transport;

pub use dispatch::{
    Lifecycle, LifecycleError, MAX_SUBSCRIPTIONS, Message, MessageFuture, MessageRequest,
    OUTBOX_CAPACITY, Outgoing, ServerSession, SessionMessage, SessionRequest, SessionSnapshot,
    TextFuture,
};
pub use prompt::{IntoPromptResult, Prompt, PromptBuildError, PromptBuilder, PromptError};
pub use protocol::{
    CallToolResult, Content, GetPromptResult, PromptMessage, ReadResourceResult, ResourceContents,
};
pub use registry::layer;
pub use registry::quota;
pub use registry::{
    ALL_SERVERS, Approval, ApprovalRequest, CallError, CallFuture, CallOptions, CallRequest,
    ChangeBus, DEFAULT_TIMEOUT, GetPromptError, PromptDefinition, PromptGet, PromptRequest,
    ReadRequest, ReadResourceError, Registry, RegistryBuilder, RegistryChange, RegistryError,
    RemoteChanges, ResourceDefinition, ResourceRead, ResourceTemplateDefinition, ServerStatus,
    SharedChange, TaskHandle, TaskStart, ToolCall, ToolDefinition, WithOptions, qualified_name,
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

    pub use crate::macro_support::prompt::*;
    pub use crate::macro_support::resource::*;
    pub use crate::macro_support::tool::*;
    pub use crate::name::{NameMessage, prompt_name_error, server_name_error, tool_name_error};
}

/// The crate's page (`README.md`, the repository's front page too), its code compiled and
/// run as a doctest with the features it shows.
#[cfg(all(doctest, feature = "stdio", feature = "http", feature = "agent"))]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
