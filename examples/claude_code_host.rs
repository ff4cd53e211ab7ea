//! An agent host running the real Claude Code CLI with this project's servers in-process.
//!
//! The host starts `claude` in stream-json mode, announces its SDK servers (`demo`, `weather`)
//! and answers everything the CLI sends through one [`ControlRouter`]: MCP messages (in-process,
//! no subprocess per server), permission requests (`mcp__demo__divide` is refused with a
//! message the model sees), and the tools' progress, relayed back as control requests. Between
//! the two turns it disables `weather` and gives `demo` a new tool; the router tells the CLI.
//!
//! The CLI is `$CLAUDE_CODE_CLI`, else `claude` on `PATH`; without one the host falls back to
//! the simulated runtime of `examples/agent_session.rs`. Point the CLI at a model with the
//! usual environment (`ANTHROPIC_API_KEY`, or `ANTHROPIC_BASE_URL` for a stand-in: `.ci/e2e.sh`
//! runs it against `tests/e2e/messages_api_standin.py`, with `--check` to assert the scripted
//! session and `HOME` set to a scratch directory).
//!
//! ```text
//! cargo run --example claude_code_host --features agent,stdio [-- --check]
//! cargo run --example claude_code_host --features agent,stdio -- --serve-stdio     # the same servers over stdio
//! ```
//!
//! Every line of stdout is one message as it crosses the pipe (`host> ` / `cli> `) or a `#`
//! note; the timings of `tools/call` in-process and over stdio close the run.

use std::collections::BTreeSet;
use std::process::Stdio;
use std::time::{Duration, Instant};

use mcp_registry::agent::{ControlRouter, MCP_MESSAGE, PermissionDecision};
use mcp_registry::{Json, NotificationSink, Registry, Server, Tool, ToolContext};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};
use tokio::sync::mpsc;

