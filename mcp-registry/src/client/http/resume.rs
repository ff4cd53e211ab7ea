//! Streams resumed with `Last-Event-ID` (2025-11-25 "Resumability and Redelivery"): a
//! request's SSE stream that ends before its reply, and a legacy session's standalone `GET`
//! stream that ends or breaks. Each is reopened with a `GET` carrying the id of the last
//! event received, after the server's `retry:` (1 s without one), at most
//! [`MAX_RESUMES`] times in a row; the server replays what followed that event, so nothing
//! is lost or received twice.

use std::sync::Arc;
use std::time::Duration;

use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderValue};
use reqwest::{Response, StatusCode};
use serde_json::Value;

use super::{DEFAULT_RETRY, MAX_RESUMES, Shared, events, json_reply, read_body, retry_after};
use crate::client::sse::Sse;
use crate::client::transport::TransportError;
use crate::protocol::{ErrorCode, ErrorObject, ProtocolVersion, RequestId};

/// Reads the reply to request `id`: a JSON body, or an SSE stream resumed (legacy) until the
/// reply comes. A request left without one is failed, so its caller does not wait forever.
pub(super) async fn read_reply(
    shared: &Shared,
    id: &RequestId,
    response: Response,
    version: Option<String>,
    legacy: bool,
) {
    let status = response.status();
    let is_sse = response
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("text/event-stream"));
    if !is_sse {
        let retry_after = retry_after(response.headers());
        match read_body(response, shared.settings.max_message_bytes).await {
            Ok(body) => json_reply(shared, id, status, retry_after, &body),
            Err(error) => shared.fail_transport(id, error),
        }
        return;
    }
    let mut last_event_id: Option<String> = None;
    let mut retry: Option<Duration> = None;
    let mut answered = read_events(shared, id, response, &mut last_event_id, &mut retry).await;
    let mut resumes = 0;
    let mut refused = None;
    while !answered && legacy && resumes < MAX_RESUMES {
        let Some(event_id) = last_event_id.clone() else {
            break;
        };
        resumes += 1;
        tokio::time::sleep(retry.unwrap_or(DEFAULT_RETRY)).await;
        let mut headers = shared.base_headers(version.as_deref());
        headers.insert(ACCEPT, HeaderValue::from_static("text/event-stream"));
        if let Ok(v) = HeaderValue::try_from(event_id) {
            headers.insert("last-event-id", v);
        }
        let resumed = shared
            .http
            .get(shared.url.clone())
            .headers(headers)
            .send()
            .await;
        match resumed {
            Ok(r) if r.status().is_success() => {
                answered = read_events(shared, id, r, &mut last_event_id, &mut retry).await;
            }
            Ok(r) => {
                let status = r.status();
                let text = r.text().await.unwrap_or_default();
                tracing::warn!(%status, body = %text, "MCP: a request's stream could not be resumed");
                refused = Some(format!(
                    "resuming it was refused: HTTP {status} {}",
                    text.trim()
                ));
                break;
            }
            Err(e) => {
                tracing::debug!(error = %e, "MCP stream could not be resumed");
            }
        }
    }
    if !answered {
        let message = match refused {
            Some(refused) => format!("the server's stream ended without a reply, and {refused}"),
            None => "the server's stream ended without a reply".to_owned(),
        };
        shared.fail(id, ErrorObject::new(ErrorCode(-32000), message));
    }
}

/// Reads SSE events, passing each message on, until the reply to `id` (true) or the end of
/// the stream (false). Keeps the last event id and the server's `retry`.
async fn read_events(
    shared: &Shared,
    id: &RequestId,
    response: Response,
    last_event_id: &mut Option<String>,
    retry: &mut Option<Duration>,
) -> bool {
    let mut events = events(shared, response);
    loop {
        let event = match events.next_event().await {
            Ok(Some(Sse::Event(event))) => event,
            Ok(Some(Sse::NotUtf8)) => {
                tracing::warn!("an MCP event that is not UTF-8: skipped");
                continue;
            }
            Ok(Some(Sse::TooLarge)) => {
                // Whichever message it was, this request's stream can no longer be trusted
                // to carry its reply whole: the request fails, by the limit.
                let error = TransportError::TooLarge {
                    what: "an SSE event",
                    limit: events.max(),
                };
                tracing::warn!(%error, "MCP event skipped");
                shared.fail_transport(id, error);
                return true;
            }
            Ok(None) => return false,
            Err(e) => {
                tracing::debug!(error = %e, "MCP event stream broke off");
                return false;
            }
        };
        if let Some(event_id) = event.id {
            *last_event_id = Some(event_id);
        }
        if let Some(ms) = event.retry {
            *retry = Some(Duration::from_millis(ms));
        }
        let Some(data) = event.data.filter(|d| !d.trim().is_empty()) else {
            continue;
        };
        let Ok(message) = serde_json::from_str::<Value>(&data) else {
            tracing::debug!("an MCP event that is not JSON");
            continue;
        };
        let is_reply = message.get("method").is_none()
            && message
                .get("id")
                .and_then(RequestId::from_value)
                .is_some_and(|r| r == *id);
        shared.deliver(message);
        if is_reply {
            return true;
        }
    }
}

