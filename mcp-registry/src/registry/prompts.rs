//! Prompts of a registry's servers: the name index, rendering a prompt by name in-process,
//! and listing every prompt definition.
//!
//! One request kind in two layers, named alike: its MCP methods in `dispatch/prompts.rs`.

use std::future::IntoFuture;
use std::sync::Arc;
use std::time::Duration;

use foldhash::HashMap;
use serde_json::Value;

use super::guard::{Guarded, RunErrors};
use super::holder::{Held, Holder, holder};
use super::layer::{Endpoint, Request, RequestKind, Response, mismatch};
use super::options::WithOptions;
use super::scope::{RequestInfo, RunScope, through_layers};
use super::{CallOptions, Registry, ServerEntry, Snapshot, qualified_name, split_qualified};
use crate::prompt::{Prompt, PromptArguments, PromptError};
use crate::protocol::{self, GetPromptResult};
use crate::server::Server;
use crate::tool::BoxFuture;

/// Why [`Registry::get_prompt_by_name`] produced no result. On the wire, every kind is a
/// JSON-RPC error: -32602 for a lookup or argument error, -32603 for a failure.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum GetPromptError {
    /// No server has a prompt of that name.
    #[error("unknown prompt {name:?}")]
    UnknownPrompt {
        /// The name asked for.
        name: String,
    },
    /// A qualified name (`mcp__<server>__<prompt>`) names a server the registry lacks.
    #[error("unknown server {server:?} in prompt name {name:?}")]
    UnknownServer {
        /// The server named.
        server: String,
        /// The name asked for.
        name: String,
    },
    /// The plain name is found in several enabled servers.
    #[error(
        "prompt name {name:?} is ambiguous: it is provided by servers {servers:?}; ask for it as mcp__<server>__{name}"
    )]
    AmbiguousPrompt {
        /// The name asked for.
        name: String,
        /// Every enabled server that has it, sorted.
        servers: Vec<String>,
    },
    /// The prompt's server is disabled.
    #[error("prompt {prompt:?} belongs to server {server:?}, which is disabled")]
    ServerDisabled {
        /// The server.
        server: String,
        /// The prompt.
        prompt: String,
    },
    /// The arguments are unusable: a required one is missing, or a value is not a string.
    #[error("invalid arguments for prompt {prompt:?}: {message}")]
    InvalidArguments {
        /// The prompt.
        prompt: String,
        /// What is wrong, naming the argument.
        message: String,
    },
    /// The prompt's function reported a failure.
    #[error("prompt {prompt:?} failed: {message}")]
    Failed {
        /// The prompt.
        prompt: String,
        /// The function's own message.
        message: String,
    },
    /// The prompt's function panicked; the panic was caught and the registry is unaffected.
    #[error("prompt {prompt:?} panicked: {message}")]
    Panicked {
        /// The prompt.
        prompt: String,
        /// The panic payload, when it was a string.
        message: String,
    },
    /// The rendering outlasted its time limit (the prompt's, else the registry's default);
    /// its future was dropped.
    #[error("prompt {prompt:?} timed out after {timeout:?}")]
    TimedOut {
        /// The prompt.
        prompt: String,
        /// The limit that was reached.
        timeout: std::time::Duration,
    },
    /// The rendering has a time limit, but it waited where no timer can keep one: outside a
    /// Tokio runtime, or in one built without `enable_time`. Its future was dropped rather
    /// than run unlimited.
    #[error(
        "prompt {prompt:?} has a time limit of {limit:?} but waited outside a Tokio runtime with time enabled, where no timer can keep it; run it inside one, or without a timeout"
    )]
    NoTimer {
        /// The prompt.
        prompt: String,
        /// The limit in force.
        limit: Duration,
    },
    /// A layer rejected the request with this JSON-RPC error, which the caller gets on the
    /// wire; the prompt's function did not run.
    #[error("getting prompt {prompt:?} was rejected: {}", .error.message)]
    Rejected {
        /// The prompt.
        prompt: String,
        /// The layer's error.
        error: protocol::ErrorObject,
    },
    /// The caller cancelled the rendering; its future was dropped.
    #[error("prompt {prompt:?} was cancelled")]
    Cancelled {
        /// The prompt.
        prompt: String,
    },
    /// A layer (the registry's approval, or a host's) refused the request; the prompt's
    /// function did not run.
    #[error("getting prompt {prompt:?} was denied: {reason}")]
    Denied {
        /// The prompt.
        prompt: String,
        /// The layer's reason.
        reason: String,
    },
}

