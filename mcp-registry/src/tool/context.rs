use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use crate::protocol::{
    Notification, ProgressNotificationParams, ProtocolVersion, RequestId, method,
};

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
        let map = self.map.get_or_insert_with(Default::default);
        Arc::make_mut(map).insert(TypeId::of::<T>(), Arc::new(value));
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

/// The names a call's context reports: one shared allocation per (server, tool), built with
/// the server, so a call clones one reference count instead of two names.
#[derive(Debug)]
pub(crate) struct CallNames {
    pub(crate) tool: Arc<str>,
    pub(crate) server: Arc<str>,
}

/// Everything a call's context is made of; the call path builds one per call.
pub(crate) struct CallScope {
    pub(crate) names: Arc<CallNames>,
    pub(crate) request_id: Option<RequestId>,
    pub(crate) meta: Option<Map<String, Value>>,
    pub(crate) protocol_version: Option<ProtocolVersion>,
    pub(crate) notifications: Option<NotificationSink>,
    pub(crate) cancellation: Option<CancellationToken>,
    pub(crate) registry_extensions: Extensions,
    pub(crate) call_extensions: Extensions,
}

/// What a tool knows about the call it is serving, and its way to talk back.
///
/// A tool asks for it by taking a `ToolContext` parameter; it never appears in the tool's
/// input schema. Cloning is cheap (reference counts only), and building one allocates nothing
/// unless the request carries `_meta`.
#[derive(Clone)]
pub struct ToolContext {
    names: Arc<CallNames>,
    request_id: Option<RequestId>,
    meta: Option<Arc<Map<String, Value>>>,
    protocol_version: Option<ProtocolVersion>,
    progress: Option<Arc<ProgressState>>,
    cancellation: Option<CancellationToken>,
    registry_extensions: Extensions,
    call_extensions: Extensions,
}

fn progress_token(meta: &Map<String, Value>) -> Option<&Value> {
    meta.get("progressToken")
        .filter(|t| t.is_string() || t.is_i64() || t.is_u64())
}

impl ToolContext {
    #[inline]
    pub(crate) fn from_scope(scope: CallScope) -> Self {
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
            meta: scope.meta.map(Arc::new),
            protocol_version: scope.protocol_version,
            progress,
            cancellation: scope.cancellation,
            registry_extensions: scope.registry_extensions,
            call_extensions: scope.call_extensions,
        }
    }

    /// A context for calling a tool function directly (in tests): no request, no progress
    /// token, never cancelled.
    pub fn detached(tool: &str, server: &str) -> Self {
        Self::from_scope(CallScope {
            names: Arc::new(CallNames {
                tool: tool.into(),
                server: server.into(),
            }),
            request_id: None,
            meta: None,
            protocol_version: None,
            notifications: None,
            cancellation: None,
            registry_extensions: Extensions::new(),
            call_extensions: Extensions::new(),
        })
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
        self.meta.as_deref()
    }

    /// The protocol version in play, when known.
    pub fn protocol_version(&self) -> Option<ProtocolVersion> {
        self.protocol_version
    }

    /// The `_meta.progressToken` of the request (a string or an integer), if any.
    pub fn progress_token(&self) -> Option<&Value> {
        progress_token(self.meta.as_deref()?)
    }

    /// A value the host attached (per call first, then per registry).
    pub fn get<T: Send + Sync + 'static>(&self) -> Option<&T> {
        self.call_extensions
            .get::<T>()
            .or_else(|| self.registry_extensions.get::<T>())
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
        let mut last = state.last.lock().unwrap_or_else(|e| e.into_inner());
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

    /// A handle that marks the call completed, kept by the call path while the context itself
    /// moves into the tool.
    pub(crate) fn completion(&self) -> Completion {
        Completion(self.progress.clone())
    }
}

/// Marks a call completed: later progress reports are refused.
pub(crate) struct Completion(Option<Arc<ProgressState>>);

impl Completion {
    /// A handle for a call without progress reporting.
    pub(crate) fn none() -> Self {
        Completion(None)
    }

    pub(crate) fn complete(&mut self) {
        if let Some(state) = self.0.take() {
            // Taken under the lock, so a report racing the completion is either sent before
            // the reply or refused.
            let _last = state.last.lock().unwrap_or_else(|e| e.into_inner());
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
