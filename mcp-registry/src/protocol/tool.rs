use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::name::{NameProblem, ToolNameProblem, name_problem, tool_name_message};

/// Hints describing a tool's behaviour to clients (all optional; clients treat them as hints).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolAnnotations {
    /// Human-readable title.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The tool does not modify its environment.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub read_only_hint: Option<bool>,
    /// The tool may perform destructive updates.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub destructive_hint: Option<bool>,
    /// Repeating a call with the same arguments has no further effect.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub idempotent_hint: Option<bool>,
    /// The tool interacts with an open world of external entities.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub open_world_hint: Option<bool>,
}

impl ToolAnnotations {
    /// Whether no hint is set.
    pub fn is_empty(&self) -> bool {
        *self == ToolAnnotations::default()
    }
}

/// A tool as `tools/list` describes it (the wire form; [`crate::Tool`] is the runtime tool
/// that carries one, with its handler).
///
/// Schemas are shared (`Arc`) so that listing never regenerates or deep-copies them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolDescriptor {
    /// Unique name within its server.
    pub name: String,
    /// Display title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What the tool does (a hint to the model).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// JSON Schema of the arguments object (root `type: "object"`).
    pub input_schema: Arc<Value>,
    /// JSON Schema of `structuredContent`, when the tool returns structured data.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<Arc<Value>>,
    /// Behaviour hints.
    #[serde(default, skip_serializing_if = "ToolAnnotations::is_empty")]
    pub annotations: ToolAnnotations,
    /// Tool metadata.
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
    /// How the tool runs (2025-11-25: whether as a task).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub execution: Option<super::ToolExecution>,
}

/// Why a tool name was refused. The rule and the wording are the ones `#[mcp_tool]` applies
/// at compile time (see `crate::name`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ToolNameError {
    /// The name is empty.
    #[error("{}", message("", ToolNameProblem::Empty))]
    Empty,
    /// The name is longer than 128 characters.
    #[error("{}", too_long(.name, .len))]
    TooLong {
        /// The refused name.
        name: String,
        /// Its length in characters.
        len: usize,
    },
    /// The name holds a character outside `[A-Za-z0-9_.-]`.
    #[error("{}", invalid_character(.name, .ch, .position))]
    InvalidCharacter {
        /// The refused name.
        name: String,
        /// The first offending character.
        ch: char,
        /// Its position (0-based, in characters).
        position: usize,
    },
}

fn message(name: &str, problem: ToolNameProblem<'_>) -> String {
    tool_name_message(name, problem).as_str().to_owned()
}

fn too_long(name: &str, len: &usize) -> String {
    message(name, ToolNameProblem::TooLong { len: *len })
}

fn invalid_character(name: &str, ch: &char, position: &usize) -> String {
    let ch = ch.encode_utf8(&mut [0; 4]).to_owned();
    message(
        name,
        ToolNameProblem::Character {
            ch: &ch,
            position: *position,
        },
    )
}

/// Checks a tool name against the 2025-11-25 guidance: 1–128 characters of `[A-Za-z0-9_.-]`.
///
/// ```
/// use mcp_registry::protocol::validate_tool_name;
/// assert!(validate_tool_name("get_weather.v2").is_ok());
/// let err = validate_tool_name("get weather").unwrap_err();
/// assert!(err.to_string().contains("\"get weather\""));
/// ```
pub fn validate_tool_name(name: &str) -> Result<(), ToolNameError> {
    match name_problem(name) {
        None => Ok(()),
        Some(NameProblem::Empty) => Err(ToolNameError::Empty),
        Some(NameProblem::Character(at)) => Err(ToolNameError::InvalidCharacter {
            name: name.to_owned(),
            // `at` is a character boundary and every character before it is ASCII.
            ch: name[at..]
                .chars()
                .next()
                .unwrap_or(char::REPLACEMENT_CHARACTER),
            position: at,
        }),
        Some(NameProblem::TooLong(len)) => Err(ToolNameError::TooLong {
            name: name.to_owned(),
            len,
        }),
    }
}

impl ToolDescriptor {
    /// This descriptor as protocol revision `version` defines a tool: `annotations` only
    /// from 2025-03-26; `title`, `outputSchema` and `_meta` only from 2025-06-18. Revisions
    /// whose schema has every member get the descriptor unchanged.
    ///
    /// ```
    /// use mcp_registry::protocol::{ProtocolVersion, ToolDescriptor, ToolAnnotations};
    /// let tool = ToolDescriptor {
    ///     name: "t".into(),
    ///     title: Some("T".into()),
    ///     description: None,
    ///     input_schema: serde_json::json!({"type": "object"}).into(),
    ///     output_schema: Some(serde_json::json!({"type": "object"}).into()),
    ///     annotations: ToolAnnotations { read_only_hint: Some(true), ..Default::default() },
    ///     meta: None,
    ///     execution: None,
    /// };
    /// let old = tool.for_version(ProtocolVersion::V2024_11_05);
    /// assert!(old.title.is_none() && old.output_schema.is_none() && old.annotations.is_empty());
    /// assert_eq!(tool.for_version(ProtocolVersion::V2025_06_18).as_ref(), &tool);
    /// ```
    pub fn for_version(
        &self,
        version: super::ProtocolVersion,
    ) -> std::borrow::Cow<'_, ToolDescriptor> {
        use super::ProtocolVersion as V;
        if version >= V::V2025_06_18 {
            return std::borrow::Cow::Borrowed(self);
        }
        let mut tool = self.clone();
        tool.title = None;
        tool.output_schema = None;
        tool.meta = None;
        tool.execution = None;
        if version < V::V2025_03_26 {
            tool.annotations = ToolAnnotations::default();
        }
        std::borrow::Cow::Owned(tool)
    }
}
