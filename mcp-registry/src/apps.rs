//! MCP Apps (SEP-1865, extension `io.modelcontextprotocol/ui`): interactive user interfaces
//! served as `ui://` resources of MIME type [`MIME_TYPE`], which a tool names in its
//! `_meta.ui.resourceUri` ([`ToolBuilder::ui`](crate::ToolBuilder::ui), `#[mcp_tool(ui = "ui://..")]`)
//! and a host renders in a sandboxed iframe, talking JSON-RPC with it over `postMessage`.
//!
//! A server that has an app declares `capabilities.extensions["io.modelcontextprotocol/ui"]`;
//! a tool's `_meta.ui` is listed only to a client whose own capabilities declare the
//! extension with [`MIME_TYPE`] among its `mimeTypes` (the spec's "servers SHOULD check
//! client capabilities"); other clients see the plain tool and call it as any other, and do
//! not see a tool only an app calls ([`Visibility::App`] alone).
//!
//! ```
//! use mcp_registry::apps::{Csp, UiResourceMeta};
//! use mcp_registry::{Resource, Tool};
//!
//! let page = Resource::builder("ui://clock/app.html", "clock")
//!     .ui(UiResourceMeta::default().csp(Csp::default().connect("https://api.example.com")))
//!     .app_html("<!DOCTYPE html><html><body>...</body></html>")
//!     .unwrap();
//! assert_eq!(page.descriptor().mime_type.as_deref(), Some(mcp_registry::apps::MIME_TYPE));
//! let tool = Tool::builder("clock")
//!     .ui("ui://clock/app.html")
//!     .raw(serde_json::json!({"type": "object"}), |_| async { "12:00" })
//!     .unwrap();
//! assert_eq!(tool.descriptor().meta.as_ref().unwrap()["ui"]["resourceUri"], "ui://clock/app.html");
//! ```

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::protocol::ClientCapabilities;

/// The extension's identifier, the key of `capabilities.extensions`.
pub const EXTENSION_ID: &str = "io.modelcontextprotocol/ui";

/// The MIME type of an app's HTML (its resource's `mimeType`).
pub const MIME_TYPE: &str = "text/html;profile=mcp-app";

/// The scheme every app resource's URI has.
pub const SCHEME: &str = "ui://";

/// The `_meta` key under which a tool and a resource carry the extension's metadata.
pub const META_KEY: &str = "ui";

/// Whether `uri` is an app resource's URI (`ui://` and something after it).
pub fn is_ui_uri(uri: &str) -> bool {
    uri.strip_prefix(SCHEME)
        .is_some_and(|rest| !rest.is_empty())
}

/// Who may call a tool ([`ToolUi::visibility`]); by default both.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Visibility {
    /// The model sees and calls the tool.
    Model,
    /// The app calls the tool (through its host, on the same server's connection).
    App,
}

/// A tool's `_meta.ui`: the app that renders its results, and who may call it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolUi {
    /// The `ui://` resource whose HTML renders the tool's results.
    pub resource_uri: String,
    /// Who may call the tool; the host hides a tool without [`Visibility::Model`] from
    /// the model. `None`: both.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub visibility: Option<Vec<Visibility>>,
}

impl ToolUi {
    /// The app at `resource_uri`, the tool visible to both the model and the app.
    pub fn new(resource_uri: impl Into<String>) -> Self {
        ToolUi {
            resource_uri: resource_uri.into(),
            visibility: None,
        }
    }

    /// Who may call the tool (`[Visibility::App]`: a tool only the app calls).
    #[must_use]
    pub fn visibility(mut self, who: impl IntoIterator<Item = Visibility>) -> Self {
        self.visibility = Some(who.into_iter().collect());
        self
    }
}

impl From<&str> for ToolUi {
    fn from(resource_uri: &str) -> Self {
        ToolUi::new(resource_uri)
    }
}

impl From<String> for ToolUi {
    fn from(resource_uri: String) -> Self {
        ToolUi::new(resource_uri)
    }
}

/// The origins an app may reach, from which the host builds the iframe's Content Security
/// Policy (none declared: no external origin at all).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Csp {
    /// Origins for `fetch`, XHR and WebSockets (`connect-src`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub connect_domains: Vec<String>,
    /// Origins for scripts, styles, images, fonts and media.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resource_domains: Vec<String>,
    /// Origins for nested iframes (`frame-src`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub frame_domains: Vec<String>,
    /// Allowed base URIs of the document (`base-uri`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub base_uri_domains: Vec<String>,
}

impl Csp {
    /// Adds an origin the app connects to.
    #[must_use]
    pub fn connect(mut self, origin: impl Into<String>) -> Self {
        self.connect_domains.push(origin.into());
        self
    }

