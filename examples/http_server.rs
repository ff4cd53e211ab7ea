//! An MCP server over Streamable HTTP: the same six tools as `examples/stdio_server.rs`,
//! at `http://127.0.0.1:8000/mcp` by default.
//!
//! ```text
//! cargo run --example http_server --features http                  # 127.0.0.1:8000
//! cargo run --example http_server --features http -- 8123          # 127.0.0.1:8123
//! MCP_HTTP_ADDR=127.0.0.1:9000 cargo run --example http_server --features http
//! ```
//!
//! It listens on loopback only (a non-loopback address is refused) and, through the default
//! `HttpConfig`, checks `Host` (loopback names only, see `HttpConfig::allowed_hosts`) and
//! `Origin` (localhost origins only) against DNS rebinding: anything else gets `403`. Clients that speak the
//! 2025-03-26 .. 2025-11-25 protocol get an `Mcp-Session-Id` session after `initialize`;
//! 2026-07-28 requests are answered statelessly.
//!
//! Try it with curl:
//!
//! ```text
//! curl -s http://127.0.0.1:8000/mcp -H 'Content-Type: application/json' \
//!   -H 'Accept: application/json, text/event-stream' \
//!   -d '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"curl","version":"0"}}}'
//! ```
//!
//! Claude Code connects with `claude mcp add --transport http mcp-registry-demo http://127.0.0.1:8000/mcp`.
//! `tests/e2e/` drives this server with the official Python MCP client.

use std::net::SocketAddr;

use mcp_registry::Registry;
use mcp_registry::transport::http::HttpConfig;

/// The tools and the `demo` server, shared with the other transport example.
mod demo;
/// The loopback-only listening address, shared with the other HTTP example.
mod listen;

/// The listening address: the first argument or `MCP_HTTP_ADDR`, either a port or an
/// `ip:port`; loopback only.
fn listen_addr() -> Result<SocketAddr, String> {
    let raw = std::env::args()
        .nth(1)
        .or_else(|| std::env::var("MCP_HTTP_ADDR").ok())
        .unwrap_or_else(|| "127.0.0.1:8000".to_owned());
    listen::loopback_addr(&raw)
}

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let addr = listen_addr().map_err(std::io::Error::other)?;
    eprintln!("http_server: serving `demo` at http://{addr}/mcp");
    mcp_registry::transport::http::serve(Registry::collected(), "demo", addr, HttpConfig::default())
        .await
}
