//! Helpers for the `handle_mcp_message` tests: a registry of the `math` server, and its
//! replies.

use mcp_registry::Registry;
use serde_json::Value;

use super::math_server;

/// A registry of the `math` server alone.
pub fn registry() -> Registry {
    Registry::from_servers([math_server()])
}

/// The reply of the `math` server in `registry` to `message`.
pub async fn ask(registry: &Registry, message: Value) -> Value {
    registry
        .handle_mcp_message("math", message)
        .await
        .expect("a request gets a reply")
}
