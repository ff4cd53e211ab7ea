//! Quotas per caller: [`QuotaLayer`], a [layer](crate::layer) that limits how often each
//! caller may make requests, by token bucket.
//!
//! Each caller has a bucket of [`Quota::burst`] tokens, refilled at the quota's rate; a
//! request takes one token, and a request that finds none is refused before it runs:
//!
//! - on the wire (both eras) with the JSON-RPC error [`RATE_LIMITED`] (`-32029`), whose `data`
//!   says when to try again: `retryAfter` in whole seconds (rounded up, at least 1: the
//!   number HTTP's `Retry-After` carries) and `retryAfterMs` in milliseconds;
//! - over Streamable HTTP, for a 2026-07-28 (stateless) request, with status `429 Too Many
//!   Requests` and a `Retry-After` header. A legacy (2025-xx) session's reply stays `200`
//!   with the error inside, as every other error of a session's request does: legacy clients
//!   treat a non-`200` reply as a transport failure and would lose the error and its hint;
//! - in-process, a tool's caller gets [`CallError::Rejected`](crate::CallError::Rejected)
//!   holding that error (a prompt's, [`GetPromptError::Rejected`](crate::GetPromptError)
//!   and so on); [`retry_after`] reads the hint back from it.
//!
//! **Who shares a bucket.** Callers are told apart by [`Caller::owner`]: an authenticated
//! principal by its subject (however many sessions or tokens it uses), a legacy session
//! without a principal by its id. Anonymous callers cannot be told apart, so they share
//! **one** bucket: anonymous traffic is limited as a whole, by [`QuotaLayer::anonymous`]'s
//! quota (by default the same as one caller's). A client can open new legacy sessions to get
//! new buckets; where sessions are unauthenticated, [`QuotaLayer::sessions_as_anonymous`]
//! puts them in the anonymous bucket instead.
//!
//! **What a bucket covers** is the layer's [`Scope`]: all of a caller's requests, its
//! requests to one server, or to one item (one tool, prompt, resource, completion reference
//! or skill). Every request kind the layers see is counted unless [`QuotaLayer::kinds`]
//! narrows it. Several quota layers may be stacked (say, a per-server one and a tighter one
//! for one costly tool, with [`QuotaLayer::only`]); give each its own
//! [`name`](QuotaLayer::named) so their buckets stay apart.
//!
//! **Where buckets live.** In memory by default, in one map behind one mutex: a request costs
//! one hash lookup under that mutex (and the key's formatting). Memory is bounded: a bucket
//! that has refilled to its whole burst is the same as none and is dropped by the next sweep
//! (run when the map has doubled since the last one), and past
//! [`max_buckets`](QuotaLayer::max_buckets) (default 100 000) the longest idle go first.
//! Replicas share buckets through a [`BucketStore`]: `replicas::RedisBuckets` (feature
//! `redis`) takes a token in one Lua script on Redis's clock. While the store fails, the
//! layer fails [`Outage::Open`] (requests run, unlimited, with a warning) or
//! [`Outage::Closed`] (requests are refused with [`RATE_LIMITED`], retry after 1 s), as the
//! operator chose.
//!
//! ```
//! use std::time::Duration;
//! use mcp_registry::quota::{self, Quota, QuotaLayer, Scope};
//! use mcp_registry::{CallError, CallOptions, Caller, Principal, Registry, Server, Tool};
//! use serde_json::json;
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! # let search = Tool::new("search", "Search", json!({"type": "object"}), |_| async { "found" }).unwrap();
//! let registry = Registry::builder()
//!     .server(Server::new("s", None, [search]).unwrap())
//!     // Two calls at once, then one a second; per caller and per tool.
//!     .layer(QuotaLayer::new(Quota::per_second(1).burst(2)).scope(Scope::Item))
//!     .build();
//! let ada = CallOptions::new().caller(Caller::principal_of(Principal::new("ada")));
//! for _ in 0..2 {
//!     registry.call_tool_by_name("search", json!({})).options(ada.clone()).await.unwrap();
//! }
//! let refused = registry.call_tool_by_name("search", json!({})).options(ada).await.unwrap_err();
//! let CallError::Rejected { error, .. } = &refused else { panic!("{refused}") };
//! assert_eq!(error.code, quota::RATE_LIMITED);
//! let wait = quota::retry_after(error).unwrap();
//! assert!(wait > Duration::ZERO && wait <= Duration::from_secs(1));
//! // Another caller has a bucket of its own.
//! registry.call_tool_by_name("search", json!({})).await.unwrap();
//! # }
//! ```

