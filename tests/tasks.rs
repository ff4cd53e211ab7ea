//! Tasks: a tool run as a task over MCP (2026-07-28 extension and 2025-11-25 experimental
//! tasks) and in-process (`as_task`), on a paused clock: polled, cancelled half-way (the
//! tool's future dropped), its result kept until its time to live and gone after; a task
//! that asks for input in both eras.

use crate::common;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use common::session::legacy_session;
use common::tasks::{TASKS, ask_tool, legacy, modern, plain_tool, result_of, send, slow_tool};
use mcp_registry::protocol::{ElicitResult, TaskStatus, TaskSupport};
use mcp_registry::task::TaskSettings;
use mcp_registry::tool::InputCallbacks;
use mcp_registry::{CallError, NotificationSink, Registry, Server, Tool, ToolContext};
use serde_json::{Map, Value, json};
use tokio::sync::oneshot;

/// `slow`: ten seconds of work, flagging `dropped` when its future is dropped; `ask`: a
/// moment of work, then a question inside the task.
fn registry(dropped: Arc<AtomicBool>) -> Registry {
    let slow = slow_tool(dropped, 10, "ten seconds of work");
    let (ask, plain) = (ask_tool(), plain_tool());
    Registry::builder()
        .server(Server::new("s", None, [slow, ask, plain]).unwrap())
        .task_settings(
            TaskSettings::default()
                .default_ttl(Duration::from_secs(60))
                .poll_interval(Duration::from_millis(500)),
        )
        .build()
}

async fn sleep(secs: f64) {
    tokio::time::sleep(Duration::from_secs_f64(secs)).await;
}

#[tokio::test(start_paused = true)]
async fn a_ten_second_task_is_polled_cancelled_half_way_and_its_future_dropped() {
    let dropped = Arc::new(AtomicBool::new(false));
    let registry = registry(dropped.clone());
    let created = result_of(&registry, modern(1, "tools/call", json!({"name": "slow"}))).await;
    assert_eq!(created["resultType"], "task");
    assert_eq!(created["status"], "working");
    assert_eq!(created["ttlMs"], 60_000);
    assert_eq!(created["pollIntervalMs"], 500);
    assert!(created.get("result").is_none());
    let id = created["taskId"].as_str().unwrap().to_owned();

    sleep(2.0).await;
    let got = result_of(&registry, modern(2, "tasks/get", json!({"taskId": id}))).await;
    assert_eq!(got["resultType"], "complete");
    assert_eq!(got["status"], "working");
    assert!(!dropped.load(Ordering::SeqCst));

    sleep(3.0).await;
    let ack = result_of(&registry, modern(3, "tasks/cancel", json!({"taskId": id}))).await;
    assert_eq!(ack["resultType"], "complete");
    assert!(ack.get("status").is_none(), "an empty ack: {ack}");
    tokio::task::yield_now().await;
    assert!(
        dropped.load(Ordering::SeqCst),
        "the tool's future was dropped"
    );
    let got = result_of(&registry, modern(4, "tasks/get", json!({"taskId": id}))).await;
    assert_eq!(got["status"], "cancelled");
    // Later cancellations are the same empty ack; the status stays.
    sleep(10.0).await;
    result_of(&registry, modern(5, "tasks/cancel", json!({"taskId": id}))).await;
    let got = result_of(&registry, modern(6, "tasks/get", json!({"taskId": id}))).await;
    assert_eq!(got["status"], "cancelled");
}

