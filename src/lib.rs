//! Workspace package: owns the examples, the workspace tests and the benches. Not published.
//!
//! The README's code blocks are compiled and run as doctests from here, so the front page
//! cannot drift from the code.

#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
