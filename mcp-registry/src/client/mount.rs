//! [`RemoteServer`]: another MCP server's tools, prompts and resources mounted into a
//! [`Registry`] beside in-process servers, its calls forwarded through a [`Client`].

use std::collections::BTreeMap;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};

use serde_json::Value;
use tokio::sync::broadcast::error::RecvError;
use tokio_util::sync::CancellationToken;

use super::{Client, ClientError, RequestOptions, ServerNotification};
use crate::catalog::Pins;
use crate::prompt::{Prompt, PromptArguments};
use crate::protocol::ReadResourceResult;
use crate::protocol::{
    ErrorCode, PromptDescriptor, ProtocolEra, SubscriptionFilter, ToolDescriptor, method,
};
use crate::registry::{Registry, WeakRegistry};
use crate::resource::{
    Resource, ResourceBuilder, ResourceRequest, ResourceTemplate, ResourceTemplateBuilder,
};
use crate::server::{ConnectionState, RemoteLink, Server, ServerBuildError};
use crate::sync::MutexExt;
use crate::tool::{Arguments, BoxFuture, HandlerResult, Tool, ToolContext, ToolError, ToolHandler};

type ConnectFn = dyn Fn() -> BoxFuture<'static, Result<Client, ClientError>> + Send + Sync;

/// Why a remote server could not be mounted.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum MountError {
    /// Connecting, or listing what the remote offers, failed.
    #[error("cannot mount MCP server `{name}`: {source}")]
    Client {
        /// The name it was to be mounted under.
        name: String,
        /// Why.
        source: ClientError,
    },
    /// The remote's listing does not make a valid server (e.g. an invalid server name).
    #[error("cannot mount MCP server `{name}`: {source}")]
    Server {
        /// The name it was to be mounted under.
        name: String,
        /// Why.
        source: ServerBuildError,
    },
    /// The registry was dropped while the remote was being listed.
    #[error("cannot mount MCP server `{0}`: the registry is gone")]
    RegistryGone(String),
}

/// Another MCP server mounted into a [`Registry`] as a server named by the host: its tools,
/// prompts, resources and resource templates are listed, called and read through the
/// registry like those of an in-process server (by `call_tool_by_name`,
/// `handle_mcp_message`, every transport and agent session), each call forwarded through a
/// [`Client`] with the client's [`RequestPolicy`](super::RequestPolicy).
///
/// - **Forwarding:** progress the remote reports reaches the caller (under the caller's own
///   progress token); a call the caller cancels or times out is cancelled on the remote
///   (`notifications/cancelled`); a remote failure becomes a tool error naming the server.
///   The remote's log messages go to `tracing` (target `mcp_registry::remote`).
/// - **Changes:** when the remote says a list changed, it is listed again and the server
///   re-registered (listeners of [`Registry::subscribe`] hear of it).
/// - **Connection:** [`ServerStatus::connection`](crate::ServerStatus::connection) tells
///   whether it is connected; after the remote exits or hangs up, calls fail until
///   [`Registry::reconnect_server`] connects again with the same `connect` function.
/// - **Lifetime:** toggling works as for any server; unregistering or replacing it closes
///   the connection (a child process is reaped).
/// - **Pinning:** with [`pins`](Self::pins), a tool whose definition changed since it was
///   pinned is left out of the mounted server until the host approves it.
///
/// ```
/// use mcp_registry::client::{Client, RemoteServer};
/// use mcp_registry::{ConnectionState, Registry, Server, Tool};
/// use serde_json::json;
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// // Stands in for a remote server (use `Client::stdio` or `Client::http` for a real one).
/// let echo = Tool::new("echo", "Echo", json!({"type": "object"}), |args| async move {
///     args.to_string()
/// }).unwrap();
/// let elsewhere = Registry::from_servers([Server::new("upstream", None, [echo]).unwrap()]);
///
/// let registry = Registry::new();
/// RemoteServer::new("remote", move || Client::in_process(elsewhere.clone(), "upstream"))
///     .mount(&registry)
///     .await
///     .unwrap();
/// let result = registry.call_tool_by_name("echo", json!({"x": 1})).await.unwrap();
/// assert_eq!(result.first_text(), Some(r#"{"x":1}"#));
/// let status = &registry.server_status()[0];
/// assert_eq!((status.name.as_str(), &status.connection), ("remote", &Some(ConnectionState::Connected)));
/// # }
/// ```
pub struct RemoteServer {
    name: String,
    connect: Arc<ConnectFn>,
    pins: Option<Pins>,
}

