//! Wire types: the JSON-RPC envelope, error codes, MCP tool, prompt and resource metadata, results and
//! content, capabilities, and the protocol versions this crate speaks.
//!
//! Everything here is plain data with serde impls; behaviour lives in the modules that use it.

mod client;
mod completion;
mod content;
pub(crate) mod decode;
mod depth;
pub(crate) mod headers;
mod jsonrpc;
mod logging;
mod messages;
pub(crate) mod meta;
mod prompt;
mod resource;
mod subscription;
mod task;
mod tool;
mod version;

pub use client::{
    CallToolParams, ClientCapabilities, CreateMessageParams, CreateMessageResult, ElicitAction,
    ElicitParams, ElicitResult, InputRequest, InputRequiredResult, ListRootsResult,
    ListToolsResult, ResourceUriParams, Root, RootsCapability, UnsupportedVersionData,
    UrlElicitationRequiredData,
};
pub use content::{
    Annotations, AudioContent, BlobResourceContents, CallToolResult, Content, EmbeddedResource,
    ImageContent, ResourceContents, ResourceLink, Role, TextContent, TextResourceContents,
};
pub(crate) use depth::drop_flat;
pub use depth::{MAX_DEPTH, exceeds_max_depth};
#[allow(deprecated)]
pub use jsonrpc::Request;
pub use jsonrpc::{
    ErrorCode, ErrorObject, ErrorResponse, JsonRpcRequest, JsonRpcVersion, Notification, RequestId,
    ResultResponse,
};
pub(crate) use jsonrpc::{params_of, value_kind};
pub use messages::{
    CacheHints, CacheScope, CancelledNotificationParams, DiscoverResult, Implementation,
    InitializeParams, InitializeResult, ListToolsParams, PaginatedParams,
    ProgressNotificationParams, ResultType, ServerCapabilities, ToolsCapability, method,
};
pub use prompt::{
    GetPromptParams, GetPromptResult, ListPromptsParams, ListPromptsResult, PromptArgument,
    PromptDescriptor, PromptMessage, PromptsCapability,
};
pub use resource::{
    Icon, ListResourceTemplatesParams, ListResourceTemplatesResult, ListResourcesParams,
    ListResourcesResult, ReadResourceParams, ReadResourceResult, ResourceDescriptor,
    ResourceTemplateDescriptor, ResourceUpdatedParams, ResourcesCapability, SubscribeParams,
};
// Completion, logging and subscriptions (server side, #13).
pub use completion::{
    CompleteArgument, CompleteContext, CompleteParams, CompleteResult, CompletionReference,
    Completions, MAX_COMPLETION_VALUES,
};
pub use logging::{LoggingLevel, LoggingMessageParams, META_LOG_LEVEL, SetLevelParams};
pub use subscription::{ListenParams, META_SUBSCRIPTION_ID, SubscriptionFilter};
pub use task::{
    CreateTaskResult, DetailedTask, LegacyTask, ListTasksResult, META_RELATED_TASK,
    TASKS_EXTENSION, TaskIdParams, TaskRequest, TaskStatus, TaskSupport, ToolExecution,
    UpdateTaskParams,
};
pub use tool::{ToolAnnotations, ToolDescriptor, ToolNameError, validate_tool_name};
pub(crate) use version::Era;
#[cfg(feature = "http")]
pub(crate) use version::require_modern_meta;
pub use version::{
    LATEST_LEGACY_VERSION, LEGACY_VERSIONS, MODERN_VERSION, ProtocolEra, ProtocolVersion,
    SUPPORTED_VERSIONS,
};

/// `_meta` key carrying the protocol version of a modern (2026-07-28) request.
pub const META_PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
/// `_meta` key carrying the client's capabilities on a modern request.
pub const META_CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
/// `_meta` key carrying the server's identity on a modern result.
pub const META_SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";
/// `_meta` key carrying the client's identity on a modern request.
pub const META_CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";
