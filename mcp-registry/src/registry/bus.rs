//! The seam through which replicas of one server tell each other about changes: a
//! [`ChangeBus`] given to [`RegistryBuilder::change_bus`](super::RegistryBuilder::change_bus)
//! hears every change this registry makes and hands it the changes other replicas made.
//! Without one, changes stay in the process (the default).

use std::fmt;

use serde::{Deserialize, Serialize};

use super::{Registry, WeakRegistry};

/// A change one replica tells the others about: what their `subscriptions/listen` streams
/// and legacy sessions' streams send on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[non_exhaustive]
pub enum SharedChange {
    /// The listed tools of these servers changed (registered, replaced, toggled,
    /// unregistered): their tools' lists, and their prompts' and resources' when they have
    /// some.
    Servers {
        /// The servers' names.
        servers: Vec<String>,
    },
    /// The resource at `uri` changed ([`Registry::notify_resource_updated`]).
    ResourceUpdated {
        /// The resource's URI.
        uri: String,
    },
}

/// Carries a registry's changes to the other replicas of its server, and theirs to it
/// (`mcp_registry::replicas::RedisBus` with the feature `redis`).
///
/// An implementation publishes what [`publish`](Self::publish) is given, and hands what
/// other replicas published to the [`RemoteChanges`] it was [`attach`](Self::attach)ed to,
/// never its own messages back: a change applied from the bus is not published again, so
/// nothing loops.
pub trait ChangeBus: Send + Sync + fmt::Debug {
    /// Tells the other replicas about a change made here. Must not block: called while the
    /// registry changes.
    fn publish(&self, change: SharedChange);

    /// Starts handing other replicas' changes to `changes` (called once, by
    /// [`RegistryBuilder::build`](super::RegistryBuilder::build)).
    fn attach(&self, changes: RemoteChanges);
}

/// Where a [`ChangeBus`] delivers the changes other replicas made: the registry, held
/// weakly.
#[derive(Clone)]
pub struct RemoteChanges(WeakRegistry);

impl fmt::Debug for RemoteChanges {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RemoteChanges")
            .field("attached", &self.0.upgrade().is_some())
            .finish()
    }
}

impl RemoteChanges {
    pub(super) fn new(registry: &Registry) -> Self {
        RemoteChanges(registry.downgrade())
    }

    /// Applies a change another replica made: this registry's listen streams and sessions
    /// hear of it as of their own, and it is not published again. `false` once the registry
    /// is gone (the bus may then forget it).
    pub fn apply(&self, change: SharedChange) -> bool {
        let Some(registry) = self.0.upgrade() else {
            return false;
        };
        match change {
            SharedChange::Servers { servers } => registry.announce(servers),
            SharedChange::ResourceUpdated { uri } => {
                registry.tell_resource_updated(&uri);
            }
        }
        true
    }

    /// Tells this registry's listen streams and sessions that every list may have changed:
    /// what a bus calls after it was cut off from the others (changes made meanwhile are not
    /// replayed; clients list again). `false` once the registry is gone.
    pub fn resync(&self) -> bool {
        let Some(registry) = self.0.upgrade() else {
            return false;
        };
        registry.announce(registry.server_names());
        true
    }
}
