//! `handle_mcp_message`: both protocol eras, every error path, each reply validated against
//! the official JSON Schema of the version in play.

use crate::common;

use common::dispatch::{ask, registry};
use common::{LEGACY, assert_reply, assert_valid, math_server, small_server};
use mcp_registry::Registry;
use serde_json::{Value, json};

#[tokio::test]
async fn legacy_handshake_for_every_version() {
    let r = registry();
    for version in LEGACY {
        let reply = ask(
            &r,
            json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}),
        )
        .await;
        assert_reply(version, "InitializeResult", &reply);
        assert_eq!(
            reply["result"]["protocolVersion"], version,
            "a supported version is echoed"
        );
        assert_eq!(
            reply["result"]["serverInfo"],
            json!({"name": "math", "version": "1.2.0"})
        );
        assert_eq!(reply["result"]["instructions"], "Arithmetic tools");
        assert!(reply["result"]["capabilities"]["tools"].is_object());

        let ping = ask(&r, json!({"jsonrpc": "2.0", "id": "p", "method": "ping"})).await;
        assert_reply(version, "EmptyResult", &ping);
        assert_eq!(ping, json!({"jsonrpc": "2.0", "id": "p", "result": {}}));

        let list = ask(
            &r,
            json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
        )
        .await;
        assert_reply(version, "ListToolsResult", &list);

        let call = ask(
            &r,
            json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "add", "arguments": {"a": 1, "b": 2}}}),
        )
        .await;
        assert_reply(version, "CallToolResult", &call);
    }
    let unknown_version = ask(
        &r,
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "1999-01-01", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}),
    )
    .await;
    assert_eq!(unknown_version["result"]["protocolVersion"], "2025-11-25");
    assert!(
        r.handle_mcp_message(
            "math",
            json!({"jsonrpc": "2.0", "method": "notifications/initialized"})
        )
        .await
        .is_none()
    );
}

#[tokio::test]
async fn tools_list_is_sorted_and_complete() {
    let r = registry();
    let list = ask(
        &r,
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
    )
    .await;
    let names: Vec<&str> = list["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["add", "boom", "divide", "echo", "sleep"]);
    let add = &list["result"]["tools"][0];
    assert_eq!(add["title"], "Add");
    assert_eq!(add["description"], "Add two integers");
    assert_eq!(
        add["annotations"],
        json!({"title": "Add", "readOnlyHint": true, "idempotentHint": true})
    );
    assert_eq!(add["inputSchema"]["type"], "object");
    assert_eq!(add["inputSchema"]["required"], json!(["a"]));
    assert_eq!(
        add["inputSchema"]["properties"]["a"]["description"],
        "The left operand."
    );
    assert_eq!(
        add["outputSchema"]["properties"]["value"]["type"],
        "integer"
    );
    assert!(list["result"].get("nextCursor").is_none());
    // Byte-identical run to run, and the text entry writes the same reply.
    let again = ask(
        &r,
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
    )
    .await;
    assert_eq!(list.to_string(), again.to_string());
    let text = r
        .handle_mcp_text("math", r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#)
        .await
        .unwrap();
    assert_eq!(serde_json::from_str::<Value>(&text).unwrap(), list);
}

#[tokio::test]
async fn pagination_with_opaque_cursors() {
    let r = Registry::builder()
        .page_size(2)
        .server(math_server())
        .build();
    let mut names = Vec::new();
    let mut cursor: Option<String> = None;
    let mut pages = 0;
    loop {
        let mut params = json!({});
        if let Some(c) = &cursor {
            params["cursor"] = json!(c);
        }
        let page = ask(
            &r,
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": params}),
        )
        .await;
        assert_reply("2025-11-25", "ListToolsResult", &page);
        pages += 1;
        names.extend(
            page["result"]["tools"]
                .as_array()
                .unwrap()
                .iter()
                .map(|t| t["name"].as_str().unwrap().to_owned()),
        );
        match page["result"].get("nextCursor") {
            Some(c) => cursor = Some(c.as_str().unwrap().to_owned()),
            None => break,
        }
    }
    assert_eq!(pages, 3);
    assert_eq!(names, ["add", "boom", "divide", "echo", "sleep"]);
    let bad = ask(
        &r,
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"cursor": "garbage"}}),
    )
    .await;
    assert_eq!(bad["error"]["code"], -32602);
    assert!(
        bad["error"]["message"]
            .as_str()
            .unwrap()
            .contains("garbage")
    );
    assert_reply("2025-11-25", "ListToolsResult", &bad);
    // Paged text replies equal the value replies.
    let text = r
        .handle_mcp_text("math", r#"{"jsonrpc":"2.0","id":9,"method":"tools/list"}"#)
        .await
        .unwrap();
    let value = ask(
        &r,
        json!({"jsonrpc": "2.0", "id": 9, "method": "tools/list"}),
    )
    .await;
    assert_eq!(serde_json::from_str::<Value>(&text).unwrap(), value);
}