#[tokio::test(start_paused = true)]
async fn a_finished_task_keeps_its_result_until_its_time_to_live() {
    let registry = registry(Arc::default());
    let created = result_of(&registry, modern(1, "tools/call", json!({"name": "slow"}))).await;
    let id = created["taskId"].as_str().unwrap().to_owned();
    sleep(10.5).await;
    let got = result_of(&registry, modern(2, "tasks/get", json!({"taskId": id}))).await;
    assert_eq!(got["status"], "completed");
    assert_eq!(got["result"]["content"][0]["text"], "ten seconds of work");
    assert!(
        got["result"]["_meta"]
            .get("io.modelcontextprotocol/related-task")
            .is_none()
    );

    // Kept until 60 s after its creation...
    sleep(49.0).await;
    let got = result_of(&registry, modern(3, "tasks/get", json!({"taskId": id}))).await;
    assert_eq!(got["status"], "completed");
    // ... and gone after.
    sleep(1.0).await;
    let reply = send(&registry, modern(4, "tasks/get", json!({"taskId": id}))).await;
    assert_eq!(reply["error"]["code"], -32602, "{reply}");
}

#[tokio::test(start_paused = true)]
async fn without_the_extension_a_request_gets_no_task() {
    let registry = registry(Arc::default());
    let plain_meta = common::modern_meta();
    let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                      "params": {"name": "slow", "_meta": plain_meta}});
    let result = result_of(&registry, call).await;
    assert_eq!(result["resultType"], "complete");
    assert_eq!(result["content"][0]["text"], "ten seconds of work");
    let get = json!({"jsonrpc": "2.0", "id": 2, "method": "tasks/get",
                     "params": {"taskId": "x", "_meta": plain_meta}});
    let reply = send(&registry, get).await;
    assert_eq!(reply["error"]["code"], -32021, "{reply}");
    assert!(reply["error"]["data"]["requiredCapabilities"]["extensions"][TASKS].is_object());
    // A plain tool stays plain with the extension declared.
    let result = result_of(&registry, modern(3, "tools/call", json!({"name": "plain"}))).await;
    assert_eq!(result["content"][0]["text"], "plain");
}

#[tokio::test(start_paused = true)]
async fn a_modern_task_asks_for_input_through_tasks_update() {
    let registry = registry(Arc::default());
    let created = result_of(&registry, modern(1, "tools/call", json!({"name": "ask"}))).await;
    assert_eq!(created["resultType"], "task");
    let id = created["taskId"].as_str().unwrap().to_owned();
    sleep(0.2).await;
    let got = result_of(&registry, modern(2, "tasks/get", json!({"taskId": id}))).await;
    assert_eq!(got["status"], "input_required", "{got}");
    let requests = got["inputRequests"].as_object().unwrap();
    assert_eq!(requests.len(), 1);
    let (key, request) = requests.iter().next().unwrap();
    assert_eq!(request["method"], "elicitation/create");
    assert_eq!(request["params"]["message"], "Who are you?");

    // An answer to a key the task is not waiting for is ignored.
    let ignored = json!({"taskId": id, "inputResponses": {"nope": {"action": "decline"}}});
    let ack = result_of(&registry, modern(3, "tasks/update", ignored)).await;
    assert_eq!(ack["resultType"], "complete");
    let got = result_of(&registry, modern(4, "tasks/get", json!({"taskId": id}))).await;
    assert_eq!(got["status"], "input_required");

    let answer = json!({"action": "accept", "content": {"name": "Ada"}});
    let update = json!({"taskId": id, "inputResponses": {key.clone(): answer}});
    result_of(&registry, modern(5, "tasks/update", update)).await;
    sleep(0.1).await;
    let got = result_of(&registry, modern(6, "tasks/get", json!({"taskId": id}))).await;
    assert_eq!(got["status"], "completed", "{got}");
    assert_eq!(got["result"]["content"][0]["text"], "Hello, Ada!");
}

