use mcp_registry::mcp_tool;

/// Blocking work in an async fn: `blocking` is for plain functions.
#[mcp_tool(blocking)]
async fn hash(text: String) -> String {
    text
}

fn main() {}
