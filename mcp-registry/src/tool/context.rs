use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use serde::Deserialize as _;

use super::caller::Caller;
use super::input::{ClientCapability, InputError, InputHandler};
use super::round::Round;
use crate::protocol::meta::RequestMeta;
use crate::protocol::{
    ClientCapabilities, LoggingLevel, LoggingMessageParams, META_CLIENT_CAPABILITIES, Notification,
    ProgressNotificationParams, ProtocolVersion, RequestId, method,
};
use crate::sync::MutexExt;

/// Typed values a host attaches to a registry or to one call, read by tools through
/// [`ToolContext::get`]. Cloning is cheap (the map is shared).
///
/// ```
/// use mcp_registry::Extensions;
/// struct DbPool(&'static str);
/// let ext = Extensions::new().with(DbPool("postgres://"));
/// assert_eq!(ext.get::<DbPool>().unwrap().0, "postgres://");
/// assert!(ext.get::<String>().is_none());
/// ```
#[derive(Clone, Default)]
pub struct Extensions {
    map: Option<Arc<HashMap<TypeId, Arc<dyn Any + Send + Sync>>>>,
}

impl Extensions {
    /// No values.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds (or replaces) the value of type `T`.
    pub fn insert<T: Send + Sync + 'static>(&mut self, value: T) {
        self.insert_shared(Arc::new(value));
    }

    /// [`insert`](Self::insert) with a value already shared.
    pub fn insert_shared<T: Send + Sync + 'static>(&mut self, value: Arc<T>) {
        let map = self.map.get_or_insert_with(Default::default);
        Arc::make_mut(map).insert(TypeId::of::<T>(), value);
    }

    /// Builder form of [`insert`](Self::insert).
    pub fn with<T: Send + Sync + 'static>(mut self, value: T) -> Self {
        self.insert(value);
        self
    }

    /// The value of type `T`, if attached.
    pub fn get<T: Send + Sync + 'static>(&self) -> Option<&T> {
        self.map
            .as_ref()?
            .get(&TypeId::of::<T>())
            .and_then(|v| v.downcast_ref::<T>())
    }

    /// The value of type `T`, shared, if attached.
    pub(crate) fn get_shared<T: Send + Sync + 'static>(&self) -> Option<Arc<T>> {
        let value = self.map.as_ref()?.get(&TypeId::of::<T>())?.clone();
        value.downcast::<T>().ok()
    }

    /// Whether no value is attached.
    pub fn is_empty(&self) -> bool {
        self.map.as_ref().is_none_or(|m| m.is_empty())
    }
}

impl fmt::Debug for Extensions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Extensions")
            .field("len", &self.map.as_ref().map_or(0, |m| m.len()))
            .finish()
    }
}

/// Receives the notifications a call produces (`notifications/progress`, …), in order,
/// before the call's reply is returned. Each notification is a complete JSON-RPC message.
///
/// ```
/// use mcp_registry::NotificationSink;
/// let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
/// let sink = NotificationSink::from_channel(tx);
/// sink.send(serde_json::json!({"jsonrpc": "2.0", "method": "notifications/progress"}));
/// assert!(rx.try_recv().is_ok());
/// ```
#[derive(Clone)]
pub struct NotificationSink(Arc<dyn Fn(Value) + Send + Sync>);

impl NotificationSink {
    /// A sink calling `f` for each notification.
    pub fn new(f: impl Fn(Value) + Send + Sync + 'static) -> Self {
        NotificationSink(Arc::new(f))
    }

    /// A sink feeding an unbounded channel (a closed channel drops notifications).
    pub fn from_channel(tx: tokio::sync::mpsc::UnboundedSender<Value>) -> Self {
        Self::new(move |v| {
            let _ = tx.send(v);
        })
    }

    /// Delivers one notification.
    pub fn send(&self, notification: Value) {
        (self.0)(notification)
    }
}

impl fmt::Debug for NotificationSink {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("NotificationSink")
    }
}

