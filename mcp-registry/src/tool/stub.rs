//! Typed call stubs: `#[mcp_tool] async fn add(a: i64, b: i64) -> Json<Sum>` also makes
//! `add::call(&client, a, b).await -> Result<Sum, ToolCallError<_>>`, through any
//! [`ToolCaller`]: a [`Registry`](crate::Registry) in-process, a connected
//! [`client::Client`](crate::client::Client) over stdio or Streamable HTTP.
//!
//! The stub sends the function's arguments (each `serde::Serialize`, under its property
//! name; a parameter whose type is written `ToolContext`, `Caller` or `State<..>`, under any
//! path, is left out: the call provides it) and reads the result back as the function's return type says
//! ([`ToolOutput`]): `Json<T>` as `T`, `String` as the text, `Result<T, E>` as `T` with an
//! `Err` arriving as [`ToolCallError::Tool`].
//!
//! ```
//! use mcp_registry::{Json, Registry, Server, mcp_tool};
//! use mcp_registry::tool::stub::ToolCallError;
//!
//! #[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema, Debug, PartialEq)]
//! struct Sum { value: i64 }
//!
//! #[mcp_tool]
//! async fn add(a: i64, b: i64) -> Json<Sum> {
//!     Json(Sum { value: a + b })
//! }
//!
//! #[mcp_tool]
//! async fn halve(n: i64) -> Result<String, String> {
//!     if n % 2 == 0 { Ok((n / 2).to_string()) } else { Err(format!("{n} is odd")) }
//! }
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! let server = Server::builder("arith").tool(add::tool()).tool(halve::tool()).build();
//! let registry = Registry::from_servers([server.unwrap()]);
//! assert_eq!(add::call(&registry, 2, 3).await.unwrap(), Sum { value: 5 });
//! assert_eq!(halve::call(&registry, 4).await.unwrap(), "2");
//! let odd = halve::call(&registry, 3).await.unwrap_err();
//! assert!(matches!(odd, ToolCallError::Tool { ref message, .. } if message == "3 is odd"));
//! # }
//! ```

use std::fmt::Display;

use schemars::JsonSchema;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use super::BoxFuture;
use super::result::Json;
use crate::protocol::{CallToolResult, Content};

/// Why a typed call stub failed: the tool's own failure, the call's (`E`, the client's
/// error type), or the arguments or result not fitting their types.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ToolCallError<E> {
    /// The tool ran and reported a failure (`isError: true`, or the registry's
    /// `CallError::ToolFailed`): its message.
    #[error("tool {tool:?} failed: {message}")]
    Tool {
        /// The tool.
        tool: String,
        /// The tool's message (its result's text).
        message: String,
    },
    /// The call did not get the tool's answer: the transport or the protocol failed, or
    /// the server refused it (unknown tool, invalid arguments, timeout). `source` says which.
    #[error("calling tool {tool:?}: {source}")]
    Call {
        /// The tool.
        tool: String,
        /// The client's error.
        source: E,
    },
    /// An argument could not be turned into JSON (its `Serialize` failed).
    #[error("tool {tool:?}: argument {argument:?} cannot be sent: {detail}")]
    Encode {
        /// The tool.
        tool: String,
        /// The argument's property name.
        argument: &'static str,
        /// serde's message.
        detail: String,
    },
    /// The result is not what the tool's return type says (an older or newer server, or
    /// another tool of that name): `detail` says what did not fit.
    #[error("tool {tool:?} answered with an unexpected result: {detail}")]
    Decode {
        /// The tool.
        tool: String,
        /// What did not fit.
        detail: String,
    },
}

/// Something a typed call stub calls tools through: implemented for
/// [`Registry`](crate::Registry) (in-process) and [`client::Client`](crate::client::Client)
/// (stdio, Streamable HTTP, in-process). Implement it for your own client to use the stubs
/// with it.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot call MCP tools through a typed stub",
    label = "pass a `Registry`, a `client::Client`, or a type implementing `ToolCaller`",
    note = "`add::call(&client, ..)` takes a reference to a `ToolCaller`"
)]
pub trait ToolCaller: Sync {
    /// Why a call failed before the tool answered.
    type Error: std::error::Error + Send + Sync + 'static;

    /// Calls tool `name` with `arguments`. A result with `isError: true` is returned as it
    /// is (the stub reads it as [`ToolCallError::Tool`]); a failure the caller reports as an
    /// error of its own that stands for the tool's (the registry's `ToolFailed`) is
    /// [`ToolCallError::Tool`] already.
    fn call_tool_object<'a>(
        &'a self,
        name: &'a str,
        arguments: Map<String, Value>,
    ) -> BoxFuture<'a, Result<CallToolResult, ToolCallError<Self::Error>>>;
}

