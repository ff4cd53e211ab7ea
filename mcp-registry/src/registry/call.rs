use std::any::Any;
use std::future::IntoFuture;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use futures_util::FutureExt;
use futures_util::future::CatchUnwind;
use serde_json::{Map, Value};
use tokio::time::{Timeout, timeout};
use tokio_util::sync::CancellationToken;

use super::approval::Approver;
use super::{Approval, ApprovalRequest, CallError, Registry, Target};
use crate::protocol::{
    CallToolResult, LoggingLevel, MAX_DEPTH, ProtocolVersion, RequestId, drop_flat,
    exceeds_max_depth,
};
use crate::tool::round::Round;
use crate::tool::{
    Arguments, BoxFuture, CallNames, CallScope, Completion, Extensions, HandlerResult,
    InputHandler, NotificationSink, ToolContext, ToolError,
};

/// Per-call settings for [`Registry::call_tool_by_name`] (through
/// [`CallRequest::options`]) and
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
    /// The least severe level of the log messages sent to the notification sink.
    pub(crate) log_level: Option<LoggingLevel>,
    /// Who answers the tool's elicitation, sampling and roots requests.
    pub(crate) input: Option<Arc<dyn InputHandler>>,
    /// A 2026-07-28 request without an input handler: its asks and answers (set by dispatch).
    pub(crate) round: Option<Arc<Round>>,
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

    /// The time limit for this call (overrides the registry's default), counted from its
    /// first poll.
    ///
    /// It needs a Tokio runtime with time enabled: a call that waits outside one fails with
    /// [`CallError::NoTimer`] instead of running unlimited. Elsewhere, use
    /// [`without_timeout`](Self::without_timeout).
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

    /// Sends the tool's log messages ([`ToolContext::log`]) at `level` or above to the
    /// notification sink, as `notifications/message`. Without it, none are sent. (An MCP
    /// message's own level wins: a legacy session's `logging/setLevel`, a 2026-07-28
    /// request's `_meta`.)
    pub fn log_level(mut self, level: LoggingLevel) -> Self {
        self.log_level = Some(level);
        self
    }

    /// Answers the tool's requests for input ([`ToolContext::elicit`], `sample`, `roots`)
    /// with `handler`: a host showing forms to its user, or a scripted client in a test
    /// ([`InputCallbacks`](crate::tool::InputCallbacks)). Without one, an in-process tool
    /// that asks gets [`InputError::NoClient`](crate::tool::InputError::NoClient); a legacy
    /// session sets its own (requests to its client).
    pub fn input_handler(mut self, handler: impl InputHandler) -> Self {
        self.input = Some(Arc::new(handler));
        self
    }

    /// [`input_handler`](Self::input_handler) with a shared handler.
    pub fn input_handler_shared(mut self, handler: Arc<dyn InputHandler>) -> Self {
        self.input = Some(handler);
        self
    }
}

/// A tool call to configure and `.await`: what [`Registry::call_tool_by_name`] returns. Each
/// setter is [`CallOptions`]'s, for this call; [`options`](Self::options) sets them all.
#[must_use = "a call does nothing until it is awaited"]
pub struct CallRequest<'a> {
    registry: &'a Registry,
    name: std::borrow::Cow<'a, str>,
    arguments: Value,
    options: CallOptions,
}

impl<'a> CallRequest<'a> {
    /// A call of the tool `name` (owned: a name computed by the caller).
    pub(crate) fn owned(registry: &'a Registry, name: String, arguments: Value) -> Self {
        CallRequest {
            registry,
            name: name.into(),
            arguments,
            options: CallOptions::default(),
        }
    }

    /// The time limit for this call (overrides the registry's default).
    pub fn timeout(mut self, limit: Duration) -> Self {
        self.options = self.options.timeout(limit);
        self
    }

    /// No time limit for this call.
    pub fn without_timeout(mut self) -> Self {
        self.options = self.options.without_timeout();
        self
    }

    /// Where the call's notifications (progress, ...) go, in order, before its result.
    pub fn notifications(mut self, sink: NotificationSink) -> Self {
        self.options = self.options.notifications(sink);
        self
    }

    /// A token whose cancellation stops the call with [`CallError::Cancelled`].
    pub fn cancellation(mut self, token: CancellationToken) -> Self {
        self.options = self.options.cancellation(token);
        self
    }

