//! A tool's [`ToolPin`] (its canonical definition and digest), and where pins are kept: the
//! [`PinStore`] trait, an in-memory store and a JSON file store.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};

use crate::protocol::ToolDescriptor;
use crate::sync::MutexExt;
use crate::tool::BoxFuture;

/// A tool's pinned definition and its digest.
///
/// The definition is the tool's `name`, `title`, `description`, `inputSchema`,
/// `outputSchema` and `annotations` (the title is what a host shows the user who approves
/// the tool, so a new title is a new definition); `_meta`, `icons` and `execution` are not
/// pinned. The digest is `sha256:` and the hex SHA-256 of the definition as canonical JSON
/// (object keys sorted, no whitespace), so key order does not matter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolPin {
    digest: String,
    definition: Value,
}

impl ToolPin {
    /// The pin of `tool` as it is described now.
    ///
    /// ```
    /// use mcp_registry::catalog::ToolPin;
    /// use mcp_registry::protocol::ToolDescriptor;
    /// let a: ToolDescriptor = serde_json::from_str(
    ///     r#"{"name":"rm","inputSchema":{"type":"object","properties":{"p":{"type":"string"}}}}"#).unwrap();
    /// let b: ToolDescriptor = serde_json::from_str(
    ///     r#"{"inputSchema":{"properties":{"p":{"type":"string"}},"type":"object"},"name":"rm"}"#).unwrap();
    /// assert_eq!(ToolPin::of(&a), ToolPin::of(&b));
    /// assert!(ToolPin::of(&a).digest().starts_with("sha256:"));
    /// ```
    pub fn of(tool: &ToolDescriptor) -> Self {
        let mut definition = Map::new();
        definition.insert("name".into(), Value::String(tool.name.clone()));
        let mut put = |key: &str, value: Option<Value>| {
            if let Some(value) = value {
                definition.insert(key.into(), value);
            }
        };
        put("title", tool.title.clone().map(Value::String));
        put("description", tool.description.clone().map(Value::String));
        put("inputSchema", Some((*tool.input_schema).clone()));
        put("outputSchema", tool.output_schema.as_deref().cloned());
        if !tool.annotations.is_empty() {
            put("annotations", serde_json::to_value(&tool.annotations).ok());
        }
        let definition = Value::Object(definition);
        ToolPin {
            digest: digest_of(&definition),
            definition,
        }
    }

    /// A pin as a store recorded it; [`Pins`](super::Pins) checks the digest against the definition.
    pub fn recorded(digest: String, definition: Value) -> Self {
        ToolPin { digest, definition }
    }

    /// `sha256:<hex>` of the canonical definition.
    pub fn digest(&self) -> &str {
        &self.digest
    }

    /// The pinned definition (the fields listed on [`ToolPin`]).
    pub fn definition(&self) -> &Value {
        &self.definition
    }

    /// Whether the digest is the digest of the definition.
    pub(super) fn verify(&self) -> Result<(), String> {
        let actual = digest_of(&self.definition);
        if actual == self.digest {
            Ok(())
        } else {
            Err(actual)
        }
    }
}

fn digest_of(definition: &Value) -> String {
    let mut text = String::new();
    canonical(definition, &mut text);
    let hash = Sha256::digest(text.as_bytes());
    let mut out = String::with_capacity(7 + 64);
    out.push_str("sha256:");
    for byte in hash {
        out.push_str(&format!("{byte:02x}"));
    }
    out
}

/// `value` as JSON with object keys sorted and no whitespace.
fn canonical(value: &Value, out: &mut String) {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            out.push('{');
            for (i, key) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(key.clone()).to_string());
                out.push(':');
                canonical(&map[key], out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                canonical(item, out);
            }
            out.push(']');
        }
        scalar => out.push_str(&scalar.to_string()),
    }
}

