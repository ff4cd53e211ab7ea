//! The Streamable HTTP transport: each message a POST; a request's reply comes back as one
//! JSON body or an SSE stream (resumed with `Last-Event-ID` after the server's `retry` when
//! it ends early, SEP-1699); `Mcp-Session-Id` kept for legacy sessions (a 404 on one means
//! re-initialize); `MCP-Protocol-Version`, and on 2026-07-28 `Mcp-Method`, `Mcp-Name` and
//! `Mcp-Param-*`, on every POST.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::StreamExt;
use reqwest::header::{
    ACCEPT, AUTHORIZATION, CONTENT_TYPE, COOKIE, HeaderMap, HeaderName, HeaderValue, LOCATION,
    RETRY_AFTER,
};
use reqwest::{Response, StatusCode, Url};
use serde_json::Value;
use tokio::io::AsyncBufRead;
use tokio::sync::mpsc;
use tokio::task::AbortHandle;
use tokio_util::io::StreamReader;

use super::ClientError;
use super::sse::EventReader;
use super::transport::{
    DEFAULT_MAX_MESSAGE_BYTES, Inbound, Outbound, OutboundKind, Transport, TransportError,
};
use crate::protocol::headers::encode_header_value;
use crate::protocol::{
    ErrorCode, ErrorObject, ErrorResponse, META_PROTOCOL_VERSION, ProtocolEra, ProtocolVersion,
    RequestId,
};
use crate::sync::MutexExt;
use crate::tool::BoxFuture;
use resume::read_reply;

mod resume;

const SESSION: &str = "mcp-session-id";
const VERSION: &str = "mcp-protocol-version";
/// How often a request's stream is resumed before the request is failed.
const MAX_RESUMES: usize = 5;
/// The wait before resuming when the server gave no `retry`.
const DEFAULT_RETRY: Duration = Duration::from_secs(1);

/// A Streamable HTTP connection to one MCP endpoint.
#[derive(Debug)]
pub struct HttpTransport {
    inner: Arc<Shared>,
}

#[derive(Debug)]
struct Shared {
    http: reqwest::Client,
    url: Url,
    headers: HeaderMap,
    session: Mutex<Option<HeaderValue>>,
    incoming: mpsc::UnboundedSender<Inbound>,
    streams: Mutex<HashMap<RequestId, AbortHandle>>,
    settings: HttpSettings,
    #[cfg(feature = "client-auth")]
    auth: Option<super::auth::Authorizer>,
}

/// What a [`HttpTransport`] accepts from the server.
#[derive(Debug, Clone, Copy)]
pub(super) struct HttpSettings {
    /// The longest JSON body, SSE line or SSE event.
    pub(super) max_message_bytes: usize,
    /// Whether `307`/`308` to another origin are followed (without the client's headers).
    pub(super) redirects_across_origins: bool,
}

impl Default for HttpSettings {
    fn default() -> Self {
        HttpSettings {
            max_message_bytes: DEFAULT_MAX_MESSAGE_BYTES,
            redirects_across_origins: false,
        }
    }
}

/// The most redirects followed for one request.
const MAX_REDIRECTS: usize = 5;

/// Whether two URLs share an origin (scheme, host and port).
fn same_origin(a: &Url, b: &Url) -> bool {
    a.origin() == b.origin()
}

fn other(e: impl std::fmt::Display) -> TransportError {
    TransportError::Other(e.to_string())
}

impl HttpTransport {
    /// A transport to `url`, sending `headers` with every request, delivering to `incoming`.
    pub fn new(
        url: &str,
        headers: &[(String, String)],
        incoming: mpsc::UnboundedSender<Inbound>,
    ) -> Result<Self, ClientError> {
        Self::build(url, headers, incoming, None, HttpSettings::default())
    }

    /// A transport like [`new`](Self::new) that authorizes with `oauth` when the server asks
    /// (feature `client-auth`).
    #[cfg(feature = "client-auth")]
    pub fn with_oauth(
        url: &str,
        headers: &[(String, String)],
        incoming: mpsc::UnboundedSender<Inbound>,
        oauth: super::auth::OAuth,
    ) -> Result<Self, ClientError> {
        Self::build(url, headers, incoming, Some(oauth), HttpSettings::default())
    }

