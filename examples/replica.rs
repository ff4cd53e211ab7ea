//! One replica of a server meant to run as several behind a load balancer (see the replicas
//! guide, `mcp_registry::guide::replicas`): Streamable HTTP, configured from the environment.
//!
//! ```text
//! export MCP_REQUEST_STATE_KEYS=$(openssl rand -base64 32)   # the same on every replica
//! PORT=3101 REPLICA_NAME=r1 cargo run --example replica --features redis,http &
//! PORT=3102 REPLICA_NAME=r2 cargo run --example replica --features redis,http &
//! haproxy -f tests/e2e/replicas/haproxy.cfg                  # or any round-robin balancer
//! ```
//!
//! Environment:
//! * `PORT` (default 3000): serves `http://127.0.0.1:PORT/mcp`;
//! * `REPLICA_NAME` (default `replica-PORT`): shown in the tools' answers, so a client sees
//!   which replica served it;
//! * `MCP_REQUEST_STATE_KEYS`: the request-state keys, base64, comma-separated, the signing
//!   key first (`RequestStateKeys::from_env`); or `MCP_REQUEST_STATE_KEYS_FILE`, a file
//!   holding them, read again on `SIGHUP` (how the keys are rotated without a restart: write
//!   `OLD,NEW` and signal every replica, then `NEW,OLD`, then, a TTL later, `NEW`);
//! * `REDIS_URL` (optional): the Redis the replicas share state through;
//! * `DRAIN_TIMEOUT_MS` (default 30000): on `SIGTERM` (or Ctrl-C) the replica drains
//!   (`transport::http::Shutdown`): `/readyz` answers `503`, legacy `GET` streams end with
//!   a retry hint, it stops accepting (after `DRAIN_DELAY_MS`), legacy sessions are saved to
//!   Redis, calls in flight get this long (counted from the signal) to finish, and the tasks
//!   still under way then are released; then it exits. `/healthz` and `/readyz` are its
//!   health routes;
//! * `DRAIN_DELAY_MS` (default 0): how long it keeps accepting after `SIGTERM`, answering
//!   `Connection: close`, while the load balancer's health check takes it out
//!   (`HttpConfig::drain_delay`).
//!
//! Tools: `whoami` (the replica and its key fingerprints), `confirm_order` (asks the user
//! first: a 2026-07-28 multi round-trip request, whose retry may land on another replica),
//! `slow_report` (slow, runs as a task when the client can follow one), `add_note` (adds a
//! resource: the resource list changes), `shared_state` (pings Redis: fails clearly while
//! Redis is down, recovers when it is back). `tests/replicas_lb.rs` and
//! `tests/e2e/replicas_client.py` run three of these behind HAProxy.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use mcp_registry::replicas::{Redis, RedisBus, RedisSessions, RedisTaskStore};
use mcp_registry::tool::{Elicitation, RequestStateKeys};
use mcp_registry::transport::http::{HttpConfig, Shutdown};
use mcp_registry::{Registry, Resource, Server, ToolContext, ToolError, mcp_tool};
use schemars::JsonSchema;
use serde::Deserialize;

/// What the tools share: which replica this is, its keys, Redis, the registry (to change its
/// lists), the notes added so far.
struct Replica {
    name: String,
    keys: RequestStateKeys,
    redis: Option<Redis>,
    registry: OnceLock<Registry>,
    notes: Mutex<Vec<String>>,
}

fn replica(ctx: &ToolContext) -> Result<&Replica, ToolError> {
    ctx.get::<Arc<Replica>>()
        .map(Arc::as_ref)
        .ok_or_else(|| ToolError::Failed("the replica's state is not attached".to_owned()))
}

/// Says which replica answered, and the fingerprints of its request-state keys (the signing
/// key's first).
#[mcp_tool(read_only)]
async fn whoami(ctx: ToolContext) -> Result<String, ToolError> {
    let me = replica(&ctx)?;
    Ok(format!("{} {}", me.name, me.keys.fingerprints().join(",")))
}

/// What `confirm_order` asks.
#[derive(Deserialize, JsonSchema)]
struct Confirm {
    /// Place the order.
    confirm: bool,
}

