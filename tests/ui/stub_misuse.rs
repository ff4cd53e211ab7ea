// A tool whose argument is not `Serialize` compiles (its stub is bounded on the caller), but
// calling its stub is an error; so is calling a stub through something that is no client.
use mcp_registry::{Registry, mcp_tool};

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Point {
    x: i64,
}

#[mcp_tool]
async fn plot(p: Point) -> String {
    p.x.to_string()
}

#[mcp_tool]
async fn double(n: i64) -> String {
    (n * 2).to_string()
}

async fn host(registry: &Registry) {
    let _ = plot::call(registry, Point { x: 1 }).await;
    let _ = double::call(&"not a client", 2).await;
}

fn main() {
    let _ = host;
}
