//! Reading one incoming JSON-RPC message: a request (its era classified once, here), a
//! notification, a response, or a message to refuse. Every path (the stateless entry points,
//! sessions, transports) decodes with this one function.

use std::borrow::Cow;

use serde::{Deserialize, Deserializer};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

#[cfg(feature = "http")]
use super::ProtocolVersion;
use super::depth::member_exceeds_max_depth;
#[cfg(feature = "http")]
use super::meta::MetaRef;
use super::meta::{MetaMember, RequestMeta, Text};
use super::method;
use super::version::{Era, classify};
use super::{
    ErrorCode, ErrorObject, MAX_DEPTH, RequestId, drop_flat, exceeds_max_depth, value_kind,
};

/// One decoded incoming message.
#[derive(Debug)]
pub(crate) enum Decoded<'a> {
    Request(IncomingRequest<'a>),
    Notification(IncomingNotification),
    /// Nothing to answer: a response whose id cannot be read, or a notification that cannot
    /// be read (a notification is never answered, even when invalid).
    Silent,
    /// A response to a request the server sent (never answered; a session routes it to the
    /// request waiting for it).
    Response(IncomingResponse),
    /// A request that cannot be served, answered with this error.
    Invalid(Invalid),
}

/// A request, taken apart.
#[derive(Debug)]
pub(crate) struct IncomingRequest<'a> {
    pub(crate) id: RequestId,
    pub(crate) method: Cow<'static, str>,
    /// The params without `_meta` (empty when the request is a [`CallText`]).
    pub(crate) params: Map<String, Value>,
    /// A `tools/call` read from text: its tool name and arguments still text.
    pub(crate) call_text: Option<CallText<'a>>,
    /// `params._meta`, when it is an object.
    pub(crate) meta: Option<Box<RequestMeta>>,
    /// How it is to be served, from the version `_meta` names: computed once, read by
    /// dispatch, sessions and transports alike. `Err`: a version that cannot be served, the
    /// error to answer with (kept beside the request so that a transport can still check
    /// its headers against it first).
    pub(crate) era: Result<Era, Box<ErrorObject>>,
}

impl Decoded<'_> {
    /// The message with nothing borrowed from the text it was read from (a `tools/call`'s
    /// name and arguments copied as text, not parsed), for a caller that answers it after
    /// the text is gone.
    #[cfg(feature = "stdio")]
    pub(crate) fn into_owned(self) -> Decoded<'static> {
        match self {
            Decoded::Request(request) => Decoded::Request(request.into_owned()),
            Decoded::Notification(n) => Decoded::Notification(n),
            Decoded::Silent => Decoded::Silent,
            Decoded::Response(r) => Decoded::Response(r),
            Decoded::Invalid(i) => Decoded::Invalid(i),
        }
    }

    /// The `_meta` of a request or a notification.
    #[cfg(feature = "http")]
    pub(crate) fn meta(&self) -> Option<MetaRef<'_>> {
        match self {
            Decoded::Request(request) => request.meta.as_deref().map(MetaRef::Request),
            Decoded::Notification(n) => n
                .params
                .get("_meta")
                .and_then(Value::as_object)
                .map(MetaRef::Other),
            _ => None,
        }
    }

    /// The protocol version the message's `_meta` names, when it is a string (a request's
    /// from its era, decided when it was decoded, unless that refused it).
    #[cfg(feature = "http")]
    pub(crate) fn protocol_version(&self) -> Option<&str> {
        match self {
            Decoded::Request(IncomingRequest { era: Ok(era), .. }) => {
                era.version().map(ProtocolVersion::as_str)
            }
            _ => self.meta()?.get(super::META_PROTOCOL_VERSION)?.as_str(),
        }
    }

    /// Whether the message is a request decoded as 2026-07-28's: its `_meta` has been
    /// checked for what that revision requires.
    #[cfg(feature = "http")]
    pub(crate) fn is_modern_request(&self) -> bool {
        matches!(
            self,
            Decoded::Request(IncomingRequest {
                era: Ok(Era::Modern),
                ..
            })
        )
    }

    /// The id a reply to this message goes under, when it is a request (or a request
    /// refused with a readable id).
    #[cfg(feature = "http")]
    pub(crate) fn id(&self) -> Option<&RequestId> {
        match self {
            Decoded::Request(request) => Some(&request.id),
            Decoded::Invalid(invalid) => invalid.id.as_ref(),
            _ => None,
        }
    }
}

