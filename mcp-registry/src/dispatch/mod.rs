//! Answering MCP: one JSON-RPC message in, one reply out, for every transport.
//!
//! # The request pipeline
//!
//! Every request, whatever its kind and however it arrives (by name in-process,
//! [`Registry::handle_mcp_message`] / [`Registry::handle_mcp_text`], a [`ServerSession`],
//! stdio, Streamable HTTP, an agent session), takes one path:
//!
//! 1. **Decoded once** (`protocol::decode`): the envelope read from a `Value` or text, its era
//!    (legacy or 2026-07-28) decided once.
//! 2. **Admitted** by a session's lifecycle (a [`ServerSession`] only), which also supplies the
//!    connection's facts (negotiated version, log level) and its notification sink.
//! 3. **Routed** by the `(method, era)` table in `route.rs` to the one handler of its method,
//!    each in its own file: `tools.rs`, `prompts.rs`, `resources.rs`, `completion.rs`,
//!    `subscriptions.rs`, `handshake.rs`, `logging.rs`, `skills.rs`.
//! 4. For the kinds that run a host's function (`tools/call`, `prompts/get`,
//!    `resources/read`, `completion/complete`) and `skills/get` (a lookup a layer may
//!    refuse), the registry builds the request's **scope** once (ids, names, era and
//!    version, `_meta` read once into its typed form, log level, notification sink,
//!    cancellation, input channel, host state; the context a function sees is made from it
//!    only for a function or a layer that reads one: with no layers, a `typed` tool starts
//!    from its arguments alone),
//!    then runs the **layer stack** in this order: the host's
//!    layers ([`RegistryBuilder::layer`](crate::RegistryBuilder::layer), first added
//!    outermost), then approval ([`RegistryBuilder::approval`](crate::RegistryBuilder::approval)),
//!    then the item's function in the **guarded runner** (panics caught, the first poll made
//!    in place, then the time limit (the caller's, else the item's, else the registry's) and
//!    the caller's cancellation).
//! 5. **Answered**: the typed answer, with any session effect (a log level set, a
//!    subscription, a negotiated version) returned beside it for the session to apply, is
//!    written once, as a `Value` or as text (`reply.rs`).
//!
//! A new request kind is a handler and a row in the table; a cross-cutting concern is a
//! layer.

mod apps;
mod changes;
mod client_requests;
mod completion;
mod entry;
mod handshake;
mod logging;
pub(crate) mod outbox;
mod page;
mod prompts;
mod reply;
mod resources;
mod round;
mod route;
mod session;
mod skills;
mod subscriptions;
mod tasks;
mod tools;

pub use entry::{Message, MessageFuture, MessageRequest, TextFuture};
pub use outbox::{OUTBOX_CAPACITY, Outgoing};
pub use session::{
    Lifecycle, LifecycleError, MAX_SUBSCRIPTIONS, ServerSession, SessionMessage, SessionRequest,
    SessionSnapshot,
};

pub(crate) use reply::{
    empty_batch, error_value, parse_error, refuse_too_deep, reply_text, reply_value,
};
#[cfg(feature = "http")]
pub(crate) use session::Started;
pub(crate) use tools::{PendingCall, input_required};
use tools::{ToolCallParts, finish_call};

use std::borrow::Cow;
use std::sync::Arc;

use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::protocol::decode::{CallText, Decoded, IncomingRequest, Invalid};
use crate::protocol::meta::RequestMeta;
use crate::protocol::{
    CallToolResult, CompleteResult, DiscoverResult, Era, ErrorCode, ErrorObject, InitializeResult,
    InputRequiredResult, LoggingLevel, META_LOG_LEVEL, META_SERVER_INFO, ProtocolEra,
    ProtocolVersion, RequestId, ResultType,
};
use crate::registry::scope::RequestInfo;
use crate::registry::{CallOptions, Registry};
use crate::server::Server;
use crate::telemetry;
use crate::tool::BoxFuture;
use round::Retry;
use tools::ToolsPage;

