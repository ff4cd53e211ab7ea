//! [`FilteredRegistry`]: a registry view that enforces a [`ToolFilter`] on listing and on calling.

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use arc_swap::ArcSwapOption;
use serde_json::{Value, json};
use tokio::sync::watch;

use super::filter::{FilterDecision, Names, ToolFilter};
use super::pins::{Pins, Quarantine};
use super::qualify::{ToolCatalog, model_tool_name};
use crate::dispatch::MessageRequest;
use crate::protocol::{CallToolResult, ErrorCode, ErrorObject};
use crate::registry::layer::{Layer, Next, Request, RequestKind, Response};
use crate::registry::{
    CallError, CallFuture, CallOptions, CallRequest, Registry, RegistryChange, ToolDefinition,
    qualified_name, split_qualified,
};
use crate::registry::{CallerView, ListingFilter};
use crate::tool::BoxFuture;

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
    /// The tool's definition changed since it was pinned and the host has not approved the
    /// new one ([`Pins`]).
    #[error("{0}")]
    Quarantined(Box<Quarantine>),
    /// The registry could not produce a result.
    #[error(transparent)]
    Call(#[from] CallError),
}

impl FilteredCallError {
    /// Whether no callable tool was found by that name (refused, unknown, ambiguous).
    pub fn is_lookup_error(&self) -> bool {
        match self {
            FilteredCallError::Refused { .. } | FilteredCallError::Quarantined(_) => true,
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
    /// Why the pins hold the tool back, if they do.
    quarantine: Option<Box<Quarantine>>,
}

impl Entry {
    fn callable(&self) -> bool {
        self.enabled && self.decision.is_allowed() && self.quarantine.is_none()
    }
}

/// The filtered view of one registry generation, built once per change.
struct View {
    /// The registry's generation and the pins' quarantine generation it was built at.
    generation: (u64, u64),
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
    fn build(
        registry: &Registry,
        filter: &ToolFilter,
        pins: Option<&Pins>,
        generation: (u64, u64),
    ) -> Self {
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
                // Only a tool the model would be shown is pinned or checked.
                let quarantine = pins
                    .filter(|_| status.enabled && decision.is_allowed())
                    .and_then(|pins| pins.check(server.name(), tool.descriptor()).err());
                if status.enabled && decision.is_allowed() && quarantine.is_none() {
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
                        quarantine,
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
            let mut callable = entries().filter(|(_, e)| e.callable());
            return match (callable.next(), callable.next()) {
                (Some((q, _)), None) => Ok(q.clone()),
                (Some(_), Some(_)) => Err(CallError::AmbiguousTool {
                    name: name.to_owned(),
                    servers: entries()
                        .filter(|(_, e)| e.callable())
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
        if let Some(quarantine) = &entry.quarantine {
            return Err(FilteredCallError::Quarantined(quarantine.clone()));
        }
        Ok(qualified.to_owned())
    }
}

struct FilteredInner {
    registry: Registry,
    filter: ToolFilter,
    pins: Option<Pins>,
    /// The filter as dispatch applies it to messages (`tools/list`, and a layer on calls),
    /// built once; `None` when it allows everything.
    caller_view: Option<CallerView>,
    changes: watch::Receiver<RegistryChange>,
    view: ArcSwapOption<View>,
}

/// A [`Registry`] seen through a [`ToolFilter`]: filtered-out tools are neither listed nor
/// callable, whichever way they are named (plain, `mcp__<server>__<tool>`, or the
/// model-facing name). Cheap to clone; clones share the view, which is rebuilt once per
/// registry change, so lookups stay O(1).
///
/// ```
/// use mcp_registry::catalog::{FilteredCallError, FilteredRegistry, ToolFilter};
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
        Self::build(registry, filter, None)
    }

    /// `registry` seen through `filter` and `pins`: a tool whose definition changed since it
    /// was pinned is neither listed (in [`catalog`](Self::catalog),
    /// [`tool_definitions`](Self::tool_definitions), `export_tools` and `tools/list`) nor
    /// called (refused with [`FilteredCallError::Quarantined`], or a -32602 error through
    /// [`handle_mcp_message`](Self::handle_mcp_message)) until the host approves it. Each
    /// listing checks the definitions the registry holds then, and each call the definition
    /// it would run.
    pub fn with_pins(registry: Registry, filter: ToolFilter, pins: Pins) -> Self {
        Self::build(registry, filter, Some(pins))
    }

    fn build(registry: Registry, filter: ToolFilter, pins: Option<Pins>) -> Self {
        let changes = registry.subscribe();
        let judge = Judge {
            filter: filter.clone(),
            registry: registry.clone(),
            pins: pins.clone(),
        };
        let listing = {
            let judge = judge.clone();
            ListingFilter::new(move |server, tool| {
                judge.decide(server, tool).is_allowed() && judge.quarantine(server, tool).is_none()
            })
        };
        FilteredRegistry {
            inner: Arc::new(FilteredInner {
                registry,
                caller_view: (!filter.is_allow_all() || pins.is_some()).then(|| CallerView {
                    listing,
                    gate: Arc::new(FilterGate(judge)),
                }),
                filter,
                pins,
                changes,
                view: ArcSwapOption::empty(),
            }),
        }
    }

    /// The pins, if the view has them ([`with_pins`](Self::with_pins)).
    pub fn pins(&self) -> Option<&Pins> {
        self.inner.pins.as_ref()
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
        let generation = (
            self.inner.changes.borrow().generation,
            self.inner.pins.as_ref().map_or(0, Pins::generation),
        );
        if let Some(view) = self.inner.view.load_full()
            && view.generation == generation
        {
            return view;
        }
        let view = Arc::new(View::build(
            &self.inner.registry,
            &self.inner.filter,
            self.inner.pins.as_ref(),
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
        self.view()
            .resolve(name)
            .map_err(|e| self.quarantined(name, e))
    }

    /// `error`, or the quarantine of the tool `name` stands for when the pins hold back a
    /// tool its server no longer offers under the pinned definition (a mounted remote
    /// server leaves a quarantined tool out).
    fn quarantined(&self, name: &str, error: FilteredCallError) -> FilteredCallError {
        let (Some(pins), FilteredCallError::Call(CallError::UnknownTool { .. })) =
            (&self.inner.pins, &error)
        else {
            return error;
        };
        pins.quarantine_list()
            .into_iter()
            .find(|q| {
                q.tool == name
                    || qualified_name(&q.server, &q.tool) == name
                    || model_tool_name(&q.server, &q.tool) == name
            })
            .map_or(error, |q| FilteredCallError::Quarantined(Box::new(q)))
    }

    /// Calls a tool by plain, qualified or model-facing name, refusing filtered-out tools:
    /// the call to configure and `.await`, like [`Registry::call_tool_by_name`]'s. The filter
    /// judges names when the call is made, so its verdict holds even if the registry changes
    /// before the call runs.
    ///
    /// ```
    /// # use mcp_registry::{Registry, Server, Tool};
    /// # use mcp_registry::catalog::{FilteredRegistry, ToolFilter};
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
    /// filtered list: every page but the last is full. The filter is a layer of the
    /// request's stack (inside the registry's own layers, before its approval), kept
    /// whatever options the request is given.
    pub fn handle_mcp_message<'a>(
        &'a self,
        server: &'a str,
        message: Value,
    ) -> MessageRequest<'a, Value> {
        MessageRequest::viewed(&self.inner.registry, server, message, self.caller_view())
    }

    /// The filter as a caller's view of the registry; none when it allows everything.
    fn caller_view(&self) -> Option<CallerView> {
        self.inner.caller_view.clone()
    }
}

/// The one verdict on a tool of the registry, which the listing and the gate both ask, so
/// that they cannot disagree: the patterns, then the filter function on the tool's
/// definition. Both judge the tool a request resolved to (its own server and name), never
/// a name as sent.
#[derive(Clone)]
struct Judge {
    filter: ToolFilter,
    registry: Registry,
    pins: Option<Pins>,
}

impl Judge {
    /// The pins' verdict on the definition the registry holds for `tool` of `server` now.
    fn quarantine(&self, server: &str, tool: &str) -> Option<Box<Quarantine>> {
        let pins = self.pins.as_ref()?;
        let found = self
            .registry
            .server(server)?
            .tool(tool)?
            .descriptor()
            .clone();
        pins.check(server, &found).err()
    }

    fn decide(&self, server: &str, tool: &str) -> FilterDecision {
        let patterns = self.filter.decide(server, tool);
        if !patterns.is_allowed() || self.filter.keep.is_none() {
            return patterns;
        }
        match self.registry.server(server) {
            Some(own) => match own.tool(tool) {
                Some(found) => self.filter.kept(server, found.descriptor()),
                // Replaced meanwhile: nothing to run under this name.
                None => FilterDecision::Rejected,
            },
            None => FilterDecision::Rejected,
        }
    }
}

/// The tool filter as a layer: a call of a filtered tool is rejected with -32602 naming the
/// tool and the filter (prompts, resources and completions pass: it filters tools).
struct FilterGate(Judge);

impl Layer for FilterGate {
    fn call<'a>(&'a self, request: Request, next: Next) -> BoxFuture<'a, Response> {
        if request.kind() == RequestKind::Tool {
            let (server, tool) = (request.server(), request.name());
            let decision = self.0.decide(server, tool);
            if !decision.is_allowed() {
                let error = ErrorObject::new(
                    ErrorCode::INVALID_PARAMS,
                    format!("tool {tool:?} of MCP server {server:?} is refused by the tool filter: {decision}"),
                )
                .with_data(json!({ "server": server, "tool": tool, "filter": decision.to_string() }));
                return Box::pin(std::future::ready(request.reject(error)));
            }
            if let Some(q) = self.0.quarantine(server, tool) {
                let error = ErrorObject::new(ErrorCode::INVALID_PARAMS, q.to_string())
                    .with_data(json!({ "server": server, "tool": tool, "quarantined": q.changed }));
                return Box::pin(std::future::ready(request.reject(error)));
            }
        }
        next.run(request)
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
}
