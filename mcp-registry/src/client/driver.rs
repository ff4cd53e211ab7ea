//! The driver: [`Client`] over [`ClientMachine`], the way quinn drives quinn-proto. The
//! machine keeps the one pending table and the clock's deadlines; the driver keeps a
//! oneshot per pending id (settled only by the machine's events: a classified reply, a
//! timeout from [`ClientMachine::check_timeouts`], a forgotten id), one timer task that sleeps
//! until [`ClientMachine::next_deadline`], and one reader task.

//! [`Client`]: the async MCP client, one type over every [`Transport`].

use std::collections::HashMap;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::time::{Duration, Instant};

use serde::de::DeserializeOwned;
use serde_json::{Map, Value};
use tokio::sync::{broadcast, mpsc, oneshot};
use tokio_util::sync::CancellationToken;

use super::machine::{
    ClientConfig, ClientMachine, ClientStateError, Handshake, Incoming, OutgoingNotification,
    OutgoingRequest, RequestSettings, ServerNotification,
};
use super::transport::{Inbound, Outbound, OutboundKind, Transport, TransportError};
use crate::protocol::headers::ParamHeader;
use crate::protocol::{
    ErrorCode, ErrorObject, InputRequiredResult, ProtocolEra, ProtocolVersion, RequestId,
    ToolDescriptor, UnsupportedVersionData, method,
};
use crate::sync::MutexExt;
use tokio::sync::Notify;

use super::ClientError;
use super::handlers::{Handlers, answer_kind};
use super::machine::TimedOut;
use super::policy::{Policies, RequestOptions};

/// What the driver keeps of the builder's settings (the builder depends on the driver, never
/// the reverse).
#[derive(Clone)]
pub(super) struct Settings {
    /// Every request's timeout unless its options say otherwise.
    pub(super) timeout: Option<Duration>,
    /// The policies wrapping requests, by method.
    pub(super) policies: Policies,
    /// How long a full tool listing is kept.
    pub(super) tool_cache: Option<Duration>,
    /// The answers to the server's requests.
    pub(super) handlers: Handlers,
    /// The cap on the server's requests answered at once, and on those waiting.
    pub(super) callbacks: Callbacks,
}

/// How many of the server's requests (elicitation, sampling, roots) the client answers at
/// once: `running` permits; `admitted` permits bound those running or waiting (four times
/// as many). Past that, a request is refused at once with -32603, so however many a server
/// sends, what the client holds for it stays bounded.
#[derive(Clone)]
pub(super) struct Callbacks {
    running: Arc<tokio::sync::Semaphore>,
    admitted: Arc<tokio::sync::Semaphore>,
    cap: usize,
}

impl Callbacks {
    /// At most `cap` (at least 1) at once.
    pub(super) fn new(cap: usize) -> Self {
        let cap = cap.max(1);
        Callbacks {
            running: Arc::new(tokio::sync::Semaphore::new(cap)),
            admitted: Arc::new(tokio::sync::Semaphore::new(cap.saturating_mul(4))),
            cap,
        }
    }
}

/// How a pending request ended, as the machine's events tell it.
pub(super) enum Reply {
    Result(Value),
    Error(ErrorObject),
    Handshake(Handshake),
    Closed(String),
    /// The transport could get no reply (too large, an HTTP failure).
    Failed(TransportError),
    /// [`ClientMachine::check_timeouts`] gave up on it.
    TimedOut(TimedOut),
}

