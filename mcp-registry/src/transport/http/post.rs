//! `POST`: one JSON-RPC message (or a batch in a 2025-03-26 session), decoded once from the
//! body's text, checked against the headers, and routed to a stateless 2026-07-28 answer, a
//! new legacy session (`initialize`) or the session it names.

use std::sync::Arc;

use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use futures_util::FutureExt as _;
use http_body_util::{BodyExt as _, LengthLimitError, Limited};
use serde_json::Value;

use super::auth::AccessClaims;
use super::checks::{admit, check_modern_headers, check_param_headers, check_post_headers};
use super::sessions::{AppState, SessionSlot, new_session_id, store_down, too_many_sessions};
use super::shared::{SessionEvent, SessionStoreError};
use super::stream::{Mode, Pending, respond};
use super::{
    SESSION_NAME, VERSION_NAME, call_options, error_response, header_str, json_response,
    text_response,
};
use crate::dispatch::{
    Answer, Connection, Dispatcher, ServerSession, Started, parse_error, reply_text,
};
use crate::protocol::decode::{Decoded, IncomingRequest, Invalid, TextMessage, decode_text};
use crate::protocol::{
    ErrorCode, ErrorObject, MODERN_VERSION, ProtocolEra, ProtocolVersion, RequestId, method,
    require_modern_meta,
};
use crate::registry::CallOptions;

pub(super) async fn handle_post(State(state): State<Arc<AppState>>, request: Request) -> Response {
    let (uri, headers, body) = split(request);
    let caller = match admit(&state, "POST", &uri, &headers).await {
        Ok(caller) => caller,
        Err(refused) => return refused,
    };
    if let Some(refused) = check_post_headers(&state, &headers) {
        return refused;
    }
    let body = match read_body(&state, body).await {
        Ok(body) => body,
        Err(refused) => return refused,
    };
    let message = match decode_body(&body) {
        Ok(message) => message,
        Err(detail) => {
            let detail = format!("the body is no JSON: {detail}");
            super::log_refusal(StatusCode::BAD_REQUEST, &detail);
            return json_response(StatusCode::BAD_REQUEST, &parse_error(detail));
        }
    };
    if let (Some(auth), Some(claims)) = (&state.config.auth, &caller)
        && let Err(refusal) = auth.check_scopes(claims, &resolved_tools(&state, &message))
    {
        return auth.refuse(refusal);
    }
    let message = match message {
        // Rare, so boxed: the calls' future stays small (issue #41).
        TextMessage::Batch(batch) => {
            return Box::pin(post_batch(&state, &headers, batch, caller)).await;
        }
        TextMessage::One(Decoded::Invalid(Invalid { id, error })) => {
            return error_response(
                StatusCode::BAD_REQUEST,
                id.as_ref(),
                error.code,
                error.message,
            );
        }
        TextMessage::One(message) => message,
    };
    if message.protocol_version().is_some() {
        return post_modern(&state, &headers, message, caller).await;
    }
    // The version header, read once (issue #41).
    match header_str(&headers, &VERSION_NAME) {
        Some(MODERN_VERSION) => post_modern(&state, &headers, message, caller).await,
        version => post_legacy(&state, &headers, version, message, caller).await,
    }
}

/// The request's URI, headers and body, moved out of it (not cloned by `Uri`/`HeaderMap`
/// extractors, issue #41); the rest of its head is dropped here, so `handle_post`'s future
/// keeps no room for it.
fn split(request: Request) -> (Uri, HeaderMap, Body) {
    let (parts, body) = request.into_parts();
    (parts.uri, parts.headers, body)
}

/// The body of a POST, within [`HttpConfig::body_read_timeout`](super::HttpConfig) (`408`
/// after it) and [`HttpConfig::max_body_bytes`](super::HttpConfig) (`413` past it, for
/// bodies with a length or without). The limit is kept here, not by a router layer, so it
/// holds however the request arrives (`serve` calls this endpoint without axum's router).
async fn read_body(state: &AppState, body: Body) -> Result<Bytes, Response> {
    let limit = state.config.body_read_timeout;
    let max = state.config.max_body_bytes;
    let body = Limited::new(body, max).collect();
    match tokio::time::timeout(limit, body).await {
        Ok(Ok(body)) => Ok(body.to_bytes()),
        Ok(Err(e)) if e.is::<LengthLimitError>() => Err(error_response(
            StatusCode::PAYLOAD_TOO_LARGE,
            None,
            ErrorCode::INVALID_REQUEST,
            format!("the body is over the limit of {max} bytes (HttpConfig::max_body_bytes)"),
        )),
        Ok(Err(e)) => Err(error_response(
            StatusCode::BAD_REQUEST,
            None,
            ErrorCode::INVALID_REQUEST,
            format!("the request body could not be read: {e}"),
        )),
        Err(_) => Err(error_response(
            StatusCode::REQUEST_TIMEOUT,
            None,
            ErrorCode::INVALID_REQUEST,
            format!(
                "the request body did not arrive within {limit:?} (HttpConfig::body_read_timeout)"
            ),
        )),
    }
}

