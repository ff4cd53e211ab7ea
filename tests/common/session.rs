//! A 2025-11-25 session opened in-process (`ServerSession`): `initialize` with the client's
//! capabilities, then `notifications/initialized`. Taken alone (by path) by tests that need
//! nothing else of `common`.

use mcp_registry::Outgoing;
use mcp_registry::{Registry, ServerSession};
use serde_json::{Value, json};

/// A ready 2025-11-25 session on `server` of `registry`, its client declaring
/// `capabilities`: the session, what it sends the client, and the `initialize` reply.
pub async fn legacy_session(
    registry: Registry,
    server: &str,
    capabilities: Value,
) -> (ServerSession, Outgoing, Value) {
    let (session, outgoing) = ServerSession::new(registry, server);
    let initialize = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": capabilities,
        "clientInfo": {"name": "c", "version": "1"}}});
    let reply = session
        .handle(initialize)
        .await
        .expect("an initialize reply");
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    assert!(session.handle(initialized).await.is_none());
    (session, outgoing, reply)
}
