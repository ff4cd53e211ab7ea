//! [`RedisTaskStore`]: tasks kept in Redis, so every replica answers for every task while
//! each task runs in the replica that started it.
//!
//! Keys (under the connection's prefix, `mcp:{prefix}:`):
//!
//! - `task:{id}`: the record ([`TaskRecord`] as JSON), expiring with the task's time to live;
//! - `task-lease:{id}`: present while the replica running the task is alive (it renews the
//!   lease; a record still under way without one belongs to a replica that died);
//! - `task-answers:{id}`: answers to the task's input requests received by another replica,
//!   on their way to the task's own;
//! - `tasks-order:{requestor}`: the requestor's tasks in creation order (a sorted set scored
//!   by `tasks-seq`), `tasks-live:{requestor}`: those under way (the live bound).
//!
//! Every change is a compare-and-set: the record is read, changed in Rust
//! ([`TaskChange::apply`], the one definition of how a task moves), and written back by a Lua
//! script only if it is still what was read (retried otherwise). WATCH/MULTI would need a
//! connection of its own per change: a replica's commands share one multiplexed connection,
//! where WATCH would see everybody's writes.

use std::sync::{Arc, Mutex, OnceLock, Weak};
use std::time::Duration;

use redis::Script;
use serde_json::{Map, Value};
use tokio::task::JoinHandle;

use super::{Redis, RedisUnavailable};
use crate::protocol::{ErrorCode, ErrorObject};
use crate::sync::MutexExt;
use crate::task::{
    TaskChange, TaskEnd, TaskPage, TaskRecord, TaskRuns, TaskStore, TaskStoreError, millis,
};
use crate::tool::BoxFuture;

/// How often, by default, a replica renews the leases of its tasks and picks up what other
/// replicas did to them (cancellations, answers).
const DEFAULT_WATCH: Duration = Duration::from_millis(250);
/// How long, by default, a task outlives the last renewal of its lease: a replica that died
/// has its tasks failed this long after.
const DEFAULT_LEASE: Duration = Duration::from_secs(15);
/// The longest lease (and three times the longest watch interval).
const MAX_LEASE: Duration = Duration::from_secs(24 * 3600);
/// The longest time to live Redis is asked to keep a task (ten years; longer ones are cut).
const MAX_TTL_MS: u64 = 10 * 365 * 24 * 3600 * 1000;
/// How many times a change is tried when other writes keep changing the record first.
const CAS_TRIES: usize = 32;

/// Creates a task unless its id is taken (1) or its requestor has `limit` tasks under way
/// (2). KEYS: record, lease, order, live, seq. ARGV: id, record, ttl ms (or empty), lease ms,
/// limit, record key prefix, lease key prefix.
const CREATE: &str = r#"
if redis.call('EXISTS', KEYS[1]) == 1 then return 1 end
local live = 0
for _, id in ipairs(redis.call('SMEMBERS', KEYS[4])) do
  if redis.call('EXISTS', ARGV[6] .. id) == 0 then
    redis.call('SREM', KEYS[4], id)
  elseif redis.call('EXISTS', ARGV[7] .. id) == 1 then
    live = live + 1
  end
end
if live >= tonumber(ARGV[5]) then return 2 end
local seq = redis.call('INCR', KEYS[5])
if ARGV[3] == '' then
  redis.call('SET', KEYS[1], ARGV[2])
else
  redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
end
redis.call('SET', KEYS[2], '1', 'PX', ARGV[4])
redis.call('ZADD', KEYS[3], seq, ARGV[1])
redis.call('SADD', KEYS[4], ARGV[1])
for i = 3, 4 do
  local left = redis.call('PTTL', KEYS[i])
  if ARGV[3] == '' then
    redis.call('PERSIST', KEYS[i])
  elseif left ~= -1 and left < tonumber(ARGV[3]) then
    redis.call('PEXPIRE', KEYS[i], ARGV[3])
  end
end
return 0
"#;

/// Writes a record if it is still what was read (1; else 0); an ended task loses its lease,
/// its pending answers and its live slot; answers (ARGV[5..], key and value) are left for
/// the task's replica. KEYS: record, lease, live, answers. ARGV: read, new, ended (1/0), id.
const SWAP: &str = r#"
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2], 'KEEPTTL')
if ARGV[3] == '1' then
  redis.call('DEL', KEYS[2], KEYS[4])
  redis.call('SREM', KEYS[3], ARGV[4])
