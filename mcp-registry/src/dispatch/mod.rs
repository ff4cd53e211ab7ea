//! Answering MCP in-process: one JSON-RPC message in, one reply out.
//!
//! A dispatcher serves a [`Registry`]'s servers through a narrow part of its API (find an
//! enabled server, start a call, read the listing settings). The `Registry` methods defined
//! here (`handle_mcp_message`, `handle_mcp_text`) are its public entry points; sessions and
//! transports use the dispatcher directly.

mod prompts;
mod session;

pub use session::{Lifecycle, LifecycleError, ServerSession};

use base64::Engine as _;
use serde::{Serialize, Serializer};
use serde_json::{Map, Value};

use crate::protocol::decode::{
    Incoming, IncomingRequest, Invalid, decode, decode_parsed, kind, too_deep,
};
use crate::protocol::{
    CacheHints, CacheScope, CallToolResult, DiscoverResult, Era, ErrorCode, ErrorObject,
    ErrorResponse, Implementation, InitializeParams, InitializeResult, META_SERVER_INFO,
    ProtocolEra, ProtocolVersion, RequestId, ResultResponse, ResultType, ServerCapabilities,
    ToolsCapability, exceeds_max_depth, method,
};
use crate::registry::call::{CallFuture, ListingFilter, RequestInfo};
use crate::registry::{CallError, CallOptions, Registry, Target};
use crate::server::Server;

/// Per-connection facts the stateless entry points do not have.
#[derive(Clone, Copy, Default)]
pub(crate) struct Connection {
    /// The version negotiated by `initialize`, if any.
    pub(crate) legacy_version: Option<ProtocolVersion>,
    /// Whether `notifications/tools/list_changed` will be sent.
    pub(crate) list_changed: bool,
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
    Initialize(InitializeResult),
    Discover(DiscoverResult),
    Tools(ToolsPage),
    Call(CallToolResult),
    Prompts(prompts::PromptsBody),
}

/// A page of a server's tool list, in the form its revision describes tools.
pub(crate) struct ToolsPage {
    server: Server,
    version: Option<ProtocolVersion>,
    page: Page,
    next_cursor: Option<String>,
    cache: Option<CacheHints>,
}

/// Which of a server's listed tools a `tools/list` page holds.
enum Page {
    /// Entries `start..end` of the server's listing.
    Range { start: usize, end: usize },
    /// Entries picked by a listing filter ([`CallOptions`]'s), already paginated.
    Picked(Vec<Value>),
}

fn invalid_params(message: impl Into<String>) -> ErrorObject {
    ErrorObject::new(ErrorCode::INVALID_PARAMS, message)
}

fn encode_cursor(offset: usize) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(format!("tools:{offset}"))
}

