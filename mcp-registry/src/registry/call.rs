use std::any::Any;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use serde_json::{Map, Value};
use tokio_util::sync::{CancellationToken, WaitForCancellationFutureOwned};

use super::{CallError, Registry, Target};
use crate::protocol::{
    CallToolResult, MAX_DEPTH, ProtocolVersion, RequestId, drop_flat, exceeds_max_depth,
};
use crate::tool::{
    BoxFuture, CallNames, CallScope, Completion, Extensions, HandlerResult, NotificationSink,
    ToolContext, ToolError,
};

/// Per-call settings for [`Registry::call_tool_by_name_with`] and
/// [`Registry::handle_mcp_message_with`](crate::Registry::handle_mcp_message_with).
///
/// ```
/// use std::time::Duration;
/// use mcp_registry::CallOptions;
/// let opts = CallOptions::new().timeout(Duration::from_secs(5));
/// ```
#[derive(Debug, Clone, Default)]
pub struct CallOptions {
    pub(crate) timeout: TimeoutSetting,
    pub(crate) notifications: Option<NotificationSink>,
    pub(crate) cancellation: Option<CancellationToken>,
    pub(crate) extensions: Extensions,
    pub(crate) meta: Option<Map<String, Value>>,
    /// Which tools `tools/list` shows (a filtered view's), judged before pagination.
    pub(crate) listing_filter: Option<ListingFilter>,
}

/// Decides whether `tools/list` shows a tool.
#[derive(Clone)]
pub(crate) struct ListingFilter(Arc<ShowsTool>);

/// `(server, tool) -> listed`.
type ShowsTool = dyn Fn(&str, &str) -> bool + Send + Sync;

impl ListingFilter {
    pub(crate) fn new(shows: impl Fn(&str, &str) -> bool + Send + Sync + 'static) -> Self {
        ListingFilter(Arc::new(shows))
    }

    /// Whether `tool` of `server` is listed.
    pub(crate) fn shows(&self, server: &str, tool: &str) -> bool {
        (self.0)(server, tool)
    }
}

impl std::fmt::Debug for ListingFilter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ListingFilter")
    }
}

#[derive(Debug, Clone, Copy, Default)]
pub(crate) enum TimeoutSetting {
    #[default]
    RegistryDefault,
    Limit(Duration),
    Unlimited,
}

impl CallOptions {
    /// Defaults: the registry's timeout, no notifications, not cancellable.
    pub fn new() -> Self {
        Self::default()
    }

    /// The time limit for this call (overrides the registry's default).
    pub fn timeout(mut self, limit: Duration) -> Self {
        self.timeout = TimeoutSetting::Limit(limit);
        self
    }

    /// No time limit for this call.
    pub fn without_timeout(mut self) -> Self {
        self.timeout = TimeoutSetting::Unlimited;
        self
    }

    /// Where the call's notifications (progress, …) go, in order, before its result.
    pub fn notifications(mut self, sink: NotificationSink) -> Self {
        self.notifications = Some(sink);
        self
    }

    /// A token whose cancellation stops the call: its future is dropped and the call ends
    /// with [`CallError::Cancelled`].
    pub fn cancellation(mut self, token: CancellationToken) -> Self {
        self.cancellation = Some(token);
        self
    }

    /// A value the tool can read through [`ToolContext::get`] (ahead of registry values).
    pub fn extension<T: Send + Sync + 'static>(mut self, value: T) -> Self {
        self.extensions.insert(value);
        self
    }

    /// The request `_meta` the tool sees (e.g. `{"progressToken": 7}`).
    pub fn meta(mut self, meta: Map<String, Value>) -> Self {
        self.meta = Some(meta);
        self
    }
}

/// Where a call came from, when it came in as a message.
#[derive(Default)]
pub(crate) struct RequestInfo {
    pub(crate) id: Option<RequestId>,
    pub(crate) protocol_version: Option<ProtocolVersion>,
}

