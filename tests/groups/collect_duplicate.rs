//! Test binary `collect_duplicate`: two collected servers with one name; alone, since its duplicate
//! would break `Registry::collected()` in any other binary.
//!
//! Tests are grouped into a few binaries by area (ARCHITECTURE.md, "Tests"): each test binary links
//! the whole crate, and linking was most of the test build's time. A member is a file of `tests/`,
//! one `#[path]` module per file in alphabetical order; `.ci/run` checks that every `tests/*.rs` is
//! a member of exactly one binary.

#[path = "../collect_duplicate.rs"]
mod collect_duplicate;