elseif #ARGV > 4 then
  for i = 5, #ARGV, 2 do
    redis.call('HSET', KEYS[4], ARGV[i], ARGV[i + 1])
  end
  local left = redis.call('PTTL', KEYS[1])
  if left > 0 then redis.call('PEXPIRE', KEYS[4], left) end
end
return 1
"#;

/// A replica's heartbeat: for each of its tasks (KEYS: record, lease, answers), `running`
/// (its lease renewed, ARGV[1] ms, and the answers waiting for it taken), `ended`, or `gone`.
const HEARTBEAT: &str = r#"
local out = {}
for i = 1, #KEYS, 3 do
  local raw = redis.call('GET', KEYS[i])
  local state = 'gone'
  local answers = {}
  if raw then
    local ok, record = pcall(cjson.decode, raw)
    local status = ok and record['status'] or 'failed'
    if status == 'working' or status == 'input_required' then
      state = 'running'
      redis.call('SET', KEYS[i + 1], '1', 'PX', ARGV[1])
      answers = redis.call('HGETALL', KEYS[i + 2])
      if #answers > 0 then redis.call('DEL', KEYS[i + 2]) end
    else
      state = 'ended'
    end
  end
  out[#out + 1] = {state, answers}
end
return out
"#;

/// A [`TaskStore`] in Redis, for servers run as several replicas: any replica answers
/// `tasks/get`, `tasks/result`, `tasks/list`, `tasks/cancel` and `tasks/update` for any task.
///
/// A task runs in the replica that started it. That replica renews a lease on each of its
/// tasks (every [`watch_interval`](Self::watch_interval)) and, in the same round trip,
/// picks up what other replicas did: a task cancelled elsewhere has its run stopped, answers
/// to its input requests received elsewhere reach the run. A replica that dies stops
/// renewing: once a task's [`lease`](Self::lease) runs out, the next replica that reads it
/// marks it `failed` ("the replica running this task stopped"). Such a task is not run
/// again, even for a tool that could be: its arguments, its caller's identity and the host
/// state its run had live only in the replica that died; the client, told it failed, calls
/// the tool again.
///
/// Records, their results included, expire with the task's time to live (Redis key expiry).
/// The bound on a requestor's live tasks holds across replicas (checked and taken in one
/// script). While Redis cannot be reached, task requests fail with a clear error (within
/// about 2 seconds) and other requests are unaffected; tasks work again once it is back
/// (those kept in a Redis that restarted empty are gone). Needs Redis 6.0 or later,
/// standalone (or a primary), not Redis Cluster.
///
/// ```no_run
/// # fn demo() -> Result<(), mcp_registry::replicas::RedisUnavailable> {
/// use std::time::Duration;
/// use mcp_registry::Registry;
/// use mcp_registry::replicas::{Redis, RedisTaskStore};
///
/// // Every replica of the server: the same Redis, the same prefix.
/// let redis = Redis::new("redis://127.0.0.1:6379/")?.prefix("notes");
/// let registry = Registry::builder()
///     .task_store(RedisTaskStore::new(redis).lease(Duration::from_secs(30)))
///     .build();
/// # let _ = registry;
/// # Ok(()) }
/// ```
pub struct RedisTaskStore {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for RedisTaskStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisTaskStore")
            .field("redis", &self.inner.redis)
            .field("lease", &self.inner.lease)
            .field("watch_interval", &self.inner.watch)
            .finish()
    }
}

struct Inner {
    redis: Redis,
    lease: Duration,
    watch: Duration,
    runs: OnceLock<TaskRuns>,
    watcher: Mutex<Option<JoinHandle<()>>>,
    scripts: Scripts,
}

struct Scripts {
    create: Script,
    swap: Script,
    heartbeat: Script,
}

impl Drop for Inner {
    fn drop(&mut self) {
        if let Some(watcher) = self.watcher.get_mut().ok().and_then(Option::take) {
            watcher.abort();
        }
    }
}

/// A record as read, with what it was read from.
struct Loaded {
    raw: String,
    record: TaskRecord,
    leased: bool,
}

impl RedisTaskStore {
    /// Tasks kept in the Redis `redis` connects to (under its prefix): a lease of 15
    /// seconds, renewed every 250 ms.
    pub fn new(redis: Redis) -> Self {
        Self::with(redis, DEFAULT_LEASE, DEFAULT_WATCH)
    }

