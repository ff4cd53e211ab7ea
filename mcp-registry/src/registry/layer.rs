//! Layers: code a host puts around every request a registry serves, whatever its kind
//! (`tools/call`, `prompts/get`, `resources/read`, `completion/complete`, `skills/get`) and
//! however it arrives (by name in-process, `handle_mcp_*`, a session, stdio, HTTP, an agent
//! session).
//!
//! A layer gets the [`Request`] and the rest of the stack as [`Next`]: it may look at the
//! request, change its arguments, answer it itself (a cache), refuse it
//! ([`Request::refuse`]), or run it (`next.run(request).await`) and look at the
//! [`Response`] (logging, metrics). Layers run in the order they were added, the first
//! outermost; the registry's [approval](crate::RegistryBuilder::approval) runs after them,
//! then the item's function under its time limit.
//!
//! ```
//! use std::sync::Arc;
//! use std::sync::atomic::{AtomicUsize, Ordering};
//! use mcp_registry::layer::{layer_fn, RequestKind};
//! use mcp_registry::{Registry, Server, Tool};
//! use serde_json::json;
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! # let hi = Tool::new("hi", "Say hi", json!({"type": "object"}), |_| async { "hi" }).unwrap();
//! # let wipe = Tool::new("wipe", "Wipe", json!({"type": "object"}), |_| async { "wiped" }).unwrap();
//! let calls = Arc::new(AtomicUsize::new(0));
//! let counted = calls.clone();
//! let registry = Registry::builder()
//!     .server(Server::new("s", None, [hi, wipe]).unwrap())
//!     .layer(layer_fn(move |request, next| {
//!         counted.fetch_add(1, Ordering::Relaxed);
//!         async move {
//!             if request.kind() == RequestKind::Tool && request.name() == "wipe" {
//!                 return request.refuse("wiping is not allowed here");
//!             }
//!             next.run(request).await
//!         }
//!     }))
//!     .build();
//! assert_eq!(registry.call_tool_by_name("hi", json!({})).await.unwrap().first_text(), Some("hi"));
//! let refused = registry.call_tool_by_name("wipe", json!({})).await.unwrap_err();
//! assert_eq!(refused.to_string(), "calling tool \"wipe\" was denied: wiping is not allowed here");
//! assert_eq!(calls.load(Ordering::Relaxed), 2);
//! # }
//! ```

use std::fmt;
use std::sync::Arc;

use serde_json::Value;

use super::{CallError, GetPromptError, ReadResourceError};
use crate::protocol::{
    CallToolResult, CompleteResult, ErrorCode, ErrorObject, GetPromptResult, ReadResourceResult,
};
use crate::skill::SkillEntry;
use crate::tool::{BoxFuture, ToolContext};

/// Code around every request a registry serves: see the [module docs](self).
///
/// Implement it for a type with state, or make one from a closure with [`layer_fn`].
pub trait Layer: Send + Sync + 'static {
    /// Serves `request`: usually by running `next` with it, before and after doing its own
    /// work.
    fn call<'a>(&'a self, request: Request, next: Next) -> BoxFuture<'a, Response>;
}

impl fmt::Debug for dyn Layer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Layer")
    }
}

/// A [`Layer`] from a closure taking the request and the rest of the stack.
pub fn layer_fn<F, Fut>(f: F) -> impl Layer
where
    F: Fn(Request, Next) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Response> + Send + 'static,
{
    LayerFn(f)
}

struct LayerFn<F>(F);

impl<F, Fut> Layer for LayerFn<F>
where
    F: Fn(Request, Next) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Response> + Send + 'static,
{
    fn call<'a>(&'a self, request: Request, next: Next) -> BoxFuture<'a, Response> {
        Box::pin((self.0)(request, next))
    }
}

