//! `Server`: a named, versioned group of tools, prompts and resources, and its registration in the process-wide
//! collection that `server!` submits to and [`Registry::collected`](crate::Registry::collected)
//! reads.

use std::fmt;
use std::sync::Arc;

use serde_json::Value;
use serde_json::value::RawValue;

use crate::prompt::Prompt;
use crate::protocol::{self, CacheHints, CacheScope, ProtocolVersion};
use crate::resource::{Resource, ResourceTemplate};
use crate::skill::Skill;
use crate::tool::{CallNames, Extensions, Tool};

mod builder;
mod listing;
mod union;

pub use builder::ServerBuilder;
pub(crate) use listing::ListingForm;
use listing::{EntryListing, ToolListing};
pub(crate) use union::{Origin, Origins};

/// The version a server gets when none is given.
pub const DEFAULT_SERVER_VERSION: &str = "1.0.0";

/// Why a server could not be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ServerBuildError {
    /// Two tools share a name.
    #[error(
        "server {server:?} has two tools named {tool:?}; tool names must be unique within a server"
    )]
    DuplicateTool {
        /// The server.
        server: String,
        /// The repeated name.
        tool: String,
    },
    /// Two prompts share a name.
    #[error(
        "server {server:?} has two prompts named {prompt:?}; prompt names must be unique within a server"
    )]
    DuplicatePrompt {
        /// The server.
        server: String,
        /// The repeated name.
        prompt: String,
    },
    /// Two resources share a URI.
    #[error(
        "server {server:?} has two resources at {uri:?}; resource URIs must be unique within a server"
    )]
    DuplicateResource {
        /// The server.
        server: String,
        /// The repeated URI.
        uri: String,
    },
    /// Two resource templates share a URI template.
    #[error(
        "server {server:?} has two resource templates {uri_template:?}; URI templates must be unique within a server"
    )]
    DuplicateResourceTemplate {
        /// The server.
        server: String,
        /// The repeated URI template.
        uri_template: String,
    },
    /// The server name is unusable.
    #[error("{}", crate::name::server_name_message(.name, .reason).as_str())]
    InvalidName {
        /// The refused name.
        name: String,
        /// What is wrong with it.
        reason: &'static str,
    },
}

fn validate_server_name(name: &str) -> Result<(), ServerBuildError> {
    match crate::name::server_name_problem(name) {
        None => Ok(()),
        Some(reason) => Err(ServerBuildError::InvalidName {
            name: name.to_owned(),
            reason,
        }),
    }
}

/// A named, versioned group of tools, prompts and resources. Immutable once built and cheap to clone; its
/// `tools/list` payload is serialized once, here, never per request.
///
/// ```
/// use mcp_registry::{Server, Tool};
/// let ping = Tool::builder("ping").typed(|_: serde_json::Map<String, serde_json::Value>| async { "pong" }).unwrap();
/// let server = Server::builder("net").version("2.0.0").tool(ping).build().unwrap();
/// assert_eq!(server.name(), "net");
/// assert_eq!(server.tool_names().collect::<Vec<_>>(), ["ping"]);
/// ```
#[derive(Clone)]
pub struct Server {
    inner: Arc<ServerInner>,
}

