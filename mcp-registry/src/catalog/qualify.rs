//! Model-facing tool names: `mcp__<server>__<tool>`, restricted to `[A-Za-z0-9_-]` and at most
//! 64 characters, as model APIs require.

use std::collections::HashMap;
use std::fmt::Write as _;

use sha1::{Digest as _, Sha1};

use crate::protocol;
use crate::registry::{ToolDefinition, qualified_name};

/// The longest tool name the major model APIs accept.
pub const MAX_TOOL_NAME_LENGTH: usize = 64;

/// Replaces every character outside `[A-Za-z0-9_-]` with `_` (an empty name becomes `_`).
///
/// ```
/// use mcp_registry::catalog::sanitize_tool_name;
/// assert_eq!(sanitize_tool_name("mcp__files.v2__read"), "mcp__files_v2__read");
/// assert_eq!(sanitize_tool_name("héllo wörld"), "h_llo_w_rld");
/// ```
pub fn sanitize_tool_name(name: &str) -> String {
    if name.is_empty() {
        return "_".to_owned();
    }
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

fn sha1_hex(text: &str) -> String {
    let digest = Sha1::digest(text.as_bytes());
    let mut hex = String::with_capacity(digest.len() * 2);
    for byte in digest {
        let _ = write!(hex, "{byte:02x}");
    }
    hex
}

/// The name a model sees for `tool` of `server`, as the Codex client builds it:
/// `mcp__<server>__<tool>` with characters outside `[A-Za-z0-9_-]` replaced by `_`; a result
/// longer than [`MAX_TOOL_NAME_LENGTH`] keeps its first 24 characters and gets the 40-digit
/// SHA-1 of the *unsanitized* name as suffix, so two long names stay apart.
///
/// The name cannot be reversed by parsing (sanitizing and hashing lose information): look it
/// up in a [`ToolCatalog`] instead.
///
/// ```
/// use mcp_registry::catalog::model_tool_name;
/// assert_eq!(model_tool_name("math", "add"), "mcp__math__add");
/// assert_eq!(model_tool_name("files.v2", "read"), "mcp__files_v2__read");
/// let long = model_tool_name("a_very_long_server_name_for_testing", "and_an_even_longer_tool_name");
/// assert_eq!(long.len(), 64);
/// assert!(long.starts_with("mcp__a_very_long_server"));
/// ```
pub fn model_tool_name(server: &str, tool: &str) -> String {
    let raw = qualified_name(server, tool);
    let sanitized = sanitize_tool_name(&raw);
    if sanitized.len() <= MAX_TOOL_NAME_LENGTH {
        return sanitized;
    }
    let hash = sha1_hex(&raw);
    // `sanitized` is ASCII, so any byte index is a character boundary.
    let keep = MAX_TOOL_NAME_LENGTH - hash.len();
    format!("{}{hash}", &sanitized[..keep])
}

/// One tool as a model sees it: its model-facing name, where it lives, and its description.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct CatalogTool {
    /// The model-facing name ([`model_tool_name`]).
    pub name: String,
    /// The server that provides it.
    pub server: String,
    /// The tool as `tools/list` describes it (its `name` is the plain tool name).
    pub tool: protocol::ToolDescriptor,
}

impl CatalogTool {
    /// The unsanitized qualified name, `mcp__<server>__<tool>`, which
    /// [`Registry::call_tool_by_name`](crate::Registry::call_tool_by_name) accepts.
    pub fn qualified_name(&self) -> String {
        qualified_name(&self.server, &self.tool.name)
    }
}

/// Two tools whose model-facing names are the same: one keeps the name, the other is left out
/// of the catalog (it stays callable by its qualified name `mcp__<server>__<tool>`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "model tool name {name:?} is claimed by both {kept:?} and {left_out:?}; {left_out:?} is left out of the \
     exported tools (rename its server or tool to expose it)"
)]
pub struct DuplicateToolName {
    /// The contested model-facing name.
    pub name: String,
    /// The qualified name (`mcp__<server>__<tool>`) of the tool that keeps it.
    pub kept: String,
    /// The qualified name of the tool left out.
    pub left_out: String,
}

