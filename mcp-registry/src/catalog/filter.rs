//! Allow and deny rules on tool names, and the verdict they give one tool.

use std::fmt;
use std::sync::Arc;

use super::qualify::{MAX_TOOL_NAME_LENGTH, model_tool_name, sanitize_tool_name};
use crate::protocol::ToolDescriptor;
use crate::registry::qualified_name;

/// One allow or deny rule: a tool name, an exact qualified tool, or every tool of a server.
///
/// - `<tool>`: a tool of that name, whichever server has it (the Codex client's plain
///   allow/deny names).
/// - `mcp__<server>__<tool>`: one tool, written either unsanitized (`mcp__files.v2__read`) or
///   as the model sees it (`mcp__files_v2__read`, or a truncated 64-character name).
/// - `mcp__<server>__*`: every tool of the server (`<server>` as registered or sanitized).
///
/// ```
/// use mcp_registry::catalog::ToolPattern;
/// assert!(ToolPattern::parse("mcp__math__*").unwrap().matches("math", "add"));
/// assert!(!ToolPattern::parse("mcp__math__add").unwrap().matches("math", "sub"));
/// assert!(ToolPattern::parse("add").unwrap().matches("math", "add"));
/// assert!(ToolPattern::parse("add").unwrap().matches("calc", "add"));
/// assert!(ToolPattern::parse("ad*").is_err());
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolPattern {
    text: String,
    kind: PatternKind,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum PatternKind {
    /// A qualified or model-facing name.
    Exact,
    /// Every tool of this server.
    Server(String),
    /// A tool of this name on any server.
    Tool,
}

/// A pattern that names no tool.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "tool filter pattern {pattern:?} is invalid: {reason}; write <tool>, mcp__<server>__<tool> or mcp__<server>__*"
)]
pub struct FilterPatternError {
    /// The refused pattern.
    pub pattern: String,
    /// What is wrong with it.
    pub reason: &'static str,
}

impl ToolPattern {
    /// Parses `<tool>`, `mcp__<server>__<tool>` or `mcp__<server>__*`.
    pub fn parse(pattern: &str) -> Result<Self, FilterPatternError> {
        let fail = |reason| {
            Err(FilterPatternError {
                pattern: pattern.to_owned(),
                reason,
            })
        };
        let Some(rest) = pattern.strip_prefix("mcp__") else {
            if pattern.is_empty() {
                return fail("it is empty");
            }
            if pattern.contains('*') {
                return fail("'*' is only allowed as the whole tool part (mcp__<server>__*)");
            }
            if crate::protocol::validate_tool_name(pattern).is_err() {
                return fail("it is not a tool name (letters, digits, '_', '-', '.')");
            }
            return Ok(ToolPattern {
                text: pattern.to_owned(),
                kind: PatternKind::Tool,
            });
        };
        if let Some(server) = rest.strip_suffix("__*") {
            if server.is_empty() || server.contains('*') {
                return fail("the server part of a wildcard must be a server name");
            }
            return Ok(ToolPattern {
                text: pattern.to_owned(),
                kind: PatternKind::Server(server.to_owned()),
            });
        }
        if rest.contains('*') {
            return fail("'*' is only allowed as the whole tool part (mcp__<server>__*)");
        }
        // A truncated model-facing name has exactly 64 characters and may have lost its "__".
        let truncated = pattern.len() == MAX_TOOL_NAME_LENGTH;
        let split = rest
            .split_once("__")
            .is_some_and(|(s, t)| !s.is_empty() && !t.is_empty());
        if !split && !truncated {
            return fail("it has no \"__\" between a server and a tool name");
        }
        Ok(ToolPattern {
            text: pattern.to_owned(),
            kind: PatternKind::Exact,
        })
    }

    /// The pattern as written.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// Whether the pattern covers `tool` of `server`.
    pub fn matches(&self, server: &str, tool: &str) -> bool {
        self.matches_names(&Names {
            server,
            tool,
            qualified: &qualified_name(server, tool),
            model_name: &model_tool_name(server, tool),
        })
    }

    fn matches_names(&self, names: &Names<'_>) -> bool {
        let Names {
            server,
            tool,
            qualified,
            model_name,
        } = *names;
        match &self.kind {
            PatternKind::Exact => self.text == qualified || self.text == model_name,
            PatternKind::Tool => self.text == tool,
            PatternKind::Server(s) => s == server || *s == sanitize_tool_name(server),
        }
    }
}