struct ServerInner {
    name: Arc<str>,
    version: String,
    title: Option<String>,
    instructions: Option<String>,
    /// Sorted by name.
    tools: Vec<Tool>,
    /// Tool names are the host's own, not a caller's, so a fast non-keyed hash is safe here.
    index: foldhash::HashMap<Arc<str>, usize>,
    /// Each tool's call names (server and tool), in `tools` order, shared by every call.
    names: Vec<Arc<CallNames>>,
    /// The server's own host state ([`ServerBuilder::extension`]).
    extensions: Extensions,
    listing: ToolListing,
    /// Sorted by name.
    prompts: Vec<Prompt>,
    /// Prompt name -> index in `prompts`.
    prompt_index: foldhash::HashMap<Arc<str>, usize>,
    /// Sorted by URI.
    resources: Vec<Resource>,
    /// Resource URI -> index in `resources` (URIs are the host's own).
    resource_index: foldhash::HashMap<Arc<str>, usize>,
    /// In the order added: `resources/read` tries them in this order.
    templates: Vec<ResourceTemplate>,
    /// Indexes into `templates`, sorted by name then URI template: the listing order.
    template_listing: Vec<usize>,
    /// Whether a prompt argument or template variable has a completion function.
    completions: bool,
    /// Whether a tool runs as a task (`ToolBuilder::task_support`).
    task_tools: bool,
    /// Whether a tool has an app (`_meta.ui`, MCP Apps).
    app_tools: bool,
    /// `prompts/list`, `resources/list` and `resources/templates/list` entries, serialized
    /// once per revision.
    prompt_entries: EntryListing,
    resource_entries: EntryListing,
    template_entries: EntryListing,
    /// The server's identity (`Implementation`, with its title) as a JSON value, built once:
    /// every 2026-07-28 result carries it in `_meta`.
    info: Value,
    /// `{"io.modelcontextprotocol/serverInfo": info}`, written once: the whole `_meta` of a
    /// 2026-07-28 result that has none of its own, spliced into replies as text.
    info_meta: Arc<RawValue>,
    /// The connection behind a server mounted from a remote MCP server.
    remote: Option<Arc<dyn RemoteLink>>,
    /// 2026-07-28 caching hints of its lists and `server/discover` (`None`: the registry's).
    list_cache: Option<CacheHints>,
    /// 2026-07-28 caching hints of `resources/read` when the handler sets none (`None`: the
    /// registry's TTL, `private`).
    read_cache: Option<CacheHints>,
    /// Sorted by URI; their files are among `resources`.
    skills: Vec<Skill>,
    /// For a registry's union of servers: where its items come from.
    origins: Option<Box<union::Origins>>,
}

/// The state of the connection behind a server mounted from a remote MCP server
/// ([`client::RemoteServer`](crate::client::RemoteServer)), as
/// [`ServerStatus::connection`](crate::ServerStatus::connection) reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ConnectionState {
    /// Connecting (or reconnecting) and listing what the remote offers.
    Connecting,
    /// Connected: calls are forwarded.
    Connected,
    /// The connection is gone (or could not be made), and why; calls fail until
    /// [`Registry::reconnect_server`](crate::Registry::reconnect_server) succeeds.
    Disconnected(String),
}

/// What a registry can ask of the connection behind a mounted server.
pub(crate) trait RemoteLink: Send + Sync + 'static {
    /// The connection's state now.
    fn state(&self) -> ConnectionState;
    /// Starts reconnecting in the background (the server is registered again once the
    /// remote is listed anew).
    fn reconnect(self: Arc<Self>);
}

impl Server {
    /// Starts building a server named `name`.
    pub fn builder(name: impl Into<String>) -> ServerBuilder {
        ServerBuilder {
            name: name.into(),
            version: None,
            title: None,
            instructions: None,
            tools: Vec::new(),
            prompts: Vec::new(),
            resources: Vec::new(),
            templates: Vec::new(),
            remote: None,
            list_cache: None,
            read_cache: None,
            extensions: Extensions::new(),
            skills: Vec::new(),
            origins: None,
        }
    }

    /// A server from a name, an optional version and its tools.
    pub fn new(
        name: impl Into<String>,
        version: Option<&str>,
        tools: impl IntoIterator<Item = Tool>,
    ) -> Result<Server, ServerBuildError> {
        let mut b = Server::builder(name).tools(tools);
        if let Some(v) = version {
            b = b.version(v);
        }
        b.build()
    }

    /// The server's name.
    pub fn name(&self) -> &str {
        &self.inner.name
    }

    /// The state of its connection, for a server mounted from a remote MCP server; `None`
    /// for an in-process one.
    pub fn connection_state(&self) -> Option<ConnectionState> {
        self.inner.remote.as_ref().map(|r| r.state())
    }

    pub(crate) fn remote(&self) -> Option<&Arc<dyn RemoteLink>> {
        self.inner.remote.as_ref()
    }

    pub(crate) fn shared_name(&self) -> &Arc<str> {
        &self.inner.name
    }

    /// The server's version.
    pub fn version(&self) -> &str {
        &self.inner.version
    }

