use mcp_registry::mcp_tool;

#[derive(schemars::JsonSchema)]
struct OnlySchema {
    x: i64,
}

#[derive(serde::Deserialize)]
struct OnlyDeserialize {
    y: i64,
}

/// Use both.
#[mcp_tool]
async fn both(first: OnlySchema, second: OnlyDeserialize, fine: i64) -> String {
    format!("{} {} {fine}", first.x, second.y)
}

fn main() {}