pub(super) struct Inner {
    machine: Mutex<ClientMachine>,
    /// `mcp.client.session.duration` (feature `otel`), recorded when the client is dropped.
    _timer: crate::telemetry::SessionTimer,
    /// The oneshot of each request the machine has pending.
    waiters: Mutex<HashMap<crate::protocol::RequestId, oneshot::Sender<Reply>>>,
    pub(super) transport: Box<dyn Transport>,
    pub(super) settings: Settings,
    pub(super) notifications: broadcast::Sender<ServerNotification>,
    /// Per tool (listed over a transport that mirrors parameters): its `x-mcp-header`s.
    pub(super) tool_headers: Mutex<HashMap<String, Vec<ParamHeader>>>,
    /// The tools listed as running only as tasks (2025-11-25 `execution.taskSupport`).
    pub(super) task_tools: Mutex<std::collections::HashSet<String>>,
    tasks: Mutex<Vec<tokio::task::JoinHandle<()>>>,
    pub(super) closed: Mutex<Option<String>>,
    /// Cancelled once the connection is gone (`closed` then says why).
    pub(super) gone: CancellationToken,
    /// Wakes the timer task when a request's deadline comes before the one it sleeps to.
    timer: Arc<Notify>,
    /// The deadline the timer task sleeps to (`None`: none).
    armed: Mutex<Option<Instant>>,
    /// The last full tool listing and when it was fetched ([`ClientBuilder::tool_cache`](super::ClientBuilder::tool_cache)).
    pub(super) tool_cache: Mutex<Option<(tokio::time::Instant, Vec<ToolDescriptor>)>>,
    /// Bumped by every invalidation, so a listing under way when one came is not cached.
    pub(super) tool_cache_generation: AtomicU64,
}

impl Drop for Inner {
    fn drop(&mut self) {
        for task in self.tasks.lock_unpoisoned().drain(..) {
            task.abort();
        }
    }
}

/// The machine's clock: tokio's, so a paused test clock drives timeouts too.
pub(super) fn now() -> Instant {
    tokio::time::Instant::now().into_std()
}

