use mcp_registry::mcp_tool;

/// Add.
#[mcp_tool(name = "add", read_only, name = "plus", read_only = false)]
async fn add(a: i64, b: i64) -> String {
    (a + b).to_string()
}

fn main() {}
