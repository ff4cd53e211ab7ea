//! The Streamable HTTP transport's stateless 2026-07-28 requests, driven through the axum
//! router in-process: the mirrored headers (`Mcp-Method`, `Mcp-Name`, `Mcp-Param-*`) checked
//! against the body, and the required `_meta`.

use crate::common;

use axum::http::StatusCode;
use common::assert_valid;
use common::http::{app, modern, send};
use mcp_registry::transport::http::{HttpConfig, router};
use mcp_registry::{Registry, Server, Tool};
use serde_json::{Value, json};

#[tokio::test]
async fn modern_requests_are_stateless_and_header_checked() {
    let app = app(HttpConfig::default());
    let v = ("mcp-protocol-version", "2026-07-28");
    let list = send(
        &app,
        "POST",
        &[v, ("mcp-method", "tools/list")],
        modern(1, "tools/list", json!({})),
    )
    .await;
    assert_eq!(list.status, StatusCode::OK);
    assert!(
        list.headers.get("mcp-session-id").is_none(),
        "no session is minted"
    );
    assert_valid("2026-07-28", "ListToolsResultResponse", &list.json());

    calls_are_served_with_their_headers(&app).await;
    mismatched_headers_are_refused(&app).await;
    versions_and_meta_are_checked_after_the_headers(&app).await;

    let unknown = send(
        &app,
        "POST",
        &[v, ("mcp-method", "bogus/list")],
        modern(7, "bogus/list", json!({})),
    )
    .await;
    assert_eq!(unknown.status, StatusCode::NOT_FOUND);
    assert_eq!(unknown.json()["error"]["code"], -32601);
}

/// A call whose headers match its body is served; a base64-encoded `Mcp-Name` is decoded
/// before comparing.
async fn calls_are_served_with_their_headers(app: &axum::Router) {
    let v = ("mcp-protocol-version", "2026-07-28");
    let call = send(
        app,
        "POST",
        &[v, ("mcp-method", "tools/call"), ("mcp-name", "add")],
        modern(
            2,
            "tools/call",
            json!({"name": "add", "arguments": {"a": 1, "b": 1}}),
        ),
    )
    .await;
    assert_valid("2026-07-28", "CallToolResultResponse", &call.json());
    // Base64-encoded Mcp-Name is decoded before comparing.
    let encoded = send(
        app,
        "POST",
        &[
            v,
            ("mcp-method", "tools/call"),
            ("mcp-name", "=?base64?YWRk?="),
        ],
        modern(
            3,
            "tools/call",
            json!({"name": "add", "arguments": {"a": 1}}),
        ),
    )
    .await;
    assert_eq!(encoded.status, StatusCode::OK, "{}", encoded.body);
}

/// A missing or mismatched `MCP-Protocol-Version`, `Mcp-Method` or `Mcp-Name` is 400, -32020.
async fn mismatched_headers_are_refused(app: &axum::Router) {
    let v = ("mcp-protocol-version", "2026-07-28");
    let cases: [(&[(&str, &str)], &str); 4] = [
        (
            &[("mcp-method", "tools/list")],
            "MCP-Protocol-Version header is missing",
        ),
        (
            &[
                ("mcp-protocol-version", "2025-11-25"),
                ("mcp-method", "tools/list"),
            ],
            "does not match",
        ),
        (&[v], "Mcp-Method header is missing"),
        (
            &[v, ("mcp-method", "tools/call")],
            "Mcp-Method header value",
        ),
    ];
    for (headers, fragment) in cases {
        let r = send(app, "POST", headers, modern(4, "tools/list", json!({}))).await;
        assert_eq!(r.status, StatusCode::BAD_REQUEST, "{fragment}");
        assert_eq!(r.json()["error"]["code"], -32020);
        assert!(
            r.json()["error"]["message"]
                .as_str()
                .unwrap()
                .contains(fragment),
            "{}",
            r.body
        );
    }
    let wrong_name = send(
        app,
        "POST",
        &[v, ("mcp-method", "tools/call"), ("mcp-name", "divide")],
        modern(
            5,
            "tools/call",
            json!({"name": "add", "arguments": {"a": 1}}),
        ),
    )
    .await;
    assert_eq!(wrong_name.status, StatusCode::BAD_REQUEST);
}

