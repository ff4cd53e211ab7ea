//! Control-protocol routing and the projections an agent host hands its CLI.

use mcp_registry::agent::{
    ControlRouter, McpMessageRequest, sdk_mcp_servers_config, sdk_server_names,
};
use mcp_registry::{Registry, Server, Tool};
use serde_json::{Value, json};

mod common;

use common::control_mcp_message as mcp_message;

fn registry() -> Registry {
    let echo = Tool::new(
        "echo",
        "Echo",
        json!({"type": "object"}),
        |a: Value| async move { a.to_string() },
    )
    .unwrap();
    Registry::from_servers([
        Server::new("util", None, [echo]).unwrap(),
        Server::new("idle", None, []).unwrap(),
    ])
}

#[tokio::test]
async fn an_mcp_message_is_answered_with_a_control_response_carrying_mcp_response() {
    let router = ControlRouter::new(registry());
    let request = mcp_message(
        "req_1",
        "util",
        json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call",
        "params": {"name": "echo", "arguments": {"x": 1}}}),
    );
    assert_eq!(
        router.handle_control_request(&request).await.unwrap(),
        json!({"type": "control_response", "response": {"subtype": "success", "request_id": "req_1",
            "response": {"mcp_response": {"jsonrpc": "2.0", "id": 5,
                "result": {"content": [{"type": "text", "text": "{\"x\":1}"}]}}}}})
    );
    // The text entry point gives the same answer.
    let line = router
        .handle_control_line(&request.to_string())
        .await
        .unwrap();
    assert_eq!(
        serde_json::from_str::<Value>(&line).unwrap()["response"]["request_id"],
        "req_1"
    );
}

#[tokio::test]
async fn an_unknown_server_is_a_jsonrpc_error_naming_it() {
    let router = ControlRouter::new(registry());
    let request = mcp_message(
        "req_2",
        "nope",
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
    );
    let reply = router.handle_control_request(&request).await.unwrap();
    assert_eq!(reply["response"]["subtype"], "success");
    let mcp = &reply["response"]["response"]["mcp_response"];
    assert_eq!(mcp["id"], 1);
    assert_eq!(mcp["error"]["code"], -32601);
    assert!(
        mcp["error"]["message"]
            .as_str()
            .unwrap()
            .contains("\"nope\"")
    );
}

#[tokio::test]
async fn notifications_are_acknowledged_and_malformed_requests_get_error_responses() {
    let router = ControlRouter::new(registry());
    let note = mcp_message(
        "req_3",
        "util",
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    );
    let reply = router.handle_control_request(&note).await.unwrap();
    assert_eq!(
        reply["response"]["response"]["mcp_response"],
        json!({"jsonrpc": "2.0", "result": {}, "id": 0})
    );

    let missing = json!({"type": "control_request", "request_id": "req_4", "request": {"subtype": "mcp_message", "message": {}}});
    let reply = router.handle_control_request(&missing).await.unwrap();
    assert_eq!(reply["response"]["subtype"], "error");
    assert_eq!(reply["response"]["request_id"], "req_4");
    assert!(
        reply["response"]["error"]
            .as_str()
            .unwrap()
            .contains("server_name")
    );

    // Other control requests and other messages are the host's business.
    let other = json!({"type": "control_request", "request_id": "req_5", "request": {"subtype": "can_use_tool"}});
    assert!(router.handle_control_request(&other).await.is_none());
    assert!(
        router
            .handle_control_request(&json!({"type": "user"}))
            .await
            .is_none()
    );
    assert!(router.handle_control_line("not json").await.is_none());
}

#[test]
fn a_request_round_trips_through_its_value() {
    let request = McpMessageRequest {
        request_id: "req_6".into(),
        server_name: "util".into(),
        message: json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}),
    };
    assert_eq!(
        McpMessageRequest::parse(&request.to_value()),
        Some(Ok(request))
    );
}

#[test]
fn projections_list_enabled_servers_as_sdk_servers() {
    let registry = registry();
    assert_eq!(
        sdk_mcp_servers_config(&registry),
        json!({"mcpServers": {"idle": {"type": "sdk", "name": "idle"}, "util": {"type": "sdk", "name": "util"}}})
    );
    registry.toggle_server("idle", false).unwrap();
    assert_eq!(sdk_server_names(&registry), ["util"]);
    let init = ControlRouter::new(registry).initialize_request("init");
    assert_eq!(
        init,
        json!({"type": "control_request", "request_id": "init", "request": {"subtype": "initialize", "sdkMcpServers": ["util"]}})
    );
}