mod memory;

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::layer::{Layer, Next, Request, RequestKind, Response};
use crate::protocol::{ErrorCode, ErrorObject};
use crate::tool::{BoxFuture, Caller};
use memory::MemoryBuckets;

/// The JSON-RPC error code of a request refused by a quota: `-32029`, the code MCP gateways
/// (ToolHive) answer rate-limited calls with.
pub const RATE_LIMITED: ErrorCode = ErrorCode(-32029);

/// How long a caller refused while the bucket store is down ([`Outage::Closed`]) is told to
/// wait.
const OUTAGE_RETRY: Duration = Duration::from_secs(1);
/// The default cap on in-memory buckets.
const DEFAULT_MAX_BUCKETS: usize = 100_000;
/// The bucket key of anonymous callers (owner keys start `sub:` or `session:`).
const ANONYMOUS: &str = "anonymous";

/// A token bucket's size and refill rate: `burst` requests at once, then `rate` a second.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Quota {
    /// Tokens added a second.
    rate: f64,
    /// The most tokens the bucket holds.
    burst: u32,
}

impl Quota {
    /// `n` requests a second (at least 1), with a burst of `n`.
    pub fn per_second(n: u32) -> Self {
        Self::per(n, Duration::from_secs(1))
    }

    /// `n` requests a minute (at least 1), with a burst of `n`.
    pub fn per_minute(n: u32) -> Self {
        Self::per(n, Duration::from_secs(60))
    }

    /// `n` requests (at least 1) every `period` (at least a microsecond), with a burst of
    /// `n`.
    pub fn per(n: u32, period: Duration) -> Self {
        let n = n.max(1);
        let period = period.max(Duration::from_micros(1));
        Quota {
            rate: f64::from(n) / period.as_secs_f64(),
            burst: n,
        }
    }

    /// The most requests at once (at least 1): the bucket's size.
    pub fn burst(mut self, burst: u32) -> Self {
        self.burst = burst.max(1);
        self
    }

    /// The tokens added a second.
    pub fn rate_per_second(&self) -> f64 {
        self.rate
    }

    /// The bucket's size.
    pub fn burst_size(&self) -> u32 {
        self.burst
    }

    /// How long an empty bucket takes to fill: after that long idle, a bucket is the same
    /// as none (a store may forget it).
    pub fn refill_time(&self) -> Duration {
        Duration::from_secs_f64(f64::from(self.burst) / self.rate)
    }
}

/// What one bucket covers, for one caller.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Scope {
    /// All the caller's requests, to every server.
    #[default]
    Caller,
    /// The caller's requests to one server.
    Server,
    /// The caller's requests to one item of one server: a tool, a prompt, a resource's URI,
    /// a completion's reference or a skill (of one [`RequestKind`]).
    Item,
}

/// What a layer with a shared [`BucketStore`] does while the store fails.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Outage {
    /// Requests run, unlimited, and a warning is logged: the server stays up, without
    /// quotas.
    Open,
    /// Requests are refused with [`RATE_LIMITED`] (retry after 1 s): no request runs
    /// unmetered.
    Closed,
}

/// The outcome of taking a token.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Take {
    /// A token was taken: the request runs.
    Granted,
    /// The bucket is empty: the next token comes after `retry_after`.
    Denied {
        /// How long until the bucket holds a token again.
        retry_after: Duration,
    },
}

/// A bucket store failed (it could not be reached, or answered something else).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the quota's bucket store failed: {reason}")]
pub struct BucketStoreError {
    reason: String,
}

impl BucketStoreError {
    /// The error, saying why.
    pub fn new(reason: impl Into<String>) -> Self {
        BucketStoreError {
            reason: reason.into(),
        }
    }
}

/// Where the buckets of a [`QuotaLayer`] live when replicas share them (see
/// `replicas::RedisBuckets`, feature `redis`).
pub trait BucketStore: Send + Sync + 'static {
    /// Takes one token from the bucket `key` sized and refilled by `quota`, as one atomic
    /// step (a bucket not seen before, or idle for [`Quota::refill_time`], is full).
    fn take<'a>(
        &'a self,
        key: &'a str,
        quota: Quota,
    ) -> BoxFuture<'a, Result<Take, BucketStoreError>>;
}

/// The predicate of [`QuotaLayer::only`].
type Counted = dyn Fn(&Request) -> bool + Send + Sync;

