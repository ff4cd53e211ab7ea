//! `prompts/list` and `prompts/get` for a registry server. Each method takes the request's
//! params as they came and reads them into its typed params struct.

use serde::{Serialize, Serializer};
use serde_json::{Map, Value};

use super::page::{Listing, Window};
use super::{Connection, Dispatcher, invalid_params, read_params};
use crate::protocol::{
    ErrorObject, GetPromptParams, GetPromptResult, ListPromptsParams, PromptsCapability,
    ProtocolVersion,
};
use crate::registry::GetPromptError;
use crate::server::Server;

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

/// `prompts/get`: renders one of `server`'s prompts: -32602 naming an unknown prompt or a
/// missing argument, -32603 for a failure.
pub(crate) async fn get_prompt(
    server: &Server,
    params: Map<String, Value>,
) -> Result<PromptsBody, ErrorObject> {
    let GetPromptParams { name, arguments } = read_params("prompts/get", params)?;
    let Some(prompt) = server.prompt(&name) else {
        return Err(invalid_params(format!("Unknown prompt: {name}")));
    };
    crate::registry::render_prompt(prompt, arguments.unwrap_or_default())
        .await
        .map(PromptsBody::Get)
        .map_err(|e: GetPromptError| ErrorObject::new(e.code(), e.to_string()))
}

impl Serialize for PromptsBody {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap as _;
        let page = match self {
            PromptsBody::Get(result) => return result.serialize(serializer),
            PromptsBody::List(page) => page,
        };
        let prompts = &page.server.prompts()[page.window.start..page.window.end];
        let mut map = serializer.serialize_map(None)?;
        match page.version {
            Some(v) => map.serialize_entry(
                "prompts",
                &prompts
                    .iter()
                    .map(|p| p.descriptor().for_version(v))
                    .collect::<Vec<_>>(),
            )?,
            None => map.serialize_entry(
                "prompts",
                &prompts.iter().map(|p| p.descriptor()).collect::<Vec<_>>(),
            )?,
        }
        page.window.write_tail(&mut map)?;
        map.end()
    }
}
