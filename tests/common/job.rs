//! The `job` tool: `steps` progress notifications, then "finished". Shared by the HTTP
//! transport tests (`common::http`) and `tests/client.rs`, which takes this file alone.

use mcp_registry::{Tool, ToolContext};

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Steps {
    steps: u32,
}

/// `job`: reports `steps` progress notifications (yielding between them), then finishes.
pub fn job_tool() -> Tool {
    Tool::builder("job")
        .typed(|ctx: ToolContext, a: Steps| async move {
            for i in 1..=a.steps {
                ctx.progress(f64::from(i), Some(f64::from(a.steps)), None)
                    .unwrap();
                tokio::task::yield_now().await;
            }
            "finished"
        })
        .unwrap()
}
