//! Test binary `ui`: the macros' compile-time errors (trybuild).
//!
//! Tests are grouped into a few binaries by area (ARCHITECTURE.md, "Tests"): each test binary links
//! the whole crate, and linking was most of the test build's time. A member is a file of `tests/`,
//! one `#[path]` module per file in alphabetical order; `.ci/run` checks that every `tests/*.rs` is
//! a member of exactly one binary.

#[path = "../ui.rs"]
mod ui;
