//! How the parameters of a `#[mcp_prompt]` function are filled: each one is a prompt
//! argument, read from the request's string arguments by name, or the request's context.

use super::{PromptArguments, PromptError};
use std::any::type_name;

use crate::tool::{MissingState, State, ToolContext};

/// A type a `#[mcp_prompt]` function can take as a parameter: `String` (a required
/// argument), `Option<String>` (an optional one), or [`ToolContext`] (the request's
/// context: logging, progress, cancellation, host state, asking the client for input; no
/// argument). Prompt arguments are strings on the wire; parse them in the function.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a parameter of an MCP prompt",
    label = "prompt arguments are strings: take `String` (required) or `Option<String>` (optional), or the request's `ToolContext`",
    note = "parse the string in the function body"
)]
pub trait PromptParam: Sized {
    /// Whether `prompts/get` must give the argument.
    const REQUIRED: bool;

    /// Whether the parameter is one of the prompt's arguments (`false`: filled by the
    /// request, like the context, and not listed).
    const ARGUMENT: bool = true;

    /// This parameter's value, taken out of `arguments` by `name`.
    fn from_arguments(arguments: &mut PromptArguments, name: &str) -> Result<Self, PromptError>;

    /// This parameter's value in a request whose context is `ctx`: by default
    /// [`from_arguments`](Self::from_arguments).
    fn from_request(
        ctx: &ToolContext,
        arguments: &mut PromptArguments,
        name: &str,
    ) -> Result<Self, PromptError> {
        let _ = ctx;
        Self::from_arguments(arguments, name)
    }
}

impl PromptParam for ToolContext {
    const REQUIRED: bool = false;
    const ARGUMENT: bool = false;

    /// Outside a request: a context that reports to no one.
    fn from_arguments(_: &mut PromptArguments, _: &str) -> Result<Self, PromptError> {
        Ok(ToolContext::detached("", ""))
    }

    fn from_request(
        ctx: &ToolContext,
        _: &mut PromptArguments,
        _: &str,
    ) -> Result<Self, PromptError> {
        Ok(ctx.clone())
    }
}

impl PromptParam for String {
    const REQUIRED: bool = true;

    fn from_arguments(arguments: &mut PromptArguments, name: &str) -> Result<Self, PromptError> {
        arguments.remove(name).ok_or_else(|| {
            PromptError::InvalidArguments(format!("missing required argument `{name}`"))
        })
    }
}

impl PromptParam for Option<String> {
    const REQUIRED: bool = false;

    fn from_arguments(arguments: &mut PromptArguments, name: &str) -> Result<Self, PromptError> {
        Ok(arguments.remove(name))
    }
}

/// Every [`PromptParam`], under another name: the macro names each parameter's type as
/// `<T as PromptParamType>::Checked` (which is `T`), so a type that is no [`PromptParam`]
/// is reported once, on the parameter. Never implement it (implement [`PromptParam`]).
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a parameter of an MCP prompt",
    label = "prompt arguments are strings: take `String` (required) or `Option<String>` (optional), or the request's `ToolContext`",
    note = "parse the string in the function body"
)]
pub trait PromptParamType {
    /// `Self`.
    type Checked: PromptParam;
}

#[diagnostic::do_not_recommend]
impl<T: PromptParam> PromptParamType for T {
    type Checked = T;
}

impl<T: Send + Sync + 'static> PromptParam for State<T> {
    const REQUIRED: bool = false;
    const ARGUMENT: bool = false;

    /// Outside a request there is no host state.
    fn from_arguments(_: &mut PromptArguments, _: &str) -> Result<Self, PromptError> {
        Err(PromptError::Failed(
            MissingState {
                type_name: type_name::<T>(),
            }
            .to_string(),
        ))
    }

    fn from_request(
        ctx: &ToolContext,
        _: &mut PromptArguments,
        _: &str,
    ) -> Result<Self, PromptError> {
        Self::from_context(ctx).map_err(|e| PromptError::Failed(e.to_string()))
    }
}