    /// Adds an origin the app loads scripts, styles, images, fonts or media from.
    #[must_use]
    pub fn resource(mut self, origin: impl Into<String>) -> Self {
        self.resource_domains.push(origin.into());
        self
    }

    /// Adds an origin the app nests frames from.
    #[must_use]
    pub fn frame(mut self, origin: impl Into<String>) -> Self {
        self.frame_domains.push(origin.into());
        self
    }

    /// Adds an allowed base URI.
    #[must_use]
    pub fn base_uri(mut self, origin: impl Into<String>) -> Self {
        self.base_uri_domains.push(origin.into());
        self
    }
}

/// A browser permission an app asks for (`{}` on the wire when asked).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Requested {}

/// The browser permissions an app asks the host for; a host may refuse them, so an app
/// detects the feature before it uses it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Permissions {
    /// The camera.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub camera: Option<Requested>,
    /// The microphone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub microphone: Option<Requested>,
    /// Geolocation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub geolocation: Option<Requested>,
    /// Writing to the clipboard.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clipboard_write: Option<Requested>,
}

/// An app resource's `_meta.ui`: its CSP origins, the permissions it asks for, and how the
/// host should frame it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UiResourceMeta {
    /// The external origins the app needs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub csp: Option<Csp>,
    /// The browser permissions the app asks for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub permissions: Option<Permissions>,
    /// A dedicated sandbox origin, in the form the host documents.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub domain: Option<String>,
    /// Whether the host draws a border and background around the app.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prefers_border: Option<bool>,
}

impl UiResourceMeta {
    /// The external origins the app needs.
    #[must_use]
    pub fn csp(mut self, csp: Csp) -> Self {
        self.csp = Some(csp);
        self
    }

    /// The browser permissions the app asks for.
    #[must_use]
    pub fn permissions(mut self, permissions: Permissions) -> Self {
        self.permissions = Some(permissions);
        self
    }

    /// Whether the host draws a border and background around the app.
    #[must_use]
    pub fn prefers_border(mut self, yes: bool) -> Self {
        self.prefers_border = Some(yes);
        self
    }

    /// A dedicated sandbox origin, in the form the host documents.
    #[must_use]
    pub fn domain(mut self, domain: impl Into<String>) -> Self {
        self.domain = Some(domain.into());
        self
    }
}

/// A client's settings of the extension (`capabilities.extensions["io.modelcontextprotocol/ui"]`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClientUiSettings {
    /// The content types the host renders (the spec's only one: [`MIME_TYPE`]).
    #[serde(default)]
    pub mime_types: Vec<String>,
}

impl ClientUiSettings {
    /// The settings a host that renders HTML apps declares.
    pub fn html() -> Self {
        ClientUiSettings {
            mime_types: vec![MIME_TYPE.to_owned()],
        }
    }
}

/// Whether `capabilities` declare the extension with [`MIME_TYPE`] among its `mimeTypes`.
pub fn client_supports(capabilities: &ClientCapabilities) -> bool {
    capabilities
        .other
        .get("extensions")
        .is_some_and(extensions_support)
}

/// Whether a client's `capabilities.extensions` value declares the extension with
/// [`MIME_TYPE`]. Read in place (no copy): it is asked on every request of a session.
pub(crate) fn extensions_support(extensions: &Value) -> bool {
    extensions
        .get(EXTENSION_ID)
        .and_then(|settings| settings.get("mimeTypes"))
        .and_then(Value::as_array)
        .is_some_and(|types| types.iter().any(|t| t.as_str() == Some(MIME_TYPE)))
}

/// `meta` with its `ui` member set to `value` (other members kept).
pub(crate) fn with_ui<T: Serialize>(
    meta: Option<Map<String, Value>>,
    value: &T,
) -> Map<String, Value> {
    let mut meta = meta.unwrap_or_default();
    if let Ok(value) = serde_json::to_value(value) {
        meta.insert(META_KEY.to_owned(), value);
    }
    meta
}

/// Whether a model may see the tool with this `_meta`: no `_meta.ui.visibility`, or one that
/// includes `"model"` (a host leaves the others out of the model's tools). Read in place.
pub fn visible_to_model(meta: Option<&Map<String, Value>>) -> bool {
    let visibility = meta
        .and_then(|m| m.get(META_KEY))
        .and_then(|ui| ui.get("visibility"))
        .and_then(Value::as_array);
    visibility.is_none_or(|who| who.iter().any(|w| w.as_str() == Some("model")))
}

/// The `ui` member of a tool's `_meta`, when it has one that names a resource.
pub fn tool_ui(meta: Option<&Map<String, Value>>) -> Option<ToolUi> {
    meta?
        .get(META_KEY)
        .and_then(|ui| ToolUi::deserialize(ui).ok())
}
