//! The load generator of `benches/http_floor.rs`: hyper's HTTP/1 client, one keep-alive
//! connection per client, every reply checked.

use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt as _, Full};
use hyper::client::conn::http1::SendRequest;
use hyper_util::rt::TokioIo;
use serde_json::Value;

use super::{LEGACY, MODERN, Plan, ServerProcess};

#[derive(Clone, Copy, PartialEq)]
enum Era {
    /// 2025-11-25: a session per client (`initialize`, `initialized`), its id on each call.
    Session,
    /// 2026-07-28: no session; `_meta` and the mirrored headers on each call.
    Stateless,
}

impl Era {
    fn name(self) -> &'static str {
        match self {
            Era::Session => "2025-11-25 session",
            Era::Stateless => "2026-07-28 stateless",
        }
    }
}

/// One client: its connection and, in the session era, its session.
struct Caller {
    send: SendRequest<Full<Bytes>>,
    host: String,
    era: Era,
    session: Option<String>,
}

impl Caller {
    async fn connect(server: &ServerProcess, era: Era) -> Caller {
        let stream = tokio::net::TcpStream::connect(server.addr)
            .await
            .expect("connects");
        stream.set_nodelay(true).expect("TCP_NODELAY");
        let (send, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
            .await
            .expect("an HTTP/1 handshake");
        tokio::task::spawn_local(connection);
        let mut caller = Caller {
            send,
            host: server.addr.to_string(),
            era,
            session: None,
        };
        if era == Era::Session {
            caller.open_session().await;
        }
        caller
    }

    fn request(&self, body: String) -> hyper::Request<Full<Bytes>> {
        let mut request = hyper::Request::post("/mcp")
            .header("host", &self.host)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream");
        if let Some(session) = &self.session {
            request = request
                .header("mcp-session-id", session)
                .header("mcp-protocol-version", LEGACY);
        }
        request
            .body(Full::new(Bytes::from(body)))
            .expect("a request")
    }

    async fn send(
        &mut self,
        request: hyper::Request<Full<Bytes>>,
    ) -> (hyper::http::response::Parts, Bytes) {
        self.send.ready().await.expect("the connection is ready");
        let response = self.send.send_request(request).await.expect("a reply");
        let (parts, body) = response.into_parts();
        let body = body.collect().await.expect("a body").to_bytes();
        (parts, body)
    }

    async fn open_session(&mut self) {
        let init = format!(
            r#"{{"jsonrpc":"2.0","id":0,"method":"initialize","params":{{"protocolVersion":"{LEGACY}","capabilities":{{}},"clientInfo":{{"name":"load","version":"1"}}}}}}"#
        );
        let request = self.request(init);
        let (parts, body) = self.send(request).await;
        assert!(parts.status.is_success(), "initialize: {}", parts.status);
        let session = parts
            .headers
            .get("mcp-session-id")
            .and_then(|v| v.to_str().ok())
            .expect("a session id")
            .to_owned();
        let reply = json_of(&parts, &body);
        assert_eq!(reply["result"]["protocolVersion"], LEGACY, "{reply}");
        self.session = Some(session);
        let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
        let request = self.request(initialized.to_owned());
        let (parts, _) = self.send(request).await;
        assert_eq!(parts.status, 202, "initialized");
    }

    /// One `tools/call` of `add(1, 2)`, its reply checked.
    async fn call(&mut self, id: u64) -> Value {
        let meta = if self.era == Era::Stateless {
            format!(
                r#","_meta":{{"io.modelcontextprotocol/protocolVersion":"{MODERN}","io.modelcontextprotocol/clientCapabilities":{{}}}}"#
            )
        } else {
            String::new()
        };
        let body = format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"add","arguments":{{"a":1,"b":2}}{meta}}}}}"#
        );
        let mut request = self.request(body);
        if self.era == Era::Stateless {
            let headers = request.headers_mut();
            headers.insert("mcp-protocol-version", MODERN.parse().expect("a value"));
            headers.insert("mcp-method", "tools/call".parse().expect("a value"));
            headers.insert("mcp-name", "add".parse().expect("a value"));
        }
        let (parts, body) = self.send(request).await;
        assert!(parts.status.is_success(), "tools/call: {}", parts.status);
        let reply = json_of(&parts, &body);
        assert_eq!(reply["id"], id, "{reply}");
        assert!(reply.get("error").is_none(), "{reply}");
        assert_eq!(reply["result"]["content"][0]["text"], "3", "{reply}");
        assert_ne!(reply["result"]["isError"], true, "{reply}");
        reply
    }
}

