//! Tool pinning (trust on first use): [`Pins`] records a digest of each tool's definition the
//! first time it is seen, and quarantines a tool whose definition changes afterwards until
//! the host approves the new one.

use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard};

use serde_json::Value;
use tokio::sync::watch;

use super::pin_store::{MemoryPinStore, PinError, PinStore, StoredPin, ToolPin};
use crate::protocol::ToolDescriptor;
use crate::sync::MutexExt;
use crate::tool::BoxFuture;

/// How many changed definitions of one tool the host is remembered to have been asked about.
const ASKED_PER_TOOL: usize = 8;

/// The fields of a tool's definition a pin covers, in the order [`Quarantine::changed`]
/// names them.
const PINNED_FIELDS: [&str; 6] = [
    "name",
    "title",
    "description",
    "inputSchema",
    "outputSchema",
    "annotations",
];

/// A tool whose definition changed after it was pinned, held back from the model until the
/// host approves the new definition.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Quarantine {
    /// The tool's server (the name it is mounted or registered under).
    pub server: String,
    /// The tool.
    pub tool: String,
    /// The definition the host trusted.
    pub pinned: ToolPin,
    /// The definition the server offers now.
    pub offered: ToolPin,
    /// The top-level fields that differ (`description`, `inputSchema`, `annotations`, ..).
    pub changed: Vec<&'static str>,
}

impl fmt::Display for Quarantine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "tool {:?} of MCP server {:?} is quarantined: its definition changed since it was pinned ({} changed; pinned {}, offered {}) and the host has not approved the new definition",
            self.tool,
            self.server,
            self.changed.join(", "),
            self.pinned.digest(),
            self.offered.digest(),
        )
    }
}

/// The host's answer to a changed tool definition.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum PinDecision {
    /// Trust the new definition: it becomes the pin and the tool is listed again.
    Approve,
    /// Keep the tool quarantined (the host is not asked again about this definition while
    /// the process runs).
    KeepQuarantined,
}

type ChangeFn = dyn Fn(Quarantine) -> BoxFuture<'static, PinDecision> + Send + Sync;

/// Tool pinning, trust on first use: the first definition seen of each tool of each server is
/// pinned (its digest saved in a [`PinStore`]); a later, different definition quarantines the
/// tool (it is not listed to the model and a call to it is refused with the [`Quarantine`]
/// as the reason) until the host approves it, by the [`on_change`](PinsBuilder::on_change)
/// callback or by [`approve`](Self::approve). A definition that changes back to the pinned
/// one is trusted again; a removed tool keeps its pin, so it comes back trusted only with
/// the same definition.
///
/// Attach it to a [`FilteredRegistry`](super::FilteredRegistry) with
/// [`FilteredRegistry::with_pins`](super::FilteredRegistry::with_pins) and to mounted remote
/// servers with `RemoteServer::pins` (the guide's client page has an example). Cheap to
/// clone; clones share the pins.
#[derive(Clone)]
pub struct Pins {
    inner: Arc<Inner>,
}

struct Inner {
    store: Arc<dyn PinStore>,
    on_change: Option<Arc<ChangeFn>>,
    state: Mutex<State>,
    /// Bumped whenever a tool enters or leaves quarantine.
    generation: watch::Sender<u64>,
    /// One writer at a time.
    writer: tokio::sync::Mutex<()>,
}

#[derive(Default)]
struct State {
    pins: HashMap<(String, String), ToolPin>,
    quarantined: HashMap<(String, String), Quarantine>,
    /// The offered digests the host was last asked about, per tool (at most
    /// [`ASKED_PER_TOOL`]: a server that keeps changing a tool cannot grow it).
    asked: HashMap<(String, String), VecDeque<String>>,
    /// Pins made but not yet saved.
    unsaved: Vec<StoredPin>,
}

impl fmt::Debug for Pins {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = self.state();
        f.debug_struct("Pins")
            .field("pinned", &state.pins.len())
            .field("quarantined", &state.quarantined.len())
            .finish_non_exhaustive()
    }
}

/// Configures [`Pins`]; [`open`](Self::open) loads the store.
#[must_use = "call open() to load the pins"]
pub struct PinsBuilder {
    store: Arc<dyn PinStore>,
    on_change: Option<Arc<ChangeFn>>,
}

impl fmt::Debug for PinsBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PinsBuilder").finish_non_exhaustive()
    }
}

