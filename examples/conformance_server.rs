//! The server the official MCP conformance suite (`@modelcontextprotocol/conformance`) tests:
//! the tools, prompts and resources its server scenarios call, over Streamable HTTP at
//! `http://127.0.0.1:<port>/mcp`.
//!
//! ```text
//! cargo run --example conformance_server --features http -- 3001      # or MCP_CONFORMANCE_PORT=3001
//! conformance server --url http://127.0.0.1:3001/mcp --requirements 2026-07-28 \
//!     --expected-failures tests/e2e/conformance/server-2026-07-28.yml
//! ```
//!
//! `.ci/e2e.sh` runs the suite's requirement sets for 2025-11-25 and 2026-07-28 against it on
//! every CI run, with the prompts its `prompts-*` scenarios get (one argument completes), the
//! resources its `resources-*` scenarios read, the tools that log and those that change the
//! server (for `subscriptions/listen` streams), and the tools that ask the client for input
//! (sampling, elicitation, roots): over a legacy session with server→client requests, and in
//! 2026-07-28 with multi round-trip requests (`input_required`), the same tool bodies; skills
//! (the `sep-2640-*` scenarios, run by name): `examples/skills/` and one made in code; and
//! the fixtures of the tasks extension's `tasks-*` scenarios (`conformance_server/tasks.rs`,
//! run by name: `conformance server --url .. --scenario tasks-lifecycle`). Scenarios about
//! features this library does not offer yet have no fixtures here; they are listed with their
//! reasons in `tests/e2e/conformance/server-<revision>.yml`.

#[path = "conformance_server/tasks.rs"]
mod tasks;

use std::net::SocketAddr;
use std::time::Duration;

use mcp_registry::completion::Completions;
use mcp_registry::protocol::{ElicitParams, LoggingLevel, Role};
use mcp_registry::skill::Skill;
use mcp_registry::tool::{ClientCapability, Elicitation, InputError, SamplingRequest};
use mcp_registry::transport::http::HttpConfig;
use mcp_registry::{
    CallToolResult, Content, Prompt, PromptMessage, Registry, Server, Tool, ToolContext,
    mcp_resource, mcp_tool,
};
use serde_json::{Value, json};

/// A 1x1 red PNG.
const RED_PIXEL_PNG: [u8; 70] = [
    0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52,
    0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1f, 0x15, 0xc4,
    0x89, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x44, 0x41, 0x54, 0x78, 0xda, 0x63, 0xfc, 0xcf, 0xc0, 0xf0,
    0x1f, 0x00, 0x05, 0x05, 0x02, 0x00, 0x5f, 0xc8, 0xf1, 0xd2, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45,
    0x4e, 0x44, 0xae, 0x42, 0x60, 0x82,
];

/// A tenth of a second of silence: 8 kHz, 8-bit mono PCM in a WAV container.
fn silent_wav() -> Vec<u8> {
    const RATE: u32 = 8_000;
    let samples = vec![0x80_u8; (RATE / 10) as usize];
    let data_len = u32::try_from(samples.len()).expect("short clip");
    let mut wav = Vec::with_capacity(44 + samples.len());
    wav.extend_from_slice(b"RIFF");
    wav.extend_from_slice(&(36 + data_len).to_le_bytes());
    wav.extend_from_slice(b"WAVEfmt ");
    wav.extend_from_slice(&16_u32.to_le_bytes()); // fmt chunk size
    wav.extend_from_slice(&1_u16.to_le_bytes()); // PCM
    wav.extend_from_slice(&1_u16.to_le_bytes()); // mono
    wav.extend_from_slice(&RATE.to_le_bytes()); // sample rate
    wav.extend_from_slice(&RATE.to_le_bytes()); // byte rate (1 byte per sample)
    wav.extend_from_slice(&1_u16.to_le_bytes()); // block align
    wav.extend_from_slice(&8_u16.to_le_bytes()); // bits per sample
    wav.extend_from_slice(b"data");
    wav.extend_from_slice(&data_len.to_le_bytes());
    wav.extend_from_slice(&samples);
    wav
}