/// The names one tool goes by, as patterns match them.
#[derive(Clone, Copy)]
pub(super) struct Names<'a> {
    pub(super) server: &'a str,
    pub(super) tool: &'a str,
    /// `mcp__<server>__<tool>`.
    pub(super) qualified: &'a str,
    /// The model-facing name.
    pub(super) model_name: &'a str,
}

impl fmt::Display for ToolPattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

/// Which tools a model may see and call: an optional allow list and a deny list of
/// [`ToolPattern`]s. A tool passes when no deny pattern matches it and, if an allow list is
/// set, some allow pattern does. Deny wins over allow.
///
/// ```
/// use mcp_registry::catalog::{FilterDecision, ToolFilter};
/// let filter = ToolFilter::builder()
///     .allow("mcp__math__*")
///     .deny("mcp__math__divide")
///     .build()
///     .unwrap();
/// assert!(filter.decide("math", "add").is_allowed());
/// assert_eq!(
///     filter.decide("math", "divide"),
///     FilterDecision::Denied { pattern: "mcp__math__divide".into() }
/// );
/// assert_eq!(filter.decide("shell", "run"), FilterDecision::NotAllowed { allow: vec!["mcp__math__*".into()] });
/// ```
#[derive(Clone, Default)]
pub struct ToolFilter {
    allow: Option<Vec<ToolPattern>>,
    deny: Vec<ToolPattern>,
    pub(super) keep: Option<Arc<Keep>>,
}

/// A filter function: whether to keep `tool` of `server`.
type Keep = dyn Fn(&str, &ToolDescriptor) -> bool + Send + Sync;

impl fmt::Debug for ToolFilter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolFilter")
            .field("allow", &self.allow)
            .field("deny", &self.deny)
            .field("keep", &self.keep.as_ref().map(|_| "Fn(..)"))
            .finish()
    }
}

/// Equal when the patterns are equal and both have the same filter function (or none).
impl PartialEq for ToolFilter {
    fn eq(&self, other: &Self) -> bool {
        self.allow == other.allow
            && self.deny == other.deny
            && match (&self.keep, &other.keep) {
                (None, None) => true,
                (Some(a), Some(b)) => Arc::ptr_eq(a, b),
                _ => false,
            }
    }
}

impl Eq for ToolFilter {}

/// Builds a [`ToolFilter`]; patterns are checked by [`build`](Self::build).
#[derive(Clone, Default)]
#[must_use = "call build() to get the filter"]
pub struct ToolFilterBuilder {
    allow: Option<Vec<String>>,
    deny: Vec<String>,
    keep: Option<Arc<Keep>>,
}

impl fmt::Debug for ToolFilterBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolFilterBuilder")
            .field("allow", &self.allow)
            .field("deny", &self.deny)
            .field("keep", &self.keep.as_ref().map(|_| "Fn(..)"))
            .finish()
    }
}

impl ToolFilterBuilder {
    /// Adds an allow pattern (the first one turns the allow list on).
    pub fn allow(mut self, pattern: impl Into<String>) -> Self {
        self.allow.get_or_insert_with(Vec::new).push(pattern.into());
        self
    }

    /// Adds allow patterns; called with none, it turns on an empty allow list (nothing passes).
    pub fn allow_all_of<I, S>(mut self, patterns: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.allow
            .get_or_insert_with(Vec::new)
            .extend(patterns.into_iter().map(Into::into));
        self
    }

    /// Adds a deny pattern.
    pub fn deny(mut self, pattern: impl Into<String>) -> Self {
        self.deny.push(pattern.into());
        self
    }

    /// Adds deny patterns.
    pub fn deny_all_of<I, S>(mut self, patterns: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.deny.extend(patterns.into_iter().map(Into::into));
        self
    }

    /// Keeps only the tools `keep(server, tool)` says yes to (after the patterns), e.g. by
    /// their annotations:
    ///
    /// ```
    /// use mcp_registry::catalog::{FilterDecision, ToolFilter};
    /// let read_only = ToolFilter::builder()
    ///     .keep(|_server, tool| tool.annotations.read_only_hint == Some(true))
    ///     .build()
    ///     .unwrap();
    /// # let tool: mcp_registry::protocol::ToolDescriptor = serde_json::from_value(
    /// #     serde_json::json!({"name": "rm", "inputSchema": {"type": "object"}})).unwrap();
    /// assert_eq!(read_only.decide_tool("fs", &tool), FilterDecision::Rejected);
    /// ```
    pub fn keep(
        mut self,
        keep: impl Fn(&str, &ToolDescriptor) -> bool + Send + Sync + 'static,
    ) -> Self {
        self.keep = Some(Arc::new(keep));
        self
    }