    pub(super) fn build(
        url: &str,
        headers: &[(String, String)],
        incoming: mpsc::UnboundedSender<Inbound>,
        #[cfg(feature = "client-auth")] oauth: Option<super::auth::OAuth>,
        #[cfg(not(feature = "client-auth"))] _oauth: Option<std::convert::Infallible>,
        settings: HttpSettings,
    ) -> Result<Self, ClientError> {
        let url = Url::parse(url)
            .map_err(|e| TransportError::Other(format!("invalid MCP URL {url:?}: {e}")))?;
        let mut map = HeaderMap::new();
        for (name, value) in headers {
            let name = HeaderName::try_from(name.as_str())
                .map_err(|e| TransportError::Other(format!("invalid header name {name:?}: {e}")))?;
            let value = HeaderValue::try_from(value.as_str()).map_err(|e| {
                TransportError::Other(format!("invalid value of header {name}: {e}"))
            })?;
            map.append(name, value);
        }
        // Same-origin redirects only: reqwest would carry custom headers and the session id
        // to another origin (it strips `Authorization` alone); those are handled in `post`.
        let redirects = reqwest::redirect::Policy::custom(|attempt| {
            let crosses = attempt
                .previous()
                .first()
                .is_some_and(|first| !same_origin(first, attempt.url()));
            if crosses || attempt.previous().len() > MAX_REDIRECTS {
                attempt.stop()
            } else {
                attempt.follow()
            }
        });
        let http = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(30))
            .redirect(redirects)
            .build()
            .map_err(other)?;
        Ok(HttpTransport {
            inner: Arc::new(Shared {
                http,
                #[cfg(feature = "client-auth")]
                auth: oauth.map(|o| super::auth::Authorizer::new(o, url.clone())),
                url,
                headers: map,
                session: Mutex::new(None),
                incoming,
                streams: Mutex::new(HashMap::new()),
                settings,
            }),
        })
    }
}

impl Shared {
    fn session(&self) -> Option<HeaderValue> {
        self.session.lock_unpoisoned().clone()
    }

    fn base_headers(&self, version: Option<&str>) -> HeaderMap {
        let mut headers = self.headers.clone();
        if let Some(session) = self.session() {
            headers.insert(SESSION, session);
        }
        if let Some(v) = version.and_then(|v| HeaderValue::try_from(v).ok()) {
            headers.insert(VERSION, v);
        }
        self.present(&mut headers, "GET");
        headers
    }

    /// Puts the access token into `headers` when authorized (`Authorization`, marked
    /// sensitive: never logged; with a DPoP proof for `method` when the token is bound).
    /// Returns the token presented.
    #[cfg_attr(not(feature = "client-auth"), allow(clippy::unused_self))]
    fn present(&self, headers: &mut HeaderMap, method: &str) -> Option<String> {
        #[cfg(feature = "client-auth")]
        if let Some(auth) = &self.auth {
            return auth.present(headers, method);
        }
        let _ = (headers, method);
        None
    }

    /// POSTs `body` (see [`post_authorized`](Self::post_authorized)), then deals with a
    /// redirect to another origin.
    async fn post(&self, headers: HeaderMap, body: Vec<u8>) -> Result<Response, TransportError> {
        let response = self.post_authorized(headers.clone(), body.clone()).await?;
        self.cross_origin(response, &headers, body).await
    }

