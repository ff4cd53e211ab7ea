//! What the machine receives: every incoming message classified, handshake replies
//! turned into [`Handshake`] steps.

use serde_json::{Map, Value};

use crate::protocol::decode::{self, IncomingResponse, Invalid, TextMessage, decode, decode_text};
use crate::protocol::{
    DiscoverResult, ErrorCode, ErrorObject, Implementation, InitializeResult, META_SERVER_INFO,
    ProtocolEra, ProtocolVersion, UnsupportedVersionData, method,
};

use super::*;

impl ClientMachine {
    // ----- incoming ---------------------------------------------------------------------

    /// Classifies a message given as JSON text. Never panics.
    pub fn handle_text(&mut self, text: &str) -> Incoming {
        match decode_text(text) {
            Ok(TextMessage::One(message)) => self.classify(message),
            Ok(TextMessage::Batch(_)) => malformed("a JSON-RPC batch: a client is sent none"),
            Err(e) => Incoming::NotOurs(NotOurs::Malformed(format!("not JSON: {e}"))),
        }
    }

    /// Classifies one incoming message. Never panics, whatever the peer sent.
    pub fn handle(&mut self, message: Value) -> Incoming {
        if message.is_array() {
            crate::protocol::drop_flat(message);
            return malformed("a JSON-RPC batch: a client is sent none");
        }
        self.classify(decode(message))
    }

    /// A message decoded by the envelope decoder the server side uses
    /// ([`crate::protocol::decode`]), sorted for the client.
    fn classify(&mut self, message: decode::Decoded<'_>) -> Incoming {
        match message {
            decode::Decoded::Request(request) => {
                let mut params = request.params;
                if let Some(meta) = request.meta {
                    params.insert("_meta".to_owned(), Value::Object(meta.into_map()));
                }
                Incoming::Request(ServerRequest {
                    id: request.id,
                    kind: server_request(request.method.into_owned(), params),
                })
            }
            decode::Decoded::Notification(n) => {
                Incoming::Notification(notification(n.method, n.params))
            }
            decode::Decoded::Response(response) => self.reply(response),
            // A request whose params cannot be read is answered with the error, under its
            // id; anything else unreadable is not ours.
            decode::Decoded::Invalid(Invalid {
                id: Some(id),
                error,
            }) if error.code == ErrorCode::INVALID_PARAMS => Incoming::Request(ServerRequest {
                id,
                kind: ServerRequestKind::Invalid {
                    method: String::new(),
                    error,
                },
            }),
            decode::Decoded::Invalid(Invalid { error, .. }) => malformed(error.message),
            decode::Decoded::Silent => {
                malformed("an unreadable notification, or a response with no readable id")
            }
        }
    }

    fn reply(&mut self, response: IncomingResponse) -> Incoming {
        let IncomingResponse { id, result, error } = response;
        if let Some(error) = error {
            let error = match serde_json::from_value::<ErrorObject>(error) {
                Ok(e) => e,
                Err(e) => return malformed(format!("unreadable `error`: {e}")),
            };
            let Some(id) = id else {
                return Incoming::Error {
                    id: None,
                    method: None,
                    error,
                };
            };
            let Some(pending) = self.pending.remove(&id) else {
                return Incoming::NotOurs(NotOurs::UnknownId(id));
            };
            if self.in_handshake(&pending.method) {
                return Incoming::Handshake {
                    step: self.handshake_error(&pending.method, error),
                    id,
                };
            }
            return Incoming::Error {
                id: Some(id),
                method: Some(pending.method),
                error,
            };
        }
        let Some(result) = result else {
            return malformed("a message with no `method`, `result` or `error`");
        };
        let Some(id) = id else {
            return malformed("a result with no readable id");
        };
        let Some(pending) = self.pending.remove(&id) else {
            return Incoming::NotOurs(NotOurs::UnknownId(id));
        };
        match pending.method.as_str() {
            method::INITIALIZE if self.in_handshake(method::INITIALIZE) => Incoming::Handshake {
                id,
                step: self.initialize_result(result),
            },
            method::DISCOVER if self.in_handshake(method::DISCOVER) => Incoming::Handshake {
                id,
                step: self.discover_result(result),
            },
            _ => {
                self.learn_server_info(&result);
                Incoming::Response {
                    id,
                    method: pending.method,
                    result,
                }
            }
        }
    }

