//! `timeout = ".."` on `#[mcp_tool]`, `#[mcp_prompt]` and `#[mcp_resource]`: the limit read at
//! compile time is the item's own, kept by every request through a `Registry` (in place of
//! the registry's default, while a caller's own limit still wins). Clocks are paused: the
//! functions never finish, and tokio jumps to each deadline at once.

use std::future::pending;
use std::time::Duration;

use mcp_registry::{
    CallError, GetPromptError, ReadResourceError, Registry, mcp_prompt, mcp_resource, mcp_tool,
    server,
};
use serde_json::json;

/// Never answers.
#[mcp_tool(timeout = "250ms")]
async fn stuck_tool() -> String {
    pending().await
}

/// Never answers either, without a limit of its own.
#[mcp_tool]
async fn unlimited_tool() -> String {
    pending().await
}

/// Never renders.
#[mcp_prompt(timeout = "2m")]
async fn stuck_prompt(topic: Option<String>) -> String {
    let _ = topic;
    pending().await
}

/// Never reads.
#[mcp_resource(uri = "stuck://fixed", timeout = "1h")]
async fn stuck_resource() -> String {
    pending().await
}

/// Never reads any of its family.
#[mcp_resource(template = "stuck://items/{id}", timeout = "5s")]
async fn stuck_template(id: u32) -> String {
    let _ = id;
    pending().await
}

server!(
    name = "timeouts",
    tools = [stuck_tool, unlimited_tool],
    prompts = [stuck_prompt],
    resources = [stuck_resource, stuck_template],
    fn = timeouts,
    collect = false
);

/// A registry whose default differs from every item's limit.
fn registry() -> Registry {
    Registry::builder()
        .default_timeout(Duration::from_secs(7))
        .server(timeouts())
        .build()
}

#[test]
fn the_items_carry_their_limits() {
    assert_eq!(
        stuck_tool::tool().timeout(),
        Some(Duration::from_millis(250))
    );
    assert_eq!(unlimited_tool::tool().timeout(), None);
    assert_eq!(
        stuck_prompt::prompt().timeout(),
        Some(Duration::from_secs(120))
    );
    assert_eq!(
        stuck_resource::resource().timeout(),
        Some(Duration::from_secs(3600))
    );
    assert_eq!(
        stuck_template::resource_template().timeout(),
        Some(Duration::from_secs(5))
    );
}

#[tokio::test(start_paused = true)]
async fn a_tool_call_keeps_the_tools_limit() {
    let registry = registry();
    let err = registry
        .call_tool_by_name("stuck_tool", json!({}))
        .await
        .unwrap_err();
    assert_eq!(
        err,
        CallError::Timeout {
            tool: "stuck_tool".into(),
            limit: Duration::from_millis(250)
        }
    );
    // Without `timeout`, the registry's default applies.
    let err = registry
        .call_tool_by_name("unlimited_tool", json!({}))
        .await
        .unwrap_err();
    assert!(
        matches!(err, CallError::Timeout { limit, .. } if limit == Duration::from_secs(7)),
        "{err}"
    );
    // The caller's own limit wins over the tool's.
    let err = registry
        .call_tool_by_name("stuck_tool", json!({}))
        .timeout(Duration::from_millis(10))
        .await
        .unwrap_err();
    assert!(
        matches!(err, CallError::Timeout { limit, .. } if limit == Duration::from_millis(10)),
        "{err}"
    );
}

#[tokio::test(start_paused = true)]
async fn a_prompt_keeps_the_prompts_limit() {
    let err = registry()
        .get_prompt_by_name("stuck_prompt", [("topic", "rust")])
        .await
        .unwrap_err();
    assert_eq!(
        err,
        GetPromptError::TimedOut {
            prompt: "stuck_prompt".into(),
            timeout: Duration::from_secs(120)
        }
    );
}

#[tokio::test(start_paused = true)]
async fn a_resource_and_a_template_keep_their_limits() {
    let registry = registry();
    let err = registry.read_resource("stuck://fixed").await.unwrap_err();
    assert!(
        matches!(&err, ReadResourceError::TimedOut { uri, timeout } if uri == "stuck://fixed" && *timeout == Duration::from_secs(3600)),
        "{err}"
    );
    let err = registry.read_resource("stuck://items/3").await.unwrap_err();
    assert!(
        matches!(&err, ReadResourceError::TimedOut { uri, timeout } if uri == "stuck://items/3" && *timeout == Duration::from_secs(5)),
        "{err}"
    );
}