    /// A redirect that reqwest stopped at (another origin): refused unless the client allows
    /// it, then followed for `307`/`308` only (the others turn a POST into a GET) and without
    /// the client's own headers, its session id or its authorization.
    async fn cross_origin(
        &self,
        mut response: Response,
        headers: &HeaderMap,
        body: Vec<u8>,
    ) -> Result<Response, TransportError> {
        for _ in 0..MAX_REDIRECTS {
            let location = response
                .headers()
                .get(LOCATION)
                .and_then(|v| v.to_str().ok())
                .and_then(|l| response.url().join(l).ok());
            let Some(location) = location.filter(|_| response.status().is_redirection()) else {
                return Ok(response);
            };
            if same_origin(&location, response.url()) {
                return Ok(response); // past reqwest's redirect limit: reported as a status
            }
            let keeps_post = matches!(
                response.status(),
                StatusCode::TEMPORARY_REDIRECT | StatusCode::PERMANENT_REDIRECT
            );
            if !self.settings.redirects_across_origins || !keeps_post {
                return Err(TransportError::Redirected {
                    location: location.to_string(),
                });
            }
            let mut protocol = headers.clone();
            for name in self.headers.keys() {
                protocol.remove(name);
            }
            protocol.remove(SESSION);
            protocol.remove(AUTHORIZATION);
            protocol.remove(COOKIE);
            response = self
                .http
                .post(location.clone())
                .headers(protocol)
                .body(body.clone())
                .send()
                .await
                .map_err(|e| TransportError::Closed(format!("POST {location}: {e}")))?;
        }
        Ok(response)
    }

    /// POSTs `body`; when the server asks for authorization (401, 403 `insufficient_scope`)
    /// and OAuth is configured, authorizes and POSTs again.
    #[cfg_attr(not(feature = "client-auth"), allow(clippy::never_loop))]
    async fn post_authorized(
        &self,
        mut headers: HeaderMap,
        body: Vec<u8>,
    ) -> Result<Response, TransportError> {
        #[cfg(feature = "client-auth")]
        if let Some(auth) = &self.auth {
            auth.refresh_if_expiring().await;
        }
        loop {
            // A token replaces the caller's own `Authorization` header (if any); without one
            // theirs goes out.
            let presented = self.present(&mut headers, "POST");
            let response = self
                .http
                .post(self.url.clone())
                .headers(headers.clone())
                .body(body.clone())
                .send()
                .await
                .map_err(|e| TransportError::Closed(format!("POST {}: {e}", self.url)))?;
            #[cfg(feature = "client-auth")]
            if let Some(auth) = &self.auth {
                let challenge = super::auth::Challenge::of(response.status(), response.headers());
                match challenge {
                    Some(challenge) => {
                        auth.authorize(&challenge, presented.as_deref()).await?;
                        continue;
                    }
                    None if presented.is_some() => auth.accepted(response.headers()),
                    None => {}
                }
            }
            #[cfg(not(feature = "client-auth"))]
            let _ = presented;
            return Ok(response);
        }
    }

    fn deliver(&self, message: Value) {
        let _ = self.incoming.send(Inbound::Message(message));
    }

    /// Fails request `id` with `error` (there is no JSON-RPC reply to pass on).
    fn fail(&self, id: &RequestId, error: ErrorObject) {
        let reply = ErrorResponse::new(Some(id.clone()), error);
        self.deliver(serde_json::to_value(reply).unwrap_or_default());
    }

    /// Fails request `id` with a transport error (the HTTP exchange itself failed).
    fn fail_transport(&self, id: &RequestId, error: TransportError) {
        let _ = self.incoming.send(Inbound::Failed {
            id: id.clone(),
            error,
        });
    }
}

/// The version a message's headers name: its own `_meta` version (2026-07-28), else the
/// version agreed on (2025-06-18 onward define the header).
fn header_version(message: &Outbound) -> Option<String> {
    let own = message
        .message
        .get("params")
        .and_then(|p| p.get("_meta"))
        .and_then(|m| m.get(META_PROTOCOL_VERSION))
        .and_then(Value::as_str);
    match own {
        Some(v) => Some(v.to_owned()),
        None => message
            .protocol_version
            .filter(|v| *v >= ProtocolVersion::V2025_06_18)
            .map(|v| v.as_str().to_owned()),
    }
}

/// The headers of a POST carrying `message`: the base ones, content negotiation, and on
/// 2026-07-28 (`modern`) a request's `Mcp-Method`, `Mcp-Name` and `Mcp-Param-*`.
fn post_headers(
    shared: &Shared,
    message: &Outbound,
    version: Option<&str>,
    modern: bool,
) -> HeaderMap {
    let mut headers = shared.base_headers(version);
    headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    headers.insert(
        ACCEPT,
        HeaderValue::from_static("application/json, text/event-stream"),
    );
    if let OutboundKind::Request {
        method,
        name,
        params,
        ..
    } = &message.kind
        && modern
    {
        if let Ok(v) = HeaderValue::try_from(method.as_str()) {
            headers.insert("mcp-method", v);
        }
        if let Some(v) = name
            .as_deref()
            .and_then(|n| HeaderValue::try_from(encode_header_value(n)).ok())
        {
            headers.insert("mcp-name", v);
        }
        for (name, value) in params {
            if let (Ok(n), Ok(v)) = (
                HeaderName::try_from(name.as_str()),
                HeaderValue::try_from(value.as_str()),
            ) {
                headers.insert(n, v);
            }
        }
    }
    headers
}

