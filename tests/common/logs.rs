//! The logging tests' server `logs`: one tool, `chatty`, logging at four levels.

use mcp_registry::protocol::LoggingLevel;
use mcp_registry::{Registry, Server, ToolContext, mcp_tool};
use serde_json::json;

/// Logs once at each of four levels, then answers.
#[mcp_tool]
pub async fn chatty(ctx: ToolContext) -> String {
    ctx.log(LoggingLevel::Debug, None, "debug detail");
    ctx.log(LoggingLevel::Info, Some("steps"), "step 1 done");
    ctx.log(
        LoggingLevel::Warning,
        Some("steps"),
        json!({"slow_ms": 900}),
    );
    ctx.log(LoggingLevel::Error, None, "step 2 failed");
    format!("level {:?}", ctx.log_level())
}

pub fn registry() -> Registry {
    Registry::from_servers([Server::builder("logs")
        .tool(chatty::tool())
        .build()
        .unwrap()])
}
