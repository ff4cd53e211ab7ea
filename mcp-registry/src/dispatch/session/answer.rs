//! Answering one message in a session: the lifecycle gate, the in-flight table (every
//! request kind can be cancelled while it runs), batches (2025-03-26), and whether the
//! message changed the session (a shared session is then saved for the other replicas).

use std::sync::Arc;

use serde_json::Value;
use tokio_util::sync::CancellationToken;

#[cfg(feature = "stdio")]
use super::Registered;
use super::in_flight::InFlight;
use super::{Lifecycle, ServerSession, client_capabilities};
use crate::dispatch::client_requests::SessionInput;
use crate::dispatch::{
    Answer, Connection, Dispatcher, Step, empty_batch, error_value, parse_error, refuse_too_deep,
    reply_text, reply_value,
};
use crate::protocol::decode::{
    Decoded, IncomingRequest, Invalid, TextMessage, decode, decode_text,
};
use crate::protocol::{
    Era, ErrorCode, ErrorObject, ProtocolVersion, RequestId, drop_flat, exceeds_max_depth, method,
};
use crate::registry::CallOptions;
use crate::tool::BoxFuture;

/// A request already in the in-flight table (its id and generation), entered where it was
/// read; `None`: it enters as it is answered.
type Ahead<'a> = Option<(&'a RequestId, u64)>;

/// How a request enters the in-flight table.
#[derive(Clone, Copy)]
enum Entering<'a> {
    /// As it is answered; `own_token`: under the caller's cancellation token itself, which
    /// the caller made for this request alone (see [`ServerSession::enter`]).
    Now { own_token: bool },
    /// Already entered where it was read, under this id and generation.
    Ahead(&'a RequestId, u64),
}

impl<'a> From<Ahead<'a>> for Entering<'a> {
    fn from(ahead: Ahead<'a>) -> Self {
        ahead.map_or(Entering::Now { own_token: false }, |(id, generation)| {
            Entering::Ahead(id, generation)
        })
    }
}

/// A message answered, and whether it changed the session's snapshot.
type Noted<T> = (Option<T>, bool);

/// A request started in a session ([`ServerSession::start_own_token`]).
pub(crate) enum Started {
    /// Answered while it started (or a message that is no request, handled), and whether
    /// it changed the session's snapshot (a request that waits changes nothing).
    Answered(Noted<(Option<RequestId>, Answer)>),
    /// A call (or other work) to await for its answer.
    Running(Running),
}

impl Started {
    fn running(id: Option<RequestId>, step: Step, entry: Entry<'_>) -> Started {
        let entry = match entry {
            Entry::Now(entry) => Some(entry),
            Entry::Ahead(..) => None,
        };
        Started::Running(Running { id, step, entry })
    }
}

/// A request of a session that is running: await [`answer`](Self::answer). It leaves the
/// in-flight table once answered, or dropped.
pub(crate) struct Running {
    id: Option<RequestId>,
    step: Step,
    /// Its entry, when it was entered as it started (otherwise its holder's).
    entry: Option<InFlight>,
}

impl Running {
    /// The id of the request.
    #[cfg(feature = "http")]
    pub(crate) fn id(&self) -> Option<&RequestId> {
        self.id.as_ref()
    }

    /// The request's answer, under its id.
    pub(crate) async fn answer(self) -> (Option<RequestId>, Answer) {
        let Running { id, step, entry } = self;
        let answer = step.answer().await;
        drop(entry);
        (id, answer)
    }
}

/// A request's entry in the in-flight table while it starts.
enum Entry<'a> {
    /// Entered as it started: it leaves the table when this drops.
    Now(InFlight),
    /// Entered where it was read (its id and generation); its holder removes it.
    Ahead(&'a RequestId, u64),
}

impl Entry<'_> {
    /// The entry's cancellation token; `None` once it was cancelled.
    fn watch(&self, session: &ServerSession) -> Option<CancellationToken> {
        let (id, generation) = match self {
            Entry::Now(entry) => (&entry.id, entry.generation),
            Entry::Ahead(id, generation) => (*id, *generation),
        };
        session.in_flight().token(id, generation).cloned()
    }
}