#[tokio::test(start_paused = true)]
async fn a_legacy_task_asks_its_client_and_tasks_result_waits_for_the_end() {
    let registry = registry(Arc::default());
    let (tell, told) = oneshot::channel::<()>();
    let told = Arc::new(tokio::sync::Mutex::new(Some(told)));
    let client = InputCallbacks::new().on_elicit(move |params| {
        let told = told.clone();
        async move {
            assert_eq!(params.message, "Who are you?");
            if let Some(told) = told.lock().await.take() {
                let _ = told.await;
            }
            let mut content = Map::new();
            content.insert("name".to_owned(), json!("Grace"));
            Ok(ElicitResult::accept(content))
        }
    });
    let call = legacy(
        1,
        "tools/call",
        json!({"name": "ask", "task": {"ttl": 30_000}}),
    );
    let (notes, mut noted) = tokio::sync::mpsc::unbounded_channel();
    // The host names itself, so that its tasks can be listed (an anonymous caller's are
    // reachable by id only).
    let host = mcp_registry::Caller::session_of("host");
    let ask = |message: Value| {
        registry
            .handle_mcp_message("s", message)
            .caller(host.clone())
    };
    let reply = ask(call)
        .input_handler(client)
        .notifications(NotificationSink::from_channel(notes))
        .await
        .unwrap();
    let task = &reply["result"]["task"];
    assert_eq!(task["status"], "working", "{reply}");
    assert_eq!(task["ttl"], 30_000);
    assert!(task.get("ttlMs").is_none());
    let id = task["taskId"].as_str().unwrap().to_owned();

    sleep(0.2).await;
    let got = ask(legacy(2, "tasks/get", json!({"taskId": id})))
        .await
        .unwrap();
    assert_eq!(got["result"]["status"], "input_required", "{got}");
    let listed = ask(legacy(3, "tasks/list", json!({}))).await.unwrap();
    assert_eq!(listed["result"]["tasks"][0]["taskId"], id);

    let waiting = ask(legacy(4, "tasks/result", json!({"taskId": id})));
    let answer = tokio::spawn(async move {
        sleep(1.0).await;
        let _ = tell.send(());
    });
    let reply = waiting.await.unwrap();
    answer.await.unwrap();
    let result = &reply["result"];
    assert_eq!(result["content"][0]["text"], "Hello, Grace!", "{reply}");
    assert_eq!(
        result["_meta"]["io.modelcontextprotocol/related-task"]["taskId"],
        id
    );
    // Each status change was told (notifications/tasks/status).
    let mut statuses = Vec::new();
    while let Ok(note) = noted.try_recv() {
        if note["method"] == "notifications/tasks/status" {
            assert_eq!(note["params"]["taskId"], id);
            statuses.push(note["params"]["status"].as_str().unwrap().to_owned());
        }
    }
    assert_eq!(statuses, ["input_required", "working", "completed"]);
    // An ended task cannot be cancelled (2025-11-25).
    let reply = ask(legacy(5, "tasks/cancel", json!({"taskId": id})))
        .await
        .unwrap();
    assert_eq!(reply["error"]["code"], -32602, "{reply}");
}

#[tokio::test(start_paused = true)]
async fn legacy_tools_call_without_task_is_refused_for_a_required_tool() {
    let required = Tool::builder("job")
        .task_support(TaskSupport::Required)
        .raw(json!({"type": "object"}), |_: Value| async { "done" })
        .unwrap();
    let registry = Registry::from_servers([Server::new("s", None, [required]).unwrap()]);
    let reply = send(&registry, legacy(1, "tools/call", json!({"name": "job"}))).await;
    assert_eq!(reply["error"]["code"], -32601, "{reply}");
    let init = legacy(
        2,
        "initialize",
        json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}),
    );
    let result = result_of(&registry, init).await;
    assert!(result["capabilities"]["tasks"]["requests"]["tools"]["call"].is_object());
    let listed = result_of(&registry, legacy(3, "tools/list", json!({}))).await;
    assert_eq!(listed["tools"][0]["execution"]["taskSupport"], "required");
}

