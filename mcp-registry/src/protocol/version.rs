use std::fmt;

/// Every legacy (handshake-based) protocol version this crate speaks, oldest first.
pub const LEGACY_VERSIONS: [&str; 4] = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"];
/// The newest legacy version: what `initialize` answers when the requested one is unknown.
pub const LATEST_LEGACY_VERSION: &str = "2025-11-25";
/// The modern, stateless protocol version (per-request `_meta`, `server/discover`).
pub const MODERN_VERSION: &str = "2026-07-28";
/// Every supported version, newest first (the order `server/discover` and -32022 list them).
pub const SUPPORTED_VERSIONS: [&str; 5] = [
    "2026-07-28",
    "2025-11-25",
    "2025-06-18",
    "2025-03-26",
    "2024-11-05",
];

/// Which generation of the protocol a version belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ProtocolEra {
    /// `initialize` handshake, session state (2024-11-05 through 2025-11-25).
    Legacy,
    /// Stateless requests carrying their version in `_meta` (2026-07-28).
    Modern,
}

/// A protocol version this crate supports.
///
/// ```
/// use mcp_registry::protocol::{ProtocolEra, ProtocolVersion};
/// let v = ProtocolVersion::parse("2025-06-18").unwrap();
/// assert_eq!(v.era(), ProtocolEra::Legacy);
/// assert!(ProtocolVersion::parse("1900-01-01").is_none());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ProtocolVersion(&'static str);

impl ProtocolVersion {
    /// The modern version.
    pub const MODERN: ProtocolVersion = ProtocolVersion(MODERN_VERSION);
    /// The newest legacy version.
    pub const LATEST_LEGACY: ProtocolVersion = ProtocolVersion(LATEST_LEGACY_VERSION);

    /// The supported version named `s`, if any.
    pub fn parse(s: &str) -> Option<Self> {
        SUPPORTED_VERSIONS
            .iter()
            .find(|v| **v == s)
            .map(|v| ProtocolVersion(v))
    }

    /// The version string, e.g. `"2025-06-18"`.
    pub fn as_str(self) -> &'static str {
        self.0
    }

    /// Legacy or modern.
    pub fn era(self) -> ProtocolEra {
        if self.0 == MODERN_VERSION {
            ProtocolEra::Modern
        } else {
            ProtocolEra::Legacy
        }
    }

    /// Whether this revision has JSON-RPC batches (an array of requests and notifications in
    /// one message), which a server must then accept: only 2025-03-26. 2024-11-05 had none
    /// (its schema has no batch type), 2025-06-18 removed them, and later revisions, modern
    /// included, have none either. The one rule every transport serves batches by.
    ///
    /// ```
    /// use mcp_registry::protocol::ProtocolVersion;
    /// let has = |v| ProtocolVersion::parse(v).unwrap().has_batches();
    /// assert!(has("2025-03-26"));
    /// assert!(!has("2024-11-05") && !has("2025-06-18") && !has("2026-07-28"));
    /// ```
    pub fn has_batches(self) -> bool {
        self.0 == "2025-03-26"
    }

    /// Whether results of this version may carry `structuredContent` and tools `outputSchema`
    /// (introduced in 2025-06-18).
    pub fn has_structured_content(self) -> bool {
        self.0 >= "2025-06-18"
    }
}

impl fmt::Display for ProtocolVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0)
    }
}
