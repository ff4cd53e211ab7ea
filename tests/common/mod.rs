//! Shared test helpers: validation of replies against the official MCP JSON Schemas, and
//! the servers and tools the tests register; `http` drives the Streamable HTTP router,
//! `fuzz` generates mutated messages, `dispatch` asks a registry of the `math` server,
//! `everything` drives server-everything,
//! `resources` holds resources and templates in a server `data`, `redis` starts a real
//! `redis-server`, `task_store` is the contract every `TaskStore` keeps, `tasks` the task tests' requests
//! and tools.
#![allow(dead_code)]

pub mod dispatch;
pub mod everything;
pub mod examples;
pub mod fuzz;
pub mod http;
pub mod job;
pub mod listen;
pub mod logs;
pub mod redis;
pub mod resources;
pub mod session;
pub mod stdio;
pub mod task_store;
pub mod tasks;

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, LazyLock, Mutex};

use mcp_registry::{Json, Server, Tool, ToolContext};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// Compiled validators by (version, definition).
type Validators = HashMap<(String, String), Arc<jsonschema::Validator>>;

static VALIDATORS: LazyLock<Mutex<Validators>> = LazyLock::new(Default::default);

fn document(version: &str) -> Value {
    let path = format!(
        "{}/tests/schemas/{version}.json",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    serde_json::from_str(&text).unwrap()
}

fn validator(version: &str, def: &str) -> Arc<jsonschema::Validator> {
    let key = (version.to_owned(), def.to_owned());
    if let Some(v) = VALIDATORS.lock().unwrap().get(&key) {
        return v.clone();
    }
    let mut doc = document(version);
    let defs_key = if doc.get("$defs").is_some() {
        "$defs"
    } else {
        "definitions"
    };
    assert!(
        doc[defs_key].get(def).is_some(),
        "{version} has no definition {def}"
    );
    doc["$ref"] = json!(format!("#/{defs_key}/{def}"));
    let v = Arc::new(jsonschema::validator_for(&doc).expect("official schema compiles"));
    VALIDATORS.lock().unwrap().insert(key, v.clone());
    v
}

/// Why `value` is not valid against definition `def` of the official schema of `version`
/// (empty when it is).
pub fn schema_errors(version: &str, def: &str, value: &Value) -> Vec<String> {
    validator(version, def)
        .iter_errors(value)
        .map(|e| format!("{} at {}", e, e.instance_path))
        .collect()
}

/// Asserts `value` is valid against definition `def` of the official schema of `version`.
pub fn assert_valid(version: &str, def: &str, value: &Value) {
    let errors = schema_errors(version, def, value);
    assert!(
        errors.is_empty(),
        "not a valid {def} for {version}:\n{}\n{errors:#?}",
        serde_json::to_string_pretty(value).unwrap()
    );
}

/// Validates a whole reply: the envelope as a JSON-RPC response (or error), and for a success
/// the result against `result_def`.
pub fn assert_reply(version: &str, result_def: &str, reply: &Value) {
    if reply.get("error").is_some() {
        let def = if version >= "2025-11-25" {
            "JSONRPCErrorResponse"
        } else {
            "JSONRPCError"
        };
        assert_valid(version, def, reply);
        return;
    }
    let envelope = if version >= "2025-11-25" {
        "JSONRPCResultResponse"
    } else {
        "JSONRPCResponse"
    };
    assert_valid(version, envelope, reply);
    assert_valid(version, result_def, &reply["result"]);
}

pub const LEGACY: [&str; 4] = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"];
pub const MODERN: &str = "2026-07-28";

/// `_meta` for a modern request.
pub fn modern_meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientInfo": {"name": "test", "version": "0"},
        "io.modelcontextprotocol/clientCapabilities": {}
    })
}

/// Asserts a 2026-07-28 reply is a complete result (`resultType`) from server `server`
/// (`_meta` `serverInfo`).
pub fn assert_complete_from(reply: &Value, server: &str) {
    let result = &reply["result"];
    assert_eq!(result["resultType"], "complete", "{reply}");
    assert_eq!(
        result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"], server,
        "{reply}"
    );
}

/// Asserts a 2026-07-28 reply is cacheable for `ttl_ms` with `scope` (`public`, `private`).
pub fn assert_cached(reply: &Value, ttl_ms: u64, scope: &str) {
    assert_eq!(reply["result"]["ttlMs"], ttl_ms, "{reply}");
    assert_eq!(reply["result"]["cacheScope"], scope, "{reply}");
}

/// Sets its flag when dropped: observes that a timed-out or cancelled call's future was
/// dropped.
pub struct DropFlag(pub Arc<AtomicBool>);

