//! A load benchmark of the Streamable HTTP server on loopback: `cargo bench --bench http_load`.
//!
//! The servers run in a child process (this binary again, with `HTTP_LOAD_SERVE=1`), so the
//! load generator does not share their runtime and their memory can be read from `/proc`:
//!
//! - `floor`: a bare axum handler that parses the same `tools/call` body with serde and
//!   writes the same reply: the least an HTTP `tools/call` costs with this stack.
//! - `legacy`: `tools/call` inside 2025-11-25 sessions (one session per client).
//! - `stateless`: 2026-07-28 `tools/call`, no session, headers mirrored.
//!
//! - `legacy in Redis`: `legacy` on a server whose sessions are shared through Redis
//!   (`replicas::RedisSessions`; a real `redis-server` on a free port, skipped without one).
//!
//! Each runs with 1 and 50 concurrent clients (one keep-alive connection each) and reports
//! requests per second and the 99th-percentile latency. Then 10,000 idle legacy sessions are
//! opened and the server's RSS growth divided by 10,000 is reported.
//!
//! Without `--bench` (as `cargo test --benches` runs it) every phase runs briefly, as a check
//! that the benchmark still works.

// The tests' helper, whole: the bench uses only `start` and `url`.
#[allow(dead_code)]
#[path = "../tests/common/redis.rs"]
mod redis_server;

use std::io::{BufRead as _, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::Json;
use axum::routing::post;
use mcp_registry::replicas::{Redis, RedisBus, RedisSessions};
use mcp_registry::transport::http::{HttpConfig, serve};
use mcp_registry::{Registry, Server, Tool};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(Deserialize, JsonSchema)]
struct AddArgs {
    a: i64,
    b: i64,
}

const LEGACY: &str = "2025-11-25";
const MODERN: &str = "2026-07-28";

/// How long each scenario is measured (and warmed up), and how many idle sessions are opened.
struct Plan {
    warmup: Duration,
    measure: Duration,
    idle_sessions: usize,
}

fn main() {
    if std::env::var_os("HTTP_LOAD_SERVE").is_some() {
        return serve_forever();
    }
    let full = std::env::args().any(|a| a == "--bench");
    let plan = if full {
        Plan {
            warmup: Duration::from_secs(1),
            measure: Duration::from_secs(5),
            idle_sessions: 10_000,
        }
    } else {
        Plan {
            warmup: Duration::from_millis(50),
            measure: Duration::from_millis(200),
            idle_sessions: 100,
        }
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    // The legacy sessions shared through Redis, when redis-server is installed.
    let redis = runtime.block_on(redis_server::RedisServer::start());
    if redis.is_none() {
        eprintln!("the Redis-shared session runs are skipped: redis-server is not installed");
    }
    let mut child = Servers::start(redis.as_ref().map(redis_server::RedisServer::url));
    runtime.block_on(run(&plan, &child));
    let _ = child.process.kill();
    let _ = child.process.wait();
}

/// The child process serving the floor and the MCP server (and the same server with its
/// legacy sessions in Redis), and their ports.
struct Servers {
    process: Child,
    floor: u16,
    mcp: u16,
    shared: Option<u16>,
}

impl Servers {
    fn start(redis_url: Option<String>) -> Servers {
        let exe = std::env::current_exe().expect("this executable");
        let mut command = Command::new(exe);
        command.env("HTTP_LOAD_SERVE", "1");
        if let Some(url) = redis_url {
            command.env("HTTP_LOAD_REDIS", url);
        }
        let mut process = command
            .stdout(Stdio::piped())
            .spawn()
            .expect("the server process starts");
        let stdout = process.stdout.take().expect("piped stdout");
        let mut line = String::new();
        BufReader::new(stdout)
            .read_line(&mut line)
            .expect("the server prints its ports");
        let mut ports = line.split_whitespace().map(|p| p.parse().expect("a port"));
        let (floor, mcp) = (ports.next().expect("floor"), ports.next().expect("mcp"));
        let shared = ports.next();
        Servers {
            process,
            floor,
            mcp,
            shared,
        }
    }

    /// The server process's resident set, in bytes.
    fn rss(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.process.id()))
            .unwrap_or_default();
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
            .map_or(0, |kb| kb * 1024)
    }
}

