//! The client's request policy and list options against a scripted server: approval, retries
//! and backoff (on tokio's paused clock), timeouts that cancel on the wire, the telemetry a
//! `tracing` layer receives; the tool cache, its TTL and its invalidation, filters and
//! qualified names over several servers.

use std::collections::{BTreeMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_registry::client::transport::{Inbound, Outbound, OutboundKind, Transport, TransportError};
use mcp_registry::client::{
    Approval, Backoff, Client, ClientBuilder, ClientError, RequestOptions, RequestPolicy,
};
use mcp_registry::protocol::ProtocolVersion;
use mcp_registry::tool::BoxFuture;
use serde_json::{Value, json};
use tokio::sync::mpsc;
use tokio::time::Instant;
use tracing_subscriber::layer::SubscriberExt;

/// What the scripted server does with the next `tools/call`.
#[derive(Clone)]
enum Step {
    /// Answers with this result.
    Result(Value),
    /// Answers with a JSON-RPC error of this code.
    Error(i64),
    /// The transport fails to deliver the request.
    TransportFails,
    /// Never answers.
    Hang,
}

#[derive(Default)]
struct Seen {
    /// How many `tools/list` requests arrived.
    lists: usize,
    /// When each `tools/call` arrived (paused clock).
    calls: Vec<Instant>,
    /// Their request ids.
    call_ids: Vec<Value>,
    /// Their params.
    call_params: Vec<Value>,
    /// Every notification method the client sent, with its params.
    notifications: Vec<(String, Value)>,
}

struct Scripted {
    steps: Mutex<VecDeque<Step>>,
    seen: Arc<Mutex<Seen>>,
    incoming: mpsc::UnboundedSender<Inbound>,
}

impl Transport for Scripted {
    fn send(&self, message: Outbound) -> BoxFuture<'_, Result<(), TransportError>> {
        Box::pin(async move {
            let OutboundKind::Request { id, method, .. } = message.kind else {
                if let OutboundKind::Notification { method } = message.kind {
                    let params = message.message.get("params").cloned().unwrap_or_default();
                    self.seen
                        .lock()
                        .unwrap()
                        .notifications
                        .push((method, params));
                }
                return Ok(());
            };
            let reply = |body: (&str, Value)| {
                let mut m = json!({"jsonrpc": "2.0", "id": id});
                m[body.0] = body.1;
                let _ = self.incoming.send(Inbound::Message(m));
            };
            match method.as_str() {
                "initialize" => reply((
                    "result",
                    json!({
                        "protocolVersion": "2025-11-25",
                        "capabilities": {"tools": {}},
                        "serverInfo": {"name": "scripted", "version": "1.0"}
                    }),
                )),
                "tools/call" => {
                    let mut seen = self.seen.lock().unwrap();
                    seen.calls.push(Instant::now());
                    seen.call_ids.push(serde_json::to_value(&id).unwrap());
                    let params = message.message.get("params").cloned().unwrap_or_default();
                    seen.call_params.push(params);
                    drop(seen);
                    let step = self.steps.lock().unwrap().pop_front().unwrap_or(Step::Hang);
                    match step {
                        Step::Result(r) => reply(("result", r)),
                        Step::Error(code) => {
                            reply(("error", json!({"code": code, "message": "scripted"})))
                        }
                        Step::TransportFails => {
                            return Err(TransportError::Other("connection reset".into()));
                        }
                        Step::Hang => {}
                    }
                }
                "tools/list" => {
                    self.seen.lock().unwrap().lists += 1;
                    reply((
                        "result",
                        json!({"tools": [
                            {"name": "read", "inputSchema": {"type": "object"}, "annotations": {"readOnlyHint": true}},
                            {"name": "rm", "inputSchema": {"type": "object"}, "annotations": {"destructiveHint": true}}
                        ]}),
                    ))
                }
                other => reply(("error", json!({"code": -32601, "message": other}))),
            }
            Ok(())
        })
    }

    fn close(&self) -> BoxFuture<'_, ()> {
        Box::pin(async {})
    }
}

fn ok() -> Step {
    Step::Result(json!({"content": [{"type": "text", "text": "ok"}]}))
}

async fn connect(
    builder: ClientBuilder,
    steps: impl IntoIterator<Item = Step>,
) -> (Client, Arc<Mutex<Seen>>) {
    let (client, seen, _) = connect_with_server_side(builder, steps).await;
    (client, seen)
}