    fn with(redis: Redis, lease: Duration, watch: Duration) -> Self {
        let watch = watch.clamp(Duration::from_millis(1), MAX_LEASE / 3);
        RedisTaskStore {
            inner: Arc::new(Inner {
                redis,
                lease: lease.clamp(watch.saturating_mul(3), MAX_LEASE),
                watch,
                runs: OnceLock::new(),
                watcher: Mutex::new(None),
                scripts: Scripts {
                    create: Script::new(CREATE),
                    swap: Script::new(SWAP),
                    heartbeat: Script::new(HEARTBEAT),
                },
            }),
        }
    }

    /// How long a task stays `working` after its replica last renewed its lease: the bound
    /// on how late a dead replica's tasks are marked failed (default 15 s; at least three
    /// watch intervals, at most a day). A replica stalled longer than this (a pause, a partition from
    /// Redis) finds its tasks failed and stops them. Set before the store is used.
    pub fn lease(self, lease: Duration) -> Self {
        Self::with(self.inner.redis.clone(), lease, self.inner.watch)
    }

    /// How often a replica renews its tasks' leases and picks up cancellations and answers
    /// other replicas received (default 250 ms): how late a cancellation through another
    /// replica stops the run. One round trip per interval per replica with tasks under way.
    /// Set before the store is used.
    pub fn watch_interval(self, interval: Duration) -> Self {
        Self::with(self.inner.redis.clone(), self.inner.lease, interval)
    }
}

impl Inner {
    fn record_key(&self, id: &str) -> String {
        self.redis.key(&format!("task:{id}"))
    }

    fn lease_key(&self, id: &str) -> String {
        self.redis.key(&format!("task-lease:{id}"))
    }

    fn answers_key(&self, id: &str) -> String {
        self.redis.key(&format!("task-answers:{id}"))
    }

    fn requestor_key(&self, kind: &str, requestor: Option<&str>) -> String {
        match requestor {
            None => self.redis.key(&format!("tasks-{kind}:-")),
            Some(who) => self.redis.key(&format!("tasks-{kind}:={who}")),
        }
    }

    fn failed(&self, error: &redis::RedisError) -> TaskStoreError {
        backend(&self.redis.unavailable(error))
    }

    async fn connection(&self) -> Result<redis::aio::ConnectionManager, TaskStoreError> {
        self.redis.connection().await.map_err(|e| backend(&e))
    }

    /// The record `id` as kept, and whether its lease is alive.
    async fn load(&self, id: &str) -> Result<Option<Loaded>, TaskStoreError> {
        let mut conn = self.connection().await?;
        let (raw, lease): (Option<String>, Option<String>) = redis::cmd("MGET")
            .arg(self.record_key(id))
            .arg(self.lease_key(id))
            .query_async(&mut conn)
            .await
            .map_err(|e| self.failed(&e))?;
        raw.map(|raw| {
            let record = parse(id, &raw)?;
            Ok(Loaded {
                raw,
                record,
                leased: lease.is_some(),
            })
        })
        .transpose()
    }

    /// Writes `record` over `read` unless it changed meanwhile (`false`), with `answers` for
    /// the task's replica.
    async fn swap(
        &self,
        read: &str,
        record: &TaskRecord,
        answers: &[(String, String)],
    ) -> Result<bool, TaskStoreError> {
        let id = &record.task_id;
        let new = serde_json::to_string(record)
            .map_err(|e| TaskStoreError::Backend(format!("task {id:?} unwritable: {e}")))?;
        let ended = if record.status.is_terminal() {
            "1"
        } else {
            "0"
        };
        let mut invocation = self.scripts.swap.prepare_invoke();
        invocation
            .key(self.record_key(id))
            .key(self.lease_key(id))
            .key(self.requestor_key("live", record.requestor.as_deref()))
            .key(self.answers_key(id))
            .arg(read)
            .arg(new)
            .arg(ended)
            .arg(id);
        for (key, answer) in answers {
            invocation.arg(key).arg(answer);
        }
        let mut conn = self.connection().await?;
        let swapped: i64 = invocation
            .invoke_async(&mut conn)
            .await
            .map_err(|e| self.failed(&e))?;
        Ok(swapped == 1)
    }

    /// The error a task whose replica died ends with.
    fn dead(&self) -> TaskEnd {
        TaskEnd::Failed(ErrorObject::new(
            ErrorCode::INTERNAL_ERROR,
            format!(
                "the replica running this task stopped (its lease of {} ms was not renewed): the task did not finish; call the tool again",
                millis(self.lease)
            ),
        ))
    }