/// The tools a model may be offered, under their model-facing names, with a reverse index
/// from name to tool and the collisions that were found.
///
/// When two tools map to the same name (`files.v2` and `files_v2` both sanitize to
/// `files_v2`), a tool whose qualified name needed no change keeps it (so enabling another
/// server never steals a name a model already uses); otherwise the first in (server, tool)
/// order does. The other is reported in [`duplicates`](Self::duplicates), never dropped silently.
///
/// ```
/// use mcp_registry::catalog::ToolCatalog;
/// use mcp_registry::{Registry, Server, Tool};
/// use serde_json::json;
/// let tool = || Tool::new("read", "Read", json!({"type": "object"}), |_| async { "" }).unwrap();
/// let registry = Registry::from_servers([
///     Server::new("files.v2", None, [tool()]).unwrap(),
///     Server::new("files_v2", None, [tool()]).unwrap(),
/// ]);
/// let catalog = ToolCatalog::new(registry.all_tool_definitions());
/// assert_eq!(catalog.get("mcp__files_v2__read").unwrap().server, "files_v2");
/// assert_eq!(catalog.duplicates()[0].left_out, "mcp__files.v2__read");
/// ```
#[derive(Debug, Clone, Default)]
pub struct ToolCatalog {
    tools: Vec<CatalogTool>,
    index: HashMap<String, usize>,
    duplicates: Vec<DuplicateToolName>,
}

impl ToolCatalog {
    /// Names every definition (see [`model_tool_name`]); order follows (server, tool).
    pub fn new(definitions: impl IntoIterator<Item = ToolDefinition>) -> Self {
        let mut candidates: Vec<(String, ToolDefinition)> = definitions
            .into_iter()
            .map(|d| (model_tool_name(&d.server, &d.tool.name), d))
            .collect();
        candidates
            .sort_by(|(_, a), (_, b)| (&a.server, &a.tool.name).cmp(&(&b.server, &b.tool.name)));
        // Exact names claim first, then the rest in order.
        let mut owner: HashMap<&str, usize> = HashMap::new();
        let exact = |(name, def): &(String, ToolDefinition)| {
            *name == qualified_name(&def.server, &def.tool.name)
        };
        let order = (0..candidates.len())
            .filter(|&i| exact(&candidates[i]))
            .chain((0..candidates.len()).filter(|&i| !exact(&candidates[i])));
        let mut duplicates = Vec::new();
        let mut keep = vec![false; candidates.len()];
        for i in order {
            let name = candidates[i].0.as_str();
            match owner.get(name) {
                Some(&first) => {
                    let raw = |j: usize| {
                        qualified_name(&candidates[j].1.server, &candidates[j].1.tool.name)
                    };
                    let duplicate = DuplicateToolName {
                        name: name.to_owned(),
                        kept: raw(first),
                        left_out: raw(i),
                    };
                    tracing::warn!(%duplicate, "duplicate model tool name");
                    duplicates.push(duplicate);
                }
                None => {
                    owner.insert(name, i);
                    keep[i] = true;
                }
            }
        }
        let tools: Vec<CatalogTool> = candidates
            .into_iter()
            .zip(keep)
            .filter(|(_, keep)| *keep)
            .map(|((name, def), _)| CatalogTool {
                name,
                server: def.server,
                tool: def.tool,
            })
            .collect();
        let index = tools
            .iter()
            .enumerate()
            .map(|(i, t)| (t.name.clone(), i))
            .collect();
        ToolCatalog {
            tools,
            index,
            duplicates,
        }
    }

    /// The tools, in (server, tool) order.
    pub fn tools(&self) -> &[CatalogTool] {
        &self.tools
    }

    /// The tool a model-facing name stands for (O(1)).
    pub fn get(&self, name: &str) -> Option<&CatalogTool> {
        self.index.get(name).map(|&i| &self.tools[i])
    }

    /// The collisions found while naming, in the order they were found.
    pub fn duplicates(&self) -> &[DuplicateToolName] {
        &self.duplicates
    }

    /// How many tools the catalog names.
    pub fn len(&self) -> usize {
        self.tools.len()
    }

    /// Whether the catalog names no tool.
    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sha1_matches_a_known_digest() {
        assert_eq!(sha1_hex("abc"), "a9993e364706816aba3e25717850c26c9cd0d89d");
    }

    #[test]
    fn long_names_keep_a_24_character_prefix_and_the_hash_of_the_raw_name() {
        let server = "s".repeat(50);
        let name = model_tool_name(&server, "tool.with.dots");
        assert_eq!(name.len(), MAX_TOOL_NAME_LENGTH);
        assert_eq!(
            &name[..24],
            &sanitize_tool_name(&qualified_name(&server, "tool.with.dots"))[..24]
        );
        assert_eq!(
            &name[24..],
            sha1_hex(&qualified_name(&server, "tool.with.dots"))
        );
    }

    #[test]
    fn a_name_of_exactly_64_characters_is_kept() {
        let tool = "t".repeat(MAX_TOOL_NAME_LENGTH - "mcp__s__".len());
        assert_eq!(model_tool_name("s", &tool), format!("mcp__s__{tool}"));
    }
}
