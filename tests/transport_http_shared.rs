//! Legacy sessions shared through a `SessionStore`, against an in-memory store that can be
//! taken down and counts what it is asked (no Redis needed): a batch is refused as a single
//! message is, `DELETE` ends a session another replica holds without rebuilding it, and a
//! session is saved only when a message changed it.

use crate::common;

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use axum::http::StatusCode;
use common::http::{Reply, app, send};
use mcp_registry::tool::BoxFuture;
use mcp_registry::transport::http::{
    HttpConfig, Presence, SessionEvent, SessionEvents, SessionRecord, SessionStore,
    SessionStoreError, Shutdown,
};
use serde_json::json;

/// What the replicas of one [`MemoryStore`] share.
#[derive(Debug, Default)]
struct Shared {
    records: Mutex<HashMap<String, SessionRecord>>,
    ended: Mutex<HashSet<String>>,
    /// Each replica's sessions, by the number of its handle.
    sinks: Mutex<Vec<(usize, SessionEvents)>>,
    handles: AtomicUsize,
    down: AtomicBool,
    saves: AtomicUsize,
}

/// One replica's handle on a shared in-memory session store: events go to the other
/// replicas' handles, never back, as `RedisSessions` does.
#[derive(Debug, Clone)]
struct MemoryStore {
    shared: Arc<Shared>,
    me: usize,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl MemoryStore {
    fn new() -> Self {
        MemoryStore {
            shared: Arc::default(),
            me: 0,
        }
    }

    /// A handle for another replica.
    fn replica(&self) -> Self {
        MemoryStore {
            shared: self.shared.clone(),
            me: self.shared.handles.fetch_add(1, Ordering::Relaxed) + 1,
        }
    }

    fn set_down(&self, down: bool) {
        self.shared.down.store(down, Ordering::Relaxed);
    }

    fn saves(&self) -> usize {
        self.shared.saves.load(Ordering::Relaxed)
    }

    fn has(&self, id: &str) -> bool {
        lock(&self.shared.records).contains_key(id)
    }

    fn up(&self) -> Result<(), SessionStoreError> {
        match self.shared.down.load(Ordering::Relaxed) {
            true => Err(SessionStoreError("the store is down (test)".to_owned())),
            false => Ok(()),
        }
    }

    fn tell_others(&self, event: SessionEvent) {
        let sinks: Vec<SessionEvents> = lock(&self.shared.sinks)
            .iter()
            .filter(|(owner, _)| *owner != self.me)
            .map(|(_, sink)| sink.clone())
            .collect();
        for sink in sinks {
            sink.deliver(event.clone());
        }
    }
}

impl SessionStore for MemoryStore {
    fn save<'a>(
        &'a self,
        id: &'a str,
        record: &'a SessionRecord,
        _: Duration,
    ) -> BoxFuture<'a, Result<(), SessionStoreError>> {
        Box::pin(async move {
            self.up()?;
            self.shared.saves.fetch_add(1, Ordering::Relaxed);
            lock(&self.shared.records).insert(id.to_owned(), record.clone());
            self.tell_others(SessionEvent::Changed {
                session: id.to_owned(),
                record: record.clone(),
            });
            Ok(())
        })
    }

    fn load<'a>(
        &'a self,
        id: &'a str,
        _: Duration,
    ) -> BoxFuture<'a, Result<Option<SessionRecord>, SessionStoreError>> {
        Box::pin(async move {
            self.up()?;
            Ok(lock(&self.shared.records).get(id).cloned())
        })
    }

    fn touch<'a>(
        &'a self,
        id: &'a str,
        _: Duration,
    ) -> BoxFuture<'a, Result<Presence, SessionStoreError>> {
        Box::pin(async move {
            self.up()?;
            Ok(if self.has(id) {
                Presence::Live
            } else if lock(&self.shared.ended).contains(id) {
                Presence::Ended
            } else {
                Presence::Lost
            })
        })
    }

    fn remove<'a>(
        &'a self,
        id: &'a str,
        _: Duration,
    ) -> BoxFuture<'a, Result<bool, SessionStoreError>> {
        Box::pin(async move {
            self.up()?;
            let had = lock(&self.shared.records).remove(id).is_some();
            lock(&self.shared.ended).insert(id.to_owned());
            self.tell_others(SessionEvent::Ended {
                session: id.to_owned(),
            });
            Ok(had)
        })
    }

    fn publish<'a>(&'a self, event: SessionEvent) -> BoxFuture<'a, Result<(), SessionStoreError>> {
        Box::pin(async move {
            self.up()?;
            self.tell_others(event);
            Ok(())
        })
    }

    fn attach(&self, events: SessionEvents) {
        lock(&self.shared.sinks).push((self.me, events));
    }

    fn health(&self) -> BoxFuture<'_, Result<(), SessionStoreError>> {
        Box::pin(async move { self.up() })
    }
}