/// [`connect`], also giving what the server sends on (to send it notifications).
async fn connect_with_server_side(
    builder: ClientBuilder,
    steps: impl IntoIterator<Item = Step>,
) -> (Client, Arc<Mutex<Seen>>, mpsc::UnboundedSender<Inbound>) {
    let (tx, rx) = mpsc::unbounded_channel();
    let server_side = tx.clone();
    let seen = Arc::new(Mutex::new(Seen::default()));
    let transport = Scripted {
        steps: Mutex::new(steps.into_iter().collect()),
        seen: seen.clone(),
        incoming: tx,
    };
    let client = builder
        .protocol_version(ProtocolVersion::V2025_11_25)
        .connect_transport(transport, rx)
        .await
        .unwrap();
    (client, seen, server_side)
}

fn gaps(seen: &Mutex<Seen>) -> Vec<u128> {
    let calls = &seen.lock().unwrap().calls;
    calls
        .windows(2)
        .map(|w| (w[1] - w[0]).as_millis())
        .collect()
}

#[tokio::test(start_paused = true)]
async fn retryable_failures_are_retried_with_exponential_backoff() {
    let steps = [
        Step::Error(-32603),
        Step::TransportFails,
        Step::Error(-32603),
        ok(),
    ];
    let (client, seen) = connect(Client::builder(), steps).await;
    let result = client.call_tool("t", json!({})).await.unwrap();
    assert_eq!(result.first_text(), Some("ok"));
    assert_eq!(
        seen.lock().unwrap().calls.len(),
        4,
        "3 retries after the first"
    );
    assert_eq!(gaps(&seen), [100, 200, 400]);
}

#[tokio::test(start_paused = true)]
async fn the_last_failure_is_returned_after_all_retries() {
    let policy = RequestPolicy::new().retries(2);
    let steps = [
        Step::Error(-32603),
        Step::Error(-32603),
        Step::Error(-32603),
        ok(),
    ];
    let (client, seen) = connect(Client::builder().policy("tools/call", policy), steps).await;
    let error = client.call_tool("t", json!({})).await.unwrap_err();
    assert_eq!(error.server_error().unwrap().code.0, -32603);
    assert_eq!(
        seen.lock().unwrap().calls.len(),
        3,
        "2 retries, then given up"
    );
}

#[tokio::test(start_paused = true)]
async fn tool_errors_and_invalid_params_are_never_retried() {
    let tool_error =
        Step::Result(json!({"content": [{"type": "text", "text": "no"}], "isError": true}));
    let (client, seen) = connect(Client::builder(), [tool_error, ok()]).await;
    let result = client.call_tool("t", json!({})).await.unwrap();
    assert_eq!(result.is_error, Some(true));
    assert_eq!(seen.lock().unwrap().calls.len(), 1);

    let (client, seen) = connect(Client::builder(), [Step::Error(-32602), ok()]).await;
    let error = client.call_tool("t", json!({})).await.unwrap_err();
    assert_eq!(error.server_error().unwrap().code.0, -32602);
    assert_eq!(seen.lock().unwrap().calls.len(), 1);
}

#[tokio::test(start_paused = true)]
async fn a_custom_backoff_is_a_function_of_the_retry_number() {
    let backoff = Backoff::custom(|retry| Duration::from_secs(u64::from(retry) * 7));
    let policy = RequestPolicy::new().backoff(backoff);
    let steps = [Step::TransportFails, Step::TransportFails, ok()];
    let (client, seen) = connect(Client::builder().policy("tools/call", policy), steps).await;
    client.call_tool("t", json!({})).await.unwrap();
    assert_eq!(gaps(&seen), [7_000, 14_000]);
}

#[tokio::test(start_paused = true)]
async fn a_timeout_cancels_on_the_wire_and_is_retried() {
    let policy = RequestPolicy::new().retries(1);
    let (client, seen) = connect(
        Client::builder().policy("tools/call", policy),
        [Step::Hang, ok()],
    )
    .await;
    let options = RequestOptions::new().timeout(Duration::from_secs(2));
    let result = client
        .call_tool("t", json!({}))
        .options(options)
        .await
        .unwrap();
    assert_eq!(result.first_text(), Some("ok"));
    assert_eq!(
        gaps(&seen),
        [2_100],
        "the 2 s timeout, then the 100 ms backoff"
    );
    let seen = seen.lock().unwrap();
    let cancelled: Vec<_> = seen
        .notifications
        .iter()
        .filter(|(m, _)| m == "notifications/cancelled")
        .collect();
    assert_eq!(cancelled.len(), 1, "{:?}", seen.notifications);
    assert_eq!(
        cancelled[0].1["requestId"], seen.call_ids[0],
        "the first attempt's"
    );
}

