//! Operating the Streamable HTTP transport: its health routes (liveness, readiness) and its
//! graceful shutdown ([`Shutdown`]): readiness turns false, calls in flight finish within
//! the drain bound and are cut off past it with a clear error, `GET` streams end with a
//! retry hint, and `serve` stops accepting and returns. The in-process tests run on a paused
//! clock; the one over a real socket waits at most [`BOUND`] for the server.

use crate::common;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use axum::body::Body;
use axum::http::StatusCode;
use common::http::{INIT, Reply, send, send_streaming, send_to};
use common::{hanging_tool, math_server};
use http_body_util::BodyExt as _;
use mcp_registry::transport::http::{HttpConfig, Shutdown, router, serve_listener};
use mcp_registry::{Registry, Server};
use serde_json::{Value, json};

/// How long a test waits for something the server must do.
const BOUND: Duration = Duration::from_secs(10);

/// A router over the `math` server and a `hang` tool that never finishes (`dropped` is set
/// once its call is dropped: cancelled).
fn app(config: HttpConfig, dropped: &Arc<AtomicBool>) -> axum::Router {
    let math = math_server();
    let tools = math
        .tools()
        .iter()
        .cloned()
        .chain([hanging_tool(dropped.clone())]);
    let server = Server::builder("math").tools(tools).build().unwrap();
    router(Registry::from_servers([server]), "math", config)
}

/// Opens an initialized legacy session on `app`: its id.
async fn open(app: &axum::Router) -> String {
    let init = send(app, "POST", &[], INIT).await;
    assert_eq!(init.status, StatusCode::OK, "{}", init.body);
    let sid = init.headers["mcp-session-id"].to_str().unwrap().to_owned();
    let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    let ready = send(app, "POST", &[("mcp-session-id", &sid)], initialized).await;
    assert_eq!(ready.status, StatusCode::ACCEPTED, "{}", ready.body);
    sid
}

/// Calls `tool` with `arguments` in session `sid`, as request 7, on a task of its own.
fn call(
    app: &axum::Router,
    sid: &str,
    tool: &str,
    arguments: Value,
) -> tokio::task::JoinHandle<Reply> {
    let body = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
        "params": {"name": tool, "arguments": arguments}});
    let (app, sid) = (app.clone(), sid.to_owned());
    tokio::spawn(
        async move { send(&app, "POST", &[("mcp-session-id", &sid)], body.to_string()).await },
    )
}

/// `GET path` as a load balancer sends it: by address, with no Origin and no token.
async fn probe(app: &axum::Router, path: &str) -> Reply {
    send_to(
        app,
        "GET",
        path,
        &[("host", "10.0.0.5:3000"), ("accept", "")],
        Body::empty(),
    )
    .await
}

#[tokio::test]
async fn liveness_and_readiness_answer_a_probe_by_address() {
    let app = app(HttpConfig::default(), &Arc::default());
    let live = probe(&app, "/healthz").await;
    assert_eq!(live.status, StatusCode::OK, "{}", live.body);
    assert_eq!(live.json(), json!({"status": "live"}));
    let ready = probe(&app, "/readyz").await;
    assert_eq!(ready.status, StatusCode::OK, "{}", ready.body);
    assert_eq!(
        ready.json(),
        json!({"status": "ready", "checks": [
            {"name": "tools_list", "ok": true},
            {"name": "task_store", "ok": true},
        ]})
    );
    // The endpoint itself still checks the host.
    let mcp = send_to(&app, "POST", "/mcp", &[("host", "10.0.0.5:3000")], INIT).await;
    assert_eq!(mcp.status, StatusCode::FORBIDDEN, "{}", mcp.body);
}

#[tokio::test]
async fn health_paths_are_configurable() {
    let config = HttpConfig::default().health_paths("/live", "/ready");
    let app = app(config, &Arc::default());
    assert_eq!(probe(&app, "/live").await.status, StatusCode::OK);
    assert_eq!(probe(&app, "/ready").await.status, StatusCode::OK);
    assert_eq!(probe(&app, "/readyz").await.status, StatusCode::NOT_FOUND);
    let none = self::app(HttpConfig::default().no_health_routes(), &Arc::default());
    assert_eq!(probe(&none, "/healthz").await.status, StatusCode::NOT_FOUND);
}

/// A server whose tools cannot be listed: the probe fails `tools_list`.
#[tokio::test]
async fn readiness_names_a_failed_tools_list() {
    let app = router(Registry::new(), "absent", HttpConfig::default());
    let ready = probe(&app, "/readyz").await;
    assert_eq!(
        ready.status,
        StatusCode::SERVICE_UNAVAILABLE,
        "{}",
        ready.body
    );
    let body = ready.json();
    assert_eq!(body["status"], "not_ready");
    assert_eq!(
        body["checks"][0],
        json!({"name": "tools_list", "ok": false})
    );
}

