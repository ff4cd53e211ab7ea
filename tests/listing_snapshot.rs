//! The listing snapshot (`testing::assert_listings_snapshot`): unchanged listings pass, a
//! changed schema fails naming where, a missing file is written and fails once, and the
//! update switch rewrites it. The committed snapshot of the tests' math server guards its
//! schemas like a user's CI would.

use crate::common;

use common::math_server;
use mcp_registry::testing::{assert_listings_snapshot, listings};
use mcp_registry::{Registry, Server, Tool};
use serde_json::json;

fn temp(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("mcp-snapshots-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

fn echo(schema: serde_json::Value) -> Registry {
    let tool = Tool::new("echo", "Echo", schema, |_| async { "ok" }).unwrap();
    Registry::from_servers([Server::new("echo", Some("1.0.0"), [tool]).unwrap()])
}

/// The panic message of a snapshot assertion that fails.
async fn failure(registry: &Registry, path: &std::path::Path) -> String {
    let registry = registry.clone();
    let path = path.to_owned();
    let joined =
        tokio::spawn(async move { assert_listings_snapshot(&registry, &path).await }).await;
    let panic = joined
        .expect_err("the snapshot assertion should fail")
        .into_panic();
    panic
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| panic.downcast_ref::<&str>().map(|s| (*s).to_owned()))
        .unwrap_or_default()
}

#[tokio::test]
async fn the_math_servers_listings_match_their_committed_snapshot() {
    let registry = Registry::from_servers([math_server()]);
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/snapshots/math_listings.json"
    );
    assert_listings_snapshot(&registry, path).await;
}

#[tokio::test]
async fn a_changed_schema_fails_naming_where_and_a_missing_file_is_written_once() {
    let path = temp("echo.json");
    let _ = std::fs::remove_file(&path);
    let before = echo(json!({"type": "object", "properties": {"text": {"type": "string"}}}));
    // Missing: written, and the test is told to review it.
    let message = failure(&before, &path).await;
    assert!(message.contains("has been written now"), "{message}");
    assert_listings_snapshot(&before, &path).await;

    let after = echo(json!({"type": "object", "properties": {"text": {"type": "integer"}}}));
    let message = failure(&after, &path).await;
    assert!(
        message.contains(
            "/servers/echo/tools[echo]/inputSchema/properties/text/type: \"string\" -> \"integer\""
        ),
        "{message}"
    );
    assert!(message.contains("MCP_SNAPSHOT_UPDATE=1"), "{message}");
    // The snapshot is the listing as clients see it.
    let text = std::fs::read_to_string(&path).unwrap();
    let written: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(written, listings(&before).await);
}
