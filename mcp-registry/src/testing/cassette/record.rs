//! [`RecordingTransport`]: any transport, with every message it carries written down.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use serde_json::Value;
use tokio::sync::mpsc;

use super::normalize::Normalizer;
use super::{CassetteFile, ClientMessage, FORMAT, Interaction, ServerMessage, recorded_params};
use crate::client::transport::{Inbound, Outbound, OutboundKind, Transport, TransportError};
use crate::protocol::{ProtocolVersion, RequestId};
use crate::sync::MutexExt;
use crate::tool::BoxFuture;

/// A transport that passes everything to the one it wraps and records it, for a
/// [`Cassette`](super::Cassette) to write: the file is written on
/// [`close`](Transport::close), or when the transport is dropped outside a panic.
pub struct RecordingTransport {
    inner: Box<dyn Transport>,
    recorder: Arc<Mutex<Recorder>>,
    forward: tokio::task::JoinHandle<()>,
}

impl std::fmt::Debug for RecordingTransport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RecordingTransport")
            .field("path", &self.recorder.lock_unpoisoned().path)
            .finish_non_exhaustive()
    }
}

/// What has been recorded, and which requests still wait for their replies.
struct Recorder {
    path: PathBuf,
    file: CassetteFile,
    normalizer: Normalizer,
    /// Requests without a reply yet: their id, their interaction, their progress token.
    open: Vec<(Value, usize, Option<Value>)>,
    /// Whether the file is up to date.
    saved: bool,
}

impl RecordingTransport {
    /// Wraps `inner` (which delivers to `incoming`), recording to `path`: the transport and
    /// receiver to use in their place. The signature of
    /// [`ClientBuilder::wrap_transport`](crate::client::ClientBuilder::wrap_transport)'s
    /// function. Needs a Tokio runtime.
    pub fn wrap(
        inner: Box<dyn Transport>,
        mut incoming: mpsc::UnboundedReceiver<Inbound>,
        path: PathBuf,
    ) -> (Box<dyn Transport>, mpsc::UnboundedReceiver<Inbound>) {
        let recorder = Arc::new(Mutex::new(Recorder {
            path,
            file: CassetteFile {
                format: FORMAT,
                interactions: Vec::new(),
            },
            normalizer: Normalizer::default(),
            open: Vec::new(),
            saved: false,
        }));
        let (tx, rx) = mpsc::unbounded_channel();
        let seen = Arc::clone(&recorder);
        let forward = tokio::spawn(async move {
            while let Some(inbound) = incoming.recv().await {
                if let Inbound::Message(message) = &inbound {
                    seen.lock_unpoisoned().server(message);
                }
                if tx.send(inbound).is_err() {
                    break;
                }
            }
        });
        let transport = RecordingTransport {
            inner,
            recorder,
            forward,
        };
        (Box::new(transport), rx)
    }

    /// Writes the cassette now.
    fn save(&self) {
        self.recorder.lock_unpoisoned().save();
    }
}

impl Recorder {
    fn push(&mut self, client: ClientMessage) -> usize {
        self.saved = false;
        self.file.interactions.push(Interaction {
            client,
            server: Vec::new(),
        });
        self.file.interactions.len() - 1
    }

    /// Records what the client sends.
    fn client(&mut self, outbound: &Outbound) {
        let message = &outbound.message;
        let params = message.get("params");
        match &outbound.kind {
            OutboundKind::Request { id, method, .. } => {
                let params = recorded_params(&mut self.normalizer, params);
                let token = params
                    .as_ref()
                    .and_then(|p| p.pointer("/_meta/progressToken"))
                    .cloned();
                let index = self.push(ClientMessage::Request {
                    method: method.clone(),
                    params,
                });
                self.open.push((Value::from(id.clone()), index, token));
            }
            OutboundKind::Notification { method } => {
                let params = params.map(|p| self.normalizer.value(p));
                self.push(ClientMessage::Notification {
                    method: method.clone(),
                    params,
                });
            }
            _ => {
                let mut answer = serde_json::Map::new();
                for key in ["result", "error"] {
                    if let Some(value) = message.get(key) {
                        answer.insert(key.to_owned(), self.normalizer.value(value));
                    }
                }
                let id = message.get("id").cloned().unwrap_or(Value::Null);
                self.push(ClientMessage::Response { id, answer });
            }
        }
    }

