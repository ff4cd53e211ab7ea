//! Resources of a registry's servers: reading a resource by URI in-process, listing every
//! resource and template definition, and telling sessions that a resource changed.
//!
//! One request kind in two layers, named alike: its MCP methods in `dispatch/resources.rs`.

use std::future::IntoFuture;
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use serde_json::Value;

use super::guard::{Guarded, RunErrors};
use super::holder::{Holder, holder};
use super::layer::{Endpoint, Request, RequestKind, Response, mismatch};
use super::options::WithOptions;
use super::scope::{RequestInfo, RunScope, through_layers};
use super::{CallOptions, Registry};
use crate::protocol::{self, ErrorCode, ProtocolVersion, ReadResourceResult};
use crate::resource::{Resource, ResourceError, ResourceFuture, ResourceRequest, ResourceTemplate};
use crate::server::{Origin, Server};
use crate::sync::MutexExt;
use crate::tool::{BoxFuture, ToolContext};

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
    /// The read outlasted its time limit (the resource's, else the registry's
    /// [default](crate::RegistryBuilder::default_timeout)); its future was dropped.
    #[error("reading resource {uri:?} timed out after {timeout:?}")]
    TimedOut {
        /// The URI.
        uri: String,
        /// The limit that was reached.
        timeout: std::time::Duration,
    },
    /// The read has a time limit, but it waited where no timer can keep one: outside a Tokio
    /// runtime, or in one built without `enable_time`. Its future was dropped rather than run
    /// unlimited.
    #[error(
        "reading resource {uri:?} has a time limit of {limit:?} but waited outside a Tokio runtime with time enabled, where no timer can keep it; read it inside one, or without a timeout"
    )]
    NoTimer {
        /// The URI.
        uri: String,
        /// The limit in force.
        limit: Duration,
    },
    /// The resource's function panicked; the panic was caught and the registry is unaffected.
    #[error("reading resource {uri:?} panicked: {message}")]
    Panicked {
        /// The URI.
        uri: String,
        /// The panic payload, when it was a string.
        message: String,
    },
    /// A layer rejected the read with this JSON-RPC error, which the caller gets on the
    /// wire; the resource's function did not run.
    #[error("reading resource {uri:?} was rejected: {}", .error.message)]
    Rejected {
        /// The URI.
        uri: String,
        /// The layer's error.
        error: protocol::ErrorObject,
    },
    /// The caller cancelled the read; its future was dropped.
    #[error("reading resource {uri:?} was cancelled")]
    Cancelled {
        /// The URI.
        uri: String,
    },
    /// A layer (the registry's approval, or a host's) refused the read; the resource's
    /// function did not run.
    #[error("reading resource {uri:?} was denied: {reason}")]
    Denied {
        /// The URI.
        uri: String,
        /// The layer's reason.
        reason: String,
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
            | ReadResourceError::TimedOut { .. }
            | ReadResourceError::NoTimer { .. }
            | ReadResourceError::Cancelled { .. } => ErrorCode::INTERNAL_ERROR,
            ReadResourceError::Denied { .. } => ErrorCode::INVALID_REQUEST,
            ReadResourceError::Rejected { error, .. } => error.code,
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
#[non_exhaustive]
pub struct ResourceDefinition {
    /// The server that provides it.
    pub server: String,
    /// The resource as `resources/list` describes it.
    pub resource: protocol::ResourceDescriptor,
}

/// A resource template of an enabled server, as
/// [`Registry::all_resource_template_definitions`] lists it.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ResourceTemplateDefinition {
    /// The server that provides it.
    pub server: String,
    /// The template as `resources/templates/list` describes it.
    pub template: protocol::ResourceTemplateDescriptor,
}

/// What serves reading a URI: a resource at exactly that URI, or a template that makes it
/// (with the request its match made). Owned (reference counts): it waits out the layers.
enum Readable {
    Resource(Resource),
    Template(ResourceTemplate, Box<ResourceRequest>),
}

impl Readable {
    /// What reading `uri` from `server` would run: its exact resource, else the first
    /// template that matches (matched once).
    fn find(server: &Server, uri: &str) -> Option<Readable> {
        if let Some(resource) = server.resource(uri) {
            return Some(Readable::Resource(resource.clone()));
        }
        server.resource_templates().iter().find_map(|t| {
            t.request_for(uri)
                .map(|request| Readable::Template(t.clone(), Box::new(request)))
        })
    }

    /// The server it comes from, read through `server` (the union's item knows its own).
    fn origin(&self, server: &Server) -> Origin {
        match self {
            Readable::Resource(r) => server.resource_origin(r.uri()),
            Readable::Template(t, _) => server.template_origin(t.uri_template()),
        }
    }

