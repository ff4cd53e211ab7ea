//! ToolContext, progress, cancellation, host state and the stateful ServerSession.

use crate::common;

use std::future::IntoFuture as _;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::{assert_reply, assert_valid, hanging_tool, math_server, modern_meta, small_server};
use mcp_registry::Outgoing;
use mcp_registry::{
    CallOptions, Lifecycle, NotificationSink, ProgressError, Registry, Resource, Server,
    ServerSession, Tool, ToolContext,
};
use serde::Deserialize;
use serde_json::{Value, json};

#[derive(Deserialize, schemars::JsonSchema)]
struct Steps {
    steps: u32,
}

struct DbPool(&'static str);
struct RequestUser(&'static str);

/// Tools that exercise the context: `job` reports progress, `who` describes its context,
/// `late` keeps its context past completion, `hang` never ends (and flags its drop).
fn job_server(dropped: Arc<AtomicBool>, late_ctx: Arc<Mutex<Option<ToolContext>>>) -> Server {
    let job = Tool::builder("job")
        .typed(|ctx: ToolContext, args: Steps| async move {
            for i in 1..=args.steps {
                ctx.progress(
                    f64::from(i),
                    Some(f64::from(args.steps)),
                    Some(&format!("step {i}")),
                )
                .unwrap();
                tokio::task::yield_now().await;
            }
            // A report that does not increase is refused when progress is being reported,
            // and a harmless no-op when the request asked for none.
            let again = ctx.progress(1.0, None, None);
            if ctx.progress_token().is_some() {
                assert!(matches!(again, Err(ProgressError::NotIncreasing { .. })));
            } else {
                assert_eq!(again, Ok(()));
            }
            format!("{} steps", args.steps)
        })
        .unwrap();
    let who = Tool::builder("who")
        .typed(
            |ctx: ToolContext, _: serde_json::Map<String, Value>| async move {
                json!({
                    "tool": ctx.tool_name(),
                    "server": ctx.server_name(),
                    "id": ctx.request_id().map(|i| i.to_value()),
                    "meta": ctx.meta(),
                    "version": ctx.protocol_version().map(|v| v.as_str()),
                    "db": ctx.get::<DbPool>().map(|d| d.0),
                    "user": ctx.get::<RequestUser>().map(|u| u.0),
                })
                .to_string()
            },
        )
        .unwrap();
    let late = Tool::builder("late")
        .typed(move |ctx: ToolContext, _: serde_json::Map<String, Value>| {
            let slot = late_ctx.clone();
            async move {
                *slot.lock().unwrap() = Some(ctx);
                "done"
            }
        })
        .unwrap();
    let hang = hanging_tool(dropped);
    Server::new("jobs", None, [job, who, late, hang]).unwrap()
}

fn init(version: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}})
}

pub(crate) async fn ready_session(
    registry: Registry,
    server: &str,
    version: &str,
) -> (ServerSession, Outgoing) {
    let (session, outgoing) = ServerSession::new(registry, server);
    let reply = session.handle(init(version)).await.unwrap();
    assert_reply(version, "InitializeResult", &reply);
    assert_eq!(
        reply["result"]["capabilities"]["tools"]["listChanged"],
        true
    );
    assert_eq!(session.lifecycle(), Lifecycle::Initializing);
    assert!(
        session
            .handle(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await
            .is_none()
    );
    assert_eq!(session.lifecycle(), Lifecycle::Ready);
    (session, outgoing)
}

/// The next message the session sends on its own (5 s at most).
async fn next_sent(rx: &mut Outgoing) -> Value {
    tokio::time::timeout(Duration::from_secs(5), rx.recv())
        .await
        .expect("a message from the session within 5 s")
        .expect("the session's channel is open")
}

fn drain(rx: &mut Outgoing) -> Vec<Value> {
    std::iter::from_fn(|| rx.try_recv().ok()).collect()
}

#[tokio::test]
async fn progress_is_sent_in_order_before_the_reply() {
    for (version, token) in [
        ("2025-06-18", json!("tok")),
        ("2025-11-25", json!(7)),
        ("2024-11-05", json!(1)),
    ] {
        let registry = Registry::from_servers([job_server(Default::default(), Default::default())]);
        let (session, mut outgoing) = ready_session(registry, "jobs", version).await;
        let reply = session
            .handle(
                json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {
                "name": "job", "arguments": {"steps": 4}, "_meta": {"progressToken": token}}}),
            )
            .await
            .unwrap();
        assert_reply(version, "CallToolResult", &reply);
        let notes = drain(&mut outgoing);
        assert_eq!(notes.len(), 4, "{notes:?}");
        for (i, n) in notes.iter().enumerate() {
            assert_valid(version, "ProgressNotification", n);
            assert_eq!(n["params"]["progressToken"], token);
            assert_eq!(n["params"]["progress"], json!((i + 1) as f64));
            assert_eq!(n["params"]["total"], json!(4.0));
            assert_eq!(n["params"]["message"], format!("step {}", i + 1));
        }
    }
}

