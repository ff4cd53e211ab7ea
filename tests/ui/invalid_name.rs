use mcp_registry::mcp_tool;

/// Bad characters.
#[mcp_tool(name = "add numbers!")]
async fn add() {}

/// Too long.
#[mcp_tool(name = "tool_name_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx")]
async fn long() {}

/// Empty.
#[mcp_tool(name = "")]
async fn empty() {}

fn main() {}
