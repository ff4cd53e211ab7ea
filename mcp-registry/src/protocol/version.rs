use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use super::meta::{MetaRef, RequestMeta};
use super::{ErrorCode, ErrorObject, META_CLIENT_CAPABILITIES, META_PROTOCOL_VERSION};

/// A protocol version this crate speaks: a closed set, one variant per revision.
///
/// [`ProtocolVersion::ALL`] is the one table; every list of version strings
/// ([`SUPPORTED_VERSIONS`], [`LEGACY_VERSIONS`]) and every revision-gated rule derives from
/// it.
///
/// ```
/// use mcp_registry::protocol::{ProtocolEra, ProtocolVersion};
/// let v = ProtocolVersion::parse("2025-06-18").unwrap();
/// assert_eq!(v, ProtocolVersion::V2025_06_18);
/// assert_eq!(v.era(), ProtocolEra::Legacy);
/// assert!(v.has_structured_content());
/// assert!(ProtocolVersion::parse("1900-01-01").is_none());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum ProtocolVersion {
    /// 2024-11-05: the first revision.
    V2024_11_05,
    /// 2025-03-26: Streamable HTTP, tool annotations, JSON-RPC batches.
    V2025_03_26,
    /// 2025-06-18: structured tool output, no batches.
    V2025_06_18,
    /// 2025-11-25: the last revision with the `initialize` handshake.
    V2025_11_25,
    /// 2026-07-28: stateless; every request carries its version in `_meta`.
    V2026_07_28,
}

/// Which generation of the protocol a version belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ProtocolEra {
    /// `initialize` handshake, session state (2024-11-05 through 2025-11-25).
    Legacy,
    /// Stateless requests carrying their version in `_meta` (2026-07-28).
    Modern,
}

impl ProtocolVersion {
    /// Every version, oldest first: the one table the lists and rules derive from.
    pub const ALL: [ProtocolVersion; 5] = [
        ProtocolVersion::V2024_11_05,
        ProtocolVersion::V2025_03_26,
        ProtocolVersion::V2025_06_18,
        ProtocolVersion::V2025_11_25,
        ProtocolVersion::V2026_07_28,
    ];
    /// The modern version.
    pub const MODERN: ProtocolVersion = ProtocolVersion::V2026_07_28;
    /// The newest legacy version: what `initialize` answers when the requested one is
    /// unknown.
    pub const LATEST_LEGACY: ProtocolVersion = ProtocolVersion::V2025_11_25;

    /// The version string, e.g. `"2025-06-18"`.
    pub const fn as_str(self) -> &'static str {
        match self {
            ProtocolVersion::V2024_11_05 => "2024-11-05",
            ProtocolVersion::V2025_03_26 => "2025-03-26",
            ProtocolVersion::V2025_06_18 => "2025-06-18",
            ProtocolVersion::V2025_11_25 => "2025-11-25",
            ProtocolVersion::V2026_07_28 => "2026-07-28",
        }
    }

    /// The supported version named `s`, if any.
    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|v| v.as_str() == s)
    }

    /// Legacy or modern.
    pub const fn era(self) -> ProtocolEra {
        match self {
            ProtocolVersion::V2026_07_28 => ProtocolEra::Modern,
            _ => ProtocolEra::Legacy,
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
    pub const fn has_batches(self) -> bool {
        matches!(self, ProtocolVersion::V2025_03_26)
    }

    /// Whether results of this version may carry `structuredContent` and tools
    /// `outputSchema` (introduced in 2025-06-18).
    pub fn has_structured_content(self) -> bool {
        self >= ProtocolVersion::V2025_06_18
    }

    /// Whether `Implementation` (the server's identity) may carry `title`, and tools their
    /// `title` (introduced in 2025-06-18).
    pub fn has_titles(self) -> bool {
        self >= ProtocolVersion::V2025_06_18
    }
}

/// The version strings of `versions`, in order (for the `const` lists below).
const fn names<const N: usize>(versions: [ProtocolVersion; N]) -> [&'static str; N] {
    let mut out = [""; N];
    let mut i = 0;
    while i < N {
        out[i] = versions[i].as_str();
        i += 1;
    }
    out
}

/// Every legacy (handshake-based) protocol version, oldest first.
pub const LEGACY_VERSIONS: [&str; 4] = {
    let all = names(ProtocolVersion::ALL);
    [all[0], all[1], all[2], all[3]]
};
/// The newest legacy version: what `initialize` answers when the requested one is unknown.
pub const LATEST_LEGACY_VERSION: &str = ProtocolVersion::LATEST_LEGACY.as_str();
/// The modern, stateless protocol version (per-request `_meta`, `server/discover`).
pub const MODERN_VERSION: &str = ProtocolVersion::MODERN.as_str();
/// Every supported version, newest first (the order `server/discover` and -32022 list them).
pub const SUPPORTED_VERSIONS: [&str; 5] = {
    let all = names(ProtocolVersion::ALL);
    [all[4], all[3], all[2], all[1], all[0]]
};

// The lists above are cut from the table by hand: fail the build if the table grows.
const _: () = assert!(ProtocolVersion::ALL.len() == 5);

impl fmt::Display for ProtocolVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for ProtocolVersion {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for ProtocolVersion {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let s = <std::borrow::Cow<'de, str>>::deserialize(deserializer)?;
        ProtocolVersion::parse(&s).ok_or_else(|| {
            serde::de::Error::custom(format_args!("unsupported protocol version {s:?}"))
        })
    }
}

/// How a request is served, from the protocol version its `_meta` names. The one
/// classification: decoding computes it once and dispatch, sessions and transports read it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Era {
    /// The handshake era: the connection's lifecycle and negotiated version apply (or the
    /// legacy version `_meta` names, for a stateless caller).
    Legacy(Option<ProtocolVersion>),
    /// 2026-07-28: stateless, the version and client capabilities in every request.
    Modern,
}

