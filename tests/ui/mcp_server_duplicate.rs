use mcp_registry::mcp_server;

struct Notes;

#[mcp_server(name = "notes")]
impl Notes {
    /// Add.
    #[tool]
    async fn add(&self) -> String {
        String::new()
    }

    /// Named like `add`.
    #[tool(name = "add")]
    async fn append(&self) -> String {
        String::new()
    }

    /// One URI, twice.
    #[resource(uri = "notes://all")]
    async fn all(&self) -> String {
        String::new()
    }

    /// The same URI.
    #[resource(uri = "notes://all")]
    async fn everything(&self) -> String {
        String::new()
    }

    /// Marked twice.
    #[tool]
    #[prompt]
    async fn both(&self) -> String {
        String::new()
    }
}

fn main() {}
