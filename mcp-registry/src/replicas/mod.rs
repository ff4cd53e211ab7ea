//! State shared by several replicas of one server, through Redis (feature `redis`).
//!
//! A server that outgrows one process runs as several replicas behind a load balancer. The
//! 2026-07-28 era needs nothing shared beyond the request-state keys; what does need
//! sharing (tasks, change notifications, legacy sessions) goes through the one engine such
//! deployments already run: Redis. [`Redis`] is the connection every Redis-backed store of
//! this module uses.
//!
//! - **Tasks** ([`RedisTaskStore`], given to
//!   [`RegistryBuilder::task_store`](crate::RegistryBuilder::task_store)): any replica
//!   answers `tasks/get`, `tasks/result`, `tasks/list`, `tasks/cancel` and `tasks/update` for
//!   any task; the task runs in the replica that started it, which renews a lease on it and
//!   picks up what the others received (a cancellation stops the run there, input answers
//!   reach it). A replica that dies has its tasks marked failed once their lease runs out
//!   (15 s by default); they are not run again.
//! - **Change notifications** ([`RedisBus`], given to
//!   [`RegistryBuilder::change_bus`](crate::RegistryBuilder::change_bus)): a list change or a
//!   resource update on one replica reaches the `subscriptions/listen` streams and legacy
//!   `GET` streams of every replica (Redis pub/sub; after an outage every list is announced
//!   as changed, so clients list again).
//! - **Legacy sessions** (`RedisSessions`, feature `http`, given to
//!   `HttpConfig::session_store`): a 2025-11-25 session opened on one replica is served by
//!   any other, its negotiated state kept in Redis with the session's idle expiry; a client's
//!   answer to an elicitation reaches the replica whose call waits for it.
//!
//! ```no_run
//! # async fn demo() -> Result<(), mcp_registry::replicas::RedisUnavailable> {
//! use mcp_registry::replicas::Redis;
//! let redis = Redis::new("redis://127.0.0.1:6379/")?.prefix("notes");
//! redis.ping().await?;
//! # Ok(()) }
//! ```

mod bus;
mod quota;
#[cfg(feature = "http")]
mod sessions;
mod tasks;

pub use bus::RedisBus;
pub use quota::RedisBuckets;
#[cfg(feature = "http")]
pub use sessions::RedisSessions;
pub use tasks::RedisTaskStore;

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use tokio::sync::OnceCell;

/// How long connecting to Redis may take before a request that needs it fails.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(2);
/// How long one Redis command may take before a request that needs it fails.
const RESPONSE_TIMEOUT: Duration = Duration::from_secs(2);

/// A connection to Redis shared by the stores of this module: cheap to clone, connected on
/// first use, reconnected on its own after Redis restarts or the network drops.
///
/// While Redis cannot be reached, what needs it fails with [`RedisUnavailable`] (a clear
/// error, within about 2 seconds); nothing else is affected, and everything works again
/// once Redis is back.
#[derive(Clone)]
pub struct Redis {
    inner: Arc<Inner>,
    prefix: Arc<str>,
}

struct Inner {
    client: redis::Client,
    /// The URL with any password masked, for errors and logs.
    shown: String,
    manager: OnceCell<ConnectionManager>,
}

impl fmt::Debug for Redis {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Redis")
            .field("url", &self.inner.shown)
            .field("prefix", &self.prefix)
            .finish()
    }
}

impl Redis {
    /// A connection to the Redis at `url` (`redis://[:password@]host:port/[db]`), made on
    /// first use. Fails only when `url` is not a Redis URL.
    pub fn new(url: &str) -> Result<Self, RedisUnavailable> {
        let shown = mask_password(url);
        let client = redis::Client::open(url).map_err(|e| RedisUnavailable {
            url: shown.clone(),
            reason: format!("not a Redis URL ({e}); write it as redis://host:port/"),
        })?;
        Ok(Self {
            inner: Arc::new(Inner {
                client,
                shown,
                manager: OnceCell::new(),
            }),
            prefix: Arc::from("mcp"),
        })
    }

