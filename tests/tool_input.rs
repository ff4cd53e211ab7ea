//! A tool asks the client for input (elicitation, sampling, roots): in-process with a
//! scripted handler, and over a legacy session where the client's reply comes back as a
//! message.

use crate::common::session;
use crate::common::stdio;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use mcp_registry::Outgoing;
use mcp_registry::protocol::{CreateMessageResult, ElicitResult, ListRootsResult, Role, Root};
use mcp_registry::tool::{
    ClientCapability, Elicitation, InputCallbacks, InputError, InputHandler, SamplingRequest,
};
use mcp_registry::{CallError, Registry, Server, ServerSession, Tool, ToolContext};
use serde_json::{Map, Value, json};

type Args = Map<String, Value>;

/// The form the `wipe` tool asks for.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Confirm {
    /// Whether to go ahead.
    confirm: bool,
    /// Why (optional).
    reason: Option<String>,
}

fn registry() -> Registry {
    let wipe = Tool::builder("wipe")
        .typed(|ctx: ToolContext, _: Args| async move {
            match ctx.elicit::<Confirm>("Really wipe the table?").await {
                Ok(Elicitation::Accept(c)) if c.confirm => {
                    format!("wiped ({})", c.reason.unwrap_or_default())
                }
                Ok(Elicitation::Accept(_)) => "kept: not confirmed".to_owned(),
                Ok(Elicitation::Decline) => "kept: declined".to_owned(),
                Ok(Elicitation::Cancel) => "kept: cancelled".to_owned(),
                Err(e) => format!("error: {e}"),
            }
        })
        .unwrap();
    let summarize = Tool::builder("summarize")
        .typed(|ctx: ToolContext, _: Args| async move {
            let request = SamplingRequest::new(50)
                .user("Summarize the log")
                .system_prompt("Be terse.")
                .model_preferences(json!({"speedPriority": 1.0}));
            match ctx.sample(request).await {
                Ok(message) => format!("{}: {}", message.model, message.content["text"]),
                Err(e) => format!("error: {e}"),
            }
        })
        .unwrap();
    let workspace = Tool::builder("workspace")
        .typed(|ctx: ToolContext, _: Args| async move {
            match ctx.roots().await {
                Ok(roots) => roots
                    .iter()
                    .map(|r| r.uri.as_str())
                    .collect::<Vec<_>>()
                    .join(","),
                Err(e) => format!("error: {e}"),
            }
        })
        .unwrap();
    Registry::from_servers([Server::new("s", None, [wipe, summarize, workspace]).unwrap()])
}

fn form(value: Value) -> Map<String, Value> {
    value.as_object().cloned().unwrap()
}

async fn call(registry: &Registry, tool: &str, user: InputCallbacks) -> String {
    let result = registry
        .call_tool_by_name(tool, json!({}))
        .input_handler(user)
        .await
        .unwrap();
    result.first_text().unwrap().to_owned()
}

#[tokio::test]
async fn accept_reads_the_form_into_the_type() {
    let registry = registry();
    let seen = Arc::new(std::sync::Mutex::new(None));
    let user = {
        let seen = seen.clone();
        InputCallbacks::new().on_elicit(move |params| {
            *seen.lock().unwrap() = Some(params.clone());
            async {
                Ok(ElicitResult::accept(form(
                    json!({"confirm": true, "reason": "stale"}),
                )))
            }
        })
    };
    assert_eq!(call(&registry, "wipe", user).await, "wiped (stale)");
    let params = seen.lock().unwrap().take().unwrap();
    assert_eq!(params.message, "Really wipe the table?");
    let schema = params.requested_schema.unwrap();
    assert_eq!(schema["type"], "object");
    assert_eq!(schema["properties"]["confirm"]["type"], "boolean");
    assert_eq!(
        schema["properties"]["reason"]["type"], "string",
        "Option<String> reads as string"
    );
    assert_eq!(schema["required"], json!(["confirm"]));
}

/// One handler shared by several requests: `input_handler` takes the `Arc` as it is.
#[tokio::test]
async fn a_shared_handler_answers_each_request() {
    let registry = registry();
    let asked = Arc::new(AtomicUsize::new(0));
    let user: Arc<dyn InputHandler> = {
        let asked = asked.clone();
        Arc::new(InputCallbacks::new().on_elicit(move |_| {
            asked.fetch_add(1, Ordering::SeqCst);
            async { Ok(ElicitResult::accept(form(json!({"confirm": true})))) }
        }))
    };
    for _ in 0..2 {
        let result = registry
            .call_tool_by_name("wipe", json!({}))
            .input_handler(user.clone())
            .await
            .unwrap();
        assert_eq!(result.first_text(), Some("wiped ()"));
    }
    assert_eq!(asked.load(Ordering::SeqCst), 2);
    assert_eq!(
        user.capabilities(),
        InputCallbacks::new()
            .on_elicit(|_| async { Ok(ElicitResult::decline()) })
            .capabilities(),
        "the Arc declares what the handler inside does"
    );
}

