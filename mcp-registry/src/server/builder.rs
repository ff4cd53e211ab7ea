//! Building a [`Server`]: its items checked, indexed and listed once.

use std::fmt;
use std::sync::Arc;

use serde_json::Value;
use serde_json::value::RawValue;

use super::listing::{EntryListing, ToolListing};
use super::*;

/// Builds a [`Server`].
#[derive(Clone)]
#[must_use = "call build() to get the server"]
pub struct ServerBuilder {
    pub(super) name: String,
    pub(super) version: Option<String>,
    pub(super) title: Option<String>,
    pub(super) instructions: Option<String>,
    pub(super) tools: Vec<Tool>,
    pub(super) prompts: Vec<Prompt>,
    pub(super) resources: Vec<Resource>,
    pub(super) templates: Vec<ResourceTemplate>,
    pub(super) remote: Option<Arc<dyn RemoteLink>>,
    pub(super) list_cache: Option<CacheHints>,
    pub(super) read_cache: Option<CacheHints>,
    pub(super) extensions: Extensions,
    pub(super) skills: Vec<Skill>,
    pub(super) origins: Option<Box<union::Origins>>,
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
        let info = implementation(&self.name, &version, self.title.as_deref());
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
                app_tools: tools.iter().any(has_app),
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
                info_meta: info_meta(&info),
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

/// The server's `Implementation` (its name, version and title) as a value.
fn implementation(name: &str, version: &str, title: Option<&str>) -> Value {
    serde_json::to_value(protocol::Implementation {
        name: name.to_owned(),
        version: version.to_owned(),
        title: title.map(str::to_owned),
    })
    .unwrap_or_default()
}

/// Sorts `items` by `key`; the first key two of them share, if any.
/// Whether `tool` has an app: a `ui` member in its `_meta` (MCP Apps), which a client that
/// does not declare the extension is not shown.
fn has_app(tool: &Tool) -> bool {
    let meta = tool.descriptor().meta.as_ref();
    meta.is_some_and(|m| m.contains_key(crate::apps::META_KEY))
}

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

/// `{"io.modelcontextprotocol/serverInfo": info}` as JSON text.
fn info_meta(info: &Value) -> Arc<RawValue> {
    let meta = serde_json::json!({ protocol::META_SERVER_INFO: info });
    // A `Value` always serializes.
    Arc::from(serde_json::value::to_raw_value(&meta).unwrap_or_default())
}
