//! Allow and deny filters, and a registry view that enforces them on listing and on calling.

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use arc_swap::ArcSwapOption;
use serde_json::{Value, json};
use tokio::sync::watch;

use super::qualify::{ToolCatalog, model_tool_name};
use crate::protocol::{CallToolResult, ErrorCode, ErrorObject, RequestId, ToolDescriptor};
use crate::registry::ListingFilter;
use crate::registry::{
    CallError, CallFuture, CallOptions, CallRequest, Registry, RegistryChange, ToolDefinition,
    qualified_name, split_qualified,
};

/// One allow or deny rule: a tool name, an exact qualified tool, or every tool of a server.
///
/// - `<tool>`: a tool of that name, whichever server has it (the Codex client's plain
///   allow/deny names).
/// - `mcp__<server>__<tool>`: one tool, written either unsanitized (`mcp__files.v2__read`) or
///   as the model sees it (`mcp__files_v2__read`, or a truncated 64-character name).
/// - `mcp__<server>__*`: every tool of the server (`<server>` as registered or sanitized).
///
/// ```
/// use mcp_registry::client::ToolPattern;
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
        let truncated = pattern.len() == super::MAX_TOOL_NAME_LENGTH;
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
            PatternKind::Server(s) => s == server || *s == super::sanitize_tool_name(server),
        }
    }
}

/// The names one tool goes by, as patterns match them.
#[derive(Clone, Copy)]
struct Names<'a> {
    server: &'a str,
    tool: &'a str,
    /// `mcp__<server>__<tool>`.
    qualified: &'a str,
    /// The model-facing name.
    model_name: &'a str,
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
/// use mcp_registry::client::{FilterDecision, ToolFilter};
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
    keep: Option<Arc<Keep>>,
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
    /// use mcp_registry::client::{FilterDecision, ToolFilter};
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
    fn kept(&self, server: &str, tool: &ToolDescriptor) -> FilterDecision {
        match &self.keep {
            Some(keep) if !keep(server, tool) => FilterDecision::Rejected,
            _ => FilterDecision::Allowed,
        }
    }

    fn decide_names(&self, names: &Names<'_>) -> FilterDecision {
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

/// Why a call through a [`FilteredRegistry`] produced no result.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum FilteredCallError {
    /// The tool exists but the filter keeps it from being called.
    #[error(
        "tool {tool:?} of server {server:?} (called as {name:?}) is refused by the tool filter: {decision}"
    )]
    Refused {
        /// The name asked for.
        name: String,
        /// The tool's server.
        server: String,
        /// The tool.
        tool: String,
        /// The filter's verdict (which pattern, or the allow list).
        decision: FilterDecision,
    },
    /// The registry could not produce a result.
    #[error(transparent)]
    Call(#[from] CallError),
}

impl FilteredCallError {
    /// Whether no callable tool was found by that name (refused, unknown, ambiguous).
    pub fn is_lookup_error(&self) -> bool {
        match self {
            FilteredCallError::Refused { .. } => true,
            FilteredCallError::Call(e) => e.is_lookup_error(),
        }
    }

    /// The error as a result with `isError: true` whose text names the problem.
    pub fn into_call_tool_result(self) -> CallToolResult {
        match self {
            FilteredCallError::Call(e) => e.into_call_tool_result(),
            refused => CallToolResult::error(refused.to_string()),
        }
    }
}

/// One tool of the registry, as the filtered view indexes it.
struct Entry {
    server: String,
    tool: String,
    enabled: bool,
    decision: FilterDecision,
}

/// The filtered view of one registry generation, built once per change.
struct View {
    generation: u64,
    /// Enabled and allowed tools, sorted by server then tool.
    definitions: Vec<ToolDefinition>,
    /// The same tools, under their model-facing names.
    catalog: ToolCatalog,
    /// Every tool, by qualified name (`mcp__<server>__<tool>`).
    entries: HashMap<String, Entry>,
    /// Model-facing name -> qualified name, for tools outside the catalog.
    aliases: HashMap<String, String>,
    /// Plain tool name -> qualified names, sorted by server.
    plain: HashMap<String, Vec<String>>,
}

