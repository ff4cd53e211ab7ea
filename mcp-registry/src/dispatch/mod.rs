//! Answering MCP in-process: one JSON-RPC message in, one reply out.
//!
//! A dispatcher serves a [`Registry`]'s servers through a narrow part of its API (find an
//! enabled server, start a call, read the listing settings). The `Registry` methods defined
//! here (`handle_mcp_message`, `handle_mcp_text`) are its public entry points; sessions and
//! transports use the dispatcher directly.

mod changes;
mod completion;
mod outbox;
mod page;
mod prompts;
mod resources;
mod session;
mod subscriptions;

pub use outbox::{OUTBOX_CAPACITY, Outgoing};
pub use session::{Lifecycle, LifecycleError, MAX_SUBSCRIPTIONS, ServerSession};

use serde::{Deserialize as _, Serialize, Serializer};
use serde_json::{Map, Value};

use std::borrow::Cow;
use std::sync::Arc;
use std::task::{Context, Poll};

use crate::protocol::decode::{
    CallText, Incoming, IncomingRequest, Invalid, TextMessage, decode, decode_text, kind, raw_kind,
    too_deep,
};
use crate::protocol::{
    CacheHints, CacheScope, CallToolResult, ClientCapabilities, DiscoverResult, ElicitParams, Era,
    ErrorCode, ErrorObject, ErrorResponse, Implementation, InitializeParams, InitializeResult,
    InputRequiredResult, LoggingLevel, META_CLIENT_CAPABILITIES, META_LOG_LEVEL, META_SERVER_INFO,
    ProtocolEra, ProtocolVersion, RequestId, ResultResponse, ResultType, ServerCapabilities,
    ToolsCapability, UrlElicitationRequiredData, exceeds_max_depth, method,
};
use crate::registry::call::{CallFuture, ListingFilter, RequestInfo};
use crate::registry::request_state::arguments_digest;
use crate::registry::{CallError, CallOptions, Registry, Target};
use crate::server::Server;
use crate::tool::input::Declared;
use crate::tool::round::{BoundArguments, Round, RoundSeal};
use crate::tool::{Arguments, BoxFuture, InputHandler};
use page::{Listing, Window};

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
    /// 2026-07-28: `_meta` with the server's identity (a call's result carries its own).
    meta: Option<Map<String, Value>>,
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
    Complete(crate::protocol::CompleteResult),
    /// `logging/setLevel` accepted: `{}` on the wire; the session that asked records it.
    LogLevel(LoggingLevel),
    /// 2026-07-28: the request needs input from the client first.
    InputRequired(Box<InputRequiredResult>),
}

/// A page of a server's tool list, in the form its revision describes tools.
pub(crate) struct ToolsPage {
    server: Server,
    version: Option<ProtocolVersion>,
    window: Window,
    /// With a listing filter ([`CallOptions`]'s): the page's entries, picked and cut.
    picked: Option<Vec<Value>>,
}

