//! The fixtures of the conformance suite's `tasks-*` scenarios (the tasks extension,
//! SEP-2663): a plain tool, tools that run as tasks (slow, failing with a tool error,
//! panicking into a protocol error), tools that ask for input inside a task, and one that
//! asks first (multi round-trip) and then goes on as a task.

use std::time::Duration;

use mcp_registry::protocol::TaskSupport;
use mcp_registry::tool::{Elicitation, InputError};
use mcp_registry::{Tool, ToolContext, mcp_tool};
use schemars::JsonSchema;
use serde::Deserialize;

/// How long the task fixtures work before they ask or end: long enough that their first
/// poll (in the request) never finishes them, so each becomes a task.
const WARM_UP: Duration = Duration::from_millis(50);

/// Greets by name (a plain tool: never a task).
///
/// # Arguments
/// * `name` - Who to greet
#[mcp_tool(read_only)]
async fn greet(name: String) -> String {
    format!("Hello, {name}!")
}

/// Works for `seconds` seconds, then says it is done (a task when the client can follow one).
///
/// # Arguments
/// * `seconds` - How long to work (0: at once)
/// * `label` - A label to echo back
#[mcp_tool(task = "optional")]
async fn slow_compute(seconds: Option<f64>, label: Option<String>) -> String {
    let seconds = seconds.unwrap_or(1.0).clamp(0.0, 3600.0);
    tokio::time::sleep(Duration::from_secs_f64(seconds)).await;
    let label = label.unwrap_or_default();
    format!("slow_compute {label} done after {seconds} s")
}

/// Works for a second, then fails with a tool error (runs only as a task).
#[mcp_tool(task = "required")]
async fn failing_job() -> Result<String, String> {
    tokio::time::sleep(Duration::from_secs(1)).await;
    Err("failing_job failed, as it always does".to_owned())
}

/// Works a moment, then panics: the task fails with a protocol error.
#[mcp_tool(task = "optional")]
async fn protocol_error_job() -> String {
    tokio::time::sleep(WARM_UP).await;
    panic!("protocol_error_job crashed on purpose")
}

/// A yes/no confirmation.
#[derive(Deserialize, JsonSchema)]
struct Confirm {
    /// Whether to go ahead.
    #[serde(default)]
    confirm: bool,
}

/// A name.
#[derive(Deserialize, JsonSchema)]
struct Named {
    /// The name.
    #[serde(default)]
    name: String,
}

/// Locates `filename`, then asks to confirm deleting it (inside the task).
///
/// # Arguments
/// * `filename` - The file to delete
#[mcp_tool(task = "optional")]
async fn confirm_delete(ctx: ToolContext, filename: String) -> Result<String, InputError> {
    tokio::time::sleep(WARM_UP).await;
    let answer = ctx
        .elicit::<Confirm>(&format!("Delete {filename}?"))
        .await?;
    Ok(match answer {
        Elicitation::Accept(Confirm { confirm: true }) => format!("Deleted {filename}"),
        _ => format!("Kept {filename}"),
    })
}

/// Asks two questions at once (inside the task), then reports both answers.
#[mcp_tool(task = "optional")]
async fn multi_input(ctx: ToolContext) -> Result<String, InputError> {
    tokio::time::sleep(WARM_UP).await;
    let (first, second) = tokio::join!(
        ctx.input_key("first").elicit::<Named>("First name?"),
        ctx.input_key("second").elicit::<Named>("Second name?"),
    );
    let name = |e: Elicitation<Named>| e.accepted().map_or_else(String::new, |n| n.name);
    Ok(format!("Got {} and {}", name(first?), name(second?)))
}

/// Asks for a name first (multi round-trip, before any task exists), then works on as a
/// task and greets with it (runs only as a task).
#[mcp_tool(task = "required")]
async fn test_tool_with_task(ctx: ToolContext) -> Result<String, InputError> {
    let name = ctx
        .input_key("user_name")
        .elicit::<Named>("What is your name?")
        .await?
        .accepted()
        .map_or_else(|| "stranger".to_owned(), |n| n.name);
    tokio::time::sleep(WARM_UP).await;
    Ok(format!("Hello, {name}! Your task is done."))
}

/// The task fixtures.
pub fn tools() -> Vec<Tool> {
    let tools = vec![
        greet::tool(),
        slow_compute::tool(),
        failing_job::tool(),
        protocol_error_job::tool(),
        confirm_delete::tool(),
        multi_input::tool(),
        test_tool_with_task::tool(),
    ];
    debug_assert!(
        tools
            .iter()
            .filter(|t| t.name() != "greet")
            .all(|t| t.task_support() != TaskSupport::Forbidden)
    );
    tools
}
