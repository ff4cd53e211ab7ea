//! `tools/list` and `tools/call` for a registry server: the page of its tools a revision
//! lists, and the call started through the registry's pipeline, its answer written once it
//! ends (`input_required` for a 2026-07-28 call stopped for input).
//!
//! One request kind in two layers, named alike: its run through the registry (in-process API and pipeline) in `registry/tools.rs`.

use std::borrow::Cow;
use std::sync::Arc;

use serde_json::{Map, Value};

use super::page::{Listing, Window};
use super::round::Retry;
use super::tasks::{TaskCall, TaskMode};
use super::{Answer, Body, Dispatcher, Outcome, Parts, Routed, Step, invalid_params, outcome};
use crate::protocol::decode::{CallText, raw_kind};
use crate::protocol::{
    CallToolResult, ElicitParams, ErrorCode, ErrorObject, ProtocolVersion, ResultType,
    UrlElicitationRequiredData, method, value_kind,
};
use crate::registry::ListingFilter;
use crate::registry::scope::RequestInfo;
use crate::registry::tools::CallFuture;
use crate::registry::{CallError, CallOptions, Target};
use crate::server::Server;
use crate::tool::Arguments;
use crate::tool::request_state::arguments_digest;
use crate::tool::round::{BoundArguments, Round, RoundSeal};

/// A page of a server's tool list, in the form its revision describes tools.
pub(crate) struct ToolsPage {
    pub(crate) server: Server,
    pub(crate) version: Option<ProtocolVersion>,
    pub(crate) window: Window,
    /// With a listing filter ([`CallOptions`]'s): the page's entries, picked and cut.
    pub(crate) picked: Option<Vec<Value>>,
}

/// `tools/list`: a page of the server's tools, as the caller's listing filter shows them;
/// a tool's app (`_meta.ui`) only for a client that declares MCP Apps.
pub(crate) fn list(request: Routed<'_>, options: &mut CallOptions) -> Step {
    let mut page = request.dispatcher().list_tools(
        request.server,
        request.version,
        &request.params,
        options.listing_filter(),
    );
    let apps = request.connection.apps || super::apps::request_declares(request.meta.as_deref());
    if let (Ok(page), false) = (&mut page, apps || !request.server.has_app_tools()) {
        super::apps::hide_ui(page);
    }
    request.answer(page.map(|page| Body::Tools(Box::new(page))))
}

/// `tools/call`: the call started, to await; on a server with tools that run as tasks, as a
/// task when the tool and the request say so (see `tasks.rs`).
#[inline]
pub(crate) fn call(request: Routed<'_>, options: &mut CallOptions) -> Step {
    let tasks = request.server.has_task_tools();
    let (parts, mut info) = request.split();
    let Parts {
        registry,
        server,
        mut params,
        call_text,
        era,
        version,
    } = parts;
    let retry = match Retry::prepare(era, options, &mut params, &mut info) {
        Ok(retry) => retry,
        Err(e) => return Step::Answered(Answer::Error(e)),
    };
    // 2025-11-25: a call to run as a task names it in `task` (ignored by a server without
    // task tools, as that revision asks).
    let task = if tasks { params.remove("task") } else { None };
    let call = match &call_text {
        Some(text) => call_from_text(text),
        None => call_from_params(params),
    };
    let call = match call {
        Ok(call) => call,
        Err(e) => return Step::Answered(Answer::Error(e)),
    };
    let dispatcher = Dispatcher::new(registry);
    if tasks {
        match super::tasks::mode(server, &call.name, era, task, info.meta.as_deref()) {
            Err(e) => return Step::Answered(Answer::Error(e)),
            Ok(TaskMode::Plain) => {}
            Ok(mode) => {
                let task = TaskCall {
                    dispatcher,
                    server: server.clone(),
                    call,
                    mode,
                    version,
                    info,
                    retry,
                };
                return super::tasks::start(task, options);
            }
        }
    }
    match dispatcher.call_tool(server, call, options, info, retry) {
        Ok((call, round)) => Step::Calling(PendingCall {
            call,
            server: super::answer_needs_server(version).then(|| server.clone()),
            version,
            round,
            span: None,
        }),
        Err(e) => Step::Answered(Answer::Error(e)),
    }
}