fn invalid_params(message: impl Into<String>) -> ErrorObject {
    ErrorObject::new(ErrorCode::INVALID_PARAMS, message)
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
        message: Incoming<'_>,
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
        message: Incoming<'_>,
        options: &mut CallOptions,
        connection: Connection,
    ) -> Option<(Option<RequestId>, Step)> {
        match message {
            Incoming::Request(request) => {
                let id = request.id.clone();
                Some((Some(id), self.start(server, request, options, connection)))
            }
            Incoming::Invalid(Invalid { id, error }) => {
                Some((id, Step::Answered(Answer::Error(error))))
            }
            Incoming::Notification(_) | Incoming::Silent | Incoming::Response(_) => None,
        }
    }

    /// Answers one decoded request.
    pub(crate) async fn request(
        self,
        server_name: &str,
        request: IncomingRequest<'_>,
        mut options: CallOptions,
        connection: Connection,
    ) -> Answer {
        self.start(server_name, request, &mut options, connection)
            .answer()
            .await
    }

    /// Serves one decoded request up to the tool call to await, if any: everything but the
    /// call runs here, synchronously, so what is awaited stays small.
    pub(crate) fn start(
        self,
        server_name: &str,
        request: IncomingRequest<'_>,
        options: &mut CallOptions,
        connection: Connection,
    ) -> Step {
        let IncomingRequest {
            id,
            method,
            mut params,
            call_text,
            meta,
            era,
        } = request;
        let server = match self.registry.enabled_server(server_name) {
            Ok(server) => server,
            Err(e) => {
                return Step::Answered(Answer::Error(ErrorObject::new(
                    ErrorCode::METHOD_NOT_FOUND,
                    e.to_string(),
                )));
            }
        };
        let version = match era {
            Era::Modern => Some(ProtocolVersion::MODERN),
            Era::Legacy(named) => named.or(connection.legacy_version),
        };
        // The level log messages are sent at: per request in 2026-07-28, per session before.
        let log_level = match era {
            Era::Modern => match meta.as_ref().and_then(|m| m.get(META_LOG_LEVEL)) {
                None => None,
                Some(level) => match level.as_str().and_then(LoggingLevel::parse) {
                    Some(level) => Some(level),
                    None => {
                        return Step::Answered(Answer::Error(invalid_params(format!(
                            "`_meta.{META_LOG_LEVEL}` must be a log level (debug, info, notice, warning, error, critical, alert, emergency), got {level}"
                        ))));
                    }
                },
            },
            Era::Legacy(_) => connection.log_level,
        };
        let body = match (&*method, era) {
            (method::INITIALIZE, Era::Legacy(_)) => Ok(Body::Initialize(Box::new(initialize(
                &server, params, connection,
            )))),
            (method::PING, Era::Legacy(_)) => Ok(Body::Empty),
            (method::DISCOVER, Era::Modern) => {
                Ok(Body::Discover(Box::new(self.discover(&server, connection))))
            }
            (method::TOOLS_LIST, _) => self
                .list_tools(&server, version, &params, options.listing_filter.as_ref())
                .map(|page| Body::Tools(Box::new(page))),
            (method::PROMPTS_LIST, _) => self
                .list_prompts(&server, version, params)
                .map(Body::Prompts),
            (method::PROMPTS_GET, _) => {
                let retry = match Retry::prepare(era, options, &mut params, meta.as_ref()) {
                    Ok(retry) => retry,
                    Err(e) => return Step::Answered(Answer::Error(e)),
                };
                let request = prompts::PromptRequest {
                    id,
                    meta,
                    version,
                    options: std::mem::take(options),
                    retry,
                };
                match self.start_get_prompt(&server, params, request) {
                    Ok(get) => {
                        return Step::Waiting(Box::pin(async move {
                            get.answer(&server, version).await
                        }));
                    }
                    Err(e) => Err(e),
                }
            }
            (method::RESOURCES_LIST | method::RESOURCES_TEMPLATES_LIST, _) => self
                .list_resources(&server, version, &method, params)
                .map(Body::Resources),
            (method::RESOURCES_READ, _) => {
                let cache = self.read_cache_hints(&server);
                let limit = self.registry.config().default_timeout;
                // What a resource function that takes a `ToolContext` gets: this request's
                // id, `_meta`, cancellation, log level and host state, as a tool does.
                let uri: Arc<str> = params
                    .get("uri")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .into();
                let ctx = crate::tool::ToolContext::from_scope(crate::tool::CallScope {
                    names: Arc::new(crate::tool::CallNames {
                        tool: uri,
                        server: server.shared_name().clone(),
                    }),
                    request_id: Some(id),
                    meta,
                    protocol_version: version,
                    notifications: options.notifications.take(),
                    cancellation: options.cancellation.take(),
                    registry_extensions: self.registry.config().extensions.clone(),
                    call_extensions: std::mem::take(&mut options.extensions),
                    log_level,
                    input: options.input.take(),
                    round: None,
                });
                return Step::Waiting(Box::pin(async move {
                    match resources::read(&server, version, params, cache, limit, ctx).await {
                        Ok(body) => {
                            Answer::Result(outcome(&server, version, Body::Resources(body)))
                        }
                        Err(e) => Answer::Error(e),
                    }
                }));
            }
            (method::RESOURCES_SUBSCRIBE | method::RESOURCES_UNSUBSCRIBE, Era::Legacy(_))
                if connection.subscriptions =>
            {
                resources::subscription(&server, version, &method, params).map(Body::Resources)
            }
            (method::COMPLETION_COMPLETE, _) if server.has_completions() => {
                match completion::start(&server, params) {
                    Ok(completing) => {
                        return Step::Waiting(Box::pin(async move {
                            match completing.await {
                                Ok(result) => Answer::Result(outcome(
                                    &server,
                                    version,
                                    Body::Complete(result),
                                )),
                                Err(e) => Answer::Error(e),
                            }
                        }));
                    }
                    Err(e) => Err(e),
                }
            }
            (method::SUBSCRIPTIONS_LISTEN, Era::Modern) => {
                match subscriptions::listen(self.registry, server.clone(), id, params, options) {
                    Ok(stream) => return Step::Waiting(stream),
                    Err(e) => Err(e),
                }
            }
            (method::LOGGING_SET_LEVEL, Era::Legacy(_)) if connection.logging => {
                read_params(method::LOGGING_SET_LEVEL, params)
                    .map(|p: crate::protocol::SetLevelParams| Body::LogLevel(p.level))
            }
            (method::TOOLS_CALL, _) => {
                let retry = match Retry::prepare(era, options, &mut params, meta.as_ref()) {
                    Ok(retry) => retry,
                    Err(e) => return Step::Answered(Answer::Error(e)),
                };
                if let Some(meta) = meta {
                    options.meta = Some(meta);
                }
                if log_level.is_some() || era.is_modern() {
                    options.log_level = log_level;
                }
                let request = RequestInfo {
                    id: Some(id),
                    protocol_version: version,
                };
                let call = match call_text {
                    Some(text) => call_from_text(text),
                    None => call_from_params(params),
                };
                match call.and_then(|call| self.call_tool(&server, call, options, request, retry)) {
                    Ok((call, round)) => {
                        return Step::Calling(PendingCall {
                            call,
                            server,
                            version,
                            round,
                        });
                    }
                    Err(e) => Err(e),
                }
            }
            (other, era) => Err(method_not_found(other, era)),
        };
        Step::Answered(match body {
            Ok(body) => Answer::Result(outcome(&server, version, body)),
            Err(e) => Answer::Error(e),
        })
    }

    /// The caching hints of `server`'s lists and discovery: its own, else the registry's TTL,
    /// `public`.
    fn cache_hints(&self, server: &Server) -> CacheHints {
        server
            .list_cache()
            .unwrap_or_else(|| self.registry_cache_hints())
    }

    fn registry_cache_hints(&self) -> CacheHints {
        CacheHints {
            ttl_ms: u64::try_from(self.registry.config().list_ttl.as_millis()).unwrap_or(u64::MAX),
            cache_scope: CacheScope::Public,
        }
    }

    fn discover(&self, server: &Server, connection: Connection) -> DiscoverResult {
        DiscoverResult {
            supported_versions: ProtocolVersion::ALL.into_iter().rev().collect(),
            // 2026-07-28 subscribes through `subscriptions/listen` (list changes, resource
            // updates); its log level travels in each request.
            capabilities: capabilities(
                server,
                Connection {
                    list_changed: true,
                    subscriptions: true,
                    logging: true,
                    ..connection
                },
            ),
            instructions: server.instructions().map(str::to_owned),
            cache: self.cache_hints(server),
        }
    }

    /// A page of `server`'s tools. With a listing filter, the filter picks first and the
    /// page is cut from what it picked, so every page but the last is full.
    fn list_tools(
        &self,
        server: &Server,
        version: Option<ProtocolVersion>,
        params: &Map<String, Value>,
        filter: Option<&ListingFilter>,
    ) -> Result<ToolsPage, ErrorObject> {
        let entries = server.listing(version).entries();
        let picked: Option<Vec<&Value>> = filter.map(|keep| {
            entries
                .iter()
                .filter(|t| {
                    t["name"]
                        .as_str()
                        .is_some_and(|name| keep.shows(server.name(), name))
                })
                .collect()
        });
        let total = picked.as_ref().map_or(entries.len(), Vec::len);
        let cursor = match params.get("cursor") {
            None | Some(Value::Null) => None,
            Some(Value::String(c)) => Some(c.as_str()),
            Some(other) => {
                return Err(invalid_params(format!(
                    "`cursor` must be a string, got {}",
                    kind(other)
                )));
            }
        };
        let window = self.window(
            server,
            Listing::Tools,
            method::TOOLS_LIST,
            cursor,
            total,
            version,
        )?;
        let picked = picked.map(|picked| {
            picked[window.start..window.end]
                .iter()
                .map(|&t| t.clone())
                .collect()
        });
        Ok(ToolsPage {
            server: server.clone(),
            version,
            window,
            picked,
        })
    }

    /// Starts a `tools/call`; with `retry`, in a round of a multi round-trip request.
    fn call_tool(
        &self,
        server: &Server,
        call: ToolCall<'_>,
        options: &mut CallOptions,
        request: RequestInfo,
        retry: Option<Retry>,
    ) -> Result<(CallFuture, Option<Arc<Round>>), ErrorObject> {
        let Some((tool, names)) = server.tool_entry(&call.name) else {
            return Err(invalid_params(format!("Unknown tool: {}", call.name)));
        };
        if let Some(retry) = retry {
            let arguments = match call.arguments.as_map() {
                Some(map) => BoundArguments::Digest(arguments_digest(map)),
                None => BoundArguments::Text(call.arguments.as_text().unwrap_or("{}").to_owned()),
            };
            let seal = RoundSeal {
                key: self.registry.config().request_state_key().clone(),
                method: method::TOOLS_CALL,
                server: names.server.clone(),
                name: names.tool.clone(),
                arguments,
            };
            options.round = Some(Arc::new(retry.round(seal, self.registry)?));
        }
        let round = options.round.clone();
        let call = self
            .registry
            .invoke(Target { tool, names }, call.arguments, options, request);
        Ok((call, round))
    }
}

