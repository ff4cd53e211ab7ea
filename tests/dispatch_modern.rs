//! `handle_mcp_message` in the 2026-07-28 era: stateless requests that carry their version
//! and capabilities in `_meta`, unsupported versions, and the cached `tools/list`.

use crate::common;

use common::dispatch::{ask, registry};
use common::{MODERN, assert_complete_from, assert_valid, math_server, modern_meta};
use mcp_registry::{Registry, Server};
use serde_json::{Value, json};

fn modern(id: i64, method: &str, mut params: Value) -> Value {
    params["_meta"] = modern_meta();
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

#[tokio::test]
async fn modern_era_is_stateless() {
    let r = Registry::builder()
        .list_ttl(std::time::Duration::from_secs(60))
        .server(math_server())
        .build();
    let discover = ask(&r, modern(1, "server/discover", json!({}))).await;
    assert_valid(MODERN, "DiscoverResultResponse", &discover);
    let result = &discover["result"];
    assert_eq!(result["resultType"], "complete");
    assert_eq!(result["supportedVersions"][0], MODERN);
    assert!(
        result["supportedVersions"]
            .as_array()
            .unwrap()
            .contains(&json!("2024-11-05"))
    );
    assert_eq!(
        result["_meta"]["io.modelcontextprotocol/serverInfo"],
        json!({"name": "math", "version": "1.2.0"})
    );
    assert_eq!(result["ttlMs"], 60000);
    assert_eq!(result["cacheScope"], "public");
    assert_eq!(result["instructions"], "Arithmetic tools");

    // No initialize needed.
    let list = ask(&r, modern(2, "tools/list", json!({}))).await;
    assert_valid(MODERN, "ListToolsResultResponse", &list);
    assert_eq!(list["result"]["ttlMs"], 60000);
    assert_eq!(list["result"]["tools"].as_array().unwrap().len(), 5);
    let text = r
        .handle_mcp_text("math", &modern(2, "tools/list", json!({})).to_string())
        .await
        .unwrap();
    assert_eq!(serde_json::from_str::<Value>(&text).unwrap(), list);

    let call = ask(
        &r,
        modern(
            3,
            "tools/call",
            json!({"name": "add", "arguments": {"a": 40, "b": 2}}),
        ),
    )
    .await;
    assert_valid(MODERN, "CallToolResultResponse", &call);
    assert_eq!(call["result"]["structuredContent"], json!({"value": 42}));
    assert_complete_from(&call, "math");

    let failed = ask(
        &r,
        modern(
            4,
            "tools/call",
            json!({"name": "divide", "arguments": {"a": 1, "b": 0}}),
        ),
    )
    .await;
    assert_valid(MODERN, "CallToolResultResponse", &failed);
    assert_eq!(failed["result"]["isError"], true);

    let unknown_tool = ask(&r, modern(5, "tools/call", json!({"name": "nope"}))).await;
    assert_valid(MODERN, "JSONRPCErrorResponse", &unknown_tool);
    assert_eq!(unknown_tool["error"]["code"], -32602);

    // ping was removed in 2026-07-28.
    let ping = ask(&r, modern(6, "ping", json!({}))).await;
    assert_eq!(ping["error"]["code"], -32601);
}

#[tokio::test]
async fn modern_requests_must_carry_version_and_capabilities() {
    let r = registry();
    let bare = ask(
        &r,
        json!({"jsonrpc": "2.0", "id": 1, "method": "server/discover"}),
    )
    .await;
    assert_eq!(bare["error"]["code"], -32602);
    assert!(
        bare["error"]["message"]
            .as_str()
            .unwrap()
            .contains("protocolVersion")
    );
    let mut no_caps = modern(2, "tools/list", json!({}));
    no_caps["params"]["_meta"]
        .as_object_mut()
        .unwrap()
        .remove("io.modelcontextprotocol/clientCapabilities");
    let reply = ask(&r, no_caps).await;
    assert_eq!(reply["error"]["code"], -32602);
    assert!(
        reply["error"]["message"]
            .as_str()
            .unwrap()
            .contains("clientCapabilities")
    );
    assert_valid(MODERN, "JSONRPCErrorResponse", &reply);
}

#[tokio::test]
async fn unsupported_version_is_32022() {
    let r = registry();
    let mut message = modern(1, "tools/list", json!({}));
    message["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] = json!("1900-01-01");
    let reply = ask(&r, message).await;
    assert_valid(MODERN, "UnsupportedProtocolVersionError", &reply);
    assert_eq!(reply["error"]["code"], -32022);
    assert_eq!(reply["error"]["data"]["requested"], "1900-01-01");
    assert!(
        reply["error"]["data"]["supported"]
            .as_array()
            .unwrap()
            .contains(&json!(MODERN))
    );
}

#[tokio::test]
async fn tools_list_of_ten_thousand_tools_is_served_from_the_cached_listing() {
    let tools = (0..10_000).map(|i| {
        mcp_registry::Tool::new(
            format!("t{i:05}"),
            "x",
            json!({"type": "object"}),
            |_| async { "" },
        )
        .unwrap()
    });
    let server = Server::new("big", None, tools).unwrap();
    let r = Registry::from_servers([server]);
    let list = r
        .handle_mcp_message(
            "big",
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
        )
        .await
        .unwrap();
    let tools = list["result"]["tools"].as_array().unwrap();
    assert_eq!(tools.len(), 10_000);
    assert_eq!(tools[9_999]["name"], "t09999");
}
