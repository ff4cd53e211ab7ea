use base64::Engine as _;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// Who a piece of content is meant for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// The human user.
    User,
    /// The model.
    Assistant,
}

/// Optional hints on a content block: audience, priority (0.0–1.0), last modification time.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Annotations {
    /// Who the content is for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub audience: Option<Vec<Role>>,
    /// Importance from 0.0 (least) to 1.0 (most).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub priority: Option<f64>,
    /// ISO 8601 timestamp of the last modification.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_modified: Option<String>,
}

/// Plain text.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TextContent {
    /// The text.
    pub text: String,
    /// Content annotations.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
}

/// A base64-encoded image.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ImageContent {
    /// Base64 data.
    pub data: String,
    /// MIME type, e.g. `image/png`.
    pub mime_type: String,
    /// Content annotations.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
}

/// Base64-encoded audio.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AudioContent {
    /// Base64 data.
    pub data: String,
    /// MIME type, e.g. `audio/wav`.
    pub mime_type: String,
    /// Content annotations.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
}

/// A link to a resource the client may read.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceLink {
    /// The resource URI.
    pub uri: String,
    /// Programmatic name.
    pub name: String,
    /// Display title.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What the resource is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// MIME type, if known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Size in bytes, if known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
    /// Content annotations.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
}

/// Text contents of an embedded resource.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TextResourceContents {
    /// The resource URI.
    pub uri: String,
    /// MIME type, if known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// The text.
    pub text: String,
    /// Metadata of these contents (an app's `_meta.ui`, for one).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
}

/// Binary contents of an embedded resource (base64).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BlobResourceContents {
    /// The resource URI.
    pub uri: String,
    /// MIME type, if known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Base64 data.
    pub blob: String,
    /// Metadata of these contents.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
}

/// The contents of an embedded resource: text or blob.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ResourceContents {
    /// Text contents.
    Text(TextResourceContents),
    /// Binary contents.
    Blob(BlobResourceContents),
}

/// A resource embedded in a result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EmbeddedResource {
    /// The resource's contents.
    pub resource: ResourceContents,
    /// Content annotations.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
}

/// One content block of a tool result.
///
/// ```
/// use mcp_registry::protocol::Content;
/// let png = Content::image(&[0x89, b'P', b'N', b'G'], "image/png");
/// let json = serde_json::to_value(&png).unwrap();
/// assert_eq!(json["type"], "image");
/// assert_eq!(json["data"], "iVBORw==");
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Content {
    /// Text.
    Text(TextContent),
    /// An image.
    Image(ImageContent),
    /// Audio.
    Audio(AudioContent),
    /// A link to a resource.
    ResourceLink(ResourceLink),
    /// An embedded resource.
    Resource(EmbeddedResource),
}

fn b64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

impl Content {
    /// The block as a JSON value, as serializing it gives; a plain text block's text is moved,
    /// not copied.
    pub fn into_value(self) -> Value {
        match self {
            Content::Text(TextContent {
                text,
                annotations: None,
            }) => {
                let mut block = Map::new();
                block.insert("type".to_owned(), Value::from("text"));
                block.insert("text".to_owned(), Value::String(text));
                Value::Object(block)
            }
            // Plain data with string keys: serializing it cannot fail.
            other => serde_json::to_value(other).unwrap_or_default(),
        }
    }

    /// A text block.
    pub fn text(text: impl Into<String>) -> Self {
        Content::Text(TextContent {
            text: text.into(),
            annotations: None,
        })
    }

    /// An image block from raw bytes (base64-encoded here).
    pub fn image(bytes: &[u8], mime_type: impl Into<String>) -> Self {
        Content::Image(ImageContent {
            data: b64(bytes),
            mime_type: mime_type.into(),
            annotations: None,
        })
    }

    /// An audio block from raw bytes (base64-encoded here).
    pub fn audio(bytes: &[u8], mime_type: impl Into<String>) -> Self {
        Content::Audio(AudioContent {
            data: b64(bytes),
            mime_type: mime_type.into(),
            annotations: None,
        })
    }

    /// A link to a resource.
    pub fn resource_link(uri: impl Into<String>, name: impl Into<String>) -> Self {
        Content::ResourceLink(ResourceLink {
            uri: uri.into(),
            name: name.into(),
            title: None,
            description: None,
            mime_type: None,
            size: None,
            annotations: None,
        })
    }

    /// An embedded text resource.
    pub fn embedded_text(
        uri: impl Into<String>,
        mime_type: impl Into<String>,
        text: impl Into<String>,
    ) -> Self {
        Content::Resource(EmbeddedResource {
            resource: ResourceContents::Text(TextResourceContents {
                uri: uri.into(),
                mime_type: Some(mime_type.into()),
                text: text.into(),
                meta: None,
            }),
            annotations: None,
        })
    }

