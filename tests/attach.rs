//! Items that attach themselves to a server declared elsewhere (`server = ..`, `linkme`):
//! the server built from its listed items and every attached one, across modules.

use mcp_registry::{Registry, mcp_prompt, mcp_resource, mcp_tool, server};
use serde_json::json;

/// Add two numbers.
#[mcp_tool(read_only)]
async fn add(a: i64, b: i64) -> String {
    (a + b).to_string()
}

// Declared with one listed tool; the rest attach from the modules below.
server!(name = "attach-math", tools = [add], fn = pub math);

// Nothing listed: everything attaches.
server!(name = "attach-empty", fn = empty, collect = false);

// Declared, never attached to: only its listed tool.
server!(name = "attach-none", tools = [add], fn = untouched, collect = false);

mod ops {
    use super::*;

    /// Multiply two numbers.
    #[mcp_tool(server = super::math, idempotent)]
    pub async fn mul(a: i64, b: i64) -> String {
        (a * b).to_string()
    }

    /// Explain a number.
    #[mcp_prompt(server = super::math)]
    async fn explain(n: String) -> String {
        format!("Explain {n}")
    }

    /// The constants.
    #[mcp_resource(server = super::math, uri = "math://constants", mime_type = "text/plain")]
    async fn constants() -> &'static str {
        "pi e"
    }

    /// A number's square.
    #[mcp_resource(server = super::math, template = "math://square/{n}")]
    async fn square(n: i64) -> String {
        (n * n).to_string()
    }

    #[mcp_tool(server = super::empty)]
    fn ping() -> &'static str {
        "pong"
    }
}

#[tokio::test]
async fn attached_items_join_the_server() {
    let server = math();
    assert_eq!(server.tool_names().collect::<Vec<_>>(), ["add", "mul"]);
    assert_eq!(server.prompt_names().collect::<Vec<_>>(), ["explain"]);
    assert_eq!(server.resources()[0].uri(), "math://constants");
    assert_eq!(
        server.resource_templates()[0].uri_template(),
        "math://square/{n}"
    );
    assert!(
        server
            .tool("mul")
            .is_some_and(|t| t.descriptor().annotations.idempotent_hint == Some(true))
    );

    let registry = Registry::from_servers([server]);
    let result = registry
        .call_tool_by_name("mul", json!({"a": 6, "b": 7}))
        .await
        .unwrap();
    assert_eq!(result.content[0].as_text(), Some("42"));
    let read = registry.read_resource("math://square/12").await.unwrap();
    assert_eq!(
        serde_json::to_value(&read).unwrap()["contents"][0]["text"],
        "144"
    );
}

#[test]
fn a_server_of_attached_items_only() {
    assert_eq!(empty().tool_names().collect::<Vec<_>>(), ["ping"]);
    assert_eq!(untouched().tool_names().collect::<Vec<_>>(), ["add"]);
}

#[test]
fn collected_servers_include_attached_items() {
    let registry = Registry::collected();
    let server = registry.server("attach-math").unwrap();
    assert_eq!(server.tool_names().collect::<Vec<_>>(), ["add", "mul"]);
}
