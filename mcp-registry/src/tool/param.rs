//! How the parameters of a `#[mcp_tool]` function are filled. (What the macros expand to is
//! in `mcp_registry::__private`, above both `tool` and `server`.)
//!
//! Every parameter's type goes through [`ToolParam`]. An *argument* (any
//! `T: DeserializeOwned + JsonSchema`) becomes one property of the tool's input schema and is
//! read from the call's arguments; a *provided* parameter such as [`ToolContext`] comes from
//! the call itself and never appears in the schema. The macro tells them apart through this
//! trait, never by a type's spelling, so a type alias or a re-export of `ToolContext` works.

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::{Arguments, ToolContext, ToolError};
use crate::schema::ObjectSchemaBuilder;

/// A type a `#[mcp_tool]` function can take as a parameter.
///
/// Implemented for every `T: DeserializeOwned + JsonSchema` (a tool argument: a property of
/// the input schema, required unless `null` is a valid `T`, as for `Option<_>`) and for
/// [`ToolContext`] (provided by the call, absent from the schema). Implement it for your own
/// types to have them provided by the call too, e.g. a handle the host attached with
/// [`Extensions`](crate::Extensions):
///
/// ```
/// use mcp_registry::tool::{param::ToolParam, Arguments};
/// use mcp_registry::{schema::ObjectSchemaBuilder, ToolContext, ToolError};
///
/// #[derive(Clone)]
/// struct Db(&'static str);
///
/// impl ToolParam for Db {
///     fn describe(_: &mut ObjectSchemaBuilder, _: &str, _: Option<&str>) {}
///     fn from_call(ctx: &ToolContext, _: &mut Arguments<'_>, _: &str) -> Result<Self, ToolError> {
///         ctx.get::<Db>().cloned().ok_or_else(|| ToolError::failed("no database attached"))
///     }
/// }
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a parameter of an MCP tool",
    label = "a tool parameter must implement `serde::Deserialize` and `schemars::JsonSchema` (or be the `ToolContext`)",
    note = "derive both on your type: `#[derive(serde::Deserialize, schemars::JsonSchema)]`"
)]
pub trait ToolParam: Sized {
    /// Adds this parameter to the tool's input schema (nothing, for a parameter the call
    /// provides). Runs once per tool, when the tool is first built.
    fn describe(schema: &mut ObjectSchemaBuilder, name: &str, description: Option<&str>);

    /// This parameter's value for one call: taken out of `arguments` (by `name`, with
    /// [`Arguments::take`]) or from the call's context.
    fn from_call(
        ctx: &ToolContext,
        arguments: &mut Arguments<'_>,
        name: &str,
    ) -> Result<Self, ToolError>;
}

impl ToolParam for ToolContext {
    fn describe(_: &mut ObjectSchemaBuilder, _: &str, _: Option<&str>) {}

    fn from_call(ctx: &ToolContext, _: &mut Arguments<'_>, _: &str) -> Result<Self, ToolError> {
        Ok(ctx.clone())
    }
}

/// Whether a missing argument of type `T` is acceptable: exactly when `null` is a valid `T`,
/// because a missing argument is read as `null`. The schema and the run-time
/// behaviour therefore agree by construction (`Option<T>`, `serde_json::Value`, `()`).
fn accepts_null<T: DeserializeOwned>() -> bool {
    // By reference, like reading an argument: one deserializer instantiation serves both.
    T::deserialize(&Value::Null).is_ok()
}

// `do_not_recommend` makes a missing bound report the `ToolParam` message above, on the
// parameter, instead of a list of every type that implements `JsonSchema`.
#[diagnostic::do_not_recommend]
impl<T: DeserializeOwned + JsonSchema> ToolParam for T {
    fn describe(schema: &mut ObjectSchemaBuilder, name: &str, description: Option<&str>) {
        schema.property::<T>(name, description, !accepts_null::<T>());
    }

    fn from_call(
        ctx: &ToolContext,
        arguments: &mut Arguments<'_>,
        name: &str,
    ) -> Result<Self, ToolError> {
        super::arguments::read_argument::<T>(arguments, name, ctx.lenient_scalars())
    }
}

/// A type a `#[mcp_tool]` function can take as a parameter: every [`ToolParam`], under
/// another name.
///
/// Implemented for you; never implement it (implement [`ToolParam`]). The macro names each
/// parameter's type as `<T as ToolParamType>::Checked` (which is `T`), so a type that is no
/// [`ToolParam`] is reported once, on the parameter, instead of once for every place the
/// generated code uses it.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a parameter of an MCP tool",
    label = "a tool parameter must implement `serde::Deserialize` and `schemars::JsonSchema` (or be the `ToolContext`)",
    note = "derive both on your type: `#[derive(serde::Deserialize, schemars::JsonSchema)]`"
)]
pub trait ToolParamType {
    /// `Self`.
    type Checked: ToolParam;
}

#[diagnostic::do_not_recommend]
impl<T: ToolParam> ToolParamType for T {
    type Checked = T;
}
