//! The MCP client, and the client side of a registry: the names a model sees, and which tools
//! it may see and call.
//!
//! - [`ClientMachine`]: the sans-IO client state machine (requests built, replies classified,
//!   pending requests, timeouts against the caller's clock, the lifecycle, both eras).
//! - [`Client`]: the async client over any [`transport::Transport`]: in-process onto a
//!   [`Registry`](crate::Registry) server, stdio (feature `client-stdio`), Streamable HTTP
//!   (feature `client-http`).
//! - [`model_tool_name`] and [`ToolCatalog`]: `mcp__<server>__<tool>` made safe for model APIs
//!   (the Codex client's algorithm), with collisions reported.
//! - [`auth`]: OAuth 2.1 authorization for the HTTP client (feature `client-auth`).
//! - [`ToolFilter`] and [`FilteredRegistry`]: allow and deny lists by exact name or
//!   `mcp__<server>__*`, enforced on listing *and* on calling.

#[cfg(feature = "client-auth")]
pub mod auth;
mod connection;
mod filter;
#[cfg(feature = "client-http")]
mod http;
pub mod machine;
mod mount;
mod policy;
mod qualify;
#[cfg(feature = "client-stdio")]
mod stdio;
pub mod transport;

pub use connection::{
    CallOptions, Client, ClientBuilder, ClientError, ElicitationHandler, SamplingHandler,
};
pub use filter::{
    FilterDecision, FilterPatternError, FilteredCallError, FilteredCallFuture, FilteredCallRequest,
    FilteredRegistry, ToolFilter, ToolFilterBuilder, ToolPattern,
};
#[cfg(feature = "client-http")]
pub use http::HttpTransport;
pub use machine::{
    ClientConfig, ClientLifecycle, ClientMachine, ClientStateError, Handshake, Incoming, NotOurs,
    OutgoingNotification, OutgoingRequest, RequestOptions, ServerNotification, ServerRequest,
    ServerRequestKind, TimedOut, VersionPreference,
};
pub use mount::{MountError, RemoteServer};
pub use policy::{Approval, ApprovalRequest, Backoff, CallPolicy};
pub use qualify::{
    CatalogTool, DuplicateToolName, MAX_TOOL_NAME_LENGTH, ToolCatalog, model_tool_name,
    sanitize_tool_name,
};
#[cfg(feature = "client-stdio")]
pub use stdio::StdioTransport;