/// Places an order for `item` once the user confirms. The question names the replica that
/// asked, the answer the one that finished.
///
/// # Arguments
/// * `item` - what to order
#[mcp_tool]
async fn confirm_order(ctx: ToolContext, item: String) -> Result<String, ToolError> {
    let me = replica(&ctx)?;
    let question = format!("{} asks: order {item}?", me.name);
    Ok(match ctx.elicit::<Confirm>(question).await? {
        Elicitation::Accept(Confirm { confirm: true }) => {
            format!("ordered {item} (finished on {})", me.name)
        }
        _ => format!("no order for {item} (finished on {})", me.name),
    })
}

/// Writes a report, taking `ms` milliseconds (a task when the client can follow one).
///
/// # Arguments
/// * `ms` - how long the report takes, in milliseconds (at most 10 minutes)
#[mcp_tool(task = "optional")]
async fn slow_report(ctx: ToolContext, ms: u64) -> Result<String, ToolError> {
    let me = replica(&ctx)?;
    tokio::time::sleep(Duration::from_millis(ms.min(600_000))).await;
    Ok(format!("report of {ms} ms by {}", me.name))
}

/// Adds a note: a new `note://N` resource, so the resource list changes.
///
/// # Arguments
/// * `text` - the note
#[mcp_tool]
async fn add_note(ctx: ToolContext, text: String) -> Result<String, ToolError> {
    let me = replica(&ctx)?;
    let registry = me
        .registry
        .get()
        .ok_or_else(|| ToolError::Failed("the registry is not up yet".to_owned()))?;
    let notes = {
        let mut notes = me.notes.lock().unwrap_or_else(|e| e.into_inner());
        notes.push(text);
        notes.clone()
    };
    let count = notes.len();
    registry.register_server(server(&notes).map_err(ToolError::Failed)?);
    Ok(format!("note://{count} added on {}", me.name))
}

/// Pings the Redis the replicas share state through: fails with a clear error while it is
/// down or not configured.
#[mcp_tool(read_only)]
async fn shared_state(ctx: ToolContext) -> Result<String, ToolError> {
    let me = replica(&ctx)?;
    let redis = me
        .redis
        .as_ref()
        .ok_or_else(|| ToolError::Failed("no REDIS_URL: nothing is shared".to_owned()))?;
    redis
        .ping()
        .await
        .map_err(|e| ToolError::Failed(e.to_string()))?;
    Ok(format!("redis answers {}", me.name))
}

/// The `replica` server, with one resource per note.
fn server(notes: &[String]) -> Result<Server, String> {
    let resources = notes.iter().enumerate().map(|(i, text)| {
        let text = text.clone();
        Resource::builder(format!("note://{}", i + 1), format!("note-{}", i + 1))
            .mime_type("text/plain")
            .handler(move |_| {
                let text = text.clone();
                async move { text }
            })
    });
    Server::builder("replica")
        .version("1.0.0")
        .tools([
            whoami::tool(),
            confirm_order::tool(),
            slow_report::tool(),
            add_note::tool(),
            shared_state::tool(),
        ])
        .resources(
            resources
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| e.to_string())?,
        )
        .build()
        .map_err(|e| e.to_string())
}

/// The request-state keys: from the file `MCP_REQUEST_STATE_KEYS_FILE` when set, else from
/// `MCP_REQUEST_STATE_KEYS`.
fn load_keys() -> Result<RequestStateKeys, String> {
    match std::env::var("MCP_REQUEST_STATE_KEYS_FILE") {
        Ok(path) => {
            let text = std::fs::read_to_string(&path)
                .map_err(|e| format!("cannot read MCP_REQUEST_STATE_KEYS_FILE {path}: {e}"))?;
            RequestStateKeys::parse(&text).map_err(|e| format!("{path}: {e}"))
        }
        Err(_) => RequestStateKeys::from_env("MCP_REQUEST_STATE_KEYS").map_err(|e| e.to_string()),
    }
}

