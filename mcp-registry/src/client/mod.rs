//! The client side of a registry: the names a model sees, and which tools it may see and call.
//!
//! - [`model_tool_name`] and [`ToolCatalog`]: `mcp__<server>__<tool>` made safe for model APIs
//!   (the Codex client's algorithm), with collisions reported.
//! - [`ToolFilter`] and [`FilteredRegistry`]: allow and deny lists by exact name or
//!   `mcp__<server>__*`, enforced on listing *and* on calling.

mod filter;
mod qualify;

pub use filter::{
    FilterDecision, FilterPatternError, FilteredCallError, FilteredCallFuture, FilteredCallRequest,
    FilteredRegistry, ToolFilter, ToolFilterBuilder, ToolPattern,
};
pub use qualify::{
    CatalogTool, DuplicateToolName, MAX_TOOL_NAME_LENGTH, ToolCatalog, model_tool_name,
    sanitize_tool_name,
};
