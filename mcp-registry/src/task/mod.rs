//! Tasks: long-running tool calls a client starts now and follows later (2025-11-25
//! experimental tasks, and the 2026-07-28 extension `io.modelcontextprotocol/tasks`).
//!
//! A tool opts in with [`ToolBuilder::task_support`](crate::ToolBuilder::task_support) (or
//! `#[mcp_tool(task = "optional")]`); its body stays a plain async function. Run as a task,
//! the call goes through the registry's pipeline like any other (layers, approval, the
//! guarded runner), spawned on the Tokio runtime, and its state is kept in the registry's
//! [`TaskStore`] ([`MemoryTaskStore`] unless the host sets another with
//! [`RegistryBuilder::task_store`](crate::RegistryBuilder::task_store)):
//!
//! - **cancellation**: `tasks/cancel` marks the task `cancelled` and drops the tool's future
//!   (its cancellation token fires first);
//! - **progress**: what the body reports with `ctx.progress` becomes the task's status
//!   message (`building (2/4)`); the requester hears the run's notifications too while it
//!   listens (an in-process host's sink; a 2025-11-25 session, with the request's progress
//!   token, for the task's whole life; a 2026-07-28 request until it is answered with the
//!   task, as the extension supports no progress or log notifications on tasks);
//! - **input**: what the body asks (elicitation, sampling, roots) becomes the task's
//!   `inputRequests` (2026-07-28, answered with `tasks/update`), or goes to the session's
//!   client as usual (2025-11-25), the task `input_required` meanwhile;
//! - **time**: a task is kept for its time to live from its creation (the client's ask,
//!   capped by [`TaskSettings::max_ttl`]), its result with it; the tool's own time limit, if
//!   any, still applies, else the time to live bounds the run;
//! - **bounds**: a requestor has at most [`TaskSettings::max_live_per_requestor`] tasks under
//!   way;
//! - **replicas**: a task's run lives in the process that started it; with a store shared
//!   by several processes (`replicas::RedisTaskStore`, feature `redis`) any of them answers
//!   for the task, and the store relays what reaches the others (a cancellation, input
//!   answers) to the run through [`TaskRuns`].

mod input;
mod runs;
mod store;

pub use store::{
    MemoryTaskStore, TaskChange, TaskEnd, TaskPage, TaskRecord, TaskStore, TaskStoreError,
};

pub use runs::TaskRuns;

pub(crate) use input::{RelayInput, TaskInput};

use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use crate::protocol::{DetailedTask, LegacyTask, TaskStatus};
use crate::sync::MutexExt;
use crate::tool::{BoxFuture, Caller, Extensions, NotificationSink};

/// How a registry runs tasks.
///
/// ```
/// use std::time::Duration;
/// use mcp_registry::task::TaskSettings;
/// let settings = TaskSettings::default().default_ttl(Duration::from_secs(600));
/// assert_eq!(settings.ttl_for(None), Duration::from_secs(600));
/// assert_eq!(settings.ttl_for(Some(Duration::from_secs(60))), Duration::from_secs(60));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TaskSettings {
    default_ttl: Duration,
    max_ttl: Duration,
    poll_interval: Duration,
    max_live_per_requestor: usize,
}

impl Default for TaskSettings {
    /// A time to live of an hour (at most a day), polls every second, 64 tasks under way
    /// per requestor.
    fn default() -> Self {
        TaskSettings {
            default_ttl: Duration::from_secs(3600),
            max_ttl: Duration::from_secs(24 * 3600),
            poll_interval: Duration::from_secs(1),
            max_live_per_requestor: 64,
        }
    }
}

impl TaskSettings {
    /// How long a task is kept when its client asks for no time to live.
    pub fn default_ttl(mut self, ttl: Duration) -> Self {
        self.default_ttl = ttl;
        self
    }

    /// The longest time to live a client may ask for (longer asks are cut to it).
    pub fn max_ttl(mut self, ttl: Duration) -> Self {
        self.max_ttl = ttl;
        self
    }

