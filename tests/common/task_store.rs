//! The `TaskStore` contract: what any store (one kept out of process too) must do, checked
//! by tests/task_store.rs on `MemoryTaskStore` and by tests/replicas_tasks.rs on
//! `RedisTaskStore`. Times are those the store is given (`now_ms`), so the contract runs
//! without waiting; records live 60 s from time 0.

use std::collections::BTreeMap;

use mcp_registry::protocol::{ErrorCode, ErrorObject, InputRequest, TaskStatus};
use mcp_registry::task::{TaskChange, TaskEnd, TaskRecord, TaskStore, TaskStoreError};
use serde_json::json;

/// A record of `requestor`'s, created at `created_at_ms`, living 60 s.
pub fn record(id: &str, requestor: Option<&str>, created_at_ms: u64) -> TaskRecord {
    TaskRecord {
        task_id: id.to_owned(),
        requestor: requestor.map(str::to_owned),
        tool: "build".to_owned(),
        status: TaskStatus::Working,
        status_message: None,
        created_at_ms,
        last_updated_at_ms: created_at_ms,
        ttl_ms: Some(60_000),
        poll_interval_ms: 100,
        input_requests: BTreeMap::new(),
        result: None,
        error: None,
        call_error: None,
    }
}

pub async fn store_contract(store: &dyn TaskStore) {
    // Created, then visible at once; a duplicate id is refused.
    store
        .create(record("a", Some("alice"), 0), 2)
        .await
        .unwrap();
    assert_eq!(store.get("a", 10).await.unwrap().unwrap().tool, "build");
    let duplicate = store.create(record("a", Some("alice"), 0), 2).await;
    assert!(matches!(duplicate, Err(TaskStoreError::Duplicate(_))));

    // The bound counts a requestor's live tasks only.
    store
        .create(record("b", Some("alice"), 1), 2)
        .await
        .unwrap();
    let third = store.create(record("c", Some("alice"), 2), 2).await;
    assert!(matches!(
        third,
        Err(TaskStoreError::TooManyTasks { limit: 2 })
    ));
    store.create(record("x", Some("bob"), 2), 2).await.unwrap();

    // Input requests move the status; answers move it back.
    let ask = InputRequest {
        method: "elicitation/create".to_owned(),
        params: Default::default(),
    };
    let asked = store
        .update("a", TaskChange::Ask("k1".to_owned(), ask), 20)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(asked.status, TaskStatus::InputRequired);
    assert_eq!(asked.last_updated_at_ms, 20);
    let answered = store
        .update("a", TaskChange::Answered(vec!["k1".to_owned()]), 30)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(answered.status, TaskStatus::Working);
    assert!(answered.input_requests.is_empty());

    // An ended task changes no more, and frees its slot.
    let done = TaskChange::End(TaskEnd::Completed(json!({"content": []})));
    store.update("a", done, 40).await.unwrap();
    let failed = TaskChange::End(TaskEnd::Failed(ErrorObject::new(
        ErrorCode::INTERNAL_ERROR,
        "late",
    )));
    let after = store.update("a", failed, 50).await.unwrap().unwrap();
    assert_eq!(after.status, TaskStatus::Completed);
    assert!(after.error.is_none());
    store
        .create(record("c", Some("alice"), 60), 2)
        .await
        .unwrap();
    list_and_expiry(store).await;
}

/// The contract's second half, on the tasks its first half left: `a` ended, `b` and `c`
/// (alice's) and `x` (bob's) live.
async fn list_and_expiry(store: &dyn TaskStore) {
    // Listed per requestor in creation order, paged.
    let page = store.list(Some("alice"), None, 2, 70).await.unwrap();
    let ids: Vec<_> = page.tasks.iter().map(|t| t.task_id.as_str()).collect();
    assert_eq!(ids, ["a", "b"]);
    assert_eq!(page.next_cursor.as_deref(), Some("c"));
    let rest = store.list(Some("alice"), Some("c"), 2, 70).await.unwrap();
    assert_eq!(rest.tasks.len(), 1);
    assert!(rest.next_cursor.is_none());
    assert_eq!(
        store
            .list(Some("bob"), None, 10, 70)
            .await
            .unwrap()
            .tasks
            .len(),
        1
    );

    // Kept until created + ttl, then neither shown, changed nor listed.
    assert!(store.get("a", 59_999).await.unwrap().is_some());
    assert!(store.get("a", 60_000).await.unwrap().is_none());
    let late = TaskChange::Message("late".to_owned());
    assert!(store.update("a", late, 60_000).await.unwrap().is_none());
    let listed = store.list(Some("alice"), None, 10, 60_001).await.unwrap();
    let ids: Vec<_> = listed.tasks.iter().map(|t| t.task_id.as_str()).collect();
    assert_eq!(ids, ["c"]);
    assert!(store.get("x", 60_001).await.unwrap().is_some());
    assert!(store.get("c", 60_001).await.unwrap().is_some());
}
