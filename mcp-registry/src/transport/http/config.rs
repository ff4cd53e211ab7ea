//! [`HttpConfig`]: the transport's settings, and the Host and Origin rules they set.

use std::sync::Arc;
use std::time::Duration;

use super::auth::Auth;
use super::drain::Shutdown;
use super::shared::SessionStore;

/// Settings of the HTTP transport.
///
/// ```
/// use mcp_registry::transport::http::HttpConfig;
/// let config = HttpConfig::default()
///     .allowed_origins(["https://app.example.com"])
///     .max_body_bytes(1 << 20);
/// ```
#[derive(Debug, Clone)]
pub struct HttpConfig {
    pub(super) path: String,
    pub(super) allowed_origins: Vec<String>,
    pub(super) allow_localhost: bool,
    pub(super) allowed_hosts: Vec<String>,
    pub(super) check_host: bool,
    pub(super) max_body_bytes: usize,
    pub(super) legacy_sessions: bool,
    pub(super) max_sessions: usize,
    pub(super) session_idle_timeout: Duration,
    pub(super) auth: Option<Auth>,
    pub(super) header_read_timeout: Duration,
    pub(super) body_read_timeout: Duration,
    pub(super) idle_timeout: Duration,
    pub(super) write_timeout: Duration,
    pub(super) max_connections: usize,
    pub(super) session_store: Option<Arc<dyn SessionStore>>,
    pub(super) liveness_path: Option<String>,
    pub(super) readiness_path: Option<String>,
    pub(super) shutdown: Shutdown,
    pub(super) drain_timeout: Duration,
    pub(super) resume_buffer: usize,
}

impl Default for HttpConfig {
    fn default() -> Self {
        HttpConfig {
            path: "/mcp".to_owned(),
            allowed_origins: Vec::new(),
            allow_localhost: true,
            allowed_hosts: Vec::new(),
            check_host: true,
            max_body_bytes: 4 * 1024 * 1024,
            legacy_sessions: true,
            max_sessions: 10_000,
            session_idle_timeout: Duration::from_secs(30 * 60),
            auth: None,
            header_read_timeout: Duration::from_secs(10),
            body_read_timeout: Duration::from_secs(30),
            idle_timeout: Duration::from_secs(60),
            write_timeout: Duration::from_secs(60),
            max_connections: 1024,
            session_store: None,
            liveness_path: Some("/healthz".to_owned()),
            readiness_path: Some("/readyz".to_owned()),
            shutdown: Shutdown::new(),
            drain_timeout: Duration::from_secs(30),
            resume_buffer: 100,
        }
    }
}

impl HttpConfig {
    /// The endpoint path (default `/mcp`).
    pub fn path(mut self, path: impl Into<String>) -> Self {
        self.path = path.into();
        self
    }

    /// Origins allowed besides localhost, compared exactly (`scheme://host[:port]`).
    pub fn allowed_origins<S: Into<String>>(
        mut self,
        origins: impl IntoIterator<Item = S>,
    ) -> Self {
        self.allowed_origins = origins.into_iter().map(Into::into).collect();
        self
    }

    /// Whether `http(s)://localhost`, `127.0.0.1` and `[::1]` origins are allowed (default yes).
    pub fn allow_localhost(mut self, yes: bool) -> Self {
        self.allow_localhost = yes;
        self
    }

    /// Hosts allowed in the `Host` header besides the loopback names (`localhost`,
    /// `127.0.0.1`, `[::1]`, always allowed), compared without case. A name alone allows any
    /// port; `name:port` allows that port only. Any other host gets `403`: a page that
    /// rebinds its own domain name to 127.0.0.1 still sends that name as `Host`.
    ///
    /// ```
    /// use mcp_registry::transport::http::HttpConfig;
    /// // Behind a proxy that forwards `Host: mcp.example.com`.
    /// let config = HttpConfig::default().allowed_hosts(["mcp.example.com"]);
    /// ```
    pub fn allowed_hosts<S: Into<String>>(mut self, hosts: impl IntoIterator<Item = S>) -> Self {
        self.allowed_hosts = hosts.into_iter().map(Into::into).collect();
        self
    }

    /// Whether the `Host` header is checked against DNS rebinding (default yes, see
    /// [`allowed_hosts`](Self::allowed_hosts)). Turn it off only when something in front of
    /// the server (a reverse proxy) checks the host already.
    pub fn check_host(mut self, yes: bool) -> Self {
        self.check_host = yes;
        self
    }