    /// How often clients are told to poll (`pollIntervalMs`).
    pub fn poll_interval(mut self, interval: Duration) -> Self {
        self.poll_interval = interval;
        self
    }

    /// How many tasks one requestor may have under way at once (at least 1).
    pub fn max_live_per_requestor(mut self, limit: usize) -> Self {
        self.max_live_per_requestor = limit.max(1);
        self
    }

    /// The time to live of a task whose client asked for `requested` (`None`: no ask): the
    /// ask, or the default, cut to [`max_ttl`](Self::max_ttl). Every task has one.
    pub fn ttl_for(&self, requested: Option<Duration>) -> Duration {
        requested.unwrap_or(self.default_ttl).min(self.max_ttl)
    }

    /// The poll interval clients are told.
    pub fn poll_interval_hint(&self) -> Duration {
        self.poll_interval
    }
}

/// Who started a task, when the host names it itself: a task is shown, changed and
/// cancelled only by its requestor. Without one, a task belongs to its request's
/// [`Caller`] ([`Caller::owner`]: the token's subject, else the legacy session; an
/// anonymous caller's tasks are reachable by id only). A host may put one in a call's
/// extensions ([`WithOptions::extension`](crate::WithOptions::extension)) to key tasks its
/// own way.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct TaskRequestor(pub String);

/// Who a task started by a request belongs to: a [`TaskRequestor`] the host attached, else
/// the request's caller's [`owner`](Caller::owner) key; `None` for an anonymous caller.
pub(crate) fn requestor_of(extensions: &Extensions, caller: &Caller) -> Option<String> {
    match extensions.get::<TaskRequestor>() {
        Some(requestor) => Some(requestor.0.clone()),
        None => caller.owner(),
    }
}

/// A legacy session's own stream (HTTP: its GET stream), where a task started from it
/// sends `notifications/tasks/status`: the call's stream ends with its `CreateTaskResult`.
#[derive(Clone)]
pub(crate) struct SessionStream(pub(crate) NotificationSink);

/// Where a legacy session's input learns the id of the task its call became, so the
/// requests it sends the client name it (`_meta.io.modelcontextprotocol/related-task`).
#[derive(Clone, Default)]
pub(crate) struct TaskIdSlot(pub(crate) Arc<std::sync::OnceLock<String>>);

/// Wall-clock milliseconds, advancing with Tokio's clock (so a paused test clock moves them).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Clock {
    wall: SystemTime,
    at: tokio::time::Instant,
}

impl Clock {
    fn new() -> Self {
        Clock {
            wall: SystemTime::now(),
            at: tokio::time::Instant::now(),
        }
    }

    pub(crate) fn now_ms(&self) -> u64 {
        let now = self.wall + tokio::time::Instant::now().saturating_duration_since(self.at);
        millis(now.duration_since(UNIX_EPOCH).unwrap_or_default())
    }
}

/// A duration in whole milliseconds (saturating).
pub(crate) fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// A time in milliseconds since the epoch, as ISO 8601 (UTC, milliseconds):
/// `2026-11-28T08:40:06.123Z`.
pub(crate) fn iso8601(ms: u64) -> String {
    let (secs, millis) = (ms / 1000, ms % 1000);
    let (days, of_day) = (secs / 86_400, secs % 86_400);
    let (year, month, day) = civil_from_days(days);
    let (hour, minute, second) = (of_day / 3600, of_day % 3600 / 60, of_day % 60);
    format!("{year:04}-{month:02}-{day:02}T{hour:02}:{minute:02}:{second:02}.{millis:03}Z")
}

/// The proleptic Gregorian date `days` after 1970-01-01 (Howard Hinnant's
/// `civil_from_days`, for days on or after the epoch).
fn civil_from_days(days: u64) -> (u64, u64, u64) {
    let z = days + 719_468;
    let era = z / 146_097;
    let doe = z % 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + u64::from(month <= 2);
    (year, month, day)
}