#[tokio::test]
async fn no_progress_without_a_token_or_after_completion() {
    let late = Arc::new(Mutex::new(None));
    let registry = Registry::from_servers([job_server(Default::default(), late.clone())]);
    let (session, mut outgoing) = ready_session(registry.clone(), "jobs", "2025-11-25").await;
    session
        .handle(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "job", "arguments": {"steps": 3}}}))
        .await
        .unwrap();
    assert!(
        drain(&mut outgoing).is_empty(),
        "no token, no notifications"
    );

    session
        .handle(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "late", "_meta": {"progressToken": "x"}}}))
        .await
        .unwrap();
    let ctx = late.lock().unwrap().take().unwrap();
    assert_eq!(ctx.progress(1.0, None, None), Err(ProgressError::Completed));
    assert!(drain(&mut outgoing).is_empty());
}

#[tokio::test]
async fn stateless_calls_deliver_progress_to_a_sink() {
    let registry = Registry::from_servers([job_server(Default::default(), Default::default())]);
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = {
        let seen = seen.clone();
        NotificationSink::new(move |n| seen.lock().unwrap().push(n))
    };
    let mut meta = serde_json::Map::new();
    meta.insert("progressToken".into(), json!("p"));
    let result = registry
        .call_tool_by_name("job", json!({"steps": 2}))
        .options(CallOptions::new().notifications(sink.clone()).meta(meta))
        .await
        .unwrap();
    assert_eq!(result.first_text(), Some("2 steps"));
    assert_eq!(seen.lock().unwrap().len(), 2);

    let mut message = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "job", "arguments": {"steps": 3}}});
    message["params"]["_meta"] = modern_meta();
    message["params"]["_meta"]["progressToken"] = json!(99);
    let reply = registry
        .handle_mcp_message("jobs", message)
        .options(CallOptions::new().notifications(sink))
        .await
        .unwrap();
    assert_valid("2026-07-28", "CallToolResultResponse", &reply);
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 5);
    for n in &seen[2..] {
        assert_valid("2026-07-28", "ProgressNotification", n);
        assert_eq!(n["params"]["progressToken"], 99);
    }
}

