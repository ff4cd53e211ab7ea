//! The Skills extension's messages (SEP-2640): `skills/list`, `skills/get`,
//! `resources/directory/read`, and the settings a server declares under
//! `capabilities.extensions["io.modelcontextprotocol/skills"]`.

use serde::de::{self, Deserializer};
use serde::ser::Serializer;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::protocol::{CacheHints, ResourceDescriptor};

/// One skill as `skills/list` and `skills/get` describe it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SkillEntry {
    /// The full URI of the skill's `SKILL.md` (`skill://<skill-path>/SKILL.md`).
    pub uri: String,
    /// The `SKILL.md`'s YAML front matter, rendered as a JSON object (at least `name` and
    /// `description`).
    pub frontmatter: Map<String, Value>,
    /// Every file of the skill with its digest and size, or `"dynamic"`.
    pub resources: SkillResources,
    /// Entry metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
}

impl SkillEntry {
    /// The skill's name, from its front matter (`""` when it has none).
    pub fn name(&self) -> &str {
        self.frontmatter
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or_default()
    }

    /// The skill's description, from its front matter (`""` when it has none).
    pub fn description(&self) -> &str {
        self.frontmatter
            .get("description")
            .and_then(Value::as_str)
            .unwrap_or_default()
    }

    /// The listed file at `uri`, when the entry lists its files and has that one.
    pub fn file(&self, uri: &str) -> Option<&SkillFileEntry> {
        match &self.resources {
            SkillResources::Files(files) => files.iter().find(|f| f.uri == uri),
            SkillResources::Dynamic => None,
        }
    }
}

/// A skill entry's `resources`: the complete list of its files, or `"dynamic"` (files
/// discovered with `resources/directory/read`, unverifiable by digest).
#[derive(Debug, Clone, PartialEq)]
pub enum SkillResources {
    /// Every file of the skill, `SKILL.md` included, each once.
    Files(Vec<SkillFileEntry>),
    /// `"dynamic"`: the server publishes no manifest.
    Dynamic,
}

const DYNAMIC: &str = "dynamic";

impl Serialize for SkillResources {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            SkillResources::Files(files) => files.serialize(serializer),
            SkillResources::Dynamic => serializer.serialize_str(DYNAMIC),
        }
    }
}

impl<'de> Deserialize<'de> for SkillResources {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        match Value::deserialize(deserializer)? {
            Value::String(s) if s == DYNAMIC => Ok(SkillResources::Dynamic),
            Value::Array(files) => serde_json::from_value(Value::Array(files))
                .map(SkillResources::Files)
                .map_err(de::Error::custom),
            other => Err(de::Error::custom(format!(
                "a skill's resources must be an array of {{uri, digest, size}} or \"dynamic\", got {other}"
            ))),
        }
    }
}

/// One file of a skill: where it is, and what its bytes must hash to and measure.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SkillFileEntry {
    /// The file's resource URI (the skill's `SKILL.md` or a file under its directory).
    pub uri: String,
    /// `sha256:` and the 64 lowercase hex digits of the SHA-256 of the file's raw bytes.
    pub digest: String,
    /// The file's length in bytes.
    pub size: u64,
}

/// The params of `skills/list`: where the page starts (a previous page's `nextCursor`).
pub type ListSkillsParams = crate::protocol::PaginatedParams;

/// The result of `skills/list`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListSkillsResult {
    /// A page of the server's skills.
    pub skills: Vec<SkillEntry>,
    /// Where the next page starts, when there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
    /// 2026-07-28 caching hints.
    #[serde(flatten, default, skip_serializing_if = "Option::is_none")]
    pub cache: Option<CacheHints>,
}

/// The params of `skills/get`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GetSkillParams {
    /// The skill's `SKILL.md` URI.
    pub uri: String,
}

/// The result of `skills/get`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GetSkillResult {
    /// The skill's entry, as `skills/list` gives it.
    pub skill: SkillEntry,
    /// 2026-07-28 caching hints.
    #[serde(flatten, default, skip_serializing_if = "Option::is_none")]
    pub cache: Option<CacheHints>,
}

/// The params of `resources/directory/read`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DirectoryReadParams {
    /// The directory's URI (no trailing slash), e.g. `skill://pdf-processing`.
    pub uri: String,
    /// Where the page starts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cursor: Option<String>,
}

/// The result of `resources/directory/read`: the directory's direct children, a
/// subdirectory with MIME type `inode/directory`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DirectoryReadResult {
    /// The children.
    pub resources: Vec<ResourceDescriptor>,
    /// Where the next page starts, when there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
}

/// The extension's settings in `capabilities.extensions["io.modelcontextprotocol/skills"]`
/// (inline under the identifier, per SEP-2133; `{}`: no optional feature).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SkillsSettings {
    /// Whether the server serves `resources/directory/read`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub directory_read: Option<bool>,
}
