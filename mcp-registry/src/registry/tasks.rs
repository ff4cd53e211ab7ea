//! Tasks in-process: [`CallRequest::as_task`](super::CallRequest) starts a tool call as a
//! task, and a [`TaskHandle`] follows it (its state, its result, its input, its
//! cancellation), as a client does over MCP.
//!
//! One request kind in two layers, named alike: its MCP methods in `dispatch/tasks.rs`.

use std::future::IntoFuture;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value};

use super::scope::RequestInfo;
use super::tools::{ToolCall, object_arguments};
use super::{CallError, CallOptions, Registry, WithOptions};
use crate::protocol::{CallToolResult, ErrorCode, ErrorObject, TaskStatus};
use crate::task::{
    Cancelled, Prepared, RelayInput, SessionStream, TaskEnd, TaskIdSlot, TaskInput, TaskRecord,
    TaskStoreError, Tasks, requestor_of,
};
use crate::tool::BoxFuture;

impl<'a> WithOptions<ToolCall<'a>> {
    /// Starts the call as a task instead of awaiting its result: `.await` gives a
    /// [`TaskHandle`] once the task is kept in the registry's store, while the tool runs on
    /// the Tokio runtime. The tool must run as a task
    /// ([`ToolBuilder::task_support`](crate::ToolBuilder::task_support)).
    ///
    /// The call's options hold: its layers, its notifications (what the tool sends reaches
    /// the sink while the task runs, its progress with the options' progress token; the
    /// progress is the task's status message too), its host state. Its input handler
    /// answers what the tool asks (the task `input_required` meanwhile); with none, the
    /// asks wait in the task's
    /// [`input_requests`](TaskRecord::input_requests) for [`TaskHandle::answer`].
    ///
    /// ```
    /// use mcp_registry::protocol::TaskSupport;
    /// use mcp_registry::{Registry, Server, Tool};
    /// use serde_json::{Value, json};
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let build = Tool::builder("build")
    ///     .task_support(TaskSupport::Optional)
    ///     .raw(json!({"type": "object"}), |_: Value| async { "built" })
    ///     .unwrap();
    /// let registry = Registry::from_servers([Server::new("ci", None, [build]).unwrap()]);
    /// let task = registry.call_tool_by_name("build", json!({})).as_task().await.unwrap();
    /// let result = task.result().await.unwrap();
    /// assert_eq!(result.first_text(), Some("built"));
    /// # }
    /// ```
    pub fn as_task(self) -> TaskStart<'a> {
        TaskStart {
            call: self,
            ttl: None,
        }
    }
}

/// A tool call to start as a task: what [`as_task`](WithOptions::as_task) returns, to
/// `.await`.
#[must_use = "a task starts when awaited"]
pub struct TaskStart<'a> {
    call: WithOptions<ToolCall<'a>>,
    ttl: Option<Duration>,
}

impl TaskStart<'_> {
    /// How long to keep the task (and its result) from its creation, capped by the
    /// registry's [`TaskSettings`](crate::task::TaskSettings).
    pub fn ttl(mut self, ttl: Duration) -> Self {
        self.ttl = Some(ttl);
        self
    }
}

impl<'a> IntoFuture for TaskStart<'a> {
    type Output = Result<TaskHandle, CallError>;
    type IntoFuture = BoxFuture<'a, Result<TaskHandle, CallError>>;

    fn into_future(self) -> Self::IntoFuture {
        let TaskStart { call, ttl } = self;
        let WithOptions { target, options } = call;
        Box::pin(target.registry.start_task(target, options, ttl))
    }
}

impl Registry {
    /// Resolves the tool, starts its call through the pipeline with the task's
    /// cancellation, input and time limit, and keeps the task.
    async fn start_task(
        &self,
        call: ToolCall<'_>,
        mut options: CallOptions,
        ttl: Option<Duration>,
    ) -> Result<TaskHandle, CallError> {
        let tasks = self.config().tasks.clone();
        let (launch, run, tool) = {
            let snapshot = self.snapshot();
            let target = snapshot.resolve(&call.name)?;
            let tool = target.tool.name().to_owned();
            if !target.tool.task_support().allows_tasks() {
                return Err(CallError::NotATask { tool });
            }
            let arguments = object_arguments(&tool, call.arguments)?;
            let mut info = RequestInfo::default();
            let run = TaskRun {
                ttl,
                tool_limit: target.tool.timeout(),
                legacy: false,
            };
            let launch = TaskLaunch::new(&tasks, &mut options, &mut info, run);
            // With no handler of the host's, the asks wait in the task's input requests
            // for `TaskHandle::answer`.
            if info.input.is_none() {
                info.input = Some(launch.input().as_handler());
            }
            let run = self.invoke(target, arguments.into(), &mut options, info);
            (launch, run, tool)
        };
        let requestor = launch.requestor.clone();
        let run = Box::pin(async move { end_of(run.await) });
        let record = launch.start(&tool, run).await.map_err(store_error)?;
        Ok(TaskHandle {
            registry: self.clone(),
            id: record.task_id,
            tool,
            requestor,
        })
    }

