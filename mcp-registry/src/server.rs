//! `Server`: a named, versioned group of tools, prompts and resources, and its registration in the process-wide
//! collection that `server!` submits to and [`Registry::collected`](crate::Registry::collected)
//! reads.

use std::fmt;
use std::sync::Arc;

use serde_json::Value;

use crate::prompt::Prompt;
use crate::protocol::{self, CacheHints, CacheScope, ProtocolVersion};
use crate::resource::{Resource, ResourceTemplate};
use crate::skill::Skill;
use crate::tool::{CallNames, Extensions, Tool};

mod listing;
mod union;

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
    /// `prompts/list`, `resources/list` and `resources/templates/list` entries, serialized
    /// once per revision.
    prompt_entries: EntryListing,
    resource_entries: EntryListing,
    template_entries: EntryListing,
    /// The server's identity (`Implementation`, with its title) as a JSON value, built once:
    /// every 2026-07-28 result carries it in `_meta`.
    info: Value,
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

/// Builds a [`Server`].
#[derive(Clone)]
#[must_use = "call build() to get the server"]
pub struct ServerBuilder {
    name: String,
    version: Option<String>,
    title: Option<String>,
    instructions: Option<String>,
    tools: Vec<Tool>,
    prompts: Vec<Prompt>,
    resources: Vec<Resource>,
    templates: Vec<ResourceTemplate>,
    remote: Option<Arc<dyn RemoteLink>>,
    list_cache: Option<CacheHints>,
    read_cache: Option<CacheHints>,
    extensions: Extensions,
    skills: Vec<Skill>,
    origins: Option<Box<union::Origins>>,
}

/// Caching hints from a duration (milliseconds, saturating) and a scope.
fn hints(ttl: std::time::Duration, scope: CacheScope) -> CacheHints {
    CacheHints {
        ttl_ms: u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX),
        cache_scope: scope,
    }
}

impl fmt::Debug for ServerBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ServerBuilder")
            .field("name", &self.name)
            .field("version", &self.version)
            .field("title", &self.title)
            .field("instructions", &self.instructions)
            .field("tools", &self.tools)
            .field("prompts", &self.prompts)
            .field("resources", &self.resources)
            .field("templates", &self.templates)
            .field("remote", &self.remote.as_ref().map(|r| r.state()))
            .field("list_cache", &self.list_cache)
            .field("read_cache", &self.read_cache)
            .field("extensions", &self.extensions)
            .field("skills", &self.skills)
            .finish()
    }
}

impl ServerBuilder {
    /// The version (default [`DEFAULT_SERVER_VERSION`]).
    pub fn version(mut self, version: impl Into<String>) -> Self {
        self.version = Some(version.into());
        self
    }

    /// Display title.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// Instructions for the model.
    pub fn instructions(mut self, instructions: impl Into<String>) -> Self {
        self.instructions = Some(instructions.into());
        self
    }

    /// Adds a tool.
    pub fn tool(mut self, tool: Tool) -> Self {
        self.tools.push(tool);
        self
    }

    /// Adds tools.
    pub fn tools(mut self, tools: impl IntoIterator<Item = Tool>) -> Self {
        self.tools.extend(tools);
        self
    }

    /// Adds a prompt.
    pub fn prompt(mut self, prompt: Prompt) -> Self {
        self.prompts.push(prompt);
        self
    }

    /// Adds prompts.
    pub fn prompts(mut self, prompts: impl IntoIterator<Item = Prompt>) -> Self {
        self.prompts.extend(prompts);
        self
    }

    /// Adds a resource.
    pub fn resource(mut self, resource: Resource) -> Self {
        self.resources.push(resource);
        self
    }

    /// Adds resources.
    pub fn resources(mut self, resources: impl IntoIterator<Item = Resource>) -> Self {
        self.resources.extend(resources);
        self
    }

