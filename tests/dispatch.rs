//! `handle_mcp_message`: both protocol eras, every error path, each reply validated against
//! the official JSON Schema of the version in play.

mod common;

use common::{LEGACY, MODERN, assert_reply, assert_valid, math_server, modern_meta, small_server};
use mcp_registry::{Registry, Server};
use serde_json::{Value, json};

fn registry() -> Registry {
    Registry::from_servers([math_server()])
}

async fn ask(registry: &Registry, message: Value) -> Value {
    registry
        .handle_mcp_message("math", message)
        .await
        .expect("a request gets a reply")
}

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
    let cases = [
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
    ];
    for (message, code, fragment) in cases {
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
    assert_eq!(call["result"]["resultType"], "complete");
    assert_eq!(
        call["result"]["_meta"]["io.modelcontextprotocol/serverInfo"]["name"],
        "math"
    );

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
    use mcp_registry::protocol::MAX_DEPTH;
    use mcp_registry::{CallError, Tool};

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
    let r = Registry::from_servers([Server::builder("math").tools([deep_tool]).build().unwrap()]);

    // (`json!` would serialize an embedded value recursively: deep parts are put in place.)
    // A request: -32600 under its id.
    let mut message = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
        "params": {"name": "deep", "arguments": {}}});
    message["params"]["arguments"]["x"] = nested(8_000);
    let reply = ask(&r, message).await;
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
    let reply = ask(&r, extra).await;
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
    assert_eq!(ask(&r, batch).await["error"]["code"], -32600);
    // Just inside the limit still works (envelope, params, arguments, then the data).
    let mut ok = json!({"jsonrpc": "2.0", "id": 8, "method": "tools/call",
        "params": {"name": "deep", "arguments": {"levels": 3}}});
    ok["params"]["arguments"]["x"] = nested(MAX_DEPTH - 3);
    let reply = ask(&r, ok).await;
    assert_eq!(reply["result"]["structuredContent"], nested(3), "{reply}");

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
        &r,
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

    // A session refuses it the same way.
    let (session, _outgoing) = mcp_registry::dispatch::ServerSession::new(r.clone(), "math");
    let mut message = json!({"jsonrpc": "2.0", "id": 11, "method": "ping", "params": {}});
    message["params"]["x"] = nested(8_000);
    let reply = session.handle(message).await.unwrap();
    assert_eq!(reply["error"]["code"], -32600, "{reply}");
    assert_eq!(reply["id"], 11);
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

/// The text path reads a plain `tools/call` in place and hands the tool its arguments as
/// text: what the tool sees, and the reply, are those of the value path, escapes, `_meta`
/// and argument errors included.
#[tokio::test]
async fn text_calls_read_in_place_answer_as_values_do() {
    use mcp_registry::{NotificationSink, Tool, ToolContext};

    #[derive(serde::Deserialize, schemars::JsonSchema)]
    struct Echo {
        text: String,
        times: Option<u32>,
    }
    let echo = Tool::builder("echo.it")
        .typed_with_context(|ctx: ToolContext, args: Echo| async move {
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
    let registry = Registry::from_servers([Server::new("s", None, [echo]).expect("a server")]);
    let texts = [
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
