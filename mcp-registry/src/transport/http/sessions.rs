//! The legacy sessions a server keeps (lookup, cap, idle sweeps) and the state the handlers
//! share.

use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::auth::AccessClaims;
use super::kept::MemoryStreams;
use super::shared::{
    EventSink, Presence, SessionEvent, SessionRecord, SessionStore, SessionStoreError,
};
use super::{HttpConfig, error_response};
use crate::dispatch::{Outgoing, ServerSession};
use crate::protocol::decode::IncomingResponse;
use crate::protocol::{ErrorCode, RequestId};
use crate::registry::Registry;
use crate::sync::MutexExt;

/// How often, at most, requests sweep away idle legacy sessions.
const SWEEP_EVERY: Duration = Duration::from_secs(1);

pub(super) struct SessionSlot {
    /// The session's id (`Mcp-Session-Id`), shared with the key it is kept under and with
    /// its calls' [`Caller`](crate::Caller): no copy of it is made per request (issue #41).
    pub(super) id: Arc<str>,
    pub(super) session: ServerSession,
    /// The subject whose token opened the session (with [`HttpConfig::auth`]): only that
    /// subject may use it.
    pub(super) owner: Option<String>,
    /// What the session sends on its own, for its `GET` stream.
    pub(super) pushed: Outgoing,
    /// Ends the open `GET` stream, when there is one.
    pub(super) stream: Mutex<Option<CancellationToken>>,
    /// The events of its SSE streams kept in memory, for resumption ([`events`](Self::events):
    /// made when a stream first needs them, so an idle session does not hold them).
    events: OnceLock<Arc<MemoryStreams>>,
    /// See [`pen`](Self::pen); made when first needed, as `events`.
    pen: OnceLock<Arc<tokio::sync::Mutex<()>>>,
}

impl SessionSlot {
    /// The slot of session `id`, `session`, opened by `owner`, sending `pushed` on its
    /// `GET` stream.
    pub(super) fn new(
        id: Arc<str>,
        session: ServerSession,
        owner: Option<String>,
        pushed: Outgoing,
    ) -> Self {
        SessionSlot {
            id,
            session,
            owner,
            pushed,
            stream: Mutex::new(None),
            events: OnceLock::new(),
            pen: OnceLock::new(),
        }
    }

    /// The events of the session's SSE streams kept in memory, for resumption.
    pub(super) fn events(&self) -> &Arc<MemoryStreams> {
        self.events.get_or_init(Arc::default)
    }

    /// Held by a `GET` stream while it takes a message from [`pushed`](Self::pushed) and
    /// keeps it, and by a resumed `GET` while it reads what was kept: nothing taken by the
    /// stream it replaces is missed.
    pub(super) fn pen(&self) -> &Arc<tokio::sync::Mutex<()>> {
        self.pen.get_or_init(Arc::default)
    }

