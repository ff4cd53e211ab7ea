//! The seam through which replicas of one server serve the same legacy sessions: a
//! [`SessionStore`] given to [`HttpConfig::session_store`](super::HttpConfig::session_store)
//! keeps every session's negotiated state where all replicas read it, and carries the
//! session events ([`SessionEvent`]) between them. Without one, a session lives in the
//! replica that opened it (the default).

use std::fmt;
use std::sync::{Arc, Weak};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::dispatch::SessionSnapshot;
use crate::protocol::RequestId;
use crate::tool::BoxFuture;

/// What a [`SessionStore`] keeps of one legacy session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct SessionRecord {
    /// The subject whose token opened the session (with [`HttpConfig::auth`]): only that
    /// subject may use it.
    ///
    /// [`HttpConfig::auth`]: super::HttpConfig::auth
    pub owner: Option<String>,
    /// What the session negotiated.
    pub session: SessionSnapshot,
}

impl SessionRecord {
    /// The record of a session opened by `owner`, in the state `session`.
    pub fn new(owner: Option<String>, session: SessionSnapshot) -> Self {
        SessionRecord { owner, session }
    }
}

/// What one replica tells the others about a shared session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[non_exhaustive]
pub enum SessionEvent {
    /// The session's state changed (`logging/setLevel`, `resources/subscribe`, ...): the
    /// replicas holding it take on `record`.
    Changed {
        /// The session id.
        session: String,
        /// Its new state.
        record: SessionRecord,
    },
    /// The session ended (`DELETE`): the replicas holding it end it, and its `GET` stream.
    Ended {
        /// The session id.
        session: String,
    },
    /// The client's reply to a request the server sent it
    /// during the session (elicitation, sampling, roots), received by a replica where
    /// nothing waits for it: the replica whose call waits for it takes it.
    Response {
        /// The session id.
        session: String,
        /// The id of the server's request it answers.
        id: RequestId,
        /// Its `result`, when it succeeded.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        result: Option<Value>,
        /// Its `error`, when it failed.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        error: Option<Value>,
    },
    /// The client's `notifications/cancelled` for a request of the session, received by a
    /// replica where that request does not run: the replica running it cancels it (and
    /// sends no reply).
    Cancelled {
        /// The session id.
        session: String,
        /// The id of the client's request to cancel.
        request: RequestId,
    },
}

/// One SSE event kept for resumption ([`SessionStore::read_events`]).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct KeptEvent {
    /// Its sequence number in its stream (1, 2, ...).
    pub seq: u64,
    /// The JSON-RPC message it carries.
    pub data: String,
    /// Whether it ends its stream (a POST stream's reply).
    pub last: bool,
}

impl KeptEvent {
    /// Event `seq` carrying `data`, ending its stream when `last`.
    pub fn new(seq: u64, data: String, last: bool) -> Self {
        KeptEvent { seq, data, last }
    }
}

/// The events a [`SessionStore`] keeps of one stream.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct KeptEvents {
    /// The most recent events, oldest first (at most the cap given to
    /// [`SessionStore::append_event`]).
    pub events: Vec<KeptEvent>,
    /// The sequence number of the stream's latest event (0 before the first).
    pub latest: u64,
}

impl KeptEvents {
    /// The kept `events` of a stream whose latest event is number `latest`.
    pub fn new(events: Vec<KeptEvent>, latest: u64) -> Self {
        KeptEvents { events, latest }
    }
}

/// What [`SessionStore::touch`] found of a session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Presence {
    /// The store has it (its expiry renewed).
    Live,
    /// The store lost it (restarted empty, say) though it did not end: the replica that
    /// holds it saves it again.
    Lost,
    /// It ended ([`SessionStore::remove`]), maybe on another replica: the replica that
    /// still holds it ends it too.
    Ended,
}

/// A failed [`SessionStore`] operation: the request that needed the shared session is
/// refused with `503` and this message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct SessionStoreError(pub String);

