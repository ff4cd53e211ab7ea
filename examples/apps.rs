//! An MCP App (SEP-1865, `io.modelcontextprotocol/ui`) over Streamable HTTP: the tool
//! `server_time` names the `ui://clock/app.html` resource in its `_meta.ui`; a host that
//! declares the extension renders that HTML in a sandboxed iframe, pushes the tool's result
//! into it, and forwards the `tools/call` the page sends back (JSON-RPC over
//! `window.parent.postMessage`) to this server. Clients without the extension see a plain
//! tool whose text says the time.
//!
//! ```text
//! cargo run --example apps --features http                  # 127.0.0.1:8000
//! cargo run --example apps --features http -- 0             # any free port, printed on stderr
//! ```
//!
//! `tests/e2e/apps_host.py` is a minimal web host: it loads this app in headless Chromium
//! and checks that the page rendered the result and called the tool back through the host.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use mcp_registry::apps::{Csp, UiResourceMeta};
use mcp_registry::transport::http::{HttpConfig, serve_listener};
use mcp_registry::{Json, Registry, Resource, Server, mcp_tool};
use schemars::JsonSchema;
use serde::Serialize;

/// The loopback-only listening address, shared with the other HTTP example.
mod listen;

/// The app's page: plain HTML and an inline script, nothing loaded from elsewhere.
const CLOCK_HTML: &str = include_str!("apps/clock.html");

/// How many times the tool ran, so a page can tell a fresh answer from the first one.
static CALLS: AtomicU64 = AtomicU64::new(0);

/// What `server_time` answers: the text for the model, this for the app.
#[derive(Serialize, JsonSchema)]
struct ServerTime {
    /// The time of day on the server, UTC, `HH:MM:SS`.
    time: String,
    /// How many times the tool has run since the server started, this call included.
    call: u64,
}

/// The server's time of day (UTC). Hosts that render MCP Apps show it in a live clock.
#[mcp_tool(read_only, ui = "ui://clock/app.html")]
async fn server_time() -> Json<ServerTime> {
    let call = CALLS.fetch_add(1, Ordering::SeqCst) + 1;
    let seconds = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() % 86_400);
    let time = format!(
        "{:02}:{:02}:{:02}",
        seconds / 3600,
        seconds / 60 % 60,
        seconds % 60
    );
    Json(ServerTime { time, call })
}

/// The clock server: the tool and its app.
fn clock_server() -> Result<Server, Box<dyn std::error::Error>> {
    let app = Resource::builder("ui://clock/app.html", "clock")
        .title("Server clock")
        .description("A live clock of the server's time")
        // No external origin: an empty CSP list keeps the host's restrictive default.
        .ui(UiResourceMeta::default()
            .csp(Csp::default())
            .prefers_border(true))
        .app_html(CLOCK_HTML)?;
    Ok(Server::builder("clock")
        .version("1.0.0")
        .tools([server_time::tool()])
        .resources([app])
        .build()?)
}

/// The listening address: the first argument, a port or an `ip:port`; loopback only.
fn listen_addr() -> Result<SocketAddr, String> {
    let raw = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "127.0.0.1:8000".to_owned());
    listen::loopback_addr(&raw)
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let registry = Registry::from_servers([clock_server()?]);
    let listener = tokio::net::TcpListener::bind(listen_addr()?).await?;
    eprintln!(
        "apps: serving `clock` at http://{}/mcp",
        listener.local_addr()?
    );
    serve_listener(listener, registry, "clock", HttpConfig::default()).await?;
    Ok(())
}
