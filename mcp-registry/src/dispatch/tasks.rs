//! Tasks over MCP: a `tools/call` run as a task, and the methods that follow one.
//!
//! - 2026-07-28, the extension `io.modelcontextprotocol/tasks` (SEP-2663): a request that
//!   declares the extension in its `_meta` capabilities may get a task for a task-supporting
//!   tool. The call's first poll runs in the request (an answer at once, or `input_required`
//!   for what it asks first); a call still under way after it becomes a task
//!   (`resultType: "task"`), and what it asks later becomes the task's `inputRequests`.
//!   `tasks/get` (the result inlined), `tasks/update`, `tasks/cancel`; each refused with
//!   -32021 from a request that does not declare the extension.
//! - 2025-11-25 experimental tasks: `tools/call` with `task` creates one at once;
//!   `tasks/get`, `tasks/result` (waits for the end), `tasks/list`, `tasks/cancel`.
//!
//! One request kind in two layers, named alike: its run through the registry (in-process API and pipeline) in `registry/tasks.rs`.

use std::sync::Arc;
use std::task::Poll;
use std::time::Duration;

use futures_util::FutureExt as _;
use serde::Serialize;
use serde_json::{Map, Value};

use super::{
    Answer, Body, Dispatcher, Outcome, Routed, Step, ToolCallParts, finish_call, invalid_params,
    outcome, read_params,
};
use crate::protocol::meta::RequestMeta;
use crate::protocol::{
    CreateTaskResult, DetailedTask, Era, ErrorCode, ErrorObject, LegacyTask, ListTasksResult,
    META_CLIENT_CAPABILITIES, META_RELATED_TASK, ProtocolVersion, ResultType, TASKS_EXTENSION,
    TaskIdParams, TaskRequest, TaskStatus, TaskSupport, UpdateTaskParams, method, value_kind,
};
use crate::registry::scope::RequestInfo;
use crate::registry::{CallOptions, TaskLaunch, TaskRun, end_of};
use crate::server::Server;
use crate::task::{Cancelled, TaskRecord, TaskStoreError, Tasks, requestor_of};

use super::round::Retry;

/// The method-specific part of a task method's result.
#[derive(Serialize)]
#[serde(untagged)]
pub(crate) enum TaskBody {
    /// 2026-07-28: a task (`tasks/get`, and `CreateTaskResult` with `resultType: "task"`).
    Detailed(DetailedTask),
    /// 2025-11-25 `tasks/get` and `tasks/cancel`.
    Legacy(LegacyTask),
    /// 2025-11-25 `CreateTaskResult`.
    Created(CreateTaskResult),
    /// 2025-11-25 `tasks/list`.
    List(ListTasksResult),
    /// 2025-11-25 `tasks/result`: the call's own result.
    Result(Map<String, Value>),
    /// An acknowledgement (`tasks/update`, 2026-07-28 `tasks/cancel`).
    Empty {},
}

/// How a `tools/call` runs.
pub(super) enum TaskMode {
    /// As a plain call.
    Plain,
    /// 2026-07-28: its first poll in the request, then as a task if still under way.
    Modern,
    /// 2025-11-25: as a task at once, kept for the time to live asked for.
    Legacy(Option<Duration>),
}

