//! Helpers for testing tools and servers (feature `testing`).
//!
//! - [`assert_listings_snapshot`]: fails a test when what a registry lists (tools with their
//!   schemas, prompts, resources, templates) changed without the snapshot file being updated,
//!   so a schema change is a reviewed diff, not a surprise to clients.

mod snapshot;

pub use snapshot::{SNAPSHOT_UPDATE_ENV, assert_listings_snapshot, listings};
