//! A registry's snapshot: an immutable view of its servers and their name indexes. Every
//! change builds a new one and swaps it in; a request reads the one it started with.

use std::collections::BTreeMap;
use std::sync::Arc;

use foldhash::HashMap;

use super::holder::{Held, Holder, holder};
use super::union::UnionIdentity;
use super::{ALL_SERVERS, CallError, Unavailable, prompts};
use crate::server::Server;
use crate::tool::{CallNames, Tool};

#[derive(Clone)]
pub(crate) struct ServerEntry {
    pub(crate) server: Server,
    pub(crate) enabled: bool,
}

#[derive(Clone)]
pub(crate) struct ToolRef {
    pub(crate) server: Server,
    pub(crate) tool: Tool,
    pub(crate) names: Arc<CallNames>,
    pub(crate) enabled: bool,
}

impl Held for ServerEntry {
    fn server(&self) -> &Server {
        &self.server
    }
    fn enabled(&self) -> bool {
        self.enabled
    }
}

impl Held for ToolRef {
    fn server(&self) -> &Server {
        &self.server
    }
    fn enabled(&self) -> bool {
        self.enabled
    }
}

/// A resolved tool, borrowed from a snapshot.
#[derive(Clone, Copy)]
pub(crate) struct Target<'a> {
    pub(crate) tool: &'a Tool,
    pub(crate) names: &'a Arc<CallNames>,
}

/// An immutable view of the registry; every change builds a new one and swaps it in.
#[derive(Default)]
pub(crate) struct Snapshot {
    pub(crate) servers: BTreeMap<Arc<str>, ServerEntry>,
    /// Plain tool name -> every server that has it (sorted by server name).
    pub(crate) tools: HashMap<Arc<str>, Vec<ToolRef>>,
    /// Plain prompt name -> every server that has it (sorted by server name).
    pub(crate) prompts: prompts::PromptIndex,
    /// The union of the enabled servers ([`ALL_SERVERS`]), built on first use.
    union: std::sync::OnceLock<Server>,
}

impl Snapshot {
    pub(super) fn build(servers: BTreeMap<Arc<str>, ServerEntry>) -> Self {
        let mut tools: HashMap<Arc<str>, Vec<ToolRef>> = HashMap::default();
        for entry in servers.values() {
            for (tool, names) in entry.server.tools().iter().zip(entry.server.call_names()) {
                tools
                    .entry(tool.shared_name().clone())
                    .or_default()
                    .push(ToolRef {
                        server: entry.server.clone(),
                        tool: tool.clone(),
                        names: names.clone(),
                        enabled: entry.enabled,
                    });
            }
        }
        let prompts = prompts::index(servers.values());
        Snapshot {
            servers,
            tools,
            prompts,
            union: std::sync::OnceLock::new(),
        }
    }

    /// The union of the enabled servers, introduced as `identity`: built once per snapshot.
    pub(crate) fn union(&self, identity: &UnionIdentity) -> &Server {
        self.union.get_or_init(|| {
            let enabled: Vec<&Server> = self.enabled().collect();
            Server::union(identity, &enabled)
        })
    }

    /// The enabled servers, by name.
    pub(crate) fn enabled(&self) -> impl Iterator<Item = &Server> {
        self.servers
            .values()
            .filter(|e| e.enabled)
            .map(|e| &e.server)
    }

    pub(crate) fn server(&self, name: &str) -> Option<&ServerEntry> {
        self.servers.get(name)
    }

    /// The server served under `name`: the union (named `identity`) for [`ALL_SERVERS`],
    /// else the server of that name, enabled or not.
    pub(crate) fn served(&self, name: &str, identity: &UnionIdentity) -> Option<&Server> {
        if name == ALL_SERVERS {
            return Some(self.union(identity));
        }
        self.server(name).map(|entry| &entry.server)
    }

    /// The server named `name`, if registered and enabled (the union of the enabled
    /// servers, named `identity`, for [`ALL_SERVERS`]).
    #[inline]
    pub(crate) fn enabled_server(
        &self,
        name: &str,
        identity: &UnionIdentity,
    ) -> Result<&Server, Unavailable> {
        match self.server(name) {
            None if name == ALL_SERVERS => Ok(self.union(identity)),
            None => Err(Unavailable::Unknown(name.to_owned())),
            Some(e) if !e.enabled => Err(Unavailable::Disabled(name.to_owned())),
            Some(e) => Ok(&e.server),
        }
    }

    /// Resolves a plain or qualified tool name to one enabled server's tool.
    pub(crate) fn resolve(&self, name: &str) -> Result<Target<'_>, CallError> {
        if let Some(refs) = self.tools.get(name) {
            return match holder(refs) {
                Holder::Only(only) => Ok(Target {
                    tool: &only.tool,
                    names: &only.names,
                }),
                Holder::Ambiguous(servers) => Err(CallError::AmbiguousTool {
                    name: name.to_owned(),
                    servers,
                }),
                Holder::Disabled(server) => Err(CallError::ServerDisabled {
                    server,
                    tool: name.to_owned(),
                }),
            };
        }
        let Some((server_name, tool_name)) = split_qualified(name) else {
            return Err(CallError::UnknownTool {
                name: name.to_owned(),
            });
        };
        let Some(entry) = self.servers.get(server_name) else {
            return Err(CallError::UnknownServer {
                server: server_name.to_owned(),
                name: name.to_owned(),
            });
        };
        let Some((tool, names)) = entry.server.tool_entry(tool_name) else {
            return Err(CallError::UnknownTool {
                name: name.to_owned(),
            });
        };
        if !entry.enabled {
            return Err(CallError::ServerDisabled {
                server: server_name.to_owned(),
                tool: tool_name.to_owned(),
            });
        }
        Ok(Target { tool, names })
    }
}

/// Splits `mcp__<server>__<tool>`; server names never contain `__`, so the first `__` after
/// the prefix is the separator.
pub(crate) fn split_qualified(name: &str) -> Option<(&str, &str)> {
    let rest = name.strip_prefix("mcp__")?;
    let (server, tool) = rest.split_once("__")?;
    (!server.is_empty() && !tool.is_empty()).then_some((server, tool))
}
