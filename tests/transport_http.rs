//! The Streamable HTTP transport, driven through the axum router in-process.

mod common;

use axum::body::Body;
use axum::http::{Request, StatusCode};
use common::{assert_valid, math_server};
use http_body_util::BodyExt;
use mcp_registry::transport::http::{HttpConfig, router};
use mcp_registry::{Registry, Server, Tool, ToolContext};
use serde_json::{Value, json};
use tower::ServiceExt;

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Steps {
    steps: u32,
}

fn app(config: HttpConfig) -> axum::Router {
    let job = Tool::builder("job")
        .typed_with_context(|ctx: ToolContext, a: Steps| async move {
            for i in 1..=a.steps {
                ctx.progress(f64::from(i), Some(f64::from(a.steps)), None)
                    .unwrap();
                tokio::task::yield_now().await;
            }
            "finished"
        })
        .unwrap();
    let math = math_server();
    let tools = math.tools().iter().cloned().chain([job]);
    let registry = Registry::from_servers([Server::builder("math")
        .version("1.2.0")
        .tools(tools)
        .build()
        .unwrap()]);
    router(registry, "math", config)
}

struct Reply {
    status: StatusCode,
    headers: axum::http::HeaderMap,
    body: String,
}

impl Reply {
    fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("{e}: {:?}", self.body))
    }
    /// The `data:` payloads of an SSE body.
    fn events(&self) -> Vec<Value> {
        self.body
            .lines()
            .filter_map(|l| l.strip_prefix("data: ").or_else(|| l.strip_prefix("data:")))
            .map(|d| serde_json::from_str(d).unwrap())
            .collect()
    }
}

/// Sends a request with no body and returns the response unread (for SSE streams).
async fn send_streaming(
    app: &axum::Router,
    method: &str,
    headers: &[(&str, &str)],
) -> axum::response::Response {
    let mut req = Request::builder()
        .method(method)
        .uri("/mcp")
        .header("accept", "text/event-stream");
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    app.clone()
        .oneshot(req.body(Body::empty()).unwrap())
        .await
        .unwrap()
}

async fn send(
    app: &axum::Router,
    method: &str,
    headers: &[(&str, &str)],
    body: impl Into<Body>,
) -> Reply {
    // `headers` replace the defaults of the same name; an empty value leaves the header out.
    let defaults = [
        ("content-type", "application/json"),
        ("accept", "application/json, text/event-stream"),
    ];
    let mut req = Request::builder().method(method).uri("/mcp");
    for (k, v) in defaults {
        if !headers.iter().any(|(name, _)| name.eq_ignore_ascii_case(k)) {
            req = req.header(k, v);
        }
    }
    for (k, v) in headers.iter().filter(|(_, v)| !v.is_empty()) {
        req = req.header(*k, *v);
    }
    let response = app
        .clone()
        .oneshot(req.body(body.into()).unwrap())
        .await
        .unwrap();
    let status = response.status();
    let headers = response.headers().clone();
    let body = String::from_utf8(
        response
            .into_body()
            .collect()
            .await
            .unwrap()
            .to_bytes()
            .to_vec(),
    )
    .unwrap();
    Reply {
        status,
        headers,
        body,
    }
}

const INIT: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;