impl IncomingRequest<'_> {
    #[cfg(feature = "stdio")]
    fn into_owned(self) -> IncomingRequest<'static> {
        let IncomingRequest {
            id,
            method,
            params,
            call_text,
            meta,
            era,
        } = self;
        let call_text = call_text.map(|call| CallText {
            name: call.name.map(|name| Cow::Owned(name.into_owned())),
            arguments: call.arguments.map(|raw| Cow::Owned(raw.into_owned())),
            meta: None,
            retry: call.retry,
        });
        IncomingRequest {
            id,
            method: Cow::Owned(method.into_owned()),
            params,
            call_text,
            meta,
            era,
        }
    }

    /// What the request names: `params.name` (a tool or a prompt), `params.uri` (a
    /// resource) or `params.taskId` (a task), when it is a string: what the `Mcp-Name`
    /// header mirrors.
    pub(crate) fn name(&self) -> Option<&str> {
        if let Some(call) = &self.call_text {
            return call.name.as_deref();
        }
        let key = match &*self.method {
            method::RESOURCES_READ => "uri",
            method::TASKS_GET | method::TASKS_UPDATE | method::TASKS_CANCEL => "taskId",
            _ => "name",
        };
        self.params.get(key).and_then(Value::as_str)
    }

    /// A `tools/call`'s arguments as a map (read from their text when the call came as
    /// text); `None` when there are none or they are no object.
    #[cfg(feature = "http")]
    pub(crate) fn arguments(&self) -> Option<Cow<'_, Map<String, Value>>> {
        match &self.call_text {
            Some(call) => serde_json::from_str(call.arguments.as_deref()?.get())
                .ok()
                .map(Cow::Owned),
            None => self
                .params
                .get("arguments")
                .and_then(Value::as_object)
                .map(Cow::Borrowed),
        }
    }
}

/// The members of a `tools/call`'s params that the call reads, as the text they came in:
/// present members (`null` included) are `Some`.
#[derive(Debug, Default)]
pub(crate) struct CallText<'a> {
    /// Borrowed from the text unless it has escapes. (Anything but a string makes the
    /// message take the value path, which says what is wrong with it.)
    pub(crate) name: Option<Cow<'a, str>>,
    /// Borrowed from the text, or owned once the message outlives it
    /// ([`Decoded::into_owned`]).
    pub(crate) arguments: Option<Cow<'a, RawValue>>,
    /// `_meta`, read as the envelope is (one pass over its text).
    meta: Option<MetaMember>,
    /// A 2026-07-28 retry's members: such a call takes the value path, which reads them.
    retry: bool,
}

