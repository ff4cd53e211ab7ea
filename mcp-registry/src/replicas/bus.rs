//! [`RedisBus`]: the change bus of a server's replicas, on Redis pub/sub.
//!
//! Pub/sub, not streams: what travels here are hints (a list changed, a resource changed, a
//! session changed or ended) that matter only to the replicas listening now; a replica that
//! starts later lists afresh and reads sessions from the store, so nothing needs replaying,
//! trimming or consumer cursors. What pub/sub loses (messages sent while a replica is cut
//! off from Redis) is made up for on reconnection: every list is announced as changed
//! ([`RemoteChanges::resync`]), so clients list again.

use std::fmt;
use std::sync::{Arc, Mutex, OnceLock, Weak};
use std::time::Duration;

use futures_util::StreamExt as _;
use serde::{Deserialize, Serialize};
use tokio::sync::{mpsc, watch};

use super::{Redis, RedisUnavailable};
use crate::registry::{ChangeBus, RemoteChanges, SharedChange};
use crate::sync::MutexExt;
#[cfg(feature = "http")]
use crate::transport::http::{SessionEvent, SessionEvents};

/// How long subscribing may take before it is retried.
const SUBSCRIBE_TIMEOUT: Duration = Duration::from_secs(2);
/// The longest wait between two attempts to subscribe again.
const MAX_BACKOFF: Duration = Duration::from_secs(2);

/// The change bus of one replica, on Redis pub/sub: give it to
/// [`RegistryBuilder::change_bus`](crate::RegistryBuilder::change_bus), and (for legacy
/// sessions any replica serves) to [`RedisSessions::new`](super::RedisSessions::new).
///
/// Every replica of a server makes its own, on a [`Redis`] with the same prefix. What the
/// replica's registry changes is published on the channel `mcp:{prefix}:bus`; what the
/// others publish is applied to it, and not published again (each message names the bus
/// that sent it, which ignores its own). The bus subscribes on first use, inside a Tokio
/// runtime, and subscribes again on its own when Redis comes back after an outage.
///
/// ```no_run
/// # async fn demo() -> Result<(), mcp_registry::replicas::RedisUnavailable> {
/// use mcp_registry::Registry;
/// use mcp_registry::replicas::{Redis, RedisBus};
/// let bus = RedisBus::new(&Redis::new("redis://127.0.0.1:6379/")?.prefix("notes"));
/// let registry = Registry::builder().change_bus(bus.clone()).build();
/// bus.ready().await?; // subscribed: changes of the other replicas arrive from now on
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct RedisBus {
    inner: Arc<Inner>,
}

struct Inner {
    redis: Redis,
    /// Names this bus in what it publishes.
    origin: String,
    channel: String,
    outbox: mpsc::UnboundedSender<String>,
    /// Taken by the publishing task when it starts.
    queued: Mutex<Option<mpsc::UnboundedReceiver<String>>>,
    started: OnceLock<()>,
    /// Whether the bus is subscribed now.
    subscribed: watch::Sender<bool>,
    registries: Mutex<Vec<RemoteChanges>>,
    #[cfg(feature = "http")]
    sessions: Mutex<Vec<SessionEvents>>,
}

impl fmt::Debug for RedisBus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RedisBus")
            .field("channel", &self.inner.channel)
            .field("subscribed", &*self.inner.subscribed.borrow())
            .finish()
    }
}

/// One message on the channel.
#[derive(Serialize, Deserialize)]
struct Envelope {
    /// The bus that published it.
    origin: String,
    message: Message,
}

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
enum Message {
    Registry(SharedChange),
    #[cfg(feature = "http")]
    Session(SessionEvent),
}

impl RedisBus {
    /// The bus of one replica, on `redis` (whose prefix names the server: replicas of one
    /// server share it). Nothing is connected until first use.
    pub fn new(redis: &Redis) -> Self {
        let (outbox, queued) = mpsc::unbounded_channel();
        RedisBus {
            inner: Arc::new(Inner {
                redis: redis.clone(),
                origin: origin(),
                channel: redis.key("bus"),
                outbox,
                queued: Mutex::new(Some(queued)),
                started: OnceLock::new(),
                subscribed: watch::channel(false).0,
                registries: Mutex::default(),
                #[cfg(feature = "http")]
                sessions: Mutex::default(),
            }),
        }
    }

