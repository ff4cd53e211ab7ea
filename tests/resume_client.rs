//! Our client resuming a legacy session's streams by itself (issue 39): two replicas over
//! real sockets sharing a `redis-server` (skipped without one outside CI), behind a TCP
//! proxy the test switches from replica A to replica B. A drains (its `GET` stream ends
//! with a retry hint) and the connection of a call in flight is cut: the client reopens
//! both on B with `Last-Event-ID`, the call gets its reply, and every notification arrives
//! exactly once. The same with the TypeScript SDK's client (ignored: `.ci/e2e.sh` runs it
//! with the pinned SDK, through `tests/e2e/ts_resume_client.cjs`).

use crate::common;

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::extract::Request;
use axum::middleware::{self, Next};
use common::math_server;
use common::redis::RedisServer;
use mcp_registry::client::{Client, RequestOptions, ServerNotification};
use mcp_registry::protocol::ProtocolVersion;
use mcp_registry::replicas::{Redis, RedisBus, RedisSessions};
use mcp_registry::transport::http::{HttpConfig, Shutdown, router};
use mcp_registry::{Registry, Resource, Server, Tool, ToolContext};
use serde_json::{Map, Value, json};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Notify, Semaphore, broadcast};
use tokio::task::AbortHandle;

/// How long a test waits for something that must happen.
const BOUND: Duration = Duration::from_secs(20);
const NOTE: &str = "note://1";
const LATER: &str = "note://2";

/// The `math` server with two notes and `gated`: progress 1 and 2, then (once `gate` gives
/// a permit) progress 3 and "done".
fn server(gate: &Arc<Semaphore>) -> Server {
    let gate = gate.clone();
    let gated = Tool::builder("gated")
        .typed(move |ctx: ToolContext, _: Map<String, Value>| {
            let gate = gate.clone();
            async move {
                for i in 1..=2 {
                    ctx.progress(f64::from(i), Some(3.0), None).unwrap();
                }
                gate.acquire().await.unwrap().forget();
                ctx.progress(3.0, Some(3.0), None).unwrap();
                "done"
            }
        })
        .unwrap();
    let mut server =
        Server::builder("math").tools(math_server().tools().iter().cloned().chain([gated]));
    for uri in [NOTE, LATER] {
        server = server.resource(
            Resource::builder(uri, uri)
                .handler(|_| async { "text" })
                .unwrap(),
        );
    }
    server.build().unwrap()
}

/// A TCP proxy to a backend the test switches; [`cut`](Self::cut) drops every connection.
struct Proxy {
    addr: SocketAddr,
    backend: Arc<Mutex<SocketAddr>>,
    connections: Arc<Mutex<Vec<AbortHandle>>>,
}

impl Proxy {
    async fn start(backend: SocketAddr) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let proxy = Proxy {
            addr: listener.local_addr().unwrap(),
            backend: Arc::new(Mutex::new(backend)),
            connections: Arc::default(),
        };
        let (backend, connections) = (proxy.backend.clone(), proxy.connections.clone());
        tokio::spawn(async move {
            while let Ok((mut inbound, _)) = listener.accept().await {
                let to = *backend.lock().unwrap();
                let relay = tokio::spawn(async move {
                    if let Ok(mut outbound) = TcpStream::connect(to).await {
                        let _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound).await;
                    }
                });
                connections.lock().unwrap().push(relay.abort_handle());
            }
        });
        proxy
    }

    fn switch(&self, to: SocketAddr) {
        *self.backend.lock().unwrap() = to;
    }

    fn cut(&self) {
        for connection in self.connections.lock().unwrap().drain(..) {
            connection.abort();
        }
    }
}

/// A replica on the Redis at `url`, served on a port of its own: its registry and address.
/// `resumed` is told each time it answers a `GET` resuming a `GET` stream.
async fn replica(
    url: &str,
    gate: &Arc<Semaphore>,
    shutdown: Shutdown,
    resumed: Arc<Notify>,
) -> (Registry, SocketAddr) {
    let bus = RedisBus::new(&Redis::new(url).unwrap().prefix("resume-client"));
    let registry = Registry::builder()
        .server(server(gate))
        .change_bus(bus.clone())
        .build();
    bus.ready().await.expect("the bus subscribes");
    let config = HttpConfig::default()
        .session_store(RedisSessions::new(&bus))
        .shutdown(shutdown);
    let app = router(registry.clone(), "math", config).layer(middleware::from_fn(
        move |request: Request, next: Next| {
            let resumed = resumed.clone();
            async move {
                let get_stream = request
                    .headers()
                    .get("last-event-id")
                    .is_some_and(|id| id.as_bytes().starts_with(b"g"));
                let response = next.run(request).await;
                if get_stream && response.status().is_success() {
                    resumed.notify_one();
                }
                response
            }
        },
    ));
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        // The router drains with its shutdown; the proxy no longer sends A anything then.
        let _ = axum::serve(listener, app).await;
    });
    (registry, addr)
}

/// The next notification (at most [`BOUND`]).
async fn next(notes: &mut broadcast::Receiver<ServerNotification>) -> ServerNotification {
    tokio::time::timeout(BOUND, notes.recv())
        .await
        .expect("a notification in time")
        .unwrap()
}

