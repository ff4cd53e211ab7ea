//! How the parameters of a `#[mcp_resource(template = ..)]` function are filled: each one is
//! a template variable of the same name, parsed from the URI read.

use std::fmt::Display;
use std::str::FromStr;

use super::{ResourceError, ResourceRequest};
use crate::tool::State;

/// A type a `#[mcp_resource]` template function can take as a parameter: anything
/// [`FromStr`] (`String`, integers, `uuid::Uuid`, your own types). A value that does not
/// parse means the URI names no resource: the read is answered as not found, naming the
/// variable.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a parameter of an MCP resource template",
    label = "template variables are parsed from the URI: take a type that implements `FromStr`",
    note = "implement `std::str::FromStr` for `{Self}`, or take `String` and parse it in the body"
)]
pub trait ResourceParam: Sized {
    /// Whether the parameter is a template variable (`false`: filled by the request, like
    /// the context, and needs no variable).
    const VARIABLE: bool = true;

    /// The value of variable `name` of `request`.
    fn from_request(request: &ResourceRequest, name: &str) -> Result<Self, ResourceError>;
}

/// The context of the request a read serves ([`ResourceRequest::context`]).
impl ResourceParam for crate::tool::ToolContext {
    const VARIABLE: bool = false;

    fn from_request(request: &ResourceRequest, _: &str) -> Result<Self, ResourceError> {
        Ok(request.context())
    }
}

impl<T: FromStr> ResourceParam for T
where
    T::Err: Display,
{
    fn from_request(request: &ResourceRequest, name: &str) -> Result<Self, ResourceError> {
        let raw = request.variable(name).ok_or_else(|| {
            ResourceError::not_found(format!("no value for template variable `{name}`"))
        })?;
        raw.parse().map_err(|e: T::Err| {
            ResourceError::not_found(format!("template variable `{name}`: {e}"))
        })
    }
}

/// Every [`ResourceParam`], under another name: the macro names each parameter's type as
/// `<T as ResourceParamType>::Checked` (which is `T`), so a type that is no
/// [`ResourceParam`] is reported once, on the parameter. Never implement it.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a parameter of an MCP resource template",
    label = "template variables are parsed from the URI: take a type that implements `FromStr`",
    note = "implement `std::str::FromStr` for `{Self}`, or take `String` and parse it in the body"
)]
pub trait ResourceParamType {
    /// `Self`.
    type Checked: ResourceParam;
}

#[diagnostic::do_not_recommend]
impl<T: ResourceParam> ResourceParamType for T {
    type Checked = T;
}

impl<T: Send + Sync + 'static> ResourceParam for State<T> {
    const VARIABLE: bool = false;

    fn from_request(request: &ResourceRequest, _: &str) -> Result<Self, ResourceError> {
        Self::from_context(&request.context()).map_err(|e| ResourceError::Failed(e.to_string()))
    }
}