#[tokio::test(start_paused = true)]
async fn in_process_as_task_is_followed_cancelled_and_answered() {
    let dropped = Arc::new(AtomicBool::new(false));
    let registry = registry(dropped.clone());
    let task = registry
        .call_tool_by_name("slow", json!({}))
        .as_task()
        .ttl(Duration::from_secs(20))
        .await
        .unwrap();
    assert_eq!(task.state().await.unwrap().status, TaskStatus::Working);
    sleep(5.0).await;
    let cancelled = task.cancel().await.unwrap();
    assert_eq!(cancelled.status, TaskStatus::Cancelled);
    tokio::task::yield_now().await;
    assert!(dropped.load(Ordering::SeqCst));
    assert!(matches!(
        task.result().await,
        Err(CallError::Cancelled { .. })
    ));
    sleep(20.0).await;
    assert!(matches!(
        task.state().await,
        Err(CallError::UnknownTask { .. })
    ));

    // Without an input handler, the host answers the task's input requests.
    let asking = registry
        .call_tool_by_name("ask", json!({}))
        .as_task()
        .await
        .unwrap();
    sleep(0.2).await;
    let state = asking.state().await.unwrap();
    assert_eq!(state.status, TaskStatus::InputRequired);
    let key = state.input_requests.keys().next().unwrap().clone();
    let mut answers = Map::new();
    answers.insert(key, json!({"action": "accept", "content": {"name": "Lin"}}));
    asking.answer(answers).await.unwrap();
    let result = asking.result().await.unwrap();
    assert_eq!(result.first_text(), Some("Hello, Lin!"));

    let not_a_task = registry
        .call_tool_by_name("plain", json!({}))
        .as_task()
        .await;
    assert!(matches!(not_a_task, Err(CallError::NotATask { .. })));
}

#[tokio::test(start_paused = true)]
async fn a_requestor_has_a_bounded_number_of_live_tasks() {
    let slow = Tool::builder("slow")
        .task_support(TaskSupport::Optional)
        .raw(json!({"type": "object"}), |_: Value| async {
            tokio::time::sleep(Duration::from_secs(10)).await;
            "done"
        })
        .unwrap();
    let registry = Registry::builder()
        .server(Server::new("s", None, [slow]).unwrap())
        .task_settings(TaskSettings::default().max_live_per_requestor(2))
        .build();
    for id in 1..=2 {
        let created = result_of(&registry, modern(id, "tools/call", json!({"name": "slow"}))).await;
        assert_eq!(created["resultType"], "task");
    }
    let reply = send(&registry, modern(3, "tools/call", json!({"name": "slow"}))).await;
    assert_eq!(reply["error"]["code"], -32600, "{reply}");
    assert!(
        reply["error"]["message"]
            .as_str()
            .unwrap()
            .contains("too many tasks")
    );
    sleep(11.0).await;
    let created = result_of(&registry, modern(4, "tools/call", json!({"name": "slow"}))).await;
    assert_eq!(
        created["resultType"], "task",
        "a slot is free once a task ended"
    );
}

#[tokio::test(start_paused = true)]
async fn a_task_is_shown_only_to_its_requestor() {
    use mcp_registry::task::TaskRequestor;
    let registry = registry(Arc::default());
    let as_who = |who: &str, message: Value| {
        registry
            .handle_mcp_message("s", message)
            .extension(TaskRequestor(who.to_owned()))
    };
    let created = as_who("alice", modern(1, "tools/call", json!({"name": "slow"})))
        .await
        .unwrap();
    let id = created["result"]["taskId"].as_str().unwrap().to_owned();
    let theirs = as_who("bob", modern(2, "tasks/get", json!({"taskId": id})))
        .await
        .unwrap();
    assert_eq!(theirs["error"]["code"], -32602, "{theirs}");
    let cancel = as_who("bob", modern(3, "tasks/cancel", json!({"taskId": id})))
        .await
        .unwrap();
    assert_eq!(cancel["error"]["code"], -32602, "{cancel}");
    let mine = as_who("alice", modern(4, "tasks/get", json!({"taskId": id})))
        .await
        .unwrap();
    assert_eq!(mine["result"]["status"], "working");
}