/// What a 2026-07-28 request brings to a round of a multi round-trip request: the answers
/// of a retry, its state, and the capabilities its client declares.
pub(crate) struct Retry {
    responses: Option<Map<String, Value>>,
    state: Option<String>,
    capabilities: ClientCapabilities,
}

impl Retry {
    /// How a request that may ask the client for input (`tools/call`, `prompts/get`) gets its
    /// answers. 2026-07-28: a host's input handler answers only what the request's `_meta`
    /// declares; with none, asks end the request with `input_required` and this is the
    /// round the client's retry brings. Legacy: `None`, the session's handler answers.
    #[inline]
    fn prepare(
        era: Era,
        options: &mut CallOptions,
        params: &mut Map<String, Value>,
        meta: Option<&Map<String, Value>>,
    ) -> Result<Option<Self>, ErrorObject> {
        if !era.is_modern() {
            return Ok(None);
        }
        if let Some(handler) = options.input.take() {
            options.input = Some(declared_input(handler, meta));
            return Ok(None);
        }
        Self::take(params, meta).map(Some)
    }

    /// Takes `inputResponses` and `requestState` out of `params` (-32602 when they are not
    /// an object and a string).
    pub(crate) fn take(
        params: &mut Map<String, Value>,
        meta: Option<&Map<String, Value>>,
    ) -> Result<Self, ErrorObject> {
        let responses = match params.remove("inputResponses") {
            None => None,
            Some(Value::Object(responses)) => Some(responses),
            Some(other) => {
                return Err(invalid_params(format!(
                    "`inputResponses` must be an object of answers by input key, got {}",
                    kind(&other)
                )));
            }
        };
        let state = match params.remove("requestState") {
            None => None,
            Some(Value::String(state)) => Some(state),
            Some(other) => {
                return Err(invalid_params(format!(
                    "`requestState` must be the string the server returned, got {}",
                    kind(&other)
                )));
            }
        };
        Ok(Retry {
            responses,
            state,
            capabilities: declared_capabilities(meta),
        })
    }

