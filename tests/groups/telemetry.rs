//! Test binary `telemetry`: traces across the wire; alone, since its thread-local subscriber must
//! not meet call sites cached by tests running beside it without one.
//!
//! Tests are grouped into a few binaries by area (ARCHITECTURE.md, "Tests"): each test binary links
//! the whole crate, and linking was most of the test build's time. A member is a file of `tests/`,
//! one `#[path]` module per file in alphabetical order; `.ci/run` checks that every `tests/*.rs` is
//! a member of exactly one binary.

#[path = "../common/mod.rs"]
mod common;

#[path = "../telemetry.rs"]
mod telemetry;