/// D14: a page size near `usize::MAX` and a peer's cursor (base64url of `tools:1`) gave
/// `start + size`, which overflowed (a panic in debug builds, a bad slice in release ones).
#[tokio::test]
async fn a_huge_page_size_and_a_crafted_cursor_do_not_overflow() {
    let r = Registry::builder()
        .page_size(usize::MAX)
        .server(math_server())
        .build();
    let page = ask(
        &r,
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"cursor": "dG9vbHM6MQ"}}),
    )
    .await;
    assert_reply("2025-11-25", "ListToolsResult", &page);
    let names: Vec<_> = page["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["boom", "divide", "echo", "sleep"]);
    assert!(page["result"].get("nextCursor").is_none());
}

#[tokio::test]
async fn tool_failures_are_results_with_is_error() {
    let r = registry();
    let cases = [
        (json!({"name": "add", "arguments": {"a": "x"}}), "`a`"),
        (
            json!({"name": "add", "arguments": {}}),
            "missing required field `a`",
        ),
        (
            json!({"name": "divide", "arguments": {"a": 1, "b": 0}}),
            "division by zero",
        ),
        (json!({"name": "boom"}), "panicked: kaboom"),
    ];
    for (params, expected) in cases {
        let reply = ask(
            &r,
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}),
        )
        .await;
        assert_reply("2025-11-25", "CallToolResult", &reply);
        assert_eq!(reply["result"]["isError"], true, "{reply}");
        let text = reply["result"]["content"][0]["text"].as_str().unwrap();
        assert!(
            text.contains(expected),
            "{text:?} should contain {expected:?}"
        );
    }
    // Still usable.
    let ok = ask(&r, json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "echo", "arguments": {"text": "hi"}}})).await;
    assert_eq!(ok["result"]["content"][0]["text"], "hi");
}

#[tokio::test(start_paused = true)]
async fn a_timed_out_call_is_an_error_result() {
    let r = Registry::builder()
        .default_timeout(std::time::Duration::from_millis(10))
        .server(math_server())
        .build();
    let reply = ask(&r, json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "sleep", "arguments": {"ms": 1000}}})).await;
    assert_eq!(reply["result"]["isError"], true);
    assert!(
        reply["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("timed out after 10ms")
    );
    assert_reply("2025-11-25", "CallToolResult", &reply);
}

