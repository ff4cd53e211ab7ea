use std::fmt;

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Number, Value};

/// A JSON-RPC request id: a string or an integer (MCP forbids `null` and fractions). Any JSON
/// integer a client may send is kept exactly, `u64` ids beyond `i64` included.
///
/// ```
/// use mcp_registry::protocol::RequestId;
/// let id = RequestId::from_value(&serde_json::json!(18446744073709551615_u64)).unwrap();
/// assert_eq!(id.to_value(), serde_json::json!(18446744073709551615_u64));
/// assert!(RequestId::from_value(&serde_json::json!(1.5)).is_none());
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
#[serde(untagged)]
pub enum RequestId {
    /// An integer id (always an integer: [`RequestId::from_value`] and deserializing refuse
    /// fractions).
    Number(Number),
    /// A string id.
    String(String),
}

impl RequestId {
    /// Reads an id from a JSON value; `None` for anything that is not a string or an integer.
    pub fn from_value(value: &Value) -> Option<Self> {
        match value {
            Value::String(s) => Some(RequestId::String(s.clone())),
            Value::Number(n) if n.is_i64() || n.is_u64() => Some(RequestId::Number(n.clone())),
            _ => None,
        }
    }

    /// The id as a JSON value.
    pub fn to_value(&self) -> Value {
        match self {
            RequestId::Number(n) => Value::Number(n.clone()),
            RequestId::String(s) => Value::from(s.as_str()),
        }
    }
}

impl<'de> Deserialize<'de> for RequestId {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Id;
        impl serde::de::Visitor<'_> for Id {
            type Value = RequestId;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a request id: a string or an integer")
            }
            fn visit_i64<E: serde::de::Error>(self, n: i64) -> Result<RequestId, E> {
                Ok(RequestId::Number(n.into()))
            }
            fn visit_u64<E: serde::de::Error>(self, n: u64) -> Result<RequestId, E> {
                Ok(RequestId::Number(n.into()))
            }
            fn visit_str<E: serde::de::Error>(self, s: &str) -> Result<RequestId, E> {
                Ok(RequestId::String(s.to_owned()))
            }
            fn visit_string<E: serde::de::Error>(self, s: String) -> Result<RequestId, E> {
                Ok(RequestId::String(s))
            }
        }
        deserializer.deserialize_any(Id)
    }
}

impl fmt::Display for RequestId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RequestId::Number(n) => write!(f, "{n}"),
            RequestId::String(s) => write!(f, "{s:?}"),
        }
    }
}

impl From<RequestId> for Value {
    fn from(id: RequestId) -> Value {
        match id {
            RequestId::Number(n) => Value::Number(n),
            RequestId::String(s) => Value::String(s),
        }
    }
}

impl From<i64> for RequestId {
    fn from(n: i64) -> Self {
        RequestId::Number(n.into())
    }
}

impl From<u64> for RequestId {
    fn from(n: u64) -> Self {
        RequestId::Number(n.into())
    }
}

impl From<&str> for RequestId {
    fn from(s: &str) -> Self {
        RequestId::String(s.to_owned())
    }
}

/// JSON-RPC and MCP error codes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ErrorCode(pub i32);

impl ErrorCode {
    /// Invalid JSON was received.
    pub const PARSE_ERROR: ErrorCode = ErrorCode(-32700);
    /// The JSON sent is not a valid request object.
    pub const INVALID_REQUEST: ErrorCode = ErrorCode(-32600);
    /// The method does not exist or is not available.
    pub const METHOD_NOT_FOUND: ErrorCode = ErrorCode(-32601);
    /// Invalid method parameters (also: unknown tool).
    pub const INVALID_PARAMS: ErrorCode = ErrorCode(-32602);
    /// Internal error.
    pub const INTERNAL_ERROR: ErrorCode = ErrorCode(-32603);
    /// The requested protocol version is not supported (2026-07-28).
    pub const UNSUPPORTED_PROTOCOL_VERSION: ErrorCode = ErrorCode(-32022);
    /// The `MCP-Protocol-Version`, `Mcp-Method` or `Mcp-Name` header does not match the body
    /// (2026-07-28, Streamable HTTP).
    pub const HEADER_MISMATCH: ErrorCode = ErrorCode(-32020);
    /// 2026-07-28: the request needs a client capability its `_meta` does not declare.
    pub const MISSING_REQUIRED_CLIENT_CAPABILITY: ErrorCode = ErrorCode(-32021);
    /// The resource asked for does not exist (2025-11-25 and earlier; 2026-07-28 answers
    /// [`INVALID_PARAMS`](Self::INVALID_PARAMS) with `data.uri` instead).
    pub const RESOURCE_NOT_FOUND: ErrorCode = ErrorCode(-32002);
    /// The request needs URL-mode elicitations completed first (2025-11-25 onward); `data`
    /// lists them ([`UrlElicitationRequiredData`](crate::protocol::UrlElicitationRequiredData)).
    pub const URL_ELICITATION_REQUIRED: ErrorCode = ErrorCode(-32042);
}

/// The `error` member of a JSON-RPC error reply.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorObject {
    /// The error code.
    pub code: ErrorCode,
    /// A short description naming the problem.
    pub message: String,
    /// Extra structured detail.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}

impl ErrorObject {
    /// An error with a code and message.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        ErrorObject {
            code,
            message: message.into(),
            data: None,
        }
    }

    /// Attaches `data`.
    pub fn with_data(mut self, data: Value) -> Self {
        self.data = Some(data);
        self
    }
}

