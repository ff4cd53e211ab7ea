//! Pagination, shared by every list method: opaque cursors, the window of a listing a
//! request asks for, and the members every page ends with.

use base64::Engine as _;
use serde::ser::SerializeMap;

use super::{Dispatcher, invalid_params};
use crate::Server;
use crate::protocol::{CacheHints, ErrorObject, ProtocolVersion};

/// Which listing a cursor belongs to: a cursor of one listing is refused by another.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Listing {
    Tools,
    Prompts,
    Resources,
    Templates,
    Skills,
}

impl Listing {
    /// What a cursor's text starts with, before the offset.
    fn prefix(self) -> &'static str {
        match self {
            Listing::Tools => "tools:",
            Listing::Prompts => "prompts:",
            Listing::Resources => "resources:",
            Listing::Templates => "templates:",
            Listing::Skills => "skills:",
        }
    }

    /// The cursor of the page that starts at `offset`.
    fn cursor(self, offset: usize) -> String {
        base64::engine::general_purpose::URL_SAFE_NO_PAD
            .encode(format!("{}{offset}", self.prefix()))
    }

    /// The offset `cursor` names, when it is one of this listing's.
    fn offset(self, cursor: &str) -> Option<usize> {
        let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(cursor)
            .ok()?;
        std::str::from_utf8(&bytes)
            .ok()?
            .strip_prefix(self.prefix())?
            .parse()
            .ok()
    }
}

/// The entries `start..end` of a listing, and where the next page starts.
#[derive(Debug)]
pub(crate) struct Window {
    pub(crate) start: usize,
    pub(crate) end: usize,
    pub(crate) next_cursor: Option<String>,
    /// 2026-07-28 caching hints.
    pub(crate) cache: Option<CacheHints>,
}

impl Dispatcher<'_> {
    /// The page of a `listing` of `total` entries that `cursor` asks for, cut to the
    /// registry's page size; -32602 naming `method` for a cursor that is not this listing's.
    pub(crate) fn window(
        &self,
        server: &Server,
        listing: Listing,
        method: &str,
        cursor: Option<&str>,
        total: usize,
        version: Option<ProtocolVersion>,
    ) -> Result<Window, ErrorObject> {
        let start = match cursor {
            None => 0,
            Some(c) => match listing.offset(c) {
                Some(offset) if offset <= total => offset,
                _ => return Err(invalid_params(format!("invalid cursor {c:?} for {method}"))),
            },
        };
        let end = match self.registry.config().page_size {
            // Saturating: a page size near `usize::MAX` and a peer's cursor must not overflow.
            Some(size) => start.saturating_add(size).min(total),
            None => total,
        };
        Ok(Window {
            start,
            end,
            next_cursor: (end < total).then(|| listing.cursor(end)),
            cache: (version == Some(ProtocolVersion::MODERN)).then(|| self.cache_hints(server)),
        })
    }
}

impl Window {
    /// Writes what every page ends with: `nextCursor`, and the 2026-07-28 caching hints.
    pub(crate) fn write_tail<M: SerializeMap>(&self, map: &mut M) -> Result<(), M::Error> {
        if let Some(cursor) = &self.next_cursor {
            map.serialize_entry("nextCursor", cursor)?;
        }
        if let Some(cache) = &self.cache {
            map.serialize_entry("ttlMs", &cache.ttl_ms)?;
            map.serialize_entry("cacheScope", &cache.cache_scope)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursors_belong_to_their_listing() {
        let cursor = Listing::Prompts.cursor(20);
        assert_eq!(Listing::Prompts.offset(&cursor), Some(20));
        assert_eq!(Listing::Tools.offset(&cursor), None);
        assert_eq!(Listing::Resources.offset("not base64!"), None);
    }
}