    /// Adds a skill (SEP-2640): its files become resources at `skill://<name>/<path>`, and
    /// the server answers `skills/list`, `skills/get` and `resources/directory/read`.
    pub fn skill(mut self, skill: Skill) -> Self {
        self.resources.extend(skill.resources().iter().cloned());
        self.skills.push(skill);
        self
    }

    /// Adds skills, e.g. every bundle of a directory
    /// ([`Skill::load_dir`](crate::skill::Skill::load_dir)).
    pub fn skills(self, skills: impl IntoIterator<Item = Skill>) -> Self {
        skills.into_iter().fold(self, ServerBuilder::skill)
    }

    /// Adds a resource template (tried by `resources/read` after the templates added before
    /// it).
    pub fn resource_template(mut self, template: ResourceTemplate) -> Self {
        self.templates.push(template);
        self
    }

    /// Adds resource templates, in order.
    pub fn resource_templates(
        mut self,
        templates: impl IntoIterator<Item = ResourceTemplate>,
    ) -> Self {
        self.templates.extend(templates);
        self
    }

    /// The 2026-07-28 caching hints (`ttlMs`, `cacheScope`) of this server's `tools/list`,
    /// `prompts/list`, `resources/list`, `resources/templates/list` and `server/discover`
    /// results, overriding the registry's ([`RegistryBuilder::list_ttl`], `public`). A server
    /// whose lists are the same for every caller and rarely change can let clients keep
    /// them: `.list_cache(Duration::from_secs(300), CacheScope::Public)`; a server whose
    /// lists depend on the caller says `CacheScope::Private`.
    ///
    /// [`RegistryBuilder::list_ttl`]: crate::RegistryBuilder::list_ttl
    pub fn list_cache(mut self, ttl: std::time::Duration, scope: CacheScope) -> Self {
        self.list_cache = Some(hints(ttl, scope));
        self
    }

    /// The 2026-07-28 caching hints of this server's `resources/read` results whose handler
    /// set none ([`ReadResourceResult::with_cache`](crate::protocol::ReadResourceResult::with_cache)
    /// wins), overriding the registry's (its list TTL, `private`: contents may depend on who
    /// reads them).
    pub fn read_cache(mut self, ttl: std::time::Duration, scope: CacheScope) -> Self {
        self.read_cache = Some(hints(ttl, scope));
        self
    }

