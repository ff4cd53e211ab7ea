use mcp_registry::mcp_tool;

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Point {
    x: f64,
    y: f64,
}

/// Norm.
#[mcp_tool]
async fn norm(Point { x, y }: Point) -> String {
    (x * x + y * y).sqrt().to_string()
}

fn main() {}