/// Returns a simple text block.
#[mcp_tool(read_only)]
async fn test_simple_text() -> &'static str {
    "This is a simple text response for testing."
}

/// Returns a 1x1 red PNG image.
#[mcp_tool(read_only)]
async fn test_image_content() -> Content {
    Content::image(&RED_PIXEL_PNG, "image/png")
}

/// Returns a short WAV clip.
#[mcp_tool(read_only)]
async fn test_audio_content() -> Content {
    Content::audio(&silent_wav(), "audio/wav")
}

/// Returns an embedded text resource.
#[mcp_tool(read_only)]
async fn test_embedded_resource() -> Content {
    Content::embedded_text(
        "test://embedded-resource",
        "text/plain",
        "This is an embedded resource content.",
    )
}

/// Returns text, an image and an embedded resource in one result.
#[mcp_tool(read_only)]
async fn test_multiple_content_types() -> Vec<Content> {
    vec![
        Content::text("Multiple content types test:"),
        Content::image(&RED_PIXEL_PNG, "image/png"),
        Content::embedded_text(
            "test://mixed-content-resource",
            "application/json",
            r#"{"test":"data","value":123}"#,
        ),
    ]
}

/// Always fails: the result has `isError: true`.
#[mcp_tool(read_only)]
async fn test_error_handling() -> CallToolResult {
    CallToolResult::error("This tool intentionally returns an error for testing")
}

/// Tests server-initiated sampling (LLM completion request)
///
/// # Arguments
/// * `prompt` - The prompt to send to the LLM
#[mcp_tool]
async fn test_sampling(ctx: ToolContext, prompt: String) -> String {
    match ctx.sample(SamplingRequest::new(100).user(prompt)).await {
        Ok(message) => {
            let text = message.content["text"].as_str().unwrap_or("No response");
            format!("LLM response: {text}")
        }
        Err(e) => format!("Sampling not supported or error: {e}"),
    }
}

/// Sends `elicitation/create` with `requested_schema` and reports the answer as
/// everything-server.ts does: `{prefix}: action=.., content={..}`.
async fn elicit_and_report(
    ctx: &ToolContext,
    prefix: &str,
    message: String,
    requested_schema: Value,
) -> String {
    let params = ElicitParams {
        message,
        mode: None,
        requested_schema: Some(requested_schema),
        url: None,
        elicitation_id: None,
    };
    match ctx.elicit_raw(params).await {
        Ok(result) => {
            let action = serde_json::to_value(result.action).unwrap_or_default();
            let content = Value::Object(result.content.unwrap_or_default());
            format!(
                "{prefix}: action={}, content={content}",
                action.as_str().unwrap_or_default()
            )
        }
        Err(e) => format!("Elicitation not supported or error: {e}"),
    }
}

/// Tests server-initiated elicitation (user input request)
///
/// # Arguments
/// * `message` - The message to show the user
#[mcp_tool]
async fn test_elicitation(ctx: ToolContext, message: String) -> String {
    let schema = json!({
        "type": "object",
        "properties": {"response": {"type": "string", "description": "User's response"}},
        "required": ["response"]
    });
    elicit_and_report(&ctx, "User response", message, schema).await
}

/// Tests elicitation with default values per SEP-1034
#[mcp_tool]
async fn test_elicitation_sep1034_defaults(ctx: ToolContext) -> String {
    let schema = json!({
        "type": "object",
        "properties": {
            "name": {"type": "string", "description": "User name", "default": "John Doe"},
            "age": {"type": "integer", "description": "User age", "default": 30},
            "score": {"type": "number", "description": "User score", "default": 95.5},
            "status": {
                "type": "string",
                "description": "User status",
                "enum": ["active", "inactive", "pending"],
                "default": "active"
            },
            "verified": {"type": "boolean", "description": "Verification status", "default": true}
        },
        "required": []
    });
    let message = "Please review and update the form fields with defaults".to_owned();
    elicit_and_report(&ctx, "Elicitation completed", message, schema).await
}