    /// Display title.
    pub fn title(&self) -> Option<&str> {
        self.inner.title.as_deref()
    }

    /// Instructions for the model, sent at `initialize` / `server/discover`.
    pub fn instructions(&self) -> Option<&str> {
        self.inner.instructions.as_deref()
    }

    /// The tools, sorted by name.
    pub fn tools(&self) -> &[Tool] {
        &self.inner.tools
    }

    /// Tool names, sorted.
    pub fn tool_names(&self) -> impl Iterator<Item = &str> {
        self.inner.tools.iter().map(Tool::name)
    }

    /// The tool named `name` (O(1)).
    pub fn tool(&self, name: &str) -> Option<&Tool> {
        self.inner.index.get(name).map(|&i| &self.inner.tools[i])
    }

    /// The tool named `name` and the names its calls' contexts report (one lookup).
    #[inline]
    pub(crate) fn tool_entry(&self, name: &str) -> Option<(&Tool, &Arc<CallNames>)> {
        let &i = self.inner.index.get(name)?;
        Some((&self.inner.tools[i], &self.inner.names[i]))
    }

    /// The call names of each tool, in [`tools`](Self::tools) order.
    /// The server's own host state ([`ServerBuilder::extension`]).
    pub(crate) fn extensions(&self) -> &Extensions {
        &self.inner.extensions
    }

    pub(crate) fn call_names(&self) -> &[Arc<CallNames>] {
        &self.inner.names
    }

    /// The server's identity as 2026-07-28 results carry it in `_meta` (built once).
    pub(crate) fn info(&self) -> &Value {
        &self.inner.info
    }

    /// The `_meta` of a 2026-07-28 result that has none of its own: the server's identity,
    /// serialized once.
    pub(crate) fn info_meta(&self) -> &Arc<RawValue> {
        &self.inner.info_meta
    }

    /// The tool list as protocol revision `version` describes tools (`None`: the full
    /// descriptors, for callers that name no version).
    pub(crate) fn listing(&self, version: Option<ProtocolVersion>) -> &ListingForm {
        self.inner.listing.get(version, &self.inner.tools)
    }

    /// The prompts, sorted by name.
    pub fn prompts(&self) -> &[Prompt] {
        &self.inner.prompts
    }

    /// Prompt names, sorted.
    pub fn prompt_names(&self) -> impl Iterator<Item = &str> {
        self.inner.prompts.iter().map(Prompt::name)
    }

    /// The prompt named `name` (O(1)).
    pub fn prompt(&self, name: &str) -> Option<&Prompt> {
        self.inner
            .prompt_index
            .get(name)
            .map(|&i| &self.inner.prompts[i])
    }

    /// The resources, sorted by URI.
    pub fn resources(&self) -> &[Resource] {
        &self.inner.resources
    }

    /// The resource at `uri` (O(1)).
    pub fn resource(&self, uri: &str) -> Option<&Resource> {
        self.inner
            .resource_index
            .get(uri)
            .map(|&i| &self.inner.resources[i])
    }

    /// The resource templates, in the order they were added: `resources/read` tries them in
    /// this order after the exact URIs.
    pub fn resource_templates(&self) -> &[ResourceTemplate] {
        &self.inner.templates
    }

    /// The resource templates as listed: sorted by name, then URI template.
    pub fn listed_resource_templates(&self) -> impl ExactSizeIterator<Item = &ResourceTemplate> {
        self.inner
            .template_listing
            .iter()
            .map(|&i| &self.inner.templates[i])
    }

    /// Whether the server has resources or resource templates.
    pub fn has_resources(&self) -> bool {
        !self.inner.resources.is_empty() || !self.inner.templates.is_empty()
    }

    /// Whether a prompt argument or a resource template variable has a completion function:
    /// the server then serves `completion/complete` and advertises `completions`.
    pub fn has_completions(&self) -> bool {
        self.inner.completions
    }

    /// Whether one of its tools runs as a task: the server then advertises tasks (the
    /// 2025-11-25 `tasks` capability, the 2026-07-28 extension) and serves their methods.
    pub fn has_task_tools(&self) -> bool {
        self.inner.task_tools
    }

