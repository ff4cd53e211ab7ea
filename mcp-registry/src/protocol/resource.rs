//! Typed resource messages: `resources/list`, `resources/templates/list`, `resources/read`,
//! `resources/subscribe` / `unsubscribe`, their params and results, and the `resources`
//! capability.

use std::borrow::Cow;

use base64::Engine as _;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::{
    Annotations, BlobResourceContents, CacheHints, ProtocolVersion, ResourceContents,
    TextResourceContents,
};

/// `capabilities.resources` of a server.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourcesCapability {
    /// Whether the client can subscribe to updates of single resources.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subscribe: Option<bool>,
    /// Whether the server sends `notifications/resources/list_changed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub list_changed: Option<bool>,
}

/// An icon a client may show for a resource (2025-11-25 onward).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Icon {
    /// A URI the icon is fetched from (`https:` or `data:`).
    pub src: String,
    /// Its MIME type, when the URI does not tell.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// The sizes it fits, e.g. `"48x48"` or `"any"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sizes: Option<Vec<String>>,
    /// `"light"` or `"dark"`: the background it is drawn for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub theme: Option<String>,
}

/// A resource as `resources/list` describes it (the wire form; [`crate::Resource`] carries
/// one, with its handler).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceDescriptor {
    /// The resource's URI, unique within its server.
    pub uri: String,
    /// Its programmatic name.
    pub name: String,
    /// Display title (2025-06-18 onward).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What the resource is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Its MIME type, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Its size in bytes (before base64 encoding), when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
    /// Hints for the client: audience, priority, last modification.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Icons (2025-11-25 onward).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub icons: Vec<Icon>,
    /// Resource metadata (2025-06-18 onward).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
}

/// A resource template as `resources/templates/list` describes it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceTemplateDescriptor {
    /// An RFC 6570 URI template, e.g. `users://{id}/profile`.
    pub uri_template: String,
    /// Its programmatic name.
    pub name: String,
    /// Display title (2025-06-18 onward).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What the resources it makes are.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The MIME type of every resource it makes, when they share one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Hints for the client.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Icons (2025-11-25 onward).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub icons: Vec<Icon>,
    /// Template metadata (2025-06-18 onward).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
}

/// What revision `version` keeps of annotations: `lastModified` from 2025-06-18.
fn annotations_for(annotations: &mut Option<Annotations>, version: ProtocolVersion) {
    if version < ProtocolVersion::V2025_06_18
        && let Some(a) = annotations
    {
        a.last_modified = None;
    }
}

/// The fields a revision before 2025-11-25 does not have, dropped from a descriptor: `icons`;
/// before 2025-06-18 also `title` and `_meta`; and what [`annotations_for`] drops.
fn older_fields(
    icons: &mut Vec<Icon>,
    title: &mut Option<String>,
    meta: &mut Option<Map<String, Value>>,
    annotations: &mut Option<Annotations>,
    version: ProtocolVersion,
) {
    icons.clear();
    if !version.has_titles() {
        *title = None;
        *meta = None;
    }
    annotations_for(annotations, version);
}

fn is_current(version: ProtocolVersion) -> bool {
    version >= ProtocolVersion::V2025_11_25
}

impl ResourceDescriptor {
    /// This descriptor as protocol revision `version` defines a resource: `title` and `_meta`
    /// from 2025-06-18, `icons` from 2025-11-25, `annotations.lastModified` from 2025-06-18.
    ///
    /// ```
    /// use mcp_registry::protocol::{ProtocolVersion, ResourceDescriptor};
    /// let r: ResourceDescriptor = serde_json::from_value(serde_json::json!(
    ///     {"uri": "file:///a", "name": "a", "title": "A", "icons": [{"src": "data:,"}]})).unwrap();
    /// let old = r.for_version(ProtocolVersion::V2025_06_18);
    /// assert!(old.title.is_some() && old.icons.is_empty());
    /// assert!(r.for_version(ProtocolVersion::V2025_03_26).title.is_none());
    /// ```
    pub fn for_version(&self, version: ProtocolVersion) -> Cow<'_, ResourceDescriptor> {
        if is_current(version) {
            return Cow::Borrowed(self);
        }
        let mut r = self.clone();
        older_fields(
            &mut r.icons,
            &mut r.title,
            &mut r.meta,
            &mut r.annotations,
            version,
        );
        Cow::Owned(r)
    }
}

impl ResourceTemplateDescriptor {
    /// This descriptor as protocol revision `version` defines a template (the fields
    /// [`ResourceDescriptor::for_version`] drops).
    pub fn for_version(&self, version: ProtocolVersion) -> Cow<'_, ResourceTemplateDescriptor> {
        if is_current(version) {
            return Cow::Borrowed(self);
        }
        let mut t = self.clone();
        older_fields(
            &mut t.icons,
            &mut t.title,
            &mut t.meta,
            &mut t.annotations,
            version,
        );
        Cow::Owned(t)
    }
}

impl ResourceContents {
    /// Text contents of the resource at `uri`.
    pub fn text(uri: impl Into<String>, text: impl Into<String>) -> Self {
        ResourceContents::Text(TextResourceContents {
            uri: uri.into(),
            mime_type: None,
            text: text.into(),
            meta: None,
        })
    }

