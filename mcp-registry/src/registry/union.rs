//! The union of a registry's enabled servers, served as one server at
//! [`ALL_SERVERS`](crate::ALL_SERVERS): built from one registry snapshot (and cached with it),
//! its items are the servers' own, listed under names that cannot clash, each remembering the
//! server and name it came from.
//!
//! Naming, decided here once:
//! - A tool is listed under its plain name when no other enabled server has a tool of that
//!   name, and as `mcp__<server>__<tool>` when two or more do (every one of them, so which
//!   server a client reaches never depends on which server was registered first). A client
//!   may also call a uniquely named tool by its qualified name. Plain names keep the union
//!   close to each server's own listing (a model sees `add`, not `mcp__math__add`), and the
//!   qualified form is the one the registry already resolves
//!   ([`Registry::call_tool_by_name`](crate::Registry::call_tool_by_name)).
//! - Prompts: the same rule.
//! - Resources are listed by URI, which a server picks and the union cannot rewrite: when two
//!   servers have a resource at the same URI (or the same URI template), the first server in
//!   name order wins and the other's is neither listed nor read through the union (it stays
//!   readable at its server's own endpoint). `resources/read` tries exact URIs, then every
//!   server's templates, servers in name order.
//!
//! Layers, approval and a function's context see the item's own server and name (its
//! [`CallNames`]), never the union's.

use std::collections::BTreeSet;
use std::sync::Arc;

use super::{ALL_SERVERS, qualified_name, split_qualified};
use crate::server::{Origin, Origins, Server, ServerBuilder};
use crate::tool::CallNames;

/// How a registry introduces itself when it serves all its servers as one.
#[derive(Debug, Clone)]
pub(crate) struct UnionIdentity {
    pub(crate) name: String,
    pub(crate) version: String,
    pub(crate) title: Option<String>,
    pub(crate) instructions: Option<String>,
}

impl Default for UnionIdentity {
    fn default() -> Self {
        UnionIdentity {
            name: "registry".to_owned(),
            version: crate::server::DEFAULT_SERVER_VERSION.to_owned(),
            title: None,
            instructions: None,
        }
    }
}

/// Every name in `names` that occurs more than once.
fn shared<'a>(names: impl Iterator<Item = &'a str>) -> BTreeSet<&'a str> {
    let mut seen = BTreeSet::new();
    names.filter(|n| !seen.insert(*n)).collect()
}

/// The name an item is listed under, and whether it is its qualified name.
fn listed_name(shared: &BTreeSet<&str>, server: &str, name: &str) -> (String, bool) {
    if shared.contains(name) {
        (qualified_name(server, name), true)
    } else {
        (name.to_owned(), false)
    }
}

impl Server {
    /// The union of `servers` (the enabled ones, in name order), introduced as `identity`.
    pub(crate) fn union(identity: &UnionIdentity, servers: &[&Server]) -> Server {
        let mut origins = Origins::default();
        let mut builder = Server::builder(identity.name.clone()).version(identity.version.clone());
        if let Some(title) = &identity.title {
            builder = builder.title(title.clone());
        }
        let instructions = identity.instructions.clone().or_else(|| joined(servers));
        if let Some(instructions) = instructions {
            builder = builder.instructions(instructions);
        }
        builder = union_tools(builder, &mut origins, servers);
        builder = union_prompts(builder, &mut origins, servers);
        for server in servers {
            for resource in server.resources() {
                if !origins.resources.contains_key(resource.uri()) {
                    let uri = resource.shared_uri().clone();
                    origins.resources.insert(uri, Origin::of(server));
                    builder = builder.resource(resource.clone());
                }
            }
            for template in server.resource_templates() {
                if !origins.templates.contains_key(template.uri_template()) {
                    let key = template.uri_template().to_owned();
                    origins.templates.insert(key, Origin::of(server));
                    builder = builder.resource_template(template.clone());
                }
            }
        }
        // Names, URIs and templates are deduplicated above, and a union's own name is not
        // checked: nothing is left for building to refuse.
        builder
            .union_of(origins)
            .build()
            .expect("a union's items are deduplicated and its name is not checked")
    }