#[tokio::test]
async fn legacy_session_lifecycle() {
    let app = app(HttpConfig::default());
    let init = send(&app, "POST", &[], INIT).await;
    assert_eq!(init.status, StatusCode::OK);
    assert_eq!(init.json()["result"]["protocolVersion"], "2025-11-25");
    let sid = init.headers["mcp-session-id"].to_str().unwrap().to_owned();
    let h = [
        ("mcp-session-id", sid.as_str()),
        ("mcp-protocol-version", "2025-11-25"),
    ];

    let note = send(
        &app,
        "POST",
        &h,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
    )
    .await;
    assert_eq!(note.status, StatusCode::ACCEPTED);
    assert!(note.body.is_empty());

    let list = send(
        &app,
        "POST",
        &h,
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#,
    )
    .await;
    assert_eq!(list.status, StatusCode::OK);
    assert_eq!(list.headers["content-type"], "application/json");
    assert_eq!(list.json()["result"]["tools"].as_array().unwrap().len(), 6);

    // Without progress: a plain JSON reply.
    let call = send(&app, "POST", &h, r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"add","arguments":{"a":2}}}"#).await;
    assert_eq!(
        call.json()["result"]["structuredContent"],
        json!({"value": 2})
    );

    // With progress: an SSE stream, notifications first, the reply last.
    let streamed = send(
        &app,
        "POST",
        &h,
        r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"job","arguments":{"steps":3},"_meta":{"progressToken":"t"}}}"#,
    )
    .await;
    assert_eq!(streamed.status, StatusCode::OK);
    assert!(
        streamed.headers["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/event-stream")
    );
    let events = streamed.events();
    assert_eq!(events.len(), 4, "{}", streamed.body);
    for e in &events[..3] {
        assert_valid("2025-11-25", "ProgressNotification", e);
    }
    assert_eq!(events[3]["id"], 4);
    assert_eq!(events[3]["result"]["content"][0]["text"], "finished");

    let unknown = send(
        &app,
        "POST",
        &[("mcp-session-id", "nope")],
        r#"{"jsonrpc":"2.0","id":5,"method":"ping"}"#,
    )
    .await;
    assert_eq!(unknown.status, StatusCode::NOT_FOUND);
    let missing = send(
        &app,
        "POST",
        &[],
        r#"{"jsonrpc":"2.0","id":5,"method":"ping"}"#,
    )
    .await;
    assert_eq!(missing.status, StatusCode::BAD_REQUEST);
    assert!(
        missing.json()["error"]["message"]
            .as_str()
            .unwrap()
            .contains("Mcp-Session-Id")
    );
    let bad_version = send(
        &app,
        "POST",
        &[
            ("mcp-session-id", &sid),
            ("mcp-protocol-version", "1999-01-01"),
        ],
        r#"{"jsonrpc":"2.0","id":5,"method":"ping"}"#,
    )
    .await;
    assert_eq!(bad_version.status, StatusCode::BAD_REQUEST);

    let deleted = send(&app, "DELETE", &h, Body::empty()).await;
    assert_eq!(deleted.status, StatusCode::OK);
    let after = send(
        &app,
        "POST",
        &h,
        r#"{"jsonrpc":"2.0","id":6,"method":"ping"}"#,
    )
    .await;
    assert_eq!(after.status, StatusCode::NOT_FOUND);
    assert_eq!(
        send(&app, "DELETE", &h, Body::empty()).await.status,
        StatusCode::NOT_FOUND
    );
    assert_eq!(
        send(&app, "GET", &[], Body::empty()).await.status,
        StatusCode::METHOD_NOT_ALLOWED
    );
}

