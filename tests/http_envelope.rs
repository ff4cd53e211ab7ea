//! The Streamable HTTP transport reads each body once, with the crate's one envelope decoder
//! (`protocol::decode`): what it checks (mirrored headers, scopes, the session) and what it
//! answers come from that decoded message, and the status from the typed answer.

use crate::common;

use axum::http::StatusCode;
use common::math_server;
use mcp_registry::Registry;
use mcp_registry::transport::http::{HttpConfig, router};
use serde_json::{Value, json};

const MODERN_META: &str = r#"{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#;

fn app() -> axum::Router {
    router(
        Registry::from_servers([math_server()]),
        "math",
        HttpConfig::default(),
    )
}

async fn post(app: &axum::Router, headers: &[(&str, &str)], body: String) -> (StatusCode, Value) {
    let reply = common::http::send(app, "POST", headers, body).await;
    let json = serde_json::from_str(&reply.body).unwrap_or(Value::Null);
    (reply.status, json)
}

const MODERN: [(&str, &str); 3] = [
    ("mcp-protocol-version", "2026-07-28"),
    ("mcp-method", "tools/call"),
    ("mcp-name", "add"),
];

#[tokio::test]
async fn a_message_that_is_no_json_rpc_request_is_400_with_what_is_wrong() {
    let app = app();
    let (status, reply) = post(
        &app,
        &MODERN,
        r#"{"id":1,"method":"tools/call","params":{"name":"add"}}"#.to_owned(),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(reply["error"]["code"], -32600);
    assert_eq!(reply["id"], 1, "answered under its id: {reply}");
    assert!(
        reply["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("jsonrpc")),
        "{reply}"
    );
    let (status, reply) = post(&app, &MODERN, "[]".to_owned()).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{reply}");
    let (status, reply) = post(&app, &MODERN, "{\"jsonrpc\":".to_owned()).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(reply["error"]["code"], -32700);
}

#[tokio::test]
async fn a_call_read_in_place_is_checked_and_answered_like_a_parsed_one() {
    let app = app();
    // Read in place (plain text), and read as a value (an escaped name): the same answers.
    for name in [r#""add""#, r#""\u0061dd""#] {
        let body = format!(
            r#"{{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{{"name":{name},"arguments":{{"a":2,"b":3}},"_meta":{MODERN_META}}}}}"#
        );
        let (status, reply) = post(&app, &MODERN, body.clone()).await;
        assert_eq!(status, StatusCode::OK, "{reply}");
        assert_eq!(reply["result"]["structuredContent"]["value"], 5, "{reply}");
        let wrong = [MODERN[0], MODERN[1], ("mcp-name", "divide")];
        let (status, reply) = post(&app, &wrong, body).await;
        assert_eq!(status, StatusCode::BAD_REQUEST);
        assert_eq!(reply["error"]["code"], -32020, "{reply}");
    }
}

#[tokio::test]
async fn an_unknown_method_is_404_from_the_typed_answer() {
    let app = app();
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":"x","method":"nope/nothing","params":{{"_meta":{MODERN_META}}}}}"#
    );
    let headers = [
        ("mcp-protocol-version", "2026-07-28"),
        ("mcp-method", "nope/nothing"),
    ];
    let (status, reply) = post(&app, &headers, body).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_eq!(
        reply,
        json!({"jsonrpc": "2.0", "id": "x", "error": reply["error"]})
    );
    assert_eq!(reply["error"]["code"], -32601);
}
