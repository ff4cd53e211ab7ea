//! [`RedisSessions`]: legacy sessions any replica can serve, kept in Redis.

use std::sync::Arc;
use std::time::Duration;

use redis::Script;

use super::{RedisBus, RedisUnavailable};
use crate::tool::BoxFuture;
use crate::transport::http::{
    KeptEvent, KeptEvents, Presence, SessionEvent, SessionEvents, SessionRecord, SessionStore,
    SessionStoreError,
};

/// Appends one event to a stream: its sequence number from the stream's counter, the list
/// trimmed to the cap, both keys expiring after the idle limit.
const APPEND: &str = r"
local seq = redis.call('INCR', KEYS[2])
redis.call('RPUSH', KEYS[1], seq .. ' ' .. ARGV[1])
redis.call('LTRIM', KEYS[1], -tonumber(ARGV[2]), -1)
redis.call('PEXPIRE', KEYS[1], ARGV[3])
redis.call('PEXPIRE', KEYS[2], ARGV[3])
return seq
";

/// Legacy (2025-xx Streamable HTTP) sessions kept in Redis, so any replica serves any
/// session: give it to [`HttpConfig::session_store`](crate::transport::http::HttpConfig::session_store).
///
/// Each session is one key, `mcp:{prefix}:session:{id}`, holding its negotiated state
/// (protocol version, the client's capabilities, log level, resource subscriptions, the
/// subject that opened it) as JSON, expiring after the session's idle limit unused. Its
/// events (changed, ended, a client's reply to a request waiting on another replica, a
/// cancellation of a request running on another replica) go through the replica's
/// [`RedisBus`].
///
/// An ended session leaves a marker, `mcp:{prefix}:session-ended:{id}`, for the idle limit:
/// a replica still holding it then ends it too, where a session Redis merely lost (a
/// restart) is saved again by the replica holding it.
///
/// It also keeps the SSE events of the sessions' streams, so that a stream cut on one
/// replica resumes on another ([`HttpConfig::resume_buffer`]): each stream is a list,
/// `mcp:{prefix}:sse:{session}:{stream}`, of its last events (at most the buffer's size,
/// trimmed on every append), and a counter, `mcp:{prefix}:sse-seq:{session}:{stream}`, both
/// expiring after the session's idle limit from the stream's last event. One round trip
/// (a script) per event sent on an SSE stream; a resumed stream whose call runs on another
/// replica reads its list every 100 ms until its reply.
///
/// [`HttpConfig::resume_buffer`]: crate::transport::http::HttpConfig::resume_buffer
///
/// Costs: one Redis round trip (`PEXPIRE`, `EXISTS`) per legacy request on a replica that holds the
/// session; a `GET` the first time a replica sees it; a `SET` and a `PUBLISH` (one
/// transaction) when its state changes.
///
/// ```no_run
/// # fn demo() -> Result<(), mcp_registry::replicas::RedisUnavailable> {
/// use mcp_registry::replicas::{Redis, RedisBus, RedisSessions};
/// use mcp_registry::transport::http::HttpConfig;
/// let bus = RedisBus::new(&Redis::new("redis://127.0.0.1:6379/")?.prefix("notes"));
/// let config = HttpConfig::default().session_store(RedisSessions::new(&bus));
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub struct RedisSessions {
    bus: RedisBus,
    append: Arc<Script>,
}

impl RedisSessions {
    /// The sessions of the replica whose change bus is `bus` (on its Redis and prefix).
    pub fn new(bus: &RedisBus) -> Self {
        RedisSessions {
            bus: bus.clone(),
            append: Arc::new(Script::new(APPEND)),
        }
    }

    fn key(&self, id: &str) -> String {
        self.bus.redis().key(&format!("session:{id}"))
    }

    /// The key that remembers, for the idle limit, that session `id` ended.
    fn ended_key(&self, id: &str) -> String {
        self.bus.redis().key(&format!("session-ended:{id}"))
    }

    /// The keys of a stream's events and of its counter.
    fn stream_keys(&self, session: &str, stream: &str) -> (String, String) {
        let redis = self.bus.redis();
        (
            redis.key(&format!("sse:{session}:{stream}")),
            redis.key(&format!("sse-seq:{session}:{stream}")),
        )
    }

    fn failed(&self, e: &redis::RedisError) -> SessionStoreError {
        lost(&self.bus.redis().unavailable(e))
    }
}

fn lost(e: &RedisUnavailable) -> SessionStoreError {
    SessionStoreError(e.to_string())
}

