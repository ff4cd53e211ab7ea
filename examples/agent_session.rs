//! An agent host and a simulated agent runtime exchanging control messages as JSON lines.
//!
//! The host owns two in-process servers (`math`, `weather`) and a tool filter that hides
//! `mcp__math__divide`. The runtime plays the part of an agent CLI: it is told the SDK servers
//! at `initialize`, connects to each through `mcp_message` control requests, lists and calls
//! tools, and ends each turn with a `result`. Between the turns the host disables `weather`;
//! the runtime sees it on its next `tools/list` and call.
//!
//! Run with `cargo run --example agent_session --features agent`. Every line of stdout is one message:
//! `host> {json}` or `runtime> {json}` (a JSON line as it crosses the pipe), or a `#` note.

use std::sync::{Arc, Mutex};

use mcp_registry::agent::{ControlRouter, McpMessageRequest};
use mcp_registry::catalog::{FilteredRegistry, ToolFilter};
use mcp_registry::{Registry, Server, Tool};
use serde_json::{Value, json};
use tokio::sync::mpsc;

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Operands {
    /// Left operand.
    a: f64,
    /// Right operand.
    b: f64,
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct City {
    /// City name.
    city: String,
}

fn servers() -> Vec<Server> {
    let add = Tool::builder("add")
        .description("Add two numbers")
        .typed(|o: Operands| async move { (o.a + o.b).to_string() })
        .expect("add is a valid tool");
    let divide = Tool::builder("divide")
        .description("Divide a by b")
        .typed(|o: Operands| async move { (o.a / o.b).to_string() })
        .expect("divide is a valid tool");
    let forecast = Tool::builder("forecast")
        .description("Tomorrow's weather for a city")
        .typed(|c: City| async move { format!("Sunny in {}", c.city) })
        .expect("forecast is a valid tool");
    vec![
        Server::new("math", Some("1.0.0"), [add, divide]).expect("math is a valid server"),
        Server::new("weather", Some("0.3.0"), [forecast]).expect("weather is a valid server"),
    ]
}

/// The session's transcript, optionally echoed to stdout as it grows.
#[derive(Clone)]
struct Transcript {
    lines: Arc<Mutex<Vec<String>>>,
    echo: bool,
}

impl Transcript {
    fn push(&self, line: String) {
        if self.echo {
            println!("{line}");
        }
        self.lines
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(line);
    }
}

/// One end of the pipe: sends JSON lines, logging each under `who`.
struct Pipe {
    who: &'static str,
    tx: mpsc::UnboundedSender<String>,
    rx: mpsc::UnboundedReceiver<String>,
    transcript: Transcript,
}

impl Pipe {
    fn send(&self, message: &Value) {
        let line = message.to_string();
        self.transcript.push(format!("{}> {line}", self.who));
        // The other end only hangs up once the session is over.
        let _ = self.tx.send(line);
    }

    async fn recv(&mut self) -> Option<Value> {
        let line = self.rx.recv().await?;
        serde_json::from_str(&line).ok()
    }

    fn note(&self, note: impl std::fmt::Display) {
        self.transcript.push(format!("# {}: {note}", self.who));
    }
}

/// The host: answers `mcp_message` control requests in-process and drives the turns.
async fn host(mut pipe: Pipe) {
    let registry = Registry::from_servers(servers());
    let filter = ToolFilter::builder()
        .deny("mcp__math__divide")
        .build()
        .expect("the pattern is valid");
    let router = ControlRouter::new(FilteredRegistry::new(registry.clone(), filter));
    pipe.note(format!("--mcp-config {}", router.mcp_servers_config()));
    pipe.send(&router.initialize_request("init_1"));
    let mut turns = 0;
    while let Some(message) = pipe.recv().await {
        if let Some(reply) = router.handle_control_request(&message).await {
            pipe.send(&reply);
            continue;
        }
        match message["type"].as_str() {
            Some("control_response") => {
                pipe.send(&json!({"type": "user", "message": {"role": "user", "content": "Add 2 and 3, then get the forecast for Paris."}}));
            }
            Some("result") => {
                turns += 1;
                if turns == 1 {
                    registry
                        .toggle_server("weather", false)
                        .expect("weather is registered");
                    pipe.note("toggle_server(\"weather\", false)");
                    pipe.send(&json!({"type": "user", "message": {"role": "user", "content": "Again, please."}}));
                } else {
                    pipe.note("session over");
                    return;
                }
            }
            _ => pipe.note(format!("ignored {message}")),
        }
    }
}

/// A stand-in for the agent CLI: talks to the SDK servers only through control requests.
struct Runtime {
    pipe: Pipe,
    next_request: u64,
    next_rpc: u64,
    servers: Vec<String>,
}

impl Runtime {
    /// Sends one `mcp_message` and waits for its `control_response`; returns `mcp_response`.
    async fn mcp(&mut self, server: &str, message: Value) -> Value {
        self.next_request += 1;
        let request = McpMessageRequest {
            request_id: format!("req_{}", self.next_request),
            server_name: server.to_owned(),
            message,
        };
        self.pipe.send(&request.to_value());
        loop {
            let Some(reply) = self.pipe.recv().await else {
                return Value::Null;
            };
            if reply["response"]["request_id"] == request.request_id.as_str() {
                return reply["response"]["response"]["mcp_response"].clone();
            }
        }
    }

    async fn request(&mut self, server: &str, method: &str, params: Value) -> Value {
        self.next_rpc += 1;
        let message =
            json!({"jsonrpc": "2.0", "id": self.next_rpc, "method": method, "params": params});
        self.mcp(server, message).await
    }

    /// `tools/list` on every server: the tools the model would be offered this turn.
    async fn list_tools(&mut self) -> Vec<String> {
        let mut names = Vec::new();
        for server in self.servers.clone() {
            let reply = self.request(&server, "tools/list", json!({})).await;
            match reply["result"]["tools"].as_array() {
                Some(tools) => names.extend(
                    tools
                        .iter()
                        .filter_map(|t| t["name"].as_str())
                        .map(|t| format!("mcp__{server}__{t}")),
                ),
                None => self.pipe.note(format!(
                    "{server} unavailable: {}",
                    reply["error"]["message"]
                )),
            }
        }
        self.pipe
            .note(format!("tools offered to the model: {names:?}"));
        names
    }

    async fn turn(&mut self) {
        self.list_tools().await;
        let sum = self
            .request(
                "math",
                "tools/call",
                json!({"name": "add", "arguments": {"a": 2, "b": 3}}),
            )
            .await;
        let forecast = self
            .request(
                "weather",
                "tools/call",
                json!({"name": "forecast", "arguments": {"city": "Paris"}}),
            )
            .await;
        let text = |reply: &Value| {
            reply["result"]["content"][0]["text"]
                .as_str()
                .map(str::to_owned)
                .unwrap_or_else(|| format!("error: {}", reply["error"]["message"]))
        };
        let result = format!("sum: {}; forecast: {}", text(&sum), text(&forecast));
        self.pipe
            .send(&json!({"type": "result", "subtype": "success", "result": result}));
    }

    async fn run(mut self) {
        while let Some(message) = self.pipe.recv().await {
            match (
                message["type"].as_str(),
                message["request"]["subtype"].as_str(),
            ) {
                (Some("control_request"), Some("initialize")) => {
                    self.servers = message["request"]["sdkMcpServers"]
                        .as_array()
                        .map(|a| {
                            a.iter()
                                .filter_map(|s| s.as_str().map(str::to_owned))
                                .collect()
                        })
                        .unwrap_or_default();
                    for server in self.servers.clone() {
                        let init = json!({"protocolVersion": "2025-06-18", "capabilities": {},
                                          "clientInfo": {"name": "simulated-runtime", "version": "0"}});
                        self.request(&server, "initialize", init).await;
                        self.mcp(
                            &server,
                            json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
                        )
                        .await;
                    }
                    let request_id = message["request_id"].clone();
                    self.pipe.send(&json!({"type": "control_response",
                        "response": {"subtype": "success", "request_id": request_id, "response": {}}}));
                }
                (Some("user"), _) => self.turn().await,
                _ => {}
            }
        }
    }
}

/// Runs a whole session and returns its transcript (also printed when `echo` is set).
pub async fn run_session(echo: bool) -> Vec<String> {
    let transcript = Transcript {
        lines: Arc::new(Mutex::new(Vec::new())),
        echo,
    };
    let (to_runtime, from_host) = mpsc::unbounded_channel();
    let (to_host, from_runtime) = mpsc::unbounded_channel();
    let host_pipe = Pipe {
        who: "host",
        tx: to_runtime,
        rx: from_runtime,
        transcript: transcript.clone(),
    };
    let runtime = Runtime {
        pipe: Pipe {
            who: "runtime",
            tx: to_host,
            rx: from_host,
            transcript: transcript.clone(),
        },
        next_request: 0,
        next_rpc: 0,
        servers: Vec::new(),
    };
    // The host returning drops its pipe, which ends the runtime's loop.
    tokio::join!(host(host_pipe), runtime.run());
    let lines = transcript.lines.lock().unwrap_or_else(|e| e.into_inner());
    lines.clone()
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    run_session(true).await;
}
