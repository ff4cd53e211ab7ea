//! Tool calls: by name in-process ([`Registry::call_tool_by_name`]) and from dispatch, each
//! through the request's scope, the layer stack and the guarded runner.
//!
//! One request kind in two layers, named alike: its MCP methods in `dispatch/tools.rs`.

use std::borrow::Cow;
use std::future::IntoFuture;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use futures_util::FutureExt;
use serde_json::{Map, Value};

use super::guard::{Failure, Guard, Guarded, RunErrors};
use super::layer::{Endpoint, Request, RequestKind, Response, mismatch};
use super::options::WithOptions;
use super::scope::{RequestInfo, RunScope, through_layers};
use super::{CallError, CallOptions, Registry, Target};
use crate::protocol::{CallToolResult, MAX_DEPTH, drop_flat, exceeds_max_depth};
use crate::tool::{
    Arguments, BoxFuture, CallNames, CallScope, Completion, HandlerResult, PlainHandler, Tool,
    ToolError,
};

/// A tool call to configure and `.await`: what [`Registry::call_tool_by_name`] returns.
pub type CallRequest<'a> = WithOptions<ToolCall<'a>>;

/// What a [`CallRequest`] calls: a tool by name, with its arguments.
pub struct ToolCall<'a> {
    pub(super) registry: &'a Registry,
    pub(super) name: Cow<'a, str>,
    pub(super) arguments: Value,
}

impl<'a> CallRequest<'a> {
    /// A call of the tool `name` (owned: a name computed by the caller).
    pub(crate) fn owned(registry: &'a Registry, name: String, arguments: Value) -> Self {
        WithOptions::new(ToolCall {
            registry,
            name: name.into(),
            arguments,
        })
    }
}

impl IntoFuture for CallRequest<'_> {
    type Output = Result<CallToolResult, CallError>;
    type IntoFuture = CallFuture;

    fn into_future(self) -> CallFuture {
        let ToolCall {
            registry,
            name,
            arguments,
        } = self.target;
        registry.start_by_name(&name, arguments, self.options)
    }
}

impl Registry {
    /// Calls a tool by plain name (when unique among enabled servers) or qualified name
    /// (`mcp__<server>__<tool>`). `arguments` must be a JSON object (or `null`, read as `{}`).
    ///
    /// Returns the call to configure (a time limit, cancellation, progress notifications,
    /// values for the tool; see [`WithOptions`]) and `.await`. It passes the registry's
    /// [layers](crate::RegistryBuilder::layer) and runs under the tool's time limit, else
    /// the registry's default timeout. The timeout needs a Tokio runtime with time enabled:
    /// a call that waits outside one fails with [`CallError::NoTimer`] (see
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
        WithOptions::new(ToolCall {
            registry: self,
            name: name.into(),
            arguments,
        })
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
        let arguments = match object_arguments(target.tool.name(), arguments) {
            Ok(arguments) => arguments,
            Err(e) => return failed(e),
        };
        let mut options = options;
        self.invoke(
            target,
            arguments.into(),
            &mut options,
            RequestInfo::default(),
        )
    }

    /// Starts one tool call: its scope, then the layer stack (when there is one) and the
    /// guarded run of its handler.
    #[inline(always)]
    pub(crate) fn invoke(
        &self,
        target: Target<'_>,
        arguments: Arguments<'_>,
        options: &mut CallOptions,
        info: RequestInfo,
    ) -> CallFuture {
        let (call, guard) =
            self.scope_parts(target.names.clone(), options, info, target.tool.timeout());
        let layers = self.layers(options);
        if let (None, Some(plain)) = (&layers, target.tool.plain_handler()) {
            return run_plain(plain, call, guard, arguments);
        }
        let scope = RunScope::new(call, guard);
        match layers {
            None => run(target.tool, scope, arguments),
            Some(layers) => layered(&layers, target.tool.clone(), scope, arguments),
        }
    }
}