    /// A value the tool can read through [`ToolContext::get`] (ahead of registry values).
    pub fn extension<T: Send + Sync + 'static>(mut self, value: T) -> Self {
        self.options = self.options.extension(value);
        self
    }

    /// The request `_meta` the tool sees (e.g. `{"progressToken": 7}`).
    pub fn meta(mut self, meta: Map<String, Value>) -> Self {
        self.options = self.options.meta(meta);
        self
    }

    /// Sends the tool's log messages at `level` or above to the notification sink.
    pub fn log_level(mut self, level: LoggingLevel) -> Self {
        self.options = self.options.log_level(level);
        self
    }

    /// Answers the tool's requests for input with `handler` (see
    /// [`CallOptions::input_handler`]).
    pub fn input_handler(mut self, handler: impl InputHandler) -> Self {
        self.options = self.options.input_handler(handler);
        self
    }

    /// Every setting at once, replacing those made so far.
    pub fn options(mut self, options: CallOptions) -> Self {
        self.options = options;
        self
    }
}

impl IntoFuture for CallRequest<'_> {
    type Output = Result<CallToolResult, CallError>;
    type IntoFuture = CallFuture;

    fn into_future(self) -> CallFuture {
        self.registry
            .start_by_name(&self.name, self.arguments, self.options)
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
    /// (`mcp__<server>__<tool>`). `arguments` must be a JSON object (or `null`, read as `{}`).
    ///
    /// Returns the call to configure (a time limit, cancellation, progress notifications,
    /// values for the tool; see [`CallRequest`]) and `.await`; by default it runs under the
    /// registry's default timeout. The timeout needs a Tokio runtime with time enabled: a call
    /// that waits outside one fails with [`CallError::NoTimer`] (see
    /// [`RegistryBuilder::default_timeout`]).
    ///
    /// ```
    /// # use mcp_registry::{Registry, Server, Tool};
    /// # use serde_json::json;
    /// # use std::time::Duration;
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// # let add = Tool::new("add", "Add", json!({"type": "object"}), |a: serde_json::Value| async move {
    /// #     (a["a"].as_i64().unwrap_or(0) + a["b"].as_i64().unwrap_or(0)).to_string()
    /// # }).unwrap();
    /// let registry = Registry::from_servers([Server::new("math", None, [add]).unwrap()]);
    /// let sum = registry.call_tool_by_name("add", json!({"a": 1, "b": 2})).await.unwrap();
    /// assert_eq!(sum.first_text(), Some("3"));
    /// let sum = registry
    ///     .call_tool_by_name("mcp__math__add", json!({"a": 2, "b": 2}))
    ///     .timeout(Duration::from_secs(5))
    ///     .await
    ///     .unwrap();
    /// assert_eq!(sum.first_text(), Some("4"));
    /// # }
    /// ```
    ///
    /// [`RegistryBuilder::default_timeout`]: crate::RegistryBuilder::default_timeout
    pub fn call_tool_by_name<'a>(&'a self, name: &'a str, arguments: Value) -> CallRequest<'a> {
        CallRequest {
            registry: self,
            name: name.into(),
            arguments,
            options: CallOptions::default(),
        }
    }

    /// Resolves `name` and starts the call. The snapshot is held only until the handler's
    /// future exists: the call owns what it needs from then on. A call that cannot start is a
    /// future that fails at once (one future type, no `Result` to move through the caller).
    #[inline]
    fn start_by_name(&self, name: &str, arguments: Value, options: CallOptions) -> CallFuture {
        let snapshot = self.snapshot();
        let target = match snapshot.resolve(name) {
            Ok(target) => target,
            Err(e) => return failed(e),
        };
        if exceeds_max_depth(&arguments) {
            drop_flat(arguments);
            return failed(CallError::InvalidArguments {
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
                return failed(CallError::InvalidArguments {
                    tool: target.tool.name().to_owned(),
                    message: format!("arguments must be a JSON object, got {other}"),
                });
            }
        };
        let mut options = options;
        self.invoke(
            target,
            arguments.into(),
            &mut options,
            RequestInfo::default(),
        )
    }

    /// Starts one tool call: the host's approval when the registry asks for one, then
    /// [`start`](Self::start).
    pub(crate) fn invoke(
        &self,
        target: Target<'_>,
        arguments: Arguments<'_>,
        options: &mut CallOptions,
        request: RequestInfo,
    ) -> CallFuture {
        match &self.config().approval {
            None => self.start(target, arguments, options, request),
            Some(approver) => self.start_approved(
                approver.clone(),
                target,
                arguments,
                std::mem::take(options),
                request,
            ),
        }
    }

    /// A call that runs once `approver` allows it (its arguments owned for the wait).
    #[cold]
    fn start_approved(
        &self,
        approver: Approver,
        target: Target<'_>,
        arguments: Arguments<'_>,
        options: CallOptions,
        request: RequestInfo,
    ) -> CallFuture {
        let arguments = match arguments.into_map() {
            Ok(map) => map,
            Err(e) => {
                return failed(CallError::InvalidArguments {
                    tool: target.tool.name().to_owned(),
                    message: e.to_string(),
                });
            }
        };
        let ask = approver.ask(ApprovalRequest {
            server: target.names.server.to_string(),
            tool: target.tool.name().to_owned(),
            arguments: Value::Object(arguments.clone()),
        });
        let (registry, tool, names) = (self.clone(), target.tool.clone(), target.names.clone());
        let cancellation = options.cancellation.clone();
        CallFuture(CallState::Waiting(Box::pin(async move {
            let decision = match &cancellation {
                None => Some(ask.await),
                Some(token) => token.run_until_cancelled(ask).await,
            };
            match decision {
                Some(Approval::Allow) => {
                    let target = Target {
                        tool: &tool,
                        names: &names,
                    };
                    let mut options = options;
                    registry
                        .start(target, arguments.into(), &mut options, request)
                        .await
                }
                Some(Approval::Deny(reason)) => Err(CallError::Denied {
                    tool: names.tool.to_string(),
                    reason,
                }),
                None => Err(CallError::Cancelled {
                    tool: names.tool.to_string(),
                }),
            }
        })))
    }

    /// Starts one tool call: context, timeout, cancellation, panic isolation. Spawns nothing;
    /// the returned future runs the call. What the call needs is taken out of `options`
    /// (passed by reference so that no layer copies them on the way).
    fn start(
        &self,
        target: Target<'_>,
        arguments: Arguments<'_>,
        options: &mut CallOptions,
        request: RequestInfo,
    ) -> CallFuture {
        let limit = match options.timeout {
            TimeoutSetting::RegistryDefault => self.config().default_timeout,
            TimeoutSetting::Limit(d) => Some(d),
            TimeoutSetting::Unlimited => None,
        };
        let cancellation = options.cancellation.clone();
        let round = options.round.take();
        let ctx = ToolContext::from_scope(CallScope {
            names: target.names.clone(),
            request_id: request.id,
            meta: options.meta.take(),
            protocol_version: request.protocol_version,
            notifications: options.notifications.take(),
            cancellation: options.cancellation.take(),
            registry_extensions: self.config().extensions.clone(),
            call_extensions: std::mem::take(&mut options.extensions),
            log_level: options.log_level,
            input: options.input.take(),
            round: round.clone(),
        });
        let names = target.names.clone();
        let mut completion = ctx.completion();
        // Creating the future runs user code too (argument parsing, a closure's body).
        let handler = target.tool.handler();
        match std::panic::catch_unwind(AssertUnwindSafe(|| handler.call(ctx, arguments))) {
            Ok(fut) => CallFuture(CallState::Start(Call {
                fut: AssertUnwindSafe(fut).catch_unwind(),
                names,
                completion,
                limit,
                cancellation,
                round,
            })),
            Err(payload) => {
                completion.complete();
                let failure = Failure::Panicked(panic_message(&*payload));
                CallFuture(CallState::Done(Some(Err(failure.into_error(&names)))))
            }
        }
    }
}

/// One tool call in flight, resolving to the call's result: what awaiting a
/// [`CallRequest`] runs.
///
/// Most calls finish on their first poll, which is made here and costs neither a timer nor
/// an allocation. A call that waits goes on as a boxed future that races it against the
/// caller's cancellation and the time limit (counted from the first poll; with no Tokio
/// timer to keep it, the call fails with [`CallError::NoTimer`]).
pub struct CallFuture(CallState);

enum CallState {
    /// Not polled yet.
    Start(Call),
    /// The first poll was pending.
    Waiting(BoxFuture<'static, Result<CallToolResult, CallError>>),
    /// Decided without polling a handler; `None` once resolved.
    Done(Option<Result<CallToolResult, CallError>>),
}

/// A call that could not start: a future that fails at once.
#[cold]
fn failed(error: CallError) -> CallFuture {
    CallFuture(CallState::Done(Some(Err(error))))
}

impl Future for CallFuture {
    type Output = Result<CallToolResult, CallError>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = &mut self.get_mut().0;
        loop {
            match std::mem::replace(this, CallState::Done(None)) {
                CallState::Start(mut call) => match call.fut.poll_unpin(cx) {
                    Poll::Ready(outcome) => return Poll::Ready(call.finish(outcome_of(outcome))),
                    Poll::Pending if call.waits_for_input() => {
                        return Poll::Ready(call.finish(Err(Failure::InputRequired)));
                    }
                    // Polled again at once, as `Waiting`: that arms the timer.
                    Poll::Pending => *this = CallState::Waiting(Box::pin(call.wait())),
                },
                CallState::Waiting(mut fut) => {
                    let polled = fut.poll_unpin(cx);
                    if polled.is_pending() {
                        *this = CallState::Waiting(fut);
                    }
                    return polled;
                }
                // A resolved future never resolves again.
                CallState::Done(outcome) => return outcome.map_or(Poll::Pending, Poll::Ready),
            }
        }
    }
}

/// A started call: the handler's future with its panics caught, and what ending it needs.
pub(crate) struct Call {
    fut: CatchUnwind<AssertUnwindSafe<BoxFuture<'static, HandlerResult>>>,
    names: Arc<CallNames>,
    completion: Completion,
    limit: Option<Duration>,
    cancellation: Option<CancellationToken>,
    /// 2026-07-28: an ask without an answer stops the call.
    round: Option<Arc<Round>>,
}

impl Call {
    /// Whether the handler waits for input no one can give now (2026-07-28): the call stops
    /// and its request is answered with `input_required`.
    fn waits_for_input(&self) -> bool {
        self.round.as_ref().is_some_and(|round| {
            let waits = round.waits_for_input();
            if waits {
                round.stop();
            }
            waits
        })
    }

    /// The rest of a call whose first poll was pending.
    async fn wait(mut self) -> Result<CallToolResult, CallError> {
        let limit = self.limit;
        let outcome = {
            let round = self.round.clone();
            let handler = &mut self.fut;
            // The handler, stopped when it waits for input it cannot get (an ask made from
            // another task wakes it to see that).
            let mut fut = std::future::poll_fn(move |cx| {
                let Some(round) = &round else {
                    return handler.poll_unpin(cx).map(Ok);
                };
                round.wake_on_ask(cx.waker());
                match handler.poll_unpin(cx) {
                    Poll::Pending if round.waits_for_input() => {
                        round.stop();
                        Poll::Ready(Err(Failure::InputRequired))
                    }
                    polled => polled.map(Ok),
                }
            });
            let fut = &mut fut;
            let limited = async {
                let Some(limit) = limit else {
                    return fut.await;
                };
                let Some(limited) = start_timer(limit, fut) else {
                    return Err(Failure::NoTimer(limit));
                };
                limited.await.unwrap_or(Err(Failure::TimedOut(limit)))
            };
            match &self.cancellation {
                None => limited.await,
                Some(token) => token
                    .run_until_cancelled(limited)
                    .await
                    .unwrap_or(Err(Failure::Cancelled)),
            }
        };
        self.finish(outcome.and_then(outcome_of))
    }

    /// Ends the call: drops the handler's future, marks the call completed (no progress
    /// after the reply) and maps its outcome to what the caller sees.
    fn finish(self, outcome: Result<CallToolResult, Failure>) -> Result<CallToolResult, CallError> {
        let Call {
            fut,
            names,
            mut completion,
            ..
        } = self;
        drop(fut);
        completion.complete();
        outcome
            .and_then(refuse_too_deep)
            .map_err(|failure| failure.into_error(&names))
    }
}

/// `fut` limited to `limit`, or `None` where no timer can keep the limit: outside a Tokio
/// runtime, or in one built without its time driver (`enable_time`).
pub(crate) fn start_timer<F: Future>(limit: Duration, fut: F) -> Option<Timeout<F>> {
    tokio::runtime::Handle::try_current().ok()?;
    // Tokio has no query for the time driver: without it, creating the timer panics.
    std::panic::catch_unwind(AssertUnwindSafe(|| timeout(limit, fut))).ok()
}

/// The handler's outcome, its panic caught.
fn outcome_of(caught: std::thread::Result<HandlerResult>) -> Result<CallToolResult, Failure> {
    match caught {
        Ok(result) => result.map_err(Failure::Tool),
        Err(payload) => Err(Failure::Panicked(panic_message(&*payload))),
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
    /// The call waited with a time limit but no timer to keep it.
    NoTimer(Duration),
    Cancelled,
    /// Stopped to ask the client for input (2026-07-28): dispatch answers `input_required`.
    InputRequired,
}

impl Failure {
    #[cold]
    fn into_error(self, names: &CallNames) -> CallError {
        let tool = names.tool.to_string();
        match self {
            Failure::Tool(ToolError::InvalidArguments(message)) => {
                CallError::InvalidArguments { tool, message }
            }
            Failure::Tool(ToolError::Failed(message)) => CallError::ToolFailed { tool, message },
            Failure::Tool(ToolError::MissingClientCapability {
                capability,
                message,
            }) => CallError::MissingClientCapability {
                tool,
                capability,
                message,
            },
            Failure::Tool(ToolError::UrlElicitationRequired {
                message,
                elicitations,
            }) => CallError::UrlElicitationRequired {
                tool,
                message,
                elicitations,
            },
            Failure::Panicked(message) => {
                tracing::error!(tool, server = &*names.server, %message, "tool panicked");
                CallError::Panicked { tool, message }
            }
            Failure::TimedOut(limit) => CallError::Timeout { tool, limit },
            Failure::NoTimer(limit) => CallError::NoTimer { tool, limit },
            Failure::Cancelled => CallError::Cancelled { tool },
            Failure::InputRequired => CallError::ToolFailed {
                tool,
                message: "the tool needs input from the client".to_owned(),
            },
        }
    }
}