fn describe(n: &ServerNotification) -> String {
    match n {
        ServerNotification::Progress(p) => format!("progress {}", p.progress),
        ServerNotification::ResourceUpdated(r) => format!("updated {}", r.uri),
        other => format!("{other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_client_resumes_its_streams_on_another_replica_by_itself() {
    let Some(redis) = RedisServer::start().await else {
        return;
    };
    let gate = Arc::new(Semaphore::new(0));
    let (shutdown, resumed) = (Shutdown::new(), Arc::new(Notify::new()));
    let (reg_a, a) = replica(&redis.url(), &gate, shutdown.clone(), resumed.clone()).await;
    let (reg_b, b) = replica(&redis.url(), &gate, Shutdown::new(), resumed.clone()).await;
    let proxy = Proxy::start(a).await;
    let client = Client::builder()
        .protocol_version(ProtocolVersion::V2025_11_25)
        .connect_http(&format!("http://{}/mcp", proxy.addr))
        .await
        .unwrap();
    let mut notes = client.notifications();
    for uri in [NOTE, LATER] {
        client.subscribe_resource(uri).await.unwrap();
    }
    reg_a.notify_resource_updated(NOTE);
    let mut seen = vec![describe(&next(&mut notes).await)];
    let calling = {
        let client = client.clone();
        let options = RequestOptions::new().progress_token("t");
        tokio::spawn(async move { client.call_tool("gated", json!({})).options(options).await })
    };
    for _ in 0..2 {
        seen.push(describe(&next(&mut notes).await));
    }
    // A rolling restart: new connections go to B; A drains (its GET stream ends with a
    // retry hint) and the connection of the call in flight drops.
    proxy.switch(b);
    shutdown.trigger();
    proxy.cut();
    tokio::time::timeout(BOUND, resumed.notified())
        .await
        .expect("the client resumed its GET stream on B");
    gate.add_permits(1);
    let result = tokio::time::timeout(BOUND, calling)
        .await
        .expect("the call is answered")
        .unwrap()
        .expect("the call succeeds");
    assert_eq!(result.first_text(), Some("done"), "{result:?}");
    reg_b.notify_resource_updated(LATER);
    for _ in 0..2 {
        seen.push(describe(&next(&mut notes).await));
    }
    assert_eq!(
        seen,
        [
            "updated note://1",
            "progress 1",
            "progress 2",
            "progress 3",
            "updated note://2"
        ]
    );
    // Nothing more: no notification came twice.
    let extra = tokio::time::timeout(Duration::from_millis(300), notes.recv()).await;
    assert!(extra.is_err(), "a notification came twice: {extra:?}");
}

/// The next line the TypeScript client says (at most [`BOUND`]).
async fn said(
    lines: &mut tokio::io::Lines<tokio::io::BufReader<tokio::process::ChildStdout>>,
) -> String {
    tokio::time::timeout(BOUND, lines.next_line())
        .await
        .expect("the TypeScript client says something in time")
        .unwrap()
        .expect("the TypeScript client runs")
}

/// The same with the TypeScript SDK's client (its StreamableHTTPClientTransport resumes GET
/// and POST streams with `Last-Event-ID`): run with `MCP_E2E_TS_SDK` naming a directory whose
/// `node_modules` holds `@modelcontextprotocol/sdk` (`.ci/e2e.sh` installs it pinned, and runs
/// this with its Node, `MCP_E2E_NODE`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs Node and the TypeScript SDK (MCP_E2E_TS_SDK)"]
async fn the_typescript_sdk_client_resumes_its_streams_on_another_replica() {
    use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _};
    let sdk = std::env::var("MCP_E2E_TS_SDK").expect("MCP_E2E_TS_SDK names the SDK's directory");
    let Some(redis) = RedisServer::start().await else {
        return;
    };
    let gate = Arc::new(Semaphore::new(0));
    let (shutdown, resumed) = (Shutdown::new(), Arc::new(Notify::new()));
    let (reg_a, a) = replica(&redis.url(), &gate, shutdown.clone(), resumed.clone()).await;
    let (reg_b, b) = replica(&redis.url(), &gate, Shutdown::new(), resumed.clone()).await;
    let proxy = Proxy::start(a).await;
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/e2e/ts_resume_client.cjs"
    );
    let node = std::env::var("MCP_E2E_NODE").unwrap_or_else(|_| "node".to_owned());
    let mut node = tokio::process::Command::new(node)
        .args([script, &sdk, &format!("http://{}/mcp", proxy.addr)])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("node runs");
    let mut stdin = node.stdin.take().unwrap();
    let mut lines = tokio::io::BufReader::new(node.stdout.take().unwrap()).lines();
    assert_eq!(said(&mut lines).await, "ready");
    reg_a.notify_resource_updated(NOTE);
    let mut seen = vec![said(&mut lines).await];
    stdin.write_all(b"call\n").await.unwrap();
    for _ in 0..2 {
        seen.push(said(&mut lines).await);
    }
    proxy.switch(b);
    shutdown.trigger();
    proxy.cut();
    tokio::time::timeout(BOUND, resumed.notified())
        .await
        .expect("the TypeScript client resumed its GET stream on B");
    gate.add_permits(1);
    for _ in 0..2 {
        seen.push(said(&mut lines).await);
    }
    reg_b.notify_resource_updated(LATER);
    seen.push(said(&mut lines).await);
    assert_eq!(
        seen,
        [
            "updated note://1",
            "progress 1",
            "progress 2",
            "progress 3",
            "result done",
            "updated note://2"
        ]
    );
    stdin.write_all(b"close\n").await.unwrap();
    let extra = tokio::time::timeout(Duration::from_millis(300), lines.next_line()).await;
    assert!(
        !matches!(extra, Ok(Ok(Some(ref line))) if !line.is_empty()),
        "said more (a notification twice?): {extra:?}"
    );
}
