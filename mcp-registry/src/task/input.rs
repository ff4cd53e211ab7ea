//! A task's input: what its body asks the client while it runs.
//!
//! 2026-07-28 ([`TaskInput`]): an ask becomes one of the task's `inputRequests`, under a key
//! unique in the task, and the body waits for the answer `tasks/update` brings. Elsewhere
//! ([`RelayInput`]): the ask goes to the call's own input handler (a legacy session's
//! client, a host's handler), the task `input_required` until it is answered.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock, Weak};

use serde_json::Value;
use tokio::sync::oneshot;

use super::{TaskChange, Tasks};
use crate::protocol::{
    ClientCapabilities, CreateMessageParams, CreateMessageResult, ElicitParams, ElicitResult,
    InputRequest, ListRootsResult, ProgressNotificationParams, method,
};
use crate::sync::MutexExt;
use crate::tool::round::Escalation;
use crate::tool::{BoxFuture, InputError, InputHandler, NotificationSink};
use serde::Deserialize as _;

/// The answers a task's body waits for, by key.
#[derive(Default)]
pub(super) struct Waiting(Mutex<HashMap<String, oneshot::Sender<Value>>>);

impl Waiting {
    fn senders(&self) -> std::sync::MutexGuard<'_, HashMap<String, oneshot::Sender<Value>>> {
        self.0.lock_unpoisoned()
    }

    /// Gives `answer` to the ask under `key`; `false` when nothing waits for it.
    pub(super) fn deliver(&self, key: &str, answer: Value) -> bool {
        self.senders()
            .remove(key)
            .is_some_and(|sender| sender.send(answer).is_ok())
    }
}

/// Which task a run belongs to, once it is one.
struct Link {
    tasks: Weak<Tasks>,
    id: OnceLock<String>,
}

impl Link {
    /// Records `change` on the task, when the run is one and the registry is alive.
    async fn record(&self, change: TaskChange) -> Result<(), InputError> {
        let (Some(tasks), Some(id)) = (self.tasks.upgrade(), self.id.get()) else {
            return Err(InputError::Disconnected);
        };
        match tasks.change(id, change).await {
            Ok(_) => Ok(()),
            Err(e) => {
                tracing::error!(task = %id, error = %e, "could not record a task's input request");
                Err(InputError::Disconnected)
            }
        }
    }
}

/// Where a 2026-07-28 task's asks go: its `inputRequests`, answered by `tasks/update`.
pub(crate) struct TaskInput {
    link: Arc<Link>,
    waiting: Arc<Waiting>,
}

impl TaskInput {
    pub(super) fn new(tasks: Weak<Tasks>) -> Self {
        TaskInput {
            link: Arc::new(Link {
                tasks,
                id: OnceLock::new(),
            }),
            waiting: Arc::default(),
        }
    }

    /// The run is the task `id` from now on.
    pub(super) fn attach(&self, id: &str) {
        let _ = self.link.id.set(id.to_owned());
    }

    pub(super) fn waiting(&self) -> Arc<Waiting> {
        self.waiting.clone()
    }

    /// Asks `request` under `key`: listed in the task's `inputRequests` until `tasks/update`
    /// answers it.
    pub(crate) fn ask(
        &self,
        key: String,
        request: InputRequest,
    ) -> BoxFuture<'static, Result<Value, InputError>> {
        let (sender, answer) = oneshot::channel();
        self.waiting.senders().insert(key.clone(), sender);
        let link = self.link.clone();
        Box::pin(async move {
            link.record(TaskChange::Ask(key, request)).await?;
            answer.await.map_err(|_| InputError::Disconnected)
        })
    }

    /// Where the run's notifications go while it is a task: its progress becomes the task's
    /// status message (`building (2/4)`); anything else has no one to go to.
    pub(crate) fn status_sink(&self) -> NotificationSink {
        let link = self.link.clone();
        NotificationSink::new(move |note| {
            if note.get("method").and_then(Value::as_str) != Some(method::PROGRESS) {
                return;
            }
            let Some(params) = note.get("params") else {
                return;
            };
            let Ok(progress) = ProgressNotificationParams::deserialize(params) else {
                return;
            };
            let count = match progress.total {
                Some(total) => format!("{}/{total}", progress.progress),
                None => progress.progress.to_string(),
            };
            let message = match progress.message {
                Some(message) => format!("{message} ({count})"),
                None => count,
            };
            // Recorded from a task of its own: a sink cannot wait for the store.
            let Ok(runtime) = tokio::runtime::Handle::try_current() else {
                return;
            };
            let link = link.clone();
            runtime.spawn(async move {
                let _ = link.record(TaskChange::Message(message)).await;
            });
        })
    }

    /// This input as a round's escalation: its unanswered asks go to the task.
    pub(crate) fn escalation(self: &Arc<Self>) -> Escalation {
        let input = self.clone();
        Arc::new(move |key, request| input.ask(key, request))
    }
}

