//! Serving a registry's server to real MCP clients: `stdio` (feature `stdio`) and
//! Streamable `http` (feature `http`). Both sit on [`ServerSession`](crate::ServerSession)
//! for the legacy lifecycle and answer 2026-07-28 requests statelessly.

#[cfg(feature = "http")]
pub mod http;
#[cfg(any(feature = "stdio", feature = "http"))]
mod stall;
#[cfg(feature = "stdio")]
pub mod stdio;