    /// Ends the session: its calls are cancelled and its `GET` stream, if open, ends.
    fn end(&self) {
        self.session.shutdown();
        if let Some(stream) = self.stream.lock_unpoisoned().take() {
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
    /// By id, hashed with foldhash rather than SipHash (issue #41: a lookup per request):
    /// every key is a random id this server (or a replica, through the session store) made,
    /// so no client chooses what is kept, and no client can make keys collide.
    live: foldhash::HashMap<Arc<str>, LiveSession>,
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
                live: foldhash::HashMap::default(),
                last_sweep: Instant::now(),
            }),
        }
    }

    /// Ends idle sessions when the last sweep is [`SWEEP_EVERY`] old; every request calls
    /// this, so abandoned sessions go away without waiting for an `initialize`.
    pub(super) fn sweep_if_due(&self) {
        let now = Instant::now();
        let mut sessions = self.sessions.lock_unpoisoned();
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
        let mut sessions = self.sessions.lock_unpoisoned();
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
        let mut sessions = self.sessions.lock_unpoisoned();
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
        path: &str,
    ) -> Result<Option<AccessClaims>, Response> {
        match &self.config.auth {
            Some(auth) => match auth.authenticate(headers, method, path).await {
                Ok(claims) => Ok(Some(claims)),
                Err(refusal) => Err(auth.refuse(refusal)),
            },
            None => Ok(None),
        }
    }

    /// Keeps `slot` as a new session (its id made with [`new_session_id`]), or `None` when
    /// the session cap is reached. Idle sessions are ended first, and the cap check and the
    /// insert happen under one lock, so concurrent `initialize`s cannot overshoot the cap.
    pub(super) fn open_session(&self, slot: SessionSlot) -> Option<Arc<SessionSlot>> {
        self.keep_session(slot)
    }

    /// Forgets session `id` (ending it), whoever opened it.
    pub(super) fn forget_session(&self, id: &str) {
        let removed = self.sessions.lock_unpoisoned().live.remove(id);
        if let Some(live) = removed {
            live.slot.end();
        }
    }

    /// Keeps `slot` as its session (new here, or rebuilt from the session store), or `None`
    /// when the session cap is reached. When its id is already kept (two requests rebuilt
    /// it at once), the kept one stays, serving both, and `slot` is ended.
    pub(super) fn keep_session(&self, slot: SessionSlot) -> Option<Arc<SessionSlot>> {
        let now = Instant::now();
        let mut sessions = self.sessions.lock_unpoisoned();
        sessions.sweep(now, self.config.session_idle_timeout);
        if let Some(kept) = sessions.live.get_mut(&*slot.id) {
            kept.last_used = now;
            slot.end();
            return Some(kept.slot.clone());
        }
        if sessions.live.len() >= self.config.max_sessions {
            return None;
        }
        let slot = Arc::new(slot);
        let live = LiveSession {
            slot: slot.clone(),
            last_used: now,
        };
        sessions.live.insert(slot.id.clone(), live);
        Some(slot)
    }

    /// The session store the replicas share, when there is one.
    pub(super) fn store(&self) -> Option<&dyn SessionStore> {
        self.config.session_store.as_deref()
    }

    /// The session `id` of `caller`: this replica's, or (with a session store) rebuilt from
    /// the store, whichever replica opened it. The refusal otherwise: `404` for an unknown
    /// session, `503` when the store does not answer or the session cap is reached.
    pub(super) async fn find_session(
        &self,
        id: &str,
        caller: Option<&AccessClaims>,
        request: Option<&RequestId>,
    ) -> Result<Arc<SessionSlot>, Response> {
        match self.store() {
            None => self
                .session(id, caller)
                .ok_or_else(|| unknown_session(request, id)),
            // Boxed: a call's future keeps no room for the store's round trips (issue #41).
            Some(store) => Box::pin(self.find_shared(store, id, caller, request)).await,
        }
    }

    /// [`find_session`](Self::find_session) with a session store.
    async fn find_shared(
        &self,
        store: &dyn SessionStore,
        id: &str,
        caller: Option<&AccessClaims>,
        request: Option<&RequestId>,
    ) -> Result<Arc<SessionSlot>, Response> {
        let local = self.session(id, caller);
        let idle = self.config.session_idle_timeout;
        let refused = |e: SessionStoreError| store_down(request, &e);
        if let Some(slot) = local {
            // Kept alive in the store for the other replicas; put back when the store lost
            // it (restarted empty).
            match store.touch(id, idle).await.map_err(refused)? {
                Presence::Live => {}
                Presence::Lost => self.share(id, &slot).await.map_err(refused)?,
                Presence::Ended => {
                    self.forget_session(id);
                    return Err(unknown_session(request, id));
                }
            }
            return Ok(slot);
        }
        let Some(record) = self.load_record(store, id, caller).await.map_err(refused)? else {
            return Err(unknown_session(request, id));
        };
        let Some((session, pushed)) =
            ServerSession::restore(self.registry.clone(), &record.session)
        else {
            return Err(unknown_session(request, id));
        };
        let slot = SessionSlot::new(Arc::from(id), session, record.owner, pushed);
        self.keep_session(slot)
            .ok_or_else(|| too_many_sessions(request, self.config.max_sessions))
    }

    /// The store's record of session `id` when it is a session of this server opened by
    /// `caller` (`None` otherwise), its expiry renewed.
    async fn load_record(
        &self,
        store: &dyn SessionStore,
        id: &str,
        caller: Option<&AccessClaims>,
    ) -> Result<Option<SessionRecord>, SessionStoreError> {
        let owner = caller.map(|c| c.subject.as_str());
        let record = store.load(id, self.config.session_idle_timeout).await?;
        Ok(record.filter(|r| r.session.server == self.server && r.owner.as_deref() == owner))
    }

    /// Saves session `id`'s state in the session store (when there is one), telling the
    /// other replicas holding it.
    pub(super) async fn share(
        &self,
        id: &str,
        slot: &SessionSlot,
    ) -> Result<(), SessionStoreError> {
        // No snapshot is taken without a store to save it in.
        let Some(store) = self.store() else {
            return Ok(());
        };
        let Some(snapshot) = slot.session.snapshot() else {
            return Ok(());
        };
        let record = SessionRecord::new(slot.owner.clone(), snapshot);
        store
            .save(id, &record, self.config.session_idle_timeout)
            .await
    }

    /// Ends session `id` here and in the session store: whether it was found in either;
    /// the refusal (`503`) when the store does not answer. A session another replica holds
    /// is ended in the store (which tells that replica), not rebuilt here first.
    pub(super) async fn delete_session(
        &self,
        id: &str,
        caller: Option<&AccessClaims>,
    ) -> Result<bool, Response> {
        let Some(store) = self.store() else {
            return Ok(self.end_session(id, caller));
        };
        let refused = |e: SessionStoreError| store_down(None, &e);
        // Whose it is: this replica's own, or else what the store's record says.
        let known = self.session(id, caller).is_some()
            || self
                .load_record(store, id, caller)
                .await
                .map_err(refused)?
                .is_some();
        if !known {
            return Ok(false);
        }
        let removed = store
            .remove(id, self.config.session_idle_timeout)
            .await
            .map_err(refused)?;
        Ok(self.end_session(id, caller) || removed)
    }
}

