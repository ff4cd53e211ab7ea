//! Resources of a registry's servers: reading a resource by URI in-process, listing every
//! resource and template definition, and telling sessions that a resource changed.

use std::panic::AssertUnwindSafe;
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::task::Poll;
use std::time::Duration;

use futures_util::FutureExt;

use super::Registry;
use crate::protocol::{self, ErrorCode, ProtocolVersion, ReadResourceResult};
use crate::resource::{ResourceError, ResourceFuture};
use crate::server::Server;
use crate::tool::{CallNames, CallScope, ToolContext};

/// Why [`Registry::read_resource`] produced no contents. On the wire every kind is a
/// JSON-RPC error: see [`code`](Self::code).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ReadResourceError {
    /// No enabled server has a resource at this URI or a template that makes it, or the
    /// resource's function said it does not exist.
    #[error("resource not found: {uri}{}", .reason.as_deref().map(|r| format!(" ({r})")).unwrap_or_default())]
    NotFound {
        /// The URI asked for.
        uri: String,
        /// Why, when a function said so (e.g. a template variable that does not parse).
        reason: Option<String>,
    },
    /// [`Registry::read_server_resource`] named a server the registry lacks.
    #[error("unknown MCP server {server:?}")]
    UnknownServer {
        /// The server named.
        server: String,
    },
    /// The only servers that have the URI are disabled.
    #[error("resource {uri:?} belongs to server {server:?}, which is disabled")]
    ServerDisabled {
        /// The server.
        server: String,
        /// The URI.
        uri: String,
    },
    /// Several enabled servers have a resource at this exact URI.
    #[error(
        "resource {uri:?} is ambiguous: it is provided by servers {servers:?}; read it with read_server_resource"
    )]
    AmbiguousResource {
        /// The URI.
        uri: String,
        /// Every enabled server that has it, sorted.
        servers: Vec<String>,
    },
    /// The resource's function reported a failure.
    #[error("reading resource {uri:?} failed: {message}")]
    Failed {
        /// The URI.
        uri: String,
        /// The function's own message.
        message: String,
    },
    /// The read outlasted the registry's default timeout
    /// ([`RegistryBuilder::default_timeout`](crate::RegistryBuilder::default_timeout)); its
    /// future was dropped.
    #[error("reading resource {uri:?} timed out after {timeout:?}")]
    TimedOut {
        /// The URI.
        uri: String,
        /// The limit that was reached.
        timeout: std::time::Duration,
    },
    /// The resource's function panicked; the panic was caught and the registry is unaffected.
    #[error("reading resource {uri:?} panicked: {message}")]
    Panicked {
        /// The URI.
        uri: String,
        /// The panic payload, when it was a string.
        message: String,
    },
}

impl ReadResourceError {
    /// The JSON-RPC error code `resources/read` answers this error with under `version`:
    /// not found is -32002 through 2025-11-25 (and when no version is known) and -32602 in
    /// 2026-07-28 (SEP-2164); a failure, panic or timeout is -32603; the others -32602.
    pub fn code(&self, version: Option<ProtocolVersion>) -> ErrorCode {
        match self {
            ReadResourceError::NotFound { .. } if version == Some(ProtocolVersion::MODERN) => {
                ErrorCode::INVALID_PARAMS
            }
            ReadResourceError::NotFound { .. } => ErrorCode::RESOURCE_NOT_FOUND,
            ReadResourceError::Failed { .. }
            | ReadResourceError::Panicked { .. }
            | ReadResourceError::TimedOut { .. } => ErrorCode::INTERNAL_ERROR,
            _ => ErrorCode::INVALID_PARAMS,
        }
    }

    pub(crate) fn not_found(uri: &str) -> Self {
        ReadResourceError::NotFound {
            uri: uri.to_owned(),
            reason: None,
        }
    }
}

/// A resource of an enabled server, as [`Registry::all_resource_definitions`] lists it.
#[derive(Debug, Clone, PartialEq)]
pub struct ResourceDefinition {
    /// The server that provides it.
    pub server: String,
    /// The resource as `resources/list` describes it.
    pub resource: protocol::ResourceDescriptor,
}

/// A resource template of an enabled server, as
/// [`Registry::all_resource_template_definitions`] lists it.
#[derive(Debug, Clone, PartialEq)]
pub struct ResourceTemplateDefinition {
    /// The server that provides it.
    pub server: String,
    /// The template as `resources/templates/list` describes it.
    pub template: protocol::ResourceTemplateDescriptor,
}