/// `arguments` as a tool takes them: an object (`null` for none), not nesting too deep.
pub(super) fn object_arguments(
    tool: &str,
    arguments: Value,
) -> Result<Map<String, Value>, CallError> {
    let invalid = |message: String| CallError::InvalidArguments {
        tool: tool.to_owned(),
        message,
    };
    if exceeds_max_depth(&arguments) {
        drop_flat(arguments);
        return Err(invalid(format!(
            "arguments nest arrays and objects deeper than {MAX_DEPTH} levels"
        )));
    }
    match arguments {
        Value::Object(map) => Ok(map),
        Value::Null => Ok(Map::new()),
        other => Err(invalid(format!(
            "arguments must be a JSON object, got {other}"
        ))),
    }
}

/// The guarded run of `tool`'s handler in `scope`. Spawns nothing: the returned future runs
/// the call. (Inlined, as is [`Registry::invoke`], so the context is written in place.)
#[inline(always)]
fn run(tool: &Tool, scope: RunScope, arguments: Arguments<'_>) -> CallFuture {
    let RunScope { ctx, guard } = scope;
    let names = ctx.names().clone();
    let completion = ctx.completion();
    let handler = tool.handler();
    CallFuture(CallState::Running(ToolRun {
        run: Guarded::start(guard, || handler.call(ctx, arguments)),
        names,
        completion,
    }))
}

/// The guarded run of a handler that reads no context (when no layer wants one): none is
/// built, and the call keeps the scope's names for its errors.
#[inline(always)]
fn run_plain(
    handler: &dyn PlainHandler,
    call: CallScope,
    guard: Guard,
    arguments: Arguments<'_>,
) -> CallFuture {
    let CallScope {
        names,
        lenient_scalars,
        request_id,
        meta,
        protocol_version: _,
        notifications,
        cancellation,
        registry_extensions,
        call_extensions,
        caller,
        log_level: _,
        input,
        round,
    } = call;
    // The rest of the scope (host values among it) is dropped where a panic is caught, as a
    // context the function dropped would be.
    let rest = (
        request_id,
        meta,
        notifications,
        cancellation,
        registry_extensions,
        call_extensions,
        caller,
        input,
        round,
    );
    let run = Guarded::start(guard, move || {
        drop(rest);
        handler.call(arguments, lenient_scalars)
    });
    CallFuture(CallState::Running(ToolRun {
        run,
        names,
        completion: Completion::none(),
    }))
}

/// A call through the layer stack: the layers see its arguments as a value, and its
/// handler runs once the last layer lets it.
#[cold]
fn layered(
    layers: &super::scope::Layers,
    tool: Tool,
    scope: RunScope,
    arguments: Arguments<'_>,
) -> CallFuture {
    let RunScope { ctx, guard } = scope;
    let names = ctx.names().clone();
    let arguments = match arguments.into_map() {
        Ok(map) => Value::Object(map),
        Err(e) => {
            return failed(CallError::InvalidArguments {
                tool: names.tool.to_string(),
                message: e.to_string(),
            });
        }
    };
    let request = Request {
        kind: RequestKind::Tool,
        name: names.tool.clone(),
        arguments,
        context: ctx,
    };
    let endpoint: Endpoint = Box::new(move |request: Request| {
        let Request {
            arguments, context, ..
        } = request;
        let call = match object_arguments(tool.name(), arguments) {
            Ok(arguments) => run(
                &tool,
                RunScope {
                    ctx: context,
                    guard,
                },
                arguments.into(),
            ),
            Err(e) => failed(e),
        };
        Box::pin(async move { Response::Tool(call.await) })
    });
    let running = through_layers(layers, request, endpoint);
    CallFuture(CallState::Layered(Box::pin(async move {
        match running.await {
            Some(Response::Tool(result)) => result,
            Some(other) => Err(CallError::ToolFailed {
                tool: names.tool.to_string(),
                message: mismatch(RequestKind::Tool, &other),
            }),
            None => Err(CallError::Cancelled {
                tool: names.tool.to_string(),
            }),
        }
    })))
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
    /// The handler's guarded run.
    Running(ToolRun),
    /// Through the layer stack.
    Layered(BoxFuture<'static, Result<CallToolResult, CallError>>),
    /// Failed without running the handler; `None` once resolved.
    Done(Option<Box<CallError>>),
}

/// The guarded run of a tool's handler, and what ending it needs.
struct ToolRun {
    run: Guarded<HandlerResult>,
    names: Arc<CallNames>,
    completion: Completion,
}

/// A call that could not start: a future that fails at once.
#[cold]
fn failed(error: CallError) -> CallFuture {
    CallFuture(CallState::Done(Some(Box::new(error))))
}

impl Future for CallFuture {
    type Output = Result<CallToolResult, CallError>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        match &mut self.get_mut().0 {
            CallState::Running(call) => {
                let outcome = std::task::ready!(call.run.poll_unpin(cx));
                // No progress is sent after the reply.
                call.completion.complete();
                Poll::Ready(finish(outcome, &call.names))
            }
            CallState::Layered(fut) => fut.poll_unpin(cx),
            // A resolved future never resolves again.
            CallState::Done(error) => error.take().map_or(Poll::Pending, |e| Poll::Ready(Err(*e))),
        }
    }
}

