//! Streams: a request's reply as JSON or as SSE (its notifications first), a legacy session's
//! `GET` stream of what the server sends on its own, and `DELETE`.

use std::convert::Infallible;
use std::sync::{Arc, PoisonError};

use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, StatusCode, Uri, header};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use futures_util::StreamExt as _;
use futures_util::stream::{self, Stream};
use serde_json::Value;
use tokio_util::sync::{CancellationToken, DropGuard};

use super::checks::{accepts, admit};
use super::drain::{DRAIN_RETRY, cut_off};
use super::sessions::{AppState, unknown_session};
use super::{SESSION_NAME, error_response, header_str, text_response};
use crate::dispatch::outbox::{self, Class};
use crate::dispatch::{Answer, Step, reply_text};
use crate::protocol::{ErrorCode, RequestId};
use crate::registry::CallOptions;
use crate::registry::quota::{self, RATE_LIMITED};
use crate::tool::{BoxFuture, NotificationSink};

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
pub(super) async fn respond<F>(
    state: &AppState,
    mode: Mode,
    options: CallOptions,
    start: F,
) -> Response
where
    F: FnOnce(CallOptions) -> Pending,
{
    let (tx, rx) = outbox::bounded::<Flow>("a POST's SSE stream (its client reads too little)");
    let token = CancellationToken::new();
    let guard = token.clone().drop_guard();
    let sink = {
        let tx = tx.clone();
        NotificationSink::new(move |n| {
            let class = Class::of_note(&n);
            tx.push(Flow::Notification(n), class);
        })
    };
    match start(options.notifications(sink).cancellation(token.clone())) {
        Pending::Ready(answered) => {
            tx.reply(Flow::Reply(answered));
        }
        Pending::Later(id, answer) => {
            let shutdown = state.config.shutdown.clone();
            let limit = state.config.drain_timeout;
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
        }
    }
    match rx.next().await {
        None | Some(Flow::Reply(None)) => StatusCode::ACCEPTED.into_response(),
        Some(Flow::Reply(Some((id, answer)))) => {
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
        Some(Flow::Notification(first)) => Sse::new(sse_stream(first, rx, guard))
            .keep_alive(KeepAlive::default())
            .into_response(),
    }
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
    // The newest GET gets the stream: a client that lost its stream (maybe without the
    // server noticing yet) opens it again, and the one it lost ends.
    let token = CancellationToken::new();
    let previous = slot
        .stream
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .replace(token.clone());
    if let Some(previous) = previous {
        tracing::debug!(
            session = session_id,
            "HTTP: a new GET replaces the session's stream"
        );
        previous.cancel();
    }
    let shutdown = state.config.shutdown.clone();
    let events = stream::unfold(Some((slot, token)), move |open| {
        let shutdown = shutdown.clone();
        async move {
            let (slot, token) = open?;
            let n = tokio::select! {
                biased;
                () = token.cancelled() => None,
                // Draining: the stream ends with a hint to reconnect (to another replica).
                () = shutdown.draining() => {
                    let hint = Event::default().retry(DRAIN_RETRY).comment("draining");
                    return Some((Ok(hint), None));
                }
                n = slot.pushed.next() => n,
            }?;
            Some((
                Ok::<_, Infallible>(Event::default().event("message").data(n.to_string())),
                Some((slot, token)),
            ))
        }
    });
    Sse::new(events)
        .keep_alive(KeepAlive::default())
        .into_response()
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
