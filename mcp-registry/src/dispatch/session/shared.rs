//! A session's negotiated state taken out ([`SessionSnapshot`]) and put back, so that
//! another process (a replica of the same server) can serve the session: what a shared
//! session store keeps.

use std::collections::HashSet;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::{Lifecycle, ServerSession};
use crate::dispatch::Outgoing;
#[cfg(feature = "http")]
use crate::protocol::decode::IncomingResponse;
use crate::protocol::{ClientCapabilities, LoggingLevel, ProtocolVersion};
use crate::registry::Registry;

/// What an initialized legacy session negotiated, as another process needs it to serve the
/// session: [`ServerSession::snapshot`] takes it, [`ServerSession::restore`] rebuilds a
/// session from it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct SessionSnapshot {
    /// The server the session talks to.
    pub server: String,
    /// The protocol version `initialize` negotiated (e.g. `2025-11-25`).
    pub protocol_version: String,
    /// Whether the client sent `notifications/initialized`.
    pub ready: bool,
    /// What the client declared in `initialize`.
    pub client_capabilities: ClientCapabilities,
    /// What `logging/setLevel` asked for.
    pub log_level: Option<LoggingLevel>,
    /// The URIs `resources/subscribe`d to, sorted.
    pub subscriptions: Vec<String>,
}

impl ServerSession {
    /// The session's negotiated state, once `initialize` has been answered (`None` before,
    /// and once it is shut down or failed).
    pub fn snapshot(&self) -> Option<SessionSnapshot> {
        let (version, ready, client, log_level) = {
            let state = self.state();
            let ready = match state.lifecycle {
                Lifecycle::Initializing => false,
                Lifecycle::Ready => true,
                _ => return None,
            };
            (state.version?, ready, state.client.clone(), state.log_level)
        };
        Some(SessionSnapshot {
            server: self.inner.server.clone(),
            protocol_version: version.to_string(),
            ready,
            client_capabilities: client.map(|c| (*c).clone()).unwrap_or_default(),
            log_level,
            subscriptions: self.subscriptions(),
        })
    }

    /// A session of `registry` in the state `snapshot` describes, with the receiver of what
    /// it sends on its own (see [`new`](Self::new)); `None` when the snapshot names a
    /// protocol version this library does not know.
    pub fn restore(
        registry: Registry,
        snapshot: &SessionSnapshot,
    ) -> Option<(ServerSession, Outgoing)> {
        let version = ProtocolVersion::parse(&snapshot.protocol_version)?;
        let (session, outgoing) = ServerSession::new(registry, snapshot.server.clone());
        {
            let mut state = session.state();
            state.version = Some(version);
            state.client = Some(Arc::new(snapshot.client_capabilities.clone()));
        }
        session.update_from(snapshot);
        // Ids from a random start in [2^32, 2^52): apart from every other copy's, and
        // still exact as JSON numbers.
        let mut bytes = [0u8; 8];
        if let Err(e) = crate::random::fill(&mut bytes) {
            tracing::error!(error = %e, "cannot restore a shared session");
            return None;
        }
        let start = (1 << 32) + (u64::from_le_bytes(bytes) % ((1 << 52) - (1 << 32)));
        session.inner.requests.number_from(start);
        Some((session, outgoing))
    }

    /// Takes on what another process changed in the session: its log level, subscriptions
    /// and readiness (the version and the client's capabilities are fixed at `initialize`).
    pub(crate) fn update_from(&self, snapshot: &SessionSnapshot) {
        {
            let mut state = self.state();
            state.log_level = snapshot.log_level;
            let lifecycle = match (&state.lifecycle, snapshot.ready) {
                (Lifecycle::Ready, _) | (_, true) => Lifecycle::Ready,
                _ => Lifecycle::Initializing,
            };
            if !matches!(state.lifecycle, Lifecycle::ShuttingDown) {
                state.lifecycle = lifecycle;
            }
        }
        let uris: HashSet<String> = snapshot.subscriptions.iter().cloned().collect();
        *self.subscribed() = uris;
    }

    /// Hands a client's reply to the request of this session waiting for it; gives it back
    /// when none here waits for it (it may wait in another process).
    #[cfg(feature = "http")]
    pub(crate) fn deliver_response(
        &self,
        response: IncomingResponse,
    ) -> Result<(), IncomingResponse> {
        let waiting = match &response.id {
            Some(id) => self.inner.requests.take(id),
            None => None,
        };
        match waiting {
            Some(waiting) => {
                let _ = waiting.send(response);
                Ok(())
            }
            None => Err(response),
        }
    }
}
