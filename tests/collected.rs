//! Servers defined with `server!` in another crate are collected by `Registry::collected()`
//! once that crate is linked, which takes a reference to it: `inventory` (like any
//! link-time collection) cannot see a crate the program never uses.

// The reference that links the fixture crate, and with it its `server!` submissions.
use mcp_registry_collect_fixture as _;

use mcp_registry::Registry;
use serde_json::json;

#[tokio::test]
async fn servers_from_another_crate_are_collected_and_callable() {
    let registry = Registry::try_collected().expect("no duplicate server names");
    assert_eq!(registry.server_names(), ["fixture-math", "fixture-text"]);

    let math = registry.server("fixture-math").unwrap();
    assert_eq!(math.version(), "3.1.4");
    assert_eq!(math.tool_names().collect::<Vec<_>>(), ["multiply", "shout"]);
    // Without `version`, the version of the crate that invokes `server!`.
    assert_eq!(registry.server("fixture-text").unwrap().version(), "0.1.0");

    let result = registry
        .call_tool_by_name("multiply", json!({"a": 6, "b": 7}))
        .await
        .unwrap();
    assert_eq!(result.first_text(), Some("42"));
    let result = registry
        .call_tool_by_name("mcp__fixture-math__shout", json!({"text": "hi"}))
        .await
        .unwrap();
    assert_eq!(result.first_text(), Some("HI"));
}

#[test]
fn a_server_value_can_also_be_taken_directly() {
    let server = mcp_registry_collect_fixture::text_server();
    assert_eq!(server.name(), "fixture-text");
    assert!(
        server.ptr_eq(&Registry::collected().server("fixture-text").unwrap()),
        "the collected server and the named one are the same value"
    );
    let multiply = mcp_registry_collect_fixture::multiply::tool();
    let schema = &multiply.descriptor().input_schema;
    assert_eq!(schema["properties"]["a"]["description"], "the left factor");
}
