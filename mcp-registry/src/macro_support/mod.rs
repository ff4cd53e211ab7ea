//! What the macros (`#[mcp_tool]`, `#[mcp_prompt]`, `#[mcp_resource]`, `#[mcp_server]`,
//! `server!`) expand to, reached as `mcp_registry::__private`: not public API, no stability
//! guarantees. One file per kind of item; it sits above the items, the server and the
//! registry it builds from what the macros generate, so none of those imports it.

pub mod prompt;
pub mod resource;
pub mod tool;