#[allow(dead_code)]
#[path = "agent_session.rs"]
mod simulated;

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Operands {
    /// Left operand.
    a: f64,
    /// Right operand.
    b: f64,
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Numbers {
    /// The numbers to summarize.
    numbers: Vec<f64>,
}

#[derive(serde::Serialize, schemars::JsonSchema)]
struct Stats {
    count: usize,
    sum: f64,
    mean: f64,
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Failure {
    /// What to fail with.
    reason: String,
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct NoArguments {}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct City {
    /// City name.
    city: String,
}

fn tool(result: Result<Tool, mcp_registry::ToolBuildError>) -> Tool {
    result.expect("the example's tools are valid")
}

/// `demo`'s tools; `with_mul` adds the one the host registers between the turns.
fn demo(with_mul: bool) -> Server {
    let mut tools =
        vec![
            tool(
                Tool::builder("add")
                    .description("Add two numbers")
                    .typed(|o: Operands| async move { (o.a + o.b).to_string() }),
            ),
            tool(
                Tool::builder("divide")
                    .description("Divide a by b")
                    .typed(|o: Operands| async move { (o.a / o.b).to_string() }),
            ),
            tool(
                Tool::builder("stats")
                    .description("Count, sum and mean of some numbers")
                    .typed(|n: Numbers| async move {
                        let sum: f64 = n.numbers.iter().sum();
                        let count = n.numbers.len();
                        Json(Stats {
                            count,
                            sum,
                            mean: if count == 0 { 0.0 } else { sum / count as f64 },
                        })
                    }),
            ),
            tool(Tool::builder("fail").description("Always fails").typed(
                |f: Failure| async move { Err::<String, String>(format!("failed: {}", f.reason)) },
            )),
            tool(
                Tool::builder("slow")
                    .description("Counts to three, reporting progress")
                    .typed(|ctx: ToolContext, _: NoArguments| async move {
                        for step in 1..=3 {
                            let _ = ctx.progress(f64::from(step), Some(3.0), Some("counting"));
                            tokio::time::sleep(Duration::from_millis(150)).await;
                        }
                        "counted to 3"
                    }),
            ),
        ];
    if with_mul {
        tools.push(tool(
            Tool::builder("mul")
                .description("Multiply two numbers")
                .typed(|o: Operands| async move { (o.a * o.b).to_string() }),
        ));
    }
    Server::new("demo", Some("1.0.0"), tools).expect("demo is a valid server")
}

fn weather() -> Server {
    let forecast = tool(
        Tool::builder("forecast")
            .description("Tomorrow's weather for a city")
            .typed(|c: City| async move { format!("Sunny in {}", c.city) }),
    );
    Server::new("weather", Some("0.3.0"), [forecast]).expect("weather is a valid server")
}

fn registry() -> Registry {
    Registry::from_servers([demo(false), weather()])
}

/// The router the host answers the CLI with: `outgoing` receives the control messages the
/// router sends by itself (progress, list changes).
fn router(registry: &Registry, outgoing: mpsc::UnboundedSender<Value>) -> ControlRouter {
    ControlRouter::new(registry.clone())
        .with_outgoing(NotificationSink::from_channel(outgoing))
        .on_permission_request(|request| async move {
            if request.tool_name == "mcp__demo__divide" {
                PermissionDecision::deny("host policy: no dividing")
            } else {
                PermissionDecision::allow()
            }
        })
}

/// The CLI: `$CLAUDE_CODE_CLI`, else `claude` on `PATH`.
fn find_cli() -> Option<std::path::PathBuf> {
    if let Some(path) = std::env::var_os("CLAUDE_CODE_CLI").filter(|p| !p.is_empty()) {
        return Some(path.into());
    }
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|dir| dir.join("claude"))
        .find(|p| p.is_file())
}

fn spawn_cli(cli: &std::path::Path, router: &ControlRouter) -> std::io::Result<Child> {
    Command::new(cli)
        .args([
            "-p",
            "--input-format",
            "stream-json",
            "--output-format",
            "stream-json",
        ])
        .args(["--verbose", "--strict-mcp-config", "--tools", ""])
        // Permission prompts come to the host as `can_use_tool` control requests.
        .args(["--permission-prompt-tool", "stdio"])
        .arg("--mcp-config")
        .arg(router.mcp_servers_config().to_string())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
}

/// What the host saw, for `--check` and the timing note.
#[derive(Default)]
struct Observed {
    /// `tools` of each `system/init` message (one per turn).
    init_tools: Vec<Vec<String>>,
    /// (turn, server, tool) of each `tools/call` the CLI sent.
    calls: Vec<(usize, String, String)>,
    /// Tool names the permission callback saw, with whether it allowed them.
    permissions: Vec<(String, bool)>,
    /// Request ids of the progress notifications sent, and how many the CLI acknowledged.
    progress_sent: BTreeSet<String>,
    progress_acked: usize,
    /// `result` texts, one per turn.
    results: Vec<String>,
    /// Microseconds from a `tools/call` line in to its reply out, in-process.
    call_micros: Vec<u128>,
}

/// One thing for the host's loop to act on.
enum Event {
    Line(String),
    Answered {
        server: String,
        method: String,
        reply: Value,
        micros: u128,
    },
    Outgoing(Value),
    Closed,
}

fn user(text: &str) -> Value {
    json!({"type": "user", "message": {"role": "user", "content": text},
           "parent_tool_use_id": null, "session_id": ""})
}

async fn write(stdin: &mut ChildStdin, message: &Value) -> std::io::Result<()> {
    let line = message.to_string();
    println!("host> {line}");
    stdin.write_all(line.as_bytes()).await?;
    stdin.write_all(b"\n").await?;
    stdin.flush().await
}

fn read_lines(stdout: ChildStdout, events: mpsc::UnboundedSender<Event>) {
    tokio::spawn(async move {
        let mut lines = BufReader::new(stdout).lines();
        while let Ok(Some(line)) = lines.next_line().await {
            if events.send(Event::Line(line)).is_err() {
                return;
            }
        }
        let _ = events.send(Event::Closed);
    });
}

/// Runs the two-turn session against the real CLI.
async fn run_cli(cli: &std::path::Path) -> Result<Observed, String> {
    let registry = registry();
    let (out_tx, out_rx) = mpsc::unbounded_channel();
    let router = router(&registry, out_tx);
    tokio::spawn(router.relay_changes());
    let mut child = spawn_cli(cli, &router).map_err(|e| format!("cannot start {cli:?}: {e}"))?;
    let stdin = child.stdin.take().ok_or("no stdin")?;
    let stdout = child.stdout.take().ok_or("no stdout")?;
    let (events_tx, mut events) = mpsc::unbounded_channel();
    read_lines(stdout, events_tx.clone());
    forward_outgoing(out_rx, events_tx.clone());

    let mut session = Session {
        registry,
        router,
        stdin,
        events: events_tx,
        seen: Observed::default(),
        turn: 0,
        relist: BTreeSet::new(),
    };
    let initialize = session.router.initialize_request("init_1");
    session.write(&initialize).await?;
    let deadline = tokio::time::sleep(Duration::from_secs(120));
    tokio::pin!(deadline);
    loop {
        let event = tokio::select! {
            event = events.recv() => event.unwrap_or(Event::Closed),
            () = &mut deadline => return Err("the session did not finish within 120 s".into()),
        };
        if let Flow::Done = session.on_event(event).await? {
            break;
        }
    }
    let Session { stdin, seen, .. } = session;
    drop(stdin);
    let _ = tokio::time::timeout(Duration::from_secs(10), child.wait()).await;
    Ok(seen)
}

/// Hands what the router sends on its own (progress, list changes) to the host's loop.
fn forward_outgoing(
    mut outgoing: mpsc::UnboundedReceiver<Value>,
    events: mpsc::UnboundedSender<Event>,
) {
    tokio::spawn(async move {
        while let Some(message) = outgoing.recv().await {
            if events.send(Event::Outgoing(message)).is_err() {
                return;
            }
        }
    });
}

/// Whether the host's loop goes on after an event.
enum Flow {
    Continue,
    Done,
}

/// The host's side of a running session: where it writes, and what it has seen.
struct Session {
    registry: Registry,
    router: ControlRouter,
    stdin: ChildStdin,
    /// The host's loop, for replies computed on their own tasks.
    events: mpsc::UnboundedSender<Event>,
    seen: Observed,
    turn: usize,
    /// Servers whose tools the CLI must list again before turn 2 starts.
    relist: BTreeSet<String>,
}

impl Session {
    /// Writes `message` to the CLI.
    async fn write(&mut self, message: &Value) -> Result<(), String> {
        write(&mut self.stdin, message)
            .await
            .map_err(|e| format!("writing to the CLI: {e}"))
    }

    /// Acts on one event of the host's loop.
    async fn on_event(&mut self, event: Event) -> Result<Flow, String> {
        match event {
            Event::Closed => return Ok(Flow::Done),
            Event::Outgoing(message) => {
                if message["request"]["message"]["method"] == "notifications/progress" {
                    let id = message["request_id"].as_str().unwrap_or("").to_owned();
                    self.seen.progress_sent.insert(id);
                }
                self.write(&message).await?;
            }
            Event::Answered {
                server,
                method,
                reply,
                micros,
            } => {
                if method == "tools/call" {
                    self.seen.call_micros.push(micros);
                }
                self.write(&reply).await?;
                if method == "tools/list" && self.relist.remove(&server) && self.relist.is_empty() {
                    self.write(&user("turn 2: once more, with the new tools"))
                        .await?;
                }
            }
            Event::Line(line) => return self.on_line(line).await,
        }
        Ok(Flow::Continue)
    }

    /// A line the CLI wrote.
    async fn on_line(&mut self, line: String) -> Result<Flow, String> {
        let received = Instant::now();
        println!("cli> {line}");
        let Ok(message) = serde_json::from_str::<Value>(&line) else {
            return Ok(Flow::Continue);
        };
        let request = &message["request"];
        match (message["type"].as_str(), request["subtype"].as_str()) {
            (Some("control_request"), _) => self.on_control_request(message, received),
            (Some("control_response"), _) => self.on_control_response(&message).await?,
            (Some("system"), _) if message["subtype"] == "init" => {
                let tools = message["tools"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(Value::as_str)
                    .filter(|t| t.starts_with("mcp__"))
                    .map(str::to_owned)
                    .collect();
                self.seen.init_tools.push(tools);
            }
            (Some("result"), _) => return self.on_result(&message),
            _ => {}
        }
        Ok(Flow::Continue)
    }

    /// A control request: noted, then answered on its own task (calls run concurrently: a
    /// slow tool holds up nothing else).
    fn on_control_request(&mut self, message: Value, received: Instant) {
        let request = &message["request"];
        if request["subtype"] == MCP_MESSAGE && request["message"]["method"] == "tools/call" {
            self.seen.calls.push((
                self.turn,
                request["server_name"].as_str().unwrap_or("").to_owned(),
                request["message"]["params"]["name"]
                    .as_str()
                    .unwrap_or("")
                    .to_owned(),
            ));
        }
        if request["subtype"] == "can_use_tool" {
            let name = request["tool_name"].as_str().unwrap_or("").to_owned();
            let allowed = name != "mcp__demo__divide";
            self.seen.permissions.push((name, allowed));
        }
        let server = request["server_name"].as_str().unwrap_or("").to_owned();
        let method = request["message"]["method"]
            .as_str()
            .unwrap_or("")
            .to_owned();
        let router = self.router.clone();
        let events = self.events.clone();
        tokio::spawn(async move {
            let reply = router.handle_control_request(&message).await;
            let reply = reply.unwrap_or_else(|| {
                mcp_registry::agent::control_error(
                    message["request_id"].as_str().unwrap_or(""),
                    "this host does not handle that control request",
                )
            });
            let micros = received.elapsed().as_micros();
            let _ = events.send(Event::Answered {
                server,
                method,
                reply,
                micros,
            });
        });
    }

    /// The CLI's answer to a control request of the host's: `initialize` starts turn 1.
    async fn on_control_response(&mut self, message: &Value) -> Result<(), String> {
        let response = &message["response"];
        let id = response["request_id"].as_str().unwrap_or("");
        if id == "init_1" {
            self.write(&user("turn 1: call the demo tools")).await?;
        } else if self.seen.progress_sent.contains(id) && response["subtype"] == "success" {
            self.seen.progress_acked += 1;
        }
        Ok(())
    }

    /// A turn's result: after the first, the registry changes; the second ends the session.
    fn on_result(&mut self, message: &Value) -> Result<Flow, String> {
        self.turn += 1;
        self.seen
            .results
            .push(message["result"].as_str().unwrap_or("").to_owned());
        if self.turn != 1 {
            return Ok(Flow::Done);
        }
        // Between the turns: `weather` off, `demo` replaced by a version with one more tool.
        // The router's relay tells the CLI.
        self.registry
            .toggle_server("weather", false)
            .map_err(|e| e.to_string())?;
        self.registry.register_server(demo(true));
        println!("# host: toggle_server(\"weather\", false); demo gains `mul`");
        self.relist = ["demo".to_owned(), "weather".to_owned()].into();
        Ok(Flow::Continue)
    }
}

/// The scripted session's expectations (`--check`, against the e2e stand-in model).
fn check(seen: &Observed) -> Vec<String> {
    let mut failures = Vec::new();
    let mut expect = |ok: bool, what: &str| {
        println!("# check: {} {what}", if ok { "ok  " } else { "FAIL" });
        if !ok {
            failures.push(what.to_owned());
        }
    };
    let turn1: BTreeSet<&str> = seen
        .init_tools
        .first()
        .map(|t| t.iter().map(String::as_str).collect())
        .unwrap_or_default();
    expect(
        turn1
            == BTreeSet::from([
                "mcp__demo__add",
                "mcp__demo__divide",
                "mcp__demo__fail",
                "mcp__demo__slow",
                "mcp__demo__stats",
                "mcp__weather__forecast",
            ]),
        "turn 1: the CLI lists every tool of demo and weather",
    );
    let turn2: BTreeSet<&str> = seen
        .init_tools
        .get(1)
        .map(|t| t.iter().map(String::as_str).collect())
        .unwrap_or_default();
    expect(
        turn2.contains("mcp__demo__mul") && !turn2.contains("mcp__weather__forecast"),
        "turn 2: the CLI lists demo's new `mul` and no longer weather's `forecast`",
    );
    let called = |turn: usize, server: &str, tool: &str| {
        seen.calls
            .iter()
            .any(|(t, s, n)| *t == turn && s == server && n == tool)
    };
    expect(
        ["add", "stats", "fail", "slow"]
            .iter()
            .all(|t| called(0, "demo", t)),
        "turn 1: add, stats, fail and slow were called in-process",
    );
    expect(
        seen.permissions
            .iter()
            .any(|(n, allowed)| n == "mcp__demo__divide" && !allowed)
            && !seen.calls.iter().any(|(_, _, n)| n == "divide"),
        "divide: refused by the host's permission callback, never called",
    );
    expect(
        called(1, "demo", "add") && called(1, "demo", "mul") && !called(1, "weather", "forecast"),
        "turn 2: add and the new mul called; the disabled forecast refused by the CLI",
    );
    expect(
        seen.progress_sent.len() == 3 && seen.progress_acked == 3,
        "slow: 3 progress notifications relayed to the CLI and acknowledged by it",
    );
    expect(
        seen.results == ["turn 1 done", "turn 2 done"],
        "both turns ended with the model's final text",
    );
    failures
}

/// Serves the same registry's `demo` over stdio (for the timing comparison).
async fn serve_stdio() -> std::io::Result<()> {
    mcp_registry::transport::stdio::serve(registry(), "demo").await
}

fn median(mut v: Vec<u128>) -> u128 {
    v.sort_unstable();
    v.get(v.len() / 2).copied().unwrap_or(0)
}

const ROUNDS: u64 = 200;

fn add_call(id: u64) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
           "params": {"name": "add", "arguments": {"a": 2, "b": 3}}})
}

