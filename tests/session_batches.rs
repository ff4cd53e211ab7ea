//! JSON-RPC batches in a stateful ServerSession: served where the negotiated version has them
//! (2025-03-26), refused elsewhere, and refused without overflowing the stack when too deep.

use crate::common::{assert_valid, math_server};
use crate::session::ready_session;

use mcp_registry::{Registry, ServerSession};
use serde_json::{Value, json};

#[tokio::test]
async fn batches_are_served_where_the_negotiated_version_has_them() {
    let registry = Registry::from_servers([math_server()]);
    let (fresh, _out) = ServerSession::new(registry.clone(), "math");
    let batch = json!([
        {"jsonrpc": "2.0", "id": 1, "method": "ping"},
        {"jsonrpc": "2.0", "method": "notifications/progress", "params": {}},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "add", "arguments": {"a": 1, "b": 2}}},
        {"jsonrpc": "2.0", "id": 3, "method": "no/such/method"}
    ]);
    let before = fresh.handle(batch.clone()).await.unwrap();
    assert_eq!(
        before["error"]["code"], -32600,
        "no batch before initialize: {before}"
    );

    let (session, _out) = ready_session(registry.clone(), "math", "2025-03-26").await;
    assert!(session.accepts_batches());
    let replies = session.handle(batch.clone()).await.unwrap();
    assert_valid("2025-03-26", "JSONRPCBatchResponse", &replies);
    let replies = replies.as_array().unwrap();
    assert_eq!(replies.len(), 3, "{replies:?}");
    assert_eq!(replies[0], json!({"jsonrpc": "2.0", "id": 1, "result": {}}));
    assert_eq!(replies[1]["id"], 2);
    assert_eq!(replies[1]["result"]["content"][0]["text"], r#"{"value":3}"#);
    assert_eq!(replies[2]["error"]["code"], -32601);
    // (The -32600 for an element without a usable id has no id: not schema-valid in 2025-03-26.)
    let nested = session
        .handle(json!([[{"jsonrpc": "2.0", "id": 4, "method": "ping"}]]))
        .await
        .unwrap();
    assert_eq!(
        nested[0]["error"]["code"], -32600,
        "a nested batch is not a message"
    );

    let quiet = json!([
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 9}},
        {"jsonrpc": "2.0", "id": 7, "result": {}}
    ]);
    assert_eq!(
        session.handle(quiet.clone()).await,
        None,
        "nothing to answer"
    );
    assert_eq!(session.handle_text(&quiet.to_string()).await, None);
    let empty = session.handle(json!([])).await.unwrap();
    assert_eq!(
        empty["error"]["code"], -32600,
        "one error for an empty batch: {empty}"
    );
    let text = session.handle_text(&batch.to_string()).await.unwrap();
    assert_eq!(
        serde_json::from_str::<Value>(&text)
            .unwrap()
            .as_array()
            .unwrap()
            .len(),
        3
    );

    for version in ["2024-11-05", "2025-06-18", "2025-11-25"] {
        let (session, _out) = ready_session(registry.clone(), "math", version).await;
        assert!(!session.accepts_batches(), "{version}");
        let refused = session.handle(batch.clone()).await.unwrap();
        assert_eq!(refused["error"]["code"], -32600, "{version}: {refused}");
        let refused = session.handle(quiet.clone()).await.unwrap();
        assert_eq!(refused["error"]["code"], -32600, "{version}: {refused}");
    }
}

/// Regression (found by tests/fuzz_messages.rs): a session refusing a batch, or a batch too
/// deep, dropped it with the recursive default drop and overflowed the stack on a value
/// nested a million levels. Both are refused with one -32600, and the process lives.
#[tokio::test]
async fn over_deep_batches_are_refused_without_overflowing() {
    fn nested(levels: usize) -> Value {
        let mut v = json!(1);
        for _ in 0..levels {
            v = Value::Array(vec![v]);
        }
        v
    }
    for version in ["2025-11-25", "2025-03-26"] {
        let (session, _out) =
            ready_session(Registry::from_servers([math_server()]), "math", version).await;
        let reply = session
            .handle(Value::Array(vec![nested(1_000_000)]))
            .await
            .unwrap();
        assert_eq!(reply["error"]["code"], -32600, "{version}: {reply}");
        // Just over the limit as a whole (a notification 127 deep inside the batch array).
        let mut deep_note =
            json!({"jsonrpc": "2.0", "method": "notifications/initialized", "params": {}});
        deep_note["params"]["x"] = nested(125);
        let reply = session.handle(Value::Array(vec![deep_note])).await.unwrap();
        assert_eq!(reply["error"]["code"], -32600, "{version}: {reply}");
    }
}