/// The request builder's own setters, without a `RequestOptions`: a timeout that cancels on
/// the wire, a cancellation token, a progress token in `_meta`, a policy of its own.
#[tokio::test(start_paused = true)]
async fn a_request_is_configured_on_its_builder() {
    let (client, seen) = connect(Client::builder(), [Step::Hang, Step::Hang, ok()]).await;
    let no_retry = RequestPolicy::new().retries(0);
    let started = Instant::now();
    let error = client
        .call_tool("t", json!({}))
        .timeout(Duration::from_secs(3))
        .policy(no_retry.clone())
        .await
        .unwrap_err();
    assert!(matches!(error, ClientError::Timeout { .. }), "{error:?}");
    assert_eq!(
        started.elapsed(),
        Duration::from_secs(3),
        "its own timeout, one attempt"
    );

    let token = tokio_util::sync::CancellationToken::new();
    let cancel = {
        let token = token.clone();
        async move {
            tokio::time::sleep(Duration::from_secs(1)).await;
            token.cancel();
        }
    };
    let (result, ()) = tokio::join!(
        client
            .call_tool("t", json!({}))
            .cancellation(token)
            .policy(no_retry),
        cancel
    );
    assert!(
        matches!(result, Err(ClientError::Cancelled { .. })),
        "{result:?}"
    );

    let result = client.call_tool("t", json!({})).progress(7).await.unwrap();
    assert_eq!(result.first_text(), Some("ok"));
    let seen = seen.lock().unwrap();
    assert_eq!(seen.call_params[2]["_meta"]["progressToken"], 7);
    assert!(seen.call_params[0]["_meta"]["progressToken"].is_null());
    let cancelled = seen
        .notifications
        .iter()
        .filter(|(m, _)| m == "notifications/cancelled")
        .count();
    assert_eq!(cancelled, 2, "the timed-out call and the cancelled one");
}

#[tokio::test(start_paused = true)]
async fn every_attempt_timing_out_ends_in_a_timeout_error() {
    let policy = RequestPolicy::new().retries(1);
    let (client, seen) = connect(
        Client::builder().policy("tools/call", policy),
        [Step::Hang, Step::Hang],
    )
    .await;
    let options = RequestOptions::new().timeout(Duration::from_secs(1));
    let error = client
        .call_tool("t", json!({}))
        .options(options)
        .await
        .unwrap_err();
    assert!(matches!(error, ClientError::Timeout { .. }), "{error}");
    assert_eq!(seen.lock().unwrap().calls.len(), 2);
}

