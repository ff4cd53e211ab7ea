//! What wraps every [`Client::call_tool`](super::Client::call_tool): approval, retries with
//! backoff, and telemetry (the Codex MCP client's call options).

use std::fmt;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use super::ClientError;
use super::transport::TransportError;
use crate::protocol::ErrorCode;
use crate::registry::approval::Approver;
pub use crate::registry::{Approval, ApprovalRequest};

type BackoffFn = dyn Fn(u32) -> Duration + Send + Sync;

/// How long to wait before retry number `attempt` (1 for the first retry).
#[derive(Clone)]
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
/// use mcp_registry::client::{Approval, Backoff, CallPolicy};
/// use std::time::Duration;
/// let policy = CallPolicy::new()
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
pub struct CallPolicy {
    retries: u32,
    backoff: Backoff,
    approval: Option<Approver>,
}

impl Default for CallPolicy {
    fn default() -> Self {
        CallPolicy {
            retries: 3,
            backoff: Backoff::DEFAULT,
            approval: None,
        }
    }
}

impl fmt::Debug for CallPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CallPolicy")
            .field("retries", &self.retries)
            .field("backoff", &self.backoff)
            .field("approval", &self.approval.is_some())
            .finish()
    }
}

impl CallPolicy {
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