    /// The name a registry serves it under: [`ALL_SERVERS`](crate::ALL_SERVERS) for the
    /// union, else its name.
    pub(crate) fn address(&self) -> &str {
        if self.is_union() {
            ALL_SERVERS
        } else {
            self.name()
        }
    }

    /// The -32602 message for a tool this server lacks: for the union, a plain name several
    /// servers share names the qualified names to call instead.
    pub(crate) fn unknown_tool(&self, name: &str) -> String {
        let shared = self.qualified_forms(self.tool_names(), name);
        match shared.is_empty() {
            true => format!("Unknown tool: {name}"),
            false => format!(
                "Unknown tool: {name}; several servers have a tool of that name: call one of {}",
                shared.join(", ")
            ),
        }
    }

    /// The -32602 message for a prompt this server lacks (see
    /// [`unknown_tool`](Self::unknown_tool)).
    pub(crate) fn unknown_prompt(&self, name: &str) -> String {
        let shared = self.qualified_forms(self.prompt_names(), name);
        match shared.is_empty() {
            true => format!("Unknown prompt: {name}"),
            false => format!(
                "Unknown prompt: {name}; several servers have a prompt of that name: get one of {}",
                shared.join(", ")
            ),
        }
    }

    /// The listed names that qualify `name` (`mcp__<server>__<name>`), for the union only.
    fn qualified_forms<'a>(
        &self,
        listed: impl Iterator<Item = &'a str>,
        name: &str,
    ) -> Vec<&'a str> {
        if !self.is_union() {
            return Vec::new();
        }
        listed
            .filter(|l| split_qualified(l).is_some_and(|(_, own)| own == name))
            .collect()
    }
}

/// Every server's instructions, each under its server's name.
fn joined(servers: &[&Server]) -> Option<String> {
    let parts: Vec<String> = servers
        .iter()
        .filter_map(|s| Some(format!("{}: {}", s.name(), s.instructions()?)))
        .collect();
    (!parts.is_empty()).then(|| parts.join("\n\n"))
}

fn union_tools(
    mut builder: ServerBuilder,
    origins: &mut Origins,
    servers: &[&Server],
) -> ServerBuilder {
    let shared = shared(servers.iter().flat_map(|s| s.tool_names()));
    for server in servers {
        for (tool, names) in server.tools().iter().zip(server.call_names()) {
            let (listed, qualified) = listed_name(&shared, server.name(), tool.name());
            if origins.tools.contains_key(listed.as_str()) {
                tracing::warn!(
                    server = server.name(),
                    tool = tool.name(),
                    "a tool's name in the union is taken; it is left out"
                );
                continue;
            }
            let listed: Arc<str> = listed.into();
            if qualified {
                builder = builder.tool(tool.renamed(&listed));
            } else {
                let alias = qualified_name(server.name(), tool.name());
                origins.tool_aliases.push((alias.into(), listed.clone()));
                builder = builder.tool(tool.clone());
            }
            origins.tools.insert(listed, names.clone());
        }
    }
    builder
}

fn union_prompts(
    mut builder: ServerBuilder,
    origins: &mut Origins,
    servers: &[&Server],
) -> ServerBuilder {
    let shared = shared(servers.iter().flat_map(|s| s.prompt_names()));
    for server in servers {
        for prompt in server.prompts() {
            let (listed, qualified) = listed_name(&shared, server.name(), prompt.name());
            if origins.prompts.contains_key(listed.as_str()) {
                tracing::warn!(
                    server = server.name(),
                    prompt = prompt.name(),
                    "a prompt's name in the union is taken; it is left out"
                );
                continue;
            }
            let listed: Arc<str> = listed.into();
            if qualified {
                builder = builder.prompt(prompt.renamed(&listed));
            } else {
                let alias = qualified_name(server.name(), prompt.name());
                origins.prompt_aliases.push((alias.into(), listed.clone()));
                builder = builder.prompt(prompt.clone());
            }
            let own = CallNames {
                tool: prompt.shared_name().clone(),
                server: server.shared_name().clone(),
                state: server.extensions().clone(),
            };
            origins.prompts.insert(listed, Arc::new(own));
        }
    }
    builder
}
