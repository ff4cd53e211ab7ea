//! Reading one JSON-RPC message and writing replies.

use serde_json::{Map, Value};

use crate::protocol::{ErrorCode, ErrorObject, MAX_DEPTH, RequestId, drop_flat, exceeds_max_depth};

/// One decoded incoming message.
#[derive(Debug)]
pub(crate) enum Incoming {
    Request {
        id: RequestId,
        method: String,
        params: Map<String, Value>,
    },
    Notification {
        method: String,
        params: Map<String, Value>,
    },
    /// A reply to something we sent, or a notification that cannot be read; nothing to
    /// answer.
    Response,
}

/// A message that cannot be processed, with the id to answer it under (`null` when unknown).
pub(crate) struct Rejected {
    pub(crate) id: Value,
    pub(crate) error: ErrorObject,
}

impl Rejected {
    fn new(id: Value, code: ErrorCode, message: impl Into<String>) -> Self {
        Rejected {
            id,
            error: ErrorObject::new(code, message),
        }
    }
}

/// What a reply can reuse of the request it answers, so that answering allocates less: the
/// strings freed from it (every member name of a `Map` is its own `String`). The envelope's
/// names are kept by role; other strings go to [`Spare`], for the result's member names.
#[derive(Default)]
pub(crate) struct Shell {
    jsonrpc: String,
    version: String,
    id: String,
    /// `"method"`: becomes `"result"` or `"error"`.
    outcome: String,
    pub(crate) spare: Spare,
}

/// A few strings kept for reuse (at most [`SPARE_SLOTS`]; more are dropped).
#[derive(Default)]
pub(crate) struct Spare {
    slots: [String; SPARE_SLOTS],
}

const SPARE_SLOTS: usize = 4;

/// `text` in `s` if it fits (no allocation), else a new string. Inlined: `text` is a constant
/// at every call, so the copy is a few moves.
#[inline(always)]
fn reuse(s: &mut String, text: &str) -> String {
    if s.capacity() >= text.len() {
        let mut s = std::mem::take(s);
        s.clear();
        s.push_str(text);
        s
    } else {
        text.to_owned()
    }
}

impl Spare {
    /// Keeps `s` for reuse when there is room (else drops it).
    pub(crate) fn give(&mut self, s: String) {
        if let Some(slot) = self.slots.iter_mut().find(|slot| slot.capacity() == 0) {
            *slot = s;
        }
    }

    /// `text` as a `String`, in the first kept string it fits (or a new one).
    #[inline]
    pub(crate) fn take(&mut self, text: &str) -> String {
        match self.slots.iter_mut().find(|s| s.capacity() >= text.len()) {
            Some(slot) => reuse(slot, text),
            None => text.to_owned(),
        }
    }
}

/// A decoded request with what its reply can reuse.
pub(crate) struct Request {
    pub(crate) id: RequestId,
    /// The id exactly as it came in: what the reply is sent under.
    pub(crate) raw_id: Value,
    pub(crate) method: String,
    pub(crate) params: Map<String, Value>,
}

/// One decoded incoming message, keeping a request's parts for its reply.
pub(crate) enum Decoded {
    Request(Request),
    Notification {
        method: String,
        params: Map<String, Value>,
    },
    /// A reply to something we sent; nothing to answer.
    Response,
    /// A notification that cannot be read (bad `jsonrpc`, `method` or `params`): dropped, as
    /// a notification is never answered.
    Ignored,
}

pub(crate) fn decode(message: Value) -> Result<Incoming, Rejected> {
    let Some(message) = check_depth(message)? else {
        return Ok(Incoming::Response);
    };
    Ok(match decode_message(message, &mut Shell::default())? {
        Decoded::Request(r) => Incoming::Request {
            id: r.id,
            method: r.method,
            params: r.params,
        },
        Decoded::Notification { method, params } => Incoming::Notification { method, params },
        Decoded::Response | Decoded::Ignored => Incoming::Response,
    })
}

