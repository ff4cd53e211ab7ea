//! [`Registry`]: servers, their enabled flags, the tool and prompt indexes, and calling tools
//! (getting prompts, reading resources) by name.

pub(crate) mod approval;
mod builder;
mod bus;
mod completion;
mod error;
mod guard;
mod holder;
pub mod layer;
mod options;
mod prompts;
pub mod quota;

mod resources;
pub(crate) mod scope;
pub(crate) mod skills;
mod snapshot;
mod stub;
mod tasks;
pub(crate) mod tools;
mod union;

use std::collections::BTreeMap;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use arc_swap::ArcSwap;
use tokio::sync::watch;

pub use approval::{Approval, ApprovalRequest};
pub use builder::RegistryBuilder;
pub use bus::{ChangeBus, RemoteChanges, SharedChange};
pub use error::{CallError, RegistryError};
pub use options::{CallOptions, WithOptions};
pub(crate) use options::{CallerView, ListingFilter};
pub use prompts::{GetPromptError, PromptDefinition, PromptGet, PromptRequest};
pub use resources::{
    ReadRequest, ReadResourceError, ResourceDefinition, ResourceRead, ResourceTemplateDefinition,
};
pub(crate) use resources::{UpdateHook, exists as resource_exists};
pub use tasks::{TaskHandle, TaskStart};
pub(crate) use tasks::{TaskLaunch, TaskRun, end_of};
pub use tools::{CallFuture, CallRequest, ToolCall};

use crate::protocol;
use crate::server::{ConnectionState, RemoteLink, Server, ServerRegistration};
use crate::sync::MutexExt;
use crate::tool::Extensions;
pub(crate) use snapshot::{ServerEntry, Snapshot, Target, split_qualified};
pub(crate) use union::UnionIdentity;

/// The name every enabled server of a registry is served under as one: pass it wherever a
/// server's name is asked for ([`Registry::handle_mcp_message`], [`ServerSession::new`],
/// the transports) to serve the union of the registry's enabled servers. No server can be
/// named so (`*` is outside the characters a server name may use).
///
/// The union follows the registry: each request sees the servers enabled when it arrives,
/// and sessions are told `notifications/tools/list_changed` (and the prompts and resources
/// ones) when any server changes. A tool is listed under its plain name when no other
/// enabled server has a tool of that name, and as `mcp__<server>__<tool>` (every one of
/// them) when several do; a client may also call any tool by its qualified name. Prompts
/// follow the same rule. Resources keep their URIs: when two servers have a resource at the
/// same URI (or the same URI template), the first server in name order wins. Layers,
/// approval and a tool's [`ToolContext`](crate::ToolContext) see the tool's own server and
/// name. The union introduces itself as [`RegistryBuilder::name`] and
/// [`RegistryBuilder::version`], with every server's instructions unless
/// [`RegistryBuilder::instructions`] says otherwise.
///
/// [`ServerSession::new`]: crate::ServerSession::new
///
/// ```
/// use mcp_registry::{ALL_SERVERS, Registry, Server, Tool};
/// use serde_json::json;
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let tool = |name: &str| {
///     Tool::builder(name).typed(|_: serde_json::Map<String, serde_json::Value>| async { "ok" }).unwrap()
/// };
/// let registry = Registry::from_servers([
///     Server::builder("a").tool(tool("add")).tool(tool("get")).build().unwrap(),
///     Server::builder("b").tool(tool("get")).build().unwrap(),
/// ]);
/// let list = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"});
/// let listed = registry.handle_mcp_message(ALL_SERVERS, list).await.unwrap();
/// let names: Vec<&str> = listed["result"]["tools"].as_array().unwrap().iter()
///     .map(|t| t["name"].as_str().unwrap()).collect();
/// assert_eq!(names, ["add", "mcp__a__get", "mcp__b__get"]);
/// # }
/// ```
pub const ALL_SERVERS: &str = "*";

/// The timeout a registry applies to calls unless told otherwise.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

/// One server's state, as [`Registry::server_status`] reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ServerStatus {
    /// The server's name.
    pub name: String,
    /// Whether its tools are listed and callable.
    pub enabled: bool,
    /// The server's version.
    pub version: String,
    /// How many tools it has.
    pub tool_count: usize,
    /// Its tool names, sorted.
    pub tool_names: Vec<String>,
    /// How many prompts it has.
    pub prompt_count: usize,
    /// Its prompt names, sorted.
    pub prompt_names: Vec<String>,
    /// How many resources (fixed URIs) it has.
    pub resource_count: usize,
    /// How many resource templates it has.
    pub resource_template_count: usize,
    /// For a server mounted from a remote MCP server, its connection's state; `None` for an
    /// in-process server.
    pub connection: Option<ConnectionState>,
}

