use std::any::Any;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use futures_util::future::Either;
use serde_json::{Map, Value};
use tokio_util::sync::{CancellationToken, WaitForCancellationFutureOwned};

use super::{CallError, Registry};
use crate::protocol::{CallToolResult, ProtocolVersion, RequestId};
use crate::server::Server;
use crate::tool::{
    BoxFuture, CallScope, Extensions, HandlerResult, NotificationSink, Tool, ToolContext, ToolError,
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
        self.call_tool_by_name_with(name, arguments, CallOptions::default())
            .await
    }

    /// [`call_tool_by_name`](Self::call_tool_by_name) with per-call options.
    pub async fn call_tool_by_name_with(
        &self,
        name: &str,
        arguments: Value,
        options: CallOptions,
    ) -> Result<CallToolResult, CallError> {
        // One reference count for the whole call; the server and tool are borrowed from it.
        let snapshot = self.snapshot_full();
        let (server, tool) = snapshot.resolve(name)?;
        let arguments = match arguments {
            Value::Object(map) => map,
            Value::Null => Map::new(),
            other => {
                return Err(CallError::InvalidArguments {
                    tool: tool.name().to_owned(),
                    message: format!("arguments must be a JSON object, got {other}"),
                });
            }
        };
        self.invoke(server, tool, arguments, options, RequestInfo::default())
            .await
    }

    /// Runs one tool: context, timeout, cancellation, panic isolation. Spawns nothing.
    pub(crate) async fn invoke(
        &self,
        server: &Server,
        tool: &Tool,
        arguments: Map<String, Value>,
        options: CallOptions,
        request: RequestInfo,
    ) -> Result<CallToolResult, CallError> {
        let limit = match options.timeout {
            TimeoutSetting::RegistryDefault => self.config().default_timeout,
            TimeoutSetting::Limit(d) => Some(d),
            TimeoutSetting::Unlimited => None,
        };
        let cancellation = options.cancellation.clone();
        let ctx = ToolContext::from_scope(CallScope {
            tool: tool.shared_name().clone(),
            server: server.shared_name().clone(),
            request_id: request.id,
            meta: options.meta,
            protocol_version: request.protocol_version,
            notifications: options.notifications,
            cancellation: options.cancellation,
            registry_extensions: self.config().extensions.clone(),
            call_extensions: options.extensions,
        });
        let completion = ctx.completion();
        let outcome = CallFuture::start(tool, ctx, arguments, limit, cancellation).await;
        completion.complete();
        let name = || tool.name().to_owned();
        match outcome {
            Outcome::Done(Ok(result)) => Ok(result),
            Outcome::Done(Err(ToolError::InvalidArguments(message))) => {
                Err(CallError::InvalidArguments {
                    tool: name(),
                    message,
                })
            }
            Outcome::Done(Err(ToolError::Failed(message))) => Err(CallError::ToolFailed {
                tool: name(),
                message,
            }),
            Outcome::Panicked(message) => {
                tracing::error!(tool = tool.name(), server = server.name(), %message, "tool panicked");
                Err(CallError::Panicked {
                    tool: name(),
                    message,
                })
            }
            Outcome::TimedOut(limit) => Err(CallError::Timeout {
                tool: name(),
                limit,
            }),
            Outcome::Cancelled => Err(CallError::Cancelled { tool: name() }),
        }
    }
}

enum Outcome {
    Done(Result<CallToolResult, ToolError>),
    Panicked(String),
    TimedOut(Duration),
    Cancelled,
}

/// One tool call in flight: the handler's future guarded against panics, raced against the
/// caller's cancellation and a deadline, in one flat future (no nested state machines on the
/// hot path). The timer costs nothing for a call finishing on its first poll: it is armed only
/// when the call first returns `Pending`, with the deadline counted from the call's start.
/// Without a Tokio runtime (time enabled) the call runs unlimited.
struct CallFuture {
    fut: Option<BoxFuture<'static, HandlerResult>>,
    cancelled: Option<Pin<Box<WaitForCancellationFutureOwned>>>,
    limit: Option<Duration>,
    sleep: Option<Pin<Box<tokio::time::Sleep>>>,
    armed: bool,
}

impl CallFuture {
    fn start(
        tool: &Tool,
        ctx: ToolContext,
        arguments: Map<String, Value>,
        limit: Option<Duration>,
        cancellation: Option<CancellationToken>,
    ) -> Either<CallFuture, std::future::Ready<Outcome>> {
        // Creating the future runs user code too (argument parsing, a closure's body).
        match std::panic::catch_unwind(AssertUnwindSafe(|| tool.handler().call(ctx, arguments))) {
            Ok(fut) => Either::Left(CallFuture {
                fut: Some(fut),
                cancelled: cancellation.map(|t| Box::pin(t.cancelled_owned())),
                limit,
                sleep: None,
                armed: false,
            }),
            Err(payload) => Either::Right(std::future::ready(Outcome::Panicked(panic_message(
                &*payload,
            )))),
        }
    }
}

impl Future for CallFuture {
    type Output = Outcome;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Outcome> {
        let this = &mut *self;
        let Some(fut) = this.fut.as_mut() else {
            return Poll::Pending;
        };
        match std::panic::catch_unwind(AssertUnwindSafe(|| fut.as_mut().poll(cx))) {
            Ok(Poll::Ready(result)) => {
                this.fut = None;
                return Poll::Ready(Outcome::Done(result));
            }
            Err(payload) => {
                // Drop the poisoned future here, outside any further poll.
                this.fut = None;
                return Poll::Ready(Outcome::Panicked(panic_message(&*payload)));
            }
            Ok(Poll::Pending) => {}
        }
        if let Some(cancelled) = this.cancelled.as_mut()
            && cancelled.as_mut().poll(cx).is_ready()
        {
            this.fut = None;
            return Poll::Ready(Outcome::Cancelled);
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
            Some(Poll::Ready(())) => {
                this.fut = None;
                Poll::Ready(Outcome::TimedOut(limit))
            }
            _ => Poll::Pending,
        }
    }
}