    /// The round: the state's answers (refused when the state fails verification), then the
    /// responses for other keys.
    pub(crate) fn round(self, seal: RoundSeal, registry: &Registry) -> Result<Round, ErrorObject> {
        let mut answers = match &self.state {
            Some(state) => seal.open(state, registry.config().request_state_ttl)?,
            None => Map::new(),
        };
        for (key, answer) in self.responses.into_iter().flatten() {
            answers.entry(key).or_insert(answer);
        }
        Ok(Round::new(seal, self.capabilities, answers))
    }
}

/// The capabilities a 2026-07-28 request's `_meta` declares (none when it declares none).
fn declared_capabilities(meta: Option<&Map<String, Value>>) -> ClientCapabilities {
    meta.and_then(|m| m.get(META_CLIENT_CAPABILITIES))
        .and_then(|c| ClientCapabilities::deserialize(c).ok())
        .unwrap_or_default()
}

/// A 2026-07-28 call's input handler, limited to the capabilities its request's `_meta`
/// declares (none when it declares none).
#[cold]
fn declared_input(
    handler: Arc<dyn InputHandler>,
    meta: Option<&Map<String, Value>>,
) -> Arc<dyn InputHandler> {
    Arc::new(Declared {
        handler,
        capabilities: declared_capabilities(meta),
    })
}

/// What a `tools/call` names: the tool and its arguments.
struct ToolCall<'a> {
    name: Cow<'a, str>,
    arguments: Arguments<'a>,
}

/// A `tools/call`'s params as parsed members.
fn call_from_params(params: Map<String, Value>) -> Result<ToolCall<'static>, ErrorObject> {
    // One pass over the members (cheaper than looking each up and removing it).
    let (mut name, mut arguments) = (None, None);
    for (key, value) in params {
        match key.as_str() {
            "name" => name = Some(value),
            "arguments" => arguments = Some(value),
            _ => {}
        }
    }
    let name = match name {
        Some(Value::String(n)) => n,
        Some(other) => return Err(name_not_a_string(kind(&other))),
        None => return Err(name_missing()),
    };
    let arguments = match arguments {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(a)) => a,
        Some(other) => return Err(arguments_not_an_object(&name, kind(&other))),
    };
    Ok(ToolCall {
        name: Cow::Owned(name),
        arguments: arguments.into(),
    })
}

