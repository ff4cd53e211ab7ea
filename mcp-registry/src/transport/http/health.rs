//! The health routes a load balancer or an orchestrator probes (paths set by
//! [`HttpConfig::health_paths`](super::HttpConfig::health_paths), defaults `/healthz` and
//! `/readyz`), with their bodies:
//!
//! - liveness, `GET /healthz`: `200` `{"status":"live"}` while the process serves;
//! - readiness, `GET /readyz`: `200` `{"status":"ready","checks":[...]}` once every check
//!   passes, `503` `{"status":"not_ready","checks":[...]}` naming the one that failed
//!   (`"ok": false`), and `503` `{"status":"draining","checks":[{"name":"draining",...}]}` once
//!   a [`Shutdown`](super::Shutdown) has begun.
//!
//! The readiness checks, each bounded by [`CHECK_TIMEOUT`]:
//! - `tools_list`: a `tools/list` answered in process, through the same dispatch (layers,
//!   filters, servers) as a client's request to this endpoint;
//! - `session_store`, when the endpoint has one
//!   ([`HttpConfig::session_store`](super::HttpConfig::session_store)): its
//!   [`health`](super::SessionStore::health) (a Redis `PING` for `RedisSessions`);
//! - `task_store`: the registry's task store's [`health`](crate::task::TaskStore::health)
//!   (a Redis `PING` for `RedisTaskStore`).
//!
//! The routes take no token and skip the Host and Origin checks (a probe comes by address);
//! their bodies say which check failed and nothing more: the reason goes to the log (a
//! warning).
//!
//! With HAProxy:
//!
//! ```text
//! backend mcp
//!     option httpchk GET /readyz
//!     http-check expect status 200
//!     server replica1 10.0.0.1:3000 check inter 2s fall 2 rise 2
//! ```

use std::sync::Arc;
use std::time::Duration;

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;
use serde::Serialize;

use super::sessions::AppState;
use super::text_response;

/// How long each readiness check may take before it counts as failed.
pub const CHECK_TIMEOUT: Duration = Duration::from_secs(5);

/// The in-process probe readiness sends through the dispatch.
const PROBE: &str = r#"{"jsonrpc":"2.0","id":"readiness","method":"tools/list"}"#;

/// The state a health route reports.
#[derive(Debug, Clone, Copy, Serialize)]
#[serde(rename_all = "snake_case")]
enum Status {
    Live,
    Ready,
    NotReady,
    Draining,
}

/// One readiness check and whether it passed.
#[derive(Debug, Serialize)]
struct Check {
    name: &'static str,
    ok: bool,
}

/// A health route's body.
#[derive(Debug, Serialize)]
struct Health {
    status: Status,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    checks: Vec<Check>,
}

fn reply(status: StatusCode, health: &Health) -> Response {
    let text = serde_json::to_string(health).unwrap_or_default();
    text_response(status, text)
}

/// Liveness: `200` while the process serves.
pub(super) async fn handle_live() -> Response {
    let health = Health {
        status: Status::Live,
        checks: Vec::new(),
    };
    reply(StatusCode::OK, &health)
}

/// Readiness: `200` when every check passes, `503` naming the failed one, or `"draining"`.
pub(super) async fn handle_ready(State(state): State<Arc<AppState>>) -> Response {
    if state.config.shutdown.is_draining() {
        let health = Health {
            status: Status::Draining,
            checks: vec![Check {
                name: "draining",
                ok: false,
            }],
        };
        return reply(StatusCode::SERVICE_UNAVAILABLE, &health);
    }
    let mut checks = vec![Check {
        name: "tools_list",
        ok: passed("tools_list", tools_list(&state)).await,
    }];
    if let Some(store) = state.store() {
        let ok = passed("session_store", async {
            store.health().await.map_err(|e| e.to_string())
        })
        .await;
        checks.push(Check {
            name: "session_store",
            ok,
        });
    }
    let tasks = state.registry.config().tasks.clone();
    let ok = passed("task_store", async move {
        tasks.store_health().await.map_err(|e| e.to_string())
    })
    .await;
    checks.push(Check {
        name: "task_store",
        ok,
    });
    let ready = checks.iter().all(|c| c.ok);
    let (code, status) = if ready {
        (StatusCode::OK, Status::Ready)
    } else {
        (StatusCode::SERVICE_UNAVAILABLE, Status::NotReady)
    };
    reply(code, &Health { status, checks })
}

/// `tools/list` answered through the dispatch, as a result.
async fn tools_list(state: &AppState) -> Result<(), String> {
    let reply = state
        .registry
        .handle_mcp_text(&state.server, PROBE)
        .await
        .ok_or("no reply")?;
    let reply: serde_json::Value = serde_json::from_str(&reply).map_err(|e| e.to_string())?;
    match reply.get("error") {
        None => Ok(()),
        Some(error) => Err(error.to_string()),
    }
}

/// Whether `check` passed within [`CHECK_TIMEOUT`]; why not is logged.
async fn passed(
    name: &'static str,
    check: impl std::future::Future<Output = Result<(), String>>,
) -> bool {
    let failure = match tokio::time::timeout(CHECK_TIMEOUT, check).await {
        Ok(Ok(())) => return true,
        Ok(Err(e)) => e,
        Err(_) => format!("no answer within {CHECK_TIMEOUT:?}"),
    };
    tracing::warn!(check = name, error = %failure, "HTTP: readiness check failed");
    false
}
