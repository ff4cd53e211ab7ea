//! Test binary `e2e`: the client against third-party servers (server-everything, FastMCP);
//! `#[ignore]`d unless `.ci/e2e.sh` installed them.
//!
//! Tests are grouped into a few binaries by area (ARCHITECTURE.md, Tests): each test binary links
//! the whole crate, and linking was most of the test build's time. A member is a file of `tests/`,
//! one `#[path]` module per file in alphabetical order; `.ci/run` checks that every `tests/*.rs` is
//! a binary or a member of exactly one.

mod common;

#[path = "client_everything.rs"]
mod client_everything;
#[path = "client_fastmcp.rs"]
mod client_fastmcp;