/// Decodes one message, moving its members out (not copying them) and keeping what a reply
/// can reuse in `shell`.
pub(crate) fn decode_message(message: Value, shell: &mut Shell) -> Result<Decoded, Rejected> {
    let Value::Object(map) = message else {
        return Err(Rejected::new(
            Value::Null,
            ErrorCode::INVALID_REQUEST,
            format!(
                "a JSON-RPC message must be an object, got {}",
                kind(&message)
            ),
        ));
    };
    // One pass that moves the members out: cheaper than searching and removing each one.
    let (mut raw_id, mut jsonrpc, mut method, mut params) = (None, None, None, None);
    let mut is_response = false;
    for (key, value) in map {
        match key.as_str() {
            "id" => (raw_id, shell.id) = (Some(value), key),
            "jsonrpc" => (jsonrpc, shell.jsonrpc) = (Some(value), key),
            "method" => (method, shell.outcome) = (Some(value), key),
            "params" => {
                params = Some(value);
                shell.spare.give(key);
            }
            "result" | "error" => is_response = true,
            _ => {}
        }
    }
    // A response (no `method`; `result` or `error`) is never answered, whatever its id, and
    // neither is a notification (a `method` and no `id` member), even one that is invalid.
    if method.is_none() && is_response {
        return Ok(Decoded::Response);
    }
    if raw_id.is_none() && method.is_some() {
        return Ok(match notification(jsonrpc, method, params) {
            Some((method, params)) => Decoded::Notification { method, params },
            None => Decoded::Ignored,
        });
    }
    let Some(raw_id) = raw_id else {
        return Err(Rejected::new(
            Value::Null,
            ErrorCode::INVALID_REQUEST,
            "not a JSON-RPC message: it has no `method`, `result` or `error`",
        ));
    };
    let Some(id) = RequestId::from_value(&raw_id) else {
        return Err(Rejected::new(
            Value::Null,
            ErrorCode::INVALID_REQUEST,
            format!("`id` must be a string or an integer, got {}", kind(&raw_id)),
        ));
    };
    let reply_id = || raw_id.clone();
    match jsonrpc {
        Some(Value::String(v)) if v == "2.0" => shell.version = v,
        Some(other) => {
            return Err(Rejected::new(
                reply_id(),
                ErrorCode::INVALID_REQUEST,
                format!("`jsonrpc` must be \"2.0\", got {other}"),
            ));
        }
        None => {
            return Err(Rejected::new(
                reply_id(),
                ErrorCode::INVALID_REQUEST,
                "`jsonrpc` is missing; it must be \"2.0\"",
            ));
        }
    }
    let method = match method {
        Some(Value::String(m)) => m,
        Some(other) => {
            return Err(Rejected::new(
                reply_id(),
                ErrorCode::INVALID_REQUEST,
                format!("`method` must be a string, got {}", kind(&other)),
            ));
        }
        None => {
            return Err(Rejected::new(
                reply_id(),
                ErrorCode::INVALID_REQUEST,
                "`method` is missing",
            ));
        }
    };
    let params = match params {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(p)) => p,
        Some(other) => {
            return Err(Rejected::new(
                reply_id(),
                ErrorCode::INVALID_PARAMS,
                format!(
                    "`params` of {method} must be an object, got {}",
                    kind(&other)
                ),
            ));
        }
    };
    Ok(Decoded::Request(Request {
        id,
        raw_id,
        method,
        params,
    }))
}

/// Refuses a message nesting deeper than [`MAX_DEPTH`] (-32600, under its id when readable;
/// a response or notification that deep is dropped unanswered), before any recursive code
/// (clone, serialization) can overflow the stack on it.
pub(crate) fn check_depth(message: Value) -> Result<Option<Value>, Rejected> {
    if !exceeds_max_depth(&message) {
        return Ok(Some(message));
    }
    // A request (or a batch) is answered; a notification or a response is not.
    let request =
        message.is_array() || (message.get("method").is_some() && message.get("id").is_some());
    let id = message
        .get("id")
        .filter(|id| RequestId::from_value(id).is_some())
        .cloned()
        .unwrap_or(Value::Null);
    drop_flat(message);
    if !request {
        return Ok(None);
    }
    Err(Rejected::new(
        id,
        ErrorCode::INVALID_REQUEST,
        format!("the message nests arrays and objects deeper than {MAX_DEPTH} levels"),
    ))
}

/// A notification's method and params, or `None` when it cannot be read.
fn notification(
    jsonrpc: Option<Value>,
    method: Option<Value>,
    params: Option<Value>,
) -> Option<(String, Map<String, Value>)> {
    let (Some(Value::String(version)), Some(Value::String(method))) = (jsonrpc, method) else {
        return None;
    };
    let params = match params {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(p)) => p,
        Some(_) => return None,
    };
    (version == "2.0").then_some((method, params))
}

pub(crate) fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// An error reply. When the request's id is unknown the `id` member is left out: MCP's schema
/// (2025-11-25 onward) makes it optional but does not allow `null`.
pub(crate) fn error_reply(id: Value, error: ErrorObject) -> Value {
    error_reply_in(id, error, &mut Shell::default())
}

/// [`error_reply`], reusing what `shell` holds.
pub(crate) fn error_reply_in(id: Value, error: ErrorObject, shell: &mut Shell) -> Value {
    let mut error_map = Map::new();
    error_map.insert(shell.spare.take("code"), Value::from(error.code));
    if let Some(data) = error.data {
        error_map.insert(shell.spare.take("data"), data);
    }
    error_map.insert(shell.spare.take("message"), Value::String(error.message));
    envelope(id, "error", Value::Object(error_map), shell)
}

/// A success reply, reusing what `shell` holds. The result is moved in, never re-serialized
/// (`json!` would deep-copy it).
pub(crate) fn result_reply_in(id: Value, result: Value, shell: &mut Shell) -> Value {
    envelope(id, "result", result, shell)
}

fn envelope(id: Value, key: &str, payload: Value, shell: &mut Shell) -> Value {
    let mut map = Map::new();
    // In key order, so each insertion appends.
    if !id.is_null() {
        map.insert(reuse(&mut shell.id, "id"), id);
    }
    map.insert(
        reuse(&mut shell.jsonrpc, "jsonrpc"),
        Value::String(reuse(&mut shell.version, "2.0")),
    );
    map.insert(reuse(&mut shell.outcome, key), payload);
    Value::Object(map)
}

pub(crate) fn parse_error(detail: impl std::fmt::Display) -> Value {
    error_reply(
        Value::Null,
        ErrorObject::new(ErrorCode::PARSE_ERROR, format!("parse error: {detail}")),
    )
}
