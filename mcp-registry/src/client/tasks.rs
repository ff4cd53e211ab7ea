//! Tasks from the client's side: a tool call the server runs as a task, followed to its
//! end (polled at the server's interval, its input requests answered by the client's
//! handlers), started explicitly ([`Client::call_tool_as_task`]) or met on the way
//! ([`Client::call_tool`] follows it and returns the result).
//!
//! 2026-07-28: every request declares the tasks extension; the server decides, and a
//! `resultType: "task"` answer is a task. 2025-11-25: a call asks for a task with `task`
//! (always for a tool listed as `execution.taskSupport: "required"`); the result comes from
//! `tasks/result`.

use std::collections::HashSet;
use std::sync::Mutex;
use std::time::Duration;

use serde::de::IgnoredAny;
use serde::{Deserialize, Deserializer};
use serde_json::{Map, Value};

use super::ClientError;
use super::driver::{Client, parse};
use super::policy::RequestOptions;
use super::request::ClientRequest;
use crate::protocol::{
    CallToolResult, CreateTaskResult, DetailedTask, LegacyTask, ProtocolEra, ResultType,
    TaskIdParams, TaskRequest, TaskStatus, TaskSupport, ToolDescriptor, UpdateTaskParams, method,
    params_of,
};
use crate::sync::MutexExt;

/// How often to poll a task whose server suggests no interval.
const DEFAULT_POLL: Duration = Duration::from_secs(1);
/// The shortest interval polled at, whatever the server suggests.
const MIN_POLL: Duration = Duration::from_millis(10);

/// The members of a `tools/call` result that say whether it started a task.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct CallResultKind {
    /// 2026-07-28: `task` starts one; a kind this crate does not know (or not a string) is
    /// none, and the result is read as the tool's.
    #[serde(default, deserialize_with = "known_result_type")]
    result_type: Option<ResultType>,
    /// 2025-11-25: a `task` member (without `content`) starts one.
    #[serde(default, deserialize_with = "present")]
    task: bool,
    /// Whether there is `content`.
    #[serde(default, deserialize_with = "present")]
    content: bool,
}

/// `resultType` when it names a kind this crate knows.
fn known_result_type<'de, D: Deserializer<'de>>(d: D) -> Result<Option<ResultType>, D::Error> {
    Ok(ResultType::deserialize(Value::deserialize(d)?).ok())
}

/// Whether the member is there, whatever it holds (`null` too).
fn present<'de, D: Deserializer<'de>>(d: D) -> Result<bool, D::Error> {
    IgnoredAny::deserialize(d).map(|_| true)
}

/// What a tool call started as a task gave: the result at once (the server chose not to
/// make a task of it), or the task to follow.
#[derive(Debug)]
pub enum ToolTask {
    /// The server answered at once.
    Finished(CallToolResult),
    /// The call goes on as a task.
    Started(ClientTask),
}

/// A task on the server, followed by this client: its state ([`status`](Self::status)),
/// its result once it ends ([`result`](Self::result)), its input
/// ([`answer`](Self::answer)), its cancellation ([`cancel`](Self::cancel)).
#[derive(Debug)]
pub struct ClientTask {
    client: Client,
    id: String,
    tool: String,
    modern: bool,
    poll: Mutex<Duration>,
    /// Input request keys answered already (a key is unique over a task's life).
    answered: Mutex<HashSet<String>>,
}

/// `tools/call` as a task: what [`Client::call_tool_as_task`] sends.
#[derive(Debug)]
pub struct CallToolAsTask<'a> {
    client: &'a Client,
    name: &'a str,
    arguments: Value,
}

/// A task's result, polled to its end: what [`ClientTask::result`] awaits.
#[derive(Debug)]
pub struct TaskResult<'a> {
    task: &'a ClientTask,
}

super::request::target!(CallToolAsTask => ToolTask, |t, o| t.client.run_call_tool_as_task(t.name, t.arguments, &o));
super::request::target!(TaskResult => CallToolResult, |t, o| t.task.run_result(&o));

