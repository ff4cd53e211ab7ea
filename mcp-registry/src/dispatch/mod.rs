//! `handle_mcp_message`: one MCP JSON-RPC message in, one reply out, in-process.

pub(crate) mod envelope;
mod session;

pub use session::{Lifecycle, LifecycleError, ServerSession};

use std::fmt::Write as _;

use base64::Engine as _;
use serde_json::{Map, Value, json};

use crate::protocol::{
    CallToolResult, ErrorCode, ErrorObject, LATEST_LEGACY_VERSION, LEGACY_VERSIONS,
    META_CLIENT_CAPABILITIES, META_PROTOCOL_VERSION, META_SERVER_INFO, ProtocolEra,
    ProtocolVersion, RequestId, SUPPORTED_VERSIONS,
};
use crate::registry::call::{CallFuture, ListingFilter, RequestInfo};
use crate::registry::{CallError, CallOptions, Registry, Target};
use crate::server::Server;
use envelope::{
    Decoded, Request, Shell, Spare, decode_message, error_reply, error_reply_in, result_reply_in,
};

/// What a request is answered with, before it is written as a `Value` or as text.
pub(crate) enum Answer {
    Result(Value),
    /// A page of a server's tool list: served from the list serialized when the server was
    /// built, so the text path copies bytes instead of re-serializing schemas.
    Tools {
        server: Server,
        page: Page,
        next_cursor: Option<String>,
        modern: Option<Map<String, Value>>,
    },
    Error(ErrorObject),
    /// The call was cancelled: no reply is sent.
    Suppressed,
}

/// Which of a server's listed tools a `tools/list` page holds.
pub(crate) enum Page {
    /// Entries `start..end` of the server's listing.
    Range { start: usize, end: usize },
    /// Entries picked by a listing filter ([`CallOptions`]'s), already paginated.
    Picked(Vec<Value>),
}

/// A request prepared without waiting: answered, or waiting on its tool call, whose result
/// goes into `body` (the request's emptied params map).
pub(crate) enum Prepared {
    Answer(Answer),
    Call {
        call: CallFuture,
        body: Map<String, Value>,
        /// The server, when the result must carry 2026-07-28 members.
        modern: Option<Server>,
    },
}

/// The era and version a request is served under.
#[derive(Clone, Copy)]
pub(crate) struct Served {
    pub(crate) version: Option<ProtocolVersion>,
    pub(crate) modern: bool,
}

/// Per-connection facts the stateless entry point does not have.
#[derive(Clone, Copy, Default)]
pub(crate) struct Connection {
    /// The version negotiated by `initialize`, if any.
    pub(crate) legacy_version: Option<ProtocolVersion>,
    /// Whether `notifications/tools/list_changed` will be sent.
    pub(crate) list_changed: bool,
}

fn invalid_params(message: impl Into<String>) -> Answer {
    Answer::Error(ErrorObject::new(ErrorCode::INVALID_PARAMS, message))
}

fn unsupported_version(requested: &str) -> ErrorObject {
    ErrorObject::new(
        ErrorCode::UNSUPPORTED_PROTOCOL_VERSION,
        format!("Unsupported protocol version {requested:?}"),
    )
    .with_data(json!({ "supported": SUPPORTED_VERSIONS, "requested": requested }))
}

/// The `_meta` members every 2026-07-28 request must carry: the protocol version (a string)
/// and the client's capabilities (an object). Errors are -32602 naming the member.
pub(crate) fn check_modern_meta(meta: Option<&Map<String, Value>>) -> Result<(), ErrorObject> {
    let missing = |what: &str| {
        ErrorObject::new(
            ErrorCode::INVALID_PARAMS,
            format!("a 2026-07-28 request must carry `params._meta.{what}`"),
        )
    };
    let Some(meta) = meta else {
        return Err(missing(META_PROTOCOL_VERSION));
    };
    if !meta
        .get(META_PROTOCOL_VERSION)
        .is_some_and(Value::is_string)
    {
        return Err(missing(META_PROTOCOL_VERSION));
    }
    if !meta
        .get(META_CLIENT_CAPABILITIES)
        .is_some_and(Value::is_object)
    {
        return Err(missing(META_CLIENT_CAPABILITIES));
    }
    Ok(())
}

