//! The catalog a model sees: tool names qualified as `mcp__<server>__<tool>` and made safe for
//! model APIs, and which tools it may see and call.
//!
//! - [`model_tool_name`] and [`ToolCatalog`]: `mcp__<server>__<tool>` made safe for model APIs
//!   (the Codex client's algorithm), with collisions reported.
//! - [`ToolFilter`] and [`FilteredRegistry`]: allow and deny lists by exact name or
//!   `mcp__<server>__*`, enforced on listing *and* on calling.
//! - [`Pins`]: tool pinning (trust on first use), a changed tool definition quarantined until
//!   the host approves it, kept in a [`PinStore`] ([`FilePinStore`], [`MemoryPinStore`]).
//!
//! Neither needs a client: the `agent` module serves a registry through them.

mod filter;
mod pin_store;
mod pins;
mod qualify;
mod view;

pub use filter::{FilterDecision, FilterPatternError, ToolFilter, ToolFilterBuilder, ToolPattern};
pub use pin_store::{FilePinStore, MemoryPinStore, PinError, PinStore, StoredPin, ToolPin};
pub use pins::{PinDecision, Pins, PinsBuilder, Quarantine};
pub use qualify::{
    CatalogTool, DuplicateToolName, MAX_TOOL_NAME_LENGTH, ToolCatalog, model_tool_name,
    sanitize_tool_name,
};
pub use view::{FilteredCallError, FilteredCallFuture, FilteredCallRequest, FilteredRegistry};