/// `steps`: four steps of a second each, each reported as progress (`building (n/4)`);
/// `first`: reports progress at once, works ten seconds, reports again and works ten more
/// (`now` does not wait).
fn steps_registry() -> Registry {
    let steps = Tool::builder("steps")
        .task_support(TaskSupport::Optional)
        .typed(|ctx: ToolContext, _: Map<String, Value>| async move {
            for done in 1..=4_u32 {
                tokio::time::sleep(Duration::from_secs(1)).await;
                ctx.progress(f64::from(done), Some(4.0), Some("building"))
                    .unwrap();
            }
            "built"
        })
        .unwrap();
    let first = |name: &str, work: u64| {
        Tool::builder(name)
            .task_support(TaskSupport::Optional)
            .typed(move |ctx: ToolContext, _: Map<String, Value>| async move {
                let work = || async move {
                    if work > 0 {
                        tokio::time::sleep(Duration::from_secs(work)).await;
                    }
                };
                ctx.progress(1.0, Some(2.0), Some("started")).unwrap();
                work().await;
                ctx.progress(2.0, Some(2.0), Some("finishing")).unwrap();
                work().await;
                "done"
            })
            .unwrap()
    };
    Registry::from_servers([
        Server::new("s", None, [steps, first("first", 10), first("now", 0)]).unwrap(),
    ])
}

/// The `notifications/progress` among the notes `next` has now: (token, progress).
/// Sends `call` (a 2025-11-25 `tools/call` as a task) to `session`: the task's id.
async fn start_in_session(session: &mcp_registry::ServerSession, call: &Value) -> String {
    let reply = session.handle_text(&call.to_string()).await.unwrap();
    let reply: Value = serde_json::from_str(&reply).unwrap();
    reply["result"]["task"]["taskId"]
        .as_str()
        .unwrap()
        .to_owned()
}

fn progress_in(mut next: impl FnMut() -> Option<Value>) -> Vec<(Value, f64)> {
    let mut seen = Vec::new();
    while let Some(note) = next() {
        if note["method"] == "notifications/progress" {
            let params = &note["params"];
            seen.push((
                params["progressToken"].clone(),
                params["progress"].as_f64().unwrap(),
            ));
        }
    }
    seen
}

#[tokio::test(start_paused = true)]
async fn a_tasks_progress_is_its_status_message() {
    let registry = steps_registry();
    let created = result_of(&registry, modern(1, "tools/call", json!({"name": "steps"}))).await;
    let id = created["taskId"].as_str().unwrap().to_owned();
    sleep(2.5).await;
    let got = result_of(&registry, modern(2, "tasks/get", json!({"taskId": id}))).await;
    assert_eq!(got["status"], "working");
    assert_eq!(got["statusMessage"], "building (2/4)", "{got}");

    // In-process with no notification sink of the host's: the same.
    let task = registry
        .call_tool_by_name("steps", json!({}))
        .as_task()
        .await
        .unwrap();
    sleep(3.5).await;
    let state = task.state().await.unwrap();
    assert_eq!(state.status_message.as_deref(), Some("building (3/4)"));
    assert_eq!(task.result().await.unwrap().first_text(), Some("built"));
}

#[tokio::test(start_paused = true)]
async fn an_in_process_hosts_sink_hears_a_tasks_progress_and_the_task_records_it() {
    let registry = steps_registry();
    let (sink, mut heard) = tokio::sync::mpsc::unbounded_channel();
    let mut meta = Map::new();
    meta.insert("progressToken".to_owned(), json!("mine"));
    let task = registry
        .call_tool_by_name("steps", json!({}))
        .notifications(NotificationSink::from_channel(sink))
        .meta(meta)
        .as_task()
        .await
        .unwrap();
    sleep(2.5).await;
    // Both: the host hears it with its token, and the task's state shows it.
    assert_eq!(
        progress_in(|| heard.try_recv().ok()),
        [(json!("mine"), 1.0), (json!("mine"), 2.0)]
    );
    let state = task.state().await.unwrap();
    assert_eq!(state.status_message.as_deref(), Some("building (2/4)"));
}