impl GetPromptError {
    /// The JSON-RPC error code `prompts/get` answers this error with: -32602 (invalid
    /// params) for an unknown prompt or bad arguments, -32600 (invalid request) for a
    /// refusal, -32603 (internal error) for a failure.
    pub fn code(&self) -> protocol::ErrorCode {
        match self {
            GetPromptError::Failed { .. }
            | GetPromptError::Panicked { .. }
            | GetPromptError::TimedOut { .. }
            | GetPromptError::NoTimer { .. }
            | GetPromptError::Cancelled { .. } => protocol::ErrorCode::INTERNAL_ERROR,
            GetPromptError::Denied { .. } => protocol::ErrorCode::INVALID_REQUEST,
            GetPromptError::Rejected { error, .. } => error.code,
            _ => protocol::ErrorCode::INVALID_PARAMS,
        }
    }
}

/// A prompt of an enabled server, as [`Registry::all_prompt_definitions`] lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct PromptDefinition {
    /// The server that provides it.
    pub server: String,
    /// `mcp__<server>__<prompt>`.
    pub qualified_name: String,
    /// The prompt as `prompts/list` describes it.
    pub prompt: protocol::PromptDescriptor,
}

/// One server's prompt, in the registry's name index.
#[derive(Clone)]
pub(crate) struct PromptRef {
    server: Server,
    prompt: Prompt,
    enabled: bool,
}

impl Held for PromptRef {
    fn server(&self) -> &Server {
        &self.server
    }
    fn enabled(&self) -> bool {
        self.enabled
    }
}

/// Plain prompt name -> every server that has it (sorted by server name).
pub(crate) type PromptIndex = HashMap<Arc<str>, Vec<PromptRef>>;

pub(crate) fn index<'a>(servers: impl Iterator<Item = &'a ServerEntry>) -> PromptIndex {
    let mut prompts = PromptIndex::default();
    for entry in servers {
        for prompt in entry.server.prompts() {
            prompts
                .entry(prompt.shared_name().clone())
                .or_default()
                .push(PromptRef {
                    server: entry.server.clone(),
                    prompt: prompt.clone(),
                    enabled: entry.enabled,
                });
        }
    }
    prompts
}

impl Snapshot {
    /// Resolves a plain or qualified prompt name to one enabled server's prompt.
    fn resolve_prompt(&self, name: &str) -> Result<(Server, Prompt), GetPromptError> {
        if let Some(refs) = self.prompts.get(name) {
            return match holder(refs) {
                Holder::Only(only) => Ok((only.server.clone(), only.prompt.clone())),
                Holder::Ambiguous(servers) => Err(GetPromptError::AmbiguousPrompt {
                    name: name.to_owned(),
                    servers,
                }),
                Holder::Disabled(server) => Err(GetPromptError::ServerDisabled {
                    server,
                    prompt: name.to_owned(),
                }),
            };
        }
        let unknown = || GetPromptError::UnknownPrompt {
            name: name.to_owned(),
        };
        let (server_name, prompt_name) = split_qualified(name).ok_or_else(unknown)?;
        let entry = self
            .servers
            .get(server_name)
            .ok_or_else(|| GetPromptError::UnknownServer {
                server: server_name.to_owned(),
                name: name.to_owned(),
            })?;
        let prompt = entry.server.prompt(prompt_name).ok_or_else(unknown)?;
        if !entry.enabled {
            return Err(GetPromptError::ServerDisabled {
                server: server_name.to_owned(),
                prompt: prompt_name.to_owned(),
            });
        }
        Ok((entry.server.clone(), prompt.clone()))
    }
}