/// A replica of the `math` server on `store` (its own handle), with `config`.
fn replica(store: &MemoryStore, config: HttpConfig) -> axum::Router {
    app(config.session_store(store.replica()))
}

/// Opens a legacy session in `version` on `app`, initialized: its id.
async fn open(app: &axum::Router, version: &str) -> String {
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": version, "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"}}});
    let init = send(app, "POST", &[], init.to_string()).await;
    assert_eq!(init.status, StatusCode::OK, "{}", init.body);
    let sid = init.headers["mcp-session-id"].to_str().unwrap().to_owned();
    let ready = post(app, &sid, INITIALIZED).await;
    assert_eq!(ready.status, StatusCode::ACCEPTED, "{}", ready.body);
    sid
}

async fn post(app: &axum::Router, sid: &str, body: &str) -> Reply {
    send(app, "POST", &[("mcp-session-id", sid)], body.to_owned()).await
}

const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
const PING: &str = r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#;
const BATCH: &str = r#"[{"jsonrpc":"2.0","id":3,"method":"ping"}]"#;

/// Regression: a batch in a shared session was refused `400` (as if the session had no
/// batches) when the store did not answer; it gets a single message's `503`, and an unknown
/// session a single message's `404`.
#[tokio::test]
async fn a_batch_is_refused_as_a_single_message_is() {
    let store = MemoryStore::new();
    let app = replica(&store, HttpConfig::default());
    let sid = open(&app, "2025-03-26").await;
    assert_eq!(post(&app, &sid, BATCH).await.status, StatusCode::OK);

    store.set_down(true);
    let single = post(&app, &sid, PING).await;
    assert_eq!(
        single.status,
        StatusCode::SERVICE_UNAVAILABLE,
        "{}",
        single.body
    );
    let batch = post(&app, &sid, BATCH).await;
    assert_eq!(batch.status, single.status, "{}", batch.body);
    let message = batch.json()["error"]["message"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        message.contains("session store did not answer"),
        "{message}"
    );

    store.set_down(false);
    assert_eq!(post(&app, &sid, BATCH).await.status, StatusCode::OK);
    let unknown = "0123456789abcdef0123456789abcdef";
    assert_eq!(
        post(&app, unknown, PING).await.status,
        StatusCode::NOT_FOUND
    );
    assert_eq!(
        post(&app, unknown, BATCH).await.status,
        StatusCode::NOT_FOUND
    );
}

/// Regression: `DELETE` on a replica that did not hold the session rebuilt it there first,
/// so a replica at its session cap refused to end another's session (`503`).
#[tokio::test]
async fn delete_ends_a_session_held_elsewhere_without_rebuilding_it() {
    let store = MemoryStore::new();
    let a = replica(&store, HttpConfig::default());
    let b = replica(&store, HttpConfig::default().max_sessions(1));
    let own = open(&b, "2025-11-25").await;
    let sid = open(&a, "2025-11-25").await;

    let h = [("mcp-session-id", sid.as_str())];
    let deleted = send(&b, "DELETE", &h, "").await;
    assert_eq!(deleted.status, StatusCode::OK, "{}", deleted.body);
    assert!(!store.has(&sid), "the store no longer has it");
    assert_eq!(post(&a, &sid, PING).await.status, StatusCode::NOT_FOUND);
    assert_eq!(post(&b, &own, PING).await.status, StatusCode::OK);
    assert_eq!(
        send(&b, "DELETE", &h, "").await.status,
        StatusCode::NOT_FOUND
    );
    // With the store down, a replica that does not hold a session cannot tell whose it is.
    store.set_down(true);
    assert_eq!(
        send(&a, "DELETE", &[("mcp-session-id", own.as_str())], "")
            .await
            .status,
        StatusCode::SERVICE_UNAVAILABLE
    );
}