/// How `tools/call` of `server`'s tool `name` runs, with the legacy `task` member `task`.
pub(super) fn mode(
    server: &Server,
    name: &str,
    era: Era,
    task: Option<Value>,
    meta: Option<&RequestMeta>,
) -> Result<TaskMode, ErrorObject> {
    // (A server with no task tools never gets here: it advertises no tasks, and whatever a
    // request says of them is ignored, as 2025-11-25 requires.)
    let support = server
        .tool_entry(name)
        .map_or(TaskSupport::Forbidden, |(tool, _)| tool.task_support());
    if era.is_modern() {
        // The 2025-11-25 `task` member means nothing here: ignored.
        return match (support, declares_extension(meta)) {
            (TaskSupport::Forbidden, _) | (TaskSupport::Optional, false) => Ok(TaskMode::Plain),
            (_, true) => Ok(TaskMode::Modern),
            (TaskSupport::Required, false) => Err(missing_extension(format!(
                "tool {name:?} runs only as a task: declare the `{TASKS_EXTENSION}` extension in the request's `_meta.{META_CLIENT_CAPABILITIES}.extensions`"
            ))),
        };
    }
    match (support, task) {
        (TaskSupport::Required, None) => Err(ErrorObject::new(
            ErrorCode::METHOD_NOT_FOUND,
            format!(
                "tool {name:?} runs only as a task: call it with `params.task` (e.g. {{\"ttl\": 60000}})"
            ),
        )),
        (_, None) => Ok(TaskMode::Plain),
        (TaskSupport::Forbidden, Some(_)) => Err(ErrorObject::new(
            ErrorCode::METHOD_NOT_FOUND,
            format!("tool {name:?} does not run as a task: call it without `params.task`"),
        )),
        (_, Some(task)) => {
            let task: TaskRequest = serde_json::from_value(task).map_err(|e| {
                invalid_params(format!(
                    "`params.task` must be an object like {{\"ttl\": 60000}}: {e}"
                ))
            })?;
            Ok(TaskMode::Legacy(task.ttl.map(Duration::from_millis)))
        }
    }
}

/// Whether a request's `_meta` capabilities declare the tasks extension.
fn declares_extension(meta: Option<&RequestMeta>) -> bool {
    meta.and_then(|m| m.get(META_CLIENT_CAPABILITIES))
        .and_then(|c| c.get("extensions"))
        .and_then(|e| e.get(TASKS_EXTENSION))
        .is_some()
}

/// -32021, naming the tasks extension as the capability the request lacks.
fn missing_extension(message: String) -> ErrorObject {
    let mut error = ErrorObject::new(ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY, message);
    error.data = Some(serde_json::json!({
        "requiredCapabilities": {"extensions": {TASKS_EXTENSION: {}}}
    }));
    error
}

/// A `tools/call` to run as a task.
pub(super) struct TaskCall<'a> {
    pub(super) dispatcher: Dispatcher<'a>,
    pub(super) server: Server,
    pub(super) call: ToolCallParts<'a>,
    pub(super) mode: TaskMode,
    pub(super) version: Option<ProtocolVersion>,
    pub(super) info: RequestInfo,
    pub(super) retry: Option<Retry>,
}

/// Starts a `tools/call` as a task ([`TaskMode::Modern`] or [`TaskMode::Legacy`]): through
/// the registry's pipeline like any call, set up as a task by [`TaskLaunch`].
pub(super) fn start(task: TaskCall<'_>, options: &mut CallOptions) -> Step {
    let TaskCall {
        dispatcher,
        server,
        call,
        mode,
        version,
        mut info,
        retry,
    } = task;
    let tasks = dispatcher.registry.config().tasks.clone();
    let tool_name = call.name.to_string();
    let run = TaskRun {
        ttl: match mode {
            TaskMode::Legacy(ttl) => ttl,
            _ => None,
        },
        tool_limit: server.tool_entry(&tool_name).and_then(|(t, _)| t.timeout()),
        legacy: matches!(mode, TaskMode::Legacy(_)),
    };
    let launch = TaskLaunch::new(&tasks, options, &mut info, run);
    let (call, round) = match dispatcher.call_tool(&server, call, options, info, retry) {
        Ok(started) => started,
        Err(e) => return Step::Answered(Answer::Error(e)),
    };
    let modern = matches!(mode, TaskMode::Modern);
    Step::Waiting(Box::pin(async move {
        let mut call = call;
        if modern {
            // The first poll runs in the request: a call that ends in it (or stops to ask)
            // is answered as a plain call, its notifications on the request's stream.
            let first = std::future::poll_fn(|cx| Poll::Ready(call.poll_unpin(cx))).await;
            if let Poll::Ready(result) = first {
                return finish_call(Some(&server), version, round.as_deref(), result);
            }
            if let Some(round) = &round {
                round.escalate(launch.input().escalation());
            }
            // Answered with the task: the extension has no progress or log notifications
            // on tasks, so the run's progress is the task's status message alone.
            launch.stop_listening();
        }
        let run = Box::pin(async move { end_of(call.await) });
        match launch.start(&tool_name, run).await {
            Ok(record) if modern => Answer::Result(Outcome::modern(
                &server,
                Body::Task(Box::new(TaskBody::Detailed(record.detailed()))),
                ResultType::Task,
            )),
            Ok(record) => Answer::Result(outcome(
                &server,
                version,
                Body::Task(Box::new(TaskBody::Created(CreateTaskResult {
                    task: record.legacy(),
                }))),
            )),
            Err(e) => Answer::Error(store_error(e)),
        }
    }))
}

