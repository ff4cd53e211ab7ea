use mcp_registry::mcp_resource;

/// A fixed URI takes no parameters.
#[mcp_resource(uri = "test://fixed")]
async fn fixed(id: String) -> String {
    id
}

/// A parameter that is no variable, and a variable without a parameter.
#[mcp_resource(template = "users://{id}/posts/{post}")]
async fn posts(id: u64, page: u32) -> String {
    format!("{id} {page}")
}

fn main() {}