fn decode_cursor(cursor: &str) -> Option<usize> {
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(cursor)
        .ok()?;
    std::str::from_utf8(&bytes)
        .ok()?
        .strip_prefix("tools:")?
        .parse()
        .ok()
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
        message: Incoming,
        options: CallOptions,
        connection: Connection,
    ) -> Option<(Option<RequestId>, Answer)> {
        match message {
            Incoming::Request(request) => {
                let id = request.id.clone();
                Some((
                    Some(id),
                    self.request(server, request, options, connection).await,
                ))
            }
            Incoming::Invalid(Invalid { id, error }) => Some((id, Answer::Error(error))),
            Incoming::Notification(_) | Incoming::Silent => None,
        }
    }

    /// Answers one decoded request.
    pub(crate) async fn request(
        self,
        server_name: &str,
        request: IncomingRequest,
        mut options: CallOptions,
        connection: Connection,
    ) -> Answer {
        let IncomingRequest {
            id,
            method,
            params,
            meta,
            era,
        } = request;
        let era = match era {
            Ok(era) => era,
            Err(e) => return Answer::Error(e),
        };
        let server = match self.registry.enabled_server(server_name) {
            Ok(server) => server,
            Err(e) => {
                return Answer::Error(ErrorObject::new(ErrorCode::METHOD_NOT_FOUND, e.to_string()));
            }
        };
        let version = match era {
            Era::Modern => Some(ProtocolVersion::MODERN),
            Era::Legacy(named) => named.or(connection.legacy_version),
        };
        let body = match (method.as_str(), era) {
            (method::INITIALIZE, Era::Legacy(_)) => {
                Ok(Body::Initialize(initialize(&server, params, connection)))
            }
            (method::PING, Era::Legacy(_)) => Ok(Body::Empty),
            (method::DISCOVER, Era::Modern) => {
                Ok(Body::Discover(self.discover(&server, connection)))
            }
            (method::TOOLS_LIST, _) => self
                .list_tools(&server, version, &params, options.listing_filter.as_ref())
                .map(Body::Tools),
            (method::PROMPTS_LIST, _) => self
                .list_prompts(&server, version, params)
                .map(Body::Prompts),
            (method::PROMPTS_GET, _) => self.get_prompt(&server, params).await.map(Body::Prompts),
            (method::TOOLS_CALL, _) => {
                if let Some(meta) = meta {
                    options.meta = Some(meta);
                }
                let request = RequestInfo {
                    id: Some(id),
                    protocol_version: version,
                };
                match self.call_tool(&server, params, options, request) {
                    Ok(call) => match call.await {
                        Ok(result) => Ok(Body::Call(result)),
                        Err(CallError::Cancelled { .. }) => return Answer::Suppressed,
                        Err(e) => Ok(Body::Call(e.into_call_tool_result())),
                    },
                    Err(e) => Err(e),
                }
            }
            (other, era) => Err(method_not_found(other, era)),
        };
        match body {
            Ok(body) => Answer::Result(self.outcome(&server, version, body)),
            Err(e) => Answer::Error(e),
        }
    }

    /// `body` as its revision sends it: fields the revision lacks removed, what 2026-07-28
    /// adds to every result added.
    fn outcome(
        &self,
        server: &Server,
        version: Option<ProtocolVersion>,
        mut body: Body,
    ) -> Outcome {
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
            Body::Prompts(prompts::PromptsBody::Get(result)) => {
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

    fn cache_hints(&self) -> CacheHints {
        CacheHints {
            ttl_ms: u64::try_from(self.registry.config().list_ttl.as_millis()).unwrap_or(u64::MAX),
            cache_scope: CacheScope::Public,
        }
    }

    fn discover(&self, server: &Server, connection: Connection) -> DiscoverResult {
        DiscoverResult {
            supported_versions: ProtocolVersion::ALL.into_iter().rev().collect(),
            capabilities: capabilities(server, connection),
            instructions: server.instructions().map(str::to_owned),
            cache: self.cache_hints(),
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
        let start = match params.get("cursor") {
            None | Some(Value::Null) => 0,
            Some(Value::String(c)) => match decode_cursor(c) {
                Some(offset) if offset <= total => offset,
                _ => {
                    return Err(invalid_params(format!(
                        "invalid cursor {c:?} for tools/list"
                    )));
                }
            },
            Some(other) => {
                return Err(invalid_params(format!(
                    "`cursor` must be a string, got {}",
                    kind(other)
                )));
            }
        };
        let end = match self.registry.config().page_size {
            Some(size) => (start + size).min(total),
            None => total,
        };
        let page = match picked {
            Some(picked) => Page::Picked(picked[start..end].iter().map(|&t| t.clone()).collect()),
            None => Page::Range { start, end },
        };
        Ok(ToolsPage {
            server: server.clone(),
            version,
            page,
            next_cursor: (end < total).then(|| encode_cursor(end)),
            cache: (version == Some(ProtocolVersion::MODERN)).then(|| self.cache_hints()),
        })
    }

    /// Starts a `tools/call`.
    fn call_tool(
        &self,
        server: &Server,
        mut params: Map<String, Value>,
        options: CallOptions,
        request: RequestInfo,
    ) -> Result<CallFuture, ErrorObject> {
        let name = match params.remove("name") {
            Some(Value::String(n)) => n,
            Some(other) => {
                return Err(invalid_params(format!(
                    "`params.name` must be a string, got {}",
                    kind(&other)
                )));
            }
            None => {
                return Err(invalid_params(
                    "tools/call requires `params.name`, the tool to call",
                ));
            }
        };
        let arguments = match params.remove("arguments") {
            None | Some(Value::Null) => Map::new(),
            Some(Value::Object(a)) => a,
            Some(other) => {
                return Err(invalid_params(format!(
                    "`params.arguments` of tool {name:?} must be an object, got {}",
                    kind(&other)
                )));
            }
        };
        let Some((tool, names)) = server.tool_entry(&name) else {
            return Err(invalid_params(format!("Unknown tool: {name}")));
        };
        Ok(self
            .registry
            .invoke(Target { tool, names }, arguments, options, request))
    }
}

fn capabilities(server: &Server, connection: Connection) -> ServerCapabilities {
    ServerCapabilities {
        tools: Some(ToolsCapability {
            list_changed: Some(connection.list_changed),
        }),
        prompts: prompts::capability(server, connection),
        other: Map::new(),
    }
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
            Body::Empty => write(Empty {}, outcome, serializer),
            Body::Initialize(r) => write(r, outcome, serializer),
            Body::Discover(r) => write(r, outcome, serializer),
            Body::Call(r) => write(r, outcome, serializer),
            Body::Prompts(r) => write(r, outcome, serializer),
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
        match &page.page {
            Page::Range { start, end }
                if self.raw_listing && *start == 0 && *end == listing.entries().len() =>
            {
                map.serialize_entry("tools", &listing.text)?;
            }
            Page::Range { start, end } => {
                map.serialize_entry("tools", &listing.entries()[*start..*end])?
            }
            Page::Picked(tools) => map.serialize_entry("tools", tools)?,
        }
        if let Some(cursor) = &page.next_cursor {
            map.serialize_entry("nextCursor", cursor)?;
        }
        if let Some(cache) = &page.cache {
            map.serialize_entry("ttlMs", &cache.ttl_ms)?;
            map.serialize_entry("cacheScope", &cache.cache_scope)?;
        }
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
    pub async fn handle_mcp_message(&self, server: &str, message: Value) -> Option<Value> {
        self.handle_mcp_message_with(server, message, CallOptions::default())
            .await
    }

    /// [`handle_mcp_message`](Self::handle_mcp_message) with per-call options (timeout,
    /// notification sink for progress, cancellation, extensions). A call cancelled through
    /// the options gets no reply (`None`), as the spec asks.
    pub async fn handle_mcp_message_with(
        &self,
        server: &str,
        message: Value,
        options: CallOptions,
    ) -> Option<Value> {
        match message {
            Value::Array(_) if exceeds_max_depth(&message) => refuse_too_deep(message),
            Value::Array(batch) => self.handle_batch(server, batch, options).await,
            message => {
                let (id, answer) = Dispatcher::new(self)
                    .message(server, decode(message), options, Connection::default())
                    .await?;
                reply_value(id, answer)
            }
        }
    }

    /// The text form for transports: one JSON text in, one JSON text out. Unparseable text is
    /// answered with -32700. `tools/list` replies are written from the list serialized once
    /// per registry change.
    pub async fn handle_mcp_text(&self, server: &str, text: &str) -> Option<String> {
        self.handle_mcp_text_with(server, text, CallOptions::default())
            .await
    }

    /// [`handle_mcp_text`](Self::handle_mcp_text) with per-call options.
    pub async fn handle_mcp_text_with(
        &self,
        server: &str,
        text: &str,
        options: CallOptions,
    ) -> Option<String> {
        let message: Value = match serde_json::from_str(text) {
            Ok(v) => v,
            Err(e) => return Some(parse_error(e).to_string()),
        };
        if message.is_array() {
            return self
                .handle_mcp_message_with(server, message, options)
                .await
                .map(|v| v.to_string());
        }
        let (id, answer) = Dispatcher::new(self)
            .message(
                server,
                decode_parsed(message),
                options,
                Connection::default(),
            )
            .await?;
        reply_text(id, answer)
    }

    async fn handle_batch(
        &self,
        server: &str,
        batch: Vec<Value>,
        options: CallOptions,
    ) -> Option<Value> {
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
    }
}