/// Read from a JSON object only (a derived struct also reads an array, by position), in
/// one pass; a member given twice fails the read (and the value path answers the message).
impl<'de: 'a, 'a> Deserialize<'de> for CallText<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Members<'a>(std::marker::PhantomData<CallText<'a>>);
        impl<'de: 'a, 'a> serde::de::Visitor<'de> for Members<'a> {
            type Value = CallText<'a>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<CallText<'a>, A::Error> {
                fn once<T, E: serde::de::Error>(
                    slot: &Option<T>,
                    name: &'static str,
                ) -> Result<(), E> {
                    match slot {
                        Some(_) => Err(E::duplicate_field(name)),
                        None => Ok(()),
                    }
                }
                let mut call = CallText::default();
                while let Some(key) = map.next_key::<&'de str>()? {
                    match key {
                        "name" => {
                            once(&call.name, "name")?;
                            call.name = Some(map.next_value::<Text<'de>>()?.0);
                        }
                        "arguments" => {
                            once(&call.arguments, "arguments")?;
                            call.arguments = Some(Cow::Borrowed(map.next_value()?));
                        }
                        "_meta" => {
                            once(&call.meta, "_meta")?;
                            call.meta = Some(map.next_value()?);
                        }
                        // A retry, or a 2025-11-25 task: the value path reads them.
                        "inputResponses" | "requestState" | "task" => {
                            map.next_value::<serde::de::IgnoredAny>()?;
                            call.retry = true;
                        }
                        _ => {
                            map.next_value::<serde::de::IgnoredAny>()?;
                        }
                    }
                }
                Ok(call)
            }
        }
        d.deserialize_map(Members(std::marker::PhantomData))
    }
}

/// A request id (`null` and fractions refused: the value path answers those).
fn id<'de, D: Deserializer<'de>>(d: D) -> Result<Option<RequestId>, D::Error> {
    RequestId::deserialize(d).map(Some)
}

/// A notification, taken apart.
#[derive(Debug)]
pub(crate) struct IncomingNotification {
    pub(crate) method: String,
    pub(crate) params: Map<String, Value>,
}

/// A response, taken apart: its id and its `result` or `error` member.
#[derive(Debug)]
pub(crate) struct IncomingResponse {
    /// `None` only for an error that names no request (`"id": null`: the peer could not
    /// read what it answers).
    pub(crate) id: Option<RequestId>,
    pub(crate) result: Option<Value>,
    pub(crate) error: Option<Value>,
}

/// A message refused, with the id to answer it under (`None` when it cannot be read).
#[derive(Debug)]
pub(crate) struct Invalid {
    pub(crate) id: Option<RequestId>,
    pub(crate) error: ErrorObject,
}

impl Invalid {
    fn new(id: Option<RequestId>, code: ErrorCode, message: impl Into<String>) -> Self {
        Invalid {
            id,
            error: ErrorObject::new(code, message),
        }
    }
}

/// Decodes one message (not a batch: an array is refused here; callers that serve batches
/// split them first), moving its members out rather than copying them. A message nesting
/// deeper than [`MAX_DEPTH`] is refused (see [`too_deep`]), its depth checked member by
/// member as the members are taken apart.
pub(crate) fn decode(message: Value) -> Decoded<'static> {
    decode_members(message, true)
}

/// [`decode`] for a value `serde_json` parsed from text, which never nests deeper than
/// [`MAX_DEPTH`]: the depth walk is skipped.
pub(crate) fn decode_parsed(message: Value) -> Decoded<'static> {
    decode_members(message, false)
}