/// One message of a batch, with its options and, when it is a request entered in the
/// in-flight table where it was read, that entry.
struct Element<'a> {
    message: Value,
    options: CallOptions,
    ahead: Ahead<'a>,
}

/// The messages of `batch`, each with `options`, none entered yet.
fn elements(batch: Vec<Value>, options: &CallOptions) -> Vec<Element<'static>> {
    batch
        .into_iter()
        .map(|message| Element {
            message,
            options: options.clone(),
            ahead: None,
        })
        .collect()
}

impl ServerSession {
    pub(super) async fn answer_value(&self, message: Value, options: CallOptions) -> Option<Value> {
        self.handle_noting_change(message, options).await.0
    }

    /// [`handle`](Self::handle), and whether the message (or a message of the batch)
    /// changed the session's [`snapshot`](Self::snapshot).
    pub(crate) async fn handle_noting_change(
        &self,
        message: Value,
        options: CallOptions,
    ) -> Noted<Value> {
        match message {
            // A batch too deep is refused whole (as its text would be), dropped flat.
            Value::Array(_) if exceeds_max_depth(&message) => (refuse_too_deep(message), false),
            Value::Array(batch) => self.handle_batch(elements(batch, &options)).await,
            message => self.answer_value_of(decode(message), options, None).await,
        }
    }

    /// Whether a JSON-RPC batch is served now: the session is initialized under a protocol
    /// version that has batches ([`ProtocolVersion::has_batches`]: 2025-03-26).
    pub fn accepts_batches(&self) -> bool {
        let state = self.state();
        state.lifecycle.is_initialized() && state.version.is_some_and(ProtocolVersion::has_batches)
    }

    /// Serves (or refuses) a batch. Boxed: a batch is rare, and its future would otherwise
    /// size every single message's.
    fn handle_batch<'a>(&'a self, batch: Vec<Element<'a>>) -> BoxFuture<'a, Noted<Value>> {
        Box::pin(async move {
            let refuse = |message: String| {
                Some(error_value(
                    None,
                    ErrorObject::new(ErrorCode::INVALID_REQUEST, message),
                ))
            };
            if !self.accepts_batches() {
                // Dropped flat: a refused batch can be nested as deep as a caller made it.
                batch.into_iter().for_each(|e| drop_flat(e.message));
                let version = self
                    .protocol_version()
                    .map_or("none yet".to_owned(), |v| v.to_string());
                return (
                    refuse(format!(
                        "JSON-RPC batches are served only in a session initialized with a protocol version that has them (2025-03-26); negotiated: {version}"
                    )),
                    false,
                );
            }
            if batch.is_empty() {
                return (Some(error_value(None, empty_batch())), false);
            }
            // An element that is itself an array is refused by `respond` (not an object).
            let answered = futures_util::future::join_all(
                batch
                    .into_iter()
                    .map(|e| self.answer_value_of(decode(e.message), e.options, e.ahead)),
            )
            .await;
            let changed = answered.iter().any(|(_, changed)| *changed);
            let replies: Vec<Value> = answered.into_iter().filter_map(|(r, _)| r).collect();
            (
                (!replies.is_empty()).then_some(Value::Array(replies)),
                changed,
            )
        })
    }

    async fn answer_value_of(
        &self,
        message: Decoded<'_>,
        options: CallOptions,
        ahead: Ahead<'_>,
    ) -> Noted<Value> {
        let (answered, changed) = self.answer_entered(message, options, ahead.into()).await;
        (
            answered.and_then(|(id, answer)| reply_value(id, answer)),
            changed,
        )
    }

    pub(super) async fn answer_text(&self, text: &str, options: CallOptions) -> Option<String> {
        let message = match decode_text(text) {
            Ok(TextMessage::One(message)) => message,
            Ok(TextMessage::Batch(batch)) => {
                let (reply, _) = self.handle_batch(elements(batch, &options)).await;
                return reply.map(|v| v.to_string());
            }
            Err(e) => return Some(parse_error(e).to_string()),
        };
        self.answer_as_text(message, options).await
    }