/// The body decoded, once: the message (or batch) every later step reads; `Err` says why
/// it is no JSON.
fn decode_body(body: &[u8]) -> Result<TextMessage<'_>, String> {
    let text = std::str::from_utf8(body).map_err(|e| e.to_string())?;
    decode_text(text).map_err(|e| e.to_string())
}

/// The tools a message (or a batch) calls, each as `(its own server, its own name)`: the
/// name is resolved first, the way dispatch will (a union's qualified alias, the plain
/// name), so that per-tool scopes apply to the tool that would run. A name that resolves to
/// no tool is kept as sent (its call fails as unknown).
fn resolved_tools(state: &AppState, message: &TextMessage<'_>) -> Vec<(Arc<str>, Arc<str>)> {
    let names: Vec<&str> = match message {
        TextMessage::One(Decoded::Request(request)) if request.method == method::TOOLS_CALL => {
            request.name().into_iter().collect()
        }
        TextMessage::One(_) => Vec::new(),
        TextMessage::Batch(batch) => batch
            .iter()
            .filter(|m| m.get("method").and_then(Value::as_str) == Some(method::TOOLS_CALL))
            .filter_map(|m| m.get("params")?.get("name")?.as_str())
            .collect(),
    };
    names
        .into_iter()
        .map(|name| {
            state
                .registry
                .resolve_tool(&state.server, name)
                .unwrap_or_else(|| (Arc::from(state.server.as_str()), Arc::from(name)))
        })
        .collect()
}

/// A batch: served by a legacy session whose negotiated version has batches (2025-03-26),
/// refused anywhere else. The session it names is looked up as a single message's is, and
/// refused alike (`404` unknown, `503` when the session store does not answer).
async fn post_batch(
    state: &AppState,
    headers: &HeaderMap,
    batch: Vec<Value>,
    caller: Option<AccessClaims>,
) -> Response {
    let session_id = header_str(headers, &SESSION_NAME);
    let slot = match session_id {
        Some(id) => match state.find_session(id, caller.as_ref(), None).await {
            Ok(slot) => Some(slot),
            Err(refused) => return refused,
        },
        None => None,
    };
    let (Some(session_id), Some(slot)) = (
        session_id,
        slot.filter(|slot| slot.session.accepts_batches()),
    ) else {
        return error_response(
            StatusCode::BAD_REQUEST,
            None,
            ErrorCode::INVALID_REQUEST,
            "the body must be one JSON-RPC message (an object); batches are accepted only in a session whose protocol version has them (2025-03-26)",
        );
    };
    let (reply, changed) = slot
        .session
        .handle_noting_change(Value::Array(batch), call_options(caller, Some(&slot.id)))
        .await;
    // A batch that changed the session (`resources/subscribe`, `logging/setLevel`,
    // `notifications/initialized`) is saved for the other replicas, as a single message is.
    if changed && let Err(e) = state.share(session_id, &slot).await {
        tracing::warn!(error = %e, "HTTP: a batch's change to a shared session was not saved");
        return error_response(
            StatusCode::SERVICE_UNAVAILABLE,
            None,
            ErrorCode::INTERNAL_ERROR,
            format!(
                "the batch's change to the session was made on this replica but could not be shared with the others ({e}); send it again"
            ),
        );
    }
    match reply {
        Some(reply) => json_response(StatusCode::OK, &reply),
        None => StatusCode::ACCEPTED.into_response(),
    }
}