/// What reopening the standalone stream gave.
enum Reopened {
    Stream(Response),
    /// `410`: the events after the id sent are no longer kept.
    Gone,
    /// The session, or its stream, is gone (`404`, `405`): nothing to resume.
    Ended,
    /// A failure worth another attempt.
    Failed,
}

/// Reads a legacy session's standalone `GET` stream, passing each message on, and resumes
/// it when it ends or breaks (a draining server ends it with a `retry:` hint): with the last
/// event id received, so that the server replays what the client missed. After a `410`
/// (the events are no longer kept) it reopens without one, and says so. It gives up after
/// [`MAX_RESUMES`] attempts in a row without a message, or once the session is gone.
pub(super) async fn standalone(shared: Arc<Shared>, first: Response, version: ProtocolVersion) {
    let mut response = first;
    let mut last_event_id: Option<String> = None;
    let mut retry: Option<Duration> = None;
    let mut attempts = 0;
    loop {
        if read_stream(&shared, response, &mut last_event_id, &mut retry).await {
            attempts = 0;
        }
        response = loop {
            if attempts >= MAX_RESUMES {
                tracing::warn!(
                    attempts,
                    "MCP: the standalone stream could not be resumed: given up"
                );
                return;
            }
            attempts += 1;
            tokio::time::sleep(retry.unwrap_or(DEFAULT_RETRY)).await;
            match reopen(&shared, version, last_event_id.as_deref()).await {
                Reopened::Stream(response) => break response,
                Reopened::Gone => {
                    tracing::warn!(
                        last_event_id,
                        "MCP: the server no longer keeps the standalone stream's events after the last one received: some were lost; reopening it afresh"
                    );
                    last_event_id = None;
                }
                Reopened::Ended => return,
                Reopened::Failed => {}
            }
        };
    }
}

/// Opens the standalone stream again, resumed after `last_event_id` when there is one.
async fn reopen(
    shared: &Shared,
    version: ProtocolVersion,
    last_event_id: Option<&str>,
) -> Reopened {
    let mut headers = shared.base_headers(Some(version.as_str()));
    headers.insert(ACCEPT, HeaderValue::from_static("text/event-stream"));
    if let Some(v) = last_event_id.and_then(|id| HeaderValue::try_from(id).ok()) {
        headers.insert("last-event-id", v);
    }
    let sent = shared.http.get(shared.url.clone()).headers(headers).send();
    match tokio::time::timeout(Duration::from_secs(5), sent).await {
        Ok(Ok(r)) if r.status().is_success() => Reopened::Stream(r),
        Ok(Ok(r)) if r.status() == StatusCode::GONE => Reopened::Gone,
        Ok(Ok(r))
            if matches!(
                r.status(),
                StatusCode::NOT_FOUND | StatusCode::METHOD_NOT_ALLOWED
            ) =>
        {
            tracing::debug!(status = %r.status(), "MCP: the standalone stream ended for good");
            Reopened::Ended
        }
        Ok(Ok(r)) => {
            tracing::debug!(status = %r.status(), "MCP: the standalone stream could not be reopened");
            Reopened::Failed
        }
        Ok(Err(e)) => {
            tracing::debug!(error = %e, "MCP: the standalone stream could not be reopened");
            Reopened::Failed
        }
        Err(_) => Reopened::Failed,
    }
}

/// Reads the standalone stream to its end, passing each message on and keeping the last
/// event id and the server's `retry`: whether a message came.
async fn read_stream(
    shared: &Shared,
    response: Response,
    last_event_id: &mut Option<String>,
    retry: &mut Option<Duration>,
) -> bool {
    let mut events = events(shared, response);
    let mut delivered = false;
    loop {
        match events.next_event().await {
            Ok(Some(Sse::Event(event))) => {
                if let Some(id) = event.id {
                    *last_event_id = Some(id);
                }
                if let Some(ms) = event.retry {
                    *retry = Some(Duration::from_millis(ms));
                }
                if let Some(message) = event
                    .data
                    .filter(|d| !d.trim().is_empty())
                    .and_then(|d| serde_json::from_str::<Value>(&d).ok())
                {
                    shared.deliver(message);
                    delivered = true;
                }
            }
            Ok(Some(skipped)) => {
                tracing::warn!(
                    ?skipped,
                    limit = events.max(),
                    "MCP event on the standalone stream skipped"
                );
            }
            Ok(None) | Err(_) => return delivered,
        }
    }
}
