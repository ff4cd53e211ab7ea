//! Tasks shared by replicas through Redis (`replicas::RedisTaskStore`), against a real
//! `redis-server`: two registries sharing one Redis act as two replicas of one server. A
//! task started on A is followed, answered, cancelled and waited for through B (both eras);
//! A dying mid-task gets the task failed within its lease; results expire with the task;
//! the live bound holds across replicas; Redis down gives task requests a clear error and
//! leaves other requests alone, and tasks work again once it is back.
//!
//! Real time (Redis keeps its own clock): every wait is bounded, with generous limits.

use crate::common;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use common::redis::RedisServer;
use common::tasks::{ask_tool, legacy, modern, plain_tool, result_of, send, slow_tool};
use mcp_registry::protocol::TaskSupport;
use mcp_registry::replicas::{Redis, RedisTaskStore};
use mcp_registry::task::TaskSettings;
use mcp_registry::{CallError, NotificationSink, Registry, Server, Tool};
use serde_json::{Map, Value, json};

/// The lease of the replicas' tasks: a dead replica's tasks fail this long after it died.
const LEASE: Duration = Duration::from_secs(1);
/// The longest any wait of these tests may take (a loaded machine).
const PATIENCE: Duration = Duration::from_secs(30);

/// The server every replica runs: `slow` (ten minutes, flagging `dropped` when its future
/// is dropped), `quick` (a fifth of a second), `ask` (asks who you are), `plain` (no task),
/// `fails` (the tool's own error).
fn server(dropped: Arc<AtomicBool>) -> Server {
    let slow = slow_tool(dropped, 600, "ten minutes of work");
    let quick = Tool::builder("quick")
        .task_support(TaskSupport::Optional)
        .raw(json!({"type": "object"}), |_: Value| async {
            tokio::time::sleep(Duration::from_millis(200)).await;
            "done"
        })
        .unwrap();
    let fails = Tool::builder("fails")
        .task_support(TaskSupport::Optional)
        .raw(json!({"type": "object"}), |_: Value| async {
            Err::<&str, _>("the disk is full")
        })
        .unwrap();
    let (ask, plain) = (ask_tool(), plain_tool());
    Server::new("s", None, [slow, quick, ask, plain, fails]).unwrap()
}

/// A replica: the server, its tasks in the Redis at `url` (a short lease), at most
/// `live` tasks under way per requestor.
fn replica(url: &str, dropped: Arc<AtomicBool>, live: usize) -> Registry {
    let redis = Redis::new(url).unwrap().prefix("tasks-test");
    let store = RedisTaskStore::new(redis)
        .watch_interval(Duration::from_millis(50))
        .lease(LEASE);
    Registry::builder()
        .server(server(dropped))
        .task_store(store)
        .task_settings(
            TaskSettings::default()
                .default_ttl(Duration::from_secs(120))
                .poll_interval(Duration::from_millis(100))
                .max_live_per_requestor(live),
        )
        .build()
}

