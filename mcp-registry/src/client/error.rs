//! [`ClientError`]: why a client operation failed.

//! [`Client`]: the async MCP client, one type over every [`Transport`].

use std::time::Duration;

use super::machine::ClientStateError;
use super::transport::TransportError;
use crate::protocol::{ElicitParams, ErrorCode, ErrorObject};
/// Why a client operation failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ClientError {
    /// The server program could not be started.
    #[error("cannot start MCP server `{program}`: {source}")]
    Spawn {
        /// The program.
        program: String,
        /// Why.
        source: std::io::Error,
    },
    /// The transport failed.
    #[error("transport: {0}")]
    Transport(#[from] TransportError),
    /// The connection closed before the reply came.
    #[error("the connection closed: {0}")]
    Closed(String),
    /// The handshake failed.
    #[error("MCP handshake failed: {0}")]
    Handshake(String),
    /// The server answered with an error.
    #[error("{method} failed: {error}")]
    Server {
        /// The request's method.
        method: String,
        /// The server's error.
        error: ErrorObject,
    },
    /// No reply in time (`notifications/cancelled` was sent).
    #[error("{method} timed out after {after:?}")]
    Timeout {
        /// The request's method.
        method: String,
        /// The limit.
        after: Duration,
    },
    /// The caller cancelled the request (`notifications/cancelled` was sent).
    #[error("{method} was cancelled")]
    Cancelled {
        /// The request's method.
        method: String,
    },
    /// The result could not be read.
    #[error("unreadable {method} result: {detail}")]
    InvalidResult {
        /// The request's method.
        method: String,
        /// What was wrong.
        detail: String,
    },
    /// The lifecycle state does not allow the operation.
    #[error(transparent)]
    State(#[from] ClientStateError),
    /// The [`RequestPolicy`](super::RequestPolicy)'s approval callback refused the call; nothing was sent.
    #[error("calling {tool} was denied: {reason}")]
    Denied {
        /// The tool.
        tool: String,
        /// The callback's reason.
        reason: String,
    },
    /// A skill file was refused: it is not what the skill's entry lists (size, digest, front
    /// matter), or cannot be checked against it.
    #[error("skill file refused: {0}")]
    Skill(#[from] crate::skill::SkillVerifyError),
}

impl ClientError {
    /// The server's JSON-RPC error, when it answered with one.
    pub fn server_error(&self) -> Option<&ErrorObject> {
        match self {
            ClientError::Server { error, .. } => Some(error),
            _ => None,
        }
    }

    /// The URL-mode elicitations the user must complete before the request is retried, when
    /// the server refused it with -32042 (URLElicitationRequired).
    pub fn url_elicitations(&self) -> Option<Vec<ElicitParams>> {
        let error = self
            .server_error()
            .filter(|e| e.code == ErrorCode::URL_ELICITATION_REQUIRED)?;
        let data: crate::protocol::UrlElicitationRequiredData =
            serde_json::from_value(error.data.clone()?).ok()?;
        Some(data.elicitations)
    }
}
