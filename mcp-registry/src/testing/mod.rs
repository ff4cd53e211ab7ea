//! Helpers for testing tools and servers (feature `testing`).
//!
//! - [`assert_listings_snapshot`]: fails a test when what a registry lists (tools with their
//!   schemas, prompts, resources, templates) changed without the snapshot file being updated,
//!   so a schema change is a reviewed diff, not a surprise to clients.
//! - [`Cassette`]: a session with a remote MCP server recorded to a JSON file
//!   (`MCP_CASSETTE_RECORD=1`) and replayed in tests without the server.

mod cassette;
mod snapshot;

pub use cassette::{
    CASSETTE_RECORD_ENV, Cassette, CassetteFile, CassetteMode, ClientMessage, Interaction,
    RecordingTransport, ReplayTransport, ServerMessage,
};
pub use snapshot::{SNAPSHOT_UPDATE_ENV, assert_listings_snapshot, listings};
