//! What wraps a request, as tower's retry and timeout layers wrap a service: the
//! [`RequestPolicy`] (approval, retries with backoff, telemetry) decides, the request does not
//! know it is retried; [`RequestOptions`] carry one request's timeout, cancellation, progress
//! token and policy. Every [`Client::call_tool`](super::Client::call_tool) has a policy; any
//! other method gets one with [`ClientBuilder::policy`](super::ClientBuilder::policy) or
//! [`RequestOptions::policy`].

use std::collections::HashMap;
use std::fmt;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::ClientError;
use super::transport::TransportError;
use crate::protocol::ErrorCode;
use crate::protocol::method;
use crate::registry::approval::Approver;
use crate::registry::layer::RequestKind;
pub use crate::registry::{Approval, ApprovalRequest};

type BackoffFn = dyn Fn(u32) -> Duration + Send + Sync;

/// How long to wait before retry number `attempt` (1 for the first retry).
#[derive(Clone)]
#[non_exhaustive]
pub enum Backoff {
    /// `initial`, doubling with each retry, never more than `max`.
    Exponential {
        /// The wait before the first retry.
        initial: Duration,
        /// The longest wait.
        max: Duration,
    },
    /// A function of the retry number (1 for the first retry).
    Custom(Arc<BackoffFn>),
}

impl Backoff {
    /// The default: 100 ms, doubling, capped at 5 s (100, 200, 400 ms, …).
    pub const DEFAULT: Backoff = Backoff::Exponential {
        initial: Duration::from_millis(100),
        max: Duration::from_secs(5),
    };

    /// Waits `f(retry)` before retry number `retry` (1 for the first). Add jitter here when
    /// many clients may retry against one server at once.
    pub fn custom(f: impl Fn(u32) -> Duration + Send + Sync + 'static) -> Self {
        Backoff::Custom(Arc::new(f))
    }

    /// The wait before retry number `retry` (1 for the first).
    ///
    /// ```
    /// use mcp_registry::client::Backoff;
    /// use std::time::Duration;
    /// let waits: Vec<_> = (1..=8).map(|r| Backoff::DEFAULT.delay(r).as_millis()).collect();
    /// assert_eq!(waits, [100, 200, 400, 800, 1600, 3200, 5000, 5000]);
    /// ```
    pub fn delay(&self, retry: u32) -> Duration {
        match self {
            Backoff::Exponential { initial, max } => {
                let factor = 1u32
                    .checked_shl(retry.saturating_sub(1))
                    .unwrap_or(u32::MAX);
                initial.saturating_mul(factor).min(*max)
            }
            Backoff::Custom(f) => f(retry),
        }
    }
}

impl Default for Backoff {
    fn default() -> Self {
        Backoff::DEFAULT
    }
}

impl fmt::Debug for Backoff {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Backoff::Exponential { initial, max } => f
                .debug_struct("Exponential")
                .field("initial", initial)
                .field("max", max)
                .finish(),
            Backoff::Custom(_) => f.write_str("Custom(..)"),
        }
    }
}

/// What wraps each [`Client::call_tool`](super::Client::call_tool): an approval callback run
/// first, then up to `retries` retries of retryable failures with [`Backoff`] between them.
/// Set a client's with [`ClientBuilder::call_policy`](super::ClientBuilder::call_policy),
/// one call's with [`RequestOptions::policy`](super::RequestOptions::policy).
///
/// Retryable: transport failures, HTTP 5xx (after the server's `Retry-After` when it gives
/// one, up to a minute), timeouts, and the server's internal error (-32603). Never retried:
/// a result with `isError: true` (the tool ran), any other JSON-RPC error (-32602 invalid
/// params among them), HTTP 4xx, a message over the size limit, a redirect to another
/// origin, a denial, a cancellation, a closed connection. Each attempt gets the full timeout.
///
/// Every call is one `tracing` span `mcp.tool_call` (target `mcp_registry::client`, fields
/// `server`, `tool`) holding an event per attempt start and one at the end, `outcome`
/// `success`, `tool_error` (a result with `isError`), `denied` or `failure` (after the last
/// attempt), with `attempt`, `duration_ms` and `error`. A `tracing-subscriber` or
/// OpenTelemetry layer receives them as they are.
///
/// ```
/// use mcp_registry::client::{Approval, Backoff, RequestPolicy};
/// use std::time::Duration;
/// let policy = RequestPolicy::new()
///     .retries(2)
///     .backoff(Backoff::custom(|retry| Duration::from_millis(50 * u64::from(retry))))
///     .approval(|request| async move {
///         if request.tool.starts_with("delete") {
///             Approval::Deny(format!("{} needs a human", request.tool))
///         } else {
///             Approval::Allow
///         }
///     });
/// assert_eq!(policy.max_attempts(), 3);
/// ```
#[derive(Clone)]
pub struct RequestPolicy {
    retries: u32,
    backoff: Backoff,
    approval: Option<Approver>,
}

