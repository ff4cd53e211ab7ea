//! Test binary `agent`: the agent host's side: sessions, the process-wide `GlobalServers` (one test
//! clears it and expects nothing collected, so no file with a `server!` may join this binary),
//! exports, filters and the control protocol.
//!
//! Tests are grouped into a few binaries by area (ARCHITECTURE.md, Tests): each test binary links
//! the whole crate, and linking was most of the test build's time. A member is a file of `tests/`,
//! one `#[path]` module per file in alphabetical order; `.ci/run` checks that every `tests/*.rs` is
//! a binary or a member of exactly one.

mod common;

#[path = "agent_control.rs"]
mod agent_control;
#[path = "agent_export.rs"]
mod agent_export;
#[path = "agent_filter.rs"]
mod agent_filter;
#[path = "agent_session_example.rs"]
mod agent_session_example;
#[path = "agent_sessions.rs"]
mod agent_sessions;
