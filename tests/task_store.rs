//! The `TaskStore` contract (tests/common/task_store.rs) kept by `MemoryTaskStore`, which
//! also drops expired records when asked (freeing the slots of live ones); a record's
//! serialized form; how often the task methods read the store (a counting store).

use crate::common;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use common::task_store::{record, store_contract};
use mcp_registry::protocol::TaskSupport;
use mcp_registry::task::{
    MemoryTaskStore, TaskChange, TaskPage, TaskRecord, TaskStore, TaskStoreError,
};
use mcp_registry::tool::BoxFuture;
use mcp_registry::{Registry, Server, Tool};
use serde_json::json;

#[tokio::test]
async fn the_memory_store_keeps_the_contract() {
    let store = MemoryTaskStore::new();
    store_contract(&store).await;
    // Expired records are dropped when asked: a (at 60 000), b (at 60 001).
    assert_eq!(store.expire(60_001).await.unwrap(), 2);
    assert_eq!(store.expire(60_001).await.unwrap(), 0);
    assert!(store.get("x", 60_001).await.unwrap().is_some());
    // A live task that expires frees its requestor's slot.
    let full = store.create(record("y", Some("bob"), 60_001), 1).await;
    assert!(matches!(
        full,
        Err(TaskStoreError::TooManyTasks { limit: 1 })
    ));
    assert_eq!(store.expire(60_002).await.unwrap(), 1); // x
    store
        .create(record("y", Some("bob"), 60_002), 1)
        .await
        .unwrap();
}

#[test]
fn a_record_serializes_and_reads_back() {
    let mut r = record("a", None, 5);
    r.result = Some(json!({"content": [{"type": "text", "text": "ok"}]}));
    let text = serde_json::to_string(&r).unwrap();
    assert!(text.contains("\"taskId\":\"a\""), "{text}");
    let back: TaskRecord = serde_json::from_str(&text).unwrap();
    assert_eq!(back, r);
}

/// A `MemoryTaskStore` counting its reads (`get`) and changes (`update`).
#[derive(Clone, Default)]
struct Counting {
    store: Arc<MemoryTaskStore>,
    gets: Arc<AtomicUsize>,
    updates: Arc<AtomicUsize>,
}

impl Counting {
    /// (reads, changes) since the last call.
    fn take(&self) -> (usize, usize) {
        (
            self.gets.swap(0, Ordering::SeqCst),
            self.updates.swap(0, Ordering::SeqCst),
        )
    }
}

impl TaskStore for Counting {
    fn create(
        &self,
        record: TaskRecord,
        live_limit: usize,
    ) -> BoxFuture<'_, Result<(), TaskStoreError>> {
        self.store.create(record, live_limit)
    }

    fn get<'a>(
        &'a self,
        task_id: &'a str,
        now_ms: u64,
    ) -> BoxFuture<'a, Result<Option<TaskRecord>, TaskStoreError>> {
        self.gets.fetch_add(1, Ordering::SeqCst);
        self.store.get(task_id, now_ms)
    }

    fn update<'a>(
        &'a self,
        task_id: &'a str,
        change: TaskChange,
        now_ms: u64,
    ) -> BoxFuture<'a, Result<Option<TaskRecord>, TaskStoreError>> {
        self.updates.fetch_add(1, Ordering::SeqCst);
        self.store.update(task_id, change, now_ms)
    }

    fn list<'a>(
        &'a self,
        requestor: Option<&'a str>,
        cursor: Option<&'a str>,
        limit: usize,
        now_ms: u64,
    ) -> BoxFuture<'a, Result<TaskPage, TaskStoreError>> {
        self.store.list(requestor, cursor, limit, now_ms)
    }

    fn expire(&self, now_ms: u64) -> BoxFuture<'_, Result<usize, TaskStoreError>> {
        self.store.expire(now_ms)
    }
}

fn legacy(id: u64, method: &str, params: serde_json::Value) -> serde_json::Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

/// `tasks/result` and `tasks/cancel` read the task once and act on what they read (a
/// cancellation with one change, the store's own compare-and-set).
#[tokio::test(start_paused = true)]
async fn tasks_result_and_cancel_read_the_store_once() {
    let tool = |name: &str, secs: u64| {
        Tool::builder(name)
            .task_support(TaskSupport::Optional)
            .raw(
                json!({"type": "object"}),
                move |_: serde_json::Value| async move {
                    tokio::time::sleep(Duration::from_secs(secs)).await;
                    "done"
                },
            )
            .unwrap()
    };
    let store = Counting::default();
    let registry = Registry::builder()
        .server(Server::new("s", None, [tool("quick", 1), tool("slow", 600)]).unwrap())
        .task_store(store.clone())
        .build();
    let start = |id: u64, name: &str| {
        let call = legacy(id, "tools/call", json!({"name": name, "task": {}}));
        let registry = registry.clone();
        async move {
            let reply = registry.handle_mcp_message("s", call).await.unwrap();
            reply["result"]["task"]["taskId"]
                .as_str()
                .unwrap()
                .to_owned()
        }
    };
    let send = |message| registry.handle_mcp_message("s", message);

    let quick = start(1, "quick").await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    store.take();
    let result = send(legacy(2, "tasks/result", json!({"taskId": quick})))
        .await
        .unwrap();
    assert_eq!(result["result"]["content"][0]["text"], "done", "{result}");
    assert_eq!(store.take(), (1, 0), "tasks/result of an ended task");

    let refused = send(legacy(3, "tasks/cancel", json!({"taskId": quick})))
        .await
        .unwrap();
    assert_eq!(refused["error"]["code"], -32602, "{refused}");
    assert_eq!(store.take(), (1, 0), "tasks/cancel of an ended task");

    let slow = start(4, "slow").await;
    store.take();
    let cancelled = send(legacy(5, "tasks/cancel", json!({"taskId": slow})))
        .await
        .unwrap();
    assert_eq!(cancelled["result"]["status"], "cancelled", "{cancelled}");
    let (reads, changes) = store.take();
    assert_eq!(reads, 1, "tasks/cancel of a task under way");
    assert!(changes >= 1, "the cancellation is a change");
}