/// What the caller sees of a run that ended with `outcome`.
#[inline]
fn finish(
    outcome: Result<HandlerResult, Failure>,
    names: &CallNames,
) -> Result<CallToolResult, CallError> {
    match outcome {
        Ok(Ok(result)) => refuse_too_deep(result).map_err(|e| tool_error(e, names)),
        Ok(Err(e)) => Err(tool_error(e, names)),
        Err(failure) => Err(failure_error(failure, names)),
    }
}

/// A tool result nesting deeper than [`MAX_DEPTH`] cannot be sent (serializing it would
/// overflow the stack, and no client could parse it): the call fails instead.
#[inline]
fn refuse_too_deep(mut result: CallToolResult) -> Result<CallToolResult, ToolError> {
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
    Err(ToolError::Failed(format!(
        "the tool's result nests arrays and objects deeper than {MAX_DEPTH} levels"
    )))
}

/// A tool's own error, as the caller sees it.
#[cold]
fn tool_error(error: ToolError, names: &CallNames) -> CallError {
    let tool = names.tool.to_string();
    match error {
        ToolError::InvalidArguments(message) => CallError::InvalidArguments { tool, message },
        ToolError::Failed(message) => CallError::ToolFailed { tool, message },
        ToolError::MissingClientCapability {
            capability,
            message,
        } => CallError::MissingClientCapability {
            tool,
            capability,
            message,
        },
        ToolError::UrlElicitationRequired {
            message,
            elicitations,
        } => CallError::UrlElicitationRequired {
            tool,
            message,
            elicitations,
        },
    }
}

/// A run's failure, as the caller sees it.
#[cold]
fn failure_error(failure: Failure, names: &CallNames) -> CallError {
    if let Failure::Panicked(message) = &failure {
        tracing::error!(tool = &*names.tool, server = &*names.server, %message, "tool panicked");
    }
    failure.into_error(names.tool.to_string())
}

impl RunErrors for CallError {
    const WHAT: &'static str = "tool";
    fn panicked(tool: String, message: String) -> Self {
        CallError::Panicked { tool, message }
    }
    fn timed_out(tool: String, limit: Duration) -> Self {
        CallError::Timeout { tool, limit }
    }
    fn no_timer(tool: String, limit: Duration) -> Self {
        CallError::NoTimer { tool, limit }
    }
    fn cancelled(tool: String) -> Self {
        CallError::Cancelled { tool }
    }
    fn failed(tool: String, message: String) -> Self {
        CallError::ToolFailed { tool, message }
    }
}
