//! [`CallOptions`], what a caller sets for one request, and [`WithOptions`], a request to a
//! registry (a tool call, a prompt, a resource read, a message) to configure and `.await`.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use super::layer::Layer;
use crate::protocol::LoggingLevel;
use crate::protocol::meta::RequestMeta;
use crate::tool::{Caller, Extensions, InputHandler, NotificationSink};

/// What a caller sets for one request: a tool call, a prompt, a resource read, or a message
/// ([`WithOptions::options`] sets them all at once; each setter also exists on
/// [`WithOptions`] for that request alone).
///
/// ```
/// use std::time::Duration;
/// use mcp_registry::CallOptions;
/// let opts = CallOptions::new().timeout(Duration::from_secs(5));
/// ```
#[derive(Debug, Clone, Default)]
pub struct CallOptions {
    pub(crate) timeout: TimeoutSetting,
    pub(crate) notifications: Option<NotificationSink>,
    pub(crate) cancellation: Option<CancellationToken>,
    pub(crate) extensions: Extensions,
    pub(crate) meta: Option<Box<RequestMeta>>,
    /// The least severe level of the log messages sent to the notification sink.
    pub(crate) log_level: Option<LoggingLevel>,
    /// Who answers the tool's elicitation, sampling and roots requests.
    pub(crate) input: Option<Arc<dyn InputHandler>>,
    /// Who sends the request ([`Caller::Anonymous`] unless set).
    pub(crate) caller: Caller,
    /// What only some callers set, boxed: the options move on every call's path.
    pub(crate) view: Option<Box<CallerSettings>>,
}

/// The rarely set part of [`CallOptions`].
#[derive(Debug, Clone, Default)]
pub(crate) struct CallerSettings {
    /// Which tools `tools/list` shows (a filtered view's), judged before pagination.
    pub(crate) listing_filter: Option<ListingFilter>,
    /// Layers for this request only, inside the registry's own.
    pub(crate) layers: Vec<Arc<dyn Layer>>,
}

impl CallOptions {
    fn view_mut(&mut self) -> &mut CallerSettings {
        self.view.get_or_insert_with(Default::default)
    }

    /// The listing filter a caller's view set, if any.
    pub(crate) fn listing_filter(&self) -> Option<&ListingFilter> {
        self.view.as_ref()?.listing_filter.as_ref()
    }

    /// Whether the caller brings layers of its own.
    pub(crate) fn has_layers(&self) -> bool {
        self.view.as_ref().is_some_and(|c| !c.layers.is_empty())
    }

    /// The layers of this request only, taken out (none: empty).
    pub(crate) fn take_layers(&mut self) -> Vec<Arc<dyn Layer>> {
        self.view
            .as_mut()
            .map(|c| std::mem::take(&mut c.layers))
            .unwrap_or_default()
    }
}

/// A caller's own view of a registry (a [`FilteredRegistry`]'s): which tools `tools/list`
/// shows, and a layer gating its requests. Applied after the caller's options, so setting
/// them cannot remove it.
///
/// [`FilteredRegistry`]: crate::catalog::FilteredRegistry
#[derive(Clone)]
pub(crate) struct CallerView {
    pub(crate) listing: ListingFilter,
    pub(crate) gate: Arc<dyn Layer>,
}

impl CallerView {
    pub(crate) fn apply(&self, options: &mut CallOptions) {
        let view = options.view_mut();
        view.listing_filter = Some(self.listing.clone());
        view.layers.push(self.gate.clone());
    }
}

/// Decides whether `tools/list` shows a tool.
#[derive(Clone)]
pub(crate) struct ListingFilter(Arc<ShowsTool>);

/// `(server, tool) -> listed`.
type ShowsTool = dyn Fn(&str, &str) -> bool + Send + Sync;

impl ListingFilter {
    pub(crate) fn new(shows: impl Fn(&str, &str) -> bool + Send + Sync + 'static) -> Self {
        ListingFilter(Arc::new(shows))
    }

    /// Whether `tool` of `server` is listed.
    pub(crate) fn shows(&self, server: &str, tool: &str) -> bool {
        (self.0)(server, tool)
    }
}

impl std::fmt::Debug for ListingFilter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ListingFilter")
    }
}

#[derive(Debug, Clone, Copy, Default)]
pub(crate) enum TimeoutSetting {
    #[default]
    RegistryDefault,
    Limit(Duration),
    Unlimited,
}

impl CallOptions {
    /// Defaults: the registry's timeout, no notifications, not cancellable.
    pub fn new() -> Self {
        Self::default()
    }

    /// The time limit for this call (overrides the registry's default), counted from its
    /// first poll.
    ///
    /// It needs a Tokio runtime with time enabled: a call that waits outside one fails with
    /// [`CallError::NoTimer`](super::CallError::NoTimer) instead of running unlimited. Elsewhere, use
    /// [`without_timeout`](Self::without_timeout).
    pub fn timeout(mut self, limit: Duration) -> Self {
        self.timeout = TimeoutSetting::Limit(limit);
        self
    }

    /// No time limit for this call.
    pub fn without_timeout(mut self) -> Self {
        self.timeout = TimeoutSetting::Unlimited;
        self
    }

    /// Where the call's notifications (progress, …) go, in order, before its result.
    pub fn notifications(mut self, sink: NotificationSink) -> Self {
        self.notifications = Some(sink);
        self
    }

    /// A token whose cancellation stops the call: its future is dropped and the call ends
    /// with [`CallError::Cancelled`](super::CallError::Cancelled).
    pub fn cancellation(mut self, token: CancellationToken) -> Self {
        self.cancellation = Some(token);
        self
    }