impl PinsBuilder {
    /// Asks the host about each changed definition (once per new definition): `decide` gets
    /// the [`Quarantine`] (server, tool, pinned and offered definitions and digests, changed
    /// fields) and answers [`PinDecision::Approve`] or [`PinDecision::KeepQuarantined`]. It
    /// runs in a task of its own, so it may wait for a person; the tool stays quarantined
    /// meanwhile. Without it, tools stay quarantined until [`Pins::approve`].
    pub fn on_change<F, Fut>(mut self, decide: F) -> Self
    where
        F: Fn(Quarantine) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = PinDecision> + Send + 'static,
    {
        self.on_change = Some(Arc::new(move |q| Box::pin(decide(q))));
        self
    }

    /// Loads every pin from the store, refusing a pin whose digest does not match its
    /// definition ([`PinError::Tampered`]) and a store that cannot be read.
    pub async fn open(self) -> Result<Pins, PinError> {
        let mut pins = HashMap::new();
        for stored in self.store.load().await? {
            if let Err(actual) = stored.pin.verify() {
                return Err(PinError::Tampered {
                    recorded: stored.pin.digest().to_owned(),
                    server: stored.server,
                    tool: stored.tool,
                    actual,
                });
            }
            pins.insert((stored.server, stored.tool), stored.pin);
        }
        Ok(self.assemble(pins))
    }

    fn assemble(self, pins: HashMap<(String, String), ToolPin>) -> Pins {
        Pins {
            inner: Arc::new(Inner {
                store: self.store,
                on_change: self.on_change,
                state: Mutex::new(State {
                    pins,
                    ..State::default()
                }),
                generation: watch::Sender::new(0),
                writer: tokio::sync::Mutex::new(()),
            }),
        }
    }
}

impl Pins {
    /// Pins kept in `store`.
    pub fn builder(store: impl PinStore) -> PinsBuilder {
        PinsBuilder {
            store: Arc::new(store),
            on_change: None,
        }
    }

    /// Pins kept in memory for the life of the process, with no approval callback.
    pub fn in_memory() -> Pins {
        Pins::builder(MemoryPinStore::new()).assemble(HashMap::new())
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.inner.state.lock_unpoisoned()
    }

    /// Checks `tool` of `server` against its pin: `Ok` when it is trusted (pinned now if it
    /// is new), or the [`Quarantine`] when its definition differs from the pinned one. A new
    /// quarantine asks the host ([`PinsBuilder::on_change`]) in a task of its own.
    pub fn check(&self, server: &str, tool: &ToolDescriptor) -> Result<(), Box<Quarantine>> {
        let offered = ToolPin::of(tool);
        let key = (server.to_owned(), tool.name.clone());
        let mut state = self.state();
        let Some(pinned) = state.pins.get(&key) else {
            state.pins.insert(key.clone(), offered.clone());
            state.unsaved.push(StoredPin::new(key.0, key.1, offered));
            drop(state);
            self.save_soon();
            return Ok(());
        };
        if pinned.digest() == offered.digest() {
            if state.quarantined.remove(&key).is_some() {
                drop(state);
                self.inner.generation.send_modify(|g| *g += 1);
            }
            return Ok(());
        }
        if let Some(q) = state.quarantined.get(&key)
            && q.offered.digest() == offered.digest()
        {
            return Err(Box::new(q.clone()));
        }
        let quarantine = Quarantine {
            server: key.0.clone(),
            tool: key.1.clone(),
            changed: changed_fields(pinned.definition(), offered.definition()),
            pinned: pinned.clone(),
            offered,
        };
        state.quarantined.insert(key, quarantine.clone());
        let asked = state
            .asked
            .entry((quarantine.server.clone(), quarantine.tool.clone()))
            .or_default();
        let ask = !asked.iter().any(|d| d == quarantine.offered.digest());
        if ask {
            if asked.len() == ASKED_PER_TOOL {
                asked.pop_front();
            }
            asked.push_back(quarantine.offered.digest().to_owned());
        }
        drop(state);
        tracing::warn!(target: "mcp_registry::pins", server = %quarantine.server, tool = %quarantine.tool, changed = ?quarantine.changed, "tool definition changed since it was pinned: quarantined");
        self.inner.generation.send_modify(|g| *g += 1);
        if ask {
            self.ask(quarantine.clone());
        }
        Err(Box::new(quarantine))
    }

    /// The quarantine `tool` of `server` is in, if any.
    pub fn quarantined(&self, server: &str, tool: &str) -> Option<Quarantine> {
        let key = (server.to_owned(), tool.to_owned());
        self.state().quarantined.get(&key).cloned()
    }

    /// Every quarantined tool.
    pub fn quarantine_list(&self) -> Vec<Quarantine> {
        self.state().quarantined.values().cloned().collect()
    }