/// `arguments` as a prompt takes them: an object of strings (or nothing).
fn string_arguments(prompt: &str, arguments: Value) -> Result<PromptArguments, GetPromptError> {
    let invalid = |message: String| GetPromptError::InvalidArguments {
        prompt: prompt.to_owned(),
        message,
    };
    match arguments {
        Value::Null => Ok(PromptArguments::new()),
        Value::Object(map) => map
            .into_iter()
            .map(|(name, value)| match value {
                Value::String(s) => Ok((name, s)),
                other => Err(invalid(format!(
                    "argument `{name}` must be a string, got {}",
                    protocol::value_kind(&other)
                ))),
            })
            .collect(),
        other => Err(invalid(format!(
            "the arguments must be an object of strings, got {}",
            protocol::value_kind(&other)
        ))),
    }
}

/// The guarded run of `prompt`'s function in `scope`: required arguments checked first.
fn render(
    prompt: Prompt,
    scope: RunScope,
    arguments: PromptArguments,
) -> BoxFuture<'static, Result<GetPromptResult, GetPromptError>> {
    let RunScope { ctx, guard } = scope;
    let mut completion = ctx.completion();
    let run = Guarded::start(guard, || prompt.get_in(ctx, arguments));
    Box::pin(async move {
        let outcome = run.await;
        completion.complete();
        let prompt = prompt.name().to_owned();
        match outcome {
            Ok(Ok(result)) => Ok(result),
            Ok(Err(PromptError::InvalidArguments(message))) => {
                Err(GetPromptError::InvalidArguments { prompt, message })
            }
            Ok(Err(PromptError::Failed(message))) => {
                Err(GetPromptError::Failed { prompt, message })
            }
            Err(failure) => Err(failure.into_error(prompt)),
        }
    })
}

impl RunErrors for GetPromptError {
    const WHAT: &'static str = "prompt";
    fn panicked(prompt: String, message: String) -> Self {
        GetPromptError::Panicked { prompt, message }
    }
    fn timed_out(prompt: String, timeout: Duration) -> Self {
        GetPromptError::TimedOut { prompt, timeout }
    }
    fn no_timer(prompt: String, limit: Duration) -> Self {
        GetPromptError::NoTimer { prompt, limit }
    }
    fn cancelled(prompt: String) -> Self {
        GetPromptError::Cancelled { prompt }
    }
    fn failed(prompt: String, message: String) -> Self {
        GetPromptError::Failed { prompt, message }
    }
}

/// A prompt to render, configured and `.await`ed: what [`Registry::get_prompt_by_name`]
/// returns.
pub type PromptRequest<'a> = WithOptions<PromptGet<'a>>;

/// What a [`PromptRequest`] renders: a prompt by name, with its arguments.
pub struct PromptGet<'a> {
    registry: &'a Registry,
    name: &'a str,
    arguments: PromptArguments,
}

impl IntoFuture for PromptRequest<'_> {
    type Output = Result<GetPromptResult, GetPromptError>;
    type IntoFuture = BoxFuture<'static, Self::Output>;

    fn into_future(self) -> Self::IntoFuture {
        let PromptGet {
            registry,
            name,
            arguments,
        } = self.target;
        let (server, prompt) = match registry.snapshot().resolve_prompt(name) {
            Ok(found) => found,
            Err(e) => return Box::pin(std::future::ready(Err(e))),
        };
        let mut options = self.options;
        registry.invoke_prompt(
            &server,
            &prompt,
            arguments,
            &mut options,
            RequestInfo::default(),
        )
    }
}

