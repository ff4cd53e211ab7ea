//! One router for a whole registry: the union of its enabled servers at the configured path,
//! and each server at `{path}/{server}`, each endpoint with its own sessions.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::extract::{Path, Request};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::any;
use tower_service::Service as _;

use super::checks::check_host_and_origin;
use super::sessions::AppState;
use super::{HttpConfig, error_response, router, serve};
use crate::protocol::ErrorCode;
use crate::registry::{ALL_SERVERS, Registry};
use crate::sync::MutexExt;

/// An axum router serving every enabled server of `registry` as one
/// ([`ALL_SERVERS`](crate::ALL_SERVERS)) at the configured path (default `/mcp`), and each
/// server alone at `{path}/{server}` (`/mcp/math`), all following the registry as servers
/// come and go. Each endpoint keeps its own legacy sessions, so a session opened on
/// `/mcp/math` is unknown to `/mcp`. A server the registry lacks, or has disabled, is `404`
/// with a message naming the servers there are (without the names when
/// [`HttpConfig::auth`] is set: an unauthorized client learns nothing).
///
/// Every endpoint shares `config` (limits, hosts, origins, authorization); the protected
/// resource metadata is served for the union's path.
///
/// ```
/// use mcp_registry::transport::http::{HttpConfig, router_all};
/// use mcp_registry::{Registry, Server};
/// let registry = Registry::from_servers([Server::builder("math").build().unwrap()]);
/// // `/mcp`: every server as one; `/mcp/math`: math alone.
/// let app: axum::Router = router_all(registry, HttpConfig::default());
/// ```
pub fn router_all(registry: Registry, config: HttpConfig) -> Router {
    let union = router(registry.clone(), ALL_SERVERS, config.clone());
    let base = config.path.trim_end_matches('/').to_owned();
    let endpoints = Arc::new(Endpoints {
        checks: AppState::new(registry.clone(), ALL_SERVERS, config.clone()),
        registry,
        config,
        base: base.clone(),
        routers: Mutex::new(HashMap::new()),
    });
    union.route(
        &format!("{base}/{{server}}"),
        any(move |Path(server): Path<String>, request: Request| {
            let endpoints = endpoints.clone();
            async move { endpoints.serve(&server, request).await }
        }),
    )
}

/// [`router_all`] served on `addr`, with the connection limits of [`serve`](super::serve).
pub async fn serve_all(
    registry: Registry,
    addr: SocketAddr,
    config: HttpConfig,
) -> std::io::Result<()> {
    let listener = tokio::net::TcpListener::bind(addr).await?;
    serve_all_listener(listener, registry, config).await
}

/// [`serve_all`] on a listener already bound.
pub async fn serve_all_listener(
    listener: tokio::net::TcpListener,
    registry: Registry,
    config: HttpConfig,
) -> std::io::Result<()> {
    let addr = listener.local_addr()?;
    tracing::info!(%addr, "serving every MCP server of a registry over Streamable HTTP");
    let app = serve::App {
        router: router_all(registry, config.clone()),
        direct: None,
    };
    serve::accept_loop(listener, app, &config).await;
    Ok(())
}

/// The per-server endpoints: one router (and so one set of sessions) per server, made on
/// its first request.
struct Endpoints {
    registry: Registry,
    config: HttpConfig,
    /// The Host and Origin checks of a request for a missing server, made before it is
    /// reported.
    checks: AppState,
    /// The union's path without a trailing `/`.
    base: String,
    routers: Mutex<HashMap<String, Router>>,
}

impl Endpoints {
    async fn serve(&self, server: &str, request: Request) -> Response {
        // A server's own router checks Host and Origin first thing (`checks::admit`); only
        // a missing one is checked here, before its 404 names the servers there are.
        let mut router = match self.registry.is_enabled(server) {
            Some(true) => self.router(server),
            absent => {
                if let Some(denied) =
                    check_host_and_origin(&self.checks, request.uri(), request.headers())
                {
                    return denied;
                }
                if absent.is_none() {
                    // Its sessions go with it.
                    self.lock().remove(server);
                }
                return self.not_found(server, absent.is_some());
            }
        };
        match router.call(request).await {
            Ok(response) => response,
            Err(never) => match never {},
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Router>> {
        self.routers.lock_unpoisoned()
    }

    /// The router of `server`, at `{base}/{server}`.
    fn router(&self, server: &str) -> Router {
        self.lock()
            .entry(server.to_owned())
            .or_insert_with(|| {
                let config = self.config.clone().path(format!("{}/{server}", self.base));
                router(self.registry.clone(), server, config)
            })
            .clone()
    }

    /// `404`, naming the enabled servers unless authorization hides them.
    fn not_found(&self, server: &str, disabled: bool) -> Response {
        let what = if disabled {
            format!("MCP server {server:?} is disabled")
        } else {
            format!("no MCP server named {server:?}")
        };
        let message = if self.config.auth.is_some() {
            what
        } else {
            let enabled: Vec<String> = self
                .registry
                .server_status()
                .into_iter()
                .filter(|s| s.enabled)
                .map(|s| format!("{}/{}", self.base, s.name))
                .collect();
            format!(
                "{what}; the servers here are {} (and all of them as one at {})",
                if enabled.is_empty() {
                    "none".to_owned()
                } else {
                    enabled.join(", ")
                },
                if self.base.is_empty() {
                    "/"
                } else {
                    &self.base
                },
            )
        };
        error_response(
            StatusCode::NOT_FOUND,
            None,
            ErrorCode::INVALID_REQUEST,
            message,
        )
        .into_response()
    }
}
