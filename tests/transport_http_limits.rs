//! `transport::http::serve` against slow, silent and greedy peers, over real loopback
//! sockets. The limits are configured short (hundreds of milliseconds) and every wait for the
//! server is bounded generously (10 s): a loaded machine makes the tests slower, never wrong.

use crate::common;

use std::time::Duration;

use common::math_server;
use mcp_registry::Registry;
use mcp_registry::transport::http::{HttpConfig, serve_listener};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpStream;

/// How long a test waits for something the server must do.
const BOUND: Duration = Duration::from_secs(10);
/// A limit long enough never to be reached in a test.
const LONG: Duration = Duration::from_secs(3600);
/// A limit short enough to be reached at once.
const SHORT: Duration = Duration::from_millis(200);

/// Serves the math server under `config` on a free loopback port; returns the address.
async fn start(config: HttpConfig) -> std::net::SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let registry = Registry::from_servers([math_server()]);
    tokio::spawn(serve_listener(listener, registry, "math", config));
    addr
}

fn quiet() -> HttpConfig {
    HttpConfig::default()
        .header_read_timeout(LONG)
        .idle_timeout(LONG)
        .body_read_timeout(LONG)
}

/// A complete request the server answers at once (`GET` without a session: `405`).
const PROBE: &[u8] = b"GET /mcp HTTP/1.1\r\nHost: localhost\r\nAccept: text/event-stream\r\n\r\n";

/// Reads until the server closes the connection (end of input or a reset); `Err` when it
/// does not within [`BOUND`]. Returns what was read.
async fn until_closed(stream: &mut TcpStream) -> Result<String, String> {
    let mut seen = Vec::new();
    let read = tokio::time::timeout(BOUND, async {
        let mut buf = [0u8; 4096];
        loop {
            match stream.read(&mut buf).await {
                Ok(0) | Err(_) => return,
                Ok(n) => seen.extend_from_slice(&buf[..n]),
            }
        }
    })
    .await;
    let text = String::from_utf8_lossy(&seen).into_owned();
    read.map(|()| text.clone()).map_err(|_| text)
}

/// Reads one response head (up to its blank line), within [`BOUND`].
async fn response_head(stream: &mut TcpStream) -> String {
    let mut seen = Vec::new();
    tokio::time::timeout(BOUND, async {
        let mut byte = [0u8; 1];
        while !seen.ends_with(b"\r\n\r\n") {
            assert_eq!(stream.read(&mut byte).await.unwrap(), 1, "closed early");
            seen.push(byte[0]);
        }
    })
    .await
    .expect("a response in time");
    String::from_utf8_lossy(&seen).into_owned()
}

#[tokio::test]
async fn a_request_head_sent_halfway_is_cut_off() {
    let addr = start(quiet().header_read_timeout(SHORT)).await;
    let mut stream = TcpStream::connect(addr).await.unwrap();
    stream
        .write_all(b"POST /mcp HTTP/1.1\r\nHost: localhost\r\n")
        .await
        .unwrap();
    let closed = until_closed(&mut stream).await;
    assert!(closed.is_ok(), "the connection is still open: {closed:?}");
}

#[tokio::test]
async fn a_silent_connection_is_closed() {
    let addr = start(quiet().idle_timeout(SHORT)).await;
    let mut stream = TcpStream::connect(addr).await.unwrap();
    assert_eq!(until_closed(&mut stream).await, Ok(String::new()));
}

#[tokio::test]
async fn a_connection_idle_after_its_answer_is_closed() {
    let addr = start(quiet().idle_timeout(SHORT)).await;
    let mut stream = TcpStream::connect(addr).await.unwrap();
    stream.write_all(PROBE).await.unwrap();
    let head = response_head(&mut stream).await;
    assert!(head.starts_with("HTTP/1.1 405"), "{head}");
    assert!(until_closed(&mut stream).await.is_ok());
}

