use mcp_registry::mcp_prompt;

/// Returns a number.
#[mcp_prompt]
async fn answer() -> u32 {
    42
}

fn main() {}