/// What a tool function's return type reads back as, on the calling side: the stub's
/// success type. Implemented for every return type a tool can have out of the box; implement
/// it beside [`IntoToolResult`](crate::IntoToolResult) for your own.
#[diagnostic::on_unimplemented(
    message = "a typed call stub cannot read `{Self}` back from a tool result",
    label = "the tool's return type has no `ToolOutput` implementation",
    note = "implement `mcp_registry::tool::stub::ToolOutput` for `{Self}`, or call the tool with `call_tool`"
)]
pub trait ToolOutput {
    /// What the stub returns.
    type Output;

    /// Reads a successful (`isError` not set) result; `Err` says what did not fit.
    fn decode(result: CallToolResult) -> Result<Self::Output, String>;
}

impl ToolOutput for CallToolResult {
    type Output = CallToolResult;

    fn decode(result: CallToolResult) -> Result<CallToolResult, String> {
        Ok(result)
    }
}

/// Every text content, joined.
fn all_text(result: &CallToolResult) -> String {
    result.content.iter().filter_map(Content::as_text).collect()
}

impl ToolOutput for String {
    type Output = String;

    fn decode(result: CallToolResult) -> Result<String, String> {
        Ok(all_text(&result))
    }
}

impl ToolOutput for &'static str {
    type Output = String;

    fn decode(result: CallToolResult) -> Result<String, String> {
        Ok(all_text(&result))
    }
}

impl ToolOutput for () {
    type Output = ();

    fn decode(_: CallToolResult) -> Result<(), String> {
        Ok(())
    }
}

impl ToolOutput for Content {
    type Output = Content;

    fn decode(result: CallToolResult) -> Result<Content, String> {
        result
            .content
            .into_iter()
            .next()
            .ok_or_else(|| "the result has no content".to_owned())
    }
}

impl ToolOutput for Vec<Content> {
    type Output = Vec<Content>;

    fn decode(result: CallToolResult) -> Result<Vec<Content>, String> {
        Ok(result.content)
    }
}

impl<T: DeserializeOwned + JsonSchema + 'static> ToolOutput for Json<T> {
    type Output = T;

    /// `structuredContent` (unwrapped from `{"result": ..}` when `T`'s schema is not an
    /// object), else the first text read as JSON (a server that sends no structured content).
    fn decode(result: CallToolResult) -> Result<T, String> {
        let value = match result.structured_content {
            Some(value) if crate::schema::output_schema_for::<T>().wrapped => match value {
                Value::Object(mut map) if map.len() == 1 && map.contains_key("result") => {
                    map.remove("result").unwrap_or(Value::Null)
                }
                other => other,
            },
            Some(value) => value,
            None => {
                let text = all_text(&result);
                serde_json::from_str(&text).map_err(|e| {
                    format!("no structuredContent, and the text is not the JSON expected: {e}")
                })?
            }
        };
        serde_json::from_value(value).map_err(|e| e.to_string())
    }
}

impl<T: ToolOutput, E: Display> ToolOutput for Result<T, E> {
    type Output = T::Output;

    fn decode(result: CallToolResult) -> Result<T::Output, String> {
        T::decode(result)
    }
}

/// One argument of a typed call stub: any `serde::Serialize` type. Implemented for you;
/// named in the stub's bounds so that an argument that cannot be sent is reported as such.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be sent by a typed call stub",
    label = "an argument of a stub must implement `serde::Serialize`",
    note = "derive `serde::Serialize` on an argument's type; a parameter the call provides is left out of the stub only when its type is written `ToolContext` (under any path), not through a type alias: call such a tool with `call_tool`"
)]
pub trait StubArgument: Serialize {}

#[diagnostic::do_not_recommend]
impl<T: Serialize> StubArgument for T {}

