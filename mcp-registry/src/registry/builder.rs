//! [`RegistryBuilder`]: a registry's settings, host state, layers and first servers.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use arc_swap::ArcSwap;
use tokio::sync::watch;

use super::UnionIdentity;
use super::layer::Layer;
use super::{
    Approval, ApprovalRequest, ChangeBus, Config, DEFAULT_TIMEOUT, Inner, Registry, RegistryChange,
    RemoteChanges, ServerEntry, Snapshot, approval,
};
use crate::server::Server;
use crate::task::{MemoryTaskStore, TaskSettings, TaskStore, Tasks};
use crate::tool::Extensions;
use crate::tool::request_state;

/// Configures a [`Registry`].
#[derive(Debug)]
#[must_use = "call build() to get the registry"]
pub struct RegistryBuilder {
    default_timeout: Option<Duration>,
    page_size: Option<usize>,
    list_ttl: Duration,
    extensions: Extensions,
    request_state_keys: Option<crate::tool::RequestStateKeys>,
    request_state_ttl: Duration,
    approval: Option<approval::Approver>,
    layers: Vec<Arc<dyn Layer>>,
    servers: Vec<Server>,
    lenient_scalars: bool,
    identity: UnionIdentity,
    task_store: Option<Arc<dyn TaskStore>>,
    task_settings: TaskSettings,
    change_bus: Option<Arc<dyn ChangeBus>>,
}

impl RegistryBuilder {
    pub(super) fn new() -> Self {
        RegistryBuilder {
            default_timeout: Some(DEFAULT_TIMEOUT),
            page_size: None,
            list_ttl: Duration::ZERO,
            extensions: Extensions::new(),
            request_state_keys: None,
            request_state_ttl: request_state::DEFAULT_TTL,
            approval: None,
            layers: Vec::new(),
            servers: Vec::new(),
            lenient_scalars: true,
            identity: UnionIdentity::default(),
            task_store: None,
            task_settings: TaskSettings::default(),
            change_bus: None,
        }
    }

    /// Where the registry keeps its tasks (default: a [`MemoryTaskStore`](crate::task::MemoryTaskStore)
    /// of its own). A store kept outside the process lets another process answer
    /// `tasks/get` for the tasks this one runs.
    pub fn task_store(mut self, store: impl TaskStore) -> Self {
        self.task_store = Some(Arc::new(store));
        self
    }

    /// How the registry runs tasks: time to live, poll interval, tasks under way per
    /// requestor (see [`TaskSettings`]).
    pub fn task_settings(mut self, settings: TaskSettings) -> Self {
        self.task_settings = settings;
        self
    }

    /// The timeout for calls that set none (default 30 s).
    ///
    /// A limit is kept by a Tokio timer, counted from the call's first poll: a call that
    /// waits outside a Tokio runtime with time enabled fails with [`CallError::NoTimer`](super::CallError::NoTimer)
    /// instead of running unlimited (calls that finish without waiting are unaffected). To
    /// run calls on another executor, use
    /// [`without_default_timeout`](Self::without_default_timeout).
    pub fn default_timeout(mut self, timeout: Duration) -> Self {
        self.default_timeout = Some(timeout);
        self
    }

    /// No timeout for calls that set none.
    pub fn without_default_timeout(mut self) -> Self {
        self.default_timeout = None;
        self
    }

    /// Paginates `tools/list` with pages of `size` tools (default: one page).
    pub fn page_size(mut self, size: usize) -> Self {
        self.page_size = Some(size.max(1));
        self
    }

    /// The `ttlMs` caching hint on modern (2026-07-28) list and discover results (default 0:
    /// the registry can change at any time, so clients re-fetch), and on `resources/read`.
    /// A server's own hints ([`ServerBuilder::list_cache`](crate::ServerBuilder::list_cache),
    /// [`read_cache`](crate::ServerBuilder::read_cache)) win.
    pub fn list_ttl(mut self, ttl: Duration) -> Self {
        self.list_ttl = ttl;
        self
    }

    /// The key that signs 2026-07-28 `requestState` (HMAC-SHA256), so that the state one
    /// instance issues is accepted by every instance sharing the key (behind a load
    /// balancer). Default: 32 random bytes drawn when the first state is issued or read, good
    /// for this registry only. Keep it secret: it is what makes the state tamper-proof.
    ///
    /// One key; for several, and to rotate them while the registry runs, see
    /// [`request_state_keys`](Self::request_state_keys).
    pub fn request_state_key(mut self, key: [u8; 32]) -> Self {
        self.request_state_keys = Some(crate::tool::RequestStateKeys::new(key));
        self
    }

