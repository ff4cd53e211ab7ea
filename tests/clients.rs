//! Test binary `clients`: the MCP client (`client::Client`) against this project's servers and
//! scripted hostile ones: options, policies, auth, tasks, mounts, stubs and cassettes.
//!
//! Tests are grouped into a few binaries by area (ARCHITECTURE.md, Tests): each test binary links
//! the whole crate, and linking was most of the test build's time. A member is a file of `tests/`,
//! one `#[path]` module per file in alphabetical order; `.ci/run` checks that every `tests/*.rs` is
//! a binary or a member of exactly one.

mod common;

#[path = "cassette.rs"]
mod cassette;
#[path = "client.rs"]
mod client;
#[path = "client_auth.rs"]
mod client_auth;
#[path = "client_auth_grants.rs"]
mod client_auth_grants;
#[path = "client_hostile.rs"]
mod client_hostile;
#[path = "client_hostile_http.rs"]
mod client_hostile_http;
#[path = "client_options.rs"]
mod client_options;
#[path = "client_policy.rs"]
mod client_policy;
#[path = "client_tasks.rs"]
mod client_tasks;
#[path = "mount.rs"]
mod mount;
#[path = "pins.rs"]
mod pins;
#[path = "resume_client.rs"]
mod resume_client;
#[path = "stubs.rs"]
mod stubs;