/// Tests elicitation with enum schema improvements per SEP-1330
#[mcp_tool]
async fn test_elicitation_sep1330_enums(ctx: ToolContext) -> String {
    let schema = json!({
        "type": "object",
        "properties": {
            "untitledSingle": {
                "type": "string",
                "description": "Select one option",
                "enum": ["option1", "option2", "option3"]
            },
            "titledSingle": {
                "type": "string",
                "description": "Select one option with titles",
                "oneOf": [
                    {"const": "value1", "title": "First Option"},
                    {"const": "value2", "title": "Second Option"},
                    {"const": "value3", "title": "Third Option"}
                ]
            },
            "legacyEnum": {
                "type": "string",
                "description": "Select one option (legacy)",
                "enum": ["opt1", "opt2", "opt3"],
                "enumNames": ["Option One", "Option Two", "Option Three"]
            },
            "untitledMulti": {
                "type": "array",
                "description": "Select multiple options",
                "minItems": 1,
                "maxItems": 3,
                "items": {"type": "string", "enum": ["option1", "option2", "option3"]}
            },
            "titledMulti": {
                "type": "array",
                "description": "Select multiple options with titles",
                "minItems": 1,
                "maxItems": 3,
                "items": {
                    "anyOf": [
                        {"const": "value1", "title": "First Choice"},
                        {"const": "value2", "title": "Second Choice"},
                        {"const": "value3", "title": "Third Choice"}
                    ]
                }
            }
        },
        "required": []
    });
    let message = "Please select options from the enum fields".to_owned();
    elicit_and_report(&ctx, "Elicitation completed", message, schema).await
}

/// Test tool requiring sampling
#[mcp_tool]
async fn test_missing_capability(ctx: ToolContext) -> Result<&'static str, InputError> {
    // A 2026-07-28 client that declared no `sampling` gets -32021 (HTTP 400).
    ctx.require_client_capability(ClientCapability::Sampling)?;
    Ok("Success")
}