    /// Namespaces every key this connection's stores write under `mcp:{prefix}:` (default
    /// `mcp:`), so several servers can share one Redis. Replicas of one server must use the
    /// same prefix.
    pub fn prefix(mut self, prefix: &str) -> Self {
        self.prefix = Arc::from(format!("mcp:{prefix}").as_str());
        self
    }

    /// Checks that Redis answers.
    pub async fn ping(&self) -> Result<(), RedisUnavailable> {
        let mut conn = self.connection().await?;
        let _: String = redis::cmd("PING")
            .query_async(&mut conn)
            .await
            .map_err(|e| self.unavailable(&e))?;
        Ok(())
    }

    /// The key `part` under this connection's prefix: `mcp:{prefix}:{part}`.
    pub(crate) fn key(&self, part: &str) -> String {
        format!("{}:{part}", self.prefix)
    }

    /// The multiplexed connection, made on first use (and retried on the next use when
    /// that failed).
    pub(crate) async fn connection(&self) -> Result<ConnectionManager, RedisUnavailable> {
        let manager = self
            .inner
            .manager
            .get_or_try_init(|| async {
                let config = ConnectionManagerConfig::new()
                    .set_connection_timeout(Some(CONNECT_TIMEOUT))
                    .set_response_timeout(Some(RESPONSE_TIMEOUT))
                    .set_number_of_retries(2);
                ConnectionManager::new_with_config(self.inner.client.clone(), config).await
            })
            .await
            .map_err(|e| self.unavailable(&e))?;
        Ok(manager.clone())
    }

    /// The client, for the connections pub/sub needs of its own.
    pub(crate) fn client(&self) -> &redis::Client {
        &self.inner.client
    }

    /// The error for a failed Redis command.
    pub(crate) fn unavailable(&self, error: &redis::RedisError) -> RedisUnavailable {
        RedisUnavailable {
            url: self.inner.shown.clone(),
            reason: error.to_string(),
        }
    }
}

/// Redis could not be reached or did not answer: the request that needed state shared
/// across replicas failed; requests that need none are unaffected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "the Redis at {url} that replicas share state through did not answer ({reason}); check that it runs and that the URL given to Redis::new is right: requests that need no shared state still work"
)]
pub struct RedisUnavailable {
    url: String,
    reason: String,
}

/// `d` as a Redis expiry in milliseconds (`PEXPIRE`, `PX`): at least 1, which Redis requires.
pub(crate) fn expiry_ms(d: Duration) -> u64 {
    crate::task::millis(d).max(1)
}

/// `url` with the password (if any) replaced by `***`.
fn mask_password(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_owned();
    };
    let Some((auth, host)) = rest.split_once('@') else {
        return url.to_owned();
    };
    let user = auth.split_once(':').map_or(auth, |(user, _)| user);
    format!("{scheme}://{user}:***@{host}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_never_shown() {
        assert_eq!(
            mask_password("redis://:secret@db:6379/0"),
            "redis://:***@db:6379/0"
        );
        assert_eq!(mask_password("redis://me:secret@db/"), "redis://me:***@db/");
        assert_eq!(mask_password("redis://db:6379/"), "redis://db:6379/");
    }

    #[test]
    fn keys_are_prefixed() {
        let redis = Redis::new("redis://127.0.0.1:1/").unwrap();
        assert_eq!(redis.key("task:1"), "mcp:task:1");
        assert_eq!(redis.prefix("notes").key("task:1"), "mcp:notes:task:1");
    }

    #[test]
    fn a_bad_url_says_how_to_write_one() {
        let error = Redis::new("http://nope").unwrap_err().to_string();
        assert!(error.contains("redis://host:port/"), "{error}");
    }
}
