use mcp_registry::mcp_tool;

/// Add.
#[mcp_tool(readonly, idempotent)]
async fn add(a: i64, b: i64) -> String {
    (a + b).to_string()
}

/// Echo.
#[mcp_tool]
async fn echo(#[arg(describe = "the text")] text: String) -> String {
    text
}

fn main() {}
