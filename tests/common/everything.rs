//! What the tests against the reference server `@modelcontextprotocol/server-everything`
//! share (`tests/client_everything.rs` live, `tests/cassette.rs` replayed): the command that
//! runs it, the canned sampling reply, and the requests both make.

use std::collections::BTreeMap;

use mcp_registry::CallToolResult;
use mcp_registry::client::{Client, RequestOptions};
use mcp_registry::protocol::CreateMessageResult;
use serde_json::json;

/// What the test clients' sampling handlers answer.
pub const CANNED_REPLY: &str = "a canned model reply";

fn env(name: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| {
        panic!(
            "{name} is not set: it runs server-everything (see .ci/e2e.sh for how it is installed)"
        )
    })
}

/// server-everything (`MCP_E2E_NODE` running `MCP_E2E_EVERYTHING`) in `mode` (`stdio`,
/// `streamableHttp`).
pub fn everything(mode: &str) -> tokio::process::Command {
    let mut command = tokio::process::Command::new(env("MCP_E2E_NODE"));
    command.arg(env("MCP_E2E_EVERYTHING")).arg(mode);
    command
}

/// A model's reply of [`CANNED_REPLY`], for a sampling handler.
pub fn canned_sampling() -> CreateMessageResult {
    serde_json::from_value(json!({
        "role": "assistant",
        "content": {"type": "text", "text": CANNED_REPLY},
        "model": "stand-in"
    }))
    .expect("a valid sampling result")
}

/// A call's content as JSON text.
pub fn text(result: &CallToolResult) -> String {
    serde_json::to_string(&result.content).unwrap_or_default()
}

/// `echo` and `get-sum` answer.
pub async fn echo_and_sum(client: &Client) {
    let echo = client
        .call_tool("echo", json!({"message": "hello"}))
        .await
        .unwrap();
    assert_eq!(echo.first_text(), Some("Echo: hello"));
    let sum = client
        .call_tool("get-sum", json!({"a": 2, "b": 3}))
        .await
        .unwrap();
    assert!(text(&sum).contains('5'), "{sum:?}");
}

/// `trigger-long-running-operation` (one second, two steps), its progress under the token
/// `op`: the result (the notifications are the caller's to read).
pub async fn long_running(client: &Client) -> CallToolResult {
    client
        .call_tool(
            "trigger-long-running-operation",
            json!({"duration": 1, "steps": 2}),
        )
        .options(RequestOptions::new().progress_token("op"))
        .await
        .unwrap()
}

/// The server's sampling request (`trigger-sampling-request`) is answered by the client's
/// handler with [`canned_sampling`].
pub async fn sampling_is_answered(client: &Client) {
    let sampled = client
        .call_tool(
            "trigger-sampling-request",
            json!({"prompt": "say hi", "maxTokens": 20}),
        )
        .await
        .unwrap();
    assert!(text(&sampled).contains(CANNED_REPLY), "{sampled:?}");
}

/// `args-prompt` with a city, and the first listed resource read.
pub async fn prompt_and_first_resource(client: &Client) {
    let prompt = client
        .get_prompt(
            "args-prompt",
            BTreeMap::from([("city".to_owned(), "Paris".to_owned())]),
        )
        .await
        .unwrap();
    assert!(
        serde_json::to_string(&prompt.messages)
            .unwrap()
            .contains("Paris")
    );
    let resources = client.list_resources().await.unwrap();
    let first = client.read_resource(&resources[0].uri).await.unwrap();
    assert!(!first.contents.is_empty());
}