impl Transport for HttpTransport {
    fn send(&self, message: Outbound) -> BoxFuture<'_, Result<(), TransportError>> {
        Box::pin(async move {
            let shared = &self.inner;
            let version = header_version(&message);
            let modern = version.as_deref() == Some(ProtocolVersion::MODERN.as_str());
            let headers = post_headers(shared, &message, version.as_deref(), modern);
            let body = serde_json::to_vec(&message.message).map_err(other)?;
            let response = shared.post(headers, body).await?;
            let status = response.status();
            let is_initialize = matches!(&message.kind, OutboundKind::Request { method, .. } if method == "initialize");
            if status == StatusCode::NOT_FOUND && shared.session().is_some() && !is_initialize {
                *shared.session.lock_unpoisoned() = None;
                return Err(TransportError::SessionExpired);
            }
            if let Some(session) = response.headers().get(SESSION)
                && is_initialize
            {
                *shared.session.lock_unpoisoned() = Some(session.clone());
            }
            let OutboundKind::Request { id, .. } = message.kind else {
                if !status.is_success() {
                    tracing::warn!(%status, "MCP server refused a notification or response");
                }
                return Ok(());
            };
            let task_shared = Arc::clone(shared);
            let task_id = id.clone();
            let legacy = !modern;
            // Registered under the lock the task takes to remove it: a reply read at once
            // cannot remove the entry before it is inserted (which would leave it for good).
            let mut streams = shared.streams.lock_unpoisoned();
            let task = tokio::spawn(async move {
                read_reply(&task_shared, &task_id, response, version, legacy).await;
                task_shared.streams.lock_unpoisoned().remove(&task_id);
            });
            streams.insert(id, task.abort_handle());
            drop(streams);
            Ok(())
        })
    }

    fn cancelled(&self, id: &RequestId) {
        if let Some(stream) = self.inner.streams.lock_unpoisoned().remove(id) {
            stream.abort();
        }
    }

    fn mirrors_tool_params(&self) -> bool {
        true
    }

    fn connected(&self, version: Option<ProtocolVersion>) -> BoxFuture<'_, ()> {
        Box::pin(async move {
            // A legacy session (2025-03-26 onward) may carry server requests and
            // notifications unrelated to any POST on a standalone GET stream: it is open
            // before the first request goes out, so nothing sent on it is missed.
            let Some(version) = version
                .filter(|v| v.era() == ProtocolEra::Legacy && *v >= ProtocolVersion::V2025_03_26)
            else {
                return;
            };
            let shared = &self.inner;
            let mut headers = shared.base_headers(Some(version.as_str()));
            headers.insert(ACCEPT, HeaderValue::from_static("text/event-stream"));
            let opened = shared.http.get(shared.url.clone()).headers(headers).send();
            let Ok(Ok(response)) = tokio::time::timeout(Duration::from_secs(5), opened).await
            else {
                return;
            };
            let is_sse = response
                .headers()
                .get(CONTENT_TYPE)
                .and_then(|v| v.to_str().ok())
                .is_some_and(|v| v.starts_with("text/event-stream"));
            if !response.status().is_success() || !is_sse {
                return; // 405: the server offers no standalone stream.
            }
            let reader = Arc::clone(shared);
            let task = tokio::spawn(resume::standalone(reader, response, version));
            shared.streams.lock_unpoisoned().insert(
                RequestId::from("standalone GET stream"),
                task.abort_handle(),
            );
        })
    }

    fn sends_cancelled_notifications(&self, version: Option<ProtocolVersion>) -> bool {
        version.map(ProtocolVersion::era) != Some(ProtocolEra::Modern)
    }

    fn close(&self) -> BoxFuture<'_, ()> {
        Box::pin(async move {
            let shared = &self.inner;
            for (_, stream) in shared.streams.lock_unpoisoned().drain() {
                stream.abort();
            }
            let session = shared.session.lock_unpoisoned().take();
            if let Some(session) = session {
                let mut headers = shared.headers.clone();
                headers.insert(SESSION, session);
                shared.present(&mut headers, "DELETE");
                let _ = shared
                    .http
                    .delete(shared.url.clone())
                    .headers(headers)
                    .timeout(Duration::from_secs(5))
                    .send()
                    .await;
            }
        })
    }
}