    fn timeout(&self) -> Option<Duration> {
        match self {
            Readable::Resource(r) => r.timeout(),
            Readable::Template(t, _) => t.timeout(),
        }
    }

    fn start(self, ctx: ToolContext) -> ResourceFuture {
        match self {
            Readable::Resource(r) => r.read_in(Some(ctx)),
            Readable::Template(t, request) => t.read_request(*request, Some(ctx)),
        }
    }
}

/// Whether `server` has a resource at `uri` or a template that makes it.
pub(crate) fn exists(server: &Server, uri: &str) -> bool {
    server.resource(uri).is_some()
        || server
            .resource_templates()
            .iter()
            .any(|t| t.template().match_uri(uri).is_some())
}

/// The guarded run of reading `uri` in `scope`.
fn run(
    readable: Readable,
    uri: Arc<str>,
    scope: RunScope,
) -> BoxFuture<'static, Result<ReadResourceResult, ReadResourceError>> {
    let RunScope { ctx, guard } = scope;
    let mut completion = ctx.completion();
    let run = Guarded::start(guard, || readable.start(ctx));
    Box::pin(async move {
        let outcome = run.await;
        completion.complete();
        let uri = uri.to_string();
        match outcome {
            Ok(Ok(result)) => Ok(result),
            Ok(Err(ResourceError::NotFound(reason))) => Err(ReadResourceError::NotFound {
                uri,
                reason: Some(reason),
            }),
            Ok(Err(ResourceError::Failed(message))) => {
                Err(ReadResourceError::Failed { uri, message })
            }
            Err(failure) => Err(failure.into_error(uri)),
        }
    })
}

impl RunErrors for ReadResourceError {
    const WHAT: &'static str = "resource";
    fn panicked(uri: String, message: String) -> Self {
        ReadResourceError::Panicked { uri, message }
    }
    fn timed_out(uri: String, timeout: Duration) -> Self {
        ReadResourceError::TimedOut { uri, timeout }
    }
    fn no_timer(uri: String, limit: Duration) -> Self {
        ReadResourceError::NoTimer { uri, limit }
    }
    fn cancelled(uri: String) -> Self {
        ReadResourceError::Cancelled { uri }
    }
    fn failed(uri: String, message: String) -> Self {
        ReadResourceError::Failed { uri, message }
    }
}

/// A resource read to configure and `.await`: what [`Registry::read_resource`] and
/// [`Registry::read_server_resource`] return.
pub type ReadRequest<'a> = WithOptions<ResourceRead<'a>>;

/// What a [`ReadRequest`] reads: a URI, from a named server or whichever has it.
pub struct ResourceRead<'a> {
    registry: &'a Registry,
    server: Option<&'a str>,
    uri: &'a str,
}