fn panic_message(payload: &(dyn Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a non-string panic payload".to_owned())
}

impl Registry {
    /// Calls a tool by plain name (when unique among enabled servers) or qualified name
    /// (`mcp__<server>__<tool>`), with the registry's default timeout.
    ///
    /// `arguments` must be a JSON object (or `null`, read as `{}`).
    pub async fn call_tool_by_name(
        &self,
        name: &str,
        arguments: Value,
    ) -> Result<CallToolResult, CallError> {
        self.start_by_name(name, arguments, CallOptions::default())
            .await
    }

    /// [`call_tool_by_name`](Self::call_tool_by_name) with per-call options.
    pub async fn call_tool_by_name_with(
        &self,
        name: &str,
        arguments: Value,
        options: CallOptions,
    ) -> Result<CallToolResult, CallError> {
        self.start_by_name(name, arguments, options).await
    }

    /// Resolves `name` and starts the call. The snapshot is held only until the handler's
    /// future exists: the call owns what it needs from then on. A call that cannot start is a
    /// future that fails at once (one future type, no `Result` to move through the caller).
    #[inline]
    fn start_by_name(&self, name: &str, arguments: Value, options: CallOptions) -> CallFuture {
        let snapshot = self.snapshot();
        let target = match snapshot.resolve(name) {
            Ok(target) => target,
            Err(e) => return CallFuture::failed(e),
        };
        if exceeds_max_depth(&arguments) {
            drop_flat(arguments);
            return CallFuture::failed(CallError::InvalidArguments {
                tool: target.tool.name().to_owned(),
                message: format!(
                    "arguments nest arrays and objects deeper than {MAX_DEPTH} levels"
                ),
            });
        }
        let arguments = match arguments {
            Value::Object(map) => map,
            Value::Null => Map::new(),
            other => {
                return CallFuture::failed(CallError::InvalidArguments {
                    tool: target.tool.name().to_owned(),
                    message: format!("arguments must be a JSON object, got {other}"),
                });
            }
        };
        self.invoke(target, arguments, options, RequestInfo::default())
    }

    /// Starts one tool call: context, timeout, cancellation, panic isolation. Spawns nothing;
    /// the returned future runs the call. Inlined, so a call with default options skips
    /// what they leave unset.
    #[inline]
    pub(crate) fn invoke(
        &self,
        target: Target<'_>,
        arguments: Map<String, Value>,
        options: CallOptions,
        request: RequestInfo,
    ) -> CallFuture {
        let limit = match options.timeout {
            TimeoutSetting::RegistryDefault => self.config().default_timeout,
            TimeoutSetting::Limit(d) => Some(d),
            TimeoutSetting::Unlimited => None,
        };
        let cancelled = options
            .cancellation
            .as_ref()
            .map(|t| Box::pin(t.clone().cancelled_owned()));
        let ctx = ToolContext::from_scope(CallScope {
            names: target.names.clone(),
            request_id: request.id,
            meta: options.meta,
            protocol_version: request.protocol_version,
            notifications: options.notifications,
            cancellation: options.cancellation,
            registry_extensions: self.config().extensions.clone(),
            call_extensions: options.extensions,
        });
        let completion = ctx.completion();
        // Creating the future runs user code too (argument parsing, a closure's body).
        let handler = target.tool.handler();
        let state =
            match std::panic::catch_unwind(AssertUnwindSafe(|| handler.call(ctx, arguments))) {
                Ok(fut) => State::Running(fut),
                Err(payload) => State::Panicked(panic_message(&*payload)),
            };
        CallFuture {
            state,
            names: Some(target.names.clone()),
            completion,
            cancelled,
            limit,
            sleep: None,
            armed: false,
        }
    }
}

enum State {
    Running(BoxFuture<'static, HandlerResult>),
    /// Creating the handler's future panicked.
    Panicked(String),
    /// The call could not start (unknown tool, …).
    Failed(Box<CallError>),
    Finished,
}

/// One tool call in flight: the handler's future guarded against panics, raced against the
/// caller's cancellation and a deadline, in one flat future (no nested state machines on the
/// hot path) that resolves straight to the call's result. The timer costs nothing for a call
/// finishing on its first poll: it is armed only when the call first returns `Pending`.
/// Without a Tokio runtime (time enabled) the call runs unlimited.
pub(crate) struct CallFuture {
    state: State,
    /// `None` only for a call that could not start.
    names: Option<Arc<CallNames>>,
    completion: Completion,
    cancelled: Option<Pin<Box<WaitForCancellationFutureOwned>>>,
    limit: Option<Duration>,
    sleep: Option<Pin<Box<tokio::time::Sleep>>>,
    armed: bool,
}

impl CallFuture {
    #[cold]
    fn failed(error: CallError) -> Self {
        CallFuture {
            state: State::Failed(Box::new(error)),
            names: None,
            completion: Completion::none(),
            cancelled: None,
            limit: None,
            sleep: None,
            armed: false,
        }
    }

    /// Ends the call: marks it completed (no progress after the reply) and maps its outcome.
    #[inline]
    fn finish(
        &mut self,
        outcome: Result<CallToolResult, Failure>,
    ) -> Poll<Result<CallToolResult, CallError>> {
        self.state = State::Finished;
        self.completion.complete();
        let outcome = outcome.and_then(refuse_too_deep);
        Poll::Ready(outcome.map_err(|failure| self.error(failure)))
    }

    #[cold]
    fn error(&self, failure: Failure) -> CallError {
        let names = self.names.as_deref();
        let tool = names.map_or("", |n| &n.tool);
        let name = || tool.to_owned();
        match failure {
            Failure::Tool(ToolError::InvalidArguments(message)) => CallError::InvalidArguments {
                tool: name(),
                message,
            },
            Failure::Tool(ToolError::Failed(message)) => CallError::ToolFailed {
                tool: name(),
                message,
            },
            Failure::Panicked(message) => {
                let server = names.map_or("", |n| &n.server);
                tracing::error!(tool, server, %message, "tool panicked");
                CallError::Panicked {
                    tool: name(),
                    message,
                }
            }
            Failure::TimedOut(limit) => CallError::Timeout {
                tool: name(),
                limit,
            },
            Failure::Cancelled => CallError::Cancelled { tool: name() },
        }
    }
}

/// A tool result nesting deeper than [`MAX_DEPTH`] cannot be sent (serializing it would
/// overflow the stack, and no client could parse it): the call fails instead.
#[inline]
fn refuse_too_deep(mut result: CallToolResult) -> Result<CallToolResult, Failure> {
    let too_deep = result
        .structured_content
        .as_ref()
        .is_some_and(exceeds_max_depth)
        || result
            .meta
            .as_ref()
            .is_some_and(|meta| meta.values().any(exceeds_max_depth));
    if !too_deep {
        return Ok(result);
    }
    if let Some(value) = result.structured_content.take() {
        drop_flat(value);
    }
    for (_, value) in result.meta.take().into_iter().flatten() {
        drop_flat(value);
    }
    Err(Failure::Tool(ToolError::Failed(format!(
        "the tool's result nests arrays and objects deeper than {MAX_DEPTH} levels"
    ))))
}

/// How a call ended without a result.
enum Failure {
    Tool(ToolError),
    Panicked(String),
    TimedOut(Duration),
    Cancelled,
}

impl Future for CallFuture {
    type Output = Result<CallToolResult, CallError>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = &mut *self;
        let fut = match &mut this.state {
            State::Running(fut) => fut,
            State::Panicked(message) => {
                let message = std::mem::take(message);
                return this.finish(Err(Failure::Panicked(message)));
            }
            State::Failed(_) => {
                return match std::mem::replace(&mut this.state, State::Finished) {
                    State::Failed(error) => Poll::Ready(Err(*error)),
                    _ => Poll::Pending,
                };
            }
            State::Finished => return Poll::Pending,
        };
        // The result is written straight into `ready` (not passed back through the unwind
        // guard's return value: one copy fewer of a large value).
        let mut ready = None;
        let polled = std::panic::catch_unwind(AssertUnwindSafe(|| {
            if let Poll::Ready(result) = fut.as_mut().poll(cx) {
                ready = Some(result);
            }
        }));
        if let Err(payload) = polled {
            // `finish` drops the poisoned future first, outside any further poll.
            return this.finish(Err(Failure::Panicked(panic_message(&*payload))));
        }
        if let Some(result) = ready {
            return this.finish(result.map_err(Failure::Tool));
        }
        if let Some(cancelled) = this.cancelled.as_mut()
            && cancelled.as_mut().poll(cx).is_ready()
        {
            return this.finish(Err(Failure::Cancelled));
        }
        let Some(limit) = this.limit else {
            return Poll::Pending;
        };
        if !this.armed {
            this.armed = true;
            if tokio::runtime::Handle::try_current().is_ok() {
                this.sleep = Some(Box::pin(tokio::time::sleep(limit)));
            }
        }
        match this.sleep.as_mut().map(|sleep| sleep.as_mut().poll(cx)) {
            Some(Poll::Ready(())) => this.finish(Err(Failure::TimedOut(limit))),
            _ => Poll::Pending,
        }
    }
}