/// Asks `registry` for the task `id` (2026-07-28 `tasks/get`) until `done` says yes, for
/// at most [`PATIENCE`]; the task as last seen.
async fn poll_until(registry: &Registry, id: &str, done: impl Fn(&Value) -> bool) -> Value {
    let start = Instant::now();
    loop {
        let got = send(registry, modern(90, "tasks/get", json!({"taskId": id}))).await;
        if done(&got) {
            return got;
        }
        assert!(start.elapsed() < PATIENCE, "still waiting: {got}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn status_is(status: &'static str) -> impl Fn(&Value) -> bool {
    move |got| got["result"]["status"] == status
}

/// Two replicas of the server sharing one Redis, and A's drop flag.
async fn two_replicas(live: usize) -> Option<(RedisServer, Registry, Registry, Arc<AtomicBool>)> {
    let server = RedisServer::start().await?;
    let dropped = Arc::new(AtomicBool::new(false));
    let a = replica(&server.url(), dropped.clone(), live);
    let b = replica(&server.url(), Arc::default(), live);
    Some((server, a, b, dropped))
}

#[tokio::test]
async fn the_redis_store_keeps_the_contract() {
    let Some(server) = RedisServer::start().await else {
        return;
    };
    let redis = Redis::new(&server.url()).unwrap().prefix("contract");
    let store = RedisTaskStore::new(redis).lease(Duration::from_secs(120));
    common::task_store::store_contract(&store).await;
}

/// Answers received for another replica's task are left for it in one compare-and-set: the
/// record is read once (it was read, then read again by the compare-and-set).
#[tokio::test]
async fn forwarded_answers_read_the_record_once() {
    use mcp_registry::protocol::InputRequest;
    use mcp_registry::task::{TaskChange, TaskStore};
    let Some(server) = RedisServer::start().await else {
        return;
    };
    let redis = Redis::new(&server.url()).unwrap().prefix("forward");
    let store = RedisTaskStore::new(redis).lease(Duration::from_secs(120));
    let task = common::task_store::record("t", None, 0);
    store.create(task, 8).await.unwrap();
    let ask = InputRequest {
        method: "elicitation/create".to_owned(),
        params: Map::new(),
    };
    let asked = TaskChange::Ask("k".to_owned(), ask);
    store.update("t", asked, 10).await.unwrap();

    server.reset_counts();
    let answers = json!({"k": {"action": "decline"}, "nope": {"action": "decline"}});
    let Value::Object(answers) = answers else {
        unreachable!()
    };
    assert!(store.forward_answers("t", answers, 20).await.unwrap());
    assert_eq!(server.calls("mget"), 1, "one read of the record");
    let after = store.get("t", 30).await.unwrap().unwrap();
    assert_eq!(after.status, mcp_registry::protocol::TaskStatus::Working);
    assert!(after.input_requests.is_empty());
}

#[tokio::test]
async fn a_task_started_on_one_replica_is_cancelled_through_another() {
    let Some((_redis, a, b, dropped)) = two_replicas(8).await else {
        return;
    };
    let created = result_of(&a, modern(1, "tools/call", json!({"name": "slow"}))).await;
    assert_eq!(created["resultType"], "task");
    let id = created["taskId"].as_str().unwrap().to_owned();

    let got = result_of(&b, modern(2, "tasks/get", json!({"taskId": id}))).await;
    assert_eq!(got["status"], "working", "{got}");
    let ack = result_of(&b, modern(3, "tasks/cancel", json!({"taskId": id}))).await;
    assert_eq!(ack["resultType"], "complete");
    assert!(ack.get("status").is_none(), "an empty ack: {ack}");

    // The cancellation reaches A's run: the tool's future is dropped.
    let start = Instant::now();
    while !dropped.load(Ordering::SeqCst) {
        assert!(start.elapsed() < PATIENCE, "A's run was not stopped");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    for replica in [&a, &b] {
        let got = result_of(replica, modern(4, "tasks/get", json!({"taskId": id}))).await;
        assert_eq!(got["status"], "cancelled", "{got}");
    }
}

#[tokio::test]
async fn a_legacy_task_cancelled_through_another_replica_tells_its_session() {
    let Some((_redis, a, b, dropped)) = two_replicas(8).await else {
        return;
    };
    let (notes, mut noted) = tokio::sync::mpsc::unbounded_channel();
    let call = legacy(1, "tools/call", json!({"name": "slow", "task": {}}));
    let reply = a
        .handle_mcp_message("s", call)
        .notifications(NotificationSink::from_channel(notes))
        .await
        .unwrap();
    let id = reply["result"]["task"]["taskId"]
        .as_str()
        .unwrap()
        .to_owned();

    let cancelled = result_of(&b, legacy(2, "tasks/cancel", json!({"taskId": id}))).await;
    assert_eq!(cancelled["status"], "cancelled", "{cancelled}");
    // A's run stops, and the session that started the task on A hears of it.
    let told = tokio::time::timeout(PATIENCE, async {
        while let Some(note) = noted.recv().await {
            if note["method"] == "notifications/tasks/status" {
                return note;
            }
        }
        panic!("the session's notifications ended");
    })
    .await
    .expect("a status notification");
    assert_eq!(told["params"]["taskId"], id);
    assert_eq!(told["params"]["status"], "cancelled", "{told}");
    assert!(dropped.load(Ordering::SeqCst), "A's run was stopped");
}

/// The result of server `s` of `replica` for `message` sent by `caller`, which must not fail.
async fn result_as(replica: &Registry, caller: &mcp_registry::Caller, message: Value) -> Value {
    let reply = replica
        .handle_mcp_message("s", message)
        .caller(caller.clone())
        .await
        .unwrap();
    assert!(reply.get("error").is_none(), "{reply}");
    reply["result"].clone()
}

#[tokio::test]
async fn a_legacy_task_is_listed_and_its_result_awaited_on_another_replica() {
    let Some((_redis, a, b, _)) = two_replicas(8).await else {
        return;
    };
    // A named caller (as a token's subject would be): an anonymous one's tasks are never
    // listed. The same caller on both replicas.
    let ada = mcp_registry::Caller::principal_of(mcp_registry::Principal::new("ada"));
    let call = legacy(
        1,
        "tools/call",
        json!({"name": "quick", "task": {"ttl": 60_000}}),
    );
    let created = result_as(&a, &ada, call).await;
    let id = created["task"]["taskId"].as_str().unwrap().to_owned();
    assert_eq!(created["task"]["ttl"], 60_000);

    let listed = result_as(&b, &ada, legacy(2, "tasks/list", json!({}))).await;
    assert_eq!(listed["tasks"][0]["taskId"], id, "{listed}");
    // B did not start it: `tasks/result` polls the store until the task ends on A.
    let waiting = b
        .handle_mcp_message("s", legacy(3, "tasks/result", json!({"taskId": id})))
        .caller(ada.clone());
    let reply = tokio::time::timeout(PATIENCE, waiting)
        .await
        .expect("tasks/result answered")
        .unwrap();
    let result = &reply["result"];
    assert_eq!(result["content"][0]["text"], "done", "{reply}");
    assert_eq!(
        result["_meta"]["io.modelcontextprotocol/related-task"]["taskId"],
        id
    );
    let got = result_as(&b, &ada, legacy(4, "tasks/get", json!({"taskId": id}))).await;
    assert_eq!(got["status"], "completed");
}

#[tokio::test]
async fn input_is_answered_through_another_replica() {
    let Some((_redis, a, b, _)) = two_replicas(8).await else {
        return;
    };
    let created = result_of(&a, modern(1, "tools/call", json!({"name": "ask"}))).await;
    assert_eq!(created["resultType"], "task", "{created}");
    let id = created["taskId"].as_str().unwrap().to_owned();

    let got = poll_until(&b, &id, status_is("input_required")).await;
    let requests = got["result"]["inputRequests"].as_object().unwrap();
    let (key, request) = requests.iter().next().unwrap();
    assert_eq!(request["params"]["message"], "Who are you?");

    // An answer to a key the task does not wait for is ignored.
    let ignored = json!({"taskId": id, "inputResponses": {"nope": {"action": "decline"}}});
    result_of(&b, modern(2, "tasks/update", ignored)).await;
    let got = result_of(&b, modern(3, "tasks/get", json!({"taskId": id}))).await;
    assert_eq!(got["status"], "input_required");

    let answer = json!({"action": "accept", "content": {"name": "Ada"}});
    let update = json!({"taskId": id, "inputResponses": {key.clone(): answer}});
    result_of(&b, modern(4, "tasks/update", update)).await;
    let got = poll_until(&b, &id, status_is("completed")).await;
    assert_eq!(got["result"]["result"]["content"][0]["text"], "Hello, Ada!");
    let on_a = result_of(&a, modern(5, "tasks/get", json!({"taskId": id}))).await;
    assert_eq!(on_a["status"], "completed");
}

#[tokio::test]
async fn a_dead_replicas_task_is_failed_within_its_lease() {
    let Some(redis) = RedisServer::start().await else {
        return;
    };
    // Replica A runs on a runtime of its own, shut down mid-task: its runs and heartbeat
    // stop as a killed process's would.
    let runtime_a = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let url = redis.url();
    let (a, created) = runtime_a
        .spawn(async move {
            let a = replica(&url, Arc::default(), 8);
            let created = result_of(&a, modern(1, "tools/call", json!({"name": "slow"}))).await;
            (a, created)
        })
        .await
        .unwrap();
    let id = created["taskId"].as_str().unwrap().to_owned();
    let b = replica(&redis.url(), Arc::default(), 8);
    let got = result_of(&b, modern(2, "tasks/get", json!({"taskId": id}))).await;
    assert_eq!(got["status"], "working");

    runtime_a.shutdown_background();
    let died = Instant::now();
    let got = poll_until(&b, &id, status_is("failed")).await;
    eprintln!("failed {:?} after its replica died", died.elapsed());
    let message = got["result"]["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("replica running this task stopped"),
        "{got}"
    );
    // 2025-11-25 `tasks/result` gives the failure, at once.
    let reply = send(&b, legacy(3, "tasks/result", json!({"taskId": id}))).await;
    assert_eq!(reply["error"]["code"], -32603, "{reply}");
    drop(a);
}

#[tokio::test]
async fn results_expire_with_the_tasks_time_to_live() {
    let Some((_redis, a, b, _)) = two_replicas(8).await else {
        return;
    };
    let call = legacy(
        1,
        "tools/call",
        json!({"name": "quick", "task": {"ttl": 1_500}}),
    );
    let created = result_of(&a, call).await;
    let id = created["task"]["taskId"].as_str().unwrap().to_owned();
    let got = poll_until(&b, &id, |got| {
        got["result"]["status"] == "completed" || got.get("error").is_some()
    })
    .await;
    assert_eq!(
        got["result"]["result"]["content"][0]["text"], "done",
        "{got}"
    );
    // Gone once its time to live is over, on every replica, and from the listing.
    let gone = poll_until(&b, &id, |got| got.get("error").is_some()).await;
    assert_eq!(gone["error"]["code"], -32602, "{gone}");
    let reply = send(&a, modern(2, "tasks/get", json!({"taskId": id}))).await;
    assert_eq!(reply["error"]["code"], -32602, "{reply}");
    let listed = result_of(&a, legacy(3, "tasks/list", json!({}))).await;
    assert_eq!(listed["tasks"], json!([]), "{listed}");
}

#[tokio::test]
async fn the_live_bound_holds_across_replicas() {
    let Some((_redis, a, b, _)) = two_replicas(2).await else {
        return;
    };
    let first = result_of(&a, modern(1, "tools/call", json!({"name": "slow"}))).await;
    result_of(&b, modern(2, "tools/call", json!({"name": "slow"}))).await;
    let reply = send(&a, modern(3, "tools/call", json!({"name": "slow"}))).await;
    assert_eq!(reply["error"]["code"], -32600, "{reply}");
    let message = reply["error"]["message"].as_str().unwrap();
    assert!(message.contains("too many tasks"), "{reply}");

    // Cancelling one (through the other replica) frees its slot.
    let id = first["taskId"].as_str().unwrap();
    result_of(&b, modern(4, "tasks/cancel", json!({"taskId": id}))).await;
    let created = result_of(&b, modern(5, "tools/call", json!({"name": "slow"}))).await;
    assert_eq!(created["resultType"], "task");
}

#[tokio::test]
async fn redis_down_fails_task_requests_clearly_and_they_recover() {
    let Some((mut redis, a, b, _)) = two_replicas(8).await else {
        return;
    };
    let created = result_of(&a, modern(1, "tools/call", json!({"name": "slow"}))).await;
    let id = created["taskId"].as_str().unwrap().to_owned();

    redis.stop();
    let asked = send(&b, modern(2, "tasks/get", json!({"taskId": id})));
    let reply = tokio::time::timeout(PATIENCE, asked)
        .await
        .expect("an answer, not a hang");
    assert_eq!(reply["error"]["code"], -32603, "{reply}");
    let message = reply["error"]["message"].as_str().unwrap();
    assert!(message.contains("Redis"), "{reply}");
    assert!(message.contains("check that it runs"), "{reply}");
    let started = send(&a, modern(3, "tools/call", json!({"name": "slow"}))).await;
    assert_eq!(started["error"]["code"], -32603, "{started}");
    // Requests that need no shared state are unaffected.
    let plain = result_of(&b, modern(4, "tools/call", json!({"name": "plain"}))).await;
    assert_eq!(plain["content"][0]["text"], "plain");

    // Back (empty: what it kept is gone), tasks work again on both replicas.
    redis.restart().await;
    let start = Instant::now();
    let created = loop {
        let reply = send(&a, modern(5, "tools/call", json!({"name": "quick"}))).await;
        if reply.get("error").is_none() {
            break reply["result"].clone();
        }
        assert!(start.elapsed() < PATIENCE, "tasks did not recover: {reply}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let id = created["taskId"].as_str().unwrap().to_owned();
    let got = poll_until(&b, &id, status_is("completed")).await;
    assert_eq!(got["result"]["result"]["content"][0]["text"], "done");
}

/// A failed task's handle on another replica gives the error the plain call gives (kept
/// with the record in Redis), while `tasks/get` over MCP still shows the `isError` result.
#[tokio::test]
async fn another_replicas_handle_gives_the_plain_calls_error() {
    let Some((_server, a, b, _)) = two_replicas(8).await else {
        return;
    };
    let plain = a.call_tool_by_name("fails", json!({})).await;
    assert!(
        matches!(plain, Err(CallError::ToolFailed { .. })),
        "{plain:?}"
    );
    let task = a
        .call_tool_by_name("fails", json!({}))
        .as_task()
        .await
        .unwrap();
    let on_b = tokio::time::timeout(PATIENCE, b.task(task.id()).result())
        .await
        .expect("the task ends");
    assert_eq!(on_b, plain);
    let got = poll_until(&b, task.id(), status_is("completed")).await;
    assert_eq!(got["result"]["result"]["isError"], true, "{got}");
    assert!(got["result"]["result"].get("callError").is_none(), "{got}");
}
