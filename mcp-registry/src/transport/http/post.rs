//! `POST`: one JSON-RPC message (or a batch in a 2025-03-26 session), routed to a stateless
//! 2026-07-28 answer, a new legacy session (`initialize`) or the session it names.

use std::sync::{Arc, Mutex};

use axum::body::Bytes;
use axum::extract::{FromRequest as _, Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use serde_json::Value;

use super::auth::AccessClaims;
use super::checks::{admit, check_modern_headers, check_param_headers, check_post_headers};
use super::sessions::{AppState, SessionSlot, unknown_session};
use super::stream::respond;
use super::{
    SESSION_HEADER, VERSION_HEADER, call_options, error_response, header_str, json_response,
};
use crate::dispatch::{ServerSession, error_value, parse_error};
use crate::protocol::{
    ErrorCode, META_PROTOCOL_VERSION, MODERN_VERSION, ProtocolEra, ProtocolVersion, RequestId,
    method, require_modern_meta,
};

pub(super) async fn handle_post(
    State(state): State<Arc<AppState>>,
    uri: Uri,
    headers: HeaderMap,
    request: Request,
) -> Response {
    let caller = match admit(&state, "POST", &uri, &headers).await {
        Ok(caller) => caller,
        Err(refused) => return refused,
    };
    if let Some(refused) = check_post_headers(&state, &headers) {
        return refused;
    }
    let body = match read_body(&state, request).await {
        Ok(body) => body,
        Err(refused) => return refused,
    };
    let message: Value = match serde_json::from_slice(&body) {
        Ok(m) => m,
        Err(e) => {
            super::log_refusal(
                StatusCode::BAD_REQUEST,
                &format!("the body is no JSON: {e}"),
            );
            return json_response(StatusCode::BAD_REQUEST, &parse_error(e));
        }
    };
    if let (Some(auth), Some(claims)) = (&state.config.auth, &caller)
        && let Err(refusal) = auth.check_scopes(claims, called_tools(&message))
    {
        return auth.refuse(refusal);
    }
    if message.is_array()
        && let Some(slot) =
            header_str(&headers, SESSION_HEADER).and_then(|id| state.session(id, caller.as_ref()))
        && slot.session.accepts_batches()
    {
        // A legacy session whose negotiated version has batches (2025-03-26) is served them.
        return match slot
            .session
            .handle(message)
            .options(call_options(caller))
            .await
        {
            Some(reply) => json_response(StatusCode::OK, &reply),
            None => StatusCode::ACCEPTED.into_response(),
        };
    }
    if !message.is_object() {
        return error_response(
            StatusCode::BAD_REQUEST,
            None,
            ErrorCode::INVALID_REQUEST,
            "the body must be one JSON-RPC message (an object); batches are accepted only in a session whose protocol version has them (2025-03-26)",
        );
    }
    let body_version = message_meta(&message)
        .and_then(|m| m.get(META_PROTOCOL_VERSION))
        .and_then(Value::as_str)
        .map(str::to_owned);
    if body_version.is_some() || header_str(&headers, VERSION_HEADER) == Some(MODERN_VERSION) {
        post_modern(&state, &headers, message, body_version.as_deref(), caller).await
    } else {
        post_legacy(&state, &headers, message, caller).await
    }
}

/// The body of a POST, within [`HttpConfig::body_read_timeout`](super::HttpConfig) (`408`
/// after it) and the size limit (`DefaultBodyLimit`, which holds for bodies without a length).
async fn read_body(state: &AppState, request: Request) -> Result<Bytes, Response> {
    let limit = state.config.body_read_timeout;
    match tokio::time::timeout(limit, Bytes::from_request(request, &())).await {
        Ok(Ok(body)) => Ok(body),
        Ok(Err(e)) if e.status() == StatusCode::PAYLOAD_TOO_LARGE => Err(error_response(
            e.status(),
            None,
            ErrorCode::INVALID_REQUEST,
            format!(
                "the body is over the limit of {} bytes (HttpConfig::max_body_bytes)",
                state.config.max_body_bytes
            ),
        )),
        Ok(Err(e)) => Err(error_response(
            e.status(),
            None,
            ErrorCode::INVALID_REQUEST,
            e.body_text(),
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

/// The names of the tools a message (or a batch) calls.
fn called_tools(message: &Value) -> impl Iterator<Item = &str> {
    let messages = match message {
        Value::Array(batch) => batch.as_slice(),
        one => std::slice::from_ref(one),
    };
    messages
        .iter()
        .filter(|m| m.get("method").and_then(Value::as_str) == Some("tools/call"))
        .filter_map(|m| m.get("params")?.get("name")?.as_str())
}

/// The `params._meta` of a message.
fn message_meta(message: &Value) -> Option<&Value> {
    message.get("params").and_then(|p| p.get("_meta"))
}

/// Whether a message is a request (it has an `id` and a `method`).
fn is_request(message: &Value) -> bool {
    message.get("id").is_some() && message.get("method").is_some()
}

/// A POST in the 2026-07-28 shape (a version in `_meta`, or the 2026-07-28 version header):
/// checked in order for mirrored headers (-32020), required `_meta` (-32602) and version
/// (-32022), then answered statelessly.
async fn post_modern(
    state: &AppState,
    headers: &HeaderMap,
    message: Value,
    body_version: Option<&str>,
    caller: Option<AccessClaims>,
) -> Response {
    let id = message.get("id").cloned();
    let checked =
        check_modern_headers(headers, &message, body_version).and_then(|()| {
            match message.get("method").and_then(Value::as_str) {
                Some(method::TOOLS_CALL) => {
                    check_param_headers(&state.registry, &state.server, headers, &message)
                }
                _ => Ok(()),
            }
        });
    if let Err(mismatch) = checked {
        return error_response(
            StatusCode::BAD_REQUEST,
            id.as_ref(),
            ErrorCode::HEADER_MISMATCH,
            mismatch,
        );
    }
    let modern = body_version
        .and_then(ProtocolVersion::parse)
        .is_some_and(|v| v.era() == ProtocolEra::Modern);
    if (body_version.is_none() || modern)
        && let Err(e) = require_modern_meta(message_meta(&message).and_then(Value::as_object))
    {
        super::log_refusal(StatusCode::BAD_REQUEST, &e.message);
        return json_response(
            StatusCode::BAD_REQUEST,
            &error_value(id.as_ref().and_then(RequestId::from_value), e),
        );
    }
    if !modern {
        // Unknown versions get -32022; a legacy version in `_meta` is answered statelessly.
        return match state
            .registry
            .handle_mcp_message(&state.server, message)
            .options(call_options(caller))
            .await
        {
            Some(reply) if reply.get("error").is_some() => {
                json_response(StatusCode::BAD_REQUEST, &reply)
            }
            Some(reply) => json_response(StatusCode::OK, &reply),
            None => StatusCode::ACCEPTED.into_response(),
        };
    }
    if !is_request(&message) {
        // Modern notifications carry no state to act on here.
        return StatusCode::ACCEPTED.into_response();
    }
    let registry = state.registry.clone();
    let server = state.server.clone();
    respond(true, caller, move |options| async move {
        registry
            .handle_mcp_message(&server, message)
            .options(options)
            .await
    })
    .await
}

/// A POST from a legacy (2025-xx) client: `initialize` opens a session, anything else
/// belongs to one.
async fn post_legacy(
    state: &AppState,
    headers: &HeaderMap,
    message: Value,
    caller: Option<AccessClaims>,
) -> Response {
    if let Some(v) = header_str(headers, VERSION_HEADER)
        && ProtocolVersion::parse(v).is_none()
    {
        return error_response(
            StatusCode::BAD_REQUEST,
            message.get("id"),
            ErrorCode::INVALID_REQUEST,
            format!("unsupported MCP-Protocol-Version {v:?}"),
        );
    }
    if is_request(&message) && message.get("method").and_then(Value::as_str) == Some("initialize") {
        post_initialize(state, message, caller).await
    } else {
        post_in_session(state, headers, message, caller).await
    }
}

/// A legacy `initialize`: answered by a new session, kept (and its id sent back) when it
/// succeeds.
async fn post_initialize(
    state: &AppState,
    message: Value,
    caller: Option<AccessClaims>,
) -> Response {
    let id = message.get("id").cloned();
    if !state.config.legacy_sessions {
        return error_response(
            StatusCode::BAD_REQUEST,
            id.as_ref(),
            ErrorCode::INVALID_REQUEST,
            "this endpoint serves only protocol version 2026-07-28 (stateless); initialize is not supported",
        );
    }
    let (session, pushed) = ServerSession::new(state.registry.clone(), state.server.clone());
    let Some(reply) = session.handle(message).await else {
        return StatusCode::ACCEPTED.into_response();
    };
    if reply.get("error").is_some() {
        return json_response(StatusCode::OK, &reply);
    }
    let slot = SessionSlot {
        session,
        owner: caller.map(|c| c.subject),
        pushed,
        stream: Mutex::new(None),
    };
    let Some(session_id) = state.open_session(slot) else {
        return error_response(
            StatusCode::SERVICE_UNAVAILABLE,
            id.as_ref(),
            ErrorCode::INTERNAL_ERROR,
            format!(
                "too many open sessions (HttpConfig::max_sessions: {}); idle ones end after HttpConfig::session_idle_timeout, or use protocol version 2026-07-28 (stateless)",
                state.config.max_sessions
            ),
        );
    };
    let mut response = json_response(StatusCode::OK, &reply);
    if let Ok(v) = HeaderValue::from_str(&session_id) {
        response.headers_mut().insert(SESSION_HEADER, v);
    }
    response
}

/// A legacy message after `initialize`, for the session its `Mcp-Session-Id` names.
async fn post_in_session(
    state: &AppState,
    headers: &HeaderMap,
    message: Value,
    caller: Option<AccessClaims>,
) -> Response {
    let id = message.get("id");
    let Some(session_id) = header_str(headers, SESSION_HEADER) else {
        return error_response(
            StatusCode::BAD_REQUEST,
            id,
            ErrorCode::INVALID_REQUEST,
            "missing Mcp-Session-Id header: send initialize first, or use protocol version 2026-07-28 (stateless)",
        );
    };
    let Some(slot) = state.session(session_id, caller.as_ref()) else {
        return unknown_session(id, session_id);
    };
    if !is_request(&message) {
        let _ = slot.session.handle(message).await;
        return StatusCode::ACCEPTED.into_response();
    }
    respond(false, caller, move |options| async move {
        slot.session.handle(message).options(options).await
    })
    .await
}