fn decode_members(message: Value, check_depth: bool) -> Decoded<'static> {
    let map = match message {
        Value::Object(map) => map,
        Value::Array(_) if check_depth && exceeds_max_depth(&message) => return too_deep(message),
        _ => {
            return Decoded::Invalid(Invalid::new(
                None,
                ErrorCode::INVALID_REQUEST,
                format!(
                    "a JSON-RPC message must be an object, got {}",
                    value_kind(&message)
                ),
            ));
        }
    };
    let (mut id, mut jsonrpc, mut method, mut params) = (None, None, None, None);
    let (mut result, mut error) = (None, None);
    let mut deep = false;
    for (key, value) in map {
        let member_deep = check_depth && member_exceeds_max_depth(&value);
        deep |= member_deep;
        match key.as_str() {
            "id" => id = Some(value),
            "jsonrpc" => jsonrpc = Some(value),
            "method" => method = Some(value),
            "params" => params = Some(value),
            "result" => result = Some(value),
            "error" => error = Some(value),
            _ if member_deep => drop_flat(value),
            _ => {}
        }
    }
    if deep {
        return refuse_deep(
            id,
            method.is_some(),
            [jsonrpc, method, params, result, error],
        );
    }
    // A response (no `method`; `result` or `error`) is never answered, whatever its id, and
    // neither is a notification (a `method` and no `id` member), even one that is invalid.
    if method.is_none() && (result.is_some() || error.is_some()) {
        return response(jsonrpc, id, result, error);
    }
    let Some(raw_id) = id else {
        return match (method.is_some(), notification(jsonrpc, method, params)) {
            (_, Some(n)) => Decoded::Notification(n),
            (true, None) => Decoded::Silent,
            (false, None) => Decoded::Invalid(Invalid::new(
                None,
                ErrorCode::INVALID_REQUEST,
                "not a JSON-RPC message: it has no `method`, `result` or `error`",
            )),
        };
    };
    let Some(id) = RequestId::from_value(&raw_id) else {
        return Decoded::Invalid(Invalid::new(
            None,
            ErrorCode::INVALID_REQUEST,
            format!(
                "`id` must be a string or an integer, got {}",
                value_kind(&raw_id)
            ),
        ));
    };
    match request(jsonrpc, method, params) {
        Ok((method, params, meta, era)) => Decoded::Request(IncomingRequest {
            id,
            method,
            params,
            call_text: None,
            meta,
            era,
        }),
        Err(error) => invalid_request(id, error),
    }
}

/// A response: read when it says `jsonrpc: "2.0"` and has a readable id (or is an error
/// naming no request), dropped otherwise.
fn response(
    jsonrpc: Option<Value>,
    id: Option<Value>,
    result: Option<Value>,
    error: Option<Value>,
) -> Decoded<'static> {
    if !matches!(&jsonrpc, Some(Value::String(v)) if v == "2.0") {
        return Decoded::Silent;
    }
    match id.as_ref().and_then(RequestId::from_value) {
        Some(id) => Decoded::Response(IncomingResponse {
            id: Some(id),
            result,
            error,
        }),
        None if error.is_some() => Decoded::Response(IncomingResponse {
            id: None,
            result: None,
            error,
        }),
        None => Decoded::Silent,
    }
}

/// What a request has besides its id: its method, params (without `_meta`), `_meta` and era.
type RequestParts = (
    Cow<'static, str>,
    Map<String, Value>,
    Option<Box<RequestMeta>>,
    Result<Era, Box<ErrorObject>>,
);

/// The rest of a request with a readable id.
fn request(
    jsonrpc: Option<Value>,
    method: Option<Value>,
    params: Option<Value>,
) -> Result<RequestParts, ErrorObject> {
    let invalid = |message: String| ErrorObject::new(ErrorCode::INVALID_REQUEST, message);
    match jsonrpc {
        Some(Value::String(v)) if v == "2.0" => {}
        Some(other) => return Err(invalid(format!("`jsonrpc` must be \"2.0\", got {other}"))),
        None => return Err(invalid("`jsonrpc` is missing; it must be \"2.0\"".into())),
    }
    let method = match method {
        Some(Value::String(m)) => Cow::Owned(m),
        Some(other) => {
            return Err(invalid(format!(
                "`method` must be a string, got {}",
                value_kind(&other)
            )));
        }
        None => return Err(invalid("`method` is missing".into())),
    };
    let mut params = match params {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(p)) => p,
        Some(other) => {
            return Err(ErrorObject::new(
                ErrorCode::INVALID_PARAMS,
                format!(
                    "`params` of {method} must be an object, got {}",
                    value_kind(&other)
                ),
            ));
        }
    };
    let (meta, era) = match params.remove("_meta") {
        None | Some(Value::Null) => (None, classify(&method, None).map_err(Box::new)),
        Some(Value::Object(meta)) => {
            let meta = Box::new(RequestMeta::from(meta));
            let era = classify(&method, Some(&meta)).map_err(Box::new);
            (Some(meta), era)
        }
        Some(_) => return Err(meta_not_an_object()),
    };
    Ok((method, params, meta, era))
}