#[tokio::test]
async fn decline_and_cancel_reach_the_tool() {
    let registry = registry();
    let decline = InputCallbacks::new().on_elicit(|_| async { Ok(ElicitResult::decline()) });
    assert_eq!(call(&registry, "wipe", decline).await, "kept: declined");
    let cancel = InputCallbacks::new().on_elicit(|_| async { Ok(ElicitResult::cancel()) });
    assert_eq!(call(&registry, "wipe", cancel).await, "kept: cancelled");
}

#[tokio::test]
async fn an_accepted_form_that_does_not_match_is_an_error() {
    let registry = registry();
    let user = InputCallbacks::new()
        .on_elicit(|_| async { Ok(ElicitResult::accept(form(json!({"confirm": "yes"})))) });
    let text = call(&registry, "wipe", user).await;
    assert!(
        text.starts_with("error: the client's answer to elicitation/create is invalid"),
        "{text}"
    );
}

#[tokio::test]
async fn a_handler_that_never_answers_times_out_with_the_call() {
    let registry = registry();
    let user = InputCallbacks::new().on_elicit(|_| std::future::pending());
    let err = registry
        .call_tool_by_name("wipe", json!({}))
        .input_handler(user)
        .timeout(Duration::from_millis(50))
        .await
        .unwrap_err();
    assert!(matches!(err, CallError::Timeout { .. }), "{err:?}");
}

#[tokio::test]
async fn cancelling_the_call_ends_the_wait() {
    let registry = registry();
    let user = InputCallbacks::new().on_elicit(|_| std::future::pending());
    let token = mcp_registry::CancellationToken::new();
    let cancel = token.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(20)).await;
        cancel.cancel();
    });
    let err = registry
        .call_tool_by_name("wipe", json!({}))
        .input_handler(user)
        .cancellation(token)
        .await
        .unwrap_err();
    assert!(matches!(err, CallError::Cancelled { .. }), "{err:?}");
}

#[tokio::test]
async fn a_client_without_the_capability_is_not_asked() {
    let registry = registry();
    let asked = Arc::new(AtomicUsize::new(0));
    // Answers sampling only: elicitation and roots are undeclared.
    let user = {
        let asked = asked.clone();
        InputCallbacks::new().on_sample(move |_| {
            asked.fetch_add(1, Ordering::SeqCst);
            async {
                Err(mcp_registry::protocol::ErrorObject::new(
                    mcp_registry::protocol::ErrorCode::INTERNAL_ERROR,
                    "never asked",
                ))
            }
        })
    };
    assert_eq!(
        call(&registry, "wipe", user.clone()).await,
        "error: the client did not declare the `elicitation` capability; elicitation/create was not sent"
    );
    assert_eq!(
        call(&registry, "workspace", user).await,
        "error: the client did not declare the `roots` capability; roots/list was not sent"
    );
    assert_eq!(asked.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn without_a_handler_the_tool_is_told_there_is_no_client() {
    let registry = registry();
    let result = registry.call_tool_by_name("wipe", json!({})).await.unwrap();
    assert_eq!(
        result.first_text(),
        Some(
            "error: no client to ask: this call has no input handler. In-process, give it one with CallOptions::input_handler (an agent session: ControlRouter::with_input_handler); over MCP, the client must declare the capability the request needs"
        )
    );
}

#[tokio::test]
async fn a_panicking_handler_is_an_error_for_the_tool() {
    let registry = registry();
    let user = InputCallbacks::new().on_elicit(|_| async { panic!("the form exploded") });
    assert_eq!(
        call(&registry, "wipe", user).await,
        "error: the input handler panicked: the form exploded"
    );
}

#[tokio::test]
async fn sampling_and_roots_come_back_to_the_tool() {
    let registry = registry();
    let client = InputCallbacks::new()
        .on_sample(|params| async move {
            assert_eq!(params.max_tokens, 50);
            assert_eq!(params.system_prompt.as_deref(), Some("Be terse."));
            assert_eq!(params.other["modelPreferences"]["speedPriority"], 1.0);
            assert_eq!(params.messages[0]["content"]["text"], "Summarize the log");
            Ok(CreateMessageResult {
                role: Role::Assistant,
                content: json!({"type": "text", "text": "all quiet"}),
                model: "m1".into(),
                stop_reason: Some("endTurn".into()),
            })
        })
        .on_roots(|| async {
            Ok(ListRootsResult {
                roots: vec![Root {
                    uri: "file:///repo".into(),
                    name: None,
                }],
            })
        });
    assert_eq!(
        call(&registry, "summarize", client.clone()).await,
        "m1: \"all quiet\""
    );
    assert_eq!(call(&registry, "workspace", client).await, "file:///repo");
}

#[tokio::test]
async fn a_2026_request_declares_its_client_capabilities_in_meta() {
    let registry = registry();
    let user = InputCallbacks::new().on_elicit(|_| async { Ok(ElicitResult::decline()) });
    let message = |caps: Value| {
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "wipe", "arguments": {},
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": caps,
        }}})
    };
    let options = mcp_registry::CallOptions::new().input_handler(user);
    let reply = registry
        .handle_mcp_message("s", message(json!({"elicitation": {}})))
        .options(options.clone())
        .await
        .unwrap();
    assert_eq!(reply["result"]["content"][0]["text"], "kept: declined");
    let reply = registry
        .handle_mcp_message("s", message(json!({})))
        .options(options)
        .await
        .unwrap();
    assert_eq!(
        reply["result"]["content"][0]["text"],
        "error: the client did not declare the `elicitation` capability; elicitation/create was not sent"
    );
}