/// An unsupported version is -32022; checked in order: mirrored headers (-32020), required
/// `_meta` (-32602), version (-32022).
async fn versions_and_meta_are_checked_after_the_headers(app: &axum::Router) {
    let v = ("mcp-protocol-version", "2026-07-28");
    let mut unsupported: Value = serde_json::from_str(&modern(6, "tools/list", json!({}))).unwrap();
    unsupported["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] = json!("1900-01-01");
    let r = send(
        app,
        "POST",
        &[
            ("mcp-protocol-version", "1900-01-01"),
            ("mcp-method", "tools/list"),
        ],
        unsupported.to_string(),
    )
    .await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);
    assert_valid("2026-07-28", "UnsupportedProtocolVersionError", &r.json());

    // Checked in order: mirrored headers (-32020), required _meta (-32602), version (-32022).
    let no_meta = send(
        app,
        "POST",
        &[v, ("mcp-method", "server/discover")],
        r#"{"jsonrpc":"2.0","id":101,"method":"server/discover","params":{}}"#,
    )
    .await;
    assert_eq!(no_meta.status, StatusCode::BAD_REQUEST);
    assert_eq!(no_meta.json()["error"]["code"], -32602, "{}", no_meta.body);
    let no_caps = send(
        app,
        "POST",
        &[v, ("mcp-method", "server/discover")],
        r#"{"jsonrpc":"2.0","id":102,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#,
    )
    .await;
    assert_eq!(no_caps.status, StatusCode::BAD_REQUEST);
    assert!(
        no_caps.json()["error"]["message"]
            .as_str()
            .unwrap()
            .contains("clientCapabilities")
    );
    let mut disagree: Value = serde_json::from_str(&modern(103, "tools/list", json!({}))).unwrap();
    disagree["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] = json!("v999.0.0");
    let r = send(
        app,
        "POST",
        &[v, ("mcp-method", "tools/list")],
        disagree.to_string(),
    )
    .await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);
    assert_eq!(
        r.json()["error"]["code"],
        -32020,
        "a header mismatch wins over the version"
    );
}

/// 2026-07-28 `x-mcp-header`: a parameter a tool annotates is mirrored into
/// `Mcp-Param-{Name}`, and the server refuses a call whose header is missing, undecodable or
/// different from the body (400, -32020); the client's own encoding passes.
#[tokio::test]
async fn mirrored_parameter_headers_are_checked_against_the_body() {
    let region = Tool::builder("run")
        .raw(
            json!({"type": "object", "properties": {
                "region": {"type": "string", "x-mcp-header": "Region"},
                "n": {"type": "integer", "x-mcp-header": "N"}
            }}),
            |args: Value| async move { format!("ran in {}", args["region"]) },
        )
        .unwrap();
    let registry = Registry::from_servers([Server::new("s", None, [region]).unwrap()]);
    let app = router(registry, "s", HttpConfig::default());
    let base = [
        ("mcp-protocol-version", "2026-07-28"),
        ("mcp-method", "tools/call"),
        ("mcp-name", "run"),
    ];
    let call = |args: Value| modern(1, "tools/call", json!({"name": "run", "arguments": args}));
    let with = |extra: &[(&'static str, &'static str)]| {
        let mut h = base.to_vec();
        h.extend_from_slice(extra);
        h
    };

    let ok = send(
        &app,
        "POST",
        &with(&[("mcp-param-region", "us-west1"), ("mcp-param-n", "7")]),
        call(json!({"region": "us-west1", "n": 7})),
    )
    .await;
    assert_eq!(ok.status, StatusCode::OK, "{}", ok.body);
    // Base64 (here for a non-ASCII value) is decoded before comparing.
    let encoded = send(
        &app,
        "POST",
        &with(&[("mcp-param-region", "=?base64?w6l0w6k=?=")]),
        call(json!({"region": "été"})),
    )
    .await;
    assert_eq!(encoded.status, StatusCode::OK, "{}", encoded.body);
    // A value the body leaves out needs no header.
    let absent = send(&app, "POST", &with(&[]), call(json!({}))).await;
    assert_eq!(absent.status, StatusCode::OK, "{}", absent.body);

    for (extra, args, says) in parameter_header_refusals() {
        let refused = send(&app, "POST", &with(&extra), call(args.clone())).await;
        assert_eq!(
            refused.status,
            StatusCode::BAD_REQUEST,
            "{extra:?} {args}: {}",
            refused.body
        );
        let error = &refused.json()["error"];
        assert_eq!(error["code"], -32020, "{}", refused.body);
        assert!(
            error["message"].as_str().unwrap().contains(says),
            "{}",
            refused.body
        );
    }
}

/// Mirrored parameter headers the server refuses: the extra headers, the arguments, and what
/// the error message says.
type Refusal = (Vec<(&'static str, &'static str)>, Value, &'static str);

/// A header missing, different from the body, or undecodable base64.
fn parameter_header_refusals() -> [Refusal; 5] {
    [
        (
            vec![],
            json!({"region": "eu"}),
            "Mcp-Param-Region header is missing",
        ),
        (
            vec![("mcp-param-region", "us")],
            json!({"region": "eu"}),
            "does not match",
        ),
        (
            vec![("mcp-param-region", "eu"), ("mcp-param-n", "8")],
            json!({"region": "eu", "n": 7}),
            "Mcp-Param-N",
        ),
        (
            vec![("mcp-param-region", "=?base64?ZXU?=")],
            json!({"region": "eu"}),
            "not a valid value",
        ),
        (
            vec![("mcp-param-region", "=?base64?Z!!U=?=")],
            json!({"region": "eu"}),
            "not a valid value",
        ),
    ]
}