/// A task's input through the call's own handler: the task is `input_required` while an
/// ask waits for its answer.
pub(crate) struct RelayInput {
    handler: Arc<dyn InputHandler>,
    link: Arc<Link>,
    asks: std::sync::atomic::AtomicUsize,
}

impl RelayInput {
    /// `handler`'s asks, recorded on the task `input` is attached to.
    pub(crate) fn new(handler: Arc<dyn InputHandler>, input: &TaskInput) -> Self {
        RelayInput {
            handler,
            link: input.link.clone(),
            asks: Default::default(),
        }
    }

    /// The handler's answer (`ask`, made once the task says it waits), the task
    /// `input_required` with `request` listed until it resolves.
    fn relayed<T: Send + 'static>(
        &self,
        request: InputRequest,
        ask: impl FnOnce(&dyn InputHandler) -> BoxFuture<'static, Result<T, InputError>>
        + Send
        + 'static,
    ) -> BoxFuture<'static, Result<T, InputError>> {
        let n = self.asks.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let key = format!("input-{n}");
        let link = self.link.clone();
        let handler = self.handler.clone();
        Box::pin(async move {
            // Recording is best effort: the ask goes to the client either way.
            let _ = link.record(TaskChange::Ask(key.clone(), request)).await;
            let answered = ask(&*handler).await;
            let _ = link.record(TaskChange::Answered(vec![key])).await;
            answered
        })
    }
}

fn request_of(method: &str, params: impl serde::Serialize) -> InputRequest {
    InputRequest {
        method: method.to_owned(),
        params: crate::protocol::params_of(&params),
    }
}

impl InputHandler for RelayInput {
    fn capabilities(&self) -> ClientCapabilities {
        self.handler.capabilities()
    }

    fn elicit(&self, params: ElicitParams) -> BoxFuture<'static, Result<ElicitResult, InputError>> {
        let request = request_of(method::ELICITATION_CREATE, &params);
        self.relayed(request, move |h| h.elicit(params))
    }

    fn create_message(
        &self,
        params: CreateMessageParams,
    ) -> BoxFuture<'static, Result<CreateMessageResult, InputError>> {
        let request = request_of(method::SAMPLING_CREATE_MESSAGE, &params);
        self.relayed(request, move |h| h.create_message(params))
    }

    fn list_roots(&self) -> BoxFuture<'static, Result<ListRootsResult, InputError>> {
        let request = request_of(method::ROOTS_LIST, serde_json::Map::new());
        self.relayed(request, |h| h.list_roots())
    }
}

/// A task's asks as an input handler (a task started in-process without one): each ask
/// becomes one of the task's input requests, answered by `TaskHandle::answer`.
struct TaskAsks {
    input: Arc<TaskInput>,
    asks: std::sync::atomic::AtomicUsize,
}

impl TaskAsks {
    fn ask<T: serde::de::DeserializeOwned + Send + 'static>(
        &self,
        method: &'static str,
        capability: &str,
        params: impl serde::Serialize,
    ) -> BoxFuture<'static, Result<T, InputError>> {
        let n = self.asks.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let answer = self
            .input
            .ask(format!("{capability}-{n}"), request_of(method, params));
        Box::pin(async move { crate::tool::round::read_answer(method, answer.await?) })
    }
}

impl InputHandler for TaskAsks {
    fn capabilities(&self) -> ClientCapabilities {
        ClientCapabilities {
            roots: Some(Default::default()),
            sampling: Some(Default::default()),
            elicitation: Some(Default::default()),
            other: Default::default(),
        }
    }

    fn elicit(&self, params: ElicitParams) -> BoxFuture<'static, Result<ElicitResult, InputError>> {
        self.ask(method::ELICITATION_CREATE, "elicitation", params)
    }

    fn create_message(
        &self,
        params: CreateMessageParams,
    ) -> BoxFuture<'static, Result<CreateMessageResult, InputError>> {
        self.ask(method::SAMPLING_CREATE_MESSAGE, "sampling", params)
    }

    fn list_roots(&self) -> BoxFuture<'static, Result<ListRootsResult, InputError>> {
        self.ask(method::ROOTS_LIST, "roots", serde_json::Map::new())
    }
}

impl TaskInput {
    /// The task's asks as an input handler: each becomes one of its input requests.
    pub(crate) fn as_handler(self: &Arc<Self>) -> Arc<dyn InputHandler> {
        Arc::new(TaskAsks {
            input: self.clone(),
            asks: Default::default(),
        })
    }
}