/// Per-connection facts the stateless entry points do not have.
#[derive(Clone, Copy, Default)]
pub(crate) struct Connection {
    /// The version negotiated by `initialize`, if any.
    pub(crate) legacy_version: Option<ProtocolVersion>,
    /// Whether `notifications/tools/list_changed` will be sent.
    pub(crate) list_changed: bool,
    /// Whether `resources/subscribe` is kept (a legacy session) and
    /// `notifications/resources/updated` sent.
    pub(crate) subscriptions: bool,
    /// Whether `logging/setLevel` is kept (a legacy session).
    pub(crate) logging: bool,
    /// The level `logging/setLevel` set, if any.
    pub(crate) log_level: Option<LoggingLevel>,
    /// Whether the session's client declared MCP Apps (`io.modelcontextprotocol/ui`).
    pub(crate) apps: bool,
}

/// A request's answer, before it is written as a `Value` or as text.
pub(crate) enum Answer {
    Result(Outcome),
    Error(ErrorObject),
    /// The call was cancelled: no reply is sent.
    Suppressed,
}

/// A result, with what its revision adds to every result.
pub(crate) struct Outcome {
    pub(crate) body: Body,
    /// 2026-07-28: `resultType`.
    result_type: Option<ResultType>,
    /// 2026-07-28: `_meta` with the server's identity, written once per server (a result
    /// with a `_meta` of its own carries the identity there instead).
    meta: Option<ResultMeta>,
}

impl Outcome {
    /// A 2026-07-28 result of `result_type` whose `_meta` is the server's identity alone.
    fn modern(server: &Server, body: Body, result_type: ResultType) -> Outcome {
        Outcome {
            body,
            result_type: Some(result_type),
            meta: Some(ResultMeta::Server(server.info_meta().clone())),
        }
    }
}

/// A 2026-07-28 result's `_meta`.
#[derive(serde::Serialize)]
#[serde(untagged)]
pub(crate) enum ResultMeta {
    /// The server's identity alone, written once per server.
    Server(Arc<RawValue>),
    /// The server's identity and more.
    Own(Map<String, Value>),
}

/// The method-specific part of a result.
pub(crate) enum Body {
    /// `{}` (`ping`).
    Empty,
    Initialize(Box<InitializeResult>),
    Discover(Box<DiscoverResult>),
    Tools(Box<ToolsPage>),
    Call(CallToolResult),
    Prompts(prompts::PromptsBody),
    Resources(resources::ResourcesBody),
    Complete(CompleteResult),
    /// The Skills extension's `skills/list`, `skills/get`, `resources/directory/read`.
    Skills(skills::SkillsBody),
    /// 2026-07-28: the request needs input from the client first.
    InputRequired(Box<InputRequiredResult>),
    /// A task, or what a task method answers.
    Task(Box<tasks::TaskBody>),
}

fn invalid_params(message: impl Into<String>) -> ErrorObject {
    ErrorObject::new(ErrorCode::INVALID_PARAMS, message)
}

/// Declares extension `id` with its `settings` (SEP-2133: `capabilities.extensions`, by
/// identifier) beside the others the server declares.
pub(crate) fn declare_extension(other: &mut Map<String, Value>, id: &str, settings: Value) {
    if let Value::Object(extensions) = other
        .entry("extensions")
        .or_insert_with(|| Value::Object(Map::new()))
    {
        extensions.insert(id.to_owned(), settings);
    }
}

/// `params` read as `T`, or -32602 saying why not.
pub(crate) fn read_params<T: serde::de::DeserializeOwned>(
    method: &str,
    params: Map<String, Value>,
) -> Result<T, ErrorObject> {
    serde_json::from_value(Value::Object(params))
        .map_err(|e| invalid_params(format!("invalid {method} params: {e}")))
}

/// Answers requests for the servers of one registry.
#[derive(Clone, Copy)]
pub(crate) struct Dispatcher<'r> {
    registry: &'r Registry,
}

impl<'r> Dispatcher<'r> {
    pub(crate) fn new(registry: &'r Registry) -> Self {
        Dispatcher { registry }
    }

