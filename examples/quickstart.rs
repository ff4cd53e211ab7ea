//! Quickstart: plain async functions become MCP tools (and prompts, resources), `server!`
//! groups them,
//! and a `Registry` calls them by name and answers MCP JSON-RPC in-process.
//!
//! Run with `cargo run --example quickstart`.

use mcp_registry::{
    CallError, Json, PromptMessage, Registry, mcp_prompt, mcp_resource, mcp_tool, server,
};
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::json;

/// The result of an addition.
#[derive(Serialize, JsonSchema)]
struct Sum {
    /// a + b
    value: i64,
}

/// Add two numbers.
///
/// # Arguments
/// * `a` - the left operand
/// * `b` - the right operand; 0 when left out
#[mcp_tool(read_only, idempotent)]
async fn add(a: i64, b: Option<i64>) -> Json<Sum> {
    Json(Sum {
        value: a + b.unwrap_or(0),
    })
}

/// Divide `a` by `b`.
///
/// # Arguments
/// * `a` - the dividend
/// * `b` - the divisor, not zero
#[mcp_tool(read_only)]
async fn divide(a: f64, b: f64) -> Result<String, String> {
    if b == 0.0 {
        return Err("cannot divide by zero".to_owned());
    }
    Ok((a / b).to_string())
}

/// Greet someone by name.
#[mcp_tool(title = "Greeter")]
async fn greet(name: String) -> String {
    format!("Hello, {name}!")
}

/// Write a greeting card.
///
/// # Arguments
/// * `name` - who the card is for
#[mcp_prompt]
async fn card(name: String) -> Vec<PromptMessage> {
    vec![PromptMessage::user(format!(
        "Write a short greeting card for {name}."
    ))]
}

server!(name = "math", version = "1.2.0", tools = [add, divide]);
/// A greeting in the given language.
#[mcp_resource(template = "greetings://{lang}", mime_type = "text/plain")]
async fn greeting(lang: String) -> String {
    match lang.as_str() {
        "fr" => "Bonjour".to_owned(),
        _ => "Hello".to_owned(),
    }
}

server!(
    name = "greeter",
    tools = [greet],
    prompts = [card],
    resources = [greeting]
);

fn show(label: &str, value: &serde_json::Value) {
    println!(
        "--- {label}\n{}",
        serde_json::to_string_pretty(value).unwrap_or_default()
    );
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    // The function is still an ordinary Rust function.
    assert_eq!(add(1, Some(2)).await.0.value, 3);

    // Every server! in the program, collected.
    let registry = Registry::collected();
    println!("servers: {:?}", registry.server_names());

    // Call a tool by name (plain, or qualified as mcp__<server>__<tool>).
    let sum = registry
        .call_tool_by_name("add", json!({"a": 2, "b": 40}))
        .await?;
    println!("add(2, 40) -> {}", sum.first_text().unwrap_or_default());
    let hello = registry
        .call_tool_by_name("mcp__greeter__greet", json!({"name": "Ada"}))
        .await?;
    println!("greet(Ada) -> {}", hello.first_text().unwrap_or_default());

    // A prompt, rendered by name with its (string) arguments.
    let prompt = registry
        .get_prompt_by_name("card", [("name", "Ada")])
        .await?;
    println!(
        "card(Ada) -> {}",
        prompt.messages[0].content.as_text().unwrap_or_default()
    );

    // A resource, read by URI: the template binds `lang`.
    let hello_fr = registry.read_resource("greetings://fr").await?;
    println!(
        "greetings://fr -> {}",
        hello_fr.contents[0].as_text().unwrap_or_default()
    );

    // MCP JSON-RPC, answered in-process: no subprocess, no socket.
    let list = registry
        .handle_mcp_message(
            "math",
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
        )
        .await;
    show("tools/list on math", &list.unwrap_or_default());
    let call = registry
        .handle_mcp_message(
            "math",
            json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                   "params": {"name": "divide", "arguments": {"a": 1, "b": 0}}}),
        )
        .await;
    show("tools/call divide(1, 0)", &call.unwrap_or_default());

    // Toggle a server off: its tools disappear from calls and listings.
    registry.toggle_server("math", false)?;
    match registry.call_tool_by_name("add", json!({"a": 1})).await {
        Err(e @ CallError::ServerDisabled { .. }) => println!("after toggling math off: {e}"),
        other => println!("unexpected: {other:?}"),
    }
    let refused = registry
        .handle_mcp_message(
            "math",
            json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list"}),
        )
        .await;
    show(
        "tools/list on a disabled server",
        &refused.unwrap_or_default(),
    );
    for status in registry.server_status() {
        println!(
            "{} v{}: enabled={} tools={:?}",
            status.name, status.version, status.enabled, status.tool_names
        );
    }
    registry.toggle_server("math", true)?;
    println!("math enabled again: {:?}", registry.is_enabled("math"));
    Ok(())
}