/// A notification's method and params, or `None` when it cannot be read.
fn notification(
    jsonrpc: Option<Value>,
    method: Option<Value>,
    params: Option<Value>,
) -> Option<IncomingNotification> {
    let (Some(Value::String(version)), Some(Value::String(method))) = (jsonrpc, method) else {
        return None;
    };
    let params = match params {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(p)) => p,
        Some(_) => return None,
    };
    (version == "2.0").then_some(IncomingNotification { method, params })
}

/// A message nesting deeper than [`MAX_DEPTH`]: a request (or a batch) is refused with
/// -32600 under its id when readable; a notification or response is dropped unanswered.
/// Dropped without recursion, before any recursive code can overflow the stack on it.
pub(crate) fn too_deep(message: Value) -> Decoded<'static> {
    let request =
        message.is_array() || (message.get("method").is_some() && message.get("id").is_some());
    let id = message.get("id").and_then(RequestId::from_value);
    drop_flat(message);
    refused_as_too_deep(request, id)
}

/// [`too_deep`] for a message already taken apart: its `id` and whether it has a `method`,
/// and the members it kept.
fn refuse_deep<const N: usize>(
    id: Option<Value>,
    has_method: bool,
    members: [Option<Value>; N],
) -> Decoded<'static> {
    let request = has_method && id.is_some();
    let id = id.and_then(|id| {
        let read = RequestId::from_value(&id);
        drop_flat(id);
        read
    });
    members.into_iter().flatten().for_each(drop_flat);
    refused_as_too_deep(request, id)
}

fn refused_as_too_deep(request: bool, id: Option<RequestId>) -> Decoded<'static> {
    if !request {
        return Decoded::Silent;
    }
    Decoded::Invalid(Invalid::new(
        id,
        ErrorCode::INVALID_REQUEST,
        format!("the message nests arrays and objects deeper than {MAX_DEPTH} levels"),
    ))
}

/// Decodes one message from its text, answering exactly as [`decode`] would answer the value
/// it parses to. A well-formed `tools/call` is read in place: its envelope borrowed from
/// `text`, its arguments left as text for the tool to read into its own types. Any other
/// message is parsed into a value first. `Err` when `text` is not JSON (or nests deeper
/// than [`MAX_DEPTH`]).
#[inline]
pub(crate) fn decode_text(text: &str) -> Result<TextMessage<'_>, serde_json::Error> {
    if let Some(call) = call_from_text(text) {
        return Ok(TextMessage::One(call));
    }
    Ok(match serde_json::from_str(text)? {
        Value::Array(batch) => TextMessage::Batch(batch),
        message => TextMessage::One(decode_parsed(message)),
    })
}

/// A message read from text: one message, or a batch for the caller to serve (it knows
/// whether its revision has batches).
pub(crate) enum TextMessage<'a> {
    One(Decoded<'a>),
    Batch(Vec<Value>),
}

/// A request's envelope, its params read as a `tools/call`'s. Only these members: a message
/// with others takes the value path (which answers it, whatever they hold).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Envelope<'a> {
    /// Empty when missing (and the parse fails, for the value path, when it is no plain
    /// string: `null`, a number, escapes).
    #[serde(default)]
    jsonrpc: &'a str,
    #[serde(default, deserialize_with = "id")]
    id: Option<RequestId>,
    #[serde(default)]
    method: &'a str,
    /// No params read as `{}`, as the value path reads them.
    #[serde(borrow, default)]
    params: CallText<'a>,
}