// Multi round-trip requests (2026-07-28): the same tool bodies as over a legacy session.
// With no one to answer at once, an ask ends the request with `input_required`; the client's
// retry runs the tool again, its asks answered by key (`ToolContext::input_key` names the
// keys the suite expects).

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct UserName {
    name: String,
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Confirm {
    ok: bool,
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Color {
    color: String,
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct PromptContext {
    context: String,
}

/// The text of a sampled message.
fn sampled_text(message: &mcp_registry::protocol::CreateMessageResult) -> &str {
    message.content["text"].as_str().unwrap_or("no response")
}

/// MRTR: returns InputRequiredResult with elicitation request
#[mcp_tool]
async fn test_input_required_result_elicitation(ctx: ToolContext) -> Result<String, InputError> {
    let answer = ctx
        .input_key("user_name")
        .elicit::<UserName>("What is your name?")
        .await?;
    Ok(match answer {
        Elicitation::Accept(UserName { name }) => format!("Hello, {name}!"),
        _ => "Hello, stranger!".to_owned(),
    })
}

/// MRTR: returns InputRequiredResult with sampling request
#[mcp_tool]
async fn test_input_required_result_sampling(ctx: ToolContext) -> Result<String, InputError> {
    let request = SamplingRequest::new(100).user("What is the capital of France?");
    let message = ctx.input_key("sample_request").sample(request).await?;
    Ok(format!("Sampling result: {}", sampled_text(&message)))
}

/// MRTR: returns InputRequiredResult with roots/list request
#[mcp_tool]
async fn test_input_required_result_list_roots(ctx: ToolContext) -> Result<String, InputError> {
    let roots = ctx.input_key("roots_request").roots().await?;
    Ok(format!("Found {} root(s)", roots.len()))
}

/// MRTR: returns InputRequiredResult with requestState
#[mcp_tool]
async fn test_input_required_result_request_state(
    ctx: ToolContext,
) -> Result<&'static str, InputError> {
    let answer = ctx
        .input_key("confirm")
        .elicit::<Confirm>("Please confirm")
        .await?;
    Ok(match answer {
        Elicitation::Accept(Confirm { ok: true }) => "state-ok: requestState validated",
        _ => "state-declined",
    })
}

/// MRTR: returns InputRequiredResult with multiple input requests
#[mcp_tool]
async fn test_input_required_result_multiple_inputs(
    ctx: ToolContext,
) -> Result<String, InputError> {
    // Awaited together: the three go to the client in one round.
    let (name, greeting, roots) = tokio::join!(
        ctx.input_key("user_name")
            .elicit::<UserName>("What is your name?"),
        ctx.input_key("greeting")
            .sample(SamplingRequest::new(50).user("Generate a greeting")),
        ctx.input_key("client_roots").roots(),
    );
    let name = name?.accepted().map_or("unknown".to_owned(), |n| n.name);
    let greeting = greeting?;
    Ok(format!(
        "Name: {name}; Greeting: {}; Roots: {}",
        sampled_text(&greeting),
        roots?.len()
    ))
}

/// MRTR: multi-round InputRequiredResult workflow
#[mcp_tool]
async fn test_input_required_result_multi_round(ctx: ToolContext) -> Result<String, InputError> {
    // Awaited one after the other: one round each.
    let name = ctx
        .input_key("step1")
        .elicit::<UserName>("Step 1: What is your name?")
        .await?
        .accepted()
        .map_or("friend".to_owned(), |n| n.name);
    let color = ctx
        .input_key("step2")
        .elicit::<Color>("Step 2: What is your favorite color?")
        .await?
        .accepted()
        .map_or("no color".to_owned(), |c| c.color);
    Ok(format!("Multi-round complete for {name} who likes {color}"))
}

/// MRTR: HMAC-signed requestState integrity test
#[mcp_tool]
async fn test_input_required_result_tampered_state(
    ctx: ToolContext,
) -> Result<&'static str, InputError> {
    // The registry signs every requestState: a tampered one is refused before this runs.
    ctx.input_key("confirm")
        .elicit::<Confirm>("Please confirm")
        .await?;
    Ok("integrity-ok: state verified")
}

/// MRTR: respects client capabilities in inputRequests
#[mcp_tool]
async fn test_input_required_result_capabilities(ctx: ToolContext) -> String {
    let elicit = ElicitParams {
        message: "Elicitation input".to_owned(),
        mode: None,
        requested_schema: Some(json!({
            "type": "object",
            "properties": {"value": {"type": "string"}},
            "required": ["value"]
        })),
        url: None,
        elicitation_id: None,
    };
    // Only what the client declared is asked; the rest fails at once (NotSupported).
    let (elicited, sampled) = tokio::join!(
        ctx.input_key("elicit_input").elicit_raw(elicit),
        ctx.input_key("sample_input")
            .sample(SamplingRequest::new(50).user("Sample request")),
    );
    let received: Vec<&str> = [
        elicited.is_ok().then_some("elicit_input"),
        sampled.is_ok().then_some("sample_input"),
    ]
    .into_iter()
    .flatten()
    .collect();
    if received.is_empty() {
        "No supported capabilities declared".to_owned()
    } else {
        format!("capabilities-ok: received {}", received.join(","))
    }
}

/// Reports progress 0/100, 50/100 and 100/100, about 50 ms apart.
#[mcp_tool(read_only)]
async fn test_tool_with_progress(ctx: ToolContext) -> Result<String, String> {
    for (i, done) in [0.0, 50.0, 100.0].into_iter().enumerate() {
        if i > 0 {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        ctx.progress(done, Some(100.0), None)
            .map_err(|e| e.to_string())?;
    }
    Ok("Progress test completed".to_owned())
}

/// Diagnostic tool of the suite's `server-stateless` scenario: its response stream must carry
/// only notifications and the final result, never a request of the server's own. Reports
/// progress half-way when the request carries a progress token, then completes.
#[mcp_tool(read_only)]
async fn test_streaming_elicitation(ctx: ToolContext) -> Result<&'static str, String> {
    ctx.progress(50.0, Some(100.0), None)
        .map_err(|e| e.to_string())?;
    Ok("Streaming complete")
}

/// Diagnostic tool of the suite's `server-stateless` scenario: no `notifications/message` may
/// reach a client whose request set no `io.modelcontextprotocol/logLevel`. Logs at `info`, so
/// the check means something.
#[mcp_tool(read_only)]
async fn test_logging_tool(ctx: ToolContext) -> &'static str {
    ctx.log(
        LoggingLevel::Info,
        None,
        "Diagnostic trace logging activated",
    );
    "Logging evaluated"
}