#[tokio::test]
async fn protocol_errors() {
    let r = registry();
    for (message, code, fragment) in protocol_error_cases() {
        let reply = ask(&r, message.clone()).await;
        assert_eq!(reply["error"]["code"], code, "{message} -> {reply}");
        let text = reply["error"]["message"].as_str().unwrap();
        assert!(
            text.contains(fragment),
            "{message}: {text:?} should contain {fragment:?}"
        );
        assert_valid("2025-11-25", "JSONRPCErrorResponse", &reply);
    }
    let parse = r.handle_mcp_text("math", "{not json").await.unwrap();
    let parse: Value = serde_json::from_str(&parse).unwrap();
    assert_eq!(parse["error"]["code"], -32700);
    assert!(
        parse.get("id").is_none(),
        "an unknown id is left out: {parse}"
    );
    assert_valid("2025-11-25", "JSONRPCErrorResponse", &parse);
    // Replies from the client need no answer.
    assert!(
        r.handle_mcp_message("math", json!({"jsonrpc": "2.0", "id": 4, "result": {}}))
            .await
            .is_none()
    );
}

/// Requests answered with a protocol error: the message, the error code and a fragment of
/// the error's message.
fn protocol_error_cases() -> [(Value, i64, &'static str); 12] {
    [
        (json!("just a string"), -32600, "must be an object"),
        (
            json!({"jsonrpc": "1.0", "id": 1, "method": "ping"}),
            -32600,
            "\"2.0\"",
        ),
        (
            json!({"id": 1, "method": "ping"}),
            -32600,
            "`jsonrpc` is missing",
        ),
        (
            json!({"jsonrpc": "2.0", "id": 1, "method": 7}),
            -32600,
            "`method` must be a string",
        ),
        (
            json!({"jsonrpc": "2.0", "id": null, "method": "ping"}),
            -32600,
            "`id`",
        ),
        (
            json!({"jsonrpc": "2.0", "id": [1], "method": "ping"}),
            -32600,
            "`id`",
        ),
        (
            json!({"jsonrpc": "2.0", "id": 1, "method": "bogus/list"}),
            -32601,
            "bogus/list",
        ),
        (
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "nope"}}),
            -32602,
            "Unknown tool: nope",
        ),
        (
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {}}),
            -32602,
            "params.name",
        ),
        (
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": 5}}),
            -32602,
            "params.name",
        ),
        (
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "add", "arguments": [1]}}),
            -32602,
            "must be an object",
        ),
        (
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": [1]}),
            -32602,
            "`params`",
        ),
    ]
}

/// Regression: a response is never answered, whatever its id (`null`, missing), and neither is
/// a notification, even an unreadable one.
#[tokio::test]
async fn responses_and_notifications_are_never_answered() {
    let r = registry();
    let silent = [
        json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32600, "message": "bad"}}),
        json!({"jsonrpc": "2.0", "error": {"code": -32600, "message": "bad"}}),
        json!({"jsonrpc": "2.0", "result": {}}),
        json!({"jsonrpc": "2.0", "id": [1], "result": {}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized", "params": []}),
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": "x"}),
        json!({"jsonrpc": "1.0", "method": "notifications/initialized"}),
        json!({"method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "method": 7}),
    ];
    for message in silent {
        let reply = r.handle_mcp_message("math", message.clone()).await;
        assert!(
            reply.is_none(),
            "{message} must get no reply, got {reply:?}"
        );
        let text = r.handle_mcp_text("math", &message.to_string()).await;
        assert!(
            text.is_none(),
            "{message} as text must get no reply, got {text:?}"
        );
    }
    // Still a request (it has an id) with no method: refused.
    let reply = ask(&r, json!({"jsonrpc": "2.0", "id": 3})).await;
    assert_eq!(reply["error"]["code"], -32600);
    assert_eq!(reply["id"], 3);
}

/// Regression: MCP's request id is any integer; one beyond `i64` is served and echoed exactly.
#[tokio::test]
async fn integer_ids_beyond_i64_are_echoed() {
    let r = registry();
    for id in [
        json!(18446744073709551615_u64),
        json!(-9223372036854775808_i64),
        json!(0),
    ] {
        let reply = ask(&r, json!({"jsonrpc": "2.0", "id": id, "method": "ping"})).await;
        assert_eq!(reply, json!({"jsonrpc": "2.0", "id": id, "result": {}}));
        let text = r
            .handle_mcp_text(
                "math",
                &format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#),
            )
            .await
            .unwrap();
        assert_eq!(
            serde_json::from_str::<Value>(&text).unwrap()["id"],
            id,
            "{text}"
        );
    }
    let reply = ask(&r, json!({"jsonrpc": "2.0", "id": 1.5, "method": "ping"})).await;
    assert_eq!(
        reply["error"]["code"], -32600,
        "a fraction is no id: {reply}"
    );
}

#[tokio::test]
async fn unknown_and_disabled_servers_are_error_replies() {
    let r = Registry::from_servers([math_server(), small_server("other", "t", "x")]);
    let reply = r
        .handle_mcp_message(
            "ghost",
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
        )
        .await
        .unwrap();
    assert!(
        reply["error"]["message"]
            .as_str()
            .unwrap()
            .contains("\"ghost\""),
        "{reply}"
    );
    r.toggle_server("math", false).unwrap();
    let reply = r
        .handle_mcp_message(
            "math",
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
        )
        .await
        .unwrap();
    let message = reply["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("\"math\"") && message.contains("disabled"),
        "{message}"
    );
    assert_valid("2025-11-25", "JSONRPCErrorResponse", &reply);
    // A server only sees its own tools.
    let reply = r
        .handle_mcp_message(
            "other",
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "add"}}),
        )
        .await
        .unwrap();
    assert_eq!(reply["error"]["code"], -32602);
}