impl Era {
    /// Whether the request is served statelessly (2026-07-28).
    pub(crate) fn is_modern(self) -> bool {
        self == Era::Modern
    }

    /// The version the request's `_meta` named (none: a legacy request that named none).
    pub(crate) fn version(self) -> Option<ProtocolVersion> {
        match self {
            Era::Legacy(named) => named,
            Era::Modern => Some(ProtocolVersion::MODERN),
        }
    }
}

/// The era of a request for `method` whose `_meta` is `meta`.
///
/// Errors: -32022 for a version not supported (its data lists the supported ones and echoes
/// the requested one), -32602 for a version that is not a string, a `server/discover`
/// without one, or a 2026-07-28 request without its client capabilities.
#[inline]
pub(crate) fn classify(method: &str, meta: Option<&RequestMeta>) -> Result<Era, ErrorObject> {
    match meta.and_then(|m| m.get(META_PROTOCOL_VERSION)) {
        Some(Value::String(v)) => match ProtocolVersion::parse(v) {
            Some(version) if version.era() == ProtocolEra::Modern => {
                require_modern_meta(meta.map(MetaRef::Request))?;
                Ok(Era::Modern)
            }
            Some(version) => Ok(Era::Legacy(Some(version))),
            None => Err(unsupported_version(v)),
        },
        Some(other) => Err(ErrorObject::new(
            ErrorCode::INVALID_PARAMS,
            format!(
                "`_meta.{META_PROTOCOL_VERSION}` must be a string, got {}",
                super::value_kind(other)
            ),
        )),
        None if method == super::method::DISCOVER => Err(ErrorObject::new(
            ErrorCode::INVALID_PARAMS,
            format!(
                "server/discover requires `_meta.{META_PROTOCOL_VERSION}` (2026-07-28 requests carry their version)"
            ),
        )),
        None => Ok(Era::Legacy(None)),
    }
}

/// The `_meta` members every 2026-07-28 request must carry: the protocol version (a string)
/// and the client's capabilities (an object). Errors are -32602 naming the member.
pub(crate) fn require_modern_meta(meta: Option<MetaRef<'_>>) -> Result<(), ErrorObject> {
    let missing = |what: &str| {
        ErrorObject::new(
            ErrorCode::INVALID_PARAMS,
            format!("a 2026-07-28 request must carry `params._meta.{what}`"),
        )
    };
    let meta = meta.ok_or_else(|| missing(META_PROTOCOL_VERSION))?;
    if !meta
        .get(META_PROTOCOL_VERSION)
        .is_some_and(Value::is_string)
    {
        return Err(missing(META_PROTOCOL_VERSION));
    }
    if !meta
        .get(META_CLIENT_CAPABILITIES)
        .is_some_and(Value::is_object)
    {
        return Err(missing(META_CLIENT_CAPABILITIES));
    }
    Ok(())
}

/// -32022: `requested` is not a version this crate speaks.
pub(crate) fn unsupported_version(requested: &str) -> ErrorObject {
    ErrorObject::new(
        ErrorCode::UNSUPPORTED_PROTOCOL_VERSION,
        format!("Unsupported protocol version {requested:?}"),
    )
    .with_data(serde_json::json!({ "supported": SUPPORTED_VERSIONS, "requested": requested }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lists_follow_the_table() {
        assert_eq!(
            LEGACY_VERSIONS,
            ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"]
        );
        assert_eq!(SUPPORTED_VERSIONS[0], MODERN_VERSION);
        for v in ProtocolVersion::ALL {
            assert_eq!(ProtocolVersion::parse(v.as_str()), Some(v));
            assert_eq!(
                LEGACY_VERSIONS.contains(&v.as_str()),
                v.era() == ProtocolEra::Legacy
            );
        }
        assert!(ProtocolVersion::ALL.is_sorted());
    }
}