    /// Answers one message; `None` for a notification or a response (and a cancelled
    /// call). Batches are served by the caller, which knows whether its revision has them.
    pub(crate) async fn message(
        self,
        server: &str,
        message: Decoded<'_>,
        mut options: CallOptions,
        connection: Connection,
    ) -> Option<(Option<RequestId>, Answer)> {
        let (id, step) = self.start_message(server, message, &mut options, connection)?;
        Some((id, step.answer().await))
    }

    /// [`message`](Self::message) up to the tool call to await, if any.
    #[inline(always)]
    pub(crate) fn start_message(
        self,
        server: &str,
        message: Decoded<'_>,
        options: &mut CallOptions,
        connection: Connection,
    ) -> Option<(Option<RequestId>, Step)> {
        match message {
            Decoded::Request(request) => {
                let id = request.id.clone();
                Some((Some(id), self.start(server, request, options, connection)))
            }
            Decoded::Invalid(Invalid { id, error }) => {
                Some((id, Step::Answered(Answer::Error(error))))
            }
            Decoded::Notification(_) | Decoded::Silent | Decoded::Response(_) => None,
        }
    }

    /// Serves one decoded request up to the tool call to await, if any: everything but the
    /// call runs here, synchronously, so what is awaited stays small. The request has its
    /// span (`telemetry`), entered while it runs, its outcome recorded when it is answered.
    pub(crate) fn start(
        self,
        server_name: &str,
        request: IncomingRequest<'_>,
        options: &mut CallOptions,
        connection: Connection,
    ) -> Step {
        // A request to the union names the server it reaches once it is resolved.
        let observed = telemetry::Observed::start(
            (server_name != crate::registry::ALL_SERVERS).then_some(server_name),
            &request,
        );
        if observed.is_disabled() {
            return self.route(server_name, request, options, connection);
        }
        let step =
            (observed.span).in_scope(|| self.route(server_name, request, options, connection));
        traced(step, observed)
    }

    /// [`start`](Self::start) without the span.
    #[inline(always)]
    fn route(
        self,
        server_name: &str,
        request: IncomingRequest<'_>,
        options: &mut CallOptions,
        connection: Connection,
    ) -> Step {
        let IncomingRequest {
            id,
            method,
            params,
            call_text,
            meta,
            era,
        } = request;
        let era = match era {
            Ok(era) => era,
            Err(e) => return Step::Answered(Answer::Error(*e)),
        };
        let snapshot = self.registry.snapshot();
        let server = match snapshot.enabled_server(server_name, self.registry.union_identity()) {
            Ok(server) => server,
            Err(e) => {
                return Step::Answered(Answer::Error(ErrorObject::new(
                    ErrorCode::METHOD_NOT_FOUND,
                    e.to_string(),
                )));
            }
        };
        let log_level = match request_log_level(era, meta.as_deref(), connection) {
            Ok(level) => level,
            Err(e) => return Step::Answered(Answer::Error(e)),
        };
        let version = era.version().or(connection.legacy_version);
        let routed = Routed {
            registry: self.registry,
            server,
            id,
            method,
            params,
            call_text,
            meta,
            era,
            version,
            log_level,
            connection,
        };
        route::route(routed, options)
    }
}

/// `step` with its span (and timing) kept until it is answered, and its outcome recorded.
#[cold]
fn traced(step: Step, observed: telemetry::Observed) -> Step {
    use tracing::Instrument as _;
    match step {
        Step::Answered(answer) => {
            record_outcome(&observed, &answer);
            Step::Answered(answer)
        }
        Step::Changed(answer, effect) => {
            record_outcome(&observed, &answer);
            Step::Changed(answer, effect)
        }
        Step::Calling(mut call) => {
            call.span = Some(Box::new(observed));
            Step::Calling(call)
        }
        Step::Waiting(answer) => Step::Waiting(Box::pin(async move {
            let answer = answer.instrument(observed.span.clone()).await;
            record_outcome(&observed, &answer);
            answer
        })),
    }
}