/// What runs in this process for one task: its cancellation, the answers it waits for, and
/// who to wake when it changes.
struct Live {
    cancel: CancellationToken,
    input: Arc<input::Waiting>,
    /// 2025-11-25: where `notifications/tasks/status` goes (the requestor's session).
    watch: Option<NotificationSink>,
}

/// A registry's tasks: the store, and the work under way in this process.
pub(crate) struct Tasks {
    store: Arc<dyn TaskStore>,
    settings: TaskSettings,
    clock: Clock,
    live: Mutex<HashMap<String, Live>>,
    /// Woken whenever a task of this process changes (`tasks/result` waits on it).
    changed: Notify,
}

impl std::fmt::Debug for Tasks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tasks")
            .field("settings", &self.settings)
            .finish_non_exhaustive()
    }
}

/// A task about to start: what the call that runs it needs from it.
pub(crate) struct Prepared {
    pub(crate) cancel: CancellationToken,
    /// Where the body's asks go (2026-07-28: the task's `inputRequests`).
    pub(crate) input: Arc<TaskInput>,
    /// 2025-11-25: where to send `notifications/tasks/status` when the status changes.
    pub(crate) watch: Option<NotificationSink>,
    /// 2025-11-25: told the task's id once it exists, before the call runs.
    pub(crate) id_slot: Option<TaskIdSlot>,
    /// The requester, while it listens to the run's notifications ([`Self::run_sink`]).
    listener: Arc<Mutex<Option<NotificationSink>>>,
}

impl Prepared {
    /// Where the run's notifications go: its progress becomes the task's status message
    /// (`building (2/4)`), and everything it sends also reaches `listener` (the requester)
    /// until [`stop_listening`](Self::stop_listening); its progress only when it carries the
    /// requester's own token (`own_token`), not one the task made up for its status.
    pub(crate) fn run_sink(
        &self,
        listener: Option<NotificationSink>,
        own_token: bool,
    ) -> NotificationSink {
        *self.listener.lock_unpoisoned() = listener;
        let status = self.input.status_sink();
        let listener = self.listener.clone();
        NotificationSink::new(move |note| {
            let progress = note.get("method").and_then(serde_json::Value::as_str)
                == Some(crate::protocol::method::PROGRESS);
            let heard = listener.lock_unpoisoned().clone();
            if let Some(heard) = heard
                && (own_token || !progress)
            {
                heard.send(note.clone());
            }
            if progress {
                status.send(note);
            }
        })
    }

    /// The requester no longer hears the run (its request was answered with the task):
    /// its sink is let go, and the run's progress reaches only the task's status message.
    pub(crate) fn stop_listening(&self) {
        self.listener.lock_unpoisoned().take();
    }
}

/// What [`Tasks::cancel`] found.
#[derive(Debug)]
pub(crate) enum Cancelled {
    /// The task was under way: it is cancelled now (the record after).
    Now(TaskRecord),
    /// The task had ended already (the record as it ended).
    Ended(TaskRecord),
}

impl Cancelled {
    /// The task as it is after the cancellation.
    pub(crate) fn into_record(self) -> TaskRecord {
        match self {
            Cancelled::Now(record) | Cancelled::Ended(record) => record,
        }
    }
}

impl Tasks {
    pub(crate) fn new(store: Arc<dyn TaskStore>, settings: TaskSettings) -> Arc<Self> {
        let tasks = Arc::new(Tasks {
            store,
            settings,
            clock: Clock::new(),
            live: Mutex::new(HashMap::new()),
            changed: Notify::new(),
        });
        tasks.store.attach(TaskRuns(Arc::downgrade(&tasks)));
        tasks
    }

    /// Whether the task store answers ([`TaskStore::health`]).
    #[cfg(feature = "http")]
    pub(crate) async fn store_health(&self) -> Result<(), TaskStoreError> {
        self.store.health().await
    }

    pub(crate) fn settings(&self) -> &TaskSettings {
        &self.settings
    }

    pub(crate) fn now_ms(&self) -> u64 {
        self.clock.now_ms()
    }