/// What kind of request a layer sees.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum RequestKind {
    /// `tools/call`, or [`Registry::call_tool_by_name`](crate::Registry::call_tool_by_name).
    Tool,
    /// `prompts/get`, or [`Registry::get_prompt_by_name`](crate::Registry::get_prompt_by_name).
    Prompt,
    /// `resources/read` of a resource or a template, or
    /// [`Registry::read_resource`](crate::Registry::read_resource).
    Resource,
    /// `completion/complete`.
    Completion,
    /// `skills/get` (the Skills extension, SEP-2640): a skill's entry, named by its
    /// `SKILL.md` URI. (Its files are read as [`Resource`](Self::Resource)s.)
    Skill,
}

impl RequestKind {
    /// The MCP method of this kind of request.
    pub fn method(self) -> &'static str {
        match self {
            RequestKind::Tool => crate::protocol::method::TOOLS_CALL,
            RequestKind::Prompt => crate::protocol::method::PROMPTS_GET,
            RequestKind::Resource => crate::protocol::method::RESOURCES_READ,
            RequestKind::Completion => crate::protocol::method::COMPLETION_COMPLETE,
            RequestKind::Skill => crate::skill::method::SKILLS_GET,
        }
    }
}

impl RequestKind {
    /// The kind of request `method` is, when it is one that runs through the layers.
    pub fn of_method(method: &str) -> Option<RequestKind> {
        use crate::protocol::method;
        Some(match method {
            method::TOOLS_CALL => RequestKind::Tool,
            method::PROMPTS_GET => RequestKind::Prompt,
            method::RESOURCES_READ => RequestKind::Resource,
            method::COMPLETION_COMPLETE => RequestKind::Completion,
            crate::skill::method::SKILLS_GET => RequestKind::Skill,
            _ => return None,
        })
    }
}

impl fmt::Display for RequestKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.method())
    }
}

/// One request, as the layers see it.
pub struct Request {
    pub(crate) kind: RequestKind,
    pub(crate) name: Arc<str>,
    pub(crate) arguments: Value,
    pub(crate) context: ToolContext,
}

impl Request {
    /// The kind of request.
    pub fn kind(&self) -> RequestKind {
        self.kind
    }

    /// The server serving it.
    pub fn server(&self) -> &str {
        self.context.server_name()
    }

    /// What it names: the tool, the prompt, the resource's URI, the completion's reference
    /// (a prompt's name or a template's URI), or the skill's `SKILL.md` URI.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Its arguments: a tool's (an object), a prompt's (an object of strings), a
    /// completion's `{"argument": {name, value}, "context": ..}`; `null` for a resource or a
    /// skill.
    pub fn arguments(&self) -> &Value {
        &self.arguments
    }

    /// The arguments, to change before the request runs.
    pub fn arguments_mut(&mut self) -> &mut Value {
        &mut self.arguments
    }

    /// The request's context: its id, `_meta`, protocol version, cancellation, and the host
    /// state of the registry and of the call ([`ToolContext::get`]).
    pub fn context(&self) -> &ToolContext {
        &self.context
    }

    /// Refuses the request: the item never runs, and the caller gets `reason`. A tool's
    /// caller reads [`CallError::Denied`] (on the wire, a result with `isError: true`); a
    /// prompt's, resource's, completion's or skill's, a JSON-RPC error -32600 naming the
    /// reason.
    pub fn refuse(&self, reason: impl Into<String>) -> Response {
        let reason = reason.into();
        let name = self.name.to_string();
        match self.kind {
            RequestKind::Tool => Response::Tool(Err(CallError::Denied { tool: name, reason })),
            RequestKind::Prompt => Response::Prompt(Err(GetPromptError::Denied {
                prompt: name,
                reason,
            })),
            RequestKind::Resource => {
                Response::Resource(Err(ReadResourceError::Denied { uri: name, reason }))
            }
            RequestKind::Completion => Response::Completion(Err(ErrorObject::new(
                ErrorCode::INVALID_REQUEST,
                format!("completing {name:?} was denied: {reason}"),
            ))),
            RequestKind::Skill => Response::Skill(Err(ErrorObject::new(
                ErrorCode::INVALID_REQUEST,
                format!("getting skill {name:?} was denied: {reason}"),
            ))),
        }
    }
}

