//! Typed logging messages: the syslog levels, `logging/setLevel` (legacy revisions), the
//! 2026-07-28 per-request level in `_meta`, and `notifications/message`.

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// `_meta` key carrying a 2026-07-28 request's log level: without it, nothing is logged to
/// the client for that request.
pub const META_LOG_LEVEL: &str = "io.modelcontextprotocol/logLevel";

/// A log message's severity (RFC 5424), least severe first: levels compare by severity.
///
/// ```
/// use mcp_registry::protocol::LoggingLevel;
/// assert!(LoggingLevel::Error > LoggingLevel::Warning);
/// assert_eq!(LoggingLevel::parse("notice"), Some(LoggingLevel::Notice));
/// assert_eq!(serde_json::to_value(LoggingLevel::Emergency).unwrap(), "emergency");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LoggingLevel {
    /// Detailed debugging information.
    Debug,
    /// General information.
    Info,
    /// Normal but significant events.
    Notice,
    /// Warning conditions.
    Warning,
    /// Error conditions.
    Error,
    /// Critical conditions.
    Critical,
    /// Action must be taken immediately.
    Alert,
    /// The system is unusable.
    Emergency,
}

impl LoggingLevel {
    /// Every level, least severe first.
    pub const ALL: [LoggingLevel; 8] = [
        LoggingLevel::Debug,
        LoggingLevel::Info,
        LoggingLevel::Notice,
        LoggingLevel::Warning,
        LoggingLevel::Error,
        LoggingLevel::Critical,
        LoggingLevel::Alert,
        LoggingLevel::Emergency,
    ];

    /// The level's wire name.
    pub const fn as_str(self) -> &'static str {
        match self {
            LoggingLevel::Debug => "debug",
            LoggingLevel::Info => "info",
            LoggingLevel::Notice => "notice",
            LoggingLevel::Warning => "warning",
            LoggingLevel::Error => "error",
            LoggingLevel::Critical => "critical",
            LoggingLevel::Alert => "alert",
            LoggingLevel::Emergency => "emergency",
        }
    }

    /// The level named `name` (its wire name), if any.
    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|l| l.as_str() == name)
    }
}

impl fmt::Display for LoggingLevel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The params of `logging/setLevel` (legacy revisions).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct SetLevelParams {
    /// The least severe level the client wants to receive.
    pub level: LoggingLevel,
}

/// The params of `notifications/message`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LoggingMessageParams {
    /// The message's severity.
    pub level: LoggingLevel,
    /// The name of the logger that issued it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logger: Option<String>,
    /// The message: a string or any JSON value.
    pub data: Value,
}
