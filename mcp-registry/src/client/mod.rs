//! The MCP client.
//!
//! - [`ClientMachine`]: the sans-IO client state machine (requests built, replies classified,
//!   pending requests, timeouts against the caller's clock, the lifecycle, both eras).
//! - [`Client`]: the async client over any [`transport::Transport`]: in-process onto a
//!   [`Registry`](crate::Registry) server, stdio (feature `client-stdio`), Streamable HTTP
//!   (feature `client-http`).
//! - `auth`: OAuth 2.1 authorization for the HTTP client (feature `client-auth`).
//!
//! The names a model sees and the tool filters live in [`catalog`](crate::catalog).

#[cfg(feature = "client-auth")]
pub mod auth;
mod builder;
mod driver;
mod error;
mod handlers;
#[cfg(feature = "client-http")]
mod http;
#[cfg(any(feature = "client-stdio", feature = "client-http"))]
mod lines;
pub mod machine;
mod mount;
mod operations;
mod pages;
mod policy;
mod request;
mod skills;
#[cfg(feature = "client-http")]
mod sse;
#[cfg(feature = "client-stdio")]
mod stdio;
mod stub;
mod tasks;
pub mod transport;

pub use builder::{ClientBuilder, DEFAULT_MAX_CONCURRENT_CALLBACKS};
pub use driver::Client;
pub use error::ClientError;
pub use handlers::{ElicitationHandler, SamplingHandler};
#[cfg(feature = "client-http")]
pub use http::HttpTransport;
pub use machine::{
    ClientConfig, ClientLifecycle, ClientMachine, ClientStateError, Handshake, Incoming, NotOurs,
    OutgoingNotification, OutgoingRequest, RequestSettings, ServerNotification, ServerRequest,
    ServerRequestKind, TimedOut, VersionPreference,
};
pub use mount::{MountError, RemoteServer};
// The registry's own approval types, named here too because a `RequestPolicy` takes them: shown
// as a re-export, so the docs hold each type once.
#[allow(deprecated)]
pub use policy::CallPolicy;
#[doc(no_inline)]
pub use policy::{Approval, ApprovalRequest};
pub use policy::{Backoff, RequestOptions, RequestPolicy};
pub use request::{
    AnyRequest, CallTool, ClientRequest, Complete, GetPrompt, ReadResource, RequestTarget,
};
pub use skills::LoadedSkill;
#[cfg(feature = "client-stdio")]
pub use stdio::StdioTransport;
pub use tasks::{CallToolAsTask, ClientTask, TaskResult, ToolTask};

/// Moved to [`catalog::FilteredRegistry`](crate::catalog::FilteredRegistry); this path goes in
/// the next release.
#[deprecated(
    since = "0.1.0",
    note = "moved to `mcp_registry::catalog::FilteredRegistry`"
)]
#[doc(hidden)]
pub type FilteredRegistry = crate::catalog::FilteredRegistry;

/// Moved to [`catalog::ToolFilter`](crate::catalog::ToolFilter); this path goes in the next
/// release.
#[deprecated(since = "0.1.0", note = "moved to `mcp_registry::catalog::ToolFilter`")]
#[doc(hidden)]
pub type ToolFilter = crate::catalog::ToolFilter;

/// Renamed [`RequestOptions`]; this name goes in the next release.
#[deprecated(
    since = "0.1.0",
    note = "renamed `mcp_registry::client::RequestOptions`"
)]
#[doc(hidden)]
pub type CallOptions = RequestOptions;