impl fmt::Debug for RemoteServer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RemoteServer")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

impl RemoteServer {
    /// A remote server to mount as `name`, reached by `connect` (called again by each
    /// reconnect), e.g. `move || Client::stdio(command())` or
    /// `move || Client::builder().policy("tools/call", policy.clone()).connect_http(url)`.
    pub fn new<F, Fut>(name: impl Into<String>, connect: F) -> Self
    where
        F: Fn() -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Client, ClientError>> + Send + 'static,
    {
        RemoteServer {
            name: name.into(),
            connect: Arc::new(move || Box::pin(connect())),
            pins: None,
        }
    }

    /// Pins the remote's tools under the mount name ([`Pins`]: trust on first use). Each
    /// listing (the first, and each after the remote says its tools changed) checks every
    /// tool, and a tool whose definition changed is left out of the mounted server until
    /// the host approves it; the server is listed again when the quarantine changes. Each
    /// call first checks the definition the remote offers then (one `tools/list`, answered
    /// from the client's cache when [`ClientBuilder::tool_cache`](super::ClientBuilder::tool_cache)
    /// is set), so a remote that changes a tool without saying so is refused at the call.
    pub fn pins(mut self, pins: Pins) -> Self {
        self.pins = Some(pins);
        self
    }

    /// Connects, lists what the remote offers and registers it in `registry` (replacing a
    /// server of the same name, as [`Registry::register_server`] does). Needs a Tokio
    /// runtime: a task follows the remote's changes and its connection.
    pub async fn mount(self, registry: &Registry) -> Result<(), MountError> {
        let link = Arc::new(Link {
            name: self.name,
            connect: self.connect,
            pins: self.pins,
            registry: registry.downgrade(),
            state: Mutex::new(ConnectionState::Connecting),
            current: Mutex::new(None),
            me: Mutex::new(Weak::new()),
        });
        *link.me.lock_unpoisoned() = Arc::downgrade(&link);
        link.connect_and_register(true).await
    }
}

/// The connection behind a mounted server, shared by its [`Server`] (for status and
/// reconnection) and the task following the remote.
struct Link {
    name: String,
    connect: Arc<ConnectFn>,
    pins: Option<Pins>,
    registry: WeakRegistry,
    state: Mutex<ConnectionState>,
    /// The client in use and the task following it.
    current: Mutex<Option<(Client, tokio::task::JoinHandle<()>)>>,
    /// This link, for the handles built from `&self`.
    me: Mutex<Weak<Link>>,
}

impl RemoteLink for Link {
    fn state(&self) -> ConnectionState {
        self.state.lock_unpoisoned().clone()
    }

    fn reconnect(self: Arc<Self>) {
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            self.set_state(ConnectionState::Disconnected(
                "reconnecting needs a Tokio runtime".into(),
            ));
            return;
        };
        self.set_state(ConnectionState::Connecting);
        runtime.spawn(async move {
            if let Err(e) = self.connect_and_register(false).await {
                tracing::warn!(target: "mcp_registry::remote", server = %self.name, error = %e, "reconnect failed");
            }
        });
    }
}

impl Link {
    fn set_state(&self, state: ConnectionState) {
        *self.state.lock_unpoisoned() = state;
    }