impl Registry {
    /// Renders the prompt `name` with `arguments`: names to string values, a
    /// [`PromptArguments`] as [`Client::get_prompt`](crate::client::Client::get_prompt) takes
    /// them, or pairs of strings.
    ///
    /// `name` is a plain prompt name, found in whichever enabled server has it, or
    /// `mcp__<server>__<prompt>` for one server, as for
    /// [`call_tool_by_name`](Self::call_tool_by_name). Returns the request to configure (a
    /// time limit, cancellation, notifications, values for the prompt: see [`WithOptions`])
    /// and `.await`: it passes the registry's layers, sees the registry's host state, and
    /// runs under the prompt's time limit, else the registry's default. A missing required
    /// argument is refused before the prompt's function runs; a panic in it is caught.
    ///
    /// ```
    /// # use mcp_registry::{Prompt, Registry, Server};
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let greet = Prompt::builder("greet")
    ///     .required_argument("name", "Who to greet")
    ///     .handler(|args| async move { format!("Greet {}", args["name"]) })
    ///     .unwrap();
    /// let registry = Registry::from_servers([Server::builder("s").prompt(greet).build().unwrap()]);
    /// let result = registry.get_prompt_by_name("greet", [("name", "Ada")]).await.unwrap();
    /// assert_eq!(result.messages[0].content.as_text(), Some("Greet Ada"));
    /// let none = mcp_registry::prompt::PromptArguments::new();
    /// let err = registry.get_prompt_by_name("mcp__s__greet", none).await.unwrap_err();
    /// assert_eq!(err.to_string(), "invalid arguments for prompt \"greet\": missing required argument `name`");
    /// # }
    /// ```
    pub fn get_prompt_by_name<'a, K, V>(
        &'a self,
        name: &'a str,
        arguments: impl IntoIterator<Item = (K, V)>,
    ) -> PromptRequest<'a>
    where
        K: Into<String>,
        V: Into<String>,
    {
        WithOptions::new(PromptGet {
            registry: self,
            name,
            arguments: arguments
                .into_iter()
                .map(|(k, v)| (k.into(), v.into()))
                .collect(),
        })
    }

    /// Renders `prompt` of `server` for a request: its scope, the layer stack, then the
    /// guarded run of its function.
    pub(crate) fn invoke_prompt(
        &self,
        server: &Server,
        prompt: &Prompt,
        arguments: PromptArguments,
        options: &mut CallOptions,
        info: RequestInfo,
    ) -> BoxFuture<'static, Result<GetPromptResult, GetPromptError>> {
        // The prompt's own server and name, also for a prompt served through the union.
        let names = server.prompt_call_names(prompt);
        let own_name = names.tool.clone();
        let scope = self.scope(names, options, info, prompt.timeout());
        let Some(layers) = self.layers(options) else {
            return render(prompt.clone(), scope, arguments);
        };
        let request = Request {
            kind: RequestKind::Prompt,
            name: own_name,
            arguments: Value::Object(
                arguments
                    .into_iter()
                    .map(|(k, v)| (k, Value::String(v)))
                    .collect(),
            ),
            context: scope.ctx,
        };
        let name = prompt.name().to_owned();
        let (prompt, guard) = (prompt.clone(), scope.guard);
        let endpoint: Endpoint = Box::new(move |request: Request| {
            let Request {
                arguments, context, ..
            } = request;
            let rendering = match string_arguments(prompt.name(), arguments) {
                Ok(arguments) => render(
                    prompt,
                    RunScope {
                        ctx: context,
                        guard,
                    },
                    arguments,
                ),
                Err(e) => Box::pin(std::future::ready(Err(e))),
            };
            Box::pin(async move { Response::Prompt(rendering.await) })
        });
        let running = through_layers(&layers, request, endpoint);
        Box::pin(async move {
            match running.await {
                Some(Response::Prompt(result)) => result,
                Some(other) => Err(GetPromptError::Failed {
                    message: mismatch(RequestKind::Prompt, &other),
                    prompt: name,
                }),
                None => Err(GetPromptError::Cancelled { prompt: name }),
            }
        })
    }

    /// Every prompt of every enabled server, sorted by server then prompt name.
    pub fn all_prompt_definitions(&self) -> Vec<PromptDefinition> {
        let snapshot = self.snapshot();
        let definitions = snapshot.enabled().flat_map(|server| {
            server.prompts().iter().map(|p| PromptDefinition {
                server: server.name().to_owned(),
                qualified_name: qualified_name(server.name(), p.name()),
                prompt: p.descriptor().clone(),
            })
        });
        definitions.collect()
    }
}