/// An MCP client connected to one server: in-process ([`Client::in_process`]), over stdio
/// (`Client::stdio`) or Streamable HTTP (`Client::http`). Cheap to clone; clones share
/// the connection, and several requests may be in flight at once.
///
/// ```
/// use mcp_registry::{Registry, Server, Tool, client::Client};
/// use serde_json::json;
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let echo = Tool::new("echo", "Echo", json!({"type": "object"}), |args| async move {
///     args.to_string()
/// }).unwrap();
/// let registry = Registry::from_servers([Server::new("s", Some("1.0"), [echo]).unwrap()]);
/// let client = Client::in_process(registry, "s").await.unwrap();
/// assert_eq!(client.server_info().unwrap().name, "s");
/// let tools = client.list_tools().await.unwrap();
/// assert_eq!(tools[0].name, "echo");
/// let result = client.call_tool("echo", json!({"x": 1})).await.unwrap();
/// assert_eq!(result.first_text(), Some(r#"{"x":1}"#));
/// client.close().await;
/// # }
/// ```
#[derive(Clone)]
pub struct Client {
    pub(super) inner: Arc<Inner>,
}

impl fmt::Debug for Client {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let machine = self.inner.machine.lock_unpoisoned();
        f.debug_struct("Client")
            .field("lifecycle", machine.lifecycle())
            .field("version", &machine.negotiated_version())
            .field("server", &machine.server_info())
            .finish()
    }
}

impl Client {
    pub(super) fn start(
        config: ClientConfig,
        settings: Settings,
        transport: Box<dyn Transport>,
        incoming: mpsc::UnboundedReceiver<Inbound>,
    ) -> Client {
        let (notifications, _) = broadcast::channel(256);
        let timer = Arc::new(Notify::new());
        let inner = Arc::new(Inner {
            machine: Mutex::new(ClientMachine::new(config)),
            _timer: crate::telemetry::SessionTimer::client(),
            waiters: Mutex::new(HashMap::new()),
            transport,
            settings,
            notifications,
            tool_headers: Mutex::new(HashMap::new()),
            task_tools: Mutex::new(Default::default()),
            tasks: Mutex::new(Vec::new()),
            closed: Mutex::new(None),
            gone: CancellationToken::new(),
            timer: Arc::clone(&timer),
            armed: Mutex::new(None),
            tool_cache: Mutex::new(None),
            tool_cache_generation: AtomicU64::new(0),
        });
        let reader = tokio::spawn(read_loop(Arc::downgrade(&inner), incoming));
        let clock = tokio::spawn(timer_loop(
            Arc::downgrade(&inner),
            timer,
            inner.gone.clone(),
        ));
        inner.tasks.lock_unpoisoned().extend([reader, clock]);
        Client { inner }
    }

    pub(super) fn machine(&self) -> MutexGuard<'_, ClientMachine> {
        self.inner.machine.lock_unpoisoned()
    }

    /// Marks the connection gone with `reason`, failing every pending request.
    pub(super) fn fail_pending(&self, reason: String) {
        *self.inner.closed.lock_unpoisoned() = Some(reason.clone());
        self.inner.gone.cancel();
        for (_, waiter) in self.inner.waiters.lock_unpoisoned().drain() {
            let _ = waiter.send(Reply::Closed(reason.clone()));
        }
    }

    /// Ends the driver's tasks (the connection is closed).
    pub(super) fn stop_tasks(&self) {
        for task in self.inner.tasks.lock_unpoisoned().drain(..) {
            task.abort();
        }
    }

    // ----- the handshake ----------------------------------------------------------------

    pub(super) async fn handshake(&self) -> Result<(), ClientError> {
        let mut discover = self.machine().starts_with_discover();
        for _ in 0..4 {
            let request = {
                let mut machine = self.machine();
                if discover {
                    machine.discover(now())?
                } else {
                    machine.initialize(now())?
                }
            };
            let step = match self.exchange(request, None, None).await {
                Ok(Reply::Handshake(step)) => step,
                Ok(Reply::TimedOut(timed_out)) => {
                    self.inner.transport.cancelled(&timed_out.id);
                    self.machine().handshake_timed_out(&timed_out)
                }
                Ok(Reply::Closed(reason)) | Err(ClientError::Closed(reason)) => {
                    let _ = self.machine().mark_error(reason.clone());
                    return Err(ClientError::Closed(reason));
                }
                Err(e) => return Err(e),
                Ok(_) => return Err(ClientError::Handshake("an unexpected reply".into())),
            };
            match step {
                Handshake::Discovered(_) => return Ok(()),
                Handshake::Initialized(_) => {
                    let note = self.machine().initialized()?;
                    self.notify(note).await?;
                    self.inner
                        .transport
                        .connected(self.protocol_version())
                        .await;
                    return Ok(());
                }
                Handshake::FallBackToInitialize { reason, .. } => {
                    tracing::debug!(%reason, "MCP server is legacy: falling back to initialize");
                    discover = false;
                }
                Handshake::RetryDiscover => discover = true,
                Handshake::Failed(reason) => return Err(ClientError::Handshake(reason)),
            }
        }
        Err(ClientError::Handshake("no protocol version agreed".into()))
    }

    // ----- sending ----------------------------------------------------------------------

    fn outbound(&self, request: &OutgoingRequest, params: Vec<(String, String)>) -> Outbound {
        Outbound {
            message: request.to_value(),
            kind: OutboundKind::Request {
                id: request.id.clone(),
                method: request.method().to_owned(),
                name: request.name.clone(),
                params,
            },
            protocol_version: self.protocol_version(),
        }
    }

    pub(super) async fn notify(&self, note: OutgoingNotification) -> Result<(), ClientError> {
        let outbound = Outbound {
            message: serde_json::to_value(&note).unwrap_or_default(),
            kind: OutboundKind::Notification {
                method: note.method.to_string(),
            },
            protocol_version: self.protocol_version(),
        };
        self.inner.transport.send(outbound).await?;
        Ok(())
    }

    /// Sends `request` and waits for its reply: a reply, the machine's timeout (the
    /// handshake's returns as [`Reply::TimedOut`]; any other as [`ClientError::Timeout`]
    /// after `timeout`), or the cancellation.
    pub(super) async fn exchange(
        &self,
        request: OutgoingRequest,
        timeout: Option<Duration>,
        cancellation: Option<&CancellationToken>,
    ) -> Result<Reply, ClientError> {
        self.exchange_with(request, timeout, cancellation, Vec::new())
            .await
    }

    async fn exchange_with(
        &self,
        request: OutgoingRequest,
        timeout: Option<Duration>,
        cancellation: Option<&CancellationToken>,
        params: Vec<(String, String)>,
    ) -> Result<Reply, ClientError> {
        let id = request.id.clone();
        let method = request.method().to_owned();
        let (tx, rx) = oneshot::channel();
        self.inner.waiters.lock_unpoisoned().insert(id.clone(), tx);
        if let Some(reason) = self.inner.closed.lock_unpoisoned().clone() {
            self.forget(&id);
            return Err(ClientError::Closed(reason));
        }
        // The timer task sleeps until the machine's next deadline, which may now be this one.
        // Under the machine's lock, as the timer task sets `armed`: no deadline is missed.
        let earlier = {
            let machine = self.machine();
            let armed = *self.inner.armed.lock_unpoisoned();
            machine
                .next_deadline()
                .is_some_and(|at| armed.is_none_or(|armed| at < armed))
        };
        if earlier {
            self.inner.timer.notify_one();
        }
        let outbound = self.outbound(&request, params);
        // The send is raced with the reply: an HTTP POST answered with plain JSON is in
        // flight until its reply, and a timeout must end it (dropping it closes the
        // connection, the cancellation 2026-07-28 asks for).
        let reply = async {
            let send = self.inner.transport.send(outbound);
            tokio::pin!(send, rx);
            let mut sent = false;
            loop {
                tokio::select! {
                    result = &mut send, if !sent => {
                        result?;
                        sent = true;
                    }
                    reply = &mut rx => {
                        return Ok::<_, TransportError>(
                            reply.unwrap_or_else(|_| Reply::Closed("the client closed".into())),
                        );
                    }
                }
            }
        };
        let never = CancellationToken::new();
        let cancelled = cancellation.unwrap_or(&never).cancelled();
        tokio::select! {
            reply = reply => match reply {
                Ok(Reply::TimedOut(timed_out)) if !is_handshake(&timed_out.method) => {
                    self.tell_server(&timed_out.id, false, "timed out").await;
                    Err(ClientError::Timeout { method, after: timeout.unwrap_or_default() })
                }
                Ok(Reply::Failed(e)) => Err(e.into()),
                Ok(reply) => Ok(reply),
                Err(e) => {
                    self.forget(&id);
                    Err(e.into())
                }
            },
            () = cancelled => {
                let handshake = self.forget(&id).is_some_and(|m| is_handshake(&m));
                self.tell_server(&id, handshake, "cancelled by the client").await;
                Err(ClientError::Cancelled { method })
            }
        }
    }

    /// Forgets pending request `id` in the machine and the waiter table; its method, when it
    /// was pending.
    fn forget(&self, id: &crate::protocol::RequestId) -> Option<String> {
        self.inner.waiters.lock_unpoisoned().remove(id);
        let mut machine = self.machine();
        let method = machine.pending_method(id).map(str::to_owned);
        machine.forget(id);
        method
    }

    /// Tells the server the client gave up on request `id` (`notifications/cancelled`, or
    /// the transport's own way).
    async fn tell_server(&self, id: &crate::protocol::RequestId, handshake: bool, reason: &str) {
        self.inner.transport.cancelled(id);
        let note = self.machine().cancel(id, Some(reason.to_owned()));
        // The handshake itself is never cancelled by notification (the spec forbids it for
        // initialize; a silent discover probe is simply abandoned).
        let version = self.protocol_version();
        if !handshake && self.inner.transport.sends_cancelled_notifications(version) {
            let _ = self.notify(note).await;
        }
    }

    /// Sends a request built by `build`, and returns its result; retries once with the
    /// server's version after a -32022 naming one this client speaks, and re-initializes
    /// once when the server lost the session.
    pub(super) async fn call(
        &self,
        options: &RequestOptions,
        params: Vec<(String, String)>,
        build: impl Fn(
            &mut ClientMachine,
            &RequestSettings,
            Instant,
        ) -> Result<OutgoingRequest, ClientStateError>,
    ) -> Result<(String, Value), ClientError> {
        let request_options = RequestSettings {
            timeout: options.timeout.or(self.inner.settings.timeout),
            progress_token: options.progress_token.clone(),
        };
        let mut retried = false;
        loop {
            let request = build(&mut self.machine(), &request_options, now())?;
            let method = request.method().to_owned();
            let id = request.id.clone();
            let reply = self
                .exchange_with(
                    request,
                    request_options.timeout,
                    options.cancellation.as_ref(),
                    params.clone(),
                )
                .await;
            match reply {
                Ok(Reply::Result(result)) => return Ok((method, result)),
                Ok(Reply::Error(error)) => {
                    if !retried && self.version_retry(&error) {
                        retried = true;
                        continue;
                    }
                    return Err(ClientError::Server { method, error });
                }
                Ok(Reply::Closed(reason)) => return Err(ClientError::Closed(reason)),
                Ok(Reply::Failed(e)) => return Err(e.into()),
                Ok(Reply::Handshake(_) | Reply::TimedOut(_)) => {
                    return Err(ClientError::Handshake(
                        "an unexpected handshake reply".into(),
                    ));
                }
                Err(ClientError::Transport(TransportError::SessionExpired)) if !retried => {
                    retried = true;
                    self.forget(&id);
                    self.reinitialize().await?;
                }
                Err(e) => return Err(e),
            }
        }
    }

    /// Whether a -32022 names this client's modern version (some servers reject a first
    /// request to test negotiation): then the request is retried with it.
    pub(super) fn version_retry(&self, error: &ErrorObject) -> bool {
        if error.code != ErrorCode::UNSUPPORTED_PROTOCOL_VERSION
            || self.machine().era() != Some(ProtocolEra::Modern)
        {
            return false;
        }
        let data: UnsupportedVersionData = error
            .data
            .clone()
            .and_then(|d| serde_json::from_value(d).ok())
            .unwrap_or_default();
        data.supported
            .iter()
            .any(|v| v == ProtocolVersion::MODERN.as_str())
    }

    pub(super) async fn reinitialize(&self) -> Result<(), ClientError> {
        self.machine().session_expired()?;
        let request = self.machine().initialize(now())?;
        match self.exchange(request, None, None).await? {
            Reply::Handshake(Handshake::Initialized(_)) => {
                let note = self.machine().initialized()?;
                self.notify(note).await
            }
            Reply::Handshake(Handshake::Failed(reason)) => Err(ClientError::Handshake(reason)),
            Reply::Closed(reason) => Err(ClientError::Closed(reason)),
            _ => Err(ClientError::Handshake("re-initialization failed".into())),
        }
    }

    /// A request (built by `first`, its params `params`) whose result may be
    /// `input_required` (2026-07-28): the client's handlers
    /// answer the server's input requests and the request is retried, `requestState` echoed
    /// exactly, until the result is complete.
    pub(super) async fn call_with_input(
        &self,
        method_name: &'static str,
        params: impl FnOnce() -> Map<String, Value> + Send,
        first: impl Fn(
            &mut ClientMachine,
            &RequestSettings,
            Instant,
        ) -> Result<OutgoingRequest, ClientStateError>,
        options: &RequestOptions,
        headers: Vec<(String, String)>,
    ) -> Result<Value, ClientError> {
        // The first round by the machine's typed builder; later rounds echo the same params
        // (made only if the server asks for input).
        let (mut method, mut result) = self.call(options, headers.clone(), first).await?;
        let params = std::cell::LazyCell::new(params);
        for _ in 0..16 {
            if result.get("resultType").and_then(Value::as_str) != Some("input_required") {
                return Ok(result);
            }
            let input: InputRequiredResult = parse(&method, result)?;
            let mut responses = Map::new();
            for (key, request) in input.input_requests.unwrap_or_default() {
                let answer =
                    self.answer(&request.method, request.params)
                        .await
                        .map_err(|error| ClientError::Server {
                            method: request.method.clone(),
                            error,
                        })?;
                responses.insert(key, answer);
            }
            let state = input.request_state;
            let p = (*params).clone();
            (method, result) = self
                .call(options, headers.clone(), move |m, o, now| {
                    m.retry_with_input(
                        method_name,
                        p.clone(),
                        responses.clone(),
                        state.clone(),
                        o,
                        now,
                    )
                })
                .await?;
        }
        Err(ClientError::InvalidResult {
            method,
            detail: "the server kept asking for input".into(),
        })
    }

    /// The client's answer to a server request (legacy: sent on the wire; 2026-07-28: an
    /// `inputResponses` entry).
    pub(super) async fn answer(
        &self,
        method_name: &str,
        params: Map<String, Value>,
    ) -> Result<Value, ErrorObject> {
        let kind = super::machine::server_request(method_name.to_owned(), params);
        answer_kind(&self.inner.settings.handlers, kind).await
    }
}