/// Records how the request ended, a JSON-RPC error or a tool's error result, on its span
/// and (feature `otel`) its duration.
pub(crate) fn record_outcome(observed: &telemetry::Observed, answer: &Answer) {
    let span = &observed.span;
    match answer {
        Answer::Error(error) => telemetry::record_error(span, error),
        Answer::Result(Outcome {
            body: Body::Call(result),
            ..
        }) if result.is_error == Some(true) => telemetry::record_tool_error(span),
        _ => {}
    }
    #[cfg(feature = "otel")]
    observed.operation.server(match answer {
        Answer::Error(error) => telemetry::metrics::Ending::Code(error.code.0.into()),
        Answer::Result(Outcome {
            body: Body::Call(result),
            ..
        }) if result.is_error == Some(true) => telemetry::metrics::Ending::ToolError,
        Answer::Result(_) => telemetry::metrics::Ending::Success,
        Answer::Suppressed => telemetry::metrics::Ending::Other("cancelled"),
    });
}

/// The level log messages are sent at: per request in 2026-07-28 (`_meta`), per session
/// before. `None`: the message says nothing, and the caller's options decide; 2026-07-28
/// says it in every request, so there its absence means none.
fn request_log_level(
    era: Era,
    meta: Option<&RequestMeta>,
    connection: Connection,
) -> Result<Option<Option<LoggingLevel>>, ErrorObject> {
    match era {
        Era::Legacy(_) => Ok(connection.log_level.map(Some)),
        Era::Modern => match meta.and_then(|m| m.get(META_LOG_LEVEL)) {
            None => Ok(Some(None)),
            Some(level) => match level.as_str().and_then(LoggingLevel::parse) {
                Some(level) => Ok(Some(Some(level))),
                None => Err(invalid_params(format!(
                    "`_meta.{META_LOG_LEVEL}` must be a log level (debug, info, notice, warning, error, critical, alert, emergency), got {level}"
                ))),
            },
        },
    }
}

/// A request as its method's handler gets it: what it asks, of which server, in which
/// protocol era, and what its connection knows.
pub(crate) struct Routed<'a> {
    pub(crate) registry: &'a Registry,
    /// Borrowed from the registry's snapshot, held while the request is routed: a handler
    /// clones it only when what it returns outlives that.
    pub(crate) server: &'a Server,
    pub(crate) id: RequestId,
    pub(crate) method: Cow<'a, str>,
    pub(crate) params: Map<String, Value>,
    /// A `tools/call` read in place from text: its name and arguments' text.
    pub(crate) call_text: Option<CallText<'a>>,
    pub(crate) meta: Option<Box<RequestMeta>>,
    pub(crate) era: Era,
    pub(crate) version: Option<ProtocolVersion>,
    /// The level the message (or its session) asked for; `None`: the options' level.
    pub(crate) log_level: Option<Option<LoggingLevel>>,
    pub(crate) connection: Connection,
}

/// A routed request taken apart for a handler that runs a function: what stays with the
/// handler, beside the [`RequestInfo`] the function's scope is built from.
pub(crate) struct Parts<'a> {
    pub(crate) registry: &'a Registry,
    pub(crate) server: &'a Server,
    pub(crate) params: Map<String, Value>,
    pub(crate) call_text: Option<CallText<'a>>,
    pub(crate) era: Era,
    pub(crate) version: Option<ProtocolVersion>,
}

impl<'a> Routed<'a> {
    /// The request as its function's handler takes it.
    #[inline(always)]
    pub(crate) fn split(self) -> (Parts<'a>, RequestInfo) {
        let info = RequestInfo {
            id: Some(self.id),
            protocol_version: self.version,
            meta: self.meta,
            log_level: self.log_level,
            ..RequestInfo::default()
        };
        let parts = Parts {
            registry: self.registry,
            server: self.server,
            params: self.params,
            call_text: self.call_text,
            era: self.era,
            version: self.version,
        };
        (parts, info)
    }
}