    /// Attaches a value this server's tools, prompts and resources read through
    /// [`State`](crate::State) and [`ToolContext::get`](crate::ToolContext::get), wherever the
    /// server is registered: a call's own value of the type comes first, then the server's,
    /// then the registry's ([`RegistryBuilder::extension`](crate::RegistryBuilder::extension)).
    /// `#[mcp_server]` attaches its struct here.
    pub fn extension<T: Send + Sync + 'static>(mut self, value: T) -> Self {
        self.extensions.insert(value);
        self
    }

    /// [`extension`](Self::extension) with a value already shared.
    pub fn shared_extension<T: Send + Sync + 'static>(mut self, value: Arc<T>) -> Self {
        self.extensions.insert_shared(value);
        self
    }

    /// Marks the server as mounted from a remote MCP server.
    pub(crate) fn remote(mut self, link: Arc<dyn RemoteLink>) -> Self {
        self.remote = Some(link);
        self
    }

    /// The server; refuses duplicate tool or prompt names, resource URIs or URI templates,
    /// and invalid server names.
    pub fn build(self) -> Result<Server, ServerBuildError> {
        if self.origins.is_none() {
            validate_server_name(&self.name)?;
        }
        let mut tools = self.tools;
        if let Some(tool) = sort_unique(&mut tools, Tool::name) {
            let server = self.name;
            return Err(ServerBuildError::DuplicateTool { server, tool });
        }
        let mut prompts = self.prompts;
        if let Some(prompt) = sort_unique(&mut prompts, Prompt::name) {
            let server = self.name;
            return Err(ServerBuildError::DuplicatePrompt { server, prompt });
        }
        let mut resources = self.resources;
        if let Some(uri) = sort_unique(&mut resources, Resource::uri) {
            let server = self.name;
            return Err(ServerBuildError::DuplicateResource { server, uri });
        }
        // Templates keep the order given (`resources/read` tries them in it): a sorted copy.
        let templates = self.templates;
        let mut by_template: Vec<&str> = templates.iter().map(|t| t.uri_template()).collect();
        if let Some(uri_template) = sort_unique(&mut by_template, |t| t) {
            let server = self.name;
            return Err(ServerBuildError::DuplicateResourceTemplate {
                server,
                uri_template,
            });
        }
        let mut skills = self.skills;
        skills.sort_by(|a, b| a.uri().cmp(b.uri()));
        let name: Arc<str> = self.name.as_str().into();
        let mut names = call_names(&tools, &name, &self.extensions);
        let mut index = positions(&tools, Tool::shared_name);
        let mut prompt_index = positions(&prompts, Prompt::shared_name);
        if let Some(origins) = &self.origins {
            origins.apply(&tools, &mut names, &mut index, &mut prompt_index);
        }
        let version = self
            .version
            .unwrap_or_else(|| DEFAULT_SERVER_VERSION.to_owned());
        let info = serde_json::to_value(protocol::Implementation {
            name: self.name.clone(),
            version: version.clone(),
            title: self.title.clone(),
        })
        .unwrap_or_default();
        Ok(Server {
            inner: Arc::new(ServerInner {
                name,
                version,
                title: self.title,
                instructions: self.instructions,
                index,
                names,
                extensions: self.extensions,
                listing: ToolListing::new(&tools),
                task_tools: tools.iter().any(|t| t.task_support().allows_tasks()),
                tools,
                prompt_index,
                completions: prompts.iter().any(Prompt::has_completions)
                    || templates.iter().any(ResourceTemplate::has_completions),
                prompts,
                resource_index: positions(&resources, Resource::shared_uri),
                resources,
                template_listing: listing_order(&templates),
                templates,
                prompt_entries: EntryListing::default(),
                resource_entries: EntryListing::default(),
                template_entries: EntryListing::default(),
                info,
                remote: self.remote,
                list_cache: self.list_cache,
                read_cache: self.read_cache,
                skills,
                origins: self.origins,
            }),
        })
    }
}

/// Sorts `items` by `key`; the first key two of them share, if any.
fn sort_unique<T>(items: &mut [T], key: impl Fn(&T) -> &str) -> Option<String> {
    items.sort_by(|a, b| key(a).cmp(key(b)));
    items
        .windows(2)
        .find(|pair| key(&pair[0]) == key(&pair[1]))
        .map(|pair| key(&pair[0]).to_owned())
}

/// The templates' listing order (by name, then URI template) as indexes into `templates`.
fn listing_order(templates: &[ResourceTemplate]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..templates.len()).collect();
    order.sort_by(|&a, &b| {
        let (a, b) = (&templates[a], &templates[b]);
        (a.name(), a.uri_template()).cmp(&(b.name(), b.uri_template()))
    });
    order
}

/// Each tool's call names on the server named `server`, in `tools` order.
fn call_names(tools: &[Tool], server: &Arc<str>, state: &Extensions) -> Vec<Arc<CallNames>> {
    tools
        .iter()
        .map(|t| {
            Arc::new(CallNames {
                tool: t.shared_name().clone(),
                server: server.clone(),
                state: state.clone(),
            })
        })
        .collect()
}

/// Each item's position, by its name or URI.
fn positions<T>(items: &[T], key: impl Fn(&T) -> &Arc<str>) -> foldhash::HashMap<Arc<str>, usize> {
    items
        .iter()
        .enumerate()
        .map(|(i, item)| (key(item).clone(), i))
        .collect()
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
