//! `prompts/list` and `prompts/get` for a registry server. Each method takes the request's
//! params as they came and reads them into its typed params struct.

use base64::Engine as _;
use serde::{Serialize, Serializer};
use serde_json::{Map, Value};

use super::{Connection, Dispatcher, invalid_params};
use crate::protocol::{
    CacheHints, ErrorObject, GetPromptParams, GetPromptResult, ListPromptsParams,
    PromptsCapability, ProtocolVersion,
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
    start: usize,
    end: usize,
    next_cursor: Option<String>,
    cache: Option<CacheHints>,
}

/// `capabilities.prompts`: only for a server that has prompts.
pub(crate) fn capability(server: &Server, connection: Connection) -> Option<PromptsCapability> {
    (!server.prompts().is_empty()).then_some(PromptsCapability {
        list_changed: Some(connection.list_changed),
    })
}

fn encode_cursor(offset: usize) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(format!("prompts:{offset}"))
}

fn decode_cursor(cursor: &str) -> Option<usize> {
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(cursor)
        .ok()?;
    std::str::from_utf8(&bytes)
        .ok()?
        .strip_prefix("prompts:")?
        .parse()
        .ok()
}

/// `params` read as `T`, or -32602 saying why not.
pub(super) fn read_params<T: serde::de::DeserializeOwned>(
    method: &str,
    params: Map<String, Value>,
) -> Result<T, ErrorObject> {
    serde_json::from_value(Value::Object(params))
        .map_err(|e| invalid_params(format!("invalid {method} params: {e}")))
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
        let start = match cursor {
            None => 0,
            Some(c) => match decode_cursor(&c) {
                Some(offset) if offset <= total => offset,
                _ => {
                    return Err(invalid_params(format!(
                        "invalid cursor {c:?} for prompts/list"
                    )));
                }
            },
        };
        let end = match self.registry.config().page_size {
            Some(size) => (start + size).min(total),
            None => total,
        };
        Ok(PromptsBody::List(PromptsPage {
            server: server.clone(),
            version,
            start,
            end,
            next_cursor: (end < total).then(|| encode_cursor(end)),
            cache: (version == Some(ProtocolVersion::MODERN)).then(|| self.cache_hints()),
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
        let prompts = &page.server.prompts()[page.start..page.end];
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
        if let Some(cursor) = &page.next_cursor {
            map.serialize_entry("nextCursor", cursor)?;
        }
        if let Some(cache) = &page.cache {
            map.serialize_entry("ttlMs", &cache.ttl_ms)?;
            map.serialize_entry("cacheScope", &cache.cache_scope)?;
        }
        map.end()
    }
}