    /// Applies `change` as a compare-and-set, a dead replica's task failed first: `change`
    /// moves the record as read and gives the answers (key, JSON) it leaves for the task's
    /// replica. `None`: no such task (or expired at `now_ms`).
    async fn change(
        &self,
        id: &str,
        change: impl Fn(&mut TaskRecord) -> Vec<(String, String)>,
        now_ms: u64,
    ) -> Result<Option<TaskRecord>, TaskStoreError> {
        for _ in 0..CAS_TRIES {
            let Some(loaded) = self.load(id).await? else {
                return Ok(None);
            };
            if loaded.record.expired(now_ms) {
                return Ok(None);
            }
            let mut record = loaded.record.clone();
            if !record.status.is_terminal() && !loaded.leased {
                TaskChange::End(self.dead()).apply(&mut record, now_ms);
            }
            let answers = change(&mut record);
            if record == loaded.record && answers.is_empty() {
                return Ok(Some(record));
            }
            if self.swap(&loaded.raw, &record, &answers).await? {
                return Ok(Some(record));
            }
        }
        Err(TaskStoreError::Backend(format!(
            "task {id:?} kept changing under {CAS_TRIES} tries to change it; try again"
        )))
    }

    async fn create(&self, record: TaskRecord, limit: usize) -> Result<(), TaskStoreError> {
        let id = &record.task_id;
        let text = serde_json::to_string(&record)
            .map_err(|e| TaskStoreError::Backend(format!("task {id:?} unwritable: {e}")))?;
        let ttl = record
            .ttl_ms
            .map(|t| t.clamp(1, MAX_TTL_MS).to_string())
            .unwrap_or_default();
        let requestor = record.requestor.as_deref();
        let mut conn = self.connection().await?;
        let created: i64 = self
            .scripts
            .create
            .key(self.record_key(id))
            .key(self.lease_key(id))
            .key(self.requestor_key("order", requestor))
            .key(self.requestor_key("live", requestor))
            .key(self.redis.key("tasks-seq"))
            .arg(id)
            .arg(text)
            .arg(ttl)
            .arg(super::expiry_ms(self.lease))
            .arg(limit)
            .arg(self.record_key(""))
            .arg(self.lease_key(""))
            .invoke_async(&mut conn)
            .await
            .map_err(|e| self.failed(&e))?;
        match created {
            0 => Ok(()),
            1 => Err(TaskStoreError::Duplicate(id.clone())),
            _ => Err(TaskStoreError::TooManyTasks { limit }),
        }
    }

    async fn get(&self, id: &str, now_ms: u64) -> Result<Option<TaskRecord>, TaskStoreError> {
        let Some(loaded) = self.load(id).await? else {
            return Ok(None);
        };
        if loaded.record.expired(now_ms) {
            return Ok(None);
        }
        if loaded.record.status.is_terminal() || loaded.leased {
            return Ok(Some(loaded.record));
        }
        // Under way with no lease: its replica died. Marked failed (by whoever gets there
        // first).
        self.change(id, |_| Vec::new(), now_ms).await
    }

    /// Leaves `answers` to the task's input requests for its replica, recording them
    /// answered: one compare-and-set on the record as read (answers to keys it does not
    /// list are dropped).
    async fn forward(
        &self,
        id: &str,
        answers: Map<String, Value>,
        now_ms: u64,
    ) -> Result<bool, TaskStoreError> {
        let answered = |record: &mut TaskRecord| {
            let pending: Vec<(String, String)> = answers
                .iter()
                .filter(|(key, _)| record.input_requests.contains_key(*key))
                .map(|(key, answer)| (key.clone(), answer.to_string()))
                .collect();
            if !pending.is_empty() {
                let keys = pending.iter().map(|(key, _)| key.clone()).collect();
                TaskChange::Answered(keys).apply(record, now_ms);
            }
            pending
        };
        self.change(id, answered, now_ms).await?;
        Ok(true)
    }
}