/// A POST in the 2026-07-28 shape (a version in `_meta`, or the 2026-07-28 version header):
/// checked in order for mirrored headers (-32020), required `_meta` (-32602) and version
/// (-32022), then answered statelessly.
async fn post_modern(
    state: &AppState,
    headers: &HeaderMap,
    message: Decoded<'_>,
    caller: Option<AccessClaims>,
) -> Response {
    let version = message.protocol_version();
    let id = message.id();
    let checked = check_modern_headers(headers, &message, version).and_then(|()| match &message {
        Decoded::Request(request) if request.method == method::TOOLS_CALL => {
            check_param_headers(&state.registry, &state.server, headers, request)
        }
        _ => Ok(()),
    });
    if let Err(mismatch) = checked {
        return error_response(
            StatusCode::BAD_REQUEST,
            id,
            ErrorCode::HEADER_MISMATCH,
            mismatch,
        );
    }
    let modern = version
        .and_then(ProtocolVersion::parse)
        .is_some_and(|v| v.era() == ProtocolEra::Modern);
    if (version.is_none() || modern)
        && !message.is_modern_request()
        && let Err(e) = require_modern_meta(message.meta())
    {
        return error_response(StatusCode::BAD_REQUEST, id, e.code, e.message);
    }
    let Decoded::Request(request) = message else {
        // Notifications and responses carry no state to act on here.
        return StatusCode::ACCEPTED.into_response();
    };
    // Unknown versions get -32022 (`400`); a legacy version in `_meta` is answered
    // statelessly.
    let mode = if modern { Mode::Modern } else { Mode::Strict };
    respond(
        state,
        mode,
        call_options(caller, None),
        None,
        |mut options| stateless(state, request, &mut options),
    )
    .await
}

/// A request answered by the registry alone, started here (what is left to await is
/// `'static`, borrowing nothing from the body).
fn stateless(state: &AppState, request: IncomingRequest<'_>, options: &mut CallOptions) -> Pending {
    let started = Dispatcher::new(&state.registry).start_message(
        &state.server,
        Decoded::Request(request),
        options,
        Connection::default(),
    );
    Pending::of(started)
}

/// A POST from a legacy (2025-xx) client (its `MCP-Protocol-Version` header, if any, is
/// `version`): `initialize` opens a session, anything else belongs to one.
async fn post_legacy(
    state: &Arc<AppState>,
    headers: &HeaderMap,
    version: Option<&str>,
    message: Decoded<'_>,
    caller: Option<AccessClaims>,
) -> Response {
    if let Some(v) = version
        && ProtocolVersion::parse(v).is_none()
    {
        return error_response(
            StatusCode::BAD_REQUEST,
            message.id(),
            ErrorCode::INVALID_REQUEST,
            format!("unsupported MCP-Protocol-Version {v:?}"),
        );
    }
    match message {
        // Once per session, so boxed: the calls' future stays small (issue #41).
        Decoded::Request(request) if request.method == method::INITIALIZE => {
            Box::pin(post_initialize(state, request, caller)).await
        }
        message => post_in_session(state, headers, message, caller).await,
    }
}

/// A legacy `initialize`: answered by a new session, kept (and its id sent back) when it
/// succeeds.
async fn post_initialize(
    state: &AppState,
    request: IncomingRequest<'_>,
    caller: Option<AccessClaims>,
) -> Response {
    let id = request.id.clone();
    if !state.config.legacy_sessions {
        return error_response(
            StatusCode::BAD_REQUEST,
            Some(&id),
            ErrorCode::INVALID_REQUEST,
            "this endpoint serves only protocol version 2026-07-28 (stateless); initialize is not supported",
        );
    }
    let (session, pushed) = ServerSession::new(state.registry.clone(), state.server.clone());
    let answered = session
        .answer(Decoded::Request(request), CallOptions::new())
        .await;
    let Some((reply_id, answer)) = answered else {
        return StatusCode::ACCEPTED.into_response();
    };
    let failed = matches!(answer, Answer::Error(_));
    let Some(reply) = reply_text(reply_id, answer) else {
        return StatusCode::ACCEPTED.into_response();
    };
    if failed {
        return text_response(StatusCode::OK, reply);
    }
    let slot = SessionSlot::new(new_session_id(), session, caller.map(|c| c.subject), pushed);
    let Some(slot) = state.open_session(slot) else {
        return too_many_sessions(Some(&id), state.config.max_sessions);
    };
    if let Err(e) = state.share(&slot.id, &slot).await {
        // Not served by the other replicas: not opened at all.
        state.forget_session(&slot.id);
        return store_down(Some(&id), &e);
    }
    let mut response = text_response(StatusCode::OK, reply);
    if let Ok(v) = HeaderValue::from_str(&slot.id) {
        response.headers_mut().insert(&SESSION_NAME, v);
    }
    response
}