/// Renamed [`RequestPolicy`]: it governs any request, not only `tools/call`.
#[deprecated(
    since = "0.1.0",
    note = "renamed `RequestPolicy`: it governs any request"
)]
#[doc(hidden)]
pub type CallPolicy = RequestPolicy;

impl Default for RequestPolicy {
    fn default() -> Self {
        RequestPolicy {
            retries: 3,
            backoff: Backoff::DEFAULT,
            approval: None,
        }
    }
}

impl fmt::Debug for RequestPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RequestPolicy")
            .field("retries", &self.retries)
            .field("backoff", &self.backoff)
            .field("approval", &self.approval.is_some())
            .finish()
    }
}

impl RequestPolicy {
    /// The default: 3 retries (4 attempts at most), [`Backoff::DEFAULT`], no approval.
    pub fn new() -> Self {
        Self::default()
    }

    /// Retries after the first attempt (0: one attempt only).
    pub fn retries(mut self, retries: u32) -> Self {
        self.retries = retries;
        self
    }

    /// The wait between attempts.
    pub fn backoff(mut self, backoff: Backoff) -> Self {
        self.backoff = backoff;
        self
    }

    /// Asks `approve` before each call (once, not per attempt).
    pub fn approval<F, Fut>(mut self, approve: F) -> Self
    where
        F: Fn(ApprovalRequest) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Approval> + Send + 'static,
    {
        self.approval = Some(Approver::new(approve));
        self
    }

    /// The most attempts a call makes.
    pub fn max_attempts(&self) -> u32 {
        self.retries.saturating_add(1)
    }

    pub(crate) fn retry_count(&self) -> u32 {
        self.retries
    }

    /// The wait before retry number `retry` after `error`: the backoff's, or the server's
    /// `Retry-After` when longer (at most [`MAX_RETRY_AFTER`]).
    pub(crate) fn delay(&self, retry: u32, error: &ClientError) -> Duration {
        let asked = match error {
            ClientError::Transport(TransportError::Status {
                retry_after: Some(after),
                ..
            }) => (*after).min(MAX_RETRY_AFTER),
            _ => Duration::ZERO,
        };
        self.backoff.delay(retry).max(asked)
    }

    pub(crate) async fn approve(&self, request: ApprovalRequest) -> Approval {
        match &self.approval {
            Some(approver) => approver.ask(request).await,
            None => Approval::Allow,
        }
    }
}

/// The longest `Retry-After` honoured: a server asking for more gets the call failed sooner
/// rather than a caller left waiting.
pub(crate) const MAX_RETRY_AFTER: Duration = Duration::from_secs(60);

/// Whether another attempt may succeed where `error` failed.
pub(crate) fn is_retryable(error: &ClientError) -> bool {
    match error {
        // The same message would be as large, the redirect the same; a 4xx is the request's.
        ClientError::Transport(
            TransportError::TooLarge { .. } | TransportError::Redirected { .. },
        ) => false,
        ClientError::Transport(TransportError::Status { status, .. }) => *status >= 500,
        ClientError::Transport(_) | ClientError::Timeout { .. } => true,
        ClientError::Server { error, .. } => error.code == ErrorCode::INTERNAL_ERROR,
        _ => false,
    }
}

/// Per-request options of the client: timeout, cancellation, progress, policy. (The server
/// side's per-call options are [`crate::CallOptions`].)
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct RequestOptions {
    /// Overrides the client's default timeout.
    pub timeout: Option<Duration>,
    /// Cancels the request when cancelled.
    pub cancellation: Option<CancellationToken>,
    /// Asks for `notifications/progress` under this token (they arrive on
    /// [`Client::notifications`](super::Client::notifications)).
    pub progress_token: Option<Value>,
    /// Overrides the client's [`RequestPolicy`] for this request.
    pub policy: Option<RequestPolicy>,
}