/// Why a progress report was not sent.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ProgressError {
    /// Progress must increase with each report.
    #[error("progress must increase: {progress} is not greater than the previous {previous}")]
    NotIncreasing {
        /// The refused value.
        progress: f64,
        /// The last value sent.
        previous: f64,
    },
    /// The call has already completed; nothing is sent after its reply.
    #[error("the call has completed; progress is no longer reported")]
    Completed,
}

/// Progress bookkeeping of one call whose request carried a progress token and whose caller
/// listens for notifications: shared by the context's clones, marked completed after the call.
pub(crate) struct ProgressState {
    token: Value,
    sink: NotificationSink,
    last: Mutex<Option<f64>>,
    completed: AtomicBool,
}

/// The names a call's context reports, and its server's host state: one shared allocation per
/// (server, tool), built with the server, so a call clones one reference count instead of
/// two names and a map.
#[derive(Debug)]
pub(crate) struct CallNames {
    pub(crate) tool: Arc<str>,
    pub(crate) server: Arc<str>,
    /// The server's [`extension`](crate::ServerBuilder::extension)s.
    pub(crate) state: Extensions,
}

/// Everything a call's context is made of; the call path builds one per call.
pub(crate) struct CallScope {
    pub(crate) names: Arc<CallNames>,
    pub(crate) request_id: Option<RequestId>,
    pub(crate) meta: Option<Box<RequestMeta>>,
    pub(crate) protocol_version: Option<ProtocolVersion>,
    pub(crate) notifications: Option<NotificationSink>,
    pub(crate) cancellation: Option<CancellationToken>,
    pub(crate) registry_extensions: Extensions,
    pub(crate) call_extensions: Extensions,
    /// Who sent the request.
    pub(crate) caller: Caller,
    /// The least severe level the client receives `notifications/message` at, when it
    /// asked for any.
    pub(crate) log_level: Option<LoggingLevel>,
    /// Who answers the tool's requests for input, when anyone can.
    pub(crate) input: Option<Arc<dyn InputHandler>>,
    /// 2026-07-28 without an input handler: the run's asks and the answers the request
    /// carries.
    pub(crate) round: Option<Arc<Round>>,
    /// Whether scalars sent as strings are read as the schema's number, integer or boolean.
    pub(crate) lenient_scalars: bool,
}

/// Where a call's log messages go: the client asked for this level and listens.
#[derive(Clone)]
pub(super) struct ClientLog {
    level: LoggingLevel,
    sink: NotificationSink,
}

/// What a tool knows about the call it is serving, and its way to talk back.
///
/// A tool asks for it by taking a `ToolContext` parameter; it never appears in the tool's
/// input schema. Cloning is cheap (reference counts only), and building one allocates nothing
/// unless the request carries `_meta`.
#[derive(Clone)]
pub struct ToolContext {
    pub(super) names: Arc<CallNames>,
    pub(super) request_id: Option<RequestId>,
    pub(super) meta: Option<Arc<RequestMeta>>,
    pub(super) protocol_version: Option<ProtocolVersion>,
    pub(super) progress: Option<Arc<ProgressState>>,
    pub(super) cancellation: Option<CancellationToken>,
    pub(super) registry_extensions: Extensions,
    pub(super) call_extensions: Extensions,
    /// Who sent the request.
    pub(super) caller: Caller,
    /// Set only when the client asked for log messages and listens (no cost otherwise).
    pub(super) client_log: Option<ClientLog>,
    /// Who answers elicitation, sampling and roots requests (none: the tool gets
    /// [`InputError::NoClient`]).
    pub(super) input: Option<Arc<dyn InputHandler>>,
    /// 2026-07-28 without an input handler: asks end the run with `input_required`.
    pub(super) round: Option<Arc<Round>>,
    /// The key of this context's asks in an `input_required` result.
    pub(super) input_key: Option<Arc<str>>,
    /// [`RegistryBuilder::lenient_scalars`](crate::RegistryBuilder::lenient_scalars).
    pub(super) lenient_scalars: bool,
}

fn progress_token(meta: &RequestMeta) -> Option<&Value> {
    meta.get("progressToken")
        .filter(|t| t.is_string() || t.is_i64() || t.is_u64())
}

