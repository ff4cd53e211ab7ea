//! Streams: a request's reply as JSON or as SSE (its notifications first), a legacy session's
//! `GET` stream of what the server sends on its own, and `DELETE`.

use std::convert::Infallible;
use std::sync::Arc;

use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, StatusCode, Uri, header};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use futures_util::stream::{self, Stream};
use futures_util::{FutureExt as _, StreamExt as _};
use serde_json::Value;
use tokio::sync::{OwnedMutexGuard, mpsc};
use tokio_util::sync::{CancellationToken, DropGuard};

use super::checks::{accepts, admit};
use super::drain::{Shutdown, cut_off};
use super::resume::{
    self, StreamLog, drain_hint, new_stream, parse_event_id, replay_events, resume_post, sse_of,
};
use super::sessions::{AppState, SessionSlot, unknown_session};
use super::shared::KeptEvent;
use super::{SESSION_NAME, error_response, header_str, text_response};
use crate::dispatch::outbox::{self, Class};
use crate::dispatch::{Answer, Step, reply_text};
use crate::protocol::{ErrorCode, RequestId};
use crate::registry::CallOptions;
use crate::registry::quota::{self, RATE_LIMITED};
use crate::sync::MutexExt;
use crate::tool::{BoxFuture, NotificationSink};

/// The header naming the last SSE event a client received, to resume its stream after.
static LAST_EVENT_ID: axum::http::HeaderName = axum::http::HeaderName::from_static("last-event-id");

/// A request's typed answer (`None`: nothing to send), and the id it goes under.
type Answered = Option<(Option<RequestId>, Answer)>;

enum Flow {
    Notification(Value),
    Reply(Answered),
}

