//! Servers defined in this crate and collected by the workspace's `tests/collected.rs`,
//! which proves that `server!` in one crate reaches `Registry::collected()` in another.

use mcp_registry::{mcp_tool, server};

/// Multiply two integers.
///
/// # Arguments
/// * `a` - the left factor
/// * `b` - the right factor
#[mcp_tool(read_only, idempotent)]
pub async fn multiply(a: i64, b: i64) -> String {
    (a * b).to_string()
}

/// Text tools.
pub mod text {
    use mcp_registry::mcp_tool;

    /// Upper-case the text.
    #[mcp_tool(name = "shout")]
    pub async fn upper(text: String) -> String {
        text.to_uppercase()
    }
}

server!(
    name = "fixture-math",
    version = "3.1.4",
    tools = [multiply, text::upper]
);

server!(name = "fixture-text", tools = [text::upper], fn = pub text_server);
