//! An MCP server over stdio: six tools from plain async functions, served as
//! newline-delimited JSON-RPC on stdin/stdout (logs go to stderr).
//!
//! Build it once, then point an MCP client at the binary:
//!
//! ```text
//! cargo build --release --example stdio_server --features stdio
//! ```
//!
//! **Claude Desktop**: add to `claude_desktop_config.json` (macOS:
//! `~/Library/Application Support/Claude/`, Windows: `%APPDATA%\Claude\`), with the absolute
//! path of your checkout, then restart Claude Desktop:
//!
//! ```json
//! {
//!   "mcpServers": {
//!     "mcp-registry-demo": {
//!       "command": "/absolute/path/to/mcp-registry/target/release/examples/stdio_server",
//!       "args": []
//!     }
//!   }
//! }
//! ```
//!
//! **Claude Code**: the same `mcpServers` object in a `.mcp.json` at the root of your project
//! (add `"type": "stdio"` next to `"command"`), or from a shell:
//!
//! ```text
//! claude mcp add mcp-registry-demo -- /absolute/path/to/mcp-registry/target/release/examples/stdio_server
//! ```
//!
//! Try it by hand (one JSON-RPC message per line; the server exits at end of input):
//!
//! ```text
//! printf '%s\n' \
//!   '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"sh","version":"0"}}}' \
//!   '{"jsonrpc":"2.0","method":"notifications/initialized"}' \
//!   '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"add","arguments":{"a":2,"b":3}}}' \
//!   | cargo run -q --example stdio_server --features stdio
//! ```
//!
//! The same tools are served over HTTP by `examples/http_server.rs`; `tests/e2e/` drives both
//! with the official Python MCP client.

use mcp_registry::Registry;

/// The tools and the `demo` server, shared with the other transport example.
mod demo;

#[tokio::main]
async fn main() -> std::io::Result<()> {
    eprintln!("stdio_server: serving `demo` on stdin/stdout");
    mcp_registry::transport::stdio::serve(Registry::collected(), "demo").await
}