impl fmt::Display for ErrorObject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.message, self.code.0)
    }
}

/// The `"jsonrpc": "2.0"` member every message carries: serializes as `"2.0"` and accepts
/// nothing else.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct JsonRpcVersion;

impl Serialize for JsonRpcVersion {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str("2.0")
    }
}

impl<'de> Deserialize<'de> for JsonRpcVersion {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let v = <std::borrow::Cow<'de, str>>::deserialize(deserializer)?;
        if v == "2.0" {
            Ok(JsonRpcVersion)
        } else {
            Err(serde::de::Error::custom(format_args!(
                "`jsonrpc` must be \"2.0\", got {v:?}"
            )))
        }
    }
}

/// A successful reply: `{"jsonrpc": "2.0", "id": .., "result": ..}`.
///
/// ```
/// use mcp_registry::protocol::{RequestId, ResultResponse};
/// let reply = ResultResponse::new(RequestId::from(7_i64), serde_json::json!({}));
/// assert_eq!(
///     serde_json::to_string(&reply).unwrap(),
///     r#"{"jsonrpc":"2.0","id":7,"result":{}}"#
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResultResponse<T> {
    /// Always `"2.0"`.
    pub jsonrpc: JsonRpcVersion,
    /// The id of the request answered.
    pub id: RequestId,
    /// The method's result.
    pub result: T,
}

impl<T> ResultResponse<T> {
    /// The reply to request `id`.
    pub fn new(id: RequestId, result: T) -> Self {
        ResultResponse {
            jsonrpc: JsonRpcVersion,
            id,
            result,
        }
    }
}

/// An error reply: `{"jsonrpc": "2.0", "id": .., "error": {..}}`. The id is left out when
/// the request's id could not be read: MCP's schema (2025-11-25 onward) makes it optional
/// but does not allow `null`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ErrorResponse {
    /// Always `"2.0"`.
    pub jsonrpc: JsonRpcVersion,
    /// The id of the request answered, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<RequestId>,
    /// What went wrong.
    pub error: ErrorObject,
}

impl ErrorResponse {
    /// The error reply to request `id` (`None` when unknown).
    pub fn new(id: Option<RequestId>, error: ErrorObject) -> Self {
        ErrorResponse {
            jsonrpc: JsonRpcVersion,
            id,
            error,
        }
    }
}

/// A notification: `{"jsonrpc": "2.0", "method": .., "params": ..}`, never answered.
///
/// ```
/// use mcp_registry::protocol::Notification;
/// let n = Notification::new("notifications/tools/list_changed", None::<()>);
/// assert_eq!(
///     serde_json::to_string(&n).unwrap(),
///     r#"{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}"#
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Notification<P> {
    /// Always `"2.0"`.
    pub jsonrpc: JsonRpcVersion,
    /// The notification's method.
    pub method: std::borrow::Cow<'static, str>,
    /// Its parameters, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params: Option<P>,
}

impl<P> Notification<P> {
    /// A notification of `method` with `params`.
    pub fn new(method: impl Into<std::borrow::Cow<'static, str>>, params: Option<P>) -> Self {
        Notification {
            jsonrpc: JsonRpcVersion,
            method: method.into(),
            params,
        }
    }
}

/// Renamed [`JsonRpcRequest`] (`layer::Request` is the request a layer sees).
#[deprecated(since = "0.1.0", note = "renamed `JsonRpcRequest`")]
#[doc(hidden)]
pub type Request<P> = JsonRpcRequest<P>;

/// A request: `{"jsonrpc": "2.0", "id": .., "method": .., "params": ..}`, answered by a
/// [`ResultResponse`] or an [`ErrorResponse`] with the same id.
///
/// ```
/// use mcp_registry::protocol::{JsonRpcRequest, RequestId};
/// let r = JsonRpcRequest::new(RequestId::from(1_i64), "ping", None::<()>);
/// assert_eq!(serde_json::to_string(&r).unwrap(), r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#);
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JsonRpcRequest<P> {
    /// Always `"2.0"`.
    pub jsonrpc: JsonRpcVersion,
    /// The id the reply will carry.
    pub id: RequestId,
    /// The method called.
    pub method: std::borrow::Cow<'static, str>,
    /// Its parameters, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params: Option<P>,
}

impl<P> JsonRpcRequest<P> {
    /// A request `id` for `method` with `params`.
    pub fn new(
        id: RequestId,
        method: impl Into<std::borrow::Cow<'static, str>>,
        params: Option<P>,
    ) -> Self {
        JsonRpcRequest {
            jsonrpc: JsonRpcVersion,
            id,
            method: method.into(),
            params,
        }
    }
}

/// `params` as a JSON-RPC params object: its members when it serializes to an object, else
/// none.
pub(crate) fn params_of(params: &impl Serialize) -> serde_json::Map<String, Value> {
    match serde_json::to_value(params) {
        Ok(Value::Object(members)) => members,
        _ => serde_json::Map::new(),
    }
}

/// How a JSON value is named in messages ("a string", "an integer", ..): the one wording for
/// the kind of a value, in envelope, params and argument errors alike.
pub(crate) fn value_kind(value: &serde_json::Value) -> &'static str {
    use serde_json::Value;
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(n) if n.is_f64() => "a number",
        Value::Number(_) => "an integer",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}