/// On `SIGHUP`, the keys are read again and replace the ring's (in one step: requests under
/// way keep the keys they started with). A file that does not read keeps the keys as they
/// were, and says why.
#[cfg(unix)]
fn reload_keys_on_sighup(keys: RequestStateKeys, name: String) -> std::io::Result<()> {
    use tokio::signal::unix::{SignalKind, signal};
    let mut hangups = signal(SignalKind::hangup())?;
    tokio::spawn(async move {
        while hangups.recv().await.is_some() {
            match load_keys() {
                Ok(new) => {
                    keys.replace(&new);
                    eprintln!("{name}: request-state keys now {:?}", keys.fingerprints());
                }
                Err(e) => eprintln!("{name}: keys kept as they were: {e}"),
            }
        }
    });
    Ok(())
}

#[cfg(not(unix))]
fn reload_keys_on_sighup(_: RequestStateKeys, _: String) -> std::io::Result<()> {
    Ok(())
}

/// On `SIGTERM` (how an orchestrator stops a replica) or Ctrl-C, `shutdown` is triggered:
/// the replica drains, and `serve` returns once it has.
fn drain_on_sigterm(shutdown: Shutdown, name: String) -> std::io::Result<()> {
    #[cfg(unix)]
    let mut terms = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
    tokio::spawn(async move {
        #[cfg(unix)]
        tokio::select! {
            _ = terms.recv() => {}
            _ = tokio::signal::ctrl_c() => {}
        }
        #[cfg(not(unix))]
        let _ = tokio::signal::ctrl_c().await;
        eprintln!("{name}: draining");
        shutdown.trigger();
    });
    Ok(())
}

fn env_or(name: &str, default: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| default.to_owned())
}

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let port: u16 = env_or("PORT", "3000")
        .parse()
        .map_err(|e| std::io::Error::other(format!("PORT is not a port number: {e}")))?;
    let name = env_or("REPLICA_NAME", &format!("replica-{port}"));
    let keys = load_keys().map_err(std::io::Error::other)?;
    let redis = match std::env::var("REDIS_URL") {
        Ok(url) => Some(
            Redis::new(&url)
                .map_err(std::io::Error::other)?
                .prefix("replica-example"),
        ),
        Err(_) => None,
    };
    let shared = Arc::new(Replica {
        name: name.clone(),
        keys: keys.clone(),
        redis: redis.clone(),
        registry: OnceLock::new(),
        notes: Mutex::default(),
    });

    let mut builder = Registry::builder()
        .request_state_keys(keys.clone())
        .extension(shared.clone());
    let drain_ms: u64 = env_or("DRAIN_TIMEOUT_MS", "30000")
        .parse()
        .map_err(|e| std::io::Error::other(format!("DRAIN_TIMEOUT_MS is not a number: {e}")))?;
    let delay_ms: u64 = env_or("DRAIN_DELAY_MS", "0")
        .parse()
        .map_err(|e| std::io::Error::other(format!("DRAIN_DELAY_MS is not a number: {e}")))?;
    let shutdown = Shutdown::new();
    let mut config = HttpConfig::default()
        .shutdown(shutdown.clone())
        .drain_delay(Duration::from_millis(delay_ms))
        .drain_timeout(Duration::from_millis(drain_ms));
    // The state shared through Redis: tasks any replica answers, list changes heard by every
    // replica's streams, and legacy sessions any replica serves.
    if let Some(redis) = &redis {
        let lease = env_or("TASK_LEASE_MS", "15000")
            .parse()
            .map_err(|e| std::io::Error::other(format!("TASK_LEASE_MS is not a number: {e}")))?;
        let tasks = RedisTaskStore::new(redis.clone()).lease(Duration::from_millis(lease));
        let bus = RedisBus::new(redis);
        builder = builder.task_store(tasks).change_bus(bus.clone());
        config = config.session_store(RedisSessions::new(&bus));
    }
    let registry = builder
        .server(server(&[]).map_err(std::io::Error::other)?)
        .build();
    let _ = shared.registry.set(registry.clone());

    reload_keys_on_sighup(keys.clone(), name.clone())?;
    drain_on_sigterm(shutdown, name.clone())?;
    let addr = SocketAddr::from(([127, 0, 0, 1], port));
    eprintln!(
        "{name}: serving http://{addr}/mcp, request-state keys {:?}, redis {}",
        keys.fingerprints(),
        redis
            .as_ref()
            .map_or("none".to_owned(), |r| format!("{r:?}")),
    );
    mcp_registry::transport::http::serve(registry, "replica", addr, config).await?;
    eprintln!("{name}: drained");
    Ok(())
}