impl Routed<'_> {
    pub(crate) fn dispatcher(&self) -> Dispatcher<'_> {
        Dispatcher::new(self.registry)
    }

    /// The answer to this request: `body` as its revision writes results, or the error.
    pub(crate) fn answer(&self, body: Result<Body, ErrorObject>) -> Step {
        Step::Answered(match body {
            Ok(body) => Answer::Result(outcome(self.server, self.version, body)),
            Err(e) => Answer::Error(e),
        })
    }

    /// Refuses a method this connection does not serve (what the table routes, the
    /// connection may still lack: a stateless caller keeps no subscriptions or log level).
    pub(crate) fn not_found(&self) -> Step {
        Step::Answered(Answer::Error(method_not_found(&self.method, self.era)))
    }
}

/// A state change a request makes in the session that sent it, returned beside its answer
/// for the session to apply (a stateless caller ignores it).
pub(crate) enum Effect {
    /// `logging/setLevel`: the session's log level.
    LogLevel(LoggingLevel),
    /// `resources/subscribe` (`true`) or `resources/unsubscribe` of a URI.
    Subscription { uri: String, subscribe: bool },
    /// `initialize` answered with this version.
    Initialized(ProtocolVersion),
}

/// What starting a request gives: its answer, or the tool call to await for it.
pub(crate) enum Step {
    Answered(Answer),
    /// Answered, with a change to the session's state.
    Changed(Answer, Box<Effect>),
    Calling(PendingCall),
    /// Other work that waits (a prompt's function), answering when done.
    Waiting(BoxFuture<'static, Answer>),
}

impl Step {
    /// The request's answer, once its call (if any) has run. (Hot paths match on the step
    /// themselves and await the call directly: one future less around it.)
    pub(crate) async fn answer(self) -> Answer {
        match self {
            Step::Answered(answer) | Step::Changed(answer, _) => answer,
            Step::Calling(mut call) => {
                let result = std::future::poll_fn(|cx| call.poll(cx)).await;
                call.finish(result)
            }
            Step::Waiting(answer) => answer.await,
        }
    }
}

/// Whether a result of `version` names its server (2026-07-28's `_meta`); a legacy one
/// does not.
#[inline]
pub(crate) fn answer_needs_server(version: Option<ProtocolVersion>) -> bool {
    version.is_some_and(|v| v.era() != ProtocolEra::Legacy)
}

/// `body` as a legacy `version` writes it: a revision before structured content drops it.
#[inline]
fn legacy_outcome(version: Option<ProtocolVersion>, mut body: Body) -> Outcome {
    if let Body::Call(result) = &mut body
        && version.is_some_and(|v| !v.has_structured_content())
    {
        result.structured_content = None;
    }
    Outcome {
        body,
        result_type: None,
        meta: None,
    }
}

#[inline]
fn outcome(server: &Server, version: Option<ProtocolVersion>, mut body: Body) -> Outcome {
    if !answer_needs_server(version) {
        return legacy_outcome(version, body);
    }
    // A result with a `_meta` of its own carries the server's identity there.
    let own = match &mut body {
        Body::Call(result) => result.meta.as_mut(),
        Body::Prompts(prompts::PromptsBody::Get(result)) => result.meta.as_mut(),
        Body::Resources(resources::ResourcesBody::Read(result)) => result.meta.as_mut(),
        _ => None,
    };
    match own {
        Some(own) => own.insert(META_SERVER_INFO.to_owned(), server.info().clone()),
        None => return Outcome::modern(server, body, ResultType::Complete),
    };
    Outcome {
        body,
        result_type: Some(ResultType::Complete),
        meta: None,
    }
}

fn method_not_found(method: &str, era: Era) -> ErrorObject {
    ErrorObject::new(
        ErrorCode::METHOD_NOT_FOUND,
        if era.is_modern() {
            format!(
                "method not found: {method} (protocol version {})",
                ProtocolVersion::MODERN
            )
        } else {
            format!("method not found: {method}")
        },
    )
}