/// Why pins could not be loaded or saved.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PinError {
    /// Reading or writing the pins file failed.
    #[error("pins file {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The pins file is not a pins file this crate wrote (not JSON, wrong shape or version).
    #[error(
        "pins file {path} is not a valid pins file: {reason}; restore it from a backup or remove it \
         (removing it trusts every tool again on first use)"
    )]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },
    /// A stored pin's recorded digest does not match its recorded definition: the store was
    /// edited or damaged.
    #[error(
        "the pin of tool {tool:?} of MCP server {server:?} was tampered with: its recorded digest \
         is {recorded} but its recorded definition hashes to {actual}"
    )]
    Tampered {
        /// The pinned tool's server.
        server: String,
        /// The pinned tool.
        tool: String,
        /// The digest the store holds.
        recorded: String,
        /// The digest of the definition the store holds.
        actual: String,
    },
    /// A store of the host's own failed.
    #[error("pin store: {0}")]
    Store(#[source] Box<dyn std::error::Error + Send + Sync>),
}

/// One tool's pin as a store keeps it.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct StoredPin {
    /// The name the tool's server is known by (the mount or registry name).
    pub server: String,
    /// The tool's name.
    pub tool: String,
    /// The pinned definition and its digest.
    pub pin: ToolPin,
}

impl StoredPin {
    /// The pin of `tool` of `server`.
    pub fn new(server: impl Into<String>, tool: impl Into<String>, pin: ToolPin) -> Self {
        StoredPin {
            server: server.into(),
            tool: tool.into(),
            pin,
        }
    }
}

/// Where [`Pins`](super::Pins) keeps the definitions the host trusts. Implement it to keep
/// pins in a database; [`MemoryPinStore`] and [`FilePinStore`] come with the crate.
///
/// [`Pins`](super::Pins) loads every pin once when it opens, checks each against its digest,
/// and then saves each new or approved pin as it is made.
pub trait PinStore: Send + Sync + 'static {
    /// Every pin the store holds.
    fn load(&self) -> BoxFuture<'_, Result<Vec<StoredPin>, PinError>>;

    /// Records `pins`, each replacing any pin of the same server and tool.
    fn save<'a>(&'a self, pins: &'a [StoredPin]) -> BoxFuture<'a, Result<(), PinError>>;
}

/// Pins kept in memory: trust lasts as long as the process.
#[derive(Debug, Default, Clone)]
pub struct MemoryPinStore {
    pins: Arc<Mutex<BTreeMap<(String, String), ToolPin>>>,
}

impl MemoryPinStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }
}

impl PinStore for MemoryPinStore {
    fn load(&self) -> BoxFuture<'_, Result<Vec<StoredPin>, PinError>> {
        let pins = self.pins.lock_unpoisoned();
        let all = pins
            .iter()
            .map(|((s, t), p)| StoredPin::new(s, t, p.clone()))
            .collect();
        Box::pin(std::future::ready(Ok(all)))
    }

    fn save<'a>(&'a self, pins: &'a [StoredPin]) -> BoxFuture<'a, Result<(), PinError>> {
        let mut held = self.pins.lock_unpoisoned();
        for p in pins {
            held.insert((p.server.clone(), p.tool.clone()), p.pin.clone());
        }
        Box::pin(std::future::ready(Ok(())))
    }
}

/// The pins file's format version.
const FILE_VERSION: u64 = 1;

/// Pins kept in a JSON file, rewritten whole on each save through a temporary file renamed
/// over it (a crash leaves the old file or the new one, never half of one):
///
/// ```json
/// {"version": 1, "servers": {"<server>": {"<tool>": {"digest": "sha256:..", "definition": {..}}}}}
/// ```
///
/// A missing file is an empty store. A file that is not JSON of that shape, or whose pins do
/// not match their definitions, is refused with [`PinError::Corrupt`] or
/// [`PinError::Tampered`] when [`Pins`](super::Pins) opens.
#[derive(Debug, Clone)]
pub struct FilePinStore {
    path: PathBuf,
    /// Serialises this process's writers.
    lock: Arc<Mutex<()>>,
}