impl View {
    fn build(registry: &Registry, filter: &ToolFilter, generation: u64) -> Self {
        let mut entries = HashMap::new();
        let mut aliases = HashMap::new();
        let mut plain: HashMap<String, Vec<String>> = HashMap::new();
        let mut definitions = Vec::new();
        for status in registry.server_status() {
            let Some(server) = registry.server(&status.name) else {
                continue; // unregistered meanwhile; the next generation's view will know
            };
            for tool in server.tools() {
                let qualified = qualified_name(server.name(), tool.name());
                let model_name = model_tool_name(server.name(), tool.name());
                let decision = match filter.decide_names(&Names {
                    server: server.name(),
                    tool: tool.name(),
                    qualified: &qualified,
                    model_name: &model_name,
                }) {
                    FilterDecision::Allowed => filter.kept(server.name(), tool.descriptor()),
                    refused => refused,
                };
                if status.enabled && decision.is_allowed() {
                    definitions.push(ToolDefinition {
                        server: server.name().to_owned(),
                        qualified_name: qualified.clone(),
                        tool: tool.descriptor().clone(),
                    });
                }
                aliases
                    .entry(model_name)
                    .or_insert_with(|| qualified.clone());
                plain
                    .entry(tool.name().to_owned())
                    .or_default()
                    .push(qualified.clone());
                entries.insert(
                    qualified,
                    Entry {
                        server: server.name().to_owned(),
                        tool: tool.name().to_owned(),
                        enabled: status.enabled,
                        decision,
                    },
                );
            }
        }
        View {
            generation,
            catalog: ToolCatalog::new(definitions.clone()),
            definitions,
            entries,
            aliases,
            plain,
        }
    }

    /// The qualified name of the one tool `name` may call, or why there is none.
    fn resolve(&self, name: &str) -> Result<String, FilteredCallError> {
        if let Some(tool) = self.catalog.get(name) {
            return Ok(tool.qualified_name());
        }
        let qualified = self.aliases.get(name).map_or(name, String::as_str);
        if let Some(entry) = self.entries.get(qualified) {
            return self.check(name, qualified, entry);
        }
        if let Some(candidates) = self.plain.get(name) {
            let entries = || {
                candidates
                    .iter()
                    .filter_map(|q| Some((q, self.entries.get(q)?)))
            };
            let mut callable = entries().filter(|(_, e)| e.enabled && e.decision.is_allowed());
            return match (callable.next(), callable.next()) {
                (Some((q, _)), None) => Ok(q.clone()),
                (Some(_), Some(_)) => Err(CallError::AmbiguousTool {
                    name: name.to_owned(),
                    servers: entries()
                        .filter(|(_, e)| e.enabled && e.decision.is_allowed())
                        .map(|(_, e)| e.server.clone())
                        .collect(),
                }
                .into()),
                // Prefer "disabled" over "refused" when both apply: enabling is the host's fix.
                (None, _) => match entries()
                    .find(|(_, e)| e.decision.is_allowed())
                    .or_else(|| entries().next())
                {
                    Some((q, e)) => self.check(name, q, e),
                    None => Err(CallError::UnknownTool {
                        name: name.to_owned(),
                    }
                    .into()),
                },
            };
        }
        Err(match split_qualified(name) {
            Some((server, _)) if !self.entries.values().any(|e| e.server == server) => {
                CallError::UnknownServer {
                    server: server.to_owned(),
                    name: name.to_owned(),
                }
            }
            _ => CallError::UnknownTool {
                name: name.to_owned(),
            },
        }
        .into())
    }

    fn check(
        &self,
        name: &str,
        qualified: &str,
        entry: &Entry,
    ) -> Result<String, FilteredCallError> {
        if !entry.decision.is_allowed() {
            return Err(FilteredCallError::Refused {
                name: name.to_owned(),
                server: entry.server.clone(),
                tool: entry.tool.clone(),
                decision: entry.decision.clone(),
            });
        }
        if !entry.enabled {
            return Err(CallError::ServerDisabled {
                server: entry.server.clone(),
                tool: entry.tool.clone(),
            }
            .into());
        }
        Ok(qualified.to_owned())
    }
}

struct FilteredInner {
    registry: Registry,
    filter: ToolFilter,
    /// The filter as dispatch applies it to `tools/list`.
    listing: ListingFilter,
    changes: watch::Receiver<RegistryChange>,
    view: ArcSwapOption<View>,
}

/// A [`Registry`] seen through a [`ToolFilter`]: filtered-out tools are neither listed nor
/// callable, whichever way they are named (plain, `mcp__<server>__<tool>`, or the
/// model-facing name). Cheap to clone; clones share the view, which is rebuilt once per
/// registry change, so lookups stay O(1).
///
/// ```
/// use mcp_registry::client::{FilteredCallError, FilteredRegistry, ToolFilter};
/// use mcp_registry::{Registry, Server, Tool};
/// use serde_json::json;
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let tool = |name: &str| Tool::new(name, "", json!({"type": "object"}), |_| async { "ok" }).unwrap();
/// let registry = Registry::from_servers([Server::new("fs", None, [tool("read"), tool("delete")]).unwrap()]);
/// let filter = ToolFilter::builder().deny("mcp__fs__delete").build().unwrap();
/// let view = FilteredRegistry::new(registry.clone(), filter);
///
/// let names: Vec<_> = view.catalog().tools().iter().map(|t| t.name.clone()).collect();
/// assert_eq!(names, ["mcp__fs__read"]);
/// assert!(view.call_tool_by_name("read", json!({})).await.is_ok());
/// let refused = view.call_tool_by_name("delete", json!({})).await.unwrap_err();
/// assert!(matches!(refused, FilteredCallError::Refused { .. }));
/// assert!(refused.to_string().contains("mcp__fs__delete"));
/// // The registry itself is unfiltered.
/// assert!(registry.call_tool_by_name("delete", json!({})).await.is_ok());
/// # }
/// ```
#[derive(Clone)]
pub struct FilteredRegistry {
    inner: Arc<FilteredInner>,
}