    /// What the call of a task about to start needs: its cancellation, and where its asks go.
    pub(crate) fn prepare(self: &Arc<Self>) -> Prepared {
        Prepared {
            cancel: CancellationToken::new(),
            input: Arc::new(TaskInput::new(Arc::downgrade(self))),
            watch: None,
            id_slot: None,
            listener: Arc::default(),
        }
    }

    /// Creates the task of `tool` for `requestor` (kept in the store before this returns),
    /// then spawns `run`, the call, and records how it ends. Needs a Tokio runtime.
    pub(crate) async fn start(
        self: &Arc<Self>,
        prepared: Prepared,
        tool: &str,
        requestor: Option<String>,
        ttl: Option<Duration>,
        run: BoxFuture<'static, TaskEnd>,
    ) -> Result<TaskRecord, TaskStoreError> {
        let runtime =
            tokio::runtime::Handle::try_current().map_err(|_| TaskStoreError::NoRuntime)?;
        let now = self.now_ms();
        // Whatever has expired goes first: its results are no longer kept.
        self.store.expire(now).await?;
        let record = TaskRecord {
            task_id: new_task_id()?,
            requestor,
            tool: tool.to_owned(),
            status: TaskStatus::Working,
            status_message: Some("The task is under way.".to_owned()),
            created_at_ms: now,
            last_updated_at_ms: now,
            ttl_ms: Some(millis(self.settings.ttl_for(ttl))),
            poll_interval_ms: millis(self.settings.poll_interval).max(1),
            input_requests: Default::default(),
            result: None,
            error: None,
            call_error: None,
        };
        self.store
            .create(record.clone(), self.settings.max_live_per_requestor)
            .await?;
        let id = record.task_id.clone();
        prepared.input.attach(&id);
        if let Some(slot) = &prepared.id_slot {
            let _ = slot.0.set(id.clone());
        }
        self.live.lock_unpoisoned().insert(
            id.clone(),
            Live {
                cancel: prepared.cancel.clone(),
                input: prepared.input.waiting(),
                watch: prepared.watch.clone(),
            },
        );
        let tasks = Arc::downgrade(self);
        runtime.spawn(drive(tasks, id, prepared.cancel, run));
        Ok(record)
    }

    /// The task `id` as `requestor` may see it: `None` when there is none, it has expired,
    /// or it is someone else's.
    pub(crate) async fn get(
        &self,
        id: &str,
        requestor: Option<&str>,
    ) -> Result<Option<TaskRecord>, TaskStoreError> {
        let record = self.store.get(id, self.now_ms()).await?;
        Ok(record.filter(|r| r.requestor.as_deref() == requestor))
    }

    /// Applies `change` to the task `id`, waking those who wait on it.
    pub(crate) async fn change(
        &self,
        id: &str,
        change: TaskChange,
    ) -> Result<Option<TaskRecord>, TaskStoreError> {
        let moves = !matches!(change, TaskChange::Message(_));
        let record = self.store.update(id, change, self.now_ms()).await?;
        self.changed.notify_waiters();
        if moves && let Some(record) = &record {
            self.tell_status(record);
        }
        Ok(record)
    }

    /// 2025-11-25 `notifications/tasks/status` to the session watching the task, if any.
    fn tell_status(&self, record: &TaskRecord) {
        let watch = self
            .live
            .lock_unpoisoned()
            .get(&record.task_id)
            .and_then(|live| live.watch.clone());
        if let Some(watch) = watch {
            let params = serde_json::to_value(record.legacy()).unwrap_or_default();
            watch.send(serde_json::json!({
                "jsonrpc": "2.0",
                "method": crate::protocol::method::TASKS_STATUS,
                "params": params,
            }));
        }
    }

