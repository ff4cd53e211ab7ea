use mcp_registry::mcp_prompt;

/// Numbers are not prompt arguments.
#[mcp_prompt]
async fn count(text: String, times: u32, by: Option<u32>) -> String {
    format!("{text} {times} {by:?}")
}

/// References neither.
#[mcp_prompt]
async fn borrowed(text: &str) -> String {
    text.to_owned()
}

fn main() {}