    /// A handle on the task `id`, started in-process or over MCP (with no requestor: a task
    /// a client with an identity started is not shown to it).
    pub fn task(&self, id: impl Into<String>) -> TaskHandle {
        TaskHandle {
            registry: self.clone(),
            id: id.into(),
            tool: String::new(),
            requestor: None,
        }
    }
}

/// How a task's run is bounded and who started it.
pub(crate) struct TaskRun {
    /// The time to live asked for (`None`: the registry's default).
    pub(crate) ttl: Option<Duration>,
    /// The tool's own time limit; without one, the task's time to live bounds the run.
    pub(crate) tool_limit: Option<Duration>,
    /// A 2025-11-25 task: its status changes are told to the requester's session
    /// (`notifications/tasks/status`), and its asks name it.
    pub(crate) legacy: bool,
}

/// A task about to start, its call set up to run as one: the one place that does so, for a
/// task started in-process ([`TaskStart`]) and over MCP alike.
pub(crate) struct TaskLaunch {
    tasks: Arc<Tasks>,
    prepared: Prepared,
    pub(crate) requestor: Option<String>,
    ttl: Option<Duration>,
}

impl TaskLaunch {
    /// Sets the call of `options` and `info` up to run as a task of `tasks`: its time limit
    /// (the tool's own, else the task's time to live), the task's cancellation, its input
    /// through the task (the call's handler, if any, relayed with the task `input_required`
    /// meanwhile) and its notifications ([`Prepared::run_sink`]): progress becomes the
    /// task's status message, and the requester (the session's own stream for a legacy
    /// task, else the call's sink) hears everything the run sends while it listens.
    pub(crate) fn new(
        tasks: &Arc<Tasks>,
        options: &mut CallOptions,
        info: &mut RequestInfo,
        run: TaskRun,
    ) -> Self {
        let requestor = requestor_of(&options.extensions, &options.caller);
        let mut prepared = tasks.prepare();
        let listener = match options.extensions.get::<SessionStream>() {
            Some(stream) => Some(stream.0.clone()),
            None => options.notifications.take(),
        };
        if run.legacy {
            prepared.watch = listener.clone();
            prepared.id_slot = options.extensions.get::<TaskIdSlot>().cloned();
        }
        let limit = run
            .tool_limit
            .unwrap_or_else(|| tasks.settings().ttl_for(run.ttl));
        *options = std::mem::take(options).timeout(limit);
        options.cancellation = Some(prepared.cancel.clone());
        // The run gets a progress token of its own when the request had none: its progress
        // is the task's status message either way.
        let meta = info
            .meta
            .get_or_insert_with(|| options.meta.take().unwrap_or_default());
        let own_token = meta.contains_key("progressToken");
        if !own_token {
            meta.insert("progressToken".to_owned(), Value::String("task".to_owned()));
        }
        options.notifications = Some(prepared.run_sink(listener, own_token));
        if let Some(handler) = info.input.take().or_else(|| options.input.take()) {
            info.input = Some(Arc::new(RelayInput::new(handler, &prepared.input)));
        }
        TaskLaunch {
            tasks: tasks.clone(),
            prepared,
            requestor,
            ttl: run.ttl,
        }
    }

    /// Where the run's asks go as the task's input requests.
    pub(crate) fn input(&self) -> &Arc<TaskInput> {
        &self.prepared.input
    }

    /// The requester stops hearing the run ([`Prepared::stop_listening`]).
    pub(crate) fn stop_listening(&self) {
        self.prepared.stop_listening();
    }

    /// Keeps the task of `tool` and spawns `run`, its call.
    pub(crate) async fn start(
        self,
        tool: &str,
        run: BoxFuture<'static, TaskEnd>,
    ) -> Result<TaskRecord, TaskStoreError> {
        self.tasks
            .start(self.prepared, tool, self.requestor, self.ttl, run)
            .await
    }
}

