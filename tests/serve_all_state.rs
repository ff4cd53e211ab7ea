//! A server's own state (`ServerBuilder::extension`) reaches its tools, prompts and resources
//! when they are served through the registry's union (`ALL_SERVERS`), as it does through the
//! server itself.

use mcp_registry::{ALL_SERVERS, Registry, Server, State};
use serde_json::{Value, json};

/// One server's state.
struct House(&'static str);

/// A tool taking its server's state.
#[mcp_registry::mcp_tool]
async fn housed(house: State<House>) -> String {
    format!("tool in {}", house.0)
}

/// A prompt taking its server's state.
#[mcp_registry::mcp_prompt]
async fn housed_prompt(house: State<House>, topic: String) -> String {
    format!("{topic} in {}", house.0)
}

/// A resource template taking its server's state.
#[mcp_registry::mcp_resource(template = "house://{room}")]
async fn housed_room(house: State<House>, room: String) -> String {
    format!("{room} of {}", house.0)
}

mcp_registry::server!(
    name = "estate",
    version = "1.0.0",
    tools = [housed],
    prompts = [housed_prompt],
    resources = [housed_room],
    fn = estate,
    collect = false
);

async fn ask(registry: &Registry, id: i64, method: &str, params: Value) -> Value {
    let message = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
    let reply = registry
        .handle_mcp_message(ALL_SERVERS, message)
        .await
        .expect("a reply");
    assert!(reply.get("error").is_none(), "{reply}");
    reply["result"].clone()
}

#[tokio::test]
async fn the_union_serves_each_item_with_its_own_servers_state() {
    let made = estate();
    let server = Server::builder("estate")
        .tools(made.tools().iter().cloned())
        .prompts(made.prompts().iter().cloned())
        .resource_templates(made.resource_templates().iter().cloned())
        .extension(House("Usher"))
        .build()
        .unwrap();
    let registry = Registry::from_servers([server]);
    let tool = ask(&registry, 1, "tools/call", json!({"name": "housed"})).await;
    assert_eq!(tool["content"][0]["text"], "tool in Usher");
    let prompt = ask(
        &registry,
        2,
        "prompts/get",
        json!({"name": "housed_prompt", "arguments": {"topic": "a fall"}}),
    )
    .await;
    assert_eq!(prompt["messages"][0]["content"]["text"], "a fall in Usher");
    let read = ask(
        &registry,
        3,
        "resources/read",
        json!({"uri": "house://hall"}),
    )
    .await;
    assert_eq!(read["contents"][0]["text"], "hall of Usher");
}