    /// [`answer`](Self::answer), written as JSON text (what stdio and [`handle_text`]
    /// send).
    ///
    /// [`handle_text`]: Self::handle_text
    pub(crate) async fn answer_as_text(
        &self,
        message: Decoded<'_>,
        options: CallOptions,
    ) -> Option<String> {
        let (id, answer) = self.answer(message, options).await?;
        reply_text(id, answer)
    }

    /// The session's part of handling one message: its lifecycle, cancellation and
    /// notifications. The answer (`None`: nothing to send) is left for the caller to write
    /// as a value or as text, or for a transport to map to its status.
    pub(crate) async fn answer(
        &self,
        message: Decoded<'_>,
        options: CallOptions,
    ) -> Option<(Option<RequestId>, Answer)> {
        self.answer_noting_change(message, options).await.0
    }

    /// [`answer`](Self::answer), and whether the message changed the session's
    /// [`snapshot`](Self::snapshot) (a shared session is then saved for the other replicas):
    /// a request dispatch returned an [`Effect`] for, or `notifications/initialized`.
    pub(crate) async fn answer_noting_change(
        &self,
        message: Decoded<'_>,
        options: CallOptions,
    ) -> Noted<(Option<RequestId>, Answer)> {
        self.answer_entered(message, options, Entering::Now { own_token: false })
            .await
    }

    /// [`answer_noting_change`](Self::answer_noting_change) of a message whose request, if
    /// it is one, may already be in the in-flight table (`entering`).
    async fn answer_entered(
        &self,
        message: Decoded<'_>,
        options: CallOptions,
        entering: Entering<'_>,
    ) -> Noted<(Option<RequestId>, Answer)> {
        match self.start_entered(message, options, entering) {
            Started::Answered(noted) => noted,
            Started::Running(running) => (Some(running.answer().await), false),
        }
    }

    /// [`answer_noting_change`](Self::answer_noting_change), started, of a request whose
    /// cancellation token in `options` is its own (a Streamable HTTP POST makes one per
    /// request): the in-flight table enters that token rather than a child of it, so
    /// `notifications/cancelled` cancels it (issue #41: a child costs an allocation and two
    /// locks of the parent per call). What is left to await borrows nothing from `message`
    /// (a transport answers it after the body is gone, without making the message owned).
    #[cfg(feature = "http")]
    pub(crate) fn start_own_token(&self, message: Decoded<'_>, options: CallOptions) -> Started {
        self.start_entered(message, options, Entering::Now { own_token: true })
    }

    /// The part of [`answer_entered`](Self::answer_entered) that does not wait: the
    /// lifecycle gate, the in-flight table and dispatch's start.
    fn start_entered(
        &self,
        message: Decoded<'_>,
        options: CallOptions,
        entering: Entering<'_>,
    ) -> Started {
        let request = match message {
            Decoded::Invalid(Invalid { id, error }) => {
                return Started::Answered((Some((id, Answer::Error(error))), false));
            }
            Decoded::Silent => return Started::Answered((None, false)),
            Decoded::Response(response) => {
                // Once shut down, the calls that asked are cancelled: nothing is delivered.
                if self.lifecycle() != Lifecycle::ShuttingDown {
                    self.inner.requests.answer(response);
                }
                return Started::Answered((None, false));
            }
            Decoded::Notification(n) => {
                return Started::Answered((None, self.on_notification(&n.method, &n.params)));
            }
            Decoded::Request(request) => request,
        };
        let id = Some(request.id.clone());
        // Cancelled (or the session shut down) before it started: it does not start.
        if let Entering::Ahead(entered, generation) = entering
            && self.in_flight().token(entered, generation).is_none()
        {
            return Started::Answered((Some((id, Answer::Suppressed)), false));
        }
        let admitted_in = match self.admit(&request.method, &request.era) {
            Ok(lifecycle) => lifecycle,
            Err(refusal) => return Started::Answered((Some((id, Answer::Error(refusal))), false)),
        };
        let client =
            (request.method == method::INITIALIZE).then(|| client_capabilities(&request.params));
        let (step, entry) = self.dispatch(request, options, entering);
        let answer = match step {
            Step::Answered(answer) => answer,
            Step::Changed(answer, effect) => {
                drop(entry);
                let answer = self.apply(*effect, &admitted_in, client, answer);
                return Started::Answered((Some((id, answer)), true));
            }
            // What waits (a prompt, a resource read, a completion, a skill, a `tasks/result`
            // wait, a listen stream) ends when the request is cancelled, whether or not it
            // watches its token. A request no longer in the table was cancelled.
            Step::Waiting(answer) => match entry.watch(self) {
                Some(token) => {
                    let answer = Box::pin(async move {
                        token
                            .run_until_cancelled(answer)
                            .await
                            .unwrap_or(Answer::Suppressed)
                    });
                    return Started::running(id, Step::Waiting(answer), entry);
                }
                None => Answer::Suppressed,
            },
            // A call stops at its token itself (the guarded runner watches it).
            step @ Step::Calling(_) => return Started::running(id, step, entry),
        };
        Started::Answered((Some((id, answer)), false))
    }