/// How a task's call ended, as the task records it: a result (a tool's own error
/// included), or cancelled; a failed call keeps its [`CallError`] next to what MCP shows of
/// it ([`TaskEnd::CallFailed`]): a JSON-RPC error for a panic or a layer's rejection, a
/// result with `isError` for the rest.
pub(crate) fn end_of(result: Result<CallToolResult, CallError>) -> TaskEnd {
    let error = match result {
        Ok(result) => return completed(result),
        Err(CallError::Cancelled { .. }) => return TaskEnd::Cancelled,
        Err(error) => error,
    };
    let wire = match &error {
        CallError::Rejected { error, .. } => TaskEnd::Failed(error.clone()),
        CallError::Panicked { tool, message } => TaskEnd::Failed(ErrorObject::new(
            ErrorCode::INTERNAL_ERROR,
            format!("tool {tool:?} failed: {message}"),
        )),
        other => completed(other.clone().into_call_tool_result()),
    };
    match serde_json::to_value(&error) {
        Ok(error) => TaskEnd::CallFailed {
            wire: Box::new(wire),
            error,
        },
        Err(_) => wire,
    }
}

/// A task completed with `result`.
fn completed(result: CallToolResult) -> TaskEnd {
    match serde_json::to_value(result) {
        Ok(value) => TaskEnd::Completed(value),
        Err(e) => TaskEnd::Failed(ErrorObject::new(
            ErrorCode::INTERNAL_ERROR,
            format!("the tool's result could not be written: {e}"),
        )),
    }
}

fn store_error(error: TaskStoreError) -> CallError {
    CallError::TaskStore {
        message: error.to_string(),
    }
}

/// A task of a registry, to follow: its state, its result once it ends, the answers to
/// its input requests, its cancellation. Cheap to clone; the task lives on when the handle
/// is dropped (until its time to live is over).
#[derive(Debug, Clone)]
pub struct TaskHandle {
    registry: Registry,
    id: String,
    tool: String,
    requestor: Option<String>,
}

impl TaskHandle {
    /// The task's id (what `tasks/get` names over MCP).
    pub fn id(&self) -> &str {
        &self.id
    }

    fn unknown(&self) -> CallError {
        CallError::UnknownTask {
            task: self.id.clone(),
        }
    }

    /// The task as it is now ([`CallError::UnknownTask`] once it has expired).
    pub async fn state(&self) -> Result<TaskRecord, CallError> {
        let tasks = &self.registry.config().tasks;
        tasks
            .get(&self.id, self.requestor.as_deref())
            .await
            .map_err(store_error)?
            .ok_or_else(|| self.unknown())
    }

    /// The call's result, once the task has ended: what awaiting the call would have
    /// given, errors included (the same [`CallError`]: [`ToolFailed`](CallError::ToolFailed),
    /// [`Denied`](CallError::Denied), [`Timeout`](CallError::Timeout),
    /// [`Panicked`](CallError::Panicked), [`Cancelled`](CallError::Cancelled), ..), whichever
    /// replica ran it. A task that failed with a JSON-RPC error that no call of this registry
    /// gave (its replica stopped) is [`CallError::Rejected`].
    pub async fn result(&self) -> Result<CallToolResult, CallError> {
        let tasks = &self.registry.config().tasks;
        let record = tasks
            .ended(&self.id, self.requestor.as_deref())
            .await
            .map_err(store_error)?
            .ok_or_else(|| self.unknown())?;
        let tool = if self.tool.is_empty() {
            record.tool.clone()
        } else {
            self.tool.clone()
        };
        if let Some(error) = record.call_error {
            return Err(
                serde_json::from_value(error).map_err(|e| CallError::TaskStore {
                    message: format!("the task's error is not a call error: {e}"),
                })?,
            );
        }
        match record.status {
            TaskStatus::Completed => serde_json::from_value(record.result.unwrap_or_default())
                .map_err(|e| CallError::TaskStore {
                    message: format!("the task's result is not a tool result: {e}"),
                }),
            TaskStatus::Failed => Err(CallError::Rejected {
                tool,
                error: record.error.unwrap_or_else(|| {
                    ErrorObject::new(ErrorCode::INTERNAL_ERROR, "the task failed")
                }),
            }),
            _ => Err(CallError::Cancelled { tool }),
        }
    }

    /// Cancels the task (when it has not ended): it is `cancelled`, and the tool's future is
    /// dropped. The task as it is after.
    pub async fn cancel(&self) -> Result<TaskRecord, CallError> {
        let tasks = &self.registry.config().tasks;
        tasks
            .cancel(&self.id, self.requestor.as_deref())
            .await
            .map_err(store_error)?
            .map(Cancelled::into_record)
            .ok_or_else(|| self.unknown())
    }

    /// Answers the task's input requests, by key (as `tasks/update` does): each answer is
    /// the result of its request (an `ElicitResult` for `elicitation/create`). Answers to
    /// keys the task is not waiting for are ignored.
    pub async fn answer(&self, answers: Map<String, Value>) -> Result<(), CallError> {
        let tasks = &self.registry.config().tasks;
        tasks
            .answer(&self.id, self.requestor.as_deref(), answers)
            .await
            .map_err(store_error)?
            .ok_or_else(|| self.unknown())
    }
}