/// A store's failure as the request's error.
fn store_error(error: TaskStoreError) -> ErrorObject {
    let code = match error {
        TaskStoreError::TooManyTasks { .. } => ErrorCode::INVALID_REQUEST,
        _ => ErrorCode::INTERNAL_ERROR,
    };
    ErrorObject::new(code, error.to_string())
}

fn unknown_task(id: &str) -> ErrorObject {
    invalid_params(format!(
        "unknown task {id:?}: it does not exist, has expired, or belongs to another requestor"
    ))
}

/// What every task method starts with: the tasks, the requestor, and (2026-07-28) the
/// extension declared.
struct Ask {
    tasks: Arc<Tasks>,
    requestor: Option<String>,
    server: Server,
    version: Option<ProtocolVersion>,
    params: Map<String, Value>,
}

impl Ask {
    fn of(request: Routed<'_>, options: &CallOptions) -> Result<Self, ErrorObject> {
        if request.era.is_modern() && !declares_extension(request.meta.as_deref()) {
            return Err(missing_extension(format!(
                "{} needs the `{TASKS_EXTENSION}` extension: declare it in the request's `_meta.{META_CLIENT_CAPABILITIES}.extensions`",
                request.method
            )));
        }
        Ok(Ask {
            tasks: request.registry.config().tasks.clone(),
            requestor: requestor_of(&options.extensions, &options.caller),
            server: request.server.clone(),
            version: request.version,
            params: request.params,
        })
    }

    fn answer(&self, body: TaskBody) -> Answer {
        Answer::Result(outcome(
            &self.server,
            self.version,
            Body::Task(Box::new(body)),
        ))
    }

    fn modern(&self) -> bool {
        self.version == Some(ProtocolVersion::MODERN)
    }

    /// The task the params name (`taskId`).
    fn task_id(&self, method: &str) -> Result<String, ErrorObject> {
        let TaskIdParams { task_id } = read_params(method, self.params.clone())?;
        Ok(task_id)
    }

    /// The task the params name, as its requestor sees it.
    async fn task(&self, method: &str) -> Result<TaskRecord, ErrorObject> {
        let task_id = self.task_id(method)?;
        self.tasks
            .get(&task_id, self.requestor.as_deref())
            .await
            .map_err(store_error)?
            .ok_or_else(|| unknown_task(&task_id))
    }
}