impl fmt::Debug for FilteredRegistry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FilteredRegistry")
            .field("registry", &self.inner.registry)
            .field("filter", &self.inner.filter)
            .finish()
    }
}

/// A call through a [`FilteredRegistry`] to configure and `.await`: a
/// [`CallRequest`], or the filter's refusal, which awaiting returns.
#[must_use = "a call does nothing until it is awaited"]
pub struct FilteredCallRequest<'a>(Result<CallRequest<'a>, FilteredCallError>);

impl FilteredCallRequest<'_> {
    /// [`CallRequest::timeout`].
    pub fn timeout(self, limit: std::time::Duration) -> Self {
        Self(self.0.map(|c| c.timeout(limit)))
    }

    /// [`CallRequest::without_timeout`].
    pub fn without_timeout(self) -> Self {
        Self(self.0.map(CallRequest::without_timeout))
    }

    /// [`CallRequest::cancellation`].
    pub fn cancellation(self, token: crate::CancellationToken) -> Self {
        Self(self.0.map(|c| c.cancellation(token)))
    }

    /// [`CallRequest::options`]: every setting at once.
    pub fn options(self, options: CallOptions) -> Self {
        Self(self.0.map(|c| c.options(options)))
    }
}

impl std::future::IntoFuture for FilteredCallRequest<'_> {
    type Output = Result<CallToolResult, FilteredCallError>;
    type IntoFuture = FilteredCallFuture;

    fn into_future(self) -> FilteredCallFuture {
        FilteredCallFuture(
            self.0
                .map(std::future::IntoFuture::into_future)
                .map_err(Some),
        )
    }
}

/// A call through a [`FilteredRegistry`] in flight (or refused: it resolves to the refusal).
pub struct FilteredCallFuture(Result<CallFuture, Option<FilteredCallError>>);

impl std::future::Future for FilteredCallFuture {
    type Output = Result<CallToolResult, FilteredCallError>;

    fn poll(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Self::Output> {
        match &mut self.get_mut().0 {
            Ok(call) => std::pin::Pin::new(call).poll(cx).map_err(Into::into),
            Err(refused) => match refused.take() {
                Some(refused) => std::task::Poll::Ready(Err(refused)),
                // A resolved future never resolves again.
                None => std::task::Poll::Pending,
            },
        }
    }
}

impl From<Registry> for FilteredRegistry {
    /// The registry with every tool allowed.
    fn from(registry: Registry) -> Self {
        FilteredRegistry::new(registry, ToolFilter::allow_all())
    }
}

impl FilteredRegistry {
    /// `registry` seen through `filter`. The registry keeps changing underneath (toggles,
    /// registrations); the view follows.
    pub fn new(registry: Registry, filter: ToolFilter) -> Self {
        let changes = registry.subscribe();
        let listing = {
            let (filter, registry) = (filter.clone(), registry.clone());
            ListingFilter::new(move |server, tool| match filter.keep {
                None => filter.decide(server, tool).is_allowed(),
                Some(_) => registry.server(server).is_some_and(|s| {
                    s.tool(tool)
                        .is_some_and(|t| filter.decide_tool(server, t.descriptor()).is_allowed())
                }),
            })
        };
        FilteredRegistry {
            inner: Arc::new(FilteredInner {
                registry,
                filter,
                listing,
                changes,
                view: ArcSwapOption::empty(),
            }),
        }
    }

    /// The registry underneath (unfiltered).
    pub fn registry(&self) -> &Registry {
        &self.inner.registry
    }

    /// The filter.
    pub fn filter(&self) -> &ToolFilter {
        &self.inner.filter
    }

    fn view(&self) -> Arc<View> {
        // Read the generation before building: a view is never labelled newer than it is.
        let generation = self.inner.changes.borrow().generation;
        if let Some(view) = self.inner.view.load_full()
            && view.generation == generation
        {
            return view;
        }
        let view = Arc::new(View::build(
            &self.inner.registry,
            &self.inner.filter,
            generation,
        ));
        self.inner.view.store(Some(view.clone()));
        view
    }

    /// The enabled, allowed tools under their model-facing names (collisions reported in
    /// [`ToolCatalog::duplicates`]).
    pub fn catalog(&self) -> ToolCatalog {
        self.view().catalog.clone()
    }