    /// Whether one of its tools has an app (`_meta.ui`): the server then declares MCP Apps,
    /// and its tool list is shown without the apps to a client that does not declare them.
    pub(crate) fn has_app_tools(&self) -> bool {
        self.inner.app_tools
    }

    /// The caching hints its 2026-07-28 list results and `server/discover` carry, when set
    /// with [`ServerBuilder::list_cache`] (else the registry's).
    pub fn list_cache(&self) -> Option<CacheHints> {
        self.inner.list_cache
    }

    /// The caching hints its 2026-07-28 `resources/read` results carry when the handler sets
    /// none, when set with [`ServerBuilder::read_cache`].
    pub fn read_cache(&self) -> Option<CacheHints> {
        self.inner.read_cache
    }

    /// Each prompt's descriptor as `version` describes it, serialized, in name order.
    pub(crate) fn prompt_entries(
        &self,
        version: Option<ProtocolVersion>,
    ) -> &[Box<serde_json::value::RawValue>] {
        self.inner.prompt_entries.get(
            version,
            self.inner.prompts.iter().map(Prompt::descriptor),
            protocol::PromptDescriptor::for_version,
        )
    }

    /// Each resource's descriptor as `version` describes it, serialized, in URI order.
    pub(crate) fn resource_entries(
        &self,
        version: Option<ProtocolVersion>,
    ) -> &[Box<serde_json::value::RawValue>] {
        self.inner.resource_entries.get(
            version,
            self.inner.resources.iter().map(Resource::descriptor),
            protocol::ResourceDescriptor::for_version,
        )
    }

    /// Each resource template's descriptor as `version` describes it, serialized, in listing
    /// order.
    pub(crate) fn template_entries(
        &self,
        version: Option<ProtocolVersion>,
    ) -> &[Box<serde_json::value::RawValue>] {
        self.inner.template_entries.get(
            version,
            self.listed_resource_templates()
                .map(ResourceTemplate::descriptor),
            protocol::ResourceTemplateDescriptor::for_version,
        )
    }

    /// The skills (SEP-2640), sorted by `SKILL.md` URI.
    pub fn skills(&self) -> &[Skill] {
        &self.inner.skills
    }

    /// Whether two handles are the same server value.
    pub fn ptr_eq(&self, other: &Server) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }
}

impl fmt::Debug for Server {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Server")
            .field("name", &self.inner.name)
            .field("version", &self.inner.version)
            .field("tools", &self.tool_names().collect::<Vec<_>>())
            .field("prompts", &self.prompt_names().collect::<Vec<_>>())
            .field(
                "resources",
                &self
                    .resources()
                    .iter()
                    .map(Resource::uri)
                    .collect::<Vec<_>>(),
            )
            .field(
                "resource_templates",
                &self
                    .resource_templates()
                    .iter()
                    .map(ResourceTemplate::uri_template)
                    .collect::<Vec<_>>(),
            )
            .finish()
    }
}

/// One `server!` invocation, submitted to the process-wide collection. Built by the macro;
/// read by [`Registry::collected`](crate::Registry::collected).
pub struct ServerRegistration {
    name: &'static str,
    build: fn() -> Server,
    location: &'static str,
}

impl ServerRegistration {
    #[doc(hidden)]
    pub const fn new(name: &'static str, build: fn() -> Server, location: &'static str) -> Self {
        ServerRegistration {
            name,
            build,
            location,
        }
    }

    /// The server's name.
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// Where the `server!` invocation is (`file:line`).
    pub fn location(&self) -> &'static str {
        self.location
    }

    /// Builds the server.
    pub fn build(&self) -> Server {
        (self.build)()
    }

    /// Every registration in the program, in name order.
    pub fn all() -> Vec<&'static ServerRegistration> {
        let mut all: Vec<_> = inventory::iter::<ServerRegistration>.into_iter().collect();
        all.sort_by(|a, b| a.name.cmp(b.name).then(a.location.cmp(b.location)));
        all
    }
}

impl fmt::Debug for ServerRegistration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ServerRegistration")
            .field("name", &self.name)
            .field("location", &self.location)
            .finish()
    }
}

inventory::collect!(ServerRegistration);
