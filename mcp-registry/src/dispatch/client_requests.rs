//! The requests a legacy session sends its client for a tool (elicitation, sampling, roots),
//! on the call's own stream, with the client's replies matched to them by id.

use std::collections::HashMap;
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex};

use serde::de::DeserializeOwned;
use serde::{Deserialize as _, Serialize};
use tokio::sync::oneshot;

use crate::protocol::decode::IncomingResponse;
use crate::protocol::{
    ClientCapabilities, CreateMessageParams, CreateMessageResult, ElicitParams, ElicitResult,
    ErrorCode, ErrorObject, JsonRpcRequest, ListRootsResult, RequestId, method,
};
use crate::sync::MutexExt;
use crate::tool::{BoxFuture, InputError, InputHandler, NotificationSink};

/// Requests the session sent its client, by the server-side id their replies carry.
#[derive(Default)]
pub(super) struct ClientRequests {
    next_id: AtomicU64,
    waiting: Mutex<Waiting>,
}

/// The requests waiting for the client's replies, and whether the client can still reply:
/// behind one lock, so that a request is never entered after the client is gone.
#[derive(Default)]
struct Waiting {
    /// Set once the client can no longer reply: nothing more is sent.
    closed: bool,
    by_id: HashMap<RequestId, oneshot::Sender<IncomingResponse>>,
}

impl ClientRequests {
    /// Numbers this session's requests from `first` on: a session rebuilt in another
    /// process starts far from the one that opened it, so the client's replies, which may
    /// reach either, name one request only.
    pub(super) fn number_from(&self, first: u64) {
        self.next_id
            .store(first, std::sync::atomic::Ordering::Relaxed);
    }

    /// The request `id` waiting for its reply, taken out of the table.
    pub(super) fn take(&self, id: &RequestId) -> Option<oneshot::Sender<IncomingResponse>> {
        self.waiting.lock_unpoisoned().by_id.remove(id)
    }

    /// Ends every wait: the requests waiting hear that the client is gone
    /// ([`InputError::Disconnected`]).
    pub(super) fn clear(&self) {
        // Dropped outside the lock.
        let waiting = std::mem::take(&mut self.waiting.lock_unpoisoned().by_id);
        drop(waiting);
    }

    /// The client can no longer reply: the requests waiting, and those made later, end with
    /// [`InputError::Disconnected`].
    #[cfg(feature = "stdio")]
    pub(super) fn close(&self) {
        let waiting = {
            let mut waiting = self.waiting.lock_unpoisoned();
            waiting.closed = true;
            std::mem::take(&mut waiting.by_id)
        };
        drop(waiting);
    }

    /// Hands a client's reply to the request waiting for it (a reply to nothing waiting,
    /// e.g. after a timeout, is dropped).
    pub(super) fn answer(&self, response: IncomingResponse) {
        let Some(id) = &response.id else {
            tracing::debug!(error = ?response.error, "the client sent an error naming no request");
            return;
        };
        match self.take(id) {
            Some(waiting) => {
                let _ = waiting.send(response);
            }
            None => tracing::debug!(%id, "a reply to no request waiting for one"),
        }
    }
}

/// A request waiting for its reply; leaves the table when dropped (answered, timed out,
/// cancelled).
struct Waiter {
    requests: Arc<ClientRequests>,
    id: RequestId,
}

impl Drop for Waiter {
    fn drop(&mut self) {
        self.requests.take(&self.id);
    }
}

/// A legacy call's way to its client: requests go out on the call's stream (stdout, or the
/// POST's SSE stream), replies come back through [`ServerSession::handle`].
pub(super) struct SessionInput {
    pub(super) client: Arc<ClientCapabilities>,
    pub(super) sink: NotificationSink,
    pub(super) requests: Arc<ClientRequests>,
    /// A call run as a task: its id, named in each request's `_meta` (2025-11-25).
    pub(super) related_task: Option<crate::task::TaskIdSlot>,
}

impl SessionInput {
    fn request<P: Serialize, R: DeserializeOwned + Send + 'static>(
        &self,
        method: &'static str,
        params: Option<P>,
    ) -> BoxFuture<'static, Result<R, InputError>> {
        let requests = self.requests.clone();
        let id = RequestId::Number(
            (requests
                .next_id
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed)
                + 1)
            .into(),
        );
        let (tx, rx) = oneshot::channel();
        {
            // Checked and entered under one lock: a client gone in between cannot leave the
            // request waiting for a reply that never comes.
            let mut waiting = requests.waiting.lock_unpoisoned();
            if waiting.closed {
                return Box::pin(std::future::ready(Err(InputError::Disconnected)));
            }
            waiting.by_id.insert(id.clone(), tx);
        }
        let waiting = Waiter {
            requests,
            id: id.clone(),
        };
        // Plain data with string keys: serializing it cannot fail.
        let mut request =
            serde_json::to_value(JsonRpcRequest::new(id, method, params)).unwrap_or_default();
        if let Some(task) = self.related_task.as_ref().and_then(|slot| slot.0.get()) {
            name_task(&mut request, task);
        }
        self.sink.send(request);
        Box::pin(async move {
            let response = rx.await.map_err(|_| InputError::Disconnected)?;
            drop(waiting);
            if let Some(error) = response.error {
                let error = ErrorObject::deserialize(&error).unwrap_or_else(|_| {
                    ErrorObject::new(ErrorCode::INTERNAL_ERROR, error.to_string())
                });
                return Err(InputError::Client { method, error });
            }
            R::deserialize(response.result.unwrap_or_default()).map_err(|e| {
                InputError::InvalidAnswer {
                    method,
                    message: e.to_string(),
                }
            })
        })
    }
}

/// Puts `_meta.io.modelcontextprotocol/related-task` in a request's params.
fn name_task(request: &mut serde_json::Value, task: &str) {
    let Some(request) = request.as_object_mut() else {
        return;
    };
    let params = request
        .entry("params")
        .or_insert_with(|| serde_json::Value::Object(Default::default()));
    if let Some(params) = params.as_object_mut() {
        let meta = params
            .entry("_meta")
            .or_insert_with(|| serde_json::Value::Object(Default::default()));
        if let Some(meta) = meta.as_object_mut() {
            meta.insert(
                crate::protocol::META_RELATED_TASK.to_owned(),
                serde_json::json!({ "taskId": task }),
            );
        }
    }
}

impl InputHandler for SessionInput {
    fn capabilities(&self) -> ClientCapabilities {
        ClientCapabilities::clone(&self.client)
    }

    fn elicit(&self, params: ElicitParams) -> BoxFuture<'static, Result<ElicitResult, InputError>> {
        self.request(method::ELICITATION_CREATE, Some(params))
    }

    fn create_message(
        &self,
        params: CreateMessageParams,
    ) -> BoxFuture<'static, Result<CreateMessageResult, InputError>> {
        self.request(method::SAMPLING_CREATE_MESSAGE, Some(params))
    }

    fn list_roots(&self) -> BoxFuture<'static, Result<ListRootsResult, InputError>> {
        self.request::<(), _>(method::ROOTS_LIST, None)
    }
}