#[tokio::test]
async fn a_trickled_body_is_refused_with_408() {
    let addr = start(quiet().body_read_timeout(SHORT)).await;
    let mut stream = TcpStream::connect(addr).await.unwrap();
    let head = "POST /mcp HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n\
                Accept: application/json, text/event-stream\r\nContent-Length: 100\r\n\r\n";
    stream.write_all(head.as_bytes()).await.unwrap();
    stream.write_all(b"{\"jsonrpc\":").await.unwrap();
    let reply = until_closed(&mut stream)
        .await
        .expect("closed after the 408");
    assert!(reply.starts_with("HTTP/1.1 408"), "{reply}");
    assert!(reply.contains("HttpConfig::body_read_timeout"), "{reply}");
}

/// `serve` calls its endpoint's `POST` without axum's router (issue #41): the body's limit
/// holds there too, for a body without a length.
#[tokio::test]
async fn a_chunked_body_over_the_limit_is_refused_with_413() {
    let addr = start(quiet().max_body_bytes(1024)).await;
    let mut stream = TcpStream::connect(addr).await.unwrap();
    let head = "POST /mcp HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n\
                Accept: application/json, text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n";
    stream.write_all(head.as_bytes()).await.unwrap();
    for _ in 0..8 {
        let chunk = format!("200\r\n{}\r\n", " ".repeat(512));
        if stream.write_all(chunk.as_bytes()).await.is_err() {
            break;
        }
    }
    let head = response_head(&mut stream).await;
    assert!(head.starts_with("HTTP/1.1 413"), "{head}");
}

#[tokio::test]
async fn past_the_connection_cap_new_connections_wait_for_a_free_slot() {
    let addr = start(quiet().max_connections(2)).await;
    // Two connections answered once, kept open: both hold a slot.
    let mut held = Vec::new();
    for _ in 0..2 {
        let mut stream = TcpStream::connect(addr).await.unwrap();
        stream.write_all(PROBE).await.unwrap();
        assert!(response_head(&mut stream).await.starts_with("HTTP/1.1 405"));
        held.push(stream);
    }
    // A third connects (the kernel's backlog takes it) but is not served...
    let mut third = TcpStream::connect(addr).await.unwrap();
    third.write_all(PROBE).await.unwrap();
    let mut byte = [0u8; 1];
    let early = tokio::time::timeout(Duration::from_millis(300), third.read(&mut byte)).await;
    assert!(early.is_err(), "served past the cap: {early:?}");
    // ...until a slot frees.
    drop(held.pop());
    let head = response_head(&mut third).await;
    assert!(head.starts_with("HTTP/1.1 405"), "{head}");
}

#[tokio::test]
async fn an_open_stream_is_not_idle() {
    // A session's GET stream stays open past the idle limit: a request in progress.
    let addr = start(quiet().idle_timeout(SHORT)).await;
    let mut stream = TcpStream::connect(addr).await.unwrap();
    let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
    let post = format!(
        "POST /mcp HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nContent-Length: {}\r\n\r\n{init}",
        init.len()
    );
    stream.write_all(post.as_bytes()).await.unwrap();
    let head = response_head(&mut stream).await;
    let session = head
        .lines()
        .find_map(|l| l.strip_prefix("mcp-session-id: "))
        .expect("a session id")
        .to_owned();
    let mut get = TcpStream::connect(addr).await.unwrap();
    let open = format!(
        "GET /mcp HTTP/1.1\r\nHost: localhost\r\nAccept: text/event-stream\r\nMcp-Session-Id: {session}\r\n\r\n"
    );
    get.write_all(open.as_bytes()).await.unwrap();
    assert!(response_head(&mut get).await.starts_with("HTTP/1.1 200"));
    // Three idle limits later (the first connection is closed by then), still open.
    assert!(until_closed(&mut stream).await.is_ok());
    let mut byte = [0u8; 1];
    let read = tokio::time::timeout(SHORT * 3, get.read(&mut byte)).await;
    assert!(read.is_err(), "the stream ended: {read:?}");
}