impl Drop for HttpTransport {
    fn drop(&mut self) {
        for (_, stream) in self.inner.streams.lock_unpoisoned().drain() {
            stream.abort();
        }
    }
}

/// The events of `response`'s body, bounded by the client's limit.
fn events(shared: &Shared, response: Response) -> EventReader<impl AsyncBufRead + Unpin> {
    let bytes = Box::pin(
        response
            .bytes_stream()
            .map(|chunk| chunk.map_err(std::io::Error::other)),
    );
    EventReader::new(StreamReader::new(bytes), shared.settings.max_message_bytes)
}

/// A body of at most `limit` bytes: refused by its `Content-Length`, or once past it.
async fn read_body(mut response: Response, limit: usize) -> Result<Vec<u8>, TransportError> {
    let too_large = TransportError::TooLarge {
        what: "a JSON body",
        limit,
    };
    if response
        .content_length()
        .is_some_and(|n| n > u64::try_from(limit).unwrap_or(u64::MAX))
    {
        return Err(too_large);
    }
    let mut body = Vec::new();
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|e| TransportError::Other(format!("reading the MCP server's reply: {e}")))?
    {
        if body.len() + chunk.len() > limit {
            return Err(too_large);
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// Passes on the JSON reply to request `id` (or fails it: an HTTP error status with no
/// JSON-RPC reply of its own is a [`TransportError::Status`]).
fn json_reply(
    shared: &Shared,
    id: &RequestId,
    status: StatusCode,
    retry_after: Option<Duration>,
    body: &[u8],
) {
    let text = || {
        String::from_utf8_lossy(&body[..body.len().min(200)])
            .trim()
            .to_owned()
    };
    let failed = |body: String| TransportError::Status {
        status: status.as_u16(),
        retry_after,
        body,
    };
    match serde_json::from_slice::<Value>(body) {
        Ok(Value::Array(messages)) => messages.into_iter().for_each(|m| shared.deliver(m)),
        Ok(message) if message.get("jsonrpc").is_some() => {
            // An error the server could not tie to the request (no id, or an HTTP error
            // status with an id of its own, as a legacy server answers a 2026-07-28
            // request: `400` and `"id": "server-error"`): it is this one's.
            let ours = serde_json::to_value(id).ok();
            let unanswerable = message.get("error").is_some()
                && (message.get("id").is_none_or(Value::is_null)
                    || (!status.is_success() && message.get("id") != ours.as_ref()));
            if unanswerable && status.is_server_error() {
                shared.fail_transport(id, failed(text()));
            } else if unanswerable {
                let error = message
                    .get("error")
                    .cloned()
                    .and_then(|e| serde_json::from_value(e).ok())
                    .unwrap_or_else(|| http_error(status, ""));
                shared.fail(id, error);
            } else {
                shared.deliver(message);
            }
        }
        _ if !status.is_success() => shared.fail_transport(id, failed(text())),
        _ => shared.fail(id, http_error(status, &text())),
    }
}

/// `Retry-After` in its seconds form (an HTTP date is ignored: the backoff applies).
fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let seconds = headers
        .get(RETRY_AFTER)?
        .to_str()
        .ok()?
        .trim()
        .parse()
        .ok()?;
    Some(Duration::from_secs(seconds))
}

fn http_error(status: StatusCode, body: &str) -> ErrorObject {
    ErrorObject::new(
        ErrorCode(-32000),
        format!("HTTP {status} from the MCP server: {}", body.trim()),
    )
}

#[cfg(all(test, feature = "http"))]
#[path = "http_tests.rs"]
mod tests;
