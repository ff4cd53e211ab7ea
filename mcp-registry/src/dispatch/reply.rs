//! Writing answers: a typed answer written once, as a JSON value or as JSON text (a whole
//! tool list spliced from its text serialized once per registry change).

use serde::{Serialize, Serializer};
use serde_json::{Map, Value};

use super::page::Window;
use super::{Answer, Body, Outcome, ResultMeta, ToolsPage};
use crate::protocol::decode::{Decoded, Invalid, too_deep};
use crate::protocol::{
    ErrorCode, ErrorObject, ErrorResponse, RequestId, ResultResponse, ResultType,
};

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
            Body::Resources(r) => write(r, outcome, serializer),
            Body::Complete(r) => write(r, outcome, serializer),
            Body::Skills(r) => write(r, outcome, serializer),
            Body::InputRequired(r) => write(r, outcome, serializer),
            Body::Task(r) => write(r, outcome, serializer),
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
    meta: Option<&'a ResultMeta>,
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
        Decoded::Invalid(Invalid { id, error }) => Some(error_value(id, error)),
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
