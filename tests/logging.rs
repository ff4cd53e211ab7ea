//! Logging: `logging/setLevel` per legacy session, the 2026-07-28 level in each request's
//! `_meta`, `ToolContext::log` sending `notifications/message` at or above the level (and
//! nothing without one) and the `logging` capability (the same messages as `tracing` events:
//! `logging_tracing.rs`); replies and notifications validated against the official schema of each version.

use crate::common;

use std::sync::{Arc, Mutex};

use common::logs::registry;
use common::{LEGACY, MODERN, assert_reply, assert_valid, modern_meta};
use mcp_registry::protocol::LoggingLevel;
use mcp_registry::{CallOptions, NotificationSink, ServerSession};
use serde_json::{Value, json};

fn call(id: u64) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "chatty", "arguments": {}}})
}

fn drain(rx: &mut mcp_registry::Outgoing) -> Vec<Value> {
    std::iter::from_fn(|| rx.try_recv().ok()).collect()
}

fn levels(messages: &[Value]) -> Vec<&str> {
    messages
        .iter()
        .filter(|m| m["method"] == "notifications/message")
        .map(|m| m["params"]["level"].as_str().unwrap())
        .collect()
}

#[tokio::test]
async fn a_legacy_session_sends_what_set_level_asks_for() {
    for version in LEGACY {
        let (session, mut out) = ServerSession::new(registry(), "logs");
        let init = session
            .handle(json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}))
            .await
            .unwrap();
        assert_reply(version, "InitializeResult", &init);
        assert_eq!(init["result"]["capabilities"]["logging"], json!({}));
        session
            .handle(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;

        // Before setLevel: nothing is sent.
        let reply = session.handle(call(2)).await.unwrap();
        assert_eq!(reply["result"]["content"][0]["text"], "level None");
        assert!(levels(&drain(&mut out)).is_empty());

        let set = session
            .handle(json!({"jsonrpc": "2.0", "id": 3, "method": "logging/setLevel", "params": {"level": "warning"}}))
            .await
            .unwrap();
        assert_reply(version, "Result", &set);
        assert_eq!(set["result"], json!({}));
        assert_eq!(session.log_level(), Some(LoggingLevel::Warning));

        session.handle(call(4)).await.unwrap();
        let sent = drain(&mut out);
        assert_eq!(levels(&sent), ["warning", "error"]);
        for message in &sent {
            assert_valid(version, "LoggingMessageNotification", message);
        }
        assert_eq!(
            sent[0]["params"],
            json!({"level": "warning", "logger": "steps", "data": {"slow_ms": 900}})
        );
        assert!(sent[1]["params"].get("logger").is_none());

        session
            .handle(json!({"jsonrpc": "2.0", "id": 5, "method": "logging/setLevel", "params": {"level": "debug"}}))
            .await;
        session.handle(call(6)).await.unwrap();
        assert_eq!(
            levels(&drain(&mut out)),
            ["debug", "info", "warning", "error"]
        );
    }
}

#[tokio::test]
async fn an_unknown_level_is_refused() {
    let (session, _out) = ServerSession::new(registry(), "logs");
    session
        .handle(json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}))
        .await;
    let reply = session
        .handle(json!({"jsonrpc": "2.0", "id": 2, "method": "logging/setLevel", "params": {"level": "loud"}}))
        .await
        .unwrap();
    assert_reply("2025-11-25", "Result", &reply);
    assert_eq!(reply["error"]["code"], -32602);
    assert_eq!(session.log_level(), None);
}

#[tokio::test]
async fn the_stateless_legacy_entry_point_keeps_no_level() {
    let r = registry();
    let init = r
        .handle_mcp_message(
            "logs",
            json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}),
        )
        .await
        .unwrap();
    assert!(init["result"]["capabilities"].get("logging").is_none());
    let set = r
        .handle_mcp_message(
            "logs",
            json!({"jsonrpc": "2.0", "id": 2, "method": "logging/setLevel", "params": {"level": "info"}}),
        )
        .await
        .unwrap();
    assert_eq!(set["error"]["code"], -32601);
}