/// The arguments of a stub, as a tuple of the function's argument types (`ToolContext`
/// left out): each turned into JSON under its property name. Implemented for tuples of up to
/// 16 [`StubArgument`]s.
pub trait StubArguments {
    /// The arguments object; `Err` names the argument that could not be encoded.
    fn encode(self, names: &[&'static str]) -> Result<Map<String, Value>, (&'static str, String)>;
}

macro_rules! stub_arguments {
    ($($T:ident $v:ident $i:tt),*) => {
        impl<$($T: StubArgument),*> StubArguments for ($($T,)*) {
            #[allow(unused_mut, unused_variables)]
            fn encode(self, names: &[&'static str]) -> Result<Map<String, Value>, (&'static str, String)> {
                let mut map = Map::new();
                $(
                    let name = names.get($i).copied().unwrap_or("?");
                    let value = serde_json::to_value(&self.$i).map_err(|e| (name, e.to_string()))?;
                    map.insert(name.to_owned(), value);
                )*
                Ok(map)
            }
        }
    };
}

stub_arguments!();
stub_arguments!(A a 0);
stub_arguments!(A a 0, B b 1);
stub_arguments!(A a 0, B b 1, C c 2);
stub_arguments!(A a 0, B b 1, C c 2, D d 3);
stub_arguments!(A a 0, B b 1, C c 2, D d 3, E e 4);
stub_arguments!(A a 0, B b 1, C c 2, D d 3, E e 4, F f 5);
stub_arguments!(A a 0, B b 1, C c 2, D d 3, E e 4, F f 5, G g 6);
stub_arguments!(A a 0, B b 1, C c 2, D d 3, E e 4, F f 5, G g 6, H h 7);
stub_arguments!(A a 0, B b 1, C c 2, D d 3, E e 4, F f 5, G g 6, H h 7, I i 8);
stub_arguments!(A a 0, B b 1, C c 2, D d 3, E e 4, F f 5, G g 6, H h 7, I i 8, J j 9);
stub_arguments!(A a 0, B b 1, C c 2, D d 3, E e 4, F f 5, G g 6, H h 7, I i 8, J j 9, K k 10);
stub_arguments!(A a 0, B b 1, C c 2, D d 3, E e 4, F f 5, G g 6, H h 7, I i 8, J j 9, K k 10, L l 11);
stub_arguments!(A a 0, B b 1, C c 2, D d 3, E e 4, F f 5, G g 6, H h 7, I i 8, J j 9, K k 10, L l 11, M m 12);
stub_arguments!(A a 0, B b 1, C c 2, D d 3, E e 4, F f 5, G g 6, H h 7, I i 8, J j 9, K k 10, L l 11, M m 12, N n 13);
stub_arguments!(A a 0, B b 1, C c 2, D d 3, E e 4, F f 5, G g 6, H h 7, I i 8, J j 9, K k 10, L l 11, M m 12, N n 13, O o 14);
stub_arguments!(A a 0, B b 1, C c 2, D d 3, E e 4, F f 5, G g 6, H h 7, I i 8, J j 9, K k 10, L l 11, M m 12, N n 13, O o 14, P p 15);

/// What a generated stub returns: the call, to `.await`.
pub type StubFuture<'a, C, Args, Out> = BoxFuture<
    'a,
    Result<<C as CallStub<Args, Out>>::Output, ToolCallError<<C as ToolCaller>::Error>>,
>;

/// What a generated stub is bounded by: a [`ToolCaller`] that can send `Args` and read the
/// tool's return type `Out` back. Implemented for you; the bound sits on the caller type so
/// that a tool whose arguments are not `Serialize` (or whose return type has no
/// [`ToolOutput`]) still compiles, and only a call of its stub is an error.
pub trait CallStub<Args, Out>: ToolCaller {
    /// What the stub returns on success.
    type Output;

    /// Encodes `arguments` under `names`, calls `tool`, reads the result back: the body of
    /// every generated stub.
    fn call_stub<'a>(
        &'a self,
        tool: &'static str,
        names: &[&'static str],
        arguments: Args,
    ) -> BoxFuture<'a, Result<Self::Output, ToolCallError<Self::Error>>>;
}

impl<C, Args, Out> CallStub<Args, Out> for C
where
    C: ToolCaller + ?Sized,
    Args: StubArguments + 'static,
    Out: ToolOutput + 'static,
{
    type Output = Out::Output;

    fn call_stub<'a>(
        &'a self,
        tool: &'static str,
        names: &[&'static str],
        arguments: Args,
    ) -> BoxFuture<'a, Result<Out::Output, ToolCallError<C::Error>>> {
        let arguments = arguments.encode(names);
        Box::pin(async move {
            let arguments = arguments.map_err(|(argument, detail)| ToolCallError::Encode {
                tool: tool.to_owned(),
                argument,
                detail,
            })?;
            let result = self.call_tool_object(tool, arguments).await?;
            if result.is_error == Some(true) {
                return Err(ToolCallError::Tool {
                    tool: tool.to_owned(),
                    message: all_text(&result),
                });
            }
            Out::decode(result).map_err(|detail| ToolCallError::Decode {
                tool: tool.to_owned(),
                detail,
            })
        })
    }
}
