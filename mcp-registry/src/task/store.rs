//! Where tasks are kept: the [`TaskStore`] trait and [`MemoryTaskStore`], the in-process
//! default.
//!
//! A store keeps [`TaskRecord`]s: plain, serializable data (no channel, lock or future), so a
//! store may keep them in another process (a database, Redis) and another process may answer
//! `tasks/get` for a task this one runs. Every method is async. The running work itself (its
//! cancellation, the answers it waits for) stays with the process that runs it.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::TaskRuns;
use crate::protocol::{ErrorObject, InputRequest, TaskStatus};
use crate::sync::MutexExt;
use crate::tool::BoxFuture;

/// One task as a store keeps it: its state, and its result once it has one. Times are
/// milliseconds since the Unix epoch.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskRecord {
    /// The task's identifier (random, unguessable).
    pub task_id: String,
    /// Who started it: a task is only shown to its requestor (`None`: a caller with no
    /// identity, such as a local session or an in-process host).
    pub requestor: Option<String>,
    /// The tool it runs.
    pub tool: String,
    /// Where it is.
    pub status: TaskStatus,
    /// What it is doing, for people.
    pub status_message: Option<String>,
    /// When it was created.
    pub created_at_ms: u64,
    /// When it last changed.
    pub last_updated_at_ms: u64,
    /// How long it is kept from its creation; `None`: until the store is dropped.
    pub ttl_ms: Option<u64>,
    /// How often its requestor should poll it.
    pub poll_interval_ms: u64,
    /// `input_required`: what it asks the client, by key.
    #[serde(default)]
    pub input_requests: BTreeMap<String, InputRequest>,
    /// `completed`: the result (a `CallToolResult`).
    pub result: Option<Value>,
    /// `failed`: the JSON-RPC error.
    pub error: Option<ErrorObject>,
    /// How the call failed, when it did ([`TaskEnd::CallFailed`]): the registry's
    /// [`CallError`](crate::CallError) as JSON, so that
    /// [`TaskHandle::result`](crate::TaskHandle::result) gives the error the plain call gives,
    /// on any replica. Never sent over MCP: there the task has its `result` (with `isError`)
    /// or its `error`, as the spec has it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call_error: Option<Value>,
}

impl TaskRecord {
    /// When the record may be dropped, if ever.
    pub fn expires_at_ms(&self) -> Option<u64> {
        self.ttl_ms
            .map(|ttl| self.created_at_ms.saturating_add(ttl))
    }

    /// Whether it has expired at `now_ms`.
    pub fn expired(&self, now_ms: u64) -> bool {
        self.expires_at_ms().is_some_and(|at| now_ms >= at)
    }
}

/// A change to a task that has not ended. A store applies it only while the task's status
/// is not terminal: a task that has ended changes no more.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum TaskChange {
    /// A new status message.
    Message(String),
    /// An input request, under a key not used before in this task: the task is
    /// `input_required` until every request has an answer.
    Ask(String, InputRequest),
    /// The requests under these keys have their answers: removed, and the task is
    /// `working` again when none is left.
    Answered(Vec<String>),
    /// The task ended: `completed` with a result, `failed` with an error, or `cancelled`.
    End(TaskEnd),
}

/// How a task ended.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum TaskEnd {
    /// With a result (a tool's own error included).
    Completed(Value),
    /// With a JSON-RPC error.
    Failed(ErrorObject),
    /// Cancelled.
    Cancelled,
    /// The call failed: `wire` is how the task ended as MCP shows it (a result with
    /// `isError`, or a JSON-RPC error), `error` how the call failed as the registry tells it
    /// ([`TaskRecord::call_error`]).
    CallFailed {
        /// The end MCP shows: [`Completed`](Self::Completed) or [`Failed`](Self::Failed).
        wire: Box<TaskEnd>,
        /// The registry's [`CallError`](crate::CallError), as JSON.
        error: Value,
    },
}