    /// The lifecycle gate: whether the session serves `method` in its current state. Returns
    /// the state it was admitted in.
    fn admit(
        &self,
        method: &str,
        era: &Result<Era, Box<ErrorObject>>,
    ) -> Result<Lifecycle, ErrorObject> {
        // Only a legacy request goes through the handshake's gate. The others are served
        // statelessly (2026-07-28) or refused by dispatch whatever the state (an unsupported
        // version gets -32022, which a modern client's probe relies on).
        let legacy = matches!(era, Ok(Era::Legacy(_)));
        let lifecycle = self.lifecycle();
        let refusal = match (&lifecycle, method, legacy) {
            (Lifecycle::ShuttingDown, "ping", _) => return Ok(lifecycle),
            (Lifecycle::ShuttingDown, _, _) => {
                ErrorObject::new(ErrorCode::INVALID_REQUEST, "the session is shutting down")
            }
            (_, _, false) => return Ok(lifecycle),
            (Lifecycle::Uninitialized | Lifecycle::Error(_), "initialize" | "ping", true) => {
                return Ok(lifecycle);
            }
            (Lifecycle::Error(reason), _, true) => ErrorObject::new(
                ErrorCode::INTERNAL_ERROR,
                format!("the session is in an error state: {reason}"),
            ),
            (Lifecycle::Uninitialized, _, true) => ErrorObject::new(
                ErrorCode::INVALID_REQUEST,
                format!(
                    "{method} received before initialize; the session must be initialized first"
                ),
            ),
            (Lifecycle::Initializing | Lifecycle::Ready, "initialize", true) => ErrorObject::new(
                ErrorCode::INVALID_REQUEST,
                "the session is already initialized",
            ),
            (Lifecycle::Initializing | Lifecycle::Ready, _, true) => return Ok(lifecycle),
        };
        Err(refusal)
    }

