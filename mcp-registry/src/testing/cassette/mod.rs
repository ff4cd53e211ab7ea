//! Cassettes: a session with an MCP server recorded to a JSON file and replayed in tests
//! without it; documented on [`Cassette`].

mod normalize;
mod record;
mod replay;

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio::sync::mpsc;

use crate::client::{Client, ClientBuilder, ClientError};

pub use record::RecordingTransport;
pub use replay::ReplayTransport;

/// Set to `1` (or `true`) to record cassettes against the real servers instead of replaying
/// them: `MCP_CASSETTE_RECORD=1 cargo test --test NAME`.
pub const CASSETTE_RECORD_ENV: &str = "MCP_CASSETTE_RECORD";

/// The cassette file format's version.
const FORMAT: u32 = 1;

/// Whether a [`Cassette`] records or replays.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum CassetteMode {
    /// Answer from the file; never reach a server.
    Replay,
    /// Connect to the real server and (re)write the file.
    Record,
}

impl CassetteMode {
    /// [`Record`](Self::Record) when [`CASSETTE_RECORD_ENV`] is `1` or `true`, else
    /// [`Replay`](Self::Replay).
    pub fn from_env() -> Self {
        match std::env::var(CASSETTE_RECORD_ENV).as_deref() {
            Ok("1" | "true") => CassetteMode::Record,
            _ => CassetteMode::Replay,
        }
    }
}

/// A cassette file, recorded or replayed by [`connect`](Self::connect).
///
/// A [`Cassette`] connects a [`Client`] in one of two ways:
///
/// - **record** (`MCP_CASSETTE_RECORD=1`, or [`CassetteMode::Record`]): the client connects to
///   the real server as the test's closure says (stdio, Streamable HTTP, in-process), through
///   [`ClientBuilder::wrap_transport`]; every message it sends and receives is written to the
///   cassette when the client is closed (or dropped, outside a panic).
/// - **replay** (the default): the closure is not called, nothing is started; a
///   [`ReplayTransport`] answers each request with the reply recorded for it. A request the
///   cassette does not hold fails with [`TransportError::Other`](crate::client::transport::TransportError::Other) naming the request, the
///   file and how to re-record.
///
/// **The file** is pretty-printed JSON, one interaction per message the client sent (request,
/// notification, or its answer to a server request), each with what the server sent in
/// answer, in order: `result` or `error` (without the JSON-RPC id), notifications, requests.
/// UUIDs and RFC 3339 times are replaced by placeholders (the same value by the same
/// placeholder throughout), and a request's `_meta` is left out but for `progressToken`, so a
/// re-recording of the same session diffs to nothing. Only JSON-RPC messages are recorded:
/// HTTP headers (`Authorization`, cookies, `Mcp-Session-Id`), the command line and the URL
/// never reach the file.
///
/// **Matching.** A request is matched on its method and its normalized params (without
/// `_meta`, which carries per-request data: trace context, the 2026-07-28 client info and
/// capabilities; and without `initialize`'s `clientInfo`, whose version a release changes);
/// among the interactions that match, the first one not yet replayed answers,
/// so a listing made before and after a change gets each recorded answer in turn, and
/// concurrent requests need not come in the recorded order. Once all have been replayed the
/// last one answers again. Method and params, not the position in the session: a test that
/// adds a request elsewhere does not shift every reply after it.
///
/// ```no_run
/// use mcp_registry::client::Client;
/// use mcp_registry::testing::Cassette;
/// # #[cfg(feature = "client-stdio")]
/// # async fn demo() -> Result<(), mcp_registry::client::ClientError> {
/// // Replays tests/cassettes/weather.json; with MCP_CASSETTE_RECORD=1, runs the server and
/// // records it there.
/// let client = Cassette::new("tests/cassettes/weather.json")
///     .connect(Client::builder(), |builder| async move {
///         builder.connect_stdio(tokio::process::Command::new("weather-mcp")).await
///     })
///     .await?;
/// let tools = client.list_tools().await?;
/// client.close().await; // writes the file when recording
/// # Ok(()) }
/// # fn main() {}
/// ```
#[derive(Debug, Clone)]
pub struct Cassette {
    path: PathBuf,
    mode: CassetteMode,
}

impl Cassette {
    /// The cassette at `path` (relative paths from the working directory, which `cargo
    /// test` sets to the package's root), in the mode [`CassetteMode::from_env`] says.
    pub fn new(path: impl Into<PathBuf>) -> Self {
        Cassette {
            path: path.into(),
            mode: CassetteMode::from_env(),
        }
    }