    /// Whether a reply to `method` is a handshake step (a `server/discover` once ready is a
    /// plain request: the 2026-07-28 liveness check).
    fn in_handshake(&self, method: &str) -> bool {
        self.lifecycle == ClientLifecycle::Initializing
            && (method == method::INITIALIZE || method == method::DISCOVER)
    }

    /// A 2026-07-28 result names the server in `_meta`: keep the latest.
    fn learn_server_info(&mut self, result: &Value) {
        if self.era() != Some(ProtocolEra::Modern) {
            return;
        }
        if let Some(info) = result
            .get("_meta")
            .and_then(|m| m.get(META_SERVER_INFO))
            .and_then(|i| serde_json::from_value::<Implementation>(i.clone()).ok())
        {
            self.server_info = Some(info);
        }
    }

    fn fail(&mut self, reason: String) -> Handshake {
        self.lifecycle = ClientLifecycle::Error(reason.clone());
        Handshake::Failed(reason)
    }

    fn initialize_result(&mut self, result: Value) -> Handshake {
        if self.lifecycle != ClientLifecycle::Initializing {
            return Handshake::Failed("an initialize result outside the handshake".into());
        }
        let offered = result
            .get("protocolVersion")
            .and_then(Value::as_str)
            .map(str::to_owned);
        let parsed = match serde_json::from_value::<InitializeResult>(result) {
            Ok(r) => r,
            Err(e) => {
                let reason = match offered {
                    Some(v) if ProtocolVersion::parse(&v).is_none() => {
                        format!(
                            "the server speaks protocol version {v:?}, which this client does not"
                        )
                    }
                    _ => format!("unreadable initialize result: {e}"),
                };
                return self.fail(reason);
            }
        };
        let version = parsed.protocol_version;
        let pinned = matches!(self.config.version, VersionPreference::Exactly(v) if v.era() == ProtocolEra::Legacy);
        if version.era() != ProtocolEra::Legacy || (pinned && version > self.legacy_request) {
            return self.fail(format!(
                "the server answered initialize with protocol version {version}, not one asked for"
            ));
        }
        self.negotiated = Some(version);
        self.server_info = Some(parsed.server_info.clone());
        self.server_capabilities = Some(parsed.capabilities.clone());
        self.instructions = parsed.instructions.clone();
        self.initialize_answered = true;
        Handshake::Initialized(Box::new(parsed))
    }

    fn discover_result(&mut self, result: Value) -> Handshake {
        if self.lifecycle != ClientLifecycle::Initializing {
            return Handshake::Failed("a server/discover result outside the handshake".into());
        }
        let server_info = result
            .get("_meta")
            .and_then(|m| m.get(META_SERVER_INFO))
            .or_else(|| result.get("serverInfo"))
            .and_then(|i| serde_json::from_value::<Implementation>(i.clone()).ok());
        let parsed = match serde_json::from_value::<DiscoverResult>(result) {
            Ok(r) => r,
            Err(e) => {
                return self.fall_back(format!("unreadable server/discover result: {e}"));
            }
        };
        if parsed.supported_versions.contains(&self.modern_request) {
            self.negotiated = Some(self.modern_request);
            self.server_info = server_info;
            self.server_capabilities = Some(parsed.capabilities.clone());
            self.instructions = parsed.instructions.clone();
            self.lifecycle = ClientLifecycle::Ready;
            return Handshake::Discovered(Box::new(parsed));
        }
        match parsed
            .supported_versions
            .iter()
            .copied()
            .filter(|v| v.era() == ProtocolEra::Legacy)
            .max()
        {
            Some(v) if self.config.version == VersionPreference::Auto => {
                self.legacy_request = v;
                self.fall_back(format!("the server prefers legacy version {v}"))
            }
            _ => self.fail("the server supports no protocol version this client speaks".into()),
        }
    }

    fn fall_back(&mut self, reason: String) -> Handshake {
        if self.config.version != VersionPreference::Auto {
            return self.fail(reason);
        }
        self.lifecycle = ClientLifecycle::Uninitialized;
        Handshake::FallBackToInitialize {
            version: self.legacy_request,
            reason,
        }
    }