    /// Waits until the bus is subscribed (at most about 2 seconds): from then on the other
    /// replicas' changes arrive. Fails with [`RedisUnavailable`] when Redis does not answer
    /// meanwhile (the bus keeps trying on its own).
    pub async fn ready(&self) -> Result<(), RedisUnavailable> {
        self.start();
        let mut subscribed = self.inner.subscribed.subscribe();
        let waited = tokio::time::timeout(SUBSCRIBE_TIMEOUT * 2, subscribed.wait_for(|s| *s));
        match waited.await {
            Ok(Ok(_)) => Ok(()),
            _ => Err(RedisUnavailable {
                url: self.inner.redis.inner.shown.clone(),
                reason: format!("not subscribed to {} yet", self.inner.channel),
            }),
        }
    }

    /// Starts the publishing and subscribing tasks, once, when inside a Tokio runtime.
    fn start(&self) {
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            tracing::error!(
                "RedisBus used outside a Tokio runtime: changes are not shared with the other replicas until it is used inside one"
            );
            return;
        };
        self.inner.started.get_or_init(|| {
            let queued = self.inner.queued.lock_unpoisoned().take();
            if let Some(queued) = queued {
                runtime.spawn(publish_queued(
                    self.inner.redis.clone(),
                    queued,
                    self.inner.channel.clone(),
                ));
            }
            runtime.spawn(listen(Arc::downgrade(&self.inner)));
        });
    }

    /// The message as published: this bus's envelope, as JSON.
    fn envelope(&self, message: Message) -> String {
        let envelope = Envelope {
            origin: self.inner.origin.clone(),
            message,
        };
        serde_json::to_string(&envelope).unwrap_or_default()
    }

    /// Publishes a session event now (with the feature `http`).
    #[cfg(feature = "http")]
    pub(super) async fn publish_session(
        &self,
        event: SessionEvent,
    ) -> Result<(), RedisUnavailable> {
        send(&self.inner.redis, self.session_publish(event)).await
    }

    /// The `PUBLISH` of a session event, for a pipeline of the session store.
    #[cfg(feature = "http")]
    pub(super) fn session_publish(&self, event: SessionEvent) -> redis::Cmd {
        self.start();
        publish(&self.inner.channel, self.envelope(Message::Session(event)))
    }

    /// Hands the router's sessions the other replicas' session events.
    #[cfg(feature = "http")]
    pub(super) fn attach_sessions(&self, events: SessionEvents) {
        self.start();
        let mut sessions = self.inner.sessions.lock_unpoisoned();
        sessions.push(events);
    }

    /// The Redis this bus is on.
    #[cfg(feature = "http")]
    pub(super) fn redis(&self) -> &Redis {
        &self.inner.redis
    }
}

impl ChangeBus for RedisBus {
    fn publish(&self, change: SharedChange) {
        self.start();
        let _ = self
            .inner
            .outbox
            .send(self.envelope(Message::Registry(change)));
    }

    fn attach(&self, changes: RemoteChanges) {
        self.start();
        let mut registries = self.inner.registries.lock_unpoisoned();
        registries.push(changes);
    }
}

impl Inner {
    /// A message from the channel: applied, unless this bus published it.
    fn receive(&self, payload: &[u8]) {
        let envelope: Envelope = match serde_json::from_slice(payload) {
            Ok(envelope) => envelope,
            Err(e) => {
                tracing::warn!(error = %e, channel = %self.channel, "replicas: an unreadable message on the change bus (another version of the library?)");
                return;
            }
        };
        if envelope.origin == self.origin {
            return;
        }
        match envelope.message {
            Message::Registry(change) => {
                let mut registries = self.registries.lock_unpoisoned();
                registries.retain(|r| r.apply(change.clone()));
            }
            #[cfg(feature = "http")]
            Message::Session(event) => {
                let mut sessions = self.sessions.lock_unpoisoned();
                sessions.retain(|s| s.deliver(event.clone()));
            }
        }
    }

