//! The renamed and moved public items keep their old paths, deprecated (CHANGELOG, Unreleased):
//! code written against them still builds, and does the same.

#![allow(deprecated)]

use mcp_registry::ToolContext;
use serde_json::{Value, json};

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Name {
    name: String,
}

#[tokio::test]
async fn old_paths_still_build_and_answer_alike() {
    // Modules that became implementation detail: their items at their old paths.
    let tool = mcp_registry::tool::Tool::builder("greet")
        .description("Greets")
        .typed_with_context(|_ctx: ToolContext, args: Name| async move {
            format!("hello {}", args.name)
        })
        .expect("a valid tool");
    let server: mcp_registry::server::Server =
        mcp_registry::server::Server::new("old", None, [tool]).expect("a valid server");
    let registry: mcp_registry::registry::Registry =
        mcp_registry::registry::Registry::from_servers([server]);
    let _: Option<mcp_registry::dispatch::Outgoing> = None;

    // Renamed types, as aliases of the new ones.
    let _: mcp_registry::protocol::Request<Value> =
        serde_json::from_value(json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}))
            .expect("a request");
    let policy: mcp_registry::client::CallPolicy = mcp_registry::client::CallPolicy::new();
    let _: mcp_registry::client::RequestPolicy = policy.retries(1);
    let _ = mcp_registry::client::Client::builder()
        .call_policy(mcp_registry::client::RequestPolicy::new());

    let result = registry
        .call_tool_by_name("greet", json!({"name": "old"}))
        .await
        .expect("the tool answers");
    assert_eq!(result.first_text(), Some("hello old"));
}