fn collecting() -> (NotificationSink, Arc<Mutex<Vec<Value>>>) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = {
        let seen = seen.clone();
        NotificationSink::new(move |n| seen.lock().unwrap().push(n))
    };
    (sink, seen)
}

fn modern_call(level: Option<Value>) -> Value {
    let mut meta = modern_meta();
    if let Some(level) = level {
        meta["io.modelcontextprotocol/logLevel"] = level;
    }
    json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call",
           "params": {"name": "chatty", "arguments": {}, "_meta": meta}})
}

#[tokio::test]
async fn a_modern_request_carries_its_level_and_gets_nothing_without_one() {
    let r = registry();
    let discover = r
        .handle_mcp_message(
            "logs",
            json!({"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": modern_meta()}}),
        )
        .await
        .unwrap();
    assert_reply(MODERN, "DiscoverResult", &discover);
    assert_eq!(discover["result"]["capabilities"]["logging"], json!({}));

    let (sink, seen) = collecting();
    let reply = r
        .handle_mcp_message("logs", modern_call(Some(json!("info"))))
        .options(CallOptions::new().notifications(sink))
        .await
        .unwrap();
    assert_reply(MODERN, "CallToolResult", &reply);
    let sent = seen.lock().unwrap().clone();
    assert_eq!(levels(&sent), ["info", "warning", "error"]);
    for message in &sent {
        assert_valid(MODERN, "LoggingMessageNotification", message);
    }

    // No level in `_meta`: nothing, even when the in-process caller asked for one.
    let (sink, seen) = collecting();
    let options = CallOptions::new()
        .notifications(sink)
        .log_level(LoggingLevel::Debug);
    let reply = r
        .handle_mcp_message("logs", modern_call(None))
        .options(options)
        .await
        .unwrap();
    assert_eq!(reply["result"]["content"][0]["text"], "level None");
    assert!(seen.lock().unwrap().is_empty());

    // The text path reads the same `_meta`.
    let (sink, seen) = collecting();
    let text = r
        .handle_mcp_text("logs", &modern_call(Some(json!("error"))).to_string())
        .options(CallOptions::new().notifications(sink))
        .await
        .unwrap();
    assert!(text.contains("level Some(Error)"), "{text}");
    assert_eq!(levels(&seen.lock().unwrap()), ["error"]);
}

#[tokio::test]
async fn a_modern_request_with_an_unknown_level_or_set_level_is_refused() {
    let r = registry();
    for level in [json!("loud"), json!(3)] {
        let reply = r
            .handle_mcp_message("logs", modern_call(Some(level)))
            .await
            .unwrap();
        assert_reply(MODERN, "CallToolResult", &reply);
        assert_eq!(reply["error"]["code"], -32602);
        assert!(
            reply["error"]["message"]
                .as_str()
                .unwrap()
                .contains("logLevel")
        );
    }
    let set = r
        .handle_mcp_message(
            "logs",
            json!({"jsonrpc": "2.0", "id": 2, "method": "logging/setLevel",
                   "params": {"level": "info", "_meta": modern_meta()}}),
        )
        .await
        .unwrap();
    assert_eq!(set["error"]["code"], -32601);
}

#[tokio::test]
async fn in_process_calls_choose_their_level() {
    let r = registry();
    let (sink, seen) = collecting();
    let result = r
        .call_tool_by_name("chatty", json!({}))
        .notifications(sink.clone())
        .log_level(LoggingLevel::Error)
        .await
        .unwrap();
    assert_eq!(result.first_text(), Some("level Some(Error)"));
    assert_eq!(levels(&seen.lock().unwrap()), ["error"]);
    // A level but no sink: nothing to send to, and the tool sees no level.
    let result = r
        .call_tool_by_name("chatty", json!({}))
        .log_level(LoggingLevel::Debug)
        .await
        .unwrap();
    assert_eq!(result.first_text(), Some("level None"));
}
