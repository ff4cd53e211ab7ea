use mcp_registry::mcp_server;

struct Notes;

/// `server!`'s lists are not for `#[mcp_server]`; a tool's own mistakes are reported as for
/// `#[mcp_tool]`.
#[mcp_server(name = "notes", tools = [add])]
impl Notes {
    /// Takes a reference.
    #[tool(read_only)]
    async fn add(&self, text: &str) -> String {
        text.to_owned()
    }
}

trait Store {
    fn get(&self) -> String;
}

#[mcp_server]
impl Store for Notes {
    fn get(&self) -> String {
        String::new()
    }
}

fn main() {}