/// Runs a task method: `f` with the request's [`Ask`], unless the request may not ask.
fn serve<F, Fut>(request: Routed<'_>, options: &mut CallOptions, f: F) -> Step
where
    F: FnOnce(Ask) -> Fut + Send + 'static,
    Fut: Future<Output = Result<Answer, ErrorObject>> + Send + 'static,
{
    match Ask::of(request, options) {
        Ok(ask) => Step::Waiting(Box::pin(async move {
            f(ask).await.unwrap_or_else(Answer::Error)
        })),
        Err(e) => Step::Answered(Answer::Error(e)),
    }
}

/// `tasks/get`: the task (2026-07-28 with its result, error or input requests inlined).
pub(crate) fn get(request: Routed<'_>, options: &mut CallOptions) -> Step {
    serve(request, options, |ask| async move {
        let record = ask.task(method::TASKS_GET).await?;
        Ok(ask.answer(if ask.modern() {
            TaskBody::Detailed(record.detailed())
        } else {
            TaskBody::Legacy(record.legacy())
        }))
    })
}

/// `tasks/update` (2026-07-28): answers to the task's input requests; an empty ack.
pub(crate) fn update(request: Routed<'_>, options: &mut CallOptions) -> Step {
    serve(request, options, |ask| async move {
        let UpdateTaskParams {
            task_id,
            input_responses,
        } = read_params(method::TASKS_UPDATE, ask.params.clone())?;
        ask.tasks
            .answer(&task_id, ask.requestor.as_deref(), input_responses)
            .await
            .map_err(store_error)?
            .ok_or_else(|| unknown_task(&task_id))?;
        Ok(ask.answer(TaskBody::Empty {}))
    })
}

/// `tasks/cancel`: the task cancelled (its call's future dropped). 2026-07-28: an empty ack,
/// a task that has ended included. 2025-11-25: the task, and -32602 for one that has ended.
pub(crate) fn cancel(request: Routed<'_>, options: &mut CallOptions) -> Step {
    serve(request, options, |ask| async move {
        let task_id = ask.task_id(method::TASKS_CANCEL)?;
        let cancelled = ask
            .tasks
            .cancel(&task_id, ask.requestor.as_deref())
            .await
            .map_err(store_error)?
            .ok_or_else(|| unknown_task(&task_id))?;
        match cancelled {
            _ if ask.modern() => Ok(ask.answer(TaskBody::Empty {})),
            Cancelled::Now(record) => Ok(ask.answer(TaskBody::Legacy(record.legacy()))),
            Cancelled::Ended(record) => Err(invalid_params(format!(
                "task {:?} has ended ({}): only a task under way can be cancelled",
                record.task_id, record.status
            ))),
        }
    })
}

/// `tasks/result` (2025-11-25): once the task has ended, what its call answered: the
/// result (with the task named in `_meta`), or the error.
pub(crate) fn result(request: Routed<'_>, options: &mut CallOptions) -> Step {
    serve(request, options, |ask| async move {
        let task_id = ask.task_id(method::TASKS_RESULT)?;
        let ended = ask
            .tasks
            .ended(&task_id, ask.requestor.as_deref())
            .await
            .map_err(store_error)?
            .ok_or_else(|| unknown_task(&task_id))?;
        match ended.status {
            TaskStatus::Completed => {
                let mut result = match ended.result {
                    Some(Value::Object(result)) => result,
                    _ => Map::new(),
                };
                let meta = result
                    .entry("_meta")
                    .or_insert_with(|| Value::Object(Map::new()));
                if let Value::Object(meta) = meta {
                    meta.insert(
                        META_RELATED_TASK.to_owned(),
                        serde_json::json!({"taskId": ended.task_id}),
                    );
                }
                Ok(ask.answer(TaskBody::Result(result)))
            }
            TaskStatus::Failed => Err(ended
                .error
                .unwrap_or_else(|| ErrorObject::new(ErrorCode::INTERNAL_ERROR, "the task failed"))),
            _ => Err(ErrorObject::new(
                ErrorCode::INTERNAL_ERROR,
                format!("task {:?} was cancelled: it has no result", ended.task_id),
            )),
        }
    })
}

/// `tasks/list` (2025-11-25): a page of the requestor's tasks.
pub(crate) fn list(request: Routed<'_>, options: &mut CallOptions) -> Step {
    let page_size = request.registry.config().page_size.unwrap_or(50).max(1);
    serve(request, options, move |ask| async move {
        let cursor = match ask.params.get("cursor") {
            None | Some(Value::Null) => None,
            Some(Value::String(cursor)) => Some(cursor.clone()),
            Some(other) => {
                return Err(invalid_params(format!(
                    "`cursor` must be a string, got {}",
                    value_kind(other)
                )));
            }
        };
        let requestor = ask.requestor.as_deref();
        if let Some(cursor) = &cursor
            && ask
                .tasks
                .get(cursor, requestor)
                .await
                .map_err(store_error)?
                .is_none()
        {
            return Err(invalid_params(format!(
                "invalid cursor {cursor:?}: use the `nextCursor` of the previous page"
            )));
        }
        let page = ask
            .tasks
            .list(requestor, cursor.as_deref(), page_size)
            .await
            .map_err(store_error)?;
        Ok(ask.answer(TaskBody::List(ListTasksResult {
            tasks: page.tasks.iter().map(TaskRecord::legacy).collect(),
            next_cursor: page.next_cursor,
        })))
    })
}