    /// The filter; refuses the first pattern that names no tool.
    pub fn build(self) -> Result<ToolFilter, FilterPatternError> {
        let parse = |v: Vec<String>| {
            v.iter()
                .map(|p| ToolPattern::parse(p))
                .collect::<Result<Vec<_>, _>>()
        };
        Ok(ToolFilter {
            allow: self.allow.map(parse).transpose()?,
            deny: parse(self.deny)?,
            keep: self.keep,
        })
    }
}

/// What a [`ToolFilter`] says about one tool.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum FilterDecision {
    /// The tool may be listed and called.
    Allowed,
    /// A deny pattern matches the tool.
    Denied {
        /// The first matching deny pattern.
        pattern: String,
    },
    /// An allow list is set and no pattern in it matches the tool.
    NotAllowed {
        /// The allow list.
        allow: Vec<String>,
    },
    /// The filter function ([`ToolFilterBuilder::keep`]) said no.
    Rejected,
}

impl FilterDecision {
    /// Whether the tool passes.
    pub fn is_allowed(&self) -> bool {
        matches!(self, FilterDecision::Allowed)
    }
}

impl fmt::Display for FilterDecision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FilterDecision::Allowed => f.write_str("allowed"),
            FilterDecision::Denied { pattern } => write!(f, "denied by pattern {pattern:?}"),
            FilterDecision::NotAllowed { allow } => {
                write!(f, "matched by no allow pattern (allowed: {allow:?})")
            }
            FilterDecision::Rejected => f.write_str("rejected by the filter function"),
        }
    }
}

impl ToolFilter {
    /// A filter that lets every tool pass.
    pub fn allow_all() -> Self {
        Self::default()
    }

    /// Starts building a filter.
    pub fn builder() -> ToolFilterBuilder {
        ToolFilterBuilder::default()
    }

    /// Whether every tool passes (no allow list, no deny pattern, no filter function).
    pub fn is_allow_all(&self) -> bool {
        self.allow.is_none() && self.deny.is_empty() && self.keep.is_none()
    }

    /// The allow list, if one is set.
    pub fn allow_patterns(&self) -> Option<&[ToolPattern]> {
        self.allow.as_deref()
    }

    /// The deny list.
    pub fn deny_patterns(&self) -> &[ToolPattern] {
        &self.deny
    }

    /// The patterns' verdict on the tool named `tool` of `server` (the filter function, which
    /// needs the tool's description, is applied by [`decide_tool`](Self::decide_tool)).
    pub fn decide(&self, server: &str, tool: &str) -> FilterDecision {
        if self.allow.is_none() && self.deny.is_empty() {
            return FilterDecision::Allowed;
        }
        self.decide_names(&Names {
            server,
            tool,
            qualified: &qualified_name(server, tool),
            model_name: &model_tool_name(server, tool),
        })
    }

    /// The verdict on `tool` of `server`: the patterns, then the filter function.
    pub fn decide_tool(&self, server: &str, tool: &ToolDescriptor) -> FilterDecision {
        match self.decide(server, &tool.name) {
            FilterDecision::Allowed => self.kept(server, tool),
            refused => refused,
        }
    }

    /// The filter function's verdict.
    pub(super) fn kept(&self, server: &str, tool: &ToolDescriptor) -> FilterDecision {
        match &self.keep {
            Some(keep) if !keep(server, tool) => FilterDecision::Rejected,
            _ => FilterDecision::Allowed,
        }
    }

    pub(super) fn decide_names(&self, names: &Names<'_>) -> FilterDecision {
        if let Some(p) = self.deny.iter().find(|p| p.matches_names(names)) {
            return FilterDecision::Denied {
                pattern: p.text.clone(),
            };
        }
        match &self.allow {
            Some(allow) if !allow.iter().any(|p| p.matches_names(names)) => {
                FilterDecision::NotAllowed {
                    allow: allow.iter().map(|p| p.text.clone()).collect(),
                }
            }
            _ => FilterDecision::Allowed,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_without_a_server_or_tool_are_refused() {
        for bad in [
            "mcp__",
            "mcp____*",
            "mcp__a",
            "mcp__a__",
            "mcp__*__x",
            "mcp__a__b*",
            "re*d",
            "Bash(ls)",
            "",
        ] {
            assert!(ToolPattern::parse(bad).is_err(), "{bad} was accepted");
        }
    }

    #[test]
    fn server_wildcards_match_the_sanitized_server_name_too() {
        let p = ToolPattern::parse("mcp__files_v2__*").unwrap();
        assert!(p.matches("files.v2", "read"));
        assert!(p.matches("files_v2", "read"));
        assert!(!p.matches("files", "read"));
    }
}
