use mcp_registry::mcp_tool;

struct Meters(f64);

/// Measure.
#[mcp_tool]
async fn measure() -> Meters {
    Meters(1.0)
}

fn main() {}