/// The child: both servers on free loopback ports, their ports on stdout, until killed.
fn serve_forever() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    runtime.block_on(async {
        let floor = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let floor_port = floor.local_addr().expect("addr").port();
        let app = axum::Router::new().route("/mcp", post(floor_handler));
        tokio::spawn(async move { axum::serve(floor, app).await });
        // A free port for `serve`, which binds its own listener.
        let mcp_port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port")
            .port();
        let add = Tool::builder("add")
            .description("Add two integers")
            .typed(|a: AddArgs| async move { (a.a + a.b).to_string() })
            .expect("valid tool");
        let server = Server::new("math", None, [add]).expect("server");
        let registry = Registry::from_servers([server.clone()]);
        let config = HttpConfig::default().max_sessions(100_000);
        let addr = ([127, 0, 0, 1], mcp_port).into();
        tokio::spawn(async move { serve(registry, "math", addr, config).await });
        // Wait until the MCP port answers before announcing it.
        wait_listening(addr).await;
        let shared = match std::env::var("HTTP_LOAD_REDIS") {
            Ok(url) => format!(" {}", serve_shared(server, &url).await),
            Err(_) => String::new(),
        };
        println!("{floor_port} {mcp_port}{shared}");
        std::future::pending::<()>().await;
    });
}

/// The same server with its legacy sessions shared through the Redis at `url`; its port.
async fn serve_shared(server: Server, url: &str) -> u16 {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port();
    let redis = Redis::new(url).expect("a Redis URL").prefix("http-load");
    let bus = RedisBus::new(&redis);
    bus.ready().await.expect("the bus subscribes");
    let registry = Registry::builder()
        .server(server)
        .change_bus(bus.clone())
        .build();
    let config = HttpConfig::default()
        .max_sessions(100_000)
        .session_store(RedisSessions::new(&bus));
    let addr = ([127, 0, 0, 1], port).into();
    tokio::spawn(async move { serve(registry, "math", addr, config).await });
    wait_listening(addr).await;
    port
}

async fn wait_listening(addr: std::net::SocketAddr) {
    while tokio::net::TcpStream::connect(addr).await.is_err() {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// The floor's request: the same body, read with serde.
#[derive(Deserialize)]
struct FloorRequest {
    #[allow(dead_code)]
    jsonrpc: String,
    id: serde_json::Value,
    #[allow(dead_code)]
    method: String,
    params: FloorParams,
}

#[derive(Deserialize)]
struct FloorParams {
    #[allow(dead_code)]
    name: String,
    arguments: AddArgs,
}

/// The floor's reply: the same JSON the MCP server writes for this call.
#[derive(Serialize)]
struct FloorReply {
    jsonrpc: &'static str,
    id: serde_json::Value,
    result: FloorResult,
}

#[derive(Serialize)]
struct FloorResult {
    content: [FloorText; 1],
    #[serde(rename = "isError")]
    is_error: bool,
}

#[derive(Serialize)]
struct FloorText {
    #[serde(rename = "type")]
    kind: &'static str,
    text: String,
}

async fn floor_handler(Json(request): Json<FloorRequest>) -> Json<FloorReply> {
    let sum = request.params.arguments.a + request.params.arguments.b;
    Json(FloorReply {
        jsonrpc: "2.0",
        id: request.id,
        result: FloorResult {
            content: [FloorText {
                kind: "text",
                text: sum.to_string(),
            }],
            is_error: false,
        },
    })
}

#[derive(Clone, Copy, PartialEq)]
enum Scenario {
    Floor,
    Legacy,
    Stateless,
    /// `Legacy` on the server whose sessions are shared through Redis.
    Shared,
}

impl Scenario {
    fn name(self) -> &'static str {
        match self {
            Scenario::Floor => "floor (bare axum + serde)",
            Scenario::Legacy => "2025-11-25 session",
            Scenario::Stateless => "2026-07-28 stateless",
            Scenario::Shared => "2025-11-25 session in Redis",
        }
    }
}

/// One client: its connection, and its session when legacy.
struct Caller {
    http: reqwest::Client,
    url: String,
    scenario: Scenario,
    session: Option<String>,
}

fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .pool_max_idle_per_host(1)
        .build()
        .expect("an HTTP client")
}

fn call_body(id: u64, scenario: Scenario) -> String {
    let meta = if scenario == Scenario::Stateless {
        format!(
            r#","_meta":{{"io.modelcontextprotocol/protocolVersion":"{MODERN}","io.modelcontextprotocol/clientCapabilities":{{}}}}"#
        )
    } else {
        String::new()
    };
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"add","arguments":{{"a":1,"b":2}}{meta}}}}}"#
    )
}

fn post_to(http: &reqwest::Client, url: &str, body: String) -> reqwest::RequestBuilder {
    http.post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(body)
}

/// Opens a 2025-11-25 session: `initialize`, then `notifications/initialized`.
async fn open_session(http: &reqwest::Client, url: &str) -> String {
    let init = format!(
        r#"{{"jsonrpc":"2.0","id":0,"method":"initialize","params":{{"protocolVersion":"{LEGACY}","capabilities":{{}},"clientInfo":{{"name":"load","version":"1"}}}}}}"#
    );
    let reply = post_to(http, url, init).send().await.expect("initialize");
    let session = reply
        .headers()
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .expect("a session id")
        .to_owned();
    let _ = reply.bytes().await;
    let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#.to_owned();
    post_to(http, url, initialized)
        .header("mcp-session-id", &session)
        .header("mcp-protocol-version", LEGACY)
        .send()
        .await
        .expect("initialized");
    session
}