    /// Records what the server sends, in the interaction it answers.
    fn server(&mut self, message: &Value) {
        let params = message.get("params").map(|p| self.normalizer.value(p));
        let (recorded, reply_to) = match message.get("method").and_then(Value::as_str) {
            Some(method) => {
                let method = method.to_owned();
                match message.get("id") {
                    Some(id) => (
                        ServerMessage::Request {
                            id: id.clone(),
                            method,
                            params,
                        },
                        None,
                    ),
                    None => (ServerMessage::Notification { method, params }, None),
                }
            }
            None => {
                let id = message.get("id").cloned().unwrap_or(Value::Null);
                let reply = match (message.get("result"), message.get("error")) {
                    (Some(result), _) => ServerMessage::Success(self.normalizer.value(result)),
                    (None, Some(error)) => ServerMessage::Failure(self.normalizer.value(error)),
                    (None, None) => return,
                };
                (reply, Some(id))
            }
        };
        let index = match reply_to {
            Some(id) => match self.open.iter().position(|(open, ..)| *open == id) {
                Some(at) => self.open.remove(at).1,
                None => return,
            },
            None => self.answering(params_token(&recorded)),
        };
        if let Some(interaction) = self.file.interactions.get_mut(index) {
            interaction.server.push(recorded);
            self.saved = false;
        }
    }

    /// The interaction a server notification or request belongs to: the open request with
    /// its progress token, else the latest open request, else the latest interaction.
    fn answering(&self, token: Option<&Value>) -> usize {
        token
            .and_then(|t| self.open.iter().find(|(_, _, own)| own.as_ref() == Some(t)))
            .or(self.open.last())
            .map(|(_, index, _)| *index)
            .unwrap_or_else(|| self.file.interactions.len().saturating_sub(1))
    }

    fn save(&mut self) {
        if self.saved || self.file.interactions.is_empty() {
            return;
        }
        match self.file.save(&self.path) {
            Ok(()) => self.saved = true,
            Err(e) => {
                tracing::error!(path = %self.path.display(), error = %e, "cannot write the cassette")
            }
        }
    }
}

/// A progress notification's token.
fn params_token(message: &ServerMessage) -> Option<&Value> {
    match message {
        ServerMessage::Notification {
            params: Some(params),
            ..
        } => params.get("progressToken"),
        _ => None,
    }
}

impl Transport for RecordingTransport {
    fn send(&self, message: Outbound) -> BoxFuture<'_, Result<(), TransportError>> {
        self.recorder.lock_unpoisoned().client(&message);
        self.inner.send(message)
    }

    fn cancelled(&self, id: &RequestId) {
        self.inner.cancelled(id);
    }

    fn mirrors_tool_params(&self) -> bool {
        self.inner.mirrors_tool_params()
    }

    fn sends_cancelled_notifications(&self, version: Option<ProtocolVersion>) -> bool {
        self.inner.sends_cancelled_notifications(version)
    }

    fn connected(&self, version: Option<ProtocolVersion>) -> BoxFuture<'_, ()> {
        self.inner.connected(version)
    }

    fn close(&self) -> BoxFuture<'_, ()> {
        Box::pin(async move {
            self.inner.close().await;
            // What the server sent before it went is in the channel: let the forwarder take
            // it in (bounded: it ends once the inner transport's sender is gone).
            for _ in 0..64 {
                if self.forward.is_finished() {
                    break;
                }
                tokio::task::yield_now().await;
            }
            self.save();
        })
    }
}

impl Drop for RecordingTransport {
    fn drop(&mut self) {
        self.forward.abort();
        if !std::thread::panicking() {
            self.save();
        }
    }
}
