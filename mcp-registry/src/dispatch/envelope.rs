//! Reading one JSON-RPC message and writing replies.

use serde_json::{Map, Value};

use crate::protocol::{ErrorCode, ErrorObject, RequestId};

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
    /// A reply to something we sent; nothing to answer.
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

pub(crate) fn decode(message: Value) -> Result<Incoming, Rejected> {
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
            "id" => raw_id = Some(value),
            "jsonrpc" => jsonrpc = Some(value),
            "method" => method = Some(value),
            "params" => params = Some(value),
            "result" | "error" => is_response = true,
            _ => {}
        }
    }
    let id = match &raw_id {
        None => None,
        Some(v) => match RequestId::from_value(v) {
            Some(id) => Some(id),
            None => {
                return Err(Rejected::new(
                    Value::Null,
                    ErrorCode::INVALID_REQUEST,
                    format!("`id` must be a string or an integer, got {}", kind(v)),
                ));
            }
        },
    };
    let reply_id = || id.as_ref().map_or(Value::Null, RequestId::to_value);
    match &jsonrpc {
        Some(Value::String(v)) if v == "2.0" => {}
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
        None if id.is_some() && is_response => {
            return Ok(Incoming::Response);
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
    Ok(match id {
        Some(id) => Incoming::Request { id, method, params },
        None => Incoming::Notification { method, params },
    })
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
    let mut error_map = Map::new();
    error_map.insert("code".to_owned(), Value::from(error.code));
    error_map.insert("message".to_owned(), Value::String(error.message));
    if let Some(data) = error.data {
        error_map.insert("data".to_owned(), data);
    }
    envelope(id, "error", Value::Object(error_map))
}

/// A success reply. The result is moved in, never re-serialized (`json!` would deep-copy it).
pub(crate) fn result_reply(id: Value, result: Value) -> Value {
    envelope(id, "result", result)
}

fn envelope(id: Value, key: &str, payload: Value) -> Value {
    let mut map = Map::new();
    map.insert("jsonrpc".to_owned(), Value::from("2.0"));
    if !id.is_null() {
        map.insert("id".to_owned(), id);
    }
    map.insert(key.to_owned(), payload);
    Value::Object(map)
}

pub(crate) fn parse_error(detail: impl std::fmt::Display) -> Value {
    error_reply(
        Value::Null,
        ErrorObject::new(ErrorCode::PARSE_ERROR, format!("parse error: {detail}")),
    )
}
