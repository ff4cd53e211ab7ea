//! The HTTP client against scripted hostile servers on loopback (raw HTTP/1.1 over a
//! `TcpListener`, so a reply can be malformed, never end, redirect elsewhere or fail):
//! bodies and events are bounded with errors naming the limit, a non-UTF-8 event is skipped,
//! no redirect crosses origins unless allowed (and then without the client's headers or
//! session), 5xx is retried (after `Retry-After`) and 4xx never.

use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_registry::client::transport::TransportError;
use mcp_registry::client::{Backoff, Client, ClientBuilder, ClientError, RequestPolicy};
use mcp_registry::protocol::ProtocolVersion;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};

/// A generous bound on every wait: a hung client fails the test instead of hanging it.
const BOUND: Duration = Duration::from_secs(30);

/// One HTTP request as the server saw it.
#[derive(Debug, Clone)]
struct Seen {
    verb: String,
    headers: Vec<(String, String)>,
    body: Value,
}

impl Seen {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    fn rpc_method(&self) -> Option<&str> {
        self.body.get("method").and_then(Value::as_str)
    }
}

type Reply = Pin<Box<dyn Future<Output = ()> + Send>>;
type Script = Arc<dyn Fn(Seen, TcpStream) -> Reply + Send + Sync>;

/// A server answering the handshake itself and every `tools/call` with `script`; what it
/// saw is kept in order.
async fn server(script: Script) -> (SocketAddr, Arc<Mutex<Vec<Seen>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = Arc::clone(&seen);
    tokio::spawn(async move {
        while let Ok((socket, _)) = listener.accept().await {
            let script = Arc::clone(&script);
            let log = Arc::clone(&log);
            tokio::spawn(async move {
                let (request, socket) = read_request(socket).await;
                log.lock().unwrap().push(request.clone());
                answer(request, socket, script).await;
            });
        }
    });
    (addr, seen)
}

async fn read_request(socket: TcpStream) -> (Seen, TcpStream) {
    let mut reader = BufReader::new(socket);
    let mut line = String::new();
    reader.read_line(&mut line).await.unwrap();
    let verb = line.split(' ').next().unwrap_or_default().to_owned();
    let mut headers = Vec::new();
    loop {
        line.clear();
        reader.read_line(&mut line).await.unwrap();
        let Some((name, value)) = line.trim_end().split_once(':') else {
            break;
        };
        headers.push((name.trim().to_owned(), value.trim().to_owned()));
    }
    let length: usize = headers
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case("content-length"))
        .map_or(0, |(_, v)| v.parse().unwrap());
    let mut body = vec![0; length];
    reader.read_exact(&mut body).await.unwrap();
    let body = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let seen = Seen {
        verb,
        headers,
        body,
    };
    (seen, reader.into_inner())
}

async fn answer(request: Seen, mut socket: TcpStream, script: Script) {
    let id = request.body.get("id").cloned().unwrap_or(Value::Null);
    match (request.verb.as_str(), request.rpc_method()) {
        ("POST", Some("initialize")) => {
            let init = json!({"jsonrpc": "2.0", "id": id, "result": {
                "protocolVersion": "2025-06-18", "capabilities": {"tools": {}},
                "serverInfo": {"name": "hostile", "version": "1"}}});
            let head = "Content-Type: application/json\r\nMcp-Session-Id: s-1\r\n";
            write(&mut socket, "200 OK", head, init.to_string().as_bytes()).await;
        }
        ("POST", Some("tools/call")) => script(request, socket).await,
        ("POST", _) => write(&mut socket, "202 Accepted", "", b"").await,
        ("GET", _) => write(&mut socket, "405 Method Not Allowed", "", b"").await,
        _ => write(&mut socket, "200 OK", "", b"").await,
    }
}