impl TaskEnd {
    /// Sets `record` to this end.
    fn apply(self, record: &mut TaskRecord) {
        match self {
            TaskEnd::Completed(result) => {
                record.status = TaskStatus::Completed;
                record.result = Some(result);
            }
            TaskEnd::Failed(error) => {
                record.status = TaskStatus::Failed;
                record.error = Some(error);
            }
            TaskEnd::Cancelled => {
                record.status = TaskStatus::Cancelled;
                record.status_message = Some("The task was cancelled.".to_owned());
            }
            TaskEnd::CallFailed { wire, error } => {
                record.call_error = Some(error);
                wire.apply(record);
            }
        }
    }
}

impl TaskChange {
    /// Applies the change to `record` at `now_ms`; `false` when the task has ended already
    /// (the record is left as it is).
    pub fn apply(self, record: &mut TaskRecord, now_ms: u64) -> bool {
        if record.status.is_terminal() {
            return false;
        }
        match self {
            TaskChange::Message(message) => record.status_message = Some(message),
            TaskChange::Ask(key, request) => {
                record.input_requests.insert(key, request);
                record.status = TaskStatus::InputRequired;
            }
            TaskChange::Answered(keys) => {
                for key in keys {
                    record.input_requests.remove(&key);
                }
                if record.input_requests.is_empty() {
                    record.status = TaskStatus::Working;
                }
            }
            TaskChange::End(end) => {
                record.input_requests.clear();
                end.apply(record);
            }
        }
        record.last_updated_at_ms = now_ms;
        true
    }
}

/// A page of a requestor's tasks ([`TaskStore::list`]).
#[derive(Debug, Clone, PartialEq, Default)]
#[non_exhaustive]
pub struct TaskPage {
    /// The tasks, in creation order.
    pub tasks: Vec<TaskRecord>,
    /// The task the next page starts with, when there is one.
    pub next_cursor: Option<String>,
}

/// Why a store could not do what was asked.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum TaskStoreError {
    /// A task with this identifier exists already.
    #[error("a task with id {0:?} exists already")]
    Duplicate(String),
    /// The requestor has as many live tasks as it may have.
    #[error(
        "too many tasks under way for this requestor ({limit}); wait for one to end or cancel one with tasks/cancel"
    )]
    TooManyTasks {
        /// The bound.
        limit: usize,
    },
    /// The store itself failed (its backend unreachable, a record unreadable).
    #[error("the task store failed: {0}")]
    Backend(String),
    /// A task runs on the Tokio runtime, and there is none here.
    #[error("a task runs on a Tokio runtime: start it from inside one")]
    NoRuntime,
}