    fn handle(&self) -> Option<Arc<dyn RemoteLink>> {
        self.me
            .lock_unpoisoned()
            .upgrade()
            .map(|link| link as Arc<dyn RemoteLink>)
    }

    /// Connects, lists the remote and registers it: unconditionally when `first`, else only
    /// while this link is still the one mounted under the name.
    async fn connect_and_register(&self, first: bool) -> Result<(), MountError> {
        self.set_state(ConnectionState::Connecting);
        if let Some(old) = self.take_current() {
            old.close().await;
        }
        let client_error = |source| MountError::Client {
            name: self.name.clone(),
            source,
        };
        let result = async {
            let client = (self.connect)().await.map_err(client_error)?;
            match self.listed(&client).await {
                Ok(server) => Ok((client, server)),
                Err(e) => {
                    client.close().await;
                    Err(e)
                }
            }
        }
        .await;
        let (client, server) = match result {
            Ok(found) => found,
            Err(e) => {
                self.set_state(ConnectionState::Disconnected(e.to_string()));
                return Err(e);
            }
        };
        let (Some(registry), Some(link)) = (self.registry.upgrade(), self.handle()) else {
            client.close().await;
            return Err(MountError::RegistryGone(self.name.clone()));
        };
        let changes = registry.subscribe();
        if first {
            registry.register_server(server);
        } else if !registry.replace_remote(&link, server) {
            // Unregistered or replaced while reconnecting: nothing to serve.
            client.close().await;
            return Ok(());
        }
        self.set_state(ConnectionState::Connected);
        let follower = tokio::spawn(follow(
            self.me.lock_unpoisoned().clone(),
            client.clone(),
            changes,
        ));
        *self.current.lock_unpoisoned() = Some((client, follower));
        Ok(())
    }

    /// The current client, its follower task stopped.
    fn take_current(&self) -> Option<Client> {
        let (client, follower) = self.current.lock_unpoisoned().take()?;
        follower.abort();
        Some(client)
    }

    /// The server the remote makes, as it lists itself now.
    async fn listed(&self, client: &Client) -> Result<Server, MountError> {
        let client_error = |source| MountError::Client {
            name: self.name.clone(),
            source,
        };
        let capabilities = client.server_capabilities().unwrap_or_default();
        let info = client.server_info();
        let mut builder = Server::builder(&self.name);
        if let Some(info) = &info {
            builder = builder.version(&info.version);
            if let Some(title) = &info.title {
                builder = builder.title(title);
            }
        }
        if let Some(instructions) = client.instructions() {
            builder = builder.instructions(instructions);
        }
        if capabilities.tools.is_some() {
            let tools = client.list_tools().await.map_err(client_error)?;
            builder = builder.tools(
                tools
                    .into_iter()
                    .filter(|t| self.trusted(t))
                    .map(|t| self.tool(client, t)),
            );
        }
        if capabilities.prompts.is_some() {
            let prompts = client.list_prompts().await.map_err(client_error)?;
            builder = builder.prompts(prompts.into_iter().filter_map(|p| self.prompt(client, p)));
        }
        if capabilities.resources.is_some() {
            for r in client.list_resources().await.map_err(client_error)? {
                if let Some(resource) = self.resource(client, r) {
                    builder = builder.resource(resource);
                }
            }
            for t in client
                .list_resource_templates()
                .await
                .map_err(client_error)?
            {
                if let Some(template) = self.template(client, t) {
                    builder = builder.resource_template(template);
                }
            }
        }
        if let Some(link) = self.handle() {
            builder = builder.remote(link);
        }
        builder.build().map_err(|source| MountError::Server {
            name: self.name.clone(),
            source,
        })
    }

    /// Whether the pins (if any) trust `tool`.
    fn trusted(&self, tool: &ToolDescriptor) -> bool {
        self.pins
            .as_ref()
            .is_none_or(|pins| pins.check(&self.name, tool).is_ok())
    }