    /// Cancels the task `id` (when it has not ended): marked `cancelled`, then its run
    /// stopped and its future dropped. The task is read once (is it `requestor`'s, has it
    /// ended?), and moved with the store's change, which leaves a task that ended meanwhile
    /// as it ended. `None` when there is no such task.
    pub(crate) async fn cancel(
        &self,
        id: &str,
        requestor: Option<&str>,
    ) -> Result<Option<Cancelled>, TaskStoreError> {
        let Some(record) = self.get(id, requestor).await? else {
            return Ok(None);
        };
        if record.status.is_terminal() {
            return Ok(Some(Cancelled::Ended(record)));
        }
        let Some(after) = self.change(id, TaskChange::End(TaskEnd::Cancelled)).await? else {
            return Ok(None);
        };
        if after.status != TaskStatus::Cancelled {
            return Ok(Some(Cancelled::Ended(after)));
        }
        if let Some(live) = self.live.lock_unpoisoned().remove(id) {
            live.cancel.cancel();
        }
        Ok(Some(Cancelled::Now(after)))
    }

    /// Hands `answers` (of `tasks/update`) to the task `id` waiting for them; answers to keys
    /// it is not waiting for are ignored. `None` when there is no such task.
    pub(crate) async fn answer(
        &self,
        id: &str,
        requestor: Option<&str>,
        answers: serde_json::Map<String, serde_json::Value>,
    ) -> Result<Option<()>, TaskStoreError> {
        let Some(record) = self.get(id, requestor).await? else {
            return Ok(None);
        };
        let waiting = self
            .live
            .lock_unpoisoned()
            .get(id)
            .map(|live| live.input.clone());
        let Some(waiting) = waiting else {
            // The task runs in another process (or no longer runs): the store hands the
            // answers on to it, when it is one shared with that process.
            let asked: serde_json::Map<String, serde_json::Value> = answers
                .into_iter()
                .filter(|(key, _)| record.input_requests.contains_key(key))
                .collect();
            if !asked.is_empty() {
                self.store.forward_answers(id, asked, self.now_ms()).await?;
                self.changed.notify_waiters();
            }
            return Ok(Some(()));
        };
        let keys: Vec<String> = answers
            .into_iter()
            .filter(|(key, _)| record.input_requests.contains_key(key))
            .filter_map(|(key, answer)| waiting.deliver(&key, answer).then_some(key))
            .collect();
        if !keys.is_empty() {
            self.change(id, TaskChange::Answered(keys)).await?;
        }
        Ok(Some(()))
    }

    /// A page of `requestor`'s tasks. An anonymous caller's are never listed: callers the
    /// server cannot tell apart would see each other's (they reach theirs by id).
    pub(crate) async fn list(
        &self,
        requestor: Option<&str>,
        cursor: Option<&str>,
        limit: usize,
    ) -> Result<TaskPage, TaskStoreError> {
        if requestor.is_none() {
            return Ok(TaskPage::default());
        }
        self.store
            .list(requestor, cursor, limit, self.now_ms())
            .await
    }

    /// The task `id` once it has ended (or expired: `None`). A task run by this process
    /// wakes the wait when it changes; one run elsewhere is polled at the poll interval.
    pub(crate) async fn ended(
        &self,
        id: &str,
        requestor: Option<&str>,
    ) -> Result<Option<TaskRecord>, TaskStoreError> {
        loop {
            let changed = self.changed.notified();
            let Some(record) = self.get(id, requestor).await? else {
                return Ok(None);
            };
            if record.status.is_terminal() {
                return Ok(Some(record));
            }
            let _ = tokio::time::timeout(self.settings.poll_interval, changed).await;
        }
    }

    /// Waits until this process runs no task.
    #[cfg(feature = "http")]
    pub(crate) async fn idle(&self) {
        loop {
            let changed = self.changed.notified();
            tokio::pin!(changed);
            changed.as_mut().enable();
            if self.live.lock_unpoisoned().is_empty() {
                return;
            }
            changed.await;
        }
    }

