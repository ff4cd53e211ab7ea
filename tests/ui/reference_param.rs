use mcp_registry::mcp_tool;

/// Echo.
#[mcp_tool]
async fn echo(text: &str) -> String {
    text.to_owned()
}

fn main() {}