    /// Records or replays whatever the environment says.
    pub fn mode(mut self, mode: CassetteMode) -> Self {
        self.mode = mode;
        self
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether [`connect`](Self::connect) records.
    pub fn is_recording(&self) -> bool {
        self.mode == CassetteMode::Record
    }

    /// A client built by `builder`: recording, connected by `connect` (which gets `builder`
    /// with the recording transport wrapper set: call one of its `connect_*`); replaying,
    /// connected to the cassette without calling `connect`. A missing or unreadable cassette
    /// is a [`ClientError::Transport`] saying how to record it.
    pub async fn connect<F, Fut>(
        &self,
        builder: ClientBuilder,
        connect: F,
    ) -> Result<Client, ClientError>
    where
        F: FnOnce(ClientBuilder) -> Fut,
        Fut: Future<Output = Result<Client, ClientError>>,
    {
        match self.mode {
            CassetteMode::Record => {
                let path = self.path.clone();
                connect(builder.wrap_transport(move |transport, incoming| {
                    RecordingTransport::wrap(transport, incoming, path.clone())
                }))
                .await
            }
            CassetteMode::Replay => {
                let file = CassetteFile::load(&self.path)?;
                let (tx, rx) = mpsc::unbounded_channel();
                let transport = ReplayTransport::new(file, self.path.clone(), tx);
                builder.connect_transport(transport, rx).await
            }
        }
    }
}

/// What a cassette file holds.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CassetteFile {
    /// The format's version (1).
    pub format: u32,
    /// What the client sent, in order, each with what the server sent in answer.
    pub interactions: Vec<Interaction>,
}

/// One message the client sent, and what the server sent in answer to it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Interaction {
    /// What the client sent.
    pub client: ClientMessage,
    /// What the server sent in answer, in the order it came.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub server: Vec<ServerMessage>,
}

/// A message the client sent, without its JSON-RPC id.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum ClientMessage {
    /// A request.
    Request {
        /// Its method.
        method: String,
        /// Its params, normalized, `_meta` left out but for `progressToken`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        params: Option<Value>,
    },
    /// A notification.
    Notification {
        /// Its method.
        method: String,
        /// Its params, normalized.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        params: Option<Value>,
    },
    /// The client's answer to the server's request `id` (`result` or `error`).
    Response {
        /// The server's request id.
        id: Value,
        /// The answer, normalized.
        #[serde(flatten)]
        answer: serde_json::Map<String, Value>,
    },
}

/// A message the server sent, JSON-RPC ids of replies left out.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum ServerMessage {
    /// The reply: a result (`{"result": ..}`; not named `Result`, which would make rustc
    /// print `std::result::Result` in full in every diagnostic of a crate using this one).
    #[serde(rename = "result")]
    Success(Value),
    /// The reply: an error (`{"error": ..}`).
    #[serde(rename = "error")]
    Failure(Value),
    /// A notification.
    Notification {
        /// Its method.
        method: String,
        /// Its params.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        params: Option<Value>,
    },
    /// A request of the server's (sampling, elicitation, roots), with the server's id: a
    /// replay waits for the client's answer before it goes on.
    Request {
        /// The server's id.
        id: Value,
        /// Its method.
        method: String,
        /// Its params.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        params: Option<Value>,
    },
}

impl CassetteFile {
    /// Reads the cassette at `path`; a missing or malformed one is an error saying how to
    /// (re)record it.
    pub fn load(path: &Path) -> Result<Self, ClientError> {
        let text = std::fs::read_to_string(path).map_err(|e| {
            crate::client::transport::TransportError::Other(format!(
                "cannot read cassette {}: {e}; record it by running the test with {CASSETTE_RECORD_ENV}=1",
                path.display()
            ))
        })?;
        let file: CassetteFile = serde_json::from_str(&text).map_err(|e| {
            crate::client::transport::TransportError::Other(format!(
                "cassette {} is not a cassette file ({e}); re-record it with {CASSETTE_RECORD_ENV}=1",
                path.display()
            ))
        })?;
        if file.format != FORMAT {
            return Err(crate::client::transport::TransportError::Other(format!(
                "cassette {} has format {}, this version reads {FORMAT}; re-record it with {CASSETTE_RECORD_ENV}=1",
                path.display(),
                file.format
            ))
            .into());
        }
        Ok(file)
    }

    /// Writes the cassette to `path` (pretty-printed, a newline at the end), making its
    /// directory if needed.
    pub fn save(&self, path: &Path) -> std::io::Result<()> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)?;
        }
        let mut text = serde_json::to_string_pretty(self).map_err(std::io::Error::other)?;
        text.push('\n');
        std::fs::write(path, text)
    }
}

/// A request's params as recorded: normalized, `_meta` kept only for its `progressToken`.
fn recorded_params(
    normalizer: &mut normalize::Normalizer,
    params: Option<&Value>,
) -> Option<Value> {
    let mut params = normalizer.value(params?);
    if let Some(map) = params.as_object_mut()
        && let Some(Value::Object(meta)) = map.remove("_meta")
        && let Some(token) = meta.get("progressToken")
    {
        let mut kept = serde_json::Map::new();
        kept.insert("progressToken".into(), token.clone());
        map.insert("_meta".into(), Value::Object(kept));
    }
    match &params {
        Value::Object(map) if map.is_empty() => None,
        _ => Some(params),
    }
}

/// What a request is matched on: its params without `_meta` and `clientInfo` (the client's
/// version, which a release changes, is no reason to answer differently).
fn match_key(params: Option<&Value>) -> Option<Value> {
    let mut params = params?.clone();
    if let Some(map) = params.as_object_mut() {
        map.remove("_meta");
        map.remove("clientInfo");
        if map.is_empty() {
            return None;
        }
    }
    Some(params)
}