impl SessionStore for RedisSessions {
    fn save<'a>(
        &'a self,
        id: &'a str,
        record: &'a SessionRecord,
        idle: Duration,
    ) -> BoxFuture<'a, Result<(), SessionStoreError>> {
        Box::pin(async move {
            let json = serde_json::to_string(record)
                .map_err(|e| SessionStoreError(format!("the session cannot be written: {e}")))?;
            let changed = SessionEvent::Changed {
                session: id.to_owned(),
                record: record.clone(),
            };
            let mut conn = self.bus.redis().connection().await.map_err(|e| lost(&e))?;
            redis::pipe()
                .atomic()
                .cmd("SET")
                .arg(self.key(id))
                .arg(json)
                .arg("PX")
                .arg(super::expiry_ms(idle))
                .ignore()
                .add_command(self.bus.session_publish(changed))
                .ignore()
                .query_async::<()>(&mut conn)
                .await
                .map_err(|e| self.failed(&e))
        })
    }

    fn load<'a>(
        &'a self,
        id: &'a str,
        idle: Duration,
    ) -> BoxFuture<'a, Result<Option<SessionRecord>, SessionStoreError>> {
        Box::pin(async move {
            let mut conn = self.bus.redis().connection().await.map_err(|e| lost(&e))?;
            let key = self.key(id);
            let (json, _): (Option<String>, i64) = redis::pipe()
                .cmd("GET")
                .arg(&key)
                .cmd("PEXPIRE")
                .arg(&key)
                .arg(super::expiry_ms(idle))
                .query_async(&mut conn)
                .await
                .map_err(|e| self.failed(&e))?;
            // A record this version cannot read is no session it can serve.
            Ok(json.and_then(|json| match serde_json::from_str(&json) {
                Ok(record) => Some(record),
                Err(e) => {
                    tracing::warn!(session = id, error = %e, "replicas: an unreadable session record in Redis");
                    None
                }
            }))
        })
    }

    fn touch<'a>(
        &'a self,
        id: &'a str,
        idle: Duration,
    ) -> BoxFuture<'a, Result<Presence, SessionStoreError>> {
        Box::pin(async move {
            let mut conn = self.bus.redis().connection().await.map_err(|e| lost(&e))?;
            let (renewed, ended): (i64, i64) = redis::pipe()
                .cmd("PEXPIRE")
                .arg(self.key(id))
                .arg(super::expiry_ms(idle))
                .cmd("EXISTS")
                .arg(self.ended_key(id))
                .query_async(&mut conn)
                .await
                .map_err(|e| self.failed(&e))?;
            Ok(match (renewed, ended) {
                (1, _) => Presence::Live,
                (_, 0) => Presence::Lost,
                _ => Presence::Ended,
            })
        })
    }

    fn remove<'a>(
        &'a self,
        id: &'a str,
        idle: Duration,
    ) -> BoxFuture<'a, Result<bool, SessionStoreError>> {
        Box::pin(async move {
            let ended = SessionEvent::Ended {
                session: id.to_owned(),
            };
            let mut conn = self.bus.redis().connection().await.map_err(|e| lost(&e))?;
            let (removed, _): (i64, i64) = redis::pipe()
                .atomic()
                .cmd("DEL")
                .arg(self.key(id))
                .cmd("SET")
                .arg(self.ended_key(id))
                .arg(1)
                .arg("PX")
                .arg(super::expiry_ms(idle))
                .ignore()
                .add_command(self.bus.session_publish(ended))
                .query_async(&mut conn)
                .await
                .map_err(|e| self.failed(&e))?;
            Ok(removed == 1)
        })
    }

    fn publish<'a>(&'a self, event: SessionEvent) -> BoxFuture<'a, Result<(), SessionStoreError>> {
        Box::pin(async move { self.bus.publish_session(event).await.map_err(|e| lost(&e)) })
    }

    fn attach(&self, events: SessionEvents) {
        self.bus.attach_sessions(events);
    }

    fn keeps_events(&self) -> bool {
        true
    }

    fn append_event<'a>(
        &'a self,
        session: &'a str,
        stream: &'a str,
        event: (&'a str, bool),
        cap: usize,
        ttl: Duration,
    ) -> BoxFuture<'a, Result<u64, SessionStoreError>> {
        Box::pin(async move {
            let (events, counter) = self.stream_keys(session, stream);
            let (data, last) = event;
            let mut conn = self.bus.redis().connection().await.map_err(|e| lost(&e))?;
            self.append
                .key(events)
                .key(counter)
                .arg(format!("{} {data}", u8::from(last)))
                .arg(cap.max(1))
                .arg(super::expiry_ms(ttl))
                .invoke_async(&mut conn)
                .await
                .map_err(|e| self.failed(&e))
        })
    }

    fn read_events<'a>(
        &'a self,
        session: &'a str,
        stream: &'a str,
    ) -> BoxFuture<'a, Result<Option<KeptEvents>, SessionStoreError>> {
        Box::pin(async move {
            let (events, counter) = self.stream_keys(session, stream);
            let mut conn = self.bus.redis().connection().await.map_err(|e| lost(&e))?;
            let (entries, latest): (Vec<String>, Option<u64>) = redis::pipe()
                .cmd("LRANGE")
                .arg(&events)
                .arg(0)
                .arg(-1)
                .cmd("GET")
                .arg(&counter)
                .query_async(&mut conn)
                .await
                .map_err(|e| self.failed(&e))?;
            let Some(latest) = latest else {
                return Ok(None);
            };
            let events = entries.into_iter().filter_map(|e| kept(&e)).collect();
            Ok(Some(KeptEvents::new(events, latest)))
        })
    }

    /// A `PING` to the bus's Redis.
    fn health(&self) -> BoxFuture<'_, Result<(), SessionStoreError>> {
        Box::pin(async move { self.bus.redis().ping().await.map_err(|e| lost(&e)) })
    }
}

/// An entry of a stream's list (`{seq} {last} {data}`) as the event it keeps.
fn kept(entry: &str) -> Option<KeptEvent> {
    let (seq, rest) = entry.split_once(' ')?;
    let (last, data) = rest.split_once(' ')?;
    Some(KeptEvent::new(
        seq.parse().ok()?,
        data.to_owned(),
        last == "1",
    ))
}