enum Buckets {
    Memory(MemoryBuckets),
    Shared {
        store: Arc<dyn BucketStore>,
        outage: Outage,
    },
}

/// A [`Layer`] limiting each caller's requests by token bucket: see the
/// [module docs](self). Install it with [`RegistryBuilder::layer`](crate::RegistryBuilder::layer).
pub struct QuotaLayer {
    quota: Quota,
    anonymous: Quota,
    scope: Scope,
    name: Arc<str>,
    /// The kinds counted, by bit (`1 << kind_bit(kind)`).
    kinds: u8,
    only: Option<Arc<Counted>>,
    sessions_as_anonymous: bool,
    buckets: Buckets,
}

impl fmt::Debug for QuotaLayer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("QuotaLayer")
            .field("name", &self.name)
            .field("quota", &self.quota)
            .field("anonymous", &self.anonymous)
            .field("scope", &self.scope)
            .field("shared", &matches!(self.buckets, Buckets::Shared { .. }))
            .finish_non_exhaustive()
    }
}

fn kind_bit(kind: RequestKind) -> u8 {
    match kind {
        RequestKind::Tool => 1,
        RequestKind::Prompt => 2,
        RequestKind::Resource => 4,
        RequestKind::Completion => 8,
        RequestKind::Skill => 16,
    }
}

impl QuotaLayer {
    /// `quota` for each caller, over all its requests ([`Scope::Caller`]), every kind
    /// counted, buckets in memory.
    pub fn new(quota: Quota) -> Self {
        QuotaLayer {
            quota,
            anonymous: quota,
            scope: Scope::Caller,
            name: Arc::from("quota"),
            kinds: u8::MAX,
            only: None,
            sessions_as_anonymous: false,
            buckets: Buckets::Memory(MemoryBuckets::new(DEFAULT_MAX_BUCKETS)),
        }
    }

    /// What one bucket covers (default [`Scope::Caller`]).
    pub fn scope(mut self, scope: Scope) -> Self {
        self.scope = scope;
        self
    }

    /// The quota all anonymous callers share, as one bucket (default: one caller's quota).
    pub fn anonymous(mut self, quota: Quota) -> Self {
        self.anonymous = quota;
        self
    }

    /// Legacy sessions without a principal share the anonymous bucket instead of having one
    /// each: a client cannot escape its limit by opening new sessions.
    pub fn sessions_as_anonymous(mut self) -> Self {
        self.sessions_as_anonymous = true;
        self
    }

    /// Counts only requests of these kinds (default: all); the others pass untouched.
    pub fn kinds(mut self, kinds: impl IntoIterator<Item = RequestKind>) -> Self {
        self.kinds = kinds
            .into_iter()
            .fold(0, |bits, kind| bits | kind_bit(kind));
        self
    }

    /// Counts only the requests `counted` accepts (say, one costly tool); the others pass
    /// untouched.
    pub fn only(mut self, counted: impl Fn(&Request) -> bool + Send + Sync + 'static) -> Self {
        self.only = Some(Arc::new(counted));
        self
    }

    /// The name the layer's bucket keys start with (default `quota`): stacked quota layers
    /// sharing a store need names of their own.
    pub fn named(mut self, name: &str) -> Self {
        self.name = Arc::from(name);
        self
    }

    /// The most buckets kept in memory (default 100 000): past it, the longest idle are
    /// forgotten (their callers start again with a whole burst). Buckets that have refilled
    /// are forgotten anyway.
    pub fn max_buckets(mut self, max: usize) -> Self {
        if let Buckets::Memory(_) = self.buckets {
            self.buckets = Buckets::Memory(MemoryBuckets::new(max));
        }
        self
    }

    /// Keeps the buckets in `store`, shared by every replica using it, doing `outage`
    /// while the store fails.
    pub fn store(mut self, store: impl BucketStore, outage: Outage) -> Self {
        self.buckets = Buckets::Shared {
            store: Arc::new(store),
            outage,
        };
        self
    }

    /// Whether `request` is counted.
    fn counts(&self, request: &Request) -> bool {
        self.kinds & kind_bit(request.kind()) != 0 && self.only.as_ref().is_none_or(|f| f(request))
    }