    /// Binary contents of the resource at `uri`, from raw bytes (base64-encoded here).
    ///
    /// ```
    /// use mcp_registry::protocol::ResourceContents;
    /// let png = ResourceContents::blob("test://logo", [0x89, b'P']).with_mime_type("image/png");
    /// assert_eq!(serde_json::to_value(&png).unwrap(), serde_json::json!(
    ///     {"uri": "test://logo", "mimeType": "image/png", "blob": "iVA="}));
    /// ```
    pub fn blob(uri: impl Into<String>, bytes: impl AsRef<[u8]>) -> Self {
        ResourceContents::Blob(BlobResourceContents {
            uri: uri.into(),
            mime_type: None,
            blob: base64::engine::general_purpose::STANDARD.encode(bytes),
            meta: None,
        })
    }

    /// Sets the MIME type.
    pub fn with_mime_type(mut self, mime_type: impl Into<String>) -> Self {
        *self.mime_type_mut() = Some(mime_type.into());
        self
    }

    /// Sets `_meta` (replacing any).
    pub fn with_meta(mut self, meta: Map<String, Value>) -> Self {
        match &mut self {
            ResourceContents::Text(t) => t.meta = Some(meta),
            ResourceContents::Blob(b) => b.meta = Some(meta),
        }
        self
    }

    /// `_meta`, when set.
    pub fn meta(&self) -> Option<&Map<String, Value>> {
        match self {
            ResourceContents::Text(t) => t.meta.as_ref(),
            ResourceContents::Blob(b) => b.meta.as_ref(),
        }
    }

    fn mime_type_mut(&mut self) -> &mut Option<String> {
        match self {
            ResourceContents::Text(t) => &mut t.mime_type,
            ResourceContents::Blob(b) => &mut b.mime_type,
        }
    }

    /// The URI these contents are of.
    pub fn uri(&self) -> &str {
        match self {
            ResourceContents::Text(t) => &t.uri,
            ResourceContents::Blob(b) => &b.uri,
        }
    }

    /// The MIME type, when set.
    pub fn mime_type(&self) -> Option<&str> {
        match self {
            ResourceContents::Text(t) => t.mime_type.as_deref(),
            ResourceContents::Blob(b) => b.mime_type.as_deref(),
        }
    }

    /// The text of text contents.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            ResourceContents::Text(t) => Some(&t.text),
            ResourceContents::Blob(_) => None,
        }
    }
}

/// The params of `resources/list`.
pub type ListResourcesParams = super::messages::PaginatedParams;

/// The result of `resources/list`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListResourcesResult {
    /// A page of resources, sorted by URI.
    pub resources: Vec<ResourceDescriptor>,
    /// Where the next page starts, when there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
    /// 2026-07-28 caching hints.
    #[serde(flatten, default, skip_serializing_if = "Option::is_none")]
    pub cache: Option<CacheHints>,
}

/// The params of `resources/templates/list`.
pub type ListResourceTemplatesParams = ListResourcesParams;

/// The result of `resources/templates/list`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListResourceTemplatesResult {
    /// A page of templates, sorted by name.
    pub resource_templates: Vec<ResourceTemplateDescriptor>,
    /// Where the next page starts, when there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
    /// 2026-07-28 caching hints.
    #[serde(flatten, default, skip_serializing_if = "Option::is_none")]
    pub cache: Option<CacheHints>,
}

/// The params of `resources/read`, and of `resources/subscribe` and `resources/unsubscribe`
/// (legacy revisions): the resource's URI.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReadResourceParams {
    /// The resource.
    pub uri: String,
}

/// The params of `resources/subscribe` and `resources/unsubscribe`.
pub type SubscribeParams = ReadResourceParams;

/// The params of `notifications/resources/updated`.
pub type ResourceUpdatedParams = ReadResourceParams;

/// The result of `resources/read`.
///
/// ```
/// use mcp_registry::protocol::{ReadResourceResult, ResourceContents};
/// let r = ReadResourceResult::new(vec![ResourceContents::text("test://a", "hello")]);
/// assert_eq!(serde_json::to_value(&r).unwrap(),
///            serde_json::json!({"contents": [{"uri": "test://a", "text": "hello"}]}));
/// ```
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReadResourceResult {
    /// The contents: usually one entry, the resource itself; several for a resource made of
    /// sub-resources (a directory's files).
    pub contents: Vec<ResourceContents>,
    /// 2026-07-28 caching hints. A handler may set its own; otherwise 2026-07-28 replies get
    /// the registry's TTL with `cacheScope: "private"`, and earlier revisions none.
    #[serde(flatten, default, skip_serializing_if = "Option::is_none")]
    pub cache: Option<CacheHints>,
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
}

impl ReadResourceResult {
    /// A result holding `contents`.
    pub fn new(contents: Vec<ResourceContents>) -> Self {
        ReadResourceResult {
            contents,
            ..Default::default()
        }
    }

    /// Sets the caching hints 2026-07-28 replies carry.
    pub fn with_cache(mut self, cache: CacheHints) -> Self {
        self.cache = Some(cache);
        self
    }
}
