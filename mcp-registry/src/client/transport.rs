//! What a [`Client`](super::Client) sends messages over: the [`Transport`] trait, and the
//! in-process transport onto a [`Registry`] server.

use std::fmt;
use std::sync::Mutex;
use std::time::Duration;

use serde_json::Value;
use tokio::sync::mpsc;

use crate::dispatch::ServerSession;
use crate::protocol::{ProtocolVersion, RequestId};
use crate::registry::{CallOptions, Registry};
use crate::sync::MutexExt;
use crate::tool::{BoxFuture, NotificationSink};

/// The longest message a client accepts from a server by default (a stdio line, an HTTP
/// JSON body, an SSE line or event): 16 MiB, the server's own stdio limit.
pub const DEFAULT_MAX_MESSAGE_BYTES: usize = 16 * 1024 * 1024;

/// A message for the transport to deliver.
#[derive(Debug, Clone)]
pub struct Outbound {
    /// The JSON-RPC message.
    pub message: Value,
    /// What it is.
    pub kind: OutboundKind,
    /// The protocol version agreed on, once there is one (HTTP sends it as
    /// `MCP-Protocol-Version`).
    pub protocol_version: Option<ProtocolVersion>,
}

/// What an [`Outbound`] message is, with what a transport mirrors into its framing.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum OutboundKind {
    /// A request, answered by a message with the same id.
    Request {
        /// Its id.
        id: RequestId,
        /// Its method (HTTP: `Mcp-Method`).
        method: String,
        /// `params.name` or `params.uri` (HTTP: `Mcp-Name`).
        name: Option<String>,
        /// Tool parameters to mirror (HTTP: `Mcp-Param-{name}: {value}`, values encoded).
        params: Vec<(String, String)>,
    },
    /// A notification.
    Notification {
        /// Its method.
        method: String,
    },
    /// The reply to a request the server sent.
    Response,
}

/// Something a transport receives, for the client to handle.
#[derive(Debug)]
#[non_exhaustive]
pub enum Inbound {
    /// A JSON-RPC message from the server.
    Message(Value),
    /// The connection is gone, and why.
    Closed(String),
    /// Request `id` can get no reply (its reply was too large, or its HTTP request failed);
    /// the connection lives on.
    Failed {
        /// The request.
        id: RequestId,
        /// Why.
        error: TransportError,
    },
}

/// A transport failure.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TransportError {
    /// The connection is gone.
    #[error("the connection is closed: {0}")]
    Closed(String),
    /// The server no longer knows the session (HTTP 404 on a legacy session): initialize
    /// again.
    #[error("the server no longer knows the session")]
    SessionExpired,
    /// Authorization with the server's authorization server failed (feature `client-auth`).
    #[cfg(feature = "client-auth")]
    #[error("authorization: {0}")]
    Auth(#[from] super::auth::AuthError),
    /// A message from the server was longer than the client accepts; it was dropped unread.
    #[error(
        "the server sent {what} longer than the client's limit of {limit} bytes \
         (raise it with ClientBuilder::max_message_bytes)"
    )]
    TooLarge {
        /// What was too long (`a line`, `a JSON body`, `an SSE event`).
        what: &'static str,
        /// The limit, in bytes.
        limit: usize,
    },
    /// The server answered an HTTP request with an error status and no JSON-RPC reply.
    #[error("HTTP {status} from the MCP server: {body}")]
    Status {
        /// The status code.
        status: u16,
        /// The server's `Retry-After`, in seconds form.
        retry_after: Option<Duration>,
        /// The start of the response body.
        body: String,
    },
    /// The server redirected to another origin, which the client does not follow.
    #[error(
        "the MCP server redirected to another origin ({location}); \
         allow it with ClientBuilder::redirects_across_origins"
    )]
    Redirected {
        /// Where to.
        location: String,
    },
    /// Anything else, described.
    #[error("{0}")]
    Other(String),
}

