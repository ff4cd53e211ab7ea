use mcp_registry::{mcp_prompt, mcp_resource, mcp_tool, server};

server!(name = "math", fn = math);

#[mcp_tool(server = maht)]
async fn add(a: i64, b: i64) -> String {
    (a + b).to_string()
}

#[mcp_prompt(server = crate::mathematics)]
fn explain() -> &'static str {
    "explain"
}

#[mcp_resource(server = math::nope, uri = "math://pi")]
fn pi() -> &'static str {
    "3.14"
}

// A server without `fn` declares no slice: nothing can attach to it.
server!(name = "geometry", tools = [add]);

#[mcp_tool(server = geometry)]
fn area() -> &'static str {
    "1"
}

#[mcp_tool(server = "math")]
fn quoted() -> &'static str {
    "quoted"
}

fn main() {}
