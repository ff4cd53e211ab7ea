//! One registry per agent session.

use std::collections::HashMap;
use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, RwLock};

use crate::registry::Registry;
use crate::sync::{MutexExt, RwLockExt};

/// Why a session operation failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SessionError {
    /// No registry is registered under that session id.
    #[error("no registry is registered for session {0:?}")]
    UnknownSession(String),
}

struct Slot {
    registry: Registry,
    /// Serializes updates of this session.
    updating: Mutex<()>,
    /// Set once the slot was unregistered or replaced. Never waits on `updating`, so a
    /// closure may unregister its own session without deadlocking.
    retired: AtomicBool,
}

impl Slot {
    fn new(registry: Registry) -> Arc<Self> {
        Arc::new(Slot {
            registry,
            updating: Mutex::new(()),
            retired: AtomicBool::new(false),
        })
    }

    fn retire(&self) {
        self.retired.store(true, Ordering::Release);
    }
}

/// A table of registries keyed by session id. `Clone + Send + Sync`; clones share the table.
///
/// Each session has its own [`Registry`], so no session sees another's servers, and a toggle
/// in one session leaves the others as they were. Sessions may still share [`Server`]
/// values (they are immutable), e.g. a copy of the global set:
/// `Registry::from_servers(GlobalServers::servers())`.
///
/// [`update`](Self::update) runs a closure on a session's registry with the session's update
/// lock held: updates of one session run one at a time (a read-then-write such as "register
/// unless present" cannot interleave with another), updates of different sessions run in
/// parallel, and an update that starts after its session was unregistered or replaced fails
/// instead of touching a registry nobody can reach. Readers are never blocked; each registry operation
/// inside the closure is atomic for them.
///
/// [`Server`]: crate::Server
///
/// ```
/// use mcp_registry::agent::SessionRegistries;
/// use mcp_registry::{Registry, Server, Tool};
/// use serde_json::json;
/// let tool = Tool::new("note", "Take a note", json!({"type": "object"}), |_| async { "noted" }).unwrap();
/// let sessions = SessionRegistries::new();
/// sessions.register("session-a", Registry::new());
/// sessions.register("session-b", Registry::new());
/// sessions
///     .update("session-a", |r| r.register_server(Server::new("notes", None, [tool]).unwrap()))
///     .unwrap();
/// assert_eq!(sessions.get("session-a").unwrap().server_names(), ["notes"]);
/// assert!(sessions.get("session-b").unwrap().server_names().is_empty());
/// assert!(sessions.update("session-c", |_| ()).is_err());
/// ```
#[derive(Clone, Default)]
pub struct SessionRegistries {
    sessions: Arc<RwLock<HashMap<String, Arc<Slot>>>>,
}

impl fmt::Debug for SessionRegistries {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SessionRegistries")
            .field("sessions", &self.session_ids())
            .finish()
    }
}

impl SessionRegistries {
    /// An empty table.
    pub fn new() -> Self {
        Self::default()
    }

    fn slot(&self, session_id: &str) -> Option<Arc<Slot>> {
        self.sessions.read_unpoisoned().get(session_id).cloned()
    }

    /// Registers `registry` for `session_id`, returning the registry it replaces.
    pub fn register(&self, session_id: impl Into<String>, registry: Registry) -> Option<Registry> {
        let old = self
            .sessions
            .write_unpoisoned()
            .insert(session_id.into(), Slot::new(registry));
        old.map(|old| {
            old.retire();
            old.registry.clone()
        })
    }

    /// The registry of `session_id` (a clone sharing its state).
    pub fn get(&self, session_id: &str) -> Option<Registry> {
        self.slot(session_id).map(|s| s.registry.clone())
    }

    /// The registry of `session_id`, registering `make()` first if there is none. `make` runs
    /// at most once and only when the session is absent.
    pub fn get_or_insert_with(
        &self,
        session_id: &str,
        make: impl FnOnce() -> Registry,
    ) -> Registry {
        if let Some(registry) = self.get(session_id) {
            return registry;
        }
        let mut sessions = self.sessions.write_unpoisoned();
        sessions
            .entry(session_id.to_owned())
            .or_insert_with(|| Slot::new(make()))
            .registry
            .clone()
    }

    /// Runs `change` on the registry of `session_id`, one update of that session at a time.
    pub fn update<R>(
        &self,
        session_id: &str,
        change: impl FnOnce(&Registry) -> R,
    ) -> Result<R, SessionError> {
        let unknown = || SessionError::UnknownSession(session_id.to_owned());
        let slot = self.slot(session_id).ok_or_else(unknown)?;
        let _updating = slot.updating.lock_unpoisoned();
        if slot.retired.load(Ordering::Acquire) {
            return Err(unknown());
        }
        Ok(change(&slot.registry))
    }

    /// Removes the registry of `session_id` and returns it (`None` when absent). An update
    /// already running on it is not interrupted; updates that start later fail.
    pub fn unregister(&self, session_id: &str) -> Option<Registry> {
        let slot = self.sessions.write_unpoisoned().remove(session_id)?;
        slot.retire();
        Some(slot.registry.clone())
    }

    /// The session ids, sorted.
    pub fn session_ids(&self) -> Vec<String> {
        let mut ids: Vec<String> = self.sessions.read_unpoisoned().keys().cloned().collect();
        ids.sort();
        ids
    }

    /// How many sessions have a registry.
    pub fn len(&self) -> usize {
        self.sessions.read_unpoisoned().len()
    }

    /// Whether no session has a registry.
    pub fn is_empty(&self) -> bool {
        self.sessions.read_unpoisoned().is_empty()
    }
}