#[tokio::test]
async fn a_detached_context_takes_a_scripted_client() {
    let ctx = ToolContext::detached("t", "s").with_input_handler(
        InputCallbacks::new().on_elicit(|_| async { Ok(ElicitResult::cancel()) }),
    );
    #[derive(serde::Deserialize, schemars::JsonSchema)]
    struct Name {
        #[allow(dead_code)]
        name: String,
    }
    assert!(matches!(
        ctx.elicit::<Name>("who?").await,
        Ok(Elicitation::Cancel)
    ));
}

#[tokio::test]
async fn a_nested_form_is_refused_before_asking() {
    #[derive(serde::Deserialize, schemars::JsonSchema)]
    #[allow(dead_code)]
    struct Inner {
        x: i64,
    }
    #[derive(serde::Deserialize, schemars::JsonSchema)]
    #[allow(dead_code)]
    struct Nested {
        inner: Inner,
    }
    let ctx = ToolContext::detached("t", "s").with_input_handler(
        InputCallbacks::new().on_elicit(|_| async { Ok(ElicitResult::cancel()) }),
    );
    assert!(matches!(
        ctx.elicit::<Nested>("?").await,
        Err(InputError::InvalidForm(_))
    ));
}

async fn legacy_session(capabilities: Value) -> (ServerSession, Outgoing) {
    let (session, outgoing, _) = session::legacy_session(registry(), "s", capabilities).await;
    (session, outgoing)
}

/// The call's reply (`None`: the call was cancelled).
fn start_call(session: &ServerSession, tool: &str) -> tokio::task::JoinHandle<Option<Value>> {
    let session = session.clone();
    let call = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
        "params": {"name": tool, "arguments": {}}})
    .to_string();
    tokio::spawn(async move {
        let reply = session.handle_text(&call).await?;
        Some(serde_json::from_str(&reply).unwrap())
    })
}

#[tokio::test]
async fn a_legacy_session_sends_the_request_and_matches_the_reply() {
    let (session, mut outgoing) = legacy_session(json!({"elicitation": {}})).await;
    let call = start_call(&session, "wipe");
    let request = outgoing.recv().await.unwrap();
    assert_eq!(request["jsonrpc"], "2.0");
    assert_eq!(request["method"], "elicitation/create");
    assert_eq!(request["params"]["message"], "Really wipe the table?");
    assert_eq!(
        request["params"]["requestedSchema"]["properties"]["confirm"]["type"],
        "boolean"
    );
    let id = request["id"].clone();
    assert!(id.is_u64(), "a server-side id: {id}");
    // A reply to nothing waiting is dropped, unanswered.
    let stray = json!({"jsonrpc": "2.0", "id": "nope", "result": {"action": "decline"}});
    assert!(session.handle_text(&stray.to_string()).await.is_none());
    let reply = json!({"jsonrpc": "2.0", "id": id, "result": {
        "action": "accept", "content": {"confirm": true, "reason": "ok"}}});
    assert!(session.handle_text(&reply.to_string()).await.is_none());
    let answer = call.await.unwrap().unwrap();
    assert_eq!(answer["id"], 7);
    assert_eq!(answer["result"]["content"][0]["text"], "wiped (ok)");
}

#[tokio::test]
async fn a_legacy_client_error_reaches_the_tool() {
    let (session, mut outgoing) = legacy_session(json!({"sampling": {}})).await;
    let call = start_call(&session, "summarize");
    let request = outgoing.recv().await.unwrap();
    assert_eq!(request["method"], "sampling/createMessage");
    assert_eq!(request["params"]["maxTokens"], 50);
    assert_eq!(request["params"]["systemPrompt"], "Be terse.");
    let reply = json!({"jsonrpc": "2.0", "id": request["id"], "error": {
        "code": -1, "message": "User rejected sampling request"}});
    session.handle(reply).await;
    let answer = call.await.unwrap().unwrap();
    assert_eq!(
        answer["result"]["content"][0]["text"],
        "error: the client refused sampling/createMessage: User rejected sampling request (code -1)"
    );
}