impl FilePinStore {
    /// The store in the file at `path` (created on the first save; its directory must exist).
    pub fn new(path: impl Into<PathBuf>) -> Self {
        FilePinStore {
            path: path.into(),
            lock: Arc::default(),
        }
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl PinStore for FilePinStore {
    fn load(&self) -> BoxFuture<'_, Result<Vec<StoredPin>, PinError>> {
        let path = self.path.clone();
        Box::pin(async move {
            blocking(move || {
                let pins = read_file(&path)?;
                Ok(pins
                    .into_iter()
                    .map(|((s, t), p)| StoredPin::new(s, t, p))
                    .collect())
            })
            .await
        })
    }

    fn save<'a>(&'a self, pins: &'a [StoredPin]) -> BoxFuture<'a, Result<(), PinError>> {
        let (path, lock, pins) = (self.path.clone(), self.lock.clone(), pins.to_vec());
        Box::pin(async move {
            blocking(move || {
                let _writer = lock.lock_unpoisoned();
                let mut held = read_file(&path)?;
                for p in pins {
                    held.insert((p.server, p.tool), p.pin);
                }
                write_file(&path, &held)
            })
            .await
        })
    }
}

async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, PinError> + Send + 'static,
) -> Result<T, PinError> {
    tokio::task::spawn_blocking(work)
        .await
        .unwrap_or_else(|e| Err(PinError::Store(Box::new(e))))
}

type Held = BTreeMap<(String, String), ToolPin>;

fn read_file(path: &Path) -> Result<Held, PinError> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Held::new()),
        Err(source) => {
            return Err(PinError::Io {
                path: path.to_owned(),
                source,
            });
        }
    };
    let corrupt = |reason: String| PinError::Corrupt {
        path: path.to_owned(),
        reason,
    };
    let doc: Value = serde_json::from_str(&text).map_err(|e| corrupt(format!("not JSON: {e}")))?;
    match doc.get("version").and_then(Value::as_u64) {
        Some(FILE_VERSION) => {}
        Some(other) => return Err(corrupt(format!("unknown version {other}"))),
        None => return Err(corrupt("no \"version\" number".into())),
    }
    let Some(servers) = doc.get("servers").and_then(Value::as_object) else {
        return Err(corrupt("no \"servers\" object".into()));
    };
    let mut held = Held::new();
    for (server, tools) in servers {
        let Some(tools) = tools.as_object() else {
            return Err(corrupt(format!("server {server:?} is not an object")));
        };
        for (tool, entry) in tools {
            let digest = entry.get("digest").and_then(Value::as_str);
            let definition = entry.get("definition").filter(|d| d.is_object());
            let (Some(digest), Some(definition)) = (digest, definition) else {
                return Err(corrupt(format!(
                    "the pin of tool {tool:?} of server {server:?} needs a \"digest\" string and a \"definition\" object"
                )));
            };
            let pin = ToolPin::recorded(digest.to_owned(), definition.clone());
            held.insert((server.clone(), tool.clone()), pin);
        }
    }
    Ok(held)
}

fn write_file(path: &Path, held: &Held) -> Result<(), PinError> {
    let mut servers = serde_json::Map::new();
    for ((server, tool), pin) in held {
        let tools = servers
            .entry(server.clone())
            .or_insert_with(|| Value::Object(serde_json::Map::new()));
        if let Value::Object(tools) = tools {
            tools.insert(
                tool.clone(),
                json!({"digest": pin.digest(), "definition": pin.definition()}),
            );
        }
    }
    let doc = json!({"version": FILE_VERSION, "servers": servers});
    let io = |source| PinError::Io {
        path: path.to_owned(),
        source,
    };
    let text = serde_json::to_vec_pretty(&doc).map_err(|e| PinError::Store(Box::new(e)))?;
    let name = path
        .file_name()
        .map_or_else(|| "pins".into(), |n| n.to_string_lossy().into_owned());
    let temp = path.with_file_name(format!(".{name}.{}.tmp", std::process::id()));
    let written = (|| {
        use std::io::Write;
        let mut file = std::fs::File::create(&temp)?;
        file.write_all(&text)?;
        file.sync_all()?;
        std::fs::rename(&temp, path)
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(&temp);
    }
    written.map_err(io)
}
