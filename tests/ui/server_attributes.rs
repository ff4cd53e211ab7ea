use mcp_registry::{mcp_tool, server};

/// Ping.
#[mcp_tool]
async fn ping() -> &'static str {
    "pong"
}

server!(name = "my server", tools = [ping], versoin = "1.0.0");

server!(name = "a__b", tools = [ping], collect = false);

server!(tools = [ping]);

fn main() {}
