//! The MCP client against a FastMCP server (PyPI `fastmcp`, tests/e2e/fastmcp_server.py) over
//! stdio and Streamable HTTP, and mounted into a registry: a server no one in this project
//! wrote, with its own ideas of structured output, progress, elicitation and sampling.
//!
//! Ignored by `cargo test` (it needs Python with `fastmcp`); `.ci/e2e.sh` installs it and runs
//! `MCP_E2E_PYTHON=<venv python> cargo test --all-features --test e2e -- --ignored
//! client_fastmcp::`.

use crate::common;

use std::collections::BTreeMap;
use std::time::Duration;

use mcp_registry::client::{
    Client, ClientBuilder, RemoteServer, RequestOptions, ServerNotification,
};
use mcp_registry::protocol::{CreateMessageResult, ElicitResult};
use mcp_registry::{ConnectionState, Registry};
use serde_json::json;

fn python() -> String {
    std::env::var("MCP_E2E_PYTHON")
        .expect("MCP_E2E_PYTHON: a Python with fastmcp installed (see .ci/e2e.sh)")
}

fn script() -> String {
    format!("{}/tests/e2e/fastmcp_server.py", env!("CARGO_MANIFEST_DIR"))
}

fn stdio_command() -> tokio::process::Command {
    let mut command = tokio::process::Command::new(python());
    command.arg(script());
    command
}

/// A client that answers the server's elicitation with a name and its sampling with a
/// canned model reply.
fn builder() -> ClientBuilder {
    Client::builder()
        .info("rust-client", "0.1")
        .on_elicitation(|_| async {
            Ok(ElicitResult::accept(
                json!({"name": "Ada"})
                    .as_object()
                    .cloned()
                    .unwrap_or_default(),
            ))
        })
        .on_sampling(|params| async move {
            let asked = serde_json::to_string(&params.messages).unwrap_or_default();
            Ok(serde_json::from_value::<CreateMessageResult>(json!({
                "role": "assistant",
                "content": {"type": "text", "text": format!("short ({} bytes asked)", asked.len())},
                "model": "stand-in"
            }))
            .expect("a valid sampling result"))
        })
}

/// Every kind of request the client makes of a FastMCP server.
async fn exercise(client: &Client) {
    let info = client.server_info().expect("server info");
    assert_eq!(info.name, "fastmcp-peer");
    assert_eq!(
        client.instructions().as_deref(),
        Some("A FastMCP server for the Rust client's tests.")
    );

    tools_answer_and_fail(client).await;
    progress_and_server_requests(client).await;
    prompts_and_resources(client).await;
}

/// The tools are listed; a call answers with structured content, a failing tool is an error
/// result, and invalid arguments are refused.
async fn tools_answer_and_fail(client: &Client) {
    let tools: Vec<String> = client
        .list_tools()
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.name)
        .collect();
    for expected in ["add", "ask_name", "count", "fail", "summarize"] {
        assert!(
            tools.iter().any(|t| t == expected),
            "{expected} missing from {tools:?}"
        );
    }
    let sum = client
        .call_tool("add", json!({"a": 2, "b": 40}))
        .await
        .unwrap();
    assert_eq!(sum.structured_content, Some(json!({"sum": 42})), "{sum:?}");

    let failed = client
        .call_tool("fail", json!({"reason": "test"}))
        .await
        .unwrap();
    assert_eq!(failed.is_error, Some(true));
    assert!(
        failed
            .first_text()
            .unwrap_or_default()
            .contains("failed on purpose"),
        "{failed:?}"
    );
    // FastMCP validates arguments itself.
    let invalid = client.call_tool("add", json!({"a": "two"})).await;
    assert!(
        invalid.as_ref().map_or(true, |r| r.is_error == Some(true)),
        "{invalid:?}"
    );
}

