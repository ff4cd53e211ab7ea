use mcp_registry::{mcp_prompt, mcp_resource, mcp_tool};

#[mcp_tool(timeout = "5")]
async fn no_unit() {}

#[mcp_tool(timeout = "5sec")]
async fn unknown_unit() {}

#[mcp_tool(timeout = "1.5s")]
async fn fraction() {}

#[mcp_tool(timeout = "5 s")]
async fn spaced() {}

#[mcp_prompt(timeout = "soon")]
async fn no_number() -> String {
    String::new()
}

#[mcp_prompt(timeout = 5)]
async fn not_a_string() -> String {
    String::new()
}

#[mcp_resource(uri = "file:///a", timeout = "0ms")]
async fn zero() -> String {
    String::new()
}

#[mcp_resource(template = "file:///{id}", timeout = "99999999999999999999h")]
async fn too_long(id: String) -> String {
    id
}

#[mcp_tool(timeout = "1s", timeout = "2s")]
async fn twice() {}

fn main() {}