impl Request {
    /// Refuses the request with a JSON-RPC error of the layer's choosing: on the wire the
    /// caller gets `error` itself, whatever the kind (a tool's caller in-process,
    /// [`CallError::Rejected`]). For refusals a model should read, prefer
    /// [`refuse`](Self::refuse).
    pub fn reject(&self, error: ErrorObject) -> Response {
        let name = self.name.to_string();
        match self.kind {
            RequestKind::Tool => Response::Tool(Err(CallError::Rejected { tool: name, error })),
            RequestKind::Prompt => Response::Prompt(Err(GetPromptError::Rejected {
                prompt: name,
                error,
            })),
            RequestKind::Resource => {
                Response::Resource(Err(ReadResourceError::Rejected { uri: name, error }))
            }
            RequestKind::Completion => Response::Completion(Err(error)),
            RequestKind::Skill => Response::Skill(Err(error)),
        }
    }
}

impl fmt::Debug for Request {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Request")
            .field("kind", &self.kind)
            .field("server", &self.server())
            .field("name", &self.name)
            .field("arguments", &self.arguments)
            .finish_non_exhaustive()
    }
}

/// What a request ended with, by kind.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum Response {
    /// A tool call's result or error.
    Tool(Result<CallToolResult, CallError>),
    /// A prompt's messages or error.
    Prompt(Result<GetPromptResult, GetPromptError>),
    /// A resource's contents or error.
    Resource(Result<ReadResourceResult, ReadResourceError>),
    /// A completion's values or error.
    Completion(Result<CompleteResult, ErrorObject>),
    /// A skill's entry or error.
    Skill(Result<SkillEntry, ErrorObject>),
}

impl Response {
    /// Whether the request failed: an error, or a tool result with `isError: true`.
    pub fn is_error(&self) -> bool {
        match self {
            Response::Tool(Ok(result)) => result.is_error == Some(true),
            Response::Tool(Err(_)) => true,
            Response::Prompt(r) => r.is_err(),
            Response::Resource(r) => r.is_err(),
            Response::Completion(r) => r.is_err(),
            Response::Skill(r) => r.is_err(),
        }
    }

    /// The kind of request this answers.
    pub fn kind(&self) -> RequestKind {
        match self {
            Response::Tool(_) => RequestKind::Tool,
            Response::Prompt(_) => RequestKind::Prompt,
            Response::Resource(_) => RequestKind::Resource,
            Response::Completion(_) => RequestKind::Completion,
            Response::Skill(_) => RequestKind::Skill,
        }
    }
}

/// The function a request ends in, once every layer has run.
pub(crate) type Endpoint = Box<dyn FnOnce(Request) -> BoxFuture<'static, Response> + Send>;

/// The rest of the stack after a layer: the next layers, then the item itself.
pub struct Next {
    layers: Arc<[Arc<dyn Layer>]>,
    index: usize,
    endpoint: Endpoint,
}

impl Next {
    pub(crate) fn new(layers: Arc<[Arc<dyn Layer>]>, endpoint: Endpoint) -> Self {
        Next {
            layers,
            index: 0,
            endpoint,
        }
    }

    /// Runs the rest of the stack with `request`.
    pub fn run(self, request: Request) -> BoxFuture<'static, Response> {
        let Some(layer) = self.layers.get(self.index).cloned() else {
            return (self.endpoint)(request);
        };
        let next = Next {
            index: self.index + 1,
            ..self
        };
        Box::pin(async move { layer.call(request, next).await })
    }
}

impl fmt::Debug for Next {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Next")
            .field("layers_left", &(self.layers.len() - self.index))
            .finish()
    }
}

/// A layer's response of another kind than its request's, as the request's error.
#[cold]
pub(crate) fn mismatch(expected: RequestKind, got: &Response) -> String {
    format!(
        "a layer answered a {expected} request with a {} response",
        got.kind()
    )
}
