use mcp_registry::mcp_server;

struct Notes;

#[mcp_server(name = "notes")]
impl Notes {
    /// No `self`: an item of its own.
    #[tool]
    async fn add(text: String) -> String {
        text
    }

    /// `&mut self`: the value is shared between calls.
    #[tool]
    async fn clear(&mut self) -> String {
        String::new()
    }

    /// `self` by value.
    #[prompt]
    async fn summary(self) -> String {
        String::new()
    }
}

fn main() {
    // The server's functions stand in: using them adds no error.
    let _ = Notes.into_server();
}
