//! Typed prompt messages: `prompts/list`, `prompts/get`, their params and results, and the
//! `prompts` capability.

use std::borrow::Cow;
use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::{CacheHints, Content, ProtocolVersion, Role};

/// `capabilities.prompts` of a server.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PromptsCapability {
    /// Whether the server sends `notifications/prompts/list_changed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub list_changed: Option<bool>,
}

/// One argument a prompt takes, as `prompts/list` describes it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PromptArgument {
    /// The argument's name (a key of `prompts/get`'s `arguments`).
    pub name: String,
    /// Display title (2025-06-18 onward).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What the argument is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Whether `prompts/get` must give it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub required: Option<bool>,
}

impl PromptArgument {
    /// A required argument named `name`.
    pub fn required(name: impl Into<String>) -> Self {
        PromptArgument {
            name: name.into(),
            title: None,
            description: None,
            required: Some(true),
        }
    }

    /// An optional argument named `name`.
    pub fn optional(name: impl Into<String>) -> Self {
        PromptArgument {
            required: Some(false),
            ..PromptArgument::required(name)
        }
    }

    /// Sets the description.
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// Sets the display title.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// Whether `prompts/get` must give it.
    pub fn is_required(&self) -> bool {
        self.required == Some(true)
    }
}

/// A prompt as `prompts/list` describes it (the wire form; [`crate::Prompt`] is the runtime
/// prompt that carries one, with its handler).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PromptDescriptor {
    /// Unique name within its server.
    pub name: String,
    /// Display title (2025-06-18 onward).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What the prompt provides.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The arguments it takes, in declaration order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub arguments: Vec<PromptArgument>,
    /// Prompt metadata (2025-06-18 onward).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
}

impl PromptDescriptor {
    /// This descriptor as protocol revision `version` defines a prompt: `title` (of the
    /// prompt and of its arguments) and `_meta` only from 2025-06-18.
    ///
    /// ```
    /// use mcp_registry::protocol::{PromptArgument, PromptDescriptor, ProtocolVersion};
    /// let prompt = PromptDescriptor {
    ///     name: "review".into(),
    ///     title: Some("Review".into()),
    ///     description: None,
    ///     arguments: vec![PromptArgument::required("diff").title("Diff")],
    ///     meta: None,
    /// };
    /// let old = prompt.for_version(ProtocolVersion::V2025_03_26);
    /// assert!(old.title.is_none() && old.arguments[0].title.is_none());
    /// assert_eq!(prompt.for_version(ProtocolVersion::V2025_06_18).as_ref(), &prompt);
    /// ```
    pub fn for_version(&self, version: ProtocolVersion) -> Cow<'_, PromptDescriptor> {
        if version >= ProtocolVersion::V2025_06_18 {
            return Cow::Borrowed(self);
        }
        let mut prompt = self.clone();
        prompt.title = None;
        prompt.meta = None;
        for argument in &mut prompt.arguments {
            argument.title = None;
        }
        Cow::Owned(prompt)
    }
}

/// One message of a prompt: who says it and what.
///
/// ```
/// use mcp_registry::{Content, PromptMessage};
/// let m = PromptMessage::user("Review this diff");
/// assert_eq!(serde_json::to_value(&m).unwrap(), serde_json::json!(
///     {"role": "user", "content": {"type": "text", "text": "Review this diff"}}));
/// let png = PromptMessage::new(mcp_registry::protocol::Role::User, Content::image(b"..", "image/png"));
/// assert_eq!(serde_json::to_value(&png).unwrap()["content"]["type"], "image");
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PromptMessage {
    /// `user` or `assistant`.
    pub role: Role,
    /// Text, an image, audio, a resource link or an embedded resource.
    pub content: Content,
}

impl PromptMessage {
    /// A message from `role` holding `content`.
    pub fn new(role: Role, content: Content) -> Self {
        PromptMessage { role, content }
    }

    /// A user message holding one text block.
    pub fn user(text: impl Into<String>) -> Self {
        Self::new(Role::User, Content::text(text))
    }

    /// An assistant message holding one text block.
    pub fn assistant(text: impl Into<String>) -> Self {
        Self::new(Role::Assistant, Content::text(text))
    }
}

/// The result of `prompts/get`.
///
/// ```
/// use mcp_registry::{GetPromptResult, PromptMessage};
/// let r = GetPromptResult::new(vec![PromptMessage::user("hi")]).with_description("A greeting");
/// assert_eq!(r.messages.len(), 1);
/// assert_eq!(serde_json::to_value(&r).unwrap()["description"], "A greeting");
/// ```
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct GetPromptResult {
    /// A description of this rendering of the prompt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The messages.
    pub messages: Vec<PromptMessage>,
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
}

impl GetPromptResult {
    /// A result holding `messages`.
    pub fn new(messages: Vec<PromptMessage>) -> Self {
        GetPromptResult {
            messages,
            ..Default::default()
        }
    }

    /// Sets the description.
    pub fn with_description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }
}

/// The params of `prompts/list`.
pub type ListPromptsParams = super::messages::PaginatedParams;

/// The result of `prompts/list`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListPromptsResult {
    /// A page of prompts, sorted by name.
    pub prompts: Vec<PromptDescriptor>,
    /// Where the next page starts, when there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
    /// 2026-07-28 caching hints.
    #[serde(flatten, default, skip_serializing_if = "Option::is_none")]
    pub cache: Option<CacheHints>,
}

/// The params of `prompts/get`. Argument values are strings, as the spec defines them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct GetPromptParams {
    /// The prompt to get.
    pub name: String,
    /// Its arguments.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<BTreeMap<String, String>>,
}
