use std::any::Any;
use std::fmt::Display;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;

use crate::protocol::{
    CallToolResult, Content, ElicitParams, MAX_DEPTH, drop_flat, exceeds_max_depth,
};
use crate::schema;

/// Why a handler did not produce a result.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ToolError {
    /// The arguments did not match the tool's input schema.
    #[error("invalid arguments: {0}")]
    InvalidArguments(String),
    /// The tool ran and failed; the text is the tool's own message.
    #[error("{0}")]
    Failed(String),
    /// The tool needs a client capability the client did not declare (`sampling`,
    /// `elicitation`, `roots`): what [`InputError::NotSupported`](crate::tool::InputError)
    /// becomes with `?`. A 2026-07-28 request gets the JSON-RPC error -32021
    /// (MissingRequiredClientCapability); a legacy one a result with `isError: true`.
    #[error("{message}")]
    MissingClientCapability {
        /// The capability, as `ClientCapabilities` names it.
        capability: &'static str,
        /// What the tool was told.
        message: String,
    },
    /// The call cannot go on until the user completes these URL-mode elicitations (a
    /// sign-in elsewhere, say): the request is refused with -32042
    /// (URLElicitationRequired) listing them, in every revision that has URL mode, and the
    /// client retries once the user has been there. Build it with
    /// [`url_elicitation_required`](Self::url_elicitation_required).
    #[error("{message}")]
    UrlElicitationRequired {
        /// What the client is told.
        message: String,
        /// The elicitations, each in URL mode with its id.
        elicitations: Vec<ElicitParams>,
    },
}

impl ToolError {
    /// A tool failure with the given message.
    pub fn failed(message: impl Display) -> Self {
        ToolError::Failed(message.to_string())
    }

    /// An argument error with the given message (name the field in it).
    pub fn invalid_arguments(message: impl Display) -> Self {
        ToolError::InvalidArguments(message.to_string())
    }

    /// Refuses the call until the user has completed the URL-mode `elicitations`
    /// ([`ElicitParams::url`]): -32042 on the wire.
    ///
    /// ```
    /// use mcp_registry::ToolError;
    /// use mcp_registry::protocol::ElicitParams;
    /// let sign_in = ElicitParams::url("Sign in to Example Co", "https://example.com/connect?e=42", "42");
    /// let e = ToolError::url_elicitation_required("Example Co is not connected yet", [sign_in]);
    /// assert_eq!(e.to_string(), "Example Co is not connected yet");
    /// ```
    pub fn url_elicitation_required(
        message: impl Display,
        elicitations: impl IntoIterator<Item = ElicitParams>,
    ) -> Self {
        ToolError::UrlElicitationRequired {
            message: message.to_string(),
            elicitations: elicitations.into_iter().collect(),
        }
    }
}

/// Structured tool output: `T` becomes the result's `structuredContent` (with a JSON text copy
/// in `content`), and a tool returning `Json<T>` advertises `T`'s schema as its output schema.
///
/// A `T` whose schema is not an object is wrapped as `{"result": value}` (see
/// [`schema::OutputSchema`]).
///
/// ```
/// use mcp_registry::{IntoToolResult, Json};
/// #[derive(serde::Serialize, schemars::JsonSchema)]
/// struct Sum { value: i64 }
/// let r = Json(Sum { value: 3 }).into_tool_result().unwrap();
/// assert_eq!(r.structured_content, Some(serde_json::json!({"value": 3})));
/// assert_eq!(r.first_text(), Some(r#"{"value":3}"#));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Json<T>(pub T);

/// Turns a tool function's return value into a `tools/call` result.
///
/// Implemented for `String`, `&'static str`, `()`, [`Json<T>`], [`CallToolResult`],
/// [`Content`], `Vec<Content>`, and `Result<T, E>` for any such `T` and `E: Display` (an `Err`
/// is a tool failure: `isError: true` with the error's text). Implement it for your own types
/// to return them from tools.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be returned from an MCP tool",
    label = "return a String, Json<T>, CallToolResult, Content, (), or Result<T, E: Display> of those",
    note = "implement `mcp_registry::IntoToolResult` for `{Self}` to return it from a tool"
)]
pub trait IntoToolResult {
    /// The result, or the failure it stands for.
    fn into_tool_result(self) -> Result<CallToolResult, ToolError>;

    /// The output schema a tool returning this type advertises (`None`: unstructured).
    fn output_schema() -> Option<Arc<Value>>
    where
        Self: Sized,
    {
        None
    }
}

impl IntoToolResult for CallToolResult {
    fn into_tool_result(self) -> Result<CallToolResult, ToolError> {
        Ok(self)
    }
}

impl IntoToolResult for String {
    fn into_tool_result(self) -> Result<CallToolResult, ToolError> {
        Ok(CallToolResult::text(self))
    }
}

impl IntoToolResult for &'static str {
    fn into_tool_result(self) -> Result<CallToolResult, ToolError> {
        Ok(CallToolResult::text(self))
    }
}

