//! A server that offers several extensions (SEP-2133) declares every one of them, side by
//! side under `capabilities.extensions`, in `server/discover` and `initialize` alike: each
//! feature adds its own entry and none replaces the object another wrote.

use mcp_registry::protocol::TaskSupport;
use mcp_registry::skill::Skill;
use mcp_registry::{Registry, Server, Tool};
use serde_json::{Value, json};

/// No arguments.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct NoArgs {}

fn server() -> Server {
    let long = Tool::builder("long")
        .task_support(TaskSupport::Optional)
        .typed(|_: NoArgs| async { "done" })
        .unwrap();
    let clock = Tool::builder("clock")
        .ui("ui://clock/app.html")
        .typed(|_: NoArgs| async { "12:00" })
        .unwrap();
    let skill = Skill::builder("---\nname: greet\ndescription: Greets people\n---\nSay hi.\n")
        .build()
        .unwrap();
    Server::builder("all")
        .tools([long, clock])
        .skill(skill)
        .build()
        .unwrap()
}

async fn capabilities(registry: &Registry, method: &str, params: Value) -> Value {
    let message = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    let reply = registry.handle_mcp_message("all", message).await.unwrap();
    reply["result"]["capabilities"].clone()
}

#[tokio::test]
async fn every_extension_is_declared_beside_the_others() {
    let registry = Registry::from_servers([server()]);
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}
    });
    let discovered = capabilities(&registry, "server/discover", json!({"_meta": meta})).await;
    let extensions = &discovered["extensions"];
    for id in [
        "io.modelcontextprotocol/tasks",
        "io.modelcontextprotocol/skills",
        "io.modelcontextprotocol/ui",
    ] {
        assert!(
            extensions.get(id).is_some(),
            "{id} missing from {discovered}"
        );
    }
    let initialized = capabilities(
        &registry,
        "initialize",
        json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}),
    )
    .await;
    let extensions = &initialized["extensions"];
    for id in [
        "io.modelcontextprotocol/skills",
        "io.modelcontextprotocol/ui",
    ] {
        assert!(
            extensions.get(id).is_some(),
            "{id} missing from {initialized}"
        );
    }
}