    /// Who sends the request: what the gate decides on, what a task started by it belongs
    /// to, and what its function reads ([`Caller`] as a parameter, or
    /// [`ToolContext::caller`](crate::tool::ToolContext::caller)). The transports set it
    /// themselves; an in-process request is [`Caller::Anonymous`] unless set here.
    pub fn caller(mut self, caller: Caller) -> Self {
        self.caller = caller;
        self
    }

    /// A value the tool can read through [`ToolContext::get`](crate::tool::ToolContext::get) (ahead of registry values).
    pub fn extension<T: Send + Sync + 'static>(mut self, value: T) -> Self {
        self.extensions.insert(value);
        self
    }

    /// The request `_meta` the tool sees (e.g. `{"progressToken": 7}`).
    pub fn meta(mut self, meta: Map<String, Value>) -> Self {
        self.meta = Some(Box::new(meta.into()));
        self
    }

    /// Sends the tool's log messages ([`ToolContext::log`](crate::tool::ToolContext::log)) at `level` or above to the
    /// notification sink, as `notifications/message`. Without it, none are sent. (An MCP
    /// message's own level wins: a legacy session's `logging/setLevel`, a 2026-07-28
    /// request's `_meta`.)
    pub fn log_level(mut self, level: LoggingLevel) -> Self {
        self.log_level = Some(level);
        self
    }

    /// Answers the tool's requests for input ([`ToolContext::elicit`](crate::tool::ToolContext::elicit), `sample`, `roots`)
    /// with `handler`: a host showing forms to its user, or a scripted client in a test
    /// ([`InputCallbacks`](crate::tool::InputCallbacks)). Without one, an in-process tool
    /// that asks gets [`InputError::NoClient`](crate::tool::InputError::NoClient); a legacy
    /// session sets its own (requests to its client).
    pub fn input_handler(mut self, handler: impl InputHandler) -> Self {
        self.input = Some(Arc::new(handler));
        self
    }

    /// Adds `layer` around this request only: inside the registry's own layers, before its
    /// approval (a caller's own view, such as a [`FilteredRegistry`]'s tool filter).
    ///
    /// [`FilteredRegistry`]: crate::catalog::FilteredRegistry
    pub fn layer(mut self, layer: impl Layer) -> Self {
        self.view_mut().layers.push(Arc::new(layer));
        self
    }

    /// A shared handler, kept as it is.
    pub(crate) fn input_shared(mut self, handler: Arc<dyn InputHandler>) -> Self {
        self.input = Some(handler);
        self
    }

    /// Deprecated: [`input_handler`](Self::input_handler) takes an `Arc<dyn InputHandler>`.
    #[deprecated(
        since = "0.1.0",
        note = "`input_handler` takes an `Arc<dyn InputHandler>`"
    )]
    #[doc(hidden)]
    pub fn input_handler_shared(self, handler: Arc<dyn InputHandler>) -> Self {
        self.input_shared(handler)
    }
}

/// A request to configure and `.await`: a target (what to call) with its [`CallOptions`].
/// What [`Registry::call_tool_by_name`](crate::Registry::call_tool_by_name),
/// [`get_prompt_by_name`](crate::Registry::get_prompt_by_name),
/// [`read_resource`](crate::Registry::read_resource) and
/// [`handle_mcp_message`](crate::Registry::handle_mcp_message) return; each setter is
/// [`CallOptions`]'s, for this request.
#[must_use = "a request does nothing until it is awaited"]
pub struct WithOptions<T> {
    pub(crate) target: T,
    pub(crate) options: CallOptions,
}

impl<T> WithOptions<T> {
    pub(crate) fn new(target: T) -> Self {
        WithOptions {
            target,
            options: CallOptions::default(),
        }
    }

    /// The time limit for this request (overrides the item's and the registry's).
    pub fn timeout(mut self, limit: Duration) -> Self {
        self.options = self.options.timeout(limit);
        self
    }

    /// No time limit for this request.
    pub fn without_timeout(mut self) -> Self {
        self.options = self.options.without_timeout();
        self
    }

    /// Where the request's notifications (progress, log messages) go, in order, before
    /// its result.
    pub fn notifications(mut self, sink: NotificationSink) -> Self {
        self.options = self.options.notifications(sink);
        self
    }

    /// A token whose cancellation stops the request.
    pub fn cancellation(mut self, token: CancellationToken) -> Self {
        self.options = self.options.cancellation(token);
        self
    }

    /// [`CallOptions::caller`]: who sends the request.
    pub fn caller(mut self, caller: Caller) -> Self {
        self.options = self.options.caller(caller);
        self
    }

    /// A value the function can read through
    /// [`ToolContext::get`](crate::tool::ToolContext::get) (ahead of registry values).
    pub fn extension<V: Send + Sync + 'static>(mut self, value: V) -> Self {
        self.options = self.options.extension(value);
        self
    }

    /// The request `_meta` the function sees (e.g. `{"progressToken": 7}`).
    pub fn meta(mut self, meta: Map<String, Value>) -> Self {
        self.options = self.options.meta(meta);
        self
    }

    /// Sends the function's log messages at `level` or above to the notification sink.
    pub fn log_level(mut self, level: LoggingLevel) -> Self {
        self.options = self.options.log_level(level);
        self
    }

    /// Answers the function's requests for input with `handler` (see
    /// [`CallOptions::input_handler`]).
    pub fn input_handler(mut self, handler: impl InputHandler) -> Self {
        self.options = self.options.input_handler(handler);
        self
    }

    /// Every setting at once, replacing those made so far.
    pub fn options(mut self, options: CallOptions) -> Self {
        self.options = options;
        self
    }
}
