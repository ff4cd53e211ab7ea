//! The HTTP server against its floor, measured on the server: `cargo bench --bench http_floor`.
//!
//! Two servers, each in its own process (this binary again, `HTTP_FLOOR_SERVE=floor|mcp`), so
//! the CPU each spends is read from `/proc/<pid>/stat`:
//!
//! - `floor`: bare axum (`axum::serve`, TCP_NODELAY) answering exactly what the MCP server
//!   answers for these messages: `initialize` (with an `Mcp-Session-Id` header),
//!   `notifications/initialized` (202), and `tools/call` in both eras, each body read with
//!   serde into typed structs and the same JSON written back.
//! - `ours`: `transport::http::serve` with the same `add` tool as `benches/http_load.rs`.
//!
//! The load generator is this process: a current-thread runtime driving hyper's HTTP/1 client,
//! one keep-alive connection per client (TCP_NODELAY). With two or more cores it is pinned to
//! core 0 and the servers to core 1 (`taskset`), so the generator does not share a core with
//! the server it measures. Rounds alternate between the servers (the order flips each round).
//! Each row reports requests per second, p50/p90/p99/max latency (a sorted vector of every
//! call in the window), the server's CPU per call (user + system ticks over the window), and
//! how many calls took 1, 4, 16, 64 ms or more (the tail's shape). Every reply is checked: its
//! status, its id, the text `3`, no error.
//!
//! `HTTP_FLOOR_QUICK=1`, or running without `--bench` (as `cargo test --benches` does), runs a
//! few hundred calls per row so the benchmark cannot rot; `HTTP_FLOOR_ROUNDS`, `HTTP_FLOOR_SECS`
//! and `HTTP_FLOOR_CLIENTS` (comma-separated) change a full run;
//! `HTTP_FLOOR_RUNTIME=current_thread` serves both from tokio's single-threaded runtime.

#[path = "http_floor/load.rs"]
mod load;

use std::io::{BufRead as _, BufReader};
use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use axum::Json;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use mcp_registry::transport::http::{HttpConfig, serve};
use mcp_registry::{Registry, Server, Tool};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

const LEGACY: &str = "2025-11-25";
const MODERN: &str = "2026-07-28";

#[derive(Deserialize, JsonSchema)]
struct AddArgs {
    a: i64,
    b: i64,
}

fn main() {
    if let Ok(which) = std::env::var("HTTP_FLOOR_SERVE") {
        return serve_forever(&which);
    }
    if let Ok(port) = std::env::var("HTTP_FLOOR_DRIVE") {
        let era = std::env::var("HTTP_FLOOR_ERA").unwrap_or_default();
        let calls = std::env::var("HTTP_FLOOR_CALLS")
            .ok()
            .and_then(|n| n.parse().ok())
            .unwrap_or(1000);
        let clients = std::env::var("HTTP_FLOOR_CLIENTS")
            .ok()
            .and_then(|n| n.parse().ok())
            .unwrap_or(1);
        return load::drive(port.parse().expect("a port"), &era, calls, clients);
    }
    let quick =
        std::env::var_os("HTTP_FLOOR_QUICK").is_some() || !std::env::args().any(|a| a == "--bench");
    let plan = Plan::new(quick);
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    let pinned = cores >= 2 && pin_self(0);
    let floor = ServerProcess::start("floor", pinned);
    let ours = ServerProcess::start("mcp", pinned);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    println!(
        "http_floor: {} round(s) of {:?} per row after {:?} of warm-up; {}",
        plan.rounds,
        plan.measure,
        plan.warmup,
        if pinned {
            "load generator on core 0, servers on core 1"
        } else {
            "not pinned"
        }
    );
    runtime.block_on(load::run(&plan, [&floor, &ours]));
    for server in [floor, ours] {
        if let Some(mut process) = server.process {
            let _ = process.kill();
            let _ = process.wait();
        }
    }
}

/// What one run measures.
struct Plan {
    rounds: usize,
    warmup: Duration,
    measure: Duration,
    clients: Vec<usize>,
    /// Quick mode: a fixed number of calls per client instead of a window.
    quick: bool,
    /// Open loop (`HTTP_FLOOR_RATE`, calls per second over all clients): each client sends
    /// on its own schedule and a call's latency runs from when it was due, so a server that
    /// falls behind shows its queue (what wrk2 measures). `None`: closed loop, each client
    /// sending its next call when the last is answered.
    rate: Option<f64>,
}