#[tokio::test]
async fn readiness_is_503_draining_once_the_shutdown_begins() {
    let shutdown = Shutdown::new();
    let app = app(
        HttpConfig::default().shutdown(shutdown.clone()),
        &Arc::default(),
    );
    shutdown.trigger();
    let ready = probe(&app, "/readyz").await;
    assert_eq!(
        ready.status,
        StatusCode::SERVICE_UNAVAILABLE,
        "{}",
        ready.body
    );
    assert_eq!(
        ready.json(),
        json!({"status": "draining", "checks": [{"name": "draining", "ok": false}]})
    );
    // Liveness stays: the process still serves what is in flight.
    assert_eq!(probe(&app, "/healthz").await.status, StatusCode::OK);
}

#[tokio::test(start_paused = true)]
async fn a_slow_call_in_flight_finishes_during_the_drain() {
    let shutdown = Shutdown::new();
    let config = HttpConfig::default()
        .shutdown(shutdown.clone())
        .drain_timeout(Duration::from_secs(30));
    let app = app(config, &Arc::default());
    let sid = open(&app).await;
    let slow = call(&app, &sid, "sleep", json!({"ms": 5_000}));
    tokio::time::sleep(Duration::from_millis(100)).await;
    shutdown.trigger();
    let reply = slow.await.unwrap();
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
    let reply = reply.json();
    assert_eq!(reply["id"], 7);
    assert_eq!(
        reply["result"]["content"][0]["text"], "sleep slept 5000",
        "{reply}"
    );
}

/// Regression (issue 39): a call was never bounded by a shutdown; it is cut off at the drain
/// bound, cancelled, and answered under its id with an error saying why.
#[tokio::test(start_paused = true)]
async fn a_call_past_the_drain_bound_is_cancelled_with_a_clear_error() {
    let shutdown = Shutdown::new();
    let config = HttpConfig::default()
        .shutdown(shutdown.clone())
        .drain_timeout(Duration::from_secs(2));
    let dropped = Arc::new(AtomicBool::new(false));
    let app = app(config, &dropped);
    let sid = open(&app).await;
    let hung = call(&app, &sid, "hang", json!({}));
    tokio::time::sleep(Duration::from_millis(100)).await;
    let triggered = tokio::time::Instant::now();
    shutdown.trigger();
    let reply = hung.await.unwrap();
    assert_eq!(triggered.elapsed(), Duration::from_secs(2));
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
    let reply = reply.json();
    assert_eq!(reply["id"], 7, "{reply}");
    let message = reply["error"]["message"].as_str().unwrap();
    assert!(message.contains("shutting down"), "{message}");
    assert!(message.contains("HttpConfig::drain_timeout"), "{message}");
    tokio::time::sleep(Duration::from_millis(10)).await;
    assert!(dropped.load(Ordering::SeqCst), "the call was not cancelled");
}

#[tokio::test(start_paused = true)]
async fn a_get_stream_ends_with_a_retry_hint_on_drain() {
    let shutdown = Shutdown::new();
    let app = app(
        HttpConfig::default().shutdown(shutdown.clone()),
        &Arc::default(),
    );
    let sid = open(&app).await;
    let response = send_streaming(&app, "GET", &[("mcp-session-id", &sid)]).await;
    assert_eq!(response.status(), StatusCode::OK);
    let mut body = response.into_body();
    shutdown.trigger();
    let mut seen = String::new();
    let ended = tokio::time::timeout(BOUND, async {
        while let Some(frame) = body.frame().await {
            if let Ok(data) = frame.unwrap().into_data() {
                seen.push_str(&String::from_utf8_lossy(&data));
            }
        }
    })
    .await;
    assert!(ended.is_ok(), "the stream did not end: {seen:?}");
    assert!(seen.contains("retry: 1000"), "{seen:?}");
    // A GET while draining ends at once the same way.
    let again = send_streaming(&app, "GET", &[("mcp-session-id", &sid)]).await;
    let text = again.into_body().collect().await.unwrap().to_bytes();
    assert!(String::from_utf8_lossy(&text).contains("retry: 1000"));
}

#[tokio::test]
async fn serve_stops_accepting_and_returns_once_drained() {
    let shutdown = Shutdown::new();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let config = HttpConfig::default().shutdown(shutdown.clone());
    let registry = Registry::from_servers([math_server()]);
    let served = tokio::spawn(serve_listener(listener, registry, "math", config));
    // It serves until triggered.
    let idle = tokio::net::TcpStream::connect(addr).await.unwrap();
    shutdown.trigger();
    let result = tokio::time::timeout(BOUND, served).await;
    assert!(
        matches!(result, Ok(Ok(Ok(())))),
        "serve did not return: {result:?}"
    );
    assert!(tokio::net::TcpStream::connect(addr).await.is_err());
    drop(idle);
}