impl Inner {
    /// A page of `requestor`'s tasks from `cursor` (inclusive), in creation order; the
    /// entries of expired tasks are dropped on the way.
    async fn list(
        &self,
        requestor: Option<&str>,
        cursor: Option<&str>,
        limit: usize,
        now_ms: u64,
    ) -> Result<TaskPage, TaskStoreError> {
        let order = self.requestor_key("order", requestor);
        let mut conn = self.connection().await?;
        let mut from = "-inf".to_owned();
        if let Some(cursor) = cursor {
            let score: Option<f64> = redis::cmd("ZSCORE")
                .arg(&order)
                .arg(cursor)
                .query_async(&mut conn)
                .await
                .map_err(|e| self.failed(&e))?;
            if let Some(score) = score {
                from = score.to_string();
            }
        }
        let batch = limit.saturating_add(1).min(1_000);
        let mut page = TaskPage::default();
        let mut gone = Vec::new();
        'batches: loop {
            let (entries, last) = self.batch(&mut conn, &order, &from, batch).await?;
            let Some(last) = last else {
                break;
            };
            from = format!("({last}");
            let full = entries.len() == batch;
            for (id, raw, leased) in entries {
                let Some(raw) = raw else {
                    gone.push(id);
                    continue;
                };
                let mut record = parse(&id, &raw)?;
                if record.expired(now_ms) {
                    continue;
                }
                if page.tasks.len() == limit {
                    page.next_cursor = Some(id);
                    break 'batches;
                }
                if !record.status.is_terminal()
                    && !leased
                    && let Some(failed) = self.change(&id, |_| Vec::new(), now_ms).await?
                {
                    record = failed;
                }
                page.tasks.push(record);
            }
            if !full {
                break;
            }
        }
        if !gone.is_empty() {
            // Best effort: the next listing drops them as well.
            let _: Result<i64, _> = redis::cmd("ZREM")
                .arg(&order)
                .arg(gone)
                .query_async(&mut conn)
                .await;
        }
        Ok(page)
    }

    /// Up to `size` entries of the sorted set `order` from the score `from`: each task's
    /// id, record (if still kept) and whether its lease is alive; and the last score.
    async fn batch(
        &self,
        conn: &mut redis::aio::ConnectionManager,
        order: &str,
        from: &str,
        size: usize,
    ) -> Result<(Vec<(String, Option<String>, bool)>, Option<f64>), TaskStoreError> {
        let ids: Vec<(String, f64)> = redis::cmd("ZRANGEBYSCORE")
            .arg(order)
            .arg(from)
            .arg("+inf")
            .arg("WITHSCORES")
            .arg("LIMIT")
            .arg(0)
            .arg(size)
            .query_async(conn)
            .await
            .map_err(|e| self.failed(&e))?;
        let Some(&(_, last)) = ids.last() else {
            return Ok((Vec::new(), None));
        };
        let mut keys: Vec<String> = ids.iter().map(|(id, _)| self.record_key(id)).collect();
        keys.extend(ids.iter().map(|(id, _)| self.lease_key(id)));
        let mut values: Vec<Option<String>> = redis::cmd("MGET")
            .arg(keys)
            .query_async(conn)
            .await
            .map_err(|e| self.failed(&e))?;
        let leases = values.split_off(ids.len().min(values.len()));
        let entries = ids
            .into_iter()
            .zip(values.into_iter().zip(leases))
            .map(|((id, _), (raw, lease))| (id, raw, lease.is_some()))
            .collect();
        Ok((entries, Some(last)))
    }

    /// Starts the heartbeat of this replica's tasks, unless it runs already.
    fn watch(self: &Arc<Self>) {
        let mut watcher = self.watcher.lock_unpoisoned();
        if watcher.as_ref().is_some_and(|w| !w.is_finished()) {
            return;
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        *watcher = Some(runtime.spawn(heartbeats(Arc::downgrade(self), self.watch)));
    }

    /// Renews the leases of the tasks running here, stops those that ended elsewhere, and
    /// hands them the answers other replicas received.
    async fn heartbeat(&self, runs: &TaskRuns) -> Result<(), TaskStoreError> {
        let ids = runs.running();
        if ids.is_empty() {
            return Ok(());
        }
        let mut invocation = self.scripts.heartbeat.prepare_invoke();
        for id in &ids {
            invocation
                .key(self.record_key(id))
                .key(self.lease_key(id))
                .key(self.answers_key(id));
        }
        invocation.arg(super::expiry_ms(self.lease));
        let mut conn = self.connection().await?;
        let states: Vec<(String, Vec<String>)> = invocation
            .invoke_async(&mut conn)
            .await
            .map_err(|e| self.failed(&e))?;
        for (id, (state, answers)) in ids.iter().zip(states) {
            match state.as_str() {
                "running" => {
                    if !answers.is_empty() {
                        runs.deliver(id, answer_map(&answers));
                    }
                }
                _ => runs.stop(id),
            }
        }
        Ok(())
    }
}

