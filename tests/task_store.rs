//! The `TaskStore` contract (tests/common/task_store.rs) kept by `MemoryTaskStore`, which
//! also drops expired records when asked (freeing the slots of live ones); a record's
//! serialized form.

mod common;

use common::task_store::{record, store_contract};
use mcp_registry::task::{MemoryTaskStore, TaskRecord, TaskStore, TaskStoreError};
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