/// A tool of an enabled server, as [`Registry::all_tool_definitions`] lists it.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ToolDefinition {
    /// The server that provides it.
    pub server: String,
    /// `mcp__<server>__<tool>`.
    pub qualified_name: String,
    /// The tool as `tools/list` describes it.
    pub tool: protocol::ToolDescriptor,
}

/// Why a server cannot be served.
#[derive(Debug, thiserror::Error)]
pub(crate) enum Unavailable {
    #[error("unknown MCP server {0:?}")]
    Unknown(String),
    #[error("MCP server {0:?} is disabled")]
    Disabled(String),
}

/// What changed in a registry, as [`Registry::subscribe`] reports it.
///
/// A `watch` receiver sees only the latest value: several changes in a row can arrive as
/// one. [`servers`](Self::servers) names those of the latest change only; to know whether a
/// server changed since a generation you saw, ask [`changed_since`](Self::changed_since),
/// which no coalescing can fool.
///
/// ```
/// # use mcp_registry::{Registry, Server};
/// let registry = Registry::new();
/// let changes = registry.subscribe();
/// let seen = changes.borrow().generation;
/// registry.register_server(Server::builder("a").build().unwrap());
/// registry.register_server(Server::builder("b").build().unwrap());
/// let change = changes.borrow();
/// assert_eq!(change.servers, ["b"]);
/// assert!(change.changed_since("a", seen) && change.changed_since("b", seen));
/// assert!(!change.changed_since("c", seen));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct RegistryChange {
    /// Increases by one with every change.
    pub generation: u64,
    /// The servers whose listed tools changed in the latest change (registered, replaced,
    /// toggled, unregistered).
    pub servers: Vec<String>,
    /// For every server name that ever changed, the generation of its latest change.
    last_changed: Arc<BTreeMap<String, u64>>,
}

impl RegistryChange {
    /// Whether `server`'s listed tools changed after generation `seen`.
    pub fn changed_since(&self, server: &str, seen: u64) -> bool {
        self.last_changed.get(server).is_some_and(|&g| g > seen)
    }
}

/// `mcp__<server>__<tool>`.
pub fn qualified_name(server: &str, tool: &str) -> String {
    format!("mcp__{server}__{tool}")
}

pub(crate) struct Config {
    pub(crate) default_timeout: Option<Duration>,
    pub(crate) page_size: Option<usize>,
    pub(crate) list_ttl: Duration,
    pub(crate) extensions: Extensions,
    /// The host's layers, then its approval.
    pub(crate) layers: scope::Stack,
    /// The keys of 2026-07-28 `requestState`: the host's, or one drawn on first use.
    pub(crate) request_state_keys: std::sync::OnceLock<crate::tool::RequestStateKeys>,
    /// How long a `requestState` is accepted.
    pub(crate) request_state_ttl: Duration,
    /// Whether tools read scalars sent as strings as their schema's number, integer or
    /// boolean.
    pub(crate) lenient_scalars: bool,
    /// How the union of the servers ([`ALL_SERVERS`]) introduces itself.
    pub(crate) identity: UnionIdentity,
    /// The registry's tasks: their store, and those this process runs.
    pub(crate) tasks: Arc<crate::task::Tasks>,
    /// Where changes go to (and come from) the other replicas, when there are some.
    pub(crate) change_bus: Option<Arc<dyn ChangeBus>>,
}