    /// A tool that forwards its calls to `client`.
    fn tool(&self, client: &Client, descriptor: ToolDescriptor) -> Tool {
        let handler = RemoteTool {
            client: client.clone(),
            server: self.name.clone(),
            tool: descriptor.name.clone(),
            pins: self.pins.clone(),
        };
        Tool::from_descriptor(descriptor, handler)
    }

    fn prompt(&self, client: &Client, p: PromptDescriptor) -> Option<Prompt> {
        let name = p.name.clone();
        let mut builder = Prompt::builder(&p.name);
        if let Some(title) = p.title {
            builder = builder.title(title);
        }
        if let Some(description) = p.description {
            builder = builder.description(description);
        }
        for argument in p.arguments {
            builder = builder.argument(argument);
        }
        if let Some(meta) = p.meta {
            builder = builder.meta(meta);
        }
        let client = client.clone();
        let built = builder.handler(move |arguments: PromptArguments| {
            let (client, name) = (client.clone(), name.clone());
            async move {
                let arguments: BTreeMap<String, String> = arguments.into_iter().collect();
                client.get_prompt(&name, arguments).await
            }
        });
        self.kept("prompt", &p.name, built)
    }

    fn resource(
        &self,
        client: &Client,
        r: crate::protocol::ResourceDescriptor,
    ) -> Option<Resource> {
        let uri = r.uri.clone();
        let built = ResourceBuilder::from_descriptor(r).handler(read_through(client));
        self.kept("resource", &uri, built)
    }

    fn template(
        &self,
        client: &Client,
        t: crate::protocol::ResourceTemplateDescriptor,
    ) -> Option<ResourceTemplate> {
        let uri_template = t.uri_template.clone();
        let built = ResourceTemplateBuilder::from_descriptor(t).handler(read_through(client));
        self.kept("resource template", &uri_template, built)
    }

    /// `built`, or `None` with a warning: one item this registry cannot serve does not keep
    /// the rest of the remote from being mounted.
    fn kept<T, E: fmt::Display>(&self, kind: &str, item: &str, built: Result<T, E>) -> Option<T> {
        built
            .map_err(|e| {
                tracing::warn!(target: "mcp_registry::remote", server = %self.name, kind, item, error = %e, "remote item left out");
            })
            .ok()
    }
}

/// Follows a mounted remote: lists it again when it says a list changed, forwards its log
/// messages to `tracing`, marks it disconnected when the connection goes, and closes it
/// once it is no longer mounted (`changes` is subscribed before the server is served, so
/// no unregistering is missed).
/// Keeps a 2026-07-28 listen stream open (again a second after the server ends it); never
/// returns. A legacy server tells of list changes unasked: then it only waits.
async fn listen_forever(client: &Client, stop: CancellationToken) {
    let filter = SubscriptionFilter {
        tools_list_changed: true,
        prompts_list_changed: true,
        resources_list_changed: true,
        resource_subscriptions: None,
    };
    loop {
        match client.listen(filter.clone(), stop.clone()).await {
            Ok(())
                if client
                    .protocol_version()
                    .is_some_and(|v| v.era() != ProtocolEra::Modern) =>
            {
                return std::future::pending().await;
            }
            Ok(()) => {}
            Err(e) => {
                tracing::debug!(target: "mcp_registry::remote", error = %e, "listen stream ended");
            }
        }
        tokio::time::sleep(std::time::Duration::from_secs(1)).await;
    }
}

