//! Tasks in-process: [`CallRequest::as_task`](super::CallRequest) starts a tool call as a
//! task, and a [`TaskHandle`] follows it (its state, its result, its input, its
//! cancellation), as a client does over MCP.

use std::future::IntoFuture;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value};

use super::call::{ToolCall, object_arguments};
use super::scope::RequestInfo;
use super::{CallError, CallOptions, Registry, WithOptions};
use crate::protocol::{CallToolResult, ErrorCode, ErrorObject, TaskStatus};
use crate::task::{RelayInput, TaskEnd, TaskRecord, TaskRequestor, TaskStoreError};
use crate::tool::BoxFuture;

impl<'a> WithOptions<ToolCall<'a>> {
    /// Starts the call as a task instead of awaiting its result: `.await` gives a
    /// [`TaskHandle`] once the task is kept in the registry's store, while the tool runs on
    /// the Tokio runtime. The tool must run as a task
    /// ([`ToolBuilder::task_support`](crate::ToolBuilder::task_support)).
    ///
    /// The call's options hold: its layers, its notifications (progress reaches the sink
    /// while the task runs), its host state. Its input handler answers what the tool asks
    /// (the task `input_required` meanwhile); with none, the asks wait in the task's
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
        let prepared = tasks.prepare();
        let requestor = options
            .extensions
            .get::<TaskRequestor>()
            .map(|r| r.0.clone());
        let (run, tool) = {
            let snapshot = self.snapshot();
            let target = snapshot.resolve(&call.name)?;
            let tool = target.tool.name().to_owned();
            if !target.tool.task_support().allows_tasks() {
                return Err(CallError::NotATask { tool });
            }
            let arguments = object_arguments(&tool, call.arguments)?;
            let limit = target
                .tool
                .timeout()
                .or(tasks.settings().ttl_for(ttl))
                .unwrap_or(Duration::from_secs(3600));
            options = options.timeout(limit);
            options.cancellation = Some(prepared.cancel.clone());
            if options.notifications.is_none() {
                // No one listens: progress becomes the task's status message.
                options.notifications = Some(prepared.input.status_sink());
                options
                    .meta
                    .get_or_insert_with(Map::new)
                    .entry("progressToken")
                    .or_insert_with(|| Value::String("task".to_owned()));
            }
            options.input = Some(match options.input.take() {
                Some(handler) => Arc::new(RelayInput::new(handler, &prepared.input)),
                None => prepared.input.as_handler(),
            });
            let run = self.invoke(
                target,
                arguments.into(),
                &mut options,
                RequestInfo::default(),
            );
            (run, tool)
        };
        let run = Box::pin(async move { end_of(run.await) });
        let record = tasks
            .start(prepared, &tool, requestor.clone(), ttl, run)
            .await
            .map_err(store_error)?;
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

/// How a task's call ended, as the task records it: a result (a tool's own error
/// included), a JSON-RPC error (a panic, a layer's rejection), or cancelled.
pub(crate) fn end_of(result: Result<CallToolResult, CallError>) -> TaskEnd {
    let result = match result {
        Ok(result) => result,
        Err(CallError::Cancelled { .. }) => return TaskEnd::Cancelled,
        Err(CallError::Rejected { error, .. }) => return TaskEnd::Failed(error),
        Err(CallError::Panicked { tool, message }) => {
            return TaskEnd::Failed(ErrorObject::new(
                ErrorCode::INTERNAL_ERROR,
                format!("tool {tool:?} failed: {message}"),
            ));
        }
        Err(e) => e.into_call_tool_result(),
    };
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
    /// given ([`CallError::Cancelled`] for a cancelled task, [`CallError::Rejected`] for
    /// one that failed with a JSON-RPC error).
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
