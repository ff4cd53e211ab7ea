//! Test binary `transports`: the stdio and Streamable HTTP transports: requests, sessions, limits,
//! auth, DPoP, health routes, fuzzing, and serving a whole registry.
//!
//! Tests are grouped into a few binaries by area (ARCHITECTURE.md, Tests): each test binary links
//! the whole crate, and linking was most of the test build's time. A member is a file of `tests/`,
//! one `#[path]` module per file in alphabetical order; `.ci/run` checks that every `tests/*.rs` is
//! a binary or a member of exactly one.

mod common;

#[path = "fuzz_http.rs"]
mod fuzz_http;
#[path = "http_auth.rs"]
mod http_auth;
#[path = "http_dpop.rs"]
mod http_dpop;
#[path = "http_envelope.rs"]
mod http_envelope;
#[path = "operations.rs"]
mod operations;
#[path = "pipeline_transports.rs"]
mod pipeline_transports;
#[path = "resume_streams.rs"]
mod resume_streams;
#[path = "serve_all.rs"]
mod serve_all;
#[path = "serve_all_state.rs"]
mod serve_all_state;
#[path = "transport_http.rs"]
mod transport_http;
#[path = "transport_http_limits.rs"]
mod transport_http_limits;
#[path = "transport_http_modern.rs"]
mod transport_http_modern;
#[path = "transport_http_sessions.rs"]
mod transport_http_sessions;
#[path = "transport_http_shared.rs"]
mod transport_http_shared;
#[path = "transport_stdio.rs"]
mod transport_stdio;