/// Moves a client's messages to a server and back. Incoming messages go to the
/// [`Inbound`] sender the transport was built with.
pub trait Transport: Send + Sync + 'static {
    /// Delivers one message. Returns once it is handed over (for HTTP, once the response
    /// headers are in; the body is read on).
    fn send(&self, message: Outbound) -> BoxFuture<'_, Result<(), TransportError>>;

    /// The client gave up on request `id` (a timeout or a cancellation): a transport that
    /// scopes a stream to the request closes it.
    fn cancelled(&self, id: &RequestId) {
        let _ = id;
    }

    /// Whether tools with invalid `x-mcp-header` annotations are left out of listings and
    /// annotated parameters mirrored into headers (Streamable HTTP).
    fn mirrors_tool_params(&self) -> bool {
        false
    }

    /// Whether the protocol's own `notifications/cancelled` is how a request is cancelled
    /// (stdio, in-process; a 2026-07-28 HTTP request is cancelled by closing its stream).
    fn sends_cancelled_notifications(&self, version: Option<ProtocolVersion>) -> bool {
        let _ = version;
        true
    }

    /// The handshake is done, on `version`: a transport may open what the version offers
    /// (a legacy Streamable HTTP session's standalone stream, for requests the server sends
    /// on its own).
    fn connected(&self, version: Option<ProtocolVersion>) -> BoxFuture<'_, ()> {
        let _ = version;
        Box::pin(async {})
    }

    /// Closes the connection, ending what it started (a child process is reaped).
    fn close(&self) -> BoxFuture<'_, ()>;
}

/// The in-process transport: messages go straight to a [`ServerSession`] of a registry
/// server as JSON values; no bytes, no task per request beyond the call itself.
pub struct InProcessTransport {
    session: ServerSession,
    incoming: mpsc::UnboundedSender<Inbound>,
    forward: Mutex<Option<tokio::task::JoinHandle<()>>>,
}

impl fmt::Debug for InProcessTransport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("InProcessTransport")
            .field("server", &self.session.server_name())
            .finish()
    }
}

impl InProcessTransport {
    /// A transport onto `server` of `registry`, delivering to `incoming`. Needs a Tokio
    /// runtime.
    pub fn new(registry: Registry, server: &str, incoming: mpsc::UnboundedSender<Inbound>) -> Self {
        let (session, mut outgoing) = ServerSession::new(registry, server);
        let tx = incoming.clone();
        let forward = tokio::spawn(async move {
            while let Some(message) = outgoing.recv().await {
                if tx.send(Inbound::Message(message)).is_err() {
                    break;
                }
            }
        });
        InProcessTransport {
            session,
            incoming,
            forward: Mutex::new(Some(forward)),
        }
    }
}

impl Transport for InProcessTransport {
    fn send(&self, message: Outbound) -> BoxFuture<'_, Result<(), TransportError>> {
        Box::pin(async move {
            let session = self.session.clone();
            let tx = self.incoming.clone();
            // A call's notifications go straight to the client, before its reply.
            let notes = tx.clone();
            let options = CallOptions::new().notifications(NotificationSink::new(move |n| {
                let _ = notes.send(Inbound::Message(n));
            }));
            match message.kind {
                OutboundKind::Request { .. } => {
                    tokio::spawn(async move {
                        if let Some(reply) = session.handle(message.message).options(options).await
                        {
                            let _ = tx.send(Inbound::Message(reply));
                        }
                    });
                }
                _ => {
                    session.handle(message.message).options(options).await;
                }
            }
            Ok(())
        })
    }

    fn close(&self) -> BoxFuture<'_, ()> {
        Box::pin(async move {
            self.session.shutdown();
            if let Some(forward) = self.forward.lock_unpoisoned().take() {
                forward.abort();
            }
        })
    }
}

impl Drop for InProcessTransport {
    fn drop(&mut self) {
        if let Some(forward) = self
            .forward
            .get_mut()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take()
        {
            forward.abort();
        }
    }
}