    fn handshake_error(&mut self, method: &str, error: ErrorObject) -> Handshake {
        if method == method::INITIALIZE {
            return self.fail(format!("initialize failed: {error}"));
        }
        // A recognized modern error means a modern server: never fall back on it.
        if error.code == ErrorCode::UNSUPPORTED_PROTOCOL_VERSION {
            let data: UnsupportedVersionData = error
                .data
                .clone()
                .and_then(|d| serde_json::from_value(d).ok())
                .unwrap_or_default();
            let supported: Vec<ProtocolVersion> = data
                .supported
                .iter()
                .filter_map(|v| ProtocolVersion::parse(v))
                .collect();
            if supported.contains(&ProtocolVersion::MODERN) {
                self.modern_request = ProtocolVersion::MODERN;
                self.lifecycle = ClientLifecycle::Uninitialized;
                return Handshake::RetryDiscover;
            }
            return match supported
                .into_iter()
                .filter(|v| v.era() == ProtocolEra::Legacy)
                .max()
            {
                Some(v) if self.config.version == VersionPreference::Auto => {
                    self.legacy_request = v;
                    self.fall_back(format!("the server supports legacy version {v}"))
                }
                _ => self.fail(format!(
                    "the server supports no protocol version this client speaks: {:?}",
                    data.supported
                )),
            };
        }
        if error.code == ErrorCode::HEADER_MISMATCH {
            return self.fail(format!("server/discover refused: {error}"));
        }
        self.fall_back(format!("server/discover refused: {error}"))
    }

    /// A handshake request that got no answer in time (reported by
    /// [`check_timeouts`](ClientMachine::check_timeouts); the stdio probe: legacy servers may
    /// stay silent on `server/discover`). Falls back to `initialize` (both eras) or fails.
    pub fn handshake_timed_out(&mut self, timed_out: &TimedOut) -> Handshake {
        self.pending.remove(&timed_out.id);
        match timed_out.method.as_str() {
            method::DISCOVER => self.fall_back("server/discover went unanswered".into()),
            _ => self.fail("the handshake went unanswered".into()),
        }
    }
}

fn malformed(reason: impl Into<String>) -> Incoming {
    Incoming::NotOurs(NotOurs::Malformed(reason.into()))
}

pub(crate) fn server_request(method: String, params: Map<String, Value>) -> ServerRequestKind {
    fn typed<T: serde::de::DeserializeOwned>(
        method: String,
        params: Map<String, Value>,
        wrap: impl FnOnce(T) -> ServerRequestKind,
    ) -> ServerRequestKind {
        match serde_json::from_value::<T>(Value::Object(params)) {
            Ok(p) => wrap(p),
            Err(e) => ServerRequestKind::Invalid {
                error: ErrorObject::new(
                    ErrorCode::INVALID_PARAMS,
                    format!("invalid params of {method}: {e}"),
                ),
                method,
            },
        }
    }
    match method.as_str() {
        method::PING => ServerRequestKind::Ping,
        method::ROOTS_LIST => ServerRequestKind::ListRoots,
        method::SAMPLING_CREATE_MESSAGE => typed(method, params, |p| {
            ServerRequestKind::CreateMessage(Box::new(p))
        }),
        method::ELICITATION_CREATE => {
            typed(method, params, |p| ServerRequestKind::Elicit(Box::new(p)))
        }
        _ => ServerRequestKind::Other { method, params },
    }
}

fn notification(method: String, params: Map<String, Value>) -> ServerNotification {
    fn typed<T: serde::de::DeserializeOwned>(
        method: String,
        params: Map<String, Value>,
        wrap: impl FnOnce(T) -> ServerNotification,
    ) -> ServerNotification {
        match serde_json::from_value::<T>(Value::Object(params.clone())) {
            Ok(p) => wrap(p),
            Err(_) => ServerNotification::Other { method, params },
        }
    }
    match method.as_str() {
        method::PROGRESS => typed(method, params, ServerNotification::Progress),
        method::LOGGING_MESSAGE => typed(method, params, ServerNotification::Log),
        method::TOOLS_LIST_CHANGED => ServerNotification::ToolsListChanged,
        method::PROMPTS_LIST_CHANGED => ServerNotification::PromptsListChanged,
        method::RESOURCES_LIST_CHANGED => ServerNotification::ResourcesListChanged,
        method::RESOURCES_UPDATED => typed(method, params, ServerNotification::ResourceUpdated),
        method::CANCELLED => typed(method, params, ServerNotification::Cancelled),
        _ => ServerNotification::Other { method, params },
    }
}