impl Config {
    /// The ring of request-state keys (made, with one random key, on first use).
    pub(crate) fn request_state_ring(&self) -> &crate::tool::RequestStateKeys {
        self.request_state_keys
            .get_or_init(crate::tool::RequestStateKeys::random)
    }

    /// The request-state keys as they are now, for one request.
    pub(crate) fn request_state_key(&self) -> Arc<crate::tool::KeySet> {
        self.request_state_ring().current()
    }
}

struct Inner {
    state: ArcSwap<Snapshot>,
    /// Serializes writers; readers never take it.
    write: Mutex<()>,
    config: Config,
    changes: watch::Sender<RegistryChange>,
    /// Sessions to tell when a resource changes.
    updates: resources::ResourceUpdates,
}

/// A set of servers, answering tool calls and MCP messages in-process.
///
/// `Clone + Send + Sync`; clones share state. Readers (calls, listings) load an immutable
/// snapshot and never wait on writers; each change (register, toggle, …) is atomic, and calls
/// already running finish undisturbed.
///
/// ```
/// use mcp_registry::{Registry, Server, Tool};
/// use serde_json::json;
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let echo = Tool::new("echo", "Echo", json!({"type": "object"}), |args: serde_json::Value| async move {
///     args.to_string()
/// })
/// .unwrap();
/// let registry = Registry::new();
/// registry.register_server(Server::new("util", None, [echo]).unwrap());
/// let result = registry.call_tool_by_name("echo", json!({"x": 1})).await.unwrap();
/// assert_eq!(result.first_text(), Some(r#"{"x":1}"#));
/// registry.toggle_server("util", false).unwrap();
/// assert!(registry.call_tool_by_name("echo", json!({})).await.is_err());
/// # }
/// ```
#[derive(Clone)]
pub struct Registry {
    inner: Arc<Inner>,
}

impl Default for Registry {
    fn default() -> Self {
        Self::new()
    }
}

impl std::fmt::Debug for Registry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Registry")
            .field("servers", &self.server_status())
            .finish()
    }
}

impl Registry {
    /// An empty registry with default settings.
    pub fn new() -> Self {
        Self::builder().build()
    }

    /// Configures a registry.
    pub fn builder() -> RegistryBuilder {
        RegistryBuilder::new()
    }

    /// The ring of keys that sign and verify this registry's 2026-07-28 `requestState`: a
    /// handle, to rotate them while the registry serves (the host's, or one random key).
    pub fn request_state_keys(&self) -> crate::tool::RequestStateKeys {
        self.config().request_state_ring().clone()
    }

    /// A registry holding `servers`, all enabled (a later server with the same name replaces
    /// an earlier one).
    pub fn from_servers(servers: impl IntoIterator<Item = Server>) -> Self {
        servers
            .into_iter()
            .fold(Self::builder(), RegistryBuilder::server)
            .build()
    }

    /// A registry of every server defined with `server!` in the program.
    ///
    /// # Panics
    /// When two collected servers share a name (the message names both definitions); use
    /// [`try_collected`](Self::try_collected) to get that as an error.
    pub fn collected() -> Self {
        match Self::try_collected() {
            Ok(r) => r,
            Err(e) => panic!("{e}"),
        }
    }

    /// Like [`collected`](Self::collected), returning duplicate names as an error.
    pub fn try_collected() -> Result<Self, RegistryError> {
        Ok(Self::from_servers(collect_servers()?))
    }

    pub(crate) fn snapshot(&self) -> arc_swap::Guard<Arc<Snapshot>> {
        self.inner.state.load()
    }