/// Sends three `info` log messages about 50 ms apart (`tools-call-with-logging`).
#[mcp_tool(read_only)]
async fn test_tool_with_logging(ctx: ToolContext) -> &'static str {
    for (i, step) in [
        "Tool execution started",
        "Tool processing data",
        "Tool execution completed",
    ]
    .into_iter()
    .enumerate()
    {
        if i > 0 {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        ctx.log(LoggingLevel::Info, None, step);
    }
    "Tool with logging executed successfully"
}

/// The registry being served, for the tools that change it.
static SERVED: std::sync::OnceLock<Registry> = std::sync::OnceLock::new();

/// Registers the served server again: every open `subscriptions/listen` stream that asked
/// for list changes hears about it.
fn touch_served() -> &'static str {
    if let Some(registry) = SERVED.get()
        && let Some(server) = registry.server(SERVER_NAME)
    {
        registry.register_server(server);
    }
    "Mutation triggered"
}

/// Diagnostic hook of the `server-stateless` scenario: changes the tool list.
#[mcp_tool]
async fn test_trigger_tool_change() -> &'static str {
    touch_served()
}

/// Diagnostic hook of the `server-stateless` scenario: changes the prompt list.
#[mcp_tool]
async fn test_trigger_prompt_change() -> &'static str {
    touch_served()
}

/// A tool built at run time from a raw JSON Schema that uses 2020-12 keywords (`$schema`,
/// `$defs`, `$anchor`, `$ref`, `allOf`/`anyOf`, `if`/`then`/`else`, `additionalProperties`),
/// which must reach clients untouched. The schema is the suite's own fixture (SEP-1613,
/// SEP-2106).
/// A tool whose `region` parameter is mirrored into the `Mcp-Param-Region` header over
/// Streamable HTTP (2026-07-28 `x-mcp-header`): the server checks the header against the body.
fn custom_header_tool() -> Tool {
    let schema = json!({
        "type": "object",
        "properties": {
            "region": {"type": "string", "description": "Where to run", "x-mcp-header": "Region"},
            "query": {"type": "string", "description": "What to run"}
        },
        "required": ["region"]
    });
    Tool::builder("test_custom_header")
        .description("Runs a query in a region mirrored into the Mcp-Param-Region header")
        .raw(schema, |args: Value| async move {
            format!("ran in {}", args["region"].as_str().unwrap_or_default())
        })
        .expect("a valid tool")
}

fn json_schema_2020_12_tool() -> Tool {
    let schema = json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "$defs": {
            "address": {
                "$anchor": "addressDef",
                "type": "object",
                "properties": {
                    "street": { "type": "string" },
                    "city": { "type": "string" }
                }
            }
        },
        "properties": {
            "name": { "type": "string" },
            "address": { "$ref": "#/$defs/address" },
            "contactMethod": { "type": "string", "enum": ["phone", "email"] },
            "phone": { "type": "string" },
            "email": { "type": "string" }
        },
        "allOf": [{ "anyOf": [{ "required": ["phone"] }, { "required": ["email"] }] }],
        "if": {
            "properties": { "contactMethod": { "const": "phone" } },
            "required": ["contactMethod"]
        },
        "then": { "required": ["phone"] },
        "else": { "required": ["email"] },
        "additionalProperties": false
    });
    Tool::new(
        "json_schema_2020_12_tool",
        "Tool with JSON Schema 2020-12 features",
        schema,
        |args: Value| async move { format!("received {args}") },
    )
    .expect("a valid tool")
}