    /// The largest accepted request body (default 4 MiB); larger ones get `413`.
    pub fn max_body_bytes(mut self, bytes: usize) -> Self {
        self.max_body_bytes = bytes;
        self
    }

    /// Whether legacy clients may open `initialize` sessions (default yes). Without them the
    /// endpoint is purely stateless (2026-07-28 only).
    pub fn legacy_sessions(mut self, yes: bool) -> Self {
        self.legacy_sessions = yes;
        self
    }

    /// The most legacy sessions kept at once (default 10,000); `initialize` beyond that gets
    /// `503`.
    pub fn max_sessions(mut self, n: usize) -> Self {
        self.max_sessions = n;
        self
    }

    /// How long a legacy session may stay unused before it is ended (default 30 minutes); a
    /// client coming back later gets `404` and initializes again, as the spec prescribes.
    pub fn session_idle_timeout(mut self, idle: Duration) -> Self {
        self.session_idle_timeout = idle;
        self
    }

    /// Protects the endpoint with OAuth 2.1 bearer tokens (MCP authorization): every `POST`,
    /// `GET` and `DELETE` needs a valid token for [`Auth`]'s resource, and the protected
    /// resource metadata is served at the well-known paths. See [`auth`](super::auth).
    pub fn auth(mut self, auth: Auth) -> Self {
        self.auth = Some(auth);
        self
    }

    /// How long a request's head (request line and headers) may take to arrive, from its
    /// first byte (default 10 s); a slower connection is closed. Applies to [`serve`]; a
    /// server of your own needs its own limit (see [`router`]).
    ///
    /// [`serve`]: super::serve
    /// [`router`]: super::router
    pub fn header_read_timeout(mut self, limit: Duration) -> Self {
        self.header_read_timeout = limit;
        self
    }

    /// How long a request's body may take to arrive whole (default 30 s); a slower body is
    /// refused with `408`. Enforced by the [`router`](super::router) itself, so wherever it
    /// is mounted.
    pub fn body_read_timeout(mut self, limit: Duration) -> Self {
        self.body_read_timeout = limit;
        self
    }

    /// How long a connection may stay open with no request on it (default 60 s): from when
    /// it opens, or its last response was written, to the first byte of its next request.
    /// Silent connections are then closed. Open streams (a call's SSE reply, a session's
    /// `GET`) are requests in progress, not idle. Applies to [`serve`](super::serve).
    pub fn idle_timeout(mut self, limit: Duration) -> Self {
        self.idle_timeout = limit;
        self
    }

    /// How long a write to a client may stay blocked (default 60 s): a client that reads
    /// nothing of a response or an SSE stream while more waits for it is then disconnected,
    /// the reason logged (what waits is bounded meanwhile: see
    /// [`OUTBOX_CAPACITY`](crate::dispatch::OUTBOX_CAPACITY)). Applies to
    /// [`serve`](super::serve).
    pub fn write_timeout(mut self, limit: Duration) -> Self {
        self.write_timeout = limit;
        self
    }

    /// The most connections [`serve`](super::serve) serves at once (default 1,024); past it,
    /// new connections wait in the listen backlog until one closes. Each takes a file
    /// descriptor: raise the process's limit (`ulimit -n`) along with this.
    pub fn max_connections(mut self, n: usize) -> Self {
        self.max_connections = n.max(1);
        self
    }

    /// Keeps legacy sessions in `store`, shared by every replica of the server (with the
    /// feature `redis`: `mcp_registry::replicas::RedisSessions`): a session opened on one
    /// replica is served by any other (rebuilt from the store on its first request there),
    /// `DELETE` on any ends it on all, and it expires after
    /// [`session_idle_timeout`](Self::session_idle_timeout) unused on all. Each legacy
    /// request then needs the store: while it does not answer, they get `503` (stateless
    /// 2026-07-28 requests are unaffected). Without a store (the default), a session lives in
    /// the replica that opened it.
    ///
    /// For the sessions' streams to hear the changes made on other replicas, give the
    /// registry a change bus too ([`RegistryBuilder::change_bus`](crate::RegistryBuilder::change_bus)).
    pub fn session_store(mut self, store: impl SessionStore + 'static) -> Self {
        self.session_store = Some(Arc::new(store));
        self
    }