/// A `tools/call`'s params as text: the arguments stay text for the tool to read.
fn call_from_text(call: CallText<'_>) -> Result<ToolCall<'_>, ErrorObject> {
    let Some(name) = call.name else {
        return Err(name_missing());
    };
    let arguments = match call.arguments {
        None => Arguments::from(Map::new()),
        Some(raw) if raw.get() == "null" => Arguments::from(Map::new()),
        Some(raw) if raw.get().starts_with('{') => Arguments::text(raw.get()),
        Some(raw) => return Err(arguments_not_an_object(&name, raw_kind(raw))),
    };
    Ok(ToolCall { name, arguments })
}

fn name_missing() -> ErrorObject {
    invalid_params("tools/call requires `params.name`, the tool to call")
}

fn name_not_a_string(kind: &str) -> ErrorObject {
    invalid_params(format!("`params.name` must be a string, got {kind}"))
}

fn arguments_not_an_object(tool: &str, kind: &str) -> ErrorObject {
    invalid_params(format!(
        "`params.arguments` of tool {tool:?} must be an object, got {kind}"
    ))
}

/// What starting a request gives: its answer, or the tool call to await for it.
pub(crate) enum Step {
    Answered(Answer),
    Calling(PendingCall),
    /// Other work that waits (a prompt's function), answering when done.
    Waiting(BoxFuture<'static, Answer>),
}

impl Step {
    /// The request's answer, once its call (if any) has run. (Hot paths match on the step
    /// themselves and await the call directly: one future less around it.)
    pub(crate) async fn answer(self) -> Answer {
        match self {
            Step::Answered(answer) => answer,
            Step::Calling(mut call) => {
                let result = (&mut call.call).await;
                call.finish(result)
            }
            Step::Waiting(answer) => answer.await,
        }
    }
}

/// A `tools/call` under way, with what its answer needs.
pub(crate) struct PendingCall {
    pub(crate) call: CallFuture,
    server: Server,
    version: Option<ProtocolVersion>,
    /// 2026-07-28: the call's asks, when they end it with `input_required`.
    round: Option<Arc<Round>>,
}

impl PendingCall {
    /// The answer to a call that ended with `result`.
    #[inline]
    pub(crate) fn finish(&self, result: Result<CallToolResult, CallError>) -> Answer {
        if let Some(answer) = self
            .round
            .as_deref()
            .and_then(|r| input_required(&self.server, r))
        {
            return answer;
        }
        let result = match result {
            Ok(result) => result,
            // A cancelled call gets no reply.
            Err(CallError::Cancelled { .. }) => return Answer::Suppressed,
            // 2026-07-28 refuses the request itself.
            Err(CallError::MissingClientCapability {
                capability,
                message,
                ..
            }) if self.version == Some(ProtocolVersion::MODERN) => {
                return Answer::Error(missing_capability(capability, message));
            }
            // The request itself is refused until the user has been elsewhere.
            Err(CallError::UrlElicitationRequired {
                message,
                elicitations,
                ..
            }) => return Answer::Error(url_elicitation_required(message, elicitations)),
            Err(e) => e.into_call_tool_result(),
        };
        Answer::Result(outcome(&self.server, self.version, Body::Call(result)))
    }
}

/// The answer to a request whose run stopped for input: `input_required`, or the error
/// refusing an answer it was given. `None` when the run was not stopped.
pub(crate) fn input_required(server: &Server, round: &Round) -> Option<Answer> {
    Some(match round.input_required()? {
        Ok(result) => Answer::Result(Outcome {
            body: Body::InputRequired(Box::new(result)),
            result_type: Some(ResultType::InputRequired),
            meta: Some(Map::from_iter([(
                META_SERVER_INFO.to_owned(),
                server.info().clone(),
            )])),
        }),
        Err(error) => Answer::Error(error),
    })
}

/// -32042 URLElicitationRequired, listing the elicitations in `data`.
#[cold]
fn url_elicitation_required(message: String, elicitations: Vec<ElicitParams>) -> ErrorObject {
    let mut error = ErrorObject::new(ErrorCode::URL_ELICITATION_REQUIRED, message);
    error.data = serde_json::to_value(UrlElicitationRequiredData { elicitations }).ok();
    error
}

/// -32021 MissingRequiredClientCapability, naming the capability in `data`.
#[cold]
fn missing_capability(capability: &str, message: String) -> ErrorObject {
    let mut required = Map::new();
    required.insert(capability.to_owned(), Value::Object(Map::new()));
    let mut data = Map::new();
    data.insert("requiredCapabilities".to_owned(), Value::Object(required));
    let mut error = ErrorObject::new(ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY, message);
    error.data = Some(Value::Object(data));
    error
}

#[inline]
fn outcome(server: &Server, version: Option<ProtocolVersion>, mut body: Body) -> Outcome {
    if let Body::Call(result) = &mut body
        && version.is_some_and(|v| !v.has_structured_content())
    {
        result.structured_content = None;
    }
    if version.is_none_or(|v| v.era() == ProtocolEra::Legacy) {
        return Outcome {
            body,
            result_type: None,
            meta: None,
        };
    }
    let info = server.info().clone();
    let mut meta = None;
    match &mut body {
        Body::Call(result) => {
            result
                .meta
                .get_or_insert_with(Map::new)
                .insert(META_SERVER_INFO.to_owned(), info);
        }
        // A result with a `_meta` of its own carries the server's identity there.
        Body::Prompts(prompts::PromptsBody::Get(result)) => {
            result
                .meta
                .get_or_insert_with(Map::new)
                .insert(META_SERVER_INFO.to_owned(), info);
        }
        Body::Resources(resources::ResourcesBody::Read(result)) => {
            result
                .meta
                .get_or_insert_with(Map::new)
                .insert(META_SERVER_INFO.to_owned(), info);
        }
        _ => meta = Some(Map::from_iter([(META_SERVER_INFO.to_owned(), info)])),
    }
    Outcome {
        body,
        result_type: Some(ResultType::Complete),
        meta,
    }
}

/// A message taken as far as it goes without waiting, its reply written as `R` (a `Value`
/// or text).
enum Started<R> {
    /// The reply, if any.
    Done(Option<R>),
    /// A batch, to serve element by element (under the caller's options).
    Batch(Vec<Value>),
    /// A tool call to await, then to answer under this id.
    Calling(Option<RequestId>, PendingCall),
    /// Other work to await, then to answer under this id.
    Waiting(Option<RequestId>, BoxFuture<'static, Answer>),
}

impl<R> Started<R> {
    fn new(
        started: Option<(Option<RequestId>, Step)>,
        write: fn(Option<RequestId>, Answer) -> Option<R>,
    ) -> Self {
        match started {
            None => Started::Done(None),
            Some((id, Step::Answered(answer))) => Started::Done(write(id, answer)),
            Some((id, Step::Calling(call))) => Started::Calling(id, call),
            Some((id, Step::Waiting(answer))) => Started::Waiting(id, answer),
        }
    }
}

fn capabilities(server: &Server, connection: Connection) -> ServerCapabilities {
    ServerCapabilities {
        tools: Some(ToolsCapability {
            list_changed: Some(connection.list_changed),
        }),
        prompts: prompts::capability(server, connection),
        resources: resources::capability(server, connection),
        other: other_capabilities(server, connection),
    }
}

/// The capabilities without a typed field: `completions` for a server with something to
/// complete, `logging` where a client can ask for log messages.
fn other_capabilities(server: &Server, connection: Connection) -> Map<String, Value> {
    let mut other = Map::new();
    if connection.logging {
        other.insert("logging".to_owned(), Value::Object(Map::new()));
    }
    if server.has_completions() {
        other.insert("completions".to_owned(), Value::Object(Map::new()));
    }
    other
}

/// The legacy handshake: the version asked for when this crate speaks it (as a legacy
/// version), else the newest legacy one.
fn initialize(
    server: &Server,
    params: Map<String, Value>,
    connection: Connection,
) -> InitializeResult {
    // Lenient: a client's malformed params still get the server's answer.
    let params: InitializeParams =
        serde_json::from_value(Value::Object(params)).unwrap_or_default();
    let version = params
        .protocol_version
        .as_deref()
        .and_then(ProtocolVersion::parse)
        .filter(|v| v.era() == ProtocolEra::Legacy)
        .unwrap_or(ProtocolVersion::LATEST_LEGACY);
    InitializeResult {
        protocol_version: version,
        capabilities: capabilities(server, connection),
        // `title` only for revisions that have it.
        server_info: Implementation {
            name: server.name().to_owned(),
            version: server.version().to_owned(),
            title: server
                .title()
                .filter(|_| version.has_titles())
                .map(str::to_owned),
        },
        instructions: server.instructions().map(str::to_owned),
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

/// An answer serialized for the wire: `raw_listing` splices a whole tool list's text
/// serialized once (text replies) instead of writing its values again.
struct Written<'a> {
    outcome: &'a Outcome,
    raw_listing: bool,
}

impl Serialize for Written<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        struct Empty {}
        let outcome = self.outcome;
        match &outcome.body {
            Body::Empty | Body::LogLevel(_) => write(Empty {}, outcome, serializer),
            Body::Initialize(r) => write(r, outcome, serializer),
            Body::Discover(r) => write(r, outcome, serializer),
            Body::Call(r) => write(r, outcome, serializer),
            Body::Prompts(r) => write(r, outcome, serializer),
            Body::Resources(r) => write(r, outcome, serializer),
            Body::Complete(r) => write(r, outcome, serializer),
            Body::InputRequired(r) => write(r, outcome, serializer),
            Body::Tools(page) => {
                let tools = ToolsWritten {
                    page,
                    raw_listing: self.raw_listing,
                };
                write(tools, outcome, serializer)
            }
        }
    }
}

/// `body`, flattened with what its revision adds when it adds anything.
fn write<B: Serialize, S: Serializer>(
    body: B,
    outcome: &Outcome,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    if outcome.result_type.is_none() && outcome.meta.is_none() {
        body.serialize(serializer)
    } else {
        Flat::new(body, outcome).serialize(serializer)
    }
}

/// A result's own members, then what its revision adds to every result.
#[derive(Serialize)]
struct Flat<'a, B: Serialize> {
    #[serde(flatten)]
    body: B,
    #[serde(rename = "resultType", skip_serializing_if = "Option::is_none")]
    result_type: Option<ResultType>,
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    meta: Option<&'a Map<String, Value>>,
}

impl<'a, B: Serialize> Flat<'a, B> {
    fn new(body: B, outcome: &'a Outcome) -> Self {
        Flat {
            body,
            result_type: outcome.result_type,
            meta: outcome.meta.as_ref(),
        }
    }
}

/// A tools page's members: `tools`, `nextCursor`, and the 2026-07-28 caching hints.
struct ToolsWritten<'a> {
    page: &'a ToolsPage,
    raw_listing: bool,
}