impl ToolContext {
    // Inlined, so that the scope is written in place as the context.
    #[inline(always)]
    pub(crate) fn from_scope(scope: CallScope) -> Self {
        let client_log = match (scope.log_level, &scope.notifications) {
            (Some(level), Some(sink)) => Some(ClientLog {
                level,
                sink: sink.clone(),
            }),
            _ => None,
        };
        let progress = match (&scope.meta, scope.notifications) {
            (Some(meta), Some(sink)) => progress_token(meta).map(|token| {
                Arc::new(ProgressState {
                    token: token.clone(),
                    sink,
                    last: Mutex::new(None),
                    completed: AtomicBool::new(false),
                })
            }),
            _ => None,
        };
        ToolContext {
            names: scope.names,
            request_id: scope.request_id,
            meta: scope.meta.map(Arc::from),
            protocol_version: scope.protocol_version,
            progress,
            cancellation: scope.cancellation,
            registry_extensions: scope.registry_extensions,
            call_extensions: scope.call_extensions,
            caller: scope.caller,
            client_log,
            input: scope.input,
            round: scope.round,
            input_key: None,
            lenient_scalars: scope.lenient_scalars,
        }
    }

    /// Whether this call reads scalars sent as strings as the schema's number, integer or
    /// boolean.
    pub(crate) fn lenient_scalars(&self) -> bool {
        self.lenient_scalars
    }

    /// A context for calling a tool function directly (in tests): no request, no progress
    /// token, never cancelled.
    pub fn detached(tool: &str, server: &str) -> Self {
        Self::from_scope(CallScope {
            names: Arc::new(CallNames {
                tool: tool.into(),
                server: server.into(),
                state: Extensions::new(),
            }),
            request_id: None,
            meta: None,
            protocol_version: None,
            notifications: None,
            cancellation: None,
            registry_extensions: Extensions::new(),
            call_extensions: Extensions::new(),
            caller: Caller::Anonymous,
            log_level: None,
            input: None,
            round: None,
            lenient_scalars: true,
        })
    }

    /// This context as `caller`'s: for calling a function directly (in tests) as an
    /// authenticated principal or a session would.
    pub fn with_caller(mut self, caller: Caller) -> Self {
        self.caller = caller;
        self
    }

    /// Who sent the request: the authenticated principal, the legacy session, or
    /// [`Caller::Anonymous`].
    pub fn caller(&self) -> &Caller {
        &self.caller
    }

    /// This context with `handler` answering its requests for input: for calling a tool
    /// function directly in a test, with a scripted client.
    pub fn with_input_handler(mut self, handler: impl InputHandler) -> Self {
        self.input = Some(Arc::new(handler));
        self
    }

    pub(crate) fn names(&self) -> &Arc<CallNames> {
        &self.names
    }

    pub(crate) fn cancellation(&self) -> Option<&CancellationToken> {
        self.cancellation.as_ref()
    }

    /// The tool's name.
    pub fn tool_name(&self) -> &str {
        &self.names.tool
    }

    /// The name of the server the tool belongs to.
    pub fn server_name(&self) -> &str {
        &self.names.server
    }

    /// The JSON-RPC id of the request, when the call came in as a message.
    pub fn request_id(&self) -> Option<&RequestId> {
        self.request_id.as_ref()
    }

    /// The request's `params._meta`, if it had one.
    pub fn meta(&self) -> Option<&Map<String, Value>> {
        self.meta.as_deref().map(RequestMeta::as_map)
    }

    /// The protocol version in play, when known.
    pub fn protocol_version(&self) -> Option<ProtocolVersion> {
        self.protocol_version
    }

    /// The `_meta.progressToken` of the request (a string or an integer), if any.
    pub fn progress_token(&self) -> Option<&Value> {
        progress_token(self.meta.as_deref()?)
    }

