use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

use crate::protocol::{ProtocolVersion, RequestId};

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

pub(crate) struct CallScope {
    pub(crate) tool: Arc<str>,
    pub(crate) server: Arc<str>,
    pub(crate) request_id: Option<RequestId>,
    pub(crate) meta: Option<Map<String, Value>>,
    pub(crate) protocol_version: Option<ProtocolVersion>,
    pub(crate) notifications: Option<NotificationSink>,
    pub(crate) cancellation: Option<CancellationToken>,
    pub(crate) registry_extensions: Extensions,
    pub(crate) call_extensions: Extensions,
    pub(crate) last_progress: Mutex<Option<f64>>,
    pub(crate) completed: AtomicBool,
}

/// What a tool knows about the call it is serving, and its way to talk back.
///
/// A tool asks for it by taking a `ToolContext` parameter; it never appears in the tool's
/// input schema. Cloning is cheap.
#[derive(Clone)]
pub struct ToolContext {
    scope: Arc<CallScope>,
}

impl ToolContext {
    pub(crate) fn from_scope(scope: Arc<CallScope>) -> Self {
        ToolContext { scope }
    }

    /// A context for calling a tool function directly (in tests): no request, no progress
    /// token, never cancelled.
    pub fn detached(tool: &str, server: &str) -> Self {
        Self::from_scope(Arc::new(CallScope {
            tool: tool.into(),
            server: server.into(),
            request_id: None,
            meta: None,
            protocol_version: None,
            notifications: None,
            cancellation: None,
            registry_extensions: Extensions::new(),
            call_extensions: Extensions::new(),
            last_progress: Mutex::new(None),
            completed: AtomicBool::new(false),
        }))
    }

    /// The tool's name.
    pub fn tool_name(&self) -> &str {
        &self.scope.tool
    }

    /// The name of the server the tool belongs to.
    pub fn server_name(&self) -> &str {
        &self.scope.server
    }

    /// The JSON-RPC id of the request, when the call came in as a message.
    pub fn request_id(&self) -> Option<&RequestId> {
        self.scope.request_id.as_ref()
    }

    /// The request's `params._meta`, if it had one.
    pub fn meta(&self) -> Option<&Map<String, Value>> {
        self.scope.meta.as_ref()
    }

    /// The protocol version in play, when known.
    pub fn protocol_version(&self) -> Option<ProtocolVersion> {
        self.scope.protocol_version
    }

    /// The `_meta.progressToken` of the request (a string or an integer), if any.
    pub fn progress_token(&self) -> Option<&Value> {
        self.scope
            .meta
            .as_ref()?
            .get("progressToken")
            .filter(|t| t.is_string() || t.is_i64() || t.is_u64())
    }

    /// A value the host attached (per call first, then per registry).
    pub fn get<T: Send + Sync + 'static>(&self) -> Option<&T> {
        self.scope
            .call_extensions
            .get::<T>()
            .or_else(|| self.scope.registry_extensions.get::<T>())
    }

    /// Reports progress. Sends `notifications/progress` when the request carried a progress
    /// token and a notification sink is listening; otherwise does nothing and returns `Ok`.
    /// `progress` must increase from report to report, and nothing is sent once the call has
    /// completed.
    pub fn progress(
        &self,
        progress: f64,
        total: Option<f64>,
        message: Option<&str>,
    ) -> Result<(), ProgressError> {
        if self.scope.completed.load(Ordering::Acquire) {
            return Err(ProgressError::Completed);
        }
        let mut last = self
            .scope
            .last_progress
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        if let Some(previous) = *last
            && progress <= previous
        {
            return Err(ProgressError::NotIncreasing { progress, previous });
        }
        *last = Some(progress);
        let (Some(token), Some(sink)) = (self.progress_token(), &self.scope.notifications) else {
            return Ok(());
        };
        let mut params = json!({ "progressToken": token, "progress": progress });
        if let Some(total) = total {
            params["total"] = json!(total);
        }
        if let Some(message) = message {
            params["message"] = json!(message);
        }
        sink.send(json!({
            "jsonrpc": "2.0",
            "method": "notifications/progress",
            "params": params,
        }));
        Ok(())
    }

    /// Whether the caller has cancelled the call.
    pub fn is_cancelled(&self) -> bool {
        self.scope
            .cancellation
            .as_ref()
            .is_some_and(CancellationToken::is_cancelled)
    }

    /// Completes when the caller cancels the call (never, if the call cannot be cancelled).
    /// A tool need not watch this: a cancelled call's future is dropped regardless.
    pub async fn cancelled(&self) {
        match &self.scope.cancellation {
            Some(token) => token.cancelled().await,
            None => std::future::pending().await,
        }
    }

    pub(crate) fn complete(&self) {
        self.scope.completed.store(true, Ordering::Release);
    }
}

impl fmt::Debug for ToolContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolContext")
            .field("tool", &self.scope.tool)
            .field("server", &self.scope.server)
            .field("request_id", &self.scope.request_id)
            .field("protocol_version", &self.scope.protocol_version)
            .finish_non_exhaustive()
    }
}