impl Plan {
    fn new(quick: bool) -> Plan {
        let env = |name: &str| std::env::var(name).ok();
        if quick {
            return Plan {
                rounds: 1,
                warmup: Duration::ZERO,
                measure: Duration::from_millis(300),
                clients: vec![1, 50],
                quick,
                rate: None,
            };
        }
        let secs = env("HTTP_FLOOR_SECS")
            .and_then(|s| s.parse().ok())
            .unwrap_or(5);
        Plan {
            rounds: env("HTTP_FLOOR_ROUNDS")
                .and_then(|s| s.parse().ok())
                .unwrap_or(3),
            warmup: Duration::from_secs(1),
            measure: Duration::from_secs(secs),
            clients: env("HTTP_FLOOR_CLIENTS")
                .map(|s| s.split(',').filter_map(|c| c.parse().ok()).collect())
                .unwrap_or_else(|| vec![1, 50, 500]),
            quick,
            rate: env("HTTP_FLOOR_RATE").and_then(|s| s.parse().ok()),
        }
    }
}

/// Pins this process (and the threads it starts later) to `core`.
fn pin_self(core: usize) -> bool {
    Command::new("taskset")
        .args(["-cp", &core.to_string(), &std::process::id().to_string()])
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// A server in its own process, and its port.
struct ServerProcess {
    name: &'static str,
    process: Option<Child>,
    addr: SocketAddr,
}

impl ServerProcess {
    /// A server started elsewhere (for `HTTP_FLOOR_DRIVE`): no process to read.
    fn at(addr: SocketAddr) -> ServerProcess {
        ServerProcess {
            name: "",
            process: None,
            addr,
        }
    }

    fn start(which: &'static str, pinned: bool) -> ServerProcess {
        let exe = std::env::current_exe().expect("this executable");
        let mut command = if pinned {
            let mut c = Command::new("taskset");
            c.args(["-c", "1"]).arg(exe);
            c
        } else {
            Command::new(exe)
        };
        let mut process = command
            .env("HTTP_FLOOR_SERVE", which)
            .stdout(Stdio::piped())
            .spawn()
            .expect("the server process starts");
        let mut line = String::new();
        BufReader::new(process.stdout.take().expect("piped stdout"))
            .read_line(&mut line)
            .expect("the server prints its port");
        let port: u16 = line.trim().parse().expect("a port");
        ServerProcess {
            name: if which == "floor" { "floor" } else { "ours" },
            process: Some(process),
            addr: ([127, 0, 0, 1], port).into(),
        }
    }

    /// User + system CPU ticks of the server process so far.
    fn cpu_ticks(&self) -> u64 {
        let Some(process) = &self.process else {
            return 0;
        };
        let stat =
            std::fs::read_to_string(format!("/proc/{}/stat", process.id())).unwrap_or_default();
        // Fields after the command name (which may hold spaces): state is field 3; utime and
        // stime are fields 14 and 15.
        let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
        let fields: Vec<&str> = rest.split_whitespace().collect();
        let tick = |i: usize| {
            fields
                .get(i)
                .and_then(|f| f.parse::<u64>().ok())
                .unwrap_or(0)
        };
        tick(11) + tick(12)
    }
}

/// The child: one server on a free loopback port, its port on stdout, until killed.
fn serve_forever(which: &str) {
    // The runtime's queue discipline decides the tail of a saturated server (benches/README.md):
    // `HTTP_FLOOR_GLOBAL_QUEUE_INTERVAL` and `HTTP_FLOOR_EVENT_INTERVAL` set tokio's knobs of
    // the same names, for both servers; `HTTP_FLOOR_RUNTIME=current_thread` runs both on
    // tokio's single-threaded scheduler instead (one core is all each server has).
    let mut builder = if std::env::var("HTTP_FLOOR_RUNTIME").as_deref() == Ok("current_thread") {
        tokio::runtime::Builder::new_current_thread()
    } else {
        tokio::runtime::Builder::new_multi_thread()
    };
    let knob = |name: &str| std::env::var(name).ok().and_then(|s| s.parse().ok());
    if let Some(n) = knob("HTTP_FLOOR_GLOBAL_QUEUE_INTERVAL") {
        builder.global_queue_interval(n);
    }
    if let Some(n) = knob("HTTP_FLOOR_EVENT_INTERVAL") {
        builder.event_interval(n);
    }
    let runtime = builder.enable_all().build().expect("a runtime");
    runtime.block_on(async {
        let port = if which == "floor" {
            serve_floor().await
        } else {
            serve_ours().await
        };
        println!("{port}");
        std::future::pending::<()>().await;
    });
}

async fn serve_ours() -> u16 {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port();
    let add = Tool::builder("add")
        .description("Add two integers")
        .typed(|a: AddArgs| async move { (a.a + a.b).to_string() })
        .expect("valid tool");
    let server = Server::new("math", None, [add]).expect("server");
    let registry = Registry::from_servers([server]);
    let config = HttpConfig::default().max_sessions(100_000);
    let addr: SocketAddr = ([127, 0, 0, 1], port).into();
    tokio::spawn(async move { serve(registry, "math", addr, config).await });
    while tokio::net::TcpStream::connect(addr).await.is_err() {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    port
}

async fn serve_floor() -> u16 {
    use axum::serve::ListenerExt as _;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let port = listener.local_addr().expect("addr").port();
    let listener = listener.tap_io(|tcp| {
        let _ = tcp.set_nodelay(true);
    });
    let app = axum::Router::new().route("/mcp", post(floor_handler));
    tokio::spawn(async move { axum::serve(listener, app).await });
    port
}

/// The floor's request: the same body, read with serde.
#[derive(Deserialize)]
struct FloorRequest {
    #[allow(dead_code)]
    jsonrpc: String,
    id: Option<Value>,
    method: String,
    params: Option<FloorParams>,
}

#[derive(Deserialize)]
struct FloorParams {
    #[allow(dead_code)]
    name: Option<String>,
    arguments: Option<AddArgs>,
    #[serde(rename = "_meta")]
    meta: Option<FloorMeta>,
}

#[derive(Deserialize)]
struct FloorMeta {
    #[serde(rename = "io.modelcontextprotocol/protocolVersion")]
    #[allow(dead_code)]
    protocol_version: Option<String>,
}

/// The floor's reply: the same JSON the MCP server writes for these calls.
#[derive(Serialize)]
struct FloorReply<R> {
    jsonrpc: &'static str,
    id: Value,
    result: R,
}

#[derive(Serialize)]
struct FloorResult {
    content: [FloorText; 1],
    #[serde(rename = "resultType", skip_serializing_if = "Option::is_none")]
    result_type: Option<&'static str>,
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    meta: Option<FloorResultMeta>,
}

#[derive(Serialize)]
struct FloorText {
    #[serde(rename = "type")]
    kind: &'static str,
    text: String,
}

#[derive(Serialize)]
struct FloorResultMeta {
    #[serde(rename = "io.modelcontextprotocol/serverInfo")]
    server_info: FloorServerInfo,
}

#[derive(Serialize)]
struct FloorServerInfo {
    name: &'static str,
    version: &'static str,
}

const SERVER_INFO: FloorServerInfo = FloorServerInfo {
    name: "math",
    version: "1.0.0",
};

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct FloorInitialized {
    protocol_version: &'static str,
    capabilities: FloorCapabilities,
    server_info: FloorServerInfo,
}

#[derive(Serialize)]
struct FloorCapabilities {
    tools: FloorListChanged,
    logging: FloorEmpty,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct FloorListChanged {
    list_changed: bool,
}

#[derive(Serialize)]
struct FloorEmpty {}

async fn floor_handler(headers: HeaderMap, Json(request): Json<FloorRequest>) -> Response {
    let id = request.id.unwrap_or(Value::Null);
    match request.method.as_str() {
        "initialize" => floor_initialize(id),
        "notifications/initialized" => StatusCode::ACCEPTED.into_response(),
        "tools/call" => {
            let params = request.params.expect("params");
            let args = params.arguments.expect("arguments");
            let stateless = params.meta.is_some()
                || headers
                    .get("mcp-protocol-version")
                    .is_some_and(|v| v == MODERN);
            let result = FloorResult {
                content: [FloorText {
                    kind: "text",
                    text: (args.a + args.b).to_string(),
                }],
                result_type: stateless.then_some("complete"),
                meta: stateless.then_some(FloorResultMeta {
                    server_info: SERVER_INFO,
                }),
            };
            Json(FloorReply {
                jsonrpc: "2.0",
                id,
                result,
            })
            .into_response()
        }
        _ => StatusCode::BAD_REQUEST.into_response(),
    }
}

fn floor_initialize(id: Value) -> Response {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let result = FloorInitialized {
        protocol_version: LEGACY,
        capabilities: FloorCapabilities {
            tools: FloorListChanged { list_changed: true },
            logging: FloorEmpty {},
        },
        server_info: SERVER_INFO,
    };
    let mut response = Json(FloorReply {
        jsonrpc: "2.0",
        id,
        result,
    })
    .into_response();
    let session = format!("{n:032x}");
    response
        .headers_mut()
        .insert("mcp-session-id", session.parse().expect("a header value"));
    response
}