#[tokio::test]
async fn batches_are_answered_element_by_element() {
    let r = registry();
    let reply = ask(
        &r,
        json!([
            {"jsonrpc": "2.0", "id": 1, "method": "ping"},
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            {"jsonrpc": "2.0", "id": 2, "method": "nope"}
        ]),
    )
    .await;
    assert_eq!(reply.as_array().unwrap().len(), 2);
    assert_eq!(reply[0]["result"], json!({}));
    assert_eq!(reply[1]["error"]["code"], -32601);
    assert_eq!(ask(&r, json!([])).await["error"]["code"], -32600);
}

/// Each revision gets tools and results as its schema defines them: `annotations` from
/// 2025-03-26, `title`, `outputSchema` and `structuredContent` from 2025-06-18.
#[tokio::test]
async fn fields_follow_the_negotiated_revision() {
    for (version, annotations, structured) in [
        ("2024-11-05", false, false),
        ("2025-03-26", true, false),
        ("2025-06-18", true, true),
        ("2025-11-25", true, true),
    ] {
        let (session, _out) = mcp_registry::ServerSession::new(registry(), "math");
        let init = session
            .handle(json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                "protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}))
            .await
            .unwrap();
        assert_eq!(init["result"]["protocolVersion"], version);
        let list = session
            .handle(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}))
            .await
            .unwrap();
        assert_reply(version, "ListToolsResult", &list);
        let add = list["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == "add")
            .unwrap();
        assert_eq!(
            add.get("annotations").is_some(),
            annotations,
            "{version}: {add}"
        );
        assert_eq!(add.get("title").is_some(), structured, "{version}: {add}");
        assert_eq!(
            add.get("outputSchema").is_some(),
            structured,
            "{version}: {add}"
        );
        // The text path splices the same form.
        let text = session
            .handle_text(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#)
            .await
            .unwrap();
        assert_eq!(
            serde_json::from_str::<Value>(&text).unwrap(),
            list,
            "{version}"
        );
        let call = session
            .handle(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                "params": {"name": "add", "arguments": {"a": 1, "b": 2}}}))
            .await
            .unwrap();
        assert_reply(version, "CallToolResult", &call);
        assert_eq!(
            call["result"].get("structuredContent").is_some(),
            structured,
            "{version}: {call}"
        );
        assert_eq!(call["result"]["content"][0]["text"], r#"{"value":3}"#);
    }
}
