//! Graceful shutdown: a [`Shutdown`] handle, triggered once (on `SIGTERM`, say), that drains
//! every router given it through [`HttpConfig::shutdown`](super::HttpConfig::shutdown).

use std::fmt;
use std::sync::{Arc, Mutex, OnceLock, Weak};
use std::time::Duration;

use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::sessions::AppState;
use crate::protocol::{ErrorCode, ErrorObject};
use crate::sync::MutexExt;

/// The `retry:` hint (in milliseconds) an SSE stream ends with when its server drains: how
/// long the client waits before it reconnects (through the load balancer, to another
/// replica).
pub const DRAIN_RETRY: Duration = Duration::from_secs(1);

/// Drains an HTTP transport: trigger it once, and every router whose
/// [`HttpConfig`](super::HttpConfig) holds it (and [`serve`](super::serve), which returns
/// once drained) at once:
/// - answers its readiness route with `503` `"draining"`, and stops accepting connections
///   ([`serve`](super::serve), once [`HttpConfig::drain_delay`](super::HttpConfig::drain_delay)
///   has passed: the load balancer takes the replica out meanwhile; a router of your own
///   stops with axum's `with_graceful_shutdown(shutdown.draining())`);
/// - ends every legacy `GET` stream with an SSE `retry:` hint ([`DRAIN_RETRY`]), so that
///   its client reconnects, to another replica;
/// - saves every legacy session to the session store, when there is one
///   ([`HttpConfig::session_store`](super::HttpConfig::session_store)), for another replica
///   to take it on;
/// - lets calls in flight finish within
///   [`HttpConfig::drain_timeout`](super::HttpConfig::drain_timeout), then cancels each and
///   answers it with an error saying so.
///
/// ```no_run
/// # async fn run(registry: mcp_registry::Registry) -> std::io::Result<()> {
/// use mcp_registry::transport::http::{HttpConfig, Shutdown, serve};
/// let shutdown = Shutdown::new();
/// let config = HttpConfig::default().shutdown(shutdown.clone());
/// let trigger = shutdown.clone();
/// tokio::spawn(async move {
///     let _ = tokio::signal::ctrl_c().await;
///     trigger.trigger();
/// });
/// // Returns once drained.
/// serve(registry, "math", "127.0.0.1:8000".parse().unwrap(), config).await
/// # }
/// ```
///
/// A router mounted in your own app drains the same way once its server stops accepting:
///
/// ```no_run
/// # async fn run(registry: mcp_registry::Registry) -> std::io::Result<()> {
/// use mcp_registry::transport::http::{HttpConfig, Shutdown, router};
/// let shutdown = Shutdown::new();
/// let app = router(registry, "math", HttpConfig::default().shutdown(shutdown.clone()));
/// let listener = tokio::net::TcpListener::bind("127.0.0.1:8000").await?;
/// let draining = shutdown.clone();
/// axum::serve(listener, app)
///     .with_graceful_shutdown(async move {
///         draining.draining().await;
///         draining.hand_over().await;
///     })
///     .await
/// # }
/// ```
#[derive(Clone, Default)]
pub struct Shutdown {
    inner: Arc<Inner>,
}

#[derive(Default)]
struct Inner {
    draining: CancellationToken,
    /// When it was triggered.
    since: OnceLock<Instant>,
    /// The routers it drains (their legacy sessions to save).
    states: Mutex<Vec<Weak<AppState>>>,
    /// Set once the sessions are saved.
    handed_over: tokio::sync::OnceCell<()>,
}

impl fmt::Debug for Shutdown {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Shutdown")
            .field("draining", &self.is_draining())
            .finish_non_exhaustive()
    }
}

impl Shutdown {
    /// A handle not triggered yet.
    pub fn new() -> Self {
        Shutdown::default()
    }

    /// Starts draining (a second call does nothing): readiness turns false, `GET` streams
    /// end with a retry hint, [`serve`](super::serve) stops accepting (after
    /// [`HttpConfig::drain_delay`](super::HttpConfig::drain_delay)), and the bound of calls
    /// in flight starts.
    pub fn trigger(&self) {
        self.inner.since.get_or_init(Instant::now);
        self.inner.draining.cancel();
    }

    /// Whether [`trigger`](Self::trigger) was called.
    pub fn is_draining(&self) -> bool {
        // Set by `trigger` before the token is cancelled, and read without a lock: every
        // connection's task asks on each poll (issue #41).
        self.inner.since.get().is_some()
    }

    /// Resolves once [`trigger`](Self::trigger) is called.
    pub async fn draining(&self) {
        self.inner.draining.cancelled().await;
    }

    /// Hands over what another replica needs, once, whoever calls it ([`serve`](super::serve)
    /// does); triggers the shutdown first:
    /// - saves the legacy sessions of every router it drains to their session store (those
    ///   with one; failures are logged);
    /// - waits for the tasks their registries run to end, for at most
    ///   [`HttpConfig::drain_timeout`](super::HttpConfig::drain_timeout) after the trigger,
    ///   and then releases those still under way: each is recorded `failed` (saying the
    ///   server shut down) at once, rather than when its lease in a shared task store runs
    ///   out, and its run is stopped. (A task's run is a future of this process: no other
    ///   replica can take it over; its requestor calls the tool again.)
    pub async fn hand_over(&self) {
        self.trigger();
        self.inner
            .handed_over
            .get_or_init(|| async {
                let states: Vec<Arc<AppState>> =
                    self.lock().iter().filter_map(Weak::upgrade).collect();
                for state in &states {
                    state.save_all_sessions().await;
                }
                self.release_tasks(&states).await;
            })
            .await;
    }

    /// The tasks each drained router's registry runs: awaited until they end, for at most
    /// that router's [`HttpConfig::drain_timeout`](super::HttpConfig::drain_timeout) after
    /// the trigger; those still under way are then released (recorded `failed`, their runs
    /// stopped).
    async fn release_tasks(&self, states: &[Arc<AppState>]) {
        for state in states {
            let tasks = state.registry.config().tasks.clone();
            let limit = state.config.drain_timeout;
            tokio::select! {
                () = tasks.idle() => continue,
                () = self.expired(limit) => {}
            }
            let released = tasks.release(&format!(
                "the server running this task shut down before it finished (its drain bound, HttpConfig::drain_timeout, is {limit:?}); call the tool again"
            )).await;
            tracing::warn!(
                released,
                "HTTP: drained: tasks still under way released as failed"
            );
        }
    }

    /// Resolves `limit` after the trigger: calls still running are then cancelled.
    pub(super) async fn expired(&self, limit: Duration) {
        self.draining().await;
        let since = *self.inner.since.get_or_init(Instant::now);
        tokio::time::sleep_until(since + limit).await;
    }

    /// Drains `state` too.
    pub(super) fn register(&self, state: &Arc<AppState>) {
        let mut states = self.lock();
        states.retain(|s| s.strong_count() > 0);
        states.push(Arc::downgrade(state));
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Weak<AppState>>> {
        self.inner.states.lock_unpoisoned()
    }
}

/// The answer of a call still running `limit` after the shutdown began (it is cancelled).
pub(super) fn cut_off(limit: Duration) -> ErrorObject {
    ErrorObject::new(
        ErrorCode::INTERNAL_ERROR,
        format!(
            "the server is shutting down and this call did not finish within its drain bound ({limit:?}, HttpConfig::drain_timeout): it was cancelled; call again, another replica answers"
        ),
    )
}