async fn follow(
    link: Weak<Link>,
    client: Client,
    mut changes: tokio::sync::watch::Receiver<crate::registry::RegistryChange>,
) {
    let mut notes = client.notifications();
    // A 2026-07-28 server tells of list changes only on a listen stream; it is opened again
    // (a second later) whenever the server ends it.
    let stop_listening = CancellationToken::new();
    let _stop_on_return = stop_listening.clone().drop_guard();
    let listen = listen_forever(&client, stop_listening.clone());
    tokio::pin!(listen);
    let mut quarantine = link
        .upgrade()
        .and_then(|l| l.pins.as_ref().map(Pins::subscribe));
    loop {
        let pins_changed = async {
            let changed = match quarantine.as_mut() {
                Some(q) => q.changed().await.is_ok(),
                None => false,
            };
            if !changed {
                std::future::pending::<()>().await;
            }
        };
        tokio::select! {
            () = &mut listen => {}
            () = pins_changed => {
                if let Some(link) = link.upgrade() {
                    link.relist(&client).await;
                }
            }
            reason = client.closed() => {
                if let Some(link) = link.upgrade() {
                    tracing::warn!(target: "mcp_registry::remote", server = %link.name, %reason, "remote MCP server disconnected");
                    link.set_state(ConnectionState::Disconnected(reason));
                }
                return;
            }
            changed = changes.changed() => {
                let mounted = changed.is_ok()
                    && link.upgrade().is_some_and(|link| {
                        let (Some(registry), Some(handle)) = (link.registry.upgrade(), link.handle()) else {
                            return false;
                        };
                        registry.is_mounted(&link.name, &handle)
                    });
                if !mounted {
                    client.close().await;
                    return;
                }
            }
            note = notes.recv() => {
                let Some(link) = link.upgrade() else {
                    client.close().await;
                    return;
                };
                match note {
                    Ok(ServerNotification::ToolsListChanged
                    | ServerNotification::PromptsListChanged
                    | ServerNotification::ResourcesListChanged)
                    | Err(RecvError::Lagged(_)) => link.relist(&client).await,
                    // What changed between the listing and the stream's start was not told.
                    Ok(ServerNotification::Other { method, .. })
                        if method == method::SUBSCRIPTIONS_ACKNOWLEDGED =>
                    {
                        link.relist(&client).await;
                    }
                    Ok(ServerNotification::Log(log)) => {
                        tracing::info!(target: "mcp_registry::remote", server = %link.name, level = ?log.level, logger = log.logger.as_deref().unwrap_or_default(), data = %log.data, "remote log message");
                    }
                    Ok(_) => {}
                    Err(RecvError::Closed) => return,
                }
            }
        }
    }
}

impl Link {
    /// Lists the remote again and re-registers it while it is still mounted.
    async fn relist(&self, client: &Client) {
        let (Some(registry), Some(handle)) = (self.registry.upgrade(), self.handle()) else {
            return;
        };
        match self.listed(client).await {
            Ok(server) => {
                let unchanged = registry
                    .server(&self.name)
                    .is_some_and(|current| same_listing(&current, &server));
                if !unchanged {
                    registry.replace_remote(&handle, server);
                }
            }
            Err(e) => {
                tracing::warn!(target: "mcp_registry::remote", server = %self.name, error = %e, "listing the remote again failed");
            }
        }
    }
}

struct RemoteTool {
    client: Client,
    /// The name it is mounted under.
    server: String,
    tool: String,
    pins: Option<Pins>,
}

/// Progress tokens of forwarded calls: unique in the process.
static NEXT_PROGRESS_TOKEN: AtomicU64 = AtomicU64::new(1);

impl ToolHandler for RemoteTool {
    fn call(
        &self,
        ctx: ToolContext,
        arguments: Arguments<'_>,
    ) -> BoxFuture<'static, HandlerResult> {
        let arguments = arguments.into_map();
        let (client, server, tool) = (self.client.clone(), self.server.clone(), self.tool.clone());
        let pins = self.pins.clone();
        Box::pin(async move {
            if let Some(pins) = pins {
                still_trusted(&pins, &client, &server, &tool).await?;
            }
            forward(ctx, client, &server, tool, Value::Object(arguments?)).await
        })
    }
}

