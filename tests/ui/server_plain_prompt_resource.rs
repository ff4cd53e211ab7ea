use mcp_registry::server;

/// Forgot `#[mcp_prompt]`.
async fn greet(name: String) -> String {
    format!("Hello, {name}")
}

/// Forgot `#[mcp_resource(uri = "..")]`.
async fn readme() -> &'static str {
    "# Readme"
}

server!(name = "docs", prompts = [greet], resources = [readme]);

fn main() {}