    /// After a reconnection: every list may have changed meanwhile.
    fn resync(&self) {
        let mut registries = self.registries.lock_unpoisoned();
        registries.retain(RemoteChanges::resync);
    }
}

/// Publishes the registry's changes in order; one that Redis does not take is dropped
/// (logged): the other replicas list afresh when their bus reconnects.
async fn publish_queued(
    redis: Redis,
    mut queued: mpsc::UnboundedReceiver<String>,
    channel: String,
) {
    while let Some(payload) = queued.recv().await {
        if let Err(e) = send(&redis, publish(&channel, payload)).await {
            tracing::warn!(error = %e, "replicas: a change was not published to the other replicas");
        }
    }
}

/// `PUBLISH {channel} {payload}`: how every message of the bus goes out.
fn publish(channel: &str, payload: String) -> redis::Cmd {
    let mut cmd = redis::cmd("PUBLISH");
    cmd.arg(channel).arg(payload);
    cmd
}

/// Sends one `PUBLISH` (its count of receivers ignored).
async fn send(redis: &Redis, publish: redis::Cmd) -> Result<(), RedisUnavailable> {
    let mut conn = redis.connection().await?;
    publish
        .query_async::<i64>(&mut conn)
        .await
        .map_err(|e| redis.unavailable(&e))?;
    Ok(())
}

/// Subscribes, delivers what arrives, and subscribes again whenever the connection is lost,
/// until the bus is gone.
async fn listen(bus: Weak<Inner>) {
    let mut backoff = Duration::from_millis(50);
    let mut reconnection = false;
    let mut warned = false;
    loop {
        let Some((client, channel)) = bus
            .upgrade()
            .map(|b| (b.redis.client().clone(), b.channel.clone()))
        else {
            return;
        };
        match subscribe(&client, &channel).await {
            Ok(pubsub) => {
                let Some(inner) = bus.upgrade() else { return };
                if reconnection {
                    tracing::info!(%channel, "replicas: the change bus is subscribed again");
                    inner.resync();
                }
                inner.subscribed.send_replace(true);
                drop(inner);
                (reconnection, warned, backoff) = (true, false, Duration::from_millis(50));
                let mut messages = pubsub.into_on_message();
                while let Some(message) = messages.next().await {
                    let Some(inner) = bus.upgrade() else { return };
                    inner.receive(message.get_payload_bytes());
                }
                if let Some(inner) = bus.upgrade() {
                    inner.subscribed.send_replace(false);
                }
                tracing::warn!(%channel, "replicas: the change bus lost Redis; subscribing again");
            }
            Err(e) if !warned => {
                warned = true;
                tracing::warn!(%channel, error = %e, "replicas: the change bus cannot subscribe (is Redis running?); retrying");
            }
            Err(_) => {}
        }
        tokio::time::sleep(backoff).await;
        backoff = (backoff * 2).min(MAX_BACKOFF);
    }
}

async fn subscribe(client: &redis::Client, channel: &str) -> Result<redis::aio::PubSub, String> {
    let subscribed = async {
        let mut pubsub = client.get_async_pubsub().await?;
        pubsub.subscribe(channel).await?;
        Ok::<_, redis::RedisError>(pubsub)
    };
    match tokio::time::timeout(SUBSCRIBE_TIMEOUT, subscribed).await {
        Ok(Ok(pubsub)) => Ok(pubsub),
        Ok(Err(e)) => Err(e.to_string()),
        Err(_) => Err(format!("no answer within {SUBSCRIBE_TIMEOUT:?}")),
    }
}

/// What tells this replica's messages from the others': random, else (the OS having no
/// randomness; the origin is no secret, only told apart) the process id and the clock.
fn origin() -> String {
    crate::random::token().unwrap_or_else(|e| {
        tracing::error!(error = %e, "RedisBus: origin made from the process id and the clock");
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        format!("{}-{now}", std::process::id())
    })
}