/// Progress under the caller's token; tools that elicit and sample through the client's
/// handlers.
async fn progress_and_server_requests(client: &Client) {
    let mut notes = client.notifications();
    let counted = client
        .call_tool("count", json!({"to": 3}))
        .options(RequestOptions::new().progress_token("p1"))
        .await
        .unwrap();
    assert_eq!(counted.first_text(), Some("counted to 3"));
    let mut progress = Vec::new();
    while let Ok(Ok(note)) = tokio::time::timeout(Duration::from_millis(200), notes.recv()).await {
        if let ServerNotification::Progress(p) = note {
            assert_eq!(p.progress_token, json!("p1"));
            progress.push(p.progress);
        }
    }
    assert_eq!(progress, [1.0, 2.0, 3.0]);

    let hello = client.call_tool("ask_name", json!({})).await.unwrap();
    assert_eq!(hello.first_text(), Some("Hello, Ada!"), "{hello:?}");
    let summary = client
        .call_tool("summarize", json!({"text": "a long text"}))
        .await
        .unwrap();
    assert!(
        summary
            .first_text()
            .unwrap_or_default()
            .starts_with("summary: short ("),
        "{summary:?}"
    );
}

/// Prompts, resources and resource templates.
async fn prompts_and_resources(client: &Client) {
    let prompts = client.list_prompts().await.unwrap();
    assert_eq!(
        prompts.iter().map(|p| p.name.as_str()).collect::<Vec<_>>(),
        ["greet"]
    );
    let greeting = client
        .get_prompt(
            "greet",
            BTreeMap::from([("name".to_owned(), "Ada".to_owned())]),
        )
        .await
        .unwrap();
    let text = serde_json::to_value(&greeting.messages).unwrap();
    assert!(
        text.to_string().contains("Please greet Ada warmly."),
        "{text}"
    );

    let resources = client.list_resources().await.unwrap();
    assert_eq!(
        resources.iter().map(|r| r.uri.as_str()).collect::<Vec<_>>(),
        ["memo://motd"]
    );
    let motd = client.read_resource("memo://motd").await.unwrap();
    assert!(
        serde_json::to_string(&motd)
            .unwrap()
            .contains("FastMCP says hi")
    );
    let templates = client.list_resource_templates().await.unwrap();
    assert_eq!(templates[0].uri_template, "users://{id}/card");
    let card = client.read_resource("users://7/card").await.unwrap();
    assert!(
        serde_json::to_string(&card).unwrap().contains("user 7"),
        "{card:?}"
    );
}

#[tokio::test]
#[ignore = "needs Python with fastmcp: run by .ci/e2e.sh"]
async fn fastmcp_over_stdio() {
    let client = builder().connect_stdio(stdio_command()).await.unwrap();
    exercise(&client).await;
    client.close().await;
}

#[tokio::test]
#[ignore = "needs Python with fastmcp: run by .ci/e2e.sh"]
async fn fastmcp_over_http() {
    let port = common::free_port();
    let mut server = tokio::process::Command::new(python())
        .arg(script())
        .args(["--http", &port.to_string()])
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let url = format!("http://127.0.0.1:{port}/mcp");
    let client = common::connect_http_when_up(builder, &url).await;
    exercise(&client).await;
    client.close().await;
    server.kill().await.unwrap();
}

#[tokio::test]
#[ignore = "needs Python with fastmcp: run by .ci/e2e.sh"]
async fn fastmcp_mounted_into_a_registry() {
    let registry = Registry::new();
    RemoteServer::new("py", || builder().connect_stdio(stdio_command()))
        .mount(&registry)
        .await
        .unwrap();
    assert_eq!(
        registry.server_status()[0].connection,
        Some(ConnectionState::Connected)
    );
    let sum = registry
        .call_tool_by_name("mcp__py__add", json!({"a": 1, "b": 2}))
        .await
        .unwrap();
    assert_eq!(sum.structured_content, Some(json!({"sum": 3})));
    let reply = registry
        .handle_mcp_message(
            "py",
            json!({"jsonrpc": "2.0", "id": 1, "method": "resources/read", "params": {"uri": "users://9/card"}}),
        )
        .await
        .unwrap();
    assert!(reply.to_string().contains("user 9"), "{reply}");
}
