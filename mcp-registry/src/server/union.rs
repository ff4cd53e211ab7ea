//! What a registry's union of servers ([`ALL_SERVERS`](crate::ALL_SERVERS)) remembers of
//! its items: the server and name each came from, so that layers, approval and a function's
//! context see the item's own, never the union's. The union is built by the registry
//! (`registry/union.rs`), which also documents how its items are named.

use std::collections::HashMap;
use std::sync::Arc;

use super::{Server, ServerBuilder};
use crate::prompt::Prompt;
use crate::tool::{CallNames, Extensions, Tool};

/// Where the union's items come from.
#[derive(Clone, Default)]
pub(crate) struct Origins {
    /// Listed tool name -> the tool's own server and name.
    pub(crate) tools: HashMap<Arc<str>, Arc<CallNames>>,
    /// `mcp__<server>__<tool>` of a tool listed under its plain name -> that plain name.
    pub(crate) tool_aliases: Vec<(Arc<str>, Arc<str>)>,
    /// Listed prompt name -> the prompt's own server and name.
    pub(crate) prompts: HashMap<Arc<str>, Arc<CallNames>>,
    /// `mcp__<server>__<prompt>` of a prompt listed under its plain name -> that plain name.
    pub(crate) prompt_aliases: Vec<(Arc<str>, Arc<str>)>,
    /// Resource URI -> its server.
    pub(crate) resources: HashMap<Arc<str>, Origin>,
    /// URI template -> its server.
    pub(crate) templates: HashMap<String, Origin>,
}

/// The server an item of the union comes from: its name, and its state (its
/// [`extension`](crate::ServerBuilder::extension)s), which the item's function sees.
#[derive(Clone)]
pub(crate) struct Origin {
    pub(crate) server: Arc<str>,
    pub(crate) state: Extensions,
}

impl Origin {
    /// `server` itself.
    pub(crate) fn of(server: &Server) -> Self {
        Origin {
            server: server.shared_name().clone(),
            state: server.extensions().clone(),
        }
    }

    /// The names a call of the item `name` from this origin runs under.
    pub(crate) fn names(self, name: Arc<str>) -> Arc<CallNames> {
        Arc::new(CallNames {
            tool: name,
            server: self.server,
            state: self.state,
        })
    }
}

impl Origins {
    /// Points each listed tool at its own names, and the aliases at the listed items.
    pub(super) fn apply(
        &self,
        tools: &[Tool],
        names: &mut [Arc<CallNames>],
        index: &mut foldhash::HashMap<Arc<str>, usize>,
        prompt_index: &mut foldhash::HashMap<Arc<str>, usize>,
    ) {
        for (tool, names) in tools.iter().zip(names.iter_mut()) {
            if let Some(own) = self.tools.get(tool.name()) {
                *names = own.clone();
            }
        }
        for (aliases, index) in [
            (&self.tool_aliases, &mut *index),
            (&self.prompt_aliases, &mut *prompt_index),
        ] {
            for (alias, listed) in aliases {
                if let Some(&i) = index.get(listed) {
                    // A listed name wins over an alias that happens to spell it.
                    index.entry(alias.clone()).or_insert(i);
                }
            }
        }
    }
}

impl ServerBuilder {
    /// Makes the server a registry's union, its items from `origins` (its name is then not
    /// checked: the registry's `serverInfo` name is free-form).
    pub(crate) fn union_of(mut self, origins: Origins) -> Self {
        self.origins = Some(Box::new(origins));
        self
    }
}

impl Server {
    /// Whether this is a registry's union of servers.
    pub(crate) fn is_union(&self) -> bool {
        self.inner.origins.is_some()
    }

    /// The server and name a call of `prompt` (one of this server's) reports.
    pub(crate) fn prompt_call_names(&self, prompt: &Prompt) -> Arc<CallNames> {
        self.inner
            .origins
            .as_ref()
            .and_then(|o| o.prompts.get(prompt.name()))
            .cloned()
            .unwrap_or_else(|| Origin::of(self).names(prompt.shared_name().clone()))
    }

    /// The server the resource at exactly `uri` (one of this server's) comes from.
    pub(crate) fn resource_origin(&self, uri: &str) -> Origin {
        self.inner
            .origins
            .as_ref()
            .and_then(|o| o.resources.get(uri))
            .cloned()
            .unwrap_or_else(|| Origin::of(self))
    }

    /// The server the resource template `uri_template` (one of this server's) comes from.
    pub(crate) fn template_origin(&self, uri_template: &str) -> Origin {
        self.inner
            .origins
            .as_ref()
            .and_then(|o| o.templates.get(uri_template))
            .cloned()
            .unwrap_or_else(|| Origin::of(self))
    }
}