#[tokio::test]
async fn context_carries_identity_and_host_state() {
    let registry = Registry::builder()
        .extension(DbPool("postgres://db"))
        .server(job_server(Default::default(), Default::default()))
        .build();
    let (session, _out) = ready_session(registry.clone(), "jobs", "2025-06-18").await;
    let reply = session
        .handle(json!({"jsonrpc": "2.0", "id": "r1", "method": "tools/call", "params": {"name": "who", "_meta": {"progressToken": 3}}}))
        .await
        .unwrap();
    let seen: Value =
        serde_json::from_str(reply["result"]["content"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(
        seen,
        json!({"tool": "who", "server": "jobs", "id": "r1", "meta": {"progressToken": 3},
               "version": "2025-06-18", "db": "postgres://db", "user": null})
    );
    let result = registry
        .call_tool_by_name("who", json!({}))
        .options(CallOptions::new().extension(RequestUser("ada")))
        .await
        .unwrap();
    let seen: Value = serde_json::from_str(result.first_text().unwrap()).unwrap();
    assert_eq!(seen["user"], "ada");
    assert_eq!(seen["db"], "postgres://db");
    assert_eq!(seen["id"], Value::Null);
}

// Paused time: the cancel's sleep ends only once the runtime is idle, that is once the call is
// running (parked in its tool), so the cancel always finds it in flight.
#[tokio::test(start_paused = true)]
async fn cancelled_notification_drops_the_call_and_sends_no_reply() {
    let dropped = Arc::new(AtomicBool::new(false));
    let registry = Registry::from_servers([job_server(dropped.clone(), Default::default())]);
    let (session, _out) = ready_session(registry, "jobs", "2025-11-25").await;
    let call = session.handle(
        json!({"jsonrpc": "2.0", "id": 42, "method": "tools/call", "params": {"name": "hang"}}),
    );
    let cancel = async {
        tokio::time::sleep(Duration::from_millis(20)).await;
        let n = json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 42, "reason": "user"}});
        assert_valid("2025-11-25", "CancelledNotification", &n);
        assert!(session.handle(n).await.is_none());
    };
    let (reply, ()) = tokio::join!(call, cancel);
    assert!(
        reply.is_none(),
        "no reply for a cancelled request: {reply:?}"
    );
    assert!(
        dropped.load(Ordering::SeqCst),
        "the tool's future was dropped"
    );
    // The session goes on.
    let ping = session
        .handle(json!({"jsonrpc": "2.0", "id": 43, "method": "ping"}))
        .await
        .unwrap();
    assert_eq!(ping["result"], json!({}));
}

// More requests in flight than the in-flight table keeps in place (one): the others are
// hashed by id. Each is found by its cancellation, and a reused id's two requests (both
// hashed) are both cancelled at once. Paused time, as above.
#[tokio::test(start_paused = true)]
async fn cancellation_finds_every_request_of_a_crowded_session() {
    let registry = Registry::from_servers([job_server(Default::default(), Default::default())]);
    let (session, _out) = ready_session(registry, "jobs", "2025-11-25").await;
    // Entered in this order, on their first poll: 2 again after the twelve.
    let ids = (0..12u64).chain([2]);
    let calls = futures_util::future::join_all(ids.map(|id| {
        session.handle(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "hang"}})).into_future()
    }));
    let cancel = async {
        tokio::time::sleep(Duration::from_millis(20)).await;
        for id in 0..12u64 {
            assert!(session.cancel(&id.into()), "request {id} was in flight");
        }
        assert!(
            !session.cancel(&2u64.into()),
            "both requests 2 went at once"
        );
    };
    let (replies, ()) = tokio::join!(calls, cancel);
    assert!(replies.iter().all(Option::is_none), "{replies:?}");
    let ping = session
        .handle(json!({"jsonrpc": "2.0", "id": 2, "method": "ping"}))
        .await
        .unwrap();
    assert_eq!(ping["result"], json!({}));
}

/// A reused id whose first request is kept in place and whose second is hashed, with others
/// in flight between them: one cancellation stops both (taking the first dropped the hashed
/// one's entry, uncancelled).
#[tokio::test(start_paused = true)]
async fn a_reused_id_is_cancelled_in_place_and_hashed_alike() {
    let registry = Registry::from_servers([job_server(Default::default(), Default::default())]);
    let (session, _out) = ready_session(registry, "jobs", "2025-11-25").await;
    // 0 in place, 1 to 8 and 0 again hashed.
    let ids = std::iter::once(0).chain(1..=8u64).chain([0]);
    let calls = futures_util::future::join_all(ids.map(|id| {
        session.handle(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "hang"}})).into_future()
    }));
    let cancel = async {
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert!(session.cancel(&0u64.into()), "request 0 was in flight");
        assert!(!session.cancel(&0u64.into()), "both went at once");
        for id in 1..=8u64 {
            assert!(session.cancel(&id.into()), "request {id} was in flight");
        }
    };
    let (replies, ()) = tokio::time::timeout(Duration::from_secs(60), async {
        tokio::join!(calls, cancel)
    })
    .await
    .expect("every call cancelled");
    assert!(replies.iter().all(Option::is_none), "{replies:?}");
}

