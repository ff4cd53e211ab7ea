use mcp_registry::mcp_server;

struct Notes;

#[mcp_server(name = "notes")]
impl Notes {
    /// Not async.
    #[tool]
    fn count(&self) -> String {
        String::new()
    }

    /// Not async either.
    #[resource(uri = "notes://all")]
    fn all(&self) -> String {
        String::new()
    }
}

fn main() {}