/// What reading `uri` from `server` would run: its exact resource, else the first template
/// that matches.
pub(crate) fn find(server: &Server, uri: &str, ctx: Option<ToolContext>) -> Option<ResourceFuture> {
    if let Some(resource) = server.resource(uri) {
        return Some(resource.read_in(ctx));
    }
    let mut ctx = ctx;
    server
        .resource_templates()
        .iter()
        .find_map(|t| t.read_in(uri, &mut ctx))
}

/// Whether `server` has a resource at `uri` or a template that makes it.
pub(crate) fn exists(server: &Server, uri: &str) -> bool {
    server.resource(uri).is_some()
        || server
            .resource_templates()
            .iter()
            .any(|t| t.template().match_uri(uri).is_some())
}

/// Reads `uri` from `server`: exact URIs first, then templates in order; panics caught; a
/// read that waits is limited to `limit` (where a Tokio timer can keep it: elsewhere it runs
/// unlimited).
pub(crate) async fn read(
    server: &Server,
    uri: &str,
    limit: Option<Duration>,
    ctx: Option<ToolContext>,
) -> Result<ReadResourceResult, ReadResourceError> {
    let Some(reading) = find(server, uri, ctx) else {
        return Err(ReadResourceError::not_found(uri));
    };
    let mut reading = AssertUnwindSafe(reading).catch_unwind();
    // Most reads finish on their first poll, and need no timer.
    let first = std::future::poll_fn(|cx| Poll::Ready(reading.poll_unpin(cx))).await;
    let caught = match (first, limit) {
        (Poll::Ready(caught), _) => caught,
        (Poll::Pending, None) => reading.await,
        (Poll::Pending, Some(limit)) => match super::call::start_timer(limit, &mut reading) {
            Some(limited) => match limited.await {
                Ok(caught) => caught,
                Err(_) => {
                    return Err(ReadResourceError::TimedOut {
                        uri: uri.to_owned(),
                        timeout: limit,
                    });
                }
            },
            None => reading.await,
        },
    };
    match caught {
        Ok(Ok(result)) => Ok(result),
        Ok(Err(ResourceError::NotFound(reason))) => Err(ReadResourceError::NotFound {
            uri: uri.to_owned(),
            reason: Some(reason),
        }),
        Ok(Err(ResourceError::Failed(message))) => Err(ReadResourceError::Failed {
            uri: uri.to_owned(),
            message,
        }),
        Err(panic) => Err(ReadResourceError::Panicked {
            uri: uri.to_owned(),
            message: panic
                .downcast_ref::<&str>()
                .map(|s| (*s).to_owned())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_default(),
        }),
    }
}

/// A session's hook for `notifications/resources/updated`: given a URI, sends the
/// notification when the session subscribed to it, and says whether it did.
pub(crate) type UpdateHook = dyn Fn(&str) -> bool + Send + Sync;

/// The sessions to tell about resource updates (weakly held: a session that ends drops out).
#[derive(Default)]
pub(crate) struct ResourceUpdates {
    hooks: Mutex<Vec<Weak<UpdateHook>>>,
}

