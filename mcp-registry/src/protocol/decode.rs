//! Reading one incoming JSON-RPC message: a request (its era classified once, here), a
//! notification, a response, or a message to refuse. Every path (the stateless entry points,
//! sessions, transports) decodes with this one function.

use serde_json::{Map, Value};

use super::version::{Era, classify};
use super::{ErrorCode, ErrorObject, MAX_DEPTH, RequestId, drop_flat, exceeds_max_depth};

/// One decoded incoming message.
#[derive(Debug)]
pub(crate) enum Incoming {
    Request(IncomingRequest),
    Notification(IncomingNotification),
    /// Nothing to answer: a response to something sent (whatever its id), or a notification
    /// that cannot be read (a notification is never answered, even when invalid).
    Silent,
    /// A request that cannot be served, answered with this error.
    Invalid(Invalid),
}

/// A request, taken apart.
#[derive(Debug)]
pub(crate) struct IncomingRequest {
    pub(crate) id: RequestId,
    pub(crate) method: String,
    /// The params without `_meta`.
    pub(crate) params: Map<String, Value>,
    /// `params._meta`, when it is an object.
    pub(crate) meta: Option<Map<String, Value>>,
    /// How it is to be served, from the version `_meta` names: computed once, read by
    /// dispatch, sessions and transports alike. An error is the request's answer.
    pub(crate) era: Result<Era, ErrorObject>,
}

/// A notification, taken apart.
#[derive(Debug)]
pub(crate) struct IncomingNotification {
    pub(crate) method: String,
    pub(crate) params: Map<String, Value>,
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

/// How a JSON value reads in a message: "a string", "an object", ...
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

/// Decodes one message (not a batch: an array is refused here; callers that serve batches
/// split them first), moving its members out rather than copying them.
pub(crate) fn decode(message: Value) -> Incoming {
    if exceeds_max_depth(&message) {
        return too_deep(message);
    }
    let Value::Object(map) = message else {
        return Incoming::Invalid(Invalid::new(
            None,
            ErrorCode::INVALID_REQUEST,
            format!(
                "a JSON-RPC message must be an object, got {}",
                kind(&message)
            ),
        ));
    };
    let (mut id, mut jsonrpc, mut method, mut params) = (None, None, None, None);
    let mut is_response = false;
    for (key, value) in map {
        match key.as_str() {
            "id" => id = Some(value),
            "jsonrpc" => jsonrpc = Some(value),
            "method" => method = Some(value),
            "params" => params = Some(value),
            "result" | "error" => is_response = true,
            _ => {}
        }
    }
    // A response (no `method`; `result` or `error`) is never answered, whatever its id, and
    // neither is a notification (a `method` and no `id` member), even one that is invalid.
    if method.is_none() && is_response {
        return Incoming::Silent;
    }
    let Some(raw_id) = id else {
        return match (method.is_some(), notification(jsonrpc, method, params)) {
            (_, Some(n)) => Incoming::Notification(n),
            (true, None) => Incoming::Silent,
            (false, None) => Incoming::Invalid(Invalid::new(
                None,
                ErrorCode::INVALID_REQUEST,
                "not a JSON-RPC message: it has no `method`, `result` or `error`",
            )),
        };
    };
    let Some(id) = RequestId::from_value(&raw_id) else {
        return Incoming::Invalid(Invalid::new(
            None,
            ErrorCode::INVALID_REQUEST,
            format!("`id` must be a string or an integer, got {}", kind(&raw_id)),
        ));
    };
    match request(id.clone(), jsonrpc, method, params) {
        Ok(request) => Incoming::Request(request),
        Err(error) => Incoming::Invalid(Invalid {
            id: Some(id),
            error,
        }),
    }
}

/// The rest of a request with a readable id.
fn request(
    id: RequestId,
    jsonrpc: Option<Value>,
    method: Option<Value>,
    params: Option<Value>,
) -> Result<IncomingRequest, ErrorObject> {
    let invalid = |message: String| ErrorObject::new(ErrorCode::INVALID_REQUEST, message);
    match jsonrpc {
        Some(Value::String(v)) if v == "2.0" => {}
        Some(other) => return Err(invalid(format!("`jsonrpc` must be \"2.0\", got {other}"))),
        None => return Err(invalid("`jsonrpc` is missing; it must be \"2.0\"".into())),
    }
    let method = match method {
        Some(Value::String(m)) => m,
        Some(other) => {
            return Err(invalid(format!(
                "`method` must be a string, got {}",
                kind(&other)
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
                    kind(&other)
                ),
            ));
        }
    };
    let (meta, era) = match params.remove("_meta") {
        None | Some(Value::Null) => (None, classify(&method, None)),
        Some(Value::Object(meta)) => {
            let era = classify(&method, Some(&meta));
            (Some(meta), era)
        }
        Some(_) => (
            None,
            Err(ErrorObject::new(
                ErrorCode::INVALID_PARAMS,
                "`params._meta` must be an object",
            )),
        ),
    };
    Ok(IncomingRequest {
        id,
        method,
        params,
        meta,
        era,
    })
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
pub(crate) fn too_deep(message: Value) -> Incoming {
    let request =
        message.is_array() || (message.get("method").is_some() && message.get("id").is_some());
    let id = message.get("id").and_then(RequestId::from_value);
    drop_flat(message);
    if !request {
        return Incoming::Silent;
    }
    Incoming::Invalid(Invalid::new(
        id,
        ErrorCode::INVALID_REQUEST,
        format!("the message nests arrays and objects deeper than {MAX_DEPTH} levels"),
    ))
}
