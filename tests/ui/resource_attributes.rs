use mcp_registry::mcp_resource;

/// Both a URI and a template.
#[mcp_resource(uri = "test://a", template = "test://{id}")]
async fn both(id: String) -> String {
    id
}

/// Neither.
#[mcp_resource(name = "nothing", read_only)]
async fn neither() -> String {
    String::new()
}

/// Not an absolute URI, and a size that is no number.
#[mcp_resource(uri = "just-a-name", size = "big")]
async fn relative() -> String {
    String::new()
}

/// Level 3 is not read.
#[mcp_resource(template = "search://{?q}")]
async fn search(q: String) -> String {
    q
}

fn main() {}
