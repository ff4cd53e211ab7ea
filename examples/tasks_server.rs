//! A server whose tools run as tasks: `build` (a task when the client can follow one) and
//! `deploy` (only as a task; it asks the user to confirm while it runs), beside a plain
//! `status`. Over stdio by default, or Streamable HTTP with `--http PORT`.
//!
//! ```text
//! cargo run --example tasks_server --features stdio,http                 # stdio
//! cargo run --example tasks_server --features stdio,http -- --http 3002  # http://127.0.0.1:3002/mcp
//! ```
//!
//! A 2026-07-28 client that declares the `io.modelcontextprotocol/tasks` extension gets a
//! task handle for `build` and `deploy` and polls `tasks/get`; a 2025-11-25 client calls
//! them with `task` and reads `tasks/result`. `tests/client_tasks.rs` drives it with this
//! crate's client in both eras.

use std::net::SocketAddr;
use std::time::Duration;

use mcp_registry::tool::{Elicitation, InputError};
use mcp_registry::{Registry, Server, ToolContext, mcp_tool};
use schemars::JsonSchema;
use serde::Deserialize;

/// Builds the project: `ms` milliseconds of work.
///
/// # Arguments
/// * `ms` - how long the build takes, in milliseconds
#[mcp_tool(task = "optional")]
async fn build(ms: u64) -> String {
    tokio::time::sleep(Duration::from_millis(ms.min(600_000))).await;
    format!("built in {ms} ms")
}

/// What `deploy` asks before it goes live.
#[derive(Deserialize, JsonSchema)]
struct GoLive {
    /// Put the build live.
    confirm: bool,
}

/// Deploys the build to `target`, once the user confirms (runs only as a task).
///
/// # Arguments
/// * `target` - where to deploy
#[mcp_tool(task = "required")]
async fn deploy(ctx: ToolContext, target: String) -> Result<String, InputError> {
    // Staging comes first; the question comes once the task runs.
    tokio::time::sleep(Duration::from_millis(50)).await;
    let answer = ctx.elicit::<GoLive>(format!("Deploy to {target}?")).await?;
    Ok(match answer {
        Elicitation::Accept(GoLive { confirm: true }) => format!("deployed to {target}"),
        _ => format!("kept {target} as it was"),
    })
}

/// Says the service is up (a plain tool).
#[mcp_tool(read_only)]
async fn status() -> &'static str {
    "up"
}

fn registry() -> Registry {
    let server = Server::builder("tasks")
        .version("1.0.0")
        .tools([build::tool(), deploy::tool(), status::tool()])
        .build()
        .expect("a valid server");
    Registry::from_servers([server])
}

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.as_slice() {
        [] => mcp_registry::transport::stdio::serve(registry(), "tasks").await,
        [flag, port] if flag == "--http" => {
            let port: u16 = port
                .parse()
                .map_err(|e| std::io::Error::other(format!("bad port {port:?}: {e}")))?;
            let addr = SocketAddr::from(([127, 0, 0, 1], port));
            eprintln!("tasks_server: http://{addr}/mcp");
            let config = mcp_registry::transport::http::HttpConfig::default();
            mcp_registry::transport::http::serve(registry(), "tasks", addr, config).await
        }
        _ => Err(std::io::Error::other(
            "usage: tasks_server [--http PORT] (no argument: stdio)",
        )),
    }
}