    pub(crate) fn config(&self) -> &Config {
        &self.inner.config
    }

    /// The name and identity of the union of the enabled servers ([`ALL_SERVERS`]).
    pub(crate) fn union_identity(&self) -> &UnionIdentity {
        &self.inner.config.identity
    }

    /// The server named `name`, if registered and enabled: what dispatch serves.
    #[inline]
    pub(crate) fn enabled_server(&self, name: &str) -> Result<Server, Unavailable> {
        self.snapshot()
            .enabled_server(name, &self.inner.config.identity)
            .cloned()
    }

    /// The tool a `tools/call` naming `tool` at the endpoint `endpoint` (a server, or
    /// [`ALL_SERVERS`]) resolves to, as `(its own server, its own name)`: what
    /// authorization judges, never the name as sent (a union's qualified alias names the
    /// same tool as its plain name). `None` when no tool answers to it.
    #[cfg(feature = "http")]
    pub(crate) fn resolve_tool(&self, endpoint: &str, tool: &str) -> Option<(Arc<str>, Arc<str>)> {
        let snapshot = self.snapshot();
        let served = snapshot.served(endpoint, &self.inner.config.identity)?;
        let (_, names) = served.tool_entry(tool)?;
        Some((names.server.clone(), names.tool.clone()))
    }

    /// The server served under `name`: the union for [`ALL_SERVERS`], else the server of
    /// that name, enabled or not.
    pub(crate) fn served(&self, name: &str) -> Option<Server> {
        self.snapshot()
            .served(name, &self.inner.config.identity)
            .cloned()
    }

    /// Applies `change` to a copy of the server map and swaps it in; `f` returns the names of
    /// the servers whose listed tools changed, and what the caller should get back.
    fn update<R>(
        &self,
        change: impl FnOnce(&mut BTreeMap<Arc<str>, ServerEntry>) -> (Vec<String>, R),
    ) -> R {
        let _writer = self.inner.write.lock_unpoisoned();
        let mut servers = self.inner.state.load().servers.clone();
        let (changed, out) = change(&mut servers);
        if !changed.is_empty() {
            self.inner.state.store(Arc::new(Snapshot::build(servers)));
            if let Some(bus) = &self.inner.config.change_bus {
                bus.publish(SharedChange::Servers {
                    servers: changed.clone(),
                });
            }
            self.announce(changed);
        }
        out
    }

    /// Tells the registry's watchers that `changed` servers' lists changed (here, or in
    /// another replica: see [`ChangeBus`]).
    fn announce(&self, changed: Vec<String>) {
        if changed.is_empty() {
            return;
        }
        self.inner.changes.send_modify(|c| {
            c.generation += 1;
            let last_changed = Arc::make_mut(&mut c.last_changed);
            for name in &changed {
                last_changed.insert(name.clone(), c.generation);
            }
            c.servers = changed;
        });
    }

    /// Adds `server`, replacing (and returning) a server of the same name. A replaced server
    /// keeps its enabled flag; a new one starts enabled.
    pub fn register_server(&self, server: Server) -> Option<Server> {
        self.update(|servers| {
            let (name, entry) = entry_for(servers, server);
            let old = servers.insert(name.clone(), entry);
            (vec![name.to_string()], old.map(|e| e.server))
        })
    }

    /// Adds every server of `new` in one atomic change (replacing servers of the same names,
    /// which keep their enabled flags) and returns their names.
    #[cfg(feature = "agent")]
    pub(crate) fn register_servers(&self, new: Vec<Server>) -> Vec<String> {
        self.update(|servers| {
            let mut names = Vec::with_capacity(new.len());
            for server in new {
                let (name, entry) = entry_for(servers, server);
                names.push(name.to_string());
                servers.insert(name, entry);
            }
            (names.clone(), names)
        })
    }

