//! What the task tests share (`tests/tasks.rs` in one process, `tests/replicas_tasks.rs`
//! across replicas): requests of both eras declaring the tasks extension, the server `s`'s
//! task tools, and asking a registry.

use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use mcp_registry::protocol::TaskSupport;
use mcp_registry::tool::{Elicitation, InputError};
use mcp_registry::{Registry, Tool, ToolContext};
use serde_json::{Map, Value, json};

use super::{DropFlag, MODERN};

/// The tasks extension's name.
pub const TASKS: &str = "io.modelcontextprotocol/tasks";

/// `_meta` of a 2026-07-28 request declaring the tasks extension (and elicitation).
pub fn meta_with_tasks() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientInfo": {"name": "test", "version": "0"},
        "io.modelcontextprotocol/clientCapabilities": {
            "elicitation": {}, "extensions": {TASKS: {}}
        }
    })
}

/// A 2026-07-28 request declaring the tasks extension.
pub fn modern(id: u64, method: &str, mut params: Value) -> Value {
    params["_meta"] = meta_with_tasks();
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

/// A 2025-11-25 request.
pub fn legacy(id: u64, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Name {
    name: String,
}

/// `slow`: `secs` seconds of work answering `answer`, flagging `dropped` when its future is
/// dropped.
pub fn slow_tool(dropped: Arc<AtomicBool>, secs: u64, answer: &'static str) -> Tool {
    Tool::builder("slow")
        .task_support(TaskSupport::Optional)
        .raw(json!({"type": "object"}), move |_: Value| {
            let flag = DropFlag(dropped.clone());
            async move {
                let _flag = flag;
                tokio::time::sleep(Duration::from_secs(secs)).await;
                answer
            }
        })
        .unwrap()
}

/// `ask`: a moment of work, then a question inside the task ("Hello, {name}!").
pub fn ask_tool() -> Tool {
    Tool::builder("ask")
        .task_support(TaskSupport::Optional)
        .typed(|ctx: ToolContext, _: Map<String, Value>| async move {
            tokio::time::sleep(Duration::from_millis(100)).await;
            let name = match ctx.elicit::<Name>("Who are you?").await? {
                Elicitation::Accept(Name { name }) => name,
                _ => "stranger".to_owned(),
            };
            Ok::<_, InputError>(format!("Hello, {name}!"))
        })
        .unwrap()
}

/// `plain`: no task.
pub fn plain_tool() -> Tool {
    Tool::new(
        "plain",
        "Not a task",
        json!({"type": "object"}),
        |_: Value| async { "plain" },
    )
    .unwrap()
}

/// The reply of server `s` of `registry` to `message`.
pub async fn send(registry: &Registry, message: Value) -> Value {
    registry.handle_mcp_message("s", message).await.unwrap()
}

/// The result of server `s` of `registry` for `message`, which must not fail.
pub async fn result_of(registry: &Registry, message: Value) -> Value {
    let reply = send(registry, message).await;
    assert!(reply.get("error").is_none(), "unexpected error: {reply}");
    reply["result"].clone()
}
