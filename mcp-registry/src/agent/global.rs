//! The process-wide set of servers.

use std::sync::OnceLock;

use crate::registry::Registry;
use crate::server::{Server, ServerRegistration};

static GLOBAL: OnceLock<Registry> = OnceLock::new();

/// Every `server!` in the program, first definition of a name winning; later ones are logged.
fn collected_first_wins() -> Vec<Server> {
    // `all()` is sorted by (name, location): a clash sits right after the definition it loses to.
    let all = ServerRegistration::all();
    let mut servers: Vec<Server> = Vec::with_capacity(all.len());
    for (i, registration) in all.iter().enumerate() {
        if i > 0 && all[i - 1].name() == registration.name() {
            tracing::error!(
                server = registration.name(),
                location = registration.location(),
                "two server! definitions share a name; the global servers keep the first"
            );
        } else {
            servers.push(registration.build());
        }
    }
    servers
}

fn seed() -> Registry {
    Registry::from_servers(collected_first_wins())
}

/// The process-wide servers: one shared [`Registry`], thread-safe, created on first use.
///
/// **Relation to `server!`.** On first use it is seeded with every server collected by
/// `server!` (what [`Registry::collected`] holds; when two `server!`s share a name the first
/// in (name, location) order is kept and the clash is logged, where `collected` would panic).
/// From then on it is an ordinary registry: servers registered at run time sit beside the
/// collected ones, a registration with a collected server's name replaces it, and
/// [`clear`](Self::clear) removes collected servers too ([`restore_collected`](Self::restore_collected)
/// brings them back). [`Registry::collected`] itself is unaffected: it always builds a fresh
/// registry of exactly the `server!` servers.
///
/// ```
/// use mcp_registry::agent::GlobalServers;
/// use mcp_registry::{Server, Tool};
/// use serde_json::json;
/// let ping = Tool::new("ping", "Ping", json!({"type": "object"}), |_| async { "pong" }).unwrap();
/// GlobalServers::register(Server::new("doc-global", None, [ping]).unwrap());
/// assert!(GlobalServers::names().contains(&"doc-global".to_owned()));
/// assert_eq!(GlobalServers::get("doc-global").unwrap().name(), "doc-global");
/// assert!(GlobalServers::unregister("doc-global").is_some());
/// assert!(GlobalServers::get("doc-global").is_none());
/// ```
#[derive(Debug)]
pub struct GlobalServers(());

impl GlobalServers {
    /// The process-wide registry (a clone sharing its state): toggle, call, subscribe, or
    /// hand it to a [`ControlRouter`](super::ControlRouter).
    pub fn registry() -> Registry {
        GLOBAL.get_or_init(seed).clone()
    }

    fn shared() -> &'static Registry {
        GLOBAL.get_or_init(seed)
    }

    /// Adds `server`, replacing (and returning) a server of the same name.
    pub fn register(server: Server) -> Option<Server> {
        Self::shared().register_server(server)
    }

    /// The server named `name`, enabled or not.
    pub fn get(name: &str) -> Option<Server> {
        Self::shared().server(name)
    }

    /// Server names, sorted.
    pub fn names() -> Vec<String> {
        Self::shared().server_names()
    }

    /// Every server, sorted by name: for seeding a session's own registry
    /// (`Registry::from_servers(GlobalServers::servers())`).
    pub fn servers() -> Vec<Server> {
        Self::shared().servers()
    }

    /// Removes the server named `name` and returns it (`None` when absent).
    pub fn unregister(name: &str) -> Option<Server> {
        Self::shared().unregister_server(name)
    }

    /// Removes every server, in one atomic step.
    pub fn clear() {
        Self::shared().set_servers([]);
    }

    /// Registers every `server!` server again (replacing run-time servers of the same
    /// names) and returns their names.
    pub fn restore_collected() -> Vec<String> {
        Self::shared().register_servers(collected_first_wins())
    }
}