/// Where tasks are kept: create, change, read, list, and drop those past their time to live.
///
/// Records are plain data ([`TaskRecord`]) so an implementation may keep them out of process
/// (the registry's default is [`MemoryTaskStore`]). A store must make a created record
/// visible to [`get`](Self::get) before `create` resolves: a client may ask for the task as
/// soon as it learns its id.
pub trait TaskStore: Send + Sync + 'static {
    /// Keeps a new task, unless its requestor already has `live_limit` tasks that have not
    /// ended ([`TaskStoreError::TooManyTasks`]).
    fn create(
        &self,
        record: TaskRecord,
        live_limit: usize,
    ) -> BoxFuture<'_, Result<(), TaskStoreError>>;

    /// The task `task_id`, if it is kept and has not expired at `now_ms`.
    fn get<'a>(
        &'a self,
        task_id: &'a str,
        now_ms: u64,
    ) -> BoxFuture<'a, Result<Option<TaskRecord>, TaskStoreError>>;

    /// Applies `change` ([`TaskChange::apply`]) at `now_ms`: the record after it, `None`
    /// when there is no such task.
    fn update<'a>(
        &'a self,
        task_id: &'a str,
        change: TaskChange,
        now_ms: u64,
    ) -> BoxFuture<'a, Result<Option<TaskRecord>, TaskStoreError>>;

    /// A page of `requestor`'s tasks in creation order, from `cursor` (a task id the last
    /// page ended before), and the cursor of the next page.
    fn list<'a>(
        &'a self,
        requestor: Option<&'a str>,
        cursor: Option<&'a str>,
        limit: usize,
        now_ms: u64,
    ) -> BoxFuture<'a, Result<TaskPage, TaskStoreError>>;

    /// Drops every task expired at `now_ms`; how many.
    fn expire(&self, now_ms: u64) -> BoxFuture<'_, Result<usize, TaskStoreError>>;

    /// Whether the store answers, cheaply (a ping): the HTTP readiness route's check
    /// `task_store`. The default (a store kept in process) says yes.
    fn health(&self) -> BoxFuture<'_, Result<(), TaskStoreError>> {
        Box::pin(async { Ok(()) })
    }

    /// Told once, when a registry takes the store, which tasks that registry runs in this
    /// process ([`TaskRuns`]). A store shared with other processes keeps those runs in step
    /// with what the others do (a task cancelled elsewhere is stopped here; answers received
    /// elsewhere reach its run) and tells the others these runs are alive. The default does
    /// nothing: a store kept in one process has nothing to relay.
    fn attach(&self, runs: TaskRuns) {
        let _ = runs;
    }

    /// Hands `answers` to requests the task `task_id` lists on to the process that runs it,
    /// recording them answered ([`TaskChange::Answered`]): `tasks/update` received by a
    /// process other than the task's. `false` when this store does not relay (the default:
    /// a store kept in one process, where the answers reach the run directly).
    fn forward_answers<'a>(
        &'a self,
        task_id: &'a str,
        answers: Map<String, Value>,
        now_ms: u64,
    ) -> BoxFuture<'a, Result<bool, TaskStoreError>> {
        let _ = (task_id, answers, now_ms);
        Box::pin(std::future::ready(Ok(false)))
    }
}

/// The in-process [`TaskStore`]: records in a map, dropped once their time to live has
/// passed (on the next [`expire`](TaskStore::expire), and never shown after it).
///
/// Creating, changing and expiring a task cost the same however many tasks are kept
/// (counts of live tasks per requestor and an expiry index are kept alongside the records).
#[derive(Debug, Default)]
pub struct MemoryTaskStore {
    tasks: Mutex<Tasks>,
}

#[derive(Debug, Default)]
struct Tasks {
    /// The records, with their place in creation order.
    by_id: HashMap<String, (u64, TaskRecord)>,
    /// Each requestor's tasks in creation order (place, id).
    order: HashMap<Option<String>, BTreeMap<u64, String>>,
    /// How many tasks each requestor has under way.
    live: HashMap<Option<String>, usize>,
    /// When each task expires (at, id).
    expiry: BTreeSet<(u64, String)>,
    next: u64,
}

impl Tasks {
    fn live_count(&mut self, requestor: &Option<String>, delta: isize) {
        let count = self.live.entry(requestor.clone()).or_default();
        *count = count.saturating_add_signed(delta);
        if *count == 0 {
            self.live.remove(requestor);
        }
    }

    /// Drops the task `id`.
    fn drop_task(&mut self, id: &str) {
        let Some((place, record)) = self.by_id.remove(id) else {
            return;
        };
        if !record.status.is_terminal() {
            self.live_count(&record.requestor, -1);
        }
        if let Some(order) = self.order.get_mut(&record.requestor) {
            order.remove(&place);
            if order.is_empty() {
                self.order.remove(&record.requestor);
            }
        }
    }
}

impl MemoryTaskStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }
}