#[tokio::test(start_paused = true)]
async fn a_legacy_tasks_progress_reaches_its_session_with_the_requests_token() {
    use mcp_registry::ServerSession;
    let (session, mut outgoing) = ServerSession::new(steps_registry(), "s");
    let initialize = legacy(
        0,
        "initialize",
        json!({"protocolVersion": "2025-11-25", "capabilities": {},
               "clientInfo": {"name": "c", "version": "1"}}),
    );
    session.handle_text(&initialize.to_string()).await.unwrap();
    let call = legacy(
        1,
        "tools/call",
        json!({"name": "steps", "task": {}, "_meta": {"progressToken": 7}}),
    );
    let id = start_in_session(&session, &call).await;
    // After the CreateTaskResult, the task's progress goes on with the request's token
    // (2025-11-25 progress: "MUST continue to be used ... throughout the task's lifetime").
    sleep(4.5).await;
    let token = json!(7);
    let expected: Vec<_> = (1..=4).map(|n| (token.clone(), f64::from(n))).collect();
    assert_eq!(progress_in(|| outgoing.try_recv().ok()), expected);
    let got = legacy(2, "tasks/get", json!({"taskId": id}));
    let got = session.handle_text(&got.to_string()).await.unwrap();
    let got: Value = serde_json::from_str(&got).unwrap();
    assert_eq!(got["result"]["status"], "completed", "{got}");
}

#[tokio::test(start_paused = true)]
async fn a_modern_calls_first_poll_notifies_its_request_and_its_task_then_only_its_status() {
    let registry = steps_registry();
    let call = |id: u64, tool: &str| {
        let mut call = modern(id, "tools/call", json!({"name": tool}));
        call["params"]["_meta"]["progressToken"] = json!("p");
        call
    };
    // Answered in its first poll: the progress reached the request, as for a plain call.
    let (sink, mut heard) = tokio::sync::mpsc::unbounded_channel();
    let reply = registry
        .handle_mcp_message("s", call(1, "now"))
        .notifications(NotificationSink::from_channel(sink))
        .await
        .unwrap();
    assert_eq!(reply["result"]["content"][0]["text"], "done", "{reply}");
    assert_eq!(
        progress_in(|| heard.try_recv().ok()),
        [(json!("p"), 1.0), (json!("p"), 2.0)]
    );

    // Still under way after it: a task, whose later progress is its status message only,
    // and which lets the request's sink go (its stream may end).
    let (sink, mut heard) = tokio::sync::mpsc::unbounded_channel();
    let reply = registry
        .handle_mcp_message("s", call(2, "first"))
        .notifications(NotificationSink::from_channel(sink))
        .await
        .unwrap();
    assert_eq!(reply["result"]["resultType"], "task", "{reply}");
    let id = reply["result"]["taskId"].as_str().unwrap().to_owned();
    assert_eq!(progress_in(|| heard.try_recv().ok()), [(json!("p"), 1.0)]);
    sleep(11.0).await;
    let got = result_of(&registry, modern(3, "tasks/get", json!({"taskId": id}))).await;
    assert_eq!(got["status"], "working");
    assert_eq!(got["statusMessage"], "finishing (2/2)", "{got}");
    assert_eq!(progress_in(|| heard.try_recv().ok()), []);
    assert_eq!(
        heard.try_recv(),
        Err(tokio::sync::mpsc::error::TryRecvError::Disconnected),
        "the request's sink is let go while the task runs"
    );
}

#[tokio::test(start_paused = true)]
async fn a_legacy_sessions_task_names_itself_in_what_it_sends() {
    let (session, mut outgoing, _) =
        legacy_session(registry(Arc::default()), "s", json!({"elicitation": {}})).await;

    let call = legacy(1, "tools/call", json!({"name": "ask", "task": {}}));
    let id = start_in_session(&session, &call).await;
    // The task asks on the session's own stream, naming itself; its status is told.
    let mut told = Vec::new();
    let request = loop {
        let message = outgoing.recv().await.unwrap();
        if message["method"] == "elicitation/create" {
            break message;
        }
        told.push(message["params"]["status"].clone());
    };
    assert_eq!(told, [json!("input_required")]);
    let related = &request["params"]["_meta"]["io.modelcontextprotocol/related-task"];
    assert_eq!(related["taskId"], id, "{request}");
    let answer = json!({"jsonrpc": "2.0", "id": request["id"], "result": {
        "action": "accept", "content": {"name": "Kay"}}});
    assert!(session.handle_text(&answer.to_string()).await.is_none());
    let result = legacy(2, "tasks/result", json!({"taskId": id}));
    let result = session.handle_text(&result.to_string()).await.unwrap();
    let result: Value = serde_json::from_str(&result).unwrap();
    assert_eq!(
        result["result"]["content"][0]["text"], "Hello, Kay!",
        "{result}"
    );
}