    /// Every server, sorted by name, read from one snapshot.
    #[cfg(feature = "agent")]
    pub(crate) fn servers(&self) -> Vec<Server> {
        self.snapshot()
            .servers
            .values()
            .map(|e| e.server.clone())
            .collect()
    }

    /// Removes the server named `name` and returns it; a no-op (returning `None`) when absent.
    /// Calls already running on it finish normally.
    pub fn unregister_server(&self, name: &str) -> Option<Server> {
        self.update(|servers| match servers.remove(name) {
            Some(e) => (vec![name.to_owned()], Some(e.server)),
            None => (Vec::new(), None),
        })
    }

    /// Enables or disables the server named `name`. A disabled server's tools and prompts are
    /// neither listed nor callable; calls already running finish normally.
    pub fn toggle_server(&self, name: &str, enabled: bool) -> Result<(), RegistryError> {
        self.update(|servers| match servers.get_mut(name) {
            None => (
                Vec::new(),
                Err(RegistryError::UnknownServer(name.to_owned())),
            ),
            Some(e) if e.enabled == enabled => (Vec::new(), Ok(())),
            Some(e) => {
                e.enabled = enabled;
                (vec![name.to_owned()], Ok(()))
            }
        })
    }

    /// Re-establishes the server named `name`: it is enabled again and its listeners are told
    /// its tool list changed (so clients re-fetch). An in-process server holds no connection,
    /// so there is nothing else to restore. A server mounted from a remote MCP server
    /// ([`client::RemoteServer`](crate::client::RemoteServer)) reconnects in the background
    /// on the current Tokio runtime: its [`ServerStatus::connection`] reads
    /// [`ConnectionState::Connecting`] until the remote is connected and listed again (the
    /// server is then registered anew, a change [`subscribe`](Self::subscribe) reports), or
    /// `Disconnected` with the reason.
    pub fn reconnect_server(&self, name: &str) -> Result<(), RegistryError> {
        let remote = self.update(|servers| match servers.get_mut(name) {
            None => (
                Vec::new(),
                Err(RegistryError::UnknownServer(name.to_owned())),
            ),
            Some(e) => {
                e.enabled = true;
                (vec![name.to_owned()], Ok(e.server.remote().cloned()))
            }
        })?;
        if let Some(link) = remote {
            link.reconnect();
        }
        Ok(())
    }

    /// Registers `server` in place of the server named like it only while that one is
    /// still mounted through `link` (not unregistered or replaced meanwhile); returns
    /// whether it did.
    pub(crate) fn replace_remote(&self, link: &Arc<dyn RemoteLink>, server: Server) -> bool {
        self.update(|servers| {
            let ours = servers
                .get(server.name())
                .and_then(|e| e.server.remote())
                .is_some_and(|r| same_link(r, link));
            if !ours {
                return (Vec::new(), false);
            }
            let (name, entry) = entry_for(servers, server);
            servers.insert(name.clone(), entry);
            (vec![name.to_string()], true)
        })
    }

    /// Whether the server named `name` is mounted through `link`.
    pub(crate) fn is_mounted(&self, name: &str, link: &Arc<dyn RemoteLink>) -> bool {
        self.snapshot()
            .server(name)
            .and_then(|e| e.server.remote())
            .is_some_and(|r| same_link(r, link))
    }

    /// A handle that does not keep the registry alive.
    pub(crate) fn downgrade(&self) -> WeakRegistry {
        WeakRegistry(Arc::downgrade(&self.inner))
    }

    /// Replaces the whole set of servers in one step. Servers that stay (by name) keep their
    /// enabled flag; new ones start enabled.
    pub fn set_servers(&self, new: impl IntoIterator<Item = Server>) {
        self.update(|servers| {
            let mut next = BTreeMap::new();
            for server in new {
                let (name, entry) = entry_for(servers, server);
                next.insert(name, entry);
            }
            let changed = servers
                .keys()
                .chain(next.keys())
                .filter(|n| match (servers.get(*n), next.get(*n)) {
                    (Some(a), Some(b)) => !a.server.ptr_eq(&b.server) || a.enabled != b.enabled,
                    _ => true,
                })
                .map(|n| n.to_string())
                .collect::<std::collections::BTreeSet<_>>()
                .into_iter()
                .collect();
            *servers = next;
            (changed, ())
        })
    }