fn modern(id: i64, method: &str, params: Value) -> String {
    let mut params = params;
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}
    });
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string()
}

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

    let call = send(
        &app,
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
        &app,
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
        let r = send(&app, "POST", headers, modern(4, "tools/list", json!({}))).await;
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
        &app,
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

    let mut unsupported: Value = serde_json::from_str(&modern(6, "tools/list", json!({}))).unwrap();
    unsupported["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] = json!("1900-01-01");
    let r = send(
        &app,
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
        &app,
        "POST",
        &[v, ("mcp-method", "server/discover")],
        r#"{"jsonrpc":"2.0","id":101,"method":"server/discover","params":{}}"#,
    )
    .await;
    assert_eq!(no_meta.status, StatusCode::BAD_REQUEST);
    assert_eq!(no_meta.json()["error"]["code"], -32602, "{}", no_meta.body);
    let no_caps = send(
        &app,
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
        &app,
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

#[tokio::test]
async fn origin_body_size_and_malformed_input() {
    let app = app(HttpConfig::default()
        .allowed_origins(["https://app.example.com"])
        .max_body_bytes(1024));
    for origin in [
        "http://localhost:3000",
        "http://127.0.0.1",
        "http://[::1]:8080",
        "https://app.example.com",
    ] {
        let r = send(&app, "POST", &[("origin", origin)], INIT).await;
        assert_eq!(r.status, StatusCode::OK, "{origin} is allowed");
    }
    for origin in [
        "https://evil.example",
        "http://localhost.evil.example",
        "null",
    ] {
        let r = send(&app, "POST", &[("origin", origin)], INIT).await;
        assert_eq!(r.status, StatusCode::FORBIDDEN, "{origin} is refused");
    }
    let big = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"ping","params":{{"pad":"{}"}}}}"#,
        "x".repeat(4096)
    );
    assert_eq!(
        send(&app, "POST", &[], big).await.status,
        StatusCode::PAYLOAD_TOO_LARGE
    );
    let garbage = send(&app, "POST", &[], "{nope").await;
    assert_eq!(garbage.status, StatusCode::BAD_REQUEST);
    assert_eq!(garbage.json()["error"]["code"], -32700);
    let batch = send(&app, "POST", &[], "[]").await;
    assert_eq!(batch.status, StatusCode::BAD_REQUEST);

    let no_localhost = self::app(HttpConfig::default().allow_localhost(false));
    assert_eq!(
        send(
            &no_localhost,
            "POST",
            &[("origin", "http://localhost")],
            INIT
        )
        .await
        .status,
        StatusCode::FORBIDDEN
    );
}

#[tokio::test]
async fn get_streams_list_changed_for_a_session() {
    let job = Tool::new("t", "x", json!({"type": "object"}), |_| async { "ok" }).unwrap();
    let registry = Registry::from_servers([Server::new("s", None, [job]).unwrap()]);
    let app = router(registry.clone(), "s", HttpConfig::default());
    let init = send(&app, "POST", &[], INIT).await;
    let sid = init.headers["mcp-session-id"].to_str().unwrap().to_owned();
    send(
        &app,
        "POST",
        &[("mcp-session-id", &sid)],
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
    )
    .await;
    let req = Request::builder()
        .method("GET")
        .uri("/mcp")
        .header("mcp-session-id", &sid)
        .header("accept", "text/event-stream")
        .body(Body::empty())
        .unwrap();
    let response = app.clone().oneshot(req).await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let mut body = response.into_body();
    registry.toggle_server("s", false).unwrap();
    let frame = tokio::time::timeout(std::time::Duration::from_secs(5), body.frame())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    let text = String::from_utf8(frame.into_data().unwrap().to_vec()).unwrap();
    assert!(text.contains("notifications/tools/list_changed"), "{text}");
    // Regression: a client that lost its stream (every later GET got 409) opens it again.
    drop(body);
    let mut body = get_stream(&app, &sid).await;
    registry.toggle_server("s", true).unwrap();
    assert!(
        next_event(&mut body)
            .await
            .contains("notifications/tools/list_changed")
    );
    // A second GET while one is open takes the stream over (the client may have lost the
    // first without the server noticing): the first ends, the second gets what follows.
    let mut second = get_stream(&app, &sid).await;
    let ended = tokio::time::timeout(std::time::Duration::from_secs(5), body.frame())
        .await
        .expect("the first stream ends");
    assert!(ended.is_none(), "{ended:?}");
    registry.toggle_server("s", false).unwrap();
    assert!(
        next_event(&mut second)
            .await
            .contains("notifications/tools/list_changed")
    );
}

/// Opens the session's GET stream.
async fn get_stream(app: &axum::Router, sid: &str) -> Body {
    let response = send_streaming(app, "GET", &[("mcp-session-id", sid)]).await;
    assert_eq!(response.status(), StatusCode::OK);
    response.into_body()
}

/// The next SSE event's text on `body` (5 s at most).
async fn next_event(body: &mut Body) -> String {
    let frame = tokio::time::timeout(std::time::Duration::from_secs(5), body.frame())
        .await
        .expect("an event in time")
        .expect("the stream is open")
        .unwrap();
    String::from_utf8(frame.into_data().unwrap().to_vec()).unwrap()
}