/// The heartbeat loop: one round every `every`, until the store or the registry is dropped
/// (or the runtime stops: a replica that dies stops renewing).
async fn heartbeats(inner: Weak<Inner>, every: Duration) {
    let mut tick = tokio::time::interval(every);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut failing = false;
    loop {
        tick.tick().await;
        let Some(inner) = inner.upgrade() else {
            return;
        };
        let Some(runs) = inner.runs.get().cloned() else {
            return;
        };
        if !runs.is_alive() {
            return;
        }
        // Told once per outage, not every round.
        match inner.heartbeat(&runs).await {
            Err(e) if !failing => {
                failing = true;
                tracing::warn!(error = %e, "could not renew the leases of this replica's tasks; retrying");
            }
            Ok(()) if failing => {
                failing = false;
                tracing::info!("the leases of this replica's tasks are renewed again");
            }
            _ => {}
        }
    }
}

/// `HGETALL`'s flat key, value list as answers (values that are not JSON dropped).
fn answer_map(flat: &[String]) -> Map<String, Value> {
    flat.chunks_exact(2)
        .filter_map(|pair| {
            let answer = serde_json::from_str(&pair[1]).ok()?;
            Some((pair[0].clone(), answer))
        })
        .collect()
}

impl TaskStore for RedisTaskStore {
    fn create(
        &self,
        record: TaskRecord,
        live_limit: usize,
    ) -> BoxFuture<'_, Result<(), TaskStoreError>> {
        Box::pin(async move {
            self.inner.create(record, live_limit).await?;
            self.inner.watch();
            Ok(())
        })
    }

    fn get<'a>(
        &'a self,
        task_id: &'a str,
        now_ms: u64,
    ) -> BoxFuture<'a, Result<Option<TaskRecord>, TaskStoreError>> {
        Box::pin(self.inner.get(task_id, now_ms))
    }

    fn update<'a>(
        &'a self,
        task_id: &'a str,
        change: TaskChange,
        now_ms: u64,
    ) -> BoxFuture<'a, Result<Option<TaskRecord>, TaskStoreError>> {
        let apply = move |record: &mut TaskRecord| {
            change.clone().apply(record, now_ms);
            Vec::new()
        };
        Box::pin(async move { self.inner.change(task_id, apply, now_ms).await })
    }

    fn list<'a>(
        &'a self,
        requestor: Option<&'a str>,
        cursor: Option<&'a str>,
        limit: usize,
        now_ms: u64,
    ) -> BoxFuture<'a, Result<TaskPage, TaskStoreError>> {
        Box::pin(self.inner.list(requestor, cursor, limit, now_ms))
    }

    /// Nothing to do: Redis drops each task's keys when its time to live is over.
    fn expire(&self, _now_ms: u64) -> BoxFuture<'_, Result<usize, TaskStoreError>> {
        Box::pin(std::future::ready(Ok(0)))
    }

    /// A `PING` to the store's Redis.
    fn health(&self) -> BoxFuture<'_, Result<(), TaskStoreError>> {
        Box::pin(async move { self.inner.redis.ping().await.map_err(|e| backend(&e)) })
    }

    fn attach(&self, runs: TaskRuns) {
        if self.inner.runs.set(runs).is_err() {
            tracing::warn!(
                "a RedisTaskStore serves one registry: give each registry its own (they may share a Redis)"
            );
        }
    }

    fn forward_answers<'a>(
        &'a self,
        task_id: &'a str,
        answers: Map<String, Value>,
        now_ms: u64,
    ) -> BoxFuture<'a, Result<bool, TaskStoreError>> {
        Box::pin(self.inner.forward(task_id, answers, now_ms))
    }
}

/// A record read back from Redis.
fn parse(id: &str, raw: &str) -> Result<TaskRecord, TaskStoreError> {
    serde_json::from_str(raw).map_err(|e| {
        TaskStoreError::Backend(format!(
            "the record of task {id:?} in Redis is not a task record ({e}); was the key prefix shared with something else? Give each server its own with Redis::prefix"
        ))
    })
}

/// Redis unreachable, as a store's error.
fn backend(error: &RedisUnavailable) -> TaskStoreError {
    TaskStoreError::Backend(error.to_string())
}