#[tokio::test(start_paused = true)]
async fn a_denial_sends_nothing_and_carries_the_reason() {
    let asked = Arc::new(Mutex::new(Vec::new()));
    let policy = {
        let asked = asked.clone();
        RequestPolicy::new().approval(move |request| {
            asked.lock().unwrap().push(request.clone());
            async move {
                if request.tool == "rm" {
                    Approval::Deny("rm needs a human".into())
                } else {
                    Approval::Allow
                }
            }
        })
    };
    let (client, seen) = connect(Client::builder().policy("tools/call", policy), [ok()]).await;
    let error = client
        .call_tool("rm", json!({"path": "/"}))
        .await
        .unwrap_err();
    match &error {
        ClientError::Denied { tool, reason } => {
            assert_eq!((tool.as_str(), reason.as_str()), ("rm", "rm needs a human"));
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(error.to_string(), "calling rm was denied: rm needs a human");
    assert!(
        seen.lock().unwrap().calls.is_empty(),
        "nothing reached the server"
    );
    client.call_tool("ls", json!({})).await.unwrap();
    assert_eq!(seen.lock().unwrap().calls.len(), 1);
    let asked = asked.lock().unwrap();
    assert_eq!(asked.len(), 2);
    assert_eq!(asked[0].server, "scripted");
    assert_eq!(asked[0].arguments, json!({"path": "/"}));
}

#[tokio::test(start_paused = true)]
async fn a_per_call_policy_overrides_the_clients() {
    let (client, seen) = connect(Client::builder(), [Step::Error(-32603), ok()]).await;
    let options = RequestOptions::new().policy(RequestPolicy::new().retries(0));
    assert!(
        client
            .call_tool("t", json!({}))
            .options(options)
            .await
            .is_err()
    );
    assert_eq!(seen.lock().unwrap().calls.len(), 1);
}

#[tokio::test(start_paused = true)]
async fn cancelling_during_the_backoff_ends_the_call() {
    let token = tokio_util::sync::CancellationToken::new();
    let (client, seen) = connect(Client::builder(), [Step::Error(-32603), ok()]).await;
    let options = RequestOptions::new().cancellation(token.clone());
    let cancel = async {
        tokio::time::sleep(Duration::from_millis(50)).await;
        token.cancel();
    };
    let (result, ()) = tokio::join!(client.call_tool("t", json!({})).options(options), cancel);
    assert!(
        matches!(result, Err(ClientError::Cancelled { .. })),
        "{result:?}"
    );
    assert_eq!(seen.lock().unwrap().calls.len(), 1);
}

// ----- telemetry ---------------------------------------------------------------------------

/// One event, flattened: its span's fields, then its own.
type Event = BTreeMap<String, String>;

#[derive(Clone, Default)]
struct Capture(Arc<Mutex<Vec<Event>>>);

struct Fields<'a>(&'a mut Event);

impl tracing::field::Visit for Fields<'_> {
    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
        self.0.insert(field.name().to_owned(), format!("{value:?}"));
    }
    fn record_str(&mut self, field: &tracing::field::Field, value: &str) {
        self.0.insert(field.name().to_owned(), value.to_owned());
    }
}

impl<S> tracing_subscriber::Layer<S> for Capture
where
    S: tracing::Subscriber + for<'a> tracing_subscriber::registry::LookupSpan<'a>,
{
    fn on_new_span(
        &self,
        attrs: &tracing::span::Attributes<'_>,
        id: &tracing::span::Id,
        ctx: tracing_subscriber::layer::Context<'_, S>,
    ) {
        let mut fields = Event::new();
        fields.insert("span".into(), attrs.metadata().name().to_owned());
        attrs.record(&mut Fields(&mut fields));
        if let Some(span) = ctx.span(id) {
            span.extensions_mut().insert(fields);
        }
    }

    fn on_event(&self, event: &tracing::Event<'_>, ctx: tracing_subscriber::layer::Context<'_, S>) {
        if event.metadata().target() != "mcp_registry::client" {
            return;
        }
        let mut fields = Event::new();
        if let Some(span) = ctx.event_span(event)
            && let Some(span_fields) = span.extensions().get::<Event>()
        {
            fields.extend(span_fields.clone());
        }
        fields.insert("level".into(), event.metadata().level().to_string());
        event.record(&mut Fields(&mut fields));
        self.0.lock().unwrap().push(fields);
    }
}

/// The process-wide capture. A global subscriber, not a thread's default: `tracing` caches
/// each callsite's interest process-wide, so events first hit on another test's thread
/// under no subscriber would be lost to a thread-local one.
fn capture() -> &'static Capture {
    static CAPTURE: std::sync::OnceLock<Capture> = std::sync::OnceLock::new();
    CAPTURE.get_or_init(|| {
        let capture = Capture::default();
        tracing::subscriber::set_global_default(
            tracing_subscriber::registry().with(capture.clone()),
        )
        .expect("no other global subscriber in this test binary");
        capture
    })
}

fn field<'a>(event: &'a Event, name: &str) -> &'a str {
    event
        .get(name)
        .map(String::as_str)
        .unwrap_or_else(|| panic!("no {name} in {event:?}"))
}