impl Serialize for ToolsWritten<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap as _;
        let page = self.page;
        let listing = page.server.listing(page.version);
        let mut map = serializer.serialize_map(None)?;
        let Window { start, end, .. } = page.window;
        match &page.picked {
            Some(tools) => map.serialize_entry("tools", tools)?,
            None if self.raw_listing && start == 0 && end == listing.entries().len() => {
                map.serialize_entry("tools", &listing.text)?;
            }
            None => map.serialize_entry("tools", &listing.entries()[start..end])?,
        }
        page.window.write_tail(&mut map)?;
        map.end()
    }
}

/// The reply to `id` as a JSON value; `None` for a suppressed call.
pub(crate) fn reply_value(id: Option<RequestId>, answer: Answer) -> Option<Value> {
    let written = match answer {
        Answer::Suppressed => return None,
        // The hot path: the call's result moved into the reply, not copied through serde.
        Answer::Result(Outcome {
            body: Body::Call(result),
            result_type,
            meta: None,
        }) => {
            let Some(id) = id else {
                return Some(no_id_for_result());
            };
            let mut result = result.into_value();
            if let (Some(result_type), Value::Object(members)) = (result_type, &mut result) {
                members.insert(
                    "resultType".to_owned(),
                    serde_json::to_value(result_type).unwrap_or_default(),
                );
            }
            let mut reply = Map::new();
            reply.insert("jsonrpc".to_owned(), Value::from("2.0"));
            reply.insert("id".to_owned(), Value::from(id));
            reply.insert("result".to_owned(), result);
            return Some(Value::Object(reply));
        }
        Answer::Error(error) => serde_json::to_value(ErrorResponse::new(id, error)),
        Answer::Result(outcome) => match id {
            Some(id) => serde_json::to_value(ResultResponse::new(
                id,
                Written {
                    outcome: &outcome,
                    raw_listing: false,
                },
            )),
            None => return Some(no_id_for_result()),
        },
    };
    Some(written.unwrap_or_else(serialization_failed))
}

/// The reply to `id` as JSON text; `None` for a suppressed call. A whole tool list is
/// spliced from its text serialized once.
pub(crate) fn reply_text(id: Option<RequestId>, answer: Answer) -> Option<String> {
    let written = match answer {
        Answer::Suppressed => return None,
        Answer::Error(error) => serde_json::to_string(&ErrorResponse::new(id, error)),
        Answer::Result(outcome) => match id {
            Some(id) => serde_json::to_string(&ResultResponse::new(
                id,
                Written {
                    outcome: &outcome,
                    raw_listing: true,
                },
            )),
            None => return Some(no_id_for_result().to_string()),
        },
    };
    Some(written.unwrap_or_else(|e| serialization_failed(e).to_string()))
}