/// A request started: answered already, or its answer to await (for the request of this
/// id: a call cut off by the drain bound is answered under it).
pub(super) enum Pending {
    Ready(Answered),
    Later(Option<RequestId>, BoxFuture<'static, Answered>),
}

impl Pending {
    /// What starting a request in dispatch gave.
    pub(super) fn of(started: Option<(Option<RequestId>, Step)>) -> Self {
        match started {
            None => Pending::Ready(None),
            Some((id, Step::Answered(answer) | Step::Changed(answer, _))) => {
                Pending::Ready(Some((id, answer)))
            }
            Some((id, step)) => Pending::Later(
                id.clone(),
                Box::pin(async move { Some((id, step.answer().await)) }),
            ),
        }
    }
}

/// How an answer's error maps to the HTTP status (a reply streamed as SSE is always `200`).
#[derive(Clone, Copy)]
pub(super) enum Mode {
    /// 2026-07-28: an unknown method is `404`, a missing client capability `400`.
    Modern,
    /// A request in the 2026-07-28 shape that names another version: every error is `400`.
    Strict,
    /// A legacy session: errors travel in `200` replies (a rate limit's too: legacy clients
    /// take a non-`200` reply for a transport failure). A stateless reply refused by a
    /// quota is `429` with `Retry-After`.
    Session,
}

impl Mode {
    fn status(self, answer: &Answer) -> StatusCode {
        let Answer::Error(error) = answer else {
            return StatusCode::OK;
        };
        match (self, error.code) {
            (Mode::Modern | Mode::Strict, RATE_LIMITED) => StatusCode::TOO_MANY_REQUESTS,
            (Mode::Strict, _) => StatusCode::BAD_REQUEST,
            (Mode::Modern, ErrorCode::METHOD_NOT_FOUND) => StatusCode::NOT_FOUND,
            (Mode::Modern, ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY) => {
                StatusCode::BAD_REQUEST
            }
            _ => StatusCode::OK,
        }
    }
}

/// Runs one request, answering with JSON when the reply comes first, or with an SSE stream
/// (notifications, then the reply) when a notification comes first. Dropping the response —
/// the client going away — cancels the call. The caller's claims, when authorized, go to the
/// call's extensions. A request answered while it starts is answered without a task.
///
/// The stream's queue follows the session outbox's rule: the reply is never dropped, and
/// past [`OUTBOX_CAPACITY`](crate::dispatch::OUTBOX_CAPACITY) notifications a slow reader
/// misses the oldest (counted, logged).
///
/// Once `state`'s [`Shutdown`](super::Shutdown) has run for
/// [`HttpConfig::drain_timeout`](super::HttpConfig::drain_timeout), a call still running is
/// cancelled and answered with an error saying so.
///
/// A legacy session's call (`resume`: its session) streams resumably: its events are kept
/// for a `GET` with `Last-Event-ID`.
pub(super) async fn respond<F>(
    state: &AppState,
    mode: Mode,
    options: CallOptions,
    resume: Option<&SessionSlot>,
    start: F,
) -> Response
where
    F: FnOnce(CallOptions) -> Pending,
{
    let (tx, rx) = outbox::bounded::<Flow>("a POST's SSE stream (its client reads too little)");
    let token = CancellationToken::new();
    let sink = {
        let tx = tx.clone();
        NotificationSink::new(move |n| {
            let class = Class::of_note(&n);
            tx.push(Flow::Notification(n), class);
        })
    };
    let started = start(options.notifications(sink).cancellation(token.clone()));
    let answered = match started {
        Pending::Ready(answered) => Some(answered),
        // Most calls finish on their first poll: answered here, without a task of their own
        // (a spawn, its wake-ups and the hop through the outbox cost more than the call).
        Pending::Later(id, mut answer) => match (&mut answer).now_or_never() {
            Some(answered) => Some(answered),
            None => {
                let token = token.clone();
                let shutdown = state.config.shutdown.clone();
                let limit = state.config.drain_timeout;
                let tx = tx.clone();
                tokio::spawn(async move {
                    let answered = tokio::select! {
                        answered = answer => answered,
                        () = shutdown.expired(limit) => {
                            token.cancel();
                            Some((id, Answer::Error(cut_off(limit))))
                        }
                    };
                    tx.reply(Flow::Reply(answered));
                });
                None
            }
        },
    };
    // Dropping the response (the client going away) cancels the call.
    let guard = token.drop_guard();
    if let Some(answered) = answered {
        // No notification came first: the reply, without the hop through the queue.
        if rx.is_empty() {
            return reply_response(mode, answered, guard);
        }
        tx.reply(Flow::Reply(answered));
    }
    drop(tx);
    match rx.next().await {
        None => StatusCode::ACCEPTED.into_response(),
        Some(Flow::Reply(answered)) => reply_response(mode, answered, guard),
        Some(Flow::Notification(first)) => {
            match resume.and_then(|slot| StreamLog::of(state, &slot.id, slot.events())) {
                Some(log) => resumable_sse(first, rx, guard, log),
                None => Sse::new(sse_stream(first, rx, guard))
                    .keep_alive(KeepAlive::default())
                    .into_response(),
            }
        }
    }
}

/// The response for the reply `answered` (`202` when there is none); the call is over, so
/// `guard` is disarmed when there is one.
fn reply_response(mode: Mode, answered: Answered, guard: DropGuard) -> Response {
    let Some((id, answer)) = answered else {
        return StatusCode::ACCEPTED.into_response();
    };
    drop(guard.disarm());
    let status = mode.status(&answer);
    let retry = match &answer {
        Answer::Error(e) if status == StatusCode::TOO_MANY_REQUESTS => {
            quota::retry_after_seconds(e)
        }
        _ => None,
    };
    match reply_text(id, answer) {
        Some(reply) => with_retry_after(text_response(status, reply), retry),
        None => StatusCode::ACCEPTED.into_response(),
    }
}

/// A legacy session's POST stream: each event kept (under its id) before it is sent, by a
/// task that goes on when the client goes away (a disconnection is no cancellation), up to
/// the reply, so that the client resumes it, here or on another replica.
fn resumable_sse(
    first: Value,
    rx: outbox::Receiver<Flow>,
    guard: DropGuard,
    log: StreamLog,
) -> Response {
    drop(guard.disarm());
    let stream = new_stream('p');
    let (tx, body) = resume::channel();
    tokio::spawn(async move {
        let mut next = Some(Flow::Notification(first));
        let mut open = true;
        loop {
            let flow = match next.take() {
                Some(flow) => flow,
                None => match rx.next().await {
                    Some(flow) => flow,
                    None => return,
                },
            };
            let (text, last) = match flow {
                Flow::Notification(n) => (n.to_string(), false),
                Flow::Reply(answered) => {
                    match answered.and_then(|(id, answer)| reply_text(id, answer)) {
                        Some(reply) => (reply, true),
                        None => return,
                    }
                }
            };
            let event = log.event(&stream, text, last).await;
            open = open && tx.send(event).await.is_ok();
            if last {
                return;
            }
        }
    });
    sse_of(body)
}

/// `response` with `Retry-After: seconds`, when there are some.
fn with_retry_after(mut response: Response, seconds: Option<u64>) -> Response {
    if let Some(seconds) = seconds {
        response
            .headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from(seconds));
    }
    response
}

