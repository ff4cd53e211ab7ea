//! `handle_mcp_message`, `handle_mcp_text` and sessions answer alike: values nested too deep
//! are refused on every path, and a `tools/call` read in place from text answers as its
//! parsed value does.

use crate::common;

use common::dispatch::ask;
use mcp_registry::protocol::MAX_DEPTH;
use mcp_registry::{CallError, NotificationSink, Registry, Server, Tool, ToolContext};
use serde_json::{Value, json};

/// `levels` nested arrays around `1`, built without recursion.
fn nested(levels: usize) -> Value {
    let mut v = json!(1);
    for _ in 0..levels {
        v = Value::Array(vec![v]);
    }
    v
}

/// Regression: a value nested ~8,000 deep handed over already parsed (or returned by a tool)
/// overflowed the stack and aborted the process. Every path now refuses it, like text input.
#[tokio::test]
async fn over_deep_values_are_refused_on_every_path() {
    let r = deep_registry();
    over_deep_messages_are_refused(&r).await;
    over_deep_arguments_and_results_fail_the_call(&r).await;

    // A session refuses it the same way.
    let (session, _outgoing) = mcp_registry::ServerSession::new(r.clone(), "math");
    let mut message = json!({"jsonrpc": "2.0", "id": 11, "method": "ping", "params": {}});
    message["params"]["x"] = nested(8_000);
    let reply = session.handle(message).await.unwrap();
    assert_eq!(reply["error"]["code"], -32600, "{reply}");
    assert_eq!(reply["id"], 11);
}

/// A `math` server whose `deep` tool returns a structured result nested `levels` deep.
fn deep_registry() -> Registry {
    let deep_tool = Tool::new(
        "deep",
        "returns a deeply nested structured result",
        json!({"type": "object", "properties": {"levels": {"type": "integer"}}}),
        |args: Value| async move {
            let levels = args["levels"].as_u64().unwrap_or(0) as usize;
            mcp_registry::CallToolResult::structured(nested(levels))
        },
    )
    .unwrap();
    Registry::from_servers([Server::builder("math").tools([deep_tool]).build().unwrap()])
}

/// Requests, members nobody reads, responses, notifications and batches too deep: refused
/// (-32600 under the request's id) or dropped; just inside the limit still works.
async fn over_deep_messages_are_refused(r: &Registry) {
    // (`json!` would serialize an embedded value recursively: deep parts are put in place.)
    // A request: -32600 under its id.
    let mut message = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
        "params": {"name": "deep", "arguments": {}}});
    message["params"]["arguments"]["x"] = nested(8_000);
    let reply = ask(r, message).await;
    assert_eq!(reply["error"]["code"], -32600, "{reply}");
    assert_eq!(reply["id"], 7);
    assert!(
        reply["error"]["message"]
            .as_str()
            .unwrap()
            .contains("deeper than 127")
    );
    // A member nobody reads, that deep: the request is refused just the same.
    let mut extra = json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call",
        "params": {"name": "deep", "arguments": {}}});
    extra["x"] = nested(8_000);
    let reply = ask(r, extra).await;
    assert_eq!(reply["error"]["code"], -32600, "{reply}");
    assert_eq!(reply["id"], 9);
    // A response that deep: never answered.
    let mut response = json!({"jsonrpc": "2.0", "id": 3});
    response["result"] = nested(8_000);
    assert!(r.handle_mcp_message("math", response).await.is_none());
    // A notification that deep: dropped, no reply.
    let mut note = json!({"jsonrpc": "2.0", "method": "notifications/x", "params": {}});
    note["params"]["x"] = nested(8_000);
    assert!(r.handle_mcp_message("math", note).await.is_none());
    // A batch that deep: one -32600.
    let batch = Value::Array(vec![nested(8_000)]);
    assert_eq!(ask(r, batch).await["error"]["code"], -32600);
    // Just inside the limit still works (envelope, params, arguments, then the data).
    let mut ok = json!({"jsonrpc": "2.0", "id": 8, "method": "tools/call",
        "params": {"name": "deep", "arguments": {"levels": 3}}});
    ok["params"]["arguments"]["x"] = nested(MAX_DEPTH - 3);
    let reply = ask(r, ok).await;
    assert_eq!(reply["result"]["structuredContent"], nested(3), "{reply}");
}

