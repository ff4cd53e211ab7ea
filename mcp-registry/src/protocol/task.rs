//! Tasks on the wire: the 2025-11-25 experimental tasks (`task` on `tools/call`,
//! `tasks/get`, `tasks/result`, `tasks/list`, `tasks/cancel`) and the 2026-07-28 extension
//! `io.modelcontextprotocol/tasks` (SEP-2663: `resultType: "task"`, `tasks/get` with the
//! result inlined, `tasks/update`, `tasks/cancel`).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::{ErrorObject, InputRequest};

/// The extension's identifier, under `capabilities.extensions` (SEP-2133).
pub const TASKS_EXTENSION: &str = "io.modelcontextprotocol/tasks";

/// `_meta` key naming the task a 2025-11-25 message belongs to (`{"taskId": ..}`).
pub const META_RELATED_TASK: &str = "io.modelcontextprotocol/related-task";

/// Whether a tool runs as a task (2025-11-25 `execution.taskSupport`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TaskSupport {
    /// Never as a task (the default).
    #[default]
    Forbidden,
    /// As a task when the client asks for one (2025-11-25) or declares the extension
    /// (2026-07-28), else as a plain call.
    Optional,
    /// Only as a task: a client that cannot follow one is refused (-32021 in 2026-07-28).
    Required,
}

impl TaskSupport {
    /// Whether the tool may run as a task.
    pub fn allows_tasks(self) -> bool {
        self != TaskSupport::Forbidden
    }
}

/// `execution` of a tool descriptor (2025-11-25).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolExecution {
    /// Whether the tool runs as a task.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_support: Option<TaskSupport>,
}

/// Where a task is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskStatus {
    /// Running.
    Working,
    /// Waiting for the client to answer its input requests.
    InputRequired,
    /// Ended with a result (a tool's own error included: `isError: true`).
    Completed,
    /// Ended with a JSON-RPC error.
    Failed,
    /// Cancelled before it ended.
    Cancelled,
}

impl TaskStatus {
    /// Whether the task has ended (`completed`, `failed`, `cancelled`): it changes no more.
    pub fn is_terminal(self) -> bool {
        matches!(
            self,
            TaskStatus::Completed | TaskStatus::Failed | TaskStatus::Cancelled
        )
    }
}

impl std::fmt::Display for TaskStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            TaskStatus::Working => "working",
            TaskStatus::InputRequired => "input_required",
            TaskStatus::Completed => "completed",
            TaskStatus::Failed => "failed",
            TaskStatus::Cancelled => "cancelled",
        })
    }
}

/// A 2026-07-28 task (SEP-2663 `DetailedTask`): what `CreateTaskResult`, `tasks/get` and
/// `notifications/tasks` carry, the result, error or input requests inlined by status.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DetailedTask {
    /// The task's identifier.
    pub task_id: String,
    /// Where it is.
    pub status: TaskStatus,
    /// What it is doing, for people.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status_message: Option<String>,
    /// When it was created (ISO 8601).
    pub created_at: String,
    /// When it last changed (ISO 8601).
    pub last_updated_at: String,
    /// How long it is kept from its creation, in milliseconds; `null`: unlimited.
    pub ttl_ms: Option<u64>,
    /// How often to poll it, in milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub poll_interval_ms: Option<u64>,
    /// `input_required`: the requests the client is to answer with `tasks/update`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_requests: Option<BTreeMap<String, InputRequest>>,
    /// `completed`: the request's result (a `CallToolResult` for a tool).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<Value>,
    /// `failed`: the JSON-RPC error it failed with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<ErrorObject>,
}

/// A 2025-11-25 task (`Task`): its state, without the result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LegacyTask {
    /// The task's identifier.
    pub task_id: String,
    /// Where it is.
    pub status: TaskStatus,
    /// What it is doing, for people.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status_message: Option<String>,
    /// When it was created (ISO 8601).
    pub created_at: String,
    /// When it last changed (ISO 8601).
    pub last_updated_at: String,
    /// How long it is kept from its creation, in milliseconds; `null`: unlimited.
    pub ttl: Option<u64>,
    /// How often to poll it, in milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub poll_interval: Option<u64>,
}

/// The 2025-11-25 answer to a task-augmented request: `{"task": ..}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CreateTaskResult {
    /// The task created.
    pub task: LegacyTask,
}

/// The 2025-11-25 `tasks/list` result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListTasksResult {
    /// A page of the requestor's tasks.
    pub tasks: Vec<LegacyTask>,
    /// Where the next page starts, when there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
}

/// The `task` member of a 2025-11-25 task-augmented request: what the client asks of it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaskRequest {
    /// How long to keep the task from its creation, in milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttl: Option<u64>,
}

/// The params of `tasks/get`, `tasks/result` and `tasks/cancel`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskIdParams {
    /// The task.
    pub task_id: String,
}

/// The params of `tasks/update` (2026-07-28): answers to the task's input requests, by key.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UpdateTaskParams {
    /// The task.
    pub task_id: String,
    /// The answers, by the keys of `inputRequests`.
    pub input_responses: Map<String, Value>,
}