impl Caller {
    async fn new(servers: &Servers, scenario: Scenario) -> Caller {
        let http = client();
        let port = match scenario {
            Scenario::Floor => servers.floor,
            Scenario::Shared => servers.shared.expect("the Redis-shared server runs"),
            _ => servers.mcp,
        };
        let url = format!("http://127.0.0.1:{port}/mcp");
        let session = match scenario {
            Scenario::Legacy | Scenario::Shared => Some(open_session(&http, &url).await),
            _ => None,
        };
        Caller {
            http,
            url,
            scenario,
            session,
        }
    }

    async fn call(&self, id: u64) {
        let mut request = post_to(&self.http, &self.url, call_body(id, self.scenario));
        match (self.scenario, &self.session) {
            (Scenario::Legacy | Scenario::Shared, Some(session)) => {
                request = request
                    .header("mcp-session-id", session)
                    .header("mcp-protocol-version", LEGACY);
            }
            (Scenario::Stateless, _) => {
                request = request
                    .header("mcp-protocol-version", MODERN)
                    .header("mcp-method", "tools/call")
                    .header("mcp-name", "add");
            }
            _ => {}
        }
        let reply = request.send().await.expect("a reply");
        assert!(reply.status().is_success(), "{}", reply.status());
        let body = reply.bytes().await.expect("a body");
        assert!(body.ends_with(b"}"), "{body:?}");
    }
}

/// Requests per second and the 99th-percentile latency of `clients` callers.
async fn measure(
    plan: &Plan,
    servers: &Servers,
    scenario: Scenario,
    clients: usize,
) -> (f64, Duration) {
    let mut callers = Vec::new();
    for _ in 0..clients {
        callers.push(Caller::new(servers, scenario).await);
    }
    let warm_until = Instant::now() + plan.warmup;
    let stop_at = warm_until + plan.measure;
    let tasks: Vec<_> = callers
        .into_iter()
        .map(|caller| {
            tokio::spawn(async move {
                let mut latencies = Vec::new();
                let mut id = 1;
                loop {
                    let start = Instant::now();
                    if start >= stop_at {
                        break;
                    }
                    caller.call(id).await;
                    id += 1;
                    if start >= warm_until {
                        latencies.push(start.elapsed());
                    }
                }
                latencies
            })
        })
        .collect();
    let mut all = Vec::new();
    for task in tasks {
        all.extend(task.await.expect("a client task"));
    }
    all.sort();
    let p99 = all
        .get((all.len() * 99 / 100).min(all.len().saturating_sub(1)))
        .copied()
        .unwrap_or_default();
    (all.len() as f64 / plan.measure.as_secs_f64(), p99)
}

async fn run(plan: &Plan, servers: &Servers) {
    println!(
        "http_load: tools/call on loopback, {:?} per run after {:?} of warm-up",
        plan.measure, plan.warmup
    );
    println!(
        "{:<28} {:>8} {:>12} {:>10}",
        "server", "clients", "req/s", "p99"
    );
    for clients in [1, 50] {
        let mut scenarios = vec![Scenario::Floor, Scenario::Legacy, Scenario::Stateless];
        if servers.shared.is_some() {
            scenarios.push(Scenario::Shared);
        }
        for scenario in scenarios {
            let (rps, p99) = measure(plan, servers, scenario, clients).await;
            println!(
                "{:<28} {:>8} {:>12.0} {:>8.0}µs",
                scenario.name(),
                clients,
                rps,
                p99.as_secs_f64() * 1e6
            );
        }
    }
    idle_sessions(plan, servers).await;
}

/// Opens `plan.idle_sessions` legacy sessions (50 at a time) and reports the RSS growth per
/// session.
async fn idle_sessions(plan: &Plan, servers: &Servers) {
    let url = Arc::new(format!("http://127.0.0.1:{}/mcp", servers.mcp));
    tokio::time::sleep(Duration::from_millis(500)).await;
    let before = servers.rss();
    let workers = 50;
    let per_worker = plan.idle_sessions.div_ceil(workers);
    let tasks: Vec<_> = (0..workers)
        .map(|_| {
            let url = url.clone();
            tokio::spawn(async move {
                let http = client();
                for _ in 0..per_worker {
                    open_session(&http, &url).await;
                }
            })
        })
        .collect();
    for task in tasks {
        task.await.expect("a session opener");
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    let after = servers.rss();
    let opened = per_worker * workers;
    println!(
        "idle 2025-11-25 sessions: {opened} opened, RSS {:.1} MiB -> {:.1} MiB, {:.0} bytes per session",
        before as f64 / 1048576.0,
        after as f64 / 1048576.0,
        after.saturating_sub(before) as f64 / opened as f64
    );
}
