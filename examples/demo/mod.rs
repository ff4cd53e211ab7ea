//! The demo server shared by `examples/stdio_server.rs` and `examples/http_server.rs`: six
//! tools (two of them ask the client: an approval form, a model completion), a prompt and
//! resources from plain async functions, collected as the server `demo`.

use std::fmt;
use std::time::Duration;

use mcp_registry::completion::{CompletionContext, Completions};
use mcp_registry::protocol::LoggingLevel;
use mcp_registry::tool::{Elicitation, InputError, SamplingRequest};
use mcp_registry::{
    Json, PromptMessage, ResourceError, ToolContext, mcp_prompt, mcp_resource, mcp_tool, server,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The result of `add`.
#[derive(Debug, Serialize, JsonSchema)]
struct Sum {
    /// `a + b`.
    sum: i64,
}

/// Add two integers.
///
/// # Arguments
/// * `a` - the left operand
/// * `b` - the right operand
#[mcp_tool(title = "Add", read_only, idempotent)]
async fn add(a: i64, b: i64) -> Json<Sum> {
    Json(Sum {
        sum: a.saturating_add(b),
    })
}

/// The result of `divide`.
#[derive(Debug, Serialize, JsonSchema)]
struct Quotient {
    /// `dividend / divisor`.
    quotient: f64,
}

#[derive(Debug)]
struct DivisionByZero;

impl fmt::Display for DivisionByZero {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("cannot divide by zero")
    }
}

/// Divide one number by another; dividing by zero is a tool error.
///
/// # Arguments
/// * `dividend` - the number to divide
/// * `divisor` - the number to divide by (not zero)
#[mcp_tool(title = "Divide", read_only, idempotent)]
async fn divide(dividend: f64, divisor: f64) -> Result<Json<Quotient>, DivisionByZero> {
    if divisor == 0.0 {
        return Err(DivisionByZero);
    }
    Ok(Json(Quotient {
        quotient: dividend / divisor,
    }))
}

/// Echo a text back.
///
/// # Arguments
/// * `text` - the text to echo
#[mcp_tool(read_only, idempotent)]
async fn echo(text: String) -> String {
    text
}

/// Count down, reporting progress at each step (send a `progressToken` to see it).
///
/// # Arguments
/// * `steps` - how many steps to count (at most 20)
#[mcp_tool(title = "Countdown", read_only)]
async fn countdown(ctx: ToolContext, steps: u32) -> Result<String, String> {
    if steps > 20 {
        return Err(format!("steps must be at most 20, got {steps}"));
    }
    for done in 1..=steps {
        tokio::time::sleep(Duration::from_millis(20)).await;
        let left = steps - done;
        ctx.log(
            LoggingLevel::Debug,
            Some("countdown"),
            format!("step {done}"),
        );
        ctx.log(
            LoggingLevel::Info,
            Some("countdown"),
            format!("{left} left"),
        );
        ctx.progress(
            f64::from(done),
            Some(f64::from(steps)),
            Some(&format!("{left} left")),
        )
        .map_err(|e| e.to_string())?;
    }
    Ok(format!("counted down from {steps}"))
}

/// Ask the model to explain one of the demo's operations.
///
/// # Arguments
/// * `operation` - the tool to explain: add, divide, echo or countdown
/// * `audience` - who the explanation is for; a beginner when left out
#[mcp_prompt(title = "Explain an operation")]
async fn explain(
    #[arg(complete = operation_names)] operation: String,
    audience: Option<String>,
) -> Vec<PromptMessage> {
    let audience = audience.unwrap_or_else(|| "a beginner".to_owned());
    vec![
        PromptMessage::user(format!(
            "Explain what the `{operation}` tool does, for {audience}."
        )),
        PromptMessage::assistant("Here is what it does:"),
    ]
}

/// The demo's operations, one name per line.
#[mcp_resource(
    uri = "demo://docs/operations",
    title = "Operations",
    mime_type = "text/plain"
)]
async fn operations() -> &'static str {
    "add\ndivide\necho\ncountdown"
}

/// How one of the demo's operations works.
#[mcp_resource(
    template = "demo://docs/operations/{name}",
    name = "operation",
    mime_type = "text/markdown"
)]
async fn operation(name: String) -> Result<String, ResourceError> {
    let what = match name.as_str() {
        "add" => "adds two integers",
        "divide" => "divides one number by another, refusing zero",
        "echo" => "echoes its text back",
        "countdown" => "counts down, reporting progress",
        _ => return Err(ResourceError::not_found(format!("no operation `{name}`"))),
    };
    Ok(format!("# {name}\n\nThe `{name}` tool {what}."))
}

/// Completes `explain`'s `operation` argument: the demo's tools whose name starts with what
/// was typed.
async fn operation_names(partial: String, _context: CompletionContext) -> Completions {
    Completions::matching(["add", "countdown", "divide", "echo"], &partial)
}

/// What `wipe` asks the user before acting.
#[derive(Debug, Deserialize, JsonSchema)]
struct Confirmation {
    /// Delete every row: there is no undo.
    confirm: bool,
}

/// Delete every row of a table, once the user confirms (an approval form: elicitation).
///
/// # Arguments
/// * `table` - the table to empty
#[mcp_tool(title = "Wipe", destructive)]
async fn wipe(ctx: ToolContext, table: String) -> Result<String, InputError> {
    let question = format!("Delete every row of `{table}`?");
    Ok(match ctx.elicit::<Confirmation>(question).await? {
        Elicitation::Accept(Confirmation { confirm: true }) => format!("wiped {table}"),
        Elicitation::Accept(_) => format!("kept {table}: not confirmed"),
        Elicitation::Decline => format!("kept {table}: declined"),
        Elicitation::Cancel => format!("kept {table}: cancelled"),
    })
}

/// Summarize a text in one sentence with the client's model (sampling).
///
/// # Arguments
/// * `text` - what to summarize
#[mcp_tool(title = "Summarize", read_only)]
async fn summarize(ctx: ToolContext, text: String) -> Result<String, InputError> {
    let request = SamplingRequest::new(100)
        .user(format!("Summarize: {text}"))
        .system_prompt("Answer in one sentence.");
    let reply = ctx.sample(request).await?;
    Ok(format!(
        "{} (by {})",
        reply.content["text"].as_str().unwrap_or_default(),
        reply.model
    ))
}

server!(
    name = "demo",
    version = "1.0.0",
    title = "mcp-registry demo",
    instructions = "Arithmetic and echo tools from the mcp-registry examples.",
    tools = [add, divide, echo, countdown, wipe, summarize],
    prompts = [explain],
    resources = [operations, operation],
);