/// Refuses the server's request `id` because [`Callbacks`] are all taken (sent from the read
/// loop itself, so a flood is paced by the refusals rather than queued).
async fn refuse_busy(inner: &Inner, id: RequestId) {
    let cap = inner.settings.callbacks.cap;
    tracing::warn!(
        cap,
        "MCP server sent more requests than the client answers at once (ClientBuilder::max_concurrent_callbacks) and keeps waiting; refusing one"
    );
    let busy = ErrorObject::new(
        ErrorCode::INTERNAL_ERROR,
        format!(
            "the client is busy: {cap} requests of the server are being answered and more wait; try again later"
        ),
    );
    let outbound = Outbound {
        message: serde_json::to_value(ClientMachine::error_response(id, busy)).unwrap_or_default(),
        kind: OutboundKind::Response,
        protocol_version: inner.machine.lock_unpoisoned().negotiated_version(),
    };
    if let Err(e) = inner.transport.send(outbound).await {
        tracing::warn!(error = %e, "could not refuse an MCP server request");
    }
}

/// Reads what the transport receives until it closes, handing replies to their waiters,
/// answering server requests and passing notifications on. Holds the client weakly: a
/// dropped client ends it.
async fn read_loop(inner: Weak<Inner>, mut incoming: mpsc::UnboundedReceiver<Inbound>) {
    while let Some(inbound) = incoming.recv().await {
        let Some(inner) = inner.upgrade() else { return };
        let message = match inbound {
            Inbound::Message(message) => message,
            Inbound::Closed(reason) => {
                close_all(&inner, reason);
                continue;
            }
            Inbound::Failed { id, error } => {
                inner.machine.lock_unpoisoned().forget(&id);
                deliver(&inner, &id, Reply::Failed(error));
                continue;
            }
        };
        let classified = inner.machine.lock_unpoisoned().handle(message);
        match classified {
            Incoming::Response { id, result, .. } => deliver(&inner, &id, Reply::Result(result)),
            Incoming::Error {
                id: Some(id),
                error,
                ..
            } => deliver(&inner, &id, Reply::Error(error)),
            Incoming::Error {
                id: None, error, ..
            } => {
                tracing::warn!(%error, "MCP server sent an error with no request id");
            }
            Incoming::Handshake { id, step } => deliver(&inner, &id, Reply::Handshake(step)),
            Incoming::Request(request) => {
                let callbacks = &inner.settings.callbacks;
                let Ok(admitted) = callbacks.admitted.clone().try_acquire_owned() else {
                    refuse_busy(&inner, request.id).await;
                    continue;
                };
                let running = callbacks.running.clone();
                let inner = Arc::clone(&inner);
                tokio::spawn(async move {
                    let _admitted = admitted;
                    // Waits its turn: at most the cap run at once.
                    let Ok(_running) = running.acquire_owned().await else {
                        return;
                    };
                    let id = request.id.clone();
                    let reply = match answer_kind(&inner.settings.handlers, request.kind).await {
                        Ok(result) => serde_json::to_value(ClientMachine::response(id, &result)),
                        Err(error) => {
                            serde_json::to_value(ClientMachine::error_response(id, error))
                        }
                    };
                    let outbound = Outbound {
                        message: reply.unwrap_or_default(),
                        kind: OutboundKind::Response,
                        protocol_version: inner.machine.lock_unpoisoned().negotiated_version(),
                    };
                    if let Err(e) = inner.transport.send(outbound).await {
                        tracing::warn!(error = %e, "could not answer an MCP server request");
                    }
                });
            }
            Incoming::Notification(note) => {
                if matches!(note, ServerNotification::ToolsListChanged) {
                    invalidate_tool_cache(&inner);
                }
                let _ = inner.notifications.send(note);
            }
            Incoming::NotOurs(why) => {
                tracing::debug!(?why, "MCP message ignored");
            }
        }
    }
    if let Some(inner) = inner.upgrade() {
        close_all(&inner, "the transport closed".into());
    }
}