impl IntoToolResult for () {
    fn into_tool_result(self) -> Result<CallToolResult, ToolError> {
        Ok(CallToolResult::success(Vec::new()))
    }
}

impl IntoToolResult for Content {
    fn into_tool_result(self) -> Result<CallToolResult, ToolError> {
        Ok(CallToolResult::success(vec![self]))
    }
}

impl IntoToolResult for Vec<Content> {
    fn into_tool_result(self) -> Result<CallToolResult, ToolError> {
        Ok(CallToolResult::success(self))
    }
}

impl<T: Serialize + JsonSchema + 'static> IntoToolResult for Json<T> {
    fn into_tool_result(self) -> Result<CallToolResult, ToolError> {
        let value = shallow_value(self.0)?;
        let value = if schema::output_schema_for::<T>().wrapped {
            serde_json::json!({ "result": value })
        } else {
            value
        };
        Ok(CallToolResult::structured(value))
    }

    fn output_schema() -> Option<Arc<Value>> {
        Some(schema::output_schema_for::<T>().schema.clone())
    }
}

impl<T: IntoToolResult, E: Display + 'static> IntoToolResult for Result<T, E> {
    fn into_tool_result(self) -> Result<CallToolResult, ToolError> {
        match self {
            Ok(v) => v.into_tool_result(),
            Err(e) => Err(kept_error(&e).unwrap_or_else(|| ToolError::Failed(e.to_string()))),
        }
    }

    fn output_schema() -> Option<Arc<Value>> {
        T::output_schema()
    }
}

/// `result` as a JSON value, refused when it nests arrays and objects deeper than
/// [`MAX_DEPTH`] (as arguments are), without recursing further than that: serializing a
/// deeper value would overflow the stack. A `Value` is taken as it is (checked, not copied)
/// and a refused one dropped without recursion; other types are first written to nowhere
/// through a formatter that stops one level past the limit.
fn shallow_value<T: Serialize + 'static>(mut result: T) -> Result<Value, ToolError> {
    let too_deep = || {
        ToolError::failed(format_args!(
            "the tool's result nests arrays and objects deeper than {MAX_DEPTH} levels (protocol::MAX_DEPTH); return a flatter value"
        ))
    };
    if let Some(value) = (&mut result as &mut dyn Any).downcast_mut::<Value>() {
        let value = std::mem::take(value);
        if exceeds_max_depth(&value) {
            drop_flat(value);
            return Err(too_deep());
        }
        return Ok(value);
    }
    let mut probe = serde_json::Serializer::with_formatter(std::io::sink(), DepthLimit(0));
    if let Err(e) = result.serialize(&mut probe) {
        return Err(if e.is_io() {
            too_deep()
        } else {
            ToolError::failed(format_args!("could not serialize the result: {e}"))
        });
    }
    serde_json::to_value(&result)
        .map_err(|e| ToolError::failed(format_args!("could not serialize the result: {e}")))
}

/// A JSON formatter that fails (with an I/O error) on entering the array or object one level
/// past [`MAX_DEPTH`], so the serialization stops there.
struct DepthLimit(usize);

impl DepthLimit {
    fn enter(&mut self) -> std::io::Result<()> {
        self.0 += 1;
        if self.0 > MAX_DEPTH {
            return Err(std::io::Error::other("too deep"));
        }
        Ok(())
    }
}

impl serde_json::ser::Formatter for DepthLimit {
    fn begin_array<W: ?Sized + std::io::Write>(&mut self, _: &mut W) -> std::io::Result<()> {
        self.enter()
    }

    fn end_array<W: ?Sized + std::io::Write>(&mut self, _: &mut W) -> std::io::Result<()> {
        self.0 -= 1;
        Ok(())
    }

    fn begin_object<W: ?Sized + std::io::Write>(&mut self, _: &mut W) -> std::io::Result<()> {
        self.enter()
    }

    fn end_object<W: ?Sized + std::io::Write>(&mut self, _: &mut W) -> std::io::Result<()> {
        self.0 -= 1;
        Ok(())
    }
}

/// A tool error that means more than its text, kept as such when a tool returns it (a
/// [`ToolError`] or an [`InputError`](crate::tool::InputError) returned with `?`): a missing
/// client capability (a 2026-07-28 request is refused with -32021) and a URL elicitation the
/// user must complete first (-32042); `None` for any other error.
fn kept_error(e: &dyn std::any::Any) -> Option<ToolError> {
    use crate::tool::InputError;
    if let Some(
        error @ (ToolError::MissingClientCapability { .. }
        | ToolError::UrlElicitationRequired { .. }),
    ) = e.downcast_ref::<ToolError>()
    {
        return Some(error.clone());
    }
    match e.downcast_ref::<InputError>() {
        Some(input @ InputError::NotSupported { .. }) => Some(input.clone().into()),
        _ => None,
    }
}