/// A reply's JSON-RPC message, from a JSON body or the one event of an SSE body.
fn json_of(parts: &hyper::http::response::Parts, body: &[u8]) -> Value {
    let sse = parts
        .headers
        .get("content-type")
        .is_some_and(|v| v.as_bytes().starts_with(b"text/event-stream"));
    let text = std::str::from_utf8(body).expect("UTF-8");
    let json = if sse {
        text.lines()
            .find_map(|l| l.strip_prefix("data:"))
            .expect("an SSE data line")
    } else {
        text
    };
    serde_json::from_str(json.trim()).expect("a JSON reply")
}

/// One row: a server at a number of clients in an era.
struct Row {
    calls: usize,
    secs: f64,
    latencies: Vec<Duration>,
    cpu_ticks: u64,
    /// How many distinct clients had a call of 16 ms or more.
    slow_clients: usize,
    /// Calls per client in the window, fewest and most (fairness between connections).
    per_client: (usize, usize),
}

impl Row {
    fn percentile(&self, p: usize) -> Duration {
        let n = self.latencies.len();
        self.latencies
            .get((n * p / 100).min(n.saturating_sub(1)))
            .copied()
            .unwrap_or_default()
    }

    fn at_least(&self, ms: u64) -> usize {
        let at = Duration::from_millis(ms);
        self.latencies.len() - self.latencies.partition_point(|l| *l < at)
    }

    /// Server CPU per call in µs (`/proc` ticks are 10 ms).
    fn cpu_per_call(&self) -> f64 {
        self.cpu_ticks as f64 * 10_000.0 / self.calls.max(1) as f64
    }
}