    /// Releases the tasks this process runs (it is shutting down): each still under way is
    /// recorded `failed` with `reason`, at once rather than when its lease runs out in a
    /// store shared with other replicas, and its run is stopped. How many.
    #[cfg(feature = "http")]
    pub(crate) async fn release(&self, reason: &str) -> usize {
        let live: Vec<(String, CancellationToken)> = self
            .live
            .lock_unpoisoned()
            .iter()
            .map(|(id, live)| (id.clone(), live.cancel.clone()))
            .collect();
        for (id, cancel) in &live {
            let error = crate::protocol::ErrorObject::new(
                crate::protocol::ErrorCode::INTERNAL_ERROR,
                reason,
            );
            if let Err(e) = self
                .change(id, TaskChange::End(TaskEnd::Failed(error)))
                .await
            {
                tracing::warn!(task = %id, error = %e, "could not record a released task as failed");
            }
            self.live.lock_unpoisoned().remove(id);
            cancel.cancel();
        }
        live.len()
    }

    fn finished(&self, id: &str) {
        self.live.lock_unpoisoned().remove(id);
        self.changed.notify_waiters();
    }
}

/// Runs a task's call to its end, unless it is cancelled first (its future dropped), and
/// records how it ended.
async fn drive(
    tasks: Weak<Tasks>,
    id: String,
    cancel: CancellationToken,
    run: BoxFuture<'static, TaskEnd>,
) {
    let end = cancel
        .run_until_cancelled(run)
        .await
        .unwrap_or(TaskEnd::Cancelled);
    let Some(tasks) = tasks.upgrade() else {
        return;
    };
    if let Err(e) = tasks.change(&id, TaskChange::End(end)).await {
        tracing::error!(task = %id, error = %e, "could not record how a task ended");
    }
    tasks.finished(&id);
}

/// A new task id: 128 random bits, as hex.
fn new_task_id() -> Result<String, TaskStoreError> {
    let mut bytes = [0_u8; 16];
    crate::random::fill(&mut bytes).map_err(|e| TaskStoreError::Backend(e.to_string()))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

impl TaskRecord {
    /// The task as 2026-07-28 shows it (`DetailedTask`): the result, error or input requests
    /// its status calls for inlined.
    pub fn detailed(&self) -> DetailedTask {
        DetailedTask {
            task_id: self.task_id.clone(),
            status: self.status,
            status_message: self.status_message.clone(),
            created_at: iso8601(self.created_at_ms),
            last_updated_at: iso8601(self.last_updated_at_ms),
            ttl_ms: self.ttl_ms,
            poll_interval_ms: Some(self.poll_interval_ms),
            input_requests: (self.status == TaskStatus::InputRequired)
                .then(|| self.input_requests.clone()),
            result: (self.status == TaskStatus::Completed)
                .then(|| self.result.clone())
                .flatten(),
            error: (self.status == TaskStatus::Failed)
                .then(|| self.error.clone())
                .flatten(),
        }
    }

    /// The task as 2025-11-25 shows it (`Task`).
    pub fn legacy(&self) -> LegacyTask {
        LegacyTask {
            task_id: self.task_id.clone(),
            status: self.status,
            status_message: self.status_message.clone(),
            created_at: iso8601(self.created_at_ms),
            last_updated_at: iso8601(self.last_updated_at_ms),
            ttl: self.ttl_ms,
            poll_interval: Some(self.poll_interval_ms),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::iso8601;

    #[test]
    fn iso8601_writes_utc_with_milliseconds() {
        assert_eq!(iso8601(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(iso8601(951_782_400_000), "2000-02-29T00:00:00.000Z");
        assert_eq!(iso8601(1_795_855_206_123), "2026-11-28T08:40:06.123Z");
        assert_eq!(iso8601(4_107_542_399_999), "2100-02-28T23:59:59.999Z");
    }

    /// The same text chrono wrote, from the epoch to past 2400, leap days included.
    #[cfg(feature = "testing")]
    #[test]
    fn iso8601_agrees_with_chrono() {
        use std::time::{Duration, UNIX_EPOCH};
        let mut ms: u64 = 0;
        while ms < 14_000_000_000_000 {
            let at = UNIX_EPOCH + Duration::from_millis(ms);
            let chrono = chrono::DateTime::<chrono::Utc>::from(at)
                .to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
            assert_eq!(iso8601(ms), chrono, "{ms}");
            ms += 3_600_017_393;
        }
    }
}
