//! An MCP server over Streamable HTTP: the same four tools as `examples/stdio_server.rs`,
//! at `http://127.0.0.1:8000/mcp` by default.
//!
//! ```text
//! cargo run --example http_server                  # 127.0.0.1:8000
//! cargo run --example http_server -- 8123          # 127.0.0.1:8123
//! MCP_HTTP_ADDR=127.0.0.1:9000 cargo run --example http_server
//! ```
//!
//! It listens on loopback only (a non-loopback address is refused) and, through the default
//! `HttpConfig`, checks `Host`/`Origin` against DNS rebinding. Clients that speak the
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

use std::fmt;
use std::net::SocketAddr;
use std::time::Duration;

use mcp_registry::transport::http::HttpConfig;
use mcp_registry::{Json, Registry, ToolContext, mcp_tool, server};
use schemars::JsonSchema;
use serde::Serialize;

/// The result of `add`.
#[derive(Debug, Serialize, JsonSchema)]
struct Sum {
    /// `a + b`.
    sum: i64,
}

/// Add two integers.
///
/// # Arguments
/// * `a` - the left operand
/// * `b` - the right operand
#[mcp_tool(title = "Add", read_only, idempotent)]
async fn add(a: i64, b: i64) -> Json<Sum> {
    Json(Sum {
        sum: a.saturating_add(b),
    })
}

/// The result of `divide`.
#[derive(Debug, Serialize, JsonSchema)]
struct Quotient {
    /// `dividend / divisor`.
    quotient: f64,
}

#[derive(Debug)]
struct DivisionByZero;

impl fmt::Display for DivisionByZero {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("cannot divide by zero")
    }
}

/// Divide one number by another; dividing by zero is a tool error.
///
/// # Arguments
/// * `dividend` - the number to divide
/// * `divisor` - the number to divide by (not zero)
#[mcp_tool(title = "Divide", read_only, idempotent)]
async fn divide(dividend: f64, divisor: f64) -> Result<Json<Quotient>, DivisionByZero> {
    if divisor == 0.0 {
        return Err(DivisionByZero);
    }
    Ok(Json(Quotient {
        quotient: dividend / divisor,
    }))
}

/// Echo a text back.
///
/// # Arguments
/// * `text` - the text to echo
#[mcp_tool(read_only, idempotent)]
async fn echo(text: String) -> String {
    text
}

/// Count down, reporting progress at each step (send a `progressToken` to see it).
///
/// # Arguments
/// * `steps` - how many steps to count (at most 20)
#[mcp_tool(title = "Countdown", read_only)]
async fn countdown(ctx: ToolContext, steps: u32) -> Result<String, String> {
    if steps > 20 {
        return Err(format!("steps must be at most 20, got {steps}"));
    }
    for done in 1..=steps {
        tokio::time::sleep(Duration::from_millis(20)).await;
        let left = steps - done;
        ctx.progress(
            f64::from(done),
            Some(f64::from(steps)),
            Some(&format!("{left} left")),
        )
        .map_err(|e| e.to_string())?;
    }
    Ok(format!("counted down from {steps}"))
}

server!(
    name = "demo",
    version = "1.0.0",
    title = "mcp-registry demo",
    instructions = "Arithmetic and echo tools from the mcp-registry examples.",
    tools = [add, divide, echo, countdown],
);

/// The listening address: the first argument or `MCP_HTTP_ADDR`, either a port or an
/// `ip:port`; loopback only.
fn listen_addr() -> Result<SocketAddr, String> {
    let raw = std::env::args()
        .nth(1)
        .or_else(|| std::env::var("MCP_HTTP_ADDR").ok())
        .unwrap_or_else(|| "127.0.0.1:8000".to_owned());
    let addr = match raw.parse::<u16>() {
        Ok(port) => SocketAddr::from(([127, 0, 0, 1], port)),
        Err(_) => raw
            .parse::<SocketAddr>()
            .map_err(|e| format!("bad address {raw:?}: {e} (want a port or ip:port)"))?,
    };
    if !addr.ip().is_loopback() {
        return Err(format!(
            "refusing to listen on {addr}: this example serves loopback only"
        ));
    }
    Ok(addr)
}

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let addr = listen_addr().map_err(std::io::Error::other)?;
    eprintln!("http_server: serving `demo` at http://{addr}/mcp");
    mcp_registry::transport::http::serve(Registry::collected(), "demo", addr, HttpConfig::default())
        .await
}
