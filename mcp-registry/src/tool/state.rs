//! [`State`]: host state as a typed parameter of a tool, prompt or resource function.

use std::any::type_name;
use std::fmt;
use std::ops::Deref;
use std::sync::Arc;

use super::param::ToolParam;
use super::{Arguments, ToolContext, ToolError};
use crate::schema::ObjectSchemaBuilder;

/// Host state a `#[mcp_tool]`, `#[mcp_prompt]` or `#[mcp_resource]` function takes as a
/// parameter, as axum's `State` does: the value of type `T` the host attached to the call
/// ([`CallOptions::extension`](crate::CallOptions::extension)), to the item's server
/// ([`ServerBuilder::extension`](crate::ServerBuilder::extension)) or to the registry
/// ([`RegistryBuilder::extension`](crate::RegistryBuilder::extension)), in that order. It is no argument of
/// the item (absent from its schema). When nothing of type `T` is attached, the call fails
/// with an error naming the type and how to attach one, never with a silent `None`.
///
/// ```
/// use mcp_registry::{mcp_tool, server, Registry, State};
/// use serde_json::json;
///
/// struct Greeting(&'static str);
///
/// /// Greet someone.
/// #[mcp_tool]
/// async fn greet(greeting: State<Greeting>, name: String) -> String {
///     format!("{}, {name}!", greeting.0)
/// }
///
/// server!(name = "hello", version = "1.0.0", tools = [greet], fn = hello, collect = false);
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let registry = Registry::builder().server(hello()).extension(Greeting("Hi")).build();
/// let reply = registry.call_tool_by_name("greet", json!({"name": "Ada"})).await.unwrap();
/// assert_eq!(reply.first_text(), Some("Hi, Ada!"));
///
/// let bare = Registry::from_servers([hello()]);
/// let err = bare.call_tool_by_name("greet", json!({"name": "Ada"})).await.unwrap_err();
/// assert!(err.to_string().contains("no host state of type"));
/// # }
/// ```
pub struct State<T>(Arc<T>);

impl<T: Send + Sync + 'static> State<T> {
    /// The state of type `T` in `ctx` (the call's first, then the server's, then the registry's).
    pub fn from_context(ctx: &ToolContext) -> Result<Self, MissingState> {
        ctx.state::<T>().map(State).ok_or(MissingState {
            type_name: type_name::<T>(),
        })
    }
}

impl<T> State<T> {
    /// The shared value.
    pub fn into_inner(self) -> Arc<T> {
        self.0
    }
}

impl<T> Deref for State<T> {
    type Target = T;

    fn deref(&self) -> &T {
        &self.0
    }
}

impl<T> Clone for State<T> {
    fn clone(&self) -> Self {
        State(self.0.clone())
    }
}

impl<T> fmt::Debug for State<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "State<{}>", type_name::<T>())
    }
}

/// No host state of the type a [`State`] parameter asks for is attached.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "no host state of type `{type_name}`: attach one with RegistryBuilder::extension(..) (every call), ServerBuilder::extension(..) (one server's calls) or CallOptions::extension(..) (one call)"
)]
pub struct MissingState {
    /// The type asked for.
    pub type_name: &'static str,
}

impl<T: Send + Sync + 'static> ToolParam for State<T> {
    fn describe(_: &mut ObjectSchemaBuilder, _: &str, _: Option<&str>) {}

    fn from_call(ctx: &ToolContext, _: &mut Arguments<'_>, _: &str) -> Result<Self, ToolError> {
        Self::from_context(ctx).map_err(|e| ToolError::Failed(e.to_string()))
    }
}
