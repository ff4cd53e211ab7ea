//! Policies wrap any request, not only `tools/call`: set per method on the builder, or per
//! request in `RequestOptions`; a method with none runs once. Timeouts come from the
//! machine's clock (one timer task), on a paused tokio clock here.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use mcp_registry::client::{Approval, Client, ClientError, RequestOptions, RequestPolicy};
use mcp_registry::{Prompt, PromptMessage, Registry, Server, Tool};
use serde_json::json;

fn registry() -> Registry {
    let hello = Prompt::builder("hello")
        .description("Greets")
        .handler(|_: mcp_registry::prompt::PromptArguments| async move {
            vec![PromptMessage::user("Hello!")]
        })
        .unwrap();
    let slow = Tool::new("slow", "Sleeps", json!({"type": "object"}), |_| async {
        tokio::time::sleep(Duration::from_secs(3600)).await;
        "late"
    })
    .unwrap();
    let server = Server::builder("s")
        .tools([slow])
        .prompts([hello])
        .build()
        .unwrap();
    Registry::from_servers([server])
}

/// A policy denying every request and counting what it was asked.
fn denying(asked: Arc<AtomicUsize>) -> RequestPolicy {
    RequestPolicy::new().approval(move |request| {
        asked.fetch_add(1, Ordering::SeqCst);
        async move { Approval::Deny(format!("{} needs a human", request.tool)) }
    })
}

#[tokio::test]
async fn a_policy_set_for_prompts_get_wraps_get_prompt() {
    let asked = Arc::new(AtomicUsize::new(0));
    let client = Client::builder()
        .policy("prompts/get", denying(Arc::clone(&asked)))
        .connect_in_process(registry(), "s")
        .await
        .unwrap();
    let error = client
        .get_prompt("hello", BTreeMap::new())
        .await
        .unwrap_err();
    assert!(
        matches!(&error, ClientError::Denied { tool, .. } if tool == "hello"),
        "{error}"
    );
    assert_eq!(asked.load(Ordering::SeqCst), 1);
    // Other methods have no policy: they run once, unasked.
    assert!(client.list_prompts().await.is_ok());
    assert_eq!(asked.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn without_a_policy_get_prompt_runs_once_and_a_request_option_policy_wraps_any_request() {
    let client = Client::in_process(registry(), "s").await.unwrap();
    let prompt = client.get_prompt("hello", BTreeMap::new()).await.unwrap();
    assert_eq!(prompt.messages.len(), 1);
    let asked = Arc::new(AtomicUsize::new(0));
    let options = RequestOptions::new().policy(denying(Arc::clone(&asked)));
    let error = client
        .request("prompts/list", None)
        .options(options)
        .await
        .unwrap_err();
    assert!(matches!(error, ClientError::Denied { .. }), "{error}");
    assert_eq!(asked.load(Ordering::SeqCst), 1);
}

#[tokio::test(start_paused = true)]
async fn a_request_times_out_by_the_machines_deadline_and_is_forgotten() {
    let client = Client::builder()
        .policy("tools/call", RequestPolicy::new().retries(0))
        .connect_in_process(registry(), "s")
        .await
        .unwrap();
    let options = RequestOptions::new().timeout(Duration::from_secs(5));
    let error = client
        .call_tool("slow", json!({}))
        .options(options)
        .await
        .unwrap_err();
    assert!(
        matches!(&error, ClientError::Timeout { method, after } if method == "tools/call" && *after == Duration::from_secs(5)),
        "{error}"
    );
    assert_eq!(client.pending_count(), 0);
}