    /// An embedded binary resource from raw bytes (base64-encoded here).
    pub fn embedded_blob(
        uri: impl Into<String>,
        mime_type: impl Into<String>,
        bytes: &[u8],
    ) -> Self {
        Content::Resource(EmbeddedResource {
            resource: ResourceContents::Blob(BlobResourceContents {
                uri: uri.into(),
                mime_type: Some(mime_type.into()),
                blob: b64(bytes),
                meta: None,
            }),
            annotations: None,
        })
    }

    /// Sets this block's annotations.
    pub fn with_annotations(mut self, annotations: Annotations) -> Self {
        let slot = match &mut self {
            Content::Text(c) => &mut c.annotations,
            Content::Image(c) => &mut c.annotations,
            Content::Audio(c) => &mut c.annotations,
            Content::ResourceLink(c) => &mut c.annotations,
            Content::Resource(c) => &mut c.annotations,
        };
        *slot = Some(annotations);
        self
    }

    /// The text of a text block.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            Content::Text(t) => Some(&t.text),
            _ => None,
        }
    }
}

/// The result of `tools/call`.
///
/// ```
/// use mcp_registry::CallToolResult;
/// let ok = CallToolResult::text("done");
/// assert!(!ok.is_error());
/// let failed = CallToolResult::error("disk full");
/// assert!(failed.is_error());
/// assert_eq!(failed.first_text(), Some("disk full"));
/// ```
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CallToolResult {
    /// Unstructured content blocks.
    #[serde(default)]
    pub content: Vec<Content>,
    /// Structured result, matching the tool's output schema when it has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub structured_content: Option<Value>,
    /// `Some(true)` when the call failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub is_error: Option<bool>,
    /// Result metadata.
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
}

impl CallToolResult {
    /// A successful result with the given content.
    pub fn success(content: Vec<Content>) -> Self {
        CallToolResult {
            content,
            ..Default::default()
        }
    }

    /// A successful result holding one text block.
    pub fn text(text: impl Into<String>) -> Self {
        Self::success(vec![Content::text(text)])
    }

    /// A failed result (`isError: true`) holding one text block.
    pub fn error(message: impl Into<String>) -> Self {
        CallToolResult {
            content: vec![Content::text(message)],
            is_error: Some(true),
            ..Default::default()
        }
    }

    /// A successful structured result: `value` as `structuredContent` plus its JSON text
    /// as a text block (for clients that read only `content`). A value nesting deeper than
    /// [`MAX_DEPTH`](crate::protocol::MAX_DEPTH) gets no text (writing it would overflow
    /// the stack); a registry call returning it fails with a message saying so.
    pub fn structured(value: Value) -> Self {
        let text = if super::exceeds_max_depth(&value) {
            String::new()
        } else {
            value.to_string()
        };
        CallToolResult {
            content: vec![Content::text(text)],
            structured_content: Some(value),
            ..Default::default()
        }
    }

    /// The result as a JSON value, exactly as serializing it gives, but moving its text and
    /// structured content into the value instead of copying them (the `Value` reply of every
    /// `tools/call`; a test keeps the two in step).
    pub fn into_value(self) -> Value {
        let mut map = Map::new();
        // A new vector, not collected in place: a `Value` is smaller than a `Content`, and
        // shrinking the block in place costs a reallocation.
        let mut content = Vec::with_capacity(self.content.len());
        content.extend(self.content.into_iter().map(Content::into_value));
        map.insert("content".to_owned(), Value::Array(content));
        if let Some(structured) = self.structured_content {
            map.insert("structuredContent".to_owned(), structured);
        }
        if let Some(is_error) = self.is_error {
            map.insert("isError".to_owned(), Value::Bool(is_error));
        }
        if let Some(meta) = self.meta {
            map.insert("_meta".to_owned(), Value::Object(meta));
        }
        Value::Object(map)
    }

    /// Whether the result reports a failure.
    pub fn is_error(&self) -> bool {
        self.is_error == Some(true)
    }

    /// The first text block, if any.
    pub fn first_text(&self) -> Option<&str> {
        self.content.iter().find_map(Content::as_text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn into_value_is_what_serializing_gives() {
        let results = [
            CallToolResult::text("plain"),
            CallToolResult::error("failed"),
            CallToolResult::structured(serde_json::json!({"a": [1, 2]})),
            CallToolResult::success(vec![
                Content::text("t").with_annotations(Annotations {
                    priority: Some(0.5),
                    ..Default::default()
                }),
                Content::image(b"png", "image/png"),
                Content::audio(b"wav", "audio/wav"),
                Content::resource_link("file:///a", "a"),
                Content::embedded_text("file:///b", "text/plain", "b"),
                Content::embedded_blob("file:///c", "application/octet-stream", b"c"),
            ]),
            CallToolResult {
                meta: Some(Map::from_iter([("k".to_owned(), Value::from(1))])),
                ..CallToolResult::text("m")
            },
        ];
        for r in results {
            assert_eq!(r.clone().into_value(), serde_json::to_value(&r).unwrap());
        }
    }
}