impl RequestOptions {
    /// Default options.
    pub fn new() -> Self {
        Self::default()
    }

    /// Gives up after `timeout`.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// Cancelled with `token`.
    pub fn cancellation(mut self, token: CancellationToken) -> Self {
        self.cancellation = Some(token);
        self
    }

    /// Asks for progress under `token`.
    pub fn progress_token(mut self, token: impl Into<Value>) -> Self {
        self.progress_token = Some(token.into());
        self
    }

    /// Retries, backoff and approval for this call, instead of the client's.
    pub fn policy(mut self, policy: RequestPolicy) -> Self {
        self.policy = Some(policy);
        self
    }
}

/// The policies of a client, by method; `tools/call` has [`RequestPolicy::default`] unless set.
#[derive(Clone, Debug)]
pub(crate) struct Policies(HashMap<String, RequestPolicy>);

impl Default for Policies {
    fn default() -> Self {
        Policies(HashMap::from([(
            method::TOOLS_CALL.to_owned(),
            RequestPolicy::default(),
        )]))
    }
}

impl Policies {
    pub(crate) fn set(&mut self, method: impl Into<String>, policy: RequestPolicy) {
        self.0.insert(method.into(), policy);
    }

    /// The policy for a request of `method` with `options`: the options', else the client's.
    pub(crate) fn pick(&self, method: &str, options: &RequestOptions) -> Option<RequestPolicy> {
        options
            .policy
            .clone()
            .or_else(|| self.0.get(method).cloned())
    }
}

/// One request as a policy sees it: for approval (`tool` is the request's name: a tool, a
/// prompt, a resource URI) and telemetry.
pub(crate) struct PolicyRequest<'a> {
    pub(crate) server: String,
    pub(crate) method: &'a str,
    pub(crate) name: &'a str,
    pub(crate) arguments: Value,
}

/// How a finished request is reported: `tool_error` for a result with `isError`.
pub(crate) trait Outcome {
    fn outcome(&self) -> &'static str {
        "success"
    }
}

/// The span of one request: `mcp.tool_call` or `mcp.request`, with the attributes
/// OpenTelemetry's MCP conventions name (`otel.name` is `{method} {target}`); with the `otel`
/// feature its context goes into the request's `_meta`.
fn request_span(request: &PolicyRequest<'_>) -> tracing::Span {
    use tracing::field::Empty;
    if request.method == method::TOOLS_CALL {
        tracing::info_span!(target: "mcp_registry::client", "mcp.tool_call", otel.name = %format_args!("{} {}", request.method, request.name), otel.kind = "client", otel.status_code = Empty, error.type = Empty, mcp.method.name = request.method, gen_ai.tool.name = %request.name, server = %request.server, tool = %request.name)
    } else {
        tracing::info_span!(target: "mcp_registry::client", "mcp.request", otel.name = %format_args!("{} {}", request.method, request.name), otel.kind = "client", otel.status_code = Empty, error.type = Empty, mcp.method.name = request.method, server = %request.server, method = %request.method, name = %request.name)
    }
}

/// Marks the current request span failed, with `error.type`.
fn failed(error_type: &str) {
    let span = tracing::Span::current();
    span.record("error.type", error_type);
    span.record("otel.status_code", "ERROR");
}

/// `error.type` for a request that failed: the JSON-RPC code, or what went wrong.
fn error_type(error: &ClientError) -> String {
    match error {
        ClientError::Server { error, .. } => error.code.0.to_string(),
        ClientError::Spawn { .. } => "spawn".into(),
        ClientError::Transport(_) => "transport".into(),
        ClientError::Closed(_) => "closed".into(),
        ClientError::Handshake(_) => "handshake".into(),
        ClientError::Timeout { .. } => "timeout".into(),
        ClientError::Cancelled { .. } => "cancelled".into(),
        ClientError::InvalidResult { .. } => "invalid_result".into(),
        ClientError::State(_) => "state".into(),
        ClientError::Denied { .. } => "denied".into(),
        ClientError::Skill(_) => "skill_verification".into(),
    }
}