    /// A value the host attached (per call first, then per server, then per registry).
    pub fn get<T: Send + Sync + 'static>(&self) -> Option<&T> {
        self.call_extensions
            .get::<T>()
            .or_else(|| self.names.state.get::<T>())
            .or_else(|| self.registry_extensions.get::<T>())
    }

    /// The host state of type `T`, shared (per call, per server, then per registry): what a
    /// [`State`](super::State) parameter gets.
    pub(crate) fn state<T: Send + Sync + 'static>(&self) -> Option<Arc<T>> {
        self.call_extensions
            .get_shared::<T>()
            .or_else(|| self.names.state.get_shared::<T>())
            .or_else(|| self.registry_extensions.get_shared::<T>())
    }

    /// Reports progress. When the request carried a progress token and the caller listens
    /// for notifications, sends `notifications/progress`; `progress` must then increase from
    /// report to report, and nothing is sent once the call has completed. Otherwise this does
    /// nothing and returns `Ok`.
    pub fn progress(
        &self,
        progress: f64,
        total: Option<f64>,
        message: Option<&str>,
    ) -> Result<(), ProgressError> {
        let Some(state) = &self.progress else {
            return Ok(());
        };
        if state.completed.load(Ordering::Acquire) {
            return Err(ProgressError::Completed);
        }
        // Held while sending, so concurrent reports leave in increasing order.
        let mut last = state.last.lock_unpoisoned();
        if let Some(previous) = *last
            && progress <= previous
        {
            return Err(ProgressError::NotIncreasing { progress, previous });
        }
        *last = Some(progress);
        let notification = Notification::new(
            method::PROGRESS,
            Some(ProgressNotificationParams {
                progress_token: state.token.clone(),
                progress,
                total,
                message: message.map(str::to_owned),
            }),
        );
        // Plain data with string keys: serializing it cannot fail.
        state
            .sink
            .send(serde_json::to_value(notification).unwrap_or_default());
        Ok(())
    }

    /// Logs `data` (a string or any JSON value) at `level`, from the logger named `logger`.
    ///
    /// It always goes to [`tracing`] (target `mcp_registry::tool`, with the tool and server
    /// names). It is also sent to the client as `notifications/message` when the client asked
    /// for log messages at `level` or a less severe one: in a legacy session with
    /// `logging/setLevel`, in a 2026-07-28 request with `_meta`'s
    /// `io.modelcontextprotocol/logLevel` (nothing is sent for a request without it), or
    /// in-process with [`CallOptions::log_level`](crate::CallOptions::log_level). It goes
    /// through the call's notification sink, in order with its progress, before its reply.
    ///
    /// ```
    /// use mcp_registry::{CallOptions, NotificationSink, Registry, Server, Tool, ToolContext};
    /// use mcp_registry::protocol::LoggingLevel;
    /// use std::sync::{Arc, Mutex};
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// type Args = serde_json::Map<String, serde_json::Value>;
    /// let tool = Tool::builder("sync").typed(|ctx: ToolContext, _: Args| async move {
    ///     ctx.log(LoggingLevel::Debug, Some("db"), "connecting");
    ///     ctx.log(LoggingLevel::Warning, Some("db"), serde_json::json!({"slow_ms": 900}));
    ///     "synced"
    /// }).unwrap();
    /// let registry = Registry::from_servers([Server::new("s", None, [tool]).unwrap()]);
    /// let seen = Arc::new(Mutex::new(Vec::new()));
    /// let sink = { let seen = seen.clone(); NotificationSink::new(move |n| seen.lock().unwrap().push(n)) };
    /// registry
    ///     .call_tool_by_name("sync", serde_json::json!({}))
    ///     .options(CallOptions::new().notifications(sink).log_level(LoggingLevel::Info))
    ///     .await
    ///     .unwrap();
    /// let seen = seen.lock().unwrap();
    /// assert_eq!(seen.len(), 1, "debug is below the level asked for");
    /// assert_eq!(seen[0]["method"], "notifications/message");
    /// assert_eq!(seen[0]["params"], serde_json::json!({"level": "warning", "logger": "db", "data": {"slow_ms": 900}}));
    /// # }
    /// ```
    pub fn log(&self, level: LoggingLevel, logger: Option<&str>, data: impl Into<Value>) {
        let data = data.into();
        self.trace(level, logger, &data);
        let Some(client) = &self.client_log else {
            return;
        };
        if level < client.level {
            return;
        }
        let notification = Notification::new(
            method::LOGGING_MESSAGE,
            Some(LoggingMessageParams {
                level,
                logger: logger.map(str::to_owned),
                data,
            }),
        );
        // Plain data with string keys: serializing it cannot fail.
        client
            .sink
            .send(serde_json::to_value(notification).unwrap_or_default());
    }

    /// The least severe level the client receives log messages at, when it asked for any
    /// (see [`log`](Self::log)): a tool can skip building messages no one reads.
    pub fn log_level(&self) -> Option<LoggingLevel> {
        self.client_log.as_ref().map(|c| c.level)
    }

    /// A tool's log message as a `tracing` event.
    fn trace(&self, level: LoggingLevel, logger: Option<&str>, data: &Value) {
        let (tool, server) = (&*self.names.tool, &*self.names.server);
        let logger = logger.unwrap_or_default();
        match level {
            LoggingLevel::Debug => {
                tracing::debug!(target: "mcp_registry::tool", tool, server, logger, %data)
            }
            LoggingLevel::Info | LoggingLevel::Notice => {
                tracing::info!(target: "mcp_registry::tool", tool, server, logger, %level, %data)
            }
            LoggingLevel::Warning => {
                tracing::warn!(target: "mcp_registry::tool", tool, server, logger, %data)
            }
            _ => tracing::error!(target: "mcp_registry::tool", tool, server, logger, %level, %data),
        }
    }

    /// Whether the caller has cancelled the call.
    pub fn is_cancelled(&self) -> bool {
        self.cancellation
            .as_ref()
            .is_some_and(CancellationToken::is_cancelled)
    }

    /// Completes when the caller cancels the call (never, if the call cannot be cancelled).
    /// A tool need not watch this: a cancelled call's future is dropped regardless.
    pub async fn cancelled(&self) {
        match &self.cancellation {
            Some(token) => token.cancelled().await,
            None => std::future::pending().await,
        }
    }

    /// The capabilities of the client this call can ask for input: its input handler's
    /// (a legacy session's client, or an in-process host's), else those a 2026-07-28
    /// request declares in `_meta`; `None` when neither is known.
    pub fn client_capabilities(&self) -> Option<ClientCapabilities> {
        if let Some(handler) = &self.input {
            return Some(handler.capabilities());
        }
        let declared = self.meta.as_deref()?.get(META_CLIENT_CAPABILITIES)?;
        Some(ClientCapabilities::deserialize(declared).unwrap_or_default())
    }

    /// `Ok` when the client declared `capability`; otherwise
    /// [`InputError::NotSupported`], which a tool returns with `?` to refuse the call: a
    /// 2026-07-28 client then gets -32021 (MissingRequiredClientCapability).
    pub fn require_client_capability(
        &self,
        capability: ClientCapability,
    ) -> Result<(), InputError> {
        let declared = self
            .client_capabilities()
            .is_some_and(|c| capability.declared_in(&c));
        if declared {
            Ok(())
        } else {
            Err(InputError::NotSupported {
                capability: capability.name(),
                method: capability.method(),
            })
        }
    }

    /// A handle that marks the call completed, kept by the call path while the context itself
    /// moves into the tool.
    pub(crate) fn completion(&self) -> Completion {
        Completion(self.progress.clone())
    }
}

/// Marks a call completed: later progress reports are refused.
pub(crate) struct Completion(Option<Arc<ProgressState>>);

impl Completion {
    /// Nothing to mark: a call without progress reports.
    pub(crate) fn none() -> Self {
        Completion(None)
    }

    pub(crate) fn complete(&mut self) {
        if let Some(state) = self.0.take() {
            // Taken under the lock, so a report racing the completion is either sent before
            // the reply or refused.
            let _last = state.last.lock_unpoisoned();
            state.completed.store(true, Ordering::Release);
        }
    }
}

impl fmt::Debug for ToolContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolContext")
            .field("tool", &self.names.tool)
            .field("server", &self.names.server)
            .field("request_id", &self.request_id)
            .field("protocol_version", &self.protocol_version)
            .finish_non_exhaustive()
    }
}