/// An error reply as a JSON value.
pub(crate) fn error_value(id: Option<RequestId>, error: ErrorObject) -> Value {
    reply_value(id, Answer::Error(error)).unwrap_or_default()
}

/// The reply to a batch nesting deeper than [`MAX_DEPTH`](crate::protocol::MAX_DEPTH): it is
/// refused whole, as its text would be (a single message is checked by `decode`).
pub(crate) fn refuse_too_deep(message: Value) -> Option<Value> {
    match too_deep(message) {
        Incoming::Invalid(Invalid { id, error }) => Some(error_value(id, error)),
        _ => None,
    }
}

/// -32600 for `[]`.
pub(crate) fn empty_batch() -> ErrorObject {
    ErrorObject::new(
        ErrorCode::INVALID_REQUEST,
        "an empty batch is not a valid request",
    )
}

/// -32700 for text that is not JSON.
pub(crate) fn parse_error(detail: impl std::fmt::Display) -> Value {
    error_value(
        None,
        ErrorObject::new(ErrorCode::PARSE_ERROR, format!("parse error: {detail}")),
    )
}

#[cold]
fn no_id_for_result() -> Value {
    error_value(
        None,
        ErrorObject::new(ErrorCode::INTERNAL_ERROR, "a result without a request id"),
    )
}

/// A result this crate could not write (a bug, or a tool's `Serialize` failing): the client
/// gets -32603 instead of nothing.
#[cold]
fn serialization_failed(e: serde_json::Error) -> Value {
    tracing::error!(error = %e, "a reply could not be serialized");
    let error = ErrorObject::new(
        ErrorCode::INTERNAL_ERROR,
        format!("the reply could not be serialized: {e}"),
    );
    serde_json::to_value(ErrorResponse::new(None, error)).unwrap_or_default()
}

impl Registry {
    /// Answers one MCP JSON-RPC message addressed to the server named `server`.
    ///
    /// Returns `Some(reply)` for a request and `None` for a notification (or a response).
    /// Every failure is a reply, never a panic: see the crate docs for the error mapping. A
    /// JSON-RPC batch (an array) is answered element by element: this entry point has no
    /// negotiated version to refuse it by.
    ///
    /// ```
    /// # use mcp_registry::{Registry, Server, Tool};
    /// # use serde_json::json;
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// # let hi = Tool::new("hi", "Say hi", json!({"type": "object"}), |_| async { "hi" }).unwrap();
    /// let registry = Registry::from_servers([Server::new("greet", None, [hi]).unwrap()]);
    /// let reply = registry
    ///     .handle_mcp_message("greet", json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}))
    ///     .await
    ///     .unwrap();
    /// assert_eq!(reply["result"]["tools"][0]["name"], "hi");
    /// let none = registry
    ///     .handle_mcp_message("greet", json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
    ///     .await;
    /// assert!(none.is_none());
    /// # }
    /// ```
    pub fn handle_mcp_message<'a>(
        &'a self,
        server: &'a str,
        message: Value,
    ) -> impl Future<Output = Option<Value>> + Send + 'a {
        self.handle_mcp_message_with(server, message, CallOptions::default())
    }

    /// [`handle_mcp_message`](Self::handle_mcp_message) with per-call options (timeout,
    /// notification sink for progress, cancellation, extensions). A call cancelled through
    /// the options gets no reply (`None`), as the spec asks.
    pub fn handle_mcp_message_with<'a>(
        &'a self,
        server: &'a str,
        message: Value,
        options: CallOptions,
    ) -> impl Future<Output = Option<Value>> + Send + 'a {
        Handling::new(self, server, message, options)
    }

    /// [`handle_mcp_message_with`](Self::handle_mcp_message_with) as far as it goes without
    /// waiting: what is awaited after it stays small.
    fn start_value(
        &self,
        server: &str,
        message: Value,
        options: &mut CallOptions,
    ) -> Started<Value> {
        match message {
            Value::Array(_) if exceeds_max_depth(&message) => {
                Started::Done(refuse_too_deep(message))
            }
            Value::Array(batch) => Started::Batch(batch),
            message => Started::new(
                Dispatcher::new(self).start_message(
                    server,
                    decode(message),
                    options,
                    Connection::default(),
                ),
                reply_value,
            ),
        }
    }

    /// The text form for transports: one JSON text in, one JSON text out. Unparseable text is
    /// answered with -32700. `tools/list` replies are written from the list serialized once
    /// per registry change.
    pub fn handle_mcp_text<'a>(
        &'a self,
        server: &'a str,
        text: &'a str,
    ) -> impl Future<Output = Option<String>> + Send + 'a {
        self.handle_mcp_text_with(server, text, CallOptions::default())
    }

    /// [`handle_mcp_text`](Self::handle_mcp_text) with per-call options.
    pub fn handle_mcp_text_with<'a>(
        &'a self,
        server: &'a str,
        text: &'a str,
        options: CallOptions,
    ) -> impl Future<Output = Option<String>> + Send + 'a {
        Handling::new(self, server, text, options)
    }

    /// [`handle_mcp_text_with`](Self::handle_mcp_text_with) as far as it goes without
    /// waiting.
    fn start_text(&self, server: &str, text: &str, options: &mut CallOptions) -> Started<String> {
        let message = match decode_text(text) {
            Ok(TextMessage::One(message)) => message,
            Ok(TextMessage::Batch(batch)) => return Started::Batch(batch),
            Err(e) => return Started::Done(Some(parse_error(e).to_string())),
        };
        Started::new(
            Dispatcher::new(self).start_message(server, message, options, Connection::default()),
            reply_text,
        )
    }

    /// Serves a batch element by element. Boxed: a batch is rare, and its future (a
    /// message's, for each element) would otherwise size every single message's.
    fn handle_batch<'a>(
        &'a self,
        server: &'a str,
        batch: Vec<Value>,
        options: CallOptions,
    ) -> BoxFuture<'a, Option<Value>> {
        Box::pin(async move {
            if batch.is_empty() {
                return Some(error_value(None, empty_batch()));
            }
            let dispatcher = Dispatcher::new(self);
            let mut replies = Vec::new();
            for message in batch {
                if let Some((id, answer)) = dispatcher
                    .message(
                        server,
                        decode(message),
                        options.clone(),
                        Connection::default(),
                    )
                    .await
                    && let Some(reply) = reply_value(id, answer)
                {
                    replies.push(reply);
                }
            }
            (!replies.is_empty()).then_some(Value::Array(replies))
        })
    }
}

