use mcp_registry::{mcp_tool, server};

/// Add.
#[mcp_tool]
async fn add(a: i64, b: i64) -> String {
    (a + b).to_string()
}

mod v2 {
    /// Add, again.
    #[mcp_registry::mcp_tool(name = "add")]
    pub async fn add_v2(a: i64, b: i64) -> String {
        (a + b).to_string()
    }
}

server!(name = "math", tools = [add, v2::add_v2]);

server!(name = "math2", tools = [add, add]);

fn main() {}