/// Where the replicas of a server keep their legacy sessions (with the feature `redis`:
/// `mcp_registry::replicas::RedisSessions`).
///
/// A store keeps [`SessionRecord`]s by session id, each expiring once unused for the idle
/// limit it is given, and carries [`SessionEvent`]s to the other replicas (never back to the
/// one that published them).
pub trait SessionStore: Send + Sync + fmt::Debug {
    /// Stores `record` as session `id`, expiring after `idle` unused, and tells the other
    /// replicas it changed ([`SessionEvent::Changed`]).
    fn save<'a>(
        &'a self,
        id: &'a str,
        record: &'a SessionRecord,
        idle: Duration,
    ) -> BoxFuture<'a, Result<(), SessionStoreError>>;

    /// The record of session `id`, its expiry renewed to `idle`; `None` when there is none
    /// (ended, expired, never opened).
    fn load<'a>(
        &'a self,
        id: &'a str,
        idle: Duration,
    ) -> BoxFuture<'a, Result<Option<SessionRecord>, SessionStoreError>>;

    /// Renews session `id`'s expiry to `idle`, saying whether the store still has it.
    fn touch<'a>(
        &'a self,
        id: &'a str,
        idle: Duration,
    ) -> BoxFuture<'a, Result<Presence, SessionStoreError>>;

    /// Removes session `id`, remembers for `idle` that it ended (so that
    /// [`touch`](Self::touch) says [`Presence::Ended`], not [`Presence::Lost`]), and tells
    /// the other replicas ([`SessionEvent::Ended`]); whether the store had it.
    fn remove<'a>(
        &'a self,
        id: &'a str,
        idle: Duration,
    ) -> BoxFuture<'a, Result<bool, SessionStoreError>>;

    /// Tells the other replicas about `event`.
    fn publish<'a>(&'a self, event: SessionEvent) -> BoxFuture<'a, Result<(), SessionStoreError>>;

    /// Starts handing the other replicas' events to `events` (called once per router built
    /// with the store).
    fn attach(&self, events: SessionEvents);

    /// Whether this store keeps the SSE events of legacy streams
    /// ([`append_event`](Self::append_event), [`read_events`](Self::read_events)), so that
    /// a stream resumes on another replica. The default says no: each replica keeps its
    /// streams' events in memory.
    fn keeps_events(&self) -> bool {
        false
    }

    /// Appends an event (`data`, the JSON-RPC message; `last` when it ends the stream) to
    /// stream `stream` of session `session`, keeping at most the last `cap` events of the
    /// stream, for `ttl` after this append: its sequence number in the stream (1, 2, ...).
    /// Only called when [`keeps_events`](Self::keeps_events) says yes.
    fn append_event<'a>(
        &'a self,
        session: &'a str,
        stream: &'a str,
        event: (&'a str, bool),
        cap: usize,
        ttl: Duration,
    ) -> BoxFuture<'a, Result<u64, SessionStoreError>> {
        let _ = (session, stream, event, cap, ttl);
        Box::pin(async {
            Err(SessionStoreError(
                "this session store keeps no events".into(),
            ))
        })
    }

    /// The events kept of stream `stream` of session `session`, oldest first; `None` when
    /// it keeps none (expired, never opened, another session's). Only called when
    /// [`keeps_events`](Self::keeps_events) says yes.
    fn read_events<'a>(
        &'a self,
        session: &'a str,
        stream: &'a str,
    ) -> BoxFuture<'a, Result<Option<KeptEvents>, SessionStoreError>> {
        let _ = (session, stream);
        Box::pin(async {
            Err(SessionStoreError(
                "this session store keeps no events".into(),
            ))
        })
    }

    /// Whether the store answers, cheaply (a ping): the readiness route's check
    /// `session_store`. The default says yes.
    fn health(&self) -> BoxFuture<'_, Result<(), SessionStoreError>> {
        Box::pin(async { Ok(()) })
    }
}

/// What takes the other replicas' session events: a router's sessions.
pub(super) trait EventSink: Send + Sync {
    fn on_event(&self, event: SessionEvent);
}

/// Where a [`SessionStore`] delivers the other replicas' [`SessionEvent`]s: a router's
/// sessions, held weakly.
#[derive(Clone)]
pub struct SessionEvents(Weak<dyn EventSink>);

impl fmt::Debug for SessionEvents {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SessionEvents")
            .field("attached", &(self.0.strong_count() > 0))
            .finish()
    }
}

impl SessionEvents {
    pub(super) fn new<S: EventSink + 'static>(sessions: &Arc<S>) -> Self {
        let sessions: Arc<dyn EventSink> = sessions.clone();
        SessionEvents(Arc::downgrade(&sessions))
    }

    /// Applies another replica's event to the sessions this router holds; `false` once the
    /// router is gone (the store may then forget it).
    pub fn deliver(&self, event: SessionEvent) -> bool {
        match self.0.upgrade() {
            Some(state) => {
                state.on_event(event);
                true
            }
            None => false,
        }
    }
}