/// Regression: a session was saved for every message of a changing method, refused or not;
/// now only when the session applied a change (or became ready).
#[tokio::test]
async fn a_session_is_saved_only_when_a_message_changes_it() {
    let store = MemoryStore::new();
    let app = replica(&store, HttpConfig::default());
    let sid = open(&app, "2025-11-25").await;
    assert_eq!(store.saves(), 2, "opened, then ready");

    post(&app, &sid, INITIALIZED).await;
    post(&app, &sid, PING).await;
    let bad = r#"{"jsonrpc":"2.0","id":4,"method":"logging/setLevel","params":{"level":"loud"}}"#;
    let refused = post(&app, &sid, bad).await;
    assert_eq!(refused.json()["error"]["code"], -32602, "{}", refused.body);
    assert_eq!(store.saves(), 2, "nothing changed");

    let good = r#"{"jsonrpc":"2.0","id":5,"method":"logging/setLevel","params":{"level":"debug"}}"#;
    let set = post(&app, &sid, good).await;
    assert_eq!(set.status, StatusCode::OK, "{}", set.body);
    assert_eq!(store.saves(), 3, "the level changed");
}

/// `GET /readyz` as a load balancer sends it.
async fn readiness(app: &axum::Router) -> Reply {
    common::http::send_to(app, "GET", "/readyz", &[("accept", "")], "").await
}

/// The readiness route checks the session store: `503` naming it while it does not answer.
#[tokio::test]
async fn readiness_names_a_session_store_that_does_not_answer() {
    let store = MemoryStore::new();
    let app = replica(&store, HttpConfig::default());
    let ready = readiness(&app).await;
    assert_eq!(ready.status, StatusCode::OK, "{}", ready.body);
    assert_eq!(
        ready.json()["checks"][1],
        json!({"name": "session_store", "ok": true})
    );
    store.set_down(true);
    let down = readiness(&app).await;
    assert_eq!(
        down.status,
        StatusCode::SERVICE_UNAVAILABLE,
        "{}",
        down.body
    );
    let body = down.json();
    assert_eq!(body["status"], "not_ready");
    assert_eq!(body["checks"][0], json!({"name": "tools_list", "ok": true}));
    assert_eq!(
        body["checks"][1],
        json!({"name": "session_store", "ok": false})
    );
    store.set_down(false);
    assert_eq!(readiness(&app).await.status, StatusCode::OK);
}

/// Draining hands every legacy session over to the store, and another replica serves it.
#[tokio::test]
async fn a_drain_saves_the_legacy_sessions_to_the_store() {
    let store = MemoryStore::new();
    let shutdown = Shutdown::new();
    let a = replica(&store, HttpConfig::default().shutdown(shutdown.clone()));
    let b = replica(&store, HttpConfig::default());
    let first = open(&a, "2025-11-25").await;
    let second = open(&a, "2025-06-18").await;
    let saved = store.saves();
    // The store lost them (restarted empty, say): the drain puts them back.
    lock(&store.shared.records).clear();
    shutdown.hand_over().await;
    assert_eq!(store.saves(), saved + 2);
    assert!(store.has(&first) && store.has(&second));
    // Once only, whoever asks again.
    shutdown.hand_over().await;
    assert_eq!(store.saves(), saved + 2);
    assert_eq!(post(&b, &first, PING).await.status, StatusCode::OK);
}