#[tokio::test]
async fn a_legacy_client_without_the_capability_gets_no_request() {
    let (session, mut outgoing) = legacy_session(json!({"sampling": {}})).await;
    let answer = start_call(&session, "workspace").await.unwrap().unwrap();
    assert_eq!(
        answer["result"]["content"][0]["text"],
        "error: the client did not declare the `roots` capability; roots/list was not sent"
    );
    assert!(outgoing.try_recv().is_err(), "nothing was sent");
}

#[tokio::test]
async fn shutting_down_a_session_leaves_no_request_waiting() {
    let (session, mut outgoing) = legacy_session(json!({"roots": {}})).await;
    let call = start_call(&session, "workspace");
    let request = outgoing.recv().await.unwrap();
    assert_eq!(request["method"], "roots/list");
    session.shutdown();
    // The call was cancelled: no reply is sent, and a late reply is dropped.
    let late = json!({"jsonrpc": "2.0", "id": request["id"], "result": {"roots": []}});
    assert!(session.handle(late).await.is_none());
    let ended = tokio::time::timeout(Duration::from_secs(5), call).await;
    assert!(
        ended.unwrap().unwrap().is_none(),
        "a cancelled call gets no reply"
    );
}

/// A server whose one tool needs `sampling` and refuses with `?` when it is missing.
fn needs_sampling() -> Registry {
    let tool = Tool::builder("needs_sampling")
        .typed(|ctx: ToolContext, _: Args| async move {
            ctx.require_client_capability(ClientCapability::Sampling)?;
            Ok::<_, InputError>("Success")
        })
        .unwrap();
    Registry::from_servers([Server::new("s", None, [tool]).unwrap()])
}

#[tokio::test]
async fn a_2026_request_without_a_required_capability_is_refused_with_32021() {
    let registry = needs_sampling();
    let call = |caps: Value| {
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
        "name": "needs_sampling",
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": caps,
        }}})
    };
    let refused = registry
        .handle_mcp_message("s", call(json!({})))
        .await
        .unwrap();
    assert_eq!(refused["id"], 3);
    assert_eq!(refused["error"]["code"], -32021);
    assert_eq!(
        refused["error"]["data"],
        json!({"requiredCapabilities": {"sampling": {}}})
    );
    let served = registry
        .handle_mcp_message("s", call(json!({"sampling": {}})))
        .await
        .unwrap();
    assert_eq!(served["result"]["content"][0]["text"], "Success");
}

#[tokio::test]
async fn a_legacy_client_without_a_required_capability_gets_a_tool_error() {
    let registry = needs_sampling();
    let reply = registry
        .handle_mcp_message(
            "s",
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "needs_sampling"}}),
        )
        .await
        .unwrap();
    assert_eq!(reply["result"]["isError"], true);
    assert_eq!(
        reply["result"]["content"][0]["text"],
        "the client did not declare the `sampling` capability; sampling/createMessage was not sent"
    );
}

#[tokio::test]
async fn over_stdio_the_request_goes_to_stdout_and_the_reply_comes_back_as_a_line() {
    use tokio::io::AsyncWriteExt as _;
    let (mut c, server) = stdio::serve_piped(registry(), "s");
    c.send_json(
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {"elicitation": {}},
        "clientInfo": {"name": "c", "version": "1"}}}),
    )
    .await;
    assert_eq!(c.recv().await["id"], 1);
    c.send_json(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        .await;
    let call = |id: u64| {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": "wipe", "arguments": {}}})
    };
    c.send_json(call(7)).await;
    let request = c.recv().await;
    assert_eq!(request["method"], "elicitation/create");
    c.send_json(json!({"jsonrpc": "2.0", "id": request["id"], "result": {
        "action": "accept", "content": {"confirm": true}}}))
        .await;
    let reply = c.recv().await;
    assert_eq!(reply["id"], 7);
    assert_eq!(reply["result"]["content"][0]["text"], "wiped ()");
    // The client goes away while the tool waits: the tool hears so, and the server ends.
    c.send_json(call(8)).await;
    let request = c.recv().await;
    assert_eq!(request["method"], "elicitation/create");
    assert_ne!(request["id"], json!(null));
    c.writer.shutdown().await.unwrap();
    let reply = c.recv().await;
    assert_eq!(reply["id"], 8);
    assert_eq!(
        reply["result"]["content"][0]["text"],
        "error: the connection closed before the client answered"
    );
    tokio::time::timeout(Duration::from_secs(10), server)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
}