#[tokio::test]
async fn idle_legacy_sessions_expire() {
    let app = app(HttpConfig::default().session_idle_timeout(std::time::Duration::ZERO));
    let first = send(&app, "POST", &[], INIT).await;
    let sid = first.headers["mcp-session-id"].to_str().unwrap().to_owned();
    // Opening another session sweeps the idle one away.
    send(&app, "POST", &[], INIT).await;
    let gone = send(
        &app,
        "POST",
        &[("mcp-session-id", &sid)],
        r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#,
    )
    .await;
    assert_eq!(gone.status, StatusCode::NOT_FOUND);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_initializes_never_exceed_the_session_cap() {
    const CAP: usize = 5;
    // The race needs luck to show; many rounds make it show every time.
    for _ in 0..30 {
        let app = app(HttpConfig::default().max_sessions(CAP));
        let clients: Vec<_> = (0..100)
            .map(|_| {
                let app = app.clone();
                tokio::spawn(async move { send(&app, "POST", &[], INIT).await })
            })
            .collect();
        let mut opened = 0;
        for client in clients {
            let reply = client.await.unwrap();
            match reply.status {
                StatusCode::OK => {
                    assert!(reply.headers.contains_key("mcp-session-id"));
                    opened += 1;
                }
                StatusCode::SERVICE_UNAVAILABLE => {
                    assert!(reply.headers.get("mcp-session-id").is_none());
                }
                other => panic!("unexpected {other}: {}", reply.body),
            }
        }
        assert_eq!(opened, CAP, "exactly the cap's worth of sessions is opened");
    }
}

const PING: &str = r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#;

#[tokio::test(start_paused = true)]
async fn a_session_idle_past_the_limit_is_refused_on_lookup() {
    use std::time::Duration;
    let app = app(HttpConfig::default().session_idle_timeout(Duration::from_secs(60)));
    let init = send(&app, "POST", &[], INIT).await;
    let sid = init.headers["mcp-session-id"].to_str().unwrap().to_owned();
    let h = [("mcp-session-id", sid.as_str())];
    // Each use restarts the idle clock: 100 s after initialize, but never 60 s idle.
    for _ in 0..2 {
        tokio::time::advance(Duration::from_secs(50)).await;
        assert_eq!(send(&app, "POST", &h, PING).await.status, StatusCode::OK);
    }
    tokio::time::advance(Duration::from_secs(61)).await;
    let expired = send(&app, "POST", &h, PING).await;
    assert_eq!(expired.status, StatusCode::NOT_FOUND, "{}", expired.body);
    // Removed, not just refused once.
    assert_eq!(
        send(&app, "POST", &h, PING).await.status,
        StatusCode::NOT_FOUND
    );
    assert_eq!(
        send(&app, "DELETE", &h, Body::empty()).await.status,
        StatusCode::NOT_FOUND
    );
}

#[tokio::test(start_paused = true)]
async fn idle_sessions_are_swept_without_a_new_initialize() {
    use std::time::Duration;
    let app = app(HttpConfig::default().session_idle_timeout(Duration::from_secs(60)));
    let init = send(&app, "POST", &[], INIT).await;
    let sid = init.headers["mcp-session-id"].to_str().unwrap().to_owned();
    let stream = send_streaming(&app, "GET", &[("mcp-session-id", &sid)]).await;
    assert_eq!(stream.status(), StatusCode::OK);
    let mut stream = stream.into_body();

    tokio::time::advance(Duration::from_secs(120)).await;
    // Any request, here a stateless one, sweeps the idle session away: its stream ends.
    let list = send(
        &app,
        "POST",
        &[
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-method", "tools/list"),
        ],
        modern(1, "tools/list", json!({})),
    )
    .await;
    assert_eq!(list.status, StatusCode::OK);
    let ended = tokio::time::timeout(Duration::from_secs(3600), async {
        // Keep-alive comments may come first; the stream must then end.
        while let Some(frame) = stream.frame().await {
            let data = frame.unwrap().into_data().unwrap();
            assert!(data.starts_with(b":"), "only keep-alives: {data:?}");
        }
    })
    .await;
    assert!(ended.is_ok(), "the swept session's stream ended");
}

#[tokio::test(start_paused = true)]
async fn a_declared_content_length_over_the_limit_is_refused_before_the_body() {
    let app = app(HttpConfig::default().max_body_bytes(1024));
    // Headers announcing 1 MB, then a body that never arrives.
    let never = futures_util::stream::pending::<Result<axum::body::Bytes, std::io::Error>>();
    let req = Request::builder()
        .method("POST")
        .uri("/mcp")
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("content-length", "1000000")
        .body(Body::from_stream(never))
        .unwrap();
    let response = tokio::time::timeout(std::time::Duration::from_secs(10), app.oneshot(req))
        .await
        .expect("answered without waiting for the body")
        .unwrap();
    assert_eq!(response.status(), StatusCode::PAYLOAD_TOO_LARGE);
    let body = response.into_body().collect().await.unwrap().to_bytes();
    let reply: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(reply["error"]["code"], -32600, "{reply}");
}

#[tokio::test]
async fn a_chunked_body_over_the_limit_is_refused_while_streaming() {
    let app = app(HttpConfig::default().max_body_bytes(1024));
    let chunks = (0..8).map(|_| Ok::<_, std::io::Error>(axum::body::Bytes::from(vec![b' '; 512])));
    let req = Request::builder()
        .method("POST")
        .uri("/mcp")
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(Body::from_stream(futures_util::stream::iter(chunks)))
        .unwrap();
    let response = app.oneshot(req).await.unwrap();
    assert_eq!(response.status(), StatusCode::PAYLOAD_TOO_LARGE);
}

#[tokio::test]
async fn content_type_and_accept_follow_the_transport_spec() {
    let app = app(HttpConfig::default());
    for content_type in ["text/plain", "application/x-www-form-urlencoded", ""] {
        let r = send(&app, "POST", &[("content-type", content_type)], INIT).await;
        assert_eq!(
            r.status,
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "{content_type:?}"
        );
        assert_eq!(r.json()["error"]["code"], -32600, "{}", r.body);
        assert!(r.json()["id"].is_null());
    }
    for content_type in ["application/json; charset=utf-8", "Application/JSON"] {
        let r = send(&app, "POST", &[("content-type", content_type)], INIT).await;
        assert_eq!(r.status, StatusCode::OK, "{content_type:?}: {}", r.body);
    }
    for accept in [
        "application/json",
        "text/event-stream",
        "text/html",
        "application/json, text/event-stream;q=0",
        "",
    ] {
        let r = send(&app, "POST", &[("accept", accept)], INIT).await;
        assert_eq!(r.status, StatusCode::NOT_ACCEPTABLE, "{accept:?}");
        assert_eq!(r.json()["error"]["code"], -32600, "{}", r.body);
    }
    for accept in [
        "text/event-stream, application/json",
        "application/json;q=0.9, text/event-stream",
        "*/*",
        "application/*, text/*",
    ] {
        let r = send(&app, "POST", &[("accept", accept)], INIT).await;
        assert_eq!(r.status, StatusCode::OK, "{accept:?}: {}", r.body);
    }

    let init = send(&app, "POST", &[], INIT).await;
    let sid = init.headers["mcp-session-id"].to_str().unwrap().to_owned();
    let json_only = send(
        &app,
        "GET",
        &[("mcp-session-id", &sid), ("accept", "application/json")],
        Body::empty(),
    )
    .await;
    assert_eq!(json_only.status, StatusCode::NOT_ACCEPTABLE);
    let sse = send_streaming(&app, "GET", &[("mcp-session-id", &sid)]).await;
    assert_eq!(sse.status(), StatusCode::OK);
    // DELETE carries no body and expects none: no media types to check.
    let deleted = send(
        &app,
        "DELETE",
        &[
            ("mcp-session-id", &sid),
            ("accept", ""),
            ("content-type", ""),
        ],
        Body::empty(),
    )
    .await;
    assert_eq!(deleted.status, StatusCode::OK);
}

#[tokio::test]
async fn host_is_checked_against_dns_rebinding() {
    let app = app(HttpConfig::default());
    for host in [
        "localhost",
        "localhost:8000",
        "LocalHost:3000",
        "127.0.0.1:8000",
        "[::1]:8000",
        "[::1]",
    ] {
        let r = send(&app, "POST", &[("host", host)], INIT).await;
        assert_eq!(r.status, StatusCode::OK, "{host} is allowed: {}", r.body);
    }
    for host in [
        "evil.example",
        "evil.example:8000",
        "localhost.evil.example",
        "127.0.0.1.nip.io:8000",
        "[::2]:8000",
    ] {
        let r = send(&app, "POST", &[("host", host)], INIT).await;
        assert_eq!(r.status, StatusCode::FORBIDDEN, "{host} is refused");
        assert!(r.json()["id"].is_null());
        let r = send(&app, "GET", &[("host", host)], Body::empty()).await;
        assert_eq!(r.status, StatusCode::FORBIDDEN, "GET with {host}");
        let r = send(&app, "DELETE", &[("host", host)], Body::empty()).await;
        assert_eq!(r.status, StatusCode::FORBIDDEN, "DELETE with {host}");
    }
    // HTTP/2 carries the host in the URI's authority instead of a Host header.
    let h2 = Request::builder()
        .method("POST")
        .uri("http://evil.example/mcp")
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(Body::from(INIT))
        .unwrap();
    let r = app.clone().oneshot(h2).await.unwrap();
    assert_eq!(r.status(), StatusCode::FORBIDDEN);

    let named =
        self::app(HttpConfig::default().allowed_hosts(["mcp.example.com", "api.example.com:8443"]));
    for (host, status) in [
        ("mcp.example.com", StatusCode::OK),
        ("MCP.example.com:443", StatusCode::OK),
        ("api.example.com:8443", StatusCode::OK),
        ("api.example.com:9000", StatusCode::FORBIDDEN),
        ("api.example.com", StatusCode::FORBIDDEN),
        ("localhost:8000", StatusCode::OK),
        ("evil.example", StatusCode::FORBIDDEN),
    ] {
        let r = send(&named, "POST", &[("host", host)], INIT).await;
        assert_eq!(r.status, status, "{host}");
    }
    let unchecked = self::app(HttpConfig::default().check_host(false));
    let r = send(&unchecked, "POST", &[("host", "evil.example")], INIT).await;
    assert_eq!(r.status, StatusCode::OK);
}

#[tokio::test]
async fn a_2025_03_26_session_is_served_batches() {
    let app = app(HttpConfig::default());
    let mut sessions = Vec::new();
    for version in ["2025-03-26", "2025-06-18"] {
        let init = send(&app, "POST", &[], INIT.replace("2025-11-25", version)).await;
        assert_eq!(init.json()["result"]["protocolVersion"], version);
        let sid = init.headers["mcp-session-id"].to_str().unwrap().to_owned();
        let h = [("mcp-session-id", sid.as_str())];
        let note = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
        assert_eq!(
            send(&app, "POST", &h, note).await.status,
            StatusCode::ACCEPTED
        );
        sessions.push(sid);
    }
    let batch = r#"[{"jsonrpc":"2.0","id":2,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":9}}]"#;
    let h = [("mcp-session-id", sessions[0].as_str())];
    let served = send(&app, "POST", &h, batch).await;
    assert_eq!(served.status, StatusCode::OK);
    assert_eq!(
        served.json(),
        json!([{"jsonrpc": "2.0", "id": 2, "result": {}}])
    );
    let quiet =
        r#"[{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":9}}]"#;
    assert_eq!(
        send(&app, "POST", &h, quiet).await.status,
        StatusCode::ACCEPTED
    );

    let h = [("mcp-session-id", sessions[1].as_str())];
    let refused = send(&app, "POST", &h, batch).await;
    assert_eq!(refused.status, StatusCode::BAD_REQUEST);
    assert_eq!(refused.json()["error"]["code"], -32600);
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

    for (extra, args, says) in [
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
    ] {
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

/// Every tracing event at `level` or above, as its level and fields.
#[derive(Clone, Default)]
struct Capture(std::sync::Arc<std::sync::Mutex<Vec<String>>>);

struct Fields<'a>(&'a mut String);

impl tracing::field::Visit for Fields<'_> {
    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
        self.0.push_str(&format!(" {}={value:?}", field.name()));
    }
}

impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for Capture {
    fn on_event(&self, event: &tracing::Event<'_>, _: tracing_subscriber::layer::Context<'_, S>) {
        let mut line = event.metadata().level().to_string();
        event.record(&mut Fields(&mut line));
        self.0.lock().unwrap().push(line);
    }
}

/// Regression: a request refused by the Host check got `host "…" is not allowed` and the
/// server logged nothing; a user who put the server in a container did not learn what to
/// change. Refusals now name the setting, and are logged.
#[tokio::test]
async fn refusals_say_what_to_change_and_are_logged() {
    use tracing_subscriber::layer::SubscriberExt as _;
    let capture = Capture::default();
    let _guard =
        tracing::subscriber::set_default(tracing_subscriber::registry().with(capture.clone()));
    let app = app(HttpConfig::default().max_sessions(1).max_body_bytes(64));
    let host = send(&app, "POST", &[("host", "myhost.lan:8766")], INIT).await;
    assert_eq!(host.status, StatusCode::FORBIDDEN);
    let message = host.json()["error"]["message"].as_str().unwrap().to_owned();
    assert!(message.contains(r#""myhost.lan:8766""#), "{message}");
    assert!(message.contains("HttpConfig::allowed_hosts"), "{message}");
    let origin = send(&app, "POST", &[("origin", "https://app.example")], INIT).await;
    assert!(
        origin.body.contains("HttpConfig::allowed_origins"),
        "{}",
        origin.body
    );
    let big = send(&app, "POST", &[], "x".repeat(100)).await;
    assert!(
        big.body.contains("HttpConfig::max_body_bytes"),
        "{}",
        big.body
    );
    let json = send(&app, "POST", &[("content-type", "text/plain")], INIT).await;
    assert!(json.body.contains(r#"not \"text/plain\""#), "{}", json.body);
    let small_init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
    let app = self::app(HttpConfig::default().max_sessions(1));
    assert_eq!(
        send(&app, "POST", &[], small_init).await.status,
        StatusCode::OK
    );
    let full = send(&app, "POST", &[], small_init).await;
    assert_eq!(full.status, StatusCode::SERVICE_UNAVAILABLE);
    assert!(
        full.body.contains("HttpConfig::max_sessions"),
        "{}",
        full.body
    );
    let ping = r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#;
    let unknown = send(&app, "POST", &[("mcp-session-id", "nope")], ping).await;
    assert!(
        unknown.body.contains("initialize a new one"),
        "{}",
        unknown.body
    );

    let logs = capture.0.lock().unwrap().clone();
    let logged = |level: &str, text: &str| {
        logs.iter()
            .any(|l| l.starts_with(level) && l.contains(text))
    };
    assert!(logged("WARN", "HttpConfig::allowed_hosts"), "{logs:#?}");
    assert!(logged("WARN", "HttpConfig::allowed_origins"), "{logs:#?}");
    assert!(logged("WARN", "HttpConfig::max_sessions"), "{logs:#?}");
    assert!(logged("INFO", "HttpConfig::max_body_bytes"), "{logs:#?}");
    assert!(logged("DEBUG", "Content-Type"), "{logs:#?}");
    assert!(logged("DEBUG", "unknown session"), "{logs:#?}");
}
