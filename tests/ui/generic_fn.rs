use mcp_registry::{mcp_tool, server};

/// Echo.
#[mcp_tool]
async fn echo<T: ToString>(value: T) -> String {
    value.to_string()
}

// The function and its tool stand-in are still emitted: no follow-on errors here.
server!(name = "generic", tools = [echo]);

fn main() {
    let _ = echo(1);
}
