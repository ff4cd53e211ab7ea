//! `prompts/list` and `prompts/get` for a registry server. Each method takes the request's
//! params as they came and reads them into its typed params struct.

use serde::{Serialize, Serializer};
use serde_json::{Map, Value};

use std::sync::Arc;

use super::page::{Listing, Window};
use super::{
    Answer, Body, Connection, Dispatcher, Retry, input_required, invalid_params, outcome,
    read_params,
};
use crate::prompt::{Prompt, PromptArguments};
use crate::protocol::{
    ErrorCode, ErrorObject, GetPromptParams, GetPromptResult, ListPromptsParams, PromptsCapability,
    ProtocolVersion, RequestId, method,
};
use crate::registry::CallOptions;
use crate::registry::request_state::arguments_digest;
use crate::server::Server;
use crate::tool::round::{BoundArguments, Round, RoundSeal};
use crate::tool::{CallNames, CallScope, ToolContext};

/// The method-specific part of a prompts result.
pub(crate) enum PromptsBody {
    List(PromptsPage),
    Get(GetPromptResult),
}

/// A page of a server's prompts, in the form its revision describes prompts.
pub(crate) struct PromptsPage {
    server: Server,
    version: Option<ProtocolVersion>,
    window: Window,
}

/// `capabilities.prompts`: only for a server that has prompts.
pub(crate) fn capability(server: &Server, connection: Connection) -> Option<PromptsCapability> {
    (!server.prompts().is_empty()).then_some(PromptsCapability {
        list_changed: Some(connection.list_changed),
    })
}

impl Dispatcher<'_> {
    /// A page of `server`'s prompts (sorted by name, paginated like `tools/list`).
    pub(crate) fn list_prompts(
        &self,
        server: &Server,
        version: Option<ProtocolVersion>,
        params: Map<String, Value>,
    ) -> Result<PromptsBody, ErrorObject> {
        let ListPromptsParams { cursor } = read_params("prompts/list", params)?;
        let total = server.prompts().len();
        let window = self.window(
            server,
            Listing::Prompts,
            "prompts/list",
            cursor.as_deref(),
            total,
            version,
        )?;
        Ok(PromptsBody::List(PromptsPage {
            server: server.clone(),
            version,
            window,
        }))
    }
}

/// A `prompts/get` started: the prompt, its arguments, and the request's context (which
/// can ask the client for input) with its round, in 2026-07-28 without an input handler.
pub(crate) struct PromptGet {
    prompt: Prompt,
    arguments: PromptArguments,
    ctx: ToolContext,
    round: Option<Arc<Round>>,
}

/// What a `prompts/get` request brings besides its params.
pub(crate) struct PromptRequest {
    pub(crate) id: RequestId,
    pub(crate) meta: Option<Map<String, Value>>,
    pub(crate) version: Option<ProtocolVersion>,
    pub(crate) options: CallOptions,
    pub(crate) retry: Option<Retry>,
}

impl Dispatcher<'_> {
    /// Reads a `prompts/get`: -32602 naming an unknown prompt, or refusing the retry's state.
    pub(crate) fn start_get_prompt(
        &self,
        server: &Server,
        params: Map<String, Value>,
        request: PromptRequest,
    ) -> Result<PromptGet, ErrorObject> {
        let GetPromptParams { name, arguments } = read_params("prompts/get", params)?;
        let Some(prompt) = server.prompt(&name) else {
            return Err(invalid_params(format!("Unknown prompt: {name}")));
        };
        let arguments = arguments.unwrap_or_default();
        let round = match request.retry {
            Some(retry) => {
                let digest: Map<String, Value> = arguments
                    .iter()
                    .map(|(k, v)| (k.clone(), Value::String(v.clone())))
                    .collect();
                let seal = RoundSeal {
                    key: self.registry.config().request_state_key().clone(),
                    method: method::PROMPTS_GET,
                    server: server.shared_name().clone(),
                    name: prompt.shared_name().clone(),
                    arguments: BoundArguments::Digest(arguments_digest(&digest)),
                };
                Some(Arc::new(retry.round(seal, self.registry)?))
            }
            None => None,
        };
        let options = request.options;
        let ctx = ToolContext::from_scope(CallScope {
            names: Arc::new(CallNames {
                tool: prompt.shared_name().clone(),
                server: server.shared_name().clone(),
            }),
            request_id: Some(request.id),
            meta: request.meta,
            protocol_version: request.version,
            notifications: None,
            cancellation: options.cancellation,
            registry_extensions: self.registry.config().extensions.clone(),
            call_extensions: options.extensions,
            log_level: None,
            input: options.input,
            round: round.clone(),
        });
        Ok(PromptGet {
            prompt: prompt.clone(),
            arguments,
            ctx,
            round,
        })
    }
}

impl PromptGet {
    /// Renders the prompt: its messages, `input_required` when it asked for input no one
    /// could give, or the error (-32602 for a missing argument, -32603 for a failure).
    pub(crate) async fn answer(self, server: &Server, version: Option<ProtocolVersion>) -> Answer {
        let PromptGet {
            prompt,
            arguments,
            ctx,
            round,
        } = self;
        let rendering = crate::registry::render_prompt(&prompt, arguments, Some(ctx));
        let rendered = match &round {
            Some(round) => round.run_until_input_required(rendering).await,
            None => Some(rendering.await),
        };
        match rendered {
            Some(Ok(result)) => Answer::Result(outcome(
                server,
                version,
                Body::Prompts(PromptsBody::Get(result)),
            )),
            Some(Err(e)) => Answer::Error(ErrorObject::new(e.code(), e.to_string())),
            None => round
                .as_deref()
                .and_then(|round| input_required(server, round))
                .unwrap_or_else(|| {
                    Answer::Error(ErrorObject::new(
                        ErrorCode::INTERNAL_ERROR,
                        "the prompt stopped without a result",
                    ))
                }),
        }
    }
}

impl Serialize for PromptsBody {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap as _;
        let page = match self {
            PromptsBody::Get(result) => return result.serialize(serializer),
            PromptsBody::List(page) => page,
        };
        let prompts = page.server.prompt_entries(page.version);
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry(
            "prompts",
            prompts
                .get(page.window.start..page.window.end)
                .unwrap_or(&[]),
        )?;
        page.window.write_tail(&mut map)?;
        map.end()
    }
}
