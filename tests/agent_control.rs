//! Control-protocol routing and the projections an agent host hands its CLI.

use mcp_registry::agent::{
    ControlRouter, McpMessageRequest, PermissionDecision, sdk_mcp_servers_config, sdk_server_names,
};
use mcp_registry::{NotificationSink, Registry, Server, Tool, ToolContext};
use serde_json::{Value, json};

use crate::common;

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
    let other = json!({"type": "control_request", "request_id": "req_5", "request": {"subtype": "interrupt"}});
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

/// A router with an outgoing channel: what it sends by itself lands in the receiver.
fn live_router(registry: Registry) -> (ControlRouter, tokio::sync::mpsc::UnboundedReceiver<Value>) {
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    let router = ControlRouter::new(registry).with_outgoing(NotificationSink::from_channel(tx));
    (router, rx)
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct NoArguments {}

fn progress_server() -> Server {
    let count = Tool::builder("count")
        .description("Counts to two")
        .typed(|ctx: ToolContext, _: NoArguments| async move {
            ctx.progress(1.0, Some(2.0), Some("one")).unwrap();
            ctx.progress(2.0, Some(2.0), Some("two")).unwrap();
            "done"
        })
        .unwrap();
    Server::new("count", None, [count]).unwrap()
}

#[tokio::test]
async fn progress_reaches_the_runtime_as_mcp_message_control_requests_before_the_reply() {
    let (router, mut outgoing) = live_router(Registry::from_servers([progress_server()]));
    let call = mcp_message(
        "req_1",
        "count",
        json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call",
               "params": {"name": "count", "arguments": {}, "_meta": {"progressToken": 4}}}),
    );
    let reply = router.handle_control_request(&call).await.unwrap();
    assert_eq!(
        reply["response"]["response"]["mcp_response"]["result"]["content"][0]["text"],
        "done"
    );
    let mut sent = Vec::new();
    while let Ok(message) = outgoing.try_recv() {
        sent.push(message);
    }
    assert_eq!(sent.len(), 2, "{sent:?}");
    for (n, message) in sent.iter().enumerate() {
        // The TypeScript Agent SDK's shape: a control request the runtime acknowledges.
        assert_eq!(message["type"], "control_request");
        assert_eq!(message["request"]["subtype"], "mcp_message");
        assert_eq!(message["request"]["server_name"], "count");
        let notification = &message["request"]["message"];
        assert_eq!(notification["method"], "notifications/progress");
        assert_eq!(notification["params"]["progressToken"], 4);
        assert_eq!(notification["params"]["progress"], (n + 1) as f64);
        assert!(notification.get("id").is_none());
    }
    assert_ne!(sent[0]["request_id"], sent[1]["request_id"]);

    // Without an outgoing sink the same call answers the same, silently.
    let quiet = ControlRouter::new(Registry::from_servers([progress_server()]));
    let reply = quiet.handle_control_request(&call).await.unwrap();
    assert_eq!(reply["response"]["subtype"], "success");
}

#[tokio::test]
async fn changes_are_relayed_and_a_disabled_server_lists_no_tools() {
    let registry = registry();
    let (router, mut outgoing) = live_router(registry.clone());
    let relay = tokio::spawn(router.relay_changes());
    tokio::task::yield_now().await;
    registry.toggle_server("util", false).unwrap();
    let changed = tokio::time::timeout(std::time::Duration::from_secs(5), outgoing.recv())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(changed["request"]["server_name"], "util");
    assert_eq!(
        changed["request"]["message"],
        json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
    );
    // An error would leave the runtime's last list (with util's tools) in place.
    let list = mcp_message(
        "req_2",
        "util",
        json!({"jsonrpc": "2.0", "id": "l", "method": "tools/list"}),
    );
    let reply = router.handle_control_request(&list).await.unwrap();
    assert_eq!(
        reply["response"]["response"]["mcp_response"],
        json!({"jsonrpc": "2.0", "id": "l", "result": {"tools": []}})
    );
    // A call is still refused as for any disabled server.
    let call = mcp_message(
        "req_3",
        "util",
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "echo"}}),
    );
    let reply = router.handle_control_request(&call).await.unwrap();
    assert!(reply["response"]["response"]["mcp_response"]["error"].is_object());
    relay.abort();
}

