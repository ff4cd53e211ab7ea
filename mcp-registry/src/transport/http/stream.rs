//! Streams: a request's reply as JSON or as SSE (its notifications first), a legacy session's
//! `GET` stream of what the server sends on its own, and `DELETE`.

use std::convert::Infallible;
use std::sync::{Arc, PoisonError};

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, Uri};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use futures_util::StreamExt as _;
use futures_util::stream::{self, Stream};
use serde_json::Value;
use tokio::sync::mpsc;
use tokio_util::sync::{CancellationToken, DropGuard};

use super::auth::AccessClaims;
use super::checks::{accepts, admit};
use super::sessions::{AppState, unknown_session};
use super::{
    SESSION_HEADER, call_options, error_response, header_str, json_response, reply_error_code,
};
use crate::protocol::ErrorCode;
use crate::registry::CallOptions;
use crate::tool::NotificationSink;

enum Flow {
    Notification(Value),
    Reply(Option<Value>),
}

/// Runs one request, answering with JSON when the reply comes first, or with an SSE stream
/// (notifications, then the reply) when a notification comes first. Dropping the response —
/// the client going away — cancels the call. A modern unknown method is `404` (2026-07-28).
/// The caller's claims, when authorized, go to the call's extensions.
pub(super) async fn respond<F, Fut>(modern: bool, caller: Option<AccessClaims>, run: F) -> Response
where
    F: FnOnce(CallOptions) -> Fut,
    Fut: Future<Output = Option<Value>> + Send + 'static,
{
    let (tx, mut rx) = mpsc::unbounded_channel::<Flow>();
    let token = CancellationToken::new();
    let guard = token.clone().drop_guard();
    let sink = {
        let tx = tx.clone();
        NotificationSink::new(move |n| {
            let _ = tx.send(Flow::Notification(n));
        })
    };
    let fut = run(call_options(caller).notifications(sink).cancellation(token));
    tokio::spawn(async move {
        let reply = fut.await;
        let _ = tx.send(Flow::Reply(reply));
    });
    match rx.recv().await {
        None | Some(Flow::Reply(None)) => StatusCode::ACCEPTED.into_response(),
        Some(Flow::Reply(Some(reply))) => {
            drop(guard.disarm());
            let status = match reply_error_code(&reply) {
                Some(ErrorCode::METHOD_NOT_FOUND) if modern => StatusCode::NOT_FOUND,
                Some(ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY) if modern => {
                    StatusCode::BAD_REQUEST
                }
                _ => StatusCode::OK,
            };
            json_response(status, &reply)
        }
        Some(Flow::Notification(first)) => Sse::new(sse_stream(first, rx, guard))
            .keep_alive(KeepAlive::default())
            .into_response(),
    }
}

fn sse_stream(
    first: Value,
    rx: mpsc::UnboundedReceiver<Flow>,
    guard: DropGuard,
) -> impl Stream<Item = Result<Event, Infallible>> {
    let head =
        stream::once(async move { Ok(Event::default().event("message").data(first.to_string())) });
    let rest = stream::unfold((rx, Some(guard)), |(mut rx, guard)| async move {
        guard.as_ref()?;
        match rx.recv().await? {
            Flow::Notification(n) => Some((
                Ok(Event::default().event("message").data(n.to_string())),
                (rx, guard),
            )),
            Flow::Reply(reply) => {
                // The call is over: ending the stream must not cancel anything.
                if let Some(g) = guard {
                    g.disarm();
                }
                reply.map(|r| {
                    (
                        Ok(Event::default().event("message").data(r.to_string())),
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
    let Some(session_id) = header_str(&headers, SESSION_HEADER) else {
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
    let Some(slot) = state.session(session_id, caller.as_ref()) else {
        return unknown_session(None, session_id);
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
    let events = stream::unfold((slot, token), |(slot, token)| async move {
        let n = tokio::select! {
            biased;
            () = token.cancelled() => None,
            n = slot.pushed.next() => n,
        }?;
        Some((
            Ok::<_, Infallible>(Event::default().event("message").data(n.to_string())),
            (slot, token),
        ))
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
    let Some(session_id) = header_str(&headers, SESSION_HEADER) else {
        super::log_refusal(
            StatusCode::METHOD_NOT_ALLOWED,
            "DELETE without Mcp-Session-Id: only a legacy session can be ended",
        );
        return StatusCode::METHOD_NOT_ALLOWED.into_response();
    };
    if state.end_session(session_id, caller.as_ref()) {
        StatusCode::OK.into_response()
    } else {
        unknown_session(None, session_id)
    }
}