    /// Server names, sorted.
    pub fn server_names(&self) -> Vec<String> {
        self.snapshot()
            .servers
            .keys()
            .map(|k| k.to_string())
            .collect()
    }

    /// The server named `name`, enabled or not.
    pub fn server(&self, name: &str) -> Option<Server> {
        self.snapshot().server(name).map(|e| e.server.clone())
    }

    /// Whether the server named `name` exists and is enabled.
    pub fn is_enabled(&self, name: &str) -> Option<bool> {
        self.snapshot().server(name).map(|e| e.enabled)
    }

    /// Every server's state, sorted by name.
    pub fn server_status(&self) -> Vec<ServerStatus> {
        self.snapshot()
            .servers
            .values()
            .map(|e| ServerStatus {
                name: e.server.name().to_owned(),
                enabled: e.enabled,
                version: e.server.version().to_owned(),
                tool_count: e.server.tools().len(),
                tool_names: e.server.tool_names().map(str::to_owned).collect(),
                prompt_count: e.server.prompts().len(),
                prompt_names: e.server.prompt_names().map(str::to_owned).collect(),
                resource_count: e.server.resources().len(),
                resource_template_count: e.server.resource_templates().len(),
                connection: e.server.connection_state(),
            })
            .collect()
    }

    /// Every tool of every enabled server, sorted by server then tool name.
    pub fn all_tool_definitions(&self) -> Vec<ToolDefinition> {
        let snapshot = self.snapshot();
        let definitions = snapshot.enabled().flat_map(|server| {
            server.tools().iter().map(|t| ToolDefinition {
                server: server.name().to_owned(),
                qualified_name: qualified_name(server.name(), t.name()),
                tool: t.descriptor().clone(),
            })
        });
        definitions.collect()
    }

    /// Watches registry changes: the receiver sees the latest [`RegistryChange`] whenever
    /// servers are registered, replaced, toggled or unregistered.
    pub fn subscribe(&self) -> watch::Receiver<RegistryChange> {
        self.inner.changes.subscribe()
    }
}

/// A [`Registry`] that may be gone.
#[derive(Clone)]
pub(crate) struct WeakRegistry(std::sync::Weak<Inner>);

impl WeakRegistry {
    /// The registry, while some handle to it lives.
    pub(crate) fn upgrade(&self) -> Option<Registry> {
        self.0.upgrade().map(|inner| Registry { inner })
    }
}

/// Whether two handles point at the same connection.
fn same_link(a: &Arc<dyn RemoteLink>, b: &Arc<dyn RemoteLink>) -> bool {
    std::ptr::addr_eq(Arc::as_ptr(a), Arc::as_ptr(b))
}

/// `server`'s entry among `servers`: a server replacing one of the same name keeps its enabled
/// flag; a new one starts enabled.
fn entry_for(servers: &BTreeMap<Arc<str>, ServerEntry>, server: Server) -> (Arc<str>, ServerEntry) {
    let name = server.shared_name().clone();
    let enabled = servers.get(&name).is_none_or(|e| e.enabled);
    (name, ServerEntry { server, enabled })
}

fn collect_servers() -> Result<Vec<Server>, RegistryError> {
    let all = ServerRegistration::all();
    if let Some(w) = all.windows(2).find(|w| w[0].name() == w[1].name()) {
        return Err(RegistryError::DuplicateServer {
            name: w[0].name().to_owned(),
            first: w[0].location().to_owned(),
            second: w[1].location().to_owned(),
        });
    }
    Ok(all.iter().map(|r| r.build()).collect())
}