/// Regression (D5): `shutdown` stopped only calls and listen streams; a resource read (like
/// every request kind but those) ran on and answered.
#[tokio::test(start_paused = true)]
async fn shutdown_stops_a_resource_read_unanswered() {
    let slow = Resource::builder("data://slow", "slow")
        .handler(|_| async {
            tokio::time::sleep(Duration::from_secs(3600)).await;
            "late"
        })
        .unwrap();
    let server = Server::builder("s").resource(slow).build().unwrap();
    let (session, _out) = ready_session(Registry::from_servers([server]), "s", "2025-11-25").await;
    let read = session.handle(
        json!({"jsonrpc": "2.0", "id": 1, "method": "resources/read",
        "params": {"uri": "data://slow"}}),
    );
    let shutdown = async {
        tokio::time::sleep(Duration::from_millis(20)).await;
        session.shutdown();
    };
    let (reply, ()) = tokio::join!(read, shutdown);
    assert!(reply.is_none(), "no reply once shut down: {reply:?}");
}

#[tokio::test(start_paused = true)]
async fn a_timed_out_tool_leaves_the_session_usable() {
    let registry = Registry::builder()
        .default_timeout(Duration::from_secs(1))
        .server(job_server(Default::default(), Default::default()))
        .build();
    let (session, _out) = ready_session(registry, "jobs", "2025-11-25").await;
    let reply = session
        .handle(
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "hang"}}),
        )
        .await
        .unwrap();
    assert_reply("2025-11-25", "CallToolResult", &reply);
    assert_eq!(reply["result"]["isError"], true);
    assert!(
        reply["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("timed out after 1s")
    );
    let reply = session
        .handle(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "job", "arguments": {"steps": 1}}}))
        .await
        .unwrap();
    assert_eq!(reply["result"]["content"][0]["text"], "1 steps");
}

#[tokio::test]
async fn lifecycle_is_enforced() {
    let registry = Registry::from_servers([math_server()]);
    let (session, _out) = ServerSession::new(registry, "math");
    assert_eq!(session.lifecycle(), Lifecycle::Uninitialized);
    let early = session
        .handle(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}))
        .await
        .unwrap();
    assert_eq!(early["error"]["code"], -32600);
    assert!(
        early["error"]["message"]
            .as_str()
            .unwrap()
            .contains("before initialize")
    );
    assert_valid("2025-11-25", "JSONRPCErrorResponse", &early);
    let ping = session
        .handle(json!({"jsonrpc": "2.0", "id": 2, "method": "ping"}))
        .await
        .unwrap();
    assert_eq!(ping["result"], json!({}));
    // Modern requests are stateless: served in any state.
    let mut discover = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list", "params": {}});
    discover["params"]["_meta"] = modern_meta();
    let modern = session.handle(discover).await.unwrap();
    assert_valid("2026-07-28", "ListToolsResultResponse", &modern);

    session.handle(init("2025-03-26")).await.unwrap();
    assert_eq!(session.protocol_version().unwrap().as_str(), "2025-03-26");
    let again = session.handle(init("2025-03-26")).await.unwrap();
    assert!(
        again["error"]["message"]
            .as_str()
            .unwrap()
            .contains("already initialized")
    );

    session.mark_error("backend lost");
    let refused = session
        .handle(json!({"jsonrpc": "2.0", "id": 4, "method": "tools/list"}))
        .await
        .unwrap();
    assert!(
        refused["error"]["message"]
            .as_str()
            .unwrap()
            .contains("backend lost")
    );
    session.reset().unwrap();
    assert_eq!(session.lifecycle(), Lifecycle::Uninitialized);
    assert!(session.protocol_version().is_none());
    session.handle(init("2025-11-25")).await.unwrap();
    assert!(session.lifecycle().is_initialized());
}

