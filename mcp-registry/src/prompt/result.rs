use std::fmt::Display;

use crate::protocol::{GetPromptResult, PromptMessage};

/// Why a prompt handler did not render its messages.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PromptError {
    /// The arguments are unusable (a required one is missing, a value is refused); answered
    /// with -32602 on the wire.
    #[error("{0}")]
    InvalidArguments(String),
    /// The handler failed; answered with -32603 on the wire.
    #[error("{0}")]
    Failed(String),
}

impl PromptError {
    /// A failure with the given message.
    pub fn failed(message: impl Display) -> Self {
        PromptError::Failed(message.to_string())
    }

    /// An argument error with the given message (name the argument in it).
    pub fn invalid_arguments(message: impl Display) -> Self {
        PromptError::InvalidArguments(message.to_string())
    }
}

/// Turns a prompt function's return value into a `prompts/get` result.
///
/// Implemented for [`GetPromptResult`], `Vec<PromptMessage>`, [`PromptMessage`], `String` and
/// `&'static str` (one user text message), and `Result<T, E>` for any such `T` with
/// `E: Display` (an `Err` is a failure, answered with -32603 and the error's text).
/// Implement it for your own types to return them from prompts; a
/// [`PromptHandler`](crate::prompt::PromptHandler)
/// returns a [`PromptError`] directly, to refuse an
/// argument's value with -32602.
///
/// ```
/// use mcp_registry::{IntoPromptResult, PromptMessage};
/// let r = "Say hi".into_prompt_result().unwrap();
/// assert_eq!(r.messages, vec![PromptMessage::user("Say hi")]);
/// let failed = Err::<String, _>("no such branch").into_prompt_result().unwrap_err();
/// assert_eq!(failed.to_string(), "no such branch");
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be returned from an MCP prompt",
    label = "return Vec<PromptMessage>, PromptMessage, GetPromptResult, String, or Result<T, E: Display> of those",
    note = "implement `mcp_registry::IntoPromptResult` for `{Self}` to return it from a prompt"
)]
pub trait IntoPromptResult {
    /// The result, or the failure it stands for.
    fn into_prompt_result(self) -> Result<GetPromptResult, PromptError>;
}

impl IntoPromptResult for GetPromptResult {
    fn into_prompt_result(self) -> Result<GetPromptResult, PromptError> {
        Ok(self)
    }
}

impl IntoPromptResult for Vec<PromptMessage> {
    fn into_prompt_result(self) -> Result<GetPromptResult, PromptError> {
        Ok(GetPromptResult::new(self))
    }
}

impl IntoPromptResult for PromptMessage {
    fn into_prompt_result(self) -> Result<GetPromptResult, PromptError> {
        Ok(GetPromptResult::new(vec![self]))
    }
}

impl IntoPromptResult for String {
    fn into_prompt_result(self) -> Result<GetPromptResult, PromptError> {
        PromptMessage::user(self).into_prompt_result()
    }
}

impl IntoPromptResult for &'static str {
    fn into_prompt_result(self) -> Result<GetPromptResult, PromptError> {
        PromptMessage::user(self).into_prompt_result()
    }
}

impl<T: IntoPromptResult, E: Display> IntoPromptResult for Result<T, E> {
    fn into_prompt_result(self) -> Result<GetPromptResult, PromptError> {
        match self {
            Ok(v) => v.into_prompt_result(),
            Err(e) => Err(PromptError::Failed(e.to_string())),
        }
    }
}
