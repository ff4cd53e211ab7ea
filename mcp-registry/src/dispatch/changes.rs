//! Following one server through registry changes, for what sessions and listen streams send:
//! which of its lists changed (`notifications/*/list_changed`).

use tokio::sync::watch;

use crate::registry::{ALL_SERVERS, Registry, RegistryChange};
use crate::server::Server;

/// One server's view of the registry's changes. Changes can coalesce: it asks whether the
/// server changed since the generation it last looked at, not whether the latest change
/// names it.
pub(crate) struct ServerChanges {
    changes: watch::Receiver<RegistryChange>,
    name: String,
    seen: u64,
    had_prompts: bool,
    had_resources: bool,
}

/// The lists of a server that a change touched.
pub(crate) struct ListsChanged {
    /// Its prompts, when it has prompts before or after the change.
    pub(crate) prompts: bool,
    /// Its resources or templates, when it has some before or after the change.
    pub(crate) resources: bool,
}

impl ServerChanges {
    /// Follows `server`, as it is now, from the registry's current generation on.
    pub(crate) fn new(registry: &Registry, name: &str, server: Option<&Server>) -> Self {
        let mut changes = registry.subscribe();
        let seen = changes.borrow_and_update().generation;
        ServerChanges {
            changes,
            name: name.to_owned(),
            seen,
            had_prompts: server.is_some_and(|s| !s.prompts().is_empty()),
            had_resources: server.is_some_and(Server::has_resources),
        }
    }

    /// Waits for the next change of the registry: `false` once the registry is gone.
    pub(crate) async fn changed(&mut self) -> bool {
        self.changes.changed().await.is_ok()
    }

    /// Whether the change just seen touched this server.
    pub(crate) fn touched(&mut self) -> bool {
        let change = self.changes.borrow_and_update();
        // The union changes with any server.
        let touched = (self.name == ALL_SERVERS && change.generation > self.seen)
            || change.changed_since(&self.name, self.seen);
        self.seen = change.generation;
        touched
    }

    /// Which of its lists changed, given the server as it is now (`None`: gone).
    pub(crate) fn lists(&mut self, now: Option<&Server>) -> ListsChanged {
        let prompts = now.is_some_and(|s| !s.prompts().is_empty());
        let resources = now.is_some_and(Server::has_resources);
        ListsChanged {
            prompts: std::mem::replace(&mut self.had_prompts, prompts) || prompts,
            resources: std::mem::replace(&mut self.had_resources, resources) || resources,
        }
    }
}