/// Regression (issue 39): a task under way when its replica shut down stayed `working` until
/// its lease ran out; the drain waits for it up to the bound, then records it `failed`
/// saying why, and stops its run.
#[tokio::test(start_paused = true)]
async fn a_drain_releases_the_tasks_still_under_way_at_its_bound() {
    use common::tasks::{modern, result_of, slow_tool};
    let dropped = Arc::new(AtomicBool::new(false));
    let slow = slow_tool(dropped.clone(), 60, "a minute of work");
    let registry = Registry::from_servers([Server::new("s", None, [slow]).unwrap()]);
    let shutdown = Shutdown::new();
    let config = HttpConfig::default()
        .shutdown(shutdown.clone())
        .drain_timeout(Duration::from_secs(5));
    let _app = router(registry.clone(), "s", config);
    let created = result_of(&registry, modern(1, "tools/call", json!({"name": "slow"}))).await;
    let id = created["taskId"].as_str().unwrap().to_owned();
    let triggered = tokio::time::Instant::now();
    shutdown.hand_over().await;
    assert_eq!(
        triggered.elapsed(),
        Duration::from_secs(5),
        "waited for the bound"
    );
    let got = result_of(&registry, modern(2, "tasks/get", json!({"taskId": id}))).await;
    assert_eq!(got["status"], "failed", "{got}");
    assert!(got.to_string().contains("shut down"), "{got}");
    tokio::task::yield_now().await;
    assert!(dropped.load(Ordering::SeqCst), "the task's run was stopped");
}

/// `GET path` on `stream` (HTTP/1.1, kept alive unless the server says otherwise): the
/// status line and headers (lower-cased), and the body.
async fn get_on(stream: &mut tokio::net::TcpStream, path: &str) -> (String, String) {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    let request = format!("GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut read = Vec::new();
    let head_end = loop {
        if let Some(at) = read.windows(4).position(|w| w == b"\r\n\r\n") {
            break at + 4;
        }
        let mut chunk = [0; 1024];
        let n = tokio::time::timeout(BOUND, stream.read(&mut chunk))
            .await
            .expect("an answer within the bound")
            .unwrap();
        assert!(
            n > 0,
            "closed before answering: {:?}",
            String::from_utf8_lossy(&read)
        );
        read.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&read[..head_end]).to_lowercase();
    let length: usize = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length: "))
        .expect("a content-length")
        .trim()
        .parse()
        .unwrap();
    let mut body = read[head_end..].to_vec();
    body.resize(length, 0);
    let already = read.len() - head_end;
    tokio::time::timeout(BOUND, stream.read_exact(&mut body[already..]))
        .await
        .expect("the body within the bound")
        .unwrap();
    (head, String::from_utf8(body).unwrap())
}

/// Regression (issue 39): `serve` stopped accepting, and closed its idle connections, the
/// moment its shutdown began, before a load balancer could see readiness fail (a request sent
/// meanwhile met a refused or closed connection). With a drain delay it goes on serving, new
/// connections and kept-alive ones, while readiness says `503` `"draining"`.
#[tokio::test]
async fn serve_keeps_serving_through_the_drain_delay() {
    let shutdown = Shutdown::new();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let config = HttpConfig::default()
        .shutdown(shutdown.clone())
        .drain_delay(Duration::from_secs(600));
    let registry = Registry::from_servers([math_server()]);
    let served = tokio::spawn(serve_listener(listener, registry, "math", config));
    let mut kept = tokio::net::TcpStream::connect(addr).await.unwrap();
    let (head, _) = get_on(&mut kept, "/readyz").await;
    assert!(head.starts_with("http/1.1 200"), "{head}");
    shutdown.trigger();
    // A new connection is accepted, and told the replica drains.
    let mut new = tokio::net::TcpStream::connect(addr).await.unwrap();
    let (head, body) = get_on(&mut new, "/readyz").await;
    assert!(head.starts_with("http/1.1 503"), "{head}");
    assert!(body.contains("draining"), "{body}");
    // The connection idle through the trigger is still served, and kept alive.
    for _ in 0..2 {
        let (head, body) = get_on(&mut kept, "/healthz").await;
        assert!(head.starts_with("http/1.1 200"), "{head}: {body}");
        assert!(!head.contains("connection: close"), "{head}");
    }
    served.abort();
}

/// With a drain delay, `serve` stops accepting once it has passed, and returns once drained.
#[tokio::test]
async fn serve_stops_accepting_once_the_drain_delay_has_passed() {
    let shutdown = Shutdown::new();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let config = HttpConfig::default()
        .shutdown(shutdown.clone())
        .drain_delay(Duration::from_millis(300));
    let registry = Registry::from_servers([math_server()]);
    let served = tokio::spawn(serve_listener(listener, registry, "math", config));
    shutdown.trigger();
    let result = tokio::time::timeout(BOUND, served).await;
    assert!(
        matches!(result, Ok(Ok(Ok(())))),
        "serve did not return: {result:?}"
    );
    assert!(tokio::net::TcpStream::connect(addr).await.is_err());
}