async fn measure(plan: &Plan, server: &ServerProcess, era: Era, clients: usize) -> Row {
    let mut callers = Vec::with_capacity(clients);
    for _ in 0..clients {
        callers.push(Caller::connect(server, era).await);
    }
    let warm_until = Instant::now() + plan.warmup;
    let stop_at = warm_until + plan.measure;
    // Open loop: client `i` is due every `interval`, its first call offset by its share of
    // one interval, so the clients' calls spread evenly.
    let interval = plan
        .rate
        .map(|rate| Duration::from_secs_f64(clients as f64 / rate));
    let tasks: Vec<_> = callers
        .into_iter()
        .enumerate()
        .map(|(i, mut caller)| {
            let mut due =
                interval.map(|every| Instant::now() + every.mul_f64(i as f64 / clients as f64));
            tokio::task::spawn_local(async move {
                let mut latencies = Vec::new();
                let mut id = 1;
                loop {
                    // A call is late from when it was due, not from when it could be sent.
                    let start = match (due.as_mut(), interval) {
                        (Some(at), Some(every)) => {
                            tokio::time::sleep_until((*at).into()).await;
                            let start = *at;
                            *at += every;
                            start
                        }
                        _ => Instant::now(),
                    };
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
    tokio::time::sleep_until(warm_until.into()).await;
    let cpu_before = server.cpu_ticks();
    tokio::time::sleep_until(stop_at.into()).await;
    let cpu_after = server.cpu_ticks();
    let mut latencies = Vec::new();
    let mut slow_clients = 0;
    let mut per_client = (usize::MAX, 0);
    for task in tasks {
        let mine = task.await.expect("a client task");
        per_client = (per_client.0.min(mine.len()), per_client.1.max(mine.len()));
        slow_clients += usize::from(mine.iter().any(|l| *l >= Duration::from_millis(16)));
        latencies.extend(mine);
    }
    latencies.sort_unstable();
    Row {
        calls: latencies.len(),
        secs: plan.measure.as_secs_f64(),
        latencies,
        cpu_ticks: cpu_after - cpu_before,
        slow_clients,
        per_client,
    }
}

fn ms(d: Duration) -> String {
    format!("{:.2}", d.as_secs_f64() * 1e3)
}

fn print_row(server: &str, era: Era, clients: usize, round: usize, row: &Row) {
    println!(
        "{:<5} {:<21} {:>4} {:>2} {:>8.0} {:>7} {:>7} {:>7} {:>7} {:>6.1} {:>7} {:>6} {:>6} {:>5} {:>4} {:>6} {:>6}",
        server,
        era.name(),
        clients,
        round,
        row.calls as f64 / row.secs,
        ms(row.percentile(50)),
        ms(row.percentile(90)),
        ms(row.percentile(99)),
        ms(row.latencies.last().copied().unwrap_or_default()),
        row.cpu_per_call(),
        row.at_least(1),
        row.at_least(4),
        row.at_least(16),
        row.at_least(64),
        row.slow_clients,
        row.per_client.0,
        row.per_client.1,
    );
}

/// Every row, rounds alternating between the servers (the order flipped each round), and the
/// medians of each server's rounds as ratios to the floor's.
pub(super) async fn run(plan: &Plan, servers: [&ServerProcess; 2]) {
    if let Some(rate) = plan.rate {
        println!(
            "open loop: {rate:.0} calls/s offered over all clients, latency from when each call was due"
        );
    }
    println!(
        "{:<5} {:<21} {:>4} {:>2} {:>8} {:>7} {:>7} {:>7} {:>7} {:>6} {:>7} {:>6} {:>6} {:>5} {:>4} {:>6} {:>6}",
        "srv",
        "era",
        "cli",
        "r",
        "req/s",
        "p50 ms",
        "p90",
        "p99",
        "max",
        "cpu µs",
        ">=1ms",
        ">=4",
        ">=16",
        ">=64",
        "slowc",
        "fewest",
        "most"
    );
    let local = tokio::task::LocalSet::new();
    local
        .run_until(async {
            for era in [Era::Session, Era::Stateless] {
                for &clients in &plan.clients {
                    let mut rows: [Vec<Row>; 2] = [Vec::new(), Vec::new()];
                    for round in 0..plan.rounds {
                        let order = if round % 2 == 0 { [0, 1] } else { [1, 0] };
                        for i in order {
                            let row = measure(plan, servers[i], era, clients).await;
                            print_row(servers[i].name, era, clients, round, &row);
                            rows[i].push(row);
                        }
                    }
                    summarise(era, clients, &rows);
                }
            }
        })
        .await;
    if plan.quick {
        println!("(quick mode: a smoke run, not a measurement)");
    }
}

/// The medians over the rounds, ours as a ratio to the floor's.
fn summarise(era: Era, clients: usize, rows: &[Vec<Row>; 2]) {
    let median = |i: usize, f: &dyn Fn(&Row) -> f64| {
        let mut v: Vec<f64> = rows[i].iter().map(f).collect();
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let rps = |r: &Row| r.calls as f64 / r.secs;
    let cpu = |r: &Row| r.cpu_per_call();
    let p99 = |r: &Row| r.percentile(99).as_secs_f64() * 1e3;
    println!(
        "  => {} at {clients}: ours/floor req/s {:.2}, cpu/call {:.1}/{:.1} µs = {:.2}x, p99 {:.2}/{:.2} ms",
        era.name(),
        median(1, &rps) / median(0, &rps),
        median(1, &cpu),
        median(0, &cpu),
        median(1, &cpu) / median(0, &cpu),
        median(1, &p99),
        median(0, &p99),
    );
}

/// `calls` `tools/call`s spread over `clients` connections (each sending its next call when
/// the last is answered) to the server on `port` (`HTTP_FLOOR_DRIVE=port`,
/// `HTTP_FLOOR_ERA=session|stateless`, `HTTP_FLOOR_CALLS=n`, `HTTP_FLOOR_CLIENTS=n`, default
/// 1): the load for a profile of a server started alone (`HTTP_FLOOR_SERVE=...` under
/// callgrind).
pub(super) fn drive(port: u16, era: &str, calls: u64, clients: usize) {
    let era = if era == "stateless" {
        Era::Stateless
    } else {
        Era::Session
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let local = tokio::task::LocalSet::new();
    local.block_on(&runtime, async {
        let addr = ([127, 0, 0, 1], port).into();
        let mut callers = Vec::with_capacity(clients);
        for _ in 0..clients {
            callers.push(Caller::connect(&ServerProcess::at(addr), era).await);
        }
        let each = calls.div_ceil(clients as u64);
        let tasks: Vec<_> = callers
            .into_iter()
            .map(|mut caller| {
                tokio::task::spawn_local(async move {
                    for id in 1..=each {
                        caller.call(id).await;
                    }
                })
            })
            .collect();
        for task in tasks {
            task.await.expect("a client task");
        }
    });
}
