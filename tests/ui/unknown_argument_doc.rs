use mcp_registry::mcp_tool;

/// Add two numbers.
///
/// # Arguments
/// * `a` - the left operand
/// * `c` - the right operand
#[mcp_tool]
async fn add(a: i64, b: i64) -> String {
    (a + b).to_string()
}

fn main() {}
