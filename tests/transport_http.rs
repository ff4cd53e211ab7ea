//! The Streamable HTTP transport's checks on each request, driven through the axum router
//! in-process: Origin and Host, body size, media types, and refusals that say what to change.

use crate::common;

use axum::body::Body;
use axum::http::{Request, StatusCode};
use common::http::{INIT, app, send, send_streaming};
use http_body_util::BodyExt;
use mcp_registry::transport::http::HttpConfig;
use serde_json::Value;
use tower::ServiceExt;

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
