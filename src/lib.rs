//! Workspace package: owns the examples, the workspace tests and the benches. Not published.
//!
//! README.md's code blocks are compiled and run as doctests by the library
//! (`mcp-registry/src/lib.rs`, which includes it as its crates.io page), and the guides
//! live in `mcp-registry/src/guide/`, so the front page cannot drift from the code.