    /// The pin of `tool` of `server`, if it has one.
    pub fn pin(&self, server: &str, tool: &str) -> Option<ToolPin> {
        let key = (server.to_owned(), tool.to_owned());
        self.state().pins.get(&key).cloned()
    }

    /// Trusts the definition with digest `offered` of quarantined `tool` of `server`: it
    /// becomes the pin (saved before this returns) and the tool leaves quarantine. `false`
    /// when that tool is not quarantined with that definition (it changed again meanwhile).
    pub async fn approve(&self, server: &str, tool: &str, offered: &str) -> Result<bool, PinError> {
        let key = (server.to_owned(), tool.to_owned());
        {
            let mut state = self.state();
            let Some(q) = state
                .quarantined
                .get(&key)
                .filter(|q| q.offered.digest() == offered)
                .cloned()
            else {
                return Ok(false);
            };
            state.quarantined.remove(&key);
            state.pins.insert(key.clone(), q.offered.clone());
            state.unsaved.push(StoredPin::new(key.0, key.1, q.offered));
        }
        self.inner.generation.send_modify(|g| *g += 1);
        self.save().await?;
        Ok(true)
    }

    /// Saves the pins made since the last save. Pins are saved in the background as they
    /// are made; this waits for them, and returns the store's error if saving failed.
    pub async fn save(&self) -> Result<(), PinError> {
        let _writer = self.inner.writer.lock().await;
        let unsaved = std::mem::take(&mut self.state().unsaved);
        if unsaved.is_empty() {
            return Ok(());
        }
        let saved = self.inner.store.save(&unsaved).await;
        if saved.is_err() {
            // Kept for the next save.
            let mut state = self.state();
            let newer = std::mem::replace(&mut state.unsaved, unsaved);
            state.unsaved.extend(newer);
        }
        saved
    }

    /// Counts changes to the quarantine: the value changes whenever a tool enters or leaves
    /// it (views holding pinned tools list again).
    pub fn subscribe(&self) -> watch::Receiver<u64> {
        self.inner.generation.subscribe()
    }

    /// The current quarantine generation (see [`subscribe`](Self::subscribe)).
    pub(crate) fn generation(&self) -> u64 {
        *self.inner.generation.borrow()
    }

    fn save_soon(&self) {
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return; // saved by the next save()
        };
        let pins = self.clone();
        runtime.spawn(async move {
            if let Err(e) = pins.save().await {
                tracing::warn!(target: "mcp_registry::pins", error = %e, "saving tool pins failed");
            }
        });
    }

    fn ask(&self, quarantine: Quarantine) {
        let Some(decide) = self.inner.on_change.clone() else {
            return;
        };
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            tracing::warn!(target: "mcp_registry::pins", "no Tokio runtime to ask the host about a changed tool");
            return;
        };
        let pins = self.clone();
        runtime.spawn(async move {
            let (server, tool) = (quarantine.server.clone(), quarantine.tool.clone());
            let offered = quarantine.offered.digest().to_owned();
            if decide(quarantine).await == PinDecision::Approve
                && let Err(e) = pins.approve(&server, &tool, &offered).await
            {
                tracing::warn!(target: "mcp_registry::pins", error = %e, "saving an approved tool pin failed");
            }
        });
    }
}

/// The pinned fields that differ between two definitions.
fn changed_fields(pinned: &Value, offered: &Value) -> Vec<&'static str> {
    PINNED_FIELDS
        .into_iter()
        .filter(|f| pinned.get(f) != offered.get(f))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tool(description: &str) -> ToolDescriptor {
        serde_json::from_value(
            json!({"name": "t", "description": description, "inputSchema": {"type": "object"}}),
        )
        .unwrap()
    }

    #[tokio::test]
    async fn first_use_pins_a_change_quarantines_and_the_old_definition_is_trusted_again() {
        let pins = Pins::in_memory();
        assert!(pins.check("s", &tool("a")).is_ok());
        let q = pins.check("s", &tool("b")).unwrap_err();
        assert_eq!(q.changed, ["description"]);
        assert!(q.to_string().contains("\"t\""), "{q}");
        assert!(pins.check("s", &tool("a")).is_ok());
        assert!(pins.quarantined("s", "t").is_none());
        // Another server's tool of the same name has its own pin.
        assert!(pins.check("other", &tool("b")).is_ok());
    }

    #[test]
    fn a_tampered_pin_is_detected() {
        let pin = ToolPin::of(&tool("a"));
        let forged = ToolPin::recorded(
            pin.digest().to_owned(),
            json!({"name": "t", "description": "b"}),
        );
        assert!(forged.verify().is_err());
        assert!(pin.verify().is_ok());
    }
}