impl Client {
    /// Calls tool `name` as a task: on 2026-07-28 the server decides (it may answer at
    /// once: [`ToolTask::Finished`]); on 2025-11-25 the call asks for one with `task`.
    pub fn call_tool_as_task<'a>(
        &'a self,
        name: &'a str,
        arguments: Value,
    ) -> ClientRequest<CallToolAsTask<'a>> {
        ClientRequest::new(CallToolAsTask {
            client: self,
            name,
            arguments,
        })
    }

    /// What [`call_tool_as_task`](Self::call_tool_as_task) runs.
    pub(super) async fn run_call_tool_as_task(
        &self,
        name: &str,
        arguments: Value,
        options: &RequestOptions,
    ) -> Result<ToolTask, ClientError> {
        let result = self.send_tool_call(name, arguments, options, true).await?;
        self.read_tool_task(name, result)
    }

    /// A task by id (one started earlier, perhaps by another connection), to follow.
    pub fn task(&self, id: impl Into<String>) -> ClientTask {
        self.follow(String::new(), id.into(), DEFAULT_POLL)
    }

    fn follow(&self, tool: String, id: String, poll: Duration) -> ClientTask {
        ClientTask {
            client: self.clone(),
            id,
            tool,
            modern: self.is_modern(),
            poll: Mutex::new(poll.max(MIN_POLL)),
            answered: Mutex::default(),
        }
    }

    fn is_modern(&self) -> bool {
        self.protocol_version()
            .is_some_and(|v| v.era() == ProtocolEra::Modern)
    }

    /// A `tools/call` result read: a task (2026-07-28 `resultType: "task"`, 2025-11-25
    /// `{"task": ..}`) or the tool's result.
    pub(super) fn read_tool_task(
        &self,
        name: &str,
        result: Value,
    ) -> Result<ToolTask, ClientError> {
        // Anything but an object is no task (its read as the tool's result says what is wrong).
        let kind = match &result {
            Value::Object(_) => CallResultKind::deserialize(&result).unwrap_or_default(),
            _ => CallResultKind::default(),
        };
        let (id, poll_ms) = if kind.result_type == Some(ResultType::Task) {
            let task: DetailedTask = parse(method::TOOLS_CALL, result)?;
            (task.task_id, task.poll_interval_ms)
        } else if !self.is_modern() && kind.task && !kind.content {
            let created: CreateTaskResult = parse(method::TOOLS_CALL, result)?;
            (created.task.task_id, created.task.poll_interval)
        } else {
            return parse(method::TOOLS_CALL, result).map(ToolTask::Finished);
        };
        let poll = poll_ms.map_or(DEFAULT_POLL, Duration::from_millis);
        Ok(ToolTask::Started(self.follow(name.to_owned(), id, poll)))
    }

    /// The `task` member of a 2025-11-25 call of `name`: asked for, or the tool runs only
    /// as a task. None on 2026-07-28 (the server decides there).
    pub(super) fn legacy_task(&self, name: &str, as_task: bool) -> Option<TaskRequest> {
        if self.is_modern() {
            return None;
        }
        (as_task || self.inner.task_tools.lock_unpoisoned().contains(name))
            .then(TaskRequest::default)
    }

    /// Remembers which listed tools run only as tasks.
    pub(super) fn remember_task_tools(&self, tools: &[ToolDescriptor]) {
        let mut required = self.inner.task_tools.lock_unpoisoned();
        for tool in tools {
            let support = tool.execution.and_then(|e| e.task_support);
            if support == Some(TaskSupport::Required) {
                required.insert(tool.name.clone());
            } else {
                required.remove(&tool.name);
            }
        }
    }
}

/// A 2025-11-25 task as 2026-07-28 shows one: nothing inlined (its result comes from
/// `tasks/result`, its input over the session).
impl From<LegacyTask> for DetailedTask {
    fn from(task: LegacyTask) -> Self {
        DetailedTask {
            task_id: task.task_id,
            status: task.status,
            status_message: task.status_message,
            created_at: task.created_at,
            last_updated_at: task.last_updated_at,
            ttl_ms: task.ttl,
            poll_interval_ms: task.poll_interval,
            input_requests: None,
            result: None,
            error: None,
        }
    }
}

impl ClientTask {
    /// The task's id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The params naming this task (`tasks/get`, `tasks/result`, `tasks/cancel`).
    fn params(&self) -> Option<Map<String, Value>> {
        Some(params_of(&TaskIdParams {
            task_id: self.id.clone(),
        }))
    }

    /// The task as the server shows it now (`tasks/get`; a 2025-11-25 task has no result
    /// or input requests inlined).
    pub async fn status(&self) -> Result<DetailedTask, ClientError> {
        self.status_with(&RequestOptions::default()).await
    }

    async fn status_with(&self, options: &RequestOptions) -> Result<DetailedTask, ClientError> {
        let result = self
            .client
            .run_request(
                method::TASKS_GET,
                self.params(),
                &RequestOptions {
                    policy: None,
                    ..options.clone()
                },
            )
            .await?;
        let task: DetailedTask = if self.modern {
            parse(method::TASKS_GET, result)?
        } else {
            parse::<LegacyTask>(method::TASKS_GET, result)?.into()
        };
        if let Some(ms) = task.poll_interval_ms {
            *self.poll.lock_unpoisoned() = Duration::from_millis(ms).max(MIN_POLL);
        }
        Ok(task)
    }

