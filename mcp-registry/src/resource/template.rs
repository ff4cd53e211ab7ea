//! RFC 6570 URI templates, parsed, expanded and matched by `uri-template-ex` (level 2:
//! `{var}`, `{+var}`, `{#var}`). This module only checks that a template stays within what
//! that crate reads correctly and shapes its answers.

use std::collections::BTreeMap;
use std::fmt;

/// A parsed RFC 6570 URI template (level 2: `{var}`, `{+var}`, `{#var}`), which can also be
/// matched against a URI to read its variables back.
///
/// ```
/// use mcp_registry::resource::UriTemplate;
/// let t = UriTemplate::parse("users://{id}/profile").unwrap();
/// assert_eq!(t.variables(), ["id"]);
/// let vars = t.match_uri("users://42/profile").unwrap();
/// assert_eq!(vars["id"], "42");
/// assert!(t.match_uri("users://42/settings").is_none());
/// assert_eq!(t.expand(&vars), "users://42/profile");
/// let files = UriTemplate::parse("file:///{+path}").unwrap();
/// assert_eq!(files.match_uri("file:///src/main.rs").unwrap()["path"], "src/main.rs");
/// assert!(UriTemplate::parse("search://{?q}").is_err(), "level 3 is refused, not misread");
/// ```
#[derive(Clone)]
pub struct UriTemplate {
    template: uri_template_ex::UriTemplate,
    source: String,
    variables: Vec<String>,
}

/// Why a URI template was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid URI template {template:?}: {reason}")]
#[non_exhaustive]
pub struct UriTemplateError {
    /// The refused template.
    pub template: String,
    /// What is wrong with it.
    pub reason: String,
}

/// Whether `name` is an RFC 6570 `varname` (`ALPHA / DIGIT / "_" / pct-encoded`, dots
/// between): anything else inside braces is an operator or modifier of a level above 2.
fn is_varname(name: &str) -> bool {
    !name.is_empty()
        && !name.starts_with('.')
        && !name.ends_with('.')
        && !name.contains("..")
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '%'))
}

impl UriTemplate {
    /// Parses `template`; refuses malformed expressions and those above level 2 (`{?q}`,
    /// `{/p}`, `{a,b}`, `{x*}`, `{x:3}`), and a variable used twice.
    pub fn parse(template: &str) -> Result<Self, UriTemplateError> {
        let refuse = |reason: String| UriTemplateError {
            template: template.to_owned(),
            reason,
        };
        let parsed = uri_template_ex::UriTemplate::new(template)
            .map_err(|e| refuse(e.to_string().trim_end().to_owned()))?;
        let mut variables: Vec<String> = Vec::new();
        for name in parsed.var_names() {
            if !is_varname(name) {
                return Err(refuse(format!(
                    "`{{{name}}}` is not supported: only level 2 expressions (`{{var}}`, `{{+var}}`, `{{#var}}`) with one variable each"
                )));
            }
            if variables.iter().any(|v| v == name) {
                return Err(refuse(format!("variable `{name}` appears twice")));
            }
            variables.push(name.to_owned());
        }
        Ok(UriTemplate {
            template: parsed,
            source: template.to_owned(),
            variables,
        })
    }

    /// The template as written.
    pub fn as_str(&self) -> &str {
        &self.source
    }

    /// The variables, in the order they appear.
    pub fn variables(&self) -> &[String] {
        &self.variables
    }

    /// The URI this template makes with `values` (a variable without a value expands to
    /// nothing).
    pub fn expand(&self, values: &BTreeMap<String, String>) -> String {
        self.template.expand(values)
    }

    /// The variables of `uri` when this template makes it (percent-decoded for `{var}`);
    /// `None` when it does not, or when a variable would be empty.
    pub fn match_uri(&self, uri: &str) -> Option<BTreeMap<String, String>> {
        let captures = self.template.captures(uri)?;
        captures
            .iter()
            .map(|(name, value)| {
                let value = value?.value().ok()?;
                (!value.is_empty()).then(|| (name.to_owned(), value.into_owned()))
            })
            .collect()
    }
}

impl fmt::Debug for UriTemplate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("UriTemplate").field(&self.source).finish()
    }
}