    /// The bucket of `request` and its quota. Server and item names are length-prefixed,
    /// so no two (server, item, caller) triples share a key.
    fn key(&self, request: &Request) -> (String, Quota) {
        let caller = request.context().caller();
        let (owner, quota) = match caller {
            Caller::Session(_) if self.sessions_as_anonymous => (None, self.anonymous),
            _ => match caller.owner() {
                Some(owner) => (Some(owner), self.quota),
                None => (None, self.anonymous),
            },
        };
        let who = owner.as_deref().unwrap_or(ANONYMOUS);
        let name = &self.name;
        let key = match self.scope {
            Scope::Caller => format!("{name}:c:{who}"),
            Scope::Server => {
                let server = request.server();
                format!("{name}:s:{}:{server}:{who}", server.len())
            }
            Scope::Item => {
                let (server, item) = (request.server(), request.name());
                let kind = request.kind();
                format!(
                    "{name}:i:{kind}:{}:{server}:{}:{item}:{who}",
                    server.len(),
                    item.len()
                )
            }
        };
        (key, quota)
    }
}

impl Layer for QuotaLayer {
    fn call<'a>(&'a self, request: Request, next: Next) -> BoxFuture<'a, Response> {
        if !self.counts(&request) {
            return next.run(request);
        }
        let (key, quota) = self.key(&request);
        match &self.buckets {
            Buckets::Memory(buckets) => {
                match buckets.take(&key, quota, tokio::time::Instant::now()) {
                    Take::Granted => next.run(request),
                    Take::Denied { retry_after } => {
                        Box::pin(std::future::ready(refuse(&request, retry_after, None)))
                    }
                }
            }
            Buckets::Shared { store, outage } => Box::pin(async move {
                match store.take(&key, quota).await {
                    Ok(Take::Granted) => next.run(request).await,
                    Ok(Take::Denied { retry_after }) => refuse(&request, retry_after, None),
                    Err(error) => match outage {
                        Outage::Open => {
                            tracing::warn!(%error, "quota not applied: its bucket store failed (failing open)");
                            next.run(request).await
                        }
                        Outage::Closed => {
                            tracing::warn!(%error, "request refused: the quota's bucket store failed (failing closed)");
                            refuse(&request, OUTAGE_RETRY, Some(&error))
                        }
                    },
                }
            }),
        }
    }
}

/// The `data` of a [`RATE_LIMITED`] error.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct RateLimitedData {
    /// Whole seconds, rounded up, at least 1.
    retry_after: Option<u64>,
    /// Milliseconds, rounded up.
    retry_after_ms: Option<u64>,
}

/// `d` in whole seconds, rounded up, at least 1: HTTP `Retry-After`'s number.
fn whole_seconds(d: Duration) -> u64 {
    u64::try_from(d.as_millis().div_ceil(1000))
        .unwrap_or(u64::MAX)
        .max(1)
}

/// The refusal of `request`, to try again after `retry_after`.
fn refuse(request: &Request, retry_after: Duration, outage: Option<&BucketStoreError>) -> Response {
    let seconds = whole_seconds(retry_after);
    let message = match outage {
        None => format!(
            "rate limit exceeded for {} {:?}: try again in {seconds} s",
            request.kind(),
            request.name()
        ),
        Some(error) => {
            format!("{error}; refused rather than run unmetered: try again in {seconds} s")
        }
    };
    let data = RateLimitedData {
        retry_after: Some(seconds),
        retry_after_ms: Some(
            u64::try_from(retry_after.as_micros().div_ceil(1000)).unwrap_or(u64::MAX),
        ),
    };
    let error = ErrorObject::new(RATE_LIMITED, message);
    let error = match serde_json::to_value(&data) {
        Ok(data) => error.with_data(data),
        Err(_) => error,
    };
    request.reject(error)
}

/// How long a [`RATE_LIMITED`] error says to wait (its `data.retryAfterMs`, else
/// `data.retryAfter` seconds); `None` for any other error, or one without the hint.
pub fn retry_after(error: &ErrorObject) -> Option<Duration> {
    if error.code != RATE_LIMITED {
        return None;
    }
    let data = RateLimitedData::deserialize(error.data.as_ref()?).ok()?;
    match (data.retry_after_ms, data.retry_after) {
        (Some(ms), _) => Some(Duration::from_millis(ms)),
        (None, Some(seconds)) => Some(Duration::from_secs(seconds)),
        (None, None) => None,
    }
}

/// The `Retry-After` seconds of a [`RATE_LIMITED`] error, for transports with a status.
#[cfg(feature = "http")]
pub(crate) fn retry_after_seconds(error: &ErrorObject) -> Option<u64> {
    retry_after(error).map(whole_seconds)
}
