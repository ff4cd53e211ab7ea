use mcp_registry::mcp_resource;

struct Id(u64);

/// The id cannot be parsed from the URI.
#[mcp_resource(template = "users://{id}")]
async fn user(id: Id) -> String {
    id.0.to_string()
}

/// Returns something that is no contents.
#[mcp_resource(uri = "test://number")]
async fn number() -> u32 {
    5
}

fn main() {}