async fn write(socket: &mut TcpStream, status: &str, headers: &str, body: &[u8]) {
    let head = format!(
        "HTTP/1.1 {status}\r\n{headers}Content-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    let _ = socket.write_all(head.as_bytes()).await;
    let _ = socket.write_all(body).await;
}

/// Writes `head` then `chunk` until the client hangs up: a body that never ends.
async fn endless(socket: &mut TcpStream, content_type: &str, head: &[u8], chunk: &[u8]) {
    let start =
        format!("HTTP/1.1 200 OK\r\nContent-Type: {content_type}\r\nConnection: close\r\n\r\n");
    let _ = socket.write_all(start.as_bytes()).await;
    let _ = socket.write_all(head).await;
    while socket.write_all(chunk).await.is_ok() {}
}

fn reply(id: &Value, text: &str) -> String {
    json!({"jsonrpc": "2.0", "id": id, "result": {"content": [{"type": "text", "text": text}]}})
        .to_string()
}

fn script<F, Fut>(f: F) -> Script
where
    F: Fn(Seen, TcpStream) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = ()> + Send + 'static,
{
    Arc::new(move |seen, socket| Box::pin(f(seen, socket)))
}

fn builder() -> ClientBuilder {
    Client::builder()
        .protocol_version(ProtocolVersion::V2025_06_18)
        .policy("tools/call", RequestPolicy::new().retries(0))
}

async fn bounded<T>(future: impl Future<Output = T>) -> T {
    tokio::time::timeout(BOUND, future)
        .await
        .expect("the client answered within the bound")
}

async fn connect(builder: ClientBuilder, addr: SocketAddr) -> Client {
    bounded(builder.connect_http(&format!("http://{addr}/mcp")))
        .await
        .unwrap()
}

fn too_large(error: &ClientError, what: &str, limit: usize) -> bool {
    matches!(
        error,
        ClientError::Transport(TransportError::TooLarge { what: w, limit: l }) if *w == what && *l == limit
    ) && error.to_string().contains("max_message_bytes")
}

fn id_of(seen: &Seen) -> Value {
    seen.body.get("id").cloned().unwrap_or(Value::Null)
}

/// Answers the call `seen` with a JSON result of one text, `text`.
async fn answer_text(socket: &mut TcpStream, seen: &Seen, text: &str) {
    let body = reply(&id_of(seen), text);
    let head = "Content-Type: application/json\r\n";
    write(socket, "200 OK", head, body.as_bytes()).await;
}

/// A server answering every call with "elsewhere", and one redirecting every call to it:
/// the redirecting server's address, what it saw, and what the other saw.
async fn redirect_elsewhere() -> (SocketAddr, Arc<Mutex<Vec<Seen>>>, Arc<Mutex<Vec<Seen>>>) {
    let (elsewhere, seen_elsewhere) = server(script(|seen, mut socket| async move {
        answer_text(&mut socket, &seen, "elsewhere").await;
    }))
    .await;
    let location = format!("Location: http://{elsewhere}/mcp\r\n");
    let (addr, seen_here) = server(script(move |_, mut socket| {
        let location = location.clone();
        async move { write(&mut socket, "307 Temporary Redirect", &location, b"").await }
    }))
    .await;
    (addr, seen_here, seen_elsewhere)
}

/// The client's limit on a message in the tests of answers that never end.
const LIMIT: usize = 64 * 1024;

/// The error of a call, under [`LIMIT`], whose answer of `content_type` never ends: `head`,
/// then `chunk` until the client hangs up.
async fn endless_call(
    content_type: &'static str,
    head: &'static [u8],
    chunk: &'static [u8],
) -> ClientError {
    let (addr, _) = server(script(move |_, mut socket| async move {
        endless(&mut socket, content_type, head, chunk).await;
    }))
    .await;
    let client = connect(builder().max_message_bytes(LIMIT), addr).await;
    bounded(client.call_tool("t", json!({}))).await.unwrap_err()
}

#[tokio::test]
async fn a_json_body_that_never_ends_fails_by_the_limit() {
    let error = endless_call("application/json", b"{\"a\":\"", &[b'a'; 8192]).await;
    assert!(too_large(&error, "a JSON body", LIMIT), "{error}");
}

#[tokio::test]
async fn an_sse_data_line_that_never_ends_fails_by_the_limit() {
    let error = endless_call("text/event-stream", b"data: {\"a\":\"", &[b'a'; 8192]).await;
    assert!(too_large(&error, "an SSE event", LIMIT), "{error}");
}

#[tokio::test]
async fn an_sse_event_that_never_ends_fails_by_the_limit() {
    let error = endless_call("text/event-stream", b"", b"data: aaaaaaaaaaaaaaaa\n").await;
    assert!(too_large(&error, "an SSE event", LIMIT), "{error}");
}

#[tokio::test]
async fn an_sse_event_that_is_not_utf8_is_skipped_and_the_reply_after_it_arrives() {
    let (addr, _) = server(script(|seen, mut socket| async move {
        let mut body = b"data: \xff\xfe\n\n".to_vec();
        body.extend_from_slice(format!("data: {}\n\n", reply(&id_of(&seen), "after")).as_bytes());
        write(
            &mut socket,
            "200 OK",
            "Content-Type: text/event-stream\r\n",
            &body,
        )
        .await;
    }))
    .await;
    let client = connect(builder(), addr).await;
    let result = bounded(client.call_tool("t", json!({}))).await.unwrap();
    assert_eq!(result.first_text(), Some("after"));
}

#[tokio::test]
async fn a_redirect_to_another_origin_is_refused_by_default() {
    let (addr, _, seen_elsewhere) = redirect_elsewhere().await;
    let client = connect(builder().header("X-Api-Key", "secret"), addr).await;
    let error = bounded(client.call_tool("t", json!({}))).await.unwrap_err();
    assert!(
        matches!(
            error,
            ClientError::Transport(TransportError::Redirected { .. })
        ),
        "{error}"
    );
    assert!(
        error.to_string().contains("redirects_across_origins"),
        "{error}"
    );
    assert!(seen_elsewhere.lock().unwrap().is_empty());
}

#[tokio::test]
async fn an_allowed_redirect_to_another_origin_carries_no_custom_header_or_session() {
    let (addr, seen_here, seen_elsewhere) = redirect_elsewhere().await;
    let builder = builder()
        .header("X-Api-Key", "secret")
        .redirects_across_origins(true);
    let client = connect(builder, addr).await;
    let result = bounded(client.call_tool("t", json!({}))).await.unwrap();
    assert_eq!(result.first_text(), Some("elsewhere"));
    let here = seen_here.lock().unwrap().clone();
    let call_here = here
        .iter()
        .find(|s| s.rpc_method() == Some("tools/call"))
        .unwrap();
    assert_eq!(call_here.header("x-api-key"), Some("secret"));
    assert_eq!(call_here.header("mcp-session-id"), Some("s-1"));
    let there = seen_elsewhere.lock().unwrap().clone();
    assert_eq!(there.len(), 1);
    assert_eq!(there[0].rpc_method(), Some("tools/call"));
    assert_eq!(there[0].header("x-api-key"), None);
    assert_eq!(there[0].header("mcp-session-id"), None);
}

/// A server failing the first `tools/call` with `status` (and `headers`, `body`), answering
/// the next.
async fn failing_once(
    status: &'static str,
    headers: &'static str,
    body: &'static str,
) -> (SocketAddr, Arc<Mutex<Vec<Seen>>>) {
    let calls = Arc::new(Mutex::new(0));
    server(script(move |seen, mut socket| {
        let calls = Arc::clone(&calls);
        async move {
            let first = {
                let mut calls = calls.lock().unwrap();
                *calls += 1;
                *calls == 1
            };
            if first {
                write(&mut socket, status, headers, body.as_bytes()).await;
            } else {
                answer_text(&mut socket, &seen, "second").await;
            }
        }
    }))
    .await
}

fn retrying() -> ClientBuilder {
    builder().policy(
        "tools/call",
        RequestPolicy::new()
            .retries(2)
            .backoff(Backoff::custom(|_| Duration::from_millis(1))),
    )
}

fn tool_calls(seen: &Mutex<Vec<Seen>>) -> usize {
    let seen = seen.lock().unwrap();
    seen.iter()
        .filter(|s| s.rpc_method() == Some("tools/call"))
        .count()
}

#[tokio::test]
async fn a_503_is_retried_after_its_retry_after() {
    let (addr, seen) = failing_once("503 Service Unavailable", "Retry-After: 1\r\n", "busy").await;
    let client = connect(retrying(), addr).await;
    let started = std::time::Instant::now();
    let result = bounded(client.call_tool("t", json!({}))).await.unwrap();
    assert_eq!(result.first_text(), Some("second"));
    assert_eq!(tool_calls(&seen), 2);
    // A lower bound only: the wait is at least what the server asked for.
    assert!(started.elapsed() >= Duration::from_secs(1));
}

#[tokio::test]
async fn a_500_with_a_text_body_is_retried() {
    let (addr, seen) = failing_once("500 Internal Server Error", "", "oops").await;
    let client = connect(retrying(), addr).await;
    let result = bounded(client.call_tool("t", json!({}))).await.unwrap();
    assert_eq!(result.first_text(), Some("second"));
    assert_eq!(tool_calls(&seen), 2);
}

#[tokio::test]
async fn a_4xx_is_never_retried() {
    let (addr, seen) = failing_once("422 Unprocessable Entity", "", "no").await;
    let client = connect(retrying(), addr).await;
    let error = bounded(client.call_tool("t", json!({}))).await.unwrap_err();
    assert!(
        matches!(
            error,
            ClientError::Transport(TransportError::Status { status: 422, .. })
        ),
        "{error}"
    );
    assert_eq!(tool_calls(&seen), 1);
}
