//! Prompts of a registry's servers: the name index, rendering a prompt by name in-process,
//! and listing every prompt definition.

use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use foldhash::HashMap;
use futures_util::FutureExt;
use serde_json::Value;

use super::{Registry, ServerEntry, Snapshot, qualified_name, split_qualified};
use crate::prompt::{Prompt, PromptArguments, PromptError};
use crate::protocol::{self, GetPromptResult};
use crate::server::Server;

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
}

impl GetPromptError {
    /// The JSON-RPC error code `prompts/get` answers this error with: -32602 (invalid
    /// params) for an unknown prompt or bad arguments, -32603 (internal error) for a failure.
    pub fn code(&self) -> protocol::ErrorCode {
        match self {
            GetPromptError::Failed { .. } | GetPromptError::Panicked { .. } => {
                protocol::ErrorCode::INTERNAL_ERROR
            }
            _ => protocol::ErrorCode::INVALID_PARAMS,
        }
    }
}

/// A prompt of an enabled server, as [`Registry::all_prompt_definitions`] lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
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
    fn resolve_prompt(&self, name: &str) -> Result<Prompt, GetPromptError> {
        if let Some(refs) = self.prompts.get(name) {
            let mut enabled = refs.iter().filter(|r| r.enabled);
            return match (enabled.next(), enabled.next()) {
                (Some(only), None) => Ok(only.prompt.clone()),
                (Some(_), Some(_)) => Err(GetPromptError::AmbiguousPrompt {
                    name: name.to_owned(),
                    servers: refs
                        .iter()
                        .filter(|r| r.enabled)
                        .map(|r| r.server.name().to_owned())
                        .collect(),
                }),
                (None, _) => Err(GetPromptError::ServerDisabled {
                    server: refs[0].server.name().to_owned(),
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
        Ok(prompt.clone())
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
                    crate::protocol::decode::kind(&other)
                ))),
            })
            .collect(),
        other => Err(invalid(format!(
            "the arguments must be an object of strings, got {}",
            crate::protocol::decode::kind(&other)
        ))),
    }
}

/// Renders `prompt`: required arguments checked, panics caught.
pub(crate) async fn render(
    prompt: &Prompt,
    arguments: PromptArguments,
    ctx: Option<crate::ToolContext>,
) -> Result<GetPromptResult, GetPromptError> {
    let name = prompt.name();
    let rendering = match ctx {
        Some(ctx) => prompt.get_in(ctx, arguments),
        None => prompt.get(arguments),
    };
    let rendering = AssertUnwindSafe(rendering).catch_unwind();
    match rendering.await {
        Ok(Ok(result)) => Ok(result),
        Ok(Err(PromptError::InvalidArguments(message))) => Err(GetPromptError::InvalidArguments {
            prompt: name.to_owned(),
            message,
        }),
        Ok(Err(PromptError::Failed(message))) => Err(GetPromptError::Failed {
            prompt: name.to_owned(),
            message,
        }),
        Err(panic) => Err(GetPromptError::Panicked {
            prompt: name.to_owned(),
            message: panic
                .downcast_ref::<&str>()
                .map(|s| (*s).to_owned())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_default(),
        }),
    }
}

impl Registry {
    /// Renders the prompt `name` with `arguments` (a JSON object of strings, or `null`).
    ///
    /// `name` is a plain prompt name, found in whichever enabled server has it, or
    /// `mcp__<server>__<prompt>` for one server, as for
    /// [`call_tool_by_name`](Self::call_tool_by_name). A missing required argument is refused
    /// before the prompt's function runs; a panic in it is caught.
    ///
    /// ```
    /// # use mcp_registry::{Prompt, Registry, Server};
    /// # use serde_json::json;
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let greet = Prompt::builder("greet")
    ///     .required_argument("name", "Who to greet")
    ///     .handler(|args| async move { format!("Greet {}", args["name"]) })
    ///     .unwrap();
    /// let registry = Registry::from_servers([Server::builder("s").prompt(greet).build().unwrap()]);
    /// let result = registry.get_prompt_by_name("greet", json!({"name": "Ada"})).await.unwrap();
    /// assert_eq!(result.messages[0].content.as_text(), Some("Greet Ada"));
    /// let err = registry.get_prompt_by_name("mcp__s__greet", json!({})).await.unwrap_err();
    /// assert_eq!(err.to_string(), "invalid arguments for prompt \"greet\": missing required argument `name`");
    /// # }
    /// ```
    pub async fn get_prompt_by_name(
        &self,
        name: &str,
        arguments: Value,
    ) -> Result<GetPromptResult, GetPromptError> {
        let prompt = self.snapshot().resolve_prompt(name)?;
        let arguments = string_arguments(prompt.name(), arguments)?;
        render(&prompt, arguments, None).await
    }

    /// Every prompt of every enabled server, sorted by server then prompt name.
    pub fn all_prompt_definitions(&self) -> Vec<PromptDefinition> {
        self.snapshot()
            .servers
            .values()
            .filter(|e| e.enabled)
            .flat_map(|e| {
                e.server.prompts().iter().map(|p| PromptDefinition {
                    server: e.server.name().to_owned(),
                    qualified_name: qualified_name(e.server.name(), p.name()),
                    prompt: p.descriptor().clone(),
                })
            })
            .collect()
    }
}