impl TaskStore for MemoryTaskStore {
    fn create(
        &self,
        record: TaskRecord,
        live_limit: usize,
    ) -> BoxFuture<'_, Result<(), TaskStoreError>> {
        let mut tasks = self.tasks.lock_unpoisoned();
        let live = tasks.live.get(&record.requestor).copied().unwrap_or(0);
        let created = if tasks.by_id.contains_key(&record.task_id) {
            Err(TaskStoreError::Duplicate(record.task_id))
        } else if live >= live_limit {
            Err(TaskStoreError::TooManyTasks { limit: live_limit })
        } else {
            let place = tasks.next;
            tasks.next += 1;
            if !record.status.is_terminal() {
                tasks.live_count(&record.requestor, 1);
            }
            if let Some(at) = record.expires_at_ms() {
                tasks.expiry.insert((at, record.task_id.clone()));
            }
            tasks
                .order
                .entry(record.requestor.clone())
                .or_default()
                .insert(place, record.task_id.clone());
            tasks.by_id.insert(record.task_id.clone(), (place, record));
            Ok(())
        };
        Box::pin(std::future::ready(created))
    }

    fn get<'a>(
        &'a self,
        task_id: &'a str,
        now_ms: u64,
    ) -> BoxFuture<'a, Result<Option<TaskRecord>, TaskStoreError>> {
        let record = self
            .tasks
            .lock_unpoisoned()
            .by_id
            .get(task_id)
            .map(|(_, record)| record)
            .filter(|t| !t.expired(now_ms))
            .cloned();
        Box::pin(std::future::ready(Ok(record)))
    }

    fn update<'a>(
        &'a self,
        task_id: &'a str,
        change: TaskChange,
        now_ms: u64,
    ) -> BoxFuture<'a, Result<Option<TaskRecord>, TaskStoreError>> {
        let mut tasks = self.tasks.lock_unpoisoned();
        let mut ended = None;
        let record = tasks
            .by_id
            .get_mut(task_id)
            .map(|(_, record)| record)
            .filter(|t| !t.expired(now_ms))
            .map(|record| {
                let was_live = !record.status.is_terminal();
                change.apply(record, now_ms);
                if was_live && record.status.is_terminal() {
                    ended = Some(record.requestor.clone());
                }
                record.clone()
            });
        if let Some(requestor) = ended {
            tasks.live_count(&requestor, -1);
        }
        Box::pin(std::future::ready(Ok(record)))
    }

    fn list<'a>(
        &'a self,
        requestor: Option<&'a str>,
        cursor: Option<&'a str>,
        limit: usize,
        now_ms: u64,
    ) -> BoxFuture<'a, Result<TaskPage, TaskStoreError>> {
        let tasks = self.tasks.lock_unpoisoned();
        let start = cursor
            .and_then(|c| tasks.by_id.get(c))
            .map_or(0, |(place, _)| *place);
        let mut page = Vec::new();
        let mut next = None;
        let order = tasks.order.get(&requestor.map(str::to_owned));
        for (_, id) in order.into_iter().flat_map(|o| o.range(start..)) {
            let Some((_, record)) = tasks.by_id.get(id) else {
                continue;
            };
            if record.expired(now_ms) {
                continue;
            }
            if page.len() == limit {
                next = Some(id.clone());
                break;
            }
            page.push(record.clone());
        }
        Box::pin(std::future::ready(Ok(TaskPage {
            tasks: page,
            next_cursor: next,
        })))
    }

    fn expire(&self, now_ms: u64) -> BoxFuture<'_, Result<usize, TaskStoreError>> {
        let mut tasks = self.tasks.lock_unpoisoned();
        let mut dropped = 0;
        while let Some((at, _)) = tasks.expiry.first()
            && *at <= now_ms
        {
            if let Some((_, id)) = tasks.expiry.pop_first() {
                tasks.drop_task(&id);
                dropped += 1;
            }
        }
        Box::pin(std::future::ready(Ok(dropped)))
    }
}

impl std::fmt::Debug for dyn TaskStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("TaskStore")
    }
}