/// Writes one JSON-RPC line to a stdio server and reads its reply line.
async fn round_trip(
    stdin: &mut ChildStdin,
    lines: &mut tokio::io::Lines<BufReader<ChildStdout>>,
    message: Value,
) -> Result<String, String> {
    let line = format!("{message}\n");
    stdin
        .write_all(line.as_bytes())
        .await
        .map_err(|e| e.to_string())?;
    stdin.flush().await.map_err(|e| e.to_string())?;
    lines
        .next_line()
        .await
        .map_err(|e| e.to_string())?
        .ok_or_else(|| "the stdio server closed".to_owned())
}

/// Median microseconds of a `tools/call` of `add`: as a control line through the router
/// in-process, and as a JSON-RPC line to this example serving `demo` over stdio.
async fn timings() -> Result<(u128, u128), String> {
    let router = ControlRouter::new(registry());
    let mut in_process = Vec::new();
    for id in 0..ROUNDS {
        let line = json!({"type": "control_request", "request_id": format!("t{id}"),
            "request": {"subtype": MCP_MESSAGE, "server_name": "demo", "message": add_call(id)}})
        .to_string();
        let start = Instant::now();
        let reply = router.handle_control_line(&line).await;
        in_process.push(start.elapsed().as_micros());
        if reply.is_none_or(|r| !r.contains(r#""text":"5""#)) {
            return Err("in-process add did not answer 5".into());
        }
    }
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let mut child = Command::new(exe)
        .arg("--serve-stdio")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| e.to_string())?;
    let mut stdin = child.stdin.take().ok_or("no stdin")?;
    let mut lines = BufReader::new(child.stdout.take().ok_or("no stdout")?).lines();
    let init = json!({"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "claude_code_host", "version": "0"}}});
    round_trip(&mut stdin, &mut lines, init).await?;
    stdin
        .write_all(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n")
        .await
        .map_err(|e| e.to_string())?;
    let mut stdio = Vec::new();
    for id in 0..ROUNDS {
        let start = Instant::now();
        let line = round_trip(&mut stdin, &mut lines, add_call(id)).await?;
        stdio.push(start.elapsed().as_micros());
        if !line.contains(r#""text":"5""#) {
            return Err(format!("stdio add did not answer 5: {line}"));
        }
    }
    Ok((median(in_process), median(stdio)))
}

#[tokio::main]
async fn main() -> std::process::ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.iter().any(|a| a == "--serve-stdio") {
        return match serve_stdio().await {
            Ok(()) => std::process::ExitCode::SUCCESS,
            Err(_) => std::process::ExitCode::FAILURE,
        };
    }
    let Some(cli) = find_cli() else {
        println!("# no Claude Code CLI ($CLAUDE_CODE_CLI or `claude` on PATH): simulated runtime");
        simulated::run_session(true).await;
        return std::process::ExitCode::SUCCESS;
    };
    println!("# running {}", cli.display());
    let seen = match run_cli(&cli).await {
        Ok(seen) => seen,
        Err(e) => {
            eprintln!("claude_code_host: {e}");
            return std::process::ExitCode::FAILURE;
        }
    };
    println!(
        "# timing: tools/call from the CLI's mcp_message line in to the reply out, in-process: median {} µs over {} calls of the session",
        median(seen.call_micros.clone()),
        seen.call_micros.len()
    );
    match timings().await {
        Ok((in_process, stdio)) => println!(
            "# timing: tools/call `add`, median of {ROUNDS}: in-process through ControlRouter {in_process} µs; over stdio (request line out, reply line in) {stdio} µs"
        ),
        Err(e) => println!("# timing failed: {e}"),
    }
    if args.iter().any(|a| a == "--check") && !check(&seen).is_empty() {
        return std::process::ExitCode::FAILURE;
    }
    std::process::ExitCode::SUCCESS
}
