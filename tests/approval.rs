//! The host's approval before a registry's tool runs (`RegistryBuilder::approval`): every way
//! in is covered, a denial never runs the tool and reaches the caller with its reason.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_registry::{
    Approval, ApprovalRequest, CallError, CancellationToken, Registry, Server, Tool,
};
use serde_json::{Value, json};

struct Host {
    registry: Registry,
    ran: Arc<AtomicUsize>,
    asked: Arc<Mutex<Vec<ApprovalRequest>>>,
}

/// A registry whose host allows `read` and denies anything else.
fn host() -> Host {
    let ran = Arc::new(AtomicUsize::new(0));
    let tool = |name: &str| {
        let ran = ran.clone();
        Tool::new(name, name, json!({"type": "object"}), move |_: Value| {
            ran.fetch_add(1, Ordering::SeqCst);
            async { "done" }
        })
        .unwrap()
    };
    let asked = Arc::new(Mutex::new(Vec::new()));
    let registry = {
        let asked = asked.clone();
        Registry::builder()
            .server(Server::new("fs", None, [tool("read"), tool("rm")]).unwrap())
            .approval(move |request: ApprovalRequest| {
                asked.lock().unwrap().push(request.clone());
                async move {
                    if request.tool == "read" {
                        Approval::Allow
                    } else {
                        Approval::Deny(format!("{} is not allowed in this session", request.tool))
                    }
                }
            })
            .build()
    };
    Host {
        registry,
        ran,
        asked,
    }
}

#[tokio::test]
async fn by_name_the_host_decides_and_a_denial_carries_the_reason() {
    let host = host();
    let result = host
        .registry
        .call_tool_by_name("read", json!({"path": "a"}))
        .await
        .unwrap();
    assert_eq!(result.first_text(), Some("done"));
    let denied = host
        .registry
        .call_tool_by_name("mcp__fs__rm", json!({"path": "a"}))
        .await
        .unwrap_err();
    match &denied {
        CallError::Denied { tool, reason } => {
            assert_eq!(
                (tool.as_str(), reason.as_str()),
                ("rm", "rm is not allowed in this session")
            );
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(
        host.ran.load(Ordering::SeqCst),
        1,
        "the denied tool never ran"
    );
    let asked = host.asked.lock().unwrap();
    assert_eq!(asked.len(), 2);
    assert_eq!(
        (asked[1].server.as_str(), asked[1].tool.as_str()),
        ("fs", "rm")
    );
    assert_eq!(asked[1].arguments, json!({"path": "a"}));
}

#[tokio::test]
async fn over_mcp_a_denial_is_a_tool_error_the_model_can_read() {
    let host = host();
    let call = |id: u64, name: &str| {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
               "params": {"name": name, "arguments": {"path": "b"}}})
    };
    let reply = host
        .registry
        .handle_mcp_message("fs", call(1, "rm"))
        .await
        .unwrap();
    assert_eq!(reply["result"]["isError"], true, "{reply}");
    assert_eq!(
        reply["result"]["content"][0]["text"],
        "calling tool \"rm\" was denied: rm is not allowed in this session"
    );
    // The text path asks too, with the arguments read from the text.
    let text = call(2, "read").to_string();
    let reply = host.registry.handle_mcp_text("fs", &text).await.unwrap();
    assert!(reply.contains("\"done\""), "{reply}");
    assert_eq!(
        host.asked.lock().unwrap()[1].arguments,
        json!({"path": "b"})
    );
    assert_eq!(host.ran.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_call_waiting_for_approval_can_be_cancelled() {
    let ran = Arc::new(AtomicUsize::new(0));
    let tool = {
        let ran = ran.clone();
        Tool::new(
            "slow_to_approve",
            "t",
            json!({"type": "object"}),
            move |_: Value| {
                ran.fetch_add(1, Ordering::SeqCst);
                async { "done" }
            },
        )
        .unwrap()
    };
    let registry = Registry::builder()
        .server(Server::new("s", None, [tool]).unwrap())
        .approval(|_| std::future::pending())
        .build();
    let token = CancellationToken::new();
    let call = registry
        .call_tool_by_name("slow_to_approve", json!({}))
        .cancellation(token.clone());
    let cancel = async {
        tokio::time::sleep(Duration::from_millis(20)).await;
        token.cancel();
    };
    let (result, ()) = tokio::join!(call, cancel);
    assert!(
        matches!(result, Err(CallError::Cancelled { .. })),
        "{result:?}"
    );
    assert_eq!(ran.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn a_registry_without_a_hook_asks_no_one() {
    let tool = Tool::new("t", "t", json!({"type": "object"}), |_| async { "ok" }).unwrap();
    let registry = Registry::from_servers([Server::new("s", None, [tool]).unwrap()]);
    assert!(registry.call_tool_by_name("t", json!({})).await.is_ok());
}