fn sse_stream(
    first: Value,
    rx: outbox::Receiver<Flow>,
    guard: DropGuard,
) -> impl Stream<Item = Result<Event, Infallible>> {
    let head =
        stream::once(async move { Ok(Event::default().event("message").data(first.to_string())) });
    let rest = stream::unfold((rx, Some(guard)), |(rx, guard)| async move {
        guard.as_ref()?;
        match rx.next().await? {
            Flow::Notification(n) => Some((
                Ok(Event::default().event("message").data(n.to_string())),
                (rx, guard),
            )),
            Flow::Reply(answered) => {
                // The call is over: ending the stream must not cancel anything.
                if let Some(g) = guard {
                    g.disarm();
                }
                let (id, answer) = answered?;
                reply_text(id, answer).map(|reply| {
                    (
                        Ok(Event::default().event("message").data(reply)),
                        (rx, None),
                    )
                })
            }
        }
    });
    head.chain(rest)
}

pub(super) async fn handle_get(
    State(state): State<Arc<AppState>>,
    uri: Uri,
    headers: HeaderMap,
) -> Response {
    let caller = match admit(&state, "GET", &uri, &headers).await {
        Ok(caller) => caller,
        Err(refused) => return refused,
    };
    let Some(session_id) = header_str(&headers, &SESSION_NAME) else {
        super::log_refusal(
            StatusCode::METHOD_NOT_ALLOWED,
            "GET without Mcp-Session-Id: only a legacy session has a GET stream",
        );
        return StatusCode::METHOD_NOT_ALLOWED.into_response();
    };
    if !accepts(&headers, "text/event-stream") {
        return error_response(
            StatusCode::NOT_ACCEPTABLE,
            None,
            ErrorCode::INVALID_REQUEST,
            "the Accept header must list text/event-stream",
        );
    }
    let slot = match state.find_session(session_id, caller.as_ref(), None).await {
        Ok(slot) => slot,
        Err(refused) => return refused,
    };
    let log = StreamLog::of(&state, session_id, slot.events());
    match (log, header_str(&headers, &LAST_EVENT_ID)) {
        (Some(log), Some(id)) => resume(&state, slot, session_id, log, id).await,
        (log, _) => {
            let token = take_stream(&slot, session_id);
            let log = log.map(|log| (log, new_stream('g')));
            open_get(&state, slot, token, log, Vec::new(), None)
        }
    }
}

/// A `GET` with `Last-Event-ID`: the stream its event belongs to, resumed (a POST's, or the
/// session's `GET` stream), or the refusal saying why not.
async fn resume(
    state: &AppState,
    slot: Arc<SessionSlot>,
    session_id: &str,
    log: StreamLog,
    id: &str,
) -> Response {
    let Some((stream, seq)) = parse_event_id(id) else {
        return error_response(
            StatusCode::BAD_REQUEST,
            None,
            ErrorCode::INVALID_REQUEST,
            format!(
                "Last-Event-ID {id:?} is no event id this server sent; open a GET stream without it"
            ),
        );
    };
    if stream.starts_with('p') {
        return match log.after(stream, seq, id).await {
            Ok(replay) => resume_post(
                log,
                stream.to_owned(),
                seq,
                replay,
                state.config.shutdown.clone(),
            ),
            Err(refused) => refused,
        };
    }
    let token = take_stream(&slot, session_id);
    // What the stream it replaces took is kept before this reads it.
    let pen = slot.pen().clone().lock_owned().await;
    match log.after(stream, seq, id).await {
        Ok(replay) => {
            let log = Some((log, stream.to_owned()));
            open_get(state, slot, token, log, replay, Some(pen))
        }
        Err(refused) => refused,
    }
}

