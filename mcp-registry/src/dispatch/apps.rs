//! MCP Apps (`io.modelcontextprotocol/ui`) in the handshake and in `tools/list`: a server
//! with an app declares the extension, and a tool's `_meta.ui` is listed only to a client
//! that declares it (its session's `initialize`, or a 2026-07-28 request's `_meta`).

use serde_json::{Map, Value};

use super::ToolsPage;
use crate::apps::{self, EXTENSION_ID, MIME_TYPE};
use crate::protocol::meta::RequestMeta;
use crate::protocol::{ClientCapabilities, META_CLIENT_CAPABILITIES};
use crate::server::Server;

/// Adds `extensions["io.modelcontextprotocol/ui"]` (`{}`: the extension has no server
/// settings) to `other` for a server with an app: a tool with `_meta.ui` (known when the
/// server was built), or a resource of the extension's MIME type.
pub(crate) fn declare(server: &Server, other: &mut Map<String, Value>) {
    let resource_app = || {
        server
            .resources()
            .iter()
            .any(|r| r.descriptor().mime_type.as_deref() == Some(MIME_TYPE))
    };
    if !(server.has_app_tools() || resource_app()) {
        return;
    }
    super::declare_extension(other, EXTENSION_ID, Value::Object(Map::new()));
}

/// Whether a session's client declared the extension in `initialize`.
pub(crate) fn session_declares(client: Option<&ClientCapabilities>) -> bool {
    client.is_some_and(apps::client_supports)
}

/// Whether a request's `_meta` declares the extension among the client's capabilities
/// (2026-07-28).
pub(crate) fn request_declares(meta: Option<&RequestMeta>) -> bool {
    meta.and_then(|m| m.get(META_CLIENT_CAPABILITIES))
        .and_then(|c| c.get("extensions"))
        .is_some_and(apps::extensions_support)
}

/// The page as a client without the extension sees it: each tool's `_meta.ui` taken out
/// (a `_meta` left empty goes too), and a tool only an app may call (`visibility` without
/// `"model"`) left out, as there is no app to call it and a host would hide it from the
/// model. A page without apps is left as it is. Called only for a server with app tools
/// ([`Server::has_app_tools`]).
pub(crate) fn hide_ui(page: &mut ToolsPage) {
    let has_ui = |t: &Value| t.get("_meta").and_then(|m| m.get(apps::META_KEY)).is_some();
    let picked = match page.picked.take() {
        Some(picked) => picked,
        None => {
            let entries = page.server.listing(page.version).entries();
            let window = &entries[page.window.start..page.window.end];
            if !window.iter().any(has_ui) {
                return;
            }
            window.to_vec()
        }
    };
    page.picked = Some(
        picked
            .into_iter()
            .filter(|t| apps::visible_to_model(t.get("_meta").and_then(Value::as_object)))
            .map(without_ui)
            .collect(),
    );
}

fn without_ui(mut tool: Value) -> Value {
    if let Value::Object(members) = &mut tool
        && let Some(Value::Object(meta)) = members.get_mut("_meta")
        && meta.remove(apps::META_KEY).is_some()
        && meta.is_empty()
    {
        members.remove("_meta");
    }
    tool
}
