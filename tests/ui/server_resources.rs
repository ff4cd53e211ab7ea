use mcp_registry::{mcp_resource, mcp_tool, server};

/// One.
#[mcp_resource(uri = "test://same")]
async fn one() -> &'static str {
    "1"
}

/// Two, at the same URI.
#[mcp_resource(uri = "test://same")]
async fn two() -> &'static str {
    "2"
}

/// A tool is no resource.
#[mcp_tool]
async fn tool() -> &'static str {
    "t"
}

server!(name = "dup", resources = [one, two]);
server!(name = "wrong", resources = [tool]);

fn main() {}