#[tokio::test]
async fn can_use_tool_is_answered_by_the_host_callback() {
    let router = ControlRouter::new(registry()).on_permission_request(|request| async move {
        if request.tool_name == "mcp__util__echo" {
            PermissionDecision::deny("not today")
        } else {
            PermissionDecision::Allow {
                updated_input: Some(json!({"patched": true})),
            }
        }
    });
    let ask = |tool: &str| {
        json!({"type": "control_request", "request_id": format!("perm_{tool}"), "request": {
            "subtype": "can_use_tool", "tool_name": tool, "input": {"x": 1}, "tool_use_id": "toolu_1"}})
    };
    let denied = router
        .handle_control_request(&ask("mcp__util__echo"))
        .await
        .unwrap();
    assert_eq!(
        denied,
        json!({"type": "control_response", "response": {"subtype": "success",
            "request_id": "perm_mcp__util__echo",
            "response": {"behavior": "deny", "message": "not today", "toolUseID": "toolu_1"}}})
    );
    let allowed = router.handle_control_request(&ask("Other")).await.unwrap();
    assert_eq!(
        allowed["response"]["response"],
        json!({"behavior": "allow", "updatedInput": {"patched": true}, "toolUseID": "toolu_1"})
    );
    // Without a callback, permission requests stay the host's.
    assert!(
        ControlRouter::new(registry())
            .handle_control_request(&ask("Other"))
            .await
            .is_none()
    );
}

#[tokio::test]
async fn server_info_carries_the_title_in_both_eras() {
    let titled = Server::builder("t")
        .title("Titled server")
        .version("2.0.0")
        .build()
        .unwrap();
    let router = ControlRouter::new(Registry::from_servers([titled]));
    let legacy = mcp_message(
        "req_1",
        "t",
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "c", "version": "0"}}}),
    );
    let reply = router.handle_control_request(&legacy).await.unwrap();
    let info = &reply["response"]["response"]["mcp_response"]["result"]["serverInfo"];
    assert_eq!(info["title"], "Titled server");
    let modern = mcp_message(
        "req_2",
        "t",
        json!({"jsonrpc": "2.0", "id": 2, "method": "server/discover", "params": {"_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": {"name": "c", "version": "0"},
            "io.modelcontextprotocol/clientCapabilities": {}}}}),
    );
    let reply = router.handle_control_request(&modern).await.unwrap();
    assert_eq!(
        reply["response"]["response"]["mcp_response"]["result"]["_meta"]["io.modelcontextprotocol/serverInfo"],
        json!({"name": "t", "version": "2.0.0", "title": "Titled server"})
    );
}

/// A tool that asks the user to confirm, in an agent session.
fn confirming_server() -> Server {
    #[derive(serde::Deserialize, schemars::JsonSchema)]
    struct Confirm {
        ok: bool,
    }
    #[derive(serde::Deserialize, schemars::JsonSchema)]
    struct NoArgs {}
    let wipe = Tool::builder("wipe")
        .typed(|ctx: ToolContext, _: NoArgs| async move {
            match ctx.elicit::<Confirm>("Really wipe?").await {
                Ok(mcp_registry::Elicitation::Accept(Confirm { ok: true })) => "wiped".to_owned(),
                Ok(_) => "kept".to_owned(),
                Err(e) => format!("error: {e}"),
            }
        })
        .unwrap();
    Server::new("disk", None, [wipe]).unwrap()
}

fn wipe_request() -> Value {
    mcp_message(
        "req_9",
        "disk",
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "wipe"}}),
    )
}

#[tokio::test]
async fn a_tool_asks_the_user_through_the_routers_input_handler() {
    use mcp_registry::protocol::ElicitResult;
    use mcp_registry::tool::InputCallbacks;
    let router = ControlRouter::new(Registry::from_servers([confirming_server()]))
        .with_input_handler(InputCallbacks::new().on_elicit(|_| async {
            Ok(ElicitResult::accept(
                json!({"ok": true}).as_object().unwrap().clone(),
            ))
        }));
    let reply = router
        .handle_control_request(&wipe_request())
        .await
        .unwrap();
    assert_eq!(
        reply["response"]["response"]["mcp_response"]["result"]["content"][0]["text"],
        "wiped"
    );
    // Without one, the tool is told what to configure.
    let bare = ControlRouter::new(Registry::from_servers([confirming_server()]));
    let reply = bare.handle_control_request(&wipe_request()).await.unwrap();
    let text = reply["response"]["response"]["mcp_response"]["result"]["content"][0]["text"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(text.contains("ControlRouter::with_input_handler"), "{text}");
}