/// A message [`Registry::handle_mcp_message`] or [`Registry::handle_mcp_text`] answers: the
/// input a `Value` or JSON text, the reply the same.
trait Input<'a>: Send + Unpin + 'a {
    type Reply: Send;
    /// Takes the message as far as it goes without waiting.
    fn start(
        self,
        registry: &Registry,
        server: &str,
        options: &mut CallOptions,
    ) -> Started<Self::Reply>;
    /// The reply to `id` with `answer`.
    fn write(id: Option<RequestId>, answer: Answer) -> Option<Self::Reply>;
    /// The reply to a batch.
    fn batch(reply: Option<Value>) -> Option<Self::Reply>;
}

impl<'a> Input<'a> for Value {
    type Reply = Value;
    fn start(self, registry: &Registry, server: &str, options: &mut CallOptions) -> Started<Value> {
        registry.start_value(server, self, options)
    }
    fn write(id: Option<RequestId>, answer: Answer) -> Option<Value> {
        reply_value(id, answer)
    }
    fn batch(reply: Option<Value>) -> Option<Value> {
        reply
    }
}

impl<'a> Input<'a> for &'a str {
    type Reply = String;
    fn start(
        self,
        registry: &Registry,
        server: &str,
        options: &mut CallOptions,
    ) -> Started<String> {
        registry.start_text(server, self, options)
    }
    fn write(id: Option<RequestId>, answer: Answer) -> Option<String> {
        reply_text(id, answer)
    }
    fn batch(reply: Option<Value>) -> Option<String> {
        reply.map(|v| v.to_string())
    }
}

/// The future of [`Registry::handle_mcp_message_with`] and
/// [`Registry::handle_mcp_text_with`]: the message is started on the first poll, then the
/// call it makes (if any) is polled in place until its reply is written. Written by hand
/// rather than as an `async fn`: it is about a third of that size, and every caller moves it.
struct Handling<'a, I: Input<'a>> {
    registry: &'a Registry,
    server: &'a str,
    state: State<'a, I>,
}

enum State<'a, I: Input<'a>> {
    /// Not polled yet.
    Start(Option<(I, CallOptions)>),
    Calling(Option<RequestId>, PendingCall),
    Waiting(Option<RequestId>, BoxFuture<'static, Answer>),
    Batch(BoxFuture<'a, Option<Value>>),
    /// Answered; polled again, it stays pending.
    Done,
}

impl<'a, I: Input<'a>> Handling<'a, I> {
    fn new(registry: &'a Registry, server: &'a str, input: I, options: CallOptions) -> Self {
        Handling {
            registry,
            server,
            state: State::Start(Some((input, options))),
        }
    }
}

impl<'a, I: Input<'a>> Future for Handling<'a, I> {
    type Output = Option<I::Reply>;

    fn poll(self: std::pin::Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        use futures_util::FutureExt as _;
        let this = self.get_mut();
        loop {
            match &mut this.state {
                State::Start(start) => {
                    let Some((input, mut options)) = start.take() else {
                        return Poll::Pending;
                    };
                    this.state = match input.start(this.registry, this.server, &mut options) {
                        Started::Done(reply) => {
                            this.state = State::Done;
                            return Poll::Ready(reply);
                        }
                        Started::Batch(batch) => {
                            State::Batch(this.registry.handle_batch(this.server, batch, options))
                        }
                        Started::Calling(id, call) => State::Calling(id, call),
                        Started::Waiting(id, answer) => State::Waiting(id, answer),
                    };
                }
                State::Calling(id, call) => {
                    let result = std::task::ready!(call.call.poll_unpin(cx));
                    let reply = I::write(id.take(), call.finish(result));
                    this.state = State::Done;
                    return Poll::Ready(reply);
                }
                State::Waiting(id, answer) => {
                    let answer = std::task::ready!(answer.poll_unpin(cx));
                    let reply = I::write(id.take(), answer);
                    this.state = State::Done;
                    return Poll::Ready(reply);
                }
                State::Batch(batch) => {
                    let reply = std::task::ready!(batch.poll_unpin(cx));
                    this.state = State::Done;
                    return Poll::Ready(I::batch(reply));
                }
                State::Done => return Poll::Pending,
            }
        }
    }
}
