use std::rc::Rc;

use mcp_registry::mcp_tool;

/// Holds an `Rc` across an await.
#[mcp_tool]
async fn hold(text: String) -> String {
    let shared = Rc::new(text);
    tokio::task::yield_now().await;
    shared.to_string()
}

fn main() {}