/// A legacy message after `initialize`, for the session its `Mcp-Session-Id` names.
async fn post_in_session(
    state: &Arc<AppState>,
    headers: &HeaderMap,
    message: Decoded<'_>,
    caller: Option<AccessClaims>,
) -> Response {
    let id = message.id();
    let Some(session_id) = header_str(headers, &SESSION_NAME) else {
        return error_response(
            StatusCode::BAD_REQUEST,
            id,
            ErrorCode::INVALID_REQUEST,
            "missing Mcp-Session-Id header: send initialize first, or use protocol version 2026-07-28 (stateless)",
        );
    };
    let slot = match state.find_session(session_id, caller.as_ref(), id).await {
        Ok(slot) => slot,
        Err(refused) => return refused,
    };
    if !matches!(message, Decoded::Request(_)) {
        // Boxed: a call's future keeps no room for a notification's handling (issue #41).
        return Box::pin(post_session_message(state, session_id, &slot, message)).await;
    }
    let options = call_options(caller, Some(&slot.id));
    respond(state, Mode::Session, options, Some(&slot), |options| {
        // Started here, the message borrowed from the body: what is left to await borrows
        // nothing (issue #41: no owned copy of the message, no future around the session's).
        match slot.session.start_own_token(message, options) {
            Started::Running(running) => {
                Pending::Later(running.id().cloned(), Box::pin(running.answer().map(Some)))
            }
            // Only an answer given while it started changes the session.
            Started::Answered((answered, true)) if state.store().is_some() => {
                let (state, slot) = (state.clone(), slot.clone());
                let session_id = session_id.to_owned();
                let id = answered.as_ref().and_then(|(id, _)| id.clone());
                Pending::Later(
                    id,
                    Box::pin(
                        async move { shared_answer(&state, &session_id, &slot, answered).await },
                    ),
                )
            }
            Started::Answered((answered, _)) => Pending::Ready(answered),
        }
    })
    .await
}

/// `answered`, a reply that changed session `session_id`, once the change is saved for
/// the other replicas; an error saying so when it could not be.
async fn shared_answer(
    state: &AppState,
    session_id: &str,
    slot: &SessionSlot,
    answered: Option<(Option<RequestId>, Answer)>,
) -> Option<(Option<RequestId>, Answer)> {
    if let Err(e) = state.share(session_id, slot).await {
        let (id, _) = answered?;
        let error = ErrorObject::new(
            ErrorCode::INTERNAL_ERROR,
            format!(
                "the session's change was made on this replica but could not be shared with the others ({e}); send it again"
            ),
        );
        return Some((id, Answer::Error(error)));
    }
    answered
}

/// A notification or a response in a session: `202`, once handled (a client's reply to a
/// request waiting on another replica is handed there, and so is a cancellation of a request
/// running there; `notifications/initialized` is saved in the session store).
async fn post_session_message(
    state: &AppState,
    session_id: &str,
    slot: &SessionSlot,
    message: Decoded<'_>,
) -> Response {
    let shared = match message {
        Decoded::Response(response) => state.client_response(session_id, slot, response).await,
        Decoded::Notification(n) if n.method == method::CANCELLED => {
            match n.params.get("requestId").and_then(RequestId::from_value) {
                Some(request) => cancel(state, session_id, slot, request).await,
                None => Ok(()),
            }
        }
        message => {
            let options = CallOptions::new();
            match slot.session.answer_noting_change(message, options).await {
                (_, true) => state.share(session_id, slot).await,
                (_, false) => Ok(()),
            }
        }
    };
    match shared {
        Ok(()) => StatusCode::ACCEPTED.into_response(),
        Err(e) => store_down(None, &e),
    }
}

/// `notifications/cancelled` for `request` of session `session_id`: the request is cancelled
/// here, or, with a session store, on the replica running it.
async fn cancel(
    state: &AppState,
    session_id: &str,
    slot: &SessionSlot,
    request: RequestId,
) -> Result<(), SessionStoreError> {
    if slot.session.cancel(&request) {
        return Ok(());
    }
    let Some(store) = state.store() else {
        tracing::debug!(session = session_id, %request, "a cancellation of no request in flight");
        return Ok(());
    };
    store
        .publish(SessionEvent::Cancelled {
            session: session_id.to_owned(),
            request,
        })
        .await
}
