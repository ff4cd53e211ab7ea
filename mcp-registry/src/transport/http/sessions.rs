//! The legacy sessions a server keeps (lookup, cap, idle sweeps) and the state the handlers
//! share.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::auth::AccessClaims;
use super::{HttpConfig, error_response};
use crate::dispatch::{Outgoing, ServerSession};
use crate::protocol::{ErrorCode, RequestId};
use crate::registry::Registry;

/// How often, at most, requests sweep away idle legacy sessions.
const SWEEP_EVERY: Duration = Duration::from_secs(1);

pub(super) struct SessionSlot {
    pub(super) session: ServerSession,
    /// The subject whose token opened the session (with [`HttpConfig::auth`]): only that
    /// subject may use it.
    pub(super) owner: Option<String>,
    /// What the session sends on its own, for its `GET` stream.
    pub(super) pushed: Outgoing,
    /// Ends the open `GET` stream, when there is one.
    pub(super) stream: Mutex<Option<CancellationToken>>,
}

impl SessionSlot {
    /// Ends the session: its calls are cancelled and its `GET` stream, if open, ends.
    fn end(&self) {
        self.session.shutdown();
        if let Some(stream) = self
            .stream
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
        {
            stream.cancel();
        }
    }
}

/// A kept legacy session and when it was last used.
struct LiveSession {
    slot: Arc<SessionSlot>,
    last_used: Instant,
}

/// The legacy sessions, behind one lock for lookups, the cap and sweeps.
struct Sessions {
    live: HashMap<String, LiveSession>,
    last_sweep: Instant,
}

impl Sessions {
    /// Ends the sessions idle for longer than `limit`.
    fn sweep(&mut self, now: Instant, limit: Duration) {
        self.last_sweep = now;
        self.live.retain(|_, live| {
            let keep = now.duration_since(live.last_used) <= limit;
            if !keep {
                live.slot.end();
            }
            keep
        });
    }

    /// Removes the session `id`, ending it; `None` when there is none or it has been idle
    /// for longer than `limit` (it is gone all the same).
    fn remove(&mut self, id: &str, now: Instant, limit: Duration) -> Option<Arc<SessionSlot>> {
        let live = self.live.remove(id)?;
        live.slot.end();
        (now.duration_since(live.last_used) <= limit).then_some(live.slot)
    }
}

pub(super) struct AppState {
    pub(super) registry: Registry,
    pub(super) server: String,
    pub(super) config: HttpConfig,
    sessions: Mutex<Sessions>,
}

impl AppState {
    /// The state of a router serving `server` of `registry`, with no sessions yet.
    pub(super) fn new(registry: Registry, server: &str, config: HttpConfig) -> Self {
        AppState {
            registry,
            server: server.to_owned(),
            config,
            sessions: Mutex::new(Sessions {
                live: HashMap::new(),
                last_sweep: Instant::now(),
            }),
        }
    }

    fn sessions(&self) -> MutexGuard<'_, Sessions> {
        self.sessions.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Ends idle sessions when the last sweep is [`SWEEP_EVERY`] old; every request calls
    /// this, so abandoned sessions go away without waiting for an `initialize`.
    pub(super) fn sweep_if_due(&self) {
        let now = Instant::now();
        let mut sessions = self.sessions();
        if now.duration_since(sessions.last_sweep) >= SWEEP_EVERY {
            sessions.sweep(now, self.config.session_idle_timeout);
        }
    }

    /// The session `id`, marked used; `None` when unknown, opened by another subject than
    /// `caller`'s (a session id is no credential), or idle for longer than the configured
    /// limit (then it is ended and removed).
    pub(super) fn session(
        &self,
        id: &str,
        caller: Option<&AccessClaims>,
    ) -> Option<Arc<SessionSlot>> {
        let now = Instant::now();
        let limit = self.config.session_idle_timeout;
        let mut sessions = self.sessions();
        let live = sessions.live.get_mut(id)?;
        if !owned_by(&live.slot, caller) {
            return None;
        }
        if now.duration_since(live.last_used) > limit {
            sessions.remove(id, now, limit);
            return None;
        }
        live.last_used = now;
        Some(live.slot.clone())
    }

    /// Ends the session `id`; `false` when there was no live one of `caller`'s.
    pub(super) fn end_session(&self, id: &str, caller: Option<&AccessClaims>) -> bool {
        let limit = self.config.session_idle_timeout;
        let mut sessions = self.sessions();
        if !sessions
            .live
            .get(id)
            .is_some_and(|live| owned_by(&live.slot, caller))
        {
            return false;
        }
        sessions.remove(id, Instant::now(), limit).is_some()
    }

    /// The caller's claims, or the refusal (`401`, `403`, `503`), when the endpoint is
    /// protected; `Ok(None)` when it is not.
    pub(super) async fn authenticate(
        &self,
        headers: &HeaderMap,
        method: &str,
    ) -> Result<Option<AccessClaims>, Response> {
        match &self.config.auth {
            Some(auth) => match auth.authenticate(headers, method).await {
                Ok(claims) => Ok(Some(claims)),
                Err(refusal) => Err(auth.refuse(refusal)),
            },
            None => Ok(None),
        }
    }

    /// Keeps `slot` as a new session and returns its id, or `None` when the session cap is
    /// reached. Idle sessions are ended first, and the cap check and the insert happen under
    /// one lock, so concurrent `initialize`s cannot overshoot the cap.
    pub(super) fn open_session(&self, slot: SessionSlot) -> Option<String> {
        let now = Instant::now();
        let mut sessions = self.sessions();
        sessions.sweep(now, self.config.session_idle_timeout);
        if sessions.live.len() >= self.config.max_sessions {
            return None;
        }
        let session_id = uuid::Uuid::new_v4().simple().to_string();
        let live = LiveSession {
            slot: Arc::new(slot),
            last_used: now,
        };
        sessions.live.insert(session_id.clone(), live);
        Some(session_id)
    }
}

/// Whether `caller` (the subject of its token; nobody without authorization) opened `slot`.
fn owned_by(slot: &SessionSlot, caller: Option<&AccessClaims>) -> bool {
    slot.owner.as_deref() == caller.map(|c| c.subject.as_str())
}

/// 404 for a session id this server does not know.
pub(super) fn unknown_session(id: Option<&RequestId>, session_id: &str) -> Response {
    error_response(
        StatusCode::NOT_FOUND,
        id,
        ErrorCode::INVALID_REQUEST,
        format!(
            "unknown session {session_id:?} (ended, expired or never opened); initialize a new one"
        ),
    )
}