    /// The enabled, allowed tools, sorted by server then tool name.
    pub fn tool_definitions(&self) -> Vec<ToolDefinition> {
        self.view().definitions.clone()
    }

    /// The verdict on `tool` of `server`.
    pub fn decide(&self, server: &str, tool: &str) -> FilterDecision {
        self.inner.filter.decide(server, tool)
    }

    /// The qualified name (`mcp__<server>__<tool>`) of the tool `name` stands for — a plain,
    /// qualified or model-facing name — if the filter lets it be called.
    pub fn resolve(&self, name: &str) -> Result<String, FilteredCallError> {
        self.view().resolve(name)
    }

    /// Calls a tool by plain, qualified or model-facing name, refusing filtered-out tools:
    /// the call to configure and `.await`, like [`Registry::call_tool_by_name`]'s. The filter
    /// judges names when the call is made, so its verdict holds even if the registry changes
    /// before the call runs.
    ///
    /// ```
    /// # use mcp_registry::{Registry, Server, Tool};
    /// # use mcp_registry::client::{FilteredRegistry, ToolFilter};
    /// # use serde_json::json;
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # let t = |n: &str| Tool::new(n, "t", json!({"type": "object"}), |_| async { "ok" }).unwrap();
    /// let registry = Registry::from_servers([Server::new("fs", None, [t("read"), t("rm")])?]);
    /// let filter = ToolFilter::builder().deny("mcp__fs__rm").build()?;
    /// let view = FilteredRegistry::new(registry, filter);
    /// let ok = view.call_tool_by_name("read", json!({})).await?;
    /// assert_eq!(ok.first_text(), Some("ok"));
    /// assert!(view.call_tool_by_name("rm", json!({})).await.is_err());
    /// # Ok(())
    /// # }
    /// ```
    pub fn call_tool_by_name(&self, name: &str, arguments: Value) -> FilteredCallRequest<'_> {
        FilteredCallRequest(
            self.resolve(name)
                .map(|qualified| CallRequest::owned(&self.inner.registry, qualified, arguments)),
        )
    }

    /// [`Registry::handle_mcp_message`] through the filter: `tools/list` leaves out filtered
    /// tools and `tools/call` of one is answered with a JSON-RPC error (-32602) naming the
    /// tool and the filter. With a page size set on the registry, pages are cut from the
    /// filtered list: every page but the last is full.
    pub async fn handle_mcp_message(&self, server: &str, message: Value) -> Option<Value> {
        self.handle_mcp_message_with(server, message, CallOptions::default())
            .await
    }

    /// [`handle_mcp_message`](Self::handle_mcp_message) with per-call options.
    pub async fn handle_mcp_message_with(
        &self,
        server: &str,
        message: Value,
        options: CallOptions,
    ) -> Option<Value> {
        if self.inner.filter.is_allow_all() {
            return self
                .inner
                .registry
                .handle_mcp_message(server, message)
                .options(options)
                .await;
        }
        match message {
            Value::Array(batch) if !batch.is_empty() => {
                let mut replies = Vec::new();
                for message in batch {
                    if let Some(reply) = self.handle_one(server, message, options.clone()).await {
                        replies.push(reply);
                    }
                }
                (!replies.is_empty()).then_some(Value::Array(replies))
            }
            message => self.handle_one(server, message, options).await,
        }
    }

    async fn handle_one(
        &self,
        server: &str,
        message: Value,
        options: CallOptions,
    ) -> Option<Value> {
        let method = message
            .get("method")
            .and_then(Value::as_str)
            .map(str::to_owned);
        if method.as_deref() == Some("tools/call")
            && let Some(tool) = message.pointer("/params/name").and_then(Value::as_str)
            && self.inner.registry.is_enabled(server) == Some(true)
        {
            let decision = self.inner.filter.decide(server, tool);
            if !decision.is_allowed() {
                let id = RequestId::from_value(message.get("id")?);
                let error = ErrorObject::new(
                    ErrorCode::INVALID_PARAMS,
                    format!("tool {tool:?} of MCP server {server:?} is refused by the tool filter: {decision}"),
                )
                .with_data(json!({ "server": server, "tool": tool, "filter": decision.to_string() }));
                return Some(crate::dispatch::error_value(id, error));
            }
        }
        // `tools/list` is filtered by dispatch before it paginates, so pages stay full.
        let options = CallOptions {
            listing_filter: Some(self.inner.listing.clone()),
            ..options
        };
        self.inner
            .registry
            .handle_mcp_message(server, message)
            .options(options)
            .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_filtered_registry_is_send_and_sync() {
        fn is<T: Send + Sync + 'static>() {}
        is::<FilteredRegistry>();
    }

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