impl Drop for DropFlag {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

#[derive(Deserialize, JsonSchema)]
pub struct AddArgs {
    /// The left operand.
    pub a: i64,
    /// The right operand (default 0).
    pub b: Option<i64>,
}

#[derive(Serialize, JsonSchema)]
pub struct Sum {
    pub value: i64,
}

#[derive(Deserialize, JsonSchema)]
pub struct DivArgs {
    pub a: f64,
    pub b: f64,
}

#[derive(Deserialize, JsonSchema)]
pub struct SleepArgs {
    pub ms: u64,
}

#[derive(Deserialize, JsonSchema)]
pub struct NoArgs {}

/// A server named `math`: add (Json), divide (Result), boom (panics), sleep (slow),
/// echo (raw schema).
pub fn math_server() -> Server {
    let add = Tool::builder("add")
        .title("Add")
        .description("Add two integers")
        .read_only(true)
        .idempotent(true)
        .typed(|args: AddArgs| async move {
            Json(Sum {
                value: args.a + args.b.unwrap_or(0),
            })
        })
        .unwrap();
    let divide = Tool::builder("divide")
        .description("Divide a by b")
        .typed(|args: DivArgs| async move {
            if args.b == 0.0 {
                Err("division by zero".to_owned())
            } else {
                Ok((args.a / args.b).to_string())
            }
        })
        .unwrap();
    let boom = Tool::builder("boom")
        .description("Always panics")
        .typed(|_: NoArgs| async move {
            if true {
                panic!("kaboom");
            }
            "unreachable"
        })
        .unwrap();
    let sleep = Tool::builder("sleep")
        .description("Sleeps for ms milliseconds")
        .typed(|ctx: ToolContext, args: SleepArgs| async move {
            tokio::time::sleep(std::time::Duration::from_millis(args.ms)).await;
            format!("{} slept {}", ctx.tool_name(), args.ms)
        })
        .unwrap();
    let echo = Tool::new(
        "echo",
        "Echo the text",
        json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}),
        |args: Value| async move { args["text"].as_str().unwrap_or_default().to_owned() },
    )
    .unwrap();
    Server::builder("math")
        .version("1.2.0")
        .instructions("Arithmetic tools")
        .tools([add, divide, boom, sleep, echo])
        .build()
        .unwrap()
}

/// A one-tool server named `name` whose tool `tool` answers with `answer`.
pub fn small_server(name: &str, tool: &str, answer: &'static str) -> Server {
    let t = Tool::new(
        tool,
        "test tool",
        json!({"type": "object"}),
        move |_| async move { answer },
    )
    .unwrap();
    Server::new(name, None, [t]).unwrap()
}

/// A server named `name` whose tools answer with `"<server>/<tool>"` (so a call shows where
/// it landed) and are described as `"<tool> of <server>"`.
pub fn labelled_server(name: &str, tools: &[&str]) -> Server {
    let tools = tools.iter().map(|t| {
        let label = format!("{name}/{t}");
        Tool::new(
            *t,
            format!("{t} of {name}"),
            json!({"type": "object"}),
            move |_: Value| {
                let label = label.clone();
                async move { label }
            },
        )
        .unwrap()
    });
    Server::new(name, None, tools).unwrap()
}

/// An agent runtime's `control_request` carrying MCP `message` for the SDK server `server`.
pub fn control_mcp_message(request_id: &str, server: &str, message: Value) -> Value {
    json!({"type": "control_request", "request_id": request_id,
           "request": {"subtype": "mcp_message", "server_name": server, "message": message}})
}

/// A tool named `hang` that never finishes and sets `dropped` when its future is dropped.
pub fn hanging_tool(dropped: Arc<AtomicBool>) -> Tool {
    Tool::new(
        "hang",
        "Never finishes",
        json!({"type": "object"}),
        move |_: Value| {
            let guard = DropFlag(dropped.clone());
            async move {
                let _guard = guard;
                std::future::pending::<()>().await;
                "never"
            }
        },
    )
    .unwrap()
}

/// A free loopback port, for a peer server a test starts.
pub fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a free port");
    listener.local_addr().expect("an address").port()
}

/// Connects to a Streamable HTTP server the test just started, retrying for up to 10 s while
/// it comes up.
pub async fn connect_http_when_up(
    builder: impl Fn() -> mcp_registry::client::ClientBuilder,
    url: &str,
) -> mcp_registry::client::Client {
    let mut last = None;
    for _ in 0..100 {
        match builder().connect_http(url).await {
            Ok(client) => return client,
            Err(e) => last = Some(e),
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    panic!("no MCP server came up at {url} within 10 s: {last:?}");
}

/// How many progress notifications [`flooding_server`]'s tool sends.
pub const FLOOD: u32 = 100_000;

/// Server `s` whose `flood` tool sends [`FLOOD`] progress notifications at once (for a peer
/// that does not read), then says so through `done`.
pub fn flooding_server(done: Arc<tokio::sync::Notify>) -> Server {
    let flood = Tool::builder("flood")
        .typed(move |ctx: ToolContext, _: serde_json::Map<String, Value>| {
            let done = done.clone();
            async move {
                for i in 1..=FLOOD {
                    ctx.progress(f64::from(i), None, None).unwrap();
                }
                done.notify_one();
                "flooded"
            }
        })
        .unwrap();
    Server::builder("s").tool(flood).build().unwrap()
}
