//! Typed completion messages: `completion/complete`, its params and result.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// The most values one `completion/complete` result may carry.
pub const MAX_COMPLETION_VALUES: usize = 100;

/// What a `completion/complete` completes an argument of.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type")]
pub enum CompletionReference {
    /// An argument of the prompt named `name`.
    #[serde(rename = "ref/prompt")]
    Prompt {
        /// The prompt's name.
        name: String,
    },
    /// A variable of a resource template (`uri` is the URI template, or in 2026-07-28 a URI
    /// the template makes).
    #[serde(rename = "ref/resource")]
    Resource {
        /// The URI template (or URI).
        uri: String,
    },
}

/// The argument being completed and what the user typed so far.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CompleteArgument {
    /// The argument's (or template variable's) name.
    pub name: String,
    /// The partial value.
    pub value: String,
}

/// What is already chosen for the other arguments.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CompleteContext {
    /// Argument names to the values already resolved.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<BTreeMap<String, String>>,
}

/// The params of `completion/complete`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CompleteParams {
    /// The prompt or resource template.
    #[serde(rename = "ref")]
    pub reference: CompletionReference,
    /// The argument to complete.
    pub argument: CompleteArgument,
    /// The other arguments already chosen.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<CompleteContext>,
}

/// Completion values, ranked by relevance: the `completion` member of a
/// `completion/complete` result, and what a completion function returns.
///
/// ```
/// use mcp_registry::protocol::Completions;
/// let c = Completions::matching(["python", "pytorch", "rust"], "py");
/// assert_eq!(c.values, ["python", "pytorch"]);
/// assert_eq!(serde_json::to_value(&c).unwrap(), serde_json::json!(
///     {"values": ["python", "pytorch"], "total": 2, "hasMore": false}));
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Completions {
    /// The suggestions (at most [`MAX_COMPLETION_VALUES`] are sent; more are cut, and
    /// `total`/`hasMore` then say so).
    pub values: Vec<String>,
    /// How many suggestions there are in all, when known (may exceed `values`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total: Option<u64>,
    /// Whether there are more suggestions than `values`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub has_more: Option<bool>,
}

impl Completions {
    /// Exactly these values: `total` is their number, `hasMore` false.
    pub fn new(values: impl IntoIterator<Item = impl Into<String>>) -> Self {
        let values: Vec<String> = values.into_iter().map(Into::into).collect();
        Completions {
            total: Some(values.len() as u64),
            has_more: Some(false),
            values,
        }
    }

    /// The `candidates` that start with `partial`, ignoring ASCII case, in their order.
    pub fn matching(
        candidates: impl IntoIterator<Item = impl Into<String>>,
        partial: &str,
    ) -> Self {
        let partial = partial.to_ascii_lowercase();
        Self::new(
            candidates
                .into_iter()
                .map(Into::into)
                .filter(|c: &String| c.to_ascii_lowercase().starts_with(&partial)),
        )
    }

    /// At most [`MAX_COMPLETION_VALUES`] values; when more were given, `total` counts them
    /// all and `hasMore` is true.
    pub fn capped(mut self) -> Self {
        let len = self.values.len();
        if len > MAX_COMPLETION_VALUES {
            self.values.truncate(MAX_COMPLETION_VALUES);
            self.total = Some(self.total.unwrap_or(0).max(len as u64));
            self.has_more = Some(true);
        }
        self
    }
}

/// The result of `completion/complete`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CompleteResult {
    /// The suggestions.
    pub completion: Completions,
}