    /// The paths of the health routes (defaults `/healthz` and `/readyz`), served by
    /// [`router`](super::router) beside the endpoint with `GET`, without authorization and
    /// without the Host and Origin checks (a load balancer probes by address):
    /// - **liveness**: `200` while the process serves;
    /// - **readiness**: `200` once an in-process `tools/list` answers through the same
    ///   dispatch as a client's and the stores the server depends on answer (the
    ///   [`session_store`](Self::session_store) and the registry's task store); `503`
    ///   naming the failed check otherwise, and `503` `"draining"` once a
    ///   [`Shutdown`] has begun. See [`health`](super::health) for the body.
    ///
    /// ```
    /// use mcp_registry::transport::http::HttpConfig;
    /// let config = HttpConfig::default().health_paths("/livez", "/ready");
    /// ```
    pub fn health_paths(
        mut self,
        liveness: impl Into<String>,
        readiness: impl Into<String>,
    ) -> Self {
        self.liveness_path = Some(liveness.into());
        self.readiness_path = Some(readiness.into());
        self
    }

    /// Serves no health routes (when the paths are taken by something else).
    pub fn no_health_routes(mut self) -> Self {
        self.liveness_path = None;
        self.readiness_path = None;
        self
    }

    /// The [`Shutdown`] handle that drains this transport (default: a handle of its own,
    /// which nothing triggers). Give the same handle to every router of the process and
    /// trigger it on `SIGTERM`; see [`Shutdown`].
    pub fn shutdown(mut self, shutdown: Shutdown) -> Self {
        self.shutdown = shutdown;
        self
    }

    /// How many events of each SSE stream of a legacy session are kept for resumption
    /// (default 100; `0` turns resumption off, and events carry no id).
    ///
    /// Every event of a legacy session's POST and GET streams carries an id naming its
    /// stream, and is kept (before it is sent) among the last `events` of its stream: in
    /// memory (at most 16 streams per session, the oldest forgotten first), or in the
    /// [`session_store`](Self::session_store) when it keeps events (Redis), for the
    /// session's idle limit, so that a stream resumes on another replica. A `GET` with
    /// `Last-Event-ID` replays what followed that event on its stream, then goes on live
    /// (a POST stream: up to its reply). An id older than the events kept, or of a stream no
    /// longer kept (or another session's), is refused with `410 Gone` and a JSON-RPC error
    /// saying the events are lost: nothing is skipped silently. An id of no event the
    /// stream sent is `400`.
    ///
    /// Memory, in the worst case, is `16 × events` messages per session in memory (none
    /// with a store that keeps events); lower it for many sessions with chatty calls.
    pub fn resume_buffer(mut self, events: usize) -> Self {
        self.resume_buffer = events;
        self
    }

    /// How long calls in flight may still run once a [`Shutdown`] is triggered (default
    /// 30 s): past it, each is cancelled and answered with an error saying the server shut
    /// down (call again: another replica answers).
    pub fn drain_timeout(mut self, limit: Duration) -> Self {
        self.drain_timeout = limit;
        self
    }

    /// Whether a request for `host` (`name[:port]`) may be served.
    pub(super) fn host_allowed(&self, host: &str) -> bool {
        if !self.check_host {
            return true;
        }
        let name = match host.find(']') {
            Some(end) if host.starts_with('[') => &host[..=end],
            _ => host.split(':').next().unwrap_or_default(),
        };
        let loopback = ["localhost", "127.0.0.1", "[::1]"];
        loopback
            .iter()
            .any(|allowed| name.eq_ignore_ascii_case(allowed))
            || self.allowed_hosts.iter().any(|allowed| {
                allowed.eq_ignore_ascii_case(host) || allowed.eq_ignore_ascii_case(name)
            })
    }

    pub(super) fn origin_allowed(&self, origin: &str) -> bool {
        if self.allowed_origins.iter().any(|o| o == origin) {
            return true;
        }
        if !self.allow_localhost {
            return false;
        }
        let Some(rest) = origin
            .strip_prefix("http://")
            .or_else(|| origin.strip_prefix("https://"))
        else {
            return false;
        };
        let host = if let Some(v6) = rest.strip_prefix('[') {
            v6.split(']').next().map(|h| format!("[{h}]"))
        } else {
            rest.split(':').next().map(str::to_owned)
        };
        matches!(host.as_deref(), Some("localhost" | "127.0.0.1" | "[::1]"))
    }
}