impl AppState {
    /// Saves every legacy session this router holds to the session store (when there is
    /// one), for another replica to take on: the shutdown's hand-over. Failures are logged.
    pub(super) async fn save_all_sessions(&self) {
        if self.store().is_none() {
            return;
        }
        let live: Vec<(Arc<str>, Arc<SessionSlot>)> = self
            .sessions
            .lock_unpoisoned()
            .live
            .iter()
            .map(|(id, live)| (id.clone(), live.slot.clone()))
            .collect();
        let mut saved = 0usize;
        for (id, slot) in &live {
            match self.share(id, slot).await {
                Ok(()) => saved += 1,
                Err(e) => {
                    tracing::warn!(session = %id, error = %e, "HTTP: draining: a legacy session could not be saved to the session store");
                }
            }
        }
        tracing::info!(
            saved,
            sessions = live.len(),
            "HTTP: draining: legacy sessions saved to the session store"
        );
    }
}

impl EventSink for AppState {
    /// Another replica's event about a session this one may hold.
    fn on_event(&self, event: SessionEvent) {
        match event {
            SessionEvent::Changed { session, record } => {
                if let Some(live) = self.sessions.lock_unpoisoned().live.get(session.as_str()) {
                    live.slot.session.update_from(&record.session);
                }
            }
            SessionEvent::Ended { session } => self.forget_session(&session),
            SessionEvent::Cancelled { session, request } => {
                let slot = self
                    .sessions
                    .lock_unpoisoned()
                    .live
                    .get(session.as_str())
                    .map(|l| l.slot.clone());
                if let Some(slot) = slot {
                    // Only the replica running it finds it.
                    slot.session.cancel(&request);
                }
            }
            SessionEvent::Response {
                session,
                id,
                result,
                error,
            } => {
                let slot = self
                    .sessions
                    .lock_unpoisoned()
                    .live
                    .get(session.as_str())
                    .map(|l| l.slot.clone());
                let response = IncomingResponse {
                    id: Some(id),
                    result,
                    error,
                };
                if let Some(slot) = slot {
                    // Only the replica whose call waits for it takes it.
                    let _ = slot.session.deliver_response(response);
                }
            }
        }
    }
}

impl AppState {
    /// A client's reply (in session `id`) to a request the server sent it: to the call
    /// waiting for it here, or, with a session store, to the replica where it waits.
    pub(super) async fn client_response(
        &self,
        id: &str,
        slot: &SessionSlot,
        response: IncomingResponse,
    ) -> Result<(), SessionStoreError> {
        let Err(response) = slot.session.deliver_response(response) else {
            return Ok(());
        };
        let (Some(store), Some(request)) = (self.store(), response.id) else {
            tracing::debug!(session = id, "a reply to no request waiting for one");
            return Ok(());
        };
        store
            .publish(SessionEvent::Response {
                session: id.to_owned(),
                id: request,
                result: response.result,
                error: response.error,
            })
            .await
    }
}

/// A new session's id: random, 32 hexadecimal digits.
pub(super) fn new_session_id() -> Arc<str> {
    Arc::from(uuid::Uuid::new_v4().simple().to_string())
}

/// `503` for a request that needs the shared session store when it does not answer.
pub(super) fn store_down(id: Option<&RequestId>, error: &SessionStoreError) -> Response {
    tracing::warn!(error = %error, "HTTP: the shared session store did not answer");
    error_response(
        StatusCode::SERVICE_UNAVAILABLE,
        id,
        ErrorCode::INTERNAL_ERROR,
        format!(
            "this legacy session is shared between replicas, and their session store did not answer: {error}. Retry once it is back; requests in protocol version 2026-07-28 (stateless) need no session"
        ),
    )
}

/// `503` past [`HttpConfig::max_sessions`].
pub(super) fn too_many_sessions(id: Option<&RequestId>, max: usize) -> Response {
    error_response(
        StatusCode::SERVICE_UNAVAILABLE,
        id,
        ErrorCode::INTERNAL_ERROR,
        format!(
            "too many open sessions (HttpConfig::max_sessions: {max}); idle ones end after HttpConfig::session_idle_timeout, or use protocol version 2026-07-28 (stateless)"
        ),
    )
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