/// The prompts the suite's `prompts-*` scenarios get, named as in its reference server.
fn prompts() -> Vec<Prompt> {
    let simple = Prompt::builder("test_simple_prompt")
        .title("Simple Test Prompt")
        .description("A simple prompt without arguments")
        .handler(|_| async { "This is a simple prompt for testing." });
    let with_arguments = Prompt::builder("test_prompt_with_arguments")
        .title("Prompt With Arguments")
        .description("A prompt with required arguments")
        .required_argument("arg1", "First test argument")
        .required_argument("arg2", "Second test argument")
        // `completion-complete` completes `arg1`.
        .complete("arg1", |partial, _| async move {
            Completions::matching(["paris", "park", "party"], &partial)
        })
        .handler(|args| async move {
            format!(
                "Prompt with arguments: arg1='{}', arg2='{}'",
                args["arg1"], args["arg2"]
            )
        });
    let embedded = Prompt::builder("test_prompt_with_embedded_resource")
        .title("Prompt With Embedded Resource")
        .description("A prompt that includes an embedded resource")
        .required_argument("resourceUri", "URI of the resource to embed")
        .handler(|args| async move {
            let uri = args.get("resourceUri").cloned().unwrap_or_default();
            vec![
                PromptMessage::new(
                    Role::User,
                    Content::embedded_text(
                        uri,
                        "text/plain",
                        "Embedded resource content for testing.",
                    ),
                ),
                PromptMessage::user("Please process the embedded resource above."),
            ]
        });
    let image = Prompt::builder("test_prompt_with_image")
        .title("Prompt With Image")
        .description("A prompt that includes image content")
        .handler(|_| async {
            vec![
                PromptMessage::new(Role::User, Content::image(&RED_PIXEL_PNG, "image/png")),
                PromptMessage::user("Please analyze the image above."),
            ]
        });
    // MRTR on a non-tool request: the prompt asks through its context, as a tool does.
    let asks = Prompt::builder("test_input_required_result_prompt")
        .description("MRTR: prompt that requires elicitation input")
        .handler_with_context(|ctx: ToolContext, _| async move {
            let answer = ctx
                .input_key("user_context")
                .elicit::<PromptContext>("What context should the prompt use?")
                .await
                .map_err(|e| e.to_string())?;
            let context = answer.accepted().map_or("none".to_owned(), |c| c.context);
            Ok::<_, String>(format!("Prompt with context: {context}"))
        });
    [simple, with_arguments, embedded, image, asks]
        .into_iter()
        .map(|p| p.expect("a valid prompt"))
        .collect()
}

/// A static text resource for testing.
#[mcp_resource(
    uri = "test://static-text",
    name = "static-text",
    title = "Static Text Resource",
    mime_type = "text/plain"
)]
async fn static_text() -> &'static str {
    "This is the content of the static text resource."
}

/// A static binary resource (image) for testing.
#[mcp_resource(
    uri = "test://static-binary",
    name = "static-binary",
    title = "Static Binary Resource",
    mime_type = "image/png"
)]
async fn static_binary() -> &'static [u8] {
    &RED_PIXEL_PNG
}

/// A resource template with parameter substitution.
#[mcp_resource(
    template = "test://template/{id}/data",
    name = "template",
    title = "Resource Template",
    mime_type = "application/json"
)]
async fn template_data(id: String) -> String {
    json!({"id": id, "templateTest": true, "data": format!("Data for ID: {id}")}).to_string()
}