impl ResourceUpdates {
    fn hooks(&self) -> std::sync::MutexGuard<'_, Vec<Weak<UpdateHook>>> {
        self.hooks.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Registry {
    /// Reads the resource at `uri` from whichever enabled server has it: a resource at
    /// exactly that URI first (an error when several enabled servers have one), else the
    /// first server, in name order, with a template that makes it. A panic in the resource's
    /// function is caught; a read that outlasts the registry's default timeout fails with
    /// [`ReadResourceError::TimedOut`].
    ///
    /// URIs are not qualified like tool names (`mcp__<server>__..`): a URI is any string
    /// a server picks, so a prefix could collide with a real one. To read from one server,
    /// name it: [`read_server_resource`](Self::read_server_resource).
    ///
    /// ```
    /// # use mcp_registry::{Registry, Resource, Server};
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let motd = Resource::builder("text://motd", "motd").handler(|_| async { "Hello" }).unwrap();
    /// let registry = Registry::from_servers([Server::builder("s").resource(motd).build().unwrap()]);
    /// let result = registry.read_resource("text://motd").await.unwrap();
    /// assert_eq!(result.contents[0].as_text(), Some("Hello"));
    /// let missing = registry.read_resource("text://nope").await.unwrap_err();
    /// assert_eq!(missing.to_string(), "resource not found: text://nope");
    /// # }
    /// ```
    pub async fn read_resource(&self, uri: &str) -> Result<ReadResourceResult, ReadResourceError> {
        let server = self.resource_server(uri)?;
        let ctx = self.read_context(&server, uri);
        read(&server, uri, self.config().default_timeout, Some(ctx)).await
    }

    /// Reads the resource at `uri` from the server named `server` (which must be enabled).
    pub async fn read_server_resource(
        &self,
        server: &str,
        uri: &str,
    ) -> Result<ReadResourceResult, ReadResourceError> {
        let entry = self.snapshot().server(server).cloned();
        let Some(entry) = entry else {
            return Err(ReadResourceError::UnknownServer {
                server: server.to_owned(),
            });
        };
        if !entry.enabled {
            return Err(ReadResourceError::ServerDisabled {
                server: server.to_owned(),
                uri: uri.to_owned(),
            });
        }
        let ctx = self.read_context(&entry.server, uri);
        read(&entry.server, uri, self.config().default_timeout, Some(ctx)).await
    }

    /// The context of an in-process read: no request, the registry's host state.
    fn read_context(&self, server: &Server, uri: &str) -> ToolContext {
        ToolContext::from_scope(CallScope {
            names: Arc::new(CallNames {
                tool: uri.into(),
                server: server.shared_name().clone(),
            }),
            request_id: None,
            meta: None,
            protocol_version: None,
            notifications: None,
            cancellation: None,
            registry_extensions: self.config().extensions.clone(),
            call_extensions: Default::default(),
            log_level: None,
            input: None,
            round: None,
        })
    }

    /// The enabled server [`read_resource`](Self::read_resource) reads `uri` from.
    fn resource_server(&self, uri: &str) -> Result<Server, ReadResourceError> {
        let snapshot = self.snapshot();
        let exact: Vec<_> = snapshot
            .servers
            .values()
            .filter(|e| e.server.resource(uri).is_some())
            .collect();
        let mut enabled = exact.iter().filter(|e| e.enabled);
        match (enabled.next(), enabled.next()) {
            (Some(only), None) => return Ok(only.server.clone()),
            (Some(_), Some(_)) => {
                return Err(ReadResourceError::AmbiguousResource {
                    uri: uri.to_owned(),
                    servers: exact
                        .iter()
                        .filter(|e| e.enabled)
                        .map(|e| e.server.name().to_owned())
                        .collect(),
                });
            }
            (None, _) => {}
        }
        let by_template = snapshot.servers.values().find(|e| {
            e.server
                .resource_templates()
                .iter()
                .any(|t| t.template().match_uri(uri).is_some())
                && e.enabled
        });
        if let Some(entry) = by_template {
            return Ok(entry.server.clone());
        }
        match exact.first() {
            Some(disabled) => Err(ReadResourceError::ServerDisabled {
                server: disabled.server.name().to_owned(),
                uri: uri.to_owned(),
            }),
            None => Err(ReadResourceError::not_found(uri)),
        }
    }

    /// Every resource of every enabled server, sorted by server then URI.
    pub fn all_resource_definitions(&self) -> Vec<ResourceDefinition> {
        self.snapshot()
            .servers
            .values()
            .filter(|e| e.enabled)
            .flat_map(|e| {
                e.server.resources().iter().map(|r| ResourceDefinition {
                    server: e.server.name().to_owned(),
                    resource: r.descriptor().clone(),
                })
            })
            .collect()
    }

    /// Every resource template of every enabled server, sorted by server then template name.
    pub fn all_resource_template_definitions(&self) -> Vec<ResourceTemplateDefinition> {
        self.snapshot()
            .servers
            .values()
            .filter(|e| e.enabled)
            .flat_map(|e| {
                e.server
                    .listed_resource_templates()
                    .map(|t| ResourceTemplateDefinition {
                        server: e.server.name().to_owned(),
                        template: t.descriptor().clone(),
                    })
            })
            .collect()
    }

    /// Says the resource at `uri` changed: every session ([`ServerSession`]) that subscribed
    /// to it (`resources/subscribe`, legacy revisions) is sent
    /// `notifications/resources/updated`. Returns how many sessions were told.
    ///
    /// Call it from the code that changes the data, a resource's function, or a watcher.
    /// The stateless entry points (`handle_mcp_message`) have no subscriptions.
    ///
    /// [`ServerSession`]: crate::ServerSession
    pub fn notify_resource_updated(&self, uri: &str) -> usize {
        let hooks: Vec<Arc<UpdateHook>> = {
            let mut hooks = self.inner.updates.hooks();
            hooks.retain(|h| h.strong_count() > 0);
            hooks.iter().filter_map(Weak::upgrade).collect()
        };
        hooks.iter().filter(|hook| hook(uri)).count()
    }

    /// Registers a session's update hook, held weakly: it is dropped with the session.
    pub(crate) fn on_resource_updated(&self, hook: &Arc<UpdateHook>) {
        let mut hooks = self.inner.updates.hooks();
        hooks.retain(|h| h.strong_count() > 0);
        hooks.push(Arc::downgrade(hook));
    }
}