fn deliver(inner: &Inner, id: &crate::protocol::RequestId, reply: Reply) {
    if let Some(waiter) = inner.waiters.lock_unpoisoned().remove(id) {
        let _ = waiter.send(reply);
    }
}

pub(super) fn invalidate_tool_cache(inner: &Inner) {
    inner.tool_cache_generation.fetch_add(1, Ordering::AcqRel);
    *inner.tool_cache.lock_unpoisoned() = None;
}

fn close_all(inner: &Inner, reason: String) {
    let _ = inner
        .machine
        .lock_unpoisoned()
        .mark_disconnected(reason.clone());
    *inner.closed.lock_unpoisoned() = Some(reason.clone());
    inner.gone.cancel();
    for (_, waiter) in inner.waiters.lock_unpoisoned().drain() {
        let _ = waiter.send(Reply::Closed(reason.clone()));
    }
}

/// Whether `method` is a handshake request's.
fn is_handshake(method: &str) -> bool {
    matches!(method, method::INITIALIZE | method::DISCOVER)
}

/// Sleeps until the machine's next deadline, then hands each request it gives up on to its
/// waiter. Holds the client weakly; ends when the connection is gone.
async fn timer_loop(inner: Weak<Inner>, wake: Arc<Notify>, gone: CancellationToken) {
    loop {
        let deadline = match inner.upgrade() {
            Some(inner) => {
                let machine = inner.machine.lock_unpoisoned();
                let deadline = machine.next_deadline();
                *inner.armed.lock_unpoisoned() = deadline;
                deadline
            }
            None => return,
        };
        let sleep = async {
            match deadline {
                Some(at) => tokio::time::sleep_until(tokio::time::Instant::from_std(at)).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            () = sleep => {}
            () = wake.notified() => continue,
            () = gone.cancelled() => return,
        }
        let Some(inner) = inner.upgrade() else { return };
        let expired = inner.machine.lock_unpoisoned().check_timeouts(now());
        for timed_out in expired {
            let id = timed_out.id.clone();
            deliver(&inner, &id, Reply::TimedOut(timed_out));
        }
    }
}

/// `result` read as the result type of `method`.
pub(super) fn parse<T: DeserializeOwned>(method: &str, result: Value) -> Result<T, ClientError> {
    serde_json::from_value(result).map_err(|e| ClientError::InvalidResult {
        method: method.to_owned(),
        detail: e.to_string(),
    })
}