/// Runs `attempt` under `policy`: approval once, then attempts until one succeeds, fails for
/// good, or the retries are spent (waiting the backoff, or the server's `Retry-After`,
/// between them; `cancellation` ends a wait). One `tracing` span per request
/// (`mcp.tool_call` with `server`, `tool`; `mcp.request` with `server`, `method`, `name`).
pub(crate) async fn run<T, F, Fut>(
    policy: &RequestPolicy,
    request: PolicyRequest<'_>,
    cancellation: Option<&CancellationToken>,
    mut attempt: F,
) -> Result<T, ClientError>
where
    T: Outcome,
    F: FnMut(Value) -> Fut,
    Fut: Future<Output = Result<T, ClientError>>,
{
    let span = request_span(&request);
    // The events' messages name what is wrapped: "tool call …" or "request …".
    let what = if request.method == method::TOOLS_CALL {
        "tool call"
    } else {
        "request"
    };
    let started = tokio::time::Instant::now();
    let elapsed = || u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
    let method = request.method;
    let approval = ApprovalRequest {
        server: request.server,
        tool: request.name.to_owned(),
        arguments: request.arguments,
        kind: RequestKind::of_method(method).unwrap_or(RequestKind::Tool),
        caller: crate::Caller::Anonymous,
    };
    let attempts = async {
        let arguments = match policy.approve(approval.clone()).await {
            Approval::Allow => approval.arguments,
            Approval::Deny(reason) => {
                tracing::info!(target: "mcp_registry::client", outcome = "denied", attempt = 0u32, duration_ms = elapsed(), error = %reason, "{what} denied");
                return Err(ClientError::Denied {
                    tool: approval.tool,
                    reason,
                });
            }
        };
        let never = CancellationToken::new();
        let cancellation = cancellation.unwrap_or(&never);
        let mut number = 1;
        loop {
            tracing::debug!(target: "mcp_registry::client", attempt = number, "{what} attempt");
            match attempt(arguments.clone()).await {
                Ok(result) => {
                    let outcome = result.outcome();
                    if outcome != "success" {
                        failed(outcome);
                    }
                    tracing::info!(target: "mcp_registry::client", outcome, attempt = number, duration_ms = elapsed(), "{what} finished");
                    return Ok(result);
                }
                Err(error) if number <= policy.retry_count() && is_retryable(&error) => {
                    let wait = policy.delay(number, &error);
                    tracing::debug!(target: "mcp_registry::client", attempt = number, error = %error, retry_in_ms = u64::try_from(wait.as_millis()).unwrap_or(u64::MAX), "{what} attempt failed; retrying");
                    tokio::select! {
                        () = tokio::time::sleep(wait) => {}
                        () = cancellation.cancelled() => {
                            return Err(ClientError::Cancelled { method: method.into() });
                        }
                    }
                    number += 1;
                }
                Err(error) => {
                    failed(&error_type(&error));
                    tracing::warn!(target: "mcp_registry::client", outcome = "failure", attempt = number, duration_ms = elapsed(), error = %error, "{what} failed");
                    return Err(error);
                }
            }
        }
    };
    #[cfg(feature = "otel")]
    let operation = crate::telemetry::metrics::Operation::start(method, Some(request.name), None);
    let result = tracing::Instrument::instrument(attempts, span).await;
    #[cfg(feature = "otel")]
    record(operation, &result);
    result
}

/// The client operation's duration, recorded by how `result` ended (OpenTelemetry's MCP
/// conventions: `error.type` is the JSON-RPC code, `tool_error`, or the failure's kind).
#[cfg(feature = "otel")]
fn record<T: Outcome>(
    operation: crate::telemetry::metrics::Operation,
    result: &Result<T, ClientError>,
) {
    use crate::telemetry::metrics::Ending;
    let other;
    operation.client(match result {
        Ok(result) => match result.outcome() {
            "success" => Ending::Success,
            "tool_error" => Ending::ToolError,
            outcome => Ending::Other(outcome),
        },
        Err(ClientError::Server { error, .. }) => Ending::Code(error.code.0.into()),
        Err(error) => {
            other = error_type(error);
            Ending::Other(&other)
        }
    });
}