    /// The keys that sign and verify 2026-07-28 `requestState`: the ring's first key signs,
    /// every key verifies. Keep a clone of `keys` to rotate them while the registry serves
    /// (see [`RequestStateKeys`](crate::tool::RequestStateKeys) for the three steps across
    /// replicas); load them with
    /// [`RequestStateKeys::from_env`](crate::tool::RequestStateKeys::from_env).
    pub fn request_state_keys(mut self, keys: crate::tool::RequestStateKeys) -> Self {
        self.request_state_keys = Some(keys);
        self
    }

    /// How long a 2026-07-28 `requestState` is accepted after it was issued (default 15
    /// minutes): a retry after that is refused and the client starts over.
    pub fn request_state_ttl(mut self, ttl: Duration) -> Self {
        self.request_state_ttl = ttl;
        self
    }

    /// Whether a tool's arguments may carry scalars as strings (default: yes): `"3"` where the
    /// tool's input schema says `integer` or `number`, `"true"` or `"false"` where it says
    /// `boolean`, at any depth (a field of a nested struct, an `Option`, a list's elements).
    /// MCP Inspector's CLI sends every argument as a string, and models sometimes do. Only a
    /// call whose arguments fail to read as they are is read again this way, so well-typed
    /// calls pay nothing; a string is never read as a scalar where the schema also takes a
    /// string. Off (`false`), such a call is refused with the error naming the field.
    ///
    /// ```
    /// use mcp_registry::{Registry, Server, mcp_tool};
    /// use serde_json::json;
    ///
    /// /// Repeat a word.
    /// #[mcp_tool]
    /// async fn repeat(word: String, times: Option<u32>) -> String {
    ///     word.repeat(times.unwrap_or(1) as usize)
    /// }
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let server = || Server::builder("words").tool(repeat::tool()).build().unwrap();
    /// let lenient = Registry::builder().server(server()).build();
    /// let result = lenient
    ///     .call_tool_by_name("repeat", json!({"word": "ab", "times": "3"}))
    ///     .await
    ///     .unwrap();
    /// assert_eq!(result.content[0].as_text(), Some("ababab"));
    ///
    /// let strict = Registry::builder().server(server()).lenient_scalars(false).build();
    /// let refused = strict.call_tool_by_name("repeat", json!({"word": "ab", "times": "3"})).await;
    /// assert!(refused.unwrap_err().to_string().contains("field `times`"));
    /// # }
    /// ```
    pub fn lenient_scalars(mut self, enabled: bool) -> Self {
        self.lenient_scalars = enabled;
        self
    }