#[tokio::test(start_paused = true)]
async fn telemetry_events_carry_server_tool_attempt_duration_and_outcome() {
    let steps = [Step::Error(-32603), ok(), Step::Error(-32602)];
    let (client, _) = connect(Client::builder(), steps).await;
    let capture = capture();
    client.call_tool("search", json!({})).await.unwrap();
    client.call_tool("search", json!({})).await.unwrap_err();

    // Other tests of this binary call tools too: only this test's tool counts.
    let events: Vec<Event> = capture
        .0
        .lock()
        .unwrap()
        .iter()
        .filter(|e| e.get("tool").map(String::as_str) == Some("search"))
        .cloned()
        .collect();
    let ends: Vec<_> = events
        .iter()
        .filter(|e| e.contains_key("outcome"))
        .collect();
    assert_eq!(ends.len(), 2, "{events:#?}");
    for e in &events {
        assert_eq!(field(e, "span"), "mcp.tool_call");
        assert_eq!(field(e, "server"), "scripted");
        assert_eq!(field(e, "tool"), "search");
    }
    let success = ends[0];
    assert_eq!(field(success, "outcome"), "success");
    assert_eq!(field(success, "attempt"), "2");
    assert_eq!(
        field(success, "duration_ms"),
        "100",
        "the one backoff, on the paused clock"
    );
    assert_eq!(field(success, "level"), "INFO");
    let failure = ends[1];
    assert_eq!(field(failure, "outcome"), "failure");
    assert_eq!(field(failure, "attempt"), "1");
    assert_eq!(field(failure, "level"), "WARN");
    assert!(field(failure, "error").contains("scripted"), "{failure:?}");
    let starts = events
        .iter()
        .filter(|e| field(e, "message") == "tool call attempt")
        .count();
    assert_eq!(starts, 3, "one event per attempt");
}

// ----- list options ------------------------------------------------------------------------

#[tokio::test(start_paused = true)]
async fn the_tool_cache_answers_within_its_ttl_and_a_list_change_empties_it() {
    let builder = Client::builder().tool_cache(Duration::from_secs(60));
    let (client, seen, server_side) = connect_with_server_side(builder, []).await;
    let lists = || seen.lock().unwrap().lists;
    assert_eq!(client.list_tools().await.unwrap().len(), 2);
    client.list_tools().await.unwrap();
    assert_eq!(lists(), 1, "the second listing came from the cache");

    tokio::time::advance(Duration::from_secs(61)).await;
    client.list_tools().await.unwrap();
    assert_eq!(lists(), 2, "the TTL ran out");

    let changed = json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"});
    server_side.send(Inbound::Message(changed)).unwrap();
    let mut notes = client.notifications();
    notes.recv().await.unwrap();
    client.list_tools().await.unwrap();
    assert_eq!(lists(), 3, "list_changed emptied the cache");

    client.invalidate_tool_cache();
    client.list_tools().await.unwrap();
    assert_eq!(lists(), 4);
}

#[tokio::test(start_paused = true)]
async fn without_a_cache_every_listing_asks_the_server() {
    let (client, seen) = connect(Client::builder(), []).await;
    client.list_tools().await.unwrap();
    client.list_tools().await.unwrap();
    assert_eq!(seen.lock().unwrap().lists, 2);
}

#[tokio::test(start_paused = true)]
async fn tool_definitions_of_several_servers_filter_qualify_and_merge() {
    use mcp_registry::catalog::{ToolCatalog, ToolFilter};
    let (files, _) = connect(Client::builder(), []).await;
    let (shell, _) = connect(Client::builder(), []).await;
    let filter = ToolFilter::builder()
        .deny("mcp__shell__*")
        .keep(|_, tool| tool.annotations.destructive_hint != Some(true))
        .build()
        .unwrap();
    let mut definitions = files.tool_definitions("files", &filter).await.unwrap();
    definitions.extend(shell.tool_definitions("shell", &filter).await.unwrap());
    let names: Vec<_> = definitions
        .iter()
        .map(|d| d.qualified_name.as_str())
        .collect();
    assert_eq!(names, ["mcp__files__read"]);

    let everything = ToolFilter::allow_all();
    let mut definitions = files
        .tool_definitions("files.v2", &everything)
        .await
        .unwrap();
    definitions.extend(shell.tool_definitions("shell", &everything).await.unwrap());
    let catalog = ToolCatalog::new(definitions);
    let names: Vec<_> = catalog.tools().iter().map(|t| t.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "mcp__files_v2__read",
            "mcp__files_v2__rm",
            "mcp__shell__read",
            "mcp__shell__rm"
        ]
    );
    assert_eq!(catalog.get("mcp__files_v2__rm").unwrap().server, "files.v2");
}
