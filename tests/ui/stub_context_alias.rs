// A context parameter written through an alias stays in the typed stub (the stub's
// parameters are fixed before types are known); the tool itself still works.
use mcp_registry::{Registry, ToolContext, mcp_tool};

type Ctx = ToolContext;

/// Echoes its text.
#[mcp_tool]
async fn echo(_ctx: Ctx, text: String) -> String {
    text
}

async fn call(registry: &Registry) {
    let _ = echo::call(registry, "hi".into()).await;
}

fn main() {
    let _ = echo::tool();
    let _ = call;
}