/// The newest GET gets the session's stream: a client that lost its stream (maybe without
/// the server noticing yet) opens it again, and the one it lost ends.
fn take_stream(slot: &SessionSlot, session_id: &str) -> CancellationToken {
    let token = CancellationToken::new();
    let previous = slot.stream.lock_unpoisoned().replace(token.clone());
    if let Some(previous) = previous {
        tracing::debug!(
            session = session_id,
            "HTTP: a new GET replaces the session's stream"
        );
        previous.cancel();
    }
    token
}

/// The session's `GET` stream: `replay` (kept events of `log`'s stream), then what the
/// session sends on its own, each event kept first when `log` is given; until `token` is
/// cancelled, or the server drains (then it ends with a retry hint).
fn open_get(
    state: &AppState,
    slot: Arc<SessionSlot>,
    token: CancellationToken,
    log: Option<(StreamLog, String)>,
    replay: Vec<KeptEvent>,
    pen: Option<OwnedMutexGuard<()>>,
) -> Response {
    let (tx, rx) = resume::channel();
    let shutdown = state.config.shutdown.clone();
    tokio::spawn(async move {
        if let Some((_, stream)) = &log {
            for event in replay_events(stream, replay) {
                if !send(&tx, &token, event).await {
                    return;
                }
            }
        }
        drop(pen);
        pump_get(&slot, &token, &shutdown, log.as_ref(), &tx).await;
    });
    sse_of(rx)
}

/// `event` sent on `tx`, unless the stream ends first: whether it was.
async fn send(tx: &mpsc::Sender<Event>, token: &CancellationToken, event: Event) -> bool {
    tokio::select! {
        () = token.cancelled() => false,
        sent = tx.send(event) => sent.is_ok(),
    }
}

/// What the session sends on its own, to its `GET` stream `tx`, each kept first in `log`.
async fn pump_get(
    slot: &SessionSlot,
    token: &CancellationToken,
    shutdown: &Shutdown,
    log: Option<&(StreamLog, String)>,
    tx: &mpsc::Sender<Event>,
) {
    loop {
        let pen = slot.pen().lock().await;
        let pushed = tokio::select! {
            biased;
            () = token.cancelled() => return,
            // Draining: what is queued goes out (kept) first, then the stream ends with a
            // hint to reconnect (to another replica, which resumes it).
            () = shutdown.draining() => {
                while let Some(Some(n)) = slot.pushed.next().now_or_never() {
                    if tx.send(pushed_event(log, &n).await).await.is_err() {
                        return;
                    }
                }
                let _ = tx.send(drain_hint()).await;
                return;
            }
            () = tx.closed() => return,
            pushed = slot.pushed.next() => pushed,
        };
        let Some(n) = pushed else {
            return;
        };
        let event = pushed_event(log, &n).await;
        drop(pen);
        if !send(tx, token, event).await {
            return;
        }
    }
}

/// A message of the session's own, as the event of its `GET` stream (kept first).
async fn pushed_event(log: Option<&(StreamLog, String)>, n: &Value) -> Event {
    match log {
        Some((log, stream)) => log.event(stream, n.to_string(), false).await,
        None => Event::default().event("message").data(n.to_string()),
    }
}

pub(super) async fn handle_delete(
    State(state): State<Arc<AppState>>,
    uri: Uri,
    headers: HeaderMap,
) -> Response {
    let caller = match admit(&state, "DELETE", &uri, &headers).await {
        Ok(caller) => caller,
        Err(refused) => return refused,
    };
    let Some(session_id) = header_str(&headers, &SESSION_NAME) else {
        super::log_refusal(
            StatusCode::METHOD_NOT_ALLOWED,
            "DELETE without Mcp-Session-Id: only a legacy session can be ended",
        );
        return StatusCode::METHOD_NOT_ALLOWED.into_response();
    };
    match state.delete_session(session_id, caller.as_ref()).await {
        Ok(true) => StatusCode::OK.into_response(),
        Ok(false) => unknown_session(None, session_id),
        Err(refused) => refused,
    }
}
