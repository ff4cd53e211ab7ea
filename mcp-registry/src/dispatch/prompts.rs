//! `prompts/list` and `prompts/get` for a registry server. Each method takes the request's
//! params as they came and reads them into its typed params struct.
//!
//! One request kind in two layers, named alike: its run through the registry (in-process API and pipeline) in `registry/prompts.rs`.

use serde::{Serialize, Serializer};
use serde_json::{Map, Value};

use std::sync::Arc;

use super::page::{Listing, Window};
use super::{
    Answer, Body, Connection, Dispatcher, Parts, Retry, Routed, Step, input_required,
    invalid_params, outcome, read_params,
};
use crate::protocol::{
    ErrorObject, GetPromptParams, GetPromptResult, ListPromptsParams, PromptsCapability,
    ProtocolVersion, method,
};
use crate::registry::scope::RequestInfo;
use crate::registry::{CallOptions, GetPromptError};
use crate::server::Server;
use crate::tool::request_state::arguments_digest;
use crate::tool::round::{BoundArguments, RoundSeal};

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

/// `capabilities.prompts`: only for a server that has prompts (and the union of a registry's
/// servers, where a server with prompts may arrive).
pub(crate) fn capability(server: &Server, connection: Connection) -> Option<PromptsCapability> {
    (!server.prompts().is_empty() || server.is_union()).then_some(PromptsCapability {
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

impl Dispatcher<'_> {
    /// Starts a `prompts/get`: -32602 naming an unknown prompt, or refusing the retry's
    /// state; else the rendering to await, through the registry's pipeline.
    pub(crate) fn start_get_prompt(
        &self,
        server: &Server,
        params: Map<String, Value>,
        options: &mut CallOptions,
        mut info: RequestInfo,
        retry: Option<Retry>,
    ) -> Result<Step, ErrorObject> {
        let GetPromptParams { name, arguments } = read_params(method::PROMPTS_GET, params)?;
        let Some(prompt) = server.prompt(&name) else {
            return Err(invalid_params(server.unknown_prompt(&name)));
        };
        if server.is_union() {
            // The request's span names the prompt's own server and name, not the union's.
            let own = server.prompt_call_names(prompt);
            crate::telemetry::record_own_names(&own.server, &own.tool, "gen_ai.prompt.name");
        }
        let arguments = arguments.unwrap_or_default();
        if let Some(retry) = retry {
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
                caller: options.caller.owner(),
            };
            info.round = Some(Arc::new(retry.round(
                seal,
                self.registry,
                info.meta.as_deref(),
            )?));
        }
        let version = info.protocol_version;
        let round = info.round.clone();
        let rendering = self
            .registry
            .invoke_prompt(server, prompt, arguments, options, info);
        let server = server.clone();
        Ok(Step::Waiting(Box::pin(async move {
            let rendered = rendering.await;
            // A rendering stopped for input is answered `input_required`, whatever it ended with.
            if let Some(answer) = round.as_deref().and_then(|r| input_required(&server, r)) {
                return answer;
            }
            match rendered {
                Ok(result) => Answer::Result(outcome(
                    &server,
                    version,
                    Body::Prompts(PromptsBody::Get(result)),
                )),
                Err(GetPromptError::Cancelled { .. }) => Answer::Suppressed,
                Err(GetPromptError::Rejected { error, .. }) => Answer::Error(error),
                Err(e) => Answer::Error(ErrorObject::new(e.code(), e.to_string())),
            }
        })))
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

/// `prompts/list`: a page of the server's prompts.
pub(crate) fn list(mut request: Routed<'_>, _: &mut CallOptions) -> Step {
    let params = std::mem::take(&mut request.params);
    let page = request
        .dispatcher()
        .list_prompts(request.server, request.version, params);
    request.answer(page.map(Body::Prompts))
}

/// `prompts/get`: the rendering started, to await.
pub(crate) fn get(request: Routed<'_>, options: &mut CallOptions) -> Step {
    let (parts, mut info) = request.split();
    let Parts {
        registry,
        server,
        mut params,
        era,
        ..
    } = parts;
    let retry = match Retry::prepare(era, options, &mut params, &mut info) {
        Ok(retry) => retry,
        Err(e) => return Step::Answered(Answer::Error(e)),
    };
    Dispatcher::new(registry)
        .start_get_prompt(server, params, options, info, retry)
        .unwrap_or_else(|e| Step::Answered(Answer::Error(e)))
}