/// The URI `main` says changed every 3 seconds, to its subscribers.
const WATCHED: &str = "test://watched-resource";

/// A resource that auto-updates every 3 seconds.
#[mcp_resource(
    uri = "test://watched-resource",
    name = "watched-resource",
    title = "Watched Resource",
    mime_type = "text/plain"
)]
async fn watched_resource() -> &'static str {
    "Watched resource content"
}

const SERVER_NAME: &str = "mcp-registry-conformance";

fn conformance_server() -> Server {
    Server::builder(SERVER_NAME)
        .version(env!("CARGO_PKG_VERSION"))
        .instructions("Tools for the MCP conformance suite's server scenarios.")
        .tools([
            test_simple_text::tool(),
            test_image_content::tool(),
            test_audio_content::tool(),
            test_embedded_resource::tool(),
            test_multiple_content_types::tool(),
            test_error_handling::tool(),
            test_tool_with_progress::tool(),
            test_sampling::tool(),
            test_elicitation::tool(),
            test_elicitation_sep1034_defaults::tool(),
            test_elicitation_sep1330_enums::tool(),
            test_missing_capability::tool(),
            test_input_required_result_elicitation::tool(),
            test_input_required_result_sampling::tool(),
            test_input_required_result_list_roots::tool(),
            test_input_required_result_request_state::tool(),
            test_input_required_result_multiple_inputs::tool(),
            test_input_required_result_multi_round::tool(),
            test_input_required_result_tampered_state::tool(),
            test_input_required_result_capabilities::tool(),
            test_streaming_elicitation::tool(),
            test_logging_tool::tool(),
            test_tool_with_logging::tool(),
            test_trigger_tool_change::tool(),
            test_trigger_prompt_change::tool(),
            json_schema_2020_12_tool(),
            custom_header_tool(),
        ])
        .tools(tasks::tools())
        .prompts(prompts())
        .resources([
            static_text::resource(),
            static_binary::resource(),
            watched_resource::resource(),
        ])
        .resource_template(template_data::resource_template())
        .skills(skills())
        .build()
        .expect("a valid server")
}

/// The Skills extension's skills (SEP-2640): the bundles under `examples/skills/`, read
/// from disk, and one made in code.
fn skills() -> Vec<Skill> {
    let bundles = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/skills");
    let mut skills = Skill::load_dir(bundles).expect("the example skill bundles");
    let code = "---\nname: release-notes\ndescription: Write release notes from a changelog.\n---\n\
                Group the changes by kind; follow references/STYLE.md.\n";
    let notes = Skill::builder(code).file("references/STYLE.md", "Short lines, past tense.\n");
    skills.push(notes.build().expect("a valid skill"));
    skills
}

/// The port: the first argument or `MCP_CONFORMANCE_PORT`, default 3001. Loopback only.
fn listen_addr() -> Result<SocketAddr, String> {
    let raw = std::env::args()
        .nth(1)
        .or_else(|| std::env::var("MCP_CONFORMANCE_PORT").ok())
        .unwrap_or_else(|| "3001".to_owned());
    let port = raw
        .parse::<u16>()
        .map_err(|e| format!("bad port {raw:?}: {e}"))?;
    Ok(SocketAddr::from(([127, 0, 0, 1], port)))
}

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let addr = listen_addr().map_err(std::io::Error::other)?;
    let server = conformance_server();
    let name = server.name().to_owned();
    eprintln!("conformance_server: serving `{name}` at http://{addr}/mcp");
    let registry = Registry::from_servers([server]);
    let _ = SERVED.set(registry.clone());
    let updates = registry.clone();
    tokio::spawn(async move {
        let mut every = tokio::time::interval(Duration::from_secs(3));
        loop {
            every.tick().await;
            updates.notify_resource_updated(WATCHED);
        }
    });
    mcp_registry::transport::http::serve(registry, &name, addr, HttpConfig::default()).await
}