#[test]
fn a_task_started_outside_a_tokio_runtime_is_refused_with_a_clear_error() {
    use futures_util::FutureExt as _;
    use std::future::IntoFuture as _;
    let registry = registry(Arc::default());
    let started = registry
        .call_tool_by_name("slow", json!({}))
        .as_task()
        .into_future()
        .now_or_never()
        .expect("refused at once");
    let err = started.unwrap_err();
    assert!(err.to_string().contains("Tokio runtime"), "{err}");
}

/// Task tools that end every way a call can: `ok`, `fails` (the tool's error), `panics`,
/// `denied` (the approval refuses it), `slow` (its own limit of 50 ms, ten seconds of work).
fn ending_registry() -> Registry {
    let task = |name: &str| Tool::builder(name).task_support(TaskSupport::Optional);
    let tools = [
        task("ok").raw(json!({"type": "object"}), |_: Value| async { "done" }),
        task("fails").raw(json!({"type": "object"}), |_: Value| async {
            Err::<&str, _>("the disk is full")
        }),
        task("panics").raw(json!({"type": "object"}), |_: Value| async {
            if true {
                panic!("a bug in the tool");
            }
            "unreachable"
        }),
        task("denied").raw(json!({"type": "object"}), |_: Value| async { "ran" }),
        task("slow").timeout(Duration::from_millis(50)).raw(
            json!({"type": "object"}),
            |_: Value| async {
                sleep(10.0).await;
                "late"
            },
        ),
    ];
    let tools = tools.map(Result::unwrap);
    Registry::builder()
        .server(Server::new("s", None, tools).unwrap())
        .approval(|call| async move {
            match call.tool.as_str() {
                "denied" => mcp_registry::Approval::Deny("not this one".to_owned()),
                _ => mcp_registry::Approval::Allow,
            }
        })
        .build()
}

/// What a task's handle gives is what the plain call gives, errors included: the same
/// `Result`, the same error variant and message.
#[tokio::test(start_paused = true)]
async fn a_task_result_is_what_the_plain_call_returns_errors_included() {
    let registry = ending_registry();
    for name in ["ok", "fails", "panics", "denied", "slow", "nosuch"] {
        let plain = registry.call_tool_by_name(name, json!({})).await;
        let task = match registry.call_tool_by_name(name, json!({})).as_task().await {
            Ok(handle) => handle.result().await,
            Err(e) => Err(e),
        };
        assert_eq!(task, plain, "tool {name}");
        if name == "fails" {
            assert!(
                matches!(plain, Err(CallError::ToolFailed { .. })),
                "{plain:?}"
            );
        }
    }
    // Cancelled: the plain call by its token, the task by its handle.
    let token = mcp_registry::CancellationToken::new();
    token.cancel();
    let plain = registry
        .call_tool_by_name("slow", json!({}))
        .cancellation(token)
        .await;
    let handle = registry
        .call_tool_by_name("slow", json!({}))
        .as_task()
        .await
        .unwrap();
    handle.cancel().await.unwrap();
    assert_eq!(handle.result().await, plain);
    // Another handle on the same task (as another replica's would be) gives the same.
    let other = registry.task(handle.id());
    assert_eq!(other.result().await, plain);
    let failed = registry
        .call_tool_by_name("fails", json!({}))
        .as_task()
        .await
        .unwrap();
    failed.result().await.unwrap_err();
    assert_eq!(
        registry.task(failed.id()).result().await,
        registry.call_tool_by_name("fails", json!({})).await
    );
}
