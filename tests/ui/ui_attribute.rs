use mcp_registry::mcp_tool;

#[mcp_tool(ui = "https://example.com/app.html")]
async fn not_a_ui_uri() {}

#[mcp_tool(ui = "ui://")]
async fn nothing_after_the_scheme() {}

#[mcp_tool(ui = 5)]
async fn not_a_string() {}

fn main() {}