fn request(id: i64, method: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method})
}

/// The error code of the reply to `method`, or `None` when it is served.
async fn refusal(session: &ServerSession, method: &str) -> Option<i64> {
    let reply = session.handle(request(9, method)).await.unwrap();
    reply["error"]["code"].as_i64()
}

#[tokio::test]
async fn lifecycle_transitions_follow_the_model() {
    let registry = Registry::from_servers([math_server()]);
    let (session, _out) = ServerSession::new(registry, "math");

    // Uninitialized: ping and initialize only; reset is not a transition from here.
    assert_eq!(refusal(&session, "ping").await, None);
    assert_eq!(refusal(&session, "tools/list").await, Some(-32600));
    let err = session.reset().unwrap_err();
    assert_eq!(err.from, Lifecycle::Uninitialized);
    assert!(err.to_string().contains("reset"), "{err}");

    // Initializing and Ready: everything but initialize; no reset.
    session.handle(init("2025-06-18")).await.unwrap();
    assert_eq!(session.lifecycle(), Lifecycle::Initializing);
    assert_eq!(refusal(&session, "tools/list").await, None);
    assert_eq!(session.reset().unwrap_err().from, Lifecycle::Initializing);
    session
        .handle(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        .await;
    assert_eq!(session.lifecycle(), Lifecycle::Ready);
    assert_eq!(refusal(&session, "initialize").await, Some(-32600));
    assert_eq!(session.reset().unwrap_err().from, Lifecycle::Ready);
    assert_eq!(
        session.lifecycle(),
        Lifecycle::Ready,
        "a refused reset changes nothing"
    );

    // Error: ping and initialize (a re-initialization) only.
    session.mark_error("backend lost");
    assert_eq!(session.lifecycle(), Lifecycle::Error("backend lost".into()));
    assert_eq!(refusal(&session, "ping").await, None);
    assert_eq!(refusal(&session, "tools/list").await, Some(-32603));
    let mut modern = request(10, "tools/list");
    modern["params"] = json!({"_meta": modern_meta()});
    let reply = session.handle(modern.clone()).await.unwrap();
    assert!(
        reply.get("result").is_some(),
        "stateless requests are served: {reply}"
    );
    let reinit = session.handle(init("2025-11-25")).await.unwrap();
    assert_reply("2025-11-25", "InitializeResult", &reinit);
    assert_eq!(session.lifecycle(), Lifecycle::Initializing);
    assert_eq!(session.protocol_version().unwrap().as_str(), "2025-11-25");
    assert_eq!(refusal(&session, "tools/list").await, None);

    // Error → reset → Uninitialized.
    session.mark_error("again");
    session.reset().unwrap();
    assert_eq!(session.lifecycle(), Lifecycle::Uninitialized);
    assert!(session.protocol_version().is_none());
    assert_eq!(refusal(&session, "tools/list").await, Some(-32600));

    // ShuttingDown: final, ping only.
    session.shutdown();
    assert_eq!(refusal(&session, "ping").await, None);
    for method in ["initialize", "tools/list", "tools/call"] {
        assert_eq!(refusal(&session, method).await, Some(-32600), "{method}");
    }
    let closed = session.handle(modern).await.unwrap();
    assert!(
        closed["error"]["message"]
            .as_str()
            .unwrap()
            .contains("shutting down")
    );
    session.mark_error("late");
    assert_eq!(session.reset().unwrap_err().from, Lifecycle::ShuttingDown);
    assert_eq!(
        session.lifecycle(),
        Lifecycle::ShuttingDown,
        "shutdown is final"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn several_requests_in_flight_at_once() {
    // Each call waits until all ten have started: they can only finish if the session runs
    // them concurrently.
    let barrier = Arc::new(tokio::sync::Barrier::new(10));
    let meet = Tool::builder("meet")
        .typed(move |_: serde_json::Map<String, Value>| {
            let barrier = barrier.clone();
            async move {
                barrier.wait().await;
                "met"
            }
        })
        .unwrap();
    let registry = Registry::from_servers([Server::new("m", None, [meet]).unwrap()]);
    let (session, _out) = ready_session(registry, "m", "2025-11-25").await;
    let mut set = tokio::task::JoinSet::new();
    for i in 0..10 {
        let s = session.clone();
        set.spawn(async move {
            s.handle(json!({"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": {"name": "meet"}}))
                .await
                .unwrap()
        });
    }
    let replies = tokio::time::timeout(Duration::from_secs(10), set.join_all())
        .await
        .expect("calls ran concurrently");
    let mut ids: Vec<i64> = replies.iter().map(|r| r["id"].as_i64().unwrap()).collect();
    ids.sort_unstable();
    assert_eq!(ids, (0..10).collect::<Vec<_>>());
    assert!(
        replies
            .iter()
            .all(|r| r["result"]["content"][0]["text"] == "met")
    );
}

// Paused time: the sleep before "no more notifications" ends only once the runtime is idle,
// that is once the watcher task has sent everything it will send.
#[tokio::test(start_paused = true)]
async fn list_changed_follows_registry_changes() {
    let registry = Registry::from_servers([math_server(), small_server("other", "t", "x")]);
    let (session, mut outgoing) = ready_session(registry.clone(), "math", "2025-11-25").await;
    registry.toggle_server("math", false).unwrap();
    let n = next_sent(&mut outgoing).await;
    assert_eq!(
        n,
        json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
    );
    assert_valid("2025-11-25", "ToolListChangedNotification", &n);
    // Another server's change is not this session's business.
    registry.toggle_server("other", false).unwrap();
    registry.register_server(math_server());
    let n = next_sent(&mut outgoing).await;
    assert_eq!(n["method"], "notifications/tools/list_changed");
    tokio::time::sleep(Duration::from_millis(20)).await;
    assert!(
        drain(&mut outgoing).is_empty(),
        "one notification per change of this server"
    );
    registry.unregister_server("math");
    let n = next_sent(&mut outgoing).await;
    assert_eq!(n["method"], "notifications/tools/list_changed");
    drop(session);
}

/// Regression: a change of this server followed at once by a change of another coalesced in
/// the registry's watch channel, and the session, reading only the latest change, never sent
/// `notifications/tools/list_changed`.
#[tokio::test]
async fn list_changed_survives_coalesced_changes() {
    let registry = Registry::from_servers([math_server(), small_server("other", "t", "x")]);
    let (_session, mut outgoing) = ready_session(registry.clone(), "math", "2025-11-25").await;
    // No await in between: the watcher task (same thread) sees both as one change.
    registry.toggle_server("math", false).unwrap();
    registry.toggle_server("other", false).unwrap();
    let n = next_sent(&mut outgoing).await;
    assert_eq!(n["method"], "notifications/tools/list_changed");
    // Only the other server changes now: nothing more for this session, and the next
    // notification is the one for the next change of this server.
    registry.toggle_server("other", true).unwrap();
    registry.toggle_server("math", true).unwrap();
    let n = next_sent(&mut outgoing).await;
    assert_eq!(n["method"], "notifications/tools/list_changed");
    tokio::task::yield_now().await;
    assert!(drain(&mut outgoing).is_empty());
}

/// Regression: a session whose notifications nobody read queued every `list_changed` (1,956
/// after 2,000 changes). Paused time: each sleep ends once the watcher has sent all it will.
#[tokio::test(start_paused = true)]
async fn unread_list_changes_are_coalesced() {
    let registry = Registry::from_servers([math_server()]);
    let (_session, mut outgoing) = ready_session(registry.clone(), "math", "2025-11-25").await;
    for i in 0..2000 {
        registry.toggle_server("math", i % 2 == 1).unwrap();
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    let queued = drain(&mut outgoing);
    assert_eq!(
        queued,
        [json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})]
    );
    // Taken: the next change is news again.
    registry.toggle_server("math", false).unwrap();
    let n = next_sent(&mut outgoing).await;
    assert_eq!(n["method"], "notifications/tools/list_changed");
}

#[tokio::test]
async fn text_replies_say_what_value_replies_say() {
    let registry = Registry::from_servers([math_server()]);
    let (session, _out) = ready_session(registry, "math", "2025-06-18").await;
    for request in [
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
               "params": {"name": "add", "arguments": {"a": 1, "b": 2}}}),
        json!({"jsonrpc": "2.0", "id": 3, "method": "no/such/method"}),
    ] {
        let value = session.handle(request.clone()).await.expect("a reply");
        let text = session
            .handle_text(&request.to_string())
            .await
            .expect("a reply");
        let parsed: Value = serde_json::from_str(&text).expect("JSON text");
        assert_eq!(parsed, value, "{request}");
    }
    assert_reply(
        "2025-06-18",
        "ListToolsResult",
        &serde_json::from_str::<Value>(
            &session
                .handle_text(r#"{"jsonrpc":"2.0","id":4,"method":"tools/list"}"#)
                .await
                .expect("a reply"),
        )
        .expect("JSON text"),
    );
}

#[tokio::test]
async fn a_legacy_version_in_meta_does_not_skip_the_handshake() {
    let ran = Arc::new(AtomicBool::new(false));
    let tool = {
        let ran = ran.clone();
        Tool::new("t", "x", json!({"type": "object"}), move |_| {
            ran.store(true, Ordering::SeqCst);
            async { "ran" }
        })
        .unwrap()
    };
    let registry = Registry::from_servers([Server::new("s", None, [tool]).unwrap()]);
    let (session, _out) = ServerSession::new(registry, "s");
    for version in ["2025-06-18", "2024-11-05", "2025-11-25"] {
        let reply = session
            .handle(
                json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
                "name": "t", "_meta": {"io.modelcontextprotocol/protocolVersion": version}}}),
            )
            .await
            .unwrap();
        assert_eq!(reply["error"]["code"], -32600, "{version}: {reply}");
        assert!(!ran.load(Ordering::SeqCst), "{version}: the tool ran");
    }
    // An unsupported version is still answered with -32022, the modern probe's answer.
    let probe = session
        .handle(
            json!({"jsonrpc": "2.0", "id": 2, "method": "server/discover", "params": {
            "_meta": {"io.modelcontextprotocol/protocolVersion": "1900-01-01",
                      "io.modelcontextprotocol/clientCapabilities": {}}}}),
        )
        .await
        .unwrap();
    assert_eq!(probe["error"]["code"], -32022, "{probe}");
    // A 2026-07-28 request is served without a handshake.
    let mut modern =
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "t"}});
    modern["params"]["_meta"] = modern_meta();
    let reply = session.handle(modern).await.unwrap();
    assert_eq!(reply["result"]["content"][0]["text"], "ran", "{reply}");
    assert_eq!(session.lifecycle(), Lifecycle::Uninitialized);
}

#[test]
fn no_list_changed_is_advertised_without_a_watcher() {
    let registry = Registry::from_servers([math_server()]);
    // Created outside a runtime: no watcher task can be started.
    let (session, _out) = ServerSession::new(registry, "math");
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let reply = runtime
        .block_on(session.handle(init("2025-11-25")).into_future())
        .unwrap();
    assert_reply("2025-11-25", "InitializeResult", &reply);
    assert_eq!(
        reply["result"]["capabilities"]["tools"]["listChanged"], false,
        "{reply}"
    );
    let mut discover =
        json!({"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {}});
    discover["params"]["_meta"] = modern_meta();
    let reply = runtime
        .block_on(session.handle(discover).into_future())
        .unwrap();
    // 2026-07-28 list changes travel on subscriptions/listen streams, which watch the
    // registry themselves: no session watcher is needed for them.
    assert_eq!(
        reply["result"]["capabilities"]["tools"]["listChanged"],
        true
    );
}
