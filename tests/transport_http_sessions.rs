//! The Streamable HTTP transport's legacy sessions, driven through the axum router
//! in-process: their lifecycle, the GET stream, idle expiry, the session cap and batches.

use crate::common;

use axum::body::Body;
use axum::http::{Request, StatusCode};
use common::assert_valid;
use common::http::{INIT, app, modern, send, send_streaming};
use http_body_util::BodyExt;
use mcp_registry::transport::http::{HttpConfig, router};
use mcp_registry::{Registry, Server, Tool};
use serde_json::json;
use tower::ServiceExt;

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

    serves_requests_in_the_session(&app, &h).await;
    refuses_unknown_missing_and_mismatched_sessions(&app, &sid).await;
    deleting_ends_the_session(&app, &h).await;
}

/// In a session: `notifications/initialized` is accepted, a list and a call are answered with
/// JSON, and a call with a progress token with an SSE stream (notifications first).
async fn serves_requests_in_the_session(app: &axum::Router, h: &[(&str, &str)]) {
    let note = send(
        app,
        "POST",
        h,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
    )
    .await;
    assert_eq!(note.status, StatusCode::ACCEPTED);
    assert!(note.body.is_empty());

    let list = send(
        app,
        "POST",
        h,
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#,
    )
    .await;
    assert_eq!(list.status, StatusCode::OK);
    assert_eq!(list.headers["content-type"], "application/json");
    assert_eq!(list.json()["result"]["tools"].as_array().unwrap().len(), 6);

    // Without progress: a plain JSON reply.
    let call = send(app, "POST", h, r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"add","arguments":{"a":2}}}"#).await;
    assert_eq!(
        call.json()["result"]["structuredContent"],
        json!({"value": 2})
    );

    // With progress: an SSE stream, notifications first, the reply last.
    let streamed = send(
        app,
        "POST",
        h,
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
}

/// An unknown session id is 404; a missing one, or a protocol version the session did not
/// negotiate, is 400.
async fn refuses_unknown_missing_and_mismatched_sessions(app: &axum::Router, sid: &str) {
    let unknown = send(
        app,
        "POST",
        &[("mcp-session-id", "nope")],
        r#"{"jsonrpc":"2.0","id":5,"method":"ping"}"#,
    )
    .await;
    assert_eq!(unknown.status, StatusCode::NOT_FOUND);
    let missing = send(
        app,
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
        app,
        "POST",
        &[
            ("mcp-session-id", sid),
            ("mcp-protocol-version", "1999-01-01"),
        ],
        r#"{"jsonrpc":"2.0","id":5,"method":"ping"}"#,
    )
    .await;
    assert_eq!(bad_version.status, StatusCode::BAD_REQUEST);
}

/// DELETE ends the session (later requests, and a second DELETE, are 404); GET without a
/// session is 405.
async fn deleting_ends_the_session(app: &axum::Router, h: &[(&str, &str)]) {
    let deleted = send(app, "DELETE", h, Body::empty()).await;
    assert_eq!(deleted.status, StatusCode::OK);
    let after = send(
        app,
        "POST",
        h,
        r#"{"jsonrpc":"2.0","id":6,"method":"ping"}"#,
    )
    .await;
    assert_eq!(after.status, StatusCode::NOT_FOUND);
    assert_eq!(
        send(app, "DELETE", h, Body::empty()).await.status,
        StatusCode::NOT_FOUND
    );
    assert_eq!(
        send(app, "GET", &[], Body::empty()).await.status,
        StatusCode::METHOD_NOT_ALLOWED
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