/// Over-deep arguments are refused naming the tool; a tool's over-deep result fails the call
/// with a clear message on every path, and the registry goes on.
async fn over_deep_arguments_and_results_fail_the_call(r: &Registry) {
    // call_tool_by_name: over-deep arguments are refused, naming the tool.
    let mut args = json!({});
    args["x"] = nested(8_000);
    let err = r.call_tool_by_name("deep", args).await.unwrap_err();
    assert!(
        matches!(err, CallError::InvalidArguments { ref tool, .. } if tool == "deep"),
        "{err}"
    );

    // A tool's over-deep result: the call fails with a clear message; the registry goes on.
    let err = r
        .call_tool_by_name("deep", json!({"levels": 8_000}))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("deeper than 127"), "{err}");
    let reply = ask(
        r,
        json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call",
            "params": {"name": "deep", "arguments": {"levels": 8_000}}}),
    )
    .await;
    assert_eq!(reply["result"]["isError"], true, "{reply}");
    let text = r
        .handle_mcp_text(
            "math",
            r#"{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"deep","arguments":{"levels":8000}}}"#,
        )
        .await
        .unwrap();
    assert!(text.contains("deeper than 127"), "{text}");
}

/// The text path reads a plain `tools/call` in place and hands the tool its arguments as
/// text: what the tool sees, and the reply, are those of the value path, escapes, `_meta`
/// and argument errors included.
#[tokio::test]
async fn text_calls_read_in_place_answer_as_values_do() {
    let registry = echo_registry();
    let texts = TEXT_CALLS;
    for text in texts {
        let value: Value = serde_json::from_str(text).expect("JSON");
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let options = || {
            mcp_registry::CallOptions::new()
                .notifications(NotificationSink::from_channel(tx.clone()))
        };
        let by_value = registry
            .handle_mcp_message("s", value)
            .options(options())
            .await
            .expect("a reply");
        let value_progress: Vec<Value> = std::iter::from_fn(|| rx.try_recv().ok()).collect();
        let by_text = registry
            .handle_mcp_text("s", text)
            .options(options())
            .await
            .expect("a reply");
        let text_progress: Vec<Value> = std::iter::from_fn(|| rx.try_recv().ok()).collect();
        let by_text: Value = serde_json::from_str(&by_text).expect("a JSON reply");
        assert_eq!(by_text, by_value, "{text}");
        assert_eq!(text_progress, value_progress, "{text}");
    }
    let ok = registry
        .handle_mcp_text("s", texts[0])
        .await
        .expect("a reply");
    let ok: Value = serde_json::from_str(&ok).expect("JSON");
    assert_eq!(ok["result"]["content"][0]["text"], "a\"béa\"bé|");
    let meta = registry
        .handle_mcp_text("s", texts[2])
        .await
        .expect("a reply");
    let meta: Value = serde_json::from_str(&meta).expect("JSON");
    assert_eq!(meta["result"]["content"][0]["text"], "t|\"p\"");
    let wrong = registry
        .handle_mcp_text("s", texts[3])
        .await
        .expect("a reply");
    let wrong: Value = serde_json::from_str(&wrong).expect("JSON");
    assert_eq!(wrong["result"]["isError"], true);
    assert!(
        wrong["result"]["content"][0]["text"]
            .as_str()
            .is_some_and(|t| t.contains("`text`")),
        "{wrong}"
    );
}

/// The arguments of `echo.it`.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Echo {
    text: String,
    times: Option<u32>,
}

/// A server `s` whose tool `echo.it` answers `text` `times` times, then its progress token.
fn echo_registry() -> Registry {
    let echo = Tool::builder("echo.it")
        .typed(|ctx: ToolContext, args: Echo| async move {
            let _ = ctx.progress(1.0, None, None);
            format!(
                "{}|{}",
                args.text.repeat(args.times.unwrap_or(1) as usize),
                ctx.progress_token()
                    .map(Value::to_string)
                    .unwrap_or_default()
            )
        })
        .expect("a tool");
    Registry::from_servers([Server::new("s", None, [echo]).expect("a server")])
}

/// Calls of `echo.it` as text, each sent to the value path and to the text path.
const TEXT_CALLS: [&str; 9] = [
    // Plain, escaped name and text, unicode, `_meta` with a progress token.
    r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo.it","arguments":{"text":"a\"b\u00e9","times":2}}}"#,
    r#"{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"name":"echo\u002eit","arguments":{"text":"ü"}}}"#,
    r#"{"params":{"_meta":{"progressToken":"p"},"arguments":{"text":"t"},"name":"echo.it"},"method":"tools/call","id":7,"jsonrpc":"2.0"}"#,
    // Argument errors: a wrong type, a missing field, arguments that are no object.
    r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo.it","arguments":{"text":5}}}"#,
    r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo.it","arguments":{}}}"#,
    r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"echo.it","arguments":[1]}}"#,
    r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":7}}"#,
    r#"{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"nope"}}"#,
    r#"{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"echo.it","arguments":null,"_meta":5}}"#,
];