/// The era and version `method` is served under, from the version its `_meta` names; a
/// request naming none is legacy, under the connection's negotiated version. The one place
/// that decides a request's era: dispatch serves by it and [`ServerSession`] gates by it.
///
/// Errors: -32022 for a version not supported, -32602 for a version that is not a string or
/// a `server/discover` without one.
pub(crate) fn served_as(
    method: &str,
    meta: Option<&Map<String, Value>>,
    legacy_version: Option<ProtocolVersion>,
) -> Result<Served, ErrorObject> {
    match meta.and_then(|m| m.get(META_PROTOCOL_VERSION)) {
        Some(Value::String(v)) => match ProtocolVersion::parse(v) {
            Some(version) => Ok(Served {
                version: Some(version),
                modern: version.era() == ProtocolEra::Modern,
            }),
            None => Err(unsupported_version(v)),
        },
        Some(other) => Err(ErrorObject::new(
            ErrorCode::INVALID_PARAMS,
            format!(
                "`_meta.{META_PROTOCOL_VERSION}` must be a string, got {}",
                envelope::kind(other)
            ),
        )),
        None if method == "server/discover" => Err(ErrorObject::new(
            ErrorCode::INVALID_PARAMS,
            format!(
                "server/discover requires `_meta.{META_PROTOCOL_VERSION}` (2026-07-28 requests carry their version)"
            ),
        )),
        None => Ok(Served {
            version: legacy_version,
            modern: false,
        }),
    }
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

impl Registry {
    /// Answers one MCP JSON-RPC message addressed to the server named `server`.
    ///
    /// Returns `Some(reply)` for a request and `None` for a notification (or a response).
    /// Every failure is a reply, never a panic: see the crate docs for the error mapping.
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
        let message = match envelope::check_depth(message) {
            Ok(message) => message?,
            Err(rejected) => return Some(error_reply(rejected.id, rejected.error)),
        };
        if let Value::Array(batch) = message {
            return self.handle_batch(server, batch, options).await;
        }
        let mut shell = Shell::default();
        let (id, answer) = self
            .handle_decoded(server, message, options, Connection::default(), &mut shell)
            .await?;
        self.answer_to_value_in(id, answer, &mut shell)
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
            Err(e) => return Some(envelope::parse_error(e).to_string()),
        };
        if message.is_array() {
            return self
                .handle_mcp_message_with(server, message, options)
                .await
                .map(|v| v.to_string());
        }
        let mut shell = Shell::default();
        let (id, answer) = self
            .handle_decoded(server, message, options, Connection::default(), &mut shell)
            .await?;
        self.answer_to_text(id, answer, &mut shell)
    }

    async fn handle_batch(
        &self,
        server: &str,
        batch: Vec<Value>,
        options: CallOptions,
    ) -> Option<Value> {
        if batch.is_empty() {
            return Some(error_reply(
                Value::Null,
                ErrorObject::new(
                    ErrorCode::INVALID_REQUEST,
                    "an empty batch is not a valid request",
                ),
            ));
        }
        let mut replies = Vec::new();
        for message in batch {
            let mut shell = Shell::default();
            if let Some((id, answer)) = self
                .handle_decoded(
                    server,
                    message,
                    options.clone(),
                    Connection::default(),
                    &mut shell,
                )
                .await
                && let Some(reply) = self.answer_to_value_in(id, answer, &mut shell)
            {
                replies.push(reply);
            }
        }
        (!replies.is_empty()).then_some(Value::Array(replies))
    }

    /// Decodes and answers; `None` for notifications and responses. The id is the JSON value to
    /// reply under; the shell holds what the reply can reuse of the request.
    pub(crate) async fn handle_decoded(
        &self,
        server: &str,
        message: Value,
        options: CallOptions,
        connection: Connection,
        shell: &mut Shell,
    ) -> Option<(Value, Answer)> {
        match decode_message(message, shell) {
            Err(rejected) => Some((rejected.id, Answer::Error(rejected.error))),
            Ok(Decoded::Notification { .. } | Decoded::Response | Decoded::Ignored) => None,
            Ok(Decoded::Request(Request {
                id,
                raw_id,
                method,
                params,
            })) => {
                let prepared = self.prepare_request(
                    server,
                    id,
                    &method,
                    params,
                    options,
                    connection,
                    &mut shell.spare,
                );
                shell.spare.give(method);
                // Awaited here, not in a nested async fn: the call future lives in this state
                // machine, and nothing large is moved into another.
                let answer = match prepared {
                    Prepared::Answer(answer) => answer,
                    Prepared::Call { call, body, modern } => {
                        let outcome = call.await;
                        self.call_answer(outcome, body, modern, &mut shell.spare)
                    }
                };
                Some((raw_id, answer))
            }
        }
    }

    /// Answers one decoded request.
    pub(crate) async fn answer_request(
        &self,
        server_name: &str,
        id: &RequestId,
        method: &str,
        params: Map<String, Value>,
        options: CallOptions,
        connection: Connection,
    ) -> Answer {
        let mut spare = Spare::default();
        let prepared = self.prepare_request(
            server_name,
            id.clone(),
            method,
            params,
            options,
            connection,
            &mut spare,
        );
        match prepared {
            Prepared::Answer(answer) => answer,
            Prepared::Call { call, body, modern } => {
                let outcome = call.await;
                self.call_answer(outcome, body, modern, &mut spare)
            }
        }
    }

    /// The answer to a finished tool call; its result goes into `body`.
    fn call_answer(
        &self,
        outcome: Result<CallToolResult, CallError>,
        body: Map<String, Value>,
        modern: Option<Server>,
        spare: &mut Spare,
    ) -> Answer {
        let result = match outcome {
            Ok(result) => result,
            Err(CallError::Cancelled { .. }) => return Answer::Suppressed,
            Err(e) => e.into_call_tool_result(),
        };
        let answer = Answer::Result(result.into_value_in(body, spare));
        match modern {
            Some(server) => self.modernize(&server, answer),
            None => answer,
        }
    }

    /// Everything about a request that needs no waiting: its answer, or the tool call to run.
    /// Strings freed from the request go to `spare`, for the reply.
    #[allow(clippy::too_many_arguments)]
    fn prepare_request(
        &self,
        server_name: &str,
        id: RequestId,
        method: &str,
        mut params: Map<String, Value>,
        mut options: CallOptions,
        connection: Connection,
        spare: &mut Spare,
    ) -> Prepared {
        let meta = match params.remove("_meta") {
            None | Some(Value::Null) => None,
            Some(Value::Object(m)) => Some(m),
            Some(_) => {
                return Prepared::Answer(invalid_params("`params._meta` must be an object"));
            }
        };
        let served = match served_as(method, meta.as_ref(), connection.legacy_version) {
            Ok(served) => served,
            Err(e) => return Prepared::Answer(Answer::Error(e)),
        };
        if served.modern
            && let Err(e) = check_modern_meta(meta.as_ref())
        {
            return Prepared::Answer(Answer::Error(e));
        }
        // Held while the request is prepared; a tool call owns what it needs from then on.
        let snapshot = self.snapshot();
        let server = match snapshot.server(server_name) {
            None => {
                return Prepared::Answer(Answer::Error(ErrorObject::new(
                    ErrorCode::METHOD_NOT_FOUND,
                    format!("unknown MCP server {server_name:?}"),
                )));
            }
            Some(e) if !e.enabled => {
                return Prepared::Answer(Answer::Error(ErrorObject::new(
                    ErrorCode::METHOD_NOT_FOUND,
                    format!("MCP server {server_name:?} is disabled"),
                )));
            }
            Some(e) => &e.server,
        };
        let answer = match (method, served.modern) {
            ("initialize", false) => self.initialize(server, &params, connection),
            ("ping", false) => Answer::Result(json!({})),
            ("server/discover", true) => Answer::Result(self.discover(server, connection)),
            ("tools/list", _) => self.list_tools(server, &params, options.listing_filter.as_ref()),
            ("tools/call", _) => {
                if let Some(meta) = meta {
                    options.meta = Some(meta);
                }
                let request = RequestInfo {
                    id: Some(id),
                    protocol_version: served.version,
                };
                match self.call_tool(server, params, options, request, spare) {
                    Ok((call, body)) => {
                        return Prepared::Call {
                            call,
                            body,
                            modern: served.modern.then(|| server.clone()),
                        };
                    }
                    Err(answer) => answer,
                }
            }
            _ => Answer::Error(ErrorObject::new(
                ErrorCode::METHOD_NOT_FOUND,
                if served.modern {
                    format!(
                        "method not found: {method} (protocol version {})",
                        ProtocolVersion::MODERN
                    )
                } else {
                    format!("method not found: {method}")
                },
            )),
        };
        Prepared::Answer(if served.modern {
            self.modernize(server, answer)
        } else {
            answer
        })
    }

    /// Adds what every 2026-07-28 result carries (`resultType`, `_meta` server info).
    fn modernize(&self, server: &Server, answer: Answer) -> Answer {
        let info = server_info_meta(server);
        match answer {
            Answer::Result(mut result) => {
                if let Value::Object(map) = &mut result {
                    map.insert("resultType".to_owned(), json!("complete"));
                    let meta = map
                        .entry("_meta")
                        .or_insert_with(|| Value::Object(Map::new()));
                    if let Value::Object(meta) = meta {
                        meta.extend(info);
                    }
                }
                Answer::Result(result)
            }
            Answer::Tools {
                server,
                page,
                next_cursor,
                modern: _,
            } => {
                let mut extra = Map::new();
                extra.insert("resultType".to_owned(), json!("complete"));
                extra.insert("ttlMs".to_owned(), json!(self.list_ttl_ms()));
                extra.insert("cacheScope".to_owned(), json!("public"));
                extra.insert("_meta".to_owned(), Value::Object(info));
                Answer::Tools {
                    server,
                    page,
                    next_cursor,
                    modern: Some(extra),
                }
            }
            other => other,
        }
    }

    fn list_ttl_ms(&self) -> u64 {
        u64::try_from(self.config().list_ttl.as_millis()).unwrap_or(u64::MAX)
    }

    fn capabilities(connection: Connection) -> Value {
        json!({ "tools": { "listChanged": connection.list_changed } })
    }

    fn initialize(
        &self,
        server: &Server,
        params: &Map<String, Value>,
        connection: Connection,
    ) -> Answer {
        let requested = params.get("protocolVersion").and_then(Value::as_str);
        let version = requested
            .and_then(|v| LEGACY_VERSIONS.iter().find(|l| **l == v))
            .copied()
            .unwrap_or(LATEST_LEGACY_VERSION);
        let mut info = json!({ "name": server.name(), "version": server.version() });
        if let Some(title) = server.title() {
            info["title"] = json!(title);
        }
        let mut result = json!({
            "protocolVersion": version,
            "capabilities": Self::capabilities(connection),
            "serverInfo": info,
        });
        if let Some(instructions) = server.instructions() {
            result["instructions"] = json!(instructions);
        }
        Answer::Result(result)
    }

    fn discover(&self, server: &Server, connection: Connection) -> Value {
        let mut result = json!({
            "supportedVersions": SUPPORTED_VERSIONS,
            "capabilities": Self::capabilities(connection),
            "ttlMs": self.list_ttl_ms(),
            "cacheScope": "public",
        });
        if let Some(instructions) = server.instructions() {
            result["instructions"] = json!(instructions);
        }
        result
    }

    /// A page of `server`'s tools. With a listing filter, the filter picks first and the
    /// page is cut from what it picked, so every page but the last is full.
    fn list_tools(
        &self,
        server: &Server,
        params: &Map<String, Value>,
        filter: Option<&ListingFilter>,
    ) -> Answer {
        let entries = server.listing().entries();
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
                _ => return invalid_params(format!("invalid cursor {c:?} for tools/list")),
            },
            Some(other) => {
                return invalid_params(format!(
                    "`cursor` must be a string, got {}",
                    envelope::kind(other)
                ));
            }
        };
        let end = match self.config().page_size {
            Some(size) => (start + size).min(total),
            None => total,
        };
        let page = match picked {
            Some(picked) => Page::Picked(picked[start..end].iter().map(|&t| t.clone()).collect()),
            None => Page::Range { start, end },
        };
        Answer::Tools {
            server: server.clone(),
            page,
            next_cursor: (end < total).then(|| encode_cursor(end)),
            modern: None,
        }
    }

    /// Starts a `tools/call`: the call, and the emptied params map its result can reuse.
    fn call_tool(
        &self,
        server: &Server,
        mut params: Map<String, Value>,
        options: CallOptions,
        request: RequestInfo,
        spare: &mut Spare,
    ) -> Result<(CallFuture, Map<String, Value>), Answer> {
        // One pass that moves the members out (other members are ignored).
        let (mut name, mut arguments) = (None, None);
        for (key, value) in std::mem::take(&mut params) {
            match key.as_str() {
                "name" => name = Some(value),
                "arguments" => arguments = Some(value),
                _ => continue,
            }
            spare.give(key);
        }
        let name = match name {
            Some(Value::String(n)) => n,
            Some(other) => {
                return Err(invalid_params(format!(
                    "`params.name` must be a string, got {}",
                    envelope::kind(&other)
                )));
            }
            None => {
                return Err(invalid_params(
                    "tools/call requires `params.name`, the tool to call",
                ));
            }
        };
        let arguments = match arguments {
            None | Some(Value::Null) => Map::new(),
            Some(Value::Object(a)) => a,
            Some(other) => {
                return Err(invalid_params(format!(
                    "`params.arguments` of tool {name:?} must be an object, got {}",
                    envelope::kind(&other)
                )));
            }
        };
        let Some((tool, names)) = server.tool_entry(&name) else {
            return Err(invalid_params(format!("Unknown tool: {name}")));
        };
        let call = self.invoke(Target { tool, names }, arguments, options, request);
        Ok((call, params))
    }

    pub(crate) fn answer_to_value(&self, id: Value, answer: Answer) -> Option<Value> {
        self.answer_to_value_in(id, answer, &mut Shell::default())
    }

    /// [`answer_to_value`](Self::answer_to_value), reusing what `shell` holds of the request.
    pub(crate) fn answer_to_value_in(
        &self,
        id: Value,
        answer: Answer,
        shell: &mut Shell,
    ) -> Option<Value> {
        Some(match answer {
            Answer::Result(result) => result_reply_in(id, result, shell),
            Answer::Error(error) => error_reply_in(id, error, shell),
            Answer::Suppressed => return None,
            Answer::Tools {
                server,
                page,
                next_cursor,
                modern,
            } => {
                let listing = server.listing();
                let tools = match page {
                    Page::Range { start, end } if start == 0 && end == listing.entries().len() => {
                        listing.array.clone()
                    }
                    Page::Range { start, end } => {
                        Value::Array(listing.entries()[start..end].to_vec())
                    }
                    Page::Picked(tools) => Value::Array(tools),
                };
                let mut result = modern.unwrap_or_default();
                result.insert("tools".to_owned(), tools);
                if let Some(cursor) = next_cursor {
                    result.insert("nextCursor".to_owned(), Value::String(cursor));
                }
                result_reply_in(id, Value::Object(result), shell)
            }
        })
    }

    pub(crate) fn answer_to_text(
        &self,
        id: Value,
        answer: Answer,
        shell: &mut Shell,
    ) -> Option<String> {
        match answer {
            // The whole listing in one page (so no cursor): splice the text serialized once.
            Answer::Tools {
                server,
                page: Page::Range { start, end },
                modern,
                ..
            } if start == 0 && end == server.listing().entries().len() => {
                let listing = server.listing();
                let mut out = String::with_capacity(listing.text.len() + 256);
                let _ = write!(out, r#"{{"jsonrpc":"2.0","id":{id},"result":{{"tools":"#);
                out.push_str(&listing.text);
                for (k, v) in modern.unwrap_or_default() {
                    let _ = write!(out, ",{}:{v}", Value::String(k));
                }
                out.push_str("}}");
                Some(out)
            }
            other => self
                .answer_to_value_in(id, other, shell)
                .map(|v| v.to_string()),
        }
    }
}

fn server_info_meta(server: &Server) -> Map<String, Value> {
    let mut meta = Map::new();
    meta.insert(
        META_SERVER_INFO.to_owned(),
        json!({ "name": server.name(), "version": server.version() }),
    );
    meta
}