impl Dispatcher<'_> {
    /// A page of `server`'s tools. With a listing filter, the filter picks first and the
    /// page is cut from what it picked, so every page but the last is full.
    pub(crate) fn list_tools(
        &self,
        server: &Server,
        version: Option<ProtocolVersion>,
        params: &Map<String, Value>,
        filter: Option<&ListingFilter>,
    ) -> Result<ToolsPage, ErrorObject> {
        let entries = server.listing(version).entries();
        // Each tool by its own server and name (the union's tools keep theirs).
        let picked: Option<Vec<&Value>> = filter.map(|keep| {
            entries
                .iter()
                .zip(server.call_names())
                .filter(|(_, own)| keep.shows(&own.server, &own.tool))
                .map(|(t, _)| t)
                .collect()
        });
        let total = picked.as_ref().map_or(entries.len(), Vec::len);
        let cursor = match params.get("cursor") {
            None | Some(Value::Null) => None,
            Some(Value::String(c)) => Some(c.as_str()),
            Some(other) => {
                return Err(invalid_params(format!(
                    "`cursor` must be a string, got {}",
                    value_kind(other)
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
    pub(super) fn call_tool(
        &self,
        server: &Server,
        call: ToolCallParts<'_>,
        options: &mut CallOptions,
        mut info: RequestInfo,
        retry: Option<Retry>,
    ) -> Result<(CallFuture, Option<Arc<Round>>), ErrorObject> {
        let Some((tool, names)) = server.tool_entry(&call.name) else {
            return Err(invalid_params(server.unknown_tool(&call.name)));
        };
        if server.is_union() {
            // The request's span names the tool's own server and name, not the union's.
            crate::telemetry::record_own_names(&names.server, &names.tool, "gen_ai.tool.name");
        }
        // A tool that reads no context (and no layer that could ask for it) cannot ask the
        // client anything: a first try of it needs no round (a retry still has its state
        // checked).
        let asks = || tool.plain_handler().is_none() || self.registry.has_layers(options);
        let retry = retry.filter(|retry| !retry.is_first() || asks());
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
                caller: options.caller.owner(),
            };
            info.round = Some(Arc::new(retry.round(
                seal,
                self.registry,
                info.meta.as_deref(),
            )?));
        }
        let round = info.round.clone();
        let call = self
            .registry
            .invoke(Target { tool, names }, call.arguments, options, info);
        Ok((call, round))
    }
}

/// What a `tools/call` names: the tool and its arguments.
pub(super) struct ToolCallParts<'a> {
    pub(super) name: Cow<'a, str>,
    arguments: Arguments<'a>,
}

/// A `tools/call`'s params as parsed members.
fn call_from_params(params: Map<String, Value>) -> Result<ToolCallParts<'static>, ErrorObject> {
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
        Some(other) => return Err(name_not_a_string(value_kind(&other))),
        None => return Err(name_missing()),
    };
    let arguments = match arguments {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(a)) => a,
        Some(other) => return Err(arguments_not_an_object(&name, value_kind(&other))),
    };
    Ok(ToolCallParts {
        name: Cow::Owned(name),
        arguments: arguments.into(),
    })
}

/// A `tools/call`'s params as text: the arguments stay text for the tool to read.
fn call_from_text<'a>(call: &'a CallText<'_>) -> Result<ToolCallParts<'a>, ErrorObject> {
    let Some(name) = call.name.as_deref() else {
        return Err(name_missing());
    };
    let name = Cow::Borrowed(name);
    let arguments = match call.arguments.as_deref() {
        None => Arguments::from(Map::new()),
        Some(raw) if raw.get() == "null" => Arguments::from(Map::new()),
        Some(raw) if raw.get().starts_with('{') => Arguments::text(raw.get()),
        Some(raw) => return Err(arguments_not_an_object(&name, raw_kind(raw))),
    };
    Ok(ToolCallParts { name, arguments })
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

/// A `tools/call` under way, with what its answer needs.
pub(crate) struct PendingCall {
    pub(crate) call: CallFuture,
    /// The server, when the answer names it (2026-07-28; `None` before).
    server: Option<Server>,
    version: Option<ProtocolVersion>,
    /// 2026-07-28: the call's asks, when they end it with `input_required`.
    round: Option<Arc<Round>>,
    /// The request's span (and timing, feature `otel`), the span entered while the call is
    /// polled (`None` when nobody traces: boxed, so that a call nobody traces moves no more
    /// than it did).
    pub(crate) span: Option<Box<crate::telemetry::Observed>>,
}

impl PendingCall {
    /// Polls the call, inside its request's span.
    #[inline]
    pub(crate) fn poll(
        &mut self,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Result<CallToolResult, CallError>> {
        use futures_util::FutureExt as _;
        match &self.span {
            None => self.call.poll_unpin(cx),
            Some(observed) => observed.span.in_scope(|| self.call.poll_unpin(cx)),
        }
    }

    /// The answer to a call that ended with `result` (recorded on its span).
    #[inline]
    pub(crate) fn finish(&self, result: Result<CallToolResult, CallError>) -> Answer {
        let answer = finish_call(
            self.server.as_ref(),
            self.version,
            self.round.as_deref(),
            result,
        );
        if let Some(span) = &self.span {
            super::record_outcome(span, &answer);
        }
        answer
    }
}

/// The answer to a call of `server`'s tool that ended with `result`, in a round of a multi
/// round-trip request when `round` is set. `server` is needed only where
/// [`answer_needs_server`](super::answer_needs_server) says so (a round is 2026-07-28's).
#[inline]
pub(super) fn finish_call(
    server: Option<&Server>,
    version: Option<ProtocolVersion>,
    round: Option<&Round>,
    result: Result<CallToolResult, CallError>,
) -> Answer {
    if let (Some(server), Some(round)) = (server, round)
        && let Some(answer) = input_required(server, round)
    {
        return answer;
    }
    let result = match result {
        Ok(result) => result,
        // A cancelled call gets no reply.
        Err(CallError::Cancelled { .. }) => return Answer::Suppressed,
        // A layer's own error is the reply.
        Err(CallError::Rejected { error, .. }) => return Answer::Error(error),
        // 2026-07-28 refuses the request itself.
        Err(CallError::MissingClientCapability {
            capability,
            message,
            ..
        }) if version == Some(ProtocolVersion::MODERN) => {
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
    Answer::Result(match server {
        Some(server) => outcome(server, version, Body::Call(result)),
        None => super::legacy_outcome(version, Body::Call(result)),
    })
}

/// The answer to a request whose run stopped for input: `input_required`, or the error
/// refusing an answer it was given. `None` when the run was not stopped.
pub(crate) fn input_required(server: &Server, round: &Round) -> Option<Answer> {
    Some(match round.input_required()? {
        Ok(result) => Answer::Result(Outcome::modern(
            server,
            Body::InputRequired(Box::new(result)),
            ResultType::InputRequired,
        )),
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