    /// Dispatch's start of an admitted request. Every request is in the in-flight table
    /// while it runs (entered here, unless already; the entry is returned), so
    /// `notifications/cancelled`, `reset` and `shutdown` stop it, and its reply is not sent.
    fn dispatch<'a>(
        &self,
        request: IncomingRequest<'_>,
        mut options: CallOptions,
        entering: Entering<'a>,
    ) -> (Step, Entry<'a>) {
        let entry = match entering {
            Entering::Ahead(id, generation) => Entry::Ahead(id, generation),
            Entering::Now { own_token } => {
                Entry::Now(self.track(&request.id, &mut options, own_token))
            }
        };
        if options.notifications.is_none() {
            options = options.notifications(self.inner.notifications.clone());
        }
        if options.caller.is_anonymous() {
            options.caller = self.own_caller().clone();
        }
        let connection = self.connection(&request, &mut options);
        let step = Dispatcher::new(&self.inner.registry).start(
            &self.inner.server,
            request,
            &mut options,
            connection,
        );
        (step, entry)
    }

    /// The connection's facts for `request`; a legacy call gets its way to ask the client
    /// (elicitation, sampling, roots) in `options`.
    fn connection(&self, request: &IncomingRequest<'_>, options: &mut CallOptions) -> Connection {
        let (legacy_version, log_level, client) = {
            let state = self.state();
            (state.version, state.log_level, state.client.clone())
        };
        let apps = crate::dispatch::apps::session_declares(client.as_deref());
        // A legacy call asks the client with requests on the call's own stream.
        if request.method == method::TOOLS_CALL
            && matches!(request.era, Ok(Era::Legacy(_)))
            && options.input.is_none()
            && let (Some(client), Some(sink)) = (client, &options.notifications)
        {
            // A call run as a task (2025-11-25 `task`) outlives its stream: it asks on the
            // session's own (HTTP: the GET stream).
            // Its requests name the task (`related-task`).
            let (sink, related_task) = match request.params.contains_key("task") {
                true => {
                    let own = self.inner.notifications.clone();
                    let slot = crate::task::TaskIdSlot::default();
                    *options = std::mem::take(options)
                        .extension(crate::task::SessionStream(own.clone()))
                        .extension(slot.clone());
                    (own, Some(slot))
                }
                false => (sink.clone(), None),
            };
            options.input = Some(Arc::new(SessionInput {
                client,
                sink,
                requests: self.inner.requests.clone(),
                related_task,
            }));
        }
        Connection {
            legacy_version,
            // Advertised only when the watcher that sends it runs.
            list_changed: self.inner.watcher.is_some(),
            subscriptions: true,
            logging: true,
            log_level,
            apps,
        }
    }
}

#[cfg(feature = "stdio")]
impl Registered {
    /// Answers `message`, the request this entry was registered for, as JSON text (`None`:
    /// no reply, as when it was cancelled before or while it ran).
    pub(crate) async fn answer_as_text(
        &self,
        message: Decoded<'_>,
        options: CallOptions,
    ) -> Option<String> {
        let entering = Entering::Ahead(&self.id, self.generation);
        let (answered, _) = self
            .session
            .answer_entered(message, options, entering)
            .await;
        let (id, answer) = answered?;
        reply_text(id, answer)
    }
}

/// A batch whose requests were entered in the in-flight table where it was read
/// ([`ServerSession::register_batch`]), until it is answered.
#[cfg(feature = "stdio")]
pub(crate) struct RegisteredBatch {
    session: ServerSession,
    batch: Vec<Value>,
    /// Each message's options, and its entry when it is a request.
    entered: Vec<(Option<Registered>, CallOptions)>,
}

#[cfg(feature = "stdio")]
impl ServerSession {
    /// Enters the requests of `batch` in the in-flight table now, each as
    /// [`register`](Self::register) does, with `options`; answer it with
    /// [`RegisteredBatch::answer`].
    pub(crate) fn register_batch(
        &self,
        batch: Vec<Value>,
        options: &CallOptions,
    ) -> RegisteredBatch {
        let entered = batch
            .iter()
            .map(|message| {
                let mut options = options.clone();
                let request = message.get("method").is_some_and(Value::is_string);
                let id = message.get("id").and_then(RequestId::from_value);
                let registered = id
                    .filter(|_| request)
                    .map(|id| self.register(&id, &mut options));
                (registered, options)
            })
            .collect();
        RegisteredBatch {
            session: self.clone(),
            batch,
            entered,
        }
    }
}

#[cfg(feature = "stdio")]
impl RegisteredBatch {
    /// Answers the batch as [`handle`](ServerSession::handle) does; its requests leave the
    /// in-flight table once it is answered.
    pub(crate) async fn answer(self) -> Option<Value> {
        let RegisteredBatch {
            session,
            batch,
            entered,
        } = self;
        // A batch too deep is refused whole (as its text would be), dropped flat.
        let batch = Value::Array(batch);
        if exceeds_max_depth(&batch) {
            return refuse_too_deep(batch);
        }
        let Value::Array(batch) = batch else {
            return None;
        };
        let elements = batch
            .into_iter()
            .zip(entered.iter())
            .map(|(message, (registered, options))| Element {
                message,
                options: options.clone(),
                ahead: registered.as_ref().map(|r| (&r.id, r.generation)),
            })
            .collect();
        session.handle_batch(elements).await.0
    }
}