/// D8: a `POST`'s SSE stream read by nobody while its tool sends 100,000 progress
/// notifications holds at most the outbox's bound of them; the reply is kept, and read once
/// the client reads.
#[tokio::test]
async fn a_posts_sse_stream_holds_at_most_the_outbox_bound_for_a_client_that_does_not_read() {
    use std::sync::Arc;

    use axum::body::Body;
    use axum::http::Request;
    use mcp_registry::OUTBOX_CAPACITY;
    use tower::ServiceExt as _;

    let done = Arc::new(tokio::sync::Notify::new());
    let registry = Registry::from_servers([common::flooding_server(done.clone())]);
    let app = mcp_registry::transport::http::router(registry, "s", HttpConfig::default());
    let body = serde_json::json!({
        "jsonrpc": "2.0", "id": 7, "method": "tools/call",
        "params": {"name": "flood", "arguments": {}, "_meta": {
            "progressToken": "p",
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {}
        }}
    });
    let request = Request::builder()
        .method("POST")
        .uri("/mcp")
        .header("host", "localhost")
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "tools/call")
        .header("mcp-name", "flood")
        .body(Body::from(body.to_string()))
        .unwrap();
    let response = app.oneshot(request).await.unwrap();
    tokio::time::timeout(BOUND, done.notified())
        .await
        .expect("the tool sent its notifications");
    let reply = common::http::Reply::read(response).await;
    let events = reply.events();
    let (last, progress) = events.split_last().expect("events");
    assert_eq!(last["id"], 7, "the reply comes last");
    assert_eq!(last["result"]["content"][0]["text"], "flooded");
    // The first notification (which made the reply a stream), then at most the bound.
    assert!(
        progress.len() <= OUTBOX_CAPACITY + 1,
        "{} notifications were kept for a client that did not read",
        progress.len()
    );
    assert_eq!(
        progress.last().unwrap()["params"]["progress"],
        f64::from(common::FLOOD)
    );
}

/// Tells `0` when dropped: the call it is part of was cancelled.
struct Dropped(std::sync::Arc<tokio::sync::Notify>);

impl Drop for Dropped {
    fn drop(&mut self) {
        self.0.notify_one();
    }
}

/// D8: a client that never reads its `POST`'s SSE stream is disconnected once the server's
/// writes have been blocked for `HttpConfig::write_timeout`; its call is cancelled. (Before,
/// the connection, and the call streaming into it, were held for good.)
#[tokio::test]
async fn a_client_that_never_reads_its_stream_is_disconnected() {
    use std::sync::Arc;

    use mcp_registry::{Server, Tool, ToolContext};

    #[derive(serde::Deserialize, schemars::JsonSchema)]
    struct NoArgs {}

    let gone = Arc::new(tokio::sync::Notify::new());
    let endless = {
        let gone = gone.clone();
        Tool::builder("endless")
            .typed(move |ctx: ToolContext, _: NoArgs| {
                let dropped = Dropped(gone.clone());
                async move {
                    let _dropped = dropped;
                    let mut i = 0u64;
                    while i < u64::MAX {
                        i += 1;
                        ctx.progress(
                            i as f64,
                            None,
                            Some("a progress message to fill buffers with"),
                        )
                        .unwrap();
                        tokio::task::yield_now().await;
                    }
                    "never"
                }
            })
            .unwrap()
    };
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let registry = Registry::from_servers([Server::builder("s").tool(endless).build().unwrap()]);
    tokio::spawn(serve_listener(
        listener,
        registry,
        "s",
        quiet().write_timeout(SHORT),
    ));
    let meta = serde_json::json!({"progressToken": "p"});
    let request = common::http::raw_modern_call(7, "endless", meta, "");
    let mut stream = TcpStream::connect(addr).await.unwrap();
    stream.write_all(request.as_bytes()).await.unwrap();
    // Never read: the server's writes block once the socket buffers are full.
    tokio::time::timeout(Duration::from_secs(60), gone.notified())
        .await
        .expect("the server gave up on the client and cancelled its call");
    assert!(
        until_closed(&mut stream).await.is_ok(),
        "the connection is closed"
    );
}