/// `text` as a `tools/call` request read in place, or `None` for anything else (and for
/// a call that is not plainly written: those take the value path, which answers them).
///
/// Read in one pass: members the call does not read are skipped without being built,
/// and the arguments are kept as text. So that this path refuses exactly the messages a
/// parse into a value refuses, a text long enough to nest deeper than [`MAX_DEPTH`] is
/// scanned for its depth first.
fn call_from_text(text: &str) -> Option<Decoded<'_>> {
    if !text.trim_ascii_start().starts_with('{')
        // Nesting `d` levels takes at least `2 * d` bytes.
        || (text.len() > 2 * MAX_DEPTH && nesting(text) > MAX_DEPTH)
    {
        return None;
    }
    let envelope: Envelope<'_> = serde_json::from_str(text).ok()?;
    if envelope.jsonrpc != "2.0" || envelope.method != method::TOOLS_CALL {
        return None;
    }
    let id = envelope.id?;
    if envelope.params.retry {
        return None;
    }
    let mut call = envelope.params;
    let meta = match call.meta.take() {
        None | Some(MetaMember::Null) => None,
        Some(MetaMember::Object(meta)) => Some(meta),
        Some(MetaMember::NotAnObject) => return Some(invalid_request(id, meta_not_an_object())),
    };
    let era = classify(method::TOOLS_CALL, meta.as_deref()).map_err(Box::new);
    Some(Decoded::Request(IncomingRequest {
        id,
        method: Cow::Borrowed(method::TOOLS_CALL),
        params: Map::new(),
        call_text: Some(call),
        meta,
        era,
    }))
}

fn invalid_request(id: RequestId, error: ErrorObject) -> Decoded<'static> {
    Decoded::Invalid(Invalid {
        id: Some(id),
        error,
    })
}

fn meta_not_an_object() -> ErrorObject {
    ErrorObject::new(
        ErrorCode::INVALID_PARAMS,
        "`params._meta` must be an object",
    )
}

/// How deep the JSON text `text` (valid JSON) nests arrays and objects.
fn nesting(text: &str) -> usize {
    let (mut depth, mut deepest) = (0usize, 0usize);
    let (mut in_string, mut escaped) = (false, false);
    for byte in text.bytes() {
        if in_string {
            match byte {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match byte {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    deepest
}

/// How a JSON value written as `raw` reads in a message: [`kind`] without parsing it.
pub(crate) fn raw_kind(raw: &RawValue) -> &'static str {
    match raw.get().as_bytes().first() {
        Some(b'n') => "null",
        Some(b't' | b'f') => "a boolean",
        Some(b'"') => "a string",
        Some(b'[') => "an array",
        Some(b'{') => "an object",
        _ if raw.get().contains(['.', 'e', 'E']) => "a number",
        _ => "an integer",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nesting_counts_brackets_outside_strings() {
        assert_eq!(nesting("1"), 0);
        assert_eq!(nesting(r#"{"a": [1, {"b": "[[[\"{"}]}"#), 3);
        assert_eq!(nesting(r#"["\\", [[]]]"#), 3);
    }

    #[test]
    fn only_plain_object_calls_take_the_text_path() {
        let call = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a"}}"#;
        assert!(matches!(call_from_text(call), Some(Decoded::Request(_))));
        for text in [
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":["a",{}]}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":null}"#,
            r#"{"jsonrpc":null,"id":1,"method":"tools/call","params":{}}"#,
            r#"{"jsonrpc":"2.0","id":null,"method":"tools/call","params":{}}"#,
            r#"{"jsonrpc":"2.0","method":"tools/call","params":{}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools\/call","params":{}}"#,
            r#"{"jsonrpc":"2.0","id":1.5,"method":"tools/call","params":{}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{},"x":1}"#,
            r#"{"jsonrpc":"2.0","id":1,"id":2,"method":"tools/call","params":{}}"#,
        ] {
            assert!(call_from_text(text).is_none(), "{text}");
        }
    }

    #[test]
    fn raw_kind_matches_kind() {
        for text in ["null", "true", "false", "\"s\"", "[1]", "{}", "1", "-2.5"] {
            let raw: &RawValue = serde_json::from_str(text).unwrap();
            let value: Value = serde_json::from_str(text).unwrap();
            assert_eq!(raw_kind(raw), value_kind(&value), "{text}");
        }
    }
}