impl IntoFuture for ReadRequest<'_> {
    type Output = Result<ReadResourceResult, ReadResourceError>;
    type IntoFuture = BoxFuture<'static, Self::Output>;

    fn into_future(self) -> Self::IntoFuture {
        let ResourceRead {
            registry,
            server,
            uri,
        } = self.target;
        let server = match server {
            None => registry.resource_server(uri),
            Some(name) => registry.named_resource_server(name, uri),
        };
        let server = match server {
            Ok(server) => server,
            Err(e) => return Box::pin(std::future::ready(Err(e))),
        };
        let mut options = self.options;
        registry.invoke_resource(&server, uri, &mut options, RequestInfo::default())
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

impl Registry {
    /// Reads the resource at `uri` from whichever enabled server has it: a resource at
    /// exactly that URI first (an error when several enabled servers have one), else the
    /// first server, in name order, with a template that makes it. Returns the read to
    /// configure (see [`WithOptions`]) and `.await`: it passes the registry's layers and sees
    /// its host state. A panic in the resource's function is caught; a read that outlasts its
    /// time limit (the resource's, else the registry's default) fails with
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
    pub fn read_resource<'a>(&'a self, uri: &'a str) -> ReadRequest<'a> {
        WithOptions::new(ResourceRead {
            registry: self,
            server: None,
            uri,
        })
    }

    /// Reads the resource at `uri` from the server named `server` (which must be enabled).
    pub fn read_server_resource<'a>(&'a self, server: &'a str, uri: &'a str) -> ReadRequest<'a> {
        WithOptions::new(ResourceRead {
            registry: self,
            server: Some(server),
            uri,
        })
    }

    /// Reads `uri` from `server` for a request: its scope, the layer stack, then the
    /// guarded run of the resource's (or template's) function; exact URIs first, then
    /// templates in order.
    pub(crate) fn invoke_resource(
        &self,
        server: &Server,
        uri: &str,
        options: &mut CallOptions,
        info: RequestInfo,
    ) -> BoxFuture<'static, Result<ReadResourceResult, ReadResourceError>> {
        let Some(readable) = Readable::find(server, uri) else {
            return Box::pin(std::future::ready(Err(ReadResourceError::not_found(uri))));
        };
        let uri: Arc<str> = uri.into();
        // The resource's own server, also for a resource read through the union.
        let names = readable.origin(server).names(uri.clone());
        let scope = self.scope(names, options, info, readable.timeout());
        let Some(layers) = self.layers(options) else {
            return run(readable, uri, scope);
        };
        let request = Request {
            kind: RequestKind::Resource,
            name: uri.clone(),
            arguments: Value::Null,
            context: scope.ctx,
        };
        let guard = scope.guard;
        let request_uri = uri.to_string();
        let endpoint: Endpoint = Box::new(move |request: Request| {
            let scope = RunScope {
                ctx: request.context,
                guard,
            };
            let reading = run(readable, uri, scope);
            Box::pin(async move { Response::Resource(reading.await) })
        });
        let running = through_layers(&layers, request, endpoint);
        let uri = request_uri;
        Box::pin(async move {
            match running.await {
                Some(Response::Resource(result)) => result,
                Some(other) => Err(ReadResourceError::Failed {
                    message: mismatch(RequestKind::Resource, &other),
                    uri,
                }),
                None => Err(ReadResourceError::Cancelled { uri }),
            }
        })
    }

    /// The enabled server named `server`, to read `uri` from.
    fn named_resource_server(&self, server: &str, uri: &str) -> Result<Server, ReadResourceError> {
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
        Ok(entry.server)
    }

    /// The enabled server [`read_resource`](Self::read_resource) reads `uri` from.
    fn resource_server(&self, uri: &str) -> Result<Server, ReadResourceError> {
        let snapshot = self.snapshot();
        let exact: Vec<_> = snapshot
            .servers
            .values()
            .filter(|e| e.server.resource(uri).is_some())
            .collect();
        match holder(&exact) {
            Holder::Only(only) => return Ok(only.server.clone()),
            Holder::Ambiguous(servers) => {
                return Err(ReadResourceError::AmbiguousResource {
                    uri: uri.to_owned(),
                    servers,
                });
            }
            // None enabled (or none has it): a template of an enabled server may.
            Holder::Disabled(_) => {}
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
        let snapshot = self.snapshot();
        let definitions = snapshot.enabled().flat_map(|server| {
            server.resources().iter().map(|r| ResourceDefinition {
                server: server.name().to_owned(),
                resource: r.descriptor().clone(),
            })
        });
        definitions.collect()
    }

    /// Every resource template of every enabled server, sorted by server then template name.
    pub fn all_resource_template_definitions(&self) -> Vec<ResourceTemplateDefinition> {
        let snapshot = self.snapshot();
        let definitions = snapshot.enabled().flat_map(|server| {
            server
                .listed_resource_templates()
                .map(|t| ResourceTemplateDefinition {
                    server: server.name().to_owned(),
                    template: t.descriptor().clone(),
                })
        });
        definitions.collect()
    }

    /// Says the resource at `uri` changed: every session ([`ServerSession`]) that subscribed
    /// to it (`resources/subscribe`, legacy revisions) is sent
    /// `notifications/resources/updated`. Returns how many sessions were told.
    ///
    /// Call it from the code that changes the data, a resource's function, or a watcher.
    /// The stateless entry points (`handle_mcp_message`) have no subscriptions.
    ///
    /// [`ServerSession`]: crate::ServerSession
    ///
    /// With a [`change_bus`](crate::RegistryBuilder::change_bus), the other replicas' sessions
    /// and listen streams are told too (the count is this replica's).
    pub fn notify_resource_updated(&self, uri: &str) -> usize {
        if let Some(bus) = &self.inner.config.change_bus {
            bus.publish(super::SharedChange::ResourceUpdated {
                uri: uri.to_owned(),
            });
        }
        self.tell_resource_updated(uri)
    }

    /// Tells this registry's sessions and listen streams that `uri` changed; how many were
    /// told.
    pub(crate) fn tell_resource_updated(&self, uri: &str) -> usize {
        let hooks: Vec<Arc<UpdateHook>> = {
            let mut hooks = self.inner.updates.hooks.lock_unpoisoned();
            hooks.retain(|h| h.strong_count() > 0);
            hooks.iter().filter_map(Weak::upgrade).collect()
        };
        hooks.iter().filter(|hook| hook(uri)).count()
    }

    /// Registers a session's update hook, held weakly: it is dropped with the session.
    pub(crate) fn on_resource_updated(&self, hook: &Arc<UpdateHook>) {
        let mut hooks = self.inner.updates.hooks.lock_unpoisoned();
        hooks.retain(|h| h.strong_count() > 0);
        hooks.push(Arc::downgrade(hook));
    }
}