    /// The call's result once the task ends, polling at the server's interval and
    /// answering its input requests with the client's handlers (2026-07-28; on 2025-11-25
    /// the server asks over the session as usual).
    ///
    /// A timeout set on the request applies to each poll; its cancellation cancels the task
    /// too.
    pub fn result(&self) -> ClientRequest<TaskResult<'_>> {
        ClientRequest::new(TaskResult { task: self })
    }

    /// Deprecated: `result().options(options)`.
    #[deprecated(since = "0.1.0", note = "use `result().options(options)`")]
    #[doc(hidden)]
    pub async fn result_with(
        &self,
        options: &RequestOptions,
    ) -> Result<CallToolResult, ClientError> {
        self.run_result(options).await
    }

    /// What [`result`](Self::result) runs.
    pub(super) async fn run_result(
        &self,
        options: &RequestOptions,
    ) -> Result<CallToolResult, ClientError> {
        loop {
            let task = self.status_with(options).await?;
            match task.status {
                TaskStatus::Completed if self.modern => {
                    return parse(method::TOOLS_CALL, task.result.unwrap_or_default());
                }
                TaskStatus::Failed if self.modern => {
                    return Err(ClientError::Server {
                        method: method::TOOLS_CALL.to_owned(),
                        error: task.error.unwrap_or_else(|| {
                            crate::protocol::ErrorObject::new(
                                crate::protocol::ErrorCode::INTERNAL_ERROR,
                                "the task failed",
                            )
                        }),
                    });
                }
                TaskStatus::Cancelled => {
                    return Err(ClientError::Cancelled {
                        method: method::TOOLS_CALL.to_owned(),
                    });
                }
                TaskStatus::Completed | TaskStatus::Failed => {
                    return self.legacy_result(options).await;
                }
                TaskStatus::InputRequired if self.modern => self.answer_requests(task).await?,
                _ => {}
            }
            let wait = *self.poll.lock_unpoisoned();
            match &options.cancellation {
                Some(token) => {
                    if token
                        .run_until_cancelled(tokio::time::sleep(wait))
                        .await
                        .is_none()
                    {
                        let _ = self.cancel().await;
                        return Err(ClientError::Cancelled {
                            method: method::TOOLS_CALL.to_owned(),
                        });
                    }
                }
                None => tokio::time::sleep(wait).await,
            }
        }
    }

    /// 2025-11-25: `tasks/result` of an ended task.
    async fn legacy_result(&self, options: &RequestOptions) -> Result<CallToolResult, ClientError> {
        let result = self
            .client
            .run_request(
                method::TASKS_RESULT,
                self.params(),
                &RequestOptions {
                    policy: None,
                    ..options.clone()
                },
            )
            .await?;
        parse(method::TASKS_RESULT, result)
    }

    /// Answers the input requests of `task` not answered yet, with the client's handlers.
    async fn answer_requests(&self, task: DetailedTask) -> Result<(), ClientError> {
        let mut answers = Map::new();
        for (key, request) in task.input_requests.unwrap_or_default() {
            if self.answered.lock_unpoisoned().contains(&key) {
                continue;
            }
            let answer = self
                .client
                .answer(&request.method, request.params)
                .await
                .map_err(|error| ClientError::Server {
                    method: request.method.clone(),
                    error,
                })?;
            answers.insert(key, answer);
        }
        if answers.is_empty() {
            return Ok(());
        }
        self.answer(answers).await
    }

    /// Answers the task's input requests by key (`tasks/update`, 2026-07-28): each answer
    /// the result of its request (an `ElicitResult` for `elicitation/create`).
    pub async fn answer(&self, answers: Map<String, Value>) -> Result<(), ClientError> {
        let keys: Vec<String> = answers.keys().cloned().collect();
        let params = UpdateTaskParams {
            task_id: self.id.clone(),
            input_responses: answers,
        };
        self.client
            .run_request(
                method::TASKS_UPDATE,
                Some(params_of(&params)),
                &RequestOptions::default(),
            )
            .await?;
        self.answered.lock_unpoisoned().extend(keys);
        Ok(())
    }

    /// Cancels the task (`tasks/cancel`).
    pub async fn cancel(&self) -> Result<(), ClientError> {
        self.client
            .run_request(
                method::TASKS_CANCEL,
                self.params(),
                &RequestOptions::default(),
            )
            .await
            .map(|_| ())
    }

    /// The tool the task runs (empty for a task followed by id).
    pub fn tool(&self) -> &str {
        &self.tool
    }
}

#[cfg(test)]
mod tests {
    use serde::Deserialize;
    use serde_json::json;

    use super::CallResultKind;
    use crate::protocol::ResultType;

    fn kind(result: serde_json::Value) -> CallResultKind {
        CallResultKind::deserialize(&result).unwrap()
    }

    #[test]
    fn only_a_known_task_kind_starts_a_task() {
        let task = kind(json!({"resultType": "task", "taskId": "t"}));
        assert_eq!(task.result_type, Some(ResultType::Task));
        // A kind this crate does not know, or not a string: read as the tool's result.
        for unknown in [json!("later"), json!(7), json!(null)] {
            let plain = kind(json!({"resultType": unknown, "content": []}));
            assert_eq!(plain.result_type, None);
            assert!(plain.content && !plain.task);
        }
    }

    #[test]
    fn a_legacy_task_is_a_task_member_even_null() {
        let legacy = kind(json!({"task": null}));
        assert!(legacy.task && !legacy.content);
        assert_eq!(legacy.result_type, None);
        let neither = kind(json!({}));
        assert!(!neither.task && !neither.content);
    }
}