    /// Attaches a value every tool can read through [`ToolContext::get`](crate::ToolContext::get).
    pub fn extension<T: Send + Sync + 'static>(mut self, value: T) -> Self {
        self.extensions.insert(value);
        self
    }

    /// Asks `approve` before any tool, prompt, resource or completion of the registry runs,
    /// whichever way it is called (`call_tool_by_name`, `handle_mcp_message`/`handle_mcp_text`,
    /// a transport, an agent session): the host's `can_use_tool`.
    /// [`ApprovalRequest::kind`] says what is asked. A denial never runs the item; a tool's
    /// caller gets [`CallError::Denied`](super::CallError::Denied) (on the wire, a result with `isError: true` carrying
    /// the reason, which a model can read), a prompt's or resource's a -32600 error naming
    /// it. The wait for an answer ends with the call's cancellation; the call's time limit
    /// starts once the item runs. Approval is the innermost [layer](Self::layer).
    ///
    /// ```
    /// use mcp_registry::{Approval, CallError, Registry, Server, Tool};
    /// use serde_json::json;
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let rm = Tool::new("rm", "Remove a file", json!({"type": "object"}), |_| async { "removed" }).unwrap();
    /// let registry = Registry::builder()
    ///     .server(Server::new("fs", None, [rm]).unwrap())
    ///     .approval(|call| async move {
    ///         match call.arguments["path"].as_str() {
    ///             Some(path) if path.starts_with("/tmp/") => Approval::Allow,
    ///             _ => Approval::Deny(format!("{} only under /tmp", call.tool)),
    ///         }
    ///     })
    ///     .build();
    /// assert!(registry.call_tool_by_name("rm", json!({"path": "/tmp/x"})).await.is_ok());
    /// let denied = registry.call_tool_by_name("rm", json!({"path": "/etc"})).await.unwrap_err();
    /// assert_eq!(denied.to_string(), "calling tool \"rm\" was denied: rm only under /tmp");
    /// # }
    /// ```
    pub fn approval<F, Fut>(mut self, approve: F) -> Self
    where
        F: Fn(ApprovalRequest) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Approval> + Send + 'static,
    {
        self.approval = Some(approval::Approver::new(approve));
        self
    }

    /// Adds `layer` around every request the registry serves (`tools/call`, `prompts/get`,
    /// `resources/read`, `completion/complete`), whichever way it arrives: logging, rate
    /// limits, authorization checks, caching, metrics. Layers run in the order they are
    /// added, the first outermost, and before the registry's [approval](Self::approval);
    /// see [`layer`](crate::layer) for an example.
    pub fn layer(mut self, layer: impl Layer) -> Self {
        self.layers.push(Arc::new(layer));
        self
    }

    /// The name the registry announces (`serverInfo`) when it serves all its servers as one
    /// ([`ALL_SERVERS`](crate::ALL_SERVERS)); default `registry`.
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.identity.name = name.into();
        self
    }

    /// The version the registry announces when it serves all its servers as one; default
    /// [`DEFAULT_SERVER_VERSION`](crate::DEFAULT_SERVER_VERSION).
    pub fn version(mut self, version: impl Into<String>) -> Self {
        self.identity.version = version.into();
        self
    }

    /// The title the registry announces when it serves all its servers as one.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.identity.title = Some(title.into());
        self
    }

    /// The instructions the registry sends when it serves all its servers as one; default:
    /// every enabled server's own, each after its name.
    pub fn instructions(mut self, instructions: impl Into<String>) -> Self {
        self.identity.instructions = Some(instructions.into());
        self
    }

    /// Adds servers (a later one with the same name replaces an earlier one).
    pub fn servers(mut self, servers: impl IntoIterator<Item = Server>) -> Self {
        self.servers.extend(servers);
        self
    }

    /// Adds a server (a later one with the same name replaces an earlier one).
    pub fn server(mut self, server: Server) -> Self {
        self.servers.push(server);
        self
    }

    /// Shares the registry's changes with the other replicas of its server through `bus`
    /// (with the feature `redis`: `mcp_registry::replicas::RedisBus`, one per replica): a
    /// tool, prompt or resource list change, or a [`Registry::notify_resource_updated`],
    /// here reaches the `subscriptions/listen` streams and legacy sessions of every replica,
    /// and theirs reach this one's. Without a bus (the default) changes stay in the process.
    pub fn change_bus(mut self, bus: impl ChangeBus + 'static) -> Self {
        self.change_bus = Some(Arc::new(bus));
        self
    }

    /// The registry.
    pub fn build(self) -> Registry {
        let servers = self
            .servers
            .into_iter()
            .map(|s| {
                (
                    s.shared_name().clone(),
                    ServerEntry {
                        server: s,
                        enabled: true,
                    },
                )
            })
            .collect();
        let (changes, _) = watch::channel(RegistryChange {
            generation: 0,
            servers: Vec::new(),
            last_changed: Arc::default(),
        });
        let registry = Registry {
            inner: Arc::new(Inner {
                state: ArcSwap::from_pointee(Snapshot::build(servers)),
                write: Mutex::new(()),
                config: Config {
                    default_timeout: self.default_timeout,
                    page_size: self.page_size,
                    list_ttl: self.list_ttl,
                    extensions: self.extensions,
                    layers: super::scope::Stack::new(
                        self.layers,
                        self.approval.map(|a| Arc::new(a) as Arc<dyn Layer>),
                    ),
                    request_state_keys: match self.request_state_keys {
                        Some(keys) => keys.into(),
                        None => std::sync::OnceLock::new(),
                    },
                    request_state_ttl: self.request_state_ttl,
                    lenient_scalars: self.lenient_scalars,
                    identity: self.identity,
                    tasks: Tasks::new(
                        self.task_store
                            .unwrap_or_else(|| Arc::new(MemoryTaskStore::new())),
                        self.task_settings,
                    ),
                    change_bus: self.change_bus,
                },
                changes,
                updates: Default::default(),
            }),
        };
        if let Some(bus) = &registry.inner.config.change_bus {
            bus.attach(RemoteChanges::new(&registry));
        }
        registry
    }
}