/// Refuses a call when the definition of `tool` the remote offers now is not the pinned one.
async fn still_trusted(
    pins: &Pins,
    client: &Client,
    server: &str,
    tool: &str,
) -> Result<(), ToolError> {
    let tools = client
        .list_tools()
        .await
        .map_err(|e| tool_error(server, tool, e))?;
    match tools.iter().find(|t| t.name == tool) {
        Some(offered) => pins
            .check(server, offered)
            .map_err(|q| ToolError::failed(q.to_string())),
        // Gone from the listing: the remote answers the call itself.
        None => Ok(()),
    }
}

/// Calls `tool` on the remote, relaying progress; the call runs in its own task so that when
/// this future is dropped (the caller cancelled or timed out) the remote is told.
async fn forward(
    ctx: ToolContext,
    client: Client,
    server: &str,
    tool: String,
    arguments: Value,
) -> HandlerResult {
    let cancellation = CancellationToken::new();
    let _cancel_on_drop = cancellation.clone().drop_guard();
    let mut options = RequestOptions::new().cancellation(cancellation);
    let token = ctx.progress_token().map(|_| {
        let n = NEXT_PROGRESS_TOKEN.fetch_add(1, Ordering::Relaxed);
        Value::String(format!("mcp-registry-forward-{n}"))
    });
    if let Some(token) = &token {
        options = options.progress_token(token.clone());
    }
    let mut notes = token.as_ref().map(|_| client.notifications());
    let call = {
        let tool = tool.clone();
        tokio::spawn(async move { client.call_tool(&tool, arguments).options(options).await })
    };
    tokio::pin!(call);
    loop {
        let progress = async {
            match notes.as_mut() {
                Some(notes) => notes.recv().await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            joined = &mut call => {
                return match joined {
                    Ok(Ok(result)) => Ok(result),
                    Ok(Err(e)) => Err(tool_error(server, &tool, e)),
                    Err(e) => Err(ToolError::failed(format!("forwarding {tool} failed: {e}"))),
                };
            }
            note = progress => match note {
                Ok(ServerNotification::Progress(p)) if Some(&p.progress_token) == token.as_ref() => {
                    let _ = ctx.progress(p.progress, p.total, p.message.as_deref());
                }
                Err(RecvError::Closed) => notes = None,
                _ => {}
            }
        }
    }
}

/// A forwarded call's failure as the caller's tool error: the remote's invalid-params error
/// stays an argument error; anything else names the remote.
fn tool_error(server: &str, tool: &str, error: ClientError) -> ToolError {
    match error.server_error() {
        Some(e) if e.code == ErrorCode::INVALID_PARAMS => {
            ToolError::InvalidArguments(e.message.clone())
        }
        _ => ToolError::failed(format!(
            "MCP server {server:?} (remote) failed calling {tool}: {error}"
        )),
    }
}

/// Whether two listings of a remote describe the same server (so re-registering it would
/// tell listeners of a change that is none).
fn same_listing(a: &Server, b: &Server) -> bool {
    a.version() == b.version()
        && a.title() == b.title()
        && a.instructions() == b.instructions()
        && a.tools()
            .iter()
            .map(Tool::descriptor)
            .eq(b.tools().iter().map(Tool::descriptor))
        && a.prompts()
            .iter()
            .map(Prompt::descriptor)
            .eq(b.prompts().iter().map(Prompt::descriptor))
        && a.resources()
            .iter()
            .map(Resource::descriptor)
            .eq(b.resources().iter().map(Resource::descriptor))
        && a.resource_templates()
            .iter()
            .map(ResourceTemplate::descriptor)
            .eq(b
                .resource_templates()
                .iter()
                .map(ResourceTemplate::descriptor))
}

/// A read handler that reads the requested URI from the remote.
fn read_through(
    client: &Client,
) -> impl Fn(ResourceRequest) -> BoxFuture<'static, Result<ReadResourceResult, ClientError>>
+ Send
+ Sync
+ 'static {
    let client = client.clone();
    move |request: ResourceRequest| {
        let client = client.clone();
        Box::pin(async move { client.read_resource(request.uri()).await })
    }
}
